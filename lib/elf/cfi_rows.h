/* cfi_rows.h - an ELF file's call-frame information (.eh_frame) turned
 * into a sorted table of simple unwind rows, in the manner of the Linux
 * kernel's ORC: for each stretch of code, where the caller's frame (CFA),
 * return address and frame pointer are.
 *
 * The heap sampler memprof puts into a process walks stacks with these
 * rows (allocator/sampler/abi.h's struct sampler_row has this layout): it
 * cannot interpret DWARF itself, and must follow -O2 code built without
 * frame pointers the way libgcc's unwinder (jemalloc's) does.  Rows are
 * built here, offline, from the file alone: no process is touched.
 *
 * A walker looks up the row for a return address minus one (as libgcc
 * does: a call may be a function's last instruction), then
 *   CFA = (SP or FP) + cfa_off;  return address = [CFA + ra_off];
 *   caller's FP = [CFA + fp_off] (unchanged when fp_off is 0);  SP = CFA.
 * A CFI_CFA_NONE row, or no row at or below the address, means: stop. */
#ifndef MEMPROF_CFI_ROWS_H
#define MEMPROF_CFI_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"

/* one row: from pc on (until the next row's pc) the caller's frame is found so */
enum cfi_cfa { CFI_CFA_NONE = 0, CFI_CFA_SP = 1, CFI_CFA_FP = 2 };
struct cfi_row {
    uint64_t pc;        /* runtime address (link-time + bias) where the row starts */
    int32_t cfa_off;    /* CFA = (SP or FP) + cfa_off */
    int16_t fp_off;     /* caller's frame pointer saved at CFA + fp_off; 0: unchanged */
    int8_t ra_off;      /* return address saved at CFA + ra_off */
    uint8_t cfa_reg;    /* enum cfi_cfa */
};
struct cfi_rows { struct cfi_row *v; size_t n, cap; };

/* Append the rows of the ELF file open on fd (not closed; path for messages), for a
 * mapping with load bias `bias`, to out.  Code with no call-frame information, and
 * code whose rule this table cannot express (CFA by expression or by another register,
 * return address or frame pointer by expression or in another register), gets a
 * CFI_CFA_NONE row, so a walker stops there rather than guess.  0, or -1 with err
 * (out is then as it was).
 *
 * An object without .eh_frame adds no rows; an object's rows lie within its
 * executable PT_LOADs and end with a NONE row, so an address in an object
 * without rows finds a NONE row (or none) below it.  Machines: x86_64 and
 * aarch64, little-endian, 64-bit; others give -1.  The file is untrusted:
 * work is bounded by its size. */
int cfi_rows_add_elf(struct cfi_rows *out, int fd, const char *path, uint64_t bias,
                     struct mp_error *err);

/* Sort by pc, merge a row into the previous one when it says the same, and resolve
 * overlaps (objects do not overlap; within one, a later FDE covering the same pc wins
 * nothing: keep the first).  Afterwards rows are strictly increasing in pc. */
void cfi_rows_finish(struct cfi_rows *rows);

void cfi_rows_free(struct cfi_rows *rows);

/* The row for address pc (the greatest row.pc <= pc), or NULL: for tests and for a
 * walker outside the process. */
const struct cfi_row *cfi_rows_find(const struct cfi_rows *rows, uint64_t pc);

#endif
