/* ep_metrics.c - GET /metrics: Prometheus' text format 0.0.4, collected at
 * scrape time, one worker per process, several at once (--scrape-parallel)
 * within the scrape's deadline (X-Prometheus-Scrape-Timeout-Seconds less a
 * margin): a process not read by then is down at this scrape, never a late
 * answer.  A worker prints bare samples ("jemalloc_allocated_bytes 123");
 * the agent adds each process's labels (pid, comm, name; container_id,
 * pod_uid and qos where its cgroup names them) and groups every
 * metric's samples under its HELP and TYPE, as the format wants, with
 * memprof_target_up and the time each process took, in the order of the
 * process list (by pid).  Names follow Prometheus' guide: base units,
 * _bytes, no timestamps. */
#include "serve/endpoints.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/base/text_escape.h"
#include "lib/base/version.h"
#include "lib/proc/cgroup_memory.h"
#include "lib/proc/procmem.h"
#include "session/heap_arenas.h"
#include "session/jemalloc_summary.h"
#include "session/diagnose_read.h"
#include "session/memory_account.h"
#include "session/memory_diagnose.h"
#include "session/process_files.h"
#include "session/say.h"
#include "serve/targets.h"
#include "serve/worker.h"
#include "serve/worker_pool.h"

/* The scrape's budget: Prometheus' timeout less what sending the answer
 * and the network take (blackbox_exporter's default offset), never below
 * half of it; without the header, SCRAPE_BUDGET_S.  Either way at most
 * --timeout. */
#define SCRAPE_OFFSET_S 0.5
#define SCRAPE_BUDGET_S 10.0

struct metric {
    const char *name, *help;
};

/* Every metric the agent gives, in the order it gives them; a worker's
 * sample under another name is dropped. */
