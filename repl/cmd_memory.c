/* cmd_memory.c - the commands about where a live process's memory is:
 * purge and decay (jemalloc's unused dirty pages), memory (the kernel's
 * view of the whole process reconciled with jemalloc's), and stats
 * (jemalloc's statistics in one stop).  Each is done below
 * (session/memory_view.c, jemalloc_purge.c, jemalloc_decay.c,
 * jemalloc_stats_view.c): here its arguments are parsed and its answer
 * printed; the cgroup's lines are memory_cgroup.c's, the heap by arena's
 * memory_arenas.c's. */
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/array.h"
#include "lib/analysis/analysis.h"
#include "allocator/jemalloc/mallctl.h"
#include "lib/proc/procmem.h"
#include "lib/base/safe_open.h"
#include "lib/base/file_read.h"
#include "lib/base/text_escape.h"
#include "repl/cmd_memory.h"
#include "repl/memory_arenas.h"
#include "repl/memory_cgroup.h"
#include "session/jemalloc_stats_json.h"
#include "session/jemalloc_stats_view.h"
#include "session/jemalloc_decay.h"
#include "session/jemalloc_purge.h"
#include "session/jemalloc_summary.h"
#include "session/json_answer.h"
#include "session/memory_view.h"
#include "session/process_files.h"
#include "repl/options.h"


/* ---- jemalloc's figures ---- */

static const char *const no_stats_why = jemalloc_no_stats_why;

static double last_pause_us(struct session *s)
{
    return target_pauses(s->target)->last_us;
}

/* Every answer is an object carrying the schema version (session/json_answer.h);
 * a list goes under its name. */
