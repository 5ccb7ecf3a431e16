/* test_cfi_rows.c - unwind rows made from .eh_frame walk this very
 * process's stack exactly as libgcc's unwinder does: through a chain of
 * -O2 -fomit-frame-pointer functions (libcfichain.so), a frame whose CFA
 * is found from %rbp, and libc calling back into the chain.  And
 * the table's shape, and files that are not what they should be. */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>
#include <unwind.h>

#include "lib/elf/cfi_rows.h"
#include "tests/unit/fixtures/fixture_out.h"
#include "tests/unit/unit.h"

#define MAX_FRAMES 128
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

/* ---- rows for every object of this process ----------------------------- */

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct cfi_rows *rows = arg;
    const char *path = info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return 0;                 /* the vDSO: no file */
    struct mp_error err;
    int rc = cfi_rows_add_elf(rows, fd, path, info->dlpi_addr, &err);
    close(fd);
    ck_assert_msg(rc == 0, "%s", err.msg);
    return 0;
}

static void rows_of_process(struct cfi_rows *rows)
{
    dl_iterate_phdr(add_object, rows);
    cfi_rows_finish(rows);
}

/* ---- the two walks ------------------------------------------------------ */

#if defined(__x86_64__)
/* Where a walk starts: the caller's registers as they are when this call
 * returns (pc the return address, sp just above it, fp untouched). */
struct walk_regs {
    uint64_t pc, sp, fp;
};
void cfi_test_regs_here(struct walk_regs *r);
__asm__(".text\n"
        ".type cfi_test_regs_here, @function\n"
        "cfi_test_regs_here:\n"
        "  .cfi_startproc\n"
        "  movq (%rsp), %rax\n"
        "  movq %rax, 0(%rdi)\n"
        "  leaq 8(%rsp), %rax\n"
        "  movq %rax, 8(%rdi)\n"
        "  movq %rbp, 16(%rdi)\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size cfi_test_regs_here, .-cfi_test_regs_here\n");
#endif

/* A word of this process's memory, or -1 where none is mapped (a wrong
 * row must fail the test, not crash it). */
static int read_word(uint64_t addr, uint64_t *v)
{
    struct iovec local = { v, sizeof *v }, remote = { (void *)(uintptr_t)addr, sizeof *v };
    return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == sizeof *v ? 0 : -1;
}

typedef _Unwind_Reason_Code unwind_backtrace_fn(_Unwind_Trace_Fn, void *);
typedef _Unwind_Ptr unwind_get_ip_fn(struct _Unwind_Context *);

/* What the capture in the chain records. */
struct capture {
    const struct cfi_rows *rows;
    unwind_backtrace_fn *backtrace;  /* libgcc_s's, not libunwind's (linked too) */
    unwind_get_ip_fn *get_ip;
    uint64_t unwound[MAX_FRAMES], walked[MAX_FRAMES];
    size_t n_unwound, n_walked;
};

static _Unwind_Reason_Code collect_ip(struct _Unwind_Context *ctx, void *arg)
{
    struct capture *c = arg;
    if (c->n_unwound == MAX_FRAMES)
        return _URC_END_OF_STACK;
    c->unwound[c->n_unwound++] = c->get_ip(ctx);
    return _URC_NO_REASON;
}

/* The walk the sampler makes: rows looked up at each return address minus
 * one, as libgcc does; stops at a NONE row, no row, or a return address 0. */
static size_t walk_rows(const struct cfi_rows *rows, uint64_t pc, uint64_t sp, uint64_t fp,
                        uint64_t *out, size_t max)
{
    size_t n = 0;
    while (n < max) {
        out[n++] = pc;
        const struct cfi_row *row = cfi_rows_find(rows, pc - 1);
        if (!row || row->cfa_reg == CFI_CFA_NONE)
            break;
        uint64_t cfa = (row->cfa_reg == CFI_CFA_SP ? sp : fp) + (int64_t)row->cfa_off;
        if (read_word(cfa + (int64_t)row->ra_off, &pc) < 0 || pc == 0)
            break;
        if (row->fp_off && read_word(cfa + (int64_t)row->fp_off, &fp) < 0)
            break;
        sp = cfa;
    }
    return n;
}

