/* pager.c - the prompt's pager for long answers (see pager.h).  The answer
 * is collected first so that a short one never starts a pager; errors and
 * status lines go to stderr as they happen. */
#include "repl/pager.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_PAGER "less -FRX"

void pager_begin(struct session *s, struct pager *p)
{
    memset(p, 0, sizeof *p);
    if (!s->interactive || s->no_pager || !isatty(STDOUT_FILENO))
        return;
    p->mem = open_memstream(&p->buf, &p->len);
    if (!p->mem)
        return;             /* no memory for it: answer directly */
    p->saved = s->out;
    s->out = p->mem;
}

static size_t terminal_rows(void)
{
    struct winsize ws;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0)
        return ws.ws_row;
    return 24;
}

void pager_end(struct session *s, struct pager *p, bool cancelled)
{
    if (!p->saved)
        return;
    s->out = p->saved;
    fclose(p->mem);
    if (cancelled) {
        free(p->buf);
        memset(p, 0, sizeof *p);
        p->dropped = true;
        return;
    }
    size_t lines = 0;
    for (size_t i = 0; i < p->len; i++)
        lines += p->buf[i] == '\n';
    FILE *out = NULL;
    if (lines >= terminal_rows() - 1) {
        const char *cmd = getenv("PAGER");
        fflush(stdout);
        out = popen(cmd && *cmd ? cmd : DEFAULT_PAGER, "w");
    }
    /* A pager that quits early (q in less) closes the pipe: the rest is
     * dropped (SIGPIPE is ignored), as intended. */
    fwrite(p->buf, 1, p->len, out ? out : s->out);
    if (out) {
        int st = pclose(out);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {   /* no such pager: answer anyway */
            fwrite(p->buf, 1, p->len, s->out);
            fprintf(stderr, "memprof: the pager '%s' could not start: set PAGER, or "
                    "'set pager off'\n", getenv("PAGER") && *getenv("PAGER")
                    ? getenv("PAGER") : DEFAULT_PAGER);
        }
    }
    fflush(s->out);
    free(p->buf);
    memset(p, 0, sizeof *p);
}
