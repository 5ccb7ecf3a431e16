/* procmem.h - parsing what the kernel says about a process's memory:
 * "Key: value kB" files (smaps_rollup, status, cgroup memory.events), the
 * fault counters of stat, NStgid of status, the cgroup v2 line of
 * /proc/PID/cgroup, and /proc/PID/smaps grouped like pmap -x.  Pure functions on text that the
 * target's kernel wrote (untrusted in length and shape): nothing here opens
 * a file. */
#ifndef MEMPROF_PROCMEM_H
#define MEMPROF_PROCMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The value of "key:" at the start of a line, in bytes when the line ends
 * in "kB", else as written ("oom_kill 3" style lines too: key then
 * spaces).  Returns true when found. */
bool procmem_field(const char *text, size_t len, const char *key, uint64_t *value);

/* minflt and majflt of /proc/PID/stat (fields 10 and 12, counted after the
 * ')' that ends the command name, which may hold anything). */
bool procmem_stat_faults(const char *text, size_t len, uint64_t *minflt,
                         uint64_t *majflt);

/* The NStgid line of a status text: the process's pid in each nested pid
 * namespace, outermost first (NSpid for its main thread; NStgid is the
 * same in every thread's status, which matters when the main thread has
 * exited).  *inner is the last (the pid its own namespace knows it by),
 * *depth how many there are (1: only the namespace of the /proc read).
 * False when the line is missing or malformed. */
bool procmem_nspid(const char *text, size_t len, uint64_t *inner, unsigned *depth);

/* A limit file of a cgroup: "max" (*unlimited) or a number (memory.max,
 * memory.high, v1 memory.limit_in_bytes).  v1 writes its "no limit" as a
 * number near 2^63: at or above PROCMEM_LIMIT_NONE a number means
 * unlimited too (no machine has that much memory). */
#define PROCMEM_LIMIT_NONE (UINT64_C(1) << 62)
bool procmem_cgroup_limit(const char *text, size_t len, uint64_t *v, bool *unlimited);

/* One line of a pressure (PSI) file, "some avg10=1.20 avg60=0.40
 * avg300=0.08 total=123456": the shares of time (percent) over 10, 60 and
 * 300 s, and the total stall time in microseconds. */
struct procmem_psi {
    double avg10, avg60, avg300;
    uint64_t total_us;
};
bool procmem_psi_line(const char *text, size_t len, const char *which, struct procmem_psi *out);

enum procmem_kind {
    PROCMEM_ANON,       /* private anonymous read-write: jemalloc's extents
                         * and every other anonymous mmap */
    PROCMEM_STACK,      /* [stack], or anonymous read-write right above a
                         * PROT_NONE guard (a pthread stack) */
    PROCMEM_FILE,       /* one group per path */
    PROCMEM_OTHER,      /* [heap] (brk), [vdso], guards, shared anonymous... */
};

struct procmem_group {
    enum procmem_kind kind;
    char name[256];     /* the path for PROCMEM_FILE (cut), else a label */
    unsigned mappings;
    uint64_t size, rss, dirty, swap;
};

struct procmem_groups {
    struct procmem_group *v;
    size_t n, cap;
};

/* Group the mappings of an smaps text.  Returns 0, -1 when out of memory. */
int procmem_smaps_groups(const char *text, size_t len, struct procmem_groups *out);
void procmem_groups_free(struct procmem_groups *g);

#endif
