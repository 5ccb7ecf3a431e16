/* test_pprof.c - the pprof export: decode what pprof_write wrote (gunzip,
 * protobuf-c unpack) and check the format's rules and the numbers. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/report/pprof.h"
#include "pprof.pb-c.h"
#include "tests/unit/unit.h"

/* Three stacks; the first frame of each stack is in the "allocator"
 * object, and the third stack is nothing but allocator frames. */
static const char profile_text[] =
    "heap_v2/524288\n"
    "  t*: 3: 3072 [0: 0]\n"
    "@ 0x7f0000001010 0x400123 0x400456\n"
    "  t*: 2: 2048 [0: 0]\n"
    "@ 0x7f0000001010 0x400789 0x400456\n"
    "  t*: 1: 1024 [0: 0]\n"
    "@ 0x7f0000001010 0x7f0000001020\n"
    "  t*: 1: 512 [0: 0]\n"
    "\n"
    "MAPPED_LIBRARIES:\n"
    "00400000-00401000 r-xp 00000000 00:00 1 /nonexistent/app\n"
    "7f0000000000-7f0000002000 r-xp 00000000 00:00 2 /nonexistent/libjemalloc.so.2\n";

/* o: written by pprof_write_fd with these options (memprof serve's way),
 * NULL: by pprof_write. */
