/* allocator.c - which allocator serves a process, and the calls every
 * allocator answers (statistics, purge) sent to its implementation.
 *
 * The owner of malloc is the object the program's malloc() calls reach in
 * the loader's search order (attach/link_map.c): tcmalloc and mimalloc
 * export __libc_malloc too, and a library dlopen()ed with its own malloc
 * serves nobody else, so neither "which object has malloc" nor the address
 * order of the maps can tell.  The object is then named by the functions
 * only that allocator defines. */
#include "allocator/allocator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/glibc/glibc.h"
#include "allocator/jemalloc/jemalloc.h"
#include "allocator/tcmalloc/tcmalloc.h"
#include "attach/link_map.h"
#include "attach/proc_fate.h"

static const struct {
    const char *name, *key;
} kinds[] = {
    [ALLOCATOR_UNKNOWN] = { "an allocator memprof does not know", "unknown" },
    [ALLOCATOR_JEMALLOC] = { "jemalloc", "jemalloc" },
    [ALLOCATOR_GLIBC] = { "glibc malloc", "glibc" },
    [ALLOCATOR_TCMALLOC] = { "gperftools tcmalloc", "tcmalloc" },
    [ALLOCATOR_TCMALLOC_MINIMAL] = { "gperftools tcmalloc_minimal", "tcmalloc_minimal" },
    [ALLOCATOR_MIMALLOC] = { "mimalloc", "mimalloc" },
};

/* A kind outside the table (never made, but gcc 12 for arm64 cannot tell
 * and fails the build with -Warray-bounds) reads as unknown. */
static enum allocator_kind known_kind(enum allocator_kind k)
{
    return (unsigned)k < sizeof kinds / sizeof kinds[0] ? k : ALLOCATOR_UNKNOWN;
}

const char *allocator_kind_name(enum allocator_kind k)
{
    return kinds[known_kind(k)].name;
}

const char *allocator_kind_key(enum allocator_kind k)
{
    return kinds[known_kind(k)].key;
}

static bool defines(const struct mapped_object *o, const char *name)
{
    return mapped_object_function(o, name) != NULL;
}

/* What the object defining malloc is, by what only each allocator has. */
static enum allocator_kind kind_of(const struct mapped_object *o)
{
    if (!o)
        return ALLOCATOR_UNKNOWN;
    if (defines(o, "mallctl") && defines(o, "mallctlnametomib"))
        return ALLOCATOR_JEMALLOC;
    if (defines(o, "tc_malloc") && defines(o, "MallocExtension_GetNumericProperty"))
        return defines(o, "HeapProfilerStart") ? ALLOCATOR_TCMALLOC
                                               : ALLOCATOR_TCMALLOC_MINIMAL;
    if (defines(o, "mi_malloc"))
        return ALLOCATOR_MIMALLOC;
    if (defines(o, "malloc_info") && defines(o, "malloc_trim") &&
        (defines(o, "gnu_get_libc_version") || defines(o, "__libc_malloc")))
        return ALLOCATOR_GLIBC;
    return ALLOCATOR_UNKNOWN;
}

/* When the link map cannot be read (a static program without a loader):
 * the executable's own malloc. */
static const struct mapped_object *malloc_owner(pid_t pid, const struct mapped_objects *objs)
{
    const struct mapped_object *m = NULL;
    if (link_map_definer(pid, objs, "malloc", &m) == 0)
        return m;
    const struct mapped_object *exe = mapped_objects_exe(objs);
    return exe && defines(exe, "malloc") ? exe : NULL;
}

/* Code of an allocator library no thread may be borrowed inside. */
static int library_code(const struct mapped_object *o, enum allocator_kind k,
                        struct code_ranges *unsafe)
{
    snprintf(unsafe->what, sizeof unsafe->what, "%s",
             k == ALLOCATOR_UNKNOWN ? "the allocator" : allocator_kind_name(k));
    if (!o || o->is_exe)
        return 0;
    return code_ranges_add(unsafe, o->text_start, o->text_end);
}

