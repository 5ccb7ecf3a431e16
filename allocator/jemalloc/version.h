/* version.h - jemalloc's version string ("5.2.1-0-gea6b3e9...", its
 * `version` mallctl: read from the target, so untrusted) parsed, and what
 * memprof does differently by version: each fact below is from jemalloc's
 * own source, and names the versions it holds for. */
#ifndef MEMPROF_JEMALLOC_VERSION_H
#define MEMPROF_JEMALLOC_VERSION_H

#include <stdbool.h>
#include <stddef.h>

/* jemalloc's configure writes "MAJOR.MINOR.PATCH-N-gCOMMIT" (git describe:
 * N commits after the release's tag). */
struct jemalloc_version {
    bool known;                 /* parsed, and not the 0.0.0 of a build outside git */
    unsigned major, minor, patch;
    unsigned long commits;      /* N: 0 for a release */
};

/* Parse at most len bytes of text (stops at a NUL).  Returns true when it
 * reads as a version; v->known says so too. */
bool jemalloc_version_parse(const char *text, size_t len, struct jemalloc_version *v);

/* "5.2.1", "5.2.1-21" (a development build) or "of unknown version". */
void jemalloc_version_text(const struct jemalloc_version *v, char *buf, size_t len);

/* <0, 0, >0 as v is before, at or after MAJOR.MINOR.PATCH-COMMITS. */
int jemalloc_version_cmp(const struct jemalloc_version *v, unsigned major, unsigned minor,
                         unsigned patch, unsigned long commits);

/* jemalloc 5.2.0 and 5.2.1 (from 5.1.0-89, the malloc fast path, to
 * 5.2.1-21, its fix): a thread whose malloc fast path crosses its sampling
 * threshold while prof.active is false has its byte counter set to
 * SSIZE_MAX (src/jemalloc.c, je_malloc), and nothing but that thread's own
 * slow path ever sets it again: prof.active=true samples nothing from it
 * until it has allocated 8 EiB.  Threads started after 'prof on' sample. */
bool jemalloc_inactive_threads_stop_sampling(const struct jemalloc_version *v);
/* The sentence that says so, for notes and errors (no version in it). */
extern const char jemalloc_inactive_threads_text[];

/* The same versions: je_malloc's fast path takes a small allocation off
 * the sampling counter before it looks in the thread cache, and when the
 * cache is empty the slow path it falls to (prof_alloc_prep) takes it off
 * again, so such a thread samples its small allocations more often than
 * one per 2^lg_prof_sample bytes and their unsampled sizes read high
 * (by 10-15 % for 1 KiB blocks in t_jemalloc52). */
bool jemalloc_small_sizes_read_high(const struct jemalloc_version *v);

/* experimental.prof_recent.* and prof.prefix: jemalloc 5.3.0 and later. */
bool jemalloc_has_prof_recent(const struct jemalloc_version *v);
bool jemalloc_has_prof_prefix(const struct jemalloc_version *v);

#endif
