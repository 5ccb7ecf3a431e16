/* perf_record.c - owns the reading of one perf ring-buffer record
 * (perf_record.h): bounded by the record's own size, nothing trusted. */
#include "lib/proc/perf_record.h"

#include <string.h>

/* The kernel's record types and header bits (linux/perf_event.h), spelled
 * out so that lib/ needs no kernel header. */
#define REC_LOST            2u
#define REC_THROTTLE        5u
#define REC_UNTHROTTLE      6u
#define REC_SAMPLE          9u
#define MISC_CPUMODE_MASK   7u
#define MISC_KERNEL         1u
#define HEADER_BYTES        8u

struct cursor {
    const uint8_t *p;
    size_t left;
};

static bool take(struct cursor *c, void *out, size_t n)
{
    if (c->left < n)
        return false;
    memcpy(out, c->p, n);
    c->p += n;
    c->left -= n;
    return true;
}

static bool take_u64(struct cursor *c, uint64_t *v)
{
    return take(c, v, sizeof *v);
}

/* REGS_USER: the abi word, then the registers only when it is not 0 (no
 * user context: a kernel thread). */
static bool take_regs(struct cursor *c, struct perf_fault_sample *s)
{
    uint64_t abi, r[PERF_RECORD_USER_REGS];
    if (!take_u64(c, &abi))
        return false;
    s->has_regs = abi != 0;
    if (!s->has_regs)
        return true;
    if (!take(c, r, sizeof r))
        return false;
    s->fp = r[0];
    s->sp = r[1];
    s->pc = r[2];
    return true;
}

/* STACK_USER: size, that many bytes, and (when size is not 0) dyn_size,
 * the bytes of them the kernel could copy. */
static bool take_stack(struct cursor *c, struct perf_fault_sample *s)
{
    uint64_t size, dyn;
    if (!take_u64(c, &size))
        return false;
    if (size == 0)
        return true;
    if (size > c->left || c->left - size < sizeof dyn)
        return false;
    s->stack = c->p;
    c->p += size;
    c->left -= size;
    if (!take_u64(c, &dyn) || dyn > size)
        return false;
    s->stack_len = (size_t)dyn;
    return true;
}

static enum perf_record_kind parse_sample(struct cursor *c, uint16_t misc, bool with_period,
                                          struct perf_fault_sample *s)
{
    uint32_t ids[2];
    memset(s, 0, sizeof *s);
    if (!take_u64(c, &s->ip) || !take(c, ids, sizeof ids) || !take_u64(c, &s->addr) ||
        (with_period && !take_u64(c, &s->period)) || !take_regs(c, s) || !take_stack(c, s))
        return PERF_RECORD_KIND_BAD;
    s->pid = ids[0];
    s->tid = ids[1];
    s->kernel = (misc & MISC_CPUMODE_MASK) == MISC_KERNEL;
    return PERF_RECORD_KIND_SAMPLE;
}

enum perf_record_kind perf_record_parse(const uint8_t *rec, size_t len, bool with_period,
                                        struct perf_record *out)
{
    uint32_t type;
    uint16_t misc, size;
    memset(out, 0, sizeof *out);
    if (len < HEADER_BYTES)
        return out->kind = PERF_RECORD_KIND_BAD;
    memcpy(&type, rec, 4);
    memcpy(&misc, rec + 4, 2);
    memcpy(&size, rec + 6, 2);
    if (size != len)
        return out->kind = PERF_RECORD_KIND_BAD;
    struct cursor c = {rec + HEADER_BYTES, len - HEADER_BYTES};
    uint64_t id;
    switch (type) {
    case REC_SAMPLE:
        return out->kind = parse_sample(&c, misc, with_period, &out->sample);
    case REC_LOST:
        if (!take_u64(&c, &id) || !take_u64(&c, &out->lost))
            return out->kind = PERF_RECORD_KIND_BAD;
        return out->kind = PERF_RECORD_KIND_LOST;
    case REC_THROTTLE:
    case REC_UNTHROTTLE:
        return out->kind = type == REC_THROTTLE ? PERF_RECORD_KIND_THROTTLE
                                                 : PERF_RECORD_KIND_OTHER;
    default:
        return out->kind = PERF_RECORD_KIND_OTHER;
    }
}
