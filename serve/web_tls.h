/* web_tls.h - the TLS half of --web-config: the certificate, key and
 * client CAs its tls_server_config names, read once at start and checked
 * with GnuTLS (the library under libmicrohttpd's TLS) so that a bad file
 * is refused with its name before anything listens; the GnuTLS priority
 * string its versions make; and, per request, whether the client's
 * certificate passes the policy. */
#ifndef MEMPROF_SERVE_WEB_TLS_H
#define MEMPROF_SERVE_WEB_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lib/base/error.h"
#include "serve/web_config.h"

struct web_tls {
    char *cert_pem;             /* NUL-terminated PEM, for libmicrohttpd */
    char *key_pem;
    char *client_ca_pem;        /* NULL: no client certificates asked for */
    enum web_client_auth client_auth;
    char priorities[128];       /* GnuTLS's: the versions allowed */
    char versions[24];          /* "TLS 1.2 to 1.3", for the agent's first line */
};

/* Read and check what wc's tls_server_config names (wc->tls).  A key
 * file others may read is said on warn, as sshd would.  -1 with err
 * naming the file and what to do. */
int web_tls_load(const struct web_config *wc, struct web_tls *t, FILE *warn,
                 struct mp_error *err);
void web_tls_free(struct web_tls *t);

/* Whether the client of a TLS session (a gnutls_session_t) may go on
 * under t's client_auth_type: true, or false with why (for the log). */
bool web_tls_client_ok(const struct web_tls *t, void *gnutls_session, char *why, size_t len);

#endif