static void json_print(struct session *s, json_object *o)
{
    if (json_object_is_type(o, json_type_object))
        json_object_object_add(o, "schema", json_object_new_int(MEMPROF_JSON_SCHEMA));
    fprintf(s->out, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
                                                               JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

static void json_u64(json_object *o, const char *key, uint64_t v)
{
    json_object_object_add(o, key, json_object_new_uint64(v));
}

uint64_t memory_minus(uint64_t a, uint64_t b)
{
    return a > b ? a - b : 0;
}

void purge_rss_line(struct session *s, bool known, uint64_t before, uint64_t after)
{
    if (known)
        fprintf(s->out, "%-18s %8.1f MiB %8.1f MiB %8.1f MiB\n", "RSS", before / MIB,
                after / MIB, memory_minus(before, after) / MIB);
    else
        fprintf(s->out, "RSS                unknown (/proc/%d/status unreadable)\n",
                (int)target_pid(s->target));
}

void purge_closing_line(struct session *s, bool known, uint64_t before, uint64_t after,
                        double pause_us)
{
    if (known)
        fprintf(s->out, "%.1f MiB came back to the system (thread stopped %.0f us)\n",
                memory_minus(before, after) / MIB, pause_us);
    else
        fprintf(s->out, "how much came back to the system is unknown: RSS unreadable "
                "(thread stopped %.0f us)\n", pause_us);
}

/* Anonymous RSS beyond an allocator's figure of its heap (jemalloc's
 * resident, glibc's from-the-system): both count pages the other does not
 * (the allocator's figure pages never touched, or trimmed), so the
 * difference is a lower bound when positive and says nothing when
 * negative: then only by how much the allocator's figure is above is
 * given (key_over), never a 0 that is not true. */
static void json_beyond(json_object *o, const char *key, const char *key_over, uint64_t anon,
                        uint64_t heap)
{
    if (anon >= heap)
        json_u64(o, key, anon - heap);
    else
        json_u64(o, key_over, heap - anon);
}

static void text_beyond(FILE *o, const char *label, const char *who, uint64_t anon,
                        uint64_t heap, const char *what)
{
    if (anon >= heap)
        fprintf(o, "%-20s %10.1f MiB  (at least: anonymous - %s's heap: %s)\n", label,
                (anon - heap) / MIB, who, what);
    else
        fprintf(o, "%-20s unknown: %s's heap figure is %.1f MiB above the anonymous RSS (it "
                "counts pages never touched or given back), so the anonymous memory cannot be "
                "split by it; 'where RSS is' below says what can be told apart\n", label, who,
                (heap - anon) / MIB);
}

/* ---- purge ---- */

static void purge_json(struct session *s, const struct jemalloc_purge *p)
{
    json_object *o = json_object_new_object();
    if (p->all)
        json_object_object_add(o, "arena", json_object_new_string("all"));
    else
        json_object_object_add(o, "arena", json_object_new_int64(p->arena));
    if (p->rss_known) {
        json_u64(o, "rss_before", p->rss_before);
        json_u64(o, "rss_after", p->rss_after);
        json_u64(o, "rss_returned", memory_minus(p->rss_before, p->rss_after));
    }
    if (p->before.stats && p->after.stats) {
        json_u64(o, "resident_before", p->before.resident);
        json_u64(o, "resident_after", p->after.resident);
        json_u64(o, "resident_returned", memory_minus(p->before.resident, p->after.resident));
    }
    json_object_object_add(o, "pause_us", json_object_new_double(p->pause_us));
    json_print(s, o);
}

static void purge_text(struct session *s, const struct jemalloc_purge *p)
{
    FILE *o = s->out;
    if (p->all)
        fprintf(o, "purged every arena's unused dirty and muzzy pages\n");
    else
        fprintf(o, "purged arena %u's unused dirty and muzzy pages\n", p->arena);
    fprintf(o, "%-18s %12s %12s %12s\n", "", "before", "after", "returned");
    purge_rss_line(s, p->rss_known, p->rss_before, p->rss_after);
    if (p->before.stats && p->after.stats)
        fprintf(o, "%-18s %8.1f MiB %8.1f MiB %8.1f MiB\n", "jemalloc resident",
                p->before.resident / MIB, p->after.resident / MIB,
                memory_minus(p->before.resident, p->after.resident) / MIB);
    else
        fprintf(o, "jemalloc resident  unknown: %s\n", no_stats_why);
    purge_closing_line(s, p->rss_known, p->rss_before, p->rss_after, p->pause_us);
}

/* purge [ARENA] [--json] */
int cmd_purge(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {{"json", false, false, NULL}, {NULL, false, false, NULL}};
    char *pos[1];
    int npos = options_parse(argc, argv, opts, pos, 1);
    if (npos < 0)
        return -1;
    bool json = opts[0].given, all = npos == 0;
    if (s->alloc.kind != ALLOCATOR_JEMALLOC && !all) {
        say_error("%s has no purge of one arena: 'purge' alone gives back what every "
                  "arena holds", allocator_kind_name(s->alloc.kind));
        return -1;
    }
    if (s->alloc.kind != ALLOCATOR_JEMALLOC)
        return allocator_purge_run(s, json);
    struct jemalloc_purge p;
    if (jemalloc_purge_run(s, all ? NULL : pos[0], &p))
        return -1;
    if (json)
        purge_json(s, &p);
    else
        purge_text(s, &p);
    return 0;
}

/* ---- decay ---- */

static void decay_json(struct session *s, const struct jemalloc_decay *d)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct jemalloc_decay_row *r = &d->rows[i];
        json_object *o = json_object_new_object();
        if (!r->new_arenas)
            json_object_object_add(o, "arena", json_object_new_int64((int64_t)r->arena));
        else
            json_object_object_add(o, "arena", json_object_new_string("default"));
        json_object_object_add(o, "dirty_decay_ms", json_object_new_int64(r->dirty_ms));
        json_object_object_add(o, "muzzy_decay_ms", json_object_new_int64(r->muzzy_ms));
        if (d->set) {
            json_object_object_add(o, "dirty_decay_ms_now", json_object_new_int64(d->want[0]));
            json_object_object_add(o, "muzzy_decay_ms_now", json_object_new_int64(d->want[1]));
        }
        json_object_array_add(arr, o);
    }
    json_object *doc = json_answer_new();
    json_object_object_add(doc, "arenas", arr);
    json_print(s, doc);
}

static void decay_text(struct session *s, const struct jemalloc_decay *d)
{
    fprintf(s->out, "%-12s %14s %14s\n", "arena", "dirty_decay_ms", "muzzy_decay_ms");
    for (size_t i = 0; i < d->n; i++) {
        const struct jemalloc_decay_row *r = &d->rows[i];
        char label[32];
        if (!r->new_arenas)
            snprintf(label, sizeof label, "%zu", r->arena);
        else
            snprintf(label, sizeof label, "new arenas");
        if (d->set)
            fprintf(s->out, "%-12s %6zd -> %-6zd %6zd -> %-6zd\n", label, r->dirty_ms,
                    d->want[0], r->muzzy_ms, d->want[1]);
        else
            fprintf(s->out, "%-12s %14zd %14zd\n", label, r->dirty_ms, r->muzzy_ms);
    }
    if (d->set)
        fprintf(s->out, "decay set in every initialized arena and for new arenas\n");
}

