/* targets.c - the processes memprof serve may touch (targets.h): /proc
 * read for each, the --target rules applied.  Everything read here was
 * written by the process or its user (comm, the executable's path): it is
 * matched and carried, never trusted as a path to open. */
#include "serve/targets.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/base/array.h"
#include "lib/base/file_read.h"
#include "lib/proc/procmem.h"

/* /proc/PID/WHAT, whole (a few KiB at most); NULL when unreadable. */
static char *proc_text(pid_t pid, const char *what, size_t *len)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
    return file_read_path(path, 1 << 16, len);
}

static void user_name(uid_t uid, char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char scratch[1024];
    if (getpwuid_r(uid, &pw, scratch, sizeof scratch, &found) == 0 && found)
        snprintf(buf, len, "%s", found->pw_name);
    else
        snprintf(buf, len, "%u", (unsigned)uid);
}

/* container=[RUNTIME://]HEX against the process's container: the id
 * begins with HEX, and the runtime is RUNTIME when the rule and the path
 * both say one. */
static bool container_matches(const char *rule, const struct container_ref *c)
{
    if (!c->id[0])
        return false;
    const char *sep = strstr(rule, "://"), *hex = sep ? sep + 3 : rule;
    const char *scheme = container_runtime_scheme(c->runtime);
    if (sep && scheme && (strlen(scheme) != (size_t)(sep - rule) ||
                          strncmp(scheme, rule, (size_t)(sep - rule)) != 0))
        return false;
    return strncmp(c->id, hex, strlen(hex)) == 0;
}

static bool rule_matches(const struct serve_rule *r, const struct served_process *p)
{
    if (r->container && !container_matches(r->container, &p->ct.ref))
        return false;
    if (r->cgroup && (p->ct.role == CGROUP_NROLES || fnmatch(r->cgroup, p->ct.cgroup, 0) != 0))
        return false;
    if (r->uid != (uid_t)-1 && r->uid != p->uid)
        return false;
    if (r->exe && fnmatch(r->exe, p->exe, 0) != 0)
        return false;
    if (r->comm && fnmatch(r->comm, p->comm, 0) != 0)
        return false;
    return true;
}

/* /proc/PID read into p: 1, 0 for a process that is not one memprof
 * serves (a kernel thread, memprof or one of its workers), -1 when gone. */
static int read_process(pid_t pid, struct served_process *p)
{
    size_t len, clen = 0;
    char *status = proc_text(pid, "status", &len);
    uint64_t uid, ppid;
    bool read = status && procmem_field(status, len, "Uid", &uid) &&
                procmem_field(status, len, "PPid", &ppid);
    if (!read || pid == getpid() || (pid_t)ppid == getpid()) {
        free(status);
        return read ? 0 : -1;
    }
    *p = (struct served_process){.pid = pid, .uid = (uid_t)uid};
    char *cgroup = proc_text(pid, "cgroup", &clen);
    process_container_parse(cgroup, clen, status, len, &p->ct);
    free(cgroup);
    free(status);
    char link[32];
    snprintf(link, sizeof link, "/proc/%d/exe", (int)pid);
    ssize_t m = readlink(link, p->exe, sizeof p->exe - 1);
    if (m < 0 && errno == ENOENT)
        return 0;           /* a kernel thread (or gone) */
    p->exe[m > 0 ? m : 0] = '\0';
    p->exe_errno = m < 0 ? errno : 0;
    char *comm = proc_text(pid, "comm", &len);
    if (!comm)
        return -1;
    comm[strcspn(comm, "\n")] = '\0';
    snprintf(p->comm, sizeof p->comm, "%s", comm);
    free(comm);
    user_name(p->uid, p->user, sizeof p->user);
    return 1;
}

/* Some rule matches on the executable's path. */
static bool rules_read_exe(const struct serve_config *cfg)
{
    for (size_t i = 0; i < cfg->nrules; i++)
        if (cfg->rules[i].exe)
            return true;
    return false;
}

static const struct serve_rule *allowed_by(const struct serve_config *cfg,
                                           const struct served_process *p)
{
    static const struct serve_rule any = {.uid = (uid_t)-1};
    if (!cfg->nrules)
        return &any;
    for (size_t i = 0; i < cfg->nrules; i++)
        if (rule_matches(&cfg->rules[i], p))
            return &cfg->rules[i];
    return NULL;
}

int targets_lookup(const struct serve_config *cfg, pid_t pid, struct served_process *p,
                   struct mp_error *err)
{
    int r = read_process(pid, p);
    if (r < 0) {
        mp_error_set(err, "no process %d (see /processes for the ones served)", (int)pid);
        return mp_error_mark(err, MP_ERROR_NO_PROCESS);
    }
    const struct serve_rule *rule = r ? allowed_by(cfg, p) : NULL;
    if (!rule && r && rules_read_exe(cfg) && (p->exe_errno == EACCES || p->exe_errno == EPERM)) {
        mp_error_set(err, "process %d is not one this agent serves: its executable's "
                     "path cannot be read (/proc/%d/exe: %s), so no --target exe= rule "
                     "can match it; reading it needs ptrace access: give memprof "
                     "CAP_SYS_PTRACE (podman/docker --cap-add SYS_PTRACE; Kubernetes "
                     "securityContext.capabilities.add)", (int)pid, (int)pid,
                     strerror(p->exe_errno));
        return mp_error_mark(err, MP_ERROR_DENIED);
    }
    if (!rule) {
        mp_error_set(err, "process %d is not one this agent serves (its --target rules, "
                     "or memprof itself; see /processes)", (int)pid);
        return mp_error_mark(err, MP_ERROR_DENIED);
    }
    p->name = rule->name;
    return 0;
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const struct served_process *)a)->pid;
    pid_t y = ((const struct served_process *)b)->pid;
    return (x > y) - (x < y);
}

