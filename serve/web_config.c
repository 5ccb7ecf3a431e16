/* web_config.c - the exporter toolkit's web configuration file
 * (web_config.h), parsed with libyaml's document loader and checked key by
 * key: the toolkit reads it with a strict YAML decoder, so an unknown key
 * is an error there too, and here every key it knows is either honoured
 * or refused saying why, never passed over.  Errors name the line (1 is
 * the first) and the key. */
#include "serve/web_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "lib/base/file_read.h"
#include "lib/base/text_escape.h"

/* basic_auth_users is for a few users (the toolkit says so too); a bound
 * keeps the duplicate check's cost small whatever the file holds. */
#define WEB_USERS_MAX 1000

struct walk {
    yaml_document_t *doc;
    const char *dir;
    struct web_config *wc;
    struct mp_error *err;
};

static unsigned long line_of(const yaml_node_t *n)
{
    return (unsigned long)n->start_mark.line + 1;
}

static int at(struct walk *w, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int at(struct walk *w, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[sizeof w->err->msg - 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return mp_error_set(w->err, "line %lu: %s", line_of(n), msg);
}

/* A scalar's text, for messages: escaped (the file is the operator's, but
 * a terminal still should not take its bytes as commands). */
static const char *shown(const yaml_node_t *n, char *buf, size_t len)
{
    return text_escape((const char *)n->data.scalar.value, buf, len);
}

/* YAML's null: nothing after the colon, ~ or null (plain, untagged). */
static bool is_null(const yaml_node_t *n)
{
    if (n->type != YAML_SCALAR_NODE)
        return false;
    if (strcmp((const char *)n->tag, YAML_NULL_TAG) == 0)
        return true;
    if (n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    const char *v = (const char *)n->data.scalar.value;
    return !*v || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 || strcmp(v, "Null") == 0 ||
           strcmp(v, "NULL") == 0;
}

static const char *kind_name(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    default: return "a scalar";
    }
}

/* A string value: any scalar's text (the toolkit's decoder takes 123 as
 * "123" too); NULL for null.  No NUL byte inside ("\0" in double quotes). */
static int string_value(struct walk *w, const char *key, const yaml_node_t *v, char **out)
{
    if (v->type != YAML_SCALAR_NODE)
        return at(w, v, "%s takes a string, not %s", key, kind_name(v));
    if (strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
        return at(w, v, "%s holds a NUL byte", key);
    free(*out);
    *out = NULL;
    if (is_null(v))
        return 0;
    *out = strdup((const char *)v->data.scalar.value);
    return *out ? 0 : mp_error_set(w->err, "out of memory");
}

/* A boolean as YAML 1.1 writes it (the toolkit's decoder): plain true,
 * false, yes, no, on, off, y, n in any of their usual cases. */
static int bool_value(struct walk *w, const char *key, const yaml_node_t *v, bool *out)
{
    static const char *const yes[] = {"true", "True", "TRUE", "yes", "Yes", "YES",
                                      "on", "On", "ON", "y", "Y"};
    static const char *const no[] = {"false", "False", "FALSE", "no", "No", "NO",
                                     "off", "Off", "OFF", "n", "N"};
    if (v->type == YAML_SCALAR_NODE && v->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        const char *s = (const char *)v->data.scalar.value;
        for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
            if (strcmp(s, yes[i]) == 0)
                return *out = true, 0;
            if (strcmp(s, no[i]) == 0)
                return *out = false, 0;
        }
    }
    return at(w, v, "%s takes true or false (unquoted), not %s", key,
               v->type == YAML_SCALAR_NODE ? "that" : kind_name(v));
}

/* A key of a mapping: a scalar. */
static const char *key_text(struct walk *w, const yaml_node_t *k)
{
    if (k->type != YAML_SCALAR_NODE || is_null(k)) {
        at(w, k, "a key must be a name, not %s", is_null(k) ? "empty" : kind_name(k));
        return NULL;
    }
    return (const char *)k->data.scalar.value;
}

/* One pair of a mapping: its key's name (NULL with err when the key is
 * no name), *k and *v set. */
static const char *pair(struct walk *w, const yaml_node_pair_t *p, const yaml_node_t **k,
                        const yaml_node_t **v)
{
    *k = yaml_document_get_node(w->doc, p->key);
    *v = yaml_document_get_node(w->doc, p->value);
    return key_text(w, *k);
}

/* Where name is in table (n: not there). */
static unsigned index_of(const char *name, const char *const *table, unsigned n)
{
    unsigned i = 0;
    while (i < n && strcmp(name, table[i]) != 0)
        i++;
    return i;
}

/* The value of a section: a mapping, or null for an empty one. */
static int section_value(struct walk *w, const char *key, const yaml_node_t *v)
{
    if (v->type == YAML_MAPPING_NODE || is_null(v))
        return 0;
    return at(w, v, "%s takes a mapping of keys, not %s", key, kind_name(v));
}

/* A list the toolkit takes that memprof does not honour: accepted empty
 * (the toolkit's defaults, which are memprof's), refused otherwise. */
static int unsupported_list(struct walk *w, const char *key, const yaml_node_t *v,
                            const char *why)
{
    if (is_null(v) || (v->type == YAML_SEQUENCE_NODE &&
                       v->data.sequence.items.top == v->data.sequence.items.start))
        return 0;
    return at(w, v, "%s is not supported by memprof serve: %s", key, why);
}

/* Relative file names are taken from the config file's folder, as the
 * toolkit does. */
static int file_value(struct walk *w, const char *key, const yaml_node_t *v, char **out)
{
    if (string_value(w, key, v, out) < 0)
        return -1;
    if (!*out || (*out)[0] == '/' || !w->dir)
        return 0;
    char *joined;
    if (asprintf(&joined, "%s/%s", w->dir, *out) < 0)
        return mp_error_set(w->err, "out of memory");
    free(*out);
    *out = joined;
    return 0;
}

static int version_value(struct walk *w, const char *key, const yaml_node_t *v,
                         enum web_tls_version *out)
{
    static const char *const names[] = {[WEB_TLS10] = "TLS10", [WEB_TLS11] = "TLS11",
                                        [WEB_TLS12] = "TLS12", [WEB_TLS13] = "TLS13"};
    char *s = NULL;
    if (string_value(w, key, v, &s) < 0)
        return -1;
    *out = WEB_TLS_UNSET;
    for (int i = WEB_TLS10; s && i <= WEB_TLS13; i++)
        if (strcmp(s, names[i]) == 0)
            *out = (enum web_tls_version)i;
    free(s);
    if (*out == WEB_TLS_UNSET) {
        char b[64];
        return at(w, v, "%s: unknown TLS version '%s' (TLS10, TLS11, TLS12 or TLS13)", key,
                  v->type == YAML_SCALAR_NODE ? shown(v, b, sizeof b) : "");
    }
    return 0;
}

static int client_auth_value(struct walk *w, const yaml_node_t *v, bool *given)
{
    char *s = NULL;
    if (string_value(w, "client_auth_type", v, &s) < 0)
        return -1;
    int rc = 0;
    *given = s && *s;
    if (!s || !*s || strcmp(s, "NoClientCert") == 0)
        w->wc->client_auth = WEB_CLIENT_CERT_NONE;
    else if (strcmp(s, "VerifyClientCertIfGiven") == 0)
        w->wc->client_auth = WEB_CLIENT_CERT_VERIFY_IF_GIVEN;
    else if (strcmp(s, "RequireAndVerifyClientCert") == 0)
        w->wc->client_auth = WEB_CLIENT_CERT_REQUIRE_VERIFIED;
    else if (strcmp(s, "RequestClientCert") == 0 || strcmp(s, "RequireAnyClientCert") == 0 ||
             strcmp(s, "RequireClientCert") == 0)
        rc = at(w, v, "client_auth_type %s is not supported by memprof serve: a certificate "
                "no CA vouches for proves nothing (the toolkit calls it insecure); use "
                "RequireAndVerifyClientCert with client_ca_file", s);
    else {
        char b[64];
        rc = at(w, v, "client_auth_type: unknown policy '%s' (NoClientCert, "
                "VerifyClientCertIfGiven or RequireAndVerifyClientCert)", shown(v, b, sizeof b));
    }
    free(s);
    return rc;
}

/* Each mapping's keys once: the toolkit's decoder refuses a key given
 * twice too.  seen is a bit per known key. */
static int once(struct walk *w, const yaml_node_t *k, const char *section, unsigned *seen,
                unsigned bit)
{
    if (*seen & (1u << bit))
        return at(w, k, "%s%s%s given twice", section, *section ? "." : "",
                  (const char *)k->data.scalar.value);
    *seen |= 1u << bit;
    return 0;
}

static int unknown_key(struct walk *w, const yaml_node_t *k, const char *section,
                       const char *known)
{
    char b[64];
    return at(w, k, "unknown key '%s'%s%s (%s takes: %s)", shown(k, b, sizeof b),
              *section ? " in " : "", section, *section ? section : "the file", known);
}

static int walk_tls(struct walk *w, const yaml_node_t *map)
{
    static const char *const keys[] = {
        "cert", "key", "client_ca", "cert_file", "key_file", "client_auth_type",
        "client_ca_file", "client_allowed_sans", "min_version", "max_version",
        "cipher_suites", "prefer_server_cipher_suites", "curve_preferences"};
    struct web_config *wc = w->wc;
    unsigned seen = 0;
    bool auth_given = false, options = false;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k, *v;
        const char *name = pair(w, p, &k, &v);
        if (!name)
            return -1;
        unsigned nkeys = sizeof keys / sizeof keys[0], i = index_of(name, keys, nkeys);
        if (i == nkeys)
            return unknown_key(w, k, "tls_server_config",
                               "cert_file, key_file, cert, key, client_auth_type, "
                               "client_ca_file, client_ca, min_version, max_version, "
                               "prefer_server_cipher_suites");
        if (once(w, k, "tls_server_config", &seen, i) < 0)
            return -1;
        int rc = 0;
        if (strcmp(name, "cert") == 0)
            rc = string_value(w, name, v, &wc->cert_pem);
        else if (strcmp(name, "key") == 0)
            rc = string_value(w, name, v, &wc->key_pem);
        else if (strcmp(name, "client_ca") == 0)
            rc = string_value(w, name, v, &wc->client_ca_pem);
        else if (strcmp(name, "cert_file") == 0)
            rc = file_value(w, name, v, &wc->cert_file);
        else if (strcmp(name, "key_file") == 0)
            rc = file_value(w, name, v, &wc->key_file);
        else if (strcmp(name, "client_ca_file") == 0)
            rc = file_value(w, name, v, &wc->client_ca_file);
        else if (strcmp(name, "client_auth_type") == 0)
            rc = client_auth_value(w, v, &auth_given);
        else if (strcmp(name, "min_version") == 0)
            rc = version_value(w, name, v, &wc->min_version), options = true;
        else if (strcmp(name, "max_version") == 0)
            rc = version_value(w, name, v, &wc->max_version), options = true;
        else if (strcmp(name, "prefer_server_cipher_suites") == 0)
            rc = bool_value(w, name, v, &wc->prefer_server_cipher_suites), options = true;
        else if (strcmp(name, "cipher_suites") == 0)
            rc = unsupported_list(w, name, v, "its TLS is GnuTLS's (through libmicrohttpd), "
                                  "which does not know Go's cipher suite names; remove it "
                                  "(GnuTLS's defaults for the versions allowed apply)");
        else if (strcmp(name, "curve_preferences") == 0)
            rc = unsupported_list(w, name, v, "its TLS is GnuTLS's, whose defaults apply; "
                                  "remove it");
        else if (strcmp(name, "client_allowed_sans") == 0)
            rc = unsupported_list(w, name, v, "client certificates are checked against "
                                  "client_ca_file only; remove it, or give the clients a CA "
                                  "of their own");
        if (rc < 0)
            return -1;
    }
    const yaml_node_t *first = map;     /* whole-section errors name its first line */
    /* As the toolkit: TLS is on when a certificate, a key, a client CA or
     * a client policy is given, and then needs both halves. */
    wc->tls = wc->cert_file || wc->cert_pem || wc->key_file || wc->key_pem ||
              wc->client_ca_file || wc->client_ca_pem || auth_given;
    if (!wc->tls && options)
        return at(w, first, "tls_server_config sets TLS options but no certificate: add "
                  "cert_file and key_file (or remove the section to serve plain HTTP)");
    if (!wc->tls)
        return 0;
    if (wc->cert_file && wc->cert_pem)
        return at(w, first, "tls_server_config: give cert_file or cert, not both");
    if (wc->key_file && wc->key_pem)
        return at(w, first, "tls_server_config: give key_file or key, not both");
    if (wc->client_ca_file && wc->client_ca_pem)
        return at(w, first, "tls_server_config: give client_ca_file or client_ca, not both");
    if (!wc->cert_file && !wc->cert_pem)
        return at(w, first, "tls_server_config: missing cert_file (the server's certificate, "
                  "PEM)");
    if (!wc->key_file && !wc->key_pem)
        return at(w, first, "tls_server_config: missing key_file (the certificate's private "
                  "key, PEM)");
    bool ca = wc->client_ca_file || wc->client_ca_pem;
    if (ca && wc->client_auth == WEB_CLIENT_CERT_NONE)
        return at(w, first, "tls_server_config: client_ca_file is given without a "
                  "client_auth_type: say RequireAndVerifyClientCert (or "
                  "VerifyClientCertIfGiven)");
    if (!ca && wc->client_auth != WEB_CLIENT_CERT_NONE)
        return at(w, first, "tls_server_config: client_auth_type needs client_ca_file, the CA "
                  "certificates client certificates must be signed by");
    if (wc->min_version && wc->max_version && wc->min_version > wc->max_version)
        return at(w, first, "tls_server_config: min_version is above max_version");
    return 0;
}

static int walk_http(struct walk *w, const yaml_node_t *map)
{
    /* The five the toolkit allows, and the values it allows (NULL: any). */
    static const struct { const char *name; const char *values[3]; } allowed[] = {
        {"Content-Security-Policy", {NULL}},
        {"X-Frame-Options", {"deny", "sameorigin", NULL}},
        {"X-Content-Type-Options", {"nosniff", NULL}},
        {"X-XSS-Protection", {NULL}},
        {"Strict-Transport-Security", {NULL}},
    };
    unsigned seen = 0;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k, *v;
        const char *name = pair(w, p, &k, &v);
        if (!name)
            return -1;
        if (strcmp(name, "http2") == 0) {
            bool http2;
            if (once(w, k, "http_server_config", &seen, 0) < 0 ||
                bool_value(w, name, v, &http2) < 0)
                return -1;
            if (http2)
                return at(w, v, "http2: true is not supported: memprof serve speaks HTTP/1.1 "
                          "(libmicrohttpd has no HTTP/2); say http2: false or remove it");
            continue;
        }
        if (strcmp(name, "headers") != 0)
            return unknown_key(w, k, "http_server_config", "http2, headers");
        if (once(w, k, "http_server_config", &seen, 1) < 0 ||
            section_value(w, "http_server_config.headers", v) < 0)
            return -1;
        if (is_null(v))
            continue;
        unsigned hseen = 0;
        for (yaml_node_pair_t *h = v->data.mapping.pairs.start;
             h < v->data.mapping.pairs.top; h++) {
            const yaml_node_t *hk, *hv;
            const char *hname = pair(w, h, &hk, &hv);
            if (!hname)
                return -1;
            unsigned i = 0;
            while (i < sizeof allowed / sizeof allowed[0] && strcmp(hname, allowed[i].name) != 0)
                i++;
            if (i == sizeof allowed / sizeof allowed[0])
                return unknown_key(w, hk, "http_server_config.headers",
                                   "Content-Security-Policy, X-Frame-Options, "
                                   "X-Content-Type-Options, X-XSS-Protection, "
                                   "Strict-Transport-Security");
            if (once(w, hk, "http_server_config.headers", &hseen, i) < 0)
                return -1;
            char *value = NULL;
            if (string_value(w, hname, hv, &value) < 0)
                return -1;
            if (!value || !*value) {        /* blank: no header, as the toolkit */
                free(value);
                continue;
            }
            bool ok = !allowed[i].values[0];
            for (size_t j = 0; allowed[i].values[j]; j++)
                ok |= strcmp(value, allowed[i].values[j]) == 0;
            bool controls = false;
            for (const char *c = value; *c; c++)
                controls |= (unsigned char)*c < 0x20 || *c == 0x7f;
            if (!ok || controls) {
                free(value);
                char b[64];
                if (controls)
                    return at(w, hv, "%s: its value holds a control character", hname);
                return at(w, hv, "%s: '%s' is not a value it takes (%s%s%s)", hname,
                          shown(hv, b, sizeof b), allowed[i].values[0],
                          allowed[i].values[1] ? " or " : "",
                          allowed[i].values[1] ? allowed[i].values[1] : "");
            }
            w->wc->headers[w->wc->nheaders].name = allowed[i].name;
            w->wc->headers[w->wc->nheaders++].value = value;
        }
    }
    return 0;
}

