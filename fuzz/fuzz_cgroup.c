/* fuzz_cgroup.c - libFuzzer harness for /proc/PID/cgroup (cgroup_file.c),
 * the container and pod a path names (container_path.c) and NSpid
 * (procmem.c): whatever the text, every kept path fits and came from it,
 * an id is 64 lower-case hex, a pod uid hex and dashes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/proc/cgroup_file.h"
#include "lib/proc/container_path.h"
#include "lib/proc/procmem.h"

static void check_ref(const struct container_ref *c)
{
    size_t n = strlen(c->id);
    if ((n != 0 && n != CONTAINER_ID_LEN) || strspn(c->id, "0123456789abcdef") != n)
        abort();
    if ((n != 0) != (c->runtime != CONTAINER_NONE))
        abort();
    size_t u = strlen(c->pod_uid);
    if ((u != 0 && (u < 32 || u > POD_UID_MAX)) ||
        strspn(c->pod_uid, "0123456789abcdefABCDEF-") != u)
        abort();
    if ((u != 0) != (c->qos != POD_QOS_NONE))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cgroup_file f;
    struct mp_error err;
    const char *text = (const char *)data;
    if (cgroup_file_parse(text, size, &f, &err) == 0) {
        for (int r = 0; r < CGROUP_NROLES; r++) {
            size_t n = f.has[r] ? strlen(f.path[r]) : 0;
            if (n >= CGROUP_PATH_MAX || (f.has[r] && (f.path[r][0] != '/' ||
                                                      !memmem(data, size, f.path[r], n))))
                abort();
        }
        struct container_ref c;
        enum cgroup_role r = container_choose(&f, &c);
        if (r != CGROUP_NROLES && !f.has[r])
            abort();
        check_ref(&c);
    }
    struct container_ref c;
    container_from_path(text, size, &c);
    check_ref(&c);
    uint64_t inner;
    unsigned depth;
    if (procmem_nspid(text, size, &inner, &depth) && (inner == 0 || depth == 0 || depth > 32))
        abort();
    return 0;
}
