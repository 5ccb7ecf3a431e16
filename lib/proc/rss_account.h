/* rss_account.h - where a process's RSS is, mapping by mapping, from one
 * read of /proc/PID/smaps: every mapping's Rss in exactly one part (stacks
 * found by the threads' stack pointers, memprof's sampler region, the
 * anonymous memory an allocator's figure is set against, shared memory,
 * each file-backed object, the rest), so that the parts add up to the
 * RSS of that same read exactly.  Pure: the text is the kernel's, cut or
 * hostile in shape; nothing here opens a file. */
#ifndef MEMPROF_RSS_ACCOUNT_H
#define MEMPROF_RSS_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A file-backed object's resident bytes (its path, cut to fit). */
struct rss_file {
    char path[256];
    uint64_t rss;
};

/* Which part a mapping's Rss went to. */
enum rss_part {
    RSS_PART_SAMPLER, RSS_PART_MAIN_STACK, RSS_PART_THREAD_STACK, RSS_PART_UNSEEN_STACK,
    RSS_PART_ANON, RSS_PART_SHARED, RSS_PART_OTHER, RSS_PART_FILE,
};

/* One mapping as this read saw it (for what grew between two reads, and
 * where the transparent huge pages are). */
struct rss_mapping {
    uint64_t start, end, rss, anon_huge;
    enum rss_part part;
    bool brk;                /* [heap] */
    bool heap;               /* one of the heaps the caller named (glibc's
                              * thread arenas') */
    char path[256];          /* its path or [name], cut to fit; "" anonymous */
};

struct rss_account {
    uint64_t rss;            /* the sum of every mapping's Rss */
    uint64_t swap, anon_huge, lazyfree;   /* within the mappings (not parts) */
    /* the parts: */
    uint64_t sampler;        /* /memfd:memprof-sampler (memprof's own) */
    uint64_t main_stack;     /* [stack] */
    uint64_t thread_stacks;  /* anonymous mappings holding a thread's sp */
    uint64_t unseen_stacks;  /* laid out as a stack (above a PROT_NONE
                              * guard) but holding no sp seen: running
                              * threads, or exited threads' cached stacks */
    uint64_t anon;           /* other private anonymous memory and [heap]:
                              * the allocators' heaps and every other mmap */
    uint64_t shared;         /* shared mappings not backed by a regular file
                              * (shared anonymous, /dev/shm, SysV, memfd) */
    uint64_t other;          /* [vdso], [vvar] and the like */
    struct rss_file *files;  /* each file-backed object, by path */
    size_t nfiles, capfiles;
    unsigned stacks_seen;    /* threads whose sp lay in a mapping */
    struct rss_mapping *maps; /* every mapping, in the text's order */
    size_t nmaps, capmaps;
};

/* Account the smaps text; sps are the stack pointers of the threads that
 * could be read (any order).  0, or -1 out of memory. */
int rss_account_smaps(const char *text, size_t len, const uint64_t *sps, size_t nsp,
                      struct rss_account *out);
/* The same, heaps[0..nheaps) the starts of mappings known to hold the
 * allocator's heap (glibc's thread arenas' heaps, tied to their arenas):
 * anonymous memory, never a stack (a heap whose mapping lies just above
 * another heap's PROT_NONE reserve is laid out as a stack is). */
int rss_account_smaps_heaps(const char *text, size_t len, const uint64_t *sps, size_t nsp,
                            const uint64_t *heaps, size_t nheaps, struct rss_account *out);
void rss_account_free(struct rss_account *a);

/* The stack pointer in the text of /proc/PID/task/TID/syscall ("NR a1 ..
 * a6 SP PC" while in a system call, "-1 SP PC" blocked elsewhere;
 * "running" gives none).  Returns 1 with *sp, 0 when there is none. */
int rss_syscall_sp(const char *text, size_t len, uint64_t *sp);

#endif
