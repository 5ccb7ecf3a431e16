/* sampler.c - the heap sampler memprof puts into a running process: the
 * stand-ins ("wrappers") memprof points the process's calls to malloc,
 * free and the other allocation functions at, in the gate's page (kept
 * for the process's life: see the end of this file), and the body they
 * enter while memprof samples (unmapped at 'prof off').  Each calls the
 * allocator's own function and, while memprof samples, keeps one sample
 * per 2^lg_sample
 * bytes allocated on average (a Poisson process over bytes, as jemalloc's
 * lg_prof_sample) in the table of abi.h, with the allocating call path; a
 * sample is forgotten when its block is freed.
 *
 * Built freestanding into a flat image (image.lds, Makefile.in): no libc,
 * no relocation, no data of its own.  Everything it keeps lives in struct
 * sampler_data, which memprof maps SAMPLER_CODE_SIZE after the body's code;
 * the code reaches it RIP-relative through sampler_data_block, a symbol
 * the linker script places there (the gate's through sampler_gate_block).  It runs inside any allocation of the
 * process, on any thread, in a signal handler that interrupted one of its
 * own calls, and in a forked child that shares its data: no locks, atomic
 * operations on every shared word, a small stack frame, errno untouched,
 * and every read of the stack beyond its own frame's page first checked
 * through process_vm_readv, so that a wrong unwind row cannot fault.  A
 * sample costs no system call when its walk stays in pages already
 * checked: the process is told from a forked child by the gate's page,
 * which fork wipes, and memprof's pipe is polled once per WATCH_EVERY samples of a
 * thread. */
#include <stddef.h>
#include <stdint.h>

#include "allocator/sampler/abi.h"
#include "allocator/sampler/inproc/kernel_abi.h"
#if defined(__aarch64__)
#include "allocator/sampler/inproc/arch_aarch64.h"
#else
#include "allocator/sampler/inproc/arch_x86_64.h"
#endif

#define EXPORT   __attribute__((visibility("hidden"), used))
#define NOINLINE __attribute__((noinline))

/* The data half, at SAMPLER_CODE_SIZE from the image's start (image.lds). */
extern struct sampler_data sampler_data_block __attribute__((visibility("hidden")));
#define DATA ARCH_DATA(&sampler_data_block)
#define CTL  (&sampler_data_block.ctl)

/* memprof and other threads change these words while we read them. */
#define LOAD(p)          __atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)      __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD(p, v)        ((void)__atomic_fetch_add((p), (v), __ATOMIC_RELAXED))
#define SUB(p, v)        ((void)__atomic_fetch_sub((p), (v), __ATOMIC_RELAXED))
#define CAS(p, expect, v) \
    __atomic_compare_exchange_n((p), (expect), (v), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)

_Static_assert(SF_COUNT == 16, "the image header below names one wrapper per sampler_fn");
_Static_assert(SAMPLER_THREAD_SLOTS == 256, "thread_slot() takes the top 8 bits of a hash");
_Static_assert(sizeof(struct sampler_thread) == 64, "one cache line per thread slot");

/* The stand-ins (in the gate's page), with the C prototypes of the
 * functions they replace, and the body's functions they enter, each with
 * the stand-in's frame last (where the stack walk starts). */
void *sampler_malloc(size_t size);
void sampler_free(void *ptr);
void *sampler_calloc(size_t n, size_t size);
void *sampler_realloc(void *old, size_t size);
void *sampler_reallocarray(void *old, size_t n, size_t size);
int sampler_posix_memalign(void **memptr, size_t align, size_t size);
void *sampler_aligned_alloc(size_t align, size_t size);
void *sampler_memalign(size_t align, size_t size);
void *sampler_valloc(size_t size);
void *sampler_pvalloc(size_t size);
void *sampler_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off);
int sampler_munmap(void *addr, size_t len);
void *sampler_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr);
void *sampler_sbrk(intptr_t incr);
int sampler_brk(void *addr);
int64_t sampler_make_watch(void);
void *body_malloc(size_t size, const uint64_t *frame);
void body_free(void *ptr, const uint64_t *frame);
void *body_calloc(size_t n, size_t size, const uint64_t *frame);
void *body_realloc(void *old, size_t size, const uint64_t *frame);
void *body_reallocarray(void *old, size_t n, size_t size, const uint64_t *frame);
int body_posix_memalign(void **memptr, size_t align, size_t size, const uint64_t *frame);
void *body_aligned_alloc(size_t align, size_t size, const uint64_t *frame);
void *body_memalign(size_t align, size_t size, const uint64_t *frame);
void *body_valloc(size_t size, const uint64_t *frame);
void *body_pvalloc(size_t size, const uint64_t *frame);
void *body_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off,
                const uint64_t *frame);
int body_munmap(void *addr, size_t len, const uint64_t *frame);
void *body_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr,
                  const uint64_t *frame);
void *body_sbrk(intptr_t incr, const uint64_t *frame);
int body_brk(void *addr, const uint64_t *frame);

/* The image header (struct sampler_image_header), which image.lds puts at
 * offset 0.  The image is linked at address 0, so a function's address is
 * its offset: the linker resolves every word and nothing is left for run
 * time.  Only the assembler can write these words (C has no constant for
 * a function's address as a 32-bit number), and it takes abi.h's
 * constants through "i" operands (32 bits each: x86's %c takes no
 * more), which only an asm inside a function may have: this function
 * carries the asm and is never called.  It also gives
 * the linker script SAMPLER_CODE_SIZE as sampler_code_limit. */
__attribute__((used)) static void image_header(void)
{
    __asm__(".pushsection .sampler_header,\"a\",@progbits\n\t"
            ".long %c0, %c1\n\t"                 /* magic: low, high half */
            ".long %c2\n\t"
            ".long sampler_code_end\n\t"
            ".long sampler_malloc\n\t"            /* wrapper[SF_MALLOC] */
            ".long sampler_free\n\t"
            ".long sampler_calloc\n\t"
            ".long sampler_realloc\n\t"
            ".long sampler_reallocarray\n\t"
            ".long sampler_posix_memalign\n\t"
            ".long sampler_aligned_alloc\n\t"
            ".long sampler_memalign\n\t"
            ".long sampler_valloc\n\t"
            ".long sampler_pvalloc\n\t"
            ".long sampler_mmap\n\t"              /* wrapper[SF_MMAP] */
            ".long sampler_mmap\n\t"              /* mmap64: the same call */
            ".long sampler_munmap\n\t"
            ".long sampler_mremap\n\t"
            ".long sampler_sbrk\n\t"
            ".long sampler_brk\n\t"
            ".long body_malloc\n\t"               /* body[SF_MALLOC] */
            ".long body_free\n\t"
            ".long body_calloc\n\t"
            ".long body_realloc\n\t"
            ".long body_reallocarray\n\t"
            ".long body_posix_memalign\n\t"
            ".long body_aligned_alloc\n\t"
            ".long body_memalign\n\t"
            ".long body_valloc\n\t"
            ".long body_pvalloc\n\t"
            ".long body_mmap\n\t"                 /* body[SF_MMAP] */
            ".long body_mmap\n\t"
            ".long body_munmap\n\t"
            ".long body_mremap\n\t"
            ".long body_sbrk\n\t"
            ".long body_brk\n\t"
            ".long sampler_make_watch\n\t"        /* make_watch */
            ".long sampler_gate_end\n\t"          /* gate_bytes */
            ".zero %c4\n\t"                       /* real[], pid: memprof's */
            ".popsection\n\t"
            ".globl sampler_code_limit\n\t"
            ".set sampler_code_limit, %c3"
            :
            : "i"((uint32_t)SAMPLER_MAGIC), "i"((uint32_t)(SAMPLER_MAGIC >> 32)),
              "i"(SAMPLER_ABI), "i"(SAMPLER_CODE_SIZE), "i"(8 * (SF_COUNT + 1)));
}
_Static_assert(offsetof(struct sampler_image_header, real) == 24 + 8 * SF_COUNT,
               "image_header() writes the header's words in abi.h's order");

