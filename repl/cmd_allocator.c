/* cmd_allocator.c - stats and purge for a process whose allocator is not
 * jemalloc (glibc malloc, gperftools tcmalloc), through the allocator
 * interface (allocator/allocator.h): the same summary for every allocator,
 * then what that allocator says of itself.  jemalloc's own are in
 * cmd_memory.c. */
#include "repl/command_table.h"
#include "repl/cmd_memory.h"
#include "session/json_answer.h"
#include "session/say.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/text_escape.h"
#include "session/process_files.h"

/* Above this much anonymous memory, a glibc purge is announced first:
 * malloc_trim walks every free chunk of every arena under its lock. */
#define LONG_TRIM_BYTES (1ull << 30)

static void mib_line(FILE *o, const char *label, uint64_t v, const char *note)
{
    if (v == UINT64_MAX)
        fprintf(o, "%-20s %10s      %s\n", label, "unknown", note);
    else
        fprintf(o, "%-20s %10.1f MiB  %s\n", label, v / MIB, note);
}

static void json_bytes(json_object *o, const char *key, uint64_t v)
{
    json_object_object_add(o, key, v == UINT64_MAX ? NULL : json_object_new_uint64(v));
}

static json_object *arenas_json(const struct glibc_malloc_info *mi)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < mi->narenas; i++) {
        const struct glibc_arena_info *a = &mi->arenas[i];
        json_object *o = json_object_new_object();
        json_object_object_add(o, "arena", json_object_new_int64(a->nr));
        json_bytes(o, "free_bytes", glibc_arena_free_bytes(a));
        json_bytes(o, "fast_free_bytes", a->fast_bytes);
        json_bytes(o, "system_current_bytes", a->system_current);
        json_bytes(o, "system_max_bytes", a->system_max);
        json_bytes(o, "address_space_bytes", a->aspace_total);
        json_object_array_add(arr, o);
    }
    return arr;
}

static int stats_json(struct session *s, const struct allocator_stats *st)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, "pid", json_object_new_int((int)target_pid(s->target)));
    json_object_object_add(j, "allocator",
                           json_object_new_string(allocator_kind_key(s->alloc.kind)));
    json_bytes(j, "in_use", st->in_use);
    json_bytes(j, "free_held", st->free_held);
    json_bytes(j, "from_system", st->from_system);
    json_bytes(j, "mmapped", st->mmapped);
    json_object *f = json_object_new_object();
    for (size_t i = 0; i < st->nfig; i++)
        json_object_object_add(f, st->fig[i].key, json_object_new_uint64(st->fig[i].value));
    json_object_object_add(j, "figures", f);
    if (st->have_glibc)
        json_object_object_add(j, "arenas", arenas_json(&st->glibc));
    if (st->text)
        json_object_object_add(j, "text", json_object_new_string(st->text));
    json_object_object_add(j, "pause_us",
                           json_object_new_double(target_pauses(s->target)->last_us));
    return json_answer_emit(s, j);
}

static void summary_text(struct session *s, const struct allocator_stats *st)
{
    FILE *o = s->out;
    mib_line(o, "in use", st->in_use, "(given to the program, not freed)");
    mib_line(o, "free, held", st->free_held,
             "(kept for reuse: 'purge' gives back its whole free pages)");
    mib_line(o, "from the system", st->from_system, s->alloc.kind == ALLOCATOR_GLIBC
             ? "(arenas' heaps and mmap()ed blocks; pages a trim gave back still count)"
             : "(heap, less what it unmapped)");
    if (st->mmapped != UINT64_MAX)
        mib_line(o, "  mmapped blocks", st->mmapped, "(each its own mapping)");
}

static void arenas_text(FILE *o, const struct glibc_malloc_info *mi)
{
    fprintf(o, "%-6s %12s %12s %12s %12s\n", "arena", "heap MiB", "peak MiB", "free MiB",
            "fast-bin MiB");
    for (size_t i = 0; i < mi->narenas; i++) {
        const struct glibc_arena_info *a = &mi->arenas[i];
        fprintf(o, "%-6u %12.1f %12.1f %12.1f %12.1f\n", a->nr, a->system_current / MIB,
                a->system_max / MIB, glibc_arena_free_bytes(a) / MIB,
                a->fast_bytes / MIB);
    }
}

/* The allocator's report, a line at a time: it is the process's text. */
static void report_text(FILE *o, char *text)
{
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        text_escape_put(o, line);
        fputc('\n', o);
    }
}

