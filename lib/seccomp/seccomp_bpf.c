/* seccomp_bpf.c - owns checking and running a seccomp filter program
 * (seccomp_bpf.h): the kernel's rules for what a seccomp program may
 * contain (kernel/seccomp.c seccomp_check_filter, net/core/filter.c
 * bpf_check_classic and check_load_and_stores), and its semantics (A, X
 * and the scratch words start at 0; a division by a zero X ends the
 * program with 0, which is KILL_THREAD; shifts by X take its low 5 bits),
 * over values that may be unknown. */
#include "lib/seccomp/seccomp_bpf.h"

#include <stdio.h>
#include <string.h>

/* Classic BPF's encoding (linux/bpf_common.h, linux/filter.h). */
#define CLS(c)   ((c) & 0x07)
#define OP(c)    ((c) & 0xf0)
#define SRC_X    0x08
#define C_LD     0x00
#define C_LDX    0x01
#define C_ST     0x02
#define C_STX    0x03
#define C_ALU    0x04
#define C_JMP    0x05
#define C_RET    0x06
#define C_MISC   0x07
#define M_IMM    0x00
#define M_ABS    0x20
#define M_MEM    0x60
#define M_LEN    0x80
#define A_ADD 0x00
#define A_SUB 0x10
#define A_MUL 0x20
#define A_DIV 0x30
#define A_OR  0x40
#define A_AND 0x50
#define A_LSH 0x60
#define A_RSH 0x70
#define A_NEG 0x80
#define A_XOR 0xa0
#define J_JA   0x00
#define J_JEQ  0x10
#define J_JGT  0x20
#define J_JGE  0x30
#define J_JSET 0x40
#define RET_A  0x10
#define MISC_TAX 0x00
#define MISC_TXA 0x80
#define MEMWORDS 16

/* ---- the checker ------------------------------------------------------- */

static bool alu_op_ok(unsigned op)
{
    switch (op) {
    case A_ADD: case A_SUB: case A_MUL: case A_DIV: case A_OR: case A_AND:
    case A_LSH: case A_RSH: case A_XOR:
        return true;
    default:
        return false;
    }
}

/* One instruction on its own: 0, or -1 with why. */
static int check_insn(const struct seccomp_insn *in, size_t pc, size_t n, char *why,
                      size_t whylen)
{
    unsigned c = in->code;
    const char *bad = NULL;
    switch (CLS(c)) {
    case C_LD:
        if (c == (C_LD | M_ABS)) {
            if (in->k >= SECCOMP_BPF_DATA_SIZE || (in->k & 3))
                bad = "a load outside struct seccomp_data or not of an aligned word";
        } else if (c != (C_LD | M_LEN) && c != (C_LD | M_IMM) && c != (C_LD | M_MEM))
            bad = "a load seccomp does not accept";
        else if (c == (C_LD | M_MEM) && in->k >= MEMWORDS)
            bad = "a scratch word out of range";
        break;
    case C_LDX:
        if (c != (C_LDX | M_LEN) && c != (C_LDX | M_IMM) && c != (C_LDX | M_MEM))
            bad = "a load seccomp does not accept";
        else if (c == (C_LDX | M_MEM) && in->k >= MEMWORDS)
            bad = "a scratch word out of range";
        break;
    case C_ST:
    case C_STX:
        if (c != C_ST && c != C_STX)
            bad = "a store seccomp does not accept";
        else if (in->k >= MEMWORDS)
            bad = "a scratch word out of range";
        break;
    case C_ALU:
        if (c == (C_ALU | A_NEG))
            break;
        if ((c & ~(unsigned)(0xf0 | SRC_X)) != C_ALU || !alu_op_ok(OP(c)))
            bad = "an arithmetic instruction seccomp does not accept";
        else if (!(c & SRC_X) && OP(c) == A_DIV && in->k == 0)
            bad = "a division by the constant 0";
        else if (!(c & SRC_X) && (OP(c) == A_LSH || OP(c) == A_RSH) && in->k >= 32)
            bad = "a shift by 32 or more";
        break;
    case C_JMP:
        if (c == (C_JMP | J_JA)) {
            if (in->k >= n - pc - 1)
                bad = "a jump out of the program";
        } else if ((c & ~(unsigned)(0xf0 | SRC_X)) != C_JMP ||
                   (OP(c) != J_JEQ && OP(c) != J_JGT && OP(c) != J_JGE && OP(c) != J_JSET))
            bad = "a jump seccomp does not accept";
        else if (pc + in->jt + 1 >= n || pc + in->jf + 1 >= n)
            bad = "a jump out of the program";
        break;
    case C_RET:
        if (c != C_RET && c != (C_RET | RET_A))
            bad = "a return seccomp does not accept";
        break;
    default:
        if (c != (C_MISC | MISC_TAX) && c != (C_MISC | MISC_TXA))
            bad = "an instruction seccomp does not accept";
    }
    if (!bad)
        return 0;
    snprintf(why, whylen, "instruction %zu (code %#x, k %#x): %s", pc, c, in->k, bad);
    return -1;
}

