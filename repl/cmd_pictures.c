/* cmd_pictures.c - the picture commands: `flame` (a flame graph as SVG or
 * folded stacks) and `graph` (the call graph as DOT, or an image made by
 * Graphviz's dot).  Options are the analysis commands' (cmd_analysis.h);
 * the drawing is lib/analysis/flame.c and lib/analysis_graph.c.
 *
 * A picture is made in memory and written out only when it is whole, so a
 * command that fails leaves no half-written file behind. */
#include "repl/cmd_pictures.h"

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "repl/cmd_analysis.h"
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

/* ---- help texts ---- */

#define PICTURE_OPTIONS                                                         \
    "FILE '-' writes the text (SVG, folded or DOT) to standard output.\n"       \
    "The options of 'top' apply (see 'help top'): --objects, --alloc,\n"        \
    "--focus RE, --ignore RE, --hide RE, --thread ID, --functions, --lines,\n"  \
    "--files, --addresses.  DUMP is a profile name from 'dumps'; without one,\n" \
    "the latest profile is used.\n"

const char cmd_flame_usage[] = "flame FILE [DUMP] [--folded] [--base DUMP] [options]";
const char cmd_flame_summary[] = "a flame graph of the memory (SVG, or folded stacks)";
const char cmd_flame_help[] =
    "Writes a flame graph to FILE: one self-contained SVG (its script inline,\n"
    "nothing fetched), outermost frames at the bottom, each frame as wide as\n"
    "the memory allocated through it (objects with --objects); hovering over\n"
    "a frame shows its function, amount and share of the total.  In a\n"
    "browser: click a frame to zoom into it, 'Reset zoom' (or Escape) to go\n"
    "back, 'Search' (or Ctrl-F, or FILE.svg?s=REGEX) to highlight matching\n"
    "frames with the share they cover.  Frames narrower than 0.1 pixel are\n"
    "left out.  Colours are fixed by the function's name.\n"
    "  --folded       write collapsed stacks instead ('outer;...;inner BYTES'\n"
    "                 per line, whole bytes) for flamegraph.pl or speedscope\n"
    "  --base DUMP    a differential graph: widths from this profile, red for\n"
    "                 growth since DUMP, blue for shrinkage (stacks matched by\n"
    "                 symbol); with --folded, only the stacks that grew\n"
    PICTURE_OPTIONS;

const char cmd_graph_usage[] =
    "graph FILE [DUMP] [--nodefraction F] [--edgefraction F] [options]";
const char cmd_graph_summary[] = "the call graph (DOT, or SVG/PNG/PDF via Graphviz)";
const char cmd_graph_help[] =
    "Writes the call graph, jeprof style: a box per function with its flat\n"
    "and cum (the box grows with flat), an arrow per caller -> callee with\n"
    "the memory allocated through that call.  FILE ending in .dot (or .gv)\n"
    "gets Graphviz's DOT text; .svg, .png or .pdf is drawn by Graphviz's\n"
    "'dot' program (Debian package graphviz).\n"
    "  --nodefraction F   leave out functions under F of the total (0.005)\n"
    "  --edgefraction F   leave out arrows under F of the total (0.001)\n"
    PICTURE_OPTIONS;

/* ---- making a picture ---- */

typedef int draw_fn(const struct cmd_analysis_views *w, const struct cmd_analysis_args *a,
                    FILE *out, struct mp_error *err);

static int draw_flame(const struct cmd_analysis_views *w, const struct cmd_analysis_args *a,
                      FILE *out, struct mp_error *err)
{
    struct analysis_flame_options fo = {.folded = a->folded};
    return analysis_flame(w->ctx, w->v, w->base, &a->o, &w->src, &fo, out, err);
}

static int draw_graph(const struct cmd_analysis_views *w, const struct cmd_analysis_args *a,
                      FILE *out, struct mp_error *err)
{
    return analysis_graph(w->ctx, w->v, &a->o, &w->src, out, err);
}

/* FILE [DUMP], and no --json: check and find the profiles. */
static int pick_profiles(struct session *s, const char *cmd, const char *usage,
                         const struct cmd_analysis_args *a, struct session_dump **d,
                         struct session_dump **base)
{
    if (a->json) {
        say_error("%s: --json does not apply: the output is a picture", cmd);
        return -1;
    }
    if (a->npos < 1 || a->npos > 2) {
        say_error("%s: usage: %s", cmd, usage);
        return -1;
    }
    *d = cmd_analysis_find_dump(s, a->npos == 2 ? a->pos[1] : NULL);
    *base = *d && a->base ? cmd_analysis_find_dump(s, a->base) : NULL;
    if (!*d || (a->base && !*base))
        return -1;
    if (*base == *d) {
        say_error("%s: --base %s is the profile drawn, so nothing grew; name an "
                      "older profile (see 'dumps')", cmd, a->base);
        return -1;
    }
    return 0;
}

