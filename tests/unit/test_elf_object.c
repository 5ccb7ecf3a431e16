/* test_elf_object.c - ELF symbols, load bias, build-id and debuglink on
 * the fixture programs, checked against the addresses those programs
 * reported about themselves while running. */
#include <elf.h>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include "lib/elf/elf_object.h"
#include "tests/unit/fixtures/fixture_out.h"
#include "tests/unit/unit.h"

#define OUTER_MANGLED "_ZN7fixture14outer_functionEi"

static struct elf_object *open_fixture(const char *name)
{
    struct mp_error err;
    struct elf_object *obj = elf_object_open(fixture_path(name), &err);
    ck_assert_msg(obj != NULL, "%s", err.msg);
    return obj;
}

/* The mapping of the file named `suffix` that holds addr. */
static const struct map_entry *mapping_of(const struct fixture_out *o, uint64_t addr,
                                          const char *suffix)
{
    const struct map_entry *e = maps_find(&o->maps, addr);
    ck_assert_ptr_nonnull(e);
    size_t n = strlen(e->path), s = strlen(suffix);
    ck_assert_msg(n >= s && strcmp(e->path + n - s, suffix) == 0,
                  "0x%lx is in %s, not %s", (unsigned long)addr, e->path, suffix);
    return e;
}

static void check_bias(const char *prog, int elf_type, bool bias_is_zero)
{
    struct fixture_out out;
    char name[64];
    snprintf(name, sizeof name, "%s.out", prog);
    fixture_out_load(name, &out);
    struct elf_object *obj = open_fixture(prog);
    ck_assert_int_eq(obj->type, elf_type);
    uint64_t fn = fixture_addr(&out, "fn", "outer")->addr;
    const struct map_entry *e = mapping_of(&out, fn, prog);
    uint64_t bias = 12345;
    ck_assert_int_eq(elf_object_bias(obj, e->start, e->offset, &bias), 0);
    if (bias_is_zero)
        ck_assert_uint_eq(bias, 0);
    else
        ck_assert_uint_ne(bias, 0);
    const struct elf_symbol *sym = elf_object_symbol_named(obj, OUTER_MANGLED);
    ck_assert_ptr_nonnull(sym);
    ck_assert_uint_eq(sym->value + bias, fn);
    /* The first mapping (offset 0, headers) gives the same bias.  (Data
     * mappings can be ambiguous: RELRO data and rodata may start on one
     * file page; code never shares its page with them in these builds.) */
    for (size_t i = 0; i < out.maps.n; i++) {
        const struct map_entry *m = &out.maps.v[i];
        uint64_t b;
        if (strcmp(m->path, e->path) != 0 || (m->offset != 0 && !m->x))
            continue;
        ck_assert_int_eq(elf_object_bias(obj, m->start, m->offset, &b), 0);
        ck_assert_uint_eq(b, bias);
    }
    elf_object_free(obj);
    fixture_out_free(&out);
}

START_TEST(bias_of_pie_is_its_load_address)
{
    check_bias("prog_pie", ET_DYN, false);
}
END_TEST

START_TEST(bias_of_non_pie_is_zero)
{
    check_bias("prog_nopie", ET_EXEC, true);
}
END_TEST

START_TEST(bias_of_shared_library_finds_hidden_symbol)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct elf_object *lib = open_fixture("libfixture.so");
    uint64_t fn = fixture_addr(&out, "fn", "lib_hidden")->addr;
    const struct map_entry *e = mapping_of(&out, fn, "libfixture.so");
    uint64_t bias;
    ck_assert_int_eq(elf_object_bias(lib, e->start, e->offset, &bias), 0);
    const struct elf_symbol *sym = elf_object_symbol_named(lib, "fixlib_hidden");
    ck_assert_ptr_nonnull(sym);
    ck_assert(!sym->dynamic); /* hidden: only in .symtab */
    ck_assert_uint_eq(sym->value + bias, fn);
    elf_object_free(lib);
    fixture_out_free(&out);
}
END_TEST

/* .symtab's "fixlib_versioned@@FIXLIB_1" is read as its plain name, for
 * lookups by name and by address alike. */
