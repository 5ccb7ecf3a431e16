/* memory_cgroup.c - the cgroup part of 'memory': the process's cgroup
 * (v2, or v1's memory hierarchy), its usage against its limit and the
 * headroom left, the process's RSS as a share of the limit, the OOM and
 * limit events, memory pressure, and the host's OOM kills; as lines and as
 * JSON (the "cgroup" object and "host_oom_kills", docs/memprof.1).  The
 * figures are read below (session/process_files.c, lib/proc/cgroup_memory.c). */
#include "repl/memory_cgroup.h"

#include <inttypes.h>
#include <stdio.h>

#include "lib/base/text_escape.h"

/* Figures are shown in MiB (cmd_memory.c's unit, not included: it
 * includes this file's header). */
#define MIB (1024.0 * 1024.0)

static void put_u64(json_object *o, const char *key, uint64_t v)
{
    if (v != CGROUP_ABSENT)
        json_object_object_add(o, key, json_object_new_uint64(v));
}

/* A limit: bytes, null when unlimited ("max"), left out when absent. */
static void put_limit(json_object *o, const char *key, uint64_t v, bool unlimited)
{
    if (unlimited)
        json_object_object_add(o, key, NULL);
    else
        put_u64(o, key, v);
}

static json_object *psi_json(const struct procmem_psi *p)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "avg10", json_object_new_double(p->avg10));
    json_object_object_add(o, "avg60", json_object_new_double(p->avg60));
    json_object_object_add(o, "avg300", json_object_new_double(p->avg300));
    json_object_object_add(o, "total_us", json_object_new_uint64(p->total_us));
    return o;
}

static json_object *pressure_json(const struct cgroup_memory *c)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string(c->where.pressure.path));
    json_object_object_add(o, "some", psi_json(&c->some));
    if (c->has_full)
        json_object_object_add(o, "full", psi_json(&c->full));
    return o;
}

void memory_cgroup_json(json_object *o, const struct memory_cgroup_view *v)
{
    if (v->host_oom_kills != CGROUP_ABSENT)
        json_object_object_add(o, "host_oom_kills", json_object_new_uint64(v->host_oom_kills));
    if (!v->ok) {
        json_object_object_add(o, "cgroup_error", json_object_new_string(v->why));
        return;
    }
    const struct cgroup_memory *c = v->cg;
    json_object *j = json_object_new_object();
    json_object_object_add(j, "version", json_object_new_int(c->where.memory.version == CGROUP_V1 ? 1 : 2));
    json_object_object_add(j, "path", json_object_new_string(c->where.memory.path));
    json_object_object_add(j, "mount", json_object_new_string(c->where.memory.mount));
    put_u64(j, "memory_current", c->current);
    put_limit(j, "memory_max", c->max, c->max_unlimited);
    if (c->where.memory.version == CGROUP_V2)
        put_limit(j, "memory_high", c->high, c->high_unlimited);
    put_u64(j, "headroom", cgroup_memory_headroom(c));
    put_u64(j, "anon", c->anon);
    put_u64(j, "file", c->file);
    put_u64(j, "oom", c->ev_oom);
    put_u64(j, "oom_kill", c->ev_oom_kill);
    put_u64(j, "oom_group_kill", c->ev_oom_group_kill);
    put_u64(j, "high_events", c->ev_high);
    put_u64(j, "max_events", c->ev_max);
    put_u64(j, "under_oom", c->under_oom);
    if (c->has_pressure)
        json_object_object_add(j, "pressure", pressure_json(c));
    json_object_object_add(o, "cgroup", j);
}

/* The events there are, "name N" each, into buf. */
static void events_text(char *buf, size_t len, const struct cgroup_memory *c)
{
    static const char *const names[] = {"oom", "oom_kill", "oom_group_kill", "high", "max",
                                        "under_oom"};
    const uint64_t vals[] = {c->ev_oom, c->ev_oom_kill, c->ev_oom_group_kill, c->ev_high,
                             c->ev_max, c->under_oom};
    size_t at = 0;
    buf[0] = 0;
    for (size_t i = 0; i < sizeof vals / sizeof *vals && at < len; i++)
        if (vals[i] != CGROUP_ABSENT)
            at += (size_t)snprintf(buf + at, len - at, "%s%s %" PRIu64, at ? ", " : "",
                                   c->where.memory.version == CGROUP_V1 && i == 4
                                       ? "max (failcnt)" : names[i], vals[i]);
}

/* What the usage is made of (memory.stat). */
static void stat_text(FILE *o, const struct cgroup_memory *c)
{
    if (c->anon != CGROUP_ABSENT && c->file != CGROUP_ABSENT)
        fprintf(o, "                     of which anonymous %.1f MiB, page cache %.1f MiB "
                "(the kernel reclaims cache before it kills)\n", c->anon / MIB, c->file / MIB);
}

static void usage_text(FILE *o, const struct cgroup_memory *c, uint64_t rss)
{
    if (c->max_unlimited || c->max == CGROUP_ABSENT) {
        fprintf(o, "  usage              %10.1f MiB  (no limit)\n", c->current / MIB);
        stat_text(o, c);
        return;
    }
    uint64_t room = cgroup_memory_headroom(c);
    fprintf(o, "  usage              %10.1f MiB  of the limit %.1f MiB (%.1f %%): headroom "
            "%.1f MiB\n", c->current / MIB, c->max / MIB,
            c->max ? 100.0 * (double)c->current / (double)c->max : 100.0, room / MIB);
    stat_text(o, c);
    if (c->max)
        fprintf(o, "  this process's RSS %10.1f MiB  = %.1f %% of the limit\n", rss / MIB,
                100.0 * (double)rss / (double)c->max);
}

void memory_cgroup_text(FILE *o, const struct memory_cgroup_view *v, uint64_t rss)
{
    char eb[TEXT_ESCAPE_BUF], line[256];
    if (!v->ok) {
        fprintf(o, "cgroup               unknown: %s\n", text_escape(v->why, eb, sizeof eb));
    } else {
        const struct cgroup_memory *c = v->cg;
        fprintf(o, "cgroup               %s (v%d, under %s)\n",
                text_escape(c->where.memory.path, eb, sizeof eb),
                c->where.memory.version == CGROUP_V1 ? 1 : 2, c->where.memory.mount);
        usage_text(o, c, rss);
        if (c->where.memory.version == CGROUP_V2 && !c->high_unlimited &&
            c->high != CGROUP_ABSENT)
            fprintf(o, "  memory.high        %10.1f MiB  (above it the cgroup is throttled)\n",
                    c->high / MIB);
        events_text(line, sizeof line, c);
        fprintf(o, "  events             %s\n", line[0] ? line : "none readable");
        if (c->has_pressure)
            fprintf(o, "  pressure           some %.2f/%.2f/%.2f %%, full %.2f/%.2f/%.2f %% "
                    "(10/60/300 s; of v2 cgroup %s)\n", c->some.avg10, c->some.avg60,
                    c->some.avg300, c->full.avg10, c->full.avg60, c->full.avg300,
                    text_escape(c->where.pressure.path, eb, sizeof eb));
    }
    if (v->host_oom_kills != CGROUP_ABSENT)
        fprintf(o, "host OOM kills       %" PRIu64 " since boot (/proc/vmstat oom_kill)\n",
                v->host_oom_kills);
}
