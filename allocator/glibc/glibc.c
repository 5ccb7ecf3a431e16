/* glibc.c - glibc's malloc driven from one borrowed thread: malloc_info()
 * written into an anonymous memfd and parsed (lib/mallinfo), and
 * malloc_trim(0).
 *
 * malloc_info() wants a FILE.  It must not be the process's stderr or any
 * stream it uses (malloc_stats() prints there, so memprof never calls it):
 * in one stop the process creates a memfd, fdopen()s it, makes the stream
 * unbuffered, runs malloc_info() and fclose()s it, and memprof reads the
 * file through its own descriptor.  Unbuffered, a stream left behind by a
 * memprof killed inside that stop holds no pending bytes that exit() could
 * later flush into whatever file reuses its descriptor number.  (Such a
 * stream stays in the process's list; only a program that calls
 * fcloseall() would then close the descriptor number it holds, which a
 * later session's sweep of dead memprofs' memfds has freed for reuse.)
 *
 * fdopen() and fclose() take libc's lock on the list of every open FILE
 * (a recursive lock): a thread stopped inside a function holding it would
 * let the call edit the list under itself, so such threads are not
 * borrowed (the stdio functions below).  malloc_info() and malloc_trim()
 * take each arena's lock in turn: the engine already refuses a thread with
 * any of glibc's allocator entry points on its stack, which is how a thread
 * inside malloc is told without libc's debug symbols (glibc's internal
 * _int_malloc, sysmalloc... are reached only through them). */
#include "allocator/glibc/glibc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attach/remote_call.h"

struct glibc_state {
    uint64_t malloc_info, malloc_trim, fdopen, setvbuf, fclose;
    bool linked_in;             /* a static program: only what it uses is there */
};

/* libc functions that hold its list of FILEs (or its lock). */
static const char *const stdio_list_functions[] = {
    "fopen", "fopen64", "fdopen", "fclose", "fflush", "fflush_unlocked", "freopen",
    "freopen64", "fcloseall", "fmemopen", "open_memstream", "open_wmemstream",
    "fopencookie", "popen", "pclose", "tmpfile", "tmpfile64", "_IO_flush_all",
    "_IO_link_in", "_IO_un_link", "_IO_list_lock", "_IO_list_resetlock", "exit",
    NULL };

int glibc_probe(struct target *t, const struct mapped_object *libc,
                struct code_ranges *unsafe, struct mp_error *err)
{
    struct glibc_state *g = calloc(1, sizeof *g);
    if (!g)
        return mp_error_set(err, "out of memory");
    g->malloc_info = mapped_object_function_address(libc, "malloc_info");
    g->malloc_trim = mapped_object_function_address(libc, "malloc_trim");
    g->fdopen = mapped_object_function_address(libc, "fdopen");
    g->setvbuf = mapped_object_function_address(libc, "setvbuf");
    g->fclose = mapped_object_function_address(libc, "fclose");
    g->linked_in = libc->is_exe;
    target_set_allocator(t, g, free);
    snprintf(unsafe->what, sizeof unsafe->what, "glibc's stdio");
    for (size_t i = 0; stdio_list_functions[i]; i++) {
        const struct elf_symbol *s = mapped_object_function(libc, stdio_list_functions[i]);
        if (s && s->size &&
            code_ranges_add(unsafe, s->value + libc->bias, s->value + libc->bias + s->size) < 0)
            return mp_error_set(err, "out of memory");
    }
    return 0;
}

/* ---- statistics ------------------------------------------------------ */

struct info_call {
    struct target *t;
    const struct glibc_state *g;
    int fd;                     /* memprof's descriptor on the memfd */
    int ret;                    /* malloc_info's answer */
    char why[512];              /* why the memfd way cannot be used */
};

static int call(struct remote_stop *s, uint64_t fn, const uint64_t *args, size_t n,
                uint64_t sp, uint64_t *ret, const char *what, struct mp_error *err)
{
    if (remote_stop_call(s, fn, args, n, sp, ret, err) < 0)
        return mp_error_prefix(err, "%s", what);
    return 0;
}

static int info_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct info_call *c = arg;
    int fd;
    if (target_memfd_create(s, c->t, &fd, c->why, sizeof c->why, err) < 0)
        return -1;
    if (fd < 0)
        return 0;
    c->fd = target_memfd_open(s, fd, c->why, sizeof c->why);
    if (c->fd < 0)
        return target_memfd_close(s, c->t, fd, err);
    uint64_t mode, sp, fp = 0, r = 0;
    int rc = remote_stop_scratch(s, 16, &mode, &sp, err);
    if (rc == 0)
        rc = remote_stop_write(s, mode, "w", 2, err);
    if (rc == 0)
        rc = call(s, c->g->fdopen, (uint64_t[]){ (uint64_t)fd, mode }, 2, sp, &fp,
                  "fdopen()", err);
    if (rc == 0 && fp == 0)
        rc = mp_error_set(err, "process %d could not open a stream on an in-memory "
                          "file (fdopen() failed: out of memory?)", s->ctx->pid);
    struct mp_error ignored;
    bool can_call = !s->gone && !s->at_signal_stop;
    if (fp == 0) {
        if (can_call)
            target_memfd_close(s, c->t, fd, &ignored);
        return rc;
    }
    /* unbuffered: nothing pending if the stream is ever left behind */
    rc = call(s, c->g->setvbuf, (uint64_t[]){ fp, 0, _IONBF, 0 }, 4, sp, &r,
              "setvbuf()", err);
    if (rc == 0 && (int32_t)r != 0)
        rc = mp_error_set(err, "process %d refused to make the stream unbuffered "
                          "(setvbuf() failed): malloc_info() was not called", s->ctx->pid);
    if (rc == 0)
        rc = call(s, c->g->malloc_info, (uint64_t[]){ 0, fp }, 2, sp, &r,
                  "malloc_info()", err);
    c->ret = (int)(int32_t)r;
    /* fclose closes the process's descriptor too */
    can_call = !s->gone && !s->at_signal_stop;
    struct mp_error close_err;
    if (can_call &&
        call(s, c->g->fclose, (uint64_t[]){ fp }, 1, sp, &r, "fclose()", &close_err) < 0 &&
        rc == 0) {
        *err = close_err;
        rc = -1;
    }
    return rc;
}

