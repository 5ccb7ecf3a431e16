/* unwind_check.c - walks a stopped thread's stack with libunwind and
 * refuses it when a frame sits where a lock mallctl may need could be held.
 *
 * The address space uses memprof's own accessors: registers come from the
 * registers remote_call already saved (no PTRACE_PEEKUSER), memory from
 * unwind_memory's page cache (no PTRACE_PEEKDATA per word).  Only the
 * lookup of unwind tables is libunwind's, over each object's .eh_frame_hdr
 * as the process has it mapped (unwind_tables.c: found by no path, so a
 * chroot()ed process is walked as any other); an object without one goes
 * to libunwind-ptrace, with one _UPT handle per mapped object so that each
 * keeps its ELF image mapped for the whole session.  A walk ends at the
 * stack's base only where the last frame's own tables say so: one that
 * ends on a frame no table covers (libunwind's frame-pointer guess found
 * a zero) is cut short, and the thread refused.
 * The address space (and libunwind's register-state cache) lives as long
 * as the target, and is warmed at open by walking the stacks of threads
 * blocked in system calls, which needs no stop.  What can be set up
 * without a stop is, before any (prime): libunwind's view of each object,
 * and its unwind tables read from its file rather than the process. */
#include "attach/unwind_check.h"

#include "attach/threads.h"
#include "attach/unwind_memory.h"
#include "attach/unwind_tables.h"

#include <elf.h>
#include <libunwind-ptrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Deeper than this, a stack is not walked to its end, and the thread is
 * refused: a frame left unchecked could be the allocator's. */
#define MAX_FRAMES 1024

struct unwind_checker {
    pid_t pid;
    unw_addr_space_t as;
    const struct mapped_objects *objs;
    struct code_ranges unsafe;  /* the allocator's code (a copy) */
    struct unwind_memory *mem;
    void **upts;                /* one per mapped object, then one for the rest */
    struct object_table *tables; /* one per mapped object */
    const struct arch_regs *regs; /* of the thread being walked */
};

/* An object's table as the process maps it: looked for once per map. */
struct object_table {
    int state;                  /* 0 not looked for, 1 found, -1 none */
    unw_dyn_info_t di;
};

/* libunwind's search of a remote binary-search table (exported by
 * libunwind-generic, not declared in its public headers). */
extern int UNW_ARCH_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
                                                   unw_dyn_info_t *di, unw_proc_info_t *pi,
                                                   int need_unwind_info, void *arg);

/* The checker whose walk is in progress.  libunwind hands _UPT's own
 * argument to the address space's accessors when _UPT_find_proc_info reads
 * unwind tables, so the accessors cannot rely on their argument; attach/
 * walks one stack at a time. */
static struct unwind_checker *walking;

static void *upt_for_ip(struct unwind_checker *u, unw_word_t ip)
{
    const struct mapped_object *o = mapped_objects_find(u->objs, ip);
    size_t i = o ? (size_t)(o - u->objs->v) : u->objs->n;
    if (!u->upts[i])
        u->upts[i] = _UPT_create(threads_live_tid(u->pid)); /* reads its maps */
    return u->upts[i];
}

/* o's table from the process's memory, NULL when it has none. */
static unw_dyn_info_t *table_for(struct unwind_checker *u, const struct mapped_object *o)
{
    struct object_table *t = &u->tables[o - u->objs->v];
    if (t->state == 0)
        t->state = unwind_table_find(u->mem, o, &t->di) == 0 ? 1 : -1;
    return t->state > 0 ? &t->di : NULL;
}

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                          int need_unwind_info, void *arg)
{
    const struct mapped_object *o = mapped_objects_find(walking->objs, ip);
    unw_dyn_info_t *di = o ? table_for(walking, o) : NULL;
    if (di)
        return UNW_ARCH_OBJ(dwarf_search_unwind_table)(as, ip, di, pi, need_unwind_info,
                                                       arg);
    void *upt = upt_for_ip(walking, ip);
    return upt ? _UPT_find_proc_info(as, ip, pi, need_unwind_info, upt) : -UNW_ENOINFO;
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
    (void)arg;
    _UPT_put_unwind_info(as, pi, NULL);
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
    (void)as, (void)addr, (void)arg;
    return -UNW_ENOINFO;    /* no dynamically registered unwind info */
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                      void *arg)
{
    (void)as, (void)arg;
    if (write)
        return -UNW_EINVAL; /* a check never changes the target */
    uint64_t v;
    if (unwind_memory_word(walking->mem, addr, &v) < 0)
        return -UNW_EINVAL;
    *val = v;
    return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write,
                      void *arg)
{
    (void)as, (void)arg;
    uint64_t v;
    if (write)
        return -UNW_EREADONLYREG;
    if (arch_dwarf_reg(walking->regs, reg, &v) < 0)
        return -UNW_EBADREG;
    *val = v;
    return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val,
                        int write, void *arg)
{
    (void)as, (void)reg, (void)val, (void)write, (void)arg;
    return -UNW_EBADREG;    /* walking a stack needs no FPU register */
}

