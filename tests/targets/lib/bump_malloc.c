/* bump_malloc.c - an allocator memprof does not know: a library that
 * defines malloc, free, calloc and realloc over one mmap()ed region (free
 * does nothing), for a process to LD_PRELOAD so that its malloc() is
 * served by neither jemalloc, glibc, tcmalloc nor mimalloc. */
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#define REGION (256u << 20)

static char *region, *next, *end;

/* n bytes (16-aligned) after a 16-byte header holding n; NULL when full. */
static void *take(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (!region) {
        region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        next = region;
        end = region + REGION;
    }
    if (region == MAP_FAILED || (size_t)(end - next) < n + 16)
        return NULL;
    *(size_t *)next = n;
    void *p = next + 16;
    next += n + 16;
    return p;
}

void *malloc(size_t n)
{
    return take(n);
}

void free(void *p)
{
    (void)p;
}

void *calloc(size_t a, size_t b)
{
    if (b && a > (size_t)-1 / b)
        return NULL;
    void *p = take(a * b);
    if (p)
        memset(p, 0, a * b);
    return p;
}

void *realloc(void *p, size_t n)
{
    void *q = take(n);
    if (q && p) {
        size_t old = ((size_t *)p)[-2];
        memcpy(q, p, old < n ? old : n);
    }
    return q;
}
