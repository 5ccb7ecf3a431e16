/* find.c - locates mallctl in every mapped object by the rule
 * "defined STT_FUNC named ^(.*_)?mallctl$ with a sibling
 * <prefix>mallctlnametomib", computes its runtime address, and checks the
 * process really runs those bytes before anyone calls them.  A stripped
 * object that carries jemalloc takes its symbols from its separate debug
 * file (the symbolizer's lookup, lib/symbolize/debug_file.c) or from the user's
 * unstripped copy (--exe), each checked to be the same build. */
#include "allocator/jemalloc/find.h"
#include "attach/preflight.h"
#include "attach/memory.h"
#include "lib/symbolize/alloc_frames.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/symbolize/debug_file.h"

#define VERIFY_BYTES 16

bool jemalloc_mallctl_name(const char *name, char *prefix, size_t cap)
{
    static const char base[] = "mallctl";
    size_t n = strlen(name), b = sizeof base - 1;
    if (n < b || strcmp(name + n - b, base) != 0)
        return false;
    size_t plen = n - b;
    /* The prefix is empty or ends in '_' ("je_", "_rjem_", "duckdb_je_"),
     * and is a C identifier as jemalloc's --with-jemalloc-prefix makes it:
     * memprof prints it and derives the MALLOC_CONF variable's name from
     * it, so a symbol name with other bytes (terminal escapes) is none. */
    if (plen > 0 && name[plen - 1] != '_')
        return false;
    for (size_t i = 0; i < plen; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '_')
            return false;
    if (plen + 1 > cap)
        return false;
    memcpy(prefix, name, plen);
    prefix[plen] = 0;
    return true;
}

static const struct elf_symbol *defined_func(const struct elf_object *obj,
                                             const char *name)
{
    const struct elf_symbol *s = elf_object_symbol_named(obj, name);
    return s && s->defined && s->type == STT_FUNC ? s : NULL;
}

bool jemalloc_is_mallctl(const struct elf_object *obj, const struct elf_symbol *sym,
                         char *prefix, size_t cap)
{
    if (!sym->defined || sym->type != STT_FUNC ||
        !jemalloc_mallctl_name(sym->name, prefix, cap))
        return false;
    char sibling[256];
    snprintf(sibling, sizeof sibling, "%smallctlnametomib", prefix);
    return defined_func(obj, sibling) != NULL;
}

/* Compare the first bytes of mallctl in the file with the process's memory:
 * a different library on disk, or a breakpoint, must not be called. */
static bool code_matches(pid_t pid, const struct mapped_object *o, uint64_t addr,
                         int fd)
{
    uint64_t off;
    unsigned char file[VERIFY_BYTES], mem[VERIFY_BYTES];
    if (fd < 0 || mapped_object_file_offset(o, addr, &off) < 0 ||
        pread(fd, file, sizeof file, (off_t)off) != (ssize_t)sizeof file)
        return false;
    struct mp_error ignored;
    if (remote_read(pid, addr, mem, sizeof mem, &ignored) < 0)
        return false;
    return memcmp(file, mem, sizeof mem) == 0;
}

/* A copy linked into a bigger object has no mapping of its own: its code
 * ranges are found from the symbol table by the same rule the symbolizer
 * uses for allocator frames (lib/symbolize/alloc_frames.c), here moved to run time. */
size_t jemalloc_static_ranges(const struct mapped_object *o, struct addr_range **out)
{
    struct sym_range *r;
    size_t n = jemalloc_code_ranges(mapped_object_symbols(o), &r);
    *out = n ? malloc(n * sizeof **out) : NULL;
    if (!*out)
        n = 0;
    for (size_t i = 0; i < n; i++)
        (*out)[i] = (struct addr_range){r[i].start + o->bias, r[i].end + o->bias};
    free(r);
    return n;
}

static void static_text_range(const struct mapped_object *o, struct jemalloc_copy *c)
{
    struct addr_range *r;
    size_t n = jemalloc_static_ranges(o, &r);
    c->text_start = c->text_end = c->mallctl;
    for (size_t i = 0; i < n; i++)
        if (c->mallctl >= r[i].start && c->mallctl < r[i].end) {
            c->text_start = r[i].start;
            c->text_end = r[i].end;
        }
    free(r);
}

