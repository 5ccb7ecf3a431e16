/* test_symbolize.c - the symbolizer on the fixture programs' own reports
 * (real return addresses, real maps), on separate debug files found every
 * supported way, and on the system's jemalloc and libstdc++. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/elf/elf_object.h"
#include "lib/symbolize/symbolize.h"
#include "lib/symbolize/alloc_frames.h"
#include "lib/profile/synthetic_frames.h"
#include "tests/unit/fixtures/fixture_out.h"
#include "tests/unit/unit.h"

#define OUTER "fixture::outer_function(int)"
#define OUTER_MANGLED "_ZN7fixture14outer_functionEi"
#define HELPER "fixture::inlined_helper" /* static: no linkage name, so no parameters */
#define JEMALLOC "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

/* A symbolizer whose warnings land in a memory buffer. */
struct harness {
    struct symbolizer *s;
    FILE *warnings;
    char *text;
    size_t len;
};

static void harness_open(struct harness *h, const char *exe, const char *debug_dir)
{
    memset(h, 0, sizeof *h);
    h->warnings = open_memstream(&h->text, &h->len);
    struct symbolizer_options opts = {
        .exe = exe ? fixture_path(exe) : NULL,
        .debug_dir = debug_dir ? fixture_path(debug_dir) : fixture_path("no-debug-dir"),
        .warnings = h->warnings,
    };
    h->s = symbolizer_new(&opts);
    ck_assert_ptr_nonnull(h->s);
}

static const char *harness_warnings(struct harness *h)
{
    fflush(h->warnings);
    return h->text ? h->text : "";
}

static void harness_close(struct harness *h)
{
    symbolizer_free(h->s);
    fclose(h->warnings);
    free(h->text);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = s ? strlen(s) : 0, k = strlen(suffix);
    return s && n >= k && strcmp(s + n - k, suffix) == 0;
}

static struct symbol_frame lookup1(struct harness *h, const struct map_list *maps,
                                   uint64_t addr)
{
    struct symbol_frame f;
    ck_assert_int_eq(symbolizer_lookup(h->s, maps, addr, SYMBOLIZE_FUNCTIONS, &f, 1), 1);
    return f;
}

/* The call instruction of a recorded return address. */
static uint64_t call_of(const struct fixture_out *o, const char *name)
{
    return fixture_addr(o, "ra", name)->addr - 1;
}

static void check_function_names(const char *prog)
{
    struct fixture_out out;
    char name[64];
    snprintf(name, sizeof name, "%s.out", prog);
    fixture_out_load(name, &out);
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbol_frame f = lookup1(&h, &out.maps, call_of(&out, "direct"));
    ck_assert_str_eq(f.function, OUTER);
    ck_assert(ends_with(f.object, prog));
    ck_assert(!f.is_allocator);
    ck_assert_ptr_null(f.file);
    /* The function's first byte, and an inlined call inside it. */
    ck_assert_ptr_eq(lookup1(&h, &out.maps, fixture_addr(&out, "fn", "outer")->addr).function,
                     f.function);
    ck_assert_ptr_eq(lookup1(&h, &out.maps, call_of(&out, "inline")).function, f.function);
    ck_assert_str_eq(lookup1(&h, &out.maps, fixture_addr(&out, "fn", "unsized")->addr + 1).function,
                     "unsized_function");
    struct symbol_frame lib = lookup1(&h, &out.maps, call_of(&out, "lib"));
    ck_assert_str_eq(lib.function, "fixlib_function");
    ck_assert(ends_with(lib.object, "libfixture.so"));
    ck_assert_str_eq(lookup1(&h, &out.maps, fixture_addr(&out, "fn", "lib_hidden")->addr).function,
                     "fixlib_hidden");
    ck_assert_str_eq(lookup1(&h, &out.maps, fixture_addr(&out, "fn", "lib_versioned")->addr).function,
                     "fixlib_versioned");
    ck_assert_str_eq(harness_warnings(&h), "");
    harness_close(&h);
    fixture_out_free(&out);
}

START_TEST(names_functions_of_pie_and_its_library)
{
    check_function_names("prog_pie");
}
END_TEST

START_TEST(names_functions_of_non_pie)
{
    check_function_names("prog_nopie");
}
END_TEST

START_TEST(object_offset_is_link_time_address)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct mp_error err;
    struct elf_object *elf = elf_object_open(fixture_path("prog_pie"), &err);
    ck_assert_ptr_nonnull(elf);
    uint64_t value = elf_object_symbol_named(elf, OUTER_MANGLED)->value;
    struct harness h;
    harness_open(&h, NULL, NULL);
    uint64_t fn = fixture_addr(&out, "fn", "outer")->addr;
    ck_assert_uint_eq(lookup1(&h, &out.maps, fn + 3).object_offset, value + 3);
    harness_close(&h);
    elf_object_free(elf);
    fixture_out_free(&out);
}
END_TEST

