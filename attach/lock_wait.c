/* lock_wait.c - the mutex a blocked thread waits on, and its owner
 * (lock_wait.h).  Read from /proc and the process's memory, nothing
 * stopped: what is read is a guess to word a message, never a decision. */
#include "attach/lock_wait.h"

#include <dirent.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include "attach/memory.h"
#include "attach/preflight.h"
#include "lib/base/file_read.h"

/* glibc's pthread_mutex_t on 64-bit Linux: int __lock, unsigned __count,
 * int __owner (the holder's tid). */
#define MUTEX_OWNER_OFFSET 8
#define LOCKED_WITH_WAITERS 2

bool lock_wait_parse(const char *text, uint64_t *word)
{
    char *end;
    long nr = strtol(text, &end, 10);
    if (end == text || nr != SYS_futex)
        return false;
    uint64_t a[3];
    for (int i = 0; i < 3; i++) {
        const char *p = end;
        while (*p == ' ')
            p++;
        if (p[0] != '0' || p[1] != 'x')
            return false;
        a[i] = strtoull(p, &end, 16);
        if (end == p)
            return false;
    }
    if ((a[1] & FUTEX_CMD_MASK) != FUTEX_WAIT || a[2] != LOCKED_WITH_WAITERS || a[0] == 0)
        return false;
    *word = a[0];
    return true;
}

/* The mutex holds its owner's tid as the process numbers it (in its own
 * pid namespace, a container's): the thread of pid with that number in
 * memprof's numbering, or 0 when no thread of pid has it (the word was
 * not a mutex's owner after all).  Without NSpid (Linux before 4.1) the
 * two numberings are taken as one. */
static pid_t own_numbering(pid_t pid, pid_t inner)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task", pid);
    DIR *d = opendir(path);
    struct dirent *de;
    pid_t found = 0;
    while (d && !found && (de = readdir(d))) {
        char *end;
        long tid = strtol(de->d_name, &end, 10);
        struct proc_status st;
        if (*end || end == de->d_name || tid <= 0 || tid > INT32_MAX)
            continue;
        snprintf(path, sizeof path, "/proc/%d/task/%ld/status", pid, tid);
        if (preflight_read_status(path, &st) == 0 &&
            (st.nspid_inner > 0 ? st.nspid_inner : (pid_t)tid) == inner)
            found = (pid_t)tid;
    }
    if (d)
        closedir(d);
    return found;
}

pid_t lock_wait_owner(pid_t pid, pid_t tid, uint64_t *word)
{
    char path[96];
    snprintf(path, sizeof path, "/proc/%d/task/%d/syscall", pid, tid);
    size_t len;
    char *text = file_read_path(path, 512, &len);
    int32_t owner = 0;
    struct mp_error ignored;
    if (!text || !lock_wait_parse(text, word) ||
        remote_read(pid, *word + MUTEX_OWNER_OFFSET, &owner, sizeof owner, &ignored) < 0)
        owner = 0;
    free(text);
    return owner > 0 ? own_numbering(pid, (pid_t)owner) : 0;
}