static unw_accessors_t accessors = {
    .find_proc_info = find_proc_info,
    .put_unwind_info = put_unwind_info,
    .get_dyn_info_list_addr = get_dyn_info_list_addr,
    .access_mem = access_mem,
    .access_reg = access_reg,
    .access_fpreg = access_fpreg,
};

static void walk(struct unwind_checker *u, const struct arch_regs *regs);

/* Walk the stacks of the threads blocked in a system call now, from the
 * stack and instruction pointers /proc shows without stopping them: this
 * fills the page cache and libunwind's unwind-info cache, so the first real
 * stop does not pay for opening objects and parsing their tables.  The
 * walks are only as good as the racy reads; nothing is decided from them. */
static void warm_up(struct unwind_checker *u)
{
    struct thread_info *threads;
    size_t n;
    struct mp_error ignored;
    if (threads_list(u->pid, &threads, &n, &ignored) < 0)
        return;
    /* Only the threads a session would try first (the list is ranked): a
     * process with thousands of threads must not cost thousands of walks. */
    for (size_t i = 0; i < n && i < THREADS_CANDIDATES; i++) {
        if (!threads[i].in_syscall || !threads[i].pc || !threads[i].sp)
            continue;
        struct arch_regs regs;
        arch_regs_from_pc_sp(&regs, threads[i].pc, threads[i].sp);
        walk(u, &regs);
    }
    free(threads);
}

/* The read-only segment holding o's unwind tables (eh_frame_hdr and,
 * with the linkers' usual layout, eh_frame beside it), served from o's
 * file (unwind_memory_add_file): the loader never writes there when it is
 * neither writable, executable (a debugger's breakpoints), inside RELRO,
 * nor under text relocations.  Otherwise, or when the file is not the
 * mapped one, its pages are read from the process as before. */
static void add_tables_window(struct unwind_checker *u, const struct mapped_object *o)
{
    const struct elf_object *e = o->elf;
    if (!e || !e->eh_frame_hdr_size || e->textrel)
        return;
    const struct elf_load_segment *seg = NULL;
    for (size_t i = 0; i < e->nloads && !seg; i++)
        if (e->eh_frame_hdr_vaddr >= e->loads[i].vaddr &&
            e->eh_frame_hdr_vaddr - e->loads[i].vaddr < e->loads[i].filesz)
            seg = &e->loads[i];
    if (!seg || (seg->flags & (PF_W | PF_X)) ||
        (e->relro_size && e->relro_vaddr < seg->vaddr + seg->filesz &&
         seg->vaddr < e->relro_vaddr + e->relro_size))
        return;
    int fd = mapped_object_open_file(u->pid, unwind_memory_maps(u->mem), o->path);
    if (fd < 0)
        return;
    unwind_memory_add_file(u->mem, seg->vaddr + o->bias, seg->vaddr + o->bias + seg->filesz,
                           fd, seg->offset);
    close(fd);
}

/* libunwind's setup for each object (it reads the process's whole map
 * and maps the object's file: a few hundred microseconds, milliseconds in
 * a process with thousands of mappings), done now, outside any stop, by
 * looking up one address of its code: a walk inside a stop finds every
 * object of the process ready.  The lookup also brings the first pages of
 * the object's unwind tables into the page cache. */
static void prime(struct unwind_checker *u)
{
    walking = u;
    for (size_t i = 0; i < u->objs->n; i++) {
        const struct mapped_object *o = &u->objs->v[i];
        unw_proc_info_t pi;
        add_tables_window(u, o);
        if (o->text_start < o->text_end)
            find_proc_info(u->as, o->text_start, &pi, 0, NULL);
    }
    walking = NULL;
}