/* ---- random intervals ------------------------------------------------ */

/* xorshift64*: fast, and good enough to place samples. */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(0x2545f4914f6cdd1d);
}

/* splitmix64's finaliser: thread pointers differ in a few bits only, and
 * xorshift started from nearby states gives nearby first numbers. */
static uint64_t mix(uint64_t x)
{
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

#define LOG2_FRAC 20            /* fraction bits of log2_fixed() */
#define LN2_Q32   UINT64_C(0xb17217f8)   /* ln 2 * 2^32, rounded */

/* log2(r) for r >= 1 in fixed point, without floating point (the image is
 * built with general registers only): the whole part is the leading bit;
 * the fraction comes bit by bit from squaring the mantissa, as each square
 * doubles its logarithm (the bit is 1 when the square reaches 2). */
static uint64_t log2_fixed(uint64_t r)
{
    unsigned int whole = 63u - (unsigned int)__builtin_clzll(r);
    uint64_t m = (r << (63u - whole)) >> 1;   /* [1, 2) with 62 fraction bits */
    uint64_t frac = 0;
    for (int i = 0; i < LOG2_FRAC; i++) {
        m = (uint64_t)(((unsigned __int128)m * m) >> 62);
        frac <<= 1;
        if (m >> 63) {
            m >>= 1;
            frac |= 1;
        }
    }
    return ((uint64_t)whole << LOG2_FRAC) | frac;
}

/* Bytes until the next sample: exponential with mean 2^lg, as the gaps of a
 * Poisson process, drawn as -ln(u) * 2^lg for u uniform in (0, 1].  Rounded
 * up, so that an allocation of n bytes is sampled with probability exactly
 * 1 - exp(-n / 2^lg).  lg 0 samples every allocation. */
static int64_t next_interval(uint64_t *rng, uint32_t lg)
{
    if (lg == 0)
        return 1;
    if (lg > 62)
        lg = 62;
    uint64_t r = (rng_next(rng) >> 11) + 1;                   /* u = r / 2^53 */
    uint64_t minus_log2_u = ((uint64_t)53 << LOG2_FRAC) - log2_fixed(r);
    unsigned int point = LOG2_FRAC + 32;                       /* of the product */
    unsigned __int128 bytes = (unsigned __int128)(minus_log2_u * LN2_Q32) << lg;
    bytes = (bytes + (((unsigned __int128)1 << point) - 1)) >> point;
    if (bytes < 1)
        return 1;
    if (bytes > ((unsigned __int128)1 << 62))
        return (int64_t)1 << 62;
    return (int64_t)bytes;
}

/* ---- the process and memprof ------------------------------------------ */

/* The body is entered only through the gate, whose page fork wipes (so a
 * forked child's stand-ins never enter it), and fork does not copy the
 * body at all.  The gate's mark, read without a system call, keeps a
 * child out of the samples wherever this is reached from one.  Not
 * covered: a signal handler that interrupted a thread inside the body
 * and forks, whose child then returns from the handler into the body
 * fork did not copy: that child faults (docs/sampler.md, "Fork, exec,
 * threads, libraries"). */
static int in_own_process(void)
{
    const volatile struct sampler_gate *g =
        (const volatile struct sampler_gate *)(uintptr_t)__atomic_load_n(&CTL->gate,
                                                                         __ATOMIC_ACQUIRE);
    return g != 0 && g->mark == SAMPLER_OWNER_MARK;
}

/* memprof holds the write end of the watch pipe; when it dies the read end
 * hangs up (or the process closed the descriptor): nobody will read the
 * samples, so the sampler stops for good.  A failed poll says nothing. */
static int memprof_gone(void)
{
    struct kernel_pollfd pfd = { .fd = (int32_t)LOAD(&CTL->watch_fd), .events = KERNEL_POLLIN };
    struct kernel_timespec now = { 0, 0 };
    int64_t n = ARCH_SYSCALL6(ARCH_SYS_PPOLL, (uint64_t)(uintptr_t)&pfd, 1,
                              (uint64_t)(uintptr_t)&now, 0, KERNEL_SIGSET_SIZE, 0);
    return n > 0 && pfd.revents != 0;
}

/* The pipe is polled at a thread's first sample and every WATCH_EVERY-th
 * after: a dead memprof is noticed within that many samples of a thread
 * (each taken into the bounded table, read by nobody). */
#define WATCH_EVERY 16

/* From now on the stand-ins pass every call straight through (the gate's
 * state) and the next memprof finds the state ORPHAN (ctl's). */
static void become_orphan(void)
{
    uint32_t on = SAMPLER_ON;
    CAS(&CTL->state, &on, (uint32_t)SAMPLER_ORPHAN);
    struct sampler_gate *g = (struct sampler_gate *)(uintptr_t)LOAD(&CTL->gate);
    on = SAMPLER_ON;
    CAS(&g->state, &on, (uint32_t)SAMPLER_ORPHAN);
}

/* ---- the stack walk ---------------------------------------------------- */

/* Reads of the process's stack that cannot fault.  The pages known
 * readable are one range: at first the page of the wrapper's own frame
 * (the thread runs on it); a word outside is first checked by a system
 * call that reads user memory and fails instead of faulting where it is
 * not readable, in one of two ways (ctl.probe, memprof's choice from the
 * process's seccomp filters):
 *  - process_vm_readv on the process itself, one word from each of
 *    PROBE_PAGES pages from the word's own in one call: it stops at the
 *    first page that is not there, and the pages before it become the
 *    range;
 *  - where a filter denies that (Docker's and containerd's default
 *    profiles without CAP_SYS_PTRACE), rt_sigprocmask with a `how` the
 *    kernel does not know and the page's first word as the new mask: the
 *    kernel copies the 8 bytes in first (EFAULT when they are not
 *    readable) and then refuses the `how` (EINVAL) before it touches the
 *    thread's mask (kernel/signal.c), so it changes nothing, holds no
 *    descriptor, and every default profile allows it.  One page a call,
 *    only the page the walk needs next.
 * Words inside are read directly (stacks do not go away under the thread
 * that walks them). */
#define PROBE_PAGES 4

struct stack_reader {
    uint64_t lo, hi;           /* [lo, hi): pages known readable */
    int sigmask_sane;          /* rt_sigprocmask's answers are the kernel's */
};

typedef uint64_t unaligned_u64 __attribute__((aligned(1), may_alias));

static struct stack_reader reader_at(const uint64_t *frame)
{
    uint64_t page = (uint64_t)(uintptr_t)frame & ~(uint64_t)(ARCH_PAGE_SIZE - 1);
    struct stack_reader rd = { page, page + ARCH_PAGE_SIZE, 0 };
    return rd;
}

static int known_readable(const struct stack_reader *rd, uint64_t addr)
{
    return addr >= rd->lo && addr < rd->hi && rd->hi - addr >= sizeof(uint64_t);
}

static int probe_pages(struct stack_reader *rd, uint64_t addr)
{
    uint64_t page = addr & ~(uint64_t)(ARCH_PAGE_SIZE - 1);
    uint64_t words[PROBE_PAGES];
    struct kernel_iovec local[PROBE_PAGES], remote[PROBE_PAGES];
    for (uint32_t i = 0; i < PROBE_PAGES; i++) {
        local[i] = (struct kernel_iovec){ (uint64_t)(uintptr_t)&words[i], sizeof words[i] };
        remote[i] = (struct kernel_iovec){ page + (uint64_t)i * ARCH_PAGE_SIZE, sizeof words[i] };
    }
    int64_t n = ARCH_SYSCALL6(ARCH_SYS_PROCESS_VM_READV, (uint64_t)LOAD(&CTL->tgid),
                              (uint64_t)(uintptr_t)local, PROBE_PAGES,
                              (uint64_t)(uintptr_t)remote, PROBE_PAGES, 0);
    if (n < (int64_t)sizeof(uint64_t))
        return 0;
    rd->lo = page;
    rd->hi = page + (uint64_t)(n / (int64_t)sizeof(uint64_t)) * ARCH_PAGE_SIZE;
    return 1;
}

static int64_t sigmask_probe_call(uint64_t page)
{
    return ARCH_SYSCALL6(ARCH_SYS_RT_SIGPROCMASK, KERNEL_SIG_HOW_NONE, page, 0,
                         KERNEL_SIGSET_SIZE, 0, 0);
}

/* The page a word at addr needs next (its own, or the one its last bytes
 * run into past the range), checked with rt_sigprocmask: only EINVAL
 * (the bytes were read, the `how` refused) says readable.  Once a walk,
 * first, an address in the kernel's half, which no task can read, must
 * give EFAULT: a filter added after 'prof on' that failed the call with
 * EINVAL itself would otherwise pass every page as readable. */
static int probe_page_sigmask(struct stack_reader *rd, uint64_t addr)
{
    if (!rd->sigmask_sane) {
        if (sigmask_probe_call(KERNEL_UNREADABLE_PAGE) != -KERNEL_EFAULT)
            return 0;
        rd->sigmask_sane = 1;
    }
    uint64_t page = addr & ~(uint64_t)(ARCH_PAGE_SIZE - 1);
    if (addr >= rd->lo && addr < rd->hi)
        page = rd->hi;
    if (sigmask_probe_call(page) != -KERNEL_EINVAL)
        return 0;
    if (page != rd->hi)
        rd->lo = page;
    rd->hi = page + ARCH_PAGE_SIZE;
    return 1;
}

static int probe(struct stack_reader *rd, uint64_t addr)
{
    if (LOAD(&CTL->probe) == SAMPLER_PROBE_SIGMASK)
        return probe_page_sigmask(rd, addr);
    return probe_pages(rd, addr);
}

/* A word straddling a page boundary may need two probes. */
static int read_word(struct stack_reader *rd, uint64_t addr, uint64_t *out)
{
    for (int tries = 0; !known_readable(rd, addr); tries++)
        if (tries == 2 || !probe(rd, addr))
            return 0;
    *out = *(const volatile unaligned_u64 *)(uintptr_t)addr;
    return 1;
}

/* The unwind row for a code address: the one with the greatest pc at or
 * below it (rows are sorted by pc), or none below the first. */
static const struct sampler_row *row_for(uint64_t pc)
{
    const struct sampler_row *rows = DATA->rows;
    uint64_t lo = 0, hi = LOAD(&CTL->nrows);
    if (hi == 0 || pc < rows[0].pc)
        return NULL;
    while (hi - lo > 1) {                 /* rows[lo].pc <= pc < rows[hi].pc */
        uint64_t mid = lo + (hi - lo) / 2;
        if (rows[mid].pc <= pc)
            lo = mid;
        else
            hi = mid;
    }
    return &rows[lo];
}

enum step { STEP_NEXT, STEP_END, STEP_LOST };

/* One frame out: from the registers of a function (r->pc a return address
 * into it) to those of its caller.  The row is looked up at pc - 1: a
 * return address may be the first byte of the next function.  END is the
 * outermost frame; LOST a walk that could not go on. */
static enum step step_out(struct arch_walk_regs *r, struct stack_reader *rd)
{
    const struct sampler_row *row = row_for(r->pc - 1);
    if (row == NULL)
        return STEP_LOST;
    uint64_t base;
    switch (row->cfa_reg) {
    case SAMPLER_CFA_NONE: return STEP_END;
    case SAMPLER_CFA_SP: base = r->sp; break;
    case SAMPLER_CFA_FP: base = r->fp; break;
    default: return STEP_LOST;
    }
    uint64_t cfa = base + (uint64_t)(int64_t)row->cfa_off;
    if (cfa <= r->sp)                     /* stacks grow down: a loop or garbage */
        return STEP_LOST;
    uint64_t ra, fp = r->fp;
    if (!read_word(rd, cfa + (uint64_t)(int64_t)row->ra_off, &ra))
        return STEP_LOST;
    if (row->fp_off != 0 && !read_word(rd, cfa + (uint64_t)(int64_t)row->fp_off, &fp))
        return STEP_LOST;
    if (ra == 0)
        return STEP_END;
    r->pc = arch_strip_pac(ra);
    r->sp = cfa;
    r->fp = fp;
    return STEP_NEXT;
}

/* Fills e->frames from the wrapper's frame outwards; returns whether the
 * walk stopped early (no row for an address, a failed read, the limit). */
static uint32_t walk_stack(const uint64_t *frame, struct sampler_entry *e)
{
    struct arch_walk_regs r = arch_walk_start(frame);
    struct stack_reader rd = reader_at(frame);
    uint32_t n = 0, truncated = 0;
    e->frames[n++] = r.pc;
    for (;;) {
        enum step s = step_out(&r, &rd);
        if (s == STEP_END)
            break;
        if (s == STEP_LOST || n == SAMPLER_MAX_FRAMES) {
            truncated = 1;
            break;
        }
        e->frames[n++] = r.pc;
    }
    STORE(&e->nframes, n);
    STORE(&e->truncated, truncated);
    return truncated;
}

/* ---- the table of samples ---------------------------------------------- */

#define SLOT_MASK (SAMPLER_TABLE_CAP - 1u)

/* The free() filter counts live samples per byte; a byte that reached 255
 * stays there (a count that overflowed cannot be trusted to reach 0). */
static void filter_up(uint64_t ptr)
{
    uint8_t *f = &DATA->filter[sampler_filter_of(ptr)];
    uint8_t v = LOAD(f);
    while (v != 255 && !CAS(f, &v, (uint8_t)(v + 1)))
        ;
}

static void filter_down(uint64_t ptr)
{
    uint8_t *f = &DATA->filter[sampler_filter_of(ptr)];
    uint8_t v = LOAD(f);
    while (v != 255 && v != 0 && !CAS(f, &v, (uint8_t)(v - 1)))
        ;
}

/* The slot holding ptr's sample, taken (made BUSY) by the caller, or -1.
 * Probes stop at EMPTY: slots never become EMPTY again, so a key is never
 * behind one. */
static int32_t take_key(uint64_t ptr)
{
    uint32_t i = sampler_slot_of(ptr);
    for (uint32_t k = 0; k < SAMPLER_PROBE_MAX; k++, i = (i + 1) & SLOT_MASK) {
        uint64_t key = __atomic_load_n(&DATA->keys[i], __ATOMIC_ACQUIRE);
        if (key == SAMPLER_KEY_EMPTY)
            return -1;
        if (key == ptr)
            return CAS(&DATA->keys[i], &key, SAMPLER_KEY_BUSY) ? (int32_t)i : -1;
    }
    return -1;
}

/* A free slot (EMPTY or TOMB) on ptr's probe path, taken, or -1. */
static int32_t take_free_slot(uint64_t ptr)
{
    uint32_t i = sampler_slot_of(ptr);
    for (uint32_t k = 0; k < SAMPLER_PROBE_MAX; k++, i = (i + 1) & SLOT_MASK) {
        uint64_t key = LOAD(&DATA->keys[i]);
        if ((key == SAMPLER_KEY_EMPTY || key == SAMPLER_KEY_TOMB) &&
            CAS(&DATA->keys[i], &key, SAMPLER_KEY_BUSY))
            return (int32_t)i;
    }
    return -1;
}

/* An entry's seqlock (abi.h): odd while it changes.  Returns the even
 * value to publish when done. */
static uint64_t entry_open(struct sampler_entry *e)
{
    uint64_t odd = LOAD(&e->seq) | 1;
    STORE(&e->seq, odd);
    __atomic_thread_fence(__ATOMIC_RELEASE);   /* odd seen before any change */
    return odd + 1;
}

static void entry_close(struct sampler_entry *e, uint64_t even)
{
    STORE(&e->seq_end, even);
    __atomic_store_n(&e->seq, even, __ATOMIC_RELEASE);
}

/* A slot for a new sample of ptr: the one already holding ptr (its free
 * went by another way), or a free one while the table has room.  Returns
 * -1, counted as dropped, when there is none. */
static int32_t claim_slot(uint64_t ptr)
{
    int32_t i = take_key(ptr);
    if (i >= 0)
        return i;
    if (__atomic_fetch_add(&CTL->live, 1, __ATOMIC_RELAXED) >= SAMPLER_TABLE_LIVE) {
        SUB(&CTL->live, 1);
        ADD(&CTL->dropped, 1);
        return -1;
    }
    i = take_free_slot(ptr);
    if (i < 0) {
        SUB(&CTL->live, 1);
        ADD(&CTL->dropped, 1);
        return -1;
    }
    filter_up(ptr);
    return i;
}

/* A taken slot's entry written (under its sequence lock) and its key
 * published: the sample counted. */
static void fill_entry(struct sampler_entry *e, uint64_t *key, uint64_t ptr, uint64_t size,
                       uint32_t kind, const uint64_t *frame)
{
    uint64_t even = entry_open(e);
    STORE(&e->ptr, ptr);
    STORE(&e->size, size);
    STORE(&e->kind, (uint16_t)kind);
    uint32_t truncated = walk_stack(frame, e);
    entry_close(e, even);
    __atomic_store_n(key, ptr, __ATOMIC_RELEASE);
    ADD(&CTL->samples, 1);
    if (truncated)
        ADD(&CTL->truncated, 1);
}

/* A mapping's sample, in the mapping table (abi.h): the first EMPTY key
 * taken, or counted as dropped when all are in use. */
static void record_mapping(uint64_t start, uint64_t len, const uint64_t *frame)
{
    for (uint32_t i = 0; i < SAMPLER_MAPS_CAP; i++) {
        uint64_t key = LOAD(&DATA->map_keys[i]);
        if (key != SAMPLER_KEY_EMPTY || !CAS(&DATA->map_keys[i], &key, SAMPLER_KEY_BUSY))
            continue;
        ADD(&CTL->map_live, 1);
        fill_entry(&DATA->map_entries[i], &DATA->map_keys[i], start, len,
                   SAMPLER_KIND_MAPPING, frame);
        return;
    }
    ADD(&CTL->dropped, 1);
}

static void record_sample(uint64_t ptr, uint64_t size, const uint64_t *frame, uint32_t kind)
{
    if (kind == SAMPLER_KIND_MAPPING) {
        record_mapping(ptr, size, frame);
        return;
    }
    int32_t i = claim_slot(ptr);
    if (i >= 0)
        fill_entry(&DATA->entries[i], &DATA->keys[i], ptr, size, SAMPLER_KIND_HEAP, frame);
}

/* Forgets ptr's sample, if it has one, before the allocator frees the
 * block (after, another thread could be given the same address and sample
 * it).  Reached only when ptr's filter byte is not 0. */
static NOINLINE void forget(uint64_t ptr)
{
    if (ptr <= SAMPLER_KEY_BUSY)         /* free(NULL): no key can match */
        return;
    uint32_t i = sampler_slot_of(ptr);
    for (uint32_t k = 0; k < SAMPLER_PROBE_MAX; k++, i = (i + 1) & SLOT_MASK) {
        uint64_t key = __atomic_load_n(&DATA->keys[i], __ATOMIC_ACQUIRE);
        if (key == SAMPLER_KEY_EMPTY)
            return;
        if (key != ptr)
            continue;
        /* Checked only now, on a real match: a getpid() per free that
         * merely passed the filter would cost too much. */
        if (!in_own_process() || !CAS(&DATA->keys[i], &key, SAMPLER_KEY_BUSY))
            return;
        struct sampler_entry *e = &DATA->entries[i];
        uint64_t even = entry_open(e);
        STORE(&e->ptr, 0);
        entry_close(e, even);
        __atomic_store_n(&DATA->keys[i], SAMPLER_KEY_TOMB, __ATOMIC_RELEASE);
        filter_down(ptr);
        SUB(&CTL->live, 1);
        return;
    }
}

/* ---- counting bytes ---------------------------------------------------- */

/* A thread's countdown, found by hashing its thread pointer: no TLS of our
 * own, no allocation. */
static struct sampler_thread *thread_slot(uint64_t tp)
{
    return &DATA->threads[(tp * UINT64_C(0x9e3779b97f4a7c15)) >> 56];
}

/* The countdown reached 0 in an allocation: draw the next gap, then take
 * the sample if this is still the process memprof attached to and memprof
 * is still there to read it. */
static NOINLINE void sample_slow(struct sampler_thread *t, uint64_t ptr, uint64_t size,
                                 const uint64_t *frame, uint32_t kind)
{
    uint64_t rng = LOAD(&t->rng);
    STORE(&t->bytes_left, next_interval(&rng, LOAD(&CTL->lg_sample)));
    STORE(&t->rng, rng);
    if (!in_own_process())
        return;
    uint64_t draws = LOAD(&t->draws);
    STORE(&t->draws, draws + 1);
    if (draws % WATCH_EVERY == 0 && memprof_gone()) {
        become_orphan();
        return;
    }
    record_sample(ptr, size, frame, kind);
}

/* A thread meets a slot another thread (or another 'prof on') left: it
 * takes it over with a fresh countdown, then counts the allocation.  The
 * gap to a Poisson process's next point is exponential wherever one starts
 * counting, so a fresh draw keeps sampling unbiased even when two threads
 * keep taking one slot from each other; the old state is mixed in so that
 * they do not draw the same number each time. */
static NOINLINE void count_new_owner(struct sampler_thread *t, uint64_t tp, uint64_t ptr,
                                     uint64_t size, const uint64_t *frame, uint32_t kind)
{
    uint64_t gen = LOAD(&CTL->generation);
    uint64_t rng = LOAD(&t->rng) ^ mix(LOAD(&CTL->seed) ^ tp ^ gen);
    if (rng == 0)
        rng = UINT64_C(0x9e3779b97f4a7c15);
    int64_t left = next_interval(&rng, LOAD(&CTL->lg_sample)) - (int64_t)size;
    STORE(&t->rng, rng);
    STORE(&t->generation, gen);
    STORE(&t->draws, 0);
    STORE(&t->tp, tp);
    STORE(&t->bytes_left, left);
    if (left <= 0)
        sample_slow(t, ptr, size, frame, kind);
}

/* Every successful allocation (or mapping) while sampling: size bytes off
 * the calling thread's countdown, one Poisson process over heap and mapped
 * bytes alike.  `frame` is the wrapper's frame pointer, where the stack
 * walk starts.  Everything but the countdown is a tail call, so that the
 * common case saves no register. */
static NOINLINE void count_bytes(void *ptr, uint64_t size, const uint64_t *frame, uint32_t kind)
{
    uint64_t tp = arch_thread_pointer();
    struct sampler_thread *t = thread_slot(tp);
    if (__builtin_expect(LOAD(&t->tp) != tp ||
                         LOAD(&t->generation) != LOAD(&CTL->generation), 0)) {
        count_new_owner(t, tp, (uint64_t)(uintptr_t)ptr, size, frame, kind);
        return;
    }
    int64_t left = LOAD(&t->bytes_left) - (int64_t)size;
    STORE(&t->bytes_left, left);
    if (__builtin_expect(left > 0, 1))
        return;
    sample_slow(t, (uint64_t)(uintptr_t)ptr, size, frame, kind);
}

#define count_alloc(ptr, size, frame) count_bytes((ptr), (size), (frame), SAMPLER_KIND_HEAP)

/* Forgets ptr's sample if its filter byte says it may have one: the whole
 * cost of free() for the blocks that were never sampled. */
static inline __attribute__((always_inline)) void forget_if_sampled(void *ptr)
{
    uint64_t p = (uint64_t)(uintptr_t)ptr;
    if (__builtin_expect(LOAD(&DATA->filter[sampler_filter_of(p)]) != 0, 0))
        forget(p);
}

/* ---- mappings ------------------------------------------------------------
 * A mapping's sample covers [ptr, ptr + size) of the process's address
 * space, page-rounded, and follows what munmap, mremap and a MAP_FIXED
 * mmap do to that range (docs/sampler.md, "Mappings"). */

#define MAP_PAGE     UINT64_C(4096)
#define MAP_LEN_MAX  (UINT64_C(1) << 56)      /* beyond any address space */

static uint64_t map_pages(uint64_t len)
{
    return (len + MAP_PAGE - 1) & ~(MAP_PAGE - 1);
}

#define LOG2E_Q32 UINT64_C(0x171547653)   /* log2(e) * 2^32, rounded */

/* exp(-s / 2^lg) in fixed point (2^32 is 1), without floating point: 2 to
 * the power -(s / 2^lg) * log2(e), its whole part a shift, its fraction
 * f from exp(-f ln 2)'s series (f ln 2 < 0.7: ten terms leave < 1e-7). */
static uint64_t exp_neg(uint64_t s, uint32_t lg)
{
    if (lg > 62)
        lg = 62;
    if ((s >> lg) >= 64)
        return 0;
    unsigned __int128 z = ((unsigned __int128)s << 32) >> lg;      /* s / 2^lg */
    unsigned __int128 w = (z * LOG2E_Q32) >> 32;
    uint64_t whole = (uint64_t)(w >> 32);
    if (whole >= 63)
        return 0;
    uint64_t t = (((uint64_t)w & 0xffffffffu) * LN2_Q32) >> 32;     /* f ln 2 */
    uint64_t term = UINT64_C(1) << 32, sum = term;
    for (uint64_t k = 1; k <= 10; k++) {
        term = ((term * t) >> 32) / k;
        sum = (k & 1) ? sum - term : sum + term;
    }
    return sum >> whole;
}

/* Whether a sample whose mapping is cut from `was` bytes to `now` stays a
 * sample: with probability (1 - exp(-now/2^lg)) / (1 - exp(-was/2^lg)),
 * so that a piece that stays is kept with exactly the probability a
 * mapping of its size is sampled with, and the analysis's unsampling by
 * size stays true (a cut piece kept always would count as if it had been
 * drawn at its smaller size: too much).  The draw is a hash of the run's
 * seed and the piece: no shared state. */
static int keep_cut(uint64_t was, uint64_t now, uint64_t start)
{
    uint32_t lg = LOAD(&CTL->lg_sample);
    uint64_t one = UINT64_C(1) << 32;
    uint64_t num = one - exp_neg(now, lg), den = one - exp_neg(was, lg);
    if (den == 0 || num >= den)
        return 1;
    uint64_t u = mix(LOAD(&CTL->seed) ^ start * UINT64_C(0x9e3779b97f4a7c15) ^ now) >> 32;
    return (u * den) >> 32 < num;
}

/* What a range [a, b) of the address space that stops being what it was
 * does to each mapping sample it touches: a sample wholly inside is
 * forgotten (move: moved to `to + (start - a)`, as mremap moves it); one
 * it cuts keeps its part below the range when it has one (the part above
 * a hole in its middle is forgotten), else its part above, and stays a
 * sample with the probability keep_cut() says.  Only a key a
 * thread takes (BUSY) is changed, so two threads never change one sample;
 * a sample another thread holds right then is left as it is (no wait: a
 * signal handler may have interrupted that thread).  Nothing to do while
 * no mapping sample is kept: one load. */
static NOINLINE void change_range(uint64_t a, uint64_t b, int move, uint64_t to)
{
    if (LOAD(&CTL->map_live) == 0 || b <= a || !in_own_process())
        return;
    for (uint32_t i = 0; i < SAMPLER_MAPS_CAP; i++) {
        uint64_t key = __atomic_load_n(&DATA->map_keys[i], __ATOMIC_ACQUIRE);
        struct sampler_entry *e = &DATA->map_entries[i];
        if (key <= SAMPLER_KEY_BUSY || b <= key || a >= key + LOAD(&e->size) ||
            !CAS(&DATA->map_keys[i], &key, SAMPLER_KEY_BUSY))
            continue;
        uint64_t start = key, end = key + LOAD(&e->size);
        int gone = 0;
        if (a <= start && end <= b) {
            gone = !move;
            end = end - a + to;
            start = start - a + to;
        } else {
            uint64_t was = end - start;
            if (a > start)
                end = a;
            else
                start = b;
            gone = !keep_cut(was, end - start, start);
        }
        uint64_t even = entry_open(e);
        STORE(&e->ptr, gone ? 0 : start);
        STORE(&e->size, gone ? 0 : end - start);
        entry_close(e, even);
        __atomic_store_n(&DATA->map_keys[i], gone ? SAMPLER_KEY_EMPTY : start,
                         __ATOMIC_RELEASE);
        if (gone)
            SUB(&CTL->map_live, 1);
    }
}

static void forget_range(uint64_t a, uint64_t b)
{
    change_range(a, b, 0, 0);
}

/* A new mapping of len bytes at p: any sample still on its range is stale
 * (unmapped by a call the sampler did not see, or replaced by MAP_FIXED),
 * then its bytes are counted. */
static void count_mapping(uint64_t p, uint64_t len, const uint64_t *frame)
{
    forget_range(p, p + len);
    count_bytes((void *)(uintptr_t)p, len, frame, SAMPLER_KIND_MAPPING);
}

#define REAL(fn, type) ((type)(uintptr_t)LOAD(&CTL->real[fn]))
#define MY_FRAME() ARCH_MY_FRAME()

/* ---- the stand-ins ----------------------------------------------------- */

typedef void *malloc_fn(size_t);
typedef void free_fn(void *);
typedef void *calloc_fn(size_t, size_t);
typedef void *realloc_fn(void *, size_t);
typedef void *reallocarray_fn(void *, size_t, size_t);
typedef int posix_memalign_fn(void **, size_t, size_t);
typedef void *aligned_fn(size_t, size_t);
typedef void *mmap_fn(void *, size_t, int, int, int, int64_t);
typedef int munmap_fn(void *, size_t);
typedef void *mremap_fn(void *, size_t, size_t, int, ...);   /* new_addr: MREMAP_FIXED */
typedef void *sbrk_fn(intptr_t);
typedef int brk_fn(void *);

/* The watch pipe, made by the process itself in one call memprof makes
 * from its stop: both ends and the pipe's inode are in ctl before this
 * returns, so a memprof killed while the thread is in here (the thread
 * finishes the call and restores itself) leaves them recorded for the
 * next session to close.  Returns 0, or -errno. */
EXPORT int64_t sampler_make_watch(void)
{
    int32_t fds[2];
    uint64_t st[ARCH_STAT_WORDS];
    int64_t r = ARCH_SYSCALL6(ARCH_SYS_PIPE2, (uint64_t)(uintptr_t)fds, KERNEL_O_CLOEXEC,
                              0, 0, 0, 0);
    if (r < 0)
        return r;
    STORE(&CTL->watch_write, fds[1]);
    STORE(&CTL->watch_fd, fds[0]);
    r = ARCH_SYSCALL6(ARCH_SYS_FSTAT, (uint64_t)fds[0], (uint64_t)(uintptr_t)st, 0, 0, 0, 0);
    __atomic_store_n(&CTL->watch_ino, r < 0 ? 0 : st[KERNEL_STAT_INO_WORD], __ATOMIC_RELEASE);
    return 0;
}

/* ---- the body's functions ----------------------------------------------
 * Entered only from a stand-in that counted itself in (the gate, below),
 * and they return to it: memprof unmaps the body once no thread is
 * counted.  `frame` is the stand-in's. */

EXPORT void *body_malloc(size_t size, const uint64_t *frame)
{
    void *p = REAL(SF_MALLOC, malloc_fn *)(size);
    if (p != NULL)
        count_alloc(p, size, frame);
    return p;
}

EXPORT void body_free(void *ptr, const uint64_t *frame)
{
    (void)frame;
    forget_if_sampled(ptr);
    REAL(SF_FREE, free_fn *)(ptr);
}

/* n * size that overflows fails in the allocator: nothing to count. */
EXPORT void *body_calloc(size_t n, size_t size, const uint64_t *frame)
{
    void *p = REAL(SF_CALLOC, calloc_fn *)(n, size);
    size_t bytes;
    if (p != NULL && !__builtin_mul_overflow(n, size, &bytes))
        count_alloc(p, bytes, frame);
    return p;
}

/* The old block's sample is forgotten before the call, whatever comes of
 * it: the block moves, or changes size in place, or (size 0) is freed;
 * after the call its address may already be another thread's.  A realloc
 * that fails loses that sample.  The new block is counted like any
 * allocation. */
EXPORT void *body_realloc(void *old, size_t size, const uint64_t *frame)
{
    forget_if_sampled(old);
    void *p = REAL(SF_REALLOC, realloc_fn *)(old, size);
    if (p != NULL)
        count_alloc(p, size, frame);
    return p;
}

/* As realloc; a count that overflows fails without touching the block. */
EXPORT void *body_reallocarray(void *old, size_t n, size_t size, const uint64_t *frame)
{
    reallocarray_fn *real = REAL(SF_REALLOCARRAY, reallocarray_fn *);
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes))
        return real(old, n, size);
    forget_if_sampled(old);
    void *p = real(old, n, size);
    if (p != NULL)
        count_alloc(p, bytes, frame);
    return p;
}

