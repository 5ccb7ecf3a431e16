/* fuzz_jemalloc_version.c - libFuzzer harness for jemalloc's version string
 * as read from a target (allocator/jemalloc/version.c): never a read past
 * the length given, and a version read is one that prints back as read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/jemalloc/version.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy: ASan sees any read past it */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct jemalloc_version v;
    bool ok = jemalloc_version_parse(copy, size, &v);
    if (ok != v.known)
        abort();
    char text[64];
    jemalloc_version_text(&v, text, sizeof text);
    if (ok) {
        struct jemalloc_version again;
        if (!jemalloc_version_parse(text, sizeof text, &again) ||
            jemalloc_version_cmp(&again, v.major, v.minor, v.patch, v.commits) != 0)
            abort();
    } else if (strcmp(text, "of unknown version") != 0 ||
               jemalloc_inactive_threads_stop_sampling(&v) || jemalloc_has_prof_recent(&v))
        abort();
    free(copy);
    return 0;
}
