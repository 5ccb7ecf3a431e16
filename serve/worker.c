/* worker.c - one forked worker per piece of work in a process
 * (worker.h).  The child's answer comes back through two memfds made
 * before the fork (its body and its stderr) and its exit status (an HTTP
 * status, coded below); the parent waits on a pidfd with a time limit, so
 * no wait is unbounded and no signal handler is needed. */
#include "serve/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "serve/targets.h"
#include "session/attach_process.h"
#include "session/say.h"

/* A worker's exit status is an index into this table: exit statuses stop
 * at 255, HTTP statuses do not. */
static const int exit_status_http[] = {200, 500, 400, 403, 404, 409, 422, 503, 504};
#define NSTATUS (sizeof exit_status_http / sizeof *exit_status_http)

/* MEMPROF_TEST_WORKER_STALL=SECONDS: a worker waits that long after its
 * work, still attached (a sampler run's sampler still in), so that the
 * tests can reach the time limit and its SIGKILL. */
static void stall_for_tests(void)
{
    const char *v = getenv("MEMPROF_TEST_WORKER_STALL");
    struct timespec left = {.tv_sec = v ? atoi(v) : 0};
    while (left.tv_sec > 0 && nanosleep(&left, &left) < 0 && errno == EINTR)
        ;
}

/* A reply's message (malloc'd, or NULL out of memory). */
static char *message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *message(const char *fmt, ...)
{
    va_list ap;
    char *m;
    va_start(ap, fmt);
    int n = vasprintf(&m, fmt, ap);
    va_end(ap);
    return n < 0 ? NULL : m;
}

static int exit_code_of(int http)
{
    for (size_t i = 0; i < NSTATUS; i++)
        if (exit_status_http[i] == http)
            return (int)i;
    return 1;
}

static int http_of_error(const struct mp_error *err)
{
    switch (err->kind) {
    case MP_ERROR_NO_PROCESS: return 404;
    case MP_ERROR_BUSY: return 503;
    case MP_ERROR_DENIED: return 403;
    default: return 500;
    }
}

void worker_stop_signals(sigset_t *set)
{
    sigemptyset(set);
    sigaddset(set, SIGTERM);
    sigaddset(set, SIGINT);
    sigaddset(set, SIGHUP);
}

/* Attach to pid, then check it against the rules: 200, or the error's
 * status after saying it. */
static int attach(struct session *s, const struct serve_config *cfg, pid_t pid)
{
    struct mp_error err;
    struct served_process sp;
    if (session_attach_process(s, pid, &err) == 0 &&
        targets_lookup(cfg, pid, &sp, &err) == 0)
        return 200;
    say_error("%s", err.msg);
    return http_of_error(&err);
}

/* A worker that goes on after its answer (worker_start) has two more
 * descriptors: where it says its answer is ready, and the agent's end of
 * the control pipe. */
#define ANSWER_FD 4
#define CONTROL_FD 5

/* The child: fds 3 (body) and 2 (what it says) and nothing else of the
 * agent's (its listening socket, its connections).  The stop signals stay
 * blocked: a SIGTERM or Ctrl-C meant for the agent (sent to its process
 * group, or its cgroup by systemd) must not cut a worker in the middle of
 * a run, whose sampler would then stay in; the agent waits for its workers,
 * and kills one only at its time limit. */
