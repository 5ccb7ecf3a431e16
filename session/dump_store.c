/* dump_store.c - where a session's dumps live, so that its memory stays
 * bounded however many it holds: each dump memprof takes is written,
 * deflated, to the session's spool directory (made 0700 in $TMPDIR at the
 * first dump, removed with the session); a file read stays where it was;
 * only the SESSION_PROFILES_KEPT dumps used last stay parsed, and the
 * others are parsed again from their file when a view needs one.  A file
 * gone or changed under memprof is named with what to do, never read as
 * if it were the dump. */
#include "session/session.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/base/file_read.h"
#include "lib/base/file_write.h"
#include "session/say.h"

#define MAX_SPOOL_FILE (1ULL << 34)

/* The build-ids recorded for a dump, shared by the dumps after it that
 * recorded the same (a process's objects seldom change during a run). */
struct session_dump_objects {
    unsigned refs;
    size_t n;
    char **path, **build_id;
};

static void objects_unref(struct session_dump_objects *o)
{
    if (!o || --o->refs > 0)
        return;
    for (size_t i = 0; i < o->n; i++) {
        free(o->path[i]);
        free(o->build_id[i]);
    }
    free(o->path);
    free(o->build_id);
    free(o);
}

static bool objects_same(const struct session_dump_objects *o, const struct profile *p)
{
    if (!o || o->n != p->nobject_ids)
        return false;
    for (size_t i = 0; i < o->n; i++)
        if (strcmp(o->path[i], p->object_ids[i].path) ||
            strcmp(o->build_id[i], p->object_ids[i].build_id))
            return false;
    return true;
}

static struct session_dump_objects *objects_of(const struct profile *p)
{
    struct session_dump_objects *o = calloc(1, sizeof *o);
    if (!o)
        return NULL;
    o->refs = 1;
    o->path = calloc(p->nobject_ids ? p->nobject_ids : 1, sizeof *o->path);
    o->build_id = calloc(p->nobject_ids ? p->nobject_ids : 1, sizeof *o->build_id);
    if (!o->path || !o->build_id) {
        objects_unref(o);
        return NULL;
    }
    for (size_t i = 0; i < p->nobject_ids; i++, o->n++) {
        o->path[i] = strdup(p->object_ids[i].path);
        o->build_id[i] = strdup(p->object_ids[i].build_id);
        if (!o->path[i] || !o->build_id[i]) {
            o->n++;
            objects_unref(o);
            return NULL;
        }
    }
    return o;
}

static struct map_list *maps_copy(const struct map_list *m)
{
    struct map_list *c = calloc(1, sizeof *c);
    if (!c || !(c->v = calloc(m->n ? m->n : 1, sizeof *c->v))) {
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < m->n; i++, c->n++) {
        c->v[i] = m->v[i];
        if (!(c->v[i].path = strdup(m->v[i].path ? m->v[i].path : ""))) {
            maps_free(c);
            free(c);
            return NULL;
        }
    }
    c->cap = c->n;
    return c;
}

/* The spool directory, made on first use. */
static const char *spool_dir(struct session *s, struct mp_error *err)
{
    if (!s->spool.path && own_dir_make(&s->spool, "memprof-dumps", "the session's dumps",
                                       err) < 0)
        return NULL;
    return s->spool.path;
}

int session_dump_keep_raw(struct session *s, struct session_dump *d, const char *data,
                          size_t len, struct mp_error *err)
{
    const char *dir = spool_dir(s, err);
    if (!dir)
        return -1;
    uLongf zlen = compressBound(len);
    unsigned char *z = malloc(zlen ? zlen : 1);
    if (!z || compress2(z, &zlen, (const Bytef *)data, len, Z_BEST_SPEED) != Z_OK) {
        free(z);
        return mp_error_set(err, "out of memory");
    }
    char *path = NULL;
    int rc = -1;
    if (asprintf(&path, "%s/%u.heap.z", dir, ++s->spool_seq) < 0)
        mp_error_set(err, "out of memory");
    else
        rc = file_write_new(path, O_EXCL | O_NOFOLLOW, 0600, (const char *)z, zlen, err);
    free(z);
    if (rc < 0) {
        free(path);
        return -1;
    }
    const struct profile *p = d->parsed;
    const struct session_dump *prev = d > s->dumps ? d - 1 : NULL;
    if (p->nobject_ids && prev && objects_same(prev->objects, p)) {
        d->objects = prev->objects;
        d->objects->refs++;
    } else if (p->nobject_ids && !(d->objects = objects_of(p))) {
        rc = mp_error_set(err, "out of memory");
    }
    if (rc < 0) {
        unlink(path);
        free(path);
        return -1;
    }
    free(d->spool_path);
    d->spool_path = path;
    d->raw_len = len;
    return 0;
}