static int lookup_lines(struct harness *h, const struct fixture_out *o, const char *ra,
                        struct symbol_frame *frames, int max)
{
    return symbolizer_lookup(h->s, &o->maps, call_of(o, ra), SYMBOLIZE_LINES, frames, max);
}

static void check_lines(const char *exe)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct harness h;
    harness_open(&h, exe, NULL);
    struct symbol_frame fr[8];
    const struct fixture_addr *in = fixture_addr(&out, "ra", "inline");
    ck_assert_int_eq(lookup_lines(&h, &out, "inline", fr, 8), 2);
    ck_assert_str_eq(fr[0].function, HELPER);
    ck_assert(ends_with(fr[0].file, "/prog.cpp"));
    ck_assert_int_eq(fr[0].line, in->line);
    ck_assert_str_eq(fr[1].function, OUTER);
    ck_assert_ptr_eq(fr[1].file, fr[0].file);
    ck_assert_int_eq(fr[1].line, in->caller_line);
    const struct fixture_addr *direct = fixture_addr(&out, "ra", "direct");
    ck_assert_int_eq(lookup_lines(&h, &out, "direct", fr, 8), 1);
    ck_assert_str_eq(fr[0].function, OUTER);
    ck_assert_int_eq(fr[0].line, direct->line);
    ck_assert_int_eq(lookup_lines(&h, &out, "lib", fr, 8), 1);
    ck_assert_str_eq(fr[0].function, "fixlib_function");
    ck_assert(ends_with(fr[0].file, "/fixlib.c"));
    ck_assert_int_eq(fr[0].line, fixture_addr(&out, "ra", "lib")->line);
    /* max cuts the chain from the outside. */
    ck_assert_int_eq(lookup_lines(&h, &out, "inline", fr, 1), 1);
    ck_assert_str_eq(fr[0].function, HELPER);
    ck_assert_str_eq(harness_warnings(&h), "");
    harness_close(&h);
    fixture_out_free(&out);
}

START_TEST(lines_and_inline_chain)
{
    check_lines(NULL);
}
END_TEST

START_TEST(lines_from_separate_debug_file)
{
    check_lines("stripped/prog_pie");
}
END_TEST

/* Compressed DWARF, inflated a unit at a time, reads the same. */
START_TEST(lines_from_compressed_debug_file)
{
    check_lines("zdebug/prog_pie");
}
END_TEST

/* A compressed .debug_info whose zlib header is spoiled is not inflated
 * (lazily or by libdw): no line, no inlined frame, the function still
 * named from the debug file's symbol table, and no crash. */
START_TEST(spoiled_zlib_header_leaves_symbol_names)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct harness h;
    harness_open(&h, "zbadheader/prog_pie", NULL);
    struct symbol_frame fr[8];
    ck_assert_int_eq(lookup_lines(&h, &out, "inline", fr, 8), 1);
    ck_assert_str_eq(fr[0].function, OUTER);
    ck_assert_int_eq(fr[0].line, 0);
    harness_close(&h);
    fixture_out_free(&out);
}
END_TEST

START_TEST(functions_never_load_dwarf)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbolizer_stats st;
    lookup1(&h, &out.maps, call_of(&out, "inline"));
    lookup1(&h, &out.maps, call_of(&out, "lib"));
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.objects_loaded, 2);
    ck_assert_uint_eq(st.dwarf_loaded, 0);
    struct symbol_frame fr[4];
    lookup_lines(&h, &out, "inline", fr, 4);
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.dwarf_loaded, 1);
    harness_close(&h);
    fixture_out_free(&out);
}
END_TEST

/* With exe pointing at a stripped copy, names come from wherever the
 * debug file is found, and the debug file's symbols are read once. */
static void check_debug_file_found(const char *exe, const char *debug_dir)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct harness h;
    harness_open(&h, exe, debug_dir);
    struct symbol_frame f = lookup1(&h, &out.maps, call_of(&out, "direct"));
    ck_assert_str_eq(f.function, OUTER);
    /* frames keep the path the profile names, not the override */
    ck_assert(ends_with(f.object, "/prog_pie"));
    ck_assert_str_eq(lookup1(&h, &out.maps, call_of(&out, "lib")).function, "fixlib_function");
    struct symbolizer_stats st;
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.debug_files_loaded, 1);
    ck_assert_str_eq(harness_warnings(&h), "");
    harness_close(&h);
    fixture_out_free(&out);
}

START_TEST(debuglink_next_to_object)
{
    check_debug_file_found("stripped/prog_pie", NULL);
}
END_TEST

START_TEST(debuglink_in_dot_debug_subdir)
{
    check_debug_file_found("dotdebug/prog_pie", NULL);
}
END_TEST

START_TEST(debuglink_under_debug_dir)
{
    check_debug_file_found("globaldebug/prog_pie", "debugroot");
}
END_TEST

START_TEST(build_id_under_debug_dir)
{
    check_debug_file_found("buildid/prog_pie", "debugroot");
}
END_TEST

