/* cmd_memory.h - what the memory commands (cmd_memory.c) share with
 * recent (cmd_recent.c). */
#ifndef MEMPROF_CMD_MEMORY_H
#define MEMPROF_CMD_MEMORY_H

#include <stddef.h>

#include "session/session.h"

/* The most a capture (stats --json, recent) takes by default. */
#define CAPTURE_DEFAULT_MAX (64u << 20)

/* A --max-size value: bytes, or with K, M or G; from 1 byte to 1G.
 * Says what is wrong and returns -1 otherwise. */
int memory_parse_size(const char *opt, const char *text, size_t *size);

#endif
