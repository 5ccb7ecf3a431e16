/* diagnose_read.h - what the diagnoses (session/memory_diagnose.h) need
 * beyond the figures a front end has already read, read the same way for
 * every front end: the host's huge page mode, the CPUs the process may
 * run on, the scan of its huge pages, and smaps' accounting put in. */
#ifndef MEMPROF_DIAGNOSE_READ_H
#define MEMPROF_DIAGNOSE_READ_H

#include "session/heap_arenas.h"
#include "session/memory_account.h"
#include "session/memory_diagnose.h"
#include "session/session.h"

/* in zeroed, then filled with what the process and the host say: the
 * allocator's name, the THP mode, the CPUs, and from a (NULL: smaps not
 * read) the accounting, the threads and the huge pages' scan.  The
 * allocator's and the cgroup's figures are the caller's to add. */
void diagnose_input_base(struct session *s, const struct memory_account *a,
                         struct diagnose_input *in);

/* The allocator's figures put in, the same for every front end: je
 * (jemalloc's summary, NULL when none) with its settings (set: NULL when
 * not read), or another allocator's statistics (other: NULL when none)
 * with glibc's arenas measured (arenas: NULL when not read). */
void diagnose_input_allocator(struct session *s, struct diagnose_input *in,
                              const struct jemalloc_summary *je,
                              const struct diagnose_jemalloc_settings *set,
                              const struct allocator_stats *other,
                              const struct heap_arenas *arenas);

/* The host's transparent huge page mode (/sys/kernel/mm/transparent_hugepage/enabled):
 * "always", "madvise", "never", or NULL when unreadable. */
const char *diagnose_thp_mode(void);

#endif
