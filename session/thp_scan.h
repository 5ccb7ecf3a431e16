/* thp_scan.h - how much of a process's transparent huge pages is memory
 * never written: its anonymous mappings that hold huge pages
 * (AnonHugePages in smaps) are read 2 MiB block by 2 MiB block, only the
 * blocks /proc/PID/pagemap says are wholly resident (so that reading
 * faults nothing in) and, where it gives frame numbers (CAP_SYS_ADMIN),
 * one huge page; their 4 KiB pages holding only zeros are counted,
 * no more per mapping than its AnonHugePages.  A page the program wrote
 * zeros into counts too: the figure is an upper bound of what splitting
 * the huge pages would return.  Bounded by THP_SCAN_MAX bytes read. */
#ifndef MEMPROF_THP_SCAN_H
#define MEMPROF_THP_SCAN_H

#include "lib/proc/rss_account.h"
#include "session/memory_diagnose.h"
#include "session/session.h"

#define THP_SCAN_MAX ((uint64_t)256 << 20)

/* Into out (out->known false when pagemap or the memory cannot be read). */
void thp_scan(struct session *s, const struct rss_account *r, struct diagnose_thp *out);

/* The zero-filled 4 KiB pages of a 2 MiB block, in bytes (pure, for tests). */
uint64_t thp_zero_bytes(const unsigned char *block, size_t len);

#endif
