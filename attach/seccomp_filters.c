/* seccomp_filters.c - owns reading a process's seccomp filters
 * (seccomp_filters.h): each thread's mode and filter count from its
 * status file, and the programs themselves from one stopped thread. */
#include "attach/seccomp_filters.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "attach/preflight.h"
#include "attach/remote_call.h"

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif

_Static_assert(sizeof(struct seccomp_insn) == 8, "struct sock_filter's layout");

int seccomp_threads(struct target *t, struct seccomp_thread **out, size_t *n,
                    struct mp_error *err)
{
    char dir[64];      /* every thread, also while a zombie main thread lingers */
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)target_pid(t));
    DIR *d = opendir(dir);
    if (!d)
        return mp_error_set(err, "cannot list %s: %s", dir, strerror(errno));
    size_t cap = 16;
    *n = 0;
    *out = malloc(cap * sizeof **out);
    struct dirent *e;
    while (*out && (e = readdir(d)) != NULL) {
        char *end;
        long tid = strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end || tid <= 0)
            continue;
        if (*n == cap) {
            struct seccomp_thread *v = realloc(*out, 2 * cap * sizeof *v);
            if (!v)
                break;
            *out = v;
            cap *= 2;
        }
        char path[192];
        struct proc_status st;
        snprintf(path, sizeof path, "%s/%ld/status", dir, tid);
        if (preflight_read_status(path, &st) < 0)
            continue;                       /* it exited: it runs nothing */
        (*out)[(*n)++] = (struct seccomp_thread){(pid_t)tid, st.seccomp, st.seccomp_filters};
    }
    closedir(d);
    if (!*out || (e != NULL)) {
        free(*out);
        *out = NULL;
        return mp_error_set(err, "out of memory");
    }
    return 0;
}

void seccomp_filters_free(struct seccomp_filters *f)
{
    for (size_t i = 0; i < f->n; i++)
        free(f->v[i].insns);
    free(f->v);
    f->v = NULL;
    f->n = 0;
}

/* Filter `index` of a stopped thread: 1 read, 0 none left, -1 the kernel
 * refused (errno). */
static int read_one(pid_t tid, size_t index, struct seccomp_prog *p)
{
    struct seccomp_insn *buf = malloc(SECCOMP_BPF_MAXINSNS * sizeof *buf);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)index, buf);
    if (n < 0) {
        int e = errno;
        free(buf);
        errno = e;
        return e == ENOENT ? 0 : -1;
    }
    if (n == 0 || n > SECCOMP_BPF_MAXINSNS) {  /* the kernel's bound: never */
        free(buf);
        errno = E2BIG;
        return -1;
    }
    p->insns = buf;
    p->n = (size_t)n;
    return 1;
}

static int read_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    (void)err;
    struct seccomp_filters *f = arg;
    f->tid = s->tid;
    f->v = calloc(SECCOMP_FILTERS_MAX, sizeof *f->v);
    if (!f->v) {
        f->errno_read = ENOMEM;
        return 0;
    }
    for (size_t i = 0; ; i++) {
        if (i == SECCOMP_FILTERS_MAX) {
            f->errno_read = E2BIG;
            break;
        }
        int r = read_one(s->tid, i, &f->v[f->n]);
        if (r < 0)
            f->errno_read = errno;
        if (r <= 0)
            break;
        f->n++;
    }
    /* a thread under no filter answers EINVAL: it has none */
    if (f->errno_read == EINVAL && f->n == 0)
        f->errno_read = 0;
    if (f->errno_read)
        seccomp_filters_free(f);
    return 0;
}

int seccomp_filters_read(struct target *t, pid_t tid, struct seccomp_filters *out,
                         struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = tid ? target_stop_run_thread(t, tid, read_body, out, err)
                 : target_stop_run(t, read_body, out, err);
    if (rc < 0) {
        seccomp_filters_free(out);
        return -1;
    }
    return 0;
}