static int missing(struct target *t, const char *what, struct mp_error *err)
{
    const struct glibc_state *g = target_allocator(t);
    if (g->linked_in)
        return mp_error_set(err, "process %d has glibc linked into its executable "
                            "without %s (a static program holds only the functions it "
                            "uses), which memprof needs to read glibc malloc's "
                            "statistics", target_pid(t), what);
    return mp_error_set(err, "process %d's C library has no %s, which memprof needs "
                        "to read glibc malloc's statistics", target_pid(t), what);
}

static int read_info(struct target *t, const struct glibc_state *g, char **text,
                     size_t *len, struct mp_error *err)
{
    if (!g->malloc_info)
        return missing(t, "malloc_info", err);
    if (!g->fdopen || !g->setvbuf || !g->fclose)
        return missing(t, "fdopen, setvbuf or fclose", err);
    struct info_call c = { .t = t, .g = g, .fd = -1 };
    if (!target_memfd_possible(t, c.why, sizeof c.why))
        return mp_error_set(err, "memprof cannot read glibc malloc's statistics here: "
                            "malloc_info() writes them to an in-memory file the process "
                            "makes, and %s", c.why);
    int rc = target_stop_run(t, info_body, &c, err);
    if (rc == 0 && c.fd < 0)
        rc = mp_error_set(err, "memprof cannot read glibc malloc's statistics here: "
                          "malloc_info() writes them to an in-memory file the process "
                          "makes, and %s", c.why);
    if (rc == 0 && c.ret != 0)
        rc = mp_error_set(err, "malloc_info() in process %d failed (returned %d)",
                          target_pid(t), c.ret);
    if (rc == 0)
        rc = target_read_fd(c.fd, "malloc_info's output", text, len, err);
    if (c.fd >= 0)
        close(c.fd);
    return rc;
}

static uint64_t add_capped(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - 1 - b ? UINT64_MAX - 1 : a + b;
}

int glibc_stats(struct target *t, struct allocator_stats *st, struct mp_error *err)
{
    const struct glibc_state *g = target_allocator(t);
    char *text;
    size_t len;
    if (read_info(t, g, &text, &len, err) < 0)
        return -1;
    struct mp_error why;
    int rc = glibc_malloc_info_parse(text, len, &st->glibc, &why);
    free(text);
    if (rc < 0)
        return mp_error_set(err, "process %d's malloc_info() output cannot be read: %s",
                            target_pid(t), why.msg);
    st->have_glibc = true;
    const struct glibc_malloc_info *mi = &st->glibc;
    /* the process's numbers: summed without wrapping */
    st->free_held = add_capped(mi->fast_bytes, mi->rest_bytes);
    st->mmapped = mi->mmap_bytes;
    st->from_system = add_capped(mi->system_current, mi->mmap_bytes);
    st->in_use = st->from_system - (st->free_held < st->from_system ? st->free_held
                                                                     : st->from_system);
    allocator_stats_add(st, "arenas", mi->narenas);
    allocator_stats_add(st, "fast_free_bytes", mi->fast_bytes);
    allocator_stats_add(st, "fast_free_chunks", mi->fast_count);
    allocator_stats_add(st, "free_bytes", mi->rest_bytes);
    allocator_stats_add(st, "free_chunks", mi->rest_count);
    allocator_stats_add(st, "mmapped_bytes", mi->mmap_bytes);
    allocator_stats_add(st, "mmapped_chunks", mi->mmap_count);
    allocator_stats_add(st, "system_current_bytes", mi->system_current);
    allocator_stats_add(st, "system_max_bytes", mi->system_max);
    allocator_stats_add(st, "address_space_bytes", mi->aspace_total);
    return 0;
}

/* ---- purge ----------------------------------------------------------- */

struct trim_call {
    uint64_t fn;
    uint64_t ret;
};

static int trim_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct trim_call *c = arg;
    uint64_t base, sp;
    if (remote_stop_scratch(s, 16, &base, &sp, err) < 0)
        return -1;
    return call(s, c->fn, (uint64_t[]){ 0 }, 1, sp, &c->ret, "malloc_trim(0)", err);
}

int glibc_purge(struct target *t, struct allocator_purge *p, struct mp_error *err)
{
    const struct glibc_state *g = target_allocator(t);
    if (!g->malloc_trim)
        return mp_error_set(err, "process %d's C library has no malloc_trim: its glibc "
                            "malloc cannot be asked to give memory back", target_pid(t));
    struct trim_call c = { .fn = g->malloc_trim };
    if (target_stop_run(t, trim_body, &c, err) < 0)
        return -1;
    p->ret = (long)(int32_t)c.ret;
    return 0;
}