struct unwind_checker *unwind_checker_new(pid_t pid, const struct mapped_objects *objs,
                                          const struct code_ranges *unsafe,
                                          struct mp_error *err)
{
    struct unwind_checker *u = calloc(1, sizeof *u);
    if (!u || !(u->upts = calloc(objs->n + 1, sizeof *u->upts)) ||
        !(u->tables = calloc(objs->n + 1, sizeof *u->tables))) {
        if (u)
            free(u->upts);
        free(u);
        mp_error_set(err, "out of memory");
        return NULL;
    }
    u->pid = pid;
    u->objs = objs;
    snprintf(u->unsafe.what, sizeof u->unsafe.what, "%s", unsafe->what);
    for (size_t i = 0; i < unsafe->n; i++)
        if (code_ranges_add(&u->unsafe, unsafe->v[i].start, unsafe->v[i].end) < 0) {
            unwind_checker_free(u);
            mp_error_set(err, "out of memory");
            return NULL;
        }
    u->mem = unwind_memory_new(pid, err);
    u->as = u->mem ? unw_create_addr_space(&accessors, 0) : NULL;
    if (!u->as) {
        if (u->mem)
            mp_error_set(err, "libunwind cannot create an address space for process %d",
                         pid);
        unwind_checker_free(u);
        return NULL;
    }
    /* Global caching: unwind info found once stays valid until the code
     * mappings change (unwind_checker_recheck). */
    unw_set_caching_policy(u->as, UNW_CACHE_GLOBAL);
    prime(u);
    warm_up(u);
    return u;
}

void unwind_checker_recheck(struct unwind_checker *u)
{
    if (unwind_memory_recheck(u->mem) == 0)
        return;
    unw_flush_cache(u->as, 0, 0);
    memset(u->tables, 0, (u->objs->n + 1) * sizeof *u->tables);
    for (size_t i = 0; i <= u->objs->n; i++)
        if (u->upts[i]) {
            _UPT_destroy(u->upts[i]);
            u->upts[i] = NULL;
        }
    prime(u);
}

const struct map_list *unwind_checker_maps(const struct unwind_checker *u)
{
    return unwind_memory_maps(u->mem);
}

void unwind_checker_free(struct unwind_checker *u)
{
    if (!u)
        return;
    for (size_t i = 0; u->upts && i <= u->objs->n; i++)
        if (u->upts[i])
            _UPT_destroy(u->upts[i]);
    free(u->upts);
    free(u->tables);
    if (u->as)
        unw_destroy_addr_space(u->as);
    unwind_memory_free(u->mem);
    code_ranges_free(&u->unsafe);
    free(u);
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
    const struct elf_symbol *s = elf_object_symbol_at(mapped_object_symbols(o), addr - o->bias);
    if (!s || s->size == 0)
        return NULL;
    uint64_t v = addr - o->bias;
    return v >= s->value && v < s->value + s->size ? s->name : NULL;
}

static int in_allocator(const struct unwind_checker *u, uint64_t pc)
{
    for (size_t i = 0; i < u->unsafe.n; i++)
        if (pc >= u->unsafe.v[i].start && pc < u->unsafe.v[i].end)
            return 1;
    return 0;
}