/* Called from inside the chain, below libc: both walks from here.  Their
 * first addresses are two call sites in this function; the callers' must
 * be the same. */
__attribute__((noinline)) static void capture_both(void *arg)
{
    struct capture *c = arg;
    c->backtrace(collect_ip, c);
#if defined(__x86_64__)
    struct walk_regs r;
    cfi_test_regs_here(&r);
    c->n_walked = walk_rows(c->rows, r.pc, r.sp, r.fp, c->walked, MAX_FRAMES);
#endif
    /* libgcc ends with the address 0 after the outermost frame (_start's
     * return address is undefined); glibc's backtrace() drops it too. */
    if (c->n_unwound > 1 && c->unwound[c->n_unwound - 1] == 0)
        c->n_unwound--;
}

static const char *name_at(uint64_t addr, const char **object)
{
    Dl_info info;
    if (!dladdr((void *)(uintptr_t)addr, &info)) {
        *object = "?";
        return "?";
    }
    *object = info.dli_fname ? info.dli_fname : "?";
    return info.dli_sname ? info.dli_sname : "?";
}

/* The frames of the chain, in order from the innermost (others may come
 * between: qsort's), with libc's lfind between the match and the
 * comparison; the VLA's row finds its CFA from %rbp. */
static void check_chain_frames(const struct capture *c)
{
    static const char *const chain[] = { "cfi_chain_match", "lfind (libc)",
        "cfi_chain_compare", "cfi_chain_sort", "cfi_chain_saver", "cfi_chain_vla", "cfi_chain_big",
        "cfi_chain_run" };
    size_t next = 0;
    for (size_t i = 1; i < c->n_walked && next < sizeof chain / sizeof chain[0]; i++) {
        const char *object, *name = name_at(c->walked[i], &object);
        bool in_libc = strstr(object, "libc.so") != NULL;
        if (strcmp(chain[next], "lfind (libc)") == 0 ? in_libc : strcmp(name, chain[next]) == 0)
            next++;
        if (strcmp(name, "cfi_chain_vla") == 0)
            ck_assert_int_eq(cfi_rows_find(c->rows, c->walked[i] - 1)->cfa_reg, CFI_CFA_FP);
    }
    ck_assert_msg(next == sizeof chain / sizeof chain[0], "the walk never reached %s",
                  chain[next < sizeof chain / sizeof chain[0] ? next : 0]);
}

START_TEST(rows_walk_the_stack_as_libgcc_does)
{
#if !defined(__x86_64__)
    return;                       /* the starting registers are taken in x86_64 asm */
#endif
    void *gcc_s = dlopen("libgcc_s.so.1", RTLD_NOW);
    void *chain = dlopen(fixture_path("libcfichain.so"), RTLD_NOW);
    ck_assert_msg(gcc_s && chain, "%s", dlerror());
    static struct capture c;
    c.backtrace = (unwind_backtrace_fn *)dlsym(gcc_s, "_Unwind_Backtrace");
    c.get_ip = (unwind_get_ip_fn *)dlsym(gcc_s, "_Unwind_GetIP");
    int (*run)(void (*)(void *), void *, int) =
        (int (*)(void (*)(void *), void *, int))dlsym(chain, "cfi_chain_run");
    ck_assert(c.backtrace && c.get_ip && run);

    struct cfi_rows rows = {0};
    rows_of_process(&rows);
    c.rows = &rows;
    run(capture_both, &c, 7);

    check_chain_frames(&c);
    for (size_t i = 1; i < c.n_unwound || i < c.n_walked; i++) {
        const char *obj_u, *obj_w;
        const char *name_u = i < c.n_unwound ? name_at(c.unwound[i], &obj_u) : "(end)";
        const char *name_w = i < c.n_walked ? name_at(c.walked[i], &obj_w) : "(end)";
        ck_assert_msg(i < c.n_unwound && i < c.n_walked && c.unwound[i] == c.walked[i],
                      "frame %zu: libgcc %#lx %s, rows %#lx %s", i,
                      i < c.n_unwound ? (unsigned long)c.unwound[i] : 0UL, name_u,
                      i < c.n_walked ? (unsigned long)c.walked[i] : 0UL, name_w);
    }
    cfi_rows_free(&rows);
}
END_TEST

