/* abi.h - the memory shared by memprof and the heap sampler it puts into a
 * process (docs/sampler.md), in two parts:
 *  - the gate, kept for the process's life once made: one page of code
 *    (memfd "memprof-sampler", read+exec) holding the image's header and
 *    the stand-ins the call tables point at, and right after it one
 *    private anonymous page of its own (struct sampler_gate, wiped on
 *    fork) saying whether the stand-ins enter the body and counting the
 *    threads inside it;
 *  - the body, mapped at 'prof on' and unmapped at 'prof off' once no
 *    thread is inside it: the whole image (memfd "memprof-sampler-body",
 *    read+exec, not inherited by fork) and, SAMPLER_CODE_SIZE after its
 *    start, its data (private anonymous, read+write: struct sampler_data).
 * memprof fills the data before any call can reach the code, reads
 * samples out of it without stopping a thread, and finds what a dead
 * memprof left by this layout.
 *
 * Included by memprof (allocator/sampler/) and by the sampler itself
 * (allocator/sampler/inproc/, built freestanding for the target): fixed
 * widths only, no pointers, no libc.  Every field the sampler reads is
 * also untrusted when memprof reads it back: a process's user can write
 * its own memory. */
#ifndef MEMPROF_SAMPLER_ABI_H
#define MEMPROF_SAMPLER_ABI_H

#include <stdint.h>

#define SAMPLER_MAGIC      UINT64_C(0x3170616d72706d6d)   /* "mmprmap1" */
#define SAMPLER_ABI        4u

/* The image: code first, the data at this fixed distance after its start
 * (the code reaches its data RIP-relative: no relocation).  Its first page
 * is the gate's code, which reaches only the header and the gate's data
 * page right after it (SAMPLER_GATE_SIZE on); the body's code starts
 * after that page's place (tools/embed_image.py checks both). */
#define SAMPLER_CODE_SIZE  0x10000u
#define SAMPLER_GATE_SIZE  0x1000u
#define SAMPLER_BODY_CODE  0x2000u

/* The functions the sampler stands in for.  Order is the ABI. */
enum sampler_fn {
    SF_MALLOC,
    SF_FREE,
    SF_CALLOC,
    SF_REALLOC,
    SF_REALLOCARRAY,
    SF_POSIX_MEMALIGN,
    SF_ALIGNED_ALLOC,
    SF_MEMALIGN,
    SF_VALLOC,
    SF_PVALLOC,
    /* The mapping functions (docs/sampler.md, "Mappings"): their slots in
     * the allocator's own object are never pointed at the stand-ins, so
     * the allocator's own pages are not counted twice. */
    SF_MMAP,
    SF_MMAP64,
    SF_MUNMAP,
    SF_MREMAP,
    SF_SBRK,
    SF_BRK,
    SF_COUNT
};
#define SF_FIRST_MAPPING SF_MMAP

/* At offset 0 of the code image. */
struct sampler_image_header {
    uint64_t magic;            /* SAMPLER_MAGIC */
    uint32_t abi;              /* SAMPLER_ABI */
    uint32_t code_bytes;       /* bytes of the image in use (<= SAMPLER_CODE_SIZE) */
    uint32_t wrapper[SF_COUNT];  /* offset of each stand-in (in the gate's page) */
    uint32_t body[SF_COUNT];   /* offset of the body's function each enters */
    uint32_t make_watch;       /* int64_t make_watch(void), in the body: memprof
                                * calls it in the stop that puts the sampler in */
    uint32_t gate_bytes;       /* where the gate's code ends (<= SAMPLER_GATE_SIZE) */
    /* Zero in the image; memprof fills them in the gate's copy before the
     * process maps it: */
    uint64_t real[SF_COUNT];   /* the allocator's own functions: the stand-ins
                                * pass every call through to them */
    int64_t pid;               /* the process the gate was made for (getpid()):
                                * in a forked child it names the parent */
};

/* The gate's data page (private, anonymous, MADV_WIPEONFORK: a forked
 * child sees it zeroed, so its stand-ins pass every call straight through
 * and never enter the body, which fork does not copy). */
#define SAMPLER_GATE_LANES 32u
struct sampler_lane {
    int64_t inside;            /* threads of this lane inside the body */
    uint64_t pad[7];           /* one cache line each */
};
struct sampler_gate {
    uint64_t mark;             /* SAMPLER_OWNER_MARK in the process that made it */
    uint32_t state;            /* SAMPLER_ON: the stand-ins enter the body;
                                * anything else: straight through */
    uint32_t pad0;
    uint64_t body[SF_COUNT];   /* the body's functions (absolute) */
    uint64_t reserved[4];
    /* A stand-in counts itself in its lane (by thread pointer) before it
     * reads state and out after the body returns to it: once memprof has
     * set state OFF and then read every lane 0, no thread is in the body
     * or can enter it, and memprof unmaps it. */
    struct sampler_lane lanes[SAMPLER_GATE_LANES];
};

