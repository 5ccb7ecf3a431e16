/* memprof.c - the program's entry: `memprof serve ...` runs the HTTP agent
 * (serve/), anything else the prompt and batch front end (repl/).  The two
 * front ends never include each other; this is the one file above both. */
#include <string.h>

#include "repl/repl_main.h"
#include "serve/serve.h"

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "serve") == 0)
        return serve_main(argc - 1, argv + 1);
    return repl_main(argc, argv);
}
