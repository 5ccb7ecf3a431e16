/* process_container.h - which cgroup, container and Kubernetes pod a
 * process is in, and its pid inside its own pid namespace, as every front
 * end shows them: info (text and --json), memprof serve's /processes, the
 * labels of its /metrics series and pprof profiles, and its --target
 * rules.  Read from the host's view (/proc/PID/cgroup, NSpid of
 * /proc/PID/status): memprof runs outside the container, where the paths
 * are whole.  Nothing is asked of a runtime or of Kubernetes' API server:
 * names of pods and namespaces come from joining on container_id or
 * pod_uid (docs/serve.md). */
#ifndef MEMPROF_PROCESS_CONTAINER_H
#define MEMPROF_PROCESS_CONTAINER_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "lib/proc/cgroup_file.h"
#include "lib/proc/container_path.h"

struct process_container {
    enum cgroup_layout layout;      /* CGROUP_LAYOUT_NONE: cgroup unread */
    enum cgroup_role role;          /* the hierarchy cgroup is from */
    char cgroup[CGROUP_PATH_MAX];
    struct container_ref ref;       /* container and pod, where the path says */
    pid_t nspid;                    /* the pid in its own namespace; 0 unknown */
    unsigned pidns_depth;           /* pid namespaces NSpid lists (1: the host's) */
};

/* From the texts of /proc/PID/cgroup and /proc/PID/status (either NULL
 * when unread): what they say, the rest left unknown. */
void process_container_parse(const char *cgroup, size_t cgroup_len, const char *status,
                             size_t status_len, struct process_container *out);

/* The same read from /proc/PID (dir: "/proc/PID" or a live thread's
 * "/proc/PID/task/TID"). */
void process_container_read(const char *dir, struct process_container *out);

/* The labels memprof gives its series and profiles, in this order, those
 * known only: container_id (as kube-state-metrics writes it,
 * "containerd://<64hex>"), pod_uid, qos.  Returns how many. */
#define PROCESS_LABELS_MAX 3
struct process_label {
    const char *key;
    char value[80];
};
size_t process_container_labels(const struct process_container *c,
                                struct process_label out[PROCESS_LABELS_MAX]);

/* Adds "cgroup", "container", "pod" and "nspid" to o (docs/memprof.1,
 * JSON OUTPUT: each null when unknown). */
void process_container_json(json_object *o, const struct process_container *c);

/* info's lines: container, cgroup, pod, pid in its namespace. */
void process_container_text(FILE *f, const struct process_container *c);

#endif
