/* stop_priority.c - memprof's own scheduling policy and CPU, and the
 * CPUs' wake-up latency, for the span of one stop, and putting them back
 * (stop_priority.h says why). */
#include "attach/stop_priority.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_FLAG_RESET_ON_FORK
#define SCHED_FLAG_RESET_ON_FORK 0x01
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

#define STOP_RT_PRIORITY 1      /* the lowest: any real-time task outranks memprof */
#define CPU_LATENCY_DEV "/dev/cpu_dma_latency"

static int get_attr(struct stop_sched_attr *a)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    return (int)syscall(SYS_sched_getattr, 0, a, sizeof *a, 0);
}

static int set_attr(const struct stop_sched_attr *a)
{
    return (int)syscall(SYS_sched_setattr, 0, a, 0);
}

static const char *policy_name(uint32_t policy)
{
    switch (policy) {
    case SCHED_OTHER: return "SCHED_OTHER";
    case SCHED_FIFO: return "SCHED_FIFO";
    case SCHED_RR: return "SCHED_RR";
    case SCHED_BATCH: return "SCHED_BATCH";
    case SCHED_IDLE: return "SCHED_IDLE";
    case SCHED_DEADLINE: return "SCHED_DEADLINE";
    default: return "an unknown policy";
    }
}

static bool real_time(uint32_t policy)
{
    return policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_DEADLINE;
}

void stop_priority_init(struct stop_priority *p, bool enabled)
{
    memset(p, 0, sizeof *p);
    p->disabled = !enabled;
    p->awake_fd = -1;
}

static void not_raised(struct stop_priority *p, const char *fmt, const char *arg)
{
    p->state = STOP_PRIORITY_NOT_RAISED;
    snprintf(p->why, sizeof p->why, fmt, arg);
}

/* The kernel caps real-time tasks at sched_rt_runtime_us of every
 * sched_rt_period_us on each CPU (950 ms of 1 s by default); -1 turns the
 * cap off, and then memprof does not raise itself. */
static bool rt_throttled(struct stop_priority *p)
{
    char buf[32] = "";
    int fd = open("/proc/sys/kernel/sched_rt_runtime_us", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf - 1);
    if (fd >= 0)
        close(fd);
    if (n <= 0) {
        not_raised(p, "the kernel's real-time throttling cannot be read "
                   "(/proc/sys/kernel/sched_rt_runtime_us: %s)", strerror(errno));
        return false;
    }
    buf[n] = 0;
    if (atol(buf) < 0) {
        not_raised(p, "%s", "the kernel's real-time throttling is off "
                   "(kernel.sched_rt_runtime_us = -1), which would leave a real-time "
                   "memprof unbounded");
        return false;
    }
    return true;
}

/* Decided at the first stop, once: may memprof raise itself at all? */
static bool first_look(struct stop_priority *p)
{
    if (p->disabled) {
        not_raised(p, "%s", "MEMPROF_STOP_PRIORITY=0 in memprof's environment");
        return false;
    }
    struct stop_sched_attr now;
    if (get_attr(&now) < 0) {
        not_raised(p, "sched_getattr failed: %s", strerror(errno));
        return false;
    }
    if (real_time(now.policy)) {
        not_raised(p, "memprof already runs under %s (left as it is)",
                   policy_name(now.policy));
        return false;
    }
    return rt_throttled(p);
}

/* The kernel's CPU latency target to 0 for as long as the descriptor is
 * open (Documentation/power/pm_qos_interface.rst): every CPU leaves its
 * idle state at once and polls rather than halts until the request goes.
 * Needs root (the device is 0600); tried at each stop, and when it fails
 * info says why (awake_why). O_CLOEXEC: memprof forks only to exec. */