static const struct metric metrics[] = {
    {"memprof_target_up", "1 when memprof read the process at this scrape, 0 when it "
     "could not (gone, busy with another memprof, refused)"},
    {"memprof_target_scrape_duration_seconds", "how long reading the process took"},
    {"memprof_target_stopped_seconds", "how long one thread of the process was stopped "
     "while memprof read it (its other threads ran)"},
    {"memprof_process_resident_bytes", "the process's resident memory (VmRSS)"},
    {"memprof_process_resident_anon_bytes", "its resident anonymous memory (RssAnon)"},
    {"memprof_process_swap_bytes", "its memory swapped out (VmSwap)"},
    {"memprof_process_virtual_bytes", "its virtual memory size (VmSize)"},
    {"jemalloc_allocated_bytes", "bytes the program holds (stats.allocated)"},
    {"jemalloc_active_bytes", "bytes in pages holding allocations (stats.active)"},
    {"jemalloc_metadata_bytes", "jemalloc's own metadata (stats.metadata)"},
    {"jemalloc_resident_bytes", "bytes in pages jemalloc holds resident (stats.resident)"},
    {"jemalloc_mapped_bytes", "bytes in extents jemalloc has mapped (stats.mapped)"},
    {"jemalloc_retained_bytes", "virtual memory retained for reuse, not resident "
     "(stats.retained)"},
    {"jemalloc_dirty_bytes", "free pages not yet purged, all arenas (pdirty x page)"},
    {"jemalloc_muzzy_bytes", "free pages purged lazily, all arenas (pmuzzy x page)"},
    {"jemalloc_arena_dirty_bytes", "free pages not yet purged, per arena (pdirty x page; "
     "the first 64 arenas only, jemalloc_dirty_bytes counts all)"},
    {"jemalloc_arena_muzzy_bytes", "free pages purged lazily, per arena (pmuzzy x page; "
     "the first 64 arenas only, jemalloc_muzzy_bytes counts all)"},
    {"jemalloc_prof_active", "1 when jemalloc's heap profiler samples (prof.active)"},
    {"jemalloc_prof_sample_interval_bytes", "mean bytes between samples (2^prof.lg_sample)"},
    {"memprof_heap_in_use_bytes", "bytes the program holds, as its allocator says "
     "(glibc, tcmalloc)"},
    {"memprof_heap_free_bytes", "free bytes the allocator keeps (a purge may return some)"},
    {"memprof_heap_system_bytes", "bytes the allocator obtained from the system and holds"},
    {"memprof_heap_mmapped_bytes", "of which in blocks mapped one by one"},
    {"memprof_heap_arenas", "glibc malloc's arenas (malloc_info)"},
    {"memprof_heap_resident_measured_bytes", "glibc malloc: the Rss of its arenas' own "
     "mappings ([heap], each thread arena's heaps), when every arena was tied to them; the "
     "heap category is then this figure"},
    {"memprof_process_rss_accounted_bytes", "the process's RSS as one read of "
     "/proc/PID/smaps counts it: what memprof_process_rss_category_bytes adds up to"},
    {"memprof_process_rss_category_bytes", "the process's RSS by category, adding up to "
     "memprof_process_rss_accounted_bytes: sampler (memprof's), main_stack, thread_stacks "
     "(found by the threads' stack pointers), unseen_stacks (stack-like, no stack pointer "
     "read), heap (the allocator's own figure: at most; glibc's arenas measured where "
     "they can be, and its mmapped chunks), anon_other (the rest of the "
     "anonymous memory: at least), anon_unsplit (anonymous memory the allocator's figure "
     "cannot split), shared, other, file (every file-backed object)"},
    {"memprof_process_memory_diagnosis_bytes", "the bytes each diagnosis of the process's "
     "memory explains, by cause (as 'memory' gives them; only the causes found this scrape): "
     "thp_inflation, jemalloc_unpurged, glibc_arenas_free, tcmalloc_pageheap_free, "
     "exited_thread_stacks, cgroup_near_limit (growing_mapping needs two reads: 'memory')"},
    {"memprof_cgroup_memory_usage_bytes", "the memory charged to the process's cgroup "
     "(memory.current; v1 memory.usage_in_bytes)"},
    {"memprof_cgroup_memory_limit_bytes", "the cgroup's memory limit, where it has one "
     "(memory.max; v1 memory.limit_in_bytes): at it, the kernel reclaims, then kills"},
    {"memprof_cgroup_memory_headroom_bytes", "what is left below the limit (limit - usage)"},
    {"memprof_cgroup_memory_high_bytes", "the cgroup's throttling limit, where set "
     "(memory.high, v2)"},
    {"memprof_cgroup_memory_anon_bytes", "anonymous memory charged to the cgroup "
     "(memory.stat anon; v1 total_rss)"},
    {"memprof_cgroup_memory_file_bytes", "page cache charged to the cgroup "
     "(memory.stat file; v1 total_cache)"},
    {"memprof_cgroup_oom_events_total", "times the cgroup reached its limit and memory "
     "could not be reclaimed (memory.events oom)"},
    {"memprof_cgroup_oom_kills_total", "processes of the cgroup the OOM killer killed "
     "(memory.events oom_kill; v1 memory.oom_control oom_kill)"},
    {"memprof_cgroup_oom_group_kills_total", "times the whole cgroup was killed "
     "(memory.events oom_group_kill)"},
    {"memprof_cgroup_memory_high_events_total", "times the cgroup was throttled over "
     "memory.high (memory.events high)"},
    {"memprof_cgroup_memory_max_events_total", "times the cgroup's usage reached its limit "
     "(memory.events max; v1 memory.failcnt)"},
    {"memprof_cgroup_under_oom", "1 while the cgroup is out of memory with the OOM killer "
     "disabled (v1 memory.oom_control under_oom)"},
    {"memprof_cgroup_memory_pressure_some_ratio", "share of time some task of the cgroup "
     "waited for memory, over window seconds (memory.pressure some avg10/60/300 / 100)"},
    {"memprof_cgroup_memory_pressure_full_ratio", "share of time every task of the cgroup "
     "waited for memory, over window seconds (memory.pressure full avg10/60/300 / 100)"},
    {"memprof_cgroup_memory_pressure_some_seconds_total", "time some task of the cgroup "
     "waited for memory (memory.pressure some total)"},
    {"memprof_cgroup_memory_pressure_full_seconds_total", "time every task of the cgroup "
     "waited for memory (memory.pressure full total)"},
};
#define NMETRICS (sizeof metrics / sizeof *metrics)