/* A stripped executable without its debug file: unknown, as label+vaddr. */
static void check_unresolved(const char *exe, const char *debug_dir, const char *warning)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct mp_error err;
    struct elf_object *full = elf_object_open(fixture_path("prog_pie"), &err);
    ck_assert_ptr_nonnull(full);
    uint64_t fn = fixture_addr(&out, "fn", "outer")->addr;
    uint64_t vaddr = call_of(&out, "direct") - fn + elf_object_symbol_named(full, OUTER_MANGLED)->value;
    struct harness h;
    harness_open(&h, exe, debug_dir);
    struct symbol_frame f = lookup1(&h, &out.maps, call_of(&out, "direct"));
    char expect[64];
    snprintf(expect, sizeof expect, "prog_pie+0x%lx", (unsigned long)vaddr);
    ck_assert_str_eq(f.function, expect);
    ck_assert_uint_eq(f.object_offset, vaddr);
    lookup1(&h, &out.maps, call_of(&out, "inline"));
    const char *w = harness_warnings(&h);
    if (warning) {
        ck_assert_int_eq(count_of(w, warning), 1);
        ck_assert_int_eq(count_of(w, "\n"), 1);
    } else {
        ck_assert_str_eq(w, "");
    }
    harness_close(&h);
    elf_object_free(full);
    fixture_out_free(&out);
}

START_TEST(stripped_without_debug_file_is_label_plus_offset)
{
    check_unresolved("buildid/prog_pie", NULL, NULL);
}
END_TEST

START_TEST(build_id_mismatch_is_warned_and_ignored)
{
    check_unresolved("buildid/prog_pie", "baddebug", "does not match");
}
END_TEST

START_TEST(debuglink_to_other_build_is_warned_and_ignored)
{
    check_unresolved("mismatch/prog_pie", NULL, "does not match");
}
END_TEST

static void check_noid(const char *exe, bool resolves)
{
    struct fixture_out out;
    fixture_out_load("prog_noid.out", &out);
    struct harness h;
    harness_open(&h, exe, NULL);
    struct symbol_frame f = lookup1(&h, &out.maps, call_of(&out, "direct"));
    if (resolves) {
        ck_assert_str_eq(f.function, OUTER);
        ck_assert_str_eq(harness_warnings(&h), "");
    } else {
        ck_assert(strncmp(f.function, "prog_noid+0x", 12) == 0);
        ck_assert_int_eq(count_of(harness_warnings(&h), "does not match"), 1);
    }
    harness_close(&h);
    fixture_out_free(&out);
}

START_TEST(debuglink_crc_accepts_the_right_file)
{
    check_noid("noid/prog_noid", true);
}
END_TEST

START_TEST(debuglink_crc_rejects_a_changed_file)
{
    check_noid("noid_bad/prog_noid", false);
}
END_TEST

/* A map list from text (each line a /proc/PID/maps line). */
static void maps_from(struct map_list *maps, const char *text)
{
    struct mp_error err;
    memset(maps, 0, sizeof *maps);
    ck_assert_msg(maps_parse(text, strlen(text), true, maps, &err) == 0, "%s", err.msg);
}

START_TEST(unknown_addresses_never_vanish)
{
    struct map_list maps;
    maps_from(&maps, "10000000-10001000 rw-p 00000000 00:00 0 \n"
                     "7fff0000-7fff2000 r-xp 00000000 00:00 0 [vdso]\n");
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbol_frame f = lookup1(&h, &maps, 0x12345);
    ck_assert_str_eq(f.function, "0x12345");
    ck_assert_ptr_null(f.object);
    ck_assert_str_eq(lookup1(&h, &maps, 0x10000010).function, "0x10000010");
    f = lookup1(&h, &maps, 0x7fff0abc);
    ck_assert_str_eq(f.function, "[vdso]+0xabc");
    ck_assert_str_eq(f.object, "[vdso]");
    ck_assert_str_eq(lookup1(&h, NULL, 0x42).function, "0x42");
    ck_assert_str_eq(harness_warnings(&h), "");
    harness_close(&h);
    maps_free(&maps);
}
END_TEST

/* The mapping marker (synthetic_frames.h) is named, not an address, as
 * the analysis looks it up (at address - 1) and as written, with or
 * without a memory map; the addresses around it are not. */
START_TEST(mapping_marker_is_named)
{
    struct map_list maps;
    maps_from(&maps, "10000000-10001000 rw-p 00000000 00:00 0 \n");
    struct harness h;
    harness_open(&h, NULL, NULL);
    ck_assert_str_eq(lookup1(&h, &maps, PROFILE_FRAME_MAPPING - 1).function,
                     PROFILE_FRAME_MAPPING_NAME);
    ck_assert_str_eq(lookup1(&h, NULL, PROFILE_FRAME_MAPPING).function,
                     PROFILE_FRAME_MAPPING_NAME);
    ck_assert_ptr_null(lookup1(&h, &maps, PROFILE_FRAME_MAPPING).object);
    ck_assert_str_ne(lookup1(&h, &maps, PROFILE_FRAME_MAPPING - 2).function,
                     PROFILE_FRAME_MAPPING_NAME);
    ck_assert_str_ne(lookup1(&h, &maps, PROFILE_FRAME_MAPPING + 1).function,
                     PROFILE_FRAME_MAPPING_NAME);
    ck_assert_str_eq(harness_warnings(&h), "");
    harness_close(&h);
    maps_free(&maps);
}
END_TEST

