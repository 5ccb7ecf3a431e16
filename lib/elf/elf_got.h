/* elf_got.h - the call-table (GOT) slots through which an ELF object calls
 * functions other objects define: the relocations the dynamic loader fills
 * with a function's address (JUMP_SLOT for calls through the PLT,
 * GLOB_DAT for calls without it and for addresses taken), read from the
 * object's file.  The file is untrusted input: any file gives an answer or
 * an error, never a crash. */
#ifndef MEMPROF_ELF_GOT_H
#define MEMPROF_ELF_GOT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"

struct elf_got_slot {
    uint64_t addr;         /* link-time address of the slot (add the load bias) */
    unsigned name;         /* index into the names asked for */
};

struct elf_got_slots {
    struct elf_got_slot *v;
    size_t n, cap;
};

/* Append to out the slots of the ELF file open on fd (not closed; path for
 * messages) that the loader fills with one of names[0..nnames).  0 (an
 * object without such slots adds none), or -1 with err. */
int elf_got_slots_read(int fd, const char *path, const char *const *names, size_t nnames,
                       struct elf_got_slots *out, struct mp_error *err);
void elf_got_slots_free(struct elf_got_slots *s);

#endif
