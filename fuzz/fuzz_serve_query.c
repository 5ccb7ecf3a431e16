/* fuzz_serve_query.c - libFuzzer harness for what memprof serve parses
 * itself (libmicrohttpd parses the HTTP): a request's query, key=value
 * pairs separated by '&' as libmicrohttpd hands them over one at a time
 * (serve/query.c, Mesos' durations included); when the first byte is 'R', the operator's
 * --target rules (serve/targets.c); when it is 'T', Prometheus' scrape
 * timeout header (query_scrape_timeout); when it is 'H', a Host header as
 * GET /targets hands it to scrapers (query_host_target).  A query taken
 * whole must hold only numbers in range, each given at most once; a Host
 * taken holds only an address's characters. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/query.h"
#include "serve/targets.h"

static void fuzz_query(char *s)
{
    struct query q = {.path = "/debug/pprof/heap", .params = "pid,seconds,duration,id,endpoint", .max_seconds = 600};
    bool ok = true;
    for (char *save = NULL, *kv = strtok_r(s, "&", &save); kv && ok;
         kv = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(kv, '=');
        if (eq)
            *eq = '\0';
        ok = query_take(&q, kv, eq ? eq + 1 : NULL);
        if (!ok && !q.problem[0])
            abort();    /* a refusal always says why */
    }
    if (ok && (q.seen_pid > 1 || q.seen_seconds > 1 || q.pid < 0 || q.pid > 0x3fffffff ||
               q.seconds > q.max_seconds || (q.seen_pid && !q.pid) ||
               (q.seen_seconds && !q.seconds) || q.seen_duration > 1 || q.seen_id > 1 ||
               (q.seen_duration && !(q.duration >= QUERY_DURATION_MIN &&
                                     q.duration <= QUERY_DURATION_MAX)) ||
               (q.seen_id && !q.run_id) || q.seen_endpoint > 1 ||
               (q.seen_endpoint && q.endpoint == QUERY_ENDPOINT_NONE)))
        abort();
}

static void fuzz_rule(const char *s)
{
    struct serve_rule r;
    struct mp_error err;
    if (targets_parse_rule(s, &r, &err) == 0)
        targets_free_rules(&r, 1);
}

static void fuzz_scrape_timeout(const char *s)
{
    double v;
    if (query_scrape_timeout(s, &v) && !(v >= 0.001 && v <= QUERY_SCRAPE_TIMEOUT_MAX))
        abort();
}

static void fuzz_host(const char *s)
{
    if (query_host_target(s) &&
        (strlen(s) > 255 || s[strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789.-:[]")] != '\0'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *s = malloc(size + 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    if (size && s[0] == 'R')
        fuzz_rule(s + 1);
    else if (size && s[0] == 'H')
        fuzz_host(s + 1);
    else if (size && s[0] == 'T')
        fuzz_scrape_timeout(s + 1);
    else
        fuzz_query(s);
    free(s);
    return 0;
}
