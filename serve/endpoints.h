/* endpoints.h - what memprof serve answers: a request as the router
 * (http.c) checked it, the reply an endpoint fills, and the endpoints,
 * each in its file (ep_*.c).  The route table, with each endpoint's
 * method, parameters and help, is routes.c's. */
#ifndef MEMPROF_SERVE_ENDPOINTS_H
#define MEMPROF_SERVE_ENDPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "serve/config.h"
#include "serve/targets.h"

/* A request's query, checked: each parameter at most once, known to the
 * endpoint, short, and numbers that are numbers; a pid one the --target
 * rules allow. */
struct serve_request {
    const struct serve_config *cfg;
    const char *path;
    pid_t pid;                  /* ?pid=N; 0 when absent */
    struct served_process target; /* with pid: the process, as the rules saw it */
    unsigned seconds;           /* ?seconds=N; 0 when absent */
    double duration;            /* ?duration=D in seconds; 0 when absent */
    unsigned run_id;            /* ?id=N; 0 when absent */
    int endpoint;               /* ?endpoint= (GET /targets): an enum query_endpoint */
    const char *host;           /* the Host header, unchecked; NULL when absent */
    const char *client;         /* "127.0.0.1", for the log */
    double scrape_timeout;      /* X-Prometheus-Scrape-Timeout-Seconds; 0: none */
};

struct serve_reply {
    int status;
    const char *content_type;
    char *body;                 /* malloc'd */
    size_t len;
    bool go_pprof;              /* an error go tool pprof shows (X-Go-Pprof) */
    unsigned retry_after;       /* seconds, with 503; 0: none */
};

/* Set a text/plain error reply (one line, printf-style; what it quotes
 * from a request or a target must come escaped). */
void reply_error(struct serve_reply *rp, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Take a malloc'd body. */
void reply_body(struct serve_reply *rp, int status, const char *type, char *body, size_t len);
/* A worker's answer as the reply (its body on 200, else the first thing
 * it said), the worker's reply freed. */
struct worker_reply;
void reply_from_worker(struct serve_reply *rp, struct worker_reply *wr, const char *type);

typedef void (*endpoint_fn)(const struct serve_request *rq, struct serve_reply *rp);

struct route {
    const char *path;
    const char *method;         /* "GET" or "POST" */
    bool control;               /* changes a process: needs --allow-control */
    const char *params;         /* the query keys it takes: "pid,seconds" */
    bool needs_pid;
    endpoint_fn handle;
    const char *help;
    bool run_aware;             /* answers for a process in a Mesos run itself; the
                                 * router answers the others 503 meanwhile */
};

extern const struct route serve_routes[];
extern const size_t serve_nroutes;

void ep_index(const struct serve_request *rq, struct serve_reply *rp);
void ep_processes(const struct serve_request *rq, struct serve_reply *rp);
void ep_targets(const struct serve_request *rq, struct serve_reply *rp);
void ep_metrics(const struct serve_request *rq, struct serve_reply *rp);
void ep_pprof_heap(const struct serve_request *rq, struct serve_reply *rp);
void ep_pprof_allocs(const struct serve_request *rq, struct serve_reply *rp);
void ep_pprof_heap_run(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_state(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_statistics(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_start(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_stop(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_download_raw(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_download_text(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_download_graph(const struct serve_request *rq, struct serve_reply *rp);
void ep_mesos_download_archive(const struct serve_request *rq, struct serve_reply *rp);

#endif
