/* http.h - memprof serve's HTTP side (libmicrohttpd): listening, the
 * bounds on every connection, and the router that checks a request
 * against the route table before an endpoint sees it. */
#ifndef MEMPROF_SERVE_HTTP_H
#define MEMPROF_SERVE_HTTP_H

#include "lib/base/error.h"
#include "serve/config.h"

struct serve_http;

/* Listen on cfg's address and answer from threads of libmicrohttpd's own
 * (one per connection, at most cfg->max_connections).  NULL with err
 * saying why (the address in use, not one of this host's, ...). */
struct serve_http *http_start(const struct serve_config *cfg, struct mp_error *err);
/* The port it listens on (the one the kernel chose for port 0). */
unsigned http_port(const struct serve_http *h);
/* Requests begun and not yet answered. */
unsigned http_under_way(struct serve_http *h);
/* Stop listening, let the requests under way be answered (within their
 * time limits), free. */
void http_stop(struct serve_http *h);

#endif
