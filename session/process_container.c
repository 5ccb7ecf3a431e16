/* process_container.c - a process's cgroup, container, pod and namespace
 * pid, read and shown (process_container.h). */
#include "session/process_container.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/file_read.h"
#include "lib/base/text_escape.h"
#include "lib/proc/procmem.h"

/* status is a few KiB; cgroup at most CGROUP_TEXT_MAX is looked at. */
#define STATUS_MAX (1u << 16)

void process_container_parse(const char *cgroup, size_t cgroup_len, const char *status,
                             size_t status_len, struct process_container *out)
{
    memset(out, 0, sizeof *out);
    out->role = CGROUP_NROLES;
    struct cgroup_file *f = malloc(sizeof *f);   /* 16 KiB: not on a worker's stack */
    struct mp_error err;
    if (f && cgroup && cgroup_file_parse(cgroup, cgroup_len, f, &err) == 0) {
        out->role = container_choose(f, &out->ref);
        out->layout = f->layout;
        if (out->role < CGROUP_NROLES)
            memcpy(out->cgroup, f->path[out->role], sizeof out->cgroup);
    }
    free(f);
    uint64_t inner;
    if (status && procmem_nspid(status, status_len, &inner, &out->pidns_depth))
        out->nspid = (pid_t)inner;
}

static char *read_text(const char *dir, const char *name, size_t max, size_t *len)
{
    char path[192];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return file_read_path(path, max, len);
}

void process_container_read(const char *dir, struct process_container *out)
{
    size_t clen = 0, slen = 0;
    char *cgroup = read_text(dir, "cgroup", CGROUP_TEXT_MAX, &clen);
    char *status = read_text(dir, "status", STATUS_MAX, &slen);
    process_container_parse(cgroup, clen, status, slen, out);
    free(cgroup);
    free(status);
}

size_t process_container_labels(const struct process_container *c,
                                struct process_label out[PROCESS_LABELS_MAX])
{
    size_t n = 0;
    if (c->ref.id[0]) {
        out[n].key = "container_id";
        container_id_text(&c->ref, out[n++].value, sizeof out->value);
    }
    if (c->ref.pod_uid[0]) {
        out[n].key = "pod_uid";
        snprintf(out[n++].value, sizeof out->value, "%s", c->ref.pod_uid);
    }
    const char *qos = pod_qos_name(c->ref.qos);
    if (qos) {
        out[n].key = "qos";
        snprintf(out[n++].value, sizeof out->value, "%s", qos);
    }
    return n;
}

static json_object *string_or_null(const char *s)
{
    return s && *s ? json_object_new_string(s) : NULL;
}

void process_container_json(json_object *o, const struct process_container *c)
{
    json_object *cg = NULL, *ct = NULL, *pod = NULL;
    if (c->role < CGROUP_NROLES) {
        cg = json_object_new_object();
        json_object_object_add(cg, "path", json_object_new_string(c->cgroup));
        json_object_object_add(cg, "hierarchy", json_object_new_string(cgroup_role_name(c->role)));
        json_object_object_add(cg, "layout", string_or_null(cgroup_layout_name(c->layout)));
    }
    if (c->ref.id[0]) {
        char id[96];
        ct = json_object_new_object();
        json_object_object_add(ct, "id", json_object_new_string(c->ref.id));
        json_object_object_add(ct, "runtime", string_or_null(container_runtime_scheme(c->ref.runtime)));
        json_object_object_add(ct, "container_id",
                               json_object_new_string(container_id_text(&c->ref, id, sizeof id)));
    }
    if (c->ref.pod_uid[0]) {
        pod = json_object_new_object();
        json_object_object_add(pod, "uid", json_object_new_string(c->ref.pod_uid));
        json_object_object_add(pod, "qos", string_or_null(pod_qos_name(c->ref.qos)));
    }
    json_object_object_add(o, "cgroup", cg);
    json_object_object_add(o, "container", ct);
    json_object_object_add(o, "pod", pod);
    json_object_object_add(o, "nspid", c->nspid ? json_object_new_int(c->nspid) : NULL);
}

static void container_line(FILE *f, const struct process_container *c)
{
    char id[96];
    if (c->ref.id[0] && c->ref.runtime == CONTAINER_UNKNOWN)
        fprintf(f, "container            %s (its runtime is not in the cgroup path)\n",
                c->ref.id);
    else if (c->ref.id[0])
        fprintf(f, "container            %s\n", container_id_text(&c->ref, id, sizeof id));
    else if (c->layout != CGROUP_LAYOUT_NONE)
        fprintf(f, "container            none named by its cgroup\n");
    else
        fprintf(f, "container            unknown: /proc/PID/cgroup could not be read, or "
                "is not a cgroup file\n");
}

void process_container_text(FILE *f, const struct process_container *c)
{
    container_line(f, c);
    if (c->role < CGROUP_NROLES) {
        char eb[TEXT_ESCAPE_BUF];
        fprintf(f, "  cgroup             %s (%s hierarchy, %s)\n",
                text_escape(c->cgroup, eb, sizeof eb), cgroup_role_name(c->role),
                c->layout == CGROUP_LAYOUT_HYBRID ? "hybrid cgroup v1 and v2"
                : c->layout == CGROUP_LAYOUT_V1 ? "cgroup v1" : "cgroup v2");
    }
    if (c->ref.pod_uid[0])
        fprintf(f, "  pod                uid %s, QoS class %s\n", c->ref.pod_uid,
                pod_qos_name(c->ref.qos) ? pod_qos_name(c->ref.qos) : "not in the path");
    if (c->nspid && c->pidns_depth > 1)
        fprintf(f, "  pid inside         %d (in its own pid namespace)\n", (int)c->nspid);
    else if (c->nspid)
        fprintf(f, "  pid inside         the same: it is in memprof's pid namespace\n");
}
