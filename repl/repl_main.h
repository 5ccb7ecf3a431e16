/* repl_main.h - the prompt and batch front end's command line, run by
 * main/memprof.c for `memprof [OPTION]... [PROFILE]...`. */
#ifndef MEMPROF_REPL_MAIN_H
#define MEMPROF_REPL_MAIN_H

/* Parse the command line, run the session, detach: the exit status
 * (repl_main.c says which). */
int repl_main(int argc, char **argv);

#endif
