/* command_table.h - what a command is (its function, usage, summary and
 * help), the table of them, and the functions each repl/cmd_*.c defines:
 * the one header a command's file needs from the front end. */
#ifndef MEMPROF_COMMAND_TABLE_H
#define MEMPROF_COMMAND_TABLE_H

#include "session/session.h"

enum command_flags {
    CMD_NEEDS_TARGET = 1 << 0,   /* refuses to run when not attached */
    CMD_CALLS_TARGET = 1 << 1,   /* calls into the process: at the prompt a
                                  * Ctrl-C waits for the command to end */
    CMD_JEMALLOC     = 1 << 2,   /* drives jemalloc: refused, naming what the
                                  * process uses and what memprof can do
                                  * there, when it does not use jemalloc */
};

/* The exit status of a batch stopped by `trend --fail-over` (something
 * grows faster than allowed), distinct from 1 (a command failed) and 2
 * (command-line errors) so that CI can tell a leak from a broken run. */
#define MEMPROF_EXIT_GROWTH 3

/* A command returns 0 on success, -1 on failure after printing a message
 * ("memprof: ..." on stderr) saying what went wrong and what to do. */
typedef int command_fn(struct session *s, int argc, char **argv);

struct command {
    const char *name;
    const char *usage;         /* "prof on|off|sample N|reset" */
    const char *summary;       /* one line for `help` */
    const char *help;          /* the whole text for `help NAME` */
    command_fn *run;
    unsigned flags;
};

/* The table, ended by a row whose name is NULL; a command by its exact
 * name (NULL when none). */
extern const struct command command_table[];
const struct command *command_find(const char *name);

/* The same without a word to the user: NULL when word names no command. */
const struct command *command_lookup(const char *word);

/* Commands implemented in repl/cmd_*.c */
command_fn cmd_help, cmd_quit, cmd_attach, cmd_detach, cmd_info, cmd_prof,
           cmd_dump, cmd_mallctl, cmd_jemalloc, cmd_sleep, cmd_set;
command_fn cmd_top, cmd_traces, cmd_peek, cmd_tree, cmd_list, cmd_diff,
           cmd_dumps, cmd_load, cmd_pprof, cmd_flame, cmd_graph;
command_fn cmd_purge, cmd_decay, cmd_memory, cmd_stats;   /* cmd_memory.c */
command_fn cmd_recent;                                     /* cmd_recent.c */
command_fn cmd_profile;                                    /* cmd_profile.c */
command_fn cmd_trend;                                      /* cmd_trend.c */
command_fn cmd_report;                                     /* cmd_report.c */
command_fn cmd_faults;                                     /* cmd_faults.c */

/* Usage, summary and help of commands whose text lives beside them. */
extern const char cmd_top_usage[], cmd_top_summary[], cmd_top_help[];
extern const char cmd_traces_usage[], cmd_traces_summary[], cmd_traces_help[];
extern const char cmd_peek_usage[], cmd_peek_summary[], cmd_peek_help[];
extern const char cmd_tree_usage[], cmd_tree_summary[], cmd_tree_help[];
extern const char cmd_list_usage[], cmd_list_summary[], cmd_list_help[];
extern const char cmd_diff_usage[], cmd_diff_summary[], cmd_diff_help[];
extern const char cmd_dumps_usage[], cmd_dumps_summary[], cmd_dumps_help[];
extern const char cmd_load_usage[], cmd_load_summary[], cmd_load_help[];
extern const char cmd_flame_usage[], cmd_flame_summary[], cmd_flame_help[];
extern const char cmd_graph_usage[], cmd_graph_summary[], cmd_graph_help[];
extern const char cmd_report_usage[], cmd_report_summary[], cmd_report_help[];
extern const char cmd_trend_usage[], cmd_trend_summary[], cmd_trend_help[];

#endif
