/* test_web_config.c - memprof serve's --web-config parser
 * (serve/web_config.c): the exporter toolkit's keys read, relative files
 * taken from the file's folder, and each wrong file refused naming its
 * line and key; bcrypt hashes checked whole. */
#include <string.h>

#include "serve/web_config.h"
#include "tests/unit/unit.h"

#define HASH_Y "$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"
#define HASH_B "$2b$12$hLqFl9jSjoAAy95Z/zw8Ye8wkdMBM8c5Bn1ptYqP/AXyV0.oy0S8m"

static int parse(const char *yaml, struct web_config *wc, struct mp_error *err)
{
    return web_config_parse(yaml, strlen(yaml), "/etc/memprof", wc, err);
}

/* The file is refused and the message holds want. */
static void refused(const char *yaml, const char *want)
{
    struct web_config wc;
    struct mp_error err;
    ck_assert_int_eq(parse(yaml, &wc, &err), -1);
    ck_assert_msg(strstr(err.msg, want), "'%s' lacks '%s'", err.msg, want);
    ck_assert_uint_eq(wc.nusers, 0);
}

START_TEST(the_toolkits_example_is_read)
{
    struct web_config wc;
    struct mp_error err;
    ck_assert_int_eq(parse("tls_server_config:\n"
                           "  cert_file: server.crt\n"
                           "  key_file: /keys/server.key\n"
                           "  min_version: TLS13\n"
                           "http_server_config:\n"
                           "  http2: false\n"
                           "  headers:\n"
                           "    X-Frame-Options: sameorigin\n"
                           "    X-XSS-Protection: ''\n"
                           "basic_auth_users:\n"
                           "  alice: " HASH_Y "\n"
                           "  bob: '" HASH_B "'\n", &wc, &err), 0);
    ck_assert(wc.tls);
    ck_assert_str_eq(wc.cert_file, "/etc/memprof/server.crt");
    ck_assert_str_eq(wc.key_file, "/keys/server.key");
    ck_assert_int_eq(wc.min_version, WEB_TLS13);
    ck_assert_int_eq(wc.max_version, WEB_TLS_UNSET);
    ck_assert(wc.prefer_server_cipher_suites);
    ck_assert_uint_eq(wc.nheaders, 1);          /* the blank one is no header */
    ck_assert_str_eq(wc.headers[0].name, "X-Frame-Options");
    ck_assert_uint_eq(wc.nusers, 2);
    ck_assert_str_eq(wc.users[1].name, "bob");
    ck_assert_str_eq(wc.users[1].hash, HASH_B);
    web_config_free(&wc);
}
END_TEST

START_TEST(empty_sections_and_files_ask_for_nothing)
{
    struct web_config wc;
    struct mp_error err;
    ck_assert_int_eq(parse("", &wc, &err), 0);
    ck_assert(!wc.tls && !wc.nusers);
    ck_assert_int_eq(parse("tls_server_config:\nbasic_auth_users: {}\n", &wc, &err), 0);
    ck_assert(!wc.tls && !wc.nusers);
    web_config_free(&wc);
}
END_TEST

START_TEST(wrong_files_name_line_and_key)
{
    refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  colour: x\n",
            "line 4: unknown key 'colour' in tls_server_config");
    refused("web: 1\n", "line 1: unknown key 'web'");
    refused("basic_auth_users:\n  a: " HASH_Y "\n  a: " HASH_B "\n",
            "line 3: basic_auth_users: user 'a' given twice");
    refused("basic_auth_users:\n  a: $1$salt$hash\n", "line 2: basic_auth_users: the password "
            "of user 'a' is not a bcrypt hash");
    refused("basic_auth_users:\n  'a:b': " HASH_Y "\n", "cannot be sent in basic auth");
    refused("basic_auth_users:\n  a: [x]\n", "line 2: a takes a string, not a list");
    refused("tls_server_config: yes\n", "tls_server_config takes a mapping of keys");
    refused("tls_server_config:\n  cert_file: a\n  cert_file: b\n",
            "line 3: tls_server_config.cert_file given twice");
    refused("tls_server_config:\n  cert_file: a\n", "missing key_file");
    refused("tls_server_config:\n  min_version: TLS12\n", "but no certificate");
    refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n",
            "line 4: min_version: unknown TLS version 'TLS14'");
    refused("tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
            "  max_version: TLS12\n", "min_version is above max_version");
    refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
            "  client_auth_type: RequireAnyClientCert\n", "is not supported");
    refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
            "  client_auth_type: RequireAndVerifyClientCert\n", "needs client_ca_file");
    refused("tls_server_config:\n  cert_file: a\n  key_file: b\n"
            "  prefer_server_cipher_suites: 'true'\n", "takes true or false");
    refused("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
            "line 3: X-Frame-Options: 'allow' is not a value it takes (deny or sameorigin)");
    refused("http_server_config:\n  headers:\n    Server: x\n", "unknown key 'Server'");
    refused("http_server_config:\n  http2: true\n", "http2: true is not supported");
    refused("rate_limit: {interval: 1s, burst: 2}\n", "rate_limit is not supported");
    refused("[1, 2]\n", "the file must be a mapping");
    refused("basic_auth_users: {}\n---\nc: d\n", "a second YAML document");
    refused("basic_auth_users: {a: \"x\\0y\"}\n", "holds a NUL byte");
    refused("{\n", "not YAML");
}
END_TEST

START_TEST(bcrypt_hashes_are_checked_whole)
{
    ck_assert(web_config_is_bcrypt(HASH_Y));
    ck_assert(web_config_is_bcrypt(HASH_B));
    ck_assert(!web_config_is_bcrypt("$2x$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"));
    ck_assert(!web_config_is_bcrypt("$2y$03$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPze"));
    ck_assert(!web_config_is_bcrypt("$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJPz"));
    ck_assert(!web_config_is_bcrypt("$2y$10$mDwo.lAisC94iLAyP81MCesa29IzH37oigHC/42V2pdJlUprsJP!e"));
    ck_assert(!web_config_is_bcrypt(""));
}
END_TEST

static Suite *web_config_suite(void)
{
    Suite *s = suite_create("web_config");
    TCase *tc = tcase_create("parse");
    tcase_add_test(tc, the_toolkits_example_is_read);
    tcase_add_test(tc, empty_sections_and_files_ask_for_nothing);
    tcase_add_test(tc, wrong_files_name_line_and_key);
    tcase_add_test(tc, bcrypt_hashes_are_checked_whole);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(web_config_suite)
