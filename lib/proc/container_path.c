/* container_path.c - a container and pod from a cgroup path
 * (container_path.h): the path's components read one by one, each
 * matched against the names the runtimes and the kubelet give. */
#include "lib/proc/container_path.h"

#include <stdio.h>
#include <string.h>

/* One component of a path: not NUL-terminated. */
struct part {
    const char *s;
    size_t n;
};

static bool part_is(struct part p, const char *word)
{
    return p.n == strlen(word) && memcmp(p.s, word, p.n) == 0;
}

static bool ends_with(struct part p, const char *suffix)
{
    size_t k = strlen(suffix);
    return p.n >= k && memcmp(p.s + p.n - k, suffix, k) == 0;
}

static bool hex64(const char *s, size_t n)
{
    if (n != CONTAINER_ID_LEN)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

/* "<runtime prefix><64hex>[.scope]": the runtime, or CONTAINER_NONE.
 * libpod-conmon-<id> and crio-conmon-<id> (the monitors) do not match:
 * "conmon-..." is not hex. */
static enum container_runtime prefixed_id(struct part p, char *id)
{
    static const struct {
        const char *prefix;
        enum container_runtime rt;
    } forms[] = {
        {"docker-", CONTAINER_DOCKER}, {"libpod-", CONTAINER_PODMAN},
        {"cri-containerd-", CONTAINER_CONTAINERD}, {"crio-", CONTAINER_CRIO},
    };
    if (ends_with(p, ".scope"))
        p.n -= strlen(".scope");
    for (size_t i = 0; i < sizeof forms / sizeof *forms; i++) {
        size_t k = strlen(forms[i].prefix);
        if (p.n > k && memcmp(p.s, forms[i].prefix, k) == 0 && hex64(p.s + k, p.n - k)) {
            memcpy(id, p.s + k, CONTAINER_ID_LEN);
            id[CONTAINER_ID_LEN] = '\0';
            return forms[i].rt;
        }
    }
    return CONTAINER_NONE;
}

/* A pod UID as the path writes it (sep: '_' in systemd's unit names, '-'
 * in cgroupfs' directories) into uid with dashes; false when it is not
 * one (32 to 36 of hex digits and separators). */
static bool pod_uid(const char *s, size_t n, char sep, char *uid)
{
    if (n < 32 || n > POD_UID_MAX)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (!hex && c != sep)
            return false;
        uid[i] = c == sep ? '-' : c;
    }
    uid[n] = '\0';
    return true;
}

/* systemd driver: "[PREFIX-]kubepods[-burstable|-besteffort]-pod<uid>.slice"
 * (PREFIX from a kubelet's --cgroup-root, kind's "kubelet"). */
static bool systemd_pod(struct part p, struct container_ref *out)
{
    static const struct {
        const char *infix;
        enum pod_qos qos;
    } levels[] = {
        {"kubepods-burstable-pod", POD_QOS_BURSTABLE},
        {"kubepods-besteffort-pod", POD_QOS_BESTEFFORT},
        {"kubepods-pod", POD_QOS_GUARANTEED},
    };
    if (!ends_with(p, ".slice"))
        return false;
    size_t n = p.n - strlen(".slice");
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++) {
        size_t k = strlen(levels[i].infix);
        for (size_t at = 0; at + k < n; at++) {
            if ((at && p.s[at - 1] != '-') || memcmp(p.s + at, levels[i].infix, k) != 0)
                continue;
            if (pod_uid(p.s + at + k, n - at - k, '_', out->pod_uid)) {
                out->qos = levels[i].qos;
                return true;
            }
        }
    }
    return false;
}

/* cgroupfs driver: "pod<uid>" right under /kubepods (guaranteed) or under
 * /kubepods/burstable, /kubepods/besteffort. */
static bool cgroupfs_pod(struct part p, struct part up, struct part up2,
                         struct container_ref *out)
{
    if (p.n < 3 || memcmp(p.s, "pod", 3) != 0)
        return false;
    enum pod_qos q = part_is(up, "kubepods") ? POD_QOS_GUARANTEED
                   : !part_is(up2, "kubepods") ? POD_QOS_NONE
                   : part_is(up, "burstable") ? POD_QOS_BURSTABLE
                   : part_is(up, "besteffort") ? POD_QOS_BESTEFFORT : POD_QOS_NONE;
    if (q == POD_QOS_NONE || !pod_uid(p.s + 3, p.n - 3, '-', out->pod_uid))
        return false;
    out->qos = q;
    return true;
}