EXPORT int body_posix_memalign(void **memptr, size_t align, size_t size, const uint64_t *frame)
{
    int rc = REAL(SF_POSIX_MEMALIGN, posix_memalign_fn *)(memptr, align, size);
    if (rc == 0 && *memptr != NULL)
        count_alloc(*memptr, size, frame);
    return rc;
}

/* aligned_alloc, memalign: (alignment, size). */
static inline __attribute__((always_inline)) void *aligned(enum sampler_fn fn, size_t align,
                                                           size_t size, const uint64_t *frame)
{
    void *p = REAL(fn, aligned_fn *)(align, size);
    if (p != NULL)
        count_alloc(p, size, frame);
    return p;
}

EXPORT void *body_aligned_alloc(size_t align, size_t size, const uint64_t *frame)
{
    return aligned(SF_ALIGNED_ALLOC, align, size, frame);
}

EXPORT void *body_memalign(size_t align, size_t size, const uint64_t *frame)
{
    return aligned(SF_MEMALIGN, align, size, frame);
}

/* valloc, pvalloc: (size); the sample keeps the size asked for, as for
 * every function, not the pages pvalloc rounds it up to. */
static inline __attribute__((always_inline)) void *paged(enum sampler_fn fn, size_t size,
                                                         const uint64_t *frame)
{
    void *p = REAL(fn, malloc_fn *)(size);
    if (p != NULL)
        count_alloc(p, size, frame);
    return p;
}

