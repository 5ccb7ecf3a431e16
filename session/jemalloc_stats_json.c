/* jemalloc_stats_json.c - jemalloc's complete statistics as JSON
 * (jemalloc_stats_json.h): malloc_stats_print's own output, captured in
 * one stop and checked whole before a byte of it is written. */
#include "session/jemalloc_stats_json.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>

#include "allocator/jemalloc/jemalloc.h"
#include "attach/target.h"
#include "session/control.h"
#include "session/say.h"

/* stats.allocated as malloc_stats_print's JSON holds it, or -1. */
static int64_t json_allocated(json_object *doc)
{
    json_object *je, *st, *al;
    if (!json_object_object_get_ex(doc, "jemalloc", &je) ||
        !json_object_object_get_ex(je, "stats", &st) ||
        !json_object_object_get_ex(st, "allocated", &al))
        return -1;
    return json_object_get_int64(al);
}

/* jemalloc's complete statistics, as malloc_stats_print writes them with
 * the "J" option, through a write callback in the process.  stats.allocated
 * is read right after it in the same stop: malloc_stats_print refreshed
 * the epoch itself, so both come from the same snapshot -- unless another
 * thread of the process refreshed it in between (redis writes epoch from
 * its cron).  Then the capture is taken again; the last try prints what it
 * got with a warning instead.  Returns 0, -1, or 1: try again. */
#define STATS_JSON_TRIES 3

static int stats_json_try(struct session *s, size_t cap, bool last)
{
    size_t allocated = 0;
    struct mallctl_call after = {.name = "stats.allocated", .old = &allocated,
                                 .oldlen = sizeof allocated};
    if (control_check_calls(&after, 1, NULL))
        return -1;
    struct jemalloc_capture c = {.print_opts = "J", .cap = cap, .after = &after, .nafter = 1};
    struct mp_error err;
    if (jemalloc_capture(s->target, &c, &err))
        return control_call_failed(s, &err);
    int rc = -1;
    int pid = (int)target_pid(s->target);
    if (after.ret == ENOENT) {
        say_error("%s; nothing printed", jemalloc_no_stats_why);
        goto out;
    }
    if (after.ret) {
        control_mallctl_failed(s, "stats.allocated", after.ret, false);
        goto out;
    }
    if (c.truncated) {
        say_error("jemalloc's statistics of process %d are larger than the %zu bytes "
                      "memprof captures at most (--max-size): nothing printed; run "
                      "'stats --json --max-size %zuM'", pid, cap, (cap >> 19) + 1);
        goto out;
    }
    json_tokener *tok = json_tokener_new();
    json_object *doc = tok ? json_tokener_parse_ex(tok, c.data, (int)c.len) : NULL;
    bool whole = tok && doc && json_tokener_get_error(tok) == json_tokener_success;
    int64_t in_json = doc ? json_allocated(doc) : -1;
    json_object_put(doc);
    if (tok)
        json_tokener_free(tok);
    if (!whole || in_json < 0) {
        say_error("jemalloc's statistics of process %d (%zu bytes) are not the JSON "
                      "malloc_stats_print writes (no jemalloc.stats.allocated): nothing "
                      "printed", pid, c.len);
        goto out;
    }
    bool agree = (uint64_t)in_json == allocated;
    if (!agree && !last) {
        rc = 1;
        goto out;
    }
    fwrite(c.data, 1, c.len, s->out);
    if (c.len && c.data[c.len - 1] != '\n')
        fputc('\n', s->out);
    fflush(s->out);
    if (agree)
        fprintf(stderr, "memprof: captured %zu bytes of jemalloc's statistics (JSON) in one "
                "stop of %.0f us; stats.allocated %zu agrees with mallctl\n", c.len,
                target_pauses(s->target)->last_us, allocated);
    else
        fprintf(stderr, "warning: jemalloc's statistics of process %d say stats.allocated is "
                "%" PRId64 " but mallctl read %zu right after, in the same stop, in %d "
                "tries: another thread of the process refreshes them (writes epoch) "
                "itself; the JSON is jemalloc's own, from one moment\n", pid, in_json,
                allocated, STATS_JSON_TRIES);
    rc = 0;
out:
    free(c.data);
    return rc;
}

int jemalloc_stats_json(struct session *s, size_t cap)
{
    for (int attempt = 1;; attempt++) {
        int rc = stats_json_try(s, cap, attempt == STATS_JSON_TRIES);
        if (rc != 1)
            return rc;
    }
}


const char jemalloc_no_stats_why[] =
    "jemalloc in this process was built without statistics (config.stats is "
    "false: --disable-stats)";
