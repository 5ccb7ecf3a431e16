/* run_dir.c - a series on disk: a directory with each dump exactly as
 * jemalloc wrote it (NAME.heap, readable by jeprof), the build-ids of the
 * process's objects beside each (NAME.heap.buildids), the objects
 * themselves by build-id (.build-id/, session/run_objects.c), and manifest.json
 * saying which series, process and times.  Written by 'profile save',
 * read back by 'load DIR' and 'memprof DIR'.  A directory is untrusted
 * input when read back: names are checked before any path is made. */
#include "session/profile_run.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/base/file_write.h"
#include "lib/base/text_escape.h"
#include "session/control.h"
#include "session/say.h"
#include "session/json_answer.h"

#define MANIFEST "manifest.json"
#define MAX_MANIFEST (16 << 20)
#define MAX_RUN_DUMPS 100000

/* A dump's name as a file name: the characters run and dump names use. */
static bool file_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 120 || name[0] == '.' || name[0] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
            return false;
    return true;
}

/* DIR made 0700, or an existing empty directory. */
static int make_dir(const char *dir)
{
    if (mkdir(dir, 0700) == 0)
        return 0;
    if (errno != EEXIST) {
        say_error("profile save: cannot create %s: %s", dir, strerror(errno));
        return -1;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        say_error("profile save: %s exists and is not a directory", dir);
        return -1;
    }
    DIR *d = fdopendir(fd);
    bool empty = true;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            empty = false;
    if (d)
        closedir(d);
    else
        close(fd);
    if (!empty) {
        say_error("profile save: %s is not empty: give a new or empty directory", dir);
        return -1;
    }
    return 0;
}

static int write_file(const char *path, const char *data, size_t len)
{
    struct mp_error err;
    if (file_write_new(path, O_EXCL | O_NOFOLLOW, 0600, data, len, &err) == 0)
        return 0;
    say_error("profile save: %s", err.msg);
    return -1;
}

static json_object *objects_json(const struct session_dump *d)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < session_dump_nobjects(d); i++) {
        const char *build_id, *path = session_dump_object(d, i, &build_id);
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(path));
        json_object_object_add(o, "build_id", json_object_new_string(build_id));
        json_object_array_add(arr, o);
    }
    return arr;
}

static int save_dump(const struct session_dump *d, const char *dir, json_object *list)
{
    size_t len;
    struct mp_error err;
    char *data = session_dump_raw(d, &len, &err);
    if (!data) {
        say_error("profile save: %s", err.msg);
        return -1;
    }
    char file[200], path[4096];
    snprintf(file, sizeof file, "%s.heap", d->name);
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int rc = write_file(path, data, len);
    free(data);
    if (rc == 0 && session_dump_nobjects(d) && session_dump_save_object_ids(d, path, &err)) {
        say_error("profile save: %s", err.msg);
        rc = -1;
    }
    if (rc == 0) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "name", json_object_new_string(d->name));
        json_object_object_add(o, "file", json_object_new_string(file));
        json_object_object_add(o, "taken_at", json_object_new_int64(d->info.taken_at));
        json_object_object_add(o, "peak", json_object_new_boolean(d->peak));
        json_object_array_add(list, o);
    }
    return rc;
}

int profile_run_save(struct session *s, const char *series, const char *dir)
{
    size_t *idx;
    long n = session_series(s, series, &idx);
    if (n <= 0) {
        if (n < 0)
            say_error("out of memory");
        else if (series)
            say_error("profile save: no series named '%s' in this session ('dumps' "
                          "lists the dumps and their series)", series);
        else
            say_error("profile save: no dump in this session to save");
        return -1;
    }
    for (long i = 0; i < n; i++)
        if (!file_name_ok(s->dumps[idx[i]].name) || !session_dump_has_raw(&s->dumps[idx[i]])) {
            say_error("profile save: %s cannot be saved (%s)", s->dumps[idx[i]].name,
                          session_dump_has_raw(&s->dumps[idx[i]]) ? "its name is no file name"
                          : "its bytes were not kept: only dumps memprof took are");
            free(idx);
            return -1;
        }
    /* Every copy is there before anything is made (a damaged one still
     * shows only when read: the directory then has no manifest). */
    for (long i = 0; i < n; i++) {
        const struct session_dump *d = &s->dumps[idx[i]];
        if (access(d->spool_path, R_OK) != 0) {
            struct mp_error err;
            size_t len;
            free(session_dump_raw(d, &len, &err));     /* says which and why */
            say_error("profile save: %s; nothing was written", err.msg);
            free(idx);
            return -1;
        }
    }
    if (make_dir(dir)) {
        free(idx);
        return -1;
    }
    const struct session_dump *first = &s->dumps[idx[0]];
    const char *name = first->series[0] ? first->series : "session";
    json_object *m = json_answer_new(), *list = json_object_new_array();
    json_object_object_add(m, "kind", json_object_new_string("memprof run"));
    json_object_object_add(m, "series", json_object_new_string(name));
    if (s->run && strcmp(s->run->name, name) == 0) {
        const struct profile_run *r = s->run;
        json_object_object_add(m, "pid", json_object_new_int(r->pid));
        json_object_object_add(m, "state", json_object_new_string(profile_run_state_name(r->state)));
        json_object_object_add(m, "started", json_object_new_int64(r->wall_start));
        json_object_object_add(m, "ended", r->wall_end ? json_object_new_int64(r->wall_end) : NULL);
        json_object_object_add(m, "every", json_object_new_double(r->o.every));
    }
    if (s->target && target_exe(s->target))
        json_object_object_add(m, "executable", json_object_new_string(target_exe(s->target)));
    json_object_object_add(m, "objects", objects_json(first));
    int rc = 0;
    for (long i = 0; i < n && rc == 0; i++)
        rc = save_dump(&s->dumps[idx[i]], dir, list);
    if (rc == 0)
        profile_run_keep_objects(s, idx, (size_t)n, dir);
    json_object_object_add(m, "dumps", list);
    char path[4096];
    snprintf(path, sizeof path, "%s/" MANIFEST, dir);
    const char *text = json_object_to_json_string_ext(m, JSON_C_TO_STRING_PRETTY);
    if (rc == 0)
        rc = write_file(path, text, strlen(text));
    else
        say_error("profile save: %s is left incomplete (no %s): remove it", dir, MANIFEST);
    if (rc == 0)
        fprintf(s->out, "saved %s: %ld dump%s in %s (jeprof reads the .heap files; "
                "'memprof %s' reads the run back)\n", name, n, n == 1 ? "" : "s", dir, dir);
    json_object_put(m);
    free(idx);
    return rc;
}