enum sampler_state {
    SAMPLER_OFF = 0,           /* pass through: every call goes straight on */
    SAMPLER_ON = 1,            /* sample allocations, forget freed samples */
    SAMPLER_ORPHAN = 2,        /* set by the sampler itself when the memprof
                                * holding its watch pipe is gone: pass through */
};

/* How the stack walk checks a page readable before it reads a word there
 * (sampler_ctl.probe; docs/sampler.md, "Under a seccomp filter"). */
enum sampler_probe {
    SAMPLER_PROBE_VM_READV = 0,  /* process_vm_readv on the process itself,
                                  * one word of each of 4 pages in one call */
    SAMPLER_PROBE_SIGMASK = 1,   /* rt_sigprocmask with an invalid `how`, one
                                  * page a call: where the filter denies
                                  * process_vm_readv (Docker's and
                                  * containerd's default profiles without
                                  * CAP_SYS_PTRACE) */
};

/* What a sample is of (sampler_entry.kind). */
enum sampler_kind {
    SAMPLER_KIND_HEAP = 0,     /* a block from malloc and its kin */
    SAMPLER_KIND_MAPPING = 1,  /* pages mapped by mmap, mremap, sbrk or brk,
                                * still mapped */
};

/* Limits: the sampler never grows.  A sample beyond them is counted, not
 * kept. */
#define SAMPLER_MAX_FRAMES   128u          /* as jemalloc's PROF_BT_MAX */
#define SAMPLER_TABLE_LG     12u
#define SAMPLER_TABLE_CAP    (1u << SAMPLER_TABLE_LG)  /* sample slots */
#define SAMPLER_TABLE_LIVE   (SAMPLER_TABLE_CAP / 4 * 3) /* live samples kept at most */
#define SAMPLER_PROBE_MAX    64u           /* slots looked at for one pointer */
#define SAMPLER_FILTER_LG    15u           /* bytes of the free() filter, lg */
#define SAMPLER_THREAD_SLOTS 256u
#define SAMPLER_PATCH_MAX    4096u
#define SAMPLER_MAPS_CAP     512u          /* mapping samples kept at most */

/* keys[] values besides a pointer. */
#define SAMPLER_KEY_EMPTY  UINT64_C(0)
#define SAMPLER_KEY_TOMB   UINT64_C(1)     /* was a sample, freed */
#define SAMPLER_KEY_BUSY   UINT64_C(2)     /* being written or removed */

/* Where a pointer's sample slot search starts, and its byte in the free()
 * filter: the same hash on both sides. */
static inline uint64_t sampler_hash(uint64_t ptr)
{
    return (ptr >> 4) * UINT64_C(0x9e3779b97f4a7c15);
}
static inline uint32_t sampler_slot_of(uint64_t ptr)
{
    return (uint32_t)(sampler_hash(ptr) >> (64 - SAMPLER_TABLE_LG));
}
static inline uint32_t sampler_filter_of(uint64_t ptr)
{
    return (uint32_t)((sampler_hash(ptr) >> 17) & ((1u << SAMPLER_FILTER_LG) - 1));
}

/* One live sample.  Written as a sequence lock: seq odd while it changes;
 * a reader (memprof, from outside, while the process runs) keeps an entry
 * only when seq is even, equals seq_end, and a second read finds the same
 * bytes. */
struct sampler_entry {
    uint64_t seq;
    uint64_t ptr;              /* 0: none */
    uint64_t size;             /* bytes asked for */
    uint32_t nframes;
    uint16_t truncated;        /* the walk stopped early (no unwind row, limit) */
    uint16_t kind;             /* enum sampler_kind */
    uint64_t frames[SAMPLER_MAX_FRAMES];  /* return addresses, innermost first:
                                           * frames[0] is in the allocating function */
    uint64_t seq_end;
};

/* A thread's countdown to its next sample, found by hashing its thread
 * pointer (threads that collide share one: sampling stays unbiased). */
struct sampler_thread {
    uint64_t tp;               /* thread pointer of the owner, 0: free */
    int64_t bytes_left;        /* sample when an allocation takes it to <= 0 */
    uint64_t rng;              /* xorshift state */
    uint64_t generation;       /* ctl.generation the countdown was drawn in:
                                * another one starts a new countdown */
    uint64_t draws;            /* countdowns run out since it started: the
                                * watch pipe is polled every 16th */
    uint64_t pad[3];           /* one cache line each */
};