static void keep_cpus_awake(struct stop_priority *p)
{
    int fd = open(CPU_LATENCY_DEV, O_WRONLY | O_CLOEXEC);
    int32_t zero = 0;
    if (fd >= 0 && write(fd, &zero, sizeof zero) == (ssize_t)sizeof zero) {
        p->awake_fd = fd;
        p->awake_why[0] = 0;
        return;
    }
    snprintf(p->awake_why, sizeof p->awake_why, "%s: %s", CPU_LATENCY_DEV, strerror(errno));
    if (fd >= 0)
        close(fd);
}

void stop_priority_raise(struct stop_priority *p, int cpu)
{
    p->raised = p->pinned = false;
    if (p->state == STOP_PRIORITY_UNTRIED && !first_look(p))
        return;
    if (p->state == STOP_PRIORITY_NOT_RAISED)
        return;
    if (get_attr(&p->saved) < 0)
        return;
    struct stop_sched_attr rt = { .size = sizeof rt, .policy = SCHED_RR,
                                  .flags = SCHED_FLAG_RESET_ON_FORK,
                                  .priority = STOP_RT_PRIORITY };
    if (set_attr(&rt) < 0) {
        if (p->state == STOP_PRIORITY_UNTRIED) {
            if (errno == EPERM)
                not_raised(p, "%s", "raising it needs CAP_SYS_NICE or an RLIMIT_RTPRIO "
                           "of at least 1 (ulimit -r), and memprof has neither");
            else
                not_raised(p, "sched_setattr(SCHED_RR) failed: %s", strerror(errno));
        }
        return;
    }
    p->state = STOP_PRIORITY_RAISED;
    p->raised = true;
    /* Next to the borrowed thread: when memprof sleeps, the thread it just
     * resumed is the one its CPU picks up.  Outside memprof's own CPUs
     * (taskset, a cpuset) the kernel refuses, and memprof stays put. */
    if (cpu >= 0 && cpu < CPU_SETSIZE &&
        sched_getaffinity(0, sizeof p->saved_cpus, &p->saved_cpus) == 0 &&
        CPU_ISSET(cpu, &p->saved_cpus) && CPU_COUNT(&p->saved_cpus) > 1) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        p->pinned = sched_setaffinity(0, sizeof one, &one) == 0;
    }
    keep_cpus_awake(p);
}

void stop_priority_restore(struct stop_priority *p)
{
    if (p->awake_fd >= 0)
        close(p->awake_fd);
    p->awake_fd = -1;
    if (p->pinned)
        sched_setaffinity(0, sizeof p->saved_cpus, &p->saved_cpus);
    if (p->raised) {
        struct stop_sched_attr back = p->saved;
        back.size = sizeof back;
        /* Only the reset-on-fork flag is memprof's to carry back; a fair
         * policy's runtime read back is its time slice, which set again
         * would become a custom one. */
        back.flags &= SCHED_FLAG_RESET_ON_FORK;
        if (!real_time(back.policy))
            back.runtime = back.deadline = back.period = 0;
        /* Lowering one's own priority needs no privilege; should it fail
         * all the same, memprof leaves real time rather than stay there. */
        if (set_attr(&back) < 0) {
            struct sched_param zero = { 0 };
            sched_setscheduler(0, SCHED_OTHER, &zero);
        }
    }
    p->raised = p->pinned = false;
}

void stop_priority_describe_self(char *buf, size_t len)
{
    struct stop_sched_attr now;
    if (get_attr(&now) < 0) {
        snprintf(buf, len, "unknown");
        return;
    }
    int32_t target = -1;
    int fd = open(CPU_LATENCY_DEV, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && read(fd, &target, sizeof target) != (ssize_t)sizeof target)
        target = -1;
    if (fd >= 0)
        close(fd);
    const char *awake = target == 0 ? "+awake" : "";
    if (real_time(now.policy))
        snprintf(buf, len, "%s/%u%s", policy_name(now.policy), now.priority, awake);
    else
        snprintf(buf, len, "%s/nice%d%s", policy_name(now.policy), now.nice, awake);
}
