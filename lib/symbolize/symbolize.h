/* symbolize.h - names for the return addresses in a heap profile.
 *
 * Objects are found from a map_list (the dump's MAPPED_LIBRARIES, or a live
 * process's maps), opened at their path under an optional root prefix
 * (/proc/PID/root when attached, --sysroot DIR offline), with separate
 * debug files by build-id or debuglink under /usr/lib/debug.  Symbol tables
 * are cached per object (keyed by build-id, else path + size + mtime) for
 * the life of the symbolizer, so a second dump of the same process loads
 * nothing new; each distinct address is symbolized once per detail level.
 * Names are interned: equal strings have equal pointers, owned by the
 * symbolizer, valid until symbolizer_free.  Not thread-safe.
 *
 * The main executable (what opts.exe replaces) is the file of the
 * lowest-addressed file-backed mapping: the kernel maps the program before
 * ld.so and the libraries, below them.  opts.exe is used as given, without
 * the root prefix.  A mapping marked "(deleted)" is read through
 * /proc/PID/map_files when root is "/proc/PID/root", else reported.
 *
 * Unknown addresses never vanish: "label+0xOFF" where label is the
 * object's basename and OFF its link-time address (object readable, no
 * symbol) or file offset (object unreadable: missing, not ELF, deleted, not
 * fitting its mapping); "[vdso]+0xOFF" for named non-file regions; "0xADDR"
 * outside any file mapping.  Each unreadable object or mismatching debug
 * file is reported once to opts.warnings. */
#ifndef MEMPROF_SYMBOLIZE_H
#define MEMPROF_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "lib/base/error.h"
#include "lib/proc/maps.h"
#include "lib/profile/profile.h"

struct symbolizer;

struct symbolizer_options {
    const char *root;       /* prefix for object paths ("/proc/123/root"), or NULL */
    const char *exe;        /* override the main executable's path (--exe), or NULL */
    const char *debug_dir;  /* default "/usr/lib/debug" */
    FILE *warnings;         /* unreadable objects reported here once each; NULL = silent */
};

/* One source-level frame.  A return address can expand to several when
 * calls were inlined: frames[0] is the innermost (inlined) function. */
struct symbol_frame {
    const char *function;   /* demangled; "object+0xoff" when unknown; interned */
    const char *system_name;/* the symbol as linked (mangled); == function
                             * when not mangled or unknown; interned */
    const char *file;       /* source file or NULL; interned */
    int line;               /* 0 when unknown */
    const char *object;     /* object path (as in maps) or NULL; interned */
    uint64_t object_offset; /* addr relative to the object's load bias */
    bool is_allocator;      /* allocator code: inside a jemalloc object or a
                             * static copy's code, or a listed entry point */
};

enum symbolize_detail {
    SYMBOLIZE_FUNCTIONS,    /* function names only (fast: symbol tables) */
    SYMBOLIZE_LINES,        /* plus file:line and inlined frames (DWARF) */
};

struct symbolizer *symbolizer_new(const struct symbolizer_options *opts);
void symbolizer_free(struct symbolizer *s);

/* Symbolize one address ALREADY adjusted to the call instruction (the
 * caller passes return_address - 1).  Fills up to max frames, innermost
 * first; returns how many (always >= 1 when max >= 1).  With
 * SYMBOLIZE_LINES the last frame is the containing real function, named as
 * with SYMBOLIZE_FUNCTIONS; a max shorter than the chain drops the outer
 * frames.  Inlined static functions (no linkage name in DWARF) are named
 * "ns::name" without parameter types.  maps may be NULL. */
int symbolizer_lookup(struct symbolizer *s, const struct map_list *maps,
                      uint64_t addr, enum symbolize_detail detail,
                      struct symbol_frame *frames, int max);

/* The same for an address of profile p, whose dump may say which build of
 * each object the process had mapped (p->object_ids) and where copies of
 * them were kept (p->kept_dir): a file whose build-id differs from the
 * recorded one never names a frame.  The object is then looked for by
 * that build-id: in the kept copies, under the debug directory
 * (.build-id/xx/rest, then rest.debug), in the live process (its
 * /proc/PID/map_files, its own debug directory) and through debuginfod;
 * found nowhere, its frames are "label+0xOFF" (file offsets) and a
 * warning says which build-id is missing and how to get it. */
int symbolizer_lookup_profile(struct symbolizer *s, const struct profile *p,
                              uint64_t addr, enum symbolize_detail detail,
                              struct symbol_frame *frames, int max);

/* The file symbolization reads for mapping e of maps (the same choice of
 * --exe, root prefix or map_files as symbolizer_lookup), as it is on disk
 * now: its GNU build-id in hex (build_id[0] = 0 when it has none) and its
 * modification time.  Only stats the file and reads its notes, so it is
 * cheap for every mapping of a dump.  Returns 0, or -1 with err saying why
 * the file cannot be read. */
struct symbol_file_identity {
    char build_id[129];
    struct timespec mtime;
    char path[4096];            /* where it was read (for messages) */
    char debug_path[4096];      /* its separate debug file, "" for none
                                 * (filled by symbolizer_profile_object only) */
};
int symbolizer_file_identity(struct symbolizer *s, const struct map_list *maps,
                             const struct map_entry *e,
                             struct symbol_file_identity *out, struct mp_error *err);

/* The object symbolizer_lookup_profile names mapping e of p from (found
 * as it says, and checked by build-id), with its separate debug file when
 * its own symbols are stripped.  Returns 0, or -1 with err saying why
 * there is none (the symbolizer has warned once already). */
int symbolizer_profile_object(struct symbolizer *s, const struct profile *p,
                              const struct map_entry *e,
                              struct symbol_file_identity *out, struct mp_error *err);

/* The root prefix it reads objects under (opts.root), or NULL: a path
 * symbolizer_profile_object gives is opened inside it (safe_open_in_root). */
const char *symbolizer_root(const struct symbolizer *s);

/* What the symbolizer has done so far (tests and --stats). */
struct symbolizer_stats {
    size_t objects_loaded;      /* ELF objects read: each identity at most once */
    size_t debug_files_loaded;  /* separate debug files whose symbols were read */
    size_t dwarf_loaded;        /* objects whose DWARF was opened (LINES only) */
    size_t lookups;             /* symbolizer_lookup calls */
    size_t address_hits;        /* lookups answered by the per-address cache */
};

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out);

/* Intern a string in the symbolizer's table. */
const char *symbolizer_intern(struct symbolizer *s, const char *str);

/* Demangle a C++ (Itanium ABI) or Rust (legacy or v0) name into buf, as
 * c++filt does; copies name when it is not mangled.  Returns buf. */
char *symbol_demangle(const char *name, char *buf, size_t buflen);

/* The demangled name, malloc'd, or NULL when name is not a mangled C++ or
 * Rust name (or cannot be demangled). */
char *symbol_demangle_alloc(const char *name);

#endif
