/* jemalloc.c - the probe that finds a process's jemalloc copies and gives
 * the engine their code, the copies and the one selected. */
#include "allocator/jemalloc/internal.h"

#include <stdio.h>
#include <stdlib.h>

#include "allocator/jemalloc/find.h"

struct jemalloc_state *jemalloc_state(const struct target *t)
{
    return target_allocator(t);
}

static void state_free(void *p)
{
    struct jemalloc_state *j = p;
    jemalloc_copies_free(j->copies, j->ncopies);
    free(j->memfd_why);
    free(j);
}

/* A shared copy owns its object's text; a static one owns the clusters of
 * its functions inside the bigger object. */
static int copy_code(const struct mapped_objects *objs, const struct jemalloc_copy *c,
                     struct code_ranges *unsafe)
{
    const struct mapped_object *o = mapped_objects_find(objs, c->mallctl);
    if (!c->static_copy || !o)
        return code_ranges_add(unsafe, c->text_start, c->text_end);
    struct addr_range *r;
    size_t n = jemalloc_static_ranges(o, &r);
    int rc = 0;
    for (size_t k = 0; k < n && rc == 0; k++)
        rc = code_ranges_add(unsafe, r[k].start, r[k].end);
    free(r);
    return rc;
}

int jemalloc_probe(struct target *t, struct mapped_objects *objs,
                   const struct target_options *opts, struct code_ranges *unsafe,
                   struct mp_error *err)
{
    struct jemalloc_copy *copies = NULL;
    int n = jemalloc_find(target_pid(t), objs, opts, &copies, err);
    if (n <= 0)
        return n;
    struct jemalloc_state *j = calloc(1, sizeof *j);
    if (!j) {
        jemalloc_copies_free(copies, (size_t)n);
        return mp_error_set(err, "out of memory");
    }
    j->copies = copies;
    j->ncopies = (size_t)n;
    target_set_allocator(t, j, state_free);
    snprintf(unsafe->what, sizeof unsafe->what, "jemalloc");
    for (size_t i = 0; i < j->ncopies; i++)
        if (copy_code(objs, &j->copies[i], unsafe) < 0)
            return mp_error_set(err, "out of memory");
    return n;
}

size_t jemalloc_copy_count(const struct target *t)
{
    return jemalloc_state(t)->ncopies;
}

const struct jemalloc_copy *jemalloc_copy(const struct target *t, size_t i)
{
    const struct jemalloc_state *j = jemalloc_state(t);
    return i < j->ncopies ? &j->copies[i] : NULL;
}

int jemalloc_select(struct target *t, size_t i, struct mp_error *err)
{
    struct jemalloc_state *j = jemalloc_state(t);
    if (i >= j->ncopies)
        return mp_error_set(err, "process %d has %zu jemalloc cop%s: choose 0 to %zu",
                            target_pid(t), j->ncopies, j->ncopies == 1 ? "y" : "ies",
                            j->ncopies - 1);
    j->selected = i;
    return 0;
}

size_t jemalloc_selected(const struct target *t)
{
    return jemalloc_state(t)->selected;
}
