/* profile.h - a heap profile as jemalloc (or gperftools) wrote it, read into
 * memory and unsampled.
 *
 * Formats, detected from the first line (FIELD-NOTES section 2):
 *   heap_v2/N                          jemalloc 4.x/5.x (per-thread lines)
 *   heap profile: c: b [c: b] @ heap_v2/N   jemalloc 3.x
 *   heap profile: ... @ heapprofile    gperftools, not sampled
 *   heap profile: ... @ heap/N         old tcmalloc, sample period N/2
 *   heap profile: ... @ page_faults    memprof's `faults` dumps: counts are
 *                                      page faults, bytes the pages they
 *                                      touched (not sampled; page_faults set)
 *
 * Every count is unsampled per stack line (jeprof's AdjustSamples) as the
 * file is read, so sums and differences are always of unsampled values.
 * Sampling as jeprof does it: heap_v2/N uses R = N (N = 0: no adjustment);
 * "@ heap_v2[/N]" uses R = N, or 128 KiB when N is missing or 0; "@ heap/N"
 * uses jeprof's version-1 rule with R = N/2; "@ heapprofile", "@ growth"
 * and other types without "heap" are not sampled; no type at all means
 * version 1 at 128 KiB when the in-use and total pairs are equal.
 *
 * Truncated files (decided here, documented for callers):
 *   - A header line cut by EOF is an error; a valid header and no stack is
 *     a valid, empty profile.
 *   - A last line without its newline is never read (its numbers may be
 *     cut short).
 *   - heap_v2: a stack is known whole once another line follows it (the
 *     next "@", a blank line, MAPPED_LIBRARIES).  At EOF without one, the
 *     last stack is dropped whole: its thread lines may be missing.
 *   - No MAPPED_LIBRARIES section: maps empty.  Where the text ends on a
 *     newline after a last stack with its t* line and at least one thread
 *     line (jemalloc leaves the section out, ending the file there, when it
 *     cannot read /proc/self/maps: a chroot without /proc), every stack is
 *     kept and no_maps_section is set; otherwise truncated = true.
 *   Both come with a one-line warning naming the file (and line).
 *
 * profile_load_file also reads the build-ids memprof saved beside the file
 * (FILE.buildids, when present; lines it cannot read are skipped) and takes
 * the file's mtime as the time the dump was taken.
 *
 * Stricter than jeprof (which skips lines it does not recognise): any other
 * line is an error "FILE:LINE: what", as is a stack without a t* line, a
 * second t* line, text after ']' on a stack's thread line (jemalloc writes
 * thread names only in the header), or a number that overflows 64 bits.
 * Accepted: "@" with no addresses (a 0-frame stack), any number of frames,
 * "0" as an address, CRLF line ends, thread ids first seen in a stack. */
#ifndef MEMPROF_PROFILE_H
#define MEMPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"
#include "lib/proc/maps.h"

enum profile_format {
    PROFILE_HEAP_V2,        /* "heap_v2/N" */
    PROFILE_HEAP_V2_LEGACY, /* "heap profile: ... @ heap_v2/N" */
    PROFILE_HEAPPROFILE,    /* "heap profile: ... @ heapprofile" */
    PROFILE_HEAP_SAMPLED,   /* "heap profile: ... @ heap/N" */
};

/* Unsampled values of one line: in use now, and allocated ever (only when
 * the profile has cumulative counts, i.e. opt.prof_accum). */
struct profile_values {
    double inuse_objects, inuse_bytes;
    double alloc_objects, alloc_bytes;
};

struct profile_thread {
    uint64_t id;            /* jemalloc's thread uid */
    char *name;             /* thread name, or NULL */
    struct profile_values header; /* its header line, unsampled (0 if none) */
};

/* One thread's share of one stack. */
struct profile_thread_sample {
    uint32_t thread;        /* index into profile->threads */
    struct profile_values v;
};

struct profile_stack {
    uint32_t frame0, nframes;      /* profile->frames[frame0 .. frame0+nframes) */
    uint32_t sample0, nsamples;    /* profile->samples[...] (per thread) */
    struct profile_values v;       /* the t* line, unsampled */
};