/* decay [DIRTY_MS [MUZZY_MS]] [--json] */
int cmd_decay(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {{"json", false, false, NULL}, {NULL, false, false, NULL}};
    char *pos[2];
    int npos = options_parse(argc, argv, opts, pos, 2);
    if (npos < 0)
        return -1;
    struct jemalloc_decay d;
    if (jemalloc_decay_run(s, pos, npos, &d))
        return -1;
    if (opts[0].given)
        decay_json(s, &d);
    else
        decay_text(s, &d);
    jemalloc_decay_free(&d);
    return 0;
}

/* ---- memory ---- */

/* The parts, largest first; files beyond the first few in one line (the
 * JSON has each). */
#define FILES_SHOWN 6

static void where_text(FILE *o, const struct memory_view *m)
{
    if (!m->acct_ok) {
        fprintf(o, "\nwhere RSS is         unknown: %s\n", m->acct_why);
        return;
    }
    const struct memory_account *a = &m->acct;
    fprintf(o, "\nwhere RSS is (one read of smaps: %.1f MiB; AnonHugePages %.1f MiB, LazyFree "
            "%.1f MiB)\n", a->rss.rss / MIB, a->rss.anon_huge / MIB, a->rss.lazyfree / MIB);
    unsigned files = 0, more = 0;
    uint64_t more_bytes = 0;
    for (size_t i = 0; i < a->nparts; i++) {
        const struct memory_part *p = &a->parts[i];
        bool file = strncmp(p->name, "file: ", 6) == 0;
        if (file && files++ >= FILES_SHOWN) {
            more++;
            more_bytes += p->bytes;
            continue;
        }
        char eb[TEXT_ESCAPE_BUF];
        fprintf(o, "  %10.1f MiB  %s\n", p->bytes / MIB, text_escape(p->name, eb, sizeof eb));
    }
    if (more)
        fprintf(o, "  %10.1f MiB  %u other files\n", more_bytes / MIB, more);
    if (a->threads > a->threads_with_sp)
        fprintf(o, "  (%u of %u threads gave no stack pointer: running, so their stacks are "
                "told by their layout)\n", a->threads - a->threads_with_sp, a->threads);
}

static void maps_json(json_object *o, const struct procmem_groups *g,
                      const struct jemalloc_summary *je)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < g->n; i++) {
        const struct procmem_group *p = &g->v[i];
        static const char *const kinds[] = {"anonymous", "stacks", "file", "other"};
        json_object *e = json_object_new_object();
        json_object_object_add(e, "kind", json_object_new_string(kinds[p->kind]));
        json_object_object_add(e, "name", json_object_new_string(p->name));
        json_u64(e, "mappings", p->mappings);
        json_u64(e, "size", p->size);
        json_u64(e, "rss", p->rss);
        json_u64(e, "dirty", p->dirty);
        json_u64(e, "swap", p->swap);
        if (p->kind == PROCMEM_ANON && je->stats) {
            json_u64(e, "jemalloc_resident", je->resident);
            json_beyond(e, "other_anonymous_rss", "jemalloc_resident_over_rss", p->rss,
                        je->resident);
        }
        json_object_array_add(arr, e);
    }
    json_object_object_add(o, "maps", arr);
}

static int by_rss(const void *a, const void *b)
{
    const struct procmem_group *x = a, *y = b;
    return x->rss < y->rss ? 1 : x->rss > y->rss ? -1 : strcmp(x->name, y->name);
}

