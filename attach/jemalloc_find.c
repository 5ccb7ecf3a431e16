/* jemalloc_find.c - locates mallctl in every mapped object by the rule
 * "defined STT_FUNC named ^(.*_)?mallctl$ with a sibling
 * <prefix>mallctlnametomib", computes its runtime address, and checks the
 * process really runs those bytes before anyone calls them. */
#include "attach/jemalloc_find.h"
#include "attach/preflight.h"
#include "attach/remote_call.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VERIFY_BYTES 16

bool jemalloc_mallctl_name(const char *name, char *prefix, size_t cap)
{
    static const char base[] = "mallctl";
    size_t n = strlen(name), b = sizeof base - 1;
    if (n < b || strcmp(name + n - b, base) != 0)
        return false;
    size_t plen = n - b;
    /* The prefix is empty or ends in '_' ("je_", "_rjem_", "duckdb_je_"). */
    if (plen > 0 && name[plen - 1] != '_')
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

static bool has_prefix(const char *name, const char *prefix)
{
    return *prefix && strncmp(name, prefix, strlen(prefix)) == 0;
}

static bool is_program_marker(const char *name)
{
    static const char *const marks[] = { "main", "_start", "_init", "_fini",
        "frame_dummy", "register_tm_clones", "deregister_tm_clones",
        "__do_global_dtors_aux", "__libc_csu_init", NULL };
    for (int i = 0; marks[i]; i++)
        if (strcmp(name, marks[i]) == 0)
            return true;
    return false;
}

static bool is_jemalloc_name(const char *name, const char *prefix)
{
    return has_prefix(name, "je_") || has_prefix(name, prefix);
}

static int push_range(struct addr_range **v, size_t *n, uint64_t lo, uint64_t hi)
{
    struct addr_range *nv = realloc(*v, (*n + 1) * sizeof **v);
    if (!nv)
        return -1;
    nv[*n].start = lo;
    nv[*n].end = hi;
    *v = nv;
    (*n)++;
    return 0;
}

/* A copy linked into a bigger object has no mapping of its own.  Its
 * static helpers carry no prefix, so: clusters of functions from one je_* /
 * <prefix>* function to the next, as long as at most MAX_GAP unprefixed
 * ones and no program marker (main, _start...) lie between them. */
#define MAX_GAP 1024
size_t jemalloc_static_ranges(const struct mapped_object *o, const char *prefix,
                              struct addr_range **out)
{
    struct addr_range *v = NULL;
    size_t n = 0, gap = 0;
    uint64_t lo = 0, hi = 0;
    bool open = false;
    for (size_t i = 0; i < o->elf->nsyms; i++) {
        const struct elf_symbol *s = &o->elf->syms[i];
        if (!s->defined || s->type != STT_FUNC)
            continue;
        if (is_jemalloc_name(s->name, prefix)) {
            if (!open) {
                lo = s->value;
                open = true;
            }
            if (s->value + s->size > hi)
                hi = s->value + s->size;
            gap = 0;
        } else if (open && (is_program_marker(s->name) || ++gap > MAX_GAP)) {
            push_range(&v, &n, lo + o->bias, hi + o->bias);
            open = false;
        }
    }
    if (open)
        push_range(&v, &n, lo + o->bias, hi + o->bias);
    *out = v;
    return n;
}

static void static_text_range(const struct mapped_object *o, const char *prefix,
                              struct jemalloc_copy *c)
{
    struct addr_range *r;
    size_t n = jemalloc_static_ranges(o, prefix, &r);
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
    c->object = strdup(o->path);
    c->prefix = strdup(prefix);
    c->mallctl = sym->value + o->bias;
    char name[256];
    snprintf(name, sizeof name, "%smalloc_stats_print", prefix);
    const struct elf_symbol *msp = defined_func(o->elf, name);
    c->malloc_stats_print = msp ? msp->value + o->bias : 0;
    snprintf(name, sizeof name, "%smallctl", prefix);
    const struct elf_symbol *dyn = elf_object_symbol_named(o->elf, name);
    c->dynamic = sym->dynamic || (dyn && dyn->dynamic);
    /* A library that is mostly jemalloc (libjemalloc.so, a preload) owns its
     * whole text; a copy inside the program or another library does not. */
    c->static_copy = o->is_exe || (*prefix && !c->dynamic);
    if (c->static_copy) {
        static_text_range(o, prefix, c);
    } else {
        c->text_start = o->text_start;
        c->text_end = o->text_end;
    }
}

static size_t scan_object(pid_t pid, const struct mapped_objects *objs,
                          const struct mapped_object *o, struct jemalloc_copy **v,
                          size_t n, size_t *mismatched)
{
    struct map_list maps = { 0 };
    struct mp_error ignored;
    int fd = -1;
    for (size_t i = 0; i < o->elf->nsyms; i++) {
        const struct elf_symbol *s = &o->elf->syms[i];
        char prefix[200];
        if (!jemalloc_is_mallctl(o->elf, s, prefix, sizeof prefix) ||
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
    (void)objs;
    if (fd >= 0)
        close(fd);
    maps_free(&maps);
    return n;
}

/* Which object's malloc the program's calls resolve to: the executable's
 * own first, then the libraries. */
static const struct mapped_object *malloc_provider(const struct mapped_objects *objs)
{
    const struct mapped_object *exe = mapped_objects_exe(objs);
    if (exe && defined_func(exe->elf, "malloc"))
        return exe;
    for (size_t i = 0; i < objs->n; i++) {
        const struct elf_symbol *s = defined_func(objs->v[i].elf, "malloc");
        if (s && s->dynamic)
            return &objs->v[i];
    }
    return NULL;
}

static const char *allocator_name(const char *path)
{
    if (strstr(path, "/libc.so") || strstr(path, "/libc-"))
        return "glibc malloc";
    if (strstr(path, "tcmalloc"))
        return "tcmalloc";
    if (strstr(path, "mimalloc"))
        return "mimalloc";
    return "the malloc";
}

static int no_jemalloc(pid_t pid, const struct mapped_objects *objs, size_t mismatched,
                       struct mp_error *err)
{
    if (mismatched)
        return mp_error_set(err, "process %d has mallctl, but its code in memory "
                            "differs from the file on disk (library replaced since "
                            "start, or a debugger breakpoint): memprof will not "
                            "call it; restart the process or remove the breakpoint",
                            pid);
    const struct mapped_object *m = malloc_provider(objs);
    if (preflight_secure_exec(pid))
        return mp_error_set(err, "process %d does not use jemalloc (no mallctl in any "
                            "mapped object); it uses %s%s%s. It runs in secure-"
                            "execution mode (setuid, setgid or file capabilities), "
                            "where LD_PRELOAD and MALLOC_CONF are ignored: link it "
                            "with jemalloc (or list libjemalloc in /etc/ld.so.preload) "
                            "and put prof:true,prof_active:false in /etc/malloc.conf "
                            "to profile it", pid, m ? allocator_name(m->path) :
                            "an allocator memprof cannot name", m ? " from " : "",
                            m ? m->path : "");
    return mp_error_set(err, "process %d does not use jemalloc (no mallctl in any "
                        "mapped object); it uses %s%s%s. Start it with "
                        "LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 "
                        "MALLOC_CONF=prof:true,prof_active:false to profile it",
                        pid, m ? allocator_name(m->path) : "an allocator memprof "
                        "cannot name", m ? " from " : "", m ? m->path : "");
}

int jemalloc_find(pid_t pid, const struct mapped_objects *objs,
                  struct jemalloc_copy **copies, struct mp_error *err)
{
    struct jemalloc_copy *v = NULL;
    size_t n = 0, mismatched = 0;
    for (size_t i = 0; i < objs->n; i++)
        n = scan_object(pid, objs, &objs->v[i], &v, n, &mismatched);
    if (n == 0) {
        free(v);
        return no_jemalloc(pid, objs, mismatched, err);
    }
    *copies = v;
    return (int)n;
}

void jemalloc_copies_free(struct jemalloc_copy *copies, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(copies[i].object);
        free(copies[i].prefix);
    }
    free(copies);
}