bool web_config_is_bcrypt(const char *h)
{
    static const char alphabet[] =
        "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
        h[6] != '$' || h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9')
        return false;
    int cost = (h[4] - '0') * 10 + (h[5] - '0');
    if (cost < 4 || cost > 31)
        return false;
    for (size_t i = 7; i < 60; i++)
        if (!strchr(alphabet, h[i]))
            return false;
    return true;
}

static int walk_users(struct walk *w, const yaml_node_t *map)
{
    struct web_config *wc = w->wc;
    size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    if (n > WEB_USERS_MAX)
        return at(w, map, "basic_auth_users: %zu users, more than the %d memprof serve takes "
                  "(basic auth is for a few; client certificates suit many)", n, WEB_USERS_MAX);
    wc->users = calloc(n ? n : 1, sizeof *wc->users);
    if (!wc->users)
        return mp_error_set(w->err, "out of memory");
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const yaml_node_t *k, *v;
        const char *name = pair(w, p, &k, &v);
        if (!name)
            return -1;
        char b[64];
        if (strlen(name) != k->data.scalar.length || strchr(name, ':') || !text_is_safe(name))
            return at(w, k, "basic_auth_users: the user name '%s' cannot be sent in basic "
                      "auth (no ':', NUL or control characters)", shown(k, b, sizeof b));
        for (size_t i = 0; i < wc->nusers; i++)
            if (strcmp(wc->users[i].name, name) == 0)
                return at(w, k, "basic_auth_users: user '%s' given twice",
                          shown(k, b, sizeof b));
        char *hash = NULL;
        if (string_value(w, name, v, &hash) < 0)
            return -1;
        if (!hash || !web_config_is_bcrypt(hash)) {
            free(hash);
            return at(w, v, "basic_auth_users: the password of user '%s' is not a bcrypt hash "
                      "($2y$, $2b$ or $2a$, 60 characters): make one with "
                      "mkpasswd -m bcrypt (package whois) or htpasswd -nBC 10 \"\" "
                      "(apache2-utils)", shown(k, b, sizeof b));
        }
        wc->users[wc->nusers].name = strdup(name);
        wc->users[wc->nusers].hash = hash;
        if (!wc->users[wc->nusers].name) {
            free(hash);
            return mp_error_set(w->err, "out of memory");
        }
        wc->nusers++;
    }
    return 0;
}

