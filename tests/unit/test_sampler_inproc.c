/* test_sampler_inproc.c - the heap sampler's image (allocator/sampler/inproc/)
 * run in this process as memprof runs it in a target: written into a
 * memfd, its code mapped read+exec, the gate's data page (wiped on fork)
 * after its first page and the body's data read+write SAMPLER_CODE_SIZE
 * after (gate and body share one mapping here: the gate's code reaches
 * only its own page and the next), the data filled (the real allocation
 * functions, this process's pid, the read end of a watch pipe held here),
 * and its stand-ins called through the header's offsets.  What it samples,
 * what it forgets, when it stays out of the way (off, a forked child,
 * memprof gone, a full table), how the gate counts the threads inside the
 * body, the rate of its Poisson process, and its stack walk over unwind
 * rows, including rows that point nowhere, with either way of checking a
 * page readable (process_vm_readv; rt_sigprocmask, also under a filter
 * that denies process_vm_readv, changing neither mask, errno nor fds). */
#include "tests/unit/unit.h"

#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "allocator/sampler/abi.h"
#include "allocator/sampler/image.h"

#define MAX_ROWS 16

static struct {
    int fd;
    uint8_t *base;             /* code at base, data at base + SAMPLER_CODE_SIZE */
    size_t len;
    int watch[2];              /* memprof's pipe: we hold both ends */
    struct sampler_data *data;
    struct sampler_ctl *ctl;
    struct sampler_gate *gate;
} img;

static void *(*w_malloc)(size_t);
static void (*w_free)(void *);
static void *(*w_calloc)(size_t, size_t);
static void *(*w_realloc)(void *, size_t);
static void *(*w_reallocarray)(void *, size_t, size_t);
static int (*w_posix_memalign)(void **, size_t, size_t);
static void *(*w_aligned_alloc)(size_t, size_t);
static void *(*w_memalign)(size_t, size_t);
static void *(*w_valloc)(size_t);
static void *(*w_pvalloc)(size_t);
static void *(*w_mmap)(void *, size_t, int, int, int, off_t);
static int (*w_munmap)(void *, size_t);
static void *(*w_mremap)(void *, size_t, size_t, int, void *);
static void *(*w_sbrk)(intptr_t);
static int (*w_brk)(void *);

static const struct sampler_image_header *header(void)
{
    return (const struct sampler_image_header *)(const void *)img.base;
}

static void *wrapper(enum sampler_fn fn)
{
    return img.base + header()->wrapper[fn];
}

static void find_wrappers(void)
{
    w_malloc = (__typeof__(w_malloc))wrapper(SF_MALLOC);
    w_free = (__typeof__(w_free))wrapper(SF_FREE);
    w_calloc = (__typeof__(w_calloc))wrapper(SF_CALLOC);
    w_realloc = (__typeof__(w_realloc))wrapper(SF_REALLOC);
    w_reallocarray = (__typeof__(w_reallocarray))wrapper(SF_REALLOCARRAY);
    w_posix_memalign = (__typeof__(w_posix_memalign))wrapper(SF_POSIX_MEMALIGN);
    w_aligned_alloc = (__typeof__(w_aligned_alloc))wrapper(SF_ALIGNED_ALLOC);
    w_memalign = (__typeof__(w_memalign))wrapper(SF_MEMALIGN);
    w_valloc = (__typeof__(w_valloc))wrapper(SF_VALLOC);
    w_pvalloc = (__typeof__(w_pvalloc))wrapper(SF_PVALLOC);
    w_mmap = (__typeof__(w_mmap))wrapper(SF_MMAP);
    w_munmap = (__typeof__(w_munmap))wrapper(SF_MUNMAP);
    w_mremap = (__typeof__(w_mremap))wrapper(SF_MREMAP);
    w_sbrk = (__typeof__(w_sbrk))wrapper(SF_SBRK);
    w_brk = (__typeof__(w_brk))wrapper(SF_BRK);
}

/* memprof's part: the image where it would put it, the data filled before
 * any call can reach the code. */
