/* fuzz_perf_record.c - libFuzzer harness for the page-fault sampler's
 * reading of a perf ring-buffer record and its walk of the copied stack:
 * the first byte chooses whether samples hold PERIOD, the next 64 bytes
 * are four unwind rows (whatever they say), the rest is one record (its
 * header's size is forced to the length, as the reader copies exactly
 * that).  Never a crash, never a read outside the record; a sample's
 * stack lies inside it, and a walk stays within its bound. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/elf/cfi_walk.h"
#include "lib/proc/perf_record.h"

#define NROWS 4
#define MAX_FRAMES 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1 + NROWS * sizeof(struct cfi_row) + 8 || size - 1 - NROWS * 16 > 65535)
        return 0;
    bool with_period = data[0] & 1;
    struct cfi_row rowv[NROWS];
    memcpy(rowv, data + 1, sizeof rowv);
    struct cfi_rows rows = {0};
    rows.v = malloc(sizeof rowv);
    if (!rows.v)
        return 0;
    memcpy(rows.v, rowv, sizeof rowv);
    rows.n = rows.cap = NROWS;
    cfi_rows_finish(&rows);

    size_t len = size - 1 - sizeof rowv;
    uint8_t *rec = malloc(len);      /* its own allocation: ASan sees any overread */
    if (!rec)
        abort();
    memcpy(rec, data + 1 + sizeof rowv, len);
    uint16_t hsize = (uint16_t)len;
    memcpy(rec + 6, &hsize, 2);
    struct perf_record r;
    enum perf_record_kind k = perf_record_parse(rec, len, with_period, &r);
    if (k != r.kind)
        abort();
    if (k == PERF_RECORD_KIND_SAMPLE) {
        const struct perf_fault_sample *s = &r.sample;
        if (s->stack && (s->stack < rec || s->stack + s->stack_len > rec + len))
            abort();
        if (s->has_regs) {
            struct cfi_stack st = {s->sp, s->stack, s->stack_len};
            uint64_t frames[MAX_FRAMES];
            bool truncated;
            size_t n = cfi_walk(&rows, s->pc, s->sp, s->fp, &st, frames, MAX_FRAMES,
                                &truncated);
            if (n == 0 || n > MAX_FRAMES || frames[0] != s->pc)
                abort();
        }
    }
    free(rec);
    cfi_rows_free(&rows);
    return 0;
}
