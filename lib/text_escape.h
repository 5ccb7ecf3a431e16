/* text_escape.h - the one way a string that came from the target (symbol
 * names, file and mapping paths, thread names, mallctl string values) is
 * made safe for a terminal: control bytes (C0, DEL, C1), and bytes that are
 * not valid UTF-8, are written as \xNN, so a program cannot set the
 * operator's terminal title, clear the screen or colour what follows.
 * Printable text, including valid multibyte UTF-8, passes unchanged.
 *
 * For human-readable output only: JSON has its own escaping and keeps the
 * real bytes; the SVG writer escapes markup itself. */
#ifndef MEMPROF_TEXT_ESCAPE_H
#define MEMPROF_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Worst case: every byte becomes \xNN. */
#define TEXT_ESCAPE_MAX(len) ((len) * 4 + 1)

/* True when s needs no escaping. */
bool text_is_safe(const char *s);

/* s itself when it is safe, else an escaped copy in buf (cap bytes, cut
 * at a whole escape and ending in "..." when it does not fit).  NULL
 * stays NULL.  Meant as a printf argument:
 *     char b[TEXT_ESCAPE_BUF];
 *     printf("%s\n", text_escape(name, b, sizeof b)); */
#define TEXT_ESCAPE_BUF 4096
const char *text_escape(const char *s, char *buf, size_t cap);

/* Write s escaped to out, whole (no length limit). */
void text_escape_put(FILE *out, const char *s);

#endif
