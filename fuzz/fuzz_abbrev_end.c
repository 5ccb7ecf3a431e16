/* fuzz_abbrev_end.c - libFuzzer harness for the .debug_abbrev table end
 * reader: any bytes and start give an end inside them past the start, or
 * "need more", or "not a table"; and a table found in a prefix is found
 * the same in the whole (inflating more never moves an end). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/symbolize/abbrev_end.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t off = data[0] % (size - 1), cut = 1 + data[1] % (size - 1);
    size -= 2;
    /* exactly size bytes, so ASan catches any read past the end */
    unsigned char *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data + 2, size);
    if (off > size)
        off = size;
    if (cut > size)
        cut = size;
    size_t end, end_prefix;
    int rc = abbrev_table_end(copy, size, off, &end);
    if (rc == 0 && (end <= off || end > size))
        abort();
    if (rc < -1 || rc > 1)
        abort();
    if (abbrev_table_end(copy, cut, off, &end_prefix) == 0 && (rc != 0 || end_prefix != end))
        abort();
    free(copy);
    return 0;
}