static int walk_top(struct walk *w, const yaml_node_t *root)
{
    if (is_null(root))
        return 0;
    if (root->type != YAML_MAPPING_NODE)
        return at(w, root, "the file must be a mapping of tls_server_config, "
                  "http_server_config and basic_auth_users, not %s", kind_name(root));
    static const char *const sections[] = {"tls_server_config", "http_server_config",
                                           "basic_auth_users"};
    unsigned seen = 0;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         p < root->data.mapping.pairs.top; p++) {
        const yaml_node_t *k, *v;
        const char *name = pair(w, p, &k, &v);
        if (!name)
            return -1;
        if (strcmp(name, "rate_limit") == 0)
            return at(w, k, "rate_limit is not supported by memprof serve; remove it "
                      "(--max-connections bounds the requests served at once)");
        unsigned i = index_of(name, sections, 3);
        if (i == 3)
            return unknown_key(w, k, "", "tls_server_config, http_server_config, "
                               "basic_auth_users");
        if (once(w, k, "", &seen, i) < 0 || section_value(w, name, v) < 0)
            return -1;
        if (is_null(v))
            continue;
        int rc = i == 0 ? walk_tls(w, v) : i == 1 ? walk_http(w, v) : walk_users(w, v);
        if (rc < 0)
            return -1;
    }
    return 0;
}