/* The kernel's check_load_and_stores: every scratch word read was written
 * on every path to the read (jumps go forward only, so one pass). */
static int check_scratch(const struct seccomp_insn *p, size_t n, char *why, size_t whylen)
{
    uint16_t masks[SECCOMP_BPF_MAXINSNS];
    uint16_t valid = 0xffff;
    for (size_t i = 0; i < n; i++)
        masks[i] = 0xffff;
    masks[0] = 0;
    for (size_t pc = 0; pc < n; pc++) {
        const struct seccomp_insn *in = &p[pc];
        valid &= masks[pc];
        unsigned c = in->code;
        if (c == C_ST || c == C_STX)
            valid |= (uint16_t)(1u << in->k);
        else if (c == (C_LD | M_MEM) || c == (C_LDX | M_MEM)) {
            if (!(valid & (1u << in->k))) {
                snprintf(why, whylen, "instruction %zu reads scratch word %u before any "
                         "write on some path", pc, in->k);
                return -1;
            }
        } else if (c == (C_JMP | J_JA)) {
            masks[pc + 1 + in->k] &= valid;
            valid = 0xffff;
        } else if (CLS(c) == C_JMP) {
            masks[pc + 1 + in->jt] &= valid;
            masks[pc + 1 + in->jf] &= valid;
            valid = 0xffff;
        }
    }
    return 0;
}

int seccomp_bpf_check(const struct seccomp_insn *p, size_t n, char *why, size_t whylen)
{
    if (n == 0 || n > SECCOMP_BPF_MAXINSNS) {
        snprintf(why, whylen, "%zu instructions (the kernel takes 1 to %d)", n,
                 SECCOMP_BPF_MAXINSNS);
        return -1;
    }
    for (size_t pc = 0; pc < n; pc++)
        if (check_insn(&p[pc], pc, n, why, whylen) < 0)
            return -1;
    if (CLS(p[n - 1].code) != C_RET) {
        snprintf(why, whylen, "the last instruction (%zu) is not a return", n - 1);
        return -1;
    }
    return check_scratch(p, n, why, whylen);
}

/* ---- the run ----------------------------------------------------------- */

struct val {
    uint32_t v;
    bool known;
};

struct state {
    size_t pc;
    struct val a, x, m[MEMWORDS];
};

#define STEPS_MAX  (1u << 16)    /* instructions run over all paths */
#define FORKS_MAX  64            /* paths waiting at once */

struct run {
    const struct seccomp_insn *p;
    size_t n;
    const struct seccomp_call *c;
    struct seccomp_outcome *out;
    bool any;                    /* a return was recorded */
    struct state pending[FORKS_MAX];
    size_t npending;
};

static void record(struct run *r, uint32_t ret)
{
    if (r->any && (ret & SECCOMP_ACT_MASK) != (r->out->ret & SECCOMP_ACT_MASK))
        r->out->varies = true;
    if (!r->any || seccomp_ret_wins(ret, r->out->ret))
        r->out->ret = ret;
    r->any = true;
}

/* The 32-bit word at offset k of the call's struct seccomp_data (little
 * endian, as on both CPUs memprof runs on). */