/* ---- reading a run back ---- */

bool profile_run_dir_is_run(const char *dir)
{
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/" MANIFEST, dir);
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && stat(path, &st) == 0;
}

static json_object *read_manifest(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/" MANIFEST, dir);
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size > MAX_MANIFEST) {
        say_error("%s: cannot read %s (%s)", dir, MANIFEST,
                      fd < 0 ? strerror(errno) : "not a regular file of at most 16 MiB");
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    ssize_t got = buf ? read(fd, buf, (size_t)st.st_size) : -1;
    close(fd);
    json_object *m = NULL;
    if (got == st.st_size) {
        buf[got] = 0;
        m = json_tokener_parse(buf);
    }
    free(buf);
    if (!m || !json_object_is_type(m, json_type_object))
        say_error("%s: %s is not a JSON object memprof wrote", dir, MANIFEST);
    return m;
}

static const char *member_string(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
           ? json_object_get_string(v) : NULL;
}

static int load_one(struct session *s, const char *dir, const char *series, json_object *e)
{
    const char *file = member_string(e, "file"), *name = member_string(e, "name");
    json_object *t, *pk;
    if (!file || !name || !file_name_ok(file) || !file_name_ok(name) || strlen(name) >= 64) {
        char esc_buf[TEXT_ESCAPE_BUF];
        const char *esc = text_escape(file ? file : "(none)", esc_buf, sizeof esc_buf);
        say_error("%s: %s names a dump file '%s' memprof will not open (plain names "
                      "of letters, digits, '.', '_' and '-' only, in the directory itself)",
                      dir, MANIFEST, esc);
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    struct mp_error err;
    struct profile *p = profile_load_file(path, &err);
    if (!p) {
        say_error("%s", err.msg);
        return -1;
    }
    if (json_object_object_get_ex(e, "taken_at", &t) && json_object_is_type(t, json_type_int)) {
        int64_t at = json_object_get_int64(t);
        if (at > 0 && at < INT64_C(1) << 40)
            p->taken_at = at;
    }
    struct session_dump *d = session_add_dump(s, p, name, path);
    if (!d) {
        profile_free(p);
        say_error("out of memory");
        return -1;
    }
    d->saved_path = strdup(path);
    session_dump_keep_file(d, path);
    d->peak = json_object_object_get_ex(e, "peak", &pk) && json_object_get_boolean(pk);
    session_series_add(s, d, series);
    return 0;
}

int profile_run_load(struct session *s, const char *dir)
{
    json_object *m = read_manifest(dir), *list;
    if (!m)
        return -1;
    const char *series = member_string(m, "series");
    int rc = -1;
    if (!series || !session_series_name_ok(series)) {
        say_error("%s: %s has no usable series name", dir, MANIFEST);
        goto out;
    }
    if (!json_object_object_get_ex(m, "dumps", &list) ||
        !json_object_is_type(list, json_type_array) || json_object_array_length(list) == 0 ||
        json_object_array_length(list) > MAX_RUN_DUMPS) {
        say_error("%s: %s lists no dumps", dir, MANIFEST);
        goto out;
    }
    size_t *idx;
    long had = session_series(s, series, &idx);
    free(idx);
    if (had > 0) {
        say_error("%s: the session already has a series named '%s'", dir, series);
        goto out;
    }
    size_t n = json_object_array_length(list), before = s->ndumps;
    for (size_t i = 0; i < n; i++)
        if (load_one(s, dir, series, json_object_array_get_idx(list, i))) {
            while (s->ndumps > before)          /* all of the run, or nothing */
                session_remove_dump(s, s->ndumps - 1);
            goto out;
        } else {
            session_profiles_trim(s);       /* a long run: only the last stay parsed */
        }
    say_status(s, "loaded %s: %zu dump%s from %s\n", series, n, n == 1 ? "" : "s", dir);
    rc = 0;
out:
    json_object_put(m);
    return rc;
}
