/* unsafe_frames.c - a main thread parked in a restartable read() with a
 * frame on its stack where mallctl must never be called, beside a helper
 * thread that is a fine choice.  Both threads are blocked in read(), so
 * they rank equally and memprof tries the main thread (lower tid) first:
 * it must refuse it and use the helper.
 *
 *   unsafe_frames signal  FIFO [alone]  read() inside a SIGUSR1 handler
 *   unsafe_frames dlopen  FIFO LIB      read() inside LIB's constructor,
 *                                       under dlopen (loader lock held)
 *   unsafe_frames extent  FIFO          read() inside a jemalloc extent
 *                                       alloc hook, under mallocx()
 *   unsafe_frames extent_nofp FIFO      the same, under a frame that sets
 *                                       rbp to 0 (as code without frame
 *                                       pointers may): only unwind tables
 *                                       step past it, a frame-pointer
 *                                       guess ends the walk there
 *   unsafe_frames extent_nocfi FIFO     the same frame with no unwind
 *                                       table at all: no walk can step
 *                                       past it
 *   unsafe_frames late    FIFO LIB      a safe place memprof has not seen:
 *                                       read() on FIFO in the program until
 *                                       "load" arrives, then dlopen(LIB) and
 *                                       read() under LIB's late_park()
 *   unsafe_frames deep    FIFO          read() under 1100 frames of a
 *                                       recursion: deeper than memprof walks
 *
 * "alone": no helper thread, so every thread is unsafe.  Prints "helper
 * TID" (when there is one) and "ready" once parked, then, after the test
 * writes the message into FIFO, "unsafe read ok" if it arrived whole and
 * "finished" when the main thread is back from the unsafe place. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <jemalloc/jemalloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "helper_thread.h"
#include "target_common.h"
#include "unsafe_frames.h"

static const char *fifo;

/* Called where it hurts: says ready, blocks, checks the message. */
void unsafe_frames_block(void)
{
    int fd = open(fifo, O_RDWR);  /* O_RDWR: open does not wait for a writer */
    char buf[256];
    const char ready[] = "ready\n";
    if (write(1, ready, sizeof ready - 1) < 0)
        _exit(3);
    ssize_t n = read(fd, buf, sizeof buf);
    const char *verdict = n == (ssize_t)strlen(UNSAFE_MESSAGE) &&
                                  memcmp(buf, UNSAFE_MESSAGE, (size_t)n) == 0
                              ? "unsafe read ok\n" : "UNSAFE READ BAD\n";
    if (write(1, verdict, strlen(verdict)) < 0)
        _exit(3);
    close(fd);
}

static void on_usr1(int sig)
{
    (void)sig;
    unsafe_frames_block();
}

static void in_signal_handler(void)
{
    struct sigaction sa = { .sa_handler = on_usr1 };
    sigaction(SIGUSR1, &sa, NULL);
    raise(SIGUSR1);
}

/* Blocks in the program first; once told, maps LIB (a mapping memprof
 * never saw) and blocks again inside it. */
static void in_late_library(const char *lib)
{
    int fd = open(fifo, O_RDWR);
    char buf[16];
    printf("ready\n");
    if (read(fd, buf, sizeof buf) != 5 || memcmp(buf, "load\n", 5) != 0)
        exit(2);
    close(fd);
    void *h = dlopen(lib, RTLD_NOW);
    void (*park)(void) = h ? (void (*)(void))dlsym(h, "late_park") : NULL;
    if (!park) {
        printf("dlopen: %s\n", dlerror());
        exit(2);
    }
    park();
}

/* Blocks DEEP_FRAMES calls down: work after each call keeps every frame. */
#define DEEP_FRAMES 1100
__attribute__((noinline)) static int deep(int n)
{
    if (n == 0) {
        unsafe_frames_block();
        return 0;
    }
    return deep(n - 1) + (n & 1);
}

static void in_constructor(const char *lib)
{
    setenv("UNSAFE_FRAMES_FIFO", fifo, 1);
    if (!dlopen(lib, RTLD_NOW)) {
        printf("dlopen: %s\n", dlerror());
        exit(2);
    }
}

/* ---- extent hooks: jemalloc calls alloc with its own frames below ---- */

