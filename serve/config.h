/* config.h - what `memprof serve` was told on its command line
 * (serve_main.c parses it): where it listens, which processes it may
 * touch and what it may do to them, and its bounds. */
#ifndef MEMPROF_SERVE_CONFIG_H
#define MEMPROF_SERVE_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One --target rule: a process is served when it matches every field the
 * rule sets (NULL/-1: any).  name labels its metrics instead of its pid
 * and command, stable across restarts. */
struct serve_rule {
    char *name;                 /* name=NAME */
    uid_t uid;                  /* user=USER or uid: (uid_t)-1 for any */
    char *exe;                  /* exe=GLOB (fnmatch, on the executable's path) */
    char *comm;                 /* comm=GLOB (on /proc/PID/comm) */
    char *container;            /* container=[RUNTIME://]HEX: a container id or
                                 * its first 12 or more hex digits */
    char *cgroup;               /* cgroup=GLOB (on the cgroup path /processes
                                 * shows) */
};

struct web_guard;               /* --web-config read and checked (web_guard.h) */

struct serve_config {
    char listen_addr[64];       /* numeric IPv4 or IPv6 address */
    uint16_t port;
    bool allow_control;         /* POST endpoints that change a process */
    struct serve_rule *rules;   /* none: every process memprof may trace */
    size_t nrules;
    unsigned max_connections;   /* at once; more wait in the kernel's backlog */
    unsigned request_timeout_s; /* a request's work in a process, at most */
    unsigned max_seconds;       /* ?seconds= at most */
    unsigned scrape_parallel;   /* /metrics: processes read at once */
    const char *web_config;     /* --web-config FILE, or NULL */
    const struct web_guard *web; /* what it says: TLS, users, headers; NULL without */
    bool quiet;                 /* no line per request on stderr */
};

#endif
