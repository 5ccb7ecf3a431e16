/* cmd_analysis.c - the analysis commands (top, traces, peek, tree, list,
 * diff) and the session's profile list (dumps, load): argument parsing,
 * choosing the profiles, and handing them to lib/analysis.
 *
 * Syntax (repl/options.c): options anywhere, "--" ends them; positionals
 * are a row count N (all digits)
 * and/or a profile name, e.g. `top 20 dump2 --cum`; peek and list take
 * their pattern first.  No profile name means the latest.
 *
 * A context (node table and symbolized views) lives for one command: the
 * symbolizer keeps its own per-address cache, so building a view again is
 * cheap, and nothing here can outlive a profile or a symbolizer.
 *
 * The option parser, profile lookup and context set-up are shared with
 * the picture commands (cmd_pictures.c) through cmd_analysis.h. */
#include "repl/cmd_analysis.h"

#include <json-c/json.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/analysis/analysis.h"
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"
#include "session/profile_run.h"
#include "session/json_answer.h"
#include "repl/options.h"
#include "lib/base/text_escape.h"

/* ---- help texts ---- */

#define COMMON_OPTIONS                                                         \
    "Options:\n"                                                               \
    "  --space | --objects      rank by bytes (default) or by object counts\n" \
    "  --inuse | --alloc        in use now (default), or allocated ever (needs\n" \
    "                           a process started with prof_accum:true)\n"     \
    "  --focus RE, --ignore RE  keep / drop stacks with a frame matching RE\n" \
    "  --hide RE                drop matching frames from every stack\n"       \
    "  --thread ID              only that thread's samples (jemalloc thread uid)\n" \
    "  --functions | --lines | --files | --addresses   what a row is\n"       \
    "  --bytes                  exact byte counts instead of KiB/MiB/GiB\n"    \
    "  --json                   machine-readable output (docs/analysis.md)\n"  \
    "  --show-alloc             keep the allocator's own frames (malloc, jemalloc,\n" \
    "                           operator new, Rust's allocation shims)\n"     \
    "RE is a POSIX extended regular expression.  DUMP is a profile name from\n" \
    "'dumps'; without one, the latest profile is used.\n"

const char cmd_top_usage[] = "top [N] [DUMP] [--cum] [--base DUMP] [--watch S [--count N]] [options]";
const char cmd_top_summary[] = "the heaviest functions (flat and cumulative)";
const char cmd_top_help[] =
    "Prints the N (default 10) heaviest rows, jeprof --text style: flat (held\n"
    "by the function itself), flat%, sum% (running total of flat%), cum (held\n"
    "by it and everything it calls; recursion counted once), cum%, name.\n"
    "The allocator's own frames (jemalloc, malloc, operator new, Rust's\n"
    "__rust_alloc and alloc::raw_vec...) are stripped so the first caller\n"
    "outside the allocator is charged (--show-alloc keeps them).\n"
    "  --cum          sort by cum instead of flat\n"
    "  --base DUMP    show growth since DUMP (same as 'diff DUMP THIS')\n"
    "  --watch S      a live view (needs a process): a fresh dump every S seconds\n"
    "                 (0.1 to 3600), its top with a column of each row's growth\n"
    "                 since the view opened, redrawn in place on a terminal, else\n"
    "                 one report per dump after a timestamped line; Ctrl-C\n"
    "                 leaves the view.  The view's first and latest dumps stay\n"
    "                 in the session (series watchN); those between are dropped.\n"
    "  --count N      with --watch: stop after N refreshes\n"
    COMMON_OPTIONS;

const char cmd_traces_usage[] = "traces [N] [DUMP] [options]";
const char cmd_traces_summary[] = "the heaviest whole stacks";
const char cmd_traces_help[] =
    "Prints the N (default 10) heaviest call stacks, innermost frame first,\n"
    "with their bytes, objects and share of the total.  Stacks that are the\n"
    "same after symbolization are merged.\n"
    COMMON_OPTIONS;

const char cmd_peek_usage[] = "peek REGEX [DUMP] [options]";
const char cmd_peek_summary[] = "callers and callees of functions";
const char cmd_peek_help[] =
    "For each function matching REGEX: its flat and cum, who calls it and\n"
    "what it calls, each with bytes and its share of the function's cum.\n"
    COMMON_OPTIONS;

