/* tcmalloc.c - gperftools' tcmalloc driven from one borrowed thread through
 * the C interface of its MallocExtension (gperftools/malloc_extension_c.h):
 * MallocExtension_GetNumericProperty for each property below,
 * MallocExtension_GetStats for its own text report, and
 * MallocExtension_ReleaseFreeMemory for a purge.  Names, values and the
 * report's buffer live on the borrowed thread's stack below its red zone
 * for the one stop.
 *
 * tcmalloc takes its page-heap lock (a spin lock, not recursive) in most of
 * these: no thread stopped anywhere in the library's code is borrowed.  A
 * tcmalloc linked into the executable has no code of its own to tell apart
 * from the program's, so memprof does not call it. */
#include "allocator/tcmalloc/tcmalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach/remote_call.h"

struct tcmalloc_state {
    uint64_t get_property, get_stats, release;
    bool linked_in;
};

/* The properties memprof reads, in the order shown.  One the library does
 * not know (an older or newer gperftools) is left out. */
static const char *const properties[] = {
    "generic.current_allocated_bytes", "generic.heap_size",
    "generic.total_physical_bytes", "tcmalloc.pageheap_free_bytes",
    "tcmalloc.pageheap_unmapped_bytes", "tcmalloc.central_cache_free_bytes",
    "tcmalloc.transfer_cache_free_bytes", "tcmalloc.thread_cache_free_bytes",
    "tcmalloc.current_total_thread_cache_bytes",
    "tcmalloc.max_total_thread_cache_bytes", "tcmalloc.slack_bytes", NULL };
enum { NPROPS = sizeof properties / sizeof *properties - 1, NAME_ROOM = 64 };
#define STATS_TEXT_MAX (32 * 1024)   /* GetStats' buffer, on the thread's stack */

int tcmalloc_probe(struct target *t, const struct mapped_object *lib,
                   struct code_ranges *unsafe, struct mp_error *err)
{
    struct tcmalloc_state *m = calloc(1, sizeof *m);
    if (!m)
        return mp_error_set(err, "out of memory");
    m->get_property = mapped_object_function_address(lib, "MallocExtension_GetNumericProperty");
    m->get_stats = mapped_object_function_address(lib, "MallocExtension_GetStats");
    m->release = mapped_object_function_address(lib, "MallocExtension_ReleaseFreeMemory");
    m->linked_in = lib->is_exe;
    target_set_allocator(t, m, free);
    snprintf(unsafe->what, sizeof unsafe->what, "tcmalloc");
    if (!lib->is_exe && code_ranges_add(unsafe, lib->text_start, lib->text_end) < 0)
        return mp_error_set(err, "out of memory");
    return 0;
}

/* What one stop reads: the properties, and the text report when asked. */
struct props_call {
    const struct tcmalloc_state *m;
    bool known[NPROPS];
    uint64_t value[NPROPS];
    bool want_text, release;
    char *text;                 /* malloc'd */
    uint64_t before[NPROPS];    /* with release: the values before it */
    bool known_before[NPROPS];
};

static int read_props(struct remote_stop *s, const struct tcmalloc_state *m, uint64_t names,
                      uint64_t values, uint64_t sp, bool *known, uint64_t *value,
                      struct mp_error *err)
{
    for (size_t i = 0; i < NPROPS; i++) {
        uint64_t ok, v = 0;
        uint64_t args[2] = { names + i * NAME_ROOM, values + i * 8 };
        if (remote_stop_call(s, m->get_property, args, 2, sp, &ok, err) < 0)
            return mp_error_prefix(err, "MallocExtension_GetNumericProperty(\"%s\")",
                                   properties[i]);
        known[i] = (uint32_t)ok != 0;    /* an int */
        if (known[i] && remote_stop_read(s, values + i * 8, &v, sizeof v, err) < 0)
            return -1;
        value[i] = v;
    }
    return 0;
}

