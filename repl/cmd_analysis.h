/* cmd_analysis.h - usage, summary and help texts of the analysis commands
 * (top, traces, peek, tree, list, diff, dumps, load), for the command
 * table in commands.c.  They are arrays so they can initialise a static
 * table.
 *
 * Also the pieces other analysis-like commands (cmd_pictures.c) share with
 * them: the option parser, finding a profile by name, and a context with
 * the views of one or two profiles. */
#ifndef MEMPROF_CMD_ANALYSIS_H
#define MEMPROF_CMD_ANALYSIS_H

#include <stdbool.h>

#include "lib/analysis/analysis.h"
#include "session/session.h"


/* ---- shared with the other analysis-like commands ---- */

/* Options only some commands take: the rest are refused with a message. */
enum {
    CMD_ALLOW_BASE = 1 << 0,          /* --base DUMP */
    CMD_ALLOW_NODEFRACTION = 1 << 1,  /* --nodefraction F */
    CMD_ALLOW_EDGEFRACTION = 1 << 2,  /* --edgefraction F */
    CMD_ALLOW_FOLDED = 1 << 3,        /* --folded */
    CMD_ALLOW_WATCH = 1 << 4,         /* --watch S, --count N */
    CMD_ALLOW_FAIL_OVER = 1 << 5,     /* --fail-over RATE */
};
#define CMD_MAX_POSITIONAL 4

struct cmd_analysis_args {
    struct analysis_options o;   /* nodefraction 0.005, edgefraction 0.001 */
    bool json, folded;
    bool show_alloc;             /* --show-alloc: keep allocator frames */
    const char *base;
    const char *watch, *count;   /* --watch S, --count N (unparsed) */
    const char *fail_over;       /* --fail-over RATE (unparsed) */
    char *pos[CMD_MAX_POSITIONAL];   /* the non-option arguments, in order */
    int npos;
};

/* top --watch (cmd_trend.c): dump, a DUMP the user named (refused). */
int cmd_watch_top(struct session *s, const struct cmd_analysis_args *a, const char *dump);

/* Parse a command's argv (options anywhere, "--" ends them).  Returns 0, or
 * -1 after printing what is wrong. */
int cmd_analysis_parse(int argc, char **argv, unsigned allowed,
                       struct cmd_analysis_args *a);

/* Split the positionals into a row count (all digits; default_limit when
 * none) and a name (a dump, a series); a third word is refused with usage.
 * 0, or -1 after saying what is wrong. */
int cmd_analysis_count_and_name(struct cmd_analysis_args *a, const char *cmd,
                                const char *usage, const char **name, int default_limit);

/* The session profile called name (NULL: the latest), or NULL after saying
 * there is none. */
struct session_dump *cmd_analysis_find_dump(struct session *s, const char *name);

/* A context at a's granularity (and --show-alloc) with the view of d and,
 * when base is not NULL, of base.  The caller frees w->ctx with
 * analysis_free. */
struct cmd_analysis_views {
    struct analysis *ctx;
    const struct analysis_view *v, *base;
    struct analysis_source src;
};
/* Returns 0, or -1 after printing "CMD: what went wrong". */
int cmd_analysis_open(struct session *s, const char *cmd, const struct cmd_analysis_args *a,
                      struct session_dump *d, struct session_dump *base,
                      struct cmd_analysis_views *w);

/* The trend of the dumps idx[0..n) taken at times (seconds), in ctx, which
 * must hold no view of a session profile: one dump at a time, each parsed
 * again from its file when not in memory and forgotten once summed, so
 * that memory does not grow with n (repl/cmd_trend.c).  0, or -1 after
 * saying why ("CMD: ..."). */
struct trend;
int cmd_trend_compute(struct session *s, struct analysis *ctx, const size_t *idx, size_t n,
                      const double *times, const struct analysis_options *o, const char *cmd,
                      struct trend *t);

#endif
