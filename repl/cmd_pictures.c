/* cmd_pictures.c - the picture commands: `flame` (a flame graph as SVG or
 * folded stacks) and `graph` (the call graph as DOT, or an image made by
 * Graphviz's dot).  Options are the analysis commands' (cmd_analysis.h);
 * the drawing is lib/analysis/flame.c and lib/analysis_graph.c.
 *
 * A picture is made in memory and written out only when it is whole, so a
 * command that fails leaves no half-written file behind. */

#include <errno.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/analysis/analysis.h"
#include "lib/report/graphviz.h"
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
        rc = graphviz_draw(cmd, format, path, text, len, &err);
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
