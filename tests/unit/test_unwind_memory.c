/* test_unwind_memory.c - the unwinder's page cache, on this very process:
 * words read through it are the memory's, and a change of the read-only
 * file mappings (an object mapped in, or unmapped) is noticed, so no
 * stale code page is served after it; file windows serve a file's bytes
 * only while its very mapping stays. */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attach/unwind_memory.h"
#include "tests/unit/unit.h"

static struct mp_error err;

START_TEST(reads_words_and_notices_code_mappings)
{
    struct unwind_memory *m = unwind_memory_new(getpid(), &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    /* a code word of this program (a kept page) and a stack word */
    uint64_t want, got;
    memcpy(&want, (const void *)(uintptr_t)&unwind_memory_new, sizeof want);
    ck_assert_int_eq(unwind_memory_word(m, (uint64_t)(uintptr_t)&unwind_memory_new, &got), 0);
    ck_assert_uint_eq(got, want);
    volatile uint64_t on_stack = 0x1122334455667788u;
    ck_assert_int_eq(unwind_memory_word(m, (uint64_t)(uintptr_t)&on_stack, &got), 0);
    ck_assert_uint_eq(got, 0x1122334455667788u);
    ck_assert_int_eq(unwind_memory_recheck(m), 0);           /* nothing changed */

    /* a read-only file mapping appears, then goes: both noticed */
    int fd = open("/proc/self/exe", O_RDONLY);
    ck_assert_int_ge(fd, 0);
    void *p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    ck_assert_ptr_ne(p, MAP_FAILED);
    ck_assert_int_eq(unwind_memory_recheck(m), 1);
    ck_assert_int_eq(unwind_memory_recheck(m), 0);
    ck_assert_int_eq(unwind_memory_word(m, (uint64_t)(uintptr_t)p, &got), 0);
    ck_assert_uint_eq(got & 0xffffffffu, 0x464c457fu);      /* "\x7fELF" */
    /* another file mapped over it: the cached page must not be served */
    char path[] = "/tmp/test_unwind_memory.XXXXXX";
    int other = mkstemp(path);
    ck_assert_int_ge(other, 0);
    uint64_t mark = 0x6b72616d2d6f6e2eu;
    ck_assert_int_eq(ftruncate(other, 4096), 0);
    ck_assert_int_eq(pwrite(other, &mark, sizeof mark, 0), (ssize_t)sizeof mark);
    ck_assert_ptr_eq(mmap(p, 4096, PROT_READ, MAP_PRIVATE | MAP_FIXED, other, 0), p);
    close(other);
    unlink(path);
    ck_assert_int_eq(unwind_memory_recheck(m), 1);
    ck_assert_int_eq(unwind_memory_word(m, (uint64_t)(uintptr_t)p, &got), 0);
    ck_assert_uint_eq(got, mark);
    munmap(p, 4096);
    ck_assert_int_eq(unwind_memory_recheck(m), 1);
    ck_assert_int_eq(unwind_memory_word(m, (uint64_t)(uintptr_t)p, &got), -1);

    /* anonymous memory coming and going is not code: no change */
    void *anon = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(anon, MAP_FAILED);
    ck_assert_int_eq(unwind_memory_recheck(m), 0);
    munmap(anon, 1 << 20);
    unwind_memory_free(m);
}
END_TEST

/* A file window serves the file's bytes only for the very mapping it was
 * added for: refused for a writable mapping or a wrong offset, and
 * dropped once the mapping changes (unmapped, another file in its place),
 * never serving stale bytes. */
START_TEST(file_windows_are_keyed_to_their_mapping)
{
    char path[] = "/tmp/test_unwind_window.XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    unlink(path);
    uint64_t words[512];
    for (size_t i = 0; i < 512; i++)
        words[i] = 0x5757000000000000u | i;
    ck_assert_int_eq(pwrite(fd, words, sizeof words, 4096), (ssize_t)sizeof words);
    uint8_t *p = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE, fd, 0);
    ck_assert_ptr_ne(p, MAP_FAILED);
    struct unwind_memory *m = unwind_memory_new(getpid(), &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    uint64_t at = (uint64_t)(uintptr_t)p + 4096, got;
    ck_assert_int_eq(unwind_memory_add_file(m, at, at + 4096, fd, 0), -1);   /* wrong offset */
    ck_assert_int_eq(unwind_memory_add_file(m, at, at + 8192, fd, 4096), -1); /* past the mapping */
    ck_assert_int_eq(unwind_memory_add_file(m, at, at + 4096, fd, 4096), 0);
    ck_assert_int_eq(unwind_memory_word(m, at + 8 * 7, &got), 0);
    ck_assert_uint_eq(got, words[7]);
    ck_assert_int_eq(unwind_memory_word(m, at + 4096 - 8, &got), 0);
    ck_assert_uint_eq(got, words[511]);

    /* the mapping goes, anonymous memory takes its place: the window is dropped */
    ck_assert_ptr_eq(mmap(p, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                          -1, 0), p);
    memset(p, 0x11, 8192);
    ck_assert_int_eq(unwind_memory_recheck(m), 1);
    ck_assert_int_eq(unwind_memory_word(m, at + 8 * 7, &got), 0);
    ck_assert_uint_eq(got, 0x1111111111111111u);
    /* a writable mapping of the file is no window */
    ck_assert_ptr_eq(mmap(p, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0), p);
    ck_assert_int_eq(unwind_memory_recheck(m), 1);
    ck_assert_int_eq(unwind_memory_add_file(m, at, at + 4096, fd, 4096), -1);
    munmap(p, 8192);
    close(fd);
    unwind_memory_free(m);
}
END_TEST

static Suite *unwind_memory_suite(void)
{
    Suite *s = suite_create("unwind_memory");
    TCase *tc = tcase_create("cache");
    tcase_add_test(tc, reads_words_and_notices_code_mappings);
    tcase_add_test(tc, file_windows_are_keyed_to_their_mapping);
    suite_add_tcase(s, tc);
    return s;
}

UNIT_MAIN(unwind_memory_suite)
