/* maps.h - the memory map of a process, as /proc/PID/maps prints it.
 *
 * Both the live attach (reading /proc/PID/maps) and the heap-profile reader
 * (the MAPPED_LIBRARIES section of a dump) parse the same text, so the parser
 * lives here once. */
#ifndef MEMPROF_MAPS_H
#define MEMPROF_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"

struct map_entry {
    uint64_t start, end;  /* [start, end) */
    uint64_t offset;      /* file offset of start */
    uint64_t inode;
    unsigned dev_major, dev_minor;
    bool r, w, x, shared;
    bool deleted;         /* the path ended in " (deleted)" (stripped from path) */
    char *path;           /* "" for anonymous maps; "[heap]", "[stack]" ... */
};

struct map_list {
    struct map_entry *v;
    size_t n, cap;
};

/* Parse one line (without its newline).  Returns 0, or -1 when the line is
 * not a maps line (err says why).  out->path is malloc'd. */
int maps_parse_line(const char *line, size_t len, struct map_entry *out,
                    struct mp_error *err);

/* Parse a whole maps text.  Lines that are not maps lines stop the parse
 * when strict, or are skipped otherwise.  Returns 0 or -1. */
int maps_parse(const char *text, size_t len, bool strict, struct map_list *out,
               struct mp_error *err);

/* Read and parse /proc/PID/maps (through a live thread when the main
 * thread has exited). */
int maps_read_pid(int pid, struct map_list *out, struct mp_error *err);
/* The same file's text as it is (*buf malloc'd, *len bytes): for a
 * heap profile's MAPPED_LIBRARIES section. */
int maps_read_text_pid(int pid, char **buf, size_t *len, struct mp_error *err);

/* The entry holding addr, or NULL.  Entries must be sorted (they are, as
 * the kernel prints them; maps_parse sorts them if not). */
const struct map_entry *maps_find(const struct map_list *maps, uint64_t addr);

/* A file-backed mapping with a real path (not "[...]" or anonymous). */
bool map_entry_is_file(const struct map_entry *e);

/* Whether any mapping is executable and file-backed.  Every program's
 * address space has one (its executable, its loader); one without is
 * between an exec's switch to a new address space and the mapping of
 * the new program into it (only [stack] then), or is being torn down. */
bool maps_have_program(const struct map_list *maps);

void maps_free(struct map_list *maps);

#endif