static bool already_listed(const struct jemalloc_copy *v, size_t n,
                           const char *object, const char *prefix)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i].object, object) == 0 && strcmp(v[i].prefix, prefix) == 0)
            return true;
    return false;
}

static void fill_copy(const struct mapped_object *o, const struct elf_symbol *sym,
                      const char *prefix, struct jemalloc_copy *c)
{
    memset(c, 0, sizeof *c);
    const struct elf_object *tab = mapped_object_symbols(o);
    c->object = strdup(o->path);
    c->prefix = strdup(prefix);
    c->symbols_from = o->debug_syms_path ? strdup(o->debug_syms_path) : NULL;
    c->mallctl = sym->value + o->bias;
    char name[256];
    snprintf(name, sizeof name, "%smalloc_stats_print", prefix);
    const struct elf_symbol *msp = defined_func(tab, name);
    c->malloc_stats_print = msp ? msp->value + o->bias : 0;
    snprintf(name, sizeof name, "%smallctl", prefix);
    const struct elf_symbol *dyn = elf_object_symbol_named(tab, name);
    c->dynamic = sym->dynamic || (dyn && dyn->dynamic);
    /* A library that is mostly jemalloc (libjemalloc.so, a preload) owns its
     * whole text; a copy inside the program or another library does not. */
    c->static_copy = o->is_exe || (*prefix && !c->dynamic);
    if (c->static_copy) {
        static_text_range(o, c);
    } else {
        c->text_start = o->text_start;
        c->text_end = o->text_end;
    }
}

static size_t scan_object(pid_t pid, const struct mapped_object *o,
                          struct jemalloc_copy **v, size_t n, size_t *mismatched)
{
    struct map_list maps = { 0 };
    struct mp_error ignored;
    int fd = -1;
    const struct elf_object *tab = mapped_object_symbols(o);
    for (size_t i = 0; i < tab->nsyms; i++) {
        const struct elf_symbol *s = &tab->syms[i];
        char prefix[200];
        if (!jemalloc_is_mallctl(tab, s, prefix, sizeof prefix) ||
            already_listed(*v, n, o->path, prefix))
            continue;
        if (fd < 0 && maps_read_pid(pid, &maps, &ignored) == 0)
            fd = mapped_object_open_file(pid, &maps, o->path);
        if (!code_matches(pid, o, s->value + o->bias, fd)) {
            (*mismatched)++;
            continue;
        }
        struct jemalloc_copy *nv = realloc(*v, (n + 1) * sizeof **v);
        if (!nv)
            break;
        *v = nv;
        fill_copy(o, s, prefix, &nv[n++]);
    }
    if (fd >= 0)
        close(fd);
    maps_free(&maps);
    return n;
}

/* ---- stripped objects ---- */

/* jemalloc's own messages all start so (malloc_conf parsing, aborts); they
 * stay in its read-only data whatever the build strips or renames. */
static const char JEMALLOC_MARK[] = "<jemalloc>: ";

/* Does the object's file hold jemalloc's message strings?  Reads its
 * PT_LOAD contents in chunks (overlapping by the mark's length). */
static bool carries_jemalloc_strings(pid_t pid, const struct mapped_object *o)
{
    struct map_list maps = { 0 };
    struct mp_error ignored;
    if (maps_read_pid(pid, &maps, &ignored) < 0)
        return false;
    int fd = mapped_object_open_file(pid, &maps, o->path);
    maps_free(&maps);
    if (fd < 0)
        return false;
    enum { CHUNK = 1 << 20, OVERLAP = sizeof JEMALLOC_MARK - 2 };
    char *buf = malloc(CHUNK);
    bool found = false;
    for (size_t i = 0; buf && !found && i < o->elf->nloads; i++) {
        const struct elf_load_segment *l = &o->elf->loads[i];
        for (uint64_t at = 0; !found && at < l->filesz; at += CHUNK - OVERLAP) {
            uint64_t want = l->filesz - at < CHUNK ? l->filesz - at : CHUNK;
            ssize_t got = pread(fd, buf, (size_t)want, (off_t)(l->offset + at));
            if (got <= 0)
                break;
            found = memmem(buf, (size_t)got, JEMALLOC_MARK, sizeof JEMALLOC_MARK - 1);
            if ((uint64_t)got < want)
                break;
        }
    }
    free(buf);
    close(fd);
    return found;
}

