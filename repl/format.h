/* format.h - numbers for people: byte sizes with binary units. */
#ifndef MEMPROF_FORMAT_H
#define MEMPROF_FORMAT_H

#include <stddef.h>

/* "512 B", "1.5 KiB", "53.1 MiB", "2.0 GiB"; negative values keep their sign. */
char *format_bytes(double bytes, char *buf, size_t len);

#endif
