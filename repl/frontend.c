/* frontend.c - the two ways lines reach the command table: batch input
 * (stdin that is not a terminal, -x FILE) and the readline prompt, with
 * history, completion and a pager for long answers.  Ctrl-C at the prompt
 * clears the line, and during a command cancels it (sleep, the analysis
 * loops through analysis_set_cancel); during a command that calls into the
 * process it is held until the command ends, so that attach/ never leaves a
 * call half-way at the prompt.  It never ends an interactive session (in
 * batch it ends the session like SIGTERM).
 * SIGTERM and SIGHUP end it cleanly between commands
 * (attach/ blocks them while a thread of the target is hijacked).
 * Leaving the prompt with profiling this session turned on asks whether to
 * turn it off (default: yes, the process as memprof found it). */
#include "repl/frontend.h"
#include "repl/interrupt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "lib/analysis/analysis.h"
#include "repl/commands.h"
#include "session/say.h"
#include "repl/completion.h"
#include "repl/pager.h"
#include "session/profile_run.h"

/* Wait until fd has input, doing a running profiling run's ticks
 * meanwhile.  0 when there is input (or no run to wait for), -1 when
 * interrupted (the caller checks the stop flag). */
static int wait_for_input(struct session *s, int fd)
{
    while (profile_run_running(s) && !interrupt_stop_signal) {
        double next = profile_run_next(s);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int ready = poll(&p, 1, (int)(next * 1000) + 1);
        if (ready < 0)
            return errno == EINTR ? -1 : 0;
        if (ready > 0)
            return 0;
        profile_run_tick(s);
    }
    return 0;
}

int frontend_batch(struct session *s, FILE *f, const char *name)
{
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    unsigned long lineno = 0;
    /* From a pipe or a terminal, lines may come slowly while a profiling
     * run goes on: read unbuffered, so that poll tells the truth about
     * what is left to read, and tick while waiting. */
    struct stat st;
    bool may_wait = fstat(fileno(f), &st) == 0 && !S_ISREG(st.st_mode);
    if (may_wait)
        setvbuf(f, NULL, _IONBF, 0);
    while (!s->quit && !interrupt_stop_signal) {
        if (may_wait && wait_for_input(s, fileno(f)) < 0)
            continue;
        errno = 0;
        ssize_t n = getline(&line, &cap, f);
        if (n < 0) {
            if (errno == EINTR && !interrupt_stop_signal) {
                clearerr(f);
                continue;
            }
            break;
        }
        char where[300];
        snprintf(where, sizeof where, "%s:%lu", name, ++lineno);
        say_where(where);
        int failed = command_run_line(s, line);
        say_where(NULL);
        /* Input that comes slowly (a pipe, a FIFO) is answered as it comes:
         * a program reading the answers must not wait for the batch's end. */
        if (may_wait)
            fflush(s->out);
        if (failed) {
            rc = -1;
            break;
        }
    }
    free(line);
    return rc;
}

/* ---- interactive ---- */

static struct session *rl_session;
static bool rl_finished;

/* Whether the line's command calls into the process (CMD_CALLS_TARGET). */
static bool calls_target(const char *line)
{
    char **argv;
    struct mp_error err;
    int argc = command_split(line, &argv, &err);
    if (argc < 0)
        return false;
    const struct command *c = argc ? command_lookup(argv[0]) : NULL;
    free(argv);
    return c && (c->flags & CMD_CALLS_TARGET);
}


/* One command at the prompt: a Ctrl-C during it cancels it (one between
 * Enter and the start: it does not start; one during calls into the
 * process: they finish), and its answer goes through the pager when long. */
static void run_at_prompt(struct session *s, const char *line)
{
    struct pager pg;
    if (interrupt_sigint) {
        interrupt_sigint = 0;
        say_error("interrupted before it started");
        return;
    }
    bool held = calls_target(line);
    if (held)
        interrupt_hold();
    pager_begin(s, &pg);
    int rc = command_run_line(s, line);
    if (held)
        interrupt_release();
    bool cancelled = interrupt_sigint;
    pager_end(s, &pg, cancelled && !held);
    if (cancelled && held)
        say_error("interrupted: the command was let finish (at the prompt memprof "
                      "never leaves a call into the process half-way)");
    else if (cancelled && rc == 0)   /* a failed command said why already */
        say_error("interrupted%s", pg.dropped ? " (its partial answer is not shown)"
                                                  : ": the answer above may be incomplete");
    interrupt_sigint = 0;                /* a Ctrl-C in the pager is the pager's */
}