int web_config_parse(const char *text, size_t len, const char *dir, struct web_config *wc,
                     struct mp_error *err)
{
    memset(wc, 0, sizeof *wc);
    wc->prefer_server_cipher_suites = true;
    if (len > WEB_CONFIG_MAX_BYTES)
        return mp_error_set(err, "%zu bytes, more than a web config's %d", len,
                            WEB_CONFIG_MAX_BYTES);
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser))
        return mp_error_set(err, "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    yaml_document_t doc;
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        rc = mp_error_set(err, "line %lu: not YAML: %s%s%s", (unsigned long)
                          parser.problem_mark.line + 1, parser.problem ? parser.problem : "?",
                          parser.context ? " " : "", parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        return rc;
    }
    struct walk w = {.doc = &doc, .dir = dir, .wc = wc, .err = err};
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root)
        rc = walk_top(&w, root);
    yaml_document_delete(&doc);
    /* One document: a second would be read by nobody. */
    if (rc == 0 && root) {
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next))
            rc = mp_error_set(err, "line %lu: not YAML: %s", (unsigned long)
                              parser.problem_mark.line + 1,
                              parser.problem ? parser.problem : "?");
        else {
            if (yaml_document_get_root_node(&next))
                rc = mp_error_set(err, "line %lu: a second YAML document; a web config is one",
                                  (unsigned long)next.start_mark.line + 1);
            yaml_document_delete(&next);
        }
    }
    yaml_parser_delete(&parser);
    if (rc < 0)
        web_config_free(wc);
    return rc;
}

