/* elf_object.h - one ELF file's symbols, program headers and identity.
 *
 * Shared by the live attach (finding mallctl in the target) and by the
 * symbolizer (naming frames in a dump).  Reads .symtab and .dynsym with
 * libelf; keeps everything it needs and closes the file. */
#ifndef MEMPROF_ELF_OBJECT_H
#define MEMPROF_ELF_OBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/base/error.h"

struct elf_symbol {
    uint64_t value;        /* st_value: link-time address */
    uint64_t size;
    const char *name;      /* points into the object's string storage */
    unsigned char type;    /* STT_* */
    unsigned char bind;    /* STB_* */
    bool defined;          /* st_shndx != SHN_UNDEF */
    bool dynamic;          /* from .dynsym (else .symtab) */
};

struct elf_load_segment {
    uint64_t vaddr, memsz, offset, filesz;
    uint32_t flags;        /* PF_R | PF_W | PF_X */
};

struct elf_object {
    char *path;
    int elf_class;         /* ELFCLASS64 or ELFCLASS32 */
    int machine;           /* EM_* */
    int type;              /* ET_EXEC, ET_DYN, ... */
    uint64_t entry;        /* e_entry (link-time) */
    uint8_t build_id[64];
    size_t build_id_len;   /* 0: none */
    char *debuglink;       /* .gnu_debuglink file name, or NULL */
    uint32_t debuglink_crc;

    struct elf_load_segment *loads;
    size_t nloads;
    /* PT_GNU_EH_FRAME (the unwind tables' index) and PT_GNU_RELRO (what
     * the loader writes, then makes read-only), size 0 when absent; and
     * whether the loader may write into read-only segments (DT_TEXTREL,
     * DF_TEXTREL; also true when a PT_DYNAMIC cannot be read to tell). */
    uint64_t eh_frame_hdr_vaddr, eh_frame_hdr_size;
    uint64_t relro_vaddr, relro_size;
    bool textrel;

    /* Defined and undefined symbols of both tables, sorted by value.
     * Names live in one block owned by the object. */
    struct elf_symbol *syms;
    size_t nsyms;
    char *strings;
    bool has_symtab;       /* .symtab present (not stripped) */
    bool has_debug_info;   /* .debug_info with contents (DWARF is here) */
};

/* Open and read an ELF file.  Returns NULL with err set ("not an ELF file",
 * "cannot open ...: <errno>" ...). */
struct elf_object *elf_object_open(const char *path, struct mp_error *err);

/* The same from an open descriptor (not closed); path is for messages. */
struct elf_object *elf_object_open_fd(int fd, const char *path, struct mp_error *err);

void elf_object_free(struct elf_object *obj);

/* Load bias for a mapping of this object that starts at map_start and maps
 * file offset map_offset: bias = map_start - map_offset - (p_vaddr - p_offset)
 * of the PT_LOAD starting on map_offset's page, else the one covering it;
 * 0 for ET_EXEC.  Returns 0, or -1 when
 * no PT_LOAD covers the offset. */
int elf_object_bias(const struct elf_object *obj, uint64_t map_start,
                    uint64_t map_offset, uint64_t *bias);

/* The defined function (or object) symbol containing link-time address
 * vaddr, or NULL.  Symbols of size 0 match only their exact address... or,
 * failing any sized match, the nearest preceding function symbol. */
const struct elf_symbol *elf_object_symbol_at(const struct elf_object *obj,
                                              uint64_t vaddr);

/* A defined symbol by exact name (either table), or NULL. */
const struct elf_symbol *elf_object_symbol_named(const struct elf_object *obj,
                                                 const char *name);

/* Whether obj has code of its own that a call stack could pass through:
 * false for an object with no executable segment, or whose executable
 * bytes are only the C runtime's init/fini stubs every shared object
 * carries (a data-only library, as ICU's libicudata: no function symbol
 * besides those stubs, and a few hundred executable bytes). */
bool elf_object_has_own_code(const struct elf_object *obj);

/* Only the GNU build-id of an open ELF file (not closed), without reading
 * its symbols.  Returns 0 (*len 0 when it has none) or -1 when fd is not
 * an ELF file. */
int elf_object_read_build_id(int fd, uint8_t *out, size_t cap, size_t *len);

/* Hex build-id into buf (2*len+1 bytes), "" when none. */
void elf_object_build_id_hex(const struct elf_object *obj, char *buf, size_t buflen);

#endif
