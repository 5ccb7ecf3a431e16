/* symbolize.c - the symbolizer: from a return address and a memory map to
 * function names (and, on request, file:line and inlined frames).
 *
 * Three caches, all living as long as the symbolizer:
 *   - objects, keyed by build-id (else path + size + mtime): each ELF file
 *     is read once even when several dumps or paths refer to it;
 *   - mapped files, keyed by the map's path, device, inode and whether it is
 *     the main executable: each one is opened (or warned about) once;
 *   - addresses: each distinct address is symbolized once per detail level,
 *     revalidated in O(1) against the mapping it was computed for, so a
 *     different map list (another process) never returns stale names.
 *
 * The main executable is the file of the lowest-addressed file-backed
 * mapping: the kernel maps the program before anything else, at its link
 * address (non-PIE) or at ELF_ET_DYN_BASE (PIE), both below the mmap area
 * where ld.so and libraries go.  (A program started as `ld.so ./prog` is the
 * exception; pass --exe only with ordinary launches.)  opts.exe replaces
 * that file's path as is, without the root prefix. */
#include "lib/symbolize/symbolize.h"
#include "lib/base/array.h"
#include "lib/base/safe_open.h"

#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/elf/elf_object.h"
#include "lib/symbolize/alloc_frames.h"
#include "lib/symbolize/build_places.h"
#include "lib/symbolize/debug_file.h"
#include "lib/symbolize/debuginfod.h"
#include "lib/symbolize/dwarf.h"
#include "lib/symbolize/sym_table.h"
#include "lib/profile/synthetic_frames.h"
#include "lib/base/text_escape.h"

#define MAX_INLINE_DEPTH 32

/* A symbol's display name and class, computed on first use. */
struct sym_name {
    const char *name;           /* demangled, interned; NULL until computed */
    const char *raw;            /* as linked, interned */
    bool is_allocator;          /* a listed allocator entry point */
};

struct sym_object {
    const char *key;            /* interned identity */
    const char *path;           /* interned: the file as opened */
    const char *path_in_root;   /* interned: the same without the root */
    struct elf_object *elf;
    struct elf_object *debug_syms;  /* the debug file's .symtab, when elf is stripped */
    const char *debug_path;     /* interned separate debug file, or NULL */
    const char *kept_dir;       /* interned run directory it was found
                                 * through (its debug file may be kept
                                 * there too), or NULL */
    bool debug_searched;
    struct sym_name *names;     /* one per symbol of object_symbols() */
    struct sym_dwarf *dwarf;
    bool dwarf_tried;
    struct sym_range *jemalloc_code;    /* static jemalloc copies' code */
    size_t njemalloc_code;
    bool jemalloc_code_done;
};

/* What a dump says of a mapping's object: the build-id the process had
 * mapped, and a run directory keeping copies by build-id.  All interned;
 * key is NULL when the dump says neither (then only paths are known). */
struct expect {
    const char *build_id;
    const char *kept_dir;
    const char *key;
};

/* One mapped file as a map list names it. */
struct sym_file {
    struct sym_object *obj;     /* NULL: unreadable, warned once */
    const char *path;           /* interned, as in maps */
    const char *label;          /* interned basename, for "label+0xoff" */
    bool is_jemalloc;
    bool mismatch_warned;       /* the file does not fit its mapping */
};

/* One symbolized address and the mapping it was computed under. */
struct addr_entry {
    uint64_t map_start, map_offset, inode;
    const char *map_path;       /* interned; NULL when no mapping held it */
    const char *expect_key;     /* the dump's expect.key it was computed for */
    bool deleted;
    size_t map_index;           /* where that mapping was in the last list */
    size_t first, count;        /* frames[first .. first+count) */
};

struct symbolizer {
    char *root, *exe, *debug_dir;
    FILE *warnings;
    struct sym_interner *strings;
    struct sym_u64map demangled;        /* interned raw -> interned demangled */
    struct sym_object **objects;
    size_t nobjects, capobjects;
    struct sym_u64map object_by_key;    /* interned key -> objects[] index */
    struct sym_file **files;
    size_t nfiles, capfiles;
    struct sym_u64map file_by_key;      /* interned key -> files[] index */
    struct addr_entry *entries;
    size_t nentries, capentries;
    struct symbol_frame *frames;
    size_t nframes, capframes;
    struct sym_u64map by_addr[2];       /* per detail: addr -> entries[] index */
    struct symbolizer_stats stats;
};

/* ---- small helpers ---- */

static bool grow_array(void **v, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return true;
    return array_reserve(v, cap, need, elem, 64) == 0;
}

static const char *intern(struct symbolizer *s, const char *str)
{
    return sym_intern(s->strings, str);
}