START_TEST(versioned_names_lose_their_version)
{
    struct elf_object *lib = open_fixture("libfixture.so");
    const struct elf_symbol *sym = elf_object_symbol_named(lib, "fixlib_versioned");
    ck_assert_ptr_nonnull(sym);
    ck_assert_ptr_eq(elf_object_symbol_at(lib, sym->value), sym);
    ck_assert_str_eq(elf_object_symbol_named(lib, "fixlib_function")->name, "fixlib_function");
    ck_assert_ptr_null(elf_object_symbol_named(lib, "fixlib_versioned@@FIXLIB_1"));
    elf_object_free(lib);
}
END_TEST

START_TEST(bias_fails_for_offset_outside_every_segment)
{
    struct elf_object *obj = open_fixture("prog_pie");
    uint64_t bias;
    ck_assert_int_eq(elf_object_bias(obj, 0x7f0000000000, 0x40000000, &bias), -1);
    elf_object_free(obj);
}
END_TEST

START_TEST(symbol_at_sized_symbol_covers_its_range_only)
{
    struct elf_object *obj = open_fixture("prog_pie");
    const struct elf_symbol *outer = elf_object_symbol_named(obj, OUTER_MANGLED);
    ck_assert_ptr_nonnull(outer);
    ck_assert_uint_gt(outer->size, 0);
    ck_assert_ptr_eq(elf_object_symbol_at(obj, outer->value), outer);
    const struct elf_symbol *mid = elf_object_symbol_at(obj, outer->value + outer->size - 1);
    ck_assert_ptr_nonnull(mid);
    ck_assert_str_eq(mid->name, OUTER_MANGLED);
    const struct elf_symbol *after = elf_object_symbol_at(obj, outer->value + outer->size);
    ck_assert(after == NULL || strcmp(after->name, OUTER_MANGLED) != 0);
    elf_object_free(obj);
}
END_TEST

START_TEST(symbol_at_falls_back_to_unsized_function)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct elf_object *obj = open_fixture("prog_pie");
    const struct elf_symbol *sym = elf_object_symbol_named(obj, "unsized_function");
    ck_assert_ptr_nonnull(sym);
    ck_assert_uint_eq(sym->size, 0);
    /* Its second instruction, by the run-time address the program saw. */
    uint64_t fn = fixture_addr(&out, "fn", "unsized")->addr;
    uint64_t outer = fixture_addr(&out, "fn", "outer")->addr;
    uint64_t vaddr = fn - outer + elf_object_symbol_named(obj, OUTER_MANGLED)->value;
    const struct elf_symbol *at = elf_object_symbol_at(obj, vaddr + 1);
    ck_assert_ptr_nonnull(at);
    ck_assert_str_eq(at->name, "unsized_function");
    elf_object_free(obj);
    fixture_out_free(&out);
}
END_TEST

/* What the unwinder's file windows rely on: libc's eh_frame_hdr in a
 * read-only segment, no text relocations, a RELRO range of its own. */
START_TEST(unwind_tables_segment_and_relro)
{
    struct mp_error err;
    struct elf_object *libc = elf_object_open("/lib/x86_64-linux-gnu/libc.so.6", &err);
    ck_assert_msg(libc != NULL, "%s", err.msg);
    ck_assert_uint_gt(libc->eh_frame_hdr_size, 0);
    ck_assert_uint_gt(libc->relro_size, 0);
    ck_assert(!libc->textrel);
    bool in_load = false;
    for (size_t i = 0; i < libc->nloads; i++)
        in_load |= libc->eh_frame_hdr_vaddr >= libc->loads[i].vaddr &&
                   libc->eh_frame_hdr_vaddr < libc->loads[i].vaddr + libc->loads[i].filesz;
    ck_assert(in_load);
    elf_object_free(libc);
}
END_TEST

