/* web_config.h - memprof serve's --web-config FILE, in the format of the
 * Prometheus exporter toolkit's web configuration file (the one
 * node_exporter and prometheus take with --web.config.file): TLS
 * (tls_server_config), response headers (http_server_config) and basic-auth
 * users with bcrypt hashes (basic_auth_users).  Parsing is apart from
 * reading the file, and free of the HTTP and TLS libraries, so that the
 * fuzzer drives it directly (fuzz/fuzz_web_config.c); what every key
 * means, and which the toolkit has that memprof refuses, is in
 * docs/serve.md.  serve/web_tls.c reads the files it names. */
#ifndef MEMPROF_SERVE_WEB_CONFIG_H
#define MEMPROF_SERVE_WEB_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/base/error.h"

/* A config file larger than this is not a web config. */
#define WEB_CONFIG_MAX_BYTES (1024 * 1024)

/* tls_server_config's client_auth_type, the ones memprof honours. */
enum web_client_auth {
    WEB_CLIENT_CERT_NONE,               /* NoClientCert (the default) */
    WEB_CLIENT_CERT_VERIFY_IF_GIVEN,    /* VerifyClientCertIfGiven */
    WEB_CLIENT_CERT_REQUIRE_VERIFIED,   /* RequireAndVerifyClientCert */
};

/* TLS protocol versions, in order; 0: not given. */
enum web_tls_version { WEB_TLS_UNSET, WEB_TLS10, WEB_TLS11, WEB_TLS12, WEB_TLS13 };

struct web_user {
    char *name;
    char *hash;                 /* bcrypt: $2a$, $2b$ or $2y$, checked whole */
};

/* A response header from http_server_config.headers (the toolkit allows
 * five names; a blank value is no header). */
struct web_header {
    const char *name;           /* one of the five, static */
    char *value;
};

#define WEB_HEADERS_MAX 5

struct web_config {
    bool tls;                   /* tls_server_config asks for TLS */
    /* Files, relative ones taken from the config file's folder (as the
     * toolkit does), or the PEM text itself (cert, key, client_ca): one
     * of each pair at most.  NULL: not given. */
    char *cert_file, *cert_pem;
    char *key_file, *key_pem;
    char *client_ca_file, *client_ca_pem;
    enum web_client_auth client_auth;
    enum web_tls_version min_version, max_version;  /* unset: TLS 1.2 to 1.3 */
    bool prefer_server_cipher_suites;               /* the toolkit's default: true */
    struct web_header headers[WEB_HEADERS_MAX];
    size_t nheaders;
    struct web_user *users;     /* none: no basic auth */
    size_t nusers;
};

/* Parse len bytes of YAML.  dir: the folder relative file names are taken
 * from (NULL: left as they are).  0, or -1 with err naming the line and
 * the key and saying what to write instead; *wc is then empty. */
int web_config_parse(const char *text, size_t len, const char *dir, struct web_config *wc,
                     struct mp_error *err);

/* Read and parse path: errors begin with the file's name. */
int web_config_read(const char *path, struct web_config *wc, struct mp_error *err);

/* The whole of path, a regular file (opened without blocking on a FIFO)
 * of at most max bytes, NUL-terminated, its length in *len and its mode in
 * *mode; NULL with errno set (EINVAL: not a regular file, EFBIG: larger
 * than max).  web_tls.c reads the files the config names with it. */
char *web_config_file_read(const char *path, size_t max, size_t *len, unsigned *mode);

/* The hash is a whole bcrypt hash ($2a$/$2b$/$2y$, cost 04 to 31, 53
 * characters of bcrypt's base64). */
bool web_config_is_bcrypt(const char *hash);

void web_config_free(struct web_config *wc);

#endif
