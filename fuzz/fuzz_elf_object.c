/* fuzz_elf_object.c - libFuzzer harness for the ELF reader the symbolizer
 * and the attach both use (any file a target's user can write may be read
 * by a root memprof): any bytes, as a file, give an object or an error,
 * never a crash; an object's symbols are sorted by value, each name is
 * non-empty and holds no '@', and a lookup at any symbol's address answers
 * a symbol at or below it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/elf/elf_object.h"

static void check(const struct elf_object *o)
{
    for (size_t i = 0; i < o->nsyms; i++) {
        const struct elf_symbol *s = &o->syms[i];
        if (i && o->syms[i - 1].value > s->value)
            abort();
        if (!s->name || !s->name[0] || strchr(s->name, '@'))
            abort();
        const struct elf_symbol *at = elf_object_symbol_at(o, s->value);
        if (at && at->value > s->value)
            abort();
    }
    (void)elf_object_has_own_code(o);
    uint64_t bias;
    for (size_t i = 0; i < o->nloads; i++)
        (void)elf_object_bias(o, 0x7f0000000000 + o->loads[i].offset, o->loads[i].offset, &bias);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz_elf_object", 0)) < 0)
        abort();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    struct mp_error err;
    struct elf_object *o = elf_object_open_fd(fd, "fuzz", &err);
    if (o) {
        check(o);
        elf_object_free(o);
    }
    return 0;
}