START_TEST(unreadable_objects_are_warned_once)
{
    char notelf[] = "/tmp/memprof-notelf-XXXXXX";
    int fd = mkstemp(notelf);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "not an ELF\n", 11), 11);
    close(fd);
    char text[512];
    snprintf(text, sizeof text,
             "40000000-40010000 r-xp 00002000 08:01 77 /nonexistent/libgone.so\n"
             "50000000-50001000 r-xp 00000000 08:01 78 %s\n"
             "60000000-60001000 r-xp 00001000 08:01 79 /usr/lib/libold.so (deleted)\n",
             notelf);
    struct map_list maps;
    maps_from(&maps, text);
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbol_frame f = lookup1(&h, &maps, 0x40000100);
    ck_assert_str_eq(f.function, "libgone.so+0x2100"); /* file offset */
    ck_assert_str_eq(f.object, "/nonexistent/libgone.so");
    ck_assert_uint_eq(f.object_offset, 0x2100);
    ck_assert_str_eq(lookup1(&h, &maps, 0x40000200).function, "libgone.so+0x2200");
    ck_assert(strncmp(lookup1(&h, &maps, 0x50000010).function, "memprof-notelf-", 15) == 0);
    lookup1(&h, &maps, 0x50000020);
    ck_assert_str_eq(lookup1(&h, &maps, 0x60000004).function, "libold.so+0x1004");
    lookup1(&h, &maps, 0x60000008);
    const char *w = harness_warnings(&h);
    ck_assert_int_eq(count_of(w, "/nonexistent/libgone.so"), 2); /* path and reason */
    ck_assert_int_eq(count_of(w, "not an ELF file"), 1);
    ck_assert_int_eq(count_of(w, "was deleted"), 1);
    ck_assert_int_eq(count_of(w, "\n"), 3);
    harness_close(&h);
    maps_free(&maps);
    unlink(notelf);
}
END_TEST

/* A synthetic mapping of a system library's code segment at base, so that
 * base + st_value is that symbol at run time. */
static void map_library(struct map_list *maps, const char *path, uint64_t base,
                        struct elf_object **elf)
{
    struct mp_error err;
    *elf = elf_object_open(path, &err);
    ck_assert_msg(*elf != NULL, "%s", err.msg);
    const struct elf_load_segment *text = NULL;
    for (size_t i = 0; i < (*elf)->nloads; i++)
        if ((*elf)->loads[i].flags & PF_X)
            text = &(*elf)->loads[i];
    ck_assert_ptr_nonnull(text);
    uint64_t start = base + (text->vaddr & ~0xfffUL);
    uint64_t end = (base + text->vaddr + text->memsz + 0xfff) & ~0xfffUL;
    char line[512];
    snprintf(line, sizeof line, "%lx-%lx r-xp %08lx 08:01 1234 %s\n", (unsigned long)start,
             (unsigned long)end, (unsigned long)(text->offset & ~0xfffUL), path);
    maps_from(maps, line);
}

static uint64_t symbol_value(const struct elf_object *elf, const char *name)
{
    const struct elf_symbol *sym = elf_object_symbol_named(elf, name);
    ck_assert_msg(sym != NULL, "no %s", name);
    return sym->value;
}

START_TEST(frames_inside_jemalloc_are_allocator)
{
    struct map_list maps;
    struct elf_object *je;
    uint64_t base = 0x7f0000000000;
    map_library(&maps, JEMALLOC, base, &je);
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbol_frame f = lookup1(&h, &maps, base + symbol_value(je, "mallctl") + 4);
    ck_assert_str_eq(f.function, "mallctl");
    ck_assert(f.is_allocator);
    /* Even a function whose name means nothing to the table. */
    f = lookup1(&h, &maps, base + symbol_value(je, "malloc_stats_print") + 4);
    ck_assert_str_eq(f.function, "malloc_stats_print");
    ck_assert(!symbol_is_allocator_name("malloc_stats_print"));
    ck_assert(f.is_allocator);
    harness_close(&h);
    elf_object_free(je);
    maps_free(&maps);
}
END_TEST

