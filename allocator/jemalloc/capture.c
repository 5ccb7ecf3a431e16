/* capture.c - owns target_capture: jemalloc output that goes to a write
 * callback (malloc_stats_print, a dump mallctl such as
 * experimental.prof_recent.alloc_dump) brought back without the process's
 * stdout, stderr or any file.  In one stop of one thread: the process maps
 * one private anonymous region (first page code, read+execute only, never
 * writable and executable at once; the rest a read-write buffer), memprof
 * writes the callback (attach/arch) into it through /proc/PID/mem, runs
 * the calls, reads the buffer and the process unmaps the region before
 * the thread runs again.  A memprof killed inside that stop leaves the
 * thread to restore itself (the self-restore frame) and at most that one
 * region mapped. */
#include "attach/target_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define CODE_PAGE 4096
/* The most memprof asks the process to map for one capture. */
#define CAPTURE_MAX (1024ull * 1024 * 1024)

struct capture_run {
    struct target *t;
    struct target_capture *c;
    const struct dump_calls *libc;
    uint64_t region, size;
    bool mapped;
};

static int call_fn(struct remote_stop *s, uint64_t fn, const uint64_t *args, size_t n,
                   uint64_t *ret, struct mp_error *err)
{
    uint64_t base, sp;
    if (remote_stop_scratch(s, 16, &base, &sp, err) < 0)
        return -1;
    return remote_stop_call(s, fn, args, n, sp, ret, err);
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Room between mappings this far from its neighbours: clear of a heap
 * that grows up and a stack that grows down. */
#define REGION_PAD (64ull << 20)

/* A free address for size bytes in the process's current map: the
 * trampoline gives back only the low 32 bits of a result, so memprof
 * picks the address and the process maps exactly there
 * (MAP_FIXED_NOREPLACE: never over something that appeared meanwhile). */
static uint64_t region_place(pid_t pid, uint64_t size)
{
    struct map_list maps;
    struct mp_error ignored;
    if (maps_read_pid(pid, &maps, &ignored) < 0)
        return 0;
    uint64_t best = 0;
    /* Below the main stack only (above it lie only the kernel's pages). */
    for (size_t i = 0; i + 1 < maps.n && strcmp(maps.v[i].path, "[stack]") != 0 &&
                       maps.v[i + 1].start < (1ull << 47); i++) {
        uint64_t lo = maps.v[i].end + REGION_PAD, hi = maps.v[i + 1].start;
        if (lo < (1ull << 32) || hi < lo || hi - lo < size + REGION_PAD ||
            strcmp(maps.v[i].path, "[heap]") == 0 || strcmp(maps.v[i + 1].path, "[stack]") == 0)
            continue;
        best = hi - REGION_PAD - size;    /* the highest gap: near the libraries */
        best &= ~(uint64_t)(CODE_PAGE - 1);
    }
    maps_free(&maps);
    return best;
}

/* Map the region; 1 when the process refused (c->why set). */
static int region_map(struct remote_stop *s, struct capture_run *r, struct mp_error *err)
{
    uint64_t at = region_place(s->ctx->pid, r->size);
    if (!at) {
        snprintf(r->c->why, sizeof r->c->why, "process %d has no free address range of "
                 "%llu bytes for the capture buffer", s->ctx->pid,
                 (unsigned long long)r->size);
        return 1;
    }
    uint64_t args[6] = {at, r->size, PROT_READ | PROT_EXEC,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, (uint64_t)-1, 0};
    uint64_t ret;
    if (call_fn(s, r->libc->mmap, args, 6, &ret, err) < 0)
        return -1;
    if ((uint32_t)ret != (uint32_t)at) {
        /* MAP_FAILED, or (a kernel before 4.17 takes the flag as a hint)
         * somewhere else: memprof cannot tell where, so it says so. */
        snprintf(r->c->why, sizeof r->c->why, (uint32_t)ret == (uint32_t)-1
                 ? "process %d refused to map %llu bytes of executable memory for the "
                   "write callback (a security policy: SELinux execmem, PaX MPROTECT, "
                   "or the memory limit; or the range was taken meanwhile: try again)"
                 : "process %d mapped the %llu-byte capture buffer elsewhere than asked "
                   "(a kernel older than 4.17?); it stays mapped there",
                 s->ctx->pid, (unsigned long long)r->size);
        return 1;
    }
    r->region = at;
    r->mapped = true;
    uint64_t pargs[3] = {r->region + CODE_PAGE, r->size - CODE_PAGE, PROT_READ | PROT_WRITE};
    if (call_fn(s, r->libc->mprotect, pargs, 3, &ret, err) < 0)
        return -1;
    if ((int32_t)(uint32_t)ret != 0) {   /* an int: the upper half is not its */
        snprintf(r->c->why, sizeof r->c->why, "process %d refused to make the capture "
                 "buffer writable (mprotect)", s->ctx->pid);
        return 1;
    }
    return 0;
}

static int region_unmap(struct remote_stop *s, struct capture_run *r, struct mp_error *err)
{
    uint64_t args[2] = {r->region, r->size}, ret;
    if (call_fn(s, r->libc->munmap, args, 2, &ret, err) < 0)
        return -1;
    if ((int32_t)(uint32_t)ret != 0)
        return mp_error_set(err, "process %d could not unmap the capture buffer",
                            s->ctx->pid);
    r->mapped = false;
    return 0;
}

/* The capture itself, between map and unmap. */
static int capture_in_region(struct remote_stop *s, struct capture_run *r,
                             struct mp_error *err)
{
    struct target_capture *c = r->c;
    size_t code_len;
    const uint8_t *code = arch_capture_callback(&code_len);
    uint64_t head_addr = r->region + CODE_PAGE;
    struct arch_capture_head head = {0, r->size - CODE_PAGE - sizeof head, 0};
    if (remote_stop_write(s, r->region, code, code_len, err) < 0 ||
        remote_stop_write(s, head_addr, &head, sizeof head, err) < 0)
        return -1;
    for (size_t i = 0; i < c->ncalls; i++)
        if (mallctl_batch_call(s, r->t, &c->calls[i], err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", c->calls[i].name);
    if (c->dump_name) {
        uint64_t packet[2] = {r->region, head_addr};
        struct mallctl_call dump = {.name = c->dump_name, .new = packet,
                                    .newlen = sizeof packet};
        if (mallctl_batch_call(s, r->t, &dump, err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", c->dump_name);
        c->dump_ret = dump.ret;
    } else {
        const struct jemalloc_copy *je = &r->t->copies[r->t->selected];
        size_t olen = strlen(c->print_opts) + 1;
        uint64_t base, sp, ret;
        if (remote_stop_scratch(s, olen, &base, &sp, err) < 0 ||
            remote_stop_write(s, base, c->print_opts, olen, err) < 0)
            return -1;
        uint64_t args[3] = {r->region, head_addr, base};
        if (remote_stop_call(s, je->malloc_stats_print, args, 3, sp, &ret, err) < 0)
            return -1;
    }
    for (size_t i = 0; i < c->nafter; i++)
        if (mallctl_batch_call(s, r->t, &c->after[i], err) < 0)
            return mp_error_prefix(err, "mallctl(\"%s\")", c->after[i].name);
    if (remote_stop_read(s, head_addr, &head, sizeof head, err) < 0)
        return -1;
    if (head.len > r->size - CODE_PAGE - sizeof head)
        return mp_error_set(err, "the capture buffer in process %d says it holds %llu "
                            "bytes, more than it can", s->ctx->pid,
                            (unsigned long long)head.len);
    c->data = malloc(head.len + 1);
    if (!c->data)
        return mp_error_set(err, "out of memory for %llu captured bytes",
                            (unsigned long long)head.len);
    if (remote_stop_read(s, head_addr + sizeof head, c->data, head.len, err) < 0) {
        free(c->data);
        c->data = NULL;
        return -1;
    }
    c->data[head.len] = 0;
    c->len = head.len;
    c->truncated = head.truncated != 0;
    return 0;
}

static int capture_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct capture_run *r = arg;
    int rc = region_map(s, r, err);
    if (rc == 0)
        rc = capture_in_region(s, r, err);
    else if (rc > 0)
        rc = 0;             /* refused: c->why says so; unmap what was mapped */
    /* Unmapped whenever the thread can still take a call; after a fault
     * no further call is made and the region stays (said in err). */
    if (r->mapped && !s->gone && !s->at_signal_stop) {
        struct mp_error unmap_err;
        if (region_unmap(s, r, rc < 0 ? &unmap_err : err) < 0 && rc == 0)
            rc = -1;
    }
    return rc;
}

int target_capture(struct target *t, struct target_capture *c, struct mp_error *err)
{
    c->data = NULL;
    c->len = 0;
    c->truncated = false;
    c->dump_ret = 0;
    c->why[0] = 0;
    const struct jemalloc_copy *je = &t->copies[t->selected];
    if (!c->dump_name && !je->malloc_stats_print)
        return mp_error_set(err, "the jemalloc in process %d (%s) has no %smalloc_stats_print "
                            "symbol: its statistics cannot be printed", t->pid, je->object,
                            je->prefix);
    const struct dump_calls *libc = dump_calls(t);
    if (!libc->mmap || !libc->mprotect || !libc->munmap)
        return mp_error_set(err, "process %d has no mmap(), mprotect() and munmap() in its "
                            "C library or executable: memprof cannot place a write callback "
                            "in it", t->pid);
    if (c->cap == 0 || c->cap > CAPTURE_MAX)
        return mp_error_set(err, "a capture of %zu bytes: give from 1 byte to 1 GiB", c->cap);
    uint64_t size = CODE_PAGE + sizeof(struct arch_capture_head) + c->cap;
    size = (size + CODE_PAGE - 1) & ~(uint64_t)(CODE_PAGE - 1);
    struct capture_run r = {.t = t, .c = c, .libc = libc, .size = size};
    int rc = target_stop_run(t, capture_body, &r, err);
    if (rc < 0 && r.mapped)
        mp_error_prefix(err, "one private mapping of %llu bytes at 0x%llx stays in "
                        "process %d", (unsigned long long)r.size,
                        (unsigned long long)r.region, t->pid);
    if (rc < 0) {
        free(c->data);
        c->data = NULL;
        return -1;
    }
    if (c->why[0])
        return mp_error_set(err, "%s", c->why);
    return 0;
}
