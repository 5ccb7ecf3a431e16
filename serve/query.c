/* query.c - a request's query, checked key by key (query.h). */
#include "serve/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/text_escape.h"

static bool param_known(const char *params, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = params; *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, key, n) == 0)
            return true;
        p += len + (comma ? 1 : 0);
    }
    return false;
}

/* A whole number from 1 to max, digits only. */
static bool parse_number(const char *v, unsigned long max, unsigned long *out)
{
    if (!v || !*v || strlen(v) > 10)
        return false;
    unsigned long x = 0;
    for (const char *c = v; *c; c++) {
        if (*c < '0' || *c > '9')
            return false;
        x = x * 10 + (unsigned long)(*c - '0');
    }
    if (x == 0 || x > max)
        return false;
    *out = x;
    return true;
}

static const struct {
    const char *name;
    double seconds;
} duration_units[] = {
    {"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"secs", 1}, {"mins", 60},
    {"hrs", 3600}, {"days", 86400}, {"weeks", 604800},
};

bool query_parse_duration(const char *text, double *seconds, char *why, size_t len)
{
    char tb[TEXT_ESCAPE_BUF];
    size_t digits = 0, dots = 0;
    while (text[digits] == '.' || (text[digits] >= '0' && text[digits] <= '9'))
        dots += text[digits++] == '.';
    const char *unit = text + digits;
    double factor = 0;
    for (size_t i = 0; i < sizeof duration_units / sizeof *duration_units; i++)
        if (strcmp(unit, duration_units[i].name) == 0)
            factor = duration_units[i].seconds;
    if (digits == 0 || dots > 1 || (digits == 1 && dots == 1) || factor == 0) {
        snprintf(why, len, "duration '%.40s' is not a duration: a number and a unit (ns, "
                 "us, ms, secs, mins, hrs, days, weeks), such as 5mins or 600secs",
                 text_escape(text, tb, sizeof tb));
        return false;
    }
    double v = strtod(text, NULL) * factor;
    if (!(v >= QUERY_DURATION_MIN && v <= QUERY_DURATION_MAX)) {
        snprintf(why, len, "duration '%.40s' is outside 1secs to 24hrs",
                 text_escape(text, tb, sizeof tb));
        return false;
    }
    *seconds = v;
    return true;
}

bool query_scrape_timeout(const char *text, double *seconds)
{
    size_t n = 0, dots = 0;
    for (; text[n]; n++) {
        if (text[n] == '.')
            dots++;
        else if (text[n] < '0' || text[n] > '9')
            return false;
    }
    if (n == 0 || n > 16 || dots > 1 || (n == 1 && dots == 1))
        return false;
    double v = strtod(text, NULL);
    if (!(v >= 0.001 && v <= QUERY_SCRAPE_TIMEOUT_MAX))
        return false;
    *seconds = v;
    return true;
}

static bool port_ok(const char *p)
{
    unsigned long v;
    return *p == ':' && parse_number(p + 1, 65535, &v) && p[1] != '0';
}

bool query_host_target(const char *host)
{
    if (!host || !*host || strlen(host) > 255)
        return false;
    const char *end;
    if (host[0] == '[') {
        end = host + 1 + strspn(host + 1, "0123456789abcdefABCDEF:.");
        if (*end != ']' || end == host + 1)
            return false;
        end++;
    } else {
        end = host + strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789.-");
        if (end == host || host[0] == '-' || host[0] == '.')
            return false;
    }
    return *end == '\0' || port_ok(end);
}

bool query_take(struct query *q, const char *key, const char *value)
{
    char kb[TEXT_ESCAPE_BUF];
    if (!param_known(q->params, key)) {
        snprintf(q->problem, sizeof q->problem, "%s takes no parameter '%.40s'%s%s", q->path,
                 text_escape(key, kb, sizeof kb), *q->params ? "; it takes: " : "",
                 q->params);
        return false;
    }
    if (value && strlen(value) > QUERY_VALUE_MAX) {
        snprintf(q->problem, sizeof q->problem, "the value of '%s' is too long", key);
        return false;
    }
    unsigned long v;
    if (strcmp(key, "pid") == 0) {
        if (q->seen_pid++ || !parse_number(value, 0x3fffffff, &v)) {
            snprintf(q->problem, sizeof q->problem, "pid must be given once, as a process "
                     "id (a number above 0)");
            return false;
        }
        q->pid = (pid_t)v;
    } else if (strcmp(key, "seconds") == 0) {
        if (q->seen_seconds++ || !parse_number(value, q->max_seconds, &v)) {
            snprintf(q->problem, sizeof q->problem, "seconds must be given once, as a "
                     "whole number from 1 to %u", q->max_seconds);
            return false;
        }
        q->seconds = (unsigned)v;
    } else if (strcmp(key, "duration") == 0) {
        if (q->seen_duration++) {
            snprintf(q->problem, sizeof q->problem, "duration must be given once");
            return false;
        }
        if (!query_parse_duration(value ? value : "", &q->duration, q->problem,
                                  sizeof q->problem))
            return false;
    } else if (strcmp(key, "endpoint") == 0) {
        static const char *const names[] = {"heap", "allocs", "metrics"};
        q->endpoint = QUERY_ENDPOINT_NONE;
        for (size_t i = 0; value && i < sizeof names / sizeof *names; i++)
            if (strcmp(value, names[i]) == 0)
                q->endpoint = (enum query_endpoint)(QUERY_ENDPOINT_HEAP + i);
        if (q->seen_endpoint++ || q->endpoint == QUERY_ENDPOINT_NONE) {
            snprintf(q->problem, sizeof q->problem, "endpoint must be given once, as heap, "
                     "allocs or metrics");
            return false;
        }
    } else if (strcmp(key, "id") == 0) {
        if (q->seen_id++ || !parse_number(value, 0x7fffffff, &v)) {
            snprintf(q->problem, sizeof q->problem, "id must be given once, as a run's id "
                     "(a number above 0)");
            return false;
        }
        q->run_id = (unsigned)v;
    }
    return true;
}
