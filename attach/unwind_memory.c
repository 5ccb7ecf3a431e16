/* unwind_memory.c - a page cache over process_vm_readv for the unwinder.
 * libunwind asks for one word at a time (a stack walk makes hundreds of
 * requests: return addresses, the sigreturn check reading code, binary
 * searches of eh_frame_hdr, CIE/FDE parsing); libunwind-ptrace answers each
 * with a PTRACE_PEEKDATA.  Here each page costs one read: read-only file
 * pages once per session, the rest once per stop. */
#include "attach/unwind_memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attach/memory.h"
#include "lib/proc/maps.h"

#define PAGE 4096u
#define PERSISTENT_SLOTS 1024   /* 4 MiB at most: direct-mapped by page number */
#define VOLATILE_SLOTS 16       /* a stop's stack pages */

struct page {
    uint64_t addr;              /* page address; valid only when data != NULL */
    uint8_t *data;
    unsigned stop;              /* for volatile pages: the stop that read it */
};

struct unwind_memory {
    pid_t pid;
    struct map_list maps;
    struct page persistent[PERSISTENT_SLOTS];
    struct page volatile_[VOLATILE_SLOTS];
    unsigned stop;              /* current stop number, starts at 1 */
};

struct unwind_memory *unwind_memory_new(pid_t pid, struct mp_error *err)
{
    struct unwind_memory *m = calloc(1, sizeof *m);
    if (!m) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    m->pid = pid;
    m->stop = 1;
    if (maps_read_pid(pid, &m->maps, err) < 0) {
        free(m);
        return NULL;
    }
    return m;
}

void unwind_memory_free(struct unwind_memory *m)
{
    if (!m)
        return;
    for (int i = 0; i < PERSISTENT_SLOTS; i++)
        free(m->persistent[i].data);
    for (int i = 0; i < VOLATILE_SLOTS; i++)
        free(m->volatile_[i].data);
    maps_free(&m->maps);
    free(m);
}

void unwind_memory_new_stop(struct unwind_memory *m)
{
    m->stop++;
}

static bool entry_persistent(const struct map_entry *e)
{
    return !e->w && !e->shared && (map_entry_is_file(e) || strcmp(e->path, "[vdso]") == 0);
}

static bool persistent(const struct unwind_memory *m, uint64_t addr)
{
    const struct map_entry *e = maps_find(&m->maps, addr);
    return e && entry_persistent(e);
}

/* The next persistent entry of l from index *i on, or NULL. */
static const struct map_entry *next_persistent(const struct map_list *l, size_t *i)
{
    for (; *i < l->n; (*i)++)
        if (entry_persistent(&l->v[*i]))
            return &l->v[(*i)++];
    return NULL;
}

static bool same_code(const struct map_list *a, const struct map_list *b)
{
    size_t i = 0, k = 0;
    for (;;) {
        const struct map_entry *x = next_persistent(a, &i), *y = next_persistent(b, &k);
        if (!x || !y)
            return !x && !y;
        if (x->start != y->start || x->end != y->end || x->offset != y->offset ||
            x->inode != y->inode || x->dev_major != y->dev_major ||
            x->dev_minor != y->dev_minor || x->x != y->x)
            return false;
    }
}

int unwind_memory_recheck(struct unwind_memory *m)
{
    struct map_list now;
    struct mp_error ignored;
    int rc = -1;
    if (maps_read_pid(m->pid, &now, &ignored) == 0) {
        rc = same_code(&m->maps, &now) ? 0 : 1;
        maps_free(&m->maps);
        m->maps = now;
    }
    if (rc != 0)
        for (int i = 0; i < PERSISTENT_SLOTS; i++) {
            free(m->persistent[i].data);
            m->persistent[i].data = NULL;
        }
    return rc;
}

static int read_page(struct unwind_memory *m, struct page *p, uint64_t addr)
{
    if (!p->data && !(p->data = malloc(PAGE)))
        return -1;
    struct mp_error ignored;
    if (remote_read(m->pid, addr, p->data, PAGE, &ignored) < 0) {
        p->addr = 0;
        p->stop = 0;
        return -1;
    }
    p->addr = addr;
    return 0;
}

static const uint8_t *persistent_page(struct unwind_memory *m, uint64_t addr)
{
    struct page *p = &m->persistent[(addr / PAGE) % PERSISTENT_SLOTS];
    if (p->data && p->addr == addr)
        return p->data;
    return read_page(m, p, addr) == 0 ? p->data : NULL;
}

/* Volatile pages of the current stop; a full table recycles round-robin. */
static const uint8_t *volatile_page(struct unwind_memory *m, uint64_t addr)
{
    struct page *free_slot = NULL;
    for (int i = 0; i < VOLATILE_SLOTS; i++) {
        struct page *p = &m->volatile_[i];
        if (p->stop == m->stop && p->addr == addr)
            return p->data;
        if (!free_slot && p->stop != m->stop)
            free_slot = p;
    }
    if (!free_slot)
        free_slot = &m->volatile_[(addr / PAGE) % VOLATILE_SLOTS];
    if (read_page(m, free_slot, addr) < 0)
        return NULL;
    free_slot->stop = m->stop;
    return free_slot->data;
}

static const uint8_t *page_of(struct unwind_memory *m, uint64_t page)
{
    return persistent(m, page) ? persistent_page(m, page)
                                             : volatile_page(m, page);
}

int unwind_memory_word(struct unwind_memory *m, uint64_t addr, uint64_t *val)
{
    uint8_t bytes[8];
    for (size_t done = 0; done < sizeof bytes;) {
        uint64_t a = addr + done, page = a & ~(uint64_t)(PAGE - 1);
        const uint8_t *data = page_of(m, page);
        if (!data)
            return -1;
        size_t off = (size_t)(a - page), n = PAGE - off;
        if (n > sizeof bytes - done)
            n = sizeof bytes - done;
        memcpy(bytes + done, data + off, n);
        done += n;
    }
    memcpy(val, bytes, sizeof bytes);
    return 0;
}
