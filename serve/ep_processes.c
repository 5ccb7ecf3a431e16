/* ep_processes.c - GET /processes: every process served, as JSON, with
 * the allocator that serves its malloc and its profiling state, its
 * cgroup, container, pod and pid in its own namespace.  A process under
 * seccomp filters is said to be so, its sampler judged when a profile is
 * asked for (the filters are read in a stop, not made here).  One
 * worker opens each process in turn (a stop only for jemalloc's state,
 * read in one call); a process another memprof holds is listed as busy. */
#include "serve/endpoints.h"

#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "session/attach_process.h"
#include "session/control.h"
#include "session/sampling.h"
#include "session/say.h"
#include "serve/targets.h"
#include "serve/worker.h"

static void add_profiling(struct session *s, json_object *o)
{
    json_object *p = json_object_new_object();
    char why[SAMPLING_WHY_MAX];
    int nfilters;
    enum sampling_verdict v;
    if (s->alloc.kind == ALLOCATOR_JEMALLOC && !sampling_applies(s)) {
        struct query q[CONTROL_NSTATE];
        json_object_object_add(p, "by", json_object_new_string("jemalloc"));
        if (control_state_read(s, q) == 0) {
            struct query *act = control_query_find(q, CONTROL_NSTATE, "prof.active");
            struct query *lg = control_query_find(q, CONTROL_NSTATE, "prof.lg_sample");
            json_object_object_add(p, "active", json_object_new_boolean(act->ret == 0 && act->v.b));
            if (lg->ret == 0)
                json_object_object_add(p, "sample_interval_bytes",
                                       json_object_new_int64((int64_t)1 << (lg->v.u64 & 63)));
        }
    } else if ((v = sampling_verdict(s, false, &nfilters, why, sizeof why)) != SAMPLING_NO) {
        /* a filtered process's filters are not read here (a stop for each):
         * the sampler is judged when a profile is asked for, and said so */
        json_object_object_add(p, "by", json_object_new_string("memprof sampler"));
        json_object_object_add(p, "active", json_object_new_boolean(false));
        json_object_object_add(p, "seccomp_filters", nfilters >= 0
                               ? json_object_new_int(nfilters) : NULL);
        json_object_object_add(p, "sampler", json_object_new_string(
                               v == SAMPLING_UNJUDGED ? "judged when asked for" : "possible"));
        if (v == SAMPLING_UNJUDGED)
            json_object_object_add(p, "note", json_object_new_string(why));
    } else {
        char text[1280];
        sampling_why_not_text(s, why, text, sizeof text);
        json_object_object_add(p, "by", NULL);
        json_object_object_add(p, "why_not", json_object_new_string(text));
    }
    json_object_object_add(o, "profiling", p);
}

static json_object *describe(const struct served_process *sp)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "pid", json_object_new_int(sp->pid));
    json_object_object_add(o, "command", json_object_new_string(sp->comm));
    json_object_object_add(o, "executable", json_object_new_string(sp->exe));
    json_object_object_add(o, "user", json_object_new_string(sp->user));
    json_object_object_add(o, "name", sp->name ? json_object_new_string(sp->name) : NULL);
    process_container_json(o, &sp->ct);
    struct session s = {.out = stdout, .quiet = true};
    struct mp_error err;
    if (session_attach_process(&s, sp->pid, &err) < 0) {
        json_object_object_add(o, err.kind == MP_ERROR_BUSY ? "busy" : "error",
                               json_object_new_string(err.msg));
    } else {
        json_object_object_add(o, "allocator",
                               json_object_new_string(allocator_kind_key(s.alloc.kind)));
        json_object_object_add(o, "malloc_object", json_object_new_string(s.alloc.malloc_object));
        add_profiling(&s, o);
        session_detach_process(&s, "the request ended", false);
    }
    session_free(&s);
    return o;
}

static int list_job(struct session *s, void *arg)
{
    const struct serve_config *cfg = arg;
    struct served_process *v;
    struct mp_error err;
    long n = targets_list(cfg, &v, &err);
    if (n < 0) {
        say_error("%s", err.msg);
        return 500;
    }
    json_object *all = json_object_new_array();
    for (long i = 0; i < n; i++)
        json_object_array_add(all, describe(&v[i]));
    free(v);
    json_object *doc = json_object_new_object();
    json_object_object_add(doc, "processes", all);
    fputs(json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN), s->out);
    fputc('\n', s->out);
    json_object_put(doc);
    return 200;
}

void ep_processes(const struct serve_request *rq, struct serve_reply *rp)
{
    struct worker_reply wr;
    worker_run(rq->cfg, 0, list_job, (void *)rq->cfg, rq->cfg->request_timeout_s * 4, &wr);
    reply_from_worker(rp, &wr, "application/json");
}