/* ---- the table ---------------------------------------------------------- */

static void add_file(struct cfi_rows *rows, const char *path, uint64_t bias)
{
    struct mp_error err;
    int fd = open(path, O_RDONLY);
    ck_assert_msg(fd >= 0, "cannot open %s", path);
    ck_assert_msg(cfi_rows_add_elf(rows, fd, path, bias, &err) == 0, "%s", err.msg);
    close(fd);
}

START_TEST(finished_rows_are_strictly_increasing_and_end_each_object)
{
    struct cfi_rows rows = {0};
    /* two objects far apart, added out of order */
    add_file(&rows, LIBC, UINT64_C(0x7f0000000000));
    size_t libc_rows = rows.n;
    add_file(&rows, fixture_path("libcfichain.so"), UINT64_C(0x100000));
    ck_assert_uint_gt(libc_rows, 1000);
    ck_assert_uint_gt(rows.n, libc_rows);
    /* each object's rows end with a NONE row */
    ck_assert_int_eq(rows.v[libc_rows - 1].cfa_reg, CFI_CFA_NONE);
    ck_assert_int_eq(rows.v[rows.n - 1].cfa_reg, CFI_CFA_NONE);
    cfi_rows_finish(&rows);
    for (size_t i = 1; i < rows.n; i++) {
        ck_assert_msg(rows.v[i - 1].pc < rows.v[i].pc, "rows %zu and %zu out of order", i - 1, i);
        const struct cfi_row *a = &rows.v[i - 1], *b = &rows.v[i];
        ck_assert_msg(a->cfa_reg != b->cfa_reg || a->cfa_off != b->cfa_off ||
                      a->fp_off != b->fp_off || a->ra_off != b->ra_off,
                      "rows %zu and %zu say the same", i - 1, i);
    }
    /* below the first row nothing; between the objects a NONE row */
    ck_assert_ptr_null(cfi_rows_find(&rows, rows.v[0].pc - 1));
    ck_assert_ptr_eq(cfi_rows_find(&rows, rows.v[0].pc), &rows.v[0]);
    const struct cfi_row *gap = cfi_rows_find(&rows, UINT64_C(0x7e0000000000));
    ck_assert_ptr_nonnull(gap);
    ck_assert_int_eq(gap->cfa_reg, CFI_CFA_NONE);
    cfi_rows_free(&rows);
}
END_TEST

/* At equal pcs the first row added wins, except over a NONE row. */
START_TEST(finish_keeps_the_first_row_at_a_pc)
{
    struct cfi_rows rows = {0};
    struct cfi_row v[] = {
        { .pc = 0x200, .cfa_reg = CFI_CFA_SP, .cfa_off = 16, .ra_off = -8 },
        { .pc = 0x100, .cfa_reg = CFI_CFA_SP, .cfa_off = 8, .ra_off = -8 },
        { .pc = 0x200, .cfa_reg = CFI_CFA_FP, .cfa_off = 16, .ra_off = -8 },
        { .pc = 0x300, .cfa_reg = CFI_CFA_NONE, .cfa_off = 5 },
        { .pc = 0x300, .cfa_reg = CFI_CFA_SP, .cfa_off = 32, .ra_off = -8 },
        { .pc = 0x180, .cfa_reg = CFI_CFA_SP, .cfa_off = 8, .ra_off = -8 },  /* same as 0x100 */
        { .pc = 0x400, .cfa_reg = CFI_CFA_NONE, .cfa_off = 1 },
        { .pc = 0x500, .cfa_reg = CFI_CFA_NONE, .cfa_off = 2 },              /* same as 0x400 */
    };
    rows.v = malloc(sizeof v);
    memcpy(rows.v, v, sizeof v);
    rows.n = rows.cap = sizeof v / sizeof v[0];
    cfi_rows_finish(&rows);
    ck_assert_uint_eq(rows.n, 4);
    ck_assert_uint_eq(rows.v[0].pc, 0x100);
    ck_assert_uint_eq(rows.v[1].pc, 0x200);
    ck_assert_int_eq(rows.v[1].cfa_reg, CFI_CFA_SP);
    ck_assert_uint_eq(rows.v[2].pc, 0x300);
    ck_assert_int_eq(rows.v[2].cfa_off, 32);
    ck_assert_uint_eq(rows.v[3].pc, 0x400);
    ck_assert_int_eq(rows.v[3].cfa_off, 0);
    ck_assert_ptr_eq(cfi_rows_find(&rows, 0x1ff), &rows.v[0]);
    ck_assert_ptr_eq(cfi_rows_find(&rows, 0x7777), &rows.v[3]);
    cfi_rows_free(&rows);
    ck_assert_ptr_null(rows.v);
}
END_TEST

