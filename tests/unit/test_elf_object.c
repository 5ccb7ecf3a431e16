/* test_elf_object.c - ELF symbols, load bias, build-id and debuglink on
 * the fixture programs, checked against the addresses those programs
 * reported about themselves while running. */
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
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

/* A fixture's bytes in a memory file, its section headers changed by
 * patch (ELF64, as every fixture of a 64-bit build): what a crafted file
 * in the target's reach could be.  Returns the file's descriptor. */
typedef void shdr_patch(Elf64_Shdr *sh, size_t n, const char *names);

static int patched_copy(const char *fixture, shdr_patch *patch)
{
    int in = open(fixture_path(fixture), O_RDONLY);
    ck_assert_int_ge(in, 0);
    off_t size = lseek(in, 0, SEEK_END);
    ck_assert_int_gt(size, (off_t)sizeof(Elf64_Ehdr));
    unsigned char *b = malloc((size_t)size);
    ck_assert_int_eq(pread(in, b, (size_t)size, 0), size);
    close(in);
    Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
    ck_assert_int_eq(eh->e_ident[EI_CLASS], ELFCLASS64);
    ck_assert_uint_le(eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr), (uint64_t)size);
    Elf64_Shdr *sh = (Elf64_Shdr *)(b + eh->e_shoff);
    patch(sh, eh->e_shnum, (const char *)b + sh[eh->e_shstrndx].sh_offset);
    int fd = memfd_create("patched", 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, b, (size_t)size, 0), size);
    free(b);
    return fd;
}

static void huge_symtab_size(Elf64_Shdr *sh, size_t n, const char *names)
{
    (void)names;
    for (size_t i = 0; i < n; i++)
        if (sh[i].sh_type == SHT_SYMTAB || sh[i].sh_type == SHT_DYNSYM)
            sh[i].sh_size = (uint64_t)1 << 44;
}

/* .comment made a second .gnu_debuglink, a copy of the real one (name,
 * offset and size), before it. */
static void second_debuglink(Elf64_Shdr *sh, size_t n, const char *names)
{
    const Elf64_Shdr *link = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(names + sh[i].sh_name, ".gnu_debuglink") == 0)
            link = &sh[i];
    ck_assert_ptr_nonnull(link);
    for (size_t i = 0; i < n; i++)
        if (strcmp(names + sh[i].sh_name, ".comment") == 0)
            sh[i] = *link;
}

/* A symbol table's header claiming 16 TiB (found by fuzz_elf_object: the
 * reader sized its table from the header and asked for that much). */
START_TEST(symbol_table_size_claimed_by_header_is_not_believed)
{
    int fd = patched_copy("prog_pie", huge_symtab_size);
    struct mp_error err;
    struct elf_object *obj = elf_object_open_fd(fd, "patched", &err);
    close(fd);
    /* The object still opens (its build-id and segments are sound), with
     * no more symbols than the file can hold. */
    ck_assert_msg(obj != NULL, "%s", err.msg);
    ck_assert_uint_eq(obj->build_id_len, 20);
    ck_assert_uint_lt(obj->nsyms, 100000);
    elf_object_free(obj);
}
END_TEST

/* Two .gnu_debuglink sections: one link, nothing leaked (found by
 * fuzz_elf_object: the second's copy replaced the first's, which leaked;
 * the sanitized run of the unit tests reports such a leak). */
START_TEST(two_debuglinks_leak_nothing)
{
    int fd = patched_copy("stripped/prog_pie", second_debuglink);
    struct mp_error err;
    struct elf_object *obj = elf_object_open_fd(fd, "patched", &err);
    close(fd);
    ck_assert_msg(obj != NULL, "%s", err.msg);
    ck_assert_str_eq(obj->debuglink, "prog_pie.debug");
    elf_object_free(obj);
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

/* A data-only library (as libicudata): one executable segment of the C
 * runtime's stubs, no function of its own.  Then the same with a function
 * of its own, a stripped object with a real text, and none executable. */
START_TEST(own_code_tells_data_only_objects)
{
    struct elf_load_segment loads[2] = {
        {.vaddr = 0x1000, .memsz = 0x105, .filesz = 0x105, .flags = PF_R | PF_X},
        {.vaddr = 0x2000, .memsz = 0x10000, .filesz = 0x10000, .flags = PF_R},
    };
    struct elf_symbol syms[3] = {
        {.value = 0x1000, .name = "_init", .type = STT_FUNC, .defined = true},
        {.value = 0x1040, .name = "frame_dummy", .type = STT_FUNC, .defined = true},
        {.value = 0x2000, .name = "icudt72_dat", .type = STT_OBJECT, .defined = true},
    };
    struct elf_object o = {.loads = loads, .nloads = 2, .syms = syms, .nsyms = 3};
    ck_assert(!elf_object_has_own_code(&o));
    syms[1].name = "ucol_open";
    ck_assert(elf_object_has_own_code(&o));
    o.nsyms = 0;
    ck_assert(!elf_object_has_own_code(&o));
    loads[0].filesz = 0x4000;
    ck_assert(elf_object_has_own_code(&o));   /* stripped, but code */
    loads[0].flags = PF_R;
    ck_assert(!elf_object_has_own_code(&o));  /* nothing executable */
    struct elf_object *lib = open_fixture("libfixture.so");
    ck_assert(elf_object_has_own_code(lib));
    elf_object_free(lib);
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
    tcase_add_test(tc, symbol_table_size_claimed_by_header_is_not_believed);
    tcase_add_test(tc, two_debuglinks_leak_nothing);
    tcase_add_test(tc, own_code_tells_data_only_objects);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(elf_object_suite)
