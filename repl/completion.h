/* completion.h - TAB at the prompt: command names, each command's options
 * (read from its usage and help in the command table), mallctl names with
 * the attached process's arena indices, function names of the latest
 * profile for peek, list and --focus/--ignore/--hide, dump names, and file
 * names where a command takes a file. */
#ifndef MEMPROF_COMPLETION_H
#define MEMPROF_COMPLETION_H

#include "session/session.h"

/* Make readline complete with this session's words. */
void completion_install(struct session *s);

#endif