EXPORT void *body_valloc(size_t size, const uint64_t *frame)
{
    return paged(SF_VALLOC, size, frame);
}

EXPORT void *body_pvalloc(size_t size, const uint64_t *frame)
{
    return paged(SF_PVALLOC, size, frame);
}

/* A mapping made: its page-rounded bytes counted as a mapping's (the
 * same countdown as the heap's).  A call that failed counts nothing;
 * errno is the call's. */
EXPORT void *body_mmap(void *addr, size_t len, int prot, int flags, int fd, int64_t off,
                       const uint64_t *frame)
{
    void *p = REAL(SF_MMAP, mmap_fn *)(addr, len, prot, flags, fd, off);
    if ((uint64_t)(uintptr_t)p != KERNEL_MAP_FAILED && len != 0 && len <= MAP_LEN_MAX)
        count_mapping((uint64_t)(uintptr_t)p, map_pages(len), frame);
    return p;
}

/* Samples on the range forgotten (or cut) before the call, as free()
 * forgets before the allocator frees: after it, another thread may be
 * given the same range and sample it.  A munmap that fails (not page
 * aligned: nothing is forgotten then) loses the samples it cut. */
EXPORT int body_munmap(void *addr, size_t len, const uint64_t *frame)
{
    (void)frame;
    uint64_t a = (uint64_t)(uintptr_t)addr;
    if ((a & (MAP_PAGE - 1)) == 0 && len <= MAP_LEN_MAX)
        forget_range(a, a + map_pages(len));
    return REAL(SF_MUNMAP, munmap_fn *)(addr, len);
}

