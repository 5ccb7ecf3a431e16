/* web_tls.c - the files tls_server_config names, read once at start and
 * checked with GnuTLS (web_tls.h); client certificates checked per
 * request.  Read once: the agent is restarted to take a new certificate
 * (the toolkit reads its files again on every connection). */
#include "serve/web_tls.h"

#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* A PEM file larger than this is no certificate or key of ours. */
#define PEM_MAX_BYTES (1024 * 1024)

/* The whole of path (key: "key_file", for messages), NUL-terminated. */
static char *read_pem(const char *key, const char *path, bool secret, FILE *warn,
                      struct mp_error *err)
{
    size_t len = 0;
    unsigned mode = 0;
    char *text = web_config_file_read(path, PEM_MAX_BYTES, &len, &mode);
    if (!text) {
        mp_error_set(err, "%s %s: cannot read it: %s (a relative name is taken from the web "
                     "config's folder)", key, path, errno == EINVAL ? "not a regular file"
                     : errno == EFBIG ? "larger than 1 MiB, no PEM file" : strerror(errno));
        return NULL;
    }
    /* As sshd: the agent runs as root, and a key others can read is
     * everyone's. */
    if (secret && (mode & 077) && warn)
        fprintf(warn, "memprof serve: warning: %s %s is open to other users (mode %04o): "
                "chmod 600 it\n", key, path, mode & 07777);
    if (strlen(text) != len) {
        mp_error_set(err, "%s %s: not a PEM file (it holds NUL bytes)", key, path);
        free(text);
        return NULL;
    }
    return text;
}

static char *pem_of(const char *key, const char *file, const char *inline_pem, bool secret,
                    FILE *warn, struct mp_error *err)
{
    if (file)
        return read_pem(key, file, secret, warn, err);
    char *copy = strdup(inline_pem);
    if (!copy)
        mp_error_set(err, "out of memory");
    return copy;
}

static gnutls_datum_t datum(const char *pem)
{
    return (gnutls_datum_t){.data = (unsigned char *)pem, .size = (unsigned)strlen(pem)};
}

/* The certificates in pem: how many, or -1 with err.  Expired ones are
 * said on warn. */
static int check_certs(const char *what, const char *pem, FILE *warn, struct mp_error *err)
{
    gnutls_x509_crt_t *certs = NULL;
    unsigned n = 0;
    gnutls_datum_t d = datum(pem);
    int rc = gnutls_x509_crt_list_import2(&certs, &n, &d, GNUTLS_X509_FMT_PEM, 0);
    if (rc < 0 || n == 0)
        return mp_error_set(err, "%s: no PEM certificate could be read from it: %s", what,
                            rc < 0 ? gnutls_strerror(rc) : "none found");
    time_t now = time(NULL);
    for (unsigned i = 0; i < n; i++) {
        time_t end = gnutls_x509_crt_get_expiration_time(certs[i]);
        if (warn && end != (time_t)-1 && end < now)
            fprintf(warn, "memprof serve: warning: %s: certificate %u of %u has expired\n",
                    what, i + 1, n);
        gnutls_x509_crt_deinit(certs[i]);
    }
    gnutls_free(certs);
    return (int)n;
}

int web_tls_load(const struct web_config *wc, struct web_tls *t, FILE *warn,
                 struct mp_error *err)
{
    memset(t, 0, sizeof *t);
    char cert_what[600], key_what[600], ca_what[600];
    snprintf(cert_what, sizeof cert_what, wc->cert_file ? "cert_file %s" : "cert%s",
             wc->cert_file ? wc->cert_file : "");
    snprintf(key_what, sizeof key_what, wc->key_file ? "key_file %s" : "key%s",
             wc->key_file ? wc->key_file : "");
    snprintf(ca_what, sizeof ca_what, wc->client_ca_file ? "client_ca_file %s" : "client_ca%s",
             wc->client_ca_file ? wc->client_ca_file : "");
    t->cert_pem = pem_of("cert_file", wc->cert_file, wc->cert_pem, false, warn, err);
    if (!t->cert_pem)
        goto fail;
    t->key_pem = pem_of("key_file", wc->key_file, wc->key_pem, wc->key_file != NULL, warn, err);
    if (!t->key_pem)
        goto fail;
    if (wc->client_ca_file || wc->client_ca_pem) {
        t->client_ca_pem = pem_of("client_ca_file", wc->client_ca_file, wc->client_ca_pem,
                                  false, warn, err);
        if (!t->client_ca_pem || check_certs(ca_what, t->client_ca_pem, warn, err) < 0)
            goto fail;
    }
    if (check_certs(cert_what, t->cert_pem, warn, err) < 0)
        goto fail;