const char cmd_tree_usage[] = "tree [DUMP] [--nodefraction F] [options]";
const char cmd_tree_summary[] = "the call tree";
const char cmd_tree_help[] =
    "The call tree from the outermost frames inwards, children heaviest first,\n"
    "with cum, cum% and flat per node.  Nodes under F of the total (default\n"
    "0.005, i.e. 0.5%) are left out.\n"
    COMMON_OPTIONS;

const char cmd_list_usage[] = "list REGEX [DUMP] [options]";
const char cmd_list_summary[] = "source lines of functions with their bytes";
const char cmd_list_help[] =
    "For each function matching REGEX: its source lines (from the debug\n"
    "information) with the flat and cum bytes of each line.  When the source\n"
    "file cannot be read, only line numbers and values are shown.\n"
    COMMON_OPTIONS;

const char cmd_diff_usage[] = "diff [A] [B] [N] [options]";
const char cmd_diff_summary[] = "what grew between two profiles";
const char cmd_diff_help[] =
    "Per stack B minus A (each unsampled first), summed like 'top' and sorted\n"
    "by growth; negative means it shrank.  Percentages are of B's total.\n"
    "Stacks match by symbol, so profiles of two runs (other addresses) compare.\n"
    "With two names: A then B.  With one: that profile and the latest.  With\n"
    "none: the last two.  N rows (default 10); --cum sorts by cum growth.\n"
    COMMON_OPTIONS;

const char cmd_dumps_usage[] = "dumps [--json]";
const char cmd_dumps_summary[] = "list the session's heap profiles";
const char cmd_dumps_help[] =
    "Lists each profile by name with its stacks, bytes and objects in use, and\n"
    "where it came from.  Analysis commands take these names.\n";

const char cmd_load_usage[] = "load FILE [NAME] | load DIR";
const char cmd_load_summary[] = "read a heap profile file (or a saved run) into the session";
const char cmd_load_help[] =
    "Reads a jemalloc (heap_v2) or gperftools heap profile.  NAME defaults to\n"
    "the file's base name; a new profile with a used name shadows the old one.\n"
    "A directory 'profile save' wrote is read back whole: its dumps, their\n"
    "times and its series name (for trend, report, top SERIES...).\n";

/* ---- argument parsing (shared with cmd_pictures.c) ---- */

enum {
    OPT_SPACE, OPT_OBJECTS, OPT_INUSE, OPT_ALLOC, OPT_FOCUS, OPT_IGNORE,
    OPT_HIDE, OPT_THREAD, OPT_FUNCTIONS, OPT_LINES, OPT_FILES, OPT_ADDRESSES,
    OPT_CUM, OPT_BYTES, OPT_JSON, OPT_BASE, OPT_NODEFRACTION, OPT_EDGEFRACTION,
    OPT_FOLDED, OPT_SHOW_ALLOC, OPT_WATCH, OPT_REFRESHES, OPT_FAIL_OVER, OPT_COUNT,
};

/* Indexed by OPT_*, for the shared parser (repl/options.c). */
static const struct cmd_option analysis_options[OPT_COUNT + 1] = {
    [OPT_SPACE] = {"space", false, false, NULL},
    [OPT_OBJECTS] = {"objects", false, false, NULL},
    [OPT_INUSE] = {"inuse", false, false, NULL},
    [OPT_ALLOC] = {"alloc", false, false, NULL},
    [OPT_FOCUS] = {"focus", true, false, NULL},
    [OPT_IGNORE] = {"ignore", true, false, NULL},
    [OPT_HIDE] = {"hide", true, false, NULL},
    [OPT_THREAD] = {"thread", true, false, NULL},
    [OPT_FUNCTIONS] = {"functions", false, false, NULL},
    [OPT_LINES] = {"lines", false, false, NULL},
    [OPT_FILES] = {"files", false, false, NULL},
    [OPT_ADDRESSES] = {"addresses", false, false, NULL},
    [OPT_CUM] = {"cum", false, false, NULL},
    [OPT_BYTES] = {"bytes", false, false, NULL},
    [OPT_JSON] = {"json", false, false, NULL},
    [OPT_BASE] = {"base", true, false, NULL},
    [OPT_NODEFRACTION] = {"nodefraction", true, false, NULL},
    [OPT_EDGEFRACTION] = {"edgefraction", true, false, NULL},
    [OPT_FOLDED] = {"folded", false, false, NULL},
    [OPT_SHOW_ALLOC] = {"show-alloc", false, false, NULL},
    [OPT_WATCH] = {"watch", true, false, NULL},
    [OPT_REFRESHES] = {"count", true, false, NULL},
    [OPT_FAIL_OVER] = {"fail-over", true, false, NULL},
    [OPT_COUNT] = {NULL, false, false, NULL},
};

