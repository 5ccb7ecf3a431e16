/* run_objects.c - a saved run keeps the objects its frames are named from
 * (as `perf archive` does), so that the directory can be analysed on
 * another machine, where the same paths hold other builds or nothing:
 * DIR/.build-id/xx/rest, the object of that build-id, and
 * DIR/.build-id/xx/rest.debug, its separate debug file when its own
 * symbols are stripped.  Each is the file the symbolizer names the dump
 * from (the live process's own file, resolved inside its root, or one
 * found by build-id), checked again by build-id on the descriptor that is
 * copied, copied once per build-id, within a bound on the total; what is
 * left out is said.  The files are the target's (its user can write
 * them): opened without leaving its root, regular files only, read no
 * further than their size when checked. */
#include "session/profile_run.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/file_write.h"
#include "lib/base/safe_open.h"
#include "lib/base/text_escape.h"
#include "lib/elf/elf_object.h"
#include "lib/symbolize/symbolize.h"
#include "session/say.h"
#include "session/session.h"

/* One object above this is not kept (a 2 GiB binary is not worth a run
 * directory's size); nor more than this in all. */
#define KEPT_FILE_MAX (512ULL << 20)
#define KEPT_TOTAL_MAX (1ULL << 30)

struct kept {
    unsigned long long bytes;
    unsigned files;
    unsigned left_out;
    char first_left[600];       /* the first left out, and why */
};

static void left_out(struct kept *k, const char *path, const char *why)
{
    if (!k->left_out++)
        snprintf(k->first_left, sizeof k->first_left, "%.300s (%.280s)", path, why);
}

static bool fd_has_build_id(int fd, const char *hex)
{
    uint8_t id[64];
    size_t len = 0;
    char got[2 * sizeof id + 1] = "";
    if (elf_object_read_build_id(fd, id, sizeof id, &len))
        return false;
    for (size_t i = 0; i < len; i++)
        snprintf(got + 2 * i, 3, "%02x", id[i]);
    return len && strcmp(got, hex) == 0;
}

/* Copy size bytes of in to a new file name in dirfd (never an existing
 * one, never through a link).  0, or -1 with errno set; a partial copy is
 * removed. */
static int copy_new(int in, off_t size, int dirfd, const char *name)
{
    int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0)
        return -1;
    char buf[1 << 16];
    off_t done = 0;
    int rc = 0;
    if (lseek(in, 0, SEEK_SET) < 0)
        rc = -1;
    while (rc == 0 && done < size) {
        size_t want = (size_t)(size - done) < sizeof buf ? (size_t)(size - done) : sizeof buf;
        ssize_t n = read(in, buf, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {       /* shrank since fstat: not the file checked */
            errno = n == 0 ? EIO : errno;
            rc = -1;
        } else if (file_write_all(out, buf, (size_t)n)) {
            rc = -1;
        } else {
            done += n;
        }
    }
    int saved = errno;
    if (close(out) && rc == 0) {
        saved = errno;
        rc = -1;
    }
    if (rc)
        unlinkat(dirfd, name, 0);
    errno = saved;
    return rc;
}

/* Keep src (the object of build-id hex, or its debug file: suffix
 * ".debug") in dirfd's .build-id/, unless a copy is there already. */
static void keep_file(int dirfd, const char *root, const char *src, const char *hex,
                      const char *suffix, struct kept *k)
{
    char sub[40], name[200];
    snprintf(sub, sizeof sub, PROFILE_KEPT_SUBDIR "/%.2s", hex);
    snprintf(name, sizeof name, "%s/%s%s", sub, hex + 2, suffix);
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
        return;
    int fd = safe_open_in_root(root, src, false, &st);
    if (fd < 0) {
        left_out(k, src, errno == EINVAL ? "not a regular file" : strerror(errno));
        return;
    }
    if (!fd_has_build_id(fd, hex))
        left_out(k, src, "not of the build-id the process had mapped");
    else if ((unsigned long long)st.st_size > KEPT_FILE_MAX)
        left_out(k, src, "larger than 512 MiB");
    else if (k->bytes + (unsigned long long)st.st_size > KEPT_TOTAL_MAX)
        left_out(k, src, "the run's objects would pass 1 GiB");
    else if ((mkdirat(dirfd, PROFILE_KEPT_SUBDIR, 0700) && errno != EEXIST) ||
             (mkdirat(dirfd, sub, 0700) && errno != EEXIST) ||
             copy_new(fd, st.st_size, dirfd, name))
        left_out(k, src, strerror(errno));
    else {
        k->bytes += (unsigned long long)st.st_size;
        k->files++;
    }
    close(fd);
}

/* The objects of one dump's profile. */
static void keep_profile(struct symbolizer *sym, const struct profile *p, int dirfd,
                         struct kept *k)
{
    for (size_t i = 0; i < p->maps.n; i++) {
        const struct map_entry *e = &p->maps.v[i];
        const char *hex = e->x && map_entry_is_file(e) ? profile_object_id(p, e->path) : NULL;
        struct symbol_file_identity id;
        struct mp_error err;
        char name[200];
        snprintf(name, sizeof name, PROFILE_KEPT_SUBDIR "/%.2s/%s", hex ? hex : "",
                 hex && strlen(hex) > 2 ? hex + 2 : "");
        struct stat st;
        if (!hex || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
            continue;
        if (symbolizer_profile_object(sym, p, e, &id, &err)) {
            left_out(k, e->path, err.msg);
            continue;
        }
        const char *root = symbolizer_root(sym);
        keep_file(dirfd, root, id.path, hex, "", k);
        if (id.debug_path[0])
            keep_file(dirfd, root, id.debug_path, hex, ".debug", k);
    }
}

int profile_run_keep_objects(struct session *s, const size_t *idx, size_t n, const char *dir)
{
    struct symbolizer *sym = session_symbolizer(s);
    int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (!sym || dirfd < 0) {
        say_error("profile save: cannot keep the objects in %s: %s", dir,
                  sym ? strerror(errno) : "out of memory");
        if (dirfd >= 0)
            close(dirfd);
        return -1;
    }
    struct kept k = {0};
    const struct session_dump_objects *last = NULL;
    for (size_t i = 0; i < n; i++) {
        struct session_dump *d = &s->dumps[idx[i]];
        if (!d->objects || d->objects == last)  /* the same objects as the dump before */
            continue;
        last = d->objects;
        const struct profile *p = session_dump_profile(s, d);
        if (p)
            keep_profile(sym, p, dirfd, &k);
    }
    close(dirfd);
    if (k.files)
        fprintf(s->out, "kept %u object file%s (%.1f MiB) in %s/" PROFILE_KEPT_SUBDIR
                   ", so that the run can be analysed on another machine\n", k.files,
                   k.files == 1 ? "" : "s", (double)k.bytes / (1 << 20), dir);
    char *msg = NULL;
    if (k.left_out &&
        asprintf(&msg, "profile save: %u object file%s not kept in %s, first %s: analysed "
                 "elsewhere, its frames show as object+0xOFFSET unless a file of its "
                 "build-id is found there (debug directory, debuginfod)", k.left_out,
                 k.left_out == 1 ? "" : "s", dir, k.first_left) >= 0) {
        /* The paths are the target's. */
        fputs("warning: ", stderr);
        text_escape_put(stderr, msg);
        fputc('\n', stderr);
    }
    free(msg);
    return 0;
}