static void map_image(void)
{
    size_t data_len = sizeof(struct sampler_data) + MAX_ROWS * sizeof(struct sampler_row);
    img.len = SAMPLER_CODE_SIZE + data_len;
    img.fd = memfd_create("memprof-sampler", MFD_CLOEXEC);
    ck_assert_int_ge(img.fd, 0);
    ck_assert_int_eq(ftruncate(img.fd, (off_t)img.len), 0);
    ck_assert_int_eq(pwrite(img.fd, sampler_image, sampler_image_len, 0), (ssize_t)sampler_image_len);
    uint8_t *res = mmap(NULL, img.len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(res, MAP_FAILED);
    ck_assert_ptr_eq(mmap(res, SAMPLER_CODE_SIZE, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED,
                          img.fd, 0), res);
    ck_assert_ptr_eq(mmap(res + SAMPLER_CODE_SIZE, data_len, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_FIXED, img.fd, SAMPLER_CODE_SIZE),
                     res + SAMPLER_CODE_SIZE);
    ck_assert_ptr_eq(mmap(res + SAMPLER_GATE_SIZE, SAMPLER_GATE_SIZE, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
                     res + SAMPLER_GATE_SIZE);
    ck_assert_int_eq(madvise(res + SAMPLER_GATE_SIZE, SAMPLER_GATE_SIZE, MADV_WIPEONFORK), 0);
    img.base = res;
    img.gate = (struct sampler_gate *)(void *)(res + SAMPLER_GATE_SIZE);
    img.data = (struct sampler_data *)(void *)(res + SAMPLER_CODE_SIZE);
    img.ctl = &img.data->ctl;
}

/* Both states: the gate's (whether the stand-ins enter the body) and
 * ctl's (what memprof reads back). */
static void set_state(uint32_t state)
{
    __atomic_store_n(&img.ctl->state, state, __ATOMIC_RELEASE);
    __atomic_store_n(&img.gate->state, state, __ATOMIC_SEQ_CST);
}

static int64_t threads_inside(void)
{
    int64_t n = 0;
    for (unsigned i = 0; i < SAMPLER_GATE_LANES; i++)
        n += __atomic_load_n(&img.gate->lanes[i].inside, __ATOMIC_SEQ_CST);
    return n;
}

static void fill_ctl(void)
{
    static uint64_t generation;
    struct sampler_ctl *c = img.ctl;
    ck_assert_int_eq(pipe(img.watch), 0);
    c->magic = SAMPLER_MAGIC;
    c->abi = SAMPLER_ABI;
    c->generation = ++generation;
    c->tgid = getpid();
    c->watch_fd = img.watch[0];
    c->lg_sample = 0;
    c->seed = 0x5eed;
    c->real[SF_MALLOC] = (uintptr_t)malloc;
    c->real[SF_FREE] = (uintptr_t)free;
    c->real[SF_CALLOC] = (uintptr_t)calloc;
    c->real[SF_REALLOC] = (uintptr_t)realloc;
    c->real[SF_REALLOCARRAY] = (uintptr_t)reallocarray;
    c->real[SF_POSIX_MEMALIGN] = (uintptr_t)posix_memalign;
    c->real[SF_ALIGNED_ALLOC] = (uintptr_t)aligned_alloc;
    c->real[SF_MEMALIGN] = (uintptr_t)memalign;
    c->real[SF_VALLOC] = (uintptr_t)valloc;
    c->real[SF_PVALLOC] = (uintptr_t)pvalloc;
    c->real[SF_MMAP] = c->real[SF_MMAP64] = (uintptr_t)mmap;
    c->real[SF_MUNMAP] = (uintptr_t)munmap;
    c->real[SF_MREMAP] = (uintptr_t)mremap;
    c->real[SF_SBRK] = (uintptr_t)sbrk;
    c->real[SF_BRK] = (uintptr_t)brk;
    c->memprof_pid = getpid();
    c->gate = (uintptr_t)img.gate;
    /* the gate's copy of the allocator's functions, in the header (the
     * code is mapped read-only: written through the memfd) */
    ck_assert_int_eq(pwrite(img.fd, c->real, sizeof c->real,
                            offsetof(struct sampler_image_header, real)),
                     (ssize_t)sizeof c->real);
    img.gate->mark = SAMPLER_OWNER_MARK;
    for (int f = 0; f < SF_COUNT; f++)
        img.gate->body[f] = (uintptr_t)img.base + header()->body[f];
    set_state(SAMPLER_ON);
}

static void setup(void)
{
    map_image();
    find_wrappers();
    fill_ctl();
}

static void teardown(void)
{
    munmap(img.base, img.len);
    close(img.fd);
    close(img.watch[0]);
    if (img.watch[1] >= 0)
        close(img.watch[1]);
}

/* This process's open descriptors (the directory's own included). */
static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* ---- reading the table as memprof would --------------------------------- */

static struct sampler_entry *entry_of(const void *p)
{
    for (uint32_t i = 0; i < SAMPLER_TABLE_CAP; i++)
        if (img.data->keys[i] == (uintptr_t)p)
            return &img.data->entries[i];
    return NULL;
}

static void assert_settled(const struct sampler_entry *e)
{
    ck_assert_uint_eq(e->seq % 2, 0);
    ck_assert_uint_eq(e->seq, e->seq_end);
    ck_assert_uint_gt(e->seq, 0);
}

static uint64_t sampled(void)
{
    return img.ctl->samples;
}

#define KEEP_FRAME __attribute__((noipa, optimize("no-omit-frame-pointer")))
#define AFTER_CALL() __asm__ volatile("" ::: "memory")    /* no tail call */

/* The function whose call the sampler must find in frames[0]. */
KEEP_FRAME static void *alloc_here(size_t n)
{
    void *p = w_malloc(n);
    AFTER_CALL();
    return p;
}

static int in_function(uint64_t addr, const void *fn)
{
    return addr > (uintptr_t)fn && addr < (uintptr_t)fn + 1024;
}

/* Allocators that fail, as the real ones do on an overflowing count or a
 * bad alignment (which ASan's would report and abort on instead). */
static void *failing_calloc(size_t n, size_t size)
{
    (void)n, (void)size;
    errno = ENOMEM;
    return NULL;
}

static void *failing_reallocarray(void *old, size_t n, size_t size)
{
    (void)old, (void)n, (void)size;
    errno = ENOMEM;
    return NULL;
}

static int failing_posix_memalign(void **memptr, size_t align, size_t size)
{
    (void)memptr, (void)align, (void)size;
    return EINVAL;
}

/* ---- the image ---------------------------------------------------------- */

START_TEST(image_header_names_every_wrapper)
{
    ck_assert_uint_le(sampler_image_len, SAMPLER_CODE_SIZE);
    ck_assert_uint_eq(header()->magic, SAMPLER_MAGIC);
    ck_assert_uint_eq(header()->abi, SAMPLER_ABI);
    ck_assert_uint_eq(header()->code_bytes, sampler_image_len);
    for (int i = 0; i < SF_COUNT; i++) {
        ck_assert_uint_ge(header()->wrapper[i], sizeof(struct sampler_image_header));
        ck_assert_uint_lt(header()->wrapper[i], header()->gate_bytes);
        ck_assert_uint_ge(header()->body[i], SAMPLER_BODY_CODE);
        ck_assert_uint_lt(header()->body[i], sampler_image_len);
        for (int j = 0; j < i; j++)     /* mmap64 is mmap's: one stand-in */
            if (i != SF_MMAP64 || j != SF_MMAP)
                ck_assert_uint_ne(header()->wrapper[i], header()->wrapper[j]);
    }
    ck_assert_uint_eq(header()->wrapper[SF_MMAP64], header()->wrapper[SF_MMAP]);
}
END_TEST

/* ---- sampling ----------------------------------------------------------- */

START_TEST(lg0_samples_every_allocation)
{
    void *p = alloc_here(100);
    void *q = alloc_here(7);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(sampled(), 2);
    ck_assert_uint_eq(img.ctl->live, 2);
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    assert_settled(e);
    ck_assert_uint_eq(e->ptr, (uintptr_t)p);
    ck_assert_uint_eq(e->size, 100);
    ck_assert_uint_ge(e->nframes, 1);
    ck_assert(in_function(e->frames[0], alloc_here));
    /* no unwind rows: the walk stops after the first frame, said so */
    ck_assert_uint_eq(e->nframes, 1);
    ck_assert_uint_eq(e->truncated, 1);
    ck_assert_uint_eq(img.ctl->truncated, 2);
    ck_assert_uint_eq(entry_of(q)->size, 7);
    ck_assert_uint_ne(img.data->filter[sampler_filter_of((uintptr_t)p)], 0);
    ck_assert_uint_eq(img.ctl->state, SAMPLER_ON);
    free(p);
    free(q);
}
END_TEST

START_TEST(free_forgets_the_sample)
{
    void *p = alloc_here(64);
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    uint64_t *key = &img.data->keys[e - img.data->entries];
    uint64_t seq = e->seq;
    w_free(p);
    ck_assert_uint_eq(img.ctl->live, 0);
    ck_assert_uint_eq(*key, SAMPLER_KEY_TOMB);
    ck_assert_uint_eq(e->ptr, 0);
    ck_assert_uint_eq(e->seq, seq + 2);
    assert_settled(e);
    ck_assert_uint_eq(img.data->filter[sampler_filter_of((uintptr_t)p)], 0);
    ck_assert_ptr_null(entry_of(p));
}
END_TEST

/* A block allocated before the sampler came: handed to the allocator
 * untouched, even when its filter byte is shared with a sample and its
 * search goes through that sample's slot (looked up, not found).  The
 * allocator's free here only notes what it was given. */
static void *freed_last;
static void noting_free(void *p)
{
    freed_last = p;
}

START_TEST(unsampled_pointer_passes_through)
{
    void *q = alloc_here(32);
    uintptr_t p = (uintptr_t)q + 16;
    while (sampler_slot_of(p) != sampler_slot_of((uintptr_t)q))
        p += 16;
    uint8_t *f = &img.data->filter[sampler_filter_of(p)];
    uint8_t before = *f;
    *f = 1;
    img.ctl->real[SF_FREE] = (uintptr_t)noting_free;
    w_free((void *)p);
    ck_assert_ptr_eq(freed_last, (void *)p);
    *f = before;
    img.ctl->real[SF_FREE] = (uintptr_t)free;
    ck_assert_uint_eq(img.ctl->live, 1);
    ck_assert_ptr_nonnull(entry_of(q));
    ck_assert_uint_eq(entry_of(q)->ptr, (uintptr_t)q);
    w_free(q);
    ck_assert_uint_eq(img.ctl->live, 0);
}
END_TEST

START_TEST(realloc_forgets_old_samples_new)
{
    char *p = alloc_here(100);
    memset(p, 'x', 100);
    char *r = w_realloc(p, 5000);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r[99], 'x');
    ck_assert_uint_eq(img.ctl->live, 1);
    ck_assert_uint_eq(sampled(), 2);
    struct sampler_entry *e = entry_of(r);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->size, 5000);
    if (r != p)
        ck_assert_ptr_null(entry_of(p));
    /* in place, smaller: the same pointer, sampled again with its new size */
    char *s = w_realloc(r, 10);
    ck_assert_uint_eq(img.ctl->live, 1);
    ck_assert_uint_eq(entry_of(s)->size, 10);
    /* reallocarray, and a count that overflows: the allocator fails it,
     * the block and its sample stay */
    char *t = w_reallocarray(s, 3, 7);
    ck_assert_uint_eq(entry_of(t)->size, 21);
    img.ctl->real[SF_REALLOCARRAY] = (uintptr_t)failing_reallocarray;
    errno = 0;
    ck_assert_ptr_null(w_reallocarray(t, SIZE_MAX / 2, 4));
    ck_assert_int_eq(errno, ENOMEM);
    ck_assert_ptr_nonnull(entry_of(t));
    w_free(t);
    ck_assert_uint_eq(img.ctl->live, 0);
}
END_TEST

