/* commands.c - running a command line: split, resolved to a command of
 * the table (exact name, unique prefix, or a suggestion), run; and the
 * commands of the prompt itself (help, sleep, set, quit). */
#include "repl/commands.h"
#include "session/control.h"
#include "session/say.h"
#include "session/sampling_notes.h"
#include "session/profile_run.h"
#include "repl/options.h"
#include "lib/base/text_escape.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t distance(const char *a, const char *b)
{
    size_t lb = strlen(b), row[64];
    if (lb >= sizeof row / sizeof *row)
        return SIZE_MAX;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; a[i - 1]; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}


const struct command *command_resolve(const char *word)
{
    const struct command *found = command_lookup(word);
    if (found)
        return found;
    size_t len = strlen(word), n = 0;
    char list[512] = "";
    for (const struct command *c = command_table; c->name; c++) {
        if (strncmp(c->name, word, len) != 0)
            continue;
        found = c;
        n++;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", used ? ", " : "", c->name);
    }
    if (n > 1) {
        say_error("'%s' is ambiguous: %s", word, list);
        return NULL;
    }
    /* The nearest names, if any is near enough to be a typo. */
    size_t best = SIZE_MAX;
    for (const struct command *c = command_table; c->name; c++) {
        size_t d = distance(word, c->name);
        if (d < best)
            best = d;
    }
    if (len > 40 || best > 2 || best >= len) {
        say_error("unknown command '%s' (type 'help' for the list)", word);
        return NULL;
    }
    for (const struct command *c = command_table; c->name; c++) {
        if (distance(word, c->name) != best)
            continue;
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s'%s'", used ? " or " : "", c->name);
    }
    say_error("unknown command '%s': did you mean %s? (type 'help' for the list)",
                  word, list);
    return NULL;
}

int command_run_line(struct session *s, const char *line)
{
    char **argv;
    struct mp_error err;
    int argc = command_split(line, &argv, &err);
    if (argc < 0) {
        say_error("%s", err.msg);
        return -1;
    }
    if (argc == 0) {
        free(argv);
        return 0;
    }
    int rc = -1;
    s->exit_status = 0;
    profile_run_tick(s);       /* what a run had due while the line was typed */
    const struct command *c = command_resolve(argv[0]);
    if (!c)
        ;                       /* command_resolve said why */
    else if ((c->flags & CMD_NEEDS_TARGET) && !s->target)
        say_error("'%s' needs a process: attach to one first "
                      "(memprof -p PID, or 'attach PID')", c->name);
    else if ((c->flags & CMD_JEMALLOC) && s->target && sampling_needs_jemalloc(s, c->name))
        ;                       /* it said why */
    else
        rc = c->run(s, argc, argv);
    session_profiles_trim(s);  /* between commands no view holds a profile */
    fflush(s->out);
    free(argv);
    return rc;
}

int cmd_help(struct session *s, int argc, char **argv)
{
    char *pos[1];
    int npos = options_words(argc, argv, pos, 1);
    if (npos < 0)
        return -1;
    if (npos == 1) {
        const struct command *c = command_resolve(pos[0]);
        if (!c)
            return -1;
        fprintf(s->out, "usage: %s\n\n%s\n", c->usage, c->help);
        return 0;
    }
    for (const struct command *c = command_table; c->name; c++) {
        if (strlen(c->usage) > 42)   /* long usage: summary on its own line */
            fprintf(s->out, "  %s\n  %-42s %s\n", c->usage, "", c->summary);
        else
            fprintf(s->out, "  %-42s %s\n", c->usage, c->summary);
    }
    fprintf(s->out, "Type 'help COMMAND' for more.\n");
    return 0;
}

int cmd_sleep(struct session *s, int argc, char **argv)
{
    char *pos[1], *end = NULL;
    int npos = options_words(argc, argv, pos, 1);
    if (npos < 0)
        return -1;
    double secs = npos == 1 ? strtod(pos[0], &end) : -1;
    if (npos != 1 || *end || end == pos[0] || !(secs >= 0 && secs <= 3600)) {
        say_error("usage: sleep SECONDS (from 0 to 3600)");
        return -1;
    }
    /* A stop signal (SIGTERM, SIGHUP) ends the wait early; so does Ctrl-C.
     * A profiling run goes on meanwhile: the sleep wakes for its events. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left = secs - ((double)(now.tv_sec - start.tv_sec) +
                              (now.tv_nsec - start.tv_nsec) / 1e9);
        if (left <= 0)
            return 0;
        double next = profile_run_next(s);
        double step = next >= 0 && next < left ? next : left;
        struct timespec ts = {(time_t)step, (long)((step - (double)(time_t)step) * 1e9)};
        if (nanosleep(&ts, NULL) != 0) {
            say_error("sleep interrupted");
            return -1;
        }
        profile_run_tick(s);
    }
}

int cmd_set(struct session *s, int argc, char **argv)
{
    char *pos[2];
    int npos = options_words(argc, argv, pos, 2);
    if (npos < 0)
        return -1;
    if (npos != 2 || strcmp(pos[0], "pager") != 0 ||
        (strcmp(pos[1], "on") != 0 && strcmp(pos[1], "off") != 0)) {
        say_error("usage: set pager on|off");
        return -1;
    }
    s->no_pager = strcmp(pos[1], "off") == 0;
    return 0;
}

int cmd_quit(struct session *s, int argc, char **argv)
{
    if (options_words(argc, argv, NULL, 0) < 0)
        return -1;
    s->quit = true;
    return 0;
}