/* A component naming a container: the runtime, or CONTAINER_NONE.  A bare
 * id counts under /docker (Docker's cgroupfs driver) and right under a
 * pod (the kubelet's cgroupfs driver, runtime unsaid), nowhere else. */
static enum container_runtime container_part(struct part p, struct part up, bool up_is_pod,
                                             char *id)
{
    enum container_runtime rt = prefixed_id(p, id);
    if (rt != CONTAINER_NONE || !hex64(p.s, p.n))
        return rt;
    if (part_is(up, "docker"))
        rt = CONTAINER_DOCKER;
    else if (up_is_pod)
        rt = CONTAINER_UNKNOWN;
    if (rt != CONTAINER_NONE) {
        memcpy(id, p.s, CONTAINER_ID_LEN);
        id[CONTAINER_ID_LEN] = '\0';
    }
    return rt;
}

bool container_from_path(const char *path, size_t len, struct container_ref *out)
{
    memset(out, 0, sizeof *out);
    struct part up = {"", 0}, up2 = {"", 0};
    bool up_is_pod = false;
    for (size_t i = 0; i < len;) {
        const char *slash = memchr(path + i, '/', len - i);
        struct part p = {path + i, (slash ? (size_t)(slash - path) : len) - i};
        i += p.n + 1;
        if (p.n == 0)
            continue;
        struct container_ref c = *out;
        char id[CONTAINER_ID_LEN + 1];
        enum container_runtime rt = container_part(p, up, up_is_pod, id);
        bool pod = rt == CONTAINER_NONE && (systemd_pod(p, &c) || cgroupfs_pod(p, up, up2, &c));
        if (rt != CONTAINER_NONE) {
            /* A container inside a container: the inner one; a pod seen
             * before the outer one holds that one, not this. */
            if (out->runtime != CONTAINER_NONE && out->pod_uid[0])
                out->pod_uid[0] = '\0', out->qos = POD_QOS_NONE;
            out->runtime = rt;
            memcpy(out->id, id, sizeof id);
        } else if (pod) {
            /* A pod below a container (kind): the container was the node's. */
            *out = (struct container_ref){.qos = c.qos};
            memcpy(out->pod_uid, c.pod_uid, sizeof c.pod_uid);
        }
        up2 = up;
        up = p;
        up_is_pod = pod;
    }
    return out->runtime != CONTAINER_NONE || out->pod_uid[0];
}

enum cgroup_role container_choose(const struct cgroup_file *f, struct container_ref *out)
{
    enum cgroup_role first = CGROUP_NROLES;
    for (int r = 0; r < CGROUP_NROLES; r++) {
        if (!f->has[r])
            continue;
        if (first == CGROUP_NROLES)
            first = (enum cgroup_role)r;
        if (container_from_path(f->path[r], strlen(f->path[r]), out))
            return (enum cgroup_role)r;
    }
    memset(out, 0, sizeof *out);
    return first;
}

const char *container_runtime_scheme(enum container_runtime r)
{
    switch (r) {
    case CONTAINER_DOCKER: return "docker";
    case CONTAINER_PODMAN: return "podman";
    case CONTAINER_CONTAINERD: return "containerd";
    case CONTAINER_CRIO: return "cri-o";
    default: return NULL;
    }
}

const char *pod_qos_name(enum pod_qos q)
{
    switch (q) {
    case POD_QOS_GUARANTEED: return "guaranteed";
    case POD_QOS_BURSTABLE: return "burstable";
    case POD_QOS_BESTEFFORT: return "besteffort";
    default: return NULL;
    }
}

const char *container_id_text(const struct container_ref *c, char *buf, size_t len)
{
    const char *scheme = container_runtime_scheme(c->runtime);
    if (!c->id[0])
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "%s%s%s", scheme ? scheme : "", scheme ? "://" : "", c->id);
    return buf;
}