struct profile {
    char *name;                    /* file path or session name */
    enum profile_format format;
    uint64_t period;               /* R: 2^lg_sample in bytes; 0 = not sampled */
    uint64_t header_period;        /* the N the header wrote (0 if none) */
    double sample_rate;            /* R exactly as unsampling used it: heap/N
                                    * gives N/2 (x.5 for odd N), a missing
                                    * period 128 KiB as in jeprof; 0 = none */
    bool has_alloc;                /* cumulative counts present (non-zero) */
    bool page_faults;              /* "@ page_faults": a count is page faults
                                    * and bytes the pages they touched, not
                                    * objects and bytes in use */
    bool truncated;                /* ended early; whole stacks kept */
    bool no_maps_section;          /* ended whole after its stacks, without
                                    * MAPPED_LIBRARIES (maps empty) */
    char warning[512];             /* set when truncated etc. */

    struct profile_values total;   /* sum over stacks (unsampled) */
    struct profile_values header_total; /* the header t* line, unsampled */

    struct profile_thread *threads;
    size_t nthreads;

    /* Each frame is an index into addrs, the distinct return addresses:
     * half the memory of the addresses themselves, and what an address
     * resolves to is looked up once (analysis views index by it).  The
     * parser makes addrs distinct; a profile built by hand may repeat one. */
    uint32_t *frames;              /* innermost first */
    size_t nframes;
    uint64_t *addrs;
    size_t naddrs;
    struct profile_stack *stacks;
    size_t nstacks;
    struct profile_thread_sample *samples;
    size_t nsamples;

    struct map_list maps;          /* MAPPED_LIBRARIES (may be empty) */

    /* When the dump was taken (seconds since the epoch): memprof's clock
     * for a dump it took, the file's mtime for a file read; 0 unknown. */
    int64_t taken_at;
    /* The build-ids of the objects the process had mapped when memprof
     * took the dump, so that a later reading can tell an object rebuilt
     * since.  Saved beside a dump file as FILE.buildids (a file of its own:
     * the dump stays exactly what jemalloc wrote, for jeprof), read back by
     * profile_load_file. */
    struct profile_object_id *object_ids;
    size_t nobject_ids;
    /* A run directory memprof wrote ('profile save') that keeps copies of
     * the objects by build-id (DIR/.build-id/xx/rest), set by
     * profile_load_file for a dump in one; NULL otherwise. */
    char *kept_dir;
};

struct profile_object_id {
    char *path;                    /* as in MAPPED_LIBRARIES */
    char *build_id;                /* hex */
};

/* The return address of frame i. */
static inline uint64_t profile_frame(const struct profile *p, size_t i)
{
    return p->addrs[p->frames[i]];
}

/* Scale a (count, bytes) pair in place as jeprof's AdjustSamples does:
 * if n != 0, scale = 1 / (1 - exp(-(s/n)/R)).  R == 0 leaves it alone. */
void profile_unsample(double *n, double *s, uint64_t period);

/* jeprof's "version 1" adjustment for old tcmalloc "@ heap/N" profiles,
 * with rate = N/2: ratio = (s/n)/rate; if ratio < 1, divide both by it. */
void profile_unsample_v1(double *n, double *s, double rate);

/* Parse a profile held in memory.  name is used in messages ("FILE:LINE: ...").
 * Returns NULL with err set on a file that cannot be used. */
struct profile *profile_parse(const char *data, size_t len, const char *name,
                              struct mp_error *err);

/* Map and parse a file; refuses directories, FIFOs and other non-files
 * before reading anything. */
struct profile *profile_load_file(const char *path, struct mp_error *err);

void profile_free(struct profile *p);

/* Record path's build-id (hex) with the profile.  0, or -1 out of memory. */
int profile_add_object_id(struct profile *p, const char *path, const char *build_id);
/* The build-id recorded for path, or NULL. */
const char *profile_object_id(const struct profile *p, const char *path);
/* The directory of kept objects inside a run directory. */
#define PROFILE_KEPT_SUBDIR ".build-id"
/* The sidecar file's name for a dump file (malloc'd): "FILE.buildids". */
char *profile_object_ids_path(const char *dump_path);
/* Write the recorded build-ids to profile_object_ids_path(dump_path)
 * ("# comment" lines, then "HEX PATH" lines).  0, or -1 with err set. */
int profile_save_object_ids(const struct profile *p, const char *dump_path,
                            struct mp_error *err);

#endif