static void __attribute__((noreturn)) child(const struct serve_config *cfg, pid_t pid,
                                            worker_job job, void *arg, int body_fd,
                                            int said_fd, const int run_fds[2])
{
    if (dup2(said_fd, STDERR_FILENO) < 0 || dup2(body_fd, 3) < 0)
        _exit(exit_code_of(500));
    if (run_fds && (dup2(run_fds[0], ANSWER_FD) < 0 || dup2(run_fds[1], CONTROL_FD) < 0))
        _exit(exit_code_of(500));
    close_range(run_fds ? CONTROL_FD + 1 : 4, ~0U, 0);
    sigset_t stop;
    worker_stop_signals(&stop);
    sigprocmask(SIG_SETMASK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    FILE *out = fdopen(3, "w");
    if (!out)
        _exit(exit_code_of(500));
    struct session s = {.out = out, .quiet = true};
    int status = pid > 0 ? attach(&s, cfg, pid) : 200;
    if (status == 200)
        status = job(&s, arg);
    stall_for_tests();
    session_detach_process(&s, "the request ended", status >= 400);
    session_free(&s);
    if (fflush(out) != 0)
        status = 500;
    _exit(exit_code_of(status));
}

/* The whole of a memfd's contents, NUL-terminated. */
static char *read_all(int fd, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        return NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf)
        return NULL;
    size_t got = 0;
    while (got < (size_t)st.st_size) {
        ssize_t n = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    buf[got] = '\0';
    if (len)
        *len = got;
    return buf;
}

/* Wait for the child within timeout_s; kill it past that.  Its exit
 * status, or -1 when it was killed at the limit. */
static int wait_child(pid_t child_pid, unsigned timeout_s, int *died_by)
{
    int pidfd = pidfd_open(child_pid, 0), st;
    bool timed_out = false;
    if (pidfd >= 0) {
        struct pollfd p = {.fd = pidfd, .events = POLLIN};
        int n;
        do
            n = poll(&p, 1, (int)timeout_s * 1000);
        while (n < 0 && errno == EINTR);
        timed_out = n == 0;
        close(pidfd);
    } else {
        /* No descriptor to spare: poll the child's state instead, bounded
         * the same. */
        struct timespec tick = {.tv_nsec = 20 * 1000 * 1000};
        unsigned ticks = timeout_s * 50;
        pid_t got;
        while ((got = waitpid(child_pid, &st, WNOHANG | __WALL)) == 0 && ticks--)
            nanosleep(&tick, NULL);
        if (got == child_pid)
            goto reaped;
        timed_out = got == 0;
    }
    if (timed_out)
        kill(child_pid, SIGKILL);
    while (waitpid(child_pid, &st, __WALL) < 0 && errno == EINTR)
        ;
reaped:
    *died_by = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    if (timed_out)
        return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -2;
}

/* The two memfds a worker answers through; -1 after saying why in r. */
static int answer_files(int fds[2], struct worker_reply *r)
{
    fds[0] = memfd_create("memprof-serve-body", MFD_CLOEXEC);
    fds[1] = memfd_create("memprof-serve-said", MFD_CLOEXEC);
    if (fds[0] >= 0 && fds[1] >= 0)
        return 0;
    int why = errno;
    for (int i = 0; i < 2; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    r->status = 500;
    r->said = message("memprof: cannot start a worker: %s\n", strerror(why));
    return -1;
}

/* The worker's answer read back, its status from code: an exit status or
 * the byte it sent (-1: killed at the time limit). */
static void read_answer(struct worker_reply *r, const int fds[2], int code, int died_by,
                        pid_t pid, unsigned timeout_s)
{
    r->body = read_all(fds[0], &r->len);
    r->said = read_all(fds[1], NULL);
    if (code == -1) {
        r->status = 504;
        free(r->said);
        r->said = message("memprof: the work in process %d took longer than %u s and was "
                          "ended (a stop under way restores its thread itself)\n",
                          (int)pid, timeout_s);
    } else if (code < 0 || (size_t)code >= NSTATUS) {
        r->status = 500;
        free(r->said);
        r->said = message("memprof: the worker for process %d died (%s); the agent goes "
                          "on\n", (int)pid, died_by ? sigdescr_np(died_by) : "bad exit");
    } else {
        r->status = exit_status_http[code];
    }
    if (!r->body)
        r->body = strdup("");
    if (!r->said)
        r->said = strdup("");
}

static void fork_failed(struct worker_reply *r)
{
    r->status = 503;
    r->said = message("memprof: cannot start a worker (fork: %s); try again\n",
                      strerror(errno));
    r->body = strdup("");
}

int worker_spawn(const struct serve_config *cfg, pid_t pid, worker_job job, void *arg,
                 struct worker_spawned *w, struct worker_reply *r)
{
    *r = (struct worker_reply){0};
    *w = (struct worker_spawned){.pid = pid};
    if (answer_files(w->fds, r) < 0)
        return -1;
    pid_t c = fork();
    if (c == 0)
        child(cfg, pid, job, arg, w->fds[0], w->fds[1], NULL);
    if (c < 0) {
        fork_failed(r);
        close(w->fds[0]);
        close(w->fds[1]);
        return -1;
    }
    w->child = c;
    return 0;
}

void worker_collect(struct worker_spawned *w, unsigned timeout_s, struct worker_reply *r)
{
    int died_by = 0, code = wait_child(w->child, timeout_s, &died_by);
    read_answer(r, w->fds, code, died_by, w->pid, timeout_s);
    close(w->fds[0]);
    close(w->fds[1]);
    *w = (struct worker_spawned){0};
}

int worker_run(const struct serve_config *cfg, pid_t pid, worker_job job, void *arg,
               unsigned timeout_s, struct worker_reply *r)
{
    struct worker_spawned w;
    if (worker_spawn(cfg, pid, job, arg, &w, r) < 0)
        return -1;
    worker_collect(&w, timeout_s, r);
    return 0;
}

/* ---- workers that go on after their answer ---- */

int worker_answer(struct session *s, int status)
{
    fflush(s->out);
    fflush(stderr);
    unsigned char code = (unsigned char)exit_code_of(status);
    while (write(ANSWER_FD, &code, 1) < 0 && errno == EINTR)
        ;
    close(ANSWER_FD);
    /* Nobody reads the answer files any more: what the job writes after
     * goes nowhere rather than into memory. */
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 3);
        dup2(null, STDERR_FILENO);
        close(null);
    }
    return CONTROL_FD;
}

