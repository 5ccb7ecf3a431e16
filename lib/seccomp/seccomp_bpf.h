/* seccomp_bpf.h - a seccomp filter program (classic BPF over the kernel's
 * struct seccomp_data), checked as the kernel checks a program it installs,
 * and run on one system call as the kernel runs it.
 *
 * The program comes from the process (PTRACE_SECCOMP_GET_FILTER): it is
 * untrusted bytes.  The checker accepts only what the kernel's seccomp
 * checker accepts (a bounded length, seccomp's opcodes, aligned 32-bit
 * loads inside struct seccomp_data, forward jumps inside the program, a
 * return at the end, scratch words read only after a write on every
 * path); the run is bounded in steps and paths, and never reads outside
 * the program.
 *
 * memprof may not know every field of a call in advance (a pointer
 * argument, the instruction pointer before the code is mapped): a field
 * marked unknown is carried as "any value", a jump that depends on it is
 * followed both ways, and the outcome is the action of highest precedence
 * any path returns, with the unknown fields the program read on the way.
 * Pure: no system call, no global state. */
#ifndef MEMPROF_SECCOMP_BPF_H
#define MEMPROF_SECCOMP_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SECCOMP_BPF_MAXINSNS 4096      /* the kernel's BPF_MAXINSNS */
#define SECCOMP_BPF_DATA_SIZE 64       /* sizeof(struct seccomp_data) */

/* One instruction, in struct sock_filter's layout. */
struct seccomp_insn {
    uint16_t code;
    uint8_t jt, jf;
    uint32_t k;
};

/* The fields of struct seccomp_data, as bits of a mask. */
#define SECCOMP_FIELD_NR     1u
#define SECCOMP_FIELD_ARCH   2u
#define SECCOMP_FIELD_IP     4u
#define SECCOMP_FIELD_ARG(i) (8u << (i))          /* i in 0..5 */
#define SECCOMP_FIELDS_ALL   0x1ffu

/* One system call as the filter will see it.  `known` holds the fields
 * whose value here is the one the kernel will pass; the others may be
 * anything. */
struct seccomp_call {
    int32_t nr;
    uint32_t arch;
    uint64_t ip;
    uint64_t args[6];
    unsigned known;
};

/* The kernel's actions (SECCOMP_RET_*), and the part of a return value
 * that is the action. */
#define SECCOMP_ACT_KILL_PROCESS 0x80000000u
#define SECCOMP_ACT_KILL_THREAD  0x00000000u
#define SECCOMP_ACT_TRAP         0x00030000u
#define SECCOMP_ACT_ERRNO        0x00050000u
#define SECCOMP_ACT_USER_NOTIF   0x7fc00000u
#define SECCOMP_ACT_TRACE        0x7ff00000u
#define SECCOMP_ACT_LOG          0x7ffc0000u
#define SECCOMP_ACT_ALLOW        0x7fff0000u
#define SECCOMP_ACT_MASK         0xffff0000u
#define SECCOMP_ACT_DATA         0x0000ffffu

struct seccomp_outcome {
    uint32_t ret;             /* the return of highest precedence any path gives */
    unsigned unknown_read;    /* unknown fields the program read (SECCOMP_FIELD_*) */
    bool varies;              /* paths through unknown fields return different actions */
    bool bounded;             /* the step or path bound was reached: ret is a kill */
};

/* 0 when the kernel's checker would accept the n instructions of p; else
 * -1 and why says what it refuses, with the instruction's index. */
int seccomp_bpf_check(const struct seccomp_insn *p, size_t n, char *why, size_t whylen);

/* Run a checked program on call c. */
void seccomp_bpf_run(const struct seccomp_insn *p, size_t n, const struct seccomp_call *c,
                     struct seccomp_outcome *out);

/* Does return a take precedence over return b, as the kernel orders them
 * across filters (KILL_PROCESS > KILL_THREAD > TRAP > ERRNO > USER_NOTIF
 * > TRACE > LOG > ALLOW; an action the kernel does not know is a kill)?
 * Ties go to b, the one seen first (the kernel runs the newest filter
 * first and keeps its return on a tie). */
bool seccomp_ret_wins(uint32_t a, uint32_t b);

/* The call goes on untouched (ALLOW, LOG). */
bool seccomp_ret_allows(uint32_t ret);

/* What the kernel does to a call a filter returns ret for, as a phrase
 * after "the filter ...": "would kill the process", "would fail it with
 * errno 1 (EPERM)". */
const char *seccomp_ret_effect(uint32_t ret, char *buf, size_t len);

/* The name of one field ("argument 2", "the instruction pointer"). */
const char *seccomp_field_name(unsigned field, char *buf, size_t len);

#endif
