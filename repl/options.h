/* options.h - the one option parser of memprof's commands: options may
 * stand anywhere, "--name VALUE" and "--name=VALUE" both work, an unknown
 * option is an error, "--" ends the options, and a word that starts with
 * '-' is never taken as a value: such a value goes after "--". */
#ifndef MEMPROF_OPTIONS_H
#define MEMPROF_OPTIONS_H

#include <stdbool.h>

/* One option a command takes; the parser fills in given and value. */
struct cmd_option {
    const char *name;       /* without the dashes: "force", "type" */
    bool takes_value;
    bool given;
    const char *value;      /* for takes_value: the last one given */
};

/* Parse argv[1..argc-1] against opts (terminated by a NULL name) and put
 * the other words, in order, into pos (at most maxpos).  Returns the
 * number of positional words, or -1 after saying what is wrong (with the
 * command's usage from the command table). */
int options_parse(int argc, char **argv, struct cmd_option *opts, char **pos,
                  int maxpos);

/* The same parser, for commands where the order of options matters
 * (--space then --objects): on_option is called for each option as it
 * comes, with its index in opts and its value (NULL for a flag), and
 * returns 0 or -1 to stop (after saying why).  opts' given/value are not
 * filled in. */
typedef int options_fn(void *ctx, int index, const char *value);
int options_each(int argc, char **argv, const struct cmd_option *opts,
                 options_fn *on_option, void *ctx, char **pos, int maxpos);

/* For a command without options: its words (at most maxpos) into pos. */
int options_words(int argc, char **argv, char **pos, int maxpos);

/* The option called name in opts (which must hold it). */
struct cmd_option *options_get(struct cmd_option *opts, const char *name);

#endif