static void maps_text(struct session *s, const struct procmem_groups *g,
                      const struct jemalloc_summary *je)
{
    const char *heap = s->alloc.kind == ALLOCATOR_JEMALLOC ? "jemalloc"
                       : s->alloc.kind == ALLOCATOR_UNKNOWN ? "the allocator"
                       : allocator_kind_name(s->alloc.kind);
    fprintf(s->out, "\n%-44s %5s %10s %10s %10s %10s\n", "mappings (like pmap -x)", "maps",
            "size KiB", "RSS KiB", "dirty KiB", "swap KiB");
    for (size_t i = 0; i < g->n; i++) {
        const struct procmem_group *p = &g->v[i];
        char eb[TEXT_ESCAPE_BUF];
        char label[300];
        if (p->kind == PROCMEM_ANON)
            snprintf(label, sizeof label, "anonymous (%s + other mmaps)", heap);
        else
            snprintf(label, sizeof label, "%s", text_escape(p->name, eb, sizeof eb));
        fprintf(s->out, "%-44.44s %5u %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
                label, p->mappings, p->size >> 10, p->rss >> 10, p->dirty >> 10, p->swap >> 10);
        if (p->kind == PROCMEM_ANON && je->stats && p->rss >= je->resident)
            fprintf(s->out, "  %-42s %5s %10s %10" PRIu64 "\n  %-42s %5s %10s %10" PRIu64 "\n",
                    "of which jemalloc's extents (stats.resident)", "", "",
                    je->resident >> 10, "other anonymous (at least)", "", "",
                    (p->rss - je->resident) >> 10);
        else if (p->kind == PROCMEM_ANON && je->stats)
            fprintf(s->out, "  %-42s %5s %10s %10" PRIu64 "\n", "not split: jemalloc's "
                    "stats.resident is above it by", "", "", (je->resident - p->rss) >> 10);
    }
}

static void other_json(json_object *o, struct session *s, const struct allocator_stats *st,
                       uint64_t anon)
{
    json_object *a = json_object_new_object();
    json_object_object_add(a, "name", json_object_new_string(allocator_kind_key(s->alloc.kind)));
    if (st->in_use != UINT64_MAX)
        json_u64(a, "in_use", st->in_use);
    if (st->free_held != UINT64_MAX)
        json_u64(a, "free_held", st->free_held);
    if (st->from_system != UINT64_MAX) {
        json_u64(a, "from_system", st->from_system);
        json_beyond(o, "anonymous_not_allocator", "allocator_heap_over_anonymous", anon,
                    st->from_system);
    }
    json_object_object_add(o, "allocator", a);
}

static void other_text(struct session *s, const struct memory_view *m)
{
    FILE *o = s->out;
    const char *name = allocator_kind_name(s->alloc.kind);
    if (!m->have_other) {
        fprintf(o, "allocator            %s: no figures (%s)\n", name, m->other_why);
        return;
    }
    const struct allocator_stats *st = &m->other;
    if (st->in_use != UINT64_MAX)
        fprintf(o, "%-20s %10.1f MiB  (given to the program)\n", "allocator in use",
                st->in_use / MIB);
    if (st->free_held != UINT64_MAX)
        fprintf(o, "%-20s %10.1f MiB  ('purge' gives back its whole free pages)\n",
                "allocator free, held", st->free_held / MIB);
    if (st->from_system != UINT64_MAX) {
        fprintf(o, "%-20s %10.1f MiB  (%s's, from the system)\n", "allocator heap",
                st->from_system / MIB, name);
        text_beyond(o, "anonymous, not the allocator's", name, m->anon, st->from_system,
                    s->alloc.kind == ALLOCATOR_GLIBC ? "thread stacks, other mmaps; glibc "
                    "counts pages a trim gave back as its heap still" : "thread stacks, other "
                    "mmaps");
    }
}

