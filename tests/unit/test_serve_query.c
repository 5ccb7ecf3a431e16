/* test_serve_query.c - the parts of a request GET /targets reads
 * (serve/query.c): ?endpoint= takes heap, allocs or metrics, once; the
 * Host header names this agent in the targets only when it is an address
 * (a DNS name or IPv4, or [IPv6], and an optional port 1..65535). */
#include "tests/unit/unit.h"

#include <string.h>

#include "serve/query.h"

static bool take(struct query *q, const char *key, const char *value)
{
    return query_take(q, key, value);
}

START_TEST(endpoint_values)
{
    struct query q = {.path = "/targets", .params = "endpoint"};
    ck_assert(take(&q, "endpoint", "metrics"));
    ck_assert_int_eq(q.endpoint, QUERY_ENDPOINT_METRICS);
    ck_assert(!take(&q, "endpoint", "heap"));     /* twice */
    struct query r = {.path = "/targets", .params = "endpoint"};
    ck_assert(!take(&r, "endpoint", "cpu"));
    ck_assert_ptr_nonnull(strstr(r.problem, "heap, allocs or metrics"));
    struct query s = {.path = "/targets", .params = "endpoint"};
    ck_assert(!take(&s, "endpoint", NULL));
    struct query t = {.path = "/targets", .params = "endpoint"};
    ck_assert(take(&t, "endpoint", "allocs") && t.endpoint == QUERY_ENDPOINT_ALLOCS);
    struct query u = {.path = "/metrics", .params = "pid"};
    ck_assert(!take(&u, "endpoint", "heap"));     /* not /metrics' */
}
END_TEST

START_TEST(host_is_an_address)
{
    const char *good[] = {"127.0.0.1:9188", "10.244.1.17:9188", "memprof-0.node-a:9188",
                          "localhost", "[::1]:9188", "[fe80::1]", "a:65535"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        ck_assert_msg(query_host_target(good[i]), "%s", good[i]);
    char longname[300];
    memset(longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    const char *bad[] = {NULL, "", "user@host", "host/path", "host:0", "host:65536",
                         "host:", "host:80x", "[::1", "[]", "-host", ".host", "a b",
                         "host:9188:1", "[::1]x", longname};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!query_host_target(bad[i]), "%s", bad[i] ? bad[i] : "NULL");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("serve_query");
    TCase *tc = tcase_create("targets");
    tcase_add_test(tc, endpoint_values);
    tcase_add_test(tc, host_is_an_address);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(suite)
