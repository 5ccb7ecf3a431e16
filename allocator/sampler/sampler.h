/* sampler.h - memprof's heap sampler for a process whose allocator has no
 * profiler memprof can turn on (glibc malloc, tcmalloc, mimalloc, jemalloc
 * started without prof:true): put in at 'prof on', taken out at 'prof off'
 * and at every end of the session (docs/sampler.md).
 *
 * Going in: memprof builds unwind rows for every mapped object (from its
 * .eh_frame, outside the process), and in one stop of one thread the
 * process makes a memfd named "memprof-sampler", maps it (code read+exec,
 * data private read+write) and a pipe whose write end memprof takes; no
 * allocator function is called.  Then, with no thread stopped, memprof
 * points each call-table (GOT) slot of malloc, free, calloc, realloc and
 * the aligned allocators at the sampler's stand-ins, recording each slot's
 * old value in the sampler's data first.  Coming out: every slot gets its
 * old value back, and once no thread is inside the sampler's body (its
 * gate counts them) the body is unmapped: only the gate stays, one page of
 * stand-ins passing calls straight through and one data page (a thread
 * may have read a slot before it was put back), reused at the next 'prof
 * on'.  A memprof that dies leaves the pipe hung up: the sampler stops
 * sampling by itself, and the next session puts the slots back
 * (sampler_sweep). */
#ifndef MEMPROF_SAMPLER_H
#define MEMPROF_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "allocator/allocator.h"
#include "allocator/sampler/seccomp_check.h"
#include "attach/target.h"
#include "lib/base/error.h"

struct sampler;

/* What 'prof on' did, for the operator. */
#define SAMPLER_NO_CFI_NAMED 4
struct sampler_on_report {
    size_t objects;            /* objects whose call tables were changed */
    size_t slots;              /* slots pointed at the sampler */
    size_t skipped;            /* slots left alone: they held neither the
                                * allocator's function nor a lazy-binding stub */
    size_t rows;               /* unwind rows written */
    size_t no_cfi;             /* objects with code of their own but no
                                * call-frame information (data-only ones,
                                * which no stack passes through, left out) */
    char no_cfi_names[SAMPLER_NO_CFI_NAMED][128];  /* the first ones' file
                                * names (the target's: escape to show) */
    double build_ms, patch_ms;
    double stop_us;            /* how long the borrowed thread was held */
    double stop_wall_ms;       /* the stop with memprof's choosing of the
                                * thread (listing and looking at threads) */
    bool reused;               /* the stand-ins' page from before was used again */
};

/* What a dump found besides the samples. */
struct sampler_dump_info {
    uint64_t samples, dropped, truncated, live;
    size_t unreadable;         /* entries changing while read, left out */
    unsigned live_max;         /* live heap samples the sampler keeps at most */
    unsigned maps_max;         /* and mapping samples */
    bool orphaned;             /* the sampler had stopped on its own */
};

/* Why the sampler cannot go into this process (a sentence saying what to
 * do instead), or NULL when it can. */
const char *sampler_refusal(struct target *t, const struct allocator_id *a, char *buf,
                            size_t len);

/* Why the sampler may not go in under the process's seccomp filters
 * (allocator/sampler/seccomp_check.h), or NULL.  A process under a filter
 * has it read in one stop; the verdict is kept while the threads' filters
 * stay as they were. */
const char *sampler_filter_refusal(struct sampler *sm, struct target *t, char *buf,
                                   size_t len);

/* The sampler's own system call the kept seccomp refusal why is for
 * ("process_vm_readv"), or NULL when why is not that refusal or it is for
 * another call. */
const char *sampler_filter_denied_call(const struct sampler *sm, const char *why);

/* Whether the sampler, as put in (or going in under the kept verdict),
 * checks stack pages with rt_sigprocmask: the process's filter denies
 * process_vm_readv (abi.h, SAMPLER_PROBE_SIGMASK). */
bool sampler_probes_by_sigmask(const struct sampler *sm);

/* What is known of that verdict without a stop (seccomp_check.h's
 * sampler_seccomp_known): never reads a filter. */
enum seccomp_known sampler_filter_known(struct sampler *sm, struct target *t, int *nfilters,
                                        char *buf, size_t len);

struct sampler *sampler_new(void);
/* The process exec'd or exited: its sampler went with the old program.
 * memprof's side forgets it (nothing is written anywhere). */
void sampler_forget(struct sampler *sm);

/* Frees memprof's side only: call sampler_off first. */
void sampler_free(struct sampler *sm);

bool sampler_is_on(const struct sampler *sm);
/* Bytes of the sampler's body the last 'prof off' left mapped because a
 * thread was still inside it (a call to the allocator that had not
 * returned), 0 when it is unmapped. */
uint64_t sampler_kept_bytes(const struct sampler *sm);
/* The process the stand-ins' page came from by fork, 0 when it is this
 * process's own (or there is none). */
int64_t sampler_inherited_from(const struct sampler *sm);
unsigned sampler_lg_sample(const struct sampler *sm);

/* Whether the next sampler_on follows mappings alone (mmap, munmap,
 * mremap, sbrk and brk outside the allocator's object), leaving malloc and its kin to
 * the allocator's own profiler (a jemalloc started with prof:true): false
 * (heap and mappings) until set. */
void sampler_set_mappings_only(struct sampler *sm, bool mappings_only);
bool sampler_mappings_only(const struct sampler *sm);

/* Put the sampler in (or turn an inert one on again), sampling every
 * 2^lg bytes on average.  0, or -1 with err (nothing left changed). */
int sampler_on(struct sampler *sm, struct target *t, const struct allocator_id *a,
               unsigned lg, struct sampler_on_report *rep, struct mp_error *err);
/* A new mean for the next samples (those kept stay: they were taken at
 * the rate the dump header will say; 'prof sample' also clears them). */
int sampler_set_rate(struct sampler *sm, struct target *t, unsigned lg,
                     struct mp_error *err);
/* Take it out: every slot back, sampling off, samples forgotten.  Returns
 * the number of slots put back, or -1 with err (then the slots that could
 * not be written are named in err). */
long sampler_off(struct sampler *sm, struct target *t, struct mp_error *err);

/* The live samples as a jemalloc heap_v2 profile (with the process's
 * memory map), read from the process's memory without stopping it.
 * *data malloc'd. */
int sampler_dump(struct sampler *sm, struct target *t, char **data, size_t *len,
                 struct sampler_dump_info *info, struct mp_error *err);

/* At attach: a sampler a memprof that is gone left on in the process is
 * made inert, its slots put back and its body unmapped; stand-ins the
 * process inherited by fork have their slots put back.  Returns how many
 * were found (0 or more), with note saying what was done, or -1 with err. */
int sampler_sweep(struct sampler *sm, struct target *t, char *note, size_t notelen,
                  struct mp_error *err);

#endif