START_TEST(every_function_records_the_size_asked)
{
    void *c = w_calloc(3, 40);
    ck_assert_uint_eq(entry_of(c)->size, 120);
    void *m = NULL;
    ck_assert_int_eq(w_posix_memalign(&m, 64, 200), 0);
    ck_assert_uint_eq((uintptr_t)m % 64, 0);
    ck_assert_uint_eq(entry_of(m)->size, 200);
    void *a = w_aligned_alloc(64, 256);
    ck_assert_uint_eq(entry_of(a)->size, 256);
    void *ma = w_memalign(32, 77);
    ck_assert_uint_eq(entry_of(ma)->size, 77);
    void *v = w_valloc(300);
    ck_assert_uint_eq(entry_of(v)->size, 300);
    void *pv = w_pvalloc(300);
    ck_assert_uint_eq(entry_of(pv)->size, 300);
    void *ra = w_reallocarray(NULL, 7, 9);
    ck_assert_uint_eq(entry_of(ra)->size, 63);
    ck_assert_uint_eq(img.ctl->live, 7);
    /* failures take no sample, and errno is the allocator's */
    img.ctl->real[SF_CALLOC] = (uintptr_t)failing_calloc;
    img.ctl->real[SF_POSIX_MEMALIGN] = (uintptr_t)failing_posix_memalign;
    errno = 0;
    ck_assert_ptr_null(w_calloc(SIZE_MAX / 2, 4));
    ck_assert_int_eq(errno, ENOMEM);
    void *none = NULL;
    ck_assert_int_eq(w_posix_memalign(&none, 3, 16), EINVAL);
    ck_assert_ptr_null(none);
    ck_assert_uint_eq(sampled(), 7);
    void *all[] = { c, m, a, ma, v, pv, ra };
    for (size_t i = 0; i < 7; i++)
        w_free(all[i]);
    ck_assert_uint_eq(img.ctl->live, 0);
}
END_TEST

/* At 2^12 bytes on average, an allocation of n bytes is sampled with
 * probability 1 - exp(-n / 4096): the count over 200000 allocations is
 * within 5 standard deviations of the sum (a failure by chance: 6e-7). */
START_TEST(rate_is_poisson_over_bytes)
{
    img.ctl->lg_sample = 12;
    double expect = 0, variance = 0;
    uint64_t x = 88172645463325252ull;
    const int n = 200000;
    for (int i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t size = 1 + (size_t)(x % 8192);
        double p = -expm1(-(double)size / 4096.0);
        expect += p;
        variance += p * (1 - p);
        w_free(w_malloc(size));
    }
    double got = (double)(img.ctl->samples + img.ctl->dropped);
    ck_assert_msg(fabs(got - expect) <= 5 * sqrt(variance),
                  "%.0f samples, %.0f expected (sd %.1f)", got, expect, sqrt(variance));
    ck_assert_uint_eq(img.ctl->live, 0);
}
END_TEST

START_TEST(full_table_drops_and_counts)
{
    enum { N = SAMPLER_TABLE_LIVE + 200 };
    static void *blocks[N];
    for (int i = 0; i < N; i++)
        blocks[i] = w_malloc(16);
    struct sampler_ctl *c = img.ctl;
    ck_assert_uint_le(c->live, SAMPLER_TABLE_LIVE);
    ck_assert_uint_eq(c->live, c->samples);
    ck_assert_uint_eq(c->samples + c->dropped, N);
    ck_assert_uint_ge(c->dropped, N - SAMPLER_TABLE_LIVE);
    uint64_t keys = 0;
    for (uint32_t i = 0; i < SAMPLER_TABLE_CAP; i++)
        keys += img.data->keys[i] > SAMPLER_KEY_BUSY;
    ck_assert_uint_eq(keys, c->live);
    for (int i = 0; i < N; i++)
        w_free(blocks[i]);
    ck_assert_uint_eq(c->live, 0);
}
END_TEST

