/* test_container.c - which container and pod a process is in
 * (lib/proc/cgroup_file.c, lib/proc/container_path.c, NStgid in
 * lib/proc/procmem.c, session/process_container.c): /proc/PID/cgroup texts
 * as v1, v2 and hybrid hosts print them for every runtime's layout, and
 * malformed and hostile ones. */
#include "tests/unit/unit.h"

#include <string.h>

#include "lib/proc/cgroup_file.h"
#include "lib/proc/container_path.h"
#include "lib/proc/procmem.h"
#include "session/process_container.h"

#define ID "0f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"
#define ID2 "aa1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0"
#define UID_ "1b2c3d4e_5f60_4a1b_8c2d_3e4f5a6b7c8d"
#define UID "1b2c3d4e-5f60-4a1b-8c2d-3e4f5a6b7c8d"

static struct mp_error err;

/* The container a whole path names: its runtime, id, pod and qos. */
static void path_is(const char *path, enum container_runtime rt, const char *id,
                    const char *pod, enum pod_qos qos)
{
    struct container_ref c;
    bool found = container_from_path(path, strlen(path), &c);
    ck_assert_msg(found == (rt != CONTAINER_NONE || *pod), "%s", path);
    ck_assert_msg(c.runtime == rt, "%s: runtime %d", path, c.runtime);
    ck_assert_str_eq(c.id, id);
    ck_assert_str_eq(c.pod_uid, pod);
    ck_assert_msg(c.qos == qos, "%s: qos %d", path, c.qos);
}

START_TEST(runtime_layouts)
{
    path_is("/system.slice/docker-" ID ".scope", CONTAINER_DOCKER, ID, "", POD_QOS_NONE);
    path_is("/docker/" ID, CONTAINER_DOCKER, ID, "", POD_QOS_NONE);
    path_is("/machine.slice/libpod-" ID ".scope", CONTAINER_PODMAN, ID, "", POD_QOS_NONE);
    path_is("/machine.slice/libpod-" ID ".scope/container", CONTAINER_PODMAN, ID, "",
            POD_QOS_NONE);
    path_is("/libpod_parent/libpod-" ID, CONTAINER_PODMAN, ID, "", POD_QOS_NONE);
    path_is("/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope",
            CONTAINER_PODMAN, ID, "", POD_QOS_NONE);
    /* The monitors are not the containers. */
    path_is("/machine.slice/libpod-conmon-" ID ".scope", CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
            ".slice/crio-conmon-" ID ".scope", CONTAINER_NONE, "", UID, POD_QOS_BURSTABLE);
}
END_TEST

START_TEST(kubernetes_systemd)
{
    path_is("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
            ".slice/cri-containerd-" ID ".scope", CONTAINER_CONTAINERD, ID, UID,
            POD_QOS_BURSTABLE);
    path_is("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
            ".slice/crio-" ID ".scope", CONTAINER_CRIO, ID, UID, POD_QOS_BESTEFFORT);
    path_is("/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope",
            CONTAINER_DOCKER, ID, UID, POD_QOS_GUARANTEED);
    /* A pod's own cgroup (its pause process, say): the pod, no container. */
    path_is("/kubepods.slice/kubepods-pod" UID_ ".slice", CONTAINER_NONE, "", UID,
            POD_QOS_GUARANTEED);
    /* kind: a cluster inside a Docker container; the innermost counts. */
    path_is("/system.slice/docker-" ID2 ".scope/kubelet.slice/kubelet-kubepods.slice/"
            "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
            ".slice/cri-containerd-" ID ".scope", CONTAINER_CONTAINERD, ID, UID,
            POD_QOS_BESTEFFORT);
    /* A static pod's UID is 32 hex digits. */
    path_is("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
            "0123456789abcdef0123456789abcdef.slice/cri-containerd-" ID ".scope",
            CONTAINER_CONTAINERD, ID, "0123456789abcdef0123456789abcdef", POD_QOS_BURSTABLE);
}
END_TEST

