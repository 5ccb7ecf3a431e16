/* sampling_notes.c - owns what the session says about profiling a process
 * with memprof's heap sampler: the advice on how to profile it (true for
 * the process it is given for: 'prof on' where the sampler can go in, a
 * restart only where it cannot), the refusal of jemalloc's commands that
 * carries it, why a sampler dump holds no sample, and where memory a
 * program maps itself shows (APR's mmap'd pools: as mappings). */
#include "session/sampling_notes.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/analysis/analysis.h"
#include "lib/base/text_escape.h"
#include "lib/proc/maps.h"
#include "lib/profile/synthetic_frames.h"
#include "session/control.h"
#include "session/sampling.h"
#include "session/say.h"

void sampling_how_to_profile(struct session *s, char *buf, size_t len)
{
    char why[512], restart[512];
    if (sampling_possible(s, why, sizeof why)) {
        snprintf(buf, len, "To profile it, 'prof on' puts memprof's heap sampler in (no "
                 "restart), then 'dump' takes a profile");
        return;
    }
    if (!why[0]) {      /* jemalloc's own profiler serves 'prof' */
        snprintf(buf, len, "To profile it, 'prof on' turns its jemalloc's profiler on, "
                 "then 'dump' takes a profile");
        return;
    }
    sampling_restart_advice(s, restart, sizeof restart);
    snprintf(buf, len, "memprof's heap sampler cannot go in (%s); to profile it, %s",
             why, restart);
}

/* "one sample per 2^19 bytes (512 KiB) allocated, on average" */
static void rate_text(const struct session_dump *d, char *buf, size_t len)
{
    unsigned lg = 0;
    while (lg < 63 && (UINT64_C(1) << (lg + 1)) <= d->info.period)
        lg++;
    char every[32];
    analysis_format_bytes((double)(UINT64_C(1) << lg), false, false, every, sizeof every);
    snprintf(buf, len, "one sample per 2^%u bytes (%s) allocated, on average", lg,
             every);
}

void sampling_empty_dump_text(struct session *s, const struct session_dump *d,
                              const struct sampler_dump_info *info, const char *what,
                              const char *todo, char *buf, size_t len)
{
    buf[0] = 0;
    if (d->info.nstacks > 0 && d->info.total.inuse_bytes > 0)
        return;
    char since[96] = "since it went in", rate[96];
    if (s->prof_on.since) {
        char when[64];
        control_since_text(s->prof_on.since, when, sizeof when);
        snprintf(since, sizeof since, "since it went in at %s", when);
    }
    rate_text(d, rate, sizeof rate);
    if (!what)
        what = d->name;
    if (info->samples == 0)
        snprintf(buf, len, "%s holds no sample: memprof's sampler has taken none %s; "
                 "it takes %s, so the process has allocated little since.  Whatever heap "
                 "it holds was allocated before the sampler went in, and the sampler sees "
                 "only allocations made after.  %s", what, since, rate, todo);
    else
        snprintf(buf, len, "%s holds no sample: memprof's sampler took %" PRIu64
                 " sample%s %s (%s) and every one was freed since.  The heap the process "
                 "holds was allocated before the sampler went in, and the sampler sees "
                 "only allocations made after.  %s", what, info->samples,
                 info->samples == 1 ? "" : "s", since, rate, todo);
}

void sampling_dump_notes(struct session *s, const struct session_dump *d,
                         const struct sampler_dump_info *info, bool first)
{
    char text[1024];
    if (first) {
        sampling_unseen_text(s, text, sizeof text);
        if (text[0])
            say_status(s, "note: %s\n", text);
    }
    sampling_empty_dump_text(s, d, info, NULL, "To see what the process allocates and "
                             "keeps from now on, take another 'dump' after it has worked "
                             "a while and 'diff' the two, or a run ('profile start "
                             "--duration 10m' then 'trend'); a lower 'prof sample N' "
                             "samples smaller amounts", text, sizeof text);
    if (text[0])
        fprintf(stderr, "note: %s\n", text);
}

int sampling_needs_jemalloc(struct session *s, const char *cmd)
{
    if (s->alloc.kind == ALLOCATOR_JEMALLOC)
        return 0;
    const struct allocator_id *a = &s->alloc;
    pid_t pid = target_pid(s->target);
    char ob[TEXT_ESCAPE_BUF];
    const char *object = a->malloc_object[0] ? text_escape(a->malloc_object, ob, sizeof ob)
                                             : NULL;
    char uses[PATH_MAX + 256], how[1536];
    snprintf(uses, sizeof uses, "%s%s%s", allocator_kind_name(a->kind),
             object ? " from " : "", object ? object : "");
    char why[512];
    bool sampler = sampling_possible(s, why, sizeof why);
    sampling_how_to_profile(s, how, sizeof how);
    say_error("'%s' drives jemalloc, and process %d does not use jemalloc (no "
              "mallctl in any mapped object); it uses %s. %s. For this process memprof "
              "can run %s%s", cmd, (int)pid, uses, how, control_what_works(a->kind),
              sampler ? " (and, with its sampler in, 'dump' and the analyses)" : "");
    return -1;
}

/* The first mapped object whose file name starts with prefix (its
 * basename into buf), or false. */
static bool maps_object(pid_t pid, const char *prefix, char *buf, size_t len)
{
    struct map_list maps = {0};
    struct mp_error ignored;
    bool found = false;
    if (maps_read_pid(pid, &maps, &ignored) < 0)
        return false;
    for (size_t i = 0; i < maps.n && !found; i++) {
        const char *slash = strrchr(maps.v[i].path, '/');
        const char *base = slash ? slash + 1 : maps.v[i].path;
        if (strncmp(base, prefix, strlen(prefix)) == 0) {
            snprintf(buf, len, "%s", base);
            found = true;
        }
    }
    maps_free(&maps);
    return found;
}

void sampling_unseen_text(struct session *s, char *buf, size_t len)
{
    char apr[256], eb[TEXT_ESCAPE_BUF];
    buf[0] = 0;
    if (!s->target || !maps_object(target_pid(s->target), "libapr-1.so", apr, sizeof apr))
        return;
    /* Debian 12's libapr1 (1.7.2): its allocator's node allocation calls
     * mmap(), never malloc() (APR_ALLOCATOR_USES_MMAP), as its code shows;
     * the sampler follows libapr's mmap slot (docs/sampler.md, Mappings) */
    snprintf(buf, len, "process %d maps APR (%s): APR's pools take their memory from "
             "APR's allocator, which maps its blocks with mmap() rather than malloc() "
             "where APR is built with APR_ALLOCATOR_USES_MMAP (Debian's is), so what "
             "the pools hold (in Apache: its connections, requests and their headers) "
             "is in memprof's sampler's profiles as mappings, under '%s', charged to "
             "the stack that first mapped each block (APR reuses freed blocks), not "
             "as heap",
             (int)target_pid(s->target), text_escape(apr, eb, sizeof eb),
             PROFILE_FRAME_MAPPING_NAME);
}