/* After the call, and only when it succeeded (mremap failing to grow in
 * place is common): samples on the old range move with it, cut to the new
 * length; bytes it grew by are counted as a new mapping's, charged to the
 * stack that grew it.  MREMAP_DONTUNMAP (or an old length of 0) leaves
 * the old range mapped: the new one is counted as a mapping of its own.
 * Between the call and this, another thread given part of the old range
 * that samples it could see that sample moved or cut: rare, and only a
 * sample lost. */
EXPORT void *body_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr,
                         const uint64_t *frame)
{
    void *p = REAL(SF_MREMAP, mremap_fn *)(old, old_len, new_len, flags, new_addr);
    uint64_t o = (uint64_t)(uintptr_t)old, n = (uint64_t)(uintptr_t)p;
    if (n == KERNEL_MAP_FAILED || old_len > MAP_LEN_MAX || new_len > MAP_LEN_MAX)
        return p;
    uint64_t ol = map_pages(old_len), nl = map_pages(new_len);
    if (ol == 0 || ((uint64_t)flags & KERNEL_MREMAP_DONTUNMAP)) {
        count_mapping(n, nl, frame);
        return p;
    }
    if (nl < ol)
        forget_range(o + nl, o + ol);
    if (n != o) {                         /* moved (in place, nothing moves) */
        forget_range(n, n + nl);
        change_range(o, o + (nl < ol ? nl : ol), 1, n);
    }
    if (nl > ol)
        count_bytes((void *)(uintptr_t)(n + ol), nl - ol, frame, SAMPLER_KIND_MAPPING);
    return p;
}

