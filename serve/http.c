/* http.c - memprof serve's HTTP side (http.h).  A request passes the
 * router before an endpoint runs: the path must be a route's, the method
 * its, a change allowed (--allow-control), a body absent, the query's keys
 * the route's own, each once, short, and numbers numbers.  Nothing in a
 * request ever names a file, a path or a command. */
#include "serve/http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lib/base/mono_clock.h"
#include "lib/base/text_escape.h"
#include "serve/endpoints.h"
#include "serve/mesos_runs.h"
#include "serve/query.h"
#include "serve/web_guard.h"

/* Bounds on every connection: the request line and headers in 16 KiB (more
 * is answered 431 by libmicrohttpd), an idle connection closed after 30 s. */
#define CONNECTION_MEMORY (16 * 1024)
#define CONNECTION_IDLE_S 30

struct serve_http {
    struct MHD_Daemon *d;
    const struct serve_config *cfg;
    atomic_uint under_way;      /* requests begun and not yet answered */
};

/* The row for path and method (HEAD as GET); else, in *path_known,
 * whether the path has rows for other methods. */
static const struct route *find_route(const char *path, const char *method, bool *path_known)
{
    *path_known = false;
    if (strcmp(method, "HEAD") == 0)
        method = "GET";
    for (size_t i = 0; i < serve_nroutes; i++) {
        if (strcmp(serve_routes[i].path, path) != 0)
            continue;
        *path_known = true;
        if (strcmp(serve_routes[i].method, method) == 0)
            return &serve_routes[i];
    }
    return NULL;
}

static enum MHD_Result check_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value)
{
    (void)kind;
    return query_take(cls, key, value) ? MHD_YES : MHD_NO;
}

/* The router: the reply for a request that fails a rule, or the route. */
static const struct route *route_request(struct MHD_Connection *c, const char *url,
                                         const char *method, struct serve_request *rq,
                                         struct serve_reply *rp)
{
    bool path_known;
    const struct route *r = find_route(url, method, &path_known);
    if (!r && path_known) {
        reply_error(rp, 405, "%s does not take that method; GET / lists the endpoints "
                    "with theirs", url);
        return NULL;
    }
    if (!r) {
        reply_error(rp, 404, "no such endpoint; GET / lists them");
        return NULL;
    }
    if (r->control && !rq->cfg->allow_control) {
        reply_error(rp, 403, "%s changes a process: this agent was started without "
                    "--allow-control", r->path);
        return NULL;
    }
    struct query q = {.path = r->path, .params = r->params,
                      .max_seconds = rq->cfg->max_seconds};
    MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, check_param, &q);
    if (q.problem[0]) {
        reply_error(rp, 400, "%s", q.problem);
        return NULL;
    }
    rq->pid = q.pid;
    rq->seconds = q.seconds;
    rq->duration = q.duration;
    rq->run_id = q.run_id;
    rq->endpoint = q.endpoint;
    if (r->needs_pid && !rq->pid) {
        reply_error(rp, 400, "%s needs ?pid=N (GET /processes lists the processes served)",
                    r->path);
        return NULL;
    }
    /* Every endpoint that names a process: one the rules allow. */
    struct mp_error err;
    if (rq->pid && targets_lookup(rq->cfg, rq->pid, &rq->target, &err) < 0) {
        reply_error(rp, err.kind == MP_ERROR_NO_PROCESS ? 404 : 403, "%s", err.msg);
        return NULL;
    }
    /* A process in a Mesos run is its worker's until the run ends: the
     * others are told so, and when to ask again, rather than "busy". */
    unsigned run;
    double left = rq->pid && !r->run_aware ? mesos_runs_remaining(rq->pid, &run) : -1;
    if (left >= 0) {
        reply_error(rp, 503, "process %d is in profiling run %u (%.0f s left), whose worker "
                    "holds it: ask again after the run, or POST /memory-profiler/stop?pid=%d",
                    (int)rq->pid, run, left, (int)rq->pid);
        rp->retry_after = (unsigned)left + 1;
        return NULL;
    }
    return r;
}