static int props_body(struct remote_stop *s, void *arg, struct mp_error *err)
{
    struct props_call *c = arg;
    size_t text_room = c->want_text ? STATS_TEXT_MAX : 0;
    size_t size = NPROPS * NAME_ROOM + NPROPS * 8 + text_room;
    uint64_t base, sp, r;
    if (remote_stop_scratch(s, size, &base, &sp, err) < 0)
        return -1;
    char names[NPROPS * NAME_ROOM] = { 0 };
    for (size_t i = 0; i < NPROPS; i++)
        snprintf(names + i * NAME_ROOM, NAME_ROOM, "%s", properties[i]);
    uint64_t values = base + sizeof names, text = values + NPROPS * 8;
    if (remote_stop_write(s, base, names, sizeof names, err) < 0)
        return -1;
    if (c->release) {
        if (read_props(s, c->m, base, values, sp, c->known_before, c->before, err) < 0)
            return -1;
        if (remote_stop_call(s, c->m->release, NULL, 0, sp, &r, err) < 0)
            return mp_error_prefix(err, "MallocExtension_ReleaseFreeMemory()");
    }
    if (read_props(s, c->m, base, values, sp, c->known, c->value, err) < 0)
        return -1;
    if (!c->want_text)
        return 0;
    if (remote_stop_call(s, c->m->get_stats, (uint64_t[]){ text, STATS_TEXT_MAX }, 2, sp,
                         &r, err) < 0)
        return mp_error_prefix(err, "MallocExtension_GetStats()");
    c->text = malloc(STATS_TEXT_MAX + 1);
    if (!c->text)
        return mp_error_set(err, "out of memory");
    if (remote_stop_read(s, text, c->text, STATS_TEXT_MAX, err) < 0)
        return -1;
    c->text[STATS_TEXT_MAX] = '\0';
    return 0;
}

static int usable(struct target *t, const struct tcmalloc_state *m, bool release,
                  struct mp_error *err)
{
    if (m->linked_in)
        return mp_error_set(err, "process %d has tcmalloc linked into its executable: "
                            "memprof cannot tell tcmalloc's code from the program's, so "
                            "it cannot make sure no borrowed thread is inside tcmalloc, "
                            "and does not call it", target_pid(t));
    if (!m->get_property || (release ? !m->release : !m->get_stats))
        return mp_error_set(err, "process %d's tcmalloc lacks MallocExtension's C "
                            "functions (MallocExtension_GetNumericProperty, _GetStats, "
                            "_ReleaseFreeMemory) memprof calls", target_pid(t));
    return 0;
}

static uint64_t prop(const bool *known, const uint64_t *v, const char *name)
{
    for (size_t i = 0; i < NPROPS; i++)
        if (known[i] && strcmp(properties[i], name) == 0)
            return v[i];
    return UINT64_MAX;
}

static uint64_t sum(uint64_t a, uint64_t b)
{
    return a == UINT64_MAX || b == UINT64_MAX ? UINT64_MAX : a + b;
}

/* Free memory tcmalloc holds: its page heap and its caches. */
static uint64_t free_held(const bool *k, const uint64_t *v)
{
    uint64_t caches = sum(prop(k, v, "tcmalloc.central_cache_free_bytes"),
                          sum(prop(k, v, "tcmalloc.transfer_cache_free_bytes"),
                              prop(k, v, "tcmalloc.thread_cache_free_bytes")));
    return sum(prop(k, v, "tcmalloc.pageheap_free_bytes"), caches);
}

/* What it holds from the system: its heap less what it unmapped. */
static uint64_t from_system(const bool *k, const uint64_t *v)
{
    uint64_t heap = prop(k, v, "generic.heap_size");
    uint64_t unmapped = prop(k, v, "tcmalloc.pageheap_unmapped_bytes");
    return heap == UINT64_MAX || unmapped == UINT64_MAX || unmapped > heap
               ? heap : heap - unmapped;
}

int tcmalloc_stats(struct target *t, struct allocator_stats *st, struct mp_error *err)
{
    struct props_call c = { .m = target_allocator(t), .want_text = true };
    if (usable(t, c.m, false, err) < 0 || target_stop_run(t, props_body, &c, err) < 0) {
        free(c.text);
        return -1;
    }
    for (size_t i = 0; i < NPROPS; i++)
        if (c.known[i])
            allocator_stats_add(st, properties[i], c.value[i]);
    st->in_use = prop(c.known, c.value, "generic.current_allocated_bytes");
    st->free_held = free_held(c.known, c.value);
    st->from_system = from_system(c.known, c.value);
    st->text = c.text;
    return 0;
}

int tcmalloc_purge(struct target *t, struct allocator_purge *p, struct mp_error *err)
{
    struct props_call c = { .m = target_allocator(t), .release = true };
    if (usable(t, c.m, true, err) < 0 || target_stop_run(t, props_body, &c, err) < 0)
        return -1;
    p->free_before = free_held(c.known_before, c.before);
    p->free_after = free_held(c.known, c.value);
    p->system_before = from_system(c.known_before, c.before);
    p->system_after = from_system(c.known, c.value);
    return 0;
}