void session_dump_keep_file(struct session_dump *d, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return;                   /* not to be read again: stays parsed */
    char *copy = strdup(path);
    if (!copy)
        return;
    free(d->reload_path);
    d->reload_path = copy;
    d->file_id = (struct session_file_id){
        (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
        (unsigned long long)st.st_size, (long long)st.st_mtim.tv_sec,
        (long long)st.st_mtim.tv_nsec,
    };
}

bool session_dump_has_raw(const struct session_dump *d)
{
    return d->spool_path != NULL;
}

/* What to do when a spool file is gone or damaged. */
#define SPOOL_ADVICE "memprof keeps each dump it takes there for the session; something " \
    "removed or changed it.  The dump's data is lost: take new dumps ('profile start' " \
    "or 'dump'); a series saved with 'profile save' is read back with 'load DIR'"

char *session_dump_raw(const struct session_dump *d, size_t *len, struct mp_error *err)
{
    if (!d->spool_path) {
        mp_error_set(err, "%s's bytes were not kept: only dumps memprof took are", d->name);
        return NULL;
    }
    int fd = open(d->spool_path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
        (unsigned long long)st.st_size > MAX_SPOOL_FILE) {
        mp_error_set(err, "%s: its copy %s cannot be read (%s). " SPOOL_ADVICE, d->name,
                     d->spool_path, fd < 0 ? strerror(errno) : "not a regular file");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    size_t zlen = 0;
    unsigned char *z = (unsigned char *)file_read_fd(fd, (size_t)st.st_size + 1, &zlen);
    close(fd);
    char *out = z ? malloc(d->raw_len + 1) : NULL;
    uLongf n = d->raw_len;
    int zrc = out ? uncompress((Bytef *)out, &n, z, zlen) : Z_MEM_ERROR;
    free(z);
    if (!out || zrc != Z_OK || n != d->raw_len) {
        free(out);
        if (!out)
            mp_error_set(err, "%s: out of memory reading its copy %s", d->name, d->spool_path);
        else
            mp_error_set(err, "%s: its copy %s is damaged (%s). " SPOOL_ADVICE, d->name,
                         d->spool_path, zrc == Z_OK ? "its length changed" : "not what memprof wrote");
        return NULL;
    }
    out[n] = 0;
    *len = n;
    return out;
}

/* What memprof added to the dump when it took it, put back. */
static int restore_extras(const struct session_dump *d, struct profile *p)
{
    p->taken_at = d->info.taken_at;
    for (size_t i = 0; d->objects && i < d->objects->n; i++)
        if (profile_add_object_id(p, d->objects->path[i], d->objects->build_id[i]))
            return -1;
    if (d->maps && p->maps.n == 0) {
        struct map_list *c = maps_copy(d->maps);
        if (!c)
            return -1;
        p->maps = *c;
        free(c);
    }
    return 0;
}

/* The profile parsed again from the spool. */
static struct profile *parse_spool(const struct session_dump *d)
{
    struct mp_error err;
    size_t len;
    char *data = session_dump_raw(d, &len, &err);
    if (!data) {
        say_error("%s", err.msg);
        return NULL;
    }
    struct profile *p = profile_parse(data, len, d->saved_path ? d->saved_path : d->source,
                                      &err);
    free(data);
    if (!p) {
        say_error("%s: its copy %s no longer reads as a profile (%s). " SPOOL_ADVICE,
                  d->name, d->spool_path, err.msg);
        return NULL;
    }
    return p;
}

/* The profile read again from the file it was loaded from, if unchanged. */
static struct profile *parse_file(const struct session_dump *d)
{
    struct stat st;
    const char *why = NULL;
    if (stat(d->reload_path, &st) != 0)
        why = strerror(errno);
    else if ((unsigned long long)st.st_dev != d->file_id.dev ||
             (unsigned long long)st.st_ino != d->file_id.ino ||
             (unsigned long long)st.st_size != d->file_id.size ||
             (long long)st.st_mtim.tv_sec != d->file_id.mtime_s ||
             (long long)st.st_mtim.tv_nsec != d->file_id.mtime_ns)
        why = "it was replaced or changed since memprof read it";
    struct mp_error err;
    struct profile *p = why ? NULL : profile_load_file(d->reload_path, &err);
    if (!why && !p)
        why = err.msg;
    if (!p) {
        say_error("%s: cannot read %s again (%s): memprof keeps only the profiles used "
                  "last in memory and reads the others from their files when needed.  "
                  "Put the file back as it was, or load the files again (a new "
                  "'memprof FILES...' or 'load')", d->name, d->reload_path, why);
        return NULL;
    }
    return p;
}

struct profile *session_dump_profile(struct session *s, struct session_dump *d)
{
    d->last_use = ++s->use_clock;
    if (d->parsed)
        return d->parsed;
    struct profile *p = d->spool_path ? parse_spool(d)
                        : d->reload_path ? parse_file(d) : NULL;
    if (!p) {
        if (!d->spool_path && !d->reload_path)
            say_error("%s: its profile is no longer in memory and has no file to be "
                      "read from", d->name);
        return NULL;
    }
    if (restore_extras(d, p) < 0) {
        profile_free(p);
        say_error("out of memory");
        return NULL;
    }
    d->parsed = p;
    return p;
}

static bool reloadable(const struct session_dump *d)
{
    return d->spool_path || d->reload_path;
}

size_t session_profiles_parsed(const struct session *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->ndumps; i++)
        n += s->dumps[i].parsed != NULL;
    return n;
}

void session_profiles_trim(struct session *s)
{
    for (;;) {
        size_t kept = 0;
        struct session_dump *oldest = NULL;
        for (size_t i = 0; i < s->ndumps; i++) {
            struct session_dump *d = &s->dumps[i];
            if (!d->parsed || !reloadable(d))
                continue;
            kept++;
            if (!oldest || d->last_use < oldest->last_use)
                oldest = d;
        }
        if (kept <= SESSION_PROFILES_KEPT)
            return;
        profile_free(oldest->parsed);
        oldest->parsed = NULL;
    }
}

void session_dump_store_release(struct session_dump *d)
{
    if (d->spool_path)
        unlink(d->spool_path);
    free(d->spool_path);
    free(d->reload_path);
    objects_unref(d->objects);
    if (d->maps) {
        maps_free(d->maps);
        free(d->maps);
    }
}

void session_dump_store_keep_maps(struct session_dump *d)
{
    if (d->parsed && d->parsed->maps.n && !d->maps)
        d->maps = maps_copy(&d->parsed->maps);
}

void session_spool_remove(struct session *s)
{
    own_dir_remove(&s->spool);
}

size_t session_dump_nobjects(const struct session_dump *d)
{
    return d->objects ? d->objects->n : 0;
}

const char *session_dump_object(const struct session_dump *d, size_t i, const char **build_id)
{
    *build_id = d->objects->build_id[i];
    return d->objects->path[i];
}

int session_dump_save_object_ids(const struct session_dump *d, const char *dump_path,
                                 struct mp_error *err)
{
    struct profile *p = calloc(1, sizeof *p);
    if (!p)
        return mp_error_set(err, "out of memory");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < session_dump_nobjects(d); i++)
        if (profile_add_object_id(p, d->objects->path[i], d->objects->build_id[i]))
            rc = mp_error_set(err, "out of memory");
    if (rc == 0)
        rc = profile_save_object_ids(p, dump_path, err);
    profile_free(p);
    return rc;
}
