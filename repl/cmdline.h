/* cmdline.h - a command line split into words, as a shell would. */
#ifndef MEMPROF_CMDLINE_H
#define MEMPROF_CMDLINE_H

#include "lib/base/error.h"

/* Split a command line into argv (shell-like quoting: '...', "...", \x).
 * Returns argc, or -1 with err set (unterminated quote).  *argv and its
 * strings are one malloc'd block: free(*argv). */
int command_split(const char *line, char ***argv, struct mp_error *err);

#endif