static void memory_json(struct session *s, const struct memory_view *m,
                        const struct procmem_groups *g)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "pid", json_object_new_int64(target_pid(s->target)));
    json_u64(o, "rss", m->rss);
    if (m->rollup) {
        json_u64(o, "pss", m->pss);
        json_u64(o, "pss_anon", m->pss_anon);
        json_u64(o, "pss_file", m->pss_file);
    }
    json_u64(o, "anonymous", m->anon);
    json_u64(o, "swap", m->swap);
    if (m->status) {
        json_u64(o, "rss_peak", m->hwm);
        json_u64(o, "rss_anon", m->rss_anon);
        json_u64(o, "rss_file", m->rss_file);
        json_u64(o, "rss_shmem", m->rss_shmem);
    }
    if (m->je.stats) {
        json_u64(o, "jemalloc_allocated", m->je.allocated);
        json_u64(o, "jemalloc_active", m->je.active);
        json_u64(o, "jemalloc_resident", m->je.resident);
        json_u64(o, "jemalloc_mapped", m->je.mapped);
        json_u64(o, "jemalloc_retained", m->je.retained);
        json_u64(o, "jemalloc_dirty", memory_minus(m->je.resident, m->je.active + m->je.metadata));
        json_beyond(o, "anonymous_not_jemalloc", "jemalloc_resident_over_anonymous", m->anon,
                    m->je.resident);
    }
    if (m->have_other)
        other_json(o, s, &m->other, m->anon);
    if (m->faults) {
        json_u64(o, "minor_faults", m->minflt);
        json_u64(o, "major_faults", m->majflt);
        if (m->interval > 0) {
            json_object_object_add(o, "interval_s", json_object_new_double(m->interval));
            json_object_object_add(o, "minor_faults_per_s", json_object_new_double(m->minflt_rate));
            json_object_object_add(o, "major_faults_per_s", json_object_new_double(m->majflt_rate));
        }
    }
    if (m->oom) {
        json_object_object_add(o, "oom_score", json_object_new_int64(m->oom_score));
        json_object_object_add(o, "oom_score_adj", json_object_new_int64(m->oom_score_adj));
    }
    struct memory_cgroup_view cv = {&m->cg, m->cgroup_ok, m->cgroup_why, m->host_oom_kills};
    memory_cgroup_json(o, &cv);
    if (m->acct_ok)
        memory_account_json(o, &m->acct);
    else
        json_object_object_add(o, "categories_error", json_object_new_string(m->acct_why));
    if (m->arenas_ok)
        heap_arenas_json(o, &m->arenas);
    if (m->diag_ok)
        memory_diagnoses_json(o, &m->diag);
    if (g)
        maps_json(o, g, &m->je);
    json_object_object_add(o, "pause_us", json_object_new_double(last_pause_us(s)));
    json_print(s, o);
}

static void memory_text(struct session *s, const struct memory_view *m,
                        const struct procmem_groups *g, bool all_arenas)
{
    FILE *o = s->out;
    fprintf(o, "RSS                  %10.1f MiB  (peak %.1f MiB, VmHWM)\n", m->rss / MIB, m->hwm / MIB);
    if (m->rollup)
        fprintf(o, "PSS                  %10.1f MiB  (anonymous %.1f, file %.1f)\n",
                m->pss / MIB, m->pss_anon / MIB, m->pss_file / MIB);
    fprintf(o, "anonymous            %10.1f MiB\n", m->anon / MIB);
    fprintf(o, "file-backed          %10.1f MiB  (shmem %.1f MiB)\n", m->rss_file / MIB,
            m->rss_shmem / MIB);
    fprintf(o, "swap                 %10.1f MiB\n", m->swap / MIB);
    if (s->alloc.kind != ALLOCATOR_JEMALLOC) {
        other_text(s, m);
    } else if (m->je.stats) {
        fprintf(o, "jemalloc allocated   %10.1f MiB  (active %.1f MiB)\n",
                m->je.allocated / MIB, m->je.active / MIB);
        fprintf(o, "jemalloc resident    %10.1f MiB  (of which unused dirty pages ~%.1f MiB)\n",
                m->je.resident / MIB, memory_minus(m->je.resident, m->je.active + m->je.metadata) / MIB);
        fprintf(o, "jemalloc mapped      %10.1f MiB  (retained, not mapped: %.1f MiB)\n",
                m->je.mapped / MIB, m->je.retained / MIB);
        text_beyond(o, "anonymous, not jemalloc", "jemalloc", m->anon, m->je.resident,
                    "stats.resident counts pages never touched too; thread stacks, other mmaps");
    } else {
        fprintf(o, "jemalloc             unknown: %s\n", no_stats_why);
    }
    if (m->faults) {
        fprintf(o, "page faults          %" PRIu64 " minor, %" PRIu64 " major", m->minflt, m->majflt);
        if (m->interval > 0)
            fprintf(o, "; over %.1f s: %.1f minor/s, %.1f major/s", m->interval,
                    m->minflt_rate, m->majflt_rate);
        fputc('\n', o);
    }
    if (m->oom)
        fprintf(o, "oom_score            %" PRId64 " (oom_score_adj %" PRId64 ")\n",
                m->oom_score, m->oom_score_adj);
    struct memory_cgroup_view cv = {&m->cg, m->cgroup_ok, m->cgroup_why, m->host_oom_kills};
    memory_cgroup_text(o, &cv, m->rss);
    where_text(o, m);
    if (m->arenas_ok)
        memory_arenas_text(o, &m->arenas, allocator_kind_name(s->alloc.kind), all_arenas);
    if (m->diag_ok)
        memory_diagnoses_text(o, &m->diag);
    if (g)
        maps_text(s, g, &m->je);
    if (s->alloc.kind == ALLOCATOR_JEMALLOC || m->have_other)
        fprintf(o, "(%s's figures in one stop of %.0f us)\n",
                allocator_kind_name(s->alloc.kind), last_pause_us(s));
}

