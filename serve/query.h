/* query.h - a request's query string, checked one key=value at a time as
 * libmicrohttpd hands them over: only the keys the route takes, each once,
 * values short, numbers whole and in range.  Independent of the HTTP
 * library, so that the fuzzer drives it directly (fuzz/fuzz_serve_query.c). */
#ifndef MEMPROF_SERVE_QUERY_H
#define MEMPROF_SERVE_QUERY_H

#include <stdbool.h>
#include <sys/types.h>

/* Longest value of any parameter (a pid or a number of seconds). */
#define QUERY_VALUE_MAX 32

struct query {
    const char *path;           /* the route's path, for messages */
    const char *params;         /* the keys it takes: "pid,seconds" */
    unsigned max_seconds;
    pid_t pid;                  /* 0: not given */
    unsigned seconds;           /* 0: not given */
    unsigned seen_pid, seen_seconds;
    char problem[200];          /* why the query was refused */
};

/* Take one key=value (value NULL for a bare key): true, or false with
 * q->problem saying what is wrong (the key, escaped). */
bool query_take(struct query *q, const char *key, const char *value);

#endif
