/* test_dwarf_sections.c - a zlib-compressed debug file as libdw is given
 * it (lib/symbolize/dwarf_sections.c): every byte made readable equals the
 * uncompressed file's, whether a lazy section went on with zlib (a unit
 * near its start) or was inflated whole with libdeflate (a unit far in),
 * and the sections read whole are shown inflated; a compression header
 * claiming more than its stream holds gives a clear -1 and leaves the
 * bytes already readable as they were, and one claiming more than any
 * stream of its length could hold is not believed. */
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/symbolize/dwarf_sections.h"
#include "tests/unit/fixtures/fixture_out.h"
#include "tests/unit/unit.h"

#define UNITS 4     /* fixtures.mk: manyunits */

struct debug_file {
    int fd;
    Elf *elf;
};

static void open_fd(struct debug_file *f, int fd)
{
    elf_version(EV_CURRENT);
    f->fd = fd;
    ck_assert_int_ge(fd, 0);
    f->elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    ck_assert_ptr_nonnull(f->elf);
}

static void close_file(struct debug_file *f)
{
    elf_end(f->elf);
    close(f->fd);
}

static Elf_Scn *section(Elf *elf, const char *name)
{
    size_t shstrndx;
    ck_assert_int_eq(elf_getshdrstrndx(elf, &shstrndx), 0);
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
        if (strcmp(elf_strptr(elf, shstrndx, sh.sh_name), name) == 0)
            return scn;
    }
    ck_abort_msg("no %s", name);
    return NULL;
}

/* What libdw would read of name now: its Elf_Data. */
static Elf_Data *data_of(Elf *elf, const char *name)
{
    Elf_Data *d = elf_getdata(section(elf, name), NULL);
    ck_assert_ptr_nonnull(d);
    return d;
}

/* The units' offsets in the uncompressed .debug_info (DWARF32). */
static void unit_offsets(const Elf_Data *info, uint64_t off[UNITS], uint64_t *end)
{
    uint64_t at = 0;
    for (int i = 0; i < UNITS; i++) {
        uint32_t len;
        ck_assert_uint_le(at + 4, info->d_size);
        memcpy(&len, (const char *)info->d_buf + at, 4);
        off[i] = at;
        at += 4 + (uint64_t)len;
    }
    ck_assert_uint_eq(at, info->d_size);
    *end = at;
}

/* The compressed fixture with patch applied to its bytes, as a memfd. */
static int patched(void (*patch)(unsigned char *b, const Elf64_Shdr *sh, size_t n,
                                 const char *names))
{
    int in = open(fixture_path("zmanyunits.debug"), O_RDONLY);
    ck_assert_int_ge(in, 0);
    off_t size = lseek(in, 0, SEEK_END);
    unsigned char *b = malloc((size_t)size);
    ck_assert_int_eq(pread(in, b, (size_t)size, 0), size);
    close(in);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)b;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(b + eh->e_shoff);
    patch(b, sh, eh->e_shnum, (const char *)b + sh[eh->e_shstrndx].sh_offset);
    int fd = memfd_create("patched", 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, b, (size_t)size, 0), size);
    free(b);
    return fd;
}

/* The named section's compression header claims more bytes than its
 * stream inflates to. */
static void claim(unsigned char *b, const Elf64_Shdr *sh, size_t n, const char *names,
                  const char *name, uint64_t more)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(names + sh[i].sh_name, name) == 0) {
            Elf64_Chdr *ch = (Elf64_Chdr *)(b + sh[i].sh_offset);
            ck_assert_int_eq(ch->ch_type, ELFCOMPRESS_ZLIB);
            ch->ch_size += more;
            return;
        }
    ck_abort_msg("no %s", name);
}

static void info_claims_more(unsigned char *b, const Elf64_Shdr *sh, size_t n, const char *names)
{
    claim(b, sh, n, names, ".debug_info", 64 << 10);
}

/* 1 GiB: more than deflate can make of the section's 72 KB. */
static void info_claims_a_gigabyte(unsigned char *b, const Elf64_Shdr *sh, size_t n,
                                   const char *names)
{
    claim(b, sh, n, names, ".debug_info", (uint64_t)1 << 30);
}

static void str_claims_more(unsigned char *b, const Elf64_Shdr *sh, size_t n, const char *names)
{
    claim(b, sh, n, names, ".debug_str", 64 << 10);
}

/* The uncompressed fixture's .debug_info and its units beside a
 * compressed copy (zfd) made ready for libdw. */
struct info_pair {
    struct debug_file plain, z;
    const Elf_Data *want, *got;
    uint64_t off[UNITS], end;
    struct dwarf_sections *s;
};

static void pair_open(struct info_pair *p, int zfd)
{
    open_fd(&p->plain, open(fixture_path("manyunits.debug"), O_RDONLY));
    open_fd(&p->z, zfd);
    p->want = data_of(p->plain.elf, ".debug_info");
    unit_offsets(p->want, p->off, &p->end);
    p->s = dwarf_sections_prepare(p->z.elf);
    ck_assert_ptr_nonnull(p->s);
    p->got = data_of(p->z.elf, ".debug_info");
}

static void pair_close(struct info_pair *p)
{
    dwarf_sections_free(p->s);
    close_file(&p->z);
    close_file(&p->plain);
}