START_TEST(operator_new_is_demangled_and_allocator)
{
    struct map_list maps;
    struct elf_object *cxx;
    uint64_t base = 0x7f1000000000;
    map_library(&maps, LIBSTDCXX, base, &cxx);
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbol_frame f = lookup1(&h, &maps, base + symbol_value(cxx, "_Znwm") + 1);
    ck_assert_str_eq(f.function, "operator new(unsigned long)");
    ck_assert(f.is_allocator);
    f = lookup1(&h, &maps, base + symbol_value(cxx, "_ZnamRKSt9nothrow_t") + 1);
    ck_assert_str_eq(f.function, "operator new[](unsigned long, std::nothrow_t const&)");
    ck_assert(f.is_allocator);
    f = lookup1(&h, &maps, base + symbol_value(cxx, "_ZSt9terminatev") + 1);
    ck_assert_str_eq(f.function, "std::terminate()");
    ck_assert(!f.is_allocator);
    harness_close(&h);
    elf_object_free(cxx);
    maps_free(&maps);
}
END_TEST

START_TEST(allocator_names_are_listed_entry_points)
{
    static const char *const yes[] = {
        "malloc", "calloc", "realloc", "free", "posix_memalign", "aligned_alloc",
        "memalign", "valloc", "je_malloc", "_rjem_mallocx", "duckdb_je_rallocx",
        "__libc_malloc", "je_calloc", "je_posix_memalign", "je_aligned_alloc",
        "_rjem_sdallocx", "__minimal_calloc", "__interceptor_malloc", "_Znwm", "_Znam",
        "_ZnwmRKSt9nothrow_t", "_ZnwmSt11align_val_t", "_ZnamSt11align_val_tRKSt9nothrow_t",
        "operator new(unsigned long)", "_ZL7newImplILb0EEPvm",
        "void* newImpl<false>(unsigned long)",
        /* Rust's doors into the allocator (demangled) */
        "__rust_alloc", "__rust_alloc_zeroed", "__rust_realloc", "__rust_dealloc",
        "__rg_alloc", "__rdl_alloc_zeroed", "__rustc::__rust_alloc",
        "<rustprof::Jemalloc as core::alloc::global::GlobalAlloc>::alloc",
        "<std::alloc::System as core::alloc::global::GlobalAlloc>::realloc",
        "<my::A<u8, B<C>> as core::alloc::global::GlobalAlloc>::alloc_zeroed",
        "core::alloc::global::GlobalAlloc::realloc",
        "alloc::alloc::exchange_malloc", "alloc::raw_vec::finish_grow",
        "alloc::raw_vec::finish_grow::<alloc::alloc::Global>",
        "alloc::raw_vec::RawVec<T,A>::reserve_for_push",
        "<alloc::raw_vec::RawVec<u8>>::grow_amortized",
        "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
    };
    static const char *const no[] = {
        "main", "mallctl", "malloc_stats_print", "list_free", "mallocator", "xmalloc",
        "my_arena_alloc", "tcache", "std::vector<int>::push_back", "_ZdlPv",
        "_ZN7fixture14outer_functionEi", "", "reallocate_buffer",
        /* user functions named like the allocator's (issue: never hidden) */
        "path_calloc", "path_realloc", "my_malloc", "my_je_thing", "user_free",
        "pool_mallocx", "myNewImpl",
        /* jemalloc internals: allocator code by where they are, not by name */
        "prof_backtrace_impl", "je_prof_backtrace", "imalloc_body", "je_arena_malloc_hard",
        /* Rust code that merely uses the allocator */
        "alloc::vec::Vec<T,A>::push", "<alloc::vec::Vec<T> as core::clone::Clone>::clone",
        "rustprof::alloc::alloc::mine", "mycrate::f<<X as core::alloc::global::GlobalAlloc>::Y>",
        "<X as core::alloc::global::GlobalAlloc>", "<mycrate::alloc::raw_vec::X>::f",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        ck_assert_msg(symbol_is_allocator_name(yes[i]), "%s should be allocator", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        ck_assert_msg(!symbol_is_allocator_name(no[i]), "%s should not be allocator", no[i]);
}
END_TEST

START_TEST(demangles_cxx_names)
{
    char buf[128];
    ck_assert_str_eq(symbol_demangle(OUTER_MANGLED, buf, sizeof buf), OUTER);
    ck_assert_str_eq(symbol_demangle("_ZNSt6vectorIiSaIiEE9push_backERKi", buf, sizeof buf),
                     "std::vector<int, std::allocator<int> >::push_back(int const&)");
    ck_assert_str_eq(symbol_demangle("plain_c_name", buf, sizeof buf), "plain_c_name");
    ck_assert_str_eq(symbol_demangle("i", buf, sizeof buf), "i"); /* not a type */
    ck_assert_str_eq(symbol_demangle("_Zbroken", buf, sizeof buf), "_Zbroken");
    ck_assert_str_eq(symbol_demangle("_Rbroken", buf, sizeof buf), "_Rbroken");
    ck_assert_str_eq(symbol_demangle(OUTER_MANGLED, buf, 9), "fixture:");
}
END_TEST

/* Names from the Rust test target (tests/targets/rust), as rustc 1.63
 * mangles them, and what rustc-demangle and c++filt print. */
START_TEST(demangles_rust_names)
{
    static const char *const cases[][2] = {
        /* legacy: hash dropped, $LT$/$GT$/$u7b$ decoded, .llvm. suffix gone */
        {"_ZN8rustprof5store13Pool$LT$T$GT$4fill17hc964b446726ebaf9E",
         "rustprof::store::Pool<T>::fill"},
        {"_ZN8rustprof4main28_$u7b$$u7b$closure$u7d$$u7d$17h1b9753a5c5094841E",
         "rustprof::main::{{closure}}"},
        {"_ZN5alloc7raw_vec11finish_grow17h29670bc8d8346527E.llvm.12147610521193969065",
         "alloc::raw_vec::finish_grow"},
        {"_ZN4core3ptr53drop_in_place$LT$rustprof..store..Pool$LT$u32$GT$$GT$17h874ab5a36523c2a5E",
         "core::ptr::drop_in_place<rustprof::store::Pool<u32>>"},
        /* v0: crate disambiguators dropped, generics and closures readable */
        {"_RNvNtCseMjUNRUCjR0_8rustprof5leaky8hold_vec", "rustprof::leaky::hold_vec"},
        {"_RNCNvCs19LtGuXLdb1_8rustprof4main0B3_", "rustprof::main::{closure#0}"},
        {"_RNvXCs4fqI2P2rA04_8rustprofNtB2_8JemallocNtNtNtCsd8Uo1gECpW7_4core5alloc6global11GlobalAlloc5alloc",
         "<rustprof::Jemalloc as core::alloc::global::GlobalAlloc>::alloc"},
    };
    char buf[256];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_str_eq(symbol_demangle(cases[i][0], buf, sizeof buf), cases[i][1]);
}
END_TEST

START_TEST(interned_strings_are_one_pointer)
{
    struct harness h;
    harness_open(&h, NULL, NULL);
    char a[] = "some::name()", b[] = "some::name()";
    const char *x = symbolizer_intern(h.s, a);
    ck_assert_ptr_ne(x, a);
    ck_assert_ptr_eq(symbolizer_intern(h.s, b), x);
    ck_assert_str_eq(x, a);
    ck_assert_ptr_ne(symbolizer_intern(h.s, "some::name(int)"), x);
    /* Names the symbolizer hands out are interned too. */
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct symbol_frame f = lookup1(&h, &out.maps, call_of(&out, "direct"));
    ck_assert_ptr_eq(symbolizer_intern(h.s, OUTER), f.function);
    ck_assert_ptr_eq(symbolizer_intern(h.s, f.object), f.object);
    harness_close(&h);
    fixture_out_free(&out);
}
END_TEST

/* The same maps text with every address moved by delta (another run of the
 * program under ASLR). */
static char *shifted_maps(const struct fixture_out *o, uint64_t delta)
{
    size_t cap = strlen(o->maps_text) * 2 + 1, len = 0;
    char *text = malloc(cap);
    for (size_t i = 0; i < o->maps.n; i++) {
        const struct map_entry *e = &o->maps.v[i];
        len += (size_t)snprintf(text + len, cap - len, "%lx-%lx %c%c%c%c %08lx %02x:%02x %lu %s\n",
                                (unsigned long)(e->start + delta), (unsigned long)(e->end + delta),
                                e->r ? 'r' : '-', e->w ? 'w' : '-', e->x ? 'x' : '-',
                                e->shared ? 's' : 'p', (unsigned long)e->offset, e->dev_major,
                                e->dev_minor, (unsigned long)e->inode, e->path);
    }
    return text;
}

START_TEST(caches_objects_and_addresses)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct harness h;
    harness_open(&h, NULL, NULL);
    struct symbolizer_stats st;
    uint64_t direct = call_of(&out, "direct");
    lookup1(&h, &out.maps, direct);
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.objects_loaded, 1);
    ck_assert_uint_eq(st.address_hits, 0);
    lookup1(&h, &out.maps, direct);
    lookup1(&h, &out.maps, call_of(&out, "inline"));
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.objects_loaded, 1);
    ck_assert_uint_eq(st.address_hits, 1);
    ck_assert_uint_eq(st.lookups, 3);
    /* A second dump of the same process: a new map list, nothing loaded. */
    struct map_list again;
    maps_from(&again, out.maps_text);
    ck_assert_str_eq(lookup1(&h, &again, direct).function, OUTER);
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.objects_loaded, 1);
    ck_assert_uint_eq(st.address_hits, 2);
    /* Another run, moved by ASLR: the old address means nothing there, the
     * moved one is the same function, and the object is not read again. */
    uint64_t delta = 0x10000000;
    char *moved_text = shifted_maps(&out, delta);
    struct map_list moved;
    maps_from(&moved, moved_text);
    ck_assert_str_eq(lookup1(&h, &moved, direct + delta).function, OUTER);
    struct symbol_frame f = lookup1(&h, &moved, direct);
    ck_assert_str_ne(f.function, OUTER);
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.objects_loaded, 1);
    /* And back: the first list still answers correctly. */
    ck_assert_str_eq(lookup1(&h, &out.maps, direct).function, OUTER);
    harness_close(&h);
    maps_free(&again);
    maps_free(&moved);
    free(moved_text);
    fixture_out_free(&out);
}
END_TEST