/* One call-table slot memprof pointed at a stand-in, with what it held:
 * recorded before the slot is written, so that whoever finds the sampler
 * (this memprof at the end, or the next one after a SIGKILL) can put every
 * slot back. */
struct sampler_patch {
    uint64_t slot;             /* address of the GOT entry */
    uint64_t original;         /* its value before */
    uint64_t wrapper;          /* the stand-in written there */
};

/* How to find the caller's frame from a return address inside a function:
 * the row with the greatest pc <= address applies (rows sorted by pc). */
enum sampler_cfa {
    SAMPLER_CFA_NONE = 0,      /* no unwind information here: stop */
    SAMPLER_CFA_SP = 1,        /* CFA = stack pointer + cfa_off */
    SAMPLER_CFA_FP = 2,        /* CFA = frame pointer + cfa_off */
};
struct sampler_row {
    uint64_t pc;               /* runtime address where this row starts */
    int32_t cfa_off;
    int16_t fp_off;            /* caller's frame pointer saved at CFA + fp_off;
                                * 0: the frame pointer is not changed here */
    int8_t ra_off;             /* return address saved at CFA + ra_off */
    uint8_t cfa_reg;           /* enum sampler_cfa */
};

/* What the gate's mark holds in the process that made it. */
#define SAMPLER_OWNER_MARK UINT64_C(0x6d656d70726f6621)

struct sampler_ctl {
    uint64_t magic;            /* SAMPLER_MAGIC */
    uint32_t abi;              /* SAMPLER_ABI */
    uint32_t state;            /* enum sampler_state */
    uint64_t generation;       /* bumped by memprof at each 'prof on' */
    int64_t tgid;              /* the process as it sees itself (getpid()) */
    int32_t watch_fd;          /* read end of a pipe whose write end memprof
                                * holds: hung up = memprof gone.  The sampler
                                * makes the pipe itself (make_watch) and
                                * records both ends and the inode here before
                                * it returns, so that a memprof killed at any
                                * point leaves them for the next one to close */
    uint32_t lg_sample;        /* mean bytes between samples = 2^lg_sample */
    uint64_t seed;
    uint64_t real[SF_COUNT];   /* the allocator's own functions */
    uint64_t nrows;            /* rows[] in use */
    uint64_t npatches;         /* patches[] in use */
    int64_t memprof_pid;       /* for the next memprof's message */
    /* Counters kept by the sampler (relaxed): */
    uint64_t samples;          /* samples taken */
    uint64_t dropped;          /* samples not kept: table full or probe limit */
    uint64_t truncated;        /* samples whose walk stopped early */
    uint64_t live;             /* entries in the table now */
    uint64_t watch_ino;        /* the pipe's inode: whoever closes watch_fd in
                                * the process checks it names this pipe */
    int32_t watch_write;       /* the pipe's write end while the process still
                                * holds it (inside the stop that makes it) */
    uint32_t probe;            /* enum sampler_probe: how the walk checks a
                                * stack page readable (memprof's choice from
                                * the process's seccomp filters) */
    uint64_t gate;             /* the gate's data page (struct sampler_gate):
                                * its mark tells the process from a forked
                                * child; an orphan sets its state too */
    uint64_t data_bytes;       /* bytes of this data mapping (rows included) */
    uint64_t map_live;         /* mapping samples kept now: munmap looks at
                                * the mapping table only when it is not 0 */
    uint64_t reserved[3];
};

/* The body's data (at SAMPLER_CODE_SIZE from its start); rows follow it,
 * ctl.nrows of them. */
struct sampler_data {
    struct sampler_ctl ctl;
    struct sampler_thread threads[SAMPLER_THREAD_SLOTS];
    uint8_t filter[1u << SAMPLER_FILTER_LG];  /* live samples per filter byte
                                               * (255 sticks: never 0 again) */
    uint64_t keys[SAMPLER_TABLE_CAP];
    struct sampler_entry entries[SAMPLER_TABLE_CAP];
    /* Mapping samples, apart from the heap's: munmap and mremap act on a
     * range, which a hash by address cannot find, so these few are looked
     * at one by one.  map_keys[i] is EMPTY, BUSY (taken by one thread) or
     * the mapping's start; map_entries[i] has ptr = start, size = bytes. */
    uint64_t map_keys[SAMPLER_MAPS_CAP];
    struct sampler_entry map_entries[SAMPLER_MAPS_CAP];
    struct sampler_patch patches[SAMPLER_PATCH_MAX];
    struct sampler_row rows[];
};

_Static_assert(sizeof(struct sampler_gate) <= SAMPLER_GATE_SIZE, "the gate's data is one page");
_Static_assert(sizeof(struct sampler_lane) == 64, "one cache line per lane");

#endif