    gnutls_x509_privkey_t key;
    if (gnutls_x509_privkey_init(&key) < 0) {
        mp_error_set(err, "out of memory");
        goto fail;
    }
    gnutls_datum_t kd = datum(t->key_pem);
    int rc = gnutls_x509_privkey_import2(key, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_x509_privkey_deinit(key);
    if (rc < 0) {
        mp_error_set(err, "%s: no private key could be read from it: %s (an unencrypted PEM "
                     "key is needed: openssl pkey -in KEY -out KEY.plain)", key_what,
                     gnutls_strerror(rc));
        goto fail;
    }
    /* The pair: GnuTLS checks that the key is the certificate's. */
    gnutls_certificate_credentials_t cred;
    if (gnutls_certificate_allocate_credentials(&cred) < 0) {
        mp_error_set(err, "out of memory");
        goto fail;
    }
    gnutls_datum_t cd = datum(t->cert_pem);
    rc = gnutls_certificate_set_x509_key_mem2(cred, &cd, &kd, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(cred);
    if (rc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH) {
        mp_error_set(err, "%s is not the private key of the certificate in %s: give the key "
                     "the certificate was made for", key_what, cert_what);
        goto fail;
    }
    if (rc < 0) {
        mp_error_set(err, "%s with %s: GnuTLS refuses the pair: %s", cert_what, key_what,
                     gnutls_strerror(rc));
        goto fail;
    }

    /* The versions: the toolkit's defaults are TLS 1.2 to 1.3. */
    static const char *const vers[] = {[WEB_TLS10] = "TLS1.0", [WEB_TLS11] = "TLS1.1",
                                       [WEB_TLS12] = "TLS1.2", [WEB_TLS13] = "TLS1.3"};
    static const char *const shown[] = {[WEB_TLS10] = "1.0", [WEB_TLS11] = "1.1",
                                        [WEB_TLS12] = "1.2", [WEB_TLS13] = "1.3"};
    int lo = wc->min_version ? (int)wc->min_version : WEB_TLS12;
    int hi = wc->max_version ? (int)wc->max_version : WEB_TLS13;
    if (lo > hi) {
        mp_error_set(err, "tls_server_config: min_version TLS%s is above the maximum TLS%s",
                     shown[lo], shown[hi]);
        goto fail;
    }
    size_t off = (size_t)snprintf(t->priorities, sizeof t->priorities, "NORMAL:-VERS-ALL");
    for (int v = hi; v >= lo; v--)
        off += (size_t)snprintf(t->priorities + off, sizeof t->priorities - off, ":+VERS-%s",
                                vers[v]);
    if (wc->prefer_server_cipher_suites)
        snprintf(t->priorities + off, sizeof t->priorities - off, ":%%SERVER_PRECEDENCE");
    gnutls_priority_t prio;
    const char *where = NULL;
    rc = gnutls_priority_init(&prio, t->priorities, &where);
    if (rc < 0) {
        mp_error_set(err, "tls_server_config: GnuTLS refuses the versions asked (%s, at '%s'): "
                     "%s", t->priorities, where ? where : "?", gnutls_strerror(rc));
        goto fail;
    }
    gnutls_priority_deinit(prio);
    if (lo == hi)
        snprintf(t->versions, sizeof t->versions, "TLS %s", shown[lo]);
    else
        snprintf(t->versions, sizeof t->versions, "TLS %s to %s", shown[lo], shown[hi]);
    t->client_auth = wc->client_auth;
    return 0;
fail:
    web_tls_free(t);
    return -1;
}

void web_tls_free(struct web_tls *t)
{
    if (t->key_pem)
        explicit_bzero(t->key_pem, strlen(t->key_pem));
    free(t->cert_pem);
    free(t->key_pem);
    free(t->client_ca_pem);
    memset(t, 0, sizeof *t);
}

bool web_tls_client_ok(const struct web_tls *t, void *gnutls_session, char *why, size_t len)
{
    if (t->client_auth == WEB_CLIENT_CERT_NONE)
        return true;
    gnutls_session_t s = gnutls_session;
    unsigned n = 0;
    if (!s) {
        snprintf(why, len, "no TLS session");
        return false;
    }
    if (!gnutls_certificate_get_peers(s, &n) || n == 0) {
        if (t->client_auth == WEB_CLIENT_CERT_VERIFY_IF_GIVEN)
            return true;
        snprintf(why, len, "no client certificate");
        return false;
    }
    unsigned status = 0;
    int rc = gnutls_certificate_verify_peers2(s, &status);
    if (rc < 0) {
        snprintf(why, len, "its client certificate could not be checked: %s",
                 gnutls_strerror(rc));
        return false;
    }
    if (status) {
        gnutls_datum_t out = {0};
        if (gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &out, 0) == 0) {
            snprintf(why, len, "client certificate refused: %s", (const char *)out.data);
            gnutls_free(out.data);
        } else
            snprintf(why, len, "client certificate refused (status 0x%x)", status);
        return false;
    }
    return true;
}
