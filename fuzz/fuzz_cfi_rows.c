/* fuzz_cfi_rows.c - libFuzzer harness for the unwind-row builder: any
 * bytes, as a file, give rows or an error, never a crash; rows added are
 * then finished into a strictly increasing table that lookups agree with. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/elf/cfi_rows.h"

static void check(const struct cfi_rows *rows)
{
    for (size_t i = 0; i < rows->n; i++) {
        if (i && rows->v[i - 1].pc >= rows->v[i].pc)
            abort();
        if (rows->v[i].cfa_reg > CFI_CFA_FP || cfi_rows_find(rows, rows->v[i].pc) != &rows->v[i])
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz_cfi_rows", 0)) < 0)
        abort();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    struct cfi_rows rows = {0};
    struct mp_error err;
    if (cfi_rows_add_elf(&rows, fd, "fuzz", 0x10000, &err) == 0) {
        cfi_rows_finish(&rows);
        check(&rows);
    } else if (rows.n != 0) {
        abort();              /* a failure leaves the table as it was */
    }
    cfi_rows_free(&rows);
    return 0;
}
