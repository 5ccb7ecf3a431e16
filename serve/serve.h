/* serve.h - memprof serve, the HTTP agent: the endpoints fleets scrape
 * (Prometheus metrics, pprof heap profiles, the process list) for every
 * process on the host it may serve, each request a short session. */
#ifndef MEMPROF_SERVE_H
#define MEMPROF_SERVE_H

/* `memprof serve [OPTION]...` (argv[0] is "serve"): the exit status. */
int serve_main(int argc, char **argv);

#endif
