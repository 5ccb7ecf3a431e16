/* unwind_check.c - walks a stopped thread's stack with libunwind-ptrace
 * and refuses it when a frame sits where a lock mallctl may need could be
 * held.  The address space (and its unwind-info cache) lives as long as the
 * target; per-thread _UPT handles are kept too, since they cache the last
 * ELF image they mapped and the same thread is usually chosen again. */
#include "attach/unwind_check.h"

#include "attach/jemalloc_find.h"

#include <libunwind-ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FRAMES 128
#define UPT_CACHE 16

struct upt_slot {
    pid_t tid;
    void *upt;
};

struct unwind_checker {
    pid_t pid;
    unw_addr_space_t as;
    const struct mapped_objects *objs;
    const struct jemalloc_copy *copies;
    size_t ncopies;
    struct addr_range *ranges;  /* code of every jemalloc copy */
    size_t nranges;
    struct upt_slot upts[UPT_CACHE];
    unsigned next_slot;
};

static void add_range(struct unwind_checker *u, uint64_t lo, uint64_t hi)
{
    struct addr_range *v = realloc(u->ranges, (u->nranges + 1) * sizeof *v);
    if (!v)
        return;
    v[u->nranges].start = lo;
    v[u->nranges++].end = hi;
    u->ranges = v;
}

/* A shared copy owns its object's text; a static one owns the clusters of
 * its functions inside the bigger object. */
static void collect_ranges(struct unwind_checker *u)
{
    for (size_t i = 0; i < u->ncopies; i++) {
        const struct jemalloc_copy *c = &u->copies[i];
        const struct mapped_object *o = mapped_objects_find(u->objs, c->mallctl);
        if (!c->static_copy || !o) {
            add_range(u, c->text_start, c->text_end);
            continue;
        }
        struct addr_range *r;
        size_t n = jemalloc_static_ranges(o, c->prefix, &r);
        for (size_t k = 0; k < n; k++)
            add_range(u, r[k].start, r[k].end);
        free(r);
    }
}

struct unwind_checker *unwind_checker_new(pid_t pid, const struct mapped_objects *objs,
                                          const struct jemalloc_copy *copies,
                                          size_t ncopies, struct mp_error *err)
{
    struct unwind_checker *u = calloc(1, sizeof *u);
    if (!u) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    u->as = unw_create_addr_space(&_UPT_accessors, 0);
    if (!u->as) {
        free(u);
        mp_error_set(err, "libunwind cannot create an address space for process %d", pid);
        return NULL;
    }
    /* Global caching: code does not change under us, so unwind info found
     * once stays valid for the whole session. */
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    u->pid = pid;
    u->objs = objs;
    u->copies = copies;
    u->ncopies = ncopies;
    collect_ranges(u);
    return u;
}

void unwind_checker_free(struct unwind_checker *u)
{
    if (!u)
        return;
    for (int i = 0; i < UPT_CACHE; i++)
        if (u->upts[i].upt)
            _UPT_destroy(u->upts[i].upt);
    unw_destroy_addr_space(u->as);
    free(u->ranges);
    free(u);
}

static void *upt_for(struct unwind_checker *u, pid_t tid)
{
    for (int i = 0; i < UPT_CACHE; i++)
        if (u->upts[i].upt && u->upts[i].tid == tid)
            return u->upts[i].upt;
    struct upt_slot *s = &u->upts[u->next_slot++ % UPT_CACHE];
    if (s->upt)
        _UPT_destroy(s->upt);
    s->upt = _UPT_create(tid);
    s->tid = tid;
    return s->upt;
}

int unwind_libc_name_unsafe(const char *name)
{
    static const char *const names[] = {
        "malloc", "free", "calloc", "realloc", "reallocarray", "memalign",
        "posix_memalign", "aligned_alloc", "valloc", "pvalloc", "malloc_trim",
        "malloc_usable_size", "malloc_stats", "malloc_info", "mallinfo", "mallinfo2",
        "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
        "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "_int_malloc", "_int_free",
        "_int_realloc", "_int_memalign", "malloc_consolidate", "sysmalloc",
        "tcache_init", "arena_get2", "fork", "__libc_fork", "_Fork", "__fork",
        "__run_fork_handlers", "dl_iterate_phdr", "__dl_iterate_phdr", "dlopen",
        "dlclose", "dlsym", "dlvsym", "dladdr", "dladdr1", "__libc_dlopen_mode",
        "__libc_dlsym", "__libc_dlclose", "backtrace", "__backtrace", "abort",
        NULL };
    for (int i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0)
            return 1;
    /* A statically linked unwinder or loader helper. */
    return strncmp(name, "_Unwind_", 8) == 0 || strncmp(name, "__register_frame", 16) == 0 ||
           strncmp(name, "__deregister_frame", 18) == 0;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Exact symbol containing addr (sized), or NULL: a nearest-preceding
 * guess could name the wrong function. */
static const char *symbol_name(const struct mapped_object *o, uint64_t addr)
{
    const struct elf_symbol *s = elf_object_symbol_at(o->elf, addr - o->bias);
    if (!s || s->size == 0)
        return NULL;
    uint64_t v = addr - o->bias;
    return v >= s->value && v < s->value + s->size ? s->name : NULL;
}

static int in_jemalloc(const struct unwind_checker *u, uint64_t pc)
{
    for (size_t i = 0; i < u->nranges; i++)
        if (pc >= u->ranges[i].start && pc < u->ranges[i].end)
            return 1;
    return 0;
}

/* 1 when the frame at pc is a place mallctl must not be called from. */
static int frame_unsafe(const struct unwind_checker *u, uint64_t pc, char *why,
                        size_t whylen)
{
    if (in_jemalloc(u, pc)) {
        snprintf(why, whylen, "inside jemalloc (pc %#llx)", (unsigned long long)pc);
        return 1;
    }
    const struct mapped_object *o = mapped_objects_find(u->objs, pc);
    if (!o)
        return 0;
    const char *base = base_name(o->path);
    if (strncmp(base, "ld-linux", 8) == 0 || strncmp(base, "ld-", 3) == 0) {
        snprintf(why, whylen, "inside the dynamic loader %s", base);
        return 1;
    }
    if (strncmp(base, "libgcc_s", 8) == 0 || strncmp(base, "libunwind", 9) == 0) {
        snprintf(why, whylen, "inside the unwinder %s", base);
        return 1;
    }
    const char *name = symbol_name(o, pc);
    if (name && unwind_libc_name_unsafe(name)) {
        snprintf(why, whylen, "inside %s (%s)", name, base);
        return 1;
    }
    return 0;
}

int unwind_check_thread(struct unwind_checker *u, pid_t tid, char *why, size_t whylen)
{
    void *upt = upt_for(u, tid);
    if (!upt) {
        snprintf(why, whylen, "libunwind cannot follow thread %d", tid);
        return -1;
    }
    unw_cursor_t c;
    if (unw_init_remote(&c, u->as, upt) < 0) {
        snprintf(why, whylen, "cannot start unwinding thread %d", tid);
        return 1;
    }
    for (int depth = 0; depth < MAX_FRAMES; depth++) {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0)
            break;
        if (unw_is_signal_frame(&c) > 0) {
            snprintf(why, whylen, "running a signal handler");
            return 1;
        }
        /* Caller frames hold return addresses: look up the call itself. */
        uint64_t pc = depth == 0 || ip == 0 ? ip : ip - 1;
        if (frame_unsafe(u, pc, why, whylen))
            return 1;
        if (unw_step(&c) <= 0)
            break;
    }
    return 0;
}
