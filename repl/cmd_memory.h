/* cmd_memory.h - what the memory commands (cmd_memory.c) share with
 * recent (cmd_recent.c) and with the other allocators' (cmd_allocator.c). */
#ifndef MEMPROF_CMD_MEMORY_H
#define MEMPROF_CMD_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session/session.h"

/* The most a capture (stats --json, recent) takes by default. */
#define CAPTURE_DEFAULT_MAX (64u << 20)

/* A --max-size value: bytes, or with K, M or G; from 1 byte to 1G.
 * Says what is wrong and returns -1 otherwise. */
int memory_parse_size(const char *opt, const char *text, size_t *size);

#define MIB (1024.0 * 1024.0)

/* a - b, or 0 when b is larger (figures read at different instants). */
uint64_t memory_minus(uint64_t a, uint64_t b);

/* A purge's RSS line (or that it is unknown: status unreadable), and,
 * after the lines between, its closing line (how much came back only when
 * measured, and the pause), for 'purge' with any allocator. */
void purge_rss_line(struct session *s, bool known, uint64_t before, uint64_t after);
void purge_closing_line(struct session *s, bool known, uint64_t before, uint64_t after,
                        double pause_us);

/* stats and purge of a process whose allocator is not jemalloc
 * (cmd_allocator.c), after cmd_stats and cmd_purge parsed their options. */
int allocator_stats_show(struct session *s, bool summary, bool json);
int allocator_purge_run(struct session *s, bool json);

#endif
