/* commands.h - the table of memprof commands.  Each command is one row
 * with its usage and help text; `help` prints from the same table. */
#ifndef MEMPROF_COMMANDS_H
#define MEMPROF_COMMANDS_H

#include "session/session.h"

enum command_flags {
    CMD_NEEDS_TARGET = 1 << 0,   /* refuses to run when not attached */
    CMD_CALLS_TARGET = 1 << 1,   /* calls into the process: at the prompt a
                                  * Ctrl-C waits for the command to end */
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

extern const struct command command_table[];
const struct command *command_find(const char *name);

/* Split a command line into argv (shell-like quoting: '...', "...", \x).
 * Returns argc, or -1 with err set (unterminated quote).  *argv and its
 * strings are one malloc'd block: free(*argv). */
int command_split(const char *line, char ***argv, struct mp_error *err);

/* Run one command line in the session.  Blank lines and # comments succeed. */
int command_run_line(struct session *s, const char *line);

/* Print an error for the user: "memprof: <msg>" on stderr, or
 * "memprof: <where>: <msg>" while a batch line runs (command_where). */
void command_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Where the command being run came from ("deploy.mp:12", "-e #3"), for
 * errors; NULL at the prompt and outside commands.  The string is copied. */
void command_where(const char *where);

/* A status line (attached, notes): on stderr, so that stdout holds only
 * answers, and not at all under -q (s->quiet). */
void command_status(const struct session *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* At the end of a session with a process (exit, detach): when failed (a
 * batch stopped at an error, a stop signal), put back what the session
 * changed in its profiling (prof.active, the rate, prof.gdump) and say so;
 * otherwise say on stderr what stays changed and the command that undoes it.
 * (cmd_control.c) */
void control_session_end(struct session *s, bool failed);

/* arenas.narenas of the attached process, read once (one short stop) and
 * kept for the session; 0 when not attached or unreadable.  (cmd_control.c) */
unsigned control_narenas(struct session *s);

/* The command a typed word names: its exact name, "exit" for quit, or a
 * unique prefix of one (as gdb takes them); NULL after saying why: the
 * commands an ambiguous prefix could be, or the nearest to an unknown word
 * ("did you mean ..."). */
const struct command *command_resolve(const char *word);
/* The same without a word to the user: NULL when word names no command. */
const struct command *command_lookup(const char *word);

/* Run mallctl calls in one stop, each checked first (mallctl_check_call);
 * on a failure say so and return -1.  A call's own refusal is left in its
 * ret: control_mallctl_failed says why and returns -1.  (cmd_control.c) */
int control_run_calls(struct session *s, struct mallctl_call *calls, size_t n);
/* Say that calls into the process failed (err); when a thread was left
 * inside a call, say memprof exits and end the session.  Returns -1. */
int control_call_failed(struct session *s, const struct mp_error *err);
/* The same, names the table lacks checked against unknown. */
struct mallctl_info;
int control_run_calls_as(struct session *s, struct mallctl_call *calls, size_t n,
                         const struct mallctl_info *unknown);
/* Only the check, for calls attach/ makes inside another operation
 * (unknown: the entry for a name the table lacks, or NULL). */
struct mallctl_info;
int control_check_calls(struct mallctl_call *calls, size_t n,
                        const struct mallctl_info *unknown);
int control_mallctl_failed(struct session *s, const char *name, int ret, bool writing);

/* Take a heap profile from the attached process and add it to the session
 * (NULL name: dump1, dump2...; file: also save its bytes there, with the
 * build-ids beside it).  Returns the new dump (a pointer into s->dumps,
 * valid until the next dump is added), or NULL after saying what went
 * wrong.  (cmd_control.c) */
struct session_dump *control_dump_take(struct session *s, const char *name,
                                       const char *file);
/* The same for bytes the process wrote some other way (prof.gdump files):
 * parsed, with the process's build-ids, added.  (cmd_control.c) */
struct session_dump *control_dump_add(struct session *s, const char *data, size_t len,
                                      const char *name, const char *file);
/* Whether sampling every 2^lg bytes is affordable for the process: refuses
 * a rate that would double its small-object memory (or sample everything)
 * unless force, warns from 10 %.  0, or -1 after saying why.  (One stop.) */
int control_sample_check(struct session *s, size_t lg, bool force);
/* The MALLOC_CONF rule: 0 when memprof may change prof.active, the rate or
 * the counters (what: "turn profiling off", for the refusal); -1 after
 * saying the owner turned profiling on at start and --force is needed. */
int control_owner_allows(struct session *s, const char *what, bool force);
/* 0 when the process can profile at all (config.prof and opt.prof); -1
 * after saying why not and what to do. */
int control_profiling_possible(struct session *s);

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

#endif
