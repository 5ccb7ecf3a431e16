/* unwind_memory.c - a page cache over process_vm_readv for the unwinder.
 * libunwind asks for one word at a time (a stack walk makes hundreds of
 * requests: return addresses, the sigreturn check reading code, binary
 * searches of eh_frame_hdr, CIE/FDE parsing); libunwind-ptrace answers each
 * with a PTRACE_PEEKDATA.  Here each page costs one read: read-only file
 * pages once per session, the rest once per stop.  Ranges that are known
 * to hold exactly a file's bytes (the read-only segment with an object's
 * unwind tables) are read from memprof's own mapping of that file: no read
 * of the process at all, even in the first stop of a session, whatever the
 * tables' size (file windows). */
#include "attach/unwind_memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "attach/memory.h"
#include "lib/base/array.h"
#include "lib/proc/maps.h"

#define PAGE 4096u
#define PERSISTENT_SLOTS 1024   /* 4 MiB at most: direct-mapped by page number */
#define VOLATILE_SLOTS 16       /* a stop's stack pages */

struct page {
    uint64_t addr;              /* page address; valid only when data != NULL */
    uint8_t *data;
    unsigned stop;              /* for volatile pages: the stop that read it */
};

/* A range of the process's memory served from memprof's mapping of the
 * file the process maps there. */
struct file_window {
    uint64_t start, end;        /* in the process */
    const uint8_t *data;        /* the bytes of start, in memprof */
    void *map;                  /* memprof's mapping, and its length */
    size_t map_len;
};

struct unwind_memory {
    pid_t pid;
    struct file_window *windows;
    size_t nwindows, windows_cap;
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

static void drop_windows(struct unwind_memory *m)
{
    for (size_t i = 0; i < m->nwindows; i++)
        munmap(m->windows[i].map, m->windows[i].map_len);
    m->nwindows = 0;
}

void unwind_memory_free(struct unwind_memory *m)
{
    if (!m)
        return;
    drop_windows(m);
    free(m->windows);
    for (int i = 0; i < PERSISTENT_SLOTS; i++)
        free(m->persistent[i].data);
    for (int i = 0; i < VOLATILE_SLOTS; i++)
        free(m->volatile_[i].data);
    maps_free(&m->maps);
    free(m);
}

const struct map_list *unwind_memory_maps(const struct unwind_memory *m)
{
    return &m->maps;
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
        drop_windows(m);
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

/* The one mapping of the current map that holds [start, end), or NULL. */
static const struct map_entry *mapping_of(const struct unwind_memory *m, uint64_t start,
                                          uint64_t end)
{
    const struct map_entry *e = maps_find(&m->maps, start);
    return e && end <= e->end ? e : NULL;
}

int unwind_memory_add_file(struct unwind_memory *m, uint64_t start, uint64_t end, int fd,
                           uint64_t file_offset)
{
    const struct map_entry *e = mapping_of(m, start, end);
    struct stat st;
    /* The very file, at the very offset, mapped private and read-only. */
    if (!e || start >= end || !entry_persistent(e) || !map_entry_is_file(e) ||
        e->start - e->offset != start - file_offset || fstat(fd, &st) < 0 ||
        !S_ISREG(st.st_mode) || st.st_ino != e->inode || major(st.st_dev) != e->dev_major ||
        minor(st.st_dev) != e->dev_minor || file_offset > (uint64_t)st.st_size ||
        end - start > (uint64_t)st.st_size - file_offset)
        return -1;
    uint64_t page_off = file_offset & ~(uint64_t)(PAGE - 1);
    size_t len = (size_t)(end - start + (file_offset - page_off));
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, (off_t)page_off);
    if (map == MAP_FAILED)
        return -1;
    if (array_reserve(&m->windows, &m->windows_cap, m->nwindows + 1, sizeof *m->windows, 8)) {
        munmap(map, len);
        return -1;
    }
    m->windows[m->nwindows++] = (struct file_window){
        .start = start, .end = end, .data = (const uint8_t *)map + (file_offset - page_off),
        .map = map, .map_len = len};
    return 0;
}

int unwind_memory_word(struct unwind_memory *m, uint64_t addr, uint64_t *val)
{
    for (size_t i = 0; i < m->nwindows; i++) {
        const struct file_window *w = &m->windows[i];
        if (addr >= w->start && addr < w->end && w->end - addr >= sizeof *val) {
            memcpy(val, w->data + (addr - w->start), sizeof *val);
            return 0;
        }
    }
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