START_TEST(kubernetes_cgroupfs)
{
    path_is("/kubepods/burstable/pod" UID "/" ID, CONTAINER_UNKNOWN, ID, UID,
            POD_QOS_BURSTABLE);
    path_is("/kubepods/besteffort/pod" UID "/crio-" ID, CONTAINER_CRIO, ID, UID,
            POD_QOS_BESTEFFORT);
    path_is("/kubepods/pod" UID "/" ID, CONTAINER_UNKNOWN, ID, UID, POD_QOS_GUARANTEED);
    /* A container in a container in a pod: the inner one, not the pod's. */
    path_is("/kubepods/pod" UID "/" ID2 "/docker/" ID, CONTAINER_DOCKER, ID, "",
            POD_QOS_NONE);
}
END_TEST

START_TEST(nothing_invented)
{
    path_is("/", CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/user.slice/user-1000.slice/session-3.scope", CONTAINER_NONE, "", "",
            POD_QOS_NONE);
    /* A bare id only under /docker or a pod. */
    path_is("/system.slice/" ID, CONTAINER_NONE, "", "", POD_QOS_NONE);
    /* Not 64 hex: too short, too long, upper case, no prefix. */
    path_is("/system.slice/docker-0f1e2d3c.scope", CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/system.slice/docker-" ID "0.scope", CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/docker/0F1E2D3C4B5A69788796A5B4C3D2E1F00112233445566778899AABBCCDDEEFF0",
            CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/system.slice/podman-" ID ".scope", CONTAINER_NONE, "", "", POD_QOS_NONE);
    /* pod<uid> outside /kubepods, and a uid that is not one. */
    path_is("/burstable/pod" UID "/" ID, CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/kubepods/burstable/podnot-a-uid/x", CONTAINER_NONE, "", "", POD_QOS_NONE);
    path_is("/kubepods.slice/kubepods-burstable-pod" UID_ "_0123.slice", CONTAINER_NONE, "",
            "", POD_QOS_NONE);
    /* Seen from inside a cgroup namespace that does not hold it. */
    path_is("/../../system.slice/docker-" ID ".scope", CONTAINER_DOCKER, ID, "",
            POD_QOS_NONE);
}
END_TEST

START_TEST(labels_as_kube_state_metrics)
{
    char b[96];
    struct container_ref c = {.runtime = CONTAINER_CONTAINERD, .id = ID};
    ck_assert_str_eq(container_id_text(&c, b, sizeof b), "containerd://" ID);
    c.runtime = CONTAINER_CRIO;
    ck_assert_str_eq(container_id_text(&c, b, sizeof b), "cri-o://" ID);
    c.runtime = CONTAINER_PODMAN;
    ck_assert_str_eq(container_id_text(&c, b, sizeof b), "podman://" ID);
    c.runtime = CONTAINER_UNKNOWN;
    ck_assert_str_eq(container_id_text(&c, b, sizeof b), ID);
    c = (struct container_ref){0};
    ck_assert_str_eq(container_id_text(&c, b, sizeof b), "");
}
END_TEST

/* The hierarchy chosen of a file's text, and its container's runtime. */
static void file_is(const char *text, enum cgroup_layout layout, enum cgroup_role role,
                    const char *path, enum container_runtime rt)
{
    struct process_container pc;
    process_container_parse(text, strlen(text), NULL, 0, &pc);
    ck_assert_msg(pc.layout == layout, "layout %d", pc.layout);
    ck_assert_msg(pc.role == role, "role %d", pc.role);
    ck_assert_str_eq(pc.cgroup, path);
    ck_assert_msg(pc.ref.runtime == rt, "runtime %d", pc.ref.runtime);
}

START_TEST(v2_v1_hybrid)
{
    file_is("0::/system.slice/docker-" ID ".scope\n", CGROUP_LAYOUT_V2, CGROUP_UNIFIED,
            "/system.slice/docker-" ID ".scope", CONTAINER_DOCKER);
    /* v1 with Docker's cgroupfs driver (name=systemd keeps the login's). */
    file_is("12:pids:/docker/" ID "\n11:cpu,cpuacct:/docker/" ID "\n"
            "4:memory:/docker/" ID "\n1:name=systemd:/user.slice/session-1.scope\n",
            CGROUP_LAYOUT_V1, CGROUP_MEMORY, "/docker/" ID, CONTAINER_DOCKER);
    /* Hybrid, as this machine is: memory first. */
    file_is("9:name=systemd:/system.slice/docker-" ID ".scope\n8:pids:/system.slice/docker-"
            ID ".scope\n4:memory:/system.slice/docker-" ID ".scope\n3:cpuset:/\n"
            "0::/system.slice/docker-" ID ".scope\n",
            CGROUP_LAYOUT_HYBRID, CGROUP_MEMORY, "/system.slice/docker-" ID ".scope",
            CONTAINER_DOCKER);
    /* Hybrid, the container only in the unified hierarchy: found there. */
    file_is("9:name=systemd:/\n4:memory:/\n0::/machine.slice/libpod-" ID ".scope\n",
            CGROUP_LAYOUT_HYBRID, CGROUP_UNIFIED, "/machine.slice/libpod-" ID ".scope",
            CONTAINER_PODMAN);
    /* No container anywhere: memory's path, the first kept. */
    file_is("9:name=systemd:/\n4:memory:/process_api/71908acf\n0::/\n",
            CGROUP_LAYOUT_HYBRID, CGROUP_MEMORY, "/process_api/71908acf", CONTAINER_NONE);
    /* Only hierarchies memprof does not keep: v1, no path. */
    file_is("3:cpuset:/\n", CGROUP_LAYOUT_V1, CGROUP_NROLES, "", CONTAINER_NONE);
    /* No newline at the end; the first of two memory lines. */
    file_is("4:memory:/docker/" ID "\n5:memory:/x", CGROUP_LAYOUT_V1, CGROUP_MEMORY,
            "/docker/" ID, CONTAINER_DOCKER);
}
END_TEST

START_TEST(malformed_and_hostile)
{
    struct cgroup_file *f = malloc(sizeof *f);
    ck_assert_ptr_nonnull(f);
    const char *bad[] = {"", "\n\n", "memory:/x\n", "0:/x\n", "0::x\n", "3::/x\n",
                         "0:memory:/x\n", "x:memory:/x\n", "12345678901:memory:/x\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(cgroup_file_parse(bad[i], strlen(bad[i]), f, &err) < 0, "%s", bad[i]);
    ck_assert(strstr(err.msg, "not a /proc/PID/cgroup text"));
    /* The fuzzer's first find: digits to the end of an unterminated text
     * were read past it (ASan, make SANITIZE=1, sees that). */
    char *digits = malloc(2);
    memcpy(digits, "10", 2);
    ck_assert_int_lt(cgroup_file_parse(digits, 2, f, &err), 0);
    free(digits);
    /* A NUL inside a line: that line skipped, the others kept. */
    const char nul[] = "4:memory:/docker/a\0b\n0::/docker/" ID "\n";
    ck_assert_int_eq(cgroup_file_parse(nul, sizeof nul - 1, f, &err), 0);
    ck_assert(!f->has[CGROUP_MEMORY] && f->has[CGROUP_UNIFIED]);
    ck_assert_uint_eq(f->bad_lines, 1);
    /* A path longer than CGROUP_PATH_MAX is skipped, never cut. */
    size_t n = CGROUP_PATH_MAX + 100;
    char *lng = malloc(n + 32);
    strcpy(lng, "0::/");
    memset(lng + 4, 'a', n);
    strcpy(lng + 4 + n, "\n4:memory:/y\n");
    ck_assert_int_eq(cgroup_file_parse(lng, strlen(lng), f, &err), 0);
    ck_assert(!f->has[CGROUP_UNIFIED] && f->has[CGROUP_MEMORY]);
    ck_assert_str_eq(f->path[CGROUP_MEMORY], "/y");
    /* Past CGROUP_TEXT_MAX nothing is looked at; nor past CGROUP_LINES_MAX lines. */
    size_t big = CGROUP_TEXT_MAX + 64;
    char *huge = malloc(big);
    memset(huge, '\n', big);
    memcpy(huge + CGROUP_TEXT_MAX, "0::/z\n", 6);
    ck_assert_int_lt(cgroup_file_parse(huge, big, f, &err), 0);
    memcpy(huge + CGROUP_LINES_MAX, "0::/z\n", 6);
    ck_assert_int_lt(cgroup_file_parse(huge, big, f, &err), 0);
    memcpy(huge + CGROUP_LINES_MAX - 1, "0::/z\n", 6);
    ck_assert_int_eq(cgroup_file_parse(huge, big, f, &err), 0);
    free(huge);
    free(lng);
    free(f);
}
END_TEST

/* NStgid: the process's pid, whichever thread's status is read (a
 * thread's NSpid is its own id). */
START_TEST(nspid)
{
    uint64_t inner;
    unsigned depth;
    const char *st = "Name:\tx\nTgid:\t4242\nNStgid:\t4242\t17\t1\nNSpid:\t4250\t20\t9\nVmRSS:\t4 kB\n";
    ck_assert(procmem_nspid(st, strlen(st), &inner, &depth));
    ck_assert_uint_eq(inner, 1);
    ck_assert_uint_eq(depth, 3);
    st = "NStgid:\t4242";
    ck_assert(procmem_nspid(st, strlen(st), &inner, &depth));
    ck_assert_uint_eq(inner, 4242);
    ck_assert_uint_eq(depth, 1);
    const char *bad[] = {"Name:\tx\n", "NStgid:\n", "NStgid:\t12 x\n", "NStgid:\t0\n",
                         "NStgid:\t99999999999999999999999\n", "NStgid:\t4294967296\n",
                         "NSpid:\t7\n"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(!procmem_nspid(bad[i], strlen(bad[i]), &inner, &depth), "%s", bad[i]);
    /* Deeper than the kernel nests (32): refused. */
    char deep[512] = "NStgid:";
    for (int i = 0; i < 33; i++)
        strcat(deep, "\t7");
    ck_assert(!procmem_nspid(deep, strlen(deep), &inner, &depth));
}
END_TEST

START_TEST(what_front_ends_show)
{
    const char *cg = "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
                     UID_ ".slice/cri-containerd-" ID ".scope\n";
    const char *st = "NStgid:\t900\t1\n";
    struct process_container pc;
    process_container_parse(cg, strlen(cg), st, strlen(st), &pc);
    ck_assert_int_eq(pc.nspid, 1);
    struct process_label l[PROCESS_LABELS_MAX];
    ck_assert_uint_eq(process_container_labels(&pc, l), 3);
    ck_assert_str_eq(l[0].key, "container_id");
    ck_assert_str_eq(l[0].value, "containerd://" ID);
    ck_assert_str_eq(l[1].key, "pod_uid");
    ck_assert_str_eq(l[1].value, UID);
    ck_assert_str_eq(l[2].key, "qos");
    ck_assert_str_eq(l[2].value, "burstable");
    json_object *o = json_object_new_object();
    process_container_json(o, &pc);
    ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                     "{\"cgroup\":{\"path\":\"\\/kubepods.slice\\/kubepods-burstable.slice"
                     "\\/kubepods-burstable-pod" UID_ ".slice\\/cri-containerd-" ID
                     ".scope\",\"hierarchy\":\"unified\",\"layout\":\"v2\"},\"container\":"
                     "{\"id\":\"" ID "\",\"runtime\":\"containerd\",\"container_id\":"
                     "\"containerd:\\/\\/" ID "\"},\"pod\":{\"uid\":\"" UID "\",\"qos\":"
                     "\"burstable\"},\"nspid\":1}");
    json_object_put(o);
    /* Nothing read: no labels, every key null. */
    process_container_parse(NULL, 0, NULL, 0, &pc);
    ck_assert_uint_eq(process_container_labels(&pc, l), 0);
    o = json_object_new_object();
    process_container_json(o, &pc);
    ck_assert_str_eq(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
                     "{\"cgroup\":null,\"container\":null,\"pod\":null,\"nspid\":null}");
    json_object_put(o);
}
END_TEST

START_TEST(own_process)
{
    struct process_container pc;
    process_container_read("/proc/self", &pc);
    ck_assert(pc.layout != CGROUP_LAYOUT_NONE);
    ck_assert_int_gt(pc.nspid, 0);
    ck_assert_uint_ge(pc.pidns_depth, 1);
}
END_TEST

static Suite *container_suite(void)
{
    Suite *s = suite_create("container");
    TCase *tc = tcase_create("paths");
    tcase_add_test(tc, runtime_layouts);
    tcase_add_test(tc, kubernetes_systemd);
    tcase_add_test(tc, kubernetes_cgroupfs);
    tcase_add_test(tc, nothing_invented);
    tcase_add_test(tc, labels_as_kube_state_metrics);
    suite_add_tcase(s, tc);
    tc = tcase_create("files");
    tcase_add_test(tc, v2_v1_hybrid);
    tcase_add_test(tc, malformed_and_hostile);
    tcase_add_test(tc, nspid);
    tcase_add_test(tc, what_front_ends_show);
    tcase_add_test(tc, own_process);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(container_suite)
