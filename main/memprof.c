/* memprof.c - the program's entry: `memprof serve ...` runs the HTTP agent,
 * anything else the prompt and batch front end (repl/).  The two front
 * ends never include each other.
 *
 * The agent is its own program, memprof-serve, installed beside this one
 * (main/memprof_serve.c): its libraries (libmicrohttpd, GnuTLS and the ten
 * libraries it loads, libyaml, libcrypt) took 2 ms to load at every start
 * of memprof, a tenth of an analysis of a small profile. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "repl/repl_main.h"

#define SERVE_PROGRAM "memprof-serve"

/* Exec memprof-serve from the directory of this very program (its
 * /proc/self/exe, not $PATH: a root memprof runs only what was installed
 * with it), with argv from "serve" on; returns only on failure. */
static int exec_serve(char **argv)
{
    char self[PATH_MAX], path[PATH_MAX + sizeof SERVE_PROGRAM];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    char *slash = n > 0 && n < (ssize_t)sizeof self - 1 ? memrchr(self, '/', (size_t)n) : NULL;
    if (!slash) {
        fprintf(stderr, "memprof: serve: cannot find the directory memprof runs from "
                "(/proc/self/exe: %s); is /proc mounted?\n",
                n < 0 ? strerror(errno) : "no absolute path");
        return 1;
    }
    *slash = 0;
    snprintf(path, sizeof path, "%s/" SERVE_PROGRAM, self);
    execv(path, argv);
    fprintf(stderr, "memprof: serve: cannot run %s: %s (memprof serve is the program "
            SERVE_PROGRAM ", installed beside memprof by make install: install it again)\n",
            path, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return exec_serve(argv + 1);
    return repl_main(argc, argv);
}
