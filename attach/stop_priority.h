/* stop_priority.h - memprof's own scheduling for the microseconds of a
 * stop: raised to SCHED_RR at the lowest real-time priority and placed on
 * the CPU the borrowed thread last ran on, with the CPUs kept out of deep
 * idle states, then all put back exactly.
 *
 * On a machine whose every CPU is busy, each ptrace round trip of a stop
 * waits for memprof to be scheduled again, and a fair-class wakeup can
 * wait a whole time slice of another task (milliseconds): the tail of the
 * stop.  A real-time memprof runs the moment the thread stops; next to
 * the thread's CPU, the thread it resumes runs as soon as memprof sleeps.
 * Only memprof's own thread changes, never the target's.
 *
 * Bounded: memprof sleeps in every wait of a stop, each wait has its
 * deadline (remote_call.c), SCHED_RESET_ON_FORK keeps any child it starts
 * out of real time, and memprof raises itself only while the kernel's
 * real-time throttling (kernel.sched_rt_runtime_us) caps what real-time
 * tasks may take of a CPU.
 *
 * On an idle machine the stop's round trips wait instead for CPUs to
 * leave their idle states (in a VM each exit is a trip through the
 * hypervisor: a stop took 1.3-3.6 ms instead of 0.3).  A raised memprof
 * also holds a CPU wake-up latency request of 0 (/dev/cpu_dma_latency,
 * the kernel's PM QoS) for the stop only: the kernel drops the request
 * when its descriptor closes, so a memprof killed in a stop leaves
 * nothing behind; held for a whole session it would keep every CPU
 * polling. */
#ifndef MEMPROF_STOP_PRIORITY_H
#define MEMPROF_STOP_PRIORITY_H

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

/* The kernel's struct sched_attr (sched_setattr(2)); glibc 2.36 lacks it. */
struct stop_sched_attr {
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
    uint32_t util_min, util_max;
};

enum stop_priority_state {
    STOP_PRIORITY_UNTRIED,      /* no stop yet */
    STOP_PRIORITY_RAISED,       /* raised for each stop */
    STOP_PRIORITY_NOT_RAISED,   /* why says why not */
};

struct stop_priority {
    enum stop_priority_state state;
    bool disabled;              /* MEMPROF_STOP_PRIORITY=0 */
    char why[256];              /* why memprof does not raise itself */
    char awake_why[256];        /* "" or why the CPUs are not kept awake */
    /* What the current stop changed, put back by stop_priority_restore. */
    bool raised, pinned;
    int awake_fd;               /* the latency request held, or -1 */
    struct stop_sched_attr saved;
    cpu_set_t saved_cpus;
};

/* enabled false: never raised (why says so). */
void stop_priority_init(struct stop_priority *p, bool enabled);

/* At the start of a stop: memprof's thread to SCHED_RR 1 and, when cpu
 * >= 0 and memprof may run there, onto that CPU, and the CPUs' wake-up
 * latency request held.  The first call finds out whether memprof may
 * (state and why, awake_why); a failure changes nothing. */
void stop_priority_raise(struct stop_priority *p, int cpu);

/* At the end of the stop, whatever happened in it: the policy, priority,
 * nice value and CPUs memprof had before stop_priority_raise, and the
 * latency request dropped. */
void stop_priority_restore(struct stop_priority *p);

/* "SCHED_RR/1" etc.: memprof's policy now, read from the kernel, with
 * "+awake" while the kernel's CPU latency target is 0 (for the stop
 * trace). */
void stop_priority_describe_self(char *buf, size_t len);

#endif