START_TEST(exe_override_applies_to_main_executable_only)
{
    struct fixture_out out;
    fixture_out_load("prog_pie.out", &out);
    struct harness h;
    /* prog_other is a different build: the main executable's names then
     * come from it (whatever they are), but the library keeps its own. */
    harness_open(&h, "buildid/prog_pie", NULL);
    struct symbolizer_stats st;
    ck_assert_str_eq(lookup1(&h, &out.maps, call_of(&out, "lib")).function, "fixlib_function");
    ck_assert(strncmp(lookup1(&h, &out.maps, call_of(&out, "direct")).function, "prog_pie+0x", 11) == 0);
    symbolizer_get_stats(h.s, &st);
    ck_assert_uint_eq(st.objects_loaded, 2);
    harness_close(&h);
    fixture_out_free(&out);
}
END_TEST


/* A library deleted after it was mapped (an upgrade) is still read, live,
 * through /proc/PID/map_files when the root is /proc/PID/root. */
/* Copy the fixture library to path (made new, or mkstemp'd when it ends
 * in XXXXXX). */
static void copy_fixlib(char *path)
{
    int fd = strstr(path, "XXXXXX") ? mkstemp(path)
                                    : open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    FILE *in = fopen(fixture_path("libfixture.so"), "rb");
    ck_assert_ptr_nonnull(in);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        ck_assert_int_eq(write(fd, buf, n), (ssize_t)n);
    fclose(in);
    close(fd);
}

