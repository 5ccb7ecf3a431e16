/* fuzz_dwarf_sections.c - libFuzzer harness for how a debug file's
 * compressed DWARF is made readable (lib/symbolize/dwarf_sections.c: the
 * compression headers, zlib and libdeflate streams, unit lengths and
 * abbreviation tables of a file a target's user can write): any bytes, as
 * a file, and units asked for at any offset give readable bytes, -1 or
 * nothing to take over, never a crash, and a lazy section never shows
 * libdw more than its header's size. */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/symbolize/dwarf_sections.h"

/* Every section's data within what its header says. */
static void check(Elf *elf)
{
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED) || sh.sh_type == SHT_NOBITS)
            continue;
        Elf_Data *d = elf_getdata(scn, NULL);
        if (d && d->d_size > sh.sh_size)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0 && (fd = memfd_create("fuzz_dwarf_sections", 0)) < 0)
        abort();
    if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        abort();
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    if (!elf)
        return 0;
    struct dwarf_sections *s = dwarf_sections_prepare(elf);
    if (s) {
        /* Offsets from the input's last bytes, as aranges would give. */
        uint64_t off = 0;
        if (size >= 8)
            memcpy(&off, data + size - 8, 8);
        dwarf_sections_need_unit(s, 0);
        dwarf_sections_need_line(s, 0);
        dwarf_sections_need_unit(s, off & 0xfffff);
        dwarf_sections_need_line(s, off >> 40);
        check(elf);
        dwarf_sections_need_all(s);
        check(elf);
        dwarf_sections_whole(s);
        dwarf_sections_free(s);
    }
    elf_end(elf);
    return 0;
}
