/* options.c - the option parser shared by the commands (see options.h). */
#include "repl/options.h"

#include <string.h>

#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

struct cmd_option *options_get(struct cmd_option *opts, const char *name)
{
    for (struct cmd_option *o = opts; o->name; o++)
        if (strcmp(o->name, name) == 0)
            return o;
    return NULL;
}

static const char *usage_of(const char *cmd)
{
    const struct command *c = command_find(cmd);
    return c ? c->usage : cmd;
}

static const struct cmd_option *option_of(const struct cmd_option *opts, const char *word,
                                          const char **inline_value)
{
    const char *eq = strchr(word, '=');
    size_t len = eq ? (size_t)(eq - word) : strlen(word);
    *inline_value = eq ? eq + 1 : NULL;
    for (const struct cmd_option *o = opts; o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, word, len) == 0)
            return o;
    return NULL;
}

int options_each(int argc, char **argv, const struct cmd_option *opts,
                 options_fn *on_option, void *ctx, char **pos, int maxpos)
{
    const char *cmd = argv[0];
    int npos = 0;
    bool options_done = false;
    for (int i = 1; i < argc; i++) {
        const char *w = argv[i];
        if (!options_done && strcmp(w, "--") == 0) {
            options_done = true;
            continue;
        }
        if (!options_done && w[0] == '-' && w[1]) {
            const char *inline_value;
            const struct cmd_option *o = w[1] == '-' ? option_of(opts, w + 2, &inline_value) : NULL;
            if (!o) {
                say_error("%s: unknown option '%s' (usage: %s); a value that "
                              "starts with '-' goes after '--'", cmd, w, usage_of(cmd));
                return -1;
            }
            if (o->takes_value && !inline_value && i + 1 >= argc) {
                say_error("%s: --%s needs a value (usage: %s)", cmd, o->name,
                              usage_of(cmd));
                return -1;
            }
            if (!o->takes_value && inline_value) {
                say_error("%s: --%s takes no value (usage: %s)", cmd, o->name,
                              usage_of(cmd));
                return -1;
            }
            const char *value = o->takes_value ? inline_value ? inline_value : argv[++i] : NULL;
            if (on_option(ctx, (int)(o - opts), value) < 0)
                return -1;
            continue;
        }
        if (npos == maxpos) {
            say_error("%s: unexpected argument '%s' (usage: %s)", cmd, w,
                          usage_of(cmd));
            return -1;
        }
        pos[npos++] = argv[i];
    }
    return npos;
}

static int remember(void *ctx, int index, const char *value)
{
    struct cmd_option *o = (struct cmd_option *)ctx + index;
    o->given = true;
    o->value = value;
    return 0;
}

int options_parse(int argc, char **argv, struct cmd_option *opts, char **pos,
                  int maxpos)
{
    for (struct cmd_option *o = opts; o->name; o++)
        o->given = false, o->value = NULL;
    return options_each(argc, argv, opts, remember, opts, pos, maxpos);
}

int options_words(int argc, char **argv, char **pos, int maxpos)
{
    static const struct cmd_option none[] = {{NULL, false, false, NULL}};
    return options_each(argc, argv, none, NULL, NULL, pos, maxpos);
}