/* ---- mappings ----------------------------------------------------------- */

#define PG 4096u

/* The mapping table's entry for start, or NULL. */
static struct sampler_entry *map_entry_of(const void *start)
{
    for (uint32_t i = 0; i < SAMPLER_MAPS_CAP; i++)
        if (img.data->map_keys[i] == (uintptr_t)start)
            return &img.data->map_entries[i];
    return NULL;
}

KEEP_FRAME static void *map_here(size_t len)
{
    void *p = w_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    AFTER_CALL();
    return p;
}

KEEP_FRAME static void *grow_here(void *old, size_t old_len, size_t new_len)
{
    void *p = w_mremap(old, old_len, new_len, MREMAP_MAYMOVE, NULL);
    AFTER_CALL();
    return p;
}

START_TEST(mmap_samples_and_munmap_forgets)
{
    char *p = map_here(3 * PG - 100);
    ck_assert_ptr_ne(p, MAP_FAILED);
    struct sampler_entry *e = map_entry_of(p);
    ck_assert_ptr_nonnull(e);
    assert_settled(e);
    ck_assert_uint_eq(e->size, 3 * PG);            /* page-rounded */
    ck_assert_uint_eq(e->kind, SAMPLER_KIND_MAPPING);
    ck_assert(in_function(e->frames[0], map_here));
    ck_assert_uint_eq(img.ctl->map_live, 1);
    ck_assert_uint_eq(img.ctl->live, 0);           /* not in the heap's table */
    ck_assert_int_eq(w_munmap(p, 3 * PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
    ck_assert_ptr_null(map_entry_of(p));
    ck_assert_uint_eq(e->ptr, 0);
    assert_settled(e);
}
END_TEST

/* At rate 0 every cut piece stays (its keep probability is 1): the tail
 * cut, then the head, then the rest unmapped. */
START_TEST(munmap_cuts_a_sampled_mapping)
{
    char *p = map_here(4 * PG);
    struct sampler_entry *e = map_entry_of(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(w_munmap(p + 2 * PG, 2 * PG), 0);
    ck_assert_uint_eq(e->ptr, (uintptr_t)p);
    ck_assert_uint_eq(e->size, 2 * PG);
    ck_assert_int_eq(w_munmap(p, PG), 0);
    ck_assert_ptr_eq(map_entry_of(p + PG), e);
    ck_assert_uint_eq(e->size, PG);
    assert_settled(e);
    ck_assert_int_eq(w_munmap(p + PG, PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
    /* a hole in the middle keeps the part below */
    p = map_here(3 * PG);
    e = map_entry_of(p);
    ck_assert_int_eq(w_munmap(p + PG, PG), 0);
    ck_assert_uint_eq(e->size, PG);
    ck_assert_int_eq(w_munmap(p, 3 * PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
}
END_TEST

/* A cut piece stays a sample with probability p(now) / p(was), p(s) =
 * 1 - exp(-s / 2^lg): 64 KiB mappings at 2^14 cut to 4 KiB. */
START_TEST(a_cut_sample_stays_with_the_right_probability)
{
    enum { N = 400 };
    static char *maps[N];
    img.ctl->lg_sample = 14;
    for (int i = 0; i < N; i++)
        maps[i] = map_here(16 * PG);
    uint64_t before = img.ctl->map_live;
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(w_munmap(maps[i] + PG, 15 * PG), 0);
    double q = -expm1(-(double)PG / 16384) / -expm1(-(double)(16 * PG) / 16384);
    double expect = (double)before * q, sd = sqrt((double)before * q * (1 - q));
    double got = (double)img.ctl->map_live;
    ck_assert_msg(fabs(got - expect) <= 5 * sd, "%.0f of %" PRIu64 " kept, %.1f expected (sd %.1f)",
                  got, before, expect, sd);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(w_munmap(maps[i], PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
}
END_TEST

/* mremap: the first bytes move with their sample, the bytes grown are a
 * sample of the stack that grew them. */
START_TEST(mremap_moves_and_counts_growth)
{
    char *p = map_here(2 * PG);
    char *blocker = mmap(p + 2 * PG, PG, PROT_NONE,      /* no room to grow in place */
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    char *n = grow_here(p, 2 * PG, 8 * PG);
    ck_assert_ptr_ne(n, MAP_FAILED);
    ck_assert_ptr_null(map_entry_of(p));
    struct sampler_entry *moved = map_entry_of(n), *grown = map_entry_of(n + 2 * PG);
    ck_assert_ptr_nonnull(moved);
    ck_assert_ptr_nonnull(grown);
    ck_assert_uint_eq(moved->size, 2 * PG);
    ck_assert(in_function(moved->frames[0], map_here));
    ck_assert_uint_eq(grown->size, 6 * PG);
    ck_assert(in_function(grown->frames[0], grow_here));
    ck_assert_uint_eq(img.ctl->map_live, 2);
    /* shrunk: the grown part is unmapped, the first stays */
    ck_assert_ptr_eq(grow_here(n, 8 * PG, 2 * PG), n);
    ck_assert_uint_eq(img.ctl->map_live, 1);
    ck_assert_int_eq(w_munmap(n, 2 * PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
    if (blocker != MAP_FAILED)
        munmap(blocker, PG);
    /* grown in place (room freed right after it): the first sample stays */
    p = map_here(8 * PG);
    ck_assert_int_eq(w_munmap(p + 2 * PG, 6 * PG), 0);
    ck_assert_ptr_eq(w_mremap(p, 2 * PG, 6 * PG, 0, NULL), p);
    ck_assert_ptr_nonnull(map_entry_of(p));
    ck_assert_uint_eq(map_entry_of(p)->size, 2 * PG);
    ck_assert_ptr_nonnull(map_entry_of(p + 2 * PG));
    ck_assert_uint_eq(map_entry_of(p + 2 * PG)->size, 4 * PG);
    ck_assert_int_eq(w_munmap(p, 6 * PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
}
END_TEST

KEEP_FRAME static void *break_here(intptr_t incr)
{
    void *p = w_sbrk(incr);
    AFTER_CALL();
    return p;
}

/* The program break: what sbrk or brk grows it by is a mapping's sample
 * at the old break, charged to the caller; what they give back is
 * forgotten; errno is untouched. */
START_TEST(sbrk_and_brk_are_followed)
{
    errno = ESRCH;
    char *old = break_here(3 * PG);
    ck_assert_ptr_ne(old, (void *)-1);
    ck_assert_int_eq(errno, ESRCH);
    struct sampler_entry *e = map_entry_of(old);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->size, 3 * PG);
    ck_assert(in_function(e->frames[0], break_here));
    ck_assert_ptr_eq(break_here(-(intptr_t)PG), old + 3 * PG);
    ck_assert_uint_eq(e->size, 2 * PG);            /* cut (kept at rate 0) */
    ck_assert_int_eq(w_brk(old + 4 * PG), 0);
    ck_assert_int_eq(errno, ESRCH);
    ck_assert_ptr_nonnull(map_entry_of(old + 2 * PG));
    ck_assert_uint_eq(map_entry_of(old + 2 * PG)->size, 2 * PG);
    ck_assert_uint_eq(img.ctl->map_live, 2);
    ck_assert_int_eq(w_brk(old), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
    ck_assert_ptr_eq(sbrk(0), old);
}
END_TEST

/* errno is the call's: set by one that fails, untouched by one that
 * succeeds, sampled or not; a failed mmap or mremap counts nothing. */
START_TEST(mapping_calls_keep_errno)
{
    errno = 0;
    ck_assert_int_eq(w_munmap((void *)1, PG), -1);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_eq(w_mremap(NULL, 0, 0, 0, NULL), MAP_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_eq(map_here(0), MAP_FAILED);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_uint_eq(img.ctl->samples, 0);
    errno = ESRCH;
    char *p = map_here(PG);
    ck_assert_int_eq(errno, ESRCH);
    ck_assert_uint_eq(img.ctl->samples, 1);
    ck_assert_int_eq(w_munmap(p, PG), 0);
    ck_assert_int_eq(errno, ESRCH);
}
END_TEST

/* A sample another thread holds (its key BUSY: that thread may be the one
 * a signal handler interrupted) is passed over, never waited for. */
START_TEST(munmap_passes_over_a_busy_sample)
{
    char *p = map_here(2 * PG);
    struct sampler_entry *e = map_entry_of(p);
    uint64_t *key = &img.data->map_keys[e - img.data->map_entries];
    *key = SAMPLER_KEY_BUSY;
    ck_assert_int_eq(w_munmap(p, 2 * PG), 0);
    ck_assert_uint_eq(*key, SAMPLER_KEY_BUSY);
    ck_assert_uint_eq(e->ptr, (uintptr_t)p);
    ck_assert_uint_eq(img.ctl->map_live, 1);
    *key = SAMPLER_KEY_EMPTY;
}
END_TEST

/* Once the gate is closed, the mapping stand-ins pass straight through. */
START_TEST(mappings_off_take_no_sample)
{
    set_state(SAMPLER_OFF);
    char *p = map_here(PG);
    ck_assert_ptr_ne(p, MAP_FAILED);
    ck_assert_uint_eq(img.ctl->samples, 0);
    ck_assert_int_eq(w_munmap(p, PG), 0);
    ck_assert_int_eq(threads_inside(), 0);
}
END_TEST

/* memprof died: the write end of its pipe is closed.  A thread polls the
 * pipe at its first sample and every 16th after (WATCH_EVERY): within 16
 * samples the sampler is orphaned, and nothing is sampled from then on. */
#define WATCH_EVERY 16

START_TEST(orphan_when_memprof_is_gone)
{
    void *before = w_malloc(10);
    ck_assert_uint_eq(sampled(), 1);
    close(img.watch[1]);
    img.watch[1] = -1;
    void *kept[WATCH_EVERY];
    int n = 0;
    while (n < WATCH_EVERY && img.ctl->state != SAMPLER_ORPHAN) {
        kept[n] = w_malloc(10);
        ck_assert_ptr_nonnull(kept[n]);
        n++;
    }
    ck_assert_uint_eq(img.ctl->state, SAMPLER_ORPHAN);
    ck_assert_uint_eq(img.gate->state, SAMPLER_ORPHAN);  /* the gate closed too */
    ck_assert_uint_eq(sampled(), (uint64_t)n);      /* the last call noticed */
    ck_assert_ptr_null(entry_of(kept[n - 1]));
    void *q = w_malloc(10);
    ck_assert_uint_eq(sampled(), (uint64_t)n);
    ck_assert_ptr_null(entry_of(q));
    for (int i = 0; i < n; i++)
        w_free(kept[i]);
    w_free(q);
    w_free(before);
}
END_TEST

/* The child shares the data (the memfd is mapped shared) but not the
 * blocks: it samples nothing and forgets nothing. */
START_TEST(forked_child_takes_no_sample)
{
    void *q = w_malloc(40);
    ck_assert_uint_eq(sampled(), 1);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        void *p = w_malloc(24);
        w_free(q);
        w_free(p);
        _exit(p != NULL ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(sampled(), 1);
    ck_assert_uint_eq(img.ctl->live, 1);
    ck_assert_ptr_nonnull(entry_of(q));
    ck_assert_uint_eq(img.ctl->state, SAMPLER_ON);
    w_free(q);
    ck_assert_uint_eq(img.ctl->live, 0);
}
END_TEST

/* The gate's data page is wiped on fork: in the child the stand-ins find
 * the gate closed and pass every call straight to the allocator, never
 * entering the body (which a target's fork does not copy at all), and
 * count no thread inside. */
START_TEST(forked_child_finds_the_gate_closed)
{
    void *q = w_malloc(40);
    ck_assert_uint_eq(sampled(), 1);
    int ends[2];
    ck_assert_int_eq(pipe(ends), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        uint64_t seen[2] = {img.gate->mark, img.gate->state};
        img.ctl->real[SF_MALLOC] = 0;       /* the body would call 0 */
        void *p = w_malloc(24);
        w_free(q);
        w_free(p);
        seen[1] |= (uint64_t)threads_inside() << 32;
        _exit(write(ends[1], seen, sizeof seen) == sizeof seen && p != NULL ? 0 : 1);
    }
    close(ends[1]);
    uint64_t child_saw[2] = {1, 1};
    ck_assert_int_eq(read(ends[0], child_saw, sizeof child_saw), sizeof child_saw);
    close(ends[0]);
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(child_saw[0], 0);               /* mark wiped in the child */
    ck_assert_uint_eq(child_saw[1], 0);               /* closed, nobody inside */
    ck_assert_uint_eq(img.gate->mark, SAMPLER_OWNER_MARK);    /* kept here */
    ck_assert_uint_eq(sampled(), 1);
    ck_assert_uint_eq(img.ctl->live, 1);
    ck_assert_ptr_nonnull(entry_of(q));
    w_free(q);
    ck_assert_uint_eq(img.ctl->live, 0);
}
END_TEST

/* The same for the mapping stand-ins: a forked child's mmap and munmap
 * pass straight through (the body's mmap would call 0), and its munmap of
 * the parent's sampled mapping (its copy) leaves the parent's sample. */
START_TEST(forked_child_leaves_mappings_alone)
{
    char *q = map_here(2 * PG);
    ck_assert_uint_eq(img.ctl->map_live, 1);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        img.ctl->real[SF_MMAP] = 0;
        char *p = map_here(PG);
        int ok = p != MAP_FAILED && w_munmap(p, PG) == 0 && w_munmap(q, 2 * PG) == 0 &&
                 threads_inside() == 0;
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_uint_eq(sampled(), 1);
    ck_assert_uint_eq(img.ctl->map_live, 1);
    ck_assert_ptr_nonnull(map_entry_of(q));
    ck_assert_int_eq(w_munmap(q, 2 * PG), 0);
    ck_assert_uint_eq(img.ctl->map_live, 0);
}
END_TEST

/* The gate counts a thread in before the body and out after it, and only
 * while open: once memprof closed it (state OFF) and read every lane 0,
 * no thread is inside, and a call from then on never enters. */
static int64_t inside_seen = -1;
static void *counting_malloc(size_t n)
{
    inside_seen = threads_inside();
    return malloc(n);
}

START_TEST(gate_counts_threads_inside_the_body)
{
    ck_assert_int_eq(threads_inside(), 0);
    img.ctl->real[SF_MALLOC] = (uintptr_t)counting_malloc;
    void *p = w_malloc(10);
    ck_assert_int_eq(inside_seen, 1);                 /* counted in the body */
    ck_assert_int_eq(threads_inside(), 0);            /* and out after */
    ck_assert_uint_eq(sampled(), 1);
    set_state(SAMPLER_OFF);
    inside_seen = -1;
    void *q = w_malloc(10);                           /* straight to malloc */
    ck_assert_int_eq(inside_seen, -1);
    ck_assert_int_eq(threads_inside(), 0);
    ck_assert_uint_eq(sampled(), 1);
    img.ctl->real[SF_MALLOC] = (uintptr_t)malloc;
    set_state(SAMPLER_ON);
    w_free(p);
    w_free(q);
}
END_TEST

START_TEST(off_takes_no_sample)
{
    void *q = w_malloc(40);
    set_state(SAMPLER_OFF);
    void *p = w_malloc(40);
    void *c = w_calloc(2, 2);
    ck_assert_ptr_nonnull(p);
    w_free(q);                      /* off: not even forgotten */
    ck_assert_uint_eq(sampled(), 1);
    ck_assert_uint_eq(img.ctl->live, 1);
    ck_assert_ptr_null(entry_of(p));
    w_free(p);
    w_free(c);
}
END_TEST

/* ---- the stack walk ----------------------------------------------------- */

/* Frame-pointer functions alone in their section, so that one row covers
 * them and nothing else. */
#define CHAIN __attribute__((noipa, optimize("no-omit-frame-pointer"), section("walk_chain")))
extern const char __start_walk_chain[], __stop_walk_chain[];

CHAIN static void *chain_c(size_t n)
{
    void *p = w_malloc(n);
    AFTER_CALL();
    return p;
}

CHAIN static void *chain_b(size_t n)
{
    void *p = chain_c(n);
    AFTER_CALL();
    return p;
}

CHAIN static void *chain_a(size_t n)
{
    void *p = chain_b(n);
    AFTER_CALL();
    return p;
}

CHAIN static void *deep(int depth)
{
    void *p = depth ? deep(depth - 1) : w_malloc(8);
    AFTER_CALL();
    return p;
}

/* Nothing below the chain's section, CFA = FP + cfa_off with the return
 * address and the caller's frame pointer under it, nothing above. */
static void chain_rows(int32_t cfa_off)
{
    struct sampler_row *r = img.data->rows;
    r[0] = (struct sampler_row){ .pc = 1, .cfa_reg = SAMPLER_CFA_NONE };
    r[1] = (struct sampler_row){ .pc = (uintptr_t)__start_walk_chain, .cfa_off = cfa_off,
                                 .fp_off = -16, .ra_off = -8, .cfa_reg = SAMPLER_CFA_FP };
    r[2] = (struct sampler_row){ .pc = (uintptr_t)__stop_walk_chain, .cfa_reg = SAMPLER_CFA_NONE };
    img.ctl->nrows = 3;
}

/* The chain function an address is in: the one that starts closest below. */
static const void *chain_function(uint64_t addr)
{
    const void *fns[] = { (const void *)chain_a, (const void *)chain_b, (const void *)chain_c };
    const void *best = NULL;
    for (int i = 0; i < 3; i++)
        if ((uintptr_t)fns[i] < addr && (best == NULL || fns[i] > best))
            best = fns[i];
    return best;
}

START_TEST(walk_follows_frame_pointer_rows)
{
    chain_rows(16);
    void *p = chain_a(50);
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    /* c, b, a, then the test that called a, where the rows say stop */
    ck_assert_uint_eq(e->nframes, 4);
    ck_assert_uint_eq(e->truncated, 0);
    ck_assert_uint_eq(img.ctl->truncated, 0);
    const void *expect[] = { (const void *)chain_c, (const void *)chain_b, (const void *)chain_a };
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_ge(e->frames[i], (uintptr_t)__start_walk_chain);
        ck_assert_uint_lt(e->frames[i], (uintptr_t)__stop_walk_chain);
        ck_assert_ptr_eq(chain_function(e->frames[i]), expect[i]);
    }
    ck_assert(e->frames[3] < (uintptr_t)__start_walk_chain ||
              e->frames[3] >= (uintptr_t)__stop_walk_chain);
    w_free(p);
}
END_TEST

/* Frames far apart: the walk reads pages the wrapper's own is not. */
CHAIN static void *deep_wide(int depth)
{
    volatile char pad[1500];
    pad[0] = (char)depth;
    void *p = depth ? deep_wide(depth - 1) : w_malloc(8);
    AFTER_CALL();
    return pad[0] == (char)depth ? p : NULL;
}

START_TEST(walk_crosses_many_pages)
{
    chain_rows(16);
    void *p = deep_wide(24);                 /* about 36 KiB: 9 pages and more */
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->truncated, 0);
    ck_assert_uint_eq(e->nframes, 26);       /* 25 deep_wide, then the test */
    for (int i = 1; i < 25; i++)
        ck_assert_uint_eq(e->frames[i], e->frames[1]);
    w_free(p);
}
END_TEST

START_TEST(walk_stops_at_max_frames)
{
    chain_rows(16);
    void *p = deep(SAMPLER_MAX_FRAMES + 10);
    struct sampler_entry *e = entry_of(p);
    ck_assert_uint_eq(e->nframes, SAMPLER_MAX_FRAMES);
    ck_assert_uint_eq(e->truncated, 1);
    for (uint32_t i = 1; i < SAMPLER_MAX_FRAMES; i++)
        ck_assert_uint_eq(e->frames[i], e->frames[1]);   /* deep's own call */
    w_free(p);
}
END_TEST

/* A row whose CFA lands in memory that is mapped but unreadable: a direct
 * load would kill the process; the walk just ends, truncated. */
START_TEST(walk_survives_rows_into_unreadable_memory)
{
    /* somewhere above this stack, left to the walk (and below the top of
     * the address space, wherever ASLR put the stack) */
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    const size_t span = 2u << 20;
    void *hole = MAP_FAILED;
    int32_t off = 0;
    for (int lg = 24; lg <= 30 && hole == MAP_FAILED; lg++) {
        off = (int32_t)1 << lg;
        uintptr_t at = ((here + (uintptr_t)off) & ~(uintptr_t)0xfffff) - span / 2;
        hole = mmap((void *)at, span, PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (hole != MAP_FAILED && hole != (void *)at) {
            munmap(hole, span);
            hole = MAP_FAILED;
        }
    }
    ck_assert_ptr_ne(hole, MAP_FAILED);
    chain_rows(off);
    void *p = chain_a(50);
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->nframes, 1);
    ck_assert_ptr_eq(chain_function(e->frames[0]), (const void *)chain_c);
    ck_assert_uint_eq(e->truncated, 1);
    ck_assert_uint_eq(img.ctl->truncated, 1);
    /* a CFA at or below the stack pointer is refused before any read */
    chain_rows(-64);
    void *q = chain_a(50);
    ck_assert_uint_eq(entry_of(q)->nframes, 1);
    ck_assert_uint_eq(entry_of(q)->truncated, 1);
    w_free(p);
    w_free(q);
    munmap(hole, span);
}
END_TEST

/* make_watch: the process makes the pipe itself and records both ends
 * and its inode before returning (what a killed memprof leaves findable). */
START_TEST(make_watch_records_the_pipe)
{
    int64_t (*make_watch)(void) =
        (int64_t (*)(void))(void *)(img.base + header()->make_watch);
    ck_assert_uint_ge(header()->make_watch, sizeof(struct sampler_image_header));
    ck_assert_uint_lt(header()->make_watch, sampler_image_len);
    img.ctl->watch_fd = img.ctl->watch_write = -1;
    img.ctl->watch_ino = 0;
    ck_assert_int_eq(make_watch(), 0);
    int rfd = img.ctl->watch_fd, wfd = img.ctl->watch_write;
    struct stat rs, ws;
    ck_assert_int_eq(fstat(rfd, &rs), 0);
    ck_assert_int_eq(fstat(wfd, &ws), 0);
    ck_assert(S_ISFIFO(rs.st_mode));
    ck_assert_uint_eq(rs.st_ino, ws.st_ino);
    ck_assert_uint_eq(img.ctl->watch_ino, rs.st_ino);
    ck_assert_int_eq(write(wfd, "x", 1), 1);        /* read end, write end */
    char c;
    ck_assert_int_eq(read(rfd, &c, 1), 1);
    ck_assert(fcntl(rfd, F_GETFD) & FD_CLOEXEC);
    close(rfd);
    close(wfd);
}
END_TEST

/* Pages found readable together are only those before the first that is
 * not: a walk from a readable page up to an unreadable one right after it
 * must read that one through the kernel (and stop), never directly.  The
 * CFA is moved far up the stack (as by a wrong row) into a readable
 * region A whose words send the walk to A's last page, and from there one
 * page on, into B, which cannot be read. */
START_TEST(walk_stops_at_the_page_that_cannot_be_read)
{
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    const size_t span = 2u << 20, page = 4096;
    uint64_t *a = MAP_FAILED;
    int32_t off = 0;
    for (int lg = 24; lg <= 30 && a == MAP_FAILED; lg++) {
        off = (int32_t)1 << lg;
        uintptr_t at = ((here + (uintptr_t)off) & ~(uintptr_t)0xfffff) - span / 2;
        a = mmap((void *)at, span + page, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (a != MAP_FAILED && a != (void *)at) {
            munmap(a, span + page);
            a = MAP_FAILED;
        }
    }
    ck_assert_ptr_ne(a, MAP_FAILED);
    uintptr_t a_end = (uintptr_t)a + span;
    ck_assert_int_eq(mprotect((void *)a_end, page, PROT_NONE), 0);     /* B */
    uint64_t ra = (uintptr_t)chain_b + 1;
    size_t words = span / 8;
    for (size_t i = 0; i + 1 < words; i += 2) {    /* for a CFA x: fp at x-16, ra at x-8 */
        a[i] = (a_end - 16) - (uint64_t)off;       /* next CFA: A's last pair */
        a[i + 1] = ra;
    }
    a[words - 4] = (a_end + 64) - (uint64_t)off;   /* from there: into B */
    a[words - 3] = ra;
    chain_rows(off);
    void *p = chain_a(50);
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->nframes, 3);    /* chain_c; A's middle; A's last page */
    ck_assert_uint_eq(e->frames[1], ra);
    ck_assert_uint_eq(e->frames[2], ra);
    ck_assert_uint_eq(e->truncated, 1);
    w_free(p);
    munmap(a, span + page);
}
END_TEST

/* ---- the second way to check a page (rt_sigprocmask) ------------------- */

static void setup_sigmask(void)
{
    setup();
    img.ctl->probe = SAMPLER_PROBE_SIGMASK;
}

/* A child under a filter that fails call nr with errno e (Docker's
 * default profile: process_vm_readv, EPERM, without CAP_SYS_PTRACE) walks
 * a stack of many pages with the probe way `way`: 1 when the walk was
 * whole, 0 truncated. */
static int walk_whole_under_filter(long nr, int e, uint32_t way)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct sock_filter prog[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)e),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog fp = { sizeof prog / sizeof prog[0], prog };
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP,
                                                              SECCOMP_MODE_FILTER, &fp))
            _exit(3);
        fill_ctl();              /* the gate's page was wiped by fork: this
                                  * child's own, as memprof would make it */
        img.ctl->probe = way;
        chain_rows(16);
        void *p = deep_wide(24);
        struct sampler_entry *e = entry_of(p);
        _exit(e && e->nframes == 26 && !e->truncated ? 1 : 0);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st));
    ck_assert_int_ne(WEXITSTATUS(st), 3);
    return WEXITSTATUS(st);
}

/* Where a filter denies process_vm_readv, that way cuts every stack at
 * the first page past the wrapper's; rt_sigprocmask's walks it whole. */
START_TEST(sigmask_probe_walks_where_vm_readv_is_denied)
{
    ck_assert_int_eq(walk_whole_under_filter(SYS_process_vm_readv, EPERM,
                                             SAMPLER_PROBE_VM_READV), 0);
    ck_assert_int_eq(walk_whole_under_filter(SYS_process_vm_readv, EPERM,
                                             SAMPLER_PROBE_SIGMASK), 1);
}
END_TEST

/* A filter (added after 'prof on') that fails rt_sigprocmask with EINVAL
 * itself would say every page readable: the walk sees that the kernel's
 * half reads as readable too, and checks no page. */
START_TEST(sigmask_probe_distrusts_a_filters_einval)
{
    ck_assert_int_eq(walk_whole_under_filter(SYS_rt_sigprocmask, EINVAL,
                                             SAMPLER_PROBE_SIGMASK), 0);
}
END_TEST

/* Stack below the caller filled with words of all bits: what the walk's
 * probes then pass as a new mask would block every signal. */
__attribute__((noipa)) static void stack_of_ones(void)
{
    volatile unsigned char fill[64 * 1024];
    for (size_t i = 0; i < sizeof fill; i++)
        fill[i] = 0xff;
}

/* The probe changes nothing of the thread's: its signal mask (the call
 * passes the page's word as a new mask, with a `how` the kernel refuses),
 * errno, its descriptors. */
START_TEST(sigmask_probe_changes_nothing)
{
    sigset_t mask, before, after;
    memset(&before, 0, sizeof before);
    memset(&after, 0, sizeof after);
    sigemptyset(&mask);
    sigaddset(&mask, SIGUSR2);
    ck_assert_int_eq(pthread_sigmask(SIG_BLOCK, &mask, &before), 0);
    ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &before), 0);
    int fds = count_fds();
    chain_rows(16);
    stack_of_ones();
    errno = 4321;
    void *p = deep_wide(24);     /* pages of this stack hold words of all bits */
    ck_assert_int_eq(errno, 4321);
    struct sampler_entry *e = entry_of(p);
    ck_assert_ptr_nonnull(e);
    ck_assert_uint_eq(e->truncated, 0);
    ck_assert_uint_eq(e->nframes, 26);
    ck_assert_int_eq(pthread_sigmask(SIG_SETMASK, NULL, &after), 0);
    ck_assert_int_eq(memcmp(&before, &after, sizeof before), 0);
    ck_assert_int_eq(count_fds(), fds);
    w_free(p);
    pthread_sigmask(SIG_UNBLOCK, &mask, NULL);
}
END_TEST

static Suite *sampler_inproc_suite(void)
{
    Suite *s = suite_create("sampler_inproc");
    TCase *tc = tcase_create("image");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, image_header_names_every_wrapper);
    tcase_add_test(tc, make_watch_records_the_pipe);
    tcase_add_test(tc, lg0_samples_every_allocation);
    tcase_add_test(tc, free_forgets_the_sample);
    tcase_add_test(tc, unsampled_pointer_passes_through);
    tcase_add_test(tc, realloc_forgets_old_samples_new);
    tcase_add_test(tc, every_function_records_the_size_asked);
    tcase_add_test(tc, rate_is_poisson_over_bytes);
    tcase_add_test(tc, full_table_drops_and_counts);
    tcase_add_test(tc, mmap_samples_and_munmap_forgets);
    tcase_add_test(tc, munmap_cuts_a_sampled_mapping);
    tcase_add_test(tc, a_cut_sample_stays_with_the_right_probability);
    tcase_add_test(tc, mremap_moves_and_counts_growth);
    tcase_add_test(tc, mapping_calls_keep_errno);
    tcase_add_test(tc, sbrk_and_brk_are_followed);
    tcase_add_test(tc, munmap_passes_over_a_busy_sample);
    tcase_add_test(tc, mappings_off_take_no_sample);
    tcase_add_test(tc, forked_child_leaves_mappings_alone);
    tcase_add_test(tc, orphan_when_memprof_is_gone);
    tcase_add_test(tc, forked_child_takes_no_sample);
    tcase_add_test(tc, forked_child_finds_the_gate_closed);
    tcase_add_test(tc, gate_counts_threads_inside_the_body);
    tcase_add_test(tc, off_takes_no_sample);
    tcase_add_test(tc, walk_follows_frame_pointer_rows);
    tcase_add_test(tc, walk_crosses_many_pages);
    tcase_add_test(tc, walk_stops_at_max_frames);
    tcase_add_test(tc, walk_stops_at_the_page_that_cannot_be_read);
    tcase_add_test(tc, walk_survives_rows_into_unreadable_memory);
    suite_add_tcase(s, tc);
    /* the walk's tests again, pages checked with rt_sigprocmask */
    TCase *sig = tcase_create("sigmask_probe");
    tcase_add_checked_fixture(sig, setup_sigmask, teardown);
    tcase_set_timeout(sig, 30);
    tcase_add_test(sig, walk_follows_frame_pointer_rows);
    tcase_add_test(sig, walk_crosses_many_pages);
    tcase_add_test(sig, walk_stops_at_max_frames);
    tcase_add_test(sig, walk_stops_at_the_page_that_cannot_be_read);
    tcase_add_test(sig, walk_survives_rows_into_unreadable_memory);
    tcase_add_test(sig, sigmask_probe_walks_where_vm_readv_is_denied);
    tcase_add_test(sig, sigmask_probe_changes_nothing);
    tcase_add_test(sig, sigmask_probe_distrusts_a_filters_einval);
    suite_add_tcase(s, sig);
    return s;
}

UNIT_MAIN(sampler_inproc_suite)
