/* link_map.c - which object's definition of a function the process's
 * calls reach: the dynamic loader's search order, read from its link map
 * in the process's memory (no thread stopped).
 *
 * The loader resolves a global symbol to the first object of its link map
 * that defines it: the executable, the LD_PRELOADed libraries, then the
 * needed ones breadth first; libraries dlopen()ed later come after libc
 * and so never take malloc from it.  The address order of /proc/PID/maps
 * says nothing of that order (libraries are mapped top-down), which is why
 * the map itself is read.  Everything read is the target's and untrusted:
 * the walk is bounded and each entry is only compared with objects memprof
 * opened itself. */
#include "attach/link_map.h"

#include <string.h>

#include "attach/memory.h"

/* The public head of glibc's struct link_map (<link.h>), stable ABI. */
struct lm_head {
    uint64_t l_addr;           /* load bias */
    uint64_t l_name;
    uint64_t l_ld;             /* runtime address of its dynamic section */
    uint64_t l_next, l_prev;
};

#define LINK_MAP_MAX 4096      /* objects walked before giving up */

/* The loader's r_debug: ld.so exports it as _r_debug. */
static uint64_t r_debug_address(const struct mapped_objects *objs)
{
    const struct mapped_object *ld = mapped_objects_named(objs, "ld-linux");
    if (!ld)
        ld = mapped_objects_named(objs, "ld-");
    if (!ld)
        return 0;
    const struct elf_symbol *s = elf_object_symbol_named(ld->elf, "_r_debug");
    return s && s->defined ? s->value + ld->bias : 0;
}

/* The object loaded with bias l_addr whose dynamic section is at l_ld. */
static const struct mapped_object *object_at(const struct mapped_objects *objs,
                                             const struct lm_head *e)
{
    for (size_t i = 0; i < objs->n; i++) {
        const struct mapped_object *o = &objs->v[i];
        if (o->bias != e->l_addr)
            continue;
        for (size_t k = 0; k < o->elf->nloads; k++) {
            const struct elf_load_segment *l = &o->elf->loads[k];
            uint64_t start = l->vaddr + o->bias;
            if (e->l_ld >= start && e->l_ld - start < l->memsz)
                return o;
        }
    }
    return NULL;
}

int link_map_definer(pid_t pid, const struct mapped_objects *objs, const char *name,
                     const struct mapped_object **out)
{
    *out = NULL;
    const struct mapped_object *exe = mapped_objects_exe(objs);
    if (exe && mapped_object_function(exe, name)) {
        *out = exe;
        return 0;
    }
    uint64_t rd = r_debug_address(objs), at;
    struct mp_error ignored;
    /* struct r_debug { int r_version; struct link_map *r_map; ... } */
    if (!rd || remote_read(pid, rd + 8, &at, sizeof at, &ignored) < 0)
        return -1;
    for (int n = 0; at && n < LINK_MAP_MAX; n++) {
        struct lm_head e;
        if (remote_read(pid, at, &e, sizeof e, &ignored) < 0)
            return -1;
        const struct mapped_object *o = object_at(objs, &e);
        const struct elf_symbol *s = o ? mapped_object_function(o, name) : NULL;
        if (s && s->dynamic) {
            *out = o;
            return 0;
        }
        at = e.l_next;
    }
    return at ? -1 : 0;
}
