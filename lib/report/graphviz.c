/* graphviz.c - drawing DOT text with Graphviz's dot (graphviz.h): a
 * program of its own, run without a shell from temporary files in $TMPDIR,
 * its wait bounded. */
#include "lib/report/graphviz.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/file_write.h"

extern char **environ;

/* dot is a program of its own that a graph of many thousands of nodes can
 * keep busy for long: the wait is bounded, and dot killed after it. */
#define DOT_SECONDS 120

/* Wait for pid at most DOT_SECONDS; kill it after that.  0 with *status,
 * -1 when it was killed for taking too long (or waitpid failed). */
static int wait_bounded(pid_t pid, int *status)
{
    struct timespec start, now, pause = {0, 10 * 1000 * 1000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pid_t got = waitpid(pid, status, WNOHANG);
        if (got == pid)
            return 0;
        if (got < 0 && errno != EINTR)
            return -1;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= DOT_SECONDS) {
            kill(pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR)
                ;
            errno = ETIMEDOUT;
            return -1;
        }
        nanosleep(&pause, NULL);
    }
}

/* dot -T<format> -o path, reading the DOT text from a temporary file; no
 * shell, so a file name is never interpreted. */
static int spawn_dot(const char *cmd, const char *format, const char *path, const char *dotfile,
                     struct mp_error *err)
{
    char tflag[16];
    snprintf(tflag, sizeof tflag, "-T%s", format);
    char *args[] = {"dot", tflag, "-o", (char *)path, (char *)dotfile, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "dot", NULL, NULL, args, environ);
    if (rc == ENOENT) {
        mp_error_set(err, "cannot draw the call graph: Graphviz's 'dot' program is not "
                     "installed (not found in PATH).  Install it (Debian/Ubuntu: apt-get "
                     "install graphviz), or write the graph as DOT text: graph FILE.dot");
        return GRAPHVIZ_MISSING;
    }
    int status;
    if (rc != 0)
        return mp_error_set(err, "could not run dot: %s", strerror(rc));
    if (wait_bounded(pid, &status) < 0)
        return mp_error_set(err, errno == ETIMEDOUT
                            ? "dot took more than %d s and was stopped: leave out more of "
                              "the graph (--nodefraction 0.02, --edgefraction 0.01), or "
                              "write it as DOT text: graph FILE.dot"
                            : "could not wait for dot (%d s at most)", DOT_SECONDS);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    if (WIFEXITED(status))
        return mp_error_set(err, "dot %s failed with exit status %d (its message is "
                            "above); write FILE.dot to see the DOT text (%s FILE.dot)",
                            tflag, WEXITSTATUS(status), cmd);
    return mp_error_set(err, "dot %s was killed by signal %d", tflag, WTERMSIG(status));
}

/* A new empty file in $TMPDIR (or /tmp) named after what: its name in
 * path, 0; or -1 with err saying what to do. */
static int temp_file(const char *what, char *path, size_t cap, struct mp_error *err)
{
    const char *tmpdir = getenv("TMPDIR");
    if (!tmpdir || !*tmpdir)
        tmpdir = "/tmp";
    snprintf(path, cap, "%s/memprof-%s.XXXXXX", tmpdir, what);
    int fd = mkstemp(path);
    if (fd < 0)
        return mp_error_set(err, "cannot make a temporary file for dot in %s: %s; set "
                            "TMPDIR to a writable directory", tmpdir, strerror(errno));
    close(fd);
    return 0;
}

int graphviz_draw(const char *cmd, const char *format, const char *path, const char *text,
                 size_t len, struct mp_error *err)
{
    char dotfile[4096];
    if (temp_file("graph", dotfile, sizeof dotfile, err) < 0)
        return -1;
    int rc = file_write_new(dotfile, O_TRUNC, 0600, text, len, err);
    if (rc == 0)
        rc = spawn_dot(cmd, format, path, dotfile, err);
    unlink(dotfile);
    return rc;
}

/* dot's SVG, read back whole: a picture larger than this is no use inline. */
#define DOT_SVG_MAX (64u << 20)

int graphviz_svg(const char *cmd, const char *text, size_t len, char **svg, size_t *svg_len,
                     struct mp_error *err)
{
    char out[4096];
    *svg = NULL;
    if (temp_file("svg", out, sizeof out, err) < 0)
        return -1;
    int rc = graphviz_draw(cmd, "svg", out, text, len, err);
    if (rc == 0) {
        FILE *f = fopen(out, "r");
        FILE *mem = open_memstream(svg, svg_len);
        char buf[65536];
        size_t n, total = 0;
        while (f && mem && (n = fread(buf, 1, sizeof buf, f)) > 0 && total <= DOT_SVG_MAX) {
            fwrite(buf, 1, n, mem);
            total += n;
        }
        if (f)
            fclose(f);
        if (!f || !mem || fclose(mem) != 0 || total > DOT_SVG_MAX) {
            rc = mp_error_set(err, total > DOT_SVG_MAX
                              ? "dot drew a picture of more than %u MiB: leave out more of "
                                "the graph (--nodefraction 0.02)"
                              : "could not read dot's picture back (out of memory?)",
                              DOT_SVG_MAX >> 20);
            free(*svg);
            *svg = NULL;
        }
    }
    unlink(out);
    return rc;
}
