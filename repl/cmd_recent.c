/* cmd_recent.c - the recent command: jemalloc 5.3's record of its last
 * sampled allocations (experimental.prof_recent.*), memleak's
 * "outstanding allocations" without a probe.  'recent on N' sets
 * alloc_max, a change the session keeps like the profiling settings
 * (session/control.c: put back by 'recent off' or a failed end, said at
 * a normal end); 'recent' captures the record through a write
 * callback in the process (jemalloc_capture) and lists it with ages and
 * symbolized stacks. */
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "allocator/jemalloc/mallctl.h"
#include "lib/proc/maps.h"
#include "lib/symbolize/symbolize.h"
#include "lib/base/text_escape.h"
#include "repl/cmd_memory.h"
#include "session/json_answer.h"
#include "repl/options.h"

#define ALLOC_MAX "experimental.prof_recent.alloc_max"
#define ALLOC_DUMP "experimental.prof_recent.alloc_dump"
#define RECENT_DEFAULT 1000
#define FRAMES_SHOWN 16

static int no_recent(struct session *s, int ret, bool writing)
{
    if (ret == ENOENT) {
        say_error("process %d keeps no record of recent allocations: it needs "
                      "jemalloc 5.3 or later started with profiling (MALLOC_CONF="
                      "prof:true, lg_prof_sample low enough to sample what you look "
                      "for); nothing was changed", (int)target_pid(s->target));
        return -1;
    }
    return control_mallctl_failed(s, ALLOC_MAX, ret, writing);
}

/* Write alloc_max, reading the value before in the same call. */
static int alloc_max_set(struct session *s, ssize_t max, ssize_t *before)
{
    struct mallctl_call call = {.name = ALLOC_MAX, .old = before, .oldlen = sizeof *before,
                                .new = &max, .newlen = sizeof max};
    if (control_run_calls_as(s, &call, 1, &control_recent_info))
        return -1;
    return call.ret ? no_recent(s, call.ret, true) : 0;
}

static int recent_on(struct session *s, const char *count)
{
    ssize_t n = RECENT_DEFAULT, before;
    if (count) {
        char *end;
        errno = 0;
        long long v = strtoll(count, &end, 10);
        if (!*count || *end || errno || v < 1 || v > 1000000) {
            say_error("recent on %s: give how many recent allocations to keep, from "
                          "1 to 1000000", count);
            return -1;
        }
        n = (ssize_t)v;
    }
    if (alloc_max_set(s, n, &before))
        return -1;
    control_note_change(&s->changes.recent, (uint64_t)before, (uint64_t)n);
    fprintf(s->out, "keeping the last %zd sampled allocations (%s was %zd; 'recent off' "
            "puts it back)\n", n, ALLOC_MAX, before);
    return 0;
}

static int recent_off(struct session *s)
{
    ssize_t before;
    struct session_setting *st = &s->changes.recent;
    ssize_t back = st->changed ? (ssize_t)st->before : 0;
    if (alloc_max_set(s, back, &before))
        return -1;
    control_note_change(st, (uint64_t)before, (uint64_t)back);
    fprintf(s->out, "%s is %zd again (it was %zd)\n", ALLOC_MAX, back, before);
    return 0;
}

/* "30s", "2m", "500ms", "1.5" (seconds) -> nanoseconds. */
static int parse_age(const char *text, uint64_t *ns)
{
    char *end;
    double v = strtod(text, &end);
    double mult = 1e9;
    if (strcmp(end, "ms") == 0)
        mult = 1e6;
    else if (strcmp(end, "m") == 0)
        mult = 60e9;
    else if (strcmp(end, "h") == 0)
        mult = 3600e9;
    else if (*end && strcmp(end, "s") != 0)
        end = NULL;
    if (!end || end == text || !(v >= 0 && v <= 1e7)) {
        say_error("--older-than %s: give an age such as 30s, 500ms, 2m or 1h", text);
        return -1;
    }
    *ns = (uint64_t)(v * mult);
    return 0;
}

/* CLOCK_MONOTONIC as the process reads it (jemalloc stamps records with
 * it): memprof's own, moved by the offset of the process's time namespace
 * when it has one of its own (a container). */
static uint64_t target_mono_ns(struct session *s)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
    char dir[96], path[160], ours[64] = "", theirs[64] = "";
    target_proc_dir(s->target, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/ns/time", dir);
    if (readlink("/proc/self/ns/time", ours, sizeof ours - 1) > 0 &&
        readlink(path, theirs, sizeof theirs - 1) > 0 && strcmp(ours, theirs) != 0) {
        snprintf(path, sizeof path, "%s/timens_offsets", dir);
        FILE *f = fopen(path, "re");
        char clock[32];
        long long sec, nsec;
        while (f && fscanf(f, "%31s %lld %lld", clock, &sec, &nsec) == 3)
            if (strcmp(clock, "monotonic") == 0)
                now += sec * 1000000000 + nsec;
        if (f)
            fclose(f);
    }
    return now > 0 ? (uint64_t)now : 0;
}

