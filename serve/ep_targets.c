/* ep_targets.c - GET /targets: the processes served as Prometheus HTTP
 * service discovery (http_sd_configs; Grafana Alloy's discovery.http, and
 * so pyroscope.scrape), for scrapers that need one target per process, as
 * a pprof endpoint serves one process a request.  One target group per
 * process the --target rules allow, in pid order: its target this agent
 * by the address the client reached it at (the Host header: the agent
 * cannot know how it is seen from the pod network), its labels those of
 * its /metrics series (pid, comm, name, container_id, pod_uid, qos), and
 * __metrics_path__, __param_pid (and __scheme__ https under TLS) so that a
 * scrape of that target asks this agent for that process alone.  Nothing
 * is attached: the list is read from /proc, as /metrics reads it. */
#include "serve/endpoints.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/text_escape.h"
#include "serve/query.h"
#include "serve/web_guard.h"

static const char *metrics_path(int e)
{
    switch (e) {
    case QUERY_ENDPOINT_ALLOCS:
        return "/debug/pprof/allocs";
    case QUERY_ENDPOINT_METRICS:
        return "/metrics";
    default:
        return "/debug/pprof/heap";
    }
}

static void add_label(json_object *labels, const char *key, const char *value)
{
    char buf[TEXT_ESCAPE_BUF];
    json_object_object_add(labels, key,
                           json_object_new_string(text_escape(value, buf, sizeof buf)));
}

static json_object *group(const struct serve_request *rq, const struct served_process *p,
                          bool tls)
{
    json_object *g = json_object_new_object(), *targets = json_object_new_array(),
                *labels = json_object_new_object();
    json_object_array_add(targets, json_object_new_string(rq->host));
    json_object_object_add(g, "targets", targets);
    char pid[16];
    snprintf(pid, sizeof pid, "%d", (int)p->pid);
    add_label(labels, "__metrics_path__", metrics_path(rq->endpoint));
    add_label(labels, "__param_pid", pid);
    if (tls)
        add_label(labels, "__scheme__", "https");
    add_label(labels, "pid", pid);
    add_label(labels, "comm", p->comm);
    add_label(labels, "name", p->name ? p->name : p->comm);
    struct process_label pl[PROCESS_LABELS_MAX];
    size_t n = process_container_labels(&p->ct, pl);
    for (size_t i = 0; i < n; i++)
        add_label(labels, pl[i].key, pl[i].value);
    json_object_object_add(g, "labels", labels);
    return g;
}

void ep_targets(const struct serve_request *rq, struct serve_reply *rp)
{
    if (!query_host_target(rq->host)) {
        reply_error(rp, 400, "/targets names this agent, in each target, by the Host "
                    "header the client reached it with, and this request's is %s: ask "
                    "with Host: ADDRESS[:PORT] (Prometheus, Alloy and curl send the URL's)",
                    rq->host ? "not an address" : "missing");
        return;
    }
    struct served_process *all;
    struct mp_error err;
    long n = targets_list(rq->cfg, &all, &err);
    if (n < 0) {
        reply_error(rp, 500, "%s", err.msg);
        return;
    }
    bool tls = rq->cfg->web && rq->cfg->web->config.tls;
    json_object *doc = json_object_new_array();
    for (long i = 0; i < n; i++)
        json_object_array_add(doc, group(rq, &all[i], tls));
    free(all);
    const char *text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
                                                                JSON_C_TO_STRING_NOSLASHESCAPE);
    char *body = text ? strdup(text) : NULL;
    json_object_put(doc);
    if (!body) {
        reply_error(rp, 500, "out of memory listing the targets");
        return;
    }
    reply_body(rp, 200, "application/json", body, strlen(body));
}