static void on_line(char *line)
{
    if (!line) {               /* Ctrl-D */
        rl_finished = true;
        putchar('\n');
        return;
    }
    if (*line) {
        add_history(line);
        run_at_prompt(rl_session, line);
    }
    free(line);
    if (rl_session->quit)
        rl_finished = true;
}

static char *history_path(void)
{
    const char *home = getenv("HOME");
    char *p = NULL;
    if (home && *home && asprintf(&p, "%s/.memprof_history", home) < 0)
        p = NULL;
    return p;
}

static void clear_line_after_sigint(void)
{
    interrupt_sigint = 0;
    rl_free_line_state();
    rl_callback_sigcleanup();
    rl_replace_line("", 0);
    rl_crlf();
    rl_on_new_line();
    rl_redisplay();
}

/* A profiling run's tick while the user types: what it says goes above
 * the line being edited, which is then drawn again. */
static void tick_at_prompt(struct session *s)
{
    bool was_running = profile_run_running(s);
    int saved_point = rl_point;
    char *saved = rl_copy_text(0, rl_end);
    rl_save_prompt();
    rl_replace_line("", 0);
    rl_redisplay();
    fputs("\r\033[K", stdout);
    fflush(stdout);
    profile_run_tick(s);
    fflush(stdout);
    rl_restore_prompt();
    if (saved)
        rl_replace_line(saved, 0);
    rl_point = saved_point;
    free(saved);
    if (was_running && !profile_run_running(s))
        rl_on_new_line();
    rl_forced_update_display();
}

/* Read lines with prompt into handler until it sets rl_finished, a stop
 * signal, or (cancellable) a Ctrl-C; returns -1 for that Ctrl-C. */
static int read_lines(const char *prompt, rl_vcpfunc_t *handler, bool cancellable)
{
    int rc = 0;
    rl_finished = false;
    rl_callback_handler_install(prompt, handler);
    while (!rl_finished && !interrupt_stop_signal) {
        if (interrupt_sigint) {
            clear_line_after_sigint();
            if (cancellable) {
                rc = -1;
                break;
            }
        }
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(STDIN_FILENO, &fds);
        /* a profiling run's next event wakes the prompt */
        double next = rl_session ? profile_run_next(rl_session) : -1;
        struct timeval tv = {(time_t)next, (long)((next - (double)(time_t)next) * 1e6)};
        int ready = select(STDIN_FILENO + 1, &fds, NULL, NULL, next >= 0 ? &tv : NULL);
        if (ready < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (ready == 0) {
            tick_at_prompt(rl_session);
            continue;
        }
        rl_callback_read_char();
    }
    rl_callback_handler_remove();
    return rc;
}

static int answer;            /* the quit question's: 1 yes, 0 no */

static void on_answer(char *line)
{
    const char *p = line ? line : "";      /* Ctrl-D: the default */
    while (*p == ' ')
        p++;
    if (*p == 'n' || *p == 'N')
        answer = 0;
    else if (*p == 'y' || *p == 'Y' || *p == '\0')
        answer = 1;
    else
        answer = -1;                       /* asked again */
    if (!line)
        putchar('\n');
    free(line);
    if (answer >= 0)
        rl_finished = true;
}

/* Leaving with profiling that this session turned on: ask whether to turn
 * it off.  Returns -1 when Ctrl-C took back the quit. */
static int ask_before_leaving(struct session *s)
{
    if (!s->target || target_calls_refused(s->target) || !s->changes.active.changed ||
        !s->changes.active.now)
        return 0;
    char q[200];
    int pid = (int)target_pid(s->target);
    snprintf(q, sizeof q, "profiling is still on in process %d (this session turned it "
             "on). Turn it off before leaving? [Y/n] ", pid);
    do {
        answer = -1;
        if (read_lines(q, on_answer, true) < 0)
            return -1;
    } while (answer < 0 && !interrupt_stop_signal);
    if (answer == 1)    /* back as found: --force for an owner's opt.prof_active */
        command_run_line(s, "prof off --force");
    return 0;
}

int frontend_interactive(struct session *s)
{
    rl_session = s;
    rl_catch_signals = 0;
    rl_readline_name = "memprof";
    completion_install(s);
    char *hist = history_path();
    if (hist)
        read_history(hist);
    stifle_history(1000);

    interrupt_at_prompt = 1;
    analysis_set_cancel(&interrupt_sigint);
    for (;;) {
        read_lines("memprof> ", on_line, false);
        if (interrupt_stop_signal || ask_before_leaving(s) == 0)
            break;
        s->quit = false;        /* Ctrl-C at the question: stay */
    }
    analysis_set_cancel(NULL);
    interrupt_at_prompt = 0;
    if (hist) {
        write_history(hist);
        free(hist);
    }
    return 0;
}