static uint64_t jint(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

static bool jbool(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_get_boolean(v);
}

/* The symbolized stack of a record, as a JSON array of function names. */
static json_object *stack_of(struct session *s, const struct map_list *maps,
                             json_object *trace)
{
    json_object *out = json_object_new_array();
    struct symbolizer *sym = session_symbolizer(s);
    size_t n = json_object_array_length(trace);
    bool caller_seen = false;   /* jemalloc's own frames on top are left out */
    for (size_t i = 0; i < n; i++) {
        const char *hex = json_object_get_string(json_object_array_get_idx(trace, i));
        uint64_t addr = hex ? strtoull(hex, NULL, 16) : 0;
        struct symbol_frame f;
        bool named = sym && addr &&
                     symbolizer_lookup(sym, maps, addr - 1, SYMBOLIZE_FUNCTIONS, &f, 1) >= 1;
        if (named && f.is_allocator && !caller_seen)
            continue;
        caller_seen = true;
        json_object_array_add(out, json_object_new_string(named ? f.function : hex ? hex : "?"));
    }
    return out;
}

struct recent_filter {
    bool live;
    uint64_t older_ns;
};

static void record_print(struct session *s, json_object *r, uint64_t age_ns,
                         json_object *stack)
{
    char eb[TEXT_ESCAPE_BUF];
    bool released = jbool(r, "released");
    fprintf(s->out, "%10" PRIu64 " bytes  jemalloc thread %-4" PRIu64 " age %8.1f s  %s\n",
            jint(r, "size"), jint(r, "alloc_thread_uid"), age_ns / 1e9,
            released ? "freed" : "live");
    size_t n = json_object_array_length(stack);
    for (size_t i = 0; i < n && i < FRAMES_SHOWN; i++)
        fprintf(s->out, "    %s\n",
                text_escape(json_object_get_string(json_object_array_get_idx(stack, i)),
                            eb, sizeof eb));
    if (n > FRAMES_SHOWN)
        fprintf(s->out, "    ... %zu more frames\n", n - FRAMES_SHOWN);
}

static int recent_list(struct session *s, const struct recent_filter *f, bool json,
                       size_t cap)
{
    struct jemalloc_capture c = {.dump_name = ALLOC_DUMP, .cap = cap};
    struct mp_error err;
    int pid = (int)target_pid(s->target);
    if (jemalloc_capture(s->target, &c, &err))
        return control_call_failed(s, &err);
    uint64_t now = target_mono_ns(s);
    int rc = -1;
    json_object *doc = NULL, *out = NULL;
    struct map_list maps = {0};
    if (c.dump_ret) {
        no_recent(s, c.dump_ret, true);
        goto done;
    }
    if (c.truncated) {
        say_error("the record of recent allocations of process %d is larger than the "
                      "%zu bytes memprof captures at most (--max-size): nothing printed",
                      pid, cap);
        goto done;
    }
    doc = json_tokener_parse(c.data);
    json_object *list;
    if (!doc || !json_object_object_get_ex(doc, "recent_alloc", &list) ||
        !json_object_is_type(list, json_type_array)) {
        say_error("process %d's record of recent allocations (%zu bytes) is not the "
                      "JSON jemalloc writes: nothing printed", pid, c.len);
        goto done;
    }
    maps_read_pid(pid, &maps, &err);
    out = json_object_new_array();
    size_t n = json_object_array_length(list), shown = 0;
    if (!json)
        fprintf(s->out, "%zu recent sampled allocations kept (%s %" PRIu64 ")\n", n,
                ALLOC_MAX, jint(doc, "recent_alloc_max"));
    for (size_t i = 0; i < n; i++) {
        json_object *r = json_object_array_get_idx(list, i), *trace;
        uint64_t t = jint(r, "alloc_time");
        uint64_t age = now > t ? now - t : 0;
        if ((f->live && jbool(r, "released")) || age < f->older_ns)
            continue;
        json_object *stack = json_object_object_get_ex(r, "alloc_trace", &trace)
                                 ? stack_of(s, &maps, trace) : json_object_new_array();
        shown++;
        if (json) {
            json_object *e = json_object_new_object();
            json_object_object_add(e, "size", json_object_new_uint64(jint(r, "size")));
            json_object_object_add(e, "usize", json_object_new_uint64(jint(r, "usize")));
            json_object_object_add(e, "thread", json_object_new_uint64(jint(r, "alloc_thread_uid")));
            json_object_object_add(e, "age_s", json_object_new_double(age / 1e9));
            json_object_object_add(e, "live", json_object_new_boolean(!jbool(r, "released")));
            json_object_object_add(e, "stack", stack);
            json_object_array_add(out, e);
        } else {
            record_print(s, r, age, stack);
            json_object_put(stack);
        }
    }
    if (json) {
        json_object *answer = json_answer_new();
        json_object_object_add(answer, "allocations", json_object_get(out));
        json_answer_emit(s, answer);
    } else
        fprintf(s->out, "%zu shown\n", shown);
    fprintf(stderr, "memprof: captured %zu bytes of recent allocations in one stop of %.0f us\n",
            c.len, target_pauses(s->target)->last_us);
    rc = 0;
done:
    json_object_put(out);
    json_object_put(doc);
    maps_free(&maps);
    free(c.data);
    return rc;
}

/* recent [on [N] | off] [--live] [--older-than AGE] [--json] [--max-size SIZE] */
int cmd_recent(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {
        {"live", false, false, NULL}, {"older-than", true, false, NULL},
        {"json", false, false, NULL}, {"max-size", true, false, NULL},
        {NULL, false, false, NULL},
    };
    char *pos[2];
    int npos = options_parse(argc, argv, opts, pos, 2);
    if (npos < 0)
        return -1;
    if (npos > 0 && strcmp(pos[0], "on") == 0)
        return recent_on(s, npos > 1 ? pos[1] : NULL);
    if (npos == 1 && strcmp(pos[0], "off") == 0)
        return recent_off(s);
    if (npos > 0) {
        say_error("usage: recent on [N] | recent off | recent [--live] "
                      "[--older-than AGE] [--json]");
        return -1;
    }
    struct recent_filter f = {.live = opts[0].given};
    size_t cap = CAPTURE_DEFAULT_MAX;
    if ((opts[1].given && parse_age(opts[1].value, &f.older_ns)) ||
        (opts[3].given && memory_parse_size("--max-size", opts[3].value, &cap)))
        return -1;
    return recent_list(s, &f, opts[2].given, cap);
}