/* What the process paid for this scrape: its thread's stops together. */
static void stopped_time(struct session *s)
{
    if (s->target)
        fprintf(s->out, "memprof_target_stopped_seconds %.6f\n",
                target_pauses(s->target)->total_us / 1e6);
}

static void sample(FILE *out, const char *name, uint64_t v)
{
    if (v != UINT64_MAX)
        fprintf(out, "%s %" PRIu64 "\n", name, v);
}

static void process_memory(struct session *s)
{
    static const char *const keys[][2] = {
        {"VmRSS", "memprof_process_resident_bytes"},
        {"RssAnon", "memprof_process_resident_anon_bytes"},
        {"VmSwap", "memprof_process_swap_bytes"},
        {"VmSize", "memprof_process_virtual_bytes"},
    };
    size_t len;
    char *status = process_file(s, "status", &len);
    for (size_t i = 0; status && i < sizeof keys / sizeof *keys; i++) {
        uint64_t v;
        if (procmem_field(status, len, keys[i][0], &v))
            sample(s->out, keys[i][1], v);
    }
    free(status);
}

/* What one scrape read, kept for the diagnoses. */
struct figures {
    struct memory_heap heap;
    struct jemalloc_summary je;
    struct diagnose_jemalloc_settings set;
    bool have_je, set_ok;
    struct allocator_stats st;
    bool have_st;
    struct cgroup_memory cg;
    bool have_cg;
    struct heap_arenas arenas;  /* glibc's, measured: holds heap.heap_starts */
    char *smaps;                /* read once, for the arenas and the categories */
    size_t smaps_len;
    bool smaps_read;
};

/* The process's smaps, read at most once a scrape (NULL when unreadable). */
static const char *smaps_of(struct session *s, struct figures *fig)
{
    if (!fig->smaps_read) {
        fig->smaps = process_file(s, "smaps", &fig->smaps_len);
        fig->smaps_read = true;
    }
    return fig->smaps;
}

/* jemalloc's figures (one stop), with its profiler's and purge's settings. */
static int jemalloc_figures(struct session *s, struct figures *fig)
{
    struct memory_heap *heap = &fig->heap;
    bool active = false, enabled = false;
    uint64_t lg = 0;
    struct mallctl_call prof[3 + DIAGNOSE_JEMALLOC_NCALLS] = {
        {.name = "prof.active", .old = &active, .oldlen = sizeof active},
        {.name = "prof.lg_sample", .old = &lg, .oldlen = sizeof lg},
        {.name = "opt.prof", .old = &enabled, .oldlen = sizeof enabled},
    };
    memory_diagnose_jemalloc_calls(&fig->set);
    memcpy(prof + 3, fig->set.calls, sizeof fig->set.calls);
    struct jemalloc_summary f;
    struct jemalloc_arenas arenas;
    if (jemalloc_summary_read_arenas(s, prof, 3 + DIAGNOSE_JEMALLOC_NCALLS, &f, &arenas))
        return -1;
    fig->je = f;
    fig->have_je = f.stats;
    fig->set_ok = true;
    for (size_t i = 3; i < 3 + DIAGNOSE_JEMALLOC_NCALLS; i++)
        fig->set_ok = fig->set_ok && prof[i].ret == 0;
    if (f.stats) {          /* else built without statistics (config.stats) */
        sample(s->out, "jemalloc_allocated_bytes", f.allocated);
        sample(s->out, "jemalloc_active_bytes", f.active);
        sample(s->out, "jemalloc_metadata_bytes", f.metadata);
        sample(s->out, "jemalloc_resident_bytes", f.resident);
        sample(s->out, "jemalloc_mapped_bytes", f.mapped);
        sample(s->out, "jemalloc_retained_bytes", f.retained);
        memory_heap_jemalloc(heap, f.resident, f.active);
    }
    if (f.pages) {
        sample(s->out, "jemalloc_dirty_bytes", f.dirty);
        sample(s->out, "jemalloc_muzzy_bytes", f.muzzy);
    }
    for (size_t i = 0; i < arenas.n; i++)
        fprintf(s->out, "jemalloc_arena_dirty_bytes{arena=\"%u\"} %" PRIu64 "\n"
                "jemalloc_arena_muzzy_bytes{arena=\"%u\"} %" PRIu64 "\n", arenas.a[i].index,
                arenas.a[i].dirty, arenas.a[i].index, arenas.a[i].muzzy);
    if (prof[0].ret == 0)       /* built with profiling (config.prof) */
        sample(s->out, "jemalloc_prof_active", active);
    /* Without prof:true jemalloc never set its rate: prof.lg_sample reads 0. */
    if (prof[1].ret == 0 && prof[2].ret == 0 && enabled)
        sample(s->out, "jemalloc_prof_sample_interval_bytes", UINT64_C(1) << (lg & 63));
    return 0;
}

