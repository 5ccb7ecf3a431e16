/* callback_region.c - a write callback of memprof's in the process, for
 * one stop: the process maps one private anonymous region (first page
 * code, read+execute only, never writable and executable at once; the
 * rest a read-write buffer), memprof writes the callback (attach/arch)
 * into it through /proc/PID/mem, the allocator's printer is called with
 * it, memprof reads the buffer and the process unmaps the region before
 * the thread runs again.  A memprof killed inside that stop leaves the
 * thread to restore itself (the self-restore frame) and at most that one
 * region mapped. */
#include "attach/callback_region.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "attach/arch/arch.h"
#include "lib/proc/maps.h"

#define CODE_PAGE 4096

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/* Room between mappings this far from its neighbours: clear of a heap
 * that grows up and a stack that grows down. */
#define REGION_PAD (64ull << 20)

/* A free address for size bytes in the process's current map, clear of
 * its heap and stacks: memprof picks it and the process maps exactly
 * there (MAP_FIXED_NOREPLACE: never over something that appeared
 * meanwhile). */
static uint64_t region_pick(pid_t pid, uint64_t size)
{
    struct map_list maps;
    struct mp_error ignored;
    if (maps_read_pid(pid, &maps, &ignored) < 0)
        return 0;
    uint64_t best = 0;
    /* Below the main stack only (above it lie only the kernel's pages). */
    for (size_t i = 0; i + 1 < maps.n && strcmp(maps.v[i].path, "[stack]") != 0 &&
                       maps.v[i + 1].start < ARCH_USER_VA_END; i++) {
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

/* Where to map: the place the last region of the session took, if it was
 * at least this large (reading a big process's map inside the stop costs
 * milliseconds); else one picked from the map now.  A stale place is
 * never trusted blindly: MAP_FIXED_NOREPLACE fails on anything mapped
 * there since, and the next region is placed afresh. */
static uint64_t region_place(struct remote_ctx *ctx, uint64_t size)
{
    if (ctx->region_hint && size <= ctx->region_hint_size)
        return ctx->region_hint;
    uint64_t at = region_pick(ctx->pid, size);
    ctx->region_hint = at;
    ctx->region_hint_size = at ? size : 0;
    return at;
}

/* Map size bytes, the first page read+execute with code written into it
 * (at most a page), the rest read+write.  0; 1 when the process refused
 * (why says so; r->mapped may be set); -1 with err when a call failed. */
static int region_map(struct remote_stop *s, const struct target_libc *libc, uint64_t size,
                      const uint8_t *code, size_t code_len, struct callback_region *r,
                      char *why, size_t whylen, struct mp_error *err)
{
    r->size = (size + CODE_PAGE - 1) & ~(uint64_t)(CODE_PAGE - 1);
    r->mapped = false;
    uint64_t at = region_place(s->ctx, r->size);
    if (!at) {
        snprintf(why, whylen, "process %d has no free address range of "
                 "%llu bytes for the capture buffer", s->ctx->pid,
                 (unsigned long long)r->size);
        return 1;
    }
    uint64_t args[6] = {at, r->size, PROT_READ | PROT_EXEC,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, (uint64_t)-1, 0};
    uint64_t ret;
    if (remote_stop_call_plain(s, libc->mmap, args, 6, &ret, err) < 0)
        return -1;
    if (ret != at) {
        /* MAP_FAILED, or (a kernel before 4.17 takes the flag as a hint)
         * somewhere else. */
        s->ctx->region_hint = 0;    /* taken meanwhile, perhaps: placed afresh next time */
        snprintf(why, whylen, ret == (uint64_t)-1
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
    if (r->size > CODE_PAGE) {
        uint64_t pargs[3] = {r->region + CODE_PAGE, r->size - CODE_PAGE,
                             PROT_READ | PROT_WRITE};
        if (remote_stop_call_plain(s, libc->mprotect, pargs, 3, &ret, err) < 0)
            return -1;
        if ((int32_t)(uint32_t)ret != 0) {   /* an int: the upper half is not its */
            snprintf(why, whylen, "process %d refused to make the capture "
                     "buffer writable (mprotect)", s->ctx->pid);
            return 1;
        }
    }
    if (code_len > CODE_PAGE)
        return mp_error_set(err, "%zu bytes of code do not fit in one page", code_len);
    return remote_stop_write(s, r->region, code, code_len, err);
}

int callback_region_map(struct remote_stop *s, const struct target_libc *libc, size_t cap,
                        struct callback_region *r, char *why, size_t whylen,
                        struct mp_error *err)
{
    size_t code_len;
    const uint8_t *code = arch_capture_callback(&code_len);
    struct arch_capture_head head = {0, cap, 0};
    int rc = region_map(s, libc, CODE_PAGE + sizeof head + cap, code, code_len, r, why,
                        whylen, err);
    if (rc)
        return rc;
    head.cap = r->size - CODE_PAGE - sizeof head;
    return remote_stop_write(s, callback_region_opaque(r), &head, sizeof head, err);
}

int callback_region_map_code(struct remote_stop *s, const struct target_libc *libc,
                             const uint8_t *code, size_t code_len, size_t cap,
                             struct callback_region *r, char *why, size_t whylen,
                             struct mp_error *err)
{
    return region_map(s, libc, CODE_PAGE + cap, code, code_len, r, why, whylen, err);
}

int callback_region_unmap(struct remote_stop *s, const struct target_libc *libc,
                          struct callback_region *r, struct mp_error *err)
{
    uint64_t args[2] = {r->region, r->size}, ret;
    if (remote_stop_call_plain(s, libc->munmap, args, 2, &ret, err) < 0)
        return -1;
    if ((int32_t)(uint32_t)ret != 0)
        return mp_error_set(err, "process %d could not unmap the capture buffer",
                            s->ctx->pid);
    r->mapped = false;
    return 0;
}

uint64_t callback_region_opaque(const struct callback_region *r)
{
    return r->region + CODE_PAGE;
}

int callback_region_read(struct remote_stop *s, const struct callback_region *r,
                         char **data, size_t *len, bool *truncated, struct mp_error *err)
{
    struct arch_capture_head head;
    uint64_t head_addr = callback_region_opaque(r);
    if (remote_stop_read(s, head_addr, &head, sizeof head, err) < 0)
        return -1;
    if (head.len > r->size - CODE_PAGE - sizeof head)
        return mp_error_set(err, "the capture buffer in process %d says it holds %llu "
                            "bytes, more than it can", s->ctx->pid,
                            (unsigned long long)head.len);
    *data = malloc(head.len + 1);
    if (!*data)
        return mp_error_set(err, "out of memory for %llu captured bytes",
                            (unsigned long long)head.len);
    if (remote_stop_read(s, head_addr + sizeof head, *data, head.len, err) < 0) {
        free(*data);
        *data = NULL;
        return -1;
    }
    (*data)[head.len] = 0;
    *len = head.len;
    *truncated = head.truncated != 0;
    return 0;
}
