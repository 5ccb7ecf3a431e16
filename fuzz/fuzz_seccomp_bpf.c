/* fuzz_seccomp_bpf.c - libFuzzer harness for the seccomp filter checker
 * and evaluator: any bytes are a program (8 bytes an instruction) after a
 * 16-byte call header (nr, arch, which fields are known, argument 0's low
 * word); a program the checker accepts is run, and the run must end with
 * an outcome the kernel could give, never a crash or a hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/seccomp/seccomp_bpf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 16)
        return 0;
    struct seccomp_call c;
    memset(&c, 0, sizeof c);
    uint32_t hdr[4];
    memcpy(hdr, data, sizeof hdr);
    c.nr = (int32_t)hdr[0];
    c.arch = hdr[1];
    c.known = hdr[2] & SECCOMP_FIELDS_ALL;
    c.args[0] = hdr[3];
    c.args[1] = (uint64_t)hdr[3] << 32;
    size_t n = (size - 16) / sizeof(struct seccomp_insn);
    struct seccomp_insn *p = malloc(n ? n * sizeof *p : 1);
    if (!p)
        abort();
    memcpy(p, data + 16, n * sizeof *p);
    char why[200];
    if (seccomp_bpf_check(p, n, why, sizeof why) == 0) {
        struct seccomp_outcome o;
        seccomp_bpf_run(p, n, &c, &o);
        if (o.unknown_read & c.known)
            abort();             /* a known field is never called unknown */
        if (o.bounded && o.ret != SECCOMP_ACT_KILL_PROCESS)
            abort();
        char buf[200];
        seccomp_ret_effect(o.ret, buf, sizeof buf);
    } else if (why[0] == 0) {
        abort();                 /* a refusal always says why */
    }
    free(p);
    return 0;
}