static void use_symbols(struct mapped_object *o, struct elf_object *syms, const char *path)
{
    elf_object_free(o->debug_syms);
    free(o->debug_syms_path);
    o->debug_syms = syms;
    o->debug_syms_path = strdup(path);
}

/* The separate debug file of o, found as the symbolizer finds it (by
 * build-id, then .gnu_debuglink; build-id or CRC checked).  A matching file
 * that exists but belongs to another build is named in *mismatch. */
static bool load_debug_file(pid_t pid, struct mapped_object *o, const char *debug_dir,
                            char **mismatch, char **remote_note)
{
    char root[64], *opened = NULL, *path = NULL;
    snprintf(root, sizeof root, "/proc/%d/root", pid);
    if (asprintf(&opened, "%s%s", root, o->path) < 0)
        return false;
    struct sym_debug_search q = {
        .obj = o->elf, .opened_path = opened, .path_in_root = o->path,
        .root = root, .debug_dir = debug_dir, .remote_note = remote_note,
    };
    int fd = sym_debug_open(&q, &path, mismatch);
    free(opened);
    if (fd < 0)
        return false;
    struct mp_error ignored;
    struct elf_object *d = elf_object_open_fd(fd, path, &ignored);
    close(fd);
    bool ok = d && d->has_symtab;
    if (ok)
        use_symbols(o, d, path);
    else
        elf_object_free(d);
    free(path);
    return ok;
}

static bool same_build_id(const struct elf_object *a, const struct elf_object *b)
{
    return a->build_id_len && a->build_id_len == b->build_id_len &&
           memcmp(a->build_id, b->build_id, a->build_id_len) == 0;
}

/* --exe with a live process: the user's copy of the executable, used for
 * symbols only once its build-id proves it is the build the process runs
 * (another build's addresses would point mallctl anywhere). */
static int use_exe_copy(pid_t pid, struct mapped_objects *objs, const char *copy,
                        struct mp_error *err)
{
    struct mapped_object *exe = (struct mapped_object *)mapped_objects_exe(objs);
    if (!exe)
        return mp_error_set(err, "cannot use --exe %s: memprof cannot read process "
                            "%d's own executable to compare it with", copy, pid);
    struct mp_error why;
    struct elf_object *e = elf_object_open(copy, &why);
    if (!e)
        return mp_error_set(err, "cannot use --exe: %s", why.msg);
    char want[2 * sizeof e->build_id + 1], got[2 * sizeof e->build_id + 1];
    elf_object_build_id_hex(exe->elf, want, sizeof want);
    elf_object_build_id_hex(e, got, sizeof got);
    int rc = 0;
    if (!exe->elf->build_id_len || !e->build_id_len)
        rc = mp_error_set(err, "cannot use --exe %s: %s has no build-id, so memprof "
                          "cannot check that it is the build process %d runs (%s); "
                          "give a debug file through its .gnu_debuglink instead, or "
                          "omit --exe", copy, e->build_id_len ? exe->path : copy,
                          pid, exe->path);
    else if (!same_build_id(exe->elf, e))
        rc = mp_error_set(err, "--exe %s is another build than process %d's "
                          "executable %s (build-id %s, not %s): give the unstripped "
                          "copy of the very build it runs, or omit --exe",
                          copy, pid, exe->path, got, want);
    else if (!e->has_symtab)
        rc = mp_error_set(err, "--exe %s is stripped too (no symbol table): give "
                          "the unstripped copy of build %s", copy, want);
    if (rc < 0) {
        elf_object_free(e);
        return -1;
    }
    use_symbols(exe, e, copy);
    return 0;
}

/* What to say about a stripped object that carries jemalloc and has no
 * symbols to be found: which debug file, or --exe, would fix it. */
