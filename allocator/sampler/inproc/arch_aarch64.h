/* arch_aarch64.h - the CPU's part of the in-process sampler (sampler.c) on
 * arm64: the thread pointer (tpidr_el0), system calls made with `svc #0`
 * (number in x8, arguments in x0..x5, -errno back in x0; errno untouched),
 * the first step of a stack walk, and return addresses stripped of their
 * pointer-authentication signature.
 *
 * Freestanding: the kernel's numbers and structures (asm-generic, which
 * arm64 uses) are written out here rather than taken from libc's
 * headers, which the image cannot use. */
#ifndef MEMPROF_SAMPLER_ARCH_AARCH64_H
#define MEMPROF_SAMPLER_ARCH_AARCH64_H

#include <stdint.h>

/* The only system calls the image makes (tools/embed_image.py reads
 * these lines and fails the build if the image makes another).  arm64 has
 * no fstat of its own number 5: asm-generic's is 80, with the generic
 * struct stat (st_dev, st_ino, ...: 128 bytes). */
#define ARCH_SYS_PPOLL             73
#define ARCH_SYS_PROCESS_VM_READV  270
#define ARCH_SYS_PIPE2             59
#define ARCH_SYS_FSTAT             80
#define ARCH_SYS_RT_SIGPROCMASK    135
#define ARCH_STAT_WORDS            16     /* sizeof(struct stat) / 8 */

/* The smallest page an arm64 kernel uses (4, 16 or 64 KiB): a read that
 * stays within a 4 KiB page stays within the real one. */
#define ARCH_PAGE_SIZE 4096u

/* The data half's address, as the code reaches it: adrp+add of the block
 * itself, then offsets added at run time.  Left to itself the compiler
 * folds a large field offset into the symbol's addend, which the small
 * code model cannot encode pc-relative past 1 MiB: it puts the absolute
 * address in a literal needing a relocation, which the image cannot have
 * (the link refuses it). */
static inline __attribute__((always_inline)) void *arch_data(const void *block)
{
    void *p = (void *)(uintptr_t)block;     /* ARCH_DATA gives back block's type */
    __asm__("" : "+r"(p));
    return p;
}
#define ARCH_DATA(block) ((__typeof__(block))arch_data(block))

/* tpidr_el0 is the thread pointer (the arm64 TLS ABI): a per-thread value
 * read without a system call. */
static inline uint64_t arch_thread_pointer(void)
{
    uint64_t tp;
    __asm__("mrs %0, tpidr_el0" : "=r"(tp));
    return tp;
}

/* System calls.  The number is loaded inside the asm, right before the
 * instruction, so that tools/embed_image.py can check from the image
 * alone that it makes no call but the ARCH_SYS_* above.  The kernel
 * preserves every register but x0; "memory" because ppoll and
 * process_vm_readv write through pointers the compiler cannot see in the
 * operands.  Macros: the number must be a constant ("i"). */
#define ARCH_SYSCALL6(nr, a1, a2, a3, a4, a5, a6) ({                      \
        register uint64_t x0_ __asm__("x0") = (a1);                       \
        register uint64_t x1_ __asm__("x1") = (a2);                       \
        register uint64_t x2_ __asm__("x2") = (a3);                       \
        register uint64_t x3_ __asm__("x3") = (a4);                       \
        register uint64_t x4_ __asm__("x4") = (a5);                       \
        register uint64_t x5_ __asm__("x5") = (a6);                       \
        __asm__ volatile("mov x8, %1\n\tsvc #0"                           \
                         : "+r"(x0_)                                       \
                         : "i"(nr), "r"(x1_), "r"(x2_), "r"(x3_), "r"(x4_), \
                           "r"(x5_)                                        \
                         : "x8", "memory");                               \
        (int64_t)x0_; })

/* A return address without its pointer-authentication code: code built
 * with -mbranch-protection (Debian's arm64 packages) signs x30 before
 * saving it, so the words a walk reads from stacks carry a signature in
 * their upper bits.  xpaclri (a hint: a no-op on a CPU without PAC)
 * strips x30 with this process's own keys' layout, as the kernel's
 * unwinder and libgcc do. */
static inline uint64_t arch_strip_pac(uint64_t ra)
{
    register uint64_t x30_ __asm__("x30") = ra;
    __asm__("hint #7" : "+r"(x30_));    /* xpaclri */
    return x30_;
}

/* Where a stack walk starts: the registers of the function that called the
 * stand-in, as they will be when the call returns.  On arm64 the frame
 * record (x29, x30) sits at the bottom of the stand-in's frame, with its
 * locals above it, so the caller's sp is not a fixed distance from it:
 * ARCH_MY_FRAME() therefore gathers, inside the stand-in, the caller's
 * x29 and the return address from the record and the caller's sp (the
 * stand-in's CFA: arm64 calls push nothing), as three words. */
#define ARCH_MY_FRAME() ((const uint64_t *)(const uint64_t[3]){                 \
        ((const uint64_t *)__builtin_frame_address(0))[0],                      \
        ((const uint64_t *)__builtin_frame_address(0))[1],                      \
        (uint64_t)(uintptr_t)__builtin_dwarf_cfa() })

struct arch_walk_regs {
    uint64_t pc;               /* a return address into the current function */
    uint64_t sp;               /* its stack pointer once that call returned */
    uint64_t fp;               /* its frame pointer (x29) */
};

static inline struct arch_walk_regs arch_walk_start(const uint64_t *frame)
{
    struct arch_walk_regs r;
    r.fp = frame[0];
    r.pc = arch_strip_pac(frame[1]);
    r.sp = frame[2];
    return r;
}

#endif
