/* faults.c - owns `faults SECONDS` (faults.h): the unwind rows of the
 * process's objects, the kernel's samples read for the time asked, their
 * stacks walked and counted, their addresses matched to mappings, and the
 * dump written and added to the session. */
#include "session/faults.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "attach/mapped_object.h"
#include "attach/target.h"
#include "lib/base/array.h"
#include "lib/base/mono_clock.h"
#include "lib/elf/cfi_walk.h"
#include "lib/proc/maps.h"
#include "session/control.h"
#include "session/say.h"

/* Bounds on what one run keeps, whatever the process does. */
#define MAX_FRAMES     128u          /* as the heap sampler's walk */
#define MAX_STACKS     (1u << 17)    /* distinct stacks */
#define MAX_POOL       (1u << 22)    /* their frames, all together */

struct fstack {
    uint64_t hash, faults;
    uint32_t frame0, nframes;
};

/* Mappings told apart at most (the rest are "other mappings"), and how
 * often /proc/PID/maps is read again for an address it did not hold. */
#define MAX_MAPPINGS   256u
#define MAPS_REREAD_S  0.05
#define MAX_PENDING    4096u

/* A faulting address waiting for the maps to be read again. */
struct pending {
    uint64_t addr, sp, faults;
};

struct tally {
    const struct cfi_rows *rows;
    struct fstack *stacks;
    size_t nstacks, stacks_cap;
    uint64_t *pool;
    size_t npool, pool_cap;
    uint32_t *slots;               /* stack index + 1, 0: empty; a power of two */
    size_t nslots;
    pid_t pid;
    struct map_list maps;          /* the process's, read again when an address
                                    * is in none (a mapping made since) */
    double maps_read_at;
    struct pending pending[MAX_PENDING];
    size_t npending;
    struct faults_mapping *where;  /* MAX_MAPPINGS */
    size_t nwhere;
    uint64_t other_faults, unmapped_faults;
    uint64_t faults, truncated, dropped;
};

static uint64_t hash_frames(const uint64_t *f, size_t n)
{
    uint64_t h = UINT64_C(0xcbf29ce484222325) ^ n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ f[i]) * UINT64_C(0x100000001b3);
    return h ? h : 1;
}

static bool same_stack(const struct tally *t, const struct fstack *st, const uint64_t *f,
                       size_t n)
{
    return st->nframes == n && memcmp(t->pool + st->frame0, f, n * sizeof *f) == 0;
}