/* Wait for the answer byte on fd, or the child's end, within timeout_s:
 * the code (a status index), or -1 at the time limit (child killed and
 * reaped), or -2 when the child ended without answering (then *exited
 * holds its exit code, reaped). */
static int wait_answer(int fd, pid_t c, unsigned timeout_s, int *exited, int *died_by)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;
    do
        n = poll(&p, 1, (int)timeout_s * 1000);
    while (n < 0 && errno == EINTR);
    unsigned char code;
    if (n > 0 && read(fd, &code, 1) == 1)
        return code;
    /* No answer: it ended (the pipe's end went with it), or it is late. */
    *exited = wait_child(c, n > 0 ? timeout_s : 0, died_by);
    return n > 0 ? -2 : -1;
}

int worker_start(const struct serve_config *cfg, pid_t pid, worker_job job, void *arg,
                 unsigned timeout_s, struct worker_reply *r, struct worker_handle *h)
{
    *r = (struct worker_reply){0};
    *h = (struct worker_handle){.control_fd = -1};
    int fds[2], answer[2], control[2];
    if (answer_files(fds, r) < 0)
        return -1;
    if (pipe2(answer, O_CLOEXEC) < 0 || pipe2(control, O_CLOEXEC) < 0) {
        r->status = 500;
        r->said = message("memprof: cannot start a worker: %s\n", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    int child_ends[2] = {answer[1], control[0]};
    pid_t c = fork();
    if (c == 0)
        child(cfg, pid, job, arg, fds[0], fds[1], child_ends);
    close(answer[1]);
    close(control[0]);
    int rc = -1;
    if (c < 0) {
        fork_failed(r);
        close(control[1]);
    } else {
        int exited = 0, died_by = 0;
        int code = wait_answer(answer[0], c, timeout_s, &exited, &died_by);
        read_answer(r, fds, code == -2 ? exited : code, died_by, pid, timeout_s);
        if (code >= 0 && r->status == 200) {
            *h = (struct worker_handle){.pid = c, .control_fd = control[1]};
            rc = 0;
        } else {
            close(control[1]);   /* it ends on its own: end of file */
            if (code >= 0) {
                int st;
                wait_child(c, timeout_s, &st);
            }
        }
    }
    close(answer[0]);
    close(fds[0]);
    close(fds[1]);
    return rc;
}

bool worker_ended(struct worker_handle *h, int *status)
{
    int st;
    if (h->pid <= 0)
        return true;
    if (waitpid(h->pid, &st, WNOHANG | __WALL) != h->pid)
        return false;
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    *status = code >= 0 && (size_t)code < NSTATUS ? exit_status_http[code] : 500;
    close(h->control_fd);
    *h = (struct worker_handle){.control_fd = -1};
    return true;
}

int worker_finish(struct worker_handle *h, unsigned timeout_s)
{
    if (h->pid <= 0)
        return 500;
    char stop = 's';
    while (write(h->control_fd, &stop, 1) < 0 && errno == EINTR)
        ;
    int died_by, code = wait_child(h->pid, timeout_s, &died_by);
    close(h->control_fd);
    *h = (struct worker_handle){.control_fd = -1};
    if (code == -1)
        return 504;
    return code >= 0 && (size_t)code < NSTATUS ? exit_status_http[code] : 500;
}

void worker_reply_free(struct worker_reply *r)
{
    free(r->body);
    free(r->said);
    *r = (struct worker_reply){0};
}