/* glibc's arenas measured (session/glibc_arenas.c, as 'memory' does): the
 * heap's category is then their mappings' Rss, and those mappings are
 * never taken for stacks.  What cannot be measured leaves the figures as
 * they were. */
static void glibc_measured(struct session *s, const struct allocator_stats *st,
                           struct figures *fig)
{
    struct memory_heap *heap = &fig->heap;
    struct heap_arenas *arenas = &fig->arenas;
    if (s->alloc.kind != ALLOCATOR_GLIBC)
        return;
    const char *smaps = smaps_of(s, fig);
    if (heap_arenas_glibc(s, arenas, st, smaps, fig->smaps_len) < 0)
        return;
    sample(s->out, "memprof_heap_arenas", arenas->arenas);
    if (!arenas->measured)
        return;
    sample(s->out, "memprof_heap_resident_measured_bytes", arenas->resident);
    memory_heap_measured(heap, heap->who, arenas->resident, arenas->in_use);
    heap->heap_starts = arenas->heap_starts;
    heap->nheap_starts = arenas->nheap_starts;
    heap->glibc_chunks = true;
}

static int other_figures(struct session *s, struct figures *fig)
{
    if (!allocator_has_stats(s->alloc.kind))
        return 0;
    struct memory_heap *heap = &fig->heap;
    struct allocator_stats st;
    struct mp_error err;
    if (allocator_stats(s->target, &s->alloc, &st, &err) < 0) {
        say_error("%s", err.msg);
        return -1;
    }
    sample(s->out, "memprof_heap_in_use_bytes", st.in_use);
    sample(s->out, "memprof_heap_free_bytes", st.free_held);
    sample(s->out, "memprof_heap_system_bytes", st.from_system);
    sample(s->out, "memprof_heap_mmapped_bytes", st.mmapped);
    memory_heap_other(heap, heap->who, st.from_system, st.in_use);
    glibc_measured(s, &st, fig);
    fig->st = st;
    fig->have_st = true;
    return 0;
}

static void pressure(FILE *out, const char *which, const struct procmem_psi *p)
{
    const double avg[] = {p->avg10, p->avg60, p->avg300};
    static const int window[] = {10, 60, 300};
    for (int i = 0; i < 3; i++)
        fprintf(out, "memprof_cgroup_memory_pressure_%s_ratio{window=\"%d\"} %.4f\n", which,
                window[i], avg[i] / 100);
    fprintf(out, "memprof_cgroup_memory_pressure_%s_seconds_total %.6f\n", which,
            (double)p->total_us / 1e6);
}

/* The process's cgroup: usage, limit, events, pressure.  A cgroup that
 * cannot be read leaves its series out, not the process down. */
