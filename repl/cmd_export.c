/* cmd_export.c - `pprof FILE [DUMP]`: a session profile written in pprof's
 * format for the tools that read it. */
#include "repl/commands.h"

#include "lib/pprof.h"

int cmd_pprof(struct session *s, int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        command_error("usage: pprof FILE [DUMP]");
        return -1;
    }
    const char *name = argc == 3 ? argv[2] : NULL;
    struct session_dump *d = session_find_dump(s, name);
    if (!d) {
        if (name)
            command_error("no profile named '%s' ('dumps' lists them)", name);
        else
            command_error("no profile yet: 'dump' one from the process or 'load' a file");
        return -1;
    }
    struct mp_error err;
    if (pprof_write(d->profile, session_symbolizer(s), argv[1], &err)) {
        command_error("%s", err.msg);
        return -1;
    }
    fprintf(s->out, "%s: written to %s (gzip-compressed profile.proto)\n", d->name, argv[1]);
    return 0;
}
