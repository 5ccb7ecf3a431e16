/* proc_fate.c - implements proc_fate.h: tells an exited process from one
 * that executed a new program, through the address space a /proc/PID/mem
 * descriptor pins. */
#include "attach/proc_fate.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach/threads.h"

unsigned long long proc_start_time(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* The command name may hold spaces and ')': fields start after the last ')'. */
    char *p = strrchr(buf, ')');
    if (!p)
        return 0;
    p++;
    for (int field = 3; field < 22 && p; field++)   /* p: the space before field 3 */
        p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* Reading through a descriptor whose address space has no users any more
 * (the process exited or exec'd) returns 0 bytes; a live one answers
 * with the byte or -EIO (address 0 is normally unmapped). */
static bool mm_alive(int mem_fd)
{
    char b;
    return pread(mem_fd, &b, 1, 0) != 0;
}

int proc_fate_anchor(pid_t pid)
{
    char mem[96];
    threads_proc_dir(pid, mem, sizeof mem - 4);     /* a live thread's */
    strcat(mem, "/mem");
    int fd = open(mem, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && !mm_alive(fd)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

enum proc_fate proc_fate(pid_t pid, int mem_fd, unsigned long long start_time)
{
    if (mem_fd < 0 || mm_alive(mem_fd))
        return PROC_SAME;
    unsigned long long now = proc_start_time(pid);
    if (now == 0 || (start_time && now != start_time))
        return PROC_EXITED;
    /* The same process: a live address space of its own now means a new
     * program; none means it is on its way out. */
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/mem", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool new_image = fd >= 0 && mm_alive(fd);
    if (fd >= 0)
        close(fd);
    return new_image ? PROC_EXECED : PROC_EXITED;
}

/* Is a thread of the process blocked inside execve (waiting for the
 * others to die)?  Until it has replaced the address space, the exec
 * shows only as threads dying. */
bool proc_exec_in_progress(pid_t pid)
{
    char path[96], buf[32];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return false;
    bool found = false;
    struct dirent *de;
    while (!found && (de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%.20s/syscall", pid, de->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        buf[n > 0 ? n : 0] = 0;
        long nr = n > 0 && buf[0] >= '0' && buf[0] <= '9' ? strtol(buf, NULL, 10) : -1;
        found = nr == SYS_execve || nr == SYS_execveat;
    }
    closedir(d);
    return found;
}

#define MAX_PHDRS 128
#define MAX_DYNAMIC 512
#define R_DEBUG_STATE_OFF 24    /* r_version, r_map, r_brk, then r_state */
#define RT_CONSISTENT 0

/* AT_PHDR, AT_PHNUM and AT_BASE (the loader's address, 0 without one). */
static bool read_auxv(const char *dir, uint64_t *phdr, uint64_t *phnum, uint64_t *base)
{
    char path[96];
    snprintf(path, sizeof path, "%s/auxv", dir);
    uint64_t aux[2 * 64];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, aux, sizeof aux);
    close(fd);
    *phdr = *phnum = *base = 0;
    for (size_t i = 0; n > 0 && i + 1 < (size_t)n / sizeof *aux && aux[i] != AT_NULL; i += 2) {
        if (aux[i] == AT_PHDR)
            *phdr = aux[i + 1];
        else if (aux[i] == AT_PHNUM)
            *phnum = aux[i + 1];
        else if (aux[i] == AT_BASE)
            *base = aux[i + 1];
    }
    return true;
}

/* The executable's DT_DEBUG value as the process holds it now, read
 * through its program headers (all from the target: untrusted, bounded);
 * false when there is none. */
static bool dt_debug(int mem_fd, uint64_t phdr, uint64_t phnum, uint64_t *value)
{
    Elf64_Phdr ph[MAX_PHDRS];
    if (phnum == 0 || phnum > MAX_PHDRS ||
        pread(mem_fd, ph, phnum * sizeof *ph, (off_t)phdr) != (ssize_t)(phnum * sizeof *ph))
        return false;
    uint64_t bias = 0, dyn = 0, dyn_size = 0;
    bool have_phdr = false;
    for (size_t i = 0; i < phnum; i++) {
        if (ph[i].p_type == PT_PHDR) {
            bias = phdr - ph[i].p_vaddr;
            have_phdr = true;
        } else if (ph[i].p_type == PT_DYNAMIC) {
            dyn = ph[i].p_vaddr;
            dyn_size = ph[i].p_memsz;
        }
    }
    if (!have_phdr || !dyn)
        return false;
    Elf64_Dyn d[MAX_DYNAMIC];
    size_t nd = dyn_size / sizeof *d < MAX_DYNAMIC ? dyn_size / sizeof *d : MAX_DYNAMIC;
    if (nd == 0 || pread(mem_fd, d, nd * sizeof *d, (off_t)(dyn + bias)) != (ssize_t)(nd * sizeof *d))
        return false;
    for (size_t i = 0; i < nd && d[i].d_tag != DT_NULL; i++)
        if (d[i].d_tag == DT_DEBUG) {
            *value = d[i].d_un.d_ptr;
            return true;
        }
    return false;
}

bool proc_loader_busy(pid_t pid)
{
    char dir[64], path[96];
    uint64_t phdr, phnum, base, r_debug;
    threads_proc_dir(pid, dir, sizeof dir);
    if (!read_auxv(dir, &phdr, &phnum, &base) || !base || !phdr)
        return false;
    snprintf(path, sizeof path, "%s/mem", dir);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool busy = false;
    int32_t state;
    if (dt_debug(fd, phdr, phnum, &r_debug)) {
        /* Set up before the first library is mapped; until then the
         * process is one thread (a program that never gets it set has
         * threads of its own by the time anyone asks). */
        if (r_debug == 0)
            busy = threads_count(pid) == 1;
        else if (pread(fd, &state, sizeof state, (off_t)(r_debug + R_DEBUG_STATE_OFF)) ==
                 sizeof state)
            busy = state != RT_CONSISTENT;
    }
    close(fd);
    return busy;
}

bool proc_has_loader(pid_t pid)
{
    char dir[64];
    uint64_t phdr, phnum, base;
    threads_proc_dir(pid, dir, sizeof dir);
    return read_auxv(dir, &phdr, &phnum, &base) && base != 0;
}

enum proc_fate proc_fate_settled(pid_t pid, int mem_fd, unsigned long long start_time,
                                 double max_wait_s)
{
    struct timespec step = { 0, 10 * 1000 * 1000 };
    enum proc_fate fate = proc_fate(pid, mem_fd, start_time);
    /* The exec'ing thread shows as "running" once the others are dead,
     * until it replaces the address space: a short grace covers that. */
    for (double waited = 0; fate == PROC_SAME && waited < max_wait_s &&
                            (waited < 0.1 || proc_exec_in_progress(pid)); waited += 0.01) {
        nanosleep(&step, NULL);
        fate = proc_fate(pid, mem_fd, start_time);
    }
    return fate;
}

int proc_fate_error(pid_t pid, enum proc_fate fate, const char *when, struct mp_error *err)
{
    if (fate == PROC_EXECED)
        return mp_error_set(err, "process %d executed a new program (exec) %s; memprof "
                            "changed nothing in the new program: attach to it again",
                            pid, when);
    if (fate == PROC_EXITED)
        return mp_error_set(err, "process %d exited %s", pid, when);
    return mp_error_set(err, "process %d is still running the same program", pid);
}
