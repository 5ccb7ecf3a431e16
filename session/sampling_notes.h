/* sampling_notes.h - what the session tells an operator about profiling a
 * process with memprof's heap sampler: how to profile it (the advice every
 * refusal names, true for the process it is shown for), why a sampler dump
 * holds no sample, and what memory the sampler cannot see.  Both front
 * ends use them. */
#ifndef MEMPROF_SAMPLING_NOTES_H
#define MEMPROF_SAMPLING_NOTES_H

#include <stdbool.h>
#include <stddef.h>

#include "allocator/sampler/sampler.h"
#include "session/session.h"

/* How to get a heap profile of the attached process, as a clause that
 * follows "To profile it" / "to profile it": "'prof on' puts memprof's
 * heap sampler in (no restart) ..." where the sampler can go in, else why
 * it cannot and the restart (or rebuild) that would profile it. */
void sampling_how_to_profile(struct session *s, char *buf, size_t len);

/* 0 when the process uses jemalloc; else -1 after saying that cmd drives
 * jemalloc, what the process uses, how to profile it (as
 * sampling_how_to_profile) and what memprof can do for it meanwhile. */
int sampling_needs_jemalloc(struct session *s, const char *cmd);

/* After a sampler dump d that holds no live sample, with the counters
 * that dump read (info): a note on stderr saying that nothing is held,
 * why (nothing sampled since 'prof on', or every sample since freed) and
 * what to do (a dump later, diff, a run).  Nothing when d holds samples.
 * With first (the first dump since 'prof on'), also a note on memory a
 * program maps itself (sampling_unseen_text), whatever d holds. */
void sampling_dump_notes(struct session *s, const struct session_dump *d,
                         const struct sampler_dump_info *info, bool first);

/* The same as one line without "note: " (for serve's pprof comment), or
 * "" when d holds samples: what names the dump (NULL: d's name), todo
 * says what to do in the front end's words. */
void sampling_empty_dump_text(struct session *s, const struct session_dump *d,
                              const struct sampler_dump_info *info, const char *what,
                              const char *todo, char *buf, size_t len);

/* Memory of the process that does not come through malloc() and its kin,
 * as far as memprof can tell from the objects it maps: APR's pools
 * (libapr-1, Apache's memory), whose allocator takes its blocks with
 * mmap() in Debian's build, and where the sampler shows them (as
 * mappings, not heap).  One sentence without "note: ", or "" when
 * memprof knows of none.  (The name is older than the sampler's
 * mappings, when that memory was unseen.) */
void sampling_unseen_text(struct session *s, char *buf, size_t len);

#endif
