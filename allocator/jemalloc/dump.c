/* dump.c - owns jemalloc_dump_profile: a heap dump that leaves nothing
 * with a name in the process's world.  In one stop of one thread the
 * process creates an anonymous memfd (attach/memfd.c), jemalloc dumps into
 * it through /proc/thread-self/fd/N, memprof opens the same file and the
 * process closes its descriptor, all before the thread runs again.  When
 * the memfd way cannot work, the dump goes through memprof's private
 * directory in the process's filesystem (attach/private_dir.c). */
#include "allocator/jemalloc/internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the dump through a memfd ------------------------------------------ */

struct memfd_dump {
    struct target *t;
    int fd;                 /* out: memprof's own descriptor, or -1 */
    int mallctl_ret;
    char why[512];          /* set when this way cannot be used */
};

static int memfd_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct memfd_dump *m = arg;
    int fd;
    if (target_memfd_create(s, m->t, &fd, m->why, sizeof m->why, err) < 0)
        return -1;
    if (fd < 0)
        return 0;
    char target_path[64];
    snprintf(target_path, sizeof target_path, "/proc/thread-self/fd/%d", fd);
    struct mallctl_call dump = { .name = "prof.dump", .new_string = target_path };
    if (mallctl_batch_call(s, m->t, &dump, err) < 0) {
        /* Close it still when the thread can take another call; if not,
         * a later session sweeps it. */
        struct mp_error ignored;
        if (!s->gone && !s->at_signal_stop)
            target_memfd_close(s, m->t, fd, &ignored);
        return mp_error_prefix(err, "mallctl(\"prof.dump\")");
    }
    m->mallctl_ret = dump.ret;
    if (dump.ret == EFAULT)
        snprintf(m->why, sizeof m->why, "process %d could not write its profile to "
                 "%s (is /proc mounted where it runs?)", s->ctx->pid, target_path);
    else if (dump.ret == 0)
        m->fd = target_memfd_open(s, fd, m->why, sizeof m->why);
    return target_memfd_close(s, m->t, fd, err);
}

/* 0 done (or prof.dump refused: mallctl_ret), 1 this way cannot be used
 * (why set), -1 error. */
static int dump_via_memfd(struct target *t, char **data, size_t *len,
                          struct jemalloc_dump_info *info, char *why, size_t whylen,
                          struct mp_error *err)
{
    if (!target_memfd_possible(t, why, whylen))
        return 1;
    struct memfd_dump m = { .t = t, .fd = -1 };
    if (target_stop_run(t, memfd_body, &m, err) < 0) {
        if (m.fd >= 0)
            close(m.fd);
        return -1;
    }
    if (m.fd < 0 && (m.why[0] || m.mallctl_ret == EFAULT)) {
        snprintf(why, whylen, "%s", m.why);
        return 1;
    }
    if (m.mallctl_ret) {
        info->mallctl_ret = m.mallctl_ret;
        return mp_error_set(err, "process %d refused prof.dump: %s", target_pid(t),
                            strerror(m.mallctl_ret));
    }
    int rc = target_read_fd(m.fd, "the dump", data, len, err);
    close(m.fd);
    return rc;
}

static int dump_via_dir(struct target *t, const char *dump_dir, char **data,
                        size_t *len, struct jemalloc_dump_info *info, const char *why,
                        struct mp_error *err)
{
    struct jemalloc_state *j = jemalloc_state(t);
    const char *dir = target_private_dir(t, dump_dir, err);
    if (!dir)
        return mp_error_prefix(err, "process %d cannot dump into memory (%s); "
                               "through a directory", target_pid(t), why);
    if (!j->memfd_why)
        j->memfd_why = strdup(why);
    info->dir = dir;
    info->why_dir = j->memfd_why;
    char name[32], path[4200];
    snprintf(name, sizeof name, "dump-%u.heap", ++j->dump_seq);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct mallctl_call call = { .name = "prof.dump", .new_string = path };
    if (jemalloc_mallctl(t, &call, 1, err) < 0)
        return -1;
    if (call.ret) {
        info->mallctl_ret = call.ret;
        return mp_error_set(err, "process %d refused prof.dump into %s: %s",
                            target_pid(t), path, strerror(call.ret));
    }
    return target_private_dir_take(t, name, 0, data, len, err);
}

int jemalloc_dump_profile(struct target *t, const char *dump_dir, char **data,
                          size_t *len, struct jemalloc_dump_info *info,
                          struct mp_error *err)
{
    memset(info, 0, sizeof *info);
    *data = NULL;
    *len = 0;
    if (dump_dir && dump_dir[0] != '/')
        return mp_error_set(err, "--dump-dir %s: give an absolute path, as process %d "
                            "sees it", dump_dir, target_pid(t));
    /* Once the memfd failed for this process it fails again: no more
     * stops spent on it. */
    const struct jemalloc_state *j = jemalloc_state(t);
    char why[512];
    if (j->memfd_why)
        snprintf(why, sizeof why, "%s", j->memfd_why);
    else {
        int rc = dump_via_memfd(t, data, len, info, why, sizeof why, err);
        if (rc <= 0)
            return rc;
    }
    return dump_via_dir(t, dump_dir, data, len, info, why, err);
}
