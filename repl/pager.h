/* pager.h - long answers at the prompt go through a pager ($PAGER, else
 * "less -FRX"), as gdb and git do: never in batch, never when stdout is
 * not a terminal, and not after --no-pager or 'set pager off'. */
#ifndef MEMPROF_PAGER_H
#define MEMPROF_PAGER_H

#include <stdbool.h>
#include <stdio.h>

#include "session/session.h"

struct pager {
    FILE *saved;           /* s->out before; NULL when not paging */
    FILE *mem;
    char *buf;
    size_t len;
    bool dropped;          /* pager_end threw away an interrupted answer */
};

/* Collect the command's answer (s->out) in memory, when paging applies. */
void pager_begin(struct session *s, struct pager *p);

/* Put s->out back and show what was collected: directly when it fits the
 * terminal, else through the pager (directly if the pager cannot start);
 * nothing of a cancelled command's partial answer (Ctrl-C). */
void pager_end(struct session *s, struct pager *p, bool cancelled);

#endif