START_TEST(deleted_library_is_read_through_map_files_when_live)
{
    char copy[] = "/tmp/memprof-fixlib-XXXXXX";
    copy_fixlib(copy);
    void *lib = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    void *fn = dlsym(lib, "fixlib_function");
    ck_assert_ptr_nonnull(fn);
    ck_assert_int_eq(unlink(copy), 0);
    struct map_list maps = {0};
    struct mp_error err;
    ck_assert_msg(maps_read_pid(getpid(), &maps, &err) == 0, "%s", err.msg);
    const struct map_entry *e = maps_find(&maps, (uintptr_t)fn);
    ck_assert_ptr_nonnull(e);
    ck_assert(e->deleted);
    char root[64];
    snprintf(root, sizeof root, "/proc/%d/root", (int)getpid());
    char *text = NULL;
    size_t len = 0;
    FILE *warnings = open_memstream(&text, &len);
    struct symbolizer_options live = {.root = root, .warnings = NULL};
    struct symbolizer_options offline = {.root = NULL, .warnings = warnings};
    struct symbolizer *s = symbolizer_new(&live), *off = symbolizer_new(&offline);
    struct symbol_frame f;
    ck_assert_int_eq(symbolizer_lookup(s, &maps, (uintptr_t)fn + 1, SYMBOLIZE_FUNCTIONS, &f, 1), 1);
    ck_assert_str_eq(f.function, "fixlib_function");
    ck_assert_int_eq(symbolizer_lookup(off, &maps, (uintptr_t)fn + 1, SYMBOLIZE_FUNCTIONS, &f, 1), 1);
    ck_assert_str_ne(f.function, "fixlib_function");
    fflush(warnings);
    ck_assert_ptr_nonnull(strstr(text, "was deleted"));
    symbolizer_free(s);
    symbolizer_free(off);
    fclose(warnings);
    free(text);
    maps_free(&maps);
    dlclose(lib);
}
END_TEST

/* A profile of this process by hand: its maps, and what a dump would
 * record of the library at path (build-id, a run directory's copies). */
static struct profile *self_profile(const char *path, const char *build_id,
                                    const char *kept_dir)
{
    struct profile *p = calloc(1, sizeof *p);
    struct mp_error err;
    ck_assert_ptr_nonnull(p);
    ck_assert_msg(maps_read_pid(getpid(), &p->maps, &err) == 0, "%s", err.msg);
    ck_assert_int_eq(profile_add_object_id(p, path, build_id), 0);
    p->kept_dir = kept_dir ? strdup(kept_dir) : NULL;
    return p;
}

/* The name of the address under profile p, offline, into name; the
 * warnings in *warned (malloc'd). */
static const char *name_offline(const struct profile *p, uint64_t addr, char *name,
                                size_t len, char **warned)
{
    size_t warned_len = 0;
    FILE *w = open_memstream(warned, &warned_len);
    struct symbolizer_options o = {.debug_dir = fixture_path("no-debug-dir"), .warnings = w};
    struct symbolizer *s = symbolizer_new(&o);
    struct symbol_frame f;
    ck_assert_int_eq(symbolizer_lookup_profile(s, p, addr, SYMBOLIZE_FUNCTIONS, &f, 1), 1);
    snprintf(name, len, "%s", f.function);
    symbolizer_free(s);
    fclose(w);
    return name;
}