static struct val load_word(struct run *r, uint32_t k)
{
    const struct seccomp_call *c = r->c;
    unsigned field;
    uint64_t v;
    if (k < 4) {
        field = SECCOMP_FIELD_NR;
        v = (uint32_t)c->nr;
    } else if (k < 8) {
        field = SECCOMP_FIELD_ARCH;
        v = c->arch;
    } else if (k < 16) {
        field = SECCOMP_FIELD_IP;
        v = c->ip >> (k == 12 ? 32 : 0);
    } else {
        unsigned i = (k - 16) / 8;
        field = SECCOMP_FIELD_ARG(i);
        v = c->args[i] >> ((k - 16) % 8 == 4 ? 32 : 0);
    }
    if (!(c->known & field)) {
        r->out->unknown_read |= field;
        return (struct val){0, false};
    }
    return (struct val){(uint32_t)v, true};
}

/* A op B; false when the program ends here with 0 (division by zero). */
static bool alu(struct run *r, unsigned op, struct val *a, struct val b)
{
    if (op == A_DIV && b.known && b.v == 0)
        return false;
    if (op == A_DIV && !b.known)
        record(r, 0);            /* the unknown divisor may be 0 */
    if (!a->known || !b.known) {
        a->known = false;
        a->v = 0;
        return true;
    }
    switch (op) {
    case A_ADD: a->v += b.v; break;
    case A_SUB: a->v -= b.v; break;
    case A_MUL: a->v *= b.v; break;
    case A_DIV: a->v /= b.v; break;
    case A_OR:  a->v |= b.v; break;
    case A_AND: a->v &= b.v; break;
    case A_XOR: a->v ^= b.v; break;
    case A_LSH: a->v <<= (b.v & 31); break;
    case A_RSH: a->v >>= (b.v & 31); break;
    }
    return true;
}

/* 1 taken, 0 not, -1 unknown. */
static int jump_cond(unsigned op, struct val a, struct val b)
{
    if (!a.known || !b.known)
        return -1;
    switch (op) {
    case J_JEQ: return a.v == b.v;
    case J_JGT: return a.v > b.v;
    case J_JGE: return a.v >= b.v;
    default:    return (a.v & b.v) != 0;
    }
}

/* One instruction; false when the path ended. */
static bool step(struct run *r, struct state *s)
{
    const struct seccomp_insn *in = &r->p[s->pc];
    unsigned c = in->code;
    struct val k = {in->k, true};
    struct val src = (c & SRC_X) ? s->x : k;
    s->pc++;
    switch (CLS(c)) {
    case C_LD:
        s->a = c == (C_LD | M_ABS) ? load_word(r, in->k)
             : c == (C_LD | M_LEN) ? (struct val){SECCOMP_BPF_DATA_SIZE, true}
             : c == (C_LD | M_MEM) ? s->m[in->k] : k;
        return true;
    case C_LDX:
        s->x = c == (C_LDX | M_LEN) ? (struct val){SECCOMP_BPF_DATA_SIZE, true}
             : c == (C_LDX | M_MEM) ? s->m[in->k] : k;
        return true;
    case C_ST:
        s->m[in->k] = s->a;
        return true;
    case C_STX:
        s->m[in->k] = s->x;
        return true;
    case C_ALU:
        if (c == (C_ALU | A_NEG)) {
            s->a.v = -s->a.v;
            return true;
        }
        if (!alu(r, OP(c), &s->a, src)) {
            record(r, 0);
            return false;
        }
        return true;
    case C_JMP: {
        if (OP(c) == J_JA) {
            s->pc += in->k;
            return true;
        }
        int taken = jump_cond(OP(c), s->a, src);
        if (taken < 0) {
            if (r->npending == FORKS_MAX) {
                r->out->bounded = true;
                return false;
            }
            struct state *other = &r->pending[r->npending++];
            *other = *s;
            other->pc += in->jf;
            s->pc += in->jt;
        } else
            s->pc += taken ? in->jt : in->jf;
        return true;
    }
    case C_RET:
        if (c == C_RET)
            record(r, in->k);
        else if (s->a.known)
            record(r, s->a.v);
        else
            record(r, SECCOMP_ACT_KILL_PROCESS);   /* any value: the worst */
        return false;
    default:
        if (c == (C_MISC | MISC_TAX))
            s->x = s->a;
        else
            s->a = s->x;
        return true;
    }
}

