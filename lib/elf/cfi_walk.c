/* cfi_walk.c - owns the offline walk of a copied stack with unwind rows
 * (cfi_walk.h). */
#include "lib/elf/cfi_walk.h"

#include <string.h>

static bool read_word(const struct cfi_stack *st, uint64_t addr, uint64_t *out)
{
    if (addr < st->base || addr - st->base > st->len || st->len - (addr - st->base) < 8)
        return false;
    memcpy(out, st->bytes + (addr - st->base), 8);
    return true;
}

enum step { STEP_NEXT, STEP_END, STEP_LOST };

/* From the registers of one frame to its caller's, with the row at look. */
static enum step step_out(const struct cfi_rows *rows, uint64_t look, uint64_t *pc,
                          uint64_t *sp, uint64_t *fp, const struct cfi_stack *st)
{
    const struct cfi_row *row = cfi_rows_find(rows, look);
    if (!row)
        return STEP_LOST;
    uint64_t base;
    switch (row->cfa_reg) {
    case CFI_CFA_NONE: return STEP_END;
    case CFI_CFA_SP: base = *sp; break;
    case CFI_CFA_FP: base = *fp; break;
    default: return STEP_LOST;
    }
    uint64_t cfa = base + (uint64_t)(int64_t)row->cfa_off, ra, nfp = *fp;
    if (cfa <= *sp)                 /* stacks grow down: a loop or garbage */
        return STEP_LOST;
    if (!read_word(st, cfa + (uint64_t)(int64_t)row->ra_off, &ra))
        return STEP_LOST;
    if (row->fp_off != 0 && !read_word(st, cfa + (uint64_t)(int64_t)row->fp_off, &nfp))
        return STEP_LOST;
    if (ra == 0)
        return STEP_END;
    *pc = ra;
    *sp = cfa;
    *fp = nfp;
    return STEP_NEXT;
}

size_t cfi_walk(const struct cfi_rows *rows, uint64_t pc, uint64_t sp, uint64_t fp,
                const struct cfi_stack *stack, uint64_t *frames, size_t max,
                bool *truncated)
{
    size_t n = 0;
    *truncated = false;
    if (max == 0)
        return 0;
    frames[n++] = pc;
    uint64_t look = pc;         /* the first pc is where the thread was */
    for (;;) {
        enum step s = step_out(rows, look, &pc, &sp, &fp, stack);
        if (s == STEP_END)
            return n;
        if (s == STEP_LOST || n == max) {
            *truncated = true;
            return n;
        }
        frames[n++] = pc;
        look = pc - 1;          /* a return address may start the next function */
    }
}
