/* process_files.h - the attached process's files in /proc, as every front
 * end reads them: through a live thread's directory (the leader may have
 * exited), whole, bounded. */
#ifndef MEMPROF_PROCESS_FILES_H
#define MEMPROF_PROCESS_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/proc/cgroup_memory.h"
#include "session/session.h"

/* A file of the process's /proc directory ("status", "smaps"), malloc'd
 * and NUL-terminated; NULL when it cannot be read. */
char *process_file(struct session *s, const char *name, size_t *len);

/* A field of such a file ("status", "VmRSS"), in bytes when the file gives
 * kB; false when it cannot be read. */
bool process_file_value(struct session *s, const char *file, const char *key, uint64_t *v);

/* The process's cgroup memory figures, read from the host's cgroup file
 * system through the cgroup /proc/PID/cgroup names (memprof's view: the
 * host's, whatever cgroup namespace the process is in).  0, or -1 with
 * why (a sentence). */
int process_cgroup_memory(struct session *s, struct cgroup_memory *c, char *why,
                          size_t whylen);

#endif
