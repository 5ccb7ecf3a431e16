/* threads.c - enumerates /proc/PID/task and ranks the threads by how
 * harmless stopping each one for a call is. */
#include "attach/threads.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/arch/arch.h"
#include "attach/fault_signals.h"

/* The last two numbers of the line: the user stack and instruction
 * pointers the thread will return to. */
static void parse_sp_pc(const char *text, struct thread_info *t)
{
    uint64_t v[9];
    int n = 0;
    const char *p = text;
    char *end;
    while (n < 9) {
        uint64_t x = strtoull(p, &end, 0);
        if (end == p)
            break;
        v[n++] = x;
        p = end;
    }
    if (n == 3 || n == 9) {
        t->sp = v[n - 2];
        t->pc = v[n - 1];
    }
}

void thread_parse_syscall(const char *text, struct thread_info *t)
{
    t->in_syscall = false;
    t->syscall_nr = -1;
    t->sp = t->pc = 0;
    if (strncmp(text, "running", 7) == 0)
        return;
    parse_sp_pc(text, t);
    char *end;
    long nr = strtol(text, &end, 10);
    if (end == text || nr < 0)
        return;
    t->in_syscall = true;
    t->syscall_nr = nr;
}

enum thread_rank thread_rank(const struct thread_info *t)
{
    /* jemalloc's background thread spends its life in jemalloc code and
     * holds its own mutexes: the worst possible choice. */
    if (strcmp(t->comm, "jemalloc_bg_thd") == 0)
        return RANK_ALLOCATOR_THREAD;
    /* Seen inside fork it stops only when the copy is made, and then in
     * libc's fork, where no call is made: the wait would be for nothing. */
    if (t->in_syscall && arch_syscall_class(t->syscall_nr) == SYSCALL_NEW_TASK)
        return RANK_NEW_TASK;
    if (!t->in_syscall || t->state == 'R' || t->state == 'D')
        return RANK_RUNNING;
    switch (arch_syscall_class(t->syscall_nr)) {
    case SYSCALL_RESTARTABLE:
        return RANK_RESTARTABLE_SLEEP;
    case SYSCALL_EINTR:
        return RANK_EINTR_SLEEP;
    default:
        return RANK_OTHER_SLEEP;
    }
}

static int cmp_thread(const void *a, const void *b)
{
    const struct thread_info *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->blocks_fault_signal != y->blocks_fault_signal)
        return x->blocks_fault_signal ? 1 : -1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

void threads_sort(struct thread_info *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_thread);
}

static int read_text(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, cap - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = 0;
    return 0;
}

/* stat is "tid (comm) S ...": comm may hold spaces and parentheses, so
 * the state follows the last ')'. */
static int read_stat(pid_t pid, struct thread_info *t)
{
    char path[96], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", pid, t->tid);
    if (read_text(path, buf, sizeof buf) < 0)
        return -1;
    char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren || !close_paren[1])
        return -1;
    size_t n = (size_t)(close_paren - open_paren - 1);
    if (n >= sizeof t->comm)
        n = sizeof t->comm - 1;
    memcpy(t->comm, open_paren + 1, n);
    t->comm[n] = 0;
    t->state = close_paren[2];
    /* processor, the 39th field; the state was the 3rd */
    t->cpu = -1;
    const char *f = close_paren + 2;
    for (int field = 3; f && field < 39; field++)
        if ((f = strchr(f, ' ')) != NULL)
            f++;
    if (f && *f >= '0' && *f <= '9')
        t->cpu = atoi(f);
    return 0;
}

bool thread_status_blocks_fault_signal(const char *status)
{
    const char *line = strstr(status, "\nSigBlk:");
    if (!line)
        return false;
    char *end;
    uint64_t blocked = strtoull(line + 8, &end, 16);
    return end != line + 8 && (blocked & fault_signals_mask()) != 0;
}

/* Among the threads a session tries first, those that block a fault
 * signal go last of their rank: read only for them (status is long). */
static void mark_fault_signal_blockers(pid_t pid, struct thread_info *v, size_t n)
{
    for (size_t i = 0; i < n && i < 2 * THREADS_CANDIDATES; i++) {
        char path[96], buf[2048];
        snprintf(path, sizeof path, "/proc/%d/task/%d/status", pid, v[i].tid);
        v[i].blocks_fault_signal = read_text(path, buf, sizeof buf) == 0 &&
                                   thread_status_blocks_fault_signal(buf);
    }
}

static bool exited_state(char state)
{
    return state == 'Z' || state == 'X';
}

static int read_thread(pid_t pid, struct thread_info *t)
{
    char path[96], buf[256];
    /* An exited thread (a main thread left as a zombie by pthread_exit)
     * cannot be traced: it is no candidate. */
    if (read_stat(pid, t) < 0 || exited_state(t->state))
        return -1;
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, t->tid);
    if (read_text(path, buf, sizeof buf) < 0)
        buf[0] = 0;
    thread_parse_syscall(buf, t);
    t->rank = thread_rank(t);
    return 0;
}

static int push(struct thread_info **v, size_t *n, size_t *cap, pid_t tid)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct thread_info *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return -1;
        *v = nv;
        *cap = nc;
    }
    memset(&(*v)[*n], 0, sizeof **v);
    (*v)[(*n)++].tid = tid;
    return 0;
}

int threads_list(pid_t pid, struct thread_info **out, size_t *n, struct mp_error *err)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return mp_error_set(err, "process %d has exited (cannot list %s: %s)", pid,
                            path, strerror(errno));
    struct thread_info *v = NULL;
    size_t cnt = 0, cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid <= 0 || push(&v, &cnt, &cap, tid) < 0)
            continue;
        if (read_thread(pid, &v[cnt - 1]) < 0)
            cnt--;      /* exited */
    }
    closedir(d);
    if (cnt == 0) {
        free(v);
        return mp_error_set(err, "process %d has exited (no threads left)", pid);
    }
    threads_sort(v, cnt);
    mark_fault_signal_blockers(pid, v, cnt);
    threads_sort(v, cnt);
    *out = v;
    *n = cnt;
    return 0;
}

int threads_count(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    closedir(d);
    return n;
}

static bool thread_alive(pid_t pid, pid_t tid)
{
    struct thread_info t = { .tid = tid };
    return read_stat(pid, &t) == 0 && !exited_state(t.state);
}

pid_t threads_live_tid(pid_t pid)
{
    if (thread_alive(pid, pid))
        return pid;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    pid_t best = -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        pid_t tid = (pid_t)atoi(de->d_name);
        if (tid > 0 && tid != pid && (best < 0 || tid < best) && thread_alive(pid, tid))
            best = tid;
    }
    closedir(d);
    return best;
}

int threads_proc_dir(pid_t pid, char *buf, size_t len)
{
    pid_t tid = threads_live_tid(pid);
    if (tid < 0 || tid == pid) {
        snprintf(buf, len, "/proc/%d", pid);
        return tid < 0 ? -1 : 0;
    }
    snprintf(buf, len, "/proc/%d/task/%d", pid, tid);
    return 0;
}
