/* ep_mesos.c - Mesos' memory-profiler API for every process (?pid=N), as
 * Mesos' own libprocess serves it for itself (../docs/serve.md):
 *   GET  /memory-profiler/state        the process and its runs
 *   GET  /memory-profiler/statistics   jemalloc's malloc_stats_print JSON
 *   POST /memory-profiler/start?duration=D   a run (--allow-control)
 *   POST /memory-profiler/stop         its early end (--allow-control)
 *   GET  /memory-profiler/download/raw|text|graph[?id=N]   the latest
 *        finished run's dump, its top as text, its call graph as SVG;
 *        .../archive the run saved with its objects, as a tar.gz that
 *        'memprof DIR' reads on another machine (memprof's own).
 * Changes are POSTs where Mesos takes GETs: this agent changes nothing on
 * a GET.  The runs are serve/mesos_runs.c's, their work mesos_job.c's. */
#include "serve/endpoints.h"

#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/file_read.h"
#include "serve/mesos_job.h"
#include "serve/mesos_runs.h"
#include "serve/worker.h"

/* Mesos' default run: 5 minutes. */
#define DEFAULT_DURATION_S 300.0

static void reply_json(struct serve_reply *rp, json_object *doc)
{
    char *text = NULL;
    if (asprintf(&text, "%s\n", json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PRETTY)) < 0)
        reply_error(rp, 500, "out of memory");
    else
        reply_body(rp, 200, "application/json", text, strlen(text));
    json_object_put(doc);
}

void ep_mesos_state(const struct serve_request *rq, struct serve_reply *rp)
{
    struct mesos_run_state st;
    mesos_runs_state(rq->pid, &st);
    if (st.active_id) {
        json_object *doc = mesos_state_doc(rq->pid, &st);
        json_object_object_add(doc, "note", json_object_new_string(
                                   "the run's worker holds the process: its allocator's "
                                   "state is shown when the run has ended"));
        reply_json(rp, doc);
        return;
    }
    struct worker_reply wr;
    worker_run(rq->cfg, rq->pid, mesos_state_job, &st, rq->cfg->request_timeout_s, &wr);
    reply_from_worker(rp, &wr, "application/json");
}

void ep_mesos_statistics(const struct serve_request *rq, struct serve_reply *rp)
{
    struct worker_reply wr;
    worker_run(rq->cfg, rq->pid, mesos_statistics_job, NULL, rq->cfg->request_timeout_s, &wr);
    reply_from_worker(rp, &wr, "application/json");
}

void ep_mesos_start(const struct serve_request *rq, struct serve_reply *rp)
{
    struct mesos_run_arg arg = {.duration = rq->duration > 0 ? rq->duration
                                            : DEFAULT_DURATION_S};
    char why[400];
    int status = mesos_runs_begin(rq->pid, arg.duration, &arg.id, arg.dir, sizeof arg.dir,
                                  why, sizeof why);
    if (status) {
        reply_error(rp, status, "%s", why);
        if (status == 503)
            rp->retry_after = 60;
        return;
    }
    struct worker_reply wr;
    struct worker_handle h;
    bool going = worker_start(rq->cfg, rq->pid, mesos_run_job, &arg,
                              rq->cfg->request_timeout_s, &wr, &h) == 0;
    mesos_runs_started(rq->pid, arg.id, going ? &h : NULL);
    reply_from_worker(rp, &wr, "application/json");
}

static json_object *run_urls(json_object *o, pid_t pid, unsigned id)
{
    static const char *const keys[][2] = {{"url_raw_profile", "raw"},
                                          {"url_symbolized_profile", "text"},
                                          {"url_graph", "graph"},
                                          {"url_archive", "archive"}};
    char url[128];
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        snprintf(url, sizeof url, "/memory-profiler/download/%s?pid=%d&id=%u", keys[i][1],
                 (int)pid, id);
        json_object_object_add(o, keys[i][0], json_object_new_string(url));
    }
    return o;
}

