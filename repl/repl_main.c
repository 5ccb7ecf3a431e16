/* repl_main.c - the prompt's and batch's command line (memprof without a
 * subcommand): attach to a process (-p) and/or load
 * profile files, then run commands from -e/-x, stdin, or the prompt.
 * Exit status: 0 when every command succeeded (always, at the prompt), 1
 * at the first failure in batch mode or when the output cannot be
 * written, 2 for command-line errors (checked before anything is touched),
 * 3 (MEMPROF_EXIT_GROWTH) when a batch stopped at `trend --fail-over`.
 * Every exit path detaches cleanly.  Answers go to stdout, status lines to
 * stderr (-q drops them), so that a batch's stdout can be read by a program. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repl/repl_main.h"

#include "lib/base/version.h"

#include "repl/commands.h"
#include "session/say.h"
#include "repl/frontend.h"
#include "repl/interrupt.h"
#include "session/control.h"
#include "session/profile_run.h"
#include "session/sampling.h"

static const char usage_text[] =
    "usage: memprof [-q] [-p PID] [-e CMD]... [-x FILE]... [--sysroot DIR] [--exe PATH]\n"
    "               [--dump-dir DIR] [--debug-dir DIR] [--no-pager] [PROFILE...]\n"
    "       memprof serve [OPTION]...   (memprof serve --help)\n"
    "\n"
    "Attach to a running process's allocator and heap profiler, and analyse\n"
    "heap profiles, interactively or in batch.\n"
    "\n"
    "  -p, --pid PID        attach to process PID\n"
    "  -e, --eval CMD       run CMD (repeatable, in order), then exit\n"
    "  -x, --script FILE    run the commands in FILE (repeatable), then exit\n"
    "  -q, --quiet          no status lines (attached to..., notes) on stderr;\n"
    "                       warnings and errors still appear\n"
    "      --sysroot DIR    find the profile's objects under DIR\n"
    "      --dump-dir DIR   where the process writes dumps when it cannot dump\n"
    "                       into memory (DIR as the process sees it)\n"
    "      --exe PATH       the main executable (when it moved since the dump), or\n"
    "                       with -p an unstripped copy of the build it runs\n"
    "      --debug-dir DIR  separate debug files (.build-id/...) under DIR, not\n"
    "                       /usr/lib/debug\n"
    "      --no-pager       at the prompt, print long answers directly instead of\n"
    "                       through $PAGER (default 'less -FRX')\n"
    "  -h, --help           this text\n"
    "  -V, --version        the version\n"
    "\n"
    "With neither -e nor -x, commands come from the memprof> prompt on a\n"
    "terminal, or from standard input otherwise.  Type 'help' for commands.\n";

/* One step of the batch: "-e CMD" or "-x FILE", kept in command-line order. */
struct step {
    bool is_script;
    const char *text;
};

static int run_script(struct session *s, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        say_error("cannot read script %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = frontend_batch(s, f, path);
    fclose(f);
    return rc;
}

/* Errors name the failing step: "FILE:LINE: ..." (frontend_batch) for a
 * script, "-e #N: ..." for the N-th -e. */
static int run_steps(struct session *s, struct step *steps, int nsteps)
{
    int neval = 0;
    for (int i = 0; i < nsteps && !s->quit && !interrupt_stop_signal; i++) {
        int rc;
        if (steps[i].is_script) {
            rc = run_script(s, steps[i].text);
        } else {
            char where[32];
            snprintf(where, sizeof where, "-e #%d", ++neval);
            say_where(where);
            rc = command_run_line(s, steps[i].text);
            say_where(NULL);
        }
        if (rc)
            return -1;
    }
    return 0;
}

/* -p's argument, checked before anything starts: a command-line error. */
static bool pid_valid(const char *pid)
{
    char *end;
    errno = 0;
    long v = strtol(pid, &end, 10);
    return *pid && !*end && errno == 0 && v > 0 && v <= 0x3fffffff;
}

static int start_session(struct session *s, const char *pid, char **files, int nfiles)
{
    if (pid) {
        char *argv[] = {"attach", (char *)pid, NULL};
        if (cmd_attach(s, 2, argv))
            return -1;
    }
    for (int i = 0; i < nfiles; i++) {
        char *argv[] = {"load", "--", files[i], NULL};
        if (cmd_load(s, 3, argv))
            return -1;
    }
    return 0;
}

int repl_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"eval", required_argument, NULL, 'e'},
        {"script", required_argument, NULL, 'x'},
        {"sysroot", required_argument, NULL, 'S'},
        {"exe", required_argument, NULL, 'E'},
        {"dump-dir", required_argument, NULL, 'D'},
        {"debug-dir", required_argument, NULL, 'G'},
        {"quiet", no_argument, NULL, 'q'},
        {"no-pager", no_argument, NULL, 'P'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct session s = {.out = stdout, .hold_interrupt = interrupt_hold,
                        .release_interrupt = interrupt_release};
    struct step *steps = calloc((size_t)argc, sizeof *steps);
    int nsteps = 0, c;
    const char *pid = NULL;
    while ((c = getopt_long(argc, argv, "p:e:x:qhV", opts, NULL)) != -1) {
        switch (c) {
        case 'p': pid = optarg; break;
        case 'e': steps[nsteps++] = (struct step){false, optarg}; break;
        case 'x': steps[nsteps++] = (struct step){true, optarg}; break;
        case 'S': free(s.sysroot); s.sysroot = strdup(optarg); break;
        case 'E': free(s.exe); s.exe = strdup(optarg); break;
        case 'D': free(s.dump_dir); s.dump_dir = strdup(optarg); break;
        case 'G': free(s.debug_dir); s.debug_dir = strdup(optarg); break;
        case 'q': s.quiet = true; break;
        case 'P': s.no_pager = true; break;
        case 'h': fputs(usage_text, stdout); free(steps); return 0;
        case 'V': printf("memprof %s (revision %s)\n", MEMPROF_VERSION, memprof_revision); free(steps); return 0;
        default:
            fputs(usage_text, stderr);
            free(steps);
            return 2;
        }
    }
    if (pid && !pid_valid(pid)) {
        fprintf(stderr, "memprof: -p '%s' is not a process id (a number above 0); "
                "memprof --help lists the options\n", pid);
        free(steps);
        session_free(&s);
        return 2;
    }
    interrupt_install();
    int rc = start_session(&s, pid, argv + optind, argc - optind);
    if (rc == 0) {
        if (nsteps)
            rc = run_steps(&s, steps, nsteps);
        else if ((s.interactive = isatty(STDIN_FILENO)))
            rc = frontend_interactive(&s);
        else
            rc = frontend_batch(&s, stdin, "stdin");
    }
    /* A run still going ends here (its own settings put back); then an
     * error exit puts back what the session changed in the process's
     * profiling, and a normal end says what stays. */
    profile_run_session_end(&s, interrupt_stop_signal != 0);
    sampling_session_end(&s);
    control_session_end(&s, rc != 0 || interrupt_stop_signal);
    int failed_status = s.exit_status ? s.exit_status : 1;
    if (s.target && target_must_exit(s.target)) {
        rc = -1;        /* a call was left running: not a success, at the prompt too */
        failed_status = 1;
    }
    session_free(&s);  /* detaches and removes the dump directory */
    free(steps);
    /* Output that never arrived (a full disk, a closed pipe) is a failure,
     * not a silent success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "memprof: cannot write the output: %s\n", strerror(errno));
        rc = -1;
        failed_status = 1;
    }
    if (interrupt_stop_signal)
        return 128 + interrupt_stop_signal;
    return rc ? failed_status : 0;
}