static void client_address(struct MHD_Connection *c, char *buf, size_t len)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(buf, len, "?");
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET)
        inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, buf, (socklen_t)len);
    else if (sa->sa_family == AF_INET6)
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, buf,
                  (socklen_t)len);
}

/* One line per request on stderr: the client, what it asked (escaped: the
 * method and path are the client's bytes), the answer and its time. */
static void log_request(const struct serve_request *rq, const char *method, const char *url,
                        int status, double seconds)
{
    char mb[TEXT_ESCAPE_BUF], ub[TEXT_ESCAPE_BUF], what[96] = "";
    size_t n = 0;
    if (rq->pid)
        n += (size_t)snprintf(what + n, sizeof what - n, " pid %d", (int)rq->pid);
    if (rq->seconds)
        n += (size_t)snprintf(what + n, sizeof what - n, " seconds %u", rq->seconds);
    if (rq->duration > 0)
        n += (size_t)snprintf(what + n, sizeof what - n, " duration %gs", rq->duration);
    if (rq->run_id)
        snprintf(what + n, sizeof what - n, " run %u", rq->run_id);
    fprintf(stderr, "memprof serve: %s %s %s%s -> %d (%.0f ms)\n", rq->client,
            text_escape(method, mb, sizeof mb), text_escape(url, ub, sizeof ub), what, status,
            seconds * 1e3);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, struct serve_reply *rp,
                                  const struct web_guard *web)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        rp->len, rp->body ? rp->body : (void *)"", rp->body ? MHD_RESPMEM_MUST_FREE
                                                            : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(rp->body);
        return MHD_NO;
    }
    rp->body = NULL;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rp->content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (rp->go_pprof && rp->status != 200)
        MHD_add_response_header(resp, "X-Go-Pprof", "1");
    web_guard_headers(web, resp, rp->status);
    if (rp->retry_after) {
        char v[16];
        snprintf(v, sizeof v, "%u", rp->retry_after);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, v);
    }
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)rp->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version, (void)upload_data;
    struct serve_http *h = cls;
    static int started;
    struct serve_reply rp = {.status = 500, .content_type = "text/plain; charset=utf-8"};
    if (!*con_cls) {            /* the headers are read */
        *con_cls = &started;
        atomic_fetch_add(&h->under_way, 1);
        /* --web-config: a client certificate, a user, before anything
         * else is looked at; every refusal logged, even with --quiet. */
        char why[300], client[INET6_ADDRSTRLEN + 1];
        int refused = web_guard_check(h->cfg->web, c, why, sizeof why);
        if (refused) {
            char mb[TEXT_ESCAPE_BUF], ub[TEXT_ESCAPE_BUF];
            client_address(c, client, sizeof client);
            fprintf(stderr, "memprof serve: %s %s %s -> %d: %s\n", client,
                    text_escape(method, mb, sizeof mb), text_escape(url, ub, sizeof ub),
                    refused, why);
            reply_error(&rp, refused, refused == 401 ? "authentication needed: a user and "
                        "password of the agent's --web-config" : "a client certificate "
                        "the agent's client_ca_file vouches for is needed");
            return send_reply(c, &rp, h->cfg->web);
        }
        /* No endpoint takes a body: refused before it is read. */
        const char *clen = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                       MHD_HTTP_HEADER_CONTENT_LENGTH);
        if ((clen && strcmp(clen, "0") != 0) ||
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_TRANSFER_ENCODING)) {
            reply_error(&rp, 413, "no endpoint takes a request body");
            return send_reply(c, &rp, h->cfg->web);
        }
        return MHD_YES;
    }
    if (*upload_data_size) {    /* a body all the same: the connection ends */
        *upload_data_size = 0;
        return MHD_NO;
    }
    struct serve_request rq = {.cfg = h->cfg, .path = url};
    char client[INET6_ADDRSTRLEN + 1];
    client_address(c, client, sizeof client);
    rq.client = client;
    rq.host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    const char *timeout = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
                                                      "X-Prometheus-Scrape-Timeout-Seconds");
    if (timeout && !query_scrape_timeout(timeout, &rq.scrape_timeout))
        rq.scrape_timeout = 0;
    double t0 = mono_clock_s();
    const struct route *r = route_request(c, url, method, &rq, &rp);
    if (r)
        r->handle(&rq, &rp);
    if (!h->cfg->quiet || (r && r->control))
        log_request(&rq, method, url, rp.status, mono_clock_s() - t0);
    return send_reply(c, &rp, h->cfg->web);
}