/* The options only some commands take, and the CMD_ALLOW_* bit each needs. */
static const struct {
    int opt;
    unsigned allow;
} restricted[] = {
    {OPT_BASE, CMD_ALLOW_BASE},
    {OPT_NODEFRACTION, CMD_ALLOW_NODEFRACTION},
    {OPT_EDGEFRACTION, CMD_ALLOW_EDGEFRACTION},
    {OPT_FOLDED, CMD_ALLOW_FOLDED},
    {OPT_WATCH, CMD_ALLOW_WATCH},
    {OPT_REFRESHES, CMD_ALLOW_WATCH},
    {OPT_FAIL_OVER, CMD_ALLOW_FAIL_OVER},
};

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return false;
    *out = strtoull(s, &end, 10);
    return *end == '\0';
}

static bool is_count(const char *s)
{
    return s[0] && strspn(s, "0123456789") == strlen(s);
}

static const char *option_name(int c)
{
    return analysis_options[c].name;
}

/* Whether option c may be given to this command; says so when not. */
static bool allowed_here(int c, const char *cmd, unsigned allowed)
{
    for (size_t i = 0; i < sizeof restricted / sizeof *restricted; i++) {
        if (restricted[i].opt == c && !(allowed & restricted[i].allow)) {
            say_error("%s: --%s does not apply here (see 'help %s')", cmd,
                          option_name(c), cmd);
            return false;
        }
    }
    return true;
}

static int parse_fraction(const char *cmd, int c, const char *optarg, double *out)
{
    char *end;
    *out = strtod(optarg, &end);
    if (*end || end == optarg || !(*out >= 0 && *out <= 1)) {
        say_error("%s: --%s takes a fraction from 0 to 1 "
                      "(e.g. 0.01 for 1%%), not '%s'", cmd, option_name(c), optarg);
        return -1;
    }
    return 0;
}

static int set_option(struct cmd_analysis_args *a, int c, const char *optarg, const char *cmd)
{
    switch (c) {
    case OPT_SPACE: a->o.objects = false; break;
    case OPT_OBJECTS: a->o.objects = true; break;
    case OPT_INUSE: a->o.alloc = false; break;
    case OPT_ALLOC: a->o.alloc = true; break;
    case OPT_FOCUS: a->o.focus = optarg; break;
    case OPT_IGNORE: a->o.ignore = optarg; break;
    case OPT_HIDE: a->o.hide = optarg; break;
    case OPT_FUNCTIONS: a->o.granularity = ANALYSIS_FUNCTIONS; break;
    case OPT_LINES: a->o.granularity = ANALYSIS_LINES; break;
    case OPT_FILES: a->o.granularity = ANALYSIS_FILES; break;
    case OPT_ADDRESSES: a->o.granularity = ANALYSIS_ADDRESSES; break;
    case OPT_CUM: a->o.cum = true; break;
    case OPT_BYTES: a->o.exact = true; break;
    case OPT_JSON: a->json = true; break;
    case OPT_BASE: a->base = optarg; break;
    case OPT_FOLDED: a->folded = true; break;
    case OPT_SHOW_ALLOC: a->show_alloc = true; break;
    case OPT_WATCH: a->watch = optarg; break;
    case OPT_REFRESHES: a->count = optarg; break;
    case OPT_FAIL_OVER: a->fail_over = optarg; break;
    case OPT_NODEFRACTION: return parse_fraction(cmd, c, optarg, &a->o.nodefraction);
    case OPT_EDGEFRACTION: return parse_fraction(cmd, c, optarg, &a->o.edgefraction);
    case OPT_THREAD:
        if (!parse_u64(optarg, &a->o.thread)) {
            say_error("%s: --thread takes a thread id (a number, see the "
                          "tN lines of the profile), not '%s'", cmd, optarg);
            return -1;
        }
        a->o.has_thread = true;
        break;
    }
    return 0;
}

struct parse_state {
    struct cmd_analysis_args *a;
    const char *cmd;
    unsigned allowed;
};