static const char *internf(struct symbolizer *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static const char *internf(struct symbolizer *s, const char *fmt, ...)
{
    char buf[4608];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return intern(s, buf);
}

static void warn(struct symbolizer *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void warn(struct symbolizer *s, const char *fmt, ...)
{
    if (!s->warnings)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    int n = vasprintf(&msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* Warnings name the target's objects and paths. */
    fputs("warning: ", s->warnings);
    text_escape_put(s->warnings, msg);
    fputc('\n', s->warnings);
    free(msg);
}

static const char *basename_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

static bool has_root(const struct symbolizer *s)
{
    return s->root && *s->root;
}

/* ---- lifetime ---- */

static char *dup_or_null(const char *str)
{
    return str ? strdup(str) : NULL;
}

struct symbolizer *symbolizer_new(const struct symbolizer_options *opts)
{
    struct symbolizer *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    struct symbolizer_options none = {0};
    if (!opts)
        opts = &none;
    s->root = dup_or_null(opts->root);
    s->exe = dup_or_null(opts->exe);
    s->debug_dir = strdup(opts->debug_dir ? opts->debug_dir : SYM_DEBUG_DEFAULT_DIR);
    s->warnings = opts->warnings;
    s->strings = sym_interner_new();
    if (!s->strings || !s->debug_dir || (opts->root && !s->root) ||
        (opts->exe && !s->exe)) {
        symbolizer_free(s);
        return NULL;
    }
    return s;
}

static void object_free(struct sym_object *o)
{
    elf_object_free(o->elf);
    elf_object_free(o->debug_syms);
    sym_dwarf_free(o->dwarf);
    free(o->names);
    free(o->jemalloc_code);
    free(o);
}

void symbolizer_free(struct symbolizer *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nobjects; i++)
        object_free(s->objects[i]);
    for (size_t i = 0; i < s->nfiles; i++)
        free(s->files[i]);
    free(s->objects);
    free(s->files);
    free(s->entries);
    free(s->frames);
    sym_u64map_free(&s->demangled);
    sym_u64map_free(&s->object_by_key);
    sym_u64map_free(&s->file_by_key);
    sym_u64map_free(&s->by_addr[0]);
    sym_u64map_free(&s->by_addr[1]);
    sym_interner_free(s->strings);
    free(s->root);
    free(s->exe);
    free(s->debug_dir);
    free(s);
}

const char *symbolizer_root(const struct symbolizer *s)
{
    return has_root(s) ? s->root : NULL;
}

const char *symbolizer_intern(struct symbolizer *s, const char *str)
{
    return intern(s, str);
}

void symbolizer_get_stats(const struct symbolizer *s, struct symbolizer_stats *out)
{
    *out = s->stats;
}

/* ---- names ---- */

/* Demangled and interned, each raw name demangled once. */
static const char *display_name(struct symbolizer *s, const char *raw)
{
    const char *r = intern(s, raw);
    uint64_t hit;
    if (!r || sym_u64map_get(&s->demangled, (uintptr_t)r, &hit))
        return r ? (const char *)(uintptr_t)hit : NULL;
    char *d = symbol_demangle_alloc(r);
    const char *out = d ? intern(s, d) : r;
    free(d);
    if (out)
        sym_u64map_put(&s->demangled, (uintptr_t)r, (uintptr_t)out);
    return out;
}

static const struct elf_object *object_symbols(const struct sym_object *o)
{
    return o->debug_syms ? o->debug_syms : o->elf;
}

static const struct sym_name *symbol_name(struct symbolizer *s, struct sym_object *o,
                                          const struct elf_symbol *sym)
{
    const struct elf_object *tab = object_symbols(o);
    if (!o->names && !(o->names = calloc(tab->nsyms ? tab->nsyms : 1, sizeof *o->names)))
        return NULL;
    struct sym_name *n = &o->names[sym - tab->syms];
    if (!n->name) {
        n->name = display_name(s, sym->name);
        n->raw = intern(s, sym->name);
        /* Raw for operator new and C names, demangled for Rust paths. */
        n->is_allocator = symbol_is_allocator_name(sym->name) ||
                          (n->name && symbol_is_allocator_name(n->name));
    }
    return n->name ? n : NULL;
}

/* ---- objects ---- */

/* Finds the separate debug file (for DWARF); a stripped object also takes
 * its symbols from that file's .symtab, read from the descriptor that was
 * checked. */
static void find_debug_file(struct symbolizer *s, struct sym_object *o)
{
    if (o->debug_searched)
        return;
    o->debug_searched = true;
    char *remote_note = NULL;
    struct sym_debug_search q = {
        .obj = o->elf, .opened_path = o->path, .path_in_root = o->path_in_root,
        .root = s->root, .debug_dir = s->debug_dir, .remote_note = &remote_note,
        .kept_dir = o->kept_dir,
    };
    char *mismatch = NULL, *found = NULL;
    int fd = sym_debug_open(&q, &found, &mismatch);
    if (mismatch)
        warn(s, "%s does not match %s (different build-id or debuglink CRC); "
                "ignoring it: install the debug file of the same build",
             mismatch, o->path);
    if (remote_note && !o->elf->has_symtab)
        warn(s, "%s has no symbol table and %s: only its exported functions get "
                "names; install its debug file (its -dbgsym package) or serve it there",
             o->path, remote_note);
    free(mismatch);
    free(remote_note);
    o->debug_path = intern(s, found);
    free(found);
    if (fd < 0)
        return;
    if (o->elf->has_symtab) {
        close(fd);
        return;
    }
    struct mp_error err;
    struct elf_object *d = elf_object_open_fd(fd, o->debug_path, &err);
    close(fd);
    if (!d) {
        warn(s, "%s", err.msg);
        return;
    }
    if (d->has_symtab) {
        o->debug_syms = d;
        s->stats.debug_files_loaded++;
    } else {
        elf_object_free(d);
    }
}

static struct sym_object *add_object(struct symbolizer *s, const char *key,
                                     struct elf_object *elf, const char *path_in_root,
                                     const char *kept_dir)
{
    struct sym_object *o = calloc(1, sizeof *o);
    if (!o || !grow_array((void **)&s->objects, &s->capobjects, s->nobjects + 1,
                          sizeof *s->objects)) {
        free(o);
        elf_object_free(elf);
        return NULL;
    }
    o->key = key;
    o->elf = elf;
    o->path = intern(s, elf->path);
    o->path_in_root = intern(s, path_in_root);
    o->kept_dir = kept_dir;
    s->objects[s->nobjects] = o;
    sym_u64map_put(&s->object_by_key, (uintptr_t)key, s->nobjects++);
    s->stats.objects_loaded++;
    if (!elf->has_symtab)
        find_debug_file(s, o);
    return o;
}

/* The object's identity without reading its symbols: build-id, else
 * path + size + mtime. */
static const char *object_key(struct symbolizer *s, int fd, const char *path,
                              struct mp_error *err)
{
    struct stat st;
    if (fstat(fd, &st)) {
        mp_error_set(err, "cannot stat %s: %s", path, strerror(errno));
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        mp_error_set(err, "%s is not a regular file", path);
        return NULL;
    }
    uint8_t id[64];
    size_t len;
    if (elf_object_read_build_id(fd, id, sizeof id, &len)) {
        mp_error_set(err, "%s is not an ELF file", path);
        return NULL;
    }
    if (!len)
        return internf(s, "file:%s:%lld:%lld.%09ld", path, (long long)st.st_size,
                       (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
    char hex[2 * sizeof id + 1];
    for (size_t i = 0; i < len; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    return internf(s, "build-id:%s", hex);
}

/* A file to read an object from. */
struct object_request {
    const char *path;           /* where to open it */
    const char *path_in_root;   /* the object's path as the process saw it */
    const char *kept_dir;       /* interned, or NULL */
    bool nofollow;              /* a final symlink is refused */
};

static struct sym_object *open_object(struct symbolizer *s, const struct object_request *r,
                                      struct mp_error *err)
{
    /* Under the root (a process's, a --sysroot), links resolve inside it. */
    int fd = safe_open_in_root(s->root, r->path, r->nofollow, NULL);
    if (fd < 0) {
        mp_error_set(err, "cannot open %s: %s", r->path,
                     errno == EINVAL ? "not a regular file" : strerror(errno));
        return NULL;
    }
    struct sym_object *o = NULL;
    const char *key = object_key(s, fd, r->path, err);
    uint64_t index;
    if (key && sym_u64map_get(&s->object_by_key, (uintptr_t)key, &index)) {
        o = s->objects[index];
    } else if (key) {
        struct elf_object *elf = elf_object_open_fd(fd, r->path, err);
        if (elf)
            o = add_object(s, key, elf, r->path_in_root, r->kept_dir);
    }
    close(fd);
    return o;
}

/* Is o of the build with this build-id (hex)? */
static bool object_is_build(const struct sym_object *o, const char *build_id)
{
    return strncmp(o->key, "build-id:", 9) == 0 && strcmp(o->key + 9, build_id) == 0;
}

/* o's build, for messages: "build-id HEX" or "no build-id". */
static const char *object_build(struct symbolizer *s, const struct sym_object *o)
{
    return strncmp(o->key, "build-id:", 9) == 0 ? internf(s, "build-id %s", o->key + 9)
                                                : "no build-id";
}

/* ---- mapped files ---- */

static const struct map_entry *main_exe_mapping(const struct map_list *maps)
{
    for (size_t i = 0; i < maps->n; i++)
        if (map_entry_is_file(&maps->v[i]))
            return &maps->v[i];
    return NULL;
}

static bool is_main_exe(const struct map_list *maps, const struct map_entry *e)
{
    const struct map_entry *main_map = main_exe_mapping(maps);
    return main_map && strcmp(main_map->path, e->path) == 0;
}

static bool is_jemalloc_path(const char *path)
{
    return strncmp(basename_of(path), "libjemalloc", 11) == 0;
}

/* The live process's pid when the root is its /proc/PID/root, else 0. */
static int live_pid(const struct symbolizer *s)
{
    int pid, end = 0;
    if (has_root(s) && sscanf(s->root, "/proc/%d/root%n", &pid, &end) == 1 &&
        s->root[end] == '\0' && pid > 0)
        return pid;
    return 0;
}

/* /proc/PID/map_files/START-END when this process may open it (it needs
 * CAP_SYS_ADMIN, or CAP_CHECKPOINT_RESTORE, in the initial user
 * namespace), else NULL. */
static char *map_files_path(int pid, const struct map_entry *e)
{
    char *out = sym_map_files_name(pid, e->start, e->end);
    if (!out)
        return NULL;
    int fd = open(out, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        close(fd);
        return out;
    }
    free(out);
    return NULL;
}

/* The path under the root names the very file mapped (its inode: an
 * overlay file system may show another device number than maps does). */
static bool names_mapped_file(const char *path, const struct map_entry *e)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_ino == (ino_t)e->inode;
}

/* Where to read a mapped file: opts.exe for the main executable; else
 * the path under the root, where a separate debug file beside it is found
 * too.  Live, when that path names another file or none, the very inode
 * mapped, through /proc/PID/map_files: maps shows a path as the process's
 * mount namespace has it, which under /proc/PID/root leads nowhere when
 * the process chroot()ed inside its container, and a deleted file (an
 * upgrade) has no path at all.  Offline a deleted file is gone. */
static char *file_location(struct symbolizer *s, const struct map_entry *e,
                           bool use_exe, struct mp_error *err)
{
    char *out = NULL;
    if (use_exe)
        return strdup(s->exe);
    int pid = live_pid(s);
    if (!e->deleted && asprintf(&out, "%s%s", has_root(s) ? s->root : "", e->path) < 0)
        return NULL;
    if (out && (!pid || names_mapped_file(out, e)))
        return out;
    char *mapped = pid ? map_files_path(pid, e) : NULL;
    if (mapped) {
        free(out);
        return mapped;
    }
    if (out)
        return out;
    if (pid)
        mp_error_set(err, "%s was deleted after the process mapped it (upgraded "
                     "since?), and /proc/%d/map_files, its only way in, cannot "
                     "be opened: that needs CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE",
                     e->path, pid);
    else
        mp_error_set(err, "%s was deleted after the process mapped it (upgraded "
                     "since?)", e->path);
    return NULL;
}

/* The object at path (malloc'd, freed here) if it is of the build the
 * dump recorded, else NULL. */
static struct sym_object *try_build_at(struct symbolizer *s, char *path, bool nofollow,
                                       const struct map_entry *e, const struct expect *x,
                                       const char *kept_dir)
{
    if (!path)
        return NULL;
    struct mp_error err;
    struct object_request r = {path, e->path, kept_dir, nofollow};
    struct sym_object *o = open_object(s, &r, &err);
    free(path);
    return o && object_is_build(o, x->build_id) ? o : NULL;
}

static char *fetch_remote(const char *build_id, enum sym_debuginfod_kind kind, char **why)
{
    uint8_t id[64];
    size_t len = strlen(build_id) / 2;
    if (len > sizeof id)
        return NULL;
    for (size_t i = 0; i < len; i++)
        if (sscanf(build_id + 2 * i, "%2hhx", &id[i]) != 1)
            return NULL;
    return sym_debuginfod_fetch(id, len, kind, why);
}

/* debuginfod: the object itself, else its debug file; *why says what the
 * servers answered for the object when neither came. */
static struct sym_object *find_remote(struct symbolizer *s, const struct map_entry *e,
                                      const struct expect *x, char **why)
{
    char *why_dbg = NULL;
    struct sym_object *o = try_build_at(s, fetch_remote(x->build_id,
                                        SYM_DEBUGINFOD_EXECUTABLE, why), false, e, x, NULL);
    if (!o)
        o = try_build_at(s, fetch_remote(x->build_id, SYM_DEBUGINFOD_DEBUGINFO, &why_dbg),
                         false, e, x, NULL);
    free(why_dbg);
    if (o) {
        free(*why);
        *why = NULL;
    }
    return o;
}

/* The object of the build the process had mapped, where the file at its
 * path is another build (or missing): at the places build_places.h lists,
 * then through debuginfod.  Every candidate counts only with the very
 * build-id.  *looked (malloc'd) says where that was, for the message when
 * none has it, *remote_why what debuginfod said; *kept whether it is the
 * saved run's own copy. */
static struct sym_object *find_by_build_id(struct symbolizer *s, const struct map_entry *e,
                                           const struct expect *x, char **looked,
                                           char **remote_why, bool *kept)
{
    struct sym_build_query q = {
        .build_id = x->build_id, .kept_dir = x->kept_dir, .debug_dir = s->debug_dir,
        .root = s->root, .pid = live_pid(s), .start = e->start, .end = e->end,
    };
    struct sym_build_place places[SYM_BUILD_PLACES_MAX];
    char where[800];
    size_t n = sym_build_places(&q, places, where, sizeof where);
    struct sym_object *o = NULL;
    *kept = false;
    for (size_t i = 0; i < n && !o; i++) {
        o = try_build_at(s, places[i].path, places[i].nofollow, e, x,
                         places[i].kept ? x->kept_dir : NULL);
        places[i].path = NULL;      /* freed by try_build_at */
        *kept = o && places[i].kept;
    }
    sym_build_places_free(places, n);
    if (!o && sym_debuginfod_enabled()) {
        size_t len = strlen(where);
        snprintf(where + len, sizeof where - len, ", debuginfod (%s)", getenv("DEBUGINFOD_URLS"));
        o = find_remote(s, e, x, remote_why);
    }
    *looked = strdup(where);
    return o;
}

/* Why the file at the mapping's path is not used, malloc'd. */
static char *path_verdict(struct symbolizer *s, const struct map_entry *e,
                          const struct sym_object *at_path, const struct mp_error *err)
{
    char *out = NULL;
    int rc;
    if (!at_path)
        rc = asprintf(&out, "%s", err->msg[0] ? err->msg : "its file cannot be read");
    else if (strcmp(at_path->path, e->path) == 0)
        rc = asprintf(&out, "the file there has %s", object_build(s, at_path));
    else
        rc = asprintf(&out, "the file read for it (%s) has %s", at_path->path,
                      object_build(s, at_path));
    return rc < 0 ? NULL : out;
}

/* The mapping's object, when the dump recorded its build-id: the file at
 * its path if it is that build, else one found by the build-id; NULL,
 * with a warning saying what is missing and how to get it. */
static struct sym_object *object_of_build(struct symbolizer *s, const struct map_entry *e,
                                          const struct expect *x, struct sym_object *at_path,
                                          const struct mp_error *err,
                                          const char *label)
{
    if (at_path && object_is_build(at_path, x->build_id))
        return at_path;
    char *looked = NULL, *remote_why = NULL;
    bool kept;
    struct sym_object *o = find_by_build_id(s, e, x, &looked, &remote_why, &kept);
    char *verdict = path_verdict(s, e, at_path, err);
    /* A saved run read elsewhere is named from its own copies: what it is
     * for, and nothing to warn about. */
    if (o && at_path && !kept)
        warn(s, "%s: %s, not the build-id %s the process had mapped: its frames are "
                "named from %s, which has it", e->path, verdict ? verdict : "another build",
             x->build_id, o->path);
    else if (!o)
        warn(s, "cannot symbolize %s: the process had build-id %s mapped, but %s, and no "
                "file of that build was found (looked in %s)%s%s; its frames show as "
                "%s+0xOFFSET, the offset in that file: install its debug package (its "
                "debug file belongs in %s/" PROFILE_KEPT_SUBDIR "/%.2s/%s.debug), set "
                "DEBUGINFOD_URLS to a server that has it, or analyse the run saved with "
                "'profile save' (it keeps the objects) on the host where it ran",
             e->path, x->build_id, verdict ? verdict : "its file is another build",
             looked ? looked : "", remote_why ? "; " : "", remote_why ? remote_why : "",
             label, s->debug_dir, x->build_id, x->build_id + 2);
    free(verdict);
    free(looked);
    free(remote_why);
    return o;
}

static struct sym_file *new_file(struct symbolizer *s, const struct map_entry *e,
                                 bool use_exe, const struct expect *x)
{
    struct sym_file *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    f->path = intern(s, e->path);
    f->label = intern(s, basename_of(e->path));
    f->is_jemalloc = is_jemalloc_path(e->path);
    struct mp_error err = {.msg = ""};
    char *where = file_location(s, e, use_exe, &err);
    struct object_request r = {where, use_exe ? s->exe : e->path, NULL, false};
    if (where)
        f->obj = open_object(s, &r, &err);
    if (x->build_id)
        f->obj = object_of_build(s, e, x, f->obj, &err, f->label);
    else if (!f->obj)
        warn(s, "cannot symbolize %s: %s; its frames show as %s+0xOFFSET "
                "(use --sysroot or --exe to point at a copy of it)",
             e->path, err.msg[0] ? err.msg : "out of memory", f->label);
    free(where);
    return f;
}

static struct sym_file *file_for(struct symbolizer *s, const struct map_list *maps,
                                 const struct map_entry *e, const struct expect *x)
{
    bool use_exe = s->exe && is_main_exe(maps, e);
    const char *key = internf(s, "%s\x1f%" PRIu64 "\x1f%u:%u\x1f%d%d\x1f%s", e->path,
                              e->inode, e->dev_major, e->dev_minor, use_exe, e->deleted,
                              x->key ? x->key : "");
    uint64_t index;
    if (!key)
        return NULL;
    if (sym_u64map_get(&s->file_by_key, (uintptr_t)key, &index))
        return s->files[index];
    struct sym_file *f = new_file(s, e, use_exe, x);
    if (!f || !grow_array((void **)&s->files, &s->capfiles, s->nfiles + 1,
                          sizeof *s->files)) {
        free(f);
        return NULL;
    }
    s->files[s->nfiles] = f;
    sym_u64map_put(&s->file_by_key, (uintptr_t)key, s->nfiles++);
    return f;
}

/* The load bias of this mapping; false when the file on disk does not fit
 * it (a non-PIE program rebuilt since, or a different file altogether). */
static bool mapping_bias(const struct elf_object *elf, const struct map_entry *e,
                         uint64_t *bias)
{
    if (elf_object_bias(elf, e->start, e->offset, bias))
        return false;
    if (elf->type != ET_EXEC)
        return true;
    for (size_t i = 0; i < elf->nloads; i++) {
        const struct elf_load_segment *l = &elf->loads[i];
        uint64_t page_off = l->offset & ~(uint64_t)0xfff;
        if (e->offset >= page_off && e->offset < l->offset + l->filesz &&
            (l->vaddr & ~(uint64_t)0xfff) + (e->offset - page_off) == e->start)
            return true;
    }
    return false;
}

/* A separate debug file standing in for its object (found by build-id):
 * its program headers keep the addresses but no file contents. */
static bool debug_only(const struct elf_object *elf)
{
    for (size_t i = 0; i < elf->nloads; i++)
        if ((elf->loads[i].flags & PF_X) && elf->loads[i].filesz)
            return false;
    return elf->nloads > 0;
}

/* A debug file's load bias, from where the process mapped the object's
 * start (offset 0), as the loader places it: that mapping less the first
 * PT_LOAD's page.  False when the map list has no such mapping. */
static bool bias_from_maps(const struct elf_object *elf, const struct map_list *maps,
                           const struct map_entry *e, uint64_t *bias)
{
    if (elf->type == ET_EXEC) {
        *bias = 0;
        return true;
    }
    uint64_t low = UINT64_MAX;
    for (size_t i = 0; i < elf->nloads; i++)
        if (elf->loads[i].vaddr < low)
            low = elf->loads[i].vaddr;
    for (size_t i = 0; maps && i < maps->n; i++) {
        const struct map_entry *m = &maps->v[i];
        if (m->offset == 0 && m->inode == e->inode && m->start <= e->start &&
            strcmp(m->path, e->path) == 0) {
            *bias = m->start - (low & ~(uint64_t)0xfff);
            return true;
        }
    }
    return false;
}

/* ---- frames ---- */

static struct sym_dwarf *object_dwarf(struct symbolizer *s, struct sym_object *o)
{
    if (o->dwarf_tried)
        return o->dwarf;
    o->dwarf_tried = true;
    const char *path = o->elf->has_debug_info ? o->path : NULL;
    if (!path) {
        find_debug_file(s, o);
        path = o->debug_path;
    }
    if (!path)
        return NULL;
    struct mp_error err;
    o->dwarf = sym_dwarf_open(s->root, path, o->elf->build_id, o->elf->build_id_len, &err);
    if (o->dwarf)
        s->stats.dwarf_loaded++;
    return o->dwarf;
}

/* Is vaddr in the code of a jemalloc copy linked into this object?  The
 * ranges come from the symbols (the debug file's for a stripped object),
 * computed once per object. */
static bool in_static_jemalloc(struct sym_object *o, uint64_t vaddr)
{
    if (!o->jemalloc_code_done) {
        o->jemalloc_code_done = true;
        o->njemalloc_code = jemalloc_code_ranges(object_symbols(o), &o->jemalloc_code);
    }
    for (size_t i = 0; i < o->njemalloc_code; i++)
        if (vaddr >= o->jemalloc_code[i].start && vaddr < o->jemalloc_code[i].end)
            return true;
    return false;
}

/* The frame every lookup starts from: the containing function from the
 * symbol table, or label+0xoffset.  in_allocator: the address lies in
 * the allocator's own code. */
static struct symbol_frame function_frame(struct symbolizer *s, struct sym_file *f,
                                          struct sym_object *o, uint64_t vaddr,
                                          bool in_allocator)
{
    struct symbol_frame fr = {
        .object = f->path, .object_offset = vaddr, .is_allocator = in_allocator,
    };
    const struct elf_symbol *sym = elf_object_symbol_at(object_symbols(o), vaddr);
    const struct sym_name *n = sym ? symbol_name(s, o, sym) : NULL;
    if (n) {
        fr.function = n->name;
        fr.system_name = n->raw ? n->raw : n->name;
        fr.is_allocator |= n->is_allocator;
    } else {
        fr.function = fr.system_name = internf(s, "%s+0x%" PRIx64, f->label, vaddr);
    }
    return fr;
}

/* Inlined frames from DWARF around the function frame; the outermost keeps
 * the symbol table's name so both detail levels agree on it. */
static int line_frames(struct symbolizer *s, struct sym_object *o, uint64_t vaddr,
                       bool in_allocator, const struct symbol_frame *outer,
                       struct symbol_frame *out, int max)
{
    struct sym_dwarf *dw = object_dwarf(s, o);
    struct sym_dwarf_frame df[MAX_INLINE_DEPTH];
    int n = dw ? sym_dwarf_lookup(dw, vaddr, df, max < MAX_INLINE_DEPTH ? max : MAX_INLINE_DEPTH) : 0;
    if (n == 0) {
        out[0] = *outer;
        return 1;
    }
    for (int i = 0; i < n; i++) {
        out[i] = *outer;
        out[i].file = intern(s, df[i].file);
        out[i].line = df[i].line;
        if (i == n - 1 || !df[i].name)
            continue;
        out[i].function = display_name(s, df[i].name);
        out[i].system_name = intern(s, df[i].name);
        out[i].is_allocator = in_allocator || symbol_is_allocator_name(df[i].name) ||
                              (out[i].function && symbol_is_allocator_name(out[i].function));
    }
    return n;
}

static int unmapped_frame(struct symbolizer *s, const struct map_entry *e,
                          uint64_t addr, struct symbol_frame *out)
{
    memset(out, 0, sizeof *out);
    if (!e || !e->path || !e->path[0]) {
        out->function = out->system_name = internf(s, "0x%" PRIx64, addr);
        out->object_offset = addr;
        return 1;
    }
    /* [vdso], [stack] ... : a named region that is not a file. */
    out->object = intern(s, e->path);
    out->object_offset = addr - e->start;
    out->function = out->system_name = internf(s, "%s+0x%" PRIx64, e->path,
                                               out->object_offset);
    return 1;
}

/* An object we could not read: the file offset is what the user can feed
 * to addr2line or objdump once they find the file. */
static int unreadable_frame(struct symbolizer *s, const struct sym_file *f,
                            const struct map_entry *e, uint64_t addr,
                            struct symbol_frame *out)
{
    memset(out, 0, sizeof *out);
    out->object = f->path;
    out->object_offset = addr - e->start + e->offset;
    out->function = out->system_name = internf(s, "%s+0x%" PRIx64, f->label,
                                               out->object_offset);
    out->is_allocator = f->is_jemalloc;
    return 1;
}

static int compute_frames(struct symbolizer *s, const struct map_list *maps,
                          const struct map_entry *e, const struct expect *x, uint64_t addr,
                          enum symbolize_detail detail, struct symbol_frame *out, int max)
{
    if (!e || !map_entry_is_file(e))
        return unmapped_frame(s, e, addr, out);
    struct sym_file *f = file_for(s, maps, e, x);
    if (!f)
        return unmapped_frame(s, e, addr, out);
    uint64_t bias = 0;
    if (f->obj && !(debug_only(f->obj->elf) ? bias_from_maps(f->obj->elf, maps, e, &bias)
                                            : mapping_bias(f->obj->elf, e, &bias))) {
        if (!f->mismatch_warned)
            warn(s, "%s (read from %s) does not fit its mapping at 0x%" PRIx64
                    " in the profile: rebuilt or replaced since?  Its frames show "
                    "as %s+0xOFFSET", f->path, f->obj->path, e->start, f->label);
        f->mismatch_warned = true;
    }
    if (!f->obj || f->mismatch_warned)
        return unreadable_frame(s, f, e, addr, out);
    uint64_t vaddr = addr - bias;
    bool in_allocator = f->is_jemalloc || in_static_jemalloc(f->obj, vaddr);
    struct symbol_frame outer = function_frame(s, f, f->obj, vaddr, in_allocator);
    if (detail != SYMBOLIZE_LINES) {
        out[0] = outer;
        return 1;
    }
    return line_frames(s, f->obj, vaddr, in_allocator, &outer, out, max);
}

/* ---- the per-address cache ---- */

static bool same_mapping(const struct addr_entry *a, const struct map_entry *e,
                         uint64_t addr)
{
    return e->start == a->map_start && addr < e->end && e->offset == a->map_offset &&
           e->inode == a->inode && e->deleted == a->deleted &&
           strcmp(e->path, a->map_path) == 0;
}

/* Is a cached answer valid under this map list?  Checks the mapping at the
 * remembered index first (O(1)), then searches. */
static bool entry_valid(struct addr_entry *a, const struct map_list *maps, uint64_t addr)
{
    if (!a->map_path)
        return !maps || !maps_find(maps, addr);
    if (!maps)
        return false;
    if (a->map_index < maps->n && same_mapping(a, &maps->v[a->map_index], addr))
        return true;
    const struct map_entry *e = maps_find(maps, addr);
    if (!e || !same_mapping(a, e, addr))
        return false;
    a->map_index = (size_t)(e - maps->v);
    return true;
}

static void remember(struct symbolizer *s, const struct map_list *maps,
                     const struct map_entry *e, const struct expect *x, uint64_t addr,
                     int detail, const struct symbol_frame *fr, int n)
{
    if (!grow_array((void **)&s->entries, &s->capentries, s->nentries + 1,
                    sizeof *s->entries) ||
        !grow_array((void **)&s->frames, &s->capframes, s->nframes + (size_t)n,
                    sizeof *s->frames))
        return;
    struct addr_entry *a = &s->entries[s->nentries];
    *a = (struct addr_entry){.first = s->nframes, .count = (size_t)n, .expect_key = x->key};
    if (e) {
        a->map_start = e->start;
        a->map_offset = e->offset;
        a->inode = e->inode;
        a->deleted = e->deleted;
        a->map_path = intern(s, e->path ? e->path : "");
        a->map_index = (size_t)(e - maps->v);
        if (!a->map_path)
            return;
    }
    memcpy(&s->frames[s->nframes], fr, (size_t)n * sizeof *fr);
    s->nframes += (size_t)n;
    if (sym_u64map_put(&s->by_addr[detail], addr, s->nentries) == 0)
        s->nentries++;
}

static int copy_out(const struct symbol_frame *fr, int n, struct symbol_frame *out, int max)
{
    if (n > max)
        n = max;
    memcpy(out, fr, (size_t)n * sizeof *fr);
    return n;
}

/* What profile p (NULL: none) says of mapping e's object. */
static struct expect expect_for(struct symbolizer *s, const struct profile *p,
                                const struct map_entry *e)
{
    struct expect x = {0};
    if (!p || !e || !map_entry_is_file(e))
        return x;
    const char *id = profile_object_id(p, e->path);
    if (!id && !p->kept_dir)
        return x;
    x.build_id = id ? intern(s, id) : NULL;
    x.kept_dir = p->kept_dir ? intern(s, p->kept_dir) : NULL;
    x.key = internf(s, "%s\x1f%s", id ? id : "", p->kept_dir ? p->kept_dir : "");
    return x;
}

static int lookup(struct symbolizer *s, const struct map_list *maps, const struct profile *p,
                  uint64_t addr, enum symbolize_detail detail,
                  struct symbol_frame *frames, int max)
{
    if (max < 1)
        return 0;
    int d = detail == SYMBOLIZE_LINES;
    s->stats.lookups++;
    if (profile_frame_is_mapping(addr)) {
        /* a marker, not code (synthetic_frames.h) */
        memset(frames, 0, sizeof *frames);
        frames->function = frames->system_name = intern(s, PROFILE_FRAME_MAPPING_NAME);
        return 1;
    }
    uint64_t index;
    if (sym_u64map_get(&s->by_addr[d], addr, &index) &&
        entry_valid(&s->entries[index], maps, addr)) {
        struct addr_entry *a = &s->entries[index];
        /* The same mapping, but maybe another dump's word on its build. */
        struct expect x = a->map_path ? expect_for(s, p, &maps->v[a->map_index])
                                      : (struct expect){0};
        if (x.key == a->expect_key) {
            s->stats.address_hits++;
            return copy_out(&s->frames[a->first], (int)a->count, frames, max);
        }
    }
    const struct map_entry *e = maps ? maps_find(maps, addr) : NULL;
    struct expect x = expect_for(s, p, e);
    struct symbol_frame fr[MAX_INLINE_DEPTH];
    int n = compute_frames(s, maps, e, &x, addr, detail, fr, MAX_INLINE_DEPTH);
    remember(s, maps, e, &x, addr, d, fr, n);
    return copy_out(fr, n, frames, max);
}

int symbolizer_lookup(struct symbolizer *s, const struct map_list *maps,
                      uint64_t addr, enum symbolize_detail detail,
                      struct symbol_frame *frames, int max)
{
    return lookup(s, maps, NULL, addr, detail, frames, max);
}

int symbolizer_lookup_profile(struct symbolizer *s, const struct profile *p,
                              uint64_t addr, enum symbolize_detail detail,
                              struct symbol_frame *frames, int max)
{
    return lookup(s, &p->maps, p, addr, detail, frames, max);
}

int symbolizer_profile_object(struct symbolizer *s, const struct profile *p,
                              const struct map_entry *e,
                              struct symbol_file_identity *out, struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    struct expect x = expect_for(s, p, e);
    struct sym_file *f = map_entry_is_file(e) ? file_for(s, &p->maps, e, &x) : NULL;
    if (!f || !f->obj)
        return mp_error_set(err, "no file of %s%s was found", e->path,
                            x.build_id ? "'s recorded build" : "");
    struct sym_object *o = f->obj;
    snprintf(out->path, sizeof out->path, "%s", o->path);
    if (strncmp(o->key, "build-id:", 9) == 0)
        snprintf(out->build_id, sizeof out->build_id, "%s", o->key + 9);
    if (!o->elf->has_symtab || !o->elf->has_debug_info)
        find_debug_file(s, o);
    if (o->debug_path)
        snprintf(out->debug_path, sizeof out->debug_path, "%s", o->debug_path);
    return 0;
}

/* ---- the identity of a mapped file, for stale-input checks ---- */

int symbolizer_file_identity(struct symbolizer *s, const struct map_list *maps,
                             const struct map_entry *e,
                             struct symbol_file_identity *out, struct mp_error *err)
{
    memset(out, 0, sizeof *out);
    err->msg[0] = '\0';
    bool use_exe = s->exe && is_main_exe(maps, e);
    char *where = file_location(s, e, use_exe, err);
    if (!where)
        return err->msg[0] ? -1 : mp_error_set(err, "out of memory");
    snprintf(out->path, sizeof out->path, "%s", where);
    struct stat st;
    int fd = -1, pid = use_exe ? 0 : live_pid(s);
    if (pid) {
        /* Live, the very inode mapped: the file at the path may have been
         * replaced, or mounted over, since (this is what a dump records). */
        char *mapped = sym_map_files_name(pid, e->start, e->end);
        fd = mapped ? safe_open_regular(AT_FDCWD, mapped, false, &st) : -1;
        free(mapped);
    }
    if (fd < 0)
        fd = safe_open_in_root(s->root, where, false, &st);
    free(where);
    if (fd < 0)
        return mp_error_set(err, "cannot open %s: %s", out->path,
                            errno == EINVAL ? "not a regular file" : strerror(errno));
    out->mtime = st.st_mtim;
    uint8_t id[64];
    size_t len = 0;
    int rc = elf_object_read_build_id(fd, id, sizeof id, &len);
    close(fd);
    if (rc)
        return mp_error_set(err, "%s is not an ELF file", out->path);
    for (size_t i = 0; i < len; i++)
        snprintf(out->build_id + 2 * i, 3, "%02x", id[i]);
    return 0;
}
