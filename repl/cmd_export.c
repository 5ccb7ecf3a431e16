/* cmd_export.c - `pprof FILE [DUMP]`: a session profile written in pprof's
 * format for the tools that read it. */
#include "repl/command_table.h"
#include "session/control.h"
#include "session/say.h"

#include "lib/report/pprof.h"
#include "repl/options.h"

int cmd_pprof(struct session *s, int argc, char **argv)
{
    char *pos[2];
    int npos = options_words(argc, argv, pos, 2);
    if (npos < 0)
        return -1;
    if (npos < 1) {
        say_error("usage: pprof FILE [DUMP]");
        return -1;
    }
    const char *file = pos[0];
    const char *name = npos == 2 ? pos[1] : NULL;
    struct session_dump *d = session_find_dump(s, name);
    if (!d) {
        if (name)
            say_error("no profile named '%s' ('dumps' lists them)", name);
        else
            say_error("no profile yet: 'dump' one from the process or 'load' a file");
        return -1;
    }
    struct mp_error err;
    const struct profile *p = session_dump_profile(s, d);
    if (!p)
        return -1;
    session_check_inputs(s, d);
    if (pprof_write(p, session_symbolizer(s), file, &err)) {
        say_error("%s", err.msg);
        return -1;
    }
    fprintf(s->out, "%s: written to %s (gzip-compressed profile.proto)\n", d->name, file);
    return 0;
}
