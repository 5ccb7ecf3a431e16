/* fuzz_profile.c - libFuzzer harness for the heap profile reader: any bytes
 * must either parse into a consistent profile or fail with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/profile/profile.h"

/* Every index the reader hands out must be inside its arrays. */
static void check(const struct profile *p)
{
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct profile_stack *s = &p->stacks[i];
        if ((size_t)s->frame0 + s->nframes > p->nframes ||
            (size_t)s->sample0 + s->nsamples > p->nsamples)
            abort();
    }
    for (size_t i = 0; i < p->nframes; i++)
        if (p->frames[i] >= p->naddrs)
            abort();
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].thread >= p->nthreads)
            abort();
    if (p->truncated && !p->warning[0])
        abort();
    /* a file without maps is either cut short or whole, never both, and
     * says so */
    if (p->no_maps_section && (p->truncated || p->maps.n || !p->warning[0]))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* A private copy of exactly size bytes, so ASan catches any read past
     * the end (the reader must not expect a NUL terminator). */
    char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct mp_error err;
    err.msg[0] = '\0';
    struct profile *p = profile_parse(copy, size, "fuzz.heap", &err);
    if (p)
        check(p);
    else if (strncmp(err.msg, "fuzz.heap", 9) != 0)
        abort();    /* every failure names the file */
    profile_free(p);
    free(copy);
    return 0;
}
