/* memprof_serve.c - the entry of memprof-serve, the HTTP agent (serve/),
 * which `memprof serve ARGS` runs as `serve ARGS` (main/memprof.c says
 * why it is a program of its own). */
#include "serve/serve.h"

int main(int argc, char **argv)
{
    return serve_main(argc, argv);
}
