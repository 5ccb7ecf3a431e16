/* resolver.c - the engine's real resolver: the session's
 * symbolizer, looking addresses up in the profile's own memory map (so a
 * dump of a process with another ASLR layout still resolves); and the
 * checks that the objects read for a dump are the ones the process ran
 * (build-ids recorded at dump time, mtimes, a memory map at all), because
 * a wrong object gives confident, wrong names without them. */
#include "lib/analysis/analysis.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/base/text_escape.h"

int analysis_symbolizer_resolve(void *cookie, const struct profile *p,
                                uint64_t addr, enum symbolize_detail detail,
                                struct symbol_frame *frames, int max)
{
    return symbolizer_lookup_profile(cookie, p, addr, detail, frames, max);
}

/* The executable mappings whose objects frames can land in, each path
 * once (a library has several mappings). */
static bool first_code_mapping(const struct map_list *m, size_t i)
{
    const struct map_entry *e = &m->v[i];
    if (!e->x || !map_entry_is_file(e))
        return false;
    for (size_t j = 0; j < i; j++)
        if (m->v[j].x && strcmp(m->v[j].path, e->path) == 0)
            return false;
    return true;
}

int analysis_record_objects(struct symbolizer *sym, struct profile *p)
{
    for (size_t i = 0; i < p->maps.n; i++) {
        struct symbol_file_identity id;
        struct mp_error err;
        if (!first_code_mapping(&p->maps, i) ||
            symbolizer_file_identity(sym, &p->maps, &p->maps.v[i], &id, &err) ||
            !id.build_id[0])
            continue;
        if (profile_add_object_id(p, p->maps.v[i].path, id.build_id))
            return -1;
    }
    return 0;
}

/* "kind: message", the message escaped: paths and names come from the dump. */
static void vput(FILE *out, const char *kind, const char *fmt, va_list ap)
{
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        return;
    fprintf(out, "%s: ", kind);
    text_escape_put(out, msg);
    fputc('\n', out);
    free(msg);
}

static void warn(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(out, "warning", fmt, ap);
    va_end(ap);
}

static void note(FILE *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vput(out, "note", fmt, ap);
    va_end(ap);
}

static void format_time(int64_t t, char *buf, size_t len)
{
    time_t tt = (time_t)t;
    struct tm tm;
    if (!localtime_r(&tt, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
        snprintf(buf, len, "%lld", (long long)t);
}

void analysis_check_inputs(struct symbolizer *sym, const struct profile *p,
                           const char *name, FILE *warnings)
{
    if (p->maps.n == 0 && p->no_maps_section) {
        warn(warnings, "%s has no memory map: every frame shows as a raw address and "
             "the allocator's own frames cannot be told from the program's; take the "
             "dump with memprof from the live process (it adds the process's maps, "
             "read on the host), or give the daemon a /proc in its chroot", name);
        return;
    }
    if (p->maps.n == 0) {
        warn(warnings, "%s has no memory map (its MAPPED_LIBRARIES section is "
             "missing or empty): every frame shows as a raw address and the "
             "allocator's own frames cannot be told from the program's; take the "
             "dump again, or use a copy of the file that has the section", name);
        return;
    }
    bool unrecorded_told = p->nobject_ids > 0;
    for (size_t i = 0; i < p->maps.n; i++) {
        const struct map_entry *e = &p->maps.v[i];
        struct symbol_file_identity id;
        struct mp_error err;
        if (!first_code_mapping(&p->maps, i))
            continue;
        if (profile_object_id(p, e->path)) {
            /* The build is known: the symbolizer names from that build
             * only, found wherever it is, and says here, once, when it is
             * elsewhere or nowhere. */
            symbolizer_profile_object(sym, p, e, &id, &err);
            continue;
        }
        if (symbolizer_file_identity(sym, &p->maps, e, &id, &err))
            continue;   /* unreadable: the symbolizer says so when it needs it */
        if (!unrecorded_told && id.build_id[0]) {
            /* Objects with build-ids, none recorded: not a dump memprof
             * took (or its FILE.buildids is gone). */
            unrecorded_told = true;
            note(warnings, "%s comes without the build-ids of the objects the process "
                 "had mapped (memprof records them beside the dumps it takes, as "
                 "FILE.buildids): its frames are named from the files at its paths now "
                 "(%s, ...), which memprof cannot check are the builds it ran", name,
                 id.path);
        }
        char when[32], dumped[32], read_from[4200] = "";
        if (strcmp(id.path, e->path) != 0)
            snprintf(read_from, sizeof read_from, " (read from %s)", id.path);
        if (p->taken_at && id.mtime.tv_sec > p->taken_at) {
            format_time(id.mtime.tv_sec, when, sizeof when);
            format_time(p->taken_at, dumped, sizeof dumped);
            warn(warnings, "%s%s was modified at %s, after %s was taken (%s): it "
                 "may not be the build the process ran, and its frames may be named "
                 "wrong; point --exe or --sysroot at the files of that build",
                 e->path, read_from, when, name, dumped);
        }
    }
}
