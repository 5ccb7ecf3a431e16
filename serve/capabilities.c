/* capabilities.c - the agent's notes at start about missing capabilities
 * and its own seccomp filter: said once, up front, rather than only in
 * each refused process's error, so that an operator who deployed it with
 * too few sees what that costs before any scrape. */
#include "serve/capabilities.h"

#include <unistd.h>

#include "attach/preflight.h"

static const struct {
    int bit;
    const char *name, *cost;
} needed[] = {
    {19, "SYS_PTRACE", "no process can be attached but those of memprof's own "
                       "user holding no capability memprof lacks"},
    {21, "SYS_ADMIN", "processes under a seccomp filter (every container started with "
                      "its runtime's default profile) are refused, and deleted or "
                      "chrooted files cannot be read through /proc/PID/map_files"},
    {1, "DAC_OVERRIDE", "processes of other users are refused (their /proc/PID/mem is "
                        "theirs, mode 0600)"},
    {23, "SYS_NICE", "stops run at normal priority and may hold a thread for "
                     "milliseconds on a busy machine"},
};

int serve_capability_notes(uid_t euid, uint64_t cap_eff, int seccomp, FILE *out)
{
    if (euid != 0)
        return 0;
    int n = 0;
    for (size_t i = 0; i < sizeof needed / sizeof needed[0]; i++) {
        if (cap_eff & (1ULL << needed[i].bit))
            continue;
        fprintf(out, "memprof serve: note: without CAP_%s: %s (docs/containers.md)\n",
                needed[i].name, needed[i].cost);
        n++;
    }
    if (seccomp != 0) {
        fprintf(out, "memprof serve: note: memprof runs under a seccomp filter, and the "
                "kernel lets only an unfiltered tracer suspend a process's filter: "
                "processes under a filter (every container started with its runtime's "
                "default profile) are refused; run it unfiltered (podman/docker "
                "--security-opt seccomp=unconfined; Kubernetes seccompProfile "
                "Unconfined)\n");
        n++;
    }
    return n;
}

void serve_note_own_capabilities(FILE *out)
{
    struct proc_status st;
    if (preflight_read_status("/proc/self/status", &st) < 0 || !st.have_cap_eff)
        return;
    serve_capability_notes(geteuid(), st.cap_eff, st.seccomp, out);
}