void seccomp_bpf_run(const struct seccomp_insn *p, size_t n, const struct seccomp_call *c,
                     struct seccomp_outcome *out)
{
    struct run r = {.p = p, .n = n, .c = c, .out = out};
    memset(out, 0, sizeof *out);
    struct state s;
    memset(&s, 0, sizeof s);
    for (unsigned i = 0; i < MEMWORDS; i++)
        s.m[i].known = true;
    s.a.known = s.x.known = true;
    unsigned steps = 0;
    for (;;) {
        bool going = true;
        while (going && s.pc < n && steps < STEPS_MAX) {
            going = step(&r, &s);
            steps++;
        }
        if (going) {             /* out of steps, or (unchecked) off the end */
            out->bounded = true;
            break;
        }
        if (out->bounded || r.npending == 0)
            break;
        s = r.pending[--r.npending];
    }
    if (out->bounded || !r.any) {
        out->bounded = true;
        out->ret = SECCOMP_ACT_KILL_PROCESS;
    }
}

/* ---- actions ----------------------------------------------------------- */

static bool known_action(uint32_t act)
{
    switch (act) {
    case SECCOMP_ACT_KILL_PROCESS: case SECCOMP_ACT_KILL_THREAD: case SECCOMP_ACT_TRAP:
    case SECCOMP_ACT_ERRNO: case SECCOMP_ACT_USER_NOTIF: case SECCOMP_ACT_TRACE:
    case SECCOMP_ACT_LOG: case SECCOMP_ACT_ALLOW:
        return true;
    default:
        return false;
    }
}

/* The kernel compares (s32)(ret & SECCOMP_RET_ACTION_FULL): lower wins.
 * An action it does not know is run as a kill of the process. */
static int32_t precedence(uint32_t ret)
{
    uint32_t act = ret & SECCOMP_ACT_MASK;
    return (int32_t)act;
}

bool seccomp_ret_wins(uint32_t a, uint32_t b)
{
    return precedence(a) < precedence(b);
}

bool seccomp_ret_allows(uint32_t ret)
{
    uint32_t act = ret & SECCOMP_ACT_MASK;
    return act == SECCOMP_ACT_ALLOW || act == SECCOMP_ACT_LOG;
}

const char *seccomp_ret_effect(uint32_t ret, char *buf, size_t len)
{
    uint32_t act = ret & SECCOMP_ACT_MASK, data = ret & SECCOMP_ACT_DATA;
    if (!known_action(act)) {
        snprintf(buf, len, "would kill the process (return %#x, an action the kernel "
                 "does not know and takes for a kill)", ret);
        return buf;
    }
    if (act == SECCOMP_ACT_ERRNO) {
        unsigned e = data > 4095 ? 4095 : data;     /* the kernel's MAX_ERRNO */
        const char *name = strerrorname_np((int)e);
        snprintf(buf, len, "would fail it with errno %u%s%s%s", e, name ? " (" : "",
                 name ? name : "", name ? ")" : "");
        return buf;
    }
    static const struct { uint32_t act; const char *effect; } effects[] = {
        { SECCOMP_ACT_KILL_PROCESS, "would kill the process (SIGSYS)" },
        { SECCOMP_ACT_KILL_THREAD, "would kill the thread making it (SIGSYS; the "
                                   "process's last thread: the process)" },
        { SECCOMP_ACT_TRAP, "would send SIGSYS (trap)" },
        { SECCOMP_ACT_USER_NOTIF, "would notify a supervisor (user notification; ENOSYS "
                                  "where none listens)" },
        { SECCOMP_ACT_TRACE, "would stop for a tracer (SECCOMP_RET_TRACE; ENOSYS where "
                             "none traces it)" },
        { SECCOMP_ACT_LOG, "would allow it and log it" },
        { SECCOMP_ACT_ALLOW, "would allow it" },
    };
    for (size_t i = 0; i < sizeof effects / sizeof effects[0]; i++)
        if (effects[i].act == act)
            snprintf(buf, len, "%s", effects[i].effect);
    return buf;
}

const char *seccomp_field_name(unsigned field, char *buf, size_t len)
{
    if (field == SECCOMP_FIELD_NR)
        snprintf(buf, len, "the system call number");
    else if (field == SECCOMP_FIELD_ARCH)
        snprintf(buf, len, "the architecture");
    else if (field == SECCOMP_FIELD_IP)
        snprintf(buf, len, "the instruction pointer");
    else {
        unsigned i = 0;
        while (i < 6 && field != SECCOMP_FIELD_ARG(i))
            i++;
        snprintf(buf, len, "argument %u", i);
    }
    return buf;
}