static Perftools__Profiles__Profile *export_and_decode_with(struct profile **pp,
                                                           const struct pprof_options *o)
{
    struct mp_error err;
    struct profile *p = profile_parse(profile_text, sizeof profile_text - 1, "test", &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    struct symbolizer_options opts = {0};
    struct symbolizer *sym = symbolizer_new(&opts);
    char path[] = "/tmp/memprof-pprof-XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    if (o)
        ck_assert_msg(pprof_write_fd(p, sym, fd, o, &err) == 0, "%s", err.msg);
    close(fd);
    if (!o)
        ck_assert_msg(pprof_write(p, sym, path, &err) == 0, "%s", err.msg);
    symbolizer_free(sym);

    gzFile gz = gzopen(path, "rb");
    ck_assert_ptr_nonnull(gz);
    static uint8_t buf[1 << 20];
    int len = gzread(gz, buf, sizeof buf);
    gzclose(gz);
    unlink(path);
    ck_assert_int_gt(len, 0);
    Perftools__Profiles__Profile *pb =
        perftools__profiles__profile__unpack(NULL, (size_t)len, buf);
    ck_assert_ptr_nonnull(pb);
    *pp = p;
    return pb;
}

static Perftools__Profiles__Profile *export_and_decode(struct profile **pp)
{
    return export_and_decode_with(pp, NULL);
}

static const char *str(const Perftools__Profiles__Profile *pb, int64_t i)
{
    ck_assert(i >= 0 && (size_t)i < pb->n_string_table);
    return pb->string_table[i];
}

START_TEST(format_rules)
{
    struct profile *p;
    Perftools__Profiles__Profile *pb = export_and_decode(&p);
    ck_assert_uint_ge(pb->n_string_table, 1);
    ck_assert_str_eq(pb->string_table[0], "");
    ck_assert_uint_eq(pb->n_sample_type, 2);
    ck_assert_str_eq(str(pb, pb->sample_type[0]->type), "inuse_objects");
    ck_assert_str_eq(str(pb, pb->sample_type[0]->unit), "count");
    ck_assert_str_eq(str(pb, pb->sample_type[1]->type), "inuse_space");
    ck_assert_str_eq(str(pb, pb->sample_type[1]->unit), "bytes");
    ck_assert_str_eq(str(pb, pb->period_type->type), "space");
    ck_assert_int_eq(pb->period, 524288);
    /* ids: non-zero and unique, and every reference resolves */
    for (size_t i = 0; i < pb->n_location; i++) {
        ck_assert_uint_eq(pb->location[i]->id, i + 1);
        for (size_t j = 0; j < pb->location[i]->n_line; j++) {
            uint64_t f = pb->location[i]->line[j]->function_id;
            ck_assert(f >= 1 && f <= pb->n_function);
        }
    }
    for (size_t i = 0; i < pb->n_function; i++)
        ck_assert_uint_eq(pb->function[i]->id, i + 1);
    for (size_t i = 0; i < pb->n_mapping; i++)
        ck_assert_uint_eq(pb->mapping[i]->id, i + 1);
    ck_assert_uint_eq(pb->n_mapping, 2);
    ck_assert_str_eq(str(pb, pb->mapping[0]->filename), "/nonexistent/app");
    for (size_t i = 0; i < pb->n_sample; i++)
        for (size_t j = 0; j < pb->sample[i]->n_location_id; j++) {
            uint64_t l = pb->sample[i]->location_id[j];
            ck_assert(l >= 1 && l <= pb->n_location);
        }
    perftools__profiles__profile__free_unpacked(pb, NULL);
    profile_free(p);
}
END_TEST

/* memprof serve's container labels: on every sample, and as comments. */
START_TEST(labels_on_every_sample)
{
    struct pprof_label labels[] = {{"container_id", "containerd://0123"}, {"qos", "burstable"}};
    struct pprof_options o = {.labels = labels, .nlabels = 2};
    struct profile *p;
    Perftools__Profiles__Profile *pb = export_and_decode_with(&p, &o);
    ck_assert_uint_gt(pb->n_sample, 0);
    for (size_t i = 0; i < pb->n_sample; i++) {
        ck_assert_uint_eq(pb->sample[i]->n_label, 2);
        for (size_t j = 0; j < 2; j++) {
            ck_assert_str_eq(str(pb, pb->sample[i]->label[j]->key), labels[j].key);
            ck_assert_str_eq(str(pb, pb->sample[i]->label[j]->str), labels[j].value);
        }
    }
    ck_assert_uint_eq(pb->n_comment, 2);
    ck_assert_str_eq(str(pb, pb->comment[0]), "container_id=containerd://0123");
    ck_assert_str_eq(str(pb, pb->comment[1]), "qos=burstable");
    perftools__profiles__profile__free_unpacked(pb, NULL);
    profile_free(p);
    /* Without labels, none. */
    pb = export_and_decode(&p);
    ck_assert_uint_eq(pb->n_comment, 0);
    for (size_t i = 0; i < pb->n_sample; i++)
        ck_assert_uint_eq(pb->sample[i]->n_label, 0);
    perftools__profiles__profile__free_unpacked(pb, NULL);
    profile_free(p);
}
END_TEST

START_TEST(values_are_unsampled_and_allocator_frames_dropped)
{
    struct profile *p;
    Perftools__Profiles__Profile *pb = export_and_decode(&p);
    ck_assert_uint_eq(pb->n_sample, 3);
    double objects = 0, bytes = 0;
    for (size_t i = 0; i < pb->n_sample; i++) {
        ck_assert_uint_eq(pb->sample[i]->n_value, 2);
        objects += (double)pb->sample[i]->value[0];
        bytes += (double)pb->sample[i]->value[1];
    }
    /* 3 stacks, each rounded: within 1.5 of the unsampled totals */
    ck_assert_double_eq_tol(bytes, p->total.inuse_bytes, 1.5);
    ck_assert_double_eq_tol(objects, p->total.inuse_objects, 1.5);
    /* unsampling made the first stack larger than its raw 2048 bytes */
    ck_assert_int_gt(pb->sample[0]->value[1], 2048);
    /* stacks 1 and 2 lost their leading allocator frame; stack 3 is only
     * allocator frames and keeps its last one */
    ck_assert_uint_eq(pb->sample[0]->n_location_id, 2);
    ck_assert_uint_eq(pb->sample[1]->n_location_id, 2);
    ck_assert_uint_eq(pb->sample[2]->n_location_id, 1);
    /* both stacks end in the same caller, 0x400456: one shared location */
    ck_assert_uint_eq(pb->sample[0]->location_id[1], pb->sample[1]->location_id[1]);
    Perftools__Profiles__Location *leaf = pb->location[pb->sample[0]->location_id[0] - 1];
    ck_assert_uint_eq(leaf->address, 0x400122); /* return address - 1 */
    ck_assert_uint_eq(leaf->mapping_id, 1);
    perftools__profiles__profile__free_unpacked(pb, NULL);
    profile_free(p);
}
END_TEST

static Suite *pprof_suite(void)
{
    Suite *s = suite_create("pprof");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, format_rules);
    tcase_add_test(tc, values_are_unsampled_and_allocator_frames_dropped);
    tcase_add_test(tc, labels_on_every_sample);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(pprof_suite)
