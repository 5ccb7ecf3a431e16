/* commands.h - running a command line in a session (the table of
 * commands: command_table.h). */
#ifndef MEMPROF_COMMANDS_H
#define MEMPROF_COMMANDS_H

#include "repl/cmdline.h"
#include "repl/command_table.h"
#include "session/session.h"

/* Run one command line in the session.  Blank lines and # comments succeed. */
int command_run_line(struct session *s, const char *line);

/* The command a typed word names: its exact name, "exit" for quit, or a
 * unique prefix of one (as gdb takes them); NULL after saying why: the
 * commands an ambiguous prefix could be, or the nearest to an unknown word
 * ("did you mean ..."). */
const struct command *command_resolve(const char *word);

#endif
