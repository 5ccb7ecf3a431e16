/* jemalloc_purge.c - see session/jemalloc_purge.h.  The arena is checked
 * against arenas.narenas read in a stop before the purge's, and the
 * purge (arena.<i>.purge) runs first in the stop that then reads the
 * figures, so that they show its effect. */
#include "session/jemalloc_purge.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocator/jemalloc/mallctl.h"
#include "session/control.h"
#include "session/process_files.h"
#include "session/say.h"

/* An arena number as the user typed it: digits only, below 4096. */
static int parse_arena(const char *text, unsigned *arena)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(text, &end, 10);
    if (!*text || *end || text[0] == '-' || text[0] == '+' || errno || v >= MALLCTL_ARENAS_ALL) {
        say_error("'%s' is not an arena number: give a number from 0 to the "
                      "process's arenas.narenas - 1 ('stats' lists them), or nothing "
                      "for every arena", text);
        return -1;
    }
    *arena = (unsigned)v;
    return 0;
}

static int arena_exists(struct session *s, unsigned arena, unsigned narenas)
{
    if (arena < narenas)
        return 0;
    say_error("process %d has no arena %u: its arenas are 0 to %u (arenas.narenas "
                  "is %u); nothing was purged", (int)target_pid(s->target), arena,
                  narenas - 1, narenas);
    return -1;
}

int jemalloc_purge_run(struct session *s, const char *arena, struct jemalloc_purge *p)
{
    memset(p, 0, sizeof *p);
    p->all = arena == NULL;
    p->arena = MALLCTL_ARENAS_ALL;
    if (!p->all && parse_arena(arena, &p->arena))
        return -1;
    if (jemalloc_summary_read(s, NULL, 0, &p->before) ||
        (!p->all && arena_exists(s, p->arena, p->before.narenas)))
        return -1;
    bool rss_known = process_file_value(s, "status", "VmRSS", &p->rss_before);
    char name[48];
    snprintf(name, sizeof name, "arena.%u.purge", p->arena);
    struct mallctl_call purge = {.name = name};
    if (jemalloc_summary_read(s, &purge, 1, &p->after))
        return -1;
    if (purge.ret)
        return control_mallctl_failed(s, name, purge.ret, true);
    p->pause_us = target_pauses(s->target)->last_us;
    p->rss_known = process_file_value(s, "status", "VmRSS", &p->rss_after) && rss_known;
    return 0;
}