/* A dump that recorded a library's build-id is never named from a file of
 * another build at its path: the frame is "label+0xOFF" with a warning
 * naming the build-id; the right build is named; and a run directory's
 * kept copy names it when the path no longer holds it. */
START_TEST(only_the_recorded_build_names_frames)
{
    char copy[] = "/tmp/memprof-fixlib-XXXXXX";
    copy_fixlib(copy);
    void *lib = dlopen(copy, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(lib != NULL, "%s", dlerror());
    uint64_t addr = (uintptr_t)dlsym(lib, "fixlib_function") + 1;
    struct mp_error err;
    struct elf_object *elf = elf_object_open(copy, &err);
    ck_assert_msg(elf != NULL, "%s", err.msg);
    char hex[129];
    elf_object_build_id_hex(elf, hex, sizeof hex);
    elf_object_free(elf);
    ck_assert_uint_gt(strlen(hex), 2);
    const char *other = "00112233445566778899aabbccddeeff00112233";

    char *warned = NULL, name[256];
    struct profile *p = self_profile(copy, other, NULL);
    name_offline(p, addr, name, sizeof name, &warned);
    ck_assert_str_ne(name, "fixlib_function");
    ck_assert_ptr_nonnull(strstr(name, "memprof-fixlib-"));
    ck_assert_ptr_nonnull(strstr(name, "+0x"));
    ck_assert_ptr_nonnull(strstr(warned, "the process had build-id 00112233"));
    ck_assert_ptr_nonnull(strstr(warned, "the file there has build-id"));
    free(warned);
    profile_free(p);

    p = self_profile(copy, hex, NULL);
    ck_assert_str_eq(name_offline(p, addr, name, sizeof name, &warned), "fixlib_function");
    ck_assert_str_eq(warned, "");
    free(warned);
    profile_free(p);

    char dir[] = "/tmp/memprof-kept-XXXXXX", sub[128], kept[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(sub, sizeof sub, "%s/.build-id", dir);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(sub, sizeof sub, "%s/.build-id/%.2s", dir, hex);
    ck_assert_int_eq(mkdir(sub, 0700), 0);
    snprintf(kept, sizeof kept, "%s/%s", sub, hex + 2);
    copy_fixlib(kept);
    ck_assert_int_eq(unlink(copy), 0);      /* offline, the path is gone */
    p = self_profile(copy, hex, dir);
    ck_assert_str_eq(name_offline(p, addr, name, sizeof name, &warned), "fixlib_function");
    free(warned);
    profile_free(p);
    unlink(kept);
    rmdir(sub);
    snprintf(sub, sizeof sub, "%s/.build-id", dir);
    rmdir(sub);
    rmdir(dir);
    dlclose(lib);
}
END_TEST

static Suite *symbolize_suite(void)
{
    Suite *s = suite_create("symbolize");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, names_functions_of_pie_and_its_library);
    tcase_add_test(tc, names_functions_of_non_pie);
    tcase_add_test(tc, object_offset_is_link_time_address);
    tcase_add_test(tc, lines_and_inline_chain);
    tcase_add_test(tc, lines_from_separate_debug_file);
    tcase_add_test(tc, lines_from_compressed_debug_file);
    tcase_add_test(tc, spoiled_zlib_header_leaves_symbol_names);
    tcase_add_test(tc, functions_never_load_dwarf);
    tcase_add_test(tc, debuglink_next_to_object);
    tcase_add_test(tc, debuglink_in_dot_debug_subdir);
    tcase_add_test(tc, debuglink_under_debug_dir);
    tcase_add_test(tc, build_id_under_debug_dir);
    tcase_add_test(tc, stripped_without_debug_file_is_label_plus_offset);
    tcase_add_test(tc, build_id_mismatch_is_warned_and_ignored);
    tcase_add_test(tc, debuglink_to_other_build_is_warned_and_ignored);
    tcase_add_test(tc, debuglink_crc_accepts_the_right_file);
    tcase_add_test(tc, debuglink_crc_rejects_a_changed_file);
    tcase_add_test(tc, unknown_addresses_never_vanish);
    tcase_add_test(tc, mapping_marker_is_named);
    tcase_add_test(tc, unreadable_objects_are_warned_once);
    tcase_add_test(tc, deleted_library_is_read_through_map_files_when_live);
    tcase_add_test(tc, frames_inside_jemalloc_are_allocator);
    tcase_add_test(tc, operator_new_is_demangled_and_allocator);
    tcase_add_test(tc, allocator_names_are_listed_entry_points);
    tcase_add_test(tc, demangles_cxx_names);
    tcase_add_test(tc, demangles_rust_names);
    tcase_add_test(tc, interned_strings_are_one_pointer);
    tcase_add_test(tc, caches_objects_and_addresses);
    tcase_add_test(tc, exe_override_applies_to_main_executable_only);
    tcase_add_test(tc, only_the_recorded_build_names_frames);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(symbolize_suite)