static int on_analysis_option(void *ctx, int c, const char *value)
{
    struct parse_state *p = ctx;
    return allowed_here(c, p->cmd, p->allowed) ? set_option(p->a, c, value, p->cmd) : -1;
}

int cmd_analysis_parse(int argc, char **argv, unsigned allowed, struct cmd_analysis_args *a)
{
    memset(a, 0, sizeof *a);
    a->o.nodefraction = 0.005;
    a->o.edgefraction = 0.001;
    struct parse_state p = {a, argv[0], allowed};
    int npos = options_each(argc, argv, analysis_options, on_analysis_option, &p,
                            a->pos, CMD_MAX_POSITIONAL);
    if (npos < 0)
        return -1;
    a->npos = npos;
    return 0;
}

int cmd_analysis_count_and_name(struct cmd_analysis_args *a, const char *cmd,
                                const char *usage, const char **dump, int default_limit)
{
    a->o.limit = default_limit;
    *dump = NULL;
    bool have_count = false;
    for (int i = 0; i < a->npos; i++) {
        if (is_count(a->pos[i]) && !have_count) {
            a->o.limit = atoi(a->pos[i]);
            have_count = true;
            if (a->o.limit <= 0) {
                say_error("%s: the row count must be at least 1", cmd);
                return -1;
            }
        } else if (!*dump) {
            *dump = a->pos[i];
        } else {
            say_error("%s: unexpected argument '%s' (usage: %s)", cmd, a->pos[i], usage);
            return -1;
        }
    }
    return 0;
}

/* ---- profiles and contexts ---- */

struct session_dump *cmd_analysis_find_dump(struct session *s, const char *name)
{
    struct session_dump *d = session_find_dump(s, name);
    if (d)
        return d;
    if (!name)
        say_error("no heap profile in this session yet: take one with 'dump' "
                      "(when attached) or read one with 'load FILE'");
    else
        say_error("no profile named '%s' in this session; 'dumps' lists them", name);
    return NULL;
}

static struct analysis *new_context(struct session *s, enum analysis_granularity g)
{
    struct symbolizer *sym = session_symbolizer(s);
    struct analysis *a = sym ? analysis_new(g, analysis_symbolizer_resolve, sym) : NULL;
    if (!a)
        say_error("could not set up symbolization (out of memory?)");
    return a;
}

int cmd_analysis_open(struct session *s, const char *cmd, const struct cmd_analysis_args *a,
                      struct session_dump *d, struct session_dump *base,
                      struct cmd_analysis_views *w)
{
    memset(w, 0, sizeof *w);
    const struct profile *p = session_dump_profile(s, d);
    const struct profile *bp = p && base ? session_dump_profile(s, base) : NULL;
    if (!p || (base && !bp))                   /* said which file and why */
        return -1;
    session_check_inputs(s, d);
    if (base)
        session_check_inputs(s, base);
    w->ctx = new_context(s, a->o.granularity);
    if (!w->ctx)
        return -1;
    w->ctx->keep_allocator = a->show_alloc;
    struct mp_error err = {.msg = ""};
    w->src = (struct analysis_source){d->name, base ? base->name : NULL};
    w->base = base ? analysis_view(w->ctx, bp, &err) : NULL;
    w->v = !base || w->base ? analysis_view(w->ctx, p, &err) : NULL;
    if (w->v)
        return 0;
    say_error("%s: %s", cmd, err.msg);
    analysis_free(w->ctx);
    w->ctx = NULL;
    return -1;
}

typedef int report_fn(struct analysis *, const struct analysis_view *,
                      const struct analysis_options *, const struct analysis_source *,
                      bool, FILE *, struct mp_error *);

/* Build the context and view(s), run the report, say what went wrong. */
static int run(struct session *s, const char *cmd, report_fn *fn, struct cmd_analysis_args *a,
               struct session_dump *d, struct session_dump *base)
{
    struct cmd_analysis_views w;
    if (cmd_analysis_open(s, cmd, a, d, base, &w) < 0)
        return -1;
    struct mp_error err = {.msg = ""};
    int rc = fn ? fn(w.ctx, w.v, &a->o, &w.src, a->json, s->out, &err)
                : analysis_top(w.ctx, w.v, w.base, &a->o, &w.src, a->json, s->out, &err);
    if (rc < 0)
        say_error("%s: %s", cmd, err.msg);
    analysis_free(w.ctx);
    return rc;
}

/* ---- the commands ---- */