static void cgroup_figures(struct session *s, struct figures *fig)
{
    struct cgroup_memory c;
    char why[512];
    if (process_cgroup_memory(s, &c, why, sizeof why) < 0)
        return;
    fig->cg = c;
    fig->have_cg = true;
    sample(s->out, "memprof_cgroup_memory_usage_bytes", c.current);
    if (!c.max_unlimited) {
        sample(s->out, "memprof_cgroup_memory_limit_bytes", c.max);
        sample(s->out, "memprof_cgroup_memory_headroom_bytes", cgroup_memory_headroom(&c));
    }
    if (!c.high_unlimited)
        sample(s->out, "memprof_cgroup_memory_high_bytes", c.high);
    sample(s->out, "memprof_cgroup_memory_anon_bytes", c.anon);
    sample(s->out, "memprof_cgroup_memory_file_bytes", c.file);
    sample(s->out, "memprof_cgroup_oom_events_total", c.ev_oom);
    sample(s->out, "memprof_cgroup_oom_kills_total", c.ev_oom_kill);
    sample(s->out, "memprof_cgroup_oom_group_kills_total", c.ev_oom_group_kill);
    sample(s->out, "memprof_cgroup_memory_high_events_total", c.ev_high);
    sample(s->out, "memprof_cgroup_memory_max_events_total", c.ev_max);
    sample(s->out, "memprof_cgroup_under_oom", c.under_oom);
    if (c.has_pressure)
        pressure(s->out, "some", &c.some);
    if (c.has_full)
        pressure(s->out, "full", &c.full);
}

/* The diagnoses (session/memory_diagnose.c, as 'memory' gives them), by
 * cause: only the causes found; what grew needs two reads, not made here. */
static void diagnosis_figures(struct session *s, const struct memory_account *a,
                              const struct figures *fig)
{
    struct diagnose_input in;
    struct memory_diagnoses d;
    diagnose_input_base(s, a, &in);
    diagnose_input_allocator(s, &in, fig->have_je ? &fig->je : NULL,
                             fig->set_ok ? &fig->set : NULL,
                             fig->have_st ? &fig->st : NULL, &fig->arenas);
    in.cg = fig->have_cg ? &fig->cg : NULL;
    if (memory_diagnose(&in, &d) < 0)
        return;
    for (size_t i = 0; i < DIAGNOSE_NKEYS; i++) {
        const char *key = memory_diagnose_keys[i];
        bool found = false;
        for (size_t j = 0; j < d.n && !found; j++)
            found = strcmp(d.v[j].key, key) == 0;
        if (found)
            fprintf(s->out, "memprof_process_memory_diagnosis_bytes{cause=\"%s\"} %" PRIu64
                    "\n", key, memory_diagnoses_key(&d, key));
    }
    memory_diagnoses_free(&d);
}

/* Where RSS is (session/memory_account.c, as 'memory' shows it): one
 * sample per category key, every key each time so that series do not
 * come and go; files together.  Then the diagnoses. */
static void rss_figures(struct session *s, struct figures *fig)
{
    struct memory_account a;
    char why[256];
    const char *smaps = smaps_of(s, fig);
    if (memory_account_read(s, &fig->heap, smaps, fig->smaps_len, &a, why, sizeof why) < 0)
        return;
    sample(s->out, "memprof_process_rss_accounted_bytes", a.rss.rss);
    for (size_t i = 0; i < MEMORY_ACCOUNT_NKEYS; i++)
        fprintf(s->out, "memprof_process_rss_category_bytes{category=\"%s\"} %" PRIu64 "\n",
                memory_account_keys[i], memory_account_key(&a, memory_account_keys[i]));
    diagnosis_figures(s, &a, fig);
    memory_account_free(&a);
}

static int metrics_job(struct session *s, void *arg)
{
    (void)arg;
    struct figures fig = {.heap = {.who = allocator_kind_name(s->alloc.kind),
                                   .total = UINT64_MAX}};
    process_memory(s);
    cgroup_figures(s, &fig);
    int rc = s->alloc.kind == ALLOCATOR_JEMALLOC ? jemalloc_figures(s, &fig)
                                                 : other_figures(s, &fig);
    if (rc == 0)
        rss_figures(s, &fig);
    if (fig.have_st)
        allocator_stats_free(&fig.st);
    heap_arenas_free(&fig.arenas);
    free(fig.smaps);
    stopped_time(s);
    return rc ? 500 : 200;
}

/* One label value in the text format: what the target chose, made ASCII
 * (text_escape) and then escaped as the format says (\\, \", \n). */
