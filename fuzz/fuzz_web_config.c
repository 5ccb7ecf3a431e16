/* fuzz_web_config.c - libFuzzer harness for memprof serve's --web-config
 * parser (serve/web_config.c, over libyaml): any bytes either parse into a
 * config that keeps the parser's promises (users with whole bcrypt
 * hashes, no name twice, no ':' in a name; TLS with a certificate and a
 * key) or are refused saying why. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/web_config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct web_config wc;
    struct mp_error err;
    err.msg[0] = '\0';
    if (web_config_parse((const char *)data, size, "/etc/memprof", &wc, &err) < 0) {
        if (!err.msg[0] || wc.nusers || wc.users || wc.cert_file)
            abort();    /* a refusal says why, and leaves nothing behind */
        return 0;
    }
    for (size_t i = 0; i < wc.nusers; i++) {
        if (!web_config_is_bcrypt(wc.users[i].hash) || strchr(wc.users[i].name, ':') ||
            !wc.users[i].name[0])
            abort();
        for (size_t j = 0; j < i; j++)
            if (strcmp(wc.users[i].name, wc.users[j].name) == 0)
                abort();
    }
    if (wc.tls && (!(wc.cert_file || wc.cert_pem) || !(wc.key_file || wc.key_pem)))
        abort();
    if (wc.cert_file && wc.cert_file[0] != '/')
        abort();        /* relative names are taken from the file's folder */
    if (wc.nheaders > WEB_HEADERS_MAX)
        abort();
    web_config_free(&wc);
    return 0;
}