char *web_config_file_read(const char *path, size_t max, size_t *len, unsigned *mode)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    *mode = (unsigned)st.st_mode;
    char *text = file_read_fd(fd, max + 1, len);
    close(fd);
    if (!text)
        errno = ENOMEM;
    else if (*len > max) {
        free(text);
        text = NULL;
        errno = EFBIG;
    }
    return text;
}

int web_config_read(const char *path, struct web_config *wc, struct mp_error *err)
{
    memset(wc, 0, sizeof *wc);
    size_t len = 0;
    unsigned mode;
    char *text = web_config_file_read(path, WEB_CONFIG_MAX_BYTES, &len, &mode);
    if (!text)
        return mp_error_set(err, "--web-config %s: cannot read it: %s (give the path of a "
                            "web configuration file; docs/serve.md shows one)", path,
                            errno == EINVAL ? "not a regular file" : errno == EFBIG
                            ? "larger than 1 MiB" : strerror(errno));
    char *dir = strdup(path), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash)
        *(slash == dir ? slash + 1 : slash) = '\0';
    int rc = dir ? web_config_parse(text, len, slash ? dir : NULL, wc, err)
                 : mp_error_set(err, "out of memory");
    free(dir);
    free(text);
    if (rc < 0)
        return mp_error_prefix(err, "--web-config %s", path);
    return 0;
}

void web_config_free(struct web_config *wc)
{
    free(wc->cert_file), free(wc->cert_pem);
    free(wc->key_file), free(wc->key_pem);
    free(wc->client_ca_file), free(wc->client_ca_pem);
    for (size_t i = 0; i < wc->nheaders; i++)
        free(wc->headers[i].value);
    for (size_t i = 0; i < wc->nusers; i++) {
        free(wc->users[i].name);
        free(wc->users[i].hash);
    }
    free(wc->users);
    memset(wc, 0, sizeof *wc);
}
