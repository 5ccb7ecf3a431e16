/* process_files.h - the attached process's files in /proc, as every front
 * end reads them: through a live thread's directory (the leader may have
 * exited), whole, bounded. */
#ifndef MEMPROF_PROCESS_FILES_H
#define MEMPROF_PROCESS_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/session.h"

/* A file of the process's /proc directory ("status", "smaps"), malloc'd
 * and NUL-terminated; NULL when it cannot be read. */
char *process_file(struct session *s, const char *name, size_t *len);

/* A field of such a file ("status", "VmRSS"), in bytes when the file gives
 * kB; false when it cannot be read. */
bool process_file_value(struct session *s, const char *file, const char *key, uint64_t *v);

#endif
