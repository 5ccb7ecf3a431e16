/* abbrev_end.c - the end of one .debug_abbrev table (abbrev_end.h): a
 * list of entries (code, tag, has-children byte, then name/form pairs up
 * to 0/0, an implicit_const form followed by its value) up to a zero
 * code. */
#include "lib/symbolize/abbrev_end.h"

#include <stdint.h>

#define FORM_IMPLICIT_CONST 0x21
#define MAX_LEB 10   /* bytes of a 64-bit LEB128 */

/* Step over one LEB128 at *pos, its value (low 64 bits) in *value:
 * 0, 1 past len, -1 longer than any 64-bit number. */
static int leb(const unsigned char *data, size_t len, size_t *pos, uint64_t *value)
{
    *value = 0;
    for (int i = 0; i < MAX_LEB; i++) {
        if (*pos >= len)
            return 1;
        unsigned char b = data[(*pos)++];
        *value |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80))
            return 0;
    }
    return -1;
}

/* One entry's attribute list, up to its 0/0 pair. */
static int attributes(const unsigned char *data, size_t len, size_t *pos)
{
    for (;;) {
        uint64_t name, form, value;
        int rc;
        if ((rc = leb(data, len, pos, &name)) || (rc = leb(data, len, pos, &form)))
            return rc;
        if (form == FORM_IMPLICIT_CONST && (rc = leb(data, len, pos, &value)))
            return rc;
        if (name == 0 && form == 0)
            return 0;
    }
}

int abbrev_table_end(const unsigned char *data, size_t len, size_t off, size_t *end)
{
    size_t pos = off;
    for (;;) {
        uint64_t code, tag;
        int rc;
        if ((rc = leb(data, len, &pos, &code)))
            return rc;
        if (code == 0) {
            *end = pos;
            return 0;
        }
        if ((rc = leb(data, len, &pos, &tag)))
            return rc;
        if (pos >= len)
            return 1;
        pos++;   /* DW_CHILDREN_yes or _no */
        if ((rc = attributes(data, len, &pos)))
            return rc;
    }
}
