/* graphviz.h - a call graph's DOT text drawn by Graphviz's dot: for the
 * prompt's graph and report commands and serve's call-graph download. */
#ifndef MEMPROF_GRAPHVIZ_H
#define MEMPROF_GRAPHVIZ_H

#include <stddef.h>

#include "lib/base/error.h"

/* Draw DOT text with Graphviz's dot (no shell, at most 2 minutes) into
 * path in format (svg, png, pdf).  cmd: the command, for advice in
 * messages.  0; -1 with err saying why; GRAPHVIZ_MISSING with err when
 * dot is not installed. */
#define GRAPHVIZ_MISSING (-2)
int graphviz_draw(const char *cmd, const char *format, const char *path, const char *text,
                  size_t len, struct mp_error *err);
/* The same as SVG text in *svg (malloc'd, *svg_len bytes). */
int graphviz_svg(const char *cmd, const char *text, size_t len, char **svg, size_t *svg_len,
                 struct mp_error *err);

#endif
