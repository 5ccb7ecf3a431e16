/* memory_account.c - see session/memory_account.h.  The threads' stack
 * pointers come from /proc/PID/task/TID/syscall, which gives them for a
 * thread blocked (in a system call or not) without stopping it; a running
 * thread gives none, and its stack is then told by its layout only. */
#include "session/memory_account.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/array.h"
#include "lib/base/file_read.h"
#include "session/glibc_chunks.h"

const char *const memory_account_keys[MEMORY_ACCOUNT_NKEYS] = {
    "sampler", "main_stack", "thread_stacks", "unseen_stacks", "heap",
    "anon_other", "anon_unsplit", "shared", "other", "file",
};

/* Bounded: a process with more threads has its others' stacks told by
 * their layout. */
#define THREADS_READ_MAX 65536

static int add(struct memory_account *a, const char *key, uint64_t bytes, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add(struct memory_account *a, const char *key, uint64_t bytes, const char *fmt, ...)
{
    if (!bytes)
        return 0;
    if (array_reserve(&a->parts, &a->cap, a->nparts + 1, sizeof *a->parts, 32) < 0)
        return -1;
    struct memory_part *p = &a->parts[a->nparts++];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->name, sizeof p->name, fmt, ap);
    va_end(ap);
    p->bytes = bytes;
    p->key = key;
    return 0;
}

/* A thread's stack pointer from /proc/PID/task/TID/syscall: 1 with *sp,
 * 0 when it gives none (running, gone). */
static int thread_sp(const char *dir, const char *tid, uint64_t *sp)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%.20s/syscall", dir, tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t len = 0;
    char *text = fd >= 0 ? file_read_fd(fd, 512, &len) : NULL;
    if (fd >= 0)
        close(fd);
    int ok = text && rss_syscall_sp(text, len, sp);
    free(text);
    return ok;
}

/* The thread memprof stopped last (the allocator's figures are read in a
 * stop of one thread) is still on its way back into the call it was
 * blocked in, and says "running" for that moment, longer on a busy
 * machine: it alone is read again, within a bound, before its stack is
 * told by layout only.  Other threads that say "running" do run. */
#define SP_RETRY_ROUNDS 10
#define SP_RETRY_NS     2000000L     /* 2 ms a round: 20 ms at most */

static int let_go_sp(const char *dir, pid_t tid, uint64_t *sp)
{
    char name[24];
    snprintf(name, sizeof name, "%d", (int)tid);
    for (int round = 0; round < SP_RETRY_ROUNDS; round++) {
        nanosleep(&(struct timespec){0, SP_RETRY_NS}, NULL);
        if (thread_sp(dir, name, sp))
            return 1;
    }
    return 0;
}

/* The stack pointers of the threads that give one. */
static uint64_t *thread_sps(struct session *s, size_t *n, struct memory_account *a)
{
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)target_pid(s->target));
    pid_t let_go = target_pauses(s->target)->last_tid;
    DIR *d = opendir(dir);
    uint64_t *sps = NULL;
    size_t cap = 0;
    *n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && a->threads < THREADS_READ_MAX;) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9')
            continue;
        a->threads++;
        uint64_t sp;
        if ((thread_sp(dir, e->d_name, &sp) ||
             (let_go > 0 && atoi(e->d_name) == let_go && let_go_sp(dir, let_go, &sp))) &&
            array_reserve(&sps, &cap, *n + 1, sizeof *sps, 64) == 0) {
            sps[(*n)++] = sp;
            a->threads_with_sp++;
        }
    }
    if (d)
        closedir(d);
    return sps;
}

/* h's total split in two: used, and the rest of the total. */
static void heap_split(struct memory_heap *h, const char *used_what, uint64_t used,
                       const char *rest_what)
{
    h->n = 2;
    h->part[0].what = used_what;
    h->part[0].bytes = used;
    h->part[1].what = rest_what;
    h->part[1].bytes = h->total - used;
}

void memory_heap_jemalloc(struct memory_heap *h, uint64_t resident, uint64_t active)
{
    *h = (struct memory_heap){.who = "jemalloc", .total = resident};
    /* stats.metadata counts metadata not resident too: the rest is given
     * whole, not split by it. */
    if (active <= resident)
        heap_split(h, "active pages (allocations, rounded to their size class)", active,
                   "metadata and unused dirty pages ('purge' returns the dirty ones)");
}

void memory_heap_other(struct memory_heap *h, const char *who, uint64_t from_system,
                       uint64_t in_use)
{
    *h = (struct memory_heap){.who = who, .total = from_system};
    if (from_system != UINT64_MAX && in_use != UINT64_MAX && in_use <= from_system)
        heap_split(h, "in use", in_use, "free, held ('purge' may return some)");
}

void memory_heap_measured(struct memory_heap *h, const char *who, uint64_t resident,
                          uint64_t in_use)
{
    *h = (struct memory_heap){.who = who, .total = resident, .measured = true};
    /* in-use bytes never touched are not resident: the rest is at least
     * the free pages still held */
    if (in_use <= resident)
        heap_split(h, "in use (at most)", in_use,
                   "free pages still held, and its headers (at least)");
}

/* The heap's figure as categories: by what it is made of where known. */
static int heap_parts(struct memory_account *a, const struct memory_heap *h)
{
    const char *how = h->measured ? "measured: its arenas' mappings" : "its own figure: at most";
    if (!h->n)
        return add(a, "heap", h->total, "%s heap (%s)", h->who, how);
    for (size_t i = 0; i < h->n; i++)
        if (add(a, "heap", h->part[i].bytes, "%s heap (%s): %s", h->who, how, h->part[i].what))
            return -1;
    return 0;
}