/* The program break moved from `old` to `now`: bytes it grew by counted
 * as a mapping's (not page-rounded: the break is not), bytes it gave back
 * forgotten (or cut), as munmap's. */
static void break_moved(uint64_t old, uint64_t now, const uint64_t *frame)
{
    if (now > old && now - old <= MAP_LEN_MAX)
        count_mapping(old, now - old, frame);
    else if (now < old)
        forget_range(now, old);
}

/* sbrk: returns the old break, or (void *)-1. */
EXPORT void *body_sbrk(intptr_t incr, const uint64_t *frame)
{
    void *p = REAL(SF_SBRK, sbrk_fn *)(incr);
    uint64_t old = (uint64_t)(uintptr_t)p;
    if (old != KERNEL_MAP_FAILED && incr != 0)
        break_moved(old, old + (uint64_t)(int64_t)incr, frame);
    return p;
}

/* brk: the old break is read first with the C library's sbrk(0), which
 * neither moves it nor sets errno; without an sbrk, brk is not followed. */
EXPORT int body_brk(void *addr, const uint64_t *frame)
{
    sbrk_fn *sbrk = REAL(SF_SBRK, sbrk_fn *);
    uint64_t old = sbrk ? (uint64_t)(uintptr_t)sbrk(0) : KERNEL_MAP_FAILED;
    int rc = REAL(SF_BRK, brk_fn *)(addr);
    if (rc == 0 && old != KERNEL_MAP_FAILED)
        break_moved(old, (uint64_t)(uintptr_t)addr, frame);
    return rc;
}

