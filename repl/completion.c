/* completion.c - the prompt's completion (see completion.h).  Candidates
 * are gathered once per TAB into a list, then readline filters them by the
 * word typed. */
#include "repl/completion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/array.h"

#include <readline/readline.h>

#include "lib/analysis/analysis.h"
#include "allocator/jemalloc/mallctl.h"
#include "repl/cmdline.h"
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

static struct session *cs;

struct words {
    char **v;
    size_t n, cap;
};
static struct words cand;

static void words_clear(struct words *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i]);
    w->n = 0;
}

static void words_add(struct words *w, const char *s, size_t len)
{
    for (size_t i = 0; i < w->n; i++)
        if (strlen(w->v[i]) == len && strncmp(w->v[i], s, len) == 0)
            return;
    if (array_reserve(&w->v, &w->cap, w->n + 1, sizeof *w->v, 64) < 0)
        return;
    char *copy = strndup(s, len);
    if (copy)
        w->v[w->n++] = copy;
}

/* "--name" words of a command's usage and help: its options, from the one
 * text that documents them. */
static void add_options(const struct command *c)
{
    const char *texts[] = {c->usage, c->help};
    for (size_t t = 0; t < 2; t++)
        for (const char *p = strstr(texts[t], "--"); p; p = strstr(p + 2, "--")) {
            size_t n = 2;
            while ((p[n] >= 'a' && p[n] <= 'z') || (p[n] == '-' && p[n + 1] != '-' && n > 2))
                n++;
            if (n > 2 && (p == texts[t] || p[-1] == ' ' || p[-1] == '[' || p[-1] == '('
                          || p[-1] == '\n' || p[-1] == '\''))
                words_add(&cand, p, n);
        }
}

/* Function names of the latest profile (a context at function granularity
 * is built for it: the first TAB on a big profile symbolizes it). */
static void add_functions(void)
{
    struct session_dump *d = session_find_dump(cs, NULL);
    struct symbolizer *sym = d ? session_symbolizer(cs) : NULL;
    if (!sym)
        return;
    struct analysis *a = analysis_new(ANALYSIS_FUNCTIONS, analysis_symbolizer_resolve, sym);
    struct mp_error err;
    const struct profile *p = session_dump_profile(cs, d);
    if (a && p && analysis_view(a, p, &err))
        for (size_t i = 0; i < a->nnodes; i++)
            words_add(&cand, a->nodes[i].function, strlen(a->nodes[i].function));
    analysis_free(a);
}

static void add_dumps(void)
{
    for (size_t i = 0; i < cs->ndumps; i++)
        words_add(&cand, cs->dumps[i].name, strlen(cs->dumps[i].name));
}

/* mallctl names; those under an arena index ("arena.<i>.purge",
 * "stats.arenas.<i>.small.nmalloc") first complete to the process's
 * indices ("arena.0.", ..., "arena.4096."), then to the names under the
 * index typed. */
static void add_mallctl(const char *text)
{
    static const char *const indexed[] = {"arena.", "stats.arenas."};
    for (size_t k = 0; k < 2; k++) {
        size_t plen = strlen(indexed[k]);
        if (strncmp(text, indexed[k], plen) != 0)
            continue;
        const char *idx = text + plen;
        size_t digits = strspn(idx, "0123456789");
        char buf[160];
        if (digits && idx[digits] == '.') {
            for (const struct mallctl_info *m = mallctl_table; m->name; m++)
                if (strncmp(m->name, indexed[k], plen) == 0 &&
                    strncmp(m->name + plen, "<i>.", 4) == 0) {
                    int n = snprintf(buf, sizeof buf, "%s%.*s%s", indexed[k], (int)digits,
                                     idx, m->name + plen + 3);
                    words_add(&cand, buf, (size_t)n);
                }
            return;
        }
        unsigned narenas = control_narenas(cs);
        for (unsigned i = 0; i <= narenas; i++) {
            unsigned v = i < narenas ? i : 4096;   /* MALLCTL_ARENAS_ALL */
            int n = snprintf(buf, sizeof buf, "%s%u.", indexed[k], v);
            words_add(&cand, buf, (size_t)n);
        }
        if (narenas)
            return;
    }
    for (const struct mallctl_info *m = mallctl_table; m->name; m++) {
        const char *i = strstr(m->name, "<i>");
        words_add(&cand, m->name, i ? (size_t)(i - m->name) : strlen(m->name));
    }
}

