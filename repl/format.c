/* format.c - byte sizes for people. */
#include "repl/format.h"

#include <math.h>
#include <stdio.h>

char *format_bytes(double bytes, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = fabs(bytes);
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%s%.0f B", bytes < 0 ? "-" : "", v);
    else
        snprintf(buf, len, "%s%.1f %s", bytes < 0 ? "-" : "", v, units[u]);
    return buf;
}