static int grow_slots(struct tally *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *s = calloc(n, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->nstacks; i++) {
        size_t k = t->stacks[i].hash & (n - 1);
        while (s[k])
            k = (k + 1) & (n - 1);
        s[k] = (uint32_t)(i + 1);
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return 0;
}

static size_t slot_of(const struct tally *t, uint64_t h, const uint64_t *f, size_t n)
{
    size_t k = h & (t->nslots - 1);
    for (; t->slots[k]; k = (k + 1) & (t->nslots - 1)) {
        const struct fstack *st = &t->stacks[t->slots[k] - 1];
        if (st->hash == h && same_stack(t, st, f, n))
            break;
    }
    return k;
}

/* The stack's entry, made when new; NULL beyond the bounds. */
static struct fstack *stack_entry(struct tally *t, const uint64_t *f, size_t n)
{
    uint64_t h = hash_frames(f, n);
    if (!t->nslots && grow_slots(t))
        return NULL;
    size_t k = slot_of(t, h, f, n);
    if (t->slots[k])
        return &t->stacks[t->slots[k] - 1];
    if (t->nstacks >= MAX_STACKS || t->npool + n > MAX_POOL)
        return NULL;
    if ((t->nstacks + 1) * 2 > t->nslots) {
        if (grow_slots(t))
            return NULL;
        k = slot_of(t, h, f, n);
    }
    if (array_reserve(&t->pool, &t->pool_cap, t->npool + n, sizeof *t->pool, 4096) ||
        array_reserve(&t->stacks, &t->stacks_cap, t->nstacks + 1, sizeof *t->stacks, 256))
        return NULL;
    memcpy(t->pool + t->npool, f, n * sizeof *f);
    t->stacks[t->nstacks] = (struct fstack){h, 0, (uint32_t)t->npool, (uint32_t)n};
    t->npool += n;
    t->slots[k] = (uint32_t)++t->nstacks;
    return &t->stacks[t->nstacks - 1];
}

static void mapping_name(const struct map_entry *e, uint64_t sp, char *out, size_t len)
{
    if (e->path[0])
        snprintf(out, len, "%s%s", e->path, e->deleted ? " (deleted)" : "");
    else if (sp >= e->start && sp < e->end)
        snprintf(out, len, "thread stack");
    else
        snprintf(out, len, "anonymous");
}

static void add_mapping(struct tally *t, const char *what, uint64_t faults)
{
    for (size_t i = 0; i < t->nwhere; i++)
        if (strcmp(t->where[i].what, what) == 0) {
            t->where[i].faults += faults;
            return;
        }
    if (t->nwhere == MAX_MAPPINGS) {
        t->other_faults += faults;
        return;
    }
    snprintf(t->where[t->nwhere].what, sizeof t->where[0].what, "%s", what);
    t->where[t->nwhere++].faults = faults;
}

static void classify(struct tally *t, const struct pending *p)
{
    const struct map_entry *e = maps_find(&t->maps, p->addr);
    char what[160];
    if (!e) {
        t->unmapped_faults += p->faults;
        return;
    }
    mapping_name(e, p->sp, what, sizeof what);
    add_mapping(t, what, p->faults);
}

/* /proc/PID/maps read again, and the addresses waiting for it classified
 * (those in no mapping now were unmapped since they faulted). */
static void reread_maps(struct tally *t)
{
    struct map_list fresh = {0};
    struct mp_error ignored;
    t->maps_read_at = mono_clock_s();
    if (maps_read_pid(t->pid, &fresh, &ignored) == 0) {
        maps_free(&t->maps);
        t->maps = fresh;
    }
    for (size_t i = 0; i < t->npending; i++)
        classify(t, &t->pending[i]);
    t->npending = 0;
}

/* The mapping the faulting address is in: from the maps memprof has, or
 * (a mapping made since) from the next reading of them, at most every
 * MAPS_REREAD_S or when MAX_PENDING addresses wait. */
static void note_mapping(struct tally *t, const struct perf_fault_sample *s, uint64_t faults)
{
    struct pending p = {s->addr, s->sp, faults};
    if (maps_find(&t->maps, s->addr)) {
        classify(t, &p);
        return;
    }
    if (t->npending == MAX_PENDING)
        reread_maps(t);
    t->pending[t->npending++] = p;
    if (mono_clock_s() - t->maps_read_at >= MAPS_REREAD_S)
        reread_maps(t);
}

/* One sample: its stack walked from the user registers the kernel saved
 * (for a fault taken in the kernel on the process's behalf they are where
 * the process entered it). */
static void on_sample(void *ctx, const struct perf_fault_sample *s)
{
    struct tally *t = ctx;
    uint64_t frames[MAX_FRAMES], faults = s->period ? s->period : 1;
    size_t n;
    bool truncated = false;
    if (s->has_regs) {
        struct cfi_stack st = {s->sp, s->stack, s->stack_len};
        n = cfi_walk(t->rows, s->pc, s->sp, s->fp, &st, frames, MAX_FRAMES, &truncated);
    } else {
        frames[0] = s->ip;
        n = 1;
    }
    /* Every frame of a dump is read as a return address (looked up at
     * address - 1): the first, where the thread was, is given as pc + 1. */
    frames[0]++;
    struct fstack *st = stack_entry(t, frames, n);
    if (!st) {
        t->dropped++;
        return;
    }
    st->faults += faults;
    t->faults += faults;
    t->truncated += truncated;
    note_mapping(t, s, faults);
}

static void tally_free(struct tally *t)
{
    free(t->stacks);
    free(t->pool);
    free(t->slots);
    free(t->where);
    maps_free(&t->maps);
}

/* ---- the unwind rows ---------------------------------------------------- */

static int build_rows(pid_t pid, struct cfi_rows *rows, struct mp_error *err)
{
    struct map_list maps = {0};
    struct mapped_objects objs = {0};
    if (maps_read_pid(pid, &maps, err) < 0 || mapped_objects_load(pid, &maps, &objs, err) < 0) {
        maps_free(&maps);
        return -1;
    }
    for (size_t i = 0; i < objs.n; i++) {
        int fd = mapped_object_open_file(pid, &maps, objs.v[i].path);
        struct mp_error ignored;     /* an object without rows ends its stacks there */
        if (fd >= 0) {
            cfi_rows_add_elf(rows, fd, objs.v[i].path, objs.v[i].bias, &ignored);
            close(fd);
        }
    }
    cfi_rows_finish(rows);
    mapped_objects_free(&objs);
    maps_free(&maps);
    return 0;
}

/* ---- the mappings -------------------------------------------------------- */

static int by_faults(const void *a, const void *b)
{
    const struct faults_mapping *x = a, *y = b;
    return x->faults < y->faults ? 1 : x->faults > y->faults ? -1 : 0;
}

/* The mappings that took the most faults into the report. */
static void report_mappings(struct tally *t, struct faults_report *r)
{
    if (t->npending)
        reread_maps(t);
    qsort(t->where, t->nwhere, sizeof *t->where, by_faults);
    r->other_faults = t->other_faults;
    r->unmapped_faults = t->unmapped_faults;
    for (size_t i = 0; i < t->nwhere; i++) {
        if (i < FAULTS_MAPPINGS)
            r->maps[r->nmaps++] = t->where[i];
        else
            r->other_faults += t->where[i].faults;
    }
}

/* ---- the dump ----------------------------------------------------------- */

static int write_dump(const struct tally *t, uint64_t page, const char *maps, size_t maps_len,
                      char **data, size_t *len)
{
    FILE *f = open_memstream(data, len);
    if (!f)
        return -1;
    /* The type says what the numbers are, so that every reader of the
     * dump (a saved file too) names them faults, not objects in use. */
    fprintf(f, "heap profile: %" PRIu64 ": %" PRIu64 " [0: 0] @ page_faults\n", t->faults,
            t->faults * page);
    for (size_t i = 0; i < t->nstacks; i++) {
        const struct fstack *st = &t->stacks[i];
        fprintf(f, "%" PRIu64 ": %" PRIu64 " [0: 0] @", st->faults, st->faults * page);
        for (uint32_t k = 0; k < st->nframes; k++)
            fprintf(f, " 0x%" PRIx64, t->pool[st->frame0 + k]);
        fputc('\n', f);
    }
    fputs("\nMAPPED_LIBRARIES:\n", f);
    fwrite(maps, 1, maps_len, f);
    return fclose(f) == 0 ? 0 : -1;
}

/* name NULL: faultsN. */
static int add_dump(struct session *s, const char *name, struct tally *t,
                    struct faults_report *r)
{
    pid_t pid = target_pid(s->target);
    struct mp_error err;
    char *text = NULL, *data = NULL;
    size_t text_len = 0, len = 0;
    if (maps_read_text_pid(pid, &text, &text_len, &err) < 0) {
        say_error("process %d: %s", (int)pid, err.msg);
        return -1;
    }
    int rc = write_dump(t, r->page_bytes, text, text_len, &data, &len);
    free(text);
    if (rc < 0) {
        free(data);
        say_error("out of memory");
        return -1;
    }
    char autoname[32];
    if (!name)
        snprintf(autoname, sizeof autoname, "faults%u", ++s->dump_seq);
    r->dump = control_dump_store(s, data, len, name ? name : autoname, NULL);
    free(data);
    return r->dump ? 0 : -1;
}

/* ---- the sampler ------------------------------------------------------- */

struct faults_sampler {
    struct cfi_rows rows;
    struct tally *t;
    struct perf_faults *pf;
    struct perf_faults_counts last;    /* the counts at the last dump */
    double since;                      /* when the samples in t began */
    uint64_t page;
};

static struct tally *tally_new(pid_t pid, const struct cfi_rows *rows)
{
    struct tally *t = calloc(1, sizeof *t);         /* its pending addresses: 96 KiB */
    if (t && !(t->where = calloc(MAX_MAPPINGS, sizeof *t->where))) {
        free(t);
        t = NULL;
    }
    if (t) {
        t->rows = rows;
        t->pid = pid;
    }
    return t;
}

/* Forget the stacks and mappings counted (after a dump); the maps stay. */
static void tally_reset(struct tally *t)
{
    if (t->nslots)
        memset(t->slots, 0, t->nslots * sizeof *t->slots);
    t->nstacks = t->npool = t->nwhere = 0;
    t->other_faults = t->unmapped_faults = t->faults = t->truncated = t->dropped = 0;
}

void faults_sampler_close(struct faults_sampler *fs)
{
    if (!fs)
        return;
    perf_faults_close(fs->pf);
    if (fs->t) {
        tally_free(fs->t);
        free(fs->t);
    }
    cfi_rows_free(&fs->rows);
    free(fs);
}

struct faults_sampler *faults_sampler_open(struct session *s, uint64_t period, unsigned freq)
{
    pid_t pid = target_pid(s->target);
    struct faults_sampler *fs = calloc(1, sizeof *fs);
    struct mp_error err;
    long page = sysconf(_SC_PAGESIZE);
    if (!fs || !(fs->t = tally_new(pid, &fs->rows))) {
        free(fs);
        say_error("out of memory");
        return NULL;
    }
    fs->page = page > 0 ? (uint64_t)page : 4096;
    if (build_rows(pid, &fs->rows, &err) < 0 || maps_read_pid(pid, &fs->t->maps, &err) < 0) {
        say_error("process %d: %s", (int)pid, err.msg);
        faults_sampler_close(fs);
        return NULL;
    }
    fs->t->maps_read_at = mono_clock_s();
    struct perf_faults_options po = {period, freq};
    if (!(fs->pf = perf_faults_open(pid, &po, &err))) {
        say_error("%s", err.msg);
        faults_sampler_close(fs);
        return NULL;
    }
    fs->since = mono_clock_s();
    return fs;
}

void faults_sampler_read(struct faults_sampler *fs, int timeout_ms)
{
    perf_faults_read(fs->pf, timeout_ms, on_sample, fs->t);
}

int faults_sampler_dump(struct session *s, struct faults_sampler *fs, const char *name,
                        struct faults_report *r)
{
    const struct perf_faults_counts *c = perf_faults_counts(fs->pf);
    memset(r, 0, sizeof *r);
    faults_sampler_read(fs, 0);
    r->counts = *c;
    r->counts.samples -= fs->last.samples;
    r->counts.lost -= fs->last.lost;
    r->counts.throttled -= fs->last.throttled;
    r->counts.malformed -= fs->last.malformed;
    fs->last = *c;
    r->seconds = mono_clock_s() - fs->since;
    r->page_bytes = fs->page;
    r->faults = fs->t->faults;
    r->truncated = fs->t->truncated;
    r->dropped = fs->t->dropped;
    report_mappings(fs->t, r);
    int rc = add_dump(s, name, fs->t, r);
    tally_reset(fs->t);
    fs->since = mono_clock_s();
    return rc;
}

int faults_take(struct session *s, const struct faults_options *o, struct faults_report *r)
{
    struct faults_sampler *fs = faults_sampler_open(s, o->period, o->freq);
    if (!fs)
        return -1;
    double left = o->seconds;
    while (left > 0 && !(o->stop && o->stop())) {
        faults_sampler_read(fs, left > 0.1 ? 100 : (int)(left * 1000) + 1);
        left = o->seconds - (mono_clock_s() - fs->since);
    }
    int rc = faults_sampler_dump(s, fs, o->name, r);
    faults_sampler_close(fs);
    return rc;
}