void ep_mesos_stop(const struct serve_request *rq, struct serve_reply *rp)
{
    unsigned id;
    int status = mesos_runs_stop(rq->pid, rq->cfg->request_timeout_s, &id);
    if (!id) {
        reply_error(rp, 409, "no profiling run is under way in process %d: POST "
                    "/memory-profiler/start?pid=%d starts one", (int)rq->pid, (int)rq->pid);
        return;
    }
    if (status == 409) {
        reply_error(rp, 409, "run %u of process %d is starting or already ending: GET "
                    "/memory-profiler/state?pid=%d says when it has ended", id, (int)rq->pid,
                    (int)rq->pid);
        return;
    }
    if (status != 200) {
        reply_error(rp, status, "run %u of process %d did not end cleanly (its worker "
                    "gave %d): GET /memory-profiler/state?pid=%d", id, (int)rq->pid, status,
                    (int)rq->pid);
        return;
    }
    json_object *o = json_object_new_object();
    json_object_object_add(o, "id", json_object_new_int64(id));
    json_object_object_add(o, "message", json_object_new_string("Heap profiling stopped"));
    reply_json(rp, run_urls(o, rq->pid, id));
}

/* ---- downloads ---- */

/* The file name of the latest finished run, in *dir_file; or a reply. */
static bool pick_run(const struct serve_request *rq, struct serve_reply *rp,
                     struct mesos_run_state *st)
{
    mesos_runs_state(rq->pid, st);
    unsigned want = rq->run_id ? rq->run_id : st->last_id;
    if (want && want == st->active_id) {
        reply_error(rp, 409, "run %u of process %d is still under way (%.0f s left)", want,
                    (int)rq->pid, st->remaining_s);
        rp->retry_after = (unsigned)st->remaining_s + 1;
        return false;
    }
    if (!st->last_id || want != st->last_id) {
        if (!st->last_id)
            reply_error(rp, 404, "process %d has no finished profiling run%s", (int)rq->pid,
                        st->active_id ? " yet (one is under way)"
                                      : ": POST /memory-profiler/start?pid=N first");
        else
            reply_error(rp, 404, "run %u is not process %d's latest finished run (%u): only "
                        "the latest is kept", want, (int)rq->pid, st->last_id);
        return false;
    }
    return true;
}

/* The whole of file name in the run's directory, or NULL (absent). */
static char *run_file(const struct mesos_run_state *st, const char *name, size_t *len)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", st->last_dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return NULL;
    char *data = file_read_fd(fd, MESOS_DOWNLOAD_MAX, len);
    close(fd);
    return data;
}

/* Why the run left no file: its outcome's words. */
static void no_file(const struct mesos_run_state *st, struct serve_reply *rp, pid_t pid,
                    const char *what)
{
    size_t len;
    char *outcome = run_file(st, MESOS_OUTCOME, &len);
    json_object *o = outcome ? json_tokener_parse(outcome) : NULL, *why = NULL;
    json_object_object_get_ex(o, "why", &why);
    reply_error(rp, 404, "run %u of process %d left no %s (the run ended: %s)", st->last_id,
                (int)pid, what, why ? json_object_get_string(why) : "unknown");
    json_object_put(o);
    free(outcome);
}

static void download(const struct serve_request *rq, struct serve_reply *rp, const char *name,
                     const char *type, const char *what)
{
    struct mesos_run_state st;
    if (!pick_run(rq, rp, &st))
        return;
    size_t len;
    char *data = run_file(&st, name, &len);
    if (data) {
        reply_body(rp, 200, type, data, len);
        return;
    }
    bool graph = strcmp(name, MESOS_GRAPH) == 0, archive = strcmp(name, MESOS_ARCHIVE) == 0;
    char *note = graph ? run_file(&st, MESOS_GRAPH_NOTE, &len)
                 : archive ? run_file(&st, MESOS_ARCHIVE_NOTE, &len) : NULL;
    if (note)
        reply_error(rp, graph ? 501 : 500, "no %s: %s", what, note);
    else
        no_file(&st, rp, rq->pid, what);
    free(note);
}

void ep_mesos_download_raw(const struct serve_request *rq, struct serve_reply *rp)
{
    download(rq, rp, MESOS_RAW, "application/octet-stream", "dump");
}

void ep_mesos_download_text(const struct serve_request *rq, struct serve_reply *rp)
{
    download(rq, rp, MESOS_TEXT, "text/plain; charset=utf-8", "symbolized profile");
}

void ep_mesos_download_graph(const struct serve_request *rq, struct serve_reply *rp)
{
    download(rq, rp, MESOS_GRAPH, "image/svg+xml", "call graph");
}

void ep_mesos_download_archive(const struct serve_request *rq, struct serve_reply *rp)
{
    download(rq, rp, MESOS_ARCHIVE, "application/gzip", "archive of the run");
}
