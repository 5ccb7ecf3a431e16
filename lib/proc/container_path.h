/* container_path.h - which container and Kubernetes pod a cgroup path
 * names, from the layouts the runtimes make (and nothing the path does
 * not say):
 *   Docker, systemd driver    /system.slice/docker-<64hex>.scope
 *   Docker, cgroupfs driver   /docker/<64hex>
 *   Podman, systemd manager   /machine.slice/libpod-<64hex>.scope (its
 *                             libpod-conmon-<64hex>.scope is the monitor,
 *                             not the container)
 *   Podman, cgroupfs manager  /libpod_parent/libpod-<64hex>
 *   Kubernetes, systemd       /kubepods.slice/kubepods-burstable.slice/
 *                             kubepods-burstable-pod<uid, _ for ->.slice/
 *                             cri-containerd-<64hex>.scope (crio-, docker-)
 *   Kubernetes, cgroupfs      /kubepods/burstable/pod<uid>/<64hex> (the
 *                             runtime is not in the path) or crio-<64hex>
 * A guaranteed pod has no QoS level in the path (kubepods-pod<uid>.slice,
 * /kubepods/pod<uid>).  Nested layouts (kind: a cluster inside a Docker
 * container) give the innermost container, and the pod holding it. */
#ifndef MEMPROF_CONTAINER_PATH_H
#define MEMPROF_CONTAINER_PATH_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/proc/cgroup_file.h"

enum container_runtime {
    CONTAINER_NONE,             /* no container in the path */
    CONTAINER_DOCKER,
    CONTAINER_PODMAN,
    CONTAINER_CONTAINERD,
    CONTAINER_CRIO,
    CONTAINER_UNKNOWN,          /* a container id whose runtime the path
                                 * does not say (Kubernetes' cgroupfs) */
};

enum pod_qos { POD_QOS_NONE, POD_QOS_GUARANTEED, POD_QOS_BURSTABLE, POD_QOS_BESTEFFORT };

#define CONTAINER_ID_LEN 64
#define POD_UID_MAX      36     /* a UUID; a static pod's is 32 hex */

struct container_ref {
    enum container_runtime runtime;
    char id[CONTAINER_ID_LEN + 1];  /* 64 lowercase hex, "" with none */
    char pod_uid[POD_UID_MAX + 1];  /* with dashes, "" when no pod */
    enum pod_qos qos;               /* POD_QOS_NONE when no pod */
};

/* The container and pod a cgroup path names (len bytes); false, with
 * *out empty, when it names neither. */
bool container_from_path(const char *path, size_t len, struct container_ref *out);

/* Of a process's hierarchies, the one to show and look in: the first (in
 * enum cgroup_role's order) whose path names a container or pod, else the
 * first it has.  Fills *out from it; CGROUP_NROLES when it has none. */
enum cgroup_role container_choose(const struct cgroup_file *f, struct container_ref *out);

/* The runtime as kube-state-metrics writes it before "://" in
 * container_id ("docker", "containerd", "cri-o"; "podman" for podman,
 * which Kubernetes does not run); NULL for none or unknown. */
const char *container_runtime_scheme(enum container_runtime r);

/* "guaranteed", "burstable", "besteffort" (the words of
 * kube_pod_status_qos_class, lower case); NULL for none. */
const char *pod_qos_name(enum pod_qos q);

/* The id as kube-state-metrics' container_id label writes it,
 * "containerd://<64hex>", or the bare 64 hex when the runtime is unknown;
 * "" without a container.  buf holds at least 80 bytes. */
const char *container_id_text(const struct container_ref *c, char *buf, size_t len);

#endif