int allocator_stats_show(struct session *s, bool summary, bool json)
{
    struct allocator_stats st;
    struct mp_error err;
    if (allocator_stats(s->target, &s->alloc, &st, &err) < 0) {
        say_error("%s", err.msg);
        return -1;
    }
    int rc = 0;
    if (json) {
        rc = stats_json(s, &st);
    } else {
        fprintf(s->out, "%s of process %d, read in one stop of %.0f us\n",
                allocator_kind_name(s->alloc.kind), (int)target_pid(s->target),
                target_pauses(s->target)->last_us);
        summary_text(s, &st);
        if (!summary && st.have_glibc)
            arenas_text(s->out, &st.glibc);
        if (!summary && !st.have_glibc)
            for (size_t i = 0; i < st.nfig; i++)
                fprintf(s->out, "%-44s %16" PRIu64 "\n", st.fig[i].key, st.fig[i].value);
        if (!summary && st.text) {
            fprintf(s->out, "%s's own report:\n", allocator_kind_name(s->alloc.kind));
            report_text(s->out, st.text);
        }
    }
    allocator_stats_free(&st);
    return rc;
}

/* ---- purge ---- */

static const char *purge_call(enum allocator_kind k)
{
    return k == ALLOCATOR_GLIBC ? "malloc_trim(0)" : "MallocExtension_ReleaseFreeMemory()";
}

/* A glibc trim of a big heap can hold the thread, and the arenas' locks,
 * for a long time: said before it starts. */
static void long_purge_note(struct session *s)
{
    uint64_t anon;
    if (s->alloc.kind != ALLOCATOR_GLIBC || !process_file_value(s, "status", "RssAnon", &anon) ||
        anon < LONG_TRIM_BYTES)
        return;
    say_status(s, "note: malloc_trim(0) walks every free chunk of every arena, holding "
               "each arena's lock in turn; with %.1f GiB of anonymous memory this may take "
               "a while (stalls of 1-3 s are reported on big heaps): threads allocating "
               "from the arena being trimmed wait for it\n", anon / (MIB * 1024));
}

static void purge_json(struct session *s, const struct allocator_purge *p, bool rss_known,
                       uint64_t before, uint64_t after)
{
    json_object *j = json_answer_new();
    json_object_object_add(j, "allocator",
                           json_object_new_string(allocator_kind_key(s->alloc.kind)));
    json_object_object_add(j, "call", json_object_new_string(purge_call(s->alloc.kind)));
    if (s->alloc.kind == ALLOCATOR_GLIBC)
        json_object_object_add(j, "returned_memory", json_object_new_boolean(p->ret == 1));
    if (rss_known) {
        json_bytes(j, "rss_before", before);
        json_bytes(j, "rss_after", after);
        json_bytes(j, "rss_returned", memory_minus(before, after));
    }
    json_bytes(j, "free_held_before", p->free_before);
    json_bytes(j, "free_held_after", p->free_after);
    json_object_object_add(j, "pause_us",
                           json_object_new_double(target_pauses(s->target)->last_us));
    json_answer_emit(s, j);
}

int allocator_purge_run(struct session *s, bool json)
{
    if (!allocator_has_purge(s->alloc.kind)) {
        say_error("memprof cannot purge %s: %s", allocator_kind_name(s->alloc.kind),
                  allocator_why_no_stats(s->alloc.kind));
        return -1;
    }
    long_purge_note(s);
    uint64_t before = 0, after = 0;
    bool rss_known = process_file_value(s, "status", "VmRSS", &before);
    struct allocator_purge p;
    struct mp_error err;
    if (allocator_purge(s->target, &s->alloc, &p, &err) < 0) {
        say_error("%s", err.msg);
        return -1;
    }
    rss_known = process_file_value(s, "status", "VmRSS", &after) && rss_known;
    double pause = target_pauses(s->target)->last_us;
    if (json) {
        purge_json(s, &p, rss_known, before, after);
        return 0;
    }
    FILE *o = s->out;
    if (s->alloc.kind == ALLOCATOR_GLIBC)
        fprintf(o, "%s: %s\n", purge_call(s->alloc.kind), p.ret == 1
                ? "memory was returned to the system"
                : "there was no free memory to give back");
    else
        fprintf(o, "%s: done\n", purge_call(s->alloc.kind));
    fprintf(o, "%-18s %12s %12s %12s\n", "", "before", "after", "returned");
    purge_rss_line(s, rss_known, before, after);
    if (p.free_before != UINT64_MAX && p.free_after != UINT64_MAX)
        fprintf(o, "%-18s %8.1f MiB %8.1f MiB %8.1f MiB\n", "free, held", p.free_before / MIB,
                p.free_after / MIB, memory_minus(p.free_before, p.free_after) / MIB);
    purge_closing_line(s, rss_known, before, after, pause);
    return 0;
}