/* The picture of d (growth from base when set) as text in *text. */
static int make_picture(struct session *s, const char *cmd, const struct cmd_analysis_args *a,
                        struct session_dump *d, struct session_dump *base, draw_fn *draw,
                        char **text, size_t *len)
{
    struct cmd_analysis_views w;
    if (cmd_analysis_open(s, cmd, a, d, base, &w) < 0)
        return -1;
    struct mp_error err = {.msg = ""};
    FILE *mem = open_memstream(text, len);
    int rc = mem ? draw(&w, a, mem, &err) : mp_error_set(&err, "out of memory");
    if (mem && fclose(mem) != 0 && rc == 0)
        rc = mp_error_set(&err, "out of memory");
    if (rc < 0)
        say_error("%s: %s", cmd, err.msg);
    analysis_free(w.ctx);
    return rc;
}

/* ---- writing it out ---- */

static int write_text(const char *path, const char *text, size_t len, struct mp_error *err)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return mp_error_set(err, "cannot write %s: %s", path, strerror(errno));
    bool ok = fwrite(text, 1, len, f) == len;
    int saved = errno;
    if (fclose(f) != 0 && ok) {
        ok = false;
        saved = errno;
    }
    return ok ? 0 : mp_error_set(err, "writing %s failed: %s", path, strerror(saved));
}

static int write_file(const char *cmd, const char *path, const char *text, size_t len)
{
    struct mp_error err;
    if (write_text(path, text, len, &err) == 0)
        return 0;
    say_error("%s: %s", cmd, err.msg);
    return -1;
}

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
        return PICTURES_DOT_MISSING;
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

int pictures_dot(const char *cmd, const char *format, const char *path, const char *text,
                 size_t len, struct mp_error *err)
{
    char dotfile[4096];
    if (temp_file("graph", dotfile, sizeof dotfile, err) < 0)
        return -1;
    int rc = write_text(dotfile, text, len, err);
    if (rc == 0)
        rc = spawn_dot(cmd, format, path, dotfile, err);
    unlink(dotfile);
    return rc;
}

/* dot's SVG, read back whole: a picture larger than this is no use inline. */
#define DOT_SVG_MAX (64u << 20)

int pictures_dot_svg(const char *cmd, const char *text, size_t len, char **svg, size_t *svg_len,
                     struct mp_error *err)
{
    char out[4096];
    *svg = NULL;
    if (temp_file("svg", out, sizeof out, err) < 0)
        return -1;
    int rc = pictures_dot(cmd, "svg", out, text, len, err);
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

/* The Graphviz output format FILE's ending asks for: NULL for DOT text,
 * "" when the ending is not one graph knows. */
static const char *graph_format(const char *path)
{
    static const char *const images[] = {"svg", "png", "pdf"};
    const char *dot = strrchr(path, '.');
    if (strcmp(path, "-") == 0 || (dot && (strcmp(dot, ".dot") == 0 || strcmp(dot, ".gv") == 0)))
        return NULL;
    for (size_t i = 0; dot && i < sizeof images / sizeof *images; i++)
        if (strcmp(dot + 1, images[i]) == 0)
            return images[i];
    return "";
}

/* Text to FILE, or to the session's output for '-'. */
static int deliver_text(struct session *s, const char *cmd, const char *path,
                        const char *text, size_t len)
{
    if (strcmp(path, "-") != 0)
        return write_file(cmd, path, text, len);
    if (fwrite(text, 1, len, s->out) == len)
        return 0;
    say_error("%s: could not write the output", cmd);
    return -1;
}

/* ---- the commands ---- */

/* Make the picture and write it to FILE: as it is, or drawn by dot in the
 * given Graphviz format (NULL: as it is). */
static int run_picture(struct session *s, const char *cmd, const struct cmd_analysis_args *a,
                       struct session_dump *d, struct session_dump *base, draw_fn *draw,
                       const char *format, const char *what)
{
    const char *path = a->pos[0];
    char *text = NULL;
    size_t len = 0;
    int rc = make_picture(s, cmd, a, d, base, draw, &text, &len);
    if (rc == 0 && format) {
        struct mp_error err;
        rc = pictures_dot(cmd, format, path, text, len, &err);
        if (rc < 0)
            say_error("%s: %s", cmd, err.msg);
    } else if (rc == 0) {
        rc = deliver_text(s, cmd, path, text, len);
    }
    if (rc == 0 && strcmp(path, "-") != 0)
        fprintf(s->out, "%s: %s written to %s\n", d->name, what, path);
    free(text);
    return rc;
}

int cmd_flame(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    struct session_dump *d, *base;
    if (cmd_analysis_parse(argc, argv, CMD_ALLOW_BASE | CMD_ALLOW_FOLDED, &a) < 0 ||
        pick_profiles(s, argv[0], cmd_flame_usage, &a, &d, &base) < 0)
        return -1;
    return run_picture(s, argv[0], &a, d, base, draw_flame, NULL,
                       a.folded ? "folded stacks" : "flame graph");
}

int cmd_graph(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    struct session_dump *d, *base;
    if (cmd_analysis_parse(argc, argv, CMD_ALLOW_NODEFRACTION | CMD_ALLOW_EDGEFRACTION, &a) < 0 ||
        pick_profiles(s, argv[0], cmd_graph_usage, &a, &d, &base) < 0)
        return -1;
    const char *format = graph_format(a.pos[0]);
    if (format && !*format) {
        say_error("graph: cannot tell what to write from the name '%s': end it in "
                      ".dot (Graphviz text), .svg, .png or .pdf", a.pos[0]);
        return -1;
    }
    return run_picture(s, argv[0], &a, d, NULL, draw_graph, format, "call graph");
}
