/* capabilities.h - what the agent says at start about the capabilities
 * and the seccomp filter it runs with: in a container (a DaemonSet) it is
 * root with a reduced set, and each missing capability costs a class of
 * processes (docs/containers.md). */
#ifndef MEMPROF_SERVE_CAPABILITIES_H
#define MEMPROF_SERVE_CAPABILITIES_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* One "memprof serve: note: ..." line on out per capability memprof
 * needs and lacks (cap_eff: its effective set), and one when it runs
 * under a seccomp filter (seccomp: its mode, 0 none); nothing for a
 * memprof that is not root (its user's own processes are what it
 * serves).  Returns how many lines it wrote. */
int serve_capability_notes(uid_t euid, uint64_t cap_eff, int seccomp, FILE *out);

/* The same, for this process (/proc/self/status). */
void serve_note_own_capabilities(FILE *out);

#endif