long targets_list(const struct serve_config *cfg, struct served_process **list,
                  struct mp_error *err)
{
    DIR *d = opendir("/proc");
    if (!d)
        return mp_error_set(err, "cannot read /proc: %s", strerror(errno));
    struct served_process *v = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0)
            continue;
        struct served_process p;
        struct mp_error ignored;
        if (targets_lookup(cfg, (pid_t)pid, &p, &ignored) < 0)
            continue;
        if (array_reserve(&v, &cap, n + 1, sizeof *v, 64) < 0) {
            closedir(d);
            free(v);
            return mp_error_set(err, "out of memory listing processes");
        }
        v[n++] = p;
    }
    closedir(d);
    if (n)      /* none served: v is NULL, which qsort may not be given */
        qsort(v, n, sizeof *v, by_pid);
    *list = v;
    return (long)n;
}

static int rule_user(const char *value, uid_t *uid, struct mp_error *err)
{
    char *end;
    errno = 0;
    unsigned long u = strtoul(value, &end, 10);
    if (*value && !*end && errno == 0 && u < (uid_t)-1) {
        *uid = (uid_t)u;
        return 0;
    }
    struct passwd pw, *found = NULL;
    char scratch[1024];
    if (getpwnam_r(value, &pw, scratch, sizeof scratch, &found) != 0 || !found)
        return mp_error_set(err, "--target user=%s: no such user", value);
    *uid = found->pw_uid;
    return 0;
}

/* container=[RUNTIME://]HEX: a runtime kube-state-metrics names, and 12
 * (docker ps' short id) to 64 hex digits, kept in lower case. */
static int rule_container(char *v, struct mp_error *err)
{
    char *sep = strstr(v, "://"), *hex = sep ? sep + 3 : v;
    static const char *const schemes[] = {"docker", "containerd", "cri-o", "podman"};
    bool scheme_ok = !sep;
    for (size_t i = 0; sep && i < sizeof schemes / sizeof *schemes; i++)
        scheme_ok |= strlen(schemes[i]) == (size_t)(sep - v) &&
                     strncmp(v, schemes[i], (size_t)(sep - v)) == 0;
    if (!scheme_ok)
        return mp_error_set(err, "--target container=%s: the runtime before :// is one of "
                            "docker, containerd, cri-o, podman", v);
    size_t n = strlen(hex);
    for (char *c = hex; *c; c++)
        *c = (char)tolower((unsigned char)*c);
    if (n < 12 || n > CONTAINER_ID_LEN || strspn(hex, "0123456789abcdef") != n)
        return mp_error_set(err, "--target container=%s: a container id is 12 to 64 hex "
                            "digits (docker ps shows 12, /processes all 64), optionally "
                            "after RUNTIME:// as in containerd://ID", v);
    return 0;
}

static bool name_ok(const char *s)
{
    if (!*s || strlen(s) > 64)
        return false;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

int targets_parse_rule(const char *text, struct serve_rule *r, struct mp_error *err)
{
    *r = (struct serve_rule){.uid = (uid_t)-1};
    char *copy = strdup(text), *save = NULL;
    if (!copy)
        return mp_error_set(err, "out of memory");
    int rc = 0;
    for (char *kv = strtok_r(copy, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq || eq == kv || !eq[1]) {
            rc = mp_error_set(err, "--target '%s': each part is KEY=VALUE (name, user, exe, "
                              "comm, container, cgroup)", text);
            break;
        }
        *eq = '\0';
        const char *v = eq + 1;
        char **slot = NULL;
        if (strcmp(kv, "user") == 0)
            rc = rule_user(v, &r->uid, err);
        else if (strcmp(kv, "name") == 0 && !name_ok(v))
            rc = mp_error_set(err, "--target name=%s: a name is 1-64 of [A-Za-z0-9_.-]", v);
        else if (strcmp(kv, "name") == 0)
            slot = &r->name;
        else if (strcmp(kv, "exe") == 0)
            slot = &r->exe;
        else if (strcmp(kv, "comm") == 0)
            slot = &r->comm;
        else if (strcmp(kv, "container") == 0 && !(rc = rule_container(eq + 1, err)))
            slot = &r->container;
        else if (strcmp(kv, "cgroup") == 0 && v[0] != '/' && v[0] != '*')
            rc = mp_error_set(err, "--target cgroup=%s: a cgroup path begins with / as "
                              "/processes shows it (a glob may begin with *: "
                              "cgroup=/kubepods.slice/*, cgroup=*/docker-*.scope)", v);
        else if (strcmp(kv, "cgroup") == 0)
            slot = &r->cgroup;
        else if (!rc)
            rc = mp_error_set(err, "--target '%s': unknown key '%s' (name, user, exe, comm, "
                              "container, cgroup)", text, kv);
        if (slot && *slot)
            rc = mp_error_set(err, "--target '%s': '%s' given twice", text, kv);
        else if (slot && !(*slot = strdup(v)))
            rc = mp_error_set(err, "out of memory");
    }
    free(copy);
    if (rc)
        targets_free_rules(r, 1);
    return rc;
}

void targets_free_rules(struct serve_rule *rules, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rules[i].name);
        free(rules[i].exe);
        free(rules[i].comm);
        free(rules[i].container);
        free(rules[i].cgroup);
        rules[i] = (struct serve_rule){.uid = (uid_t)-1};
    }
}