/* ---- the gate: the stand-ins ---------------------------------------------
 * The call tables point here, and a thread may still call a stand-in long
 * after 'prof off' (it read the slot before memprof put it back; a forked
 * child keeps its slots): this page stays mapped for the process's life.
 * It reaches only itself (the allocator's functions in the header, which
 * memprof fills) and the gate's data page after it, never the body unless
 * the gate's state says so, and then only counted in its lane: the code
 * here goes in section .text.gate, inlines everything it uses, and
 * tools/embed_image.py checks that it branches and refers nowhere else. */

/* arm64: the stand-ins packed at 4 bytes (its instructions' size) rather
 * than 16, or the sixteen of them and the header outgrow the gate's page
 * (image.lds checks it: 0xfd8 of 0xff8 bytes at gcc 12 -O2); x86-64 keeps
 * the compiler's alignment, with room to spare. */
#if defined(__aarch64__)
#define GATE_ALIGN optimize("align-functions=4")
#else
#define GATE_ALIGN
#endif
#define GATE_FN __attribute__((section(".text.gate"), visibility("hidden"), used, noinline, \
                               GATE_ALIGN))
#define GATE_INLINE static inline __attribute__((always_inline))

extern const struct sampler_image_header sampler_image_start __attribute__((visibility("hidden")));
extern struct sampler_gate sampler_gate_block __attribute__((visibility("hidden")));
#define GATE ARCH_DATA(&sampler_gate_block)
#define GATE_REAL(fn, type) \
    ((type)(uintptr_t)LOAD(&ARCH_DATA(&sampler_image_start)->real[fn]))