static void put_label(FILE *f, const char *key, const char *value, bool comma)
{
    char buf[TEXT_ESCAPE_BUF];
    const char *esc = text_escape(value, buf, sizeof buf);
    fprintf(f, "%s%s=\"", comma ? "," : "", key);
    for (const char *c = esc; *c; c++) {
        if (*c == '\\' || *c == '"')
            fputc('\\', f);
        fputc(*c, f);
    }
    fputc('"', f);
}

/* The samples collected, per metric, as text lines with labels. */
struct collected {
    char *lines[NMETRICS];
    size_t lens[NMETRICS];
    FILE *f[NMETRICS];
};

static int metric_index(const char *name, size_t len)
{
    for (size_t i = 0; i < NMETRICS; i++)
        if (strlen(metrics[i].name) == len && strncmp(metrics[i].name, name, len) == 0)
            return (int)i;
    return -1;
}

/* labels: the worker's own, after the process's (`arena="3"`), or NULL. */
static void add_sample(struct collected *c, int m, const struct served_process *p,
                       const char *labels, const char *value)
{
    FILE *f = c->f[m];
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)p->pid);
    fprintf(f, "%s{", metrics[m].name);
    put_label(f, "pid", pid, false);
    put_label(f, "comm", p->comm, true);
    put_label(f, "name", p->name ? p->name : p->comm, true);
    struct process_label pl[PROCESS_LABELS_MAX];
    size_t npl = process_container_labels(&p->ct, pl);
    for (size_t i = 0; i < npl; i++)
        put_label(f, pl[i].key, pl[i].value, true);
    fprintf(f, "%s%s} %s\n", labels ? "," : "", labels ? labels : "", value);
}

/* A worker's labels: one key="value" of lower-case letters, digits and
 * '_', all the workers write (arena="3", category="thread_stacks"):
 * nothing to escape; anything else drops the sample. */
static bool labels_ok(const char *l, size_t len)
{
    size_t k = strspn(l, "abcdefghijklmnopqrstuvwxyz_");
    if (k == 0 || k + 3 > len || l[k] != '=' || l[k + 1] != '"' || l[len - 1] != '"')
        return false;
    size_t d = strspn(l + k + 2, "abcdefghijklmnopqrstuvwxyz_0123456789");
    return d > 0 && k + 2 + d == len - 1;
}

/* One line of a worker's, "name value" or "name{labels} value", into the
 * samples; a line of another shape is dropped. */
static void take_line(struct collected *c, const struct served_process *p, char *line)
{
    char *sp = strchr(line, ' ');
    if (!sp)
        return;
    *sp = '\0';
    char *brace = strchr(line, '{'), *labels = NULL;
    if (brace) {
        size_t len = strlen(brace + 1);
        if (len < 2 || brace[len] != '}' || !labels_ok(brace + 1, len - 1))
            return;
        brace[len] = '\0';
        labels = brace + 1;
    }
    int m = metric_index(line, brace ? (size_t)(brace - line) : strlen(line));
    if (m >= 0)
        add_sample(c, m, p, labels, sp + 1);
}

/* One process's answer into the samples: its figures, when it was read,
 * then whether it was and how long it took. */
static void collect_one(struct collected *c, const struct served_process *p,
                        struct worker_pool_item *it)
{
    struct worker_reply *wr = &it->reply;
    bool up = wr->status == 200;
    for (char *line = wr->body, *next; up && line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        take_line(c, p, line);
    }
    char v[32];
    add_sample(c, 0, p, NULL, up ? "1" : "0");
    snprintf(v, sizeof v, "%.6f", it->seconds);
    add_sample(c, 1, p, NULL, v);
}

/* The processes of list read by the pool, each one's answer in items. */
static struct worker_pool_item *read_all(const struct serve_config *cfg,
                                         const struct served_process *list, long n,
                                         double budget)
{
    struct worker_pool_item *items = calloc((size_t)n + 1, sizeof *items);
    if (!items)
        return NULL;
    for (long i = 0; i < n; i++)
        items[i].pid = list[i].pid;
    worker_pool_run(cfg, items, (size_t)n, metrics_job, NULL, cfg->scrape_parallel, budget);
    for (long i = 0; i < n && !cfg->quiet; i++)
        if (items[i].reply.status == 504)
            fprintf(stderr, "memprof serve: /metrics: %s", items[i].reply.said);
    return items;
}