/* ---- files that are not what they should be ---------------------------- */

/* A memfd holding the first len bytes of path (all of it when len is 0),
 * with the 16-bit word at patch_off set to patch when patch_off is not 0. */
static int copy_of(const char *path, size_t len, size_t patch_off, uint16_t patch)
{
    int in = open(path, O_RDONLY), out = memfd_create("cfi_rows", 0);
    ck_assert_int_ge(in, 0);
    ck_assert_int_ge(out, 0);
    char buf[65536];
    ssize_t got;
    size_t done = 0;
    while ((len == 0 || done < len) &&
           (got = read(in, buf, len && len - done < sizeof buf ? len - done : sizeof buf)) > 0) {
        ck_assert_int_eq(write(out, buf, (size_t)got), got);
        done += (size_t)got;
    }
    close(in);
    if (patch_off)
        ck_assert_int_eq(pwrite(out, &patch, sizeof patch, (off_t)patch_off), sizeof patch);
    return out;
}

static void expect_error(int fd, const char *what)
{
    struct cfi_rows rows = {0};
    struct mp_error err = {.msg = ""};
    ck_assert_int_eq(cfi_rows_add_elf(&rows, fd, "the-file", 0, &err), -1);
    ck_assert_msg(strstr(err.msg, what) && strstr(err.msg, "the-file"), "message: %s", err.msg);
    ck_assert_uint_eq(rows.n, 0);
    close(fd);
    cfi_rows_free(&rows);
}

START_TEST(files_that_are_not_whole_elf_objects_are_errors)
{
    expect_error(open(fixture_path("prog_pie.out"), O_RDONLY), "not an ELF file");
    expect_error(copy_of(LIBC, 65536, 0, 0), "truncated");
    expect_error(copy_of(LIBC, 0, offsetof(Elf64_Ehdr, e_machine), EM_386), "x86_64 and aarch64");
    expect_error(copy_of(LIBC, 0, offsetof(Elf64_Ehdr, e_type), ET_REL), "not an executable");
}
END_TEST

START_TEST(object_without_eh_frame_gives_no_rows)
{
    struct cfi_rows rows = {0};
    add_file(&rows, fixture_path("libnocfi.so"), 0x1000);
    ck_assert_uint_eq(rows.n, 0);
    cfi_rows_free(&rows);
}
END_TEST

static Suite *cfi_rows_suite(void)
{
    Suite *s = suite_create("cfi_rows");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, rows_walk_the_stack_as_libgcc_does);
    tcase_add_test(tc, finished_rows_are_strictly_increasing_and_end_each_object);
    tcase_add_test(tc, finish_keeps_the_first_row_at_a_pc);
    tcase_add_test(tc, files_that_are_not_whole_elf_objects_are_errors);
    tcase_add_test(tc, object_without_eh_frame_gives_no_rows);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(cfi_rows_suite)
