/* web_guard.h - what --web-config asks of every connection, in
 * libmicrohttpd's terms: the file read and checked at start (config, TLS
 * material, users), TLS options for the daemon, the check each request
 * passes before the router sees it (client certificate, basic auth), and
 * the headers every reply carries.  http.c calls it; the parts below it
 * (web_config, web_tls, web_auth) know nothing of libmicrohttpd. */
#ifndef MEMPROF_SERVE_WEB_GUARD_H
#define MEMPROF_SERVE_WEB_GUARD_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stdio.h>

#include "lib/base/error.h"
#include "serve/web_auth.h"
#include "serve/web_config.h"
#include "serve/web_tls.h"

struct web_guard {
    struct web_config config;
    struct web_tls tls;         /* with config.tls */
    struct web_auth *auth;      /* with users; NULL: no basic auth */
};

/* Read path and everything it names; warnings (a key others can read, an
 * expired certificate) on warn.  -1 with err: the file or a file it
 * names is wrong (exit 2), saying which and what to do. */
int web_guard_open(const char *path, struct web_guard *g, FILE *warn, struct mp_error *err);
void web_guard_close(struct web_guard *g);

/* What the agent's first line adds: ", https (TLS 1.2 to 1.3), basic auth
 * (2 users)". */
void web_guard_describe(const struct web_guard *g, char *buf, size_t len);

/* libmicrohttpd options for TLS, ending with MHD_OPTION_END (just that
 * without TLS), for MHD_OPTION_ARRAY; *flags gains MHD_USE_TLS. */
#define WEB_GUARD_MHD_OPTIONS 5
void web_guard_mhd_options(const struct web_guard *g, struct MHD_OptionItem *items,
                           unsigned *flags);

/* A request's headers are in: 0 to go on, or the HTTP status to answer
 * (401: basic auth; 403: client certificate) with why for the log (the
 * client hears the same whichever the reason). */
int web_guard_check(const struct web_guard *g, struct MHD_Connection *c, char *why,
                    size_t len);

/* Every reply: the configured headers, and on 401 the challenge. */
void web_guard_headers(const struct web_guard *g, struct MHD_Response *resp, int status);

#endif