/* memory [--maps] [--arenas] [--interval S] [--json] */
int cmd_memory(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {
        {"json", false, false, NULL}, {"maps", false, false, NULL},
        {"interval", true, false, NULL}, {"arenas", false, false, NULL},
        {NULL, false, false, NULL},
    };
    if (options_parse(argc, argv, opts, NULL, 0) < 0)
        return -1;
    double interval = 0;
    if (opts[2].given) {
        char *end;
        interval = strtod(opts[2].value, &end);
        if (*end || end == opts[2].value || !(interval > 0 && interval <= 3600)) {
            say_error("--interval %s: give seconds, more than 0 and at most 3600",
                          opts[2].value);
            return -1;
        }
    }
    struct memory_view m;
    if (memory_view_read(s, interval, &m))
        return -1;
    struct procmem_groups g = {0}, *gp = NULL;
    if (opts[1].given) {
        size_t len;
        char *text = process_file(s, "smaps", &len);
        if (!text || procmem_smaps_groups(text, len, &g) < 0) {
            free(text);
            say_error("cannot read /proc/%d/smaps: is the process gone?",
                          (int)target_pid(s->target));
            memory_view_free(&m);
            return -1;
        }
        free(text);
        qsort(g.v, g.n, sizeof *g.v, by_rss);
        gp = &g;
    }
    if (opts[0].given)
        memory_json(s, &m, gp);
    else
        memory_text(s, &m, gp, opts[3].given);
    procmem_groups_free(&g);
    memory_view_free(&m);
    return 0;
}

/* ---- stats ---- */

static json_object *class_json(const struct jemalloc_stats_class *c)
{
    json_object *o = json_object_new_object();
    json_u64(o, "size", c->size);
    json_u64(o, "count", c->count);
    json_u64(o, "bytes", c->size * c->count);
    return o;
}

static json_object *classes_json(const struct jemalloc_stats_class *c, size_t n)
{
    json_object *arr = json_object_new_array();
    for (size_t j = 0; j < n; j++)
        json_object_array_add(arr, class_json(&c[j]));
    return arr;
}

static void classes_text(FILE *o, const char *kind, const struct jemalloc_stats_class *c,
                         size_t n)
{
    for (size_t j = 0; j < n; j++)
        fprintf(o, "%-8s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", kind, c[j].size,
                c[j].count, c[j].size * c[j].count);
}

static json_object *stats_arena_json(const struct jemalloc_stats_arena *a)
{
    json_object *e = json_object_new_object();
    json_object_object_add(e, "arena", json_object_new_int64(a->index));
    json_u64(e, "threads", a->threads);
    json_u64(e, "allocated", a->allocated);
    json_u64(e, "dirty", a->dirty);
    json_u64(e, "muzzy", a->muzzy);
    json_object_object_add(e, "dirty_decay_ms", json_object_new_int64(a->dirty_decay_ms));
    json_object_object_add(e, "muzzy_decay_ms", json_object_new_int64(a->muzzy_decay_ms));
    return e;
}

static void summary_json(struct session *s, const struct jemalloc_stats_view *v)
{
    json_object *doc = json_object_new_object();
    json_u64(doc, "allocated", v->allocated);
    json_u64(doc, "active", v->active);
    json_u64(doc, "metadata", v->metadata);
    json_u64(doc, "resident", v->resident);
    json_u64(doc, "mapped", v->mapped);
    json_u64(doc, "retained", v->retained);
    json_u64(doc, "fragmentation", memory_minus(v->active, v->allocated));
    json_u64(doc, "dirty", v->dirty);
    json_u64(doc, "muzzy", v->muzzy);
    json_u64(doc, "narenas", v->narenas);
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < v->n; i++)
        json_object_array_add(arr, stats_arena_json(&v->arenas[i]));
    json_object_object_add(doc, "arenas", arr);
    json_object_object_add(doc, "bins", classes_json(v->small, v->nsmall));
    json_object_object_add(doc, "large", classes_json(v->large, v->nlarge));
    json_u64(doc, "large_beyond_listed", v->large_beyond);
    json_object_object_add(doc, "pause_us", json_object_new_double(last_pause_us(s)));
    json_print(s, doc);
}

