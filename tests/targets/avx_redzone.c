/* avx_redzone.c - a single thread (so memprof must stop it while it runs)
 * spinning in an assembly loop that holds known values in ymm0-ymm14, in
 * rbx, rbp, r12-r15, r8-r11, and in the 128-byte red zone below rsp, and
 * checks them all on every iteration.  A remote call that loses the upper
 * halves of ymm registers, a general register, or writes into the red zone
 * is reported as "CORRUPT <what>" and exit 1.  Prints "rounds N". */
#include <stdint.h>

#include "target_common.h"

/* Patterns the assembly reads (global so the assembler can name them). */
extern uint8_t ymm_pattern[15][32];
extern uint64_t gpr_pattern;
uint8_t ymm_pattern[15][32] __attribute__((aligned(32)));
uint64_t gpr_pattern = 0x5a5aa5a5c3c33c3cULL;

/* Returns 0 after `iterations` clean rounds, or 1 + the index of what
 * changed: 1..15 ymm, 16 red zone, 17 general registers. */
long avx_spin(uint64_t iterations);
__asm__(
    ".text\n"
    ".globl avx_spin\n"
    ".type avx_spin,@function\n"
    "avx_spin:\n"
    /* CFI as a compiler writes it, so that memprof's stack check can walk
     * past this frame (a frame no unwind table covers is refused) */
    ".cfi_startproc\n"
    "  push %rbx\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %rbx, 0\n"
    "  push %rbp\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %rbp, 0\n"
    "  push %r12\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r12, 0\n"
    "  push %r13\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r13, 0\n"
    "  push %r14\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r14, 0\n"
    "  push %r15\n .cfi_adjust_cfa_offset 8\n .cfi_rel_offset %r15, 0\n"
    "  mov %rdi, %rcx\n"                 /* rcx = iterations */
    "  lea ymm_pattern(%rip), %rsi\n"
    "  vmovdqa 0(%rsi), %ymm0\n vmovdqa 32(%rsi), %ymm1\n vmovdqa 64(%rsi), %ymm2\n"
    "  vmovdqa 96(%rsi), %ymm3\n vmovdqa 128(%rsi), %ymm4\n vmovdqa 160(%rsi), %ymm5\n"
    "  vmovdqa 192(%rsi), %ymm6\n vmovdqa 224(%rsi), %ymm7\n vmovdqa 256(%rsi), %ymm8\n"
    "  vmovdqa 288(%rsi), %ymm9\n vmovdqa 320(%rsi), %ymm10\n vmovdqa 352(%rsi), %ymm11\n"
    "  vmovdqa 384(%rsi), %ymm12\n vmovdqa 416(%rsi), %ymm13\n vmovdqa 448(%rsi), %ymm14\n"
    "  mov gpr_pattern(%rip), %rax\n"
    "  mov %rax, %rbx\n mov %rax, %rbp\n mov %rax, %r12\n mov %rax, %r13\n"
    "  mov %rax, %r14\n mov %rax, %r15\n mov %rax, %r8\n mov %rax, %r9\n"
    "  mov %rax, %r10\n mov %rax, %r11\n"
    /* red zone: 16 quadwords below rsp, each pattern ^ its index */
    "  xor %rdx, %rdx\n"
    "1: mov %rax, %rdi\n xor %rdx, %rdi\n mov %rdi, -128(%rsp,%rdx,8)\n"
    "  inc %rdx\n cmp $16, %rdx\n jne 1b\n"
    "2:\n"
    /* check ymm k against memory: xor into ymm15, vptest */
    ".irp k,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14\n"
    "  vpxor \\k*32(%rsi), %ymm\\k, %ymm15\n"
    "  vptest %ymm15, %ymm15\n"
    "  jnz 8f\n"
    ".endr\n"
    "  xor %rdx, %rdx\n"
    "3: mov %rax, %rdi\n xor %rdx, %rdi\n cmp %rdi, -128(%rsp,%rdx,8)\n jne 7f\n"
    "  inc %rdx\n cmp $16, %rdx\n jne 3b\n"
    "  cmp %rax, %rbx\n jne 6f\n cmp %rax, %rbp\n jne 6f\n cmp %rax, %r12\n jne 6f\n"
    "  cmp %rax, %r13\n jne 6f\n cmp %rax, %r14\n jne 6f\n cmp %rax, %r15\n jne 6f\n"
    "  cmp %rax, %r8\n jne 6f\n cmp %rax, %r9\n jne 6f\n cmp %rax, %r10\n jne 6f\n"
    "  cmp %rax, %r11\n jne 6f\n"
    "  dec %rcx\n jnz 2b\n"
    "  xor %eax, %eax\n jmp 9f\n"
    "6: mov $17, %eax\n jmp 9f\n"
    "7: mov $16, %eax\n jmp 9f\n"
    "8: mov $1, %eax\n"
    "9: vzeroupper\n"
    "  pop %r15\n .cfi_adjust_cfa_offset -8\n pop %r14\n .cfi_adjust_cfa_offset -8\n"
    "  pop %r13\n .cfi_adjust_cfa_offset -8\n pop %r12\n .cfi_adjust_cfa_offset -8\n"
    "  pop %rbp\n .cfi_adjust_cfa_offset -8\n pop %rbx\n .cfi_adjust_cfa_offset -8\n"
    "  ret\n"
    ".cfi_endproc\n"
    ".size avx_spin, .-avx_spin\n");

int main(void)
{
    for (int k = 0; k < 15; k++)
        for (int i = 0; i < 32; i++)
            ymm_pattern[k][i] = (uint8_t)(k * 37 + i * 11 + 1);
    announce_ready();
    for (unsigned long round = 1;; round++) {
        long bad = avx_spin(50000000);
        if (bad) {
            printf("CORRUPT %s\n", bad == 16 ? "red zone" : bad == 17 ? "general register"
                                                                        : "ymm register");
            fflush(stdout);
            return 1;
        }
        printf("rounds %lu\n", round);
        fflush(stdout);
    }
}