/* Which memprof answers, as exporters say it (node_exporter's
 * node_exporter_build_info): the version (configure.ac) and the git commit
 * built.  Both are memprof's own strings, with no quote or backslash. */
static void build_info(FILE *f)
{
    fprintf(f, "# HELP memprof_build_info memprof's version and the git commit it was built "
            "from (unknown outside git); always 1\n# TYPE memprof_build_info gauge\n"
            "memprof_build_info{version=\"%s\",revision=\"%s\"} 1\n",
            MEMPROF_VERSION, memprof_revision);
}

/* A name ending in _total counts up (Prometheus' convention); the rest
 * are gauges. */
static const char *metric_type(const char *name)
{
    size_t n = strlen(name);
    return n > 6 && strcmp(name + n - 6, "_total") == 0 ? "counter" : "gauge";
}

/* What belongs to the host, not to a process: once, without labels. */
static void host_figures(FILE *f)
{
    uint64_t kills = cgroup_host_oom_kills();
    if (f && kills != CGROUP_ABSENT)
        fprintf(f, "# HELP memprof_host_oom_kills_total processes the OOM killer killed on "
                "this host since boot, in any cgroup (/proc/vmstat oom_kill)\n"
                "# TYPE memprof_host_oom_kills_total counter\n"
                "memprof_host_oom_kills_total %" PRIu64 "\n", kills);
}

/* Every metric's HELP and TYPE, then its samples, for the processes in
 * list: true, or false out of memory. */
static bool metrics_text(const struct serve_config *cfg, const struct served_process *list,
                         long n, double budget, char **out, size_t *len)
{
    struct collected c = {0};
    struct worker_pool_item *items = read_all(cfg, list, n, budget);
    bool ok = items != NULL;
    for (size_t m = 0; m < NMETRICS; m++)
        ok = (c.f[m] = open_memstream(&c.lines[m], &c.lens[m])) && ok;
    for (long i = 0; ok && i < n; i++)
        collect_one(&c, &list[i], &items[i]);
    for (long i = 0; items && i < n; i++)
        worker_reply_free(&items[i].reply);
    free(items);
    FILE *f = open_memstream(out, len);
    if (f)
        build_info(f);
    for (size_t m = 0; m < NMETRICS; m++) {
        if (c.f[m])
            fclose(c.f[m]);
        if (ok && f && c.lens[m])
            fprintf(f, "# HELP %s %s\n# TYPE %s %s\n%s", metrics[m].name, metrics[m].help,
                    metrics[m].name, metric_type(metrics[m].name), c.lines[m]);
        free(c.lines[m]);
    }
    host_figures(f);
    if (f && fclose(f) == 0 && ok)
        return true;
    free(*out);
    *out = NULL;
    return false;
}

static double scrape_budget(const struct serve_request *rq)
{
    double t = rq->scrape_timeout, budget = SCRAPE_BUDGET_S;
    if (t > 0)
        budget = t - SCRAPE_OFFSET_S >= t / 2 ? t - SCRAPE_OFFSET_S : t / 2;
    return budget < rq->cfg->request_timeout_s ? budget : rq->cfg->request_timeout_s;
}

void ep_metrics(const struct serve_request *rq, struct serve_reply *rp)
{
    struct served_process *all = NULL;
    struct mp_error err;
    long n = 1;
    /* ?pid=N: the process the router checked against the rules. */
    if (!rq->pid && (n = targets_list(rq->cfg, &all, &err)) < 0) {
        reply_error(rp, 500, "%s", err.msg);
        return;
    }
    char *text = NULL;
    size_t len = 0;
    if (metrics_text(rq->cfg, rq->pid ? &rq->target : all, n, scrape_budget(rq), &text, &len))
        reply_body(rp, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
    else
        reply_error(rp, 500, "out of memory collecting the metrics");
    free(all);
}