int cmd_top(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    const char *dump;
    if (cmd_analysis_parse(argc, argv, CMD_ALLOW_BASE | CMD_ALLOW_WATCH, &a) < 0 ||
        cmd_analysis_count_and_name(&a, argv[0], cmd_top_usage, &dump, 10) < 0)
        return -1;
    if (a.watch || a.count)
        return cmd_watch_top(s, &a, dump);
    struct session_dump *d = cmd_analysis_find_dump(s, dump);
    struct session_dump *base = d && a.base ? cmd_analysis_find_dump(s, a.base) : NULL;
    if (!d || (a.base && !base))
        return -1;
    return run(s, argv[0], NULL, &a, d, base);
}

int cmd_traces(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    const char *dump;
    if (cmd_analysis_parse(argc, argv, 0, &a) < 0 || cmd_analysis_count_and_name(&a, argv[0], cmd_traces_usage, &dump, 10) < 0)
        return -1;
    struct session_dump *d = cmd_analysis_find_dump(s, dump);
    return d ? run(s, argv[0], analysis_traces, &a, d, NULL) : -1;
}

/* peek and list: REGEX [DUMP]. */
static int pattern_command(struct session *s, int argc, char **argv, report_fn *fn,
                           const char *usage)
{
    struct cmd_analysis_args a;
    if (cmd_analysis_parse(argc, argv, 0, &a) < 0)
        return -1;
    if (a.npos < 1 || a.npos > 2) {
        say_error("%s: usage: %s", argv[0], usage);
        return -1;
    }
    a.o.match = a.pos[0];
    struct session_dump *d = cmd_analysis_find_dump(s, a.npos == 2 ? a.pos[1] : NULL);
    return d ? run(s, argv[0], fn, &a, d, NULL) : -1;
}

int cmd_peek(struct session *s, int argc, char **argv)
{
    return pattern_command(s, argc, argv, analysis_peek, cmd_peek_usage);
}

int cmd_list(struct session *s, int argc, char **argv)
{
    /* Lines are what list shows, whatever granularity was asked for. */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--functions") == 0 || strcmp(argv[i], "--files") == 0 ||
            strcmp(argv[i], "--addresses") == 0) {
            say_error("list: %s does not apply: list always works by source line", argv[i]);
            return -1;
        }
    }
    struct cmd_analysis_args a;
    if (cmd_analysis_parse(argc, argv, 0, &a) < 0)
        return -1;
    if (a.npos < 1 || a.npos > 2) {
        say_error("list: usage: %s", cmd_list_usage);
        return -1;
    }
    a.o.match = a.pos[0];
    a.o.granularity = ANALYSIS_LINES;
    struct session_dump *d = cmd_analysis_find_dump(s, a.npos == 2 ? a.pos[1] : NULL);
    return d ? run(s, argv[0], analysis_list, &a, d, NULL) : -1;
}

int cmd_tree(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    if (cmd_analysis_parse(argc, argv, CMD_ALLOW_NODEFRACTION, &a) < 0)
        return -1;
    if (a.npos > 1) {
        say_error("tree: usage: %s", cmd_tree_usage);
        return -1;
    }
    struct session_dump *d = cmd_analysis_find_dump(s, a.npos ? a.pos[0] : NULL);
    return d ? run(s, argv[0], analysis_tree, &a, d, NULL) : -1;
}

/* The dump before d in the session (for 'diff' with no names). */
static struct session_dump *previous_dump(struct session *s)
{
    return s->ndumps >= 2 ? &s->dumps[s->ndumps - 2] : NULL;
}

int cmd_diff(struct session *s, int argc, char **argv)
{
    struct cmd_analysis_args a;
    if (cmd_analysis_parse(argc, argv, 0, &a) < 0)
        return -1;
    const char *names[2] = {NULL, NULL};
    int nnames = 0;
    a.o.limit = 10;
    for (int i = 0; i < a.npos; i++) {
        if (is_count(a.pos[i]) && !session_find_dump(s, a.pos[i]))
            a.o.limit = atoi(a.pos[i]) > 0 ? atoi(a.pos[i]) : 10;
        else if (nnames < 2)
            names[nnames++] = a.pos[i];
        else {
            say_error("diff: unexpected argument '%s' (usage: %s)", a.pos[i], cmd_diff_usage);
            return -1;
        }
    }
    if (nnames == 0 && s->ndumps < 2) {
        say_error("diff needs two profiles and the session has %zu: take another "
                      "with 'dump' or 'load FILE', or name them: diff A B", s->ndumps);
        return -1;
    }
    struct session_dump *older = nnames ? cmd_analysis_find_dump(s, names[0]) : previous_dump(s);
    struct session_dump *newer = older ? cmd_analysis_find_dump(s, nnames == 2 ? names[1] : NULL) : NULL;
    if (!older || !newer)
        return -1;
    if (older == newer) {
        say_error("diff: '%s' is the latest profile, so there is nothing to compare "
                      "it with; name two profiles (diff A B) or take another dump", older->name);
        return -1;
    }
    return run(s, argv[0], NULL, &a, newer, older);
}