START_TEST(lazy_units_read_as_built)
{
    struct info_pair p;
    pair_open(&p, open(fixture_path("zmanyunits.debug"), O_RDONLY));
    struct dwarf_sections *s = p.s;
    const Elf_Data *want = p.want, *got = p.got;
    const uint64_t *off = p.off, end = p.end;
    /* The first unit: part of the section, each byte as built. */
    ck_assert_int_ge(dwarf_sections_need_unit(s, off[0]), 0);
    ck_assert_uint_ge(got->d_size, off[1]);
    ck_assert_uint_lt(got->d_size, end);
    ck_assert_int_eq(memcmp(got->d_buf, want->d_buf, got->d_size), 0);
    /* The last: the rest (inflated whole), the same bytes again. */
    ck_assert_int_eq(dwarf_sections_need_unit(s, off[UNITS - 1]), 1);
    ck_assert_uint_eq(got->d_size, end);
    ck_assert_int_eq(memcmp(got->d_buf, want->d_buf, end), 0);
    ck_assert_int_eq(dwarf_sections_need_unit(s, off[1]), 0);
    pair_close(&p);
}
END_TEST

/* A unit far in asked for first: inflated whole at once, as built. */
START_TEST(far_unit_first_reads_as_built)
{
    struct info_pair p;
    pair_open(&p, open(fixture_path("zmanyunits.debug"), O_RDONLY));
    ck_assert_int_eq(dwarf_sections_need_unit(p.s, p.off[UNITS - 1]), 1);
    ck_assert_uint_eq(p.got->d_size, p.end);
    ck_assert_int_eq(memcmp(p.got->d_buf, p.want->d_buf, p.end), 0);
    pair_close(&p);
}
END_TEST

/* The sections libdw reads whole are shown to it inflated, as built. */
START_TEST(whole_sections_read_as_built)
{
    struct debug_file plain, z;
    open_fd(&plain, open(fixture_path("manyunits.debug"), O_RDONLY));
    open_fd(&z, open(fixture_path("zmanyunits.debug"), O_RDONLY));
    struct dwarf_sections *s = dwarf_sections_prepare(z.elf);
    ck_assert_ptr_nonnull(s);
    const char *const whole[] = {".debug_str", ".debug_aranges", ".debug_line_str"};
    for (size_t i = 0; i < sizeof whole / sizeof whole[0]; i++) {
        GElf_Shdr sh;
        ck_assert_ptr_nonnull(gelf_getshdr(section(z.elf, whole[i]), &sh));
        ck_assert_msg(!(sh.sh_flags & SHF_COMPRESSED), "%s still compressed", whole[i]);
        const Elf_Data *want = data_of(plain.elf, whole[i]), *got = data_of(z.elf, whole[i]);
        ck_assert_uint_eq(got->d_size, want->d_size);
        ck_assert_int_eq(memcmp(got->d_buf, want->d_buf, want->d_size), 0);
    }
    dwarf_sections_free(s);
    close_file(&z);
    close_file(&plain);
}
END_TEST

/* .debug_info's header claims more than its stream holds: the units it
 * does hold read as built (libdeflate refuses the whole, zlib goes on),
 * asking for all of it is -1, and nothing crashes. */
START_TEST(info_claiming_more_fails_clearly)
{
    struct info_pair p;
    pair_open(&p, patched(info_claims_more));
    ck_assert_int_eq(dwarf_sections_need_unit(p.s, p.off[UNITS - 1]), 1);
    ck_assert_uint_ge(p.got->d_size, p.off[UNITS - 1]);
    ck_assert_int_eq(memcmp(p.got->d_buf, p.want->d_buf, p.got->d_size), 0);
    ck_assert_int_eq(dwarf_sections_need_all(p.s), -1);
    ck_assert_uint_eq(p.got->d_size, p.end);
    ck_assert_int_eq(memcmp(p.got->d_buf, p.want->d_buf, p.end), 0);
    ck_assert_int_eq(dwarf_sections_need_all(p.s), -1);
    pair_close(&p);
}
END_TEST

/* A whole section that cannot be inflated is left as it was (compressed),
 * for libdw to read or refuse; the others are still taken. */
START_TEST(whole_section_claiming_more_is_left)
{
    struct debug_file z;
    open_fd(&z, patched(str_claims_more));
    struct dwarf_sections *s = dwarf_sections_prepare(z.elf);
    ck_assert_ptr_nonnull(s);
    GElf_Shdr sh;
    ck_assert_ptr_nonnull(gelf_getshdr(section(z.elf, ".debug_str"), &sh));
    ck_assert(sh.sh_flags & SHF_COMPRESSED);
    ck_assert_ptr_nonnull(gelf_getshdr(section(z.elf, ".debug_aranges"), &sh));
    ck_assert(!(sh.sh_flags & SHF_COMPRESSED));
    dwarf_sections_free(s);
    close_file(&z);
}
END_TEST

/* A size no stream of the section's length can inflate to is not
 * believed (nor allocated): nothing is taken over, libdw refuses the
 * section its own way. */
START_TEST(impossible_size_is_not_taken)
{
    struct debug_file z;
    open_fd(&z, patched(info_claims_a_gigabyte));
    ck_assert_ptr_null(dwarf_sections_prepare(z.elf));
    GElf_Shdr sh;
    ck_assert_ptr_nonnull(gelf_getshdr(section(z.elf, ".debug_info"), &sh));
    ck_assert(sh.sh_flags & SHF_COMPRESSED);
    close_file(&z);
}
END_TEST

static Suite *dwarf_sections_suite(void)
{
    Suite *s = suite_create("dwarf_sections");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, lazy_units_read_as_built);
    tcase_add_test(tc, far_unit_first_reads_as_built);
    tcase_add_test(tc, whole_sections_read_as_built);
    tcase_add_test(tc, info_claiming_more_fails_clearly);
    tcase_add_test(tc, whole_section_claiming_more_is_left);
    tcase_add_test(tc, impossible_size_is_not_taken);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(dwarf_sections_suite)
