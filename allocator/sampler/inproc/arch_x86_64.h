/* arch_x86_64.h - the CPU's part of the in-process sampler (sampler.c):
 * the thread pointer, system calls made with the `syscall` instruction
 * (no libc, and no errno: a raw call returns -errno in %rax and leaves the
 * process's errno alone), and the first step of a stack walk, taken from
 * the stand-in's own frame.
 *
 * Freestanding: the kernel's numbers and structures are written out here
 * rather than taken from libc's headers, which the image cannot use. */
#ifndef MEMPROF_SAMPLER_ARCH_X86_64_H
#define MEMPROF_SAMPLER_ARCH_X86_64_H

#include <stdint.h>

/* The only system calls the image makes (tools/embed_image.py reads
 * these lines and fails the build if the image makes another). */
#define ARCH_SYS_PPOLL             271
#define ARCH_SYS_PROCESS_VM_READV  310
#define ARCH_SYS_PIPE2             293
#define ARCH_SYS_FSTAT             5
#define ARCH_SYS_RT_SIGPROCMASK    14
#define ARCH_STAT_WORDS            18     /* sizeof(struct stat) / 8 */

#define ARCH_PAGE_SIZE 4096u

/* %fs:0 is the thread control block's pointer to itself (the x86-64 TLS
 * ABI): a per-thread value read without a system call. */
static inline uint64_t arch_thread_pointer(void)
{
    uint64_t tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    return tp;
}

/* System calls.  The number is loaded inside the asm, right before the
 * instruction, so that tools/embed_image.py can check from the image
 * alone that it makes no call but the ARCH_SYS_* above.  The kernel
 * clobbers %rcx (return address) and %r11 (flags); "memory" because
 * ppoll and process_vm_readv write through pointers the compiler cannot
 * see in the operands.  Macros: the number must be a constant ("i"). */
#define ARCH_SYSCALL6(nr, a1, a2, a3, a4, a5, a6) ({                      \
        int64_t ret_;                                                     \
        register uint64_t r10_ __asm__("r10") = (a4);                     \
        register uint64_t r8_ __asm__("r8") = (a5);                       \
        register uint64_t r9_ __asm__("r9") = (a6);                       \
        __asm__ volatile("mov %1, %%eax\n\tsyscall"                       \
                         : "=&a"(ret_)                                     \
                         : "i"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10_),  \
                           "r"(r8_), "r"(r9_)                              \
                         : "rcx", "r11", "memory");                       \
        ret_; })

/* Where a stack walk starts: the registers of the function that called the
 * stand-in, as they will be when the call returns.  `frame` is the
 * stand-in's own frame pointer (it is compiled with frame pointers, so
 * [frame] holds the caller's %rbp and [frame+8] the return address the
 * call pushed); the caller's %rsp after the return is just above both.
 * These two words are in the stand-in's own frame: read directly. */
/* The data half's address, as the code reaches it (RIP-relative). */
#define ARCH_DATA(block) (block)

/* The frame the walk starts from, taken inside the stand-in. */
#define ARCH_MY_FRAME() ((const uint64_t *)__builtin_frame_address(0))

/* x86-64 return addresses carry no signature. */
static inline uint64_t arch_strip_pac(uint64_t ra)
{
    return ra;
}

struct arch_walk_regs {
    uint64_t pc;               /* a return address into the current function */
    uint64_t sp;               /* its stack pointer once that call returned */
    uint64_t fp;               /* its frame pointer (%rbp) */
};

static inline struct arch_walk_regs arch_walk_start(const uint64_t *frame)
{
    struct arch_walk_regs r;
    r.fp = frame[0];
    r.pc = frame[1];
    r.sp = (uint64_t)(uintptr_t)(frame + 2);
    return r;
}

#endif
