/* memory_arenas.c - the heap by arena as lines (memory_arenas.h): one row
 * an arena, largest first, each figure the allocator does not give shown
 * as "-"; a resident figure measured from smaps told from the
 * allocator's own (an upper bound for jemalloc: untouched pages count). */
#include "repl/memory_arenas.h"

#include <inttypes.h>

#include "lib/base/text_escape.h"

/* Figures are shown in MiB (cmd_memory.c's unit, not included: it
 * includes this file's header). */
#define MIB (1024.0 * 1024.0)

/* Rows shown without --arenas, when there are more than SHOWN_MAX. */
#define SHOWN_FEW 4
#define SHOWN_MAX 6

static void cell(FILE *o, uint64_t v)
{
    if (v == HEAP_UNKNOWN)
        fprintf(o, " %12s", "-");
    else
        fprintf(o, " %8.1f MiB", v / MIB);
}

static void row_text(FILE *o, const struct heap_arena *r)
{
    char eb[TEXT_ESCAPE_BUF];
    fprintf(o, "  %-16s", text_escape(r->name, eb, sizeof eb));
    cell(o, r->in_use);
    cell(o, r->free);
    cell(o, r->free_resident);
    cell(o, r->metadata);
    cell(o, r->resident);
    fprintf(o, "%s", r->resident == HEAP_UNKNOWN ? "" : r->measured ? "  measured" : "  its own");
    for (size_t i = 0; i < r->nextra; i++)
        if (r->extra[i].shown && r->extra[i].value != HEAP_UNKNOWN)
            fprintf(o, ", %s %.1f MiB", r->extra[i].key, r->extra[i].value / MIB);
    fputc('\n', o);
}

static uint64_t plus(uint64_t sum, uint64_t v)
{
    return v == HEAP_UNKNOWN ? sum : sum + v;
}

/* The rows not shown, in one line. */
static void rest_text(FILE *o, const struct heap_arenas *a, size_t from)
{
    uint64_t in_use = 0, resident = 0;
    for (size_t i = from; i < a->n; i++) {
        in_use = plus(in_use, a->v[i].in_use);
        resident = plus(resident, a->v[i].resident);
    }
    fprintf(o, "  %zu more: %.1f MiB in use, %.1f MiB resident ('memory --arenas' lists "
            "each)\n", a->n - from, in_use / MIB, resident / MIB);
}

void memory_arenas_text(FILE *o, const struct heap_arenas *a, const char *who, bool all)
{
    if (!a->n && !a->note[0])
        return;
    fprintf(o, "\nheap by arena (%s: %u arena%s)\n", who, a->arenas, a->arenas == 1 ? "" : "s");
    if (a->n)
        fprintf(o, "  %-16s %12s %12s %12s %12s %12s\n", "arena", "in use", "free",
                "free (res.)", "metadata", "resident");
    size_t shown = all || a->n <= SHOWN_MAX ? a->n : SHOWN_FEW;
    for (size_t i = 0; i < shown; i++)
        row_text(o, &a->v[i]);
    if (shown < a->n)
        rest_text(o, a, shown);
    if (a->n)
        fprintf(o, "  (resident: 'measured' is the Rss of the arena's own mappings; 'its own' "
                "is the allocator's figure, which may count pages never touched)\n");
    if (a->note[0]) {
        char eb[TEXT_ESCAPE_BUF];
        fprintf(o, "  (%s)\n", text_escape(a->note, eb, sizeof eb));
    }
}
