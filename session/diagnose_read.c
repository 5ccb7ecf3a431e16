/* diagnose_read.c - see session/diagnose_read.h. */
#include "session/diagnose_read.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "lib/base/file_read.h"
#include "session/thp_scan.h"

const char *diagnose_thp_mode(void)
{
    static const char *const modes[] = {"always", "madvise", "never"};
    size_t len = 0;
    char *text = file_read_path("/sys/kernel/mm/transparent_hugepage/enabled", 256, &len);
    const char *mode = NULL;
    for (size_t i = 0; text && !mode && i < 3; i++) {
        char want[16];
        snprintf(want, sizeof want, "[%s]", modes[i]);
        if (strstr(text, want))
            mode = modes[i];
    }
    free(text);
    return mode;
}

/* The CPUs the process may run on (its affinity), 0 when unknown. */
static unsigned cpus_of(pid_t pid)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(pid, sizeof set, &set) != 0)
        return 0;
    int n = CPU_COUNT(&set);
    return n > 0 ? (unsigned)n : 0;
}

void diagnose_input_base(struct session *s, const struct memory_account *a,
                         struct diagnose_input *in)
{
    memset(in, 0, sizeof *in);
    in->allocator = allocator_kind_name(s->alloc.kind);
    in->thp_mode = diagnose_thp_mode();
    in->cpus = cpus_of(target_pid(s->target));
    if (!a)
        return;
    in->rss = &a->rss;
    in->threads = a->threads;
    in->threads_with_sp = a->threads_with_sp;
    thp_scan(s, &a->rss, &in->thp);
}

void diagnose_input_allocator(struct session *s, struct diagnose_input *in,
                              const struct jemalloc_summary *je,
                              const struct diagnose_jemalloc_settings *set,
                              const struct allocator_stats *other,
                              const struct heap_arenas *arenas)
{
    in->je = je;
    in->je_set = je ? set : NULL;
    if (!other)
        return;
    in->other = other;
    if (arenas) {
        in->glibc_thread_tops = arenas->thread_tops;
        in->glibc_nthread_tops = arenas->nthread_tops;
        in->glibc_thread_tops_over = arenas->thread_tops_over;
    }
    in->tcmalloc = s->alloc.kind == ALLOCATOR_TCMALLOC ||
                   s->alloc.kind == ALLOCATOR_TCMALLOC_MINIMAL;
}