static int probe_find(struct target *t, struct mapped_objects *objs,
                      const struct target_options *opts, struct code_ranges *unsafe,
                      void *arg, struct mp_error *err)
{
    struct allocator_id *id = arg;
    pid_t pid = target_pid(t);
    const struct mapped_object *m = malloc_owner(pid, objs);
    memset(id, 0, sizeof *id);
    id->malloc_kind = kind_of(m);
    if (m) {
        snprintf(id->malloc_object, sizeof id->malloc_object, "%s", m->path);
        id->malloc_linked_in = m->is_exe;
    }
    int n = jemalloc_probe(t, objs, opts, unsafe, err);
    if (n < 0)
        return -1;
    if (n > 0) {
        id->kind = ALLOCATOR_JEMALLOC;
        return 0;
    }
    /* A loader at work may map jemalloc next: the engine waits, asks again.
     * Its r_debug may not say so yet (the instant after an exec); a
     * dynamically linked program with no malloc mapped says so too, since
     * its C library is among the first libraries a loader maps. */
    if (proc_loader_busy(pid))
        return mp_error_set(err, "process %d is still loading its libraries", pid);
    if (!m && !target_loader_waited(t) && proc_has_loader(pid)) {
        mp_error_set(err, "process %d is still loading its libraries", pid);
        return TARGET_PROBE_LOADING;
    }
    id->kind = id->malloc_kind;
    switch (id->kind) {
    case ALLOCATOR_GLIBC:
        return glibc_probe(t, m, unsafe, err);
    case ALLOCATOR_TCMALLOC:
    case ALLOCATOR_TCMALLOC_MINIMAL:
        return tcmalloc_probe(t, m, unsafe, err);
    case ALLOCATOR_MIMALLOC:
        return library_code(m, id->kind, unsafe) < 0 ? mp_error_set(err, "out of memory") : 0;
    case ALLOCATOR_JEMALLOC:     /* its mallctl is in no symbol table */
    case ALLOCATOR_UNKNOWN:
        id->kind = ALLOCATOR_UNKNOWN;
        return library_code(m, id->kind, unsafe) < 0 ? mp_error_set(err, "out of memory") : 0;
    }
    return 0;
}

struct target *allocator_open(pid_t pid, const struct target_options *opts,
                              struct allocator_id *id, struct mp_error *err)
{
    const struct target_probe probe = { .find = probe_find, .arg = id };
    return target_open_with(pid, opts, &probe, err);
}

bool allocator_has_stats(enum allocator_kind k)
{
    return k == ALLOCATOR_JEMALLOC || k == ALLOCATOR_GLIBC || k == ALLOCATOR_TCMALLOC ||
           k == ALLOCATOR_TCMALLOC_MINIMAL;
}

bool allocator_has_purge(enum allocator_kind k)
{
    return allocator_has_stats(k);
}

const char *allocator_why_no_stats(enum allocator_kind k)
{
    switch (k) {
    case ALLOCATOR_MIMALLOC:
        return "mimalloc's statistics printer (mi_stats_print) adds only the "
               "calling thread's counters to those of the threads that have exited, "
               "so called from one borrowed thread it would leave out every other "
               "running thread's allocations; memprof does not show totals that are "
               "not true";
    case ALLOCATOR_UNKNOWN:
        return "memprof does not know this allocator's interface, and calls into "
               "a process only what it knows the contract of";
    default:
        return NULL;
    }
}

static int unsupported(const struct allocator_id *id, const char *what, struct mp_error *err)
{
    const char *why = allocator_why_no_stats(id->kind);
    return mp_error_set(err, "memprof cannot %s %s%s%s", what, allocator_kind_name(id->kind),
                        why ? ": " : "", why ? why : "");
}

int allocator_stats(struct target *t, const struct allocator_id *id,
                    struct allocator_stats *st, struct mp_error *err)
{
    memset(st, 0, sizeof *st);
    st->in_use = st->free_held = st->from_system = st->mmapped = UINT64_MAX;
    switch (id->kind) {
    case ALLOCATOR_GLIBC:
        return glibc_stats(t, st, err);
    case ALLOCATOR_TCMALLOC:
    case ALLOCATOR_TCMALLOC_MINIMAL:
        return tcmalloc_stats(t, st, err);
    case ALLOCATOR_JEMALLOC:
        return mp_error_set(err, "internal error: jemalloc's statistics come through "
                            "its mallctl (allocator/jemalloc)");
    default:
        return unsupported(id, "read the statistics of", err);
    }
}

int allocator_purge(struct target *t, const struct allocator_id *id,
                    struct allocator_purge *p, struct mp_error *err)
{
    p->free_before = p->free_after = p->system_before = p->system_after = UINT64_MAX;
    p->ret = 0;
    switch (id->kind) {
    case ALLOCATOR_GLIBC:
        return glibc_purge(t, p, err);
    case ALLOCATOR_TCMALLOC:
    case ALLOCATOR_TCMALLOC_MINIMAL:
        return tcmalloc_purge(t, p, err);
    case ALLOCATOR_JEMALLOC:
        return mp_error_set(err, "internal error: jemalloc purges through its mallctl "
                            "(allocator/jemalloc)");
    default:
        return unsupported(id, "purge", err);
    }
}
