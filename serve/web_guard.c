/* web_guard.c - --web-config applied to libmicrohttpd (web_guard.h). */
#include "serve/web_guard.h"

#include <stdlib.h>
#include <string.h>

#include "lib/base/text_escape.h"

int web_guard_open(const char *path, struct web_guard *g, FILE *warn, struct mp_error *err)
{
    memset(g, 0, sizeof *g);
    if (web_config_read(path, &g->config, err) < 0)
        return -1;
    if (g->config.tls) {
        if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
            web_config_free(&g->config);
            return mp_error_set(err, "--web-config %s asks for TLS, but this libmicrohttpd "
                                "was built without it: install Debian's libmicrohttpd12 "
                                "(built with GnuTLS), or remove tls_server_config", path);
        }
        if (web_tls_load(&g->config, &g->tls, warn, err) < 0) {
            web_config_free(&g->config);
            return mp_error_prefix(err, "--web-config %s", path);
        }
    }
    if (g->config.nusers) {
        g->auth = web_auth_new(g->config.users, g->config.nusers, err);
        if (!g->auth) {
            web_guard_close(g);
            return -1;
        }
    }
    return 0;
}

void web_guard_close(struct web_guard *g)
{
    web_auth_free(g->auth);
    web_tls_free(&g->tls);
    web_config_free(&g->config);
    memset(g, 0, sizeof *g);
}

void web_guard_describe(const struct web_guard *g, char *buf, size_t len)
{
    char users[48] = "";
    if (g->config.nusers)
        snprintf(users, sizeof users, ", basic auth (%zu user%s)", g->config.nusers,
                 g->config.nusers == 1 ? "" : "s");
    snprintf(buf, len, "%s%s%s%s%s", g->config.tls ? ", https (" : "",
             g->config.tls ? g->tls.versions : "", g->config.tls ? ")" : "",
             g->config.client_auth == WEB_CLIENT_CERT_REQUIRE_VERIFIED ? ", client certificates"
             : g->config.client_auth == WEB_CLIENT_CERT_VERIFY_IF_GIVEN
                 ? ", client certificates checked if given" : "", users);
}

void web_guard_mhd_options(const struct web_guard *g, struct MHD_OptionItem *items,
                           unsigned *flags)
{
    size_t n = 0;
    if (g && g->config.tls) {
        *flags |= MHD_USE_TLS;
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0, g->tls.cert_pem};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, g->tls.key_pem};
        items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
                                             (void *)g->tls.priorities};
        /* With a trust list libmicrohttpd asks every client for its
         * certificate; web_guard_check judges what came. */
        if (g->tls.client_ca_pem)
            items[n++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
                                                 g->tls.client_ca_pem};
    }
    items[n] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
}

int web_guard_check(const struct web_guard *g, struct MHD_Connection *c, char *why,
                    size_t len)
{
    if (!g)
        return 0;
    if (g->config.tls && g->config.client_auth != WEB_CLIENT_CERT_NONE) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
        if (!web_tls_client_ok(&g->tls, ci ? ci->tls_session : NULL, why, len))
            return 403;
    }
    if (!g->auth)
        return 0;
    char *password = NULL;
    char *user = MHD_basic_auth_get_username_password(c, &password);
    enum web_auth_verdict v = web_auth_check(g->auth, user, password);
    char ub[TEXT_ESCAPE_BUF];
    switch (v) {
    case WEB_AUTH_OK: break;
    case WEB_AUTH_NO_CREDENTIALS: snprintf(why, len, "no basic-auth credentials"); break;
    case WEB_AUTH_UNKNOWN_USER:
        snprintf(why, len, "no such user '%s'", text_escape(user, ub, sizeof ub));
        break;
    case WEB_AUTH_WRONG_PASSWORD:
        snprintf(why, len, "wrong password for user '%s'", text_escape(user, ub, sizeof ub));
        break;
    }
    if (password) {
        explicit_bzero(password, strlen(password));
        MHD_free(password);
    }
    if (user)
        MHD_free(user);
    return v == WEB_AUTH_OK ? 0 : 401;
}

void web_guard_headers(const struct web_guard *g, struct MHD_Response *resp, int status)
{
    if (!g)
        return;
    if (status == 401)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
                                "Basic realm=\"memprof\", charset=\"UTF-8\"");
    for (size_t i = 0; i < g->config.nheaders; i++)
        /* X-Content-Type-Options: nosniff is on every reply already. */
        if (strcmp(g->config.headers[i].name, "X-Content-Type-Options") != 0)
            MHD_add_response_header(resp, g->config.headers[i].name,
                                    g->config.headers[i].value);
}