#define GATE_BODY(fn, type) ((type)(uintptr_t)LOAD(&GATE->body[fn]))

/* Counted in, or NULL: the body is not to be entered (memprof is not
 * sampling, this is a forked child, memprof is taking it out).  The count
 * comes before the state is read again, and both are sequentially
 * consistent, as memprof's side is (state written, then lanes read): a
 * thread memprof did not see counted sees the state it wrote. */
GATE_INLINE int64_t *gate_enter(void)
{
    struct sampler_gate *g = GATE;
    if (__builtin_expect(LOAD(&g->state) != SAMPLER_ON, 0))
        return NULL;
    uint64_t tp = arch_thread_pointer();
    int64_t *n = &g->lanes[((tp * UINT64_C(0x9e3779b97f4a7c15)) >> 59) &
                           (SAMPLER_GATE_LANES - 1)].inside;
    __atomic_fetch_add(n, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&g->state, __ATOMIC_SEQ_CST) == SAMPLER_ON)
        return n;
    __atomic_fetch_sub(n, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

/* Counted out, after the body returned here: its stores come first. */
GATE_INLINE void gate_leave(int64_t *n)
{
    __atomic_fetch_sub(n, 1, __ATOMIC_SEQ_CST);
}

_Static_assert(SAMPLER_GATE_LANES == 32, "gate_enter() takes the top 5 bits of a hash");

/* One stand-in: straight through to the allocator unless counted in;
 * then the body, and counted out. */
#define STAND_IN(ret, name, fn, params, args, body_type, real_type)            \
    GATE_FN ret name params                                                    \
    {                                                                          \
        int64_t *n_ = gate_enter();                                            \
        if (n_ == NULL)                                                        \
            return GATE_REAL(fn, real_type) args;                              \
        ret r_ = GATE_BODY(fn, body_type) BODY_ARGS args;                      \
        gate_leave(n_);                                                        \
        return r_;                                                             \
    }
#define BODY_ARGS(...) (__VA_ARGS__, MY_FRAME())

typedef void *body_malloc_fn(size_t, const uint64_t *);
typedef void body_free_fn(void *, const uint64_t *);
typedef void *body_calloc_fn(size_t, size_t, const uint64_t *);
typedef void *body_realloc_fn(void *, size_t, const uint64_t *);
typedef void *body_reallocarray_fn(void *, size_t, size_t, const uint64_t *);
typedef int body_posix_memalign_fn(void **, size_t, size_t, const uint64_t *);
typedef void *body_mmap_fn(void *, size_t, int, int, int, int64_t, const uint64_t *);
typedef int body_munmap_fn(void *, size_t, const uint64_t *);
typedef void *body_mremap_fn(void *, size_t, size_t, int, void *, const uint64_t *);
typedef void *body_sbrk_fn(intptr_t, const uint64_t *);
typedef int body_brk_fn(void *, const uint64_t *);

STAND_IN(void *, sampler_malloc, SF_MALLOC, (size_t size), (size), body_malloc_fn *,
         malloc_fn *)
STAND_IN(void *, sampler_calloc, SF_CALLOC, (size_t n, size_t size), (n, size),
         body_calloc_fn *, calloc_fn *)
STAND_IN(void *, sampler_realloc, SF_REALLOC, (void *old, size_t size), (old, size),
         body_realloc_fn *, realloc_fn *)
STAND_IN(void *, sampler_reallocarray, SF_REALLOCARRAY, (void *old, size_t n, size_t size),
         (old, n, size), body_reallocarray_fn *, reallocarray_fn *)
STAND_IN(int, sampler_posix_memalign, SF_POSIX_MEMALIGN,
         (void **memptr, size_t align, size_t size), (memptr, align, size),
         body_posix_memalign_fn *, posix_memalign_fn *)
STAND_IN(void *, sampler_aligned_alloc, SF_ALIGNED_ALLOC, (size_t align, size_t size),
         (align, size), body_calloc_fn *, aligned_fn *)
STAND_IN(void *, sampler_memalign, SF_MEMALIGN, (size_t align, size_t size), (align, size),
         body_calloc_fn *, aligned_fn *)
STAND_IN(void *, sampler_valloc, SF_VALLOC, (size_t size), (size), body_malloc_fn *,
         malloc_fn *)
STAND_IN(void *, sampler_pvalloc, SF_PVALLOC, (size_t size), (size), body_malloc_fn *,
         malloc_fn *)
/* mmap64 is mmap on a 64-bit C library: one stand-in for both (memprof
 * points an mmap64 slot here only where both names are one function). */
STAND_IN(void *, sampler_mmap, SF_MMAP,
         (void *addr, size_t len, int prot, int flags, int fd, int64_t off),
         (addr, len, prot, flags, fd, off), body_mmap_fn *, mmap_fn *)
STAND_IN(int, sampler_munmap, SF_MUNMAP, (void *addr, size_t len), (addr, len),
         body_munmap_fn *, munmap_fn *)
/* mremap is variadic (its fifth argument only with MREMAP_FIXED); on both
 * CPUs a variadic argument travels as a named one would, in the fifth
 * argument register, which is passed on as it came (unused when the
 * caller passed none). */
STAND_IN(void *, sampler_mremap, SF_MREMAP,
         (void *old, size_t old_len, size_t new_len, int flags, void *new_addr),
         (old, old_len, new_len, flags, new_addr), body_mremap_fn *, mremap_fn *)
STAND_IN(void *, sampler_sbrk, SF_SBRK, (intptr_t incr), (incr), body_sbrk_fn *, sbrk_fn *)
STAND_IN(int, sampler_brk, SF_BRK, (void *addr), (addr), body_brk_fn *, brk_fn *)

GATE_FN void sampler_free(void *ptr)
{
    int64_t *n = gate_enter();
    if (n == NULL) {
        GATE_REAL(SF_FREE, free_fn *)(ptr);
        return;
    }
    GATE_BODY(SF_FREE, body_free_fn *)(ptr, MY_FRAME());
    gate_leave(n);
}