/* ---- the session's profiles ---- */

static void print_dumps_text(struct session *s)
{
    char b[32], sb[TEXT_ESCAPE_BUF];
    fprintf(s->out, "%-16s %8s %12s %10s  %s\n", "NAME", "STACKS", "IN USE", "OBJECTS", "SOURCE");
    for (size_t i = 0; i < s->ndumps; i++) {
        const struct session_dump *d = &s->dumps[i];
        const struct session_dump_info *p = &d->info;
        fprintf(s->out, "%-16s %8zu %12s %10.0f  %s%s%s\n", d->name, p->nstacks,
                analysis_format_bytes(p->total.inuse_bytes, false, false, b, sizeof b),
                p->total.inuse_objects, text_escape(d->source, sb, sizeof sb),
                p->has_alloc ? " (with allocated-ever counts)" : "",
                p->truncated ? " (truncated)" : "");
        if (d->peak)
            fprintf(s->out, "%-16s %8s %12s %10s  (at a high-water mark: %s --peak)\n", "",
                    "", "", "", d->series);
    }
    if (s->ndumps == 0)
        fprintf(s->out, "(none yet: 'dump' from the attached process, or 'load FILE')\n");
}

static int print_dumps_json(struct session *s)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < s->ndumps; i++)
        json_object_array_add(arr, json_dump(&s->dumps[i]));
    json_object *answer = json_answer_new();
    json_object_object_add(answer, "dumps", arr);
    return json_answer_emit(s, answer);
}

int cmd_dumps(struct session *s, int argc, char **argv)
{
    struct cmd_option opts[] = {{"json", false, false, NULL}, {NULL, false, false, NULL}};
    int npos = options_parse(argc, argv, opts, NULL, 0);
    if (npos < 0)
        return -1;
    bool json = opts[0].given;
    if (npos != 0) {
        say_error("dumps: usage: %s", cmd_dumps_usage);
        return -1;
    }
    if (json)
        return print_dumps_json(s);
    print_dumps_text(s);
    return 0;
}

int cmd_load(struct session *s, int argc, char **argv)
{
    char *pos[2];
    int npos = options_words(argc, argv, pos, 2);
    if (npos < 0)
        return -1;
    if (npos < 1) {
        say_error("load: usage: %s", cmd_load_usage);
        return -1;
    }
    const char *file = pos[0];
    if (profile_run_dir_is_run(file)) {     /* a directory 'profile save' wrote */
        if (npos == 2) {
            say_error("load: a run directory keeps its own series name");
            return -1;
        }
        return profile_run_load(s, file);
    }
    struct mp_error err = {.msg = ""};
    struct profile *p = profile_load_file(file, &err);
    if (!p) {
        say_error("%s", err.msg);
        return -1;
    }
    const char *slash = strrchr(file, '/');
    const char *name = npos == 2 ? pos[1] : slash ? slash + 1 : file;
    struct session_dump *d = session_add_dump(s, p, name, file);
    if (!d) {
        profile_free(p);
        say_error("load: out of memory");
        return -1;
    }
    session_dump_keep_file(d, file);
    session_profiles_trim(s);          /* many files: only the last stay parsed */
    if (p->warning[0]) {
        char wb[TEXT_ESCAPE_BUF];
        fprintf(stderr, "memprof: warning: %s\n", text_escape(p->warning, wb, sizeof wb));
    }
    char b[32];
    if (s->interactive)
        fprintf(s->out, "loaded %s: %zu stacks, %s in use, %.0f objects\n", d->name,
                p->nstacks, analysis_format_bytes(p->total.inuse_bytes, false, false, b, sizeof b),
                p->total.inuse_objects);
    return 0;
}
