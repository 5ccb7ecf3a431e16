/* query.h - a request's query string, checked one key=value at a time as
 * libmicrohttpd hands them over: only the keys the route takes, each once,
 * values short, numbers whole and in range.  Independent of the HTTP
 * library, so that the fuzzer drives it directly (fuzz/fuzz_serve_query.c). */
#ifndef MEMPROF_SERVE_QUERY_H
#define MEMPROF_SERVE_QUERY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Longest value of any parameter (a pid or a number of seconds). */
#define QUERY_VALUE_MAX 32

/* ?endpoint= of GET /targets: the endpoint each target is scraped at. */
enum query_endpoint {
    QUERY_ENDPOINT_NONE, QUERY_ENDPOINT_HEAP, QUERY_ENDPOINT_ALLOCS, QUERY_ENDPOINT_METRICS
};

struct query {
    const char *path;           /* the route's path, for messages */
    const char *params;         /* the keys it takes: "pid,seconds" */
    unsigned max_seconds;
    pid_t pid;                  /* 0: not given */
    unsigned seconds;           /* 0: not given */
    double duration;            /* ?duration= in seconds (Mesos' syntax); 0: not given */
    unsigned run_id;            /* ?id=N, a Mesos run's; 0: not given */
    enum query_endpoint endpoint; /* ?endpoint=, /targets': QUERY_ENDPOINT_NONE: not given */
    unsigned seen_pid, seen_seconds, seen_duration, seen_id, seen_endpoint;
    char problem[200];          /* why the query was refused */
};

/* Mesos' durations (its stout library's syntax, which its
 * /memory-profiler/start takes): a decimal number and one of the units ns,
 * us, ms, secs, mins, hrs, days, weeks ("5mins", "1.5hrs"); a bare number
 * is refused, as Mesos refuses it.  Accepted from 1 s to 24 h, Mesos'
 * bounds.  true with *seconds, or false with why (len bytes) saying what
 * is wrong. */
#define QUERY_DURATION_MIN 1.0
#define QUERY_DURATION_MAX 86400.0
bool query_parse_duration(const char *text, double *seconds, char *why, size_t len);

/* Prometheus' X-Prometheus-Scrape-Timeout-Seconds: a decimal number of
 * seconds ("10", "2.5"), digits and at most one dot, up to 16 bytes, from
 * 0.001 to QUERY_SCRAPE_TIMEOUT_MAX.  true with *seconds; false for
 * anything else (the agent then keeps its own budget). */
#define QUERY_SCRAPE_TIMEOUT_MAX 3600.0
bool query_scrape_timeout(const char *text, double *seconds);

/* A Host header fit to name this agent as a scrape target (GET /targets
 * hands it to the scrapers): a DNS name or IPv4 address of letters,
 * digits, dots and dashes, or an IPv6 address in brackets, then
 * optionally :PORT (1 to 65535); at most 255 bytes.  The client reached
 * the agent by it; anything else (a path, a user, spaces) is refused. */
bool query_host_target(const char *host);

/* Take one key=value (value NULL for a bare key): true, or false with
 * q->problem saying what is wrong (the key, escaped). */
bool query_take(struct query *q, const char *key, const char *value);

#endif