static bool armed;   /* block once, in the first allocation after arenas.create */
static int nofp;     /* 1: block under park_with_rbp_zero, 2: under
                      * park_without_table */

#if defined(__x86_64__)
/* unsafe_frames_block with rbp 0 while it runs (put back after), and CFI
 * that says where the caller's frame is. */
void park_with_rbp_zero(void);
__asm__(".text\n"
        ".globl park_with_rbp_zero\n"
        ".type park_with_rbp_zero, @function\n"
        "park_with_rbp_zero:\n"
        ".cfi_startproc\n"
        "  push %rbp\n"
        ".cfi_adjust_cfa_offset 8\n"
        ".cfi_rel_offset %rbp, 0\n"
        "  xor %ebp, %ebp\n"
        "  call unsafe_frames_block@PLT\n"
        "  pop %rbp\n"
        ".cfi_adjust_cfa_offset -8\n"
        ".cfi_restore %rbp\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size park_with_rbp_zero, .-park_with_rbp_zero\n");
/* The same without CFI: no FDE covers it. */
void park_without_table(void);
__asm__(".text\n"
        ".globl park_without_table\n"
        ".type park_without_table, @function\n"
        "park_without_table:\n"
        "  push %rbp\n"
        "  xor %ebp, %ebp\n"
        "  call unsafe_frames_block@PLT\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size park_without_table, .-park_without_table\n");
#else
static void park_with_rbp_zero(void)
{
    unsafe_frames_block();
}
static void park_without_table(void)
{
    unsafe_frames_block();
}
#endif

/* size bytes aligned to align: map more, unmap the ends. */
static void *map_aligned(size_t size, size_t align)
{
    size_t len = size + align;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
    if (start > p)
        munmap(p, (size_t)(start - p));
    if (start + size < p + len)
        munmap(start + size, (size_t)(p + len - (start + size)));
    return start;
}

static void *hook_alloc(extent_hooks_t *h, void *addr, size_t size, size_t align,
                        bool *zero, bool *commit, unsigned arena)
{
    (void)h, (void)arena;
    if (armed) {
        armed = false;
        if (nofp == 1)
            park_with_rbp_zero();
        else if (nofp == 2)
            park_without_table();
        else
            unsafe_frames_block();
    }
    if (addr)
        return NULL;   /* no growing in place */
    void *p = map_aligned(size, align < 4096 ? 4096 : align);
    if (p)
        *zero = *commit = true;
    return p;
}

static extent_hooks_t hooks = { .alloc = hook_alloc };

static void in_jemalloc(void)
{
    extent_hooks_t *hp = &hooks;
    unsigned arena;
    size_t len = sizeof arena;
    if (mallctl("arenas.create", &arena, &len, &hp, sizeof hp) != 0) {
        printf("arenas.create failed\n");
        exit(2);
    }
    armed = true;
    void *p = mallocx(8 << 20, MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE);
    printf("mallocx %s\n", p ? "ok" : "failed");
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    if (argc < 3) {
        fprintf(stderr, "usage: unsafe_frames signal|dlopen|late|deep|extent|extent_nofp|extent_nocfi FIFO [alone|LIB]\n");
        return 2;
    }
    fifo = argv[2];
    bool alone = argc > 3 && strcmp(argv[3], "alone") == 0;
    if (!alone)
        printf("helper %d\n", (int)helper_start());
    if (strcmp(argv[1], "signal") == 0)
        in_signal_handler();
    else if (strcmp(argv[1], "dlopen") == 0 && argc > 3)
        in_constructor(argv[3]);
    else if (strcmp(argv[1], "late") == 0 && argc > 3)
        in_late_library(argv[3]);
    else if (strcmp(argv[1], "deep") == 0)
        (void)deep(DEEP_FRAMES);
    else if (strcmp(argv[1], "extent") == 0)
        in_jemalloc();
    else if (strcmp(argv[1], "extent_nofp") == 0 || strcmp(argv[1], "extent_nocfi") == 0) {
        nofp = strcmp(argv[1], "extent_nofp") == 0 ? 1 : 2;
        in_jemalloc();
    }
    else
        return 2;
    printf("finished\n");
    pause();
    return 0;
}