/* 1 when the frame at pc is a place mallctl must not be called from. */
static int frame_unsafe(const struct unwind_checker *u, uint64_t pc, char *why,
                        size_t whylen)
{
    if (in_allocator(u, pc)) {
        snprintf(why, whylen, "inside %s (pc %#llx)", u->unsafe.what, (unsigned long long)pc);
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

/* Whether a table covers the frame at ip (depth 0: where it stands; a
 * caller's: the call before its return address).  libunwind ends a walk
 * (unw_step 0) where the tables mark the outermost frame (_start, a
 * thread's start), but also where, with no table, its frame-pointer guess
 * finds a zero: in code built without frame pointers that is any frame,
 * and the callers below, unchecked, could hold the allocator's locks. */
static bool frame_has_table(struct unwind_checker *u, uint64_t ip, int depth)
{
    unw_proc_info_t pi;
    uint64_t pc = depth == 0 || ip == 0 ? ip : ip - 1;
    if (ip == 0)
        return false;
    /* An object without .eh_frame_hdr (a static program linked without
     * one): libunwind reads no table of it at all, and its walks were
     * always frame pointers'; they are taken as before. */
    const struct mapped_object *o = mapped_objects_find(u->objs, pc);
    if (o && o->elf && !o->elf->eh_frame_hdr_size)
        return true;
    return find_proc_info(u->as, pc, &pi, 0, NULL) >= 0;
}

/* Why a walk ended before the stack's end (the frames below went
 * unchecked), after the frame whose pc is ip. */
static void walk_cut(const struct unwind_checker *u, uint64_t ip, int depth, int step,
                     char *why, size_t whylen)
{
    const struct mapped_object *o = mapped_objects_find(u->objs, ip);
    if (step == 0)
        snprintf(why, whylen, "its stack cannot be walked past the frame at pc %#llx (%s): "
                 "no unwind table covers it", (unsigned long long)ip,
                 o ? base_name(o->path) : "code of no mapped object");
    else if (depth >= MAX_FRAMES)
        snprintf(why, whylen, "its stack is deeper than %d frames", MAX_FRAMES);
    else
        snprintf(why, whylen, "its stack cannot be walked past the frame at pc %#llx (%s: %s)",
                 (unsigned long long)ip, o ? base_name(o->path) : "code of no mapped object",
                 unw_strerror(step));
}

/* Walk from regs, calling visit for each frame until it returns nonzero;
 * returns what visit returned, 0 at the end of the stack, -1 when the walk
 * cannot start, 2 (why set, when asked) when it stops before the end. */
typedef int (*frame_fn)(struct unwind_checker *u, unw_cursor_t *c, int depth,
                        uint64_t ip, char *why, size_t whylen);

static int walk_frames(struct unwind_checker *u, const struct arch_regs *regs,
                       frame_fn visit, char *why, size_t whylen)
{
    unwind_memory_new_stop(u->mem);
    walking = u;
    u->regs = regs;
    unw_cursor_t c;
    int rc = unw_init_remote(&c, u->as, u) < 0 ? -1 : 0;
    unw_word_t ip = 0, last = 0;    /* last: the last frame's pc that was one */
    int depth = 0, step = 1;
    bool at_base = false;           /* ended where a table says the stack does */
    for (; rc == 0 && depth < MAX_FRAMES; depth++) {
        if ((step = unw_get_reg(&c, UNW_REG_IP, &ip)) < 0)
            break;
        last = ip ? ip : last;
        if (visit && (rc = visit(u, &c, depth, ip, why, whylen)) != 0)
            break;
        if ((step = unw_step(&c)) <= 0) {
            /* A frame of pc 0 is what the caller's table made of an
             * undefined return address (a thread's start in a static
             * program): that table marked the base. */
            at_base = step == 0 && (ip ? frame_has_table(u, ip, depth)
                                       : depth > 0 && frame_has_table(u, last, depth - 1));
            break;
        }
    }
    if (rc == 0 && (step < 0 || depth >= MAX_FRAMES || (step == 0 && !at_base))) {
        rc = 2;
        if (why)
            walk_cut(u, last, depth, step, why, whylen);
    }
    walking = NULL;
    u->regs = NULL;
    return rc;
}

static void walk(struct unwind_checker *u, const struct arch_regs *regs)
{
    walk_frames(u, regs, NULL, NULL, 0);
}

static int check_frame(struct unwind_checker *u, unw_cursor_t *c, int depth, uint64_t ip,
                       char *why, size_t whylen)
{
    if (unw_is_signal_frame(c) > 0) {
        snprintf(why, whylen, "running a signal handler");
        return 1;
    }
    /* Caller frames hold return addresses: look up the call itself. */
    uint64_t pc = depth == 0 || ip == 0 ? ip : ip - 1;
    return frame_unsafe(u, pc, why, whylen);
}

int unwind_check_thread(struct unwind_checker *u, pid_t tid, const struct arch_regs *regs,
                        char *why, size_t whylen)
{
    int rc = walk_frames(u, regs, check_frame, why, whylen);
    if (rc < 0) {
        snprintf(why, whylen, "cannot start unwinding thread %d", tid);
        return 1;
    }
    return rc;
}
