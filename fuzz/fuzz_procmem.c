/* fuzz_procmem.c - libFuzzer harness for the parsers of the kernel's
 * memory files (lib/proc/procmem.c): status/smaps_rollup fields, stat's
 * fault counters, the cgroup lines (v2 and v1), cgroup limits, pressure
 * lines and smaps grouping; groups must add up, and so must RSS's parts
 * (lib/proc/rss_account.c, with a thread's sp from its syscall file); and a
 * variable of an environ file (lib/proc/environ.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proc/environ.h"
#include "lib/proc/procmem.h"
#include "lib/proc/rss_account.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    uint64_t v, a, b;
    procmem_field(text, size, "Rss", &v);
    procmem_field(text, size, "oom_kill", &v);
    procmem_stat_faults(text, size, &a, &b);
    bool unlimited;
    if (procmem_cgroup_limit(text, size, &v, &unlimited) && !unlimited && v >= PROCMEM_LIMIT_NONE)
        abort();
    struct procmem_psi psi;
    if (procmem_psi_line(text, size, "some", &psi) &&
        !(psi.avg10 >= 0 && psi.avg60 >= 0 && psi.avg300 >= 0))
        abort();
    const char *env = proc_environ_value(text, size, "TMPDIR");
    if (env && (env < text + 7 || env > text + size))
        abort();
    /* The parts of RSS add up to it, whatever the text. */
    const uint64_t sps[] = {0x7f0000001000, 0x1000, UINT64_MAX};
    struct rss_account acct;
    if (rss_account_smaps(text, size, sps, 3, &acct) == 0) {
        uint64_t sum = acct.sampler + acct.main_stack + acct.thread_stacks + acct.unseen_stacks +
                       acct.anon + acct.shared + acct.other;
        for (size_t i = 0; i < acct.nfiles; i++)
            sum += acct.files[i].rss;
        if (sum != acct.rss || acct.stacks_seen > 3)
            abort();
        rss_account_free(&acct);
    }
    uint64_t sp;
    if (rss_syscall_sp(text, size, &sp) && sp == 0)
        abort();
    struct procmem_groups g;
    if (procmem_smaps_groups(text, size, &g) == 0) {
        for (size_t i = 0; i < g.n; i++)
            if (!g.v[i].mappings || memchr(g.v[i].name, 0, sizeof g.v[i].name) == NULL)
                abort();
        procmem_groups_free(&g);
    }
    return 0;
}