START_TEST(symbol_at_prefers_plain_alias)
{
    /* glibc exports malloc and __libc_malloc at one address. */
    struct mp_error err;
    struct elf_object *libc = elf_object_open("/lib/x86_64-linux-gnu/libc.so.6", &err);
    ck_assert_msg(libc != NULL, "%s", err.msg);
    const struct elf_symbol *m = elf_object_symbol_named(libc, "malloc");
    const struct elf_symbol *alias = elf_object_symbol_named(libc, "__libc_malloc");
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(alias);
    ck_assert_uint_eq(m->value, alias->value);
    ck_assert_str_eq(elf_object_symbol_at(libc, m->value + 1)->name, "malloc");
    elf_object_free(libc);
}
END_TEST

START_TEST(stripped_copy_keeps_build_id_and_links_debug_file)
{
    struct elf_object *full = open_fixture("prog_pie");
    struct elf_object *stripped = open_fixture("stripped/prog_pie");
    ck_assert(full->has_symtab && full->has_debug_info);
    ck_assert(!stripped->has_symtab && !stripped->has_debug_info);
    ck_assert_uint_eq(full->build_id_len, 20);
    ck_assert_uint_eq(stripped->build_id_len, full->build_id_len);
    ck_assert_mem_eq(stripped->build_id, full->build_id, full->build_id_len);
    ck_assert_ptr_null(full->debuglink);
    ck_assert_str_eq(stripped->debuglink, "prog_pie.debug");
    /* The CRC objcopy stored is the file's CRC-32. */
    int fd = open(fixture_path("stripped/prog_pie.debug"), O_RDONLY);
    ck_assert_int_ge(fd, 0);
    unsigned char buf[65536];
    uLong crc = crc32(0, Z_NULL, 0);
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        crc = crc32(crc, buf, (uInt)n);
    close(fd);
    ck_assert_uint_eq(stripped->debuglink_crc, (uint32_t)crc);
    elf_object_free(full);
    elf_object_free(stripped);
}
END_TEST

START_TEST(read_build_id_matches_full_read)
{
    struct elf_object *full = open_fixture("prog_pie");
    char hex[129];
    elf_object_build_id_hex(full, hex, sizeof hex);
    ck_assert_uint_eq(strlen(hex), 40);
    uint8_t id[64];
    size_t len = 99;
    int fd = open(fixture_path("prog_pie.debug"), O_RDONLY);
    ck_assert_int_eq(elf_object_read_build_id(fd, id, sizeof id, &len), 0);
    close(fd);
    ck_assert_uint_eq(len, full->build_id_len);
    ck_assert_mem_eq(id, full->build_id, len);
    fd = open(fixture_path("prog_noid"), O_RDONLY);
    ck_assert_int_eq(elf_object_read_build_id(fd, id, sizeof id, &len), 0);
    close(fd);
    ck_assert_uint_eq(len, 0);
    fd = open(fixture_path("prog_pie.out"), O_RDONLY);
    ck_assert_int_eq(elf_object_read_build_id(fd, id, sizeof id, &len), -1);
    close(fd);
    elf_object_free(full);
}
END_TEST

START_TEST(not_elf_is_an_error)
{
    struct mp_error err;
    ck_assert_ptr_null(elf_object_open(fixture_path("prog_pie.out"), &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "not an ELF file"));
    ck_assert_ptr_null(elf_object_open(fixture_path("no-such-file"), &err));
    ck_assert_ptr_nonnull(strstr(err.msg, "cannot open"));
}
END_TEST

static Suite *elf_object_suite(void)
{
    Suite *s = suite_create("elf_object");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, bias_of_pie_is_its_load_address);
    tcase_add_test(tc, bias_of_non_pie_is_zero);
    tcase_add_test(tc, bias_of_shared_library_finds_hidden_symbol);
    tcase_add_test(tc, bias_fails_for_offset_outside_every_segment);
    tcase_add_test(tc, versioned_names_lose_their_version);
    tcase_add_test(tc, symbol_at_sized_symbol_covers_its_range_only);
    tcase_add_test(tc, symbol_at_falls_back_to_unsized_function);
    tcase_add_test(tc, symbol_at_prefers_plain_alias);
    tcase_add_test(tc, unwind_tables_segment_and_relro);
    tcase_add_test(tc, stripped_copy_keeps_build_id_and_links_debug_file);
    tcase_add_test(tc, read_build_id_matches_full_read);
    tcase_add_test(tc, not_elf_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(elf_object_suite)