/* The anonymous memory, split by the allocator's figure where it can be:
 * the figure counts pages never touched (an upper bound), so a figure
 * above the anonymous RSS splits nothing, and says so. */
static int anon_parts(struct memory_account *a, const struct memory_heap *h)
{
    uint64_t anon = a->rss.anon;
    if (h->total == UINT64_MAX)
        return add(a, "anon_unsplit", anon, "anonymous: the allocator's heap and other "
                   "mmaps (no figure of the allocator's to split them)");
    if (h->total <= anon && h->measured) {
        uint64_t chunks = a->chunks_rss < anon - h->total ? a->chunks_rss : anon - h->total;
        return heap_parts(a, h) ||
               add(a, "heap", chunks, "%s heap (measured: its %u mmapped chunks' mappings): "
                   "large allocations, in use", h->who, a->chunks) ||
               add(a, "anon_other", anon - h->total - chunks, "anonymous, not %s's heap "
                   "(other mmaps%s)", h->who, h->glibc_chunks ? "" : ", its mmapped chunks");
    }
    if (h->total <= anon)
        return heap_parts(a, h) ||
               add(a, "anon_other", anon - h->total, "anonymous, not %s's heap (at least: "
                   "other mmaps)", h->who);
    return add(a, "anon_unsplit", anon, "anonymous: %s heap and other mmaps, not told apart "
               "(%s's figure is above it: it counts pages never touched)", h->who, h->who);
}

static int by_bytes(const void *x, const void *y)
{
    const struct memory_part *a = x, *b = y;
    return a->bytes < b->bytes ? 1 : a->bytes > b->bytes ? -1 : strcmp(a->name, b->name);
}

static int parts(struct memory_account *a, const struct memory_heap *heap)
{
    const struct rss_account *r = &a->rss;
    if (add(a, "sampler", r->sampler, "memprof's sampler region") ||
        add(a, "main_stack", r->main_stack, "main thread's stack") ||
        add(a, "thread_stacks", r->thread_stacks, "thread stacks (%u threads found by their stack pointer)",
            r->stacks_seen) ||
        add(a, "unseen_stacks", r->unseen_stacks, "stack-like mappings holding no stack pointer read "
            "(running threads, or exited threads' stacks glibc keeps)") ||
        anon_parts(a, heap) || add(a, "shared", r->shared, "shared memory") ||
        add(a, "other", r->other, "other mappings ([vdso], [vvar] ...)"))
        return -1;
    for (size_t i = 0; i < r->nfiles; i++)
        if (add(a, "file", r->files[i].rss, "file: %s", r->files[i].path))
            return -1;
    qsort(a->parts, a->nparts, sizeof *a->parts, by_bytes);
    return 0;
}

/* glibc's mmapped chunks, for a heap measured from its mappings. */
static void chunks(struct session *s, const struct memory_heap *heap, struct memory_account *a)
{
    if (heap->glibc_chunks && heap->measured)
        a->chunks_rss = glibc_chunks_resident(target_pid(s->target), &a->rss, heap->heap_starts,
                                              heap->nheap_starts, &a->chunks);
}

int memory_account_read(struct session *s, const struct memory_heap *heap, const char *smaps,
                        size_t smaps_len, struct memory_account *out, char *why,
                        size_t whylen)
{
    memset(out, 0, sizeof *out);
    size_t nsp;
    uint64_t *sps = thread_sps(s, &nsp, out);
    int rc = -1;
    if (!smaps)
        snprintf(why, whylen, "cannot read /proc/%d/smaps: is the process gone?",
                 (int)target_pid(s->target));
    else if (rss_account_smaps_heaps(smaps, smaps_len, sps, nsp, heap->heap_starts,
                                     heap->nheap_starts, &out->rss) < 0 ||
             (chunks(s, heap, out), parts(out, heap) < 0))
        snprintf(why, whylen, "out of memory accounting /proc/%d/smaps",
                 (int)target_pid(s->target));
    else
        rc = 0;
    free(sps);
    if (rc)
        memory_account_free(out);
    return rc;
}

void memory_account_free(struct memory_account *a)
{
    rss_account_free(&a->rss);
    free(a->parts);
    a->parts = NULL;
    a->nparts = a->cap = 0;
}

void memory_account_json(json_object *o, const struct memory_account *a)
{
    json_object_object_add(o, "rss_bytes", json_object_new_uint64(a->rss.rss));
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < a->nparts; i++) {
        json_object *c = json_object_new_object();
        json_object_object_add(c, "name", json_object_new_string(a->parts[i].name));
        json_object_object_add(c, "key", json_object_new_string(a->parts[i].key));
        json_object_object_add(c, "bytes", json_object_new_uint64(a->parts[i].bytes));
        json_object_array_add(arr, c);
    }
    json_object_object_add(o, "categories", arr);
    json_object_object_add(o, "rss_anon_huge", json_object_new_uint64(a->rss.anon_huge));
    json_object_object_add(o, "rss_lazyfree", json_object_new_uint64(a->rss.lazyfree));
    json_object_object_add(o, "glibc_mmapped_chunks", json_object_new_uint64(a->chunks));
    json_object_object_add(o, "glibc_mmapped_chunks_bytes", json_object_new_uint64(a->chunks_rss));
    json_object_object_add(o, "threads", json_object_new_uint64(a->threads));
    json_object_object_add(o, "threads_with_sp", json_object_new_uint64(a->threads_with_sp));
}

uint64_t memory_account_key(const struct memory_account *a, const char *key)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < a->nparts; i++)
        if (strcmp(a->parts[i].key, key) == 0)
            sum += a->parts[i].bytes;
    return sum;
}
