/* memory_account.h - where the attached process's RSS is, in named parts
 * that add up to it exactly (one read of smaps, lib/proc/rss_account.c),
 * with the allocator's own figure of its heap set against the anonymous
 * memory: what every front end shows ('memory' at the prompt; its JSON
 * "rss_bytes" and "categories"). */
#ifndef MEMPROF_MEMORY_ACCOUNT_H
#define MEMPROF_MEMORY_ACCOUNT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proc/rss_account.h"
#include "session/session.h"

struct memory_part {
    const char *key;    /* stable, for labels: sampler, main_stack,
                         * thread_stacks, unseen_stacks, heap, anon_other,
                         * anon_unsplit, shared, other, file */
    char name[320];     /* for people (a file's path in it) */
    uint64_t bytes;
};

struct memory_account {
    struct rss_account rss;     /* rss.rss: the total the parts add up to */
    struct memory_part *parts;  /* largest first, none of 0 bytes */
    size_t nparts, cap;
    uint64_t chunks_rss;        /* glibc's mmapped chunks found (in the heap) */
    unsigned chunks;
    unsigned threads;           /* threads listed in /proc/PID/task */
    unsigned threads_with_sp;   /* of which a stack pointer could be read */
};

/* The allocator's own figure of its heap's resident memory (jemalloc's
 * stats.resident, glibc's from-the-system), and what it is made of where
 * the allocator says (adding up to total, or n 0). */
struct memory_heap {
    const char *who;           /* the allocator's name */
    uint64_t total;            /* UINT64_MAX when unknown */
    bool measured;             /* total is the Rss of the heap's own mappings
                                * (glibc's arenas), not the allocator's figure */
    size_t n;
    struct {
        const char *what;
        uint64_t bytes;
    } part[3];
    /* The starts of mappings known to hold the heap (glibc's thread
     * arenas', found by session/glibc_arenas.c), or none: anonymous
     * memory, never taken for a thread's stack. */
    const uint64_t *heap_starts;
    size_t nheap_starts;
    /* glibc's: its mmapped chunks are looked for among the other anonymous
     * mappings (session/glibc_chunks.h) and counted in a measured heap. */
    bool glibc_chunks;
};

/* heap's figures, from jemalloc's summary (resident = active + resident
 * metadata + unused dirty pages) or another allocator's statistics (in
 * use, free). */
void memory_heap_jemalloc(struct memory_heap *h, uint64_t resident, uint64_t active);
void memory_heap_other(struct memory_heap *h, const char *who, uint64_t from_system,
                       uint64_t in_use);
/* The heap's resident bytes measured (every arena's mappings), of which
 * at most in_use is in use. */
void memory_heap_measured(struct memory_heap *h, const char *who, uint64_t resident,
                          uint64_t in_use);

/* From smaps, the process's smaps as its caller read it once for every
 * part of one 'memory' (NULL when it could not be read): 0, or -1 with
 * why. */
int memory_account_read(struct session *s, const struct memory_heap *heap, const char *smaps,
                        size_t smaps_len, struct memory_account *out, char *why,
                        size_t whylen);
void memory_account_free(struct memory_account *a);

/* Into o: rss_bytes, categories [{name, key, bytes}] (adding up to rss_bytes),
 * rss_anon_huge, rss_lazyfree, glibc_mmapped_chunks(_bytes), threads,
 * threads_with_sp. */
void memory_account_json(json_object *o, const struct memory_account *a);

/* The bytes of every part with that key (files: all of them). */
uint64_t memory_account_key(const struct memory_account *a, const char *key);

/* The keys, in a fixed order (MEMORY_ACCOUNT_NKEYS of them). */
#define MEMORY_ACCOUNT_NKEYS 10
extern const char *const memory_account_keys[MEMORY_ACCOUNT_NKEYS];

#endif