static void summary_text(struct session *s, const struct jemalloc_stats_view *v)
{
    FILE *o = s->out;
    fprintf(o, "allocated   %10.1f MiB   active %.1f MiB, metadata %.1f MiB\n",
            v->allocated / MIB, v->active / MIB, v->metadata / MIB);
    fprintf(o, "resident    %10.1f MiB   mapped %.1f MiB, retained %.1f MiB\n",
            v->resident / MIB, v->mapped / MIB, v->retained / MIB);
    fprintf(o, "fragmentation %8.1f MiB   (active - allocated: %.1f%% of active)\n",
            memory_minus(v->active, v->allocated) / MIB,
            v->active ? 100.0 * (double)memory_minus(v->active, v->allocated) / (double)v->active
                      : 0.0);
    fprintf(o, "unused dirty %9.1f MiB   muzzy %.1f MiB ('purge' returns them)\n",
            v->dirty / MIB, v->muzzy / MIB);
    fprintf(o, "\n%-6s %7s %12s %11s %11s %9s %9s\n", "arena", "threads", "allocated",
            "dirty", "muzzy", "dirty_ms", "muzzy_ms");
    for (size_t i = 0; i < v->n; i++) {
        const struct jemalloc_stats_arena *a = &v->arenas[i];
        fprintf(o, "%-6u %7u %8.1f MiB %7.1f MiB %7.1f MiB %9" PRId64 " %9" PRId64 "\n",
                a->index, a->threads, a->allocated / MIB, a->dirty / MIB, a->muzzy / MIB,
                a->dirty_decay_ms, a->muzzy_decay_ms);
    }
    if (v->narenas > v->arenas_read)
        fprintf(o, "(arenas %u to %u not shown: the totals above count them)\n",
                v->arenas_read, v->narenas - 1);
    fprintf(o, "\n%-8s %12s %12s %12s\n", "class", "size", "count", "bytes");
    classes_text(o, "small", v->small, v->nsmall);
    classes_text(o, "large", v->large, v->nlarge);
    if (v->large_beyond)
        fprintf(o, "%-8s %12s %12s %12" PRIu64 "\n", "large", "> 64 GiB", "", v->large_beyond);
    fprintf(o, "(one stop of %.0f us, after epoch)\n", last_pause_us(s));
}

static int stats_summary(struct session *s, bool json)
{
    struct jemalloc_stats_view v;
    if (jemalloc_stats_view_read(s, &v))
        return -1;
    if (json)
        summary_json(s, &v);
    else
        summary_text(s, &v);
    jemalloc_stats_view_free(&v);
    return 0;
}

/* The size of a capture the user allows: bytes, or with K/M/G. */
int memory_parse_size(const char *opt, const char *text, size_t *size)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    unsigned shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
    if (shift)
        end++;
    if (text[0] == '-' || end == text || *end || errno || v == 0 || v > (1ull << (30 - shift))) {
        say_error("%s %s: give a size from 1 byte to 1G (K, M and G allowed)", opt, text);
        return -1;
    }
    *size = (size_t)(v << shift);
    return 0;
}

/* stats [--summary] [--json] [--max-size SIZE] */
int cmd_stats(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {
        {"json", false, false, NULL}, {"summary", false, false, NULL},
        {"max-size", true, false, NULL}, {NULL, false, false, NULL},
    };
    if (options_parse(argc, argv, opts, NULL, 0) < 0)
        return -1;
    size_t cap = CAPTURE_DEFAULT_MAX;
    if (opts[2].given && memory_parse_size("--max-size", opts[2].value, &cap))
        return -1;
    if (s->alloc.kind != ALLOCATOR_JEMALLOC)
        return allocator_stats_show(s, opts[1].given, opts[0].given);
    if (opts[0].given && !opts[1].given)
        return jemalloc_stats_json(s, cap);
    return stats_summary(s, opts[0].given);
}