/* A request's answer is sent (or its connection ended): one fewer under way. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode why)
{
    (void)c, (void)why;
    struct serve_http *h = cls;
    if (*con_cls) {
        atomic_fetch_sub(&h->under_way, 1);
        *con_cls = NULL;
    }
}

static void log_mhd(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    fputs("memprof serve: ", stderr);
    vfprintf(stderr, fmt, ap);
}

static int listen_address(const struct serve_config *cfg, struct sockaddr_storage *ss,
                          bool *v6, struct mp_error *err)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, cfg->listen_addr, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons(cfg->port);
        *v6 = false;
        return 0;
    }
    if (inet_pton(AF_INET6, cfg->listen_addr, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons(cfg->port);
        *v6 = true;
        return 0;
    }
    return mp_error_set(err, "--listen: '%s' is not a numeric IPv4 or IPv6 address "
                        "(127.0.0.1, 0.0.0.0, ::1, [::])", cfg->listen_addr);
}

struct serve_http *http_start(const struct serve_config *cfg, struct mp_error *err)
{
    struct sockaddr_storage ss;
    bool v6 = false;
    if (listen_address(cfg, &ss, &v6, err) < 0)
        return NULL;
    struct serve_http *h = calloc(1, sizeof *h);
    if (!h) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    h->cfg = cfg;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
                     MHD_USE_ERROR_LOG | MHD_USE_ITC | (v6 ? MHD_USE_IPv6 : 0);
    struct MHD_OptionItem tls_options[WEB_GUARD_MHD_OPTIONS];
    web_guard_mhd_options(cfg->web, tls_options, &flags);
    errno = 0;
    h->d = MHD_start_daemon(flags, cfg->port, NULL, NULL, on_request, h,
                            MHD_OPTION_EXTERNAL_LOGGER, log_mhd, NULL,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
                            MHD_OPTION_CONNECTION_LIMIT, cfg->max_connections,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONNECTION_IDLE_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
                            MHD_OPTION_ARRAY, tls_options,
                            MHD_OPTION_END);
    if (!h->d) {
        mp_error_set(err, "cannot listen on %s port %u%s%s (another program on that port? "
                     "--listen ADDR:PORT picks another)", cfg->listen_addr, cfg->port,
                     errno ? ": " : "", errno ? strerror(errno) : "");
        free(h);
        return NULL;
    }
    return h;
}

unsigned http_port(const struct serve_http *h)
{
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->d, MHD_DAEMON_INFO_BIND_PORT);
    return di ? di->port : 0;
}

unsigned http_under_way(struct serve_http *h)
{
    return atomic_load(&h->under_way);
}

void http_stop(struct serve_http *h)
{
    if (!h)
        return;
    /* No new connection; the requests under way are answered (each
     * bounded by its own time limit, so this wait is too); then the
     * daemon, which would cut them, stops. */
    MHD_socket listener = MHD_quiesce_daemon(h->d);
    if (listener != MHD_INVALID_SOCKET)
        close(listener);
    unsigned limit_s = h->cfg->request_timeout_s * 4 + h->cfg->max_seconds + 10;
    struct timespec tick = {.tv_nsec = 20 * 1000 * 1000};
    for (unsigned i = 0; atomic_load(&h->under_way) && i < limit_s * 50; i++)
        nanosleep(&tick, NULL);
    MHD_stop_daemon(h->d);
    free(h);
}
