/* session_lock.c - the per-process session lock: a listening AF_UNIX socket
 * bound to an abstract name derived from the target's identity.  The
 * kernel frees an abstract name when its last descriptor closes, so a
 * memprof killed by SIGKILL never leaves a stale lock, and a refused
 * memprof connects to the holder and reads its pid and user from
 * SO_PEERCRED.  Abstract names are per network namespace: memprofs run
 * from different network namespaces do not see each other's locks. */
#include "attach/session_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "attach/preflight.h"

#define START_TIME_FIELD 22     /* of /proc/PID/stat, counted from 1 */

void session_lock_name(uint64_t pidns_inode, pid_t nspid, unsigned long long start_time,
                       char *buf, size_t len)
{
    snprintf(buf, len, "memprof-session/%llu/%d/%llu", (unsigned long long)pidns_inode,
             (int)nspid, start_time);
}

/* stat is "pid (comm) S ppid ...": comm may hold anything, so fields are
 * counted from the last ')', which ends field 2. */
static int read_start_time(pid_t pid, unsigned long long *out)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    char *p = strrchr(buf, ')'), *save = NULL;
    if (!p)
        return -1;
    int field = 3;
    for (char *tok = strtok_r(p + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
        if (field++ == START_TIME_FIELD) {
            char *end;
            *out = strtoull(tok, &end, 10);
            return end == tok ? -1 : 0;
        }
    return -1;
}

/* The process's identity, from its main thread (whose stat and status stay
 * readable even once it has exited and the others run on). */
static int lock_name_of(pid_t pid, const char *proc_dir, char *buf, size_t len)
{
    char path[96];
    struct proc_status st;
    struct stat ns;
    unsigned long long start;
    snprintf(path, sizeof path, "/proc/%d/status", pid);
    if (preflight_read_status(path, &st) < 0 || st.nspid_inner <= 0 ||
        read_start_time(pid, &start) < 0)
        return -1;
    snprintf(path, sizeof path, "%s/ns/pid", proc_dir);
    if (stat(path, &ns) < 0)
        return -1;
    session_lock_name((uint64_t)ns.st_ino, st.nspid_inner, start, buf, len);
    return 0;
}

static socklen_t abstract_address(const char *name, struct sockaddr_un *a)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    size_t n = strlen(name);
    if (n > sizeof a->sun_path - 1)
        n = sizeof a->sun_path - 1;
    memcpy(a->sun_path + 1, name, n);   /* sun_path[0] = 0: abstract */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
}

/* Who holds the lock: 1 with *cred set, 0 when nobody does any more (it
 * ended meanwhile), -1 when it cannot be told. */
static int holder(const struct sockaddr_un *a, socklen_t alen, struct ucred *cred)
{
    int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (c < 0)
        return -1;
    int rc = -1;
    socklen_t clen = sizeof *cred;
    if (connect(c, (const struct sockaddr *)a, alen) == 0)
        rc = getsockopt(c, SOL_SOCKET, SO_PEERCRED, cred, &clen) == 0 ? 1 : -1;
    else if (errno == ECONNREFUSED || errno == ENOENT)
        rc = 0;
    close(c);
    return rc;
}

static void refuse_message(pid_t pid, int known, const struct ucred *cred,
                           struct mp_error *err)
{
    if (known < 1) {
        mp_error_set(err, "process %d is already being inspected by another memprof "
                     "(its session lock is taken); wait for that session to end or "
                     "end it", pid);
        return;
    }
    char user[64];
    struct passwd pw, *found = NULL;
    char pwbuf[1024];
    if (getpwuid_r(cred->uid, &pw, pwbuf, sizeof pwbuf, &found) == 0 && found)
        snprintf(user, sizeof user, "%s", found->pw_name);
    else
        snprintf(user, sizeof user, "uid %u", (unsigned)cred->uid);
    if (cred->pid == 0)
        mp_error_set(err, "process %d is already being inspected by memprof (in "
                     "another pid namespace, user %s); wait for that session to end "
                     "or end it", pid, user);
    else
        mp_error_set(err, "process %d is already being inspected by memprof (pid %d, "
                     "user %s); wait for that session to end or end it (kill %d)",
                     pid, (int)cred->pid, user, (int)cred->pid);
}

static int refuse(pid_t pid, int known, const struct ucred *cred, struct mp_error *err)
{
    refuse_message(pid, known, cred, err);
    mp_error_mark(err, MP_ERROR_BUSY);
    return SESSION_LOCK_HELD;
}

int session_lock_take(pid_t pid, const char *proc_dir, struct mp_error *err)
{
    char name[128];
    if (lock_name_of(pid, proc_dir, name, sizeof name) < 0) {
        mp_error_set(err, "cannot read the identity of process %d (its status, "
                     "stat and pid namespace): %s", pid, strerror(errno));
        return SESSION_LOCK_FAILED;
    }
    struct sockaddr_un a;
    socklen_t alen = abstract_address(name, &a);
    /* A holder that ends between our bind and our connect frees the name:
     * try again, a few times. */
    for (int attempt = 0; attempt < 5; attempt++) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) {
            mp_error_set(err, "cannot create the session lock for process %d: %s",
                         pid, strerror(errno));
            return SESSION_LOCK_FAILED;
        }
        if (bind(fd, (const struct sockaddr *)&a, alen) == 0) {
            if (listen(fd, SOMAXCONN) == 0)
                return fd;
            int e = errno;
            close(fd);
            mp_error_set(err, "cannot take the session lock for process %d: %s",
                         pid, strerror(e));
            return SESSION_LOCK_FAILED;
        }
        int e = errno;
        close(fd);
        if (e != EADDRINUSE) {
            mp_error_set(err, "cannot take the session lock for process %d (bind: "
                         "%s): memprof will not risk a second session on it", pid,
                         strerror(e));
            return SESSION_LOCK_FAILED;
        }
        struct ucred cred;
        int known = holder(&a, alen, &cred);
        if (known != 0)
            return refuse(pid, known, &cred, err);
        /* Bound but not listening yet, or just ended: a moment later the
         * name is either listened on or free. */
        struct timespec pause = { 0, 1000000 };
        nanosleep(&pause, NULL);
    }
    return refuse(pid, -1, NULL, err);
}

void session_lock_drain(int fd)
{
    if (fd < 0)
        return;
    int c;
    while ((c = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) >= 0)
        close(c);
}

void session_lock_release(int fd)
{
    if (fd >= 0)
        close(fd);
}