static int stripped_jemalloc(pid_t pid, const struct mapped_object *o,
                             const char *debug_dir, const char *mismatch,
                             const char *remote_note, struct mp_error *err)
{
    const char *what = o->is_exe ? "executable" : "library";
    char *where = sym_debug_build_id_path(debug_dir, o->elf);
    char other[4200] = "";
    if (mismatch)
        snprintf(other, sizeof other, " (%s was found, but it is the debug file of "
                 "another build)", mismatch);
    else if (remote_note)
        snprintf(other, sizeof other, " (%s)", remote_note);
    int rc;
    if (where)
        rc = mp_error_set(err, "process %d's %s %s carries its own copy of jemalloc, "
                          "stripped of its symbols, so memprof cannot find its "
                          "mallctl%s. Install the %s's debug file as %s (from "
                          "objcopy --only-keep-debug of the unstripped build, or "
                          "its -dbgsym package), or put it under --debug-dir DIR "
                          "with the same .build-id/ path%s",
                          pid, what, o->path, other, what, where,
                          o->is_exe ? ", or give an unstripped copy of the same "
                          "build with --exe FILE" : "");
    else
        rc = mp_error_set(err, "process %d's %s %s carries its own copy of jemalloc, "
                          "stripped of its symbols and without a build-id, so "
                          "memprof cannot find its mallctl%s. Put its debug file "
                          "where its .gnu_debuglink names it%s",
                          pid, what, o->path, other,
                          o->is_exe ? ", or give an unstripped copy of the same "
                          "build with --exe FILE" : "");
    free(where);
    return rc;
}

/* mallctl whose code in memory is not the file's: never called. */
static int code_differs(pid_t pid, struct mp_error *err)
{
    return mp_error_set(err, "process %d has mallctl, but its code in memory "
                        "differs from the file on disk (library replaced since "
                        "start, or a debugger breakpoint): memprof will not "
                        "call it; restart the process or remove the breakpoint",
                        pid);
}

int jemalloc_find(pid_t pid, struct mapped_objects *objs, const struct target_options *opts,
                  struct jemalloc_copy **copies, struct mp_error *err)
{
    const char *debug_dir = opts && opts->debug_dir ? opts->debug_dir : SYM_DEBUG_DEFAULT_DIR;
    if (opts && opts->exe && use_exe_copy(pid, objs, opts->exe, err) < 0)
        return -1;
    struct jemalloc_copy *v = NULL;
    size_t n = 0, mismatched = 0;
    for (size_t i = 0; i < objs->n; i++)
        n = scan_object(pid, &objs->v[i], &v, n, &mismatched);
    /* None in any symbol table: a stripped object may still carry one.
     * Only objects holding jemalloc's strings are searched for debug files
     * (a process maps many stripped libraries, none of them jemalloc). */
    const struct mapped_object *stripped = NULL;
    char *stripped_mismatch = NULL, *stripped_note = NULL;
    for (size_t i = 0; n == 0 && !mismatched && i < objs->n; i++) {
        struct mapped_object *o = &objs->v[i];
        if (o->debug_syms || !carries_jemalloc_strings(pid, o))
            continue;
        char *mismatch = NULL, *note = NULL;
        if (load_debug_file(pid, o, debug_dir, &mismatch, &note)) {
            n = scan_object(pid, o, &v, n, &mismatched);
        } else if (!stripped || o->is_exe) {
            stripped = o;
            free(stripped_mismatch);
            stripped_mismatch = mismatch;
            mismatch = NULL;
            free(stripped_note);
            stripped_note = note;
            note = NULL;
        }
        free(note);
        free(mismatch);
    }
    if (n == 0) {
        free(v);
        int rc = mismatched ? code_differs(pid, err)
                 : stripped ? stripped_jemalloc(pid, stripped, debug_dir, stripped_mismatch,
                                                stripped_note, err)
                 : 0;
        free(stripped_mismatch);
        free(stripped_note);
        return rc;
    }
    free(stripped_mismatch);
    free(stripped_note);
    *copies = v;
    return (int)n;
}

void jemalloc_copies_free(struct jemalloc_copy *copies, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(copies[i].object);
        free(copies[i].prefix);
        free(copies[i].symbols_from);
    }
    free(copies);
}
