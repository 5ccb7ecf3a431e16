/* cmd_pictures.h - usage, summary and help texts of the picture commands
 * (flame, graph), for the command table in commands.c; and running
 * Graphviz's dot, for the commands that draw a call graph. */
#ifndef MEMPROF_CMD_PICTURES_H
#define MEMPROF_CMD_PICTURES_H


#include <stddef.h>

#include "lib/base/error.h"

/* Draw DOT text with Graphviz's dot (no shell, at most 2 minutes) into
 * path in format (svg, png, pdf).  cmd: the command, for advice in
 * messages.  0; -1 with err saying why; PICTURES_DOT_MISSING with err
 * when dot is not installed. */
#define PICTURES_DOT_MISSING (-2)
int pictures_dot(const char *cmd, const char *format, const char *path, const char *text,
                 size_t len, struct mp_error *err);
/* The same as SVG text in *svg (malloc'd, *svg_len bytes). */
int pictures_dot_svg(const char *cmd, const char *text, size_t len, char **svg, size_t *svg_len,
                     struct mp_error *err);

#endif
