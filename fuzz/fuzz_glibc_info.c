/* fuzz_glibc_info.c - libFuzzer harness for the parser of glibc's
 * malloc_info XML (lib/mallinfo/glibc_info.c): whatever a hostile process
 * prints, a parse either fails leaving nothing behind and a message, or
 * gives a bounded list of arenas; the same bytes give the same answer. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/mallinfo/glibc_info.h"

static void check(const struct glibc_malloc_info *mi)
{
    if (mi->narenas > GLIBC_INFO_MAX_ARENAS || (mi->narenas == 0) != (mi->arenas == NULL))
        abort();
    for (size_t i = 0; i < mi->narenas; i++) {
        const struct glibc_arena_info *a = &mi->arenas[i];
        uint64_t free_bytes = glibc_arena_free_bytes(a);
        if (free_bytes < a->fast_bytes || free_bytes < a->rest_bytes)
            abort();
    }
}

/* Field by field: the structures have padding. */
static bool same_arena(const struct glibc_arena_info *a, const struct glibc_arena_info *b)
{
    return a->nr == b->nr && a->fast_count == b->fast_count && a->fast_bytes == b->fast_bytes &&
           a->rest_count == b->rest_count && a->rest_bytes == b->rest_bytes &&
           a->system_current == b->system_current && a->system_max == b->system_max &&
           a->aspace_total == b->aspace_total && a->aspace_mprotect == b->aspace_mprotect;
}

static bool same(const struct glibc_malloc_info *a, const struct glibc_malloc_info *b)
{
    if (a->narenas != b->narenas || a->fast_bytes != b->fast_bytes ||
        a->rest_bytes != b->rest_bytes || a->mmap_count != b->mmap_count ||
        a->mmap_bytes != b->mmap_bytes || a->system_current != b->system_current)
        return false;
    for (size_t i = 0; i < a->narenas; i++)
        if (!same_arena(&a->arenas[i], &b->arenas[i]))
            return false;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* libFuzzer's buffer is exactly size bytes: ASan sees a read past it. */
    const char *text = (const char *)data;
    struct glibc_malloc_info mi, again;
    struct mp_error err;
    int rc = glibc_malloc_info_parse(text, size, &mi, &err);
    if (rc < 0 && (mi.arenas || mi.narenas || !memchr(err.msg, 0, sizeof err.msg) || !err.msg[0]))
        abort();
    if (rc == 0)
        check(&mi);
    if (glibc_malloc_info_parse(text, size, &again, &err) != rc || (rc == 0 && !same(&mi, &again)))
        abort();
    glibc_malloc_info_free(&mi);
    glibc_malloc_info_free(&again);
    return 0;
}
