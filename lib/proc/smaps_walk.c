/* smaps_walk.c - see lib/proc/smaps_walk.h. */
#include "lib/proc/smaps_walk.h"

#include <stdbool.h>
#include <string.h>

int smaps_walk(const char *text, size_t len, int (*on_map)(struct map_entry *e, void *arg),
               int (*on_field)(const char *p, const char *e, void *arg), void *arg)
{
    const char *end = text + len;
    bool mapped = false;
    int rc = 0;
    for (const char *p = text; p < end && rc == 0;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl ? nl : end;
        struct map_entry m;
        struct mp_error err;
        if (maps_parse_line(p, (size_t)(e - p), &m, &err) == 0) {
            mapped = true;
            rc = on_map(&m, arg);
        } else if (mapped) {
            rc = on_field(p, e, arg);
        }
        p = nl ? nl + 1 : end;
    }
    return rc;
}
