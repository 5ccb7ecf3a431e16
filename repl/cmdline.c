/* cmdline.c - splits a command line into words, shell-style: blanks
 * separate words, '...' and "..." quote, a backslash escapes one character
 * outside single quotes, # starts a comment. */
#include "repl/cmdline.h"
#include "session/say.h"

#include <stdlib.h>
#include <string.h>

int command_split(const char *line, char ***argvp, struct mp_error *err)
{
    size_t len = strlen(line);
    /* Worst case: every other character starts a word. */
    size_t maxargs = len / 2 + 2;
    char **argv = malloc(maxargs * sizeof *argv + len + 1);
    if (!argv)
        return mp_error_set(err, "out of memory");
    char *out = (char *)(argv + maxargs);
    int argc = 0;
    const char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
            p++;
        if (!*p || *p == '#')
            break;
        argv[argc++] = out;
        char quote = 0;
        while (*p && (quote || (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r'))) {
            if (quote && *p == quote) {
                quote = 0;
                p++;
            } else if (!quote && (*p == '\'' || *p == '"')) {
                quote = *p++;
            } else if (*p == '\\' && quote != '\'' && p[1]) {
                *out++ = p[1];
                p += 2;
            } else {
                *out++ = *p++;
            }
        }
        *out++ = '\0';
        if (quote) {
            free(argv);
            return mp_error_set(err, "unterminated %c quote", quote);
        }
    }
    argv[argc] = NULL;
    *argvp = argv;
    return argc;
}
