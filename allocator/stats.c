/* stats.c - freeing what an allocator's statistics hold. */
#include "allocator/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void allocator_stats_free(struct allocator_stats *st)
{
    if (st->have_glibc)
        glibc_malloc_info_free(&st->glibc);
    free(st->text);
    memset(st, 0, sizeof *st);
}

void allocator_stats_add(struct allocator_stats *st, const char *key, uint64_t value)
{
    if (st->nfig >= ALLOCATOR_FIGURES_MAX)
        return;
    struct allocator_figure *f = &st->fig[st->nfig++];
    snprintf(f->key, sizeof f->key, "%s", key);
    f->value = value;
}