/* Fill cand for the word at start; false: complete file names instead. */
static bool gather(const char *text, int start)
{
    words_clear(&cand);
    char **argv;
    struct mp_error err;
    char *before = strndup(rl_line_buffer, (size_t)start);
    int argc = before ? command_split(before, &argv, &err) : -1;
    free(before);
    if (argc < 0)
        return false;
    bool files = false;
    if (argc == 0) {
        for (const struct command *c = command_table; c->name; c++)
            words_add(&cand, c->name, strlen(c->name));
        free(argv);
        return true;
    }
    const struct command *c = command_find(argv[0]);
    for (const struct command *x = command_table; !c && x->name; x++)
        if (strncmp(x->name, argv[0], strlen(argv[0])) == 0)
            c = x;   /* the first a prefix names: enough for its words */
    const char *prev = argv[argc - 1];
    int npos = 0;          /* words before this one that are not options */
    for (int i = 1; i < argc; i++)
        npos += argv[i][0] != '-';
    if (!c) {
        files = true;
    } else if (text[0] == '-') {
        add_options(c);
    } else if (strcmp(prev, "--focus") == 0 || strcmp(prev, "--ignore") == 0 ||
               strcmp(prev, "--hide") == 0) {
        add_functions();
    } else if (strcmp(prev, "--base") == 0) {
        add_dumps();
    } else if (strcmp(c->name, "help") == 0) {
        for (const struct command *x = command_table; x->name; x++)
            words_add(&cand, x->name, strlen(x->name));
    } else if (strcmp(c->name, "mallctl") == 0) {
        add_mallctl(text);
    } else if (strcmp(c->name, "prof") == 0) {
        static const char *const w[] = {"on", "off", "sample", "reset"};
        for (size_t i = 0; i < 4; i++)
            words_add(&cand, w[i], strlen(w[i]));
    } else if (strcmp(c->name, "set") == 0) {
        const char *w = npos == 0 ? "pager" : npos == 1 ? "on" : NULL;
        if (w)
            words_add(&cand, w, strlen(w));
        if (npos == 1)
            words_add(&cand, "off", 3);
    } else if ((strcmp(c->name, "peek") == 0 || strcmp(c->name, "list") == 0) && npos == 0) {
        add_functions();
    } else if (strcmp(c->name, "load") == 0 || strcmp(c->name, "dump") == 0 ||
               ((strcmp(c->name, "flame") == 0 || strcmp(c->name, "graph") == 0 ||
                 strcmp(c->name, "pprof") == 0 || strcmp(c->name, "report") == 0) && npos == 0)) {
        files = true;
    } else {
        add_dumps();
    }
    free(argv);
    return !files;
}

static char *next_candidate(const char *text, int state)
{
    static size_t idx;
    if (state == 0)
        idx = 0;
    size_t len = strlen(text);
    while (idx < cand.n) {
        const char *w = cand.v[idx++];
        if (strncmp(w, text, len) == 0)
            return strdup(w);
    }
    return NULL;
}

static char **complete(const char *text, int start, int end)
{
    (void)end;
    if (!gather(text, start))
        return NULL;            /* readline completes file names */
    rl_attempted_completion_over = 1;
    /* "arena.3." and the like go on without a space */
    size_t len = strlen(text);
    rl_completion_append_character = ' ';
    char **m = rl_completion_matches(text, next_candidate);
    if (m && m[0] && (len = strlen(m[0])) > 0 && m[0][len - 1] == '.' && !m[1])
        rl_completion_append_character = '\0';
    return m;
}

void completion_install(struct session *s)
{
    cs = s;
    rl_attempted_completion_function = complete;
}
