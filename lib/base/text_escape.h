/* text_escape.h - the one way a string that came from the target (symbol
 * names, file and mapping paths, thread names, mallctl string values) is
 * made safe for a terminal: control bytes (C0, DEL, C1), and bytes that are
 * not valid UTF-8, are written as \xNN, so a program cannot set the
 * operator's terminal title, clear the screen or colour what follows.
 * Printable text, including valid multibyte UTF-8, passes unchanged.
 *
 * For human-readable output only: JSON has its own escaping and keeps the
 * real bytes.  Markup (SVG, HTML) has text_markup_put below. */
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

/* Write s as text of an XML or HTML document (element content or a quoted
 * attribute value): < > & " ' as entities, and what could not stand in a
 * document or would act on a reader's terminal (control characters, C1,
 * broken UTF-8) as '?' each; cut to max characters, ending in "..", when
 * longer (SIZE_MAX: whole).  The SVG flame graph and the HTML report. */
void text_markup_put(FILE *out, const char *s, size_t max);
/* The characters of s as text_markup_put counts them (a byte it replaces
 * is one), for fitting a label into a width. */
size_t text_markup_chars(const char *s);

#endif
