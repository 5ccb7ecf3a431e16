/* unwind_tables.c - an object's .eh_frame_hdr read from the live process
 * (unwind_tables.h).  The header is what the loader mapped, whatever path
 * the process reached the file by; libunwind then searches its table and
 * reads the FDEs through the checker's own memory accessor. */
#include "attach/unwind_tables.h"

#include <string.h>

/* DWARF pointer encodings (LSB 3.0, .eh_frame_hdr). */
#define PE_OMIT 0xff
#define PE_UDATA4 0x03
#define PE_SDATA4 0x0b
#define PE_FORMAT 0x0f
#define PE_DATAREL 0x30
#define HEADER_MIN 12   /* version, 3 encodings, eh_frame_ptr, fde_count */
/* A count beyond this is not an object's (libc has about 3,000 FDEs). */
#define MAX_ENTRIES (1u << 24)

int unwind_table_parse_header(const unsigned char *hdr, size_t len, size_t *table_off,
                              uint64_t *count)
{
    if (len < HEADER_MIN || hdr[0] != 1)
        return -1;
    unsigned ptr_enc = hdr[1], count_enc = hdr[2], table_enc = hdr[3];
    /* eh_frame_ptr: 4 bytes as every linker writes it (pcrel or datarel). */
    if (ptr_enc == PE_OMIT || ((ptr_enc & PE_FORMAT) != PE_SDATA4 &&
                               (ptr_enc & PE_FORMAT) != PE_UDATA4))
        return -1;
    if (count_enc != PE_UDATA4 || table_enc != (PE_DATAREL | PE_SDATA4))
        return -1;
    uint32_t n;
    memcpy(&n, hdr + 8, sizeof n);
    if (n == 0 || n > MAX_ENTRIES)
        return -1;
    *table_off = HEADER_MIN;
    *count = n;
    return 0;
}

static int read_bytes(struct unwind_memory *mem, uint64_t addr, unsigned char *buf,
                      size_t len)
{
    uint64_t first = addr & ~(uint64_t)7;
    for (uint64_t w = first; w < addr + len; w += 8) {
        uint64_t v;
        if (unwind_memory_word(mem, w, &v) < 0)
            return -1;
        for (unsigned b = 0; b < 8; b++)
            if (w + b >= addr && w + b < addr + len)
                buf[w + b - addr] = (unsigned char)(v >> (8 * b));
    }
    return 0;
}

int unwind_table_find(struct unwind_memory *mem, const struct mapped_object *o,
                      unw_dyn_info_t *di)
{
    const struct elf_object *e = o->elf;
    if (!e || !e->eh_frame_hdr_size || o->text_start >= o->text_end)
        return -1;
    uint64_t hdr_addr = e->eh_frame_hdr_vaddr + o->bias;
    unsigned char hdr[HEADER_MIN];
    size_t table_off;
    uint64_t count;
    if (read_bytes(mem, hdr_addr, hdr, sizeof hdr) < 0 ||
        unwind_table_parse_header(hdr, sizeof hdr, &table_off, &count) < 0 ||
        table_off + count * 8 > e->eh_frame_hdr_size)
        return -1;
    memset(di, 0, sizeof *di);
    di->start_ip = o->text_start;
    di->end_ip = o->text_end;
    di->format = UNW_INFO_FORMAT_REMOTE_TABLE;
    di->u.rti.segbase = hdr_addr;       /* datarel entries count from the header */
    di->u.rti.table_data = hdr_addr + table_off;
    /* Two 4-byte fields an entry, counted in words as libunwind wants. */
    di->u.rti.table_len = count * 8 / sizeof(unw_word_t);
    return 0;
}
