/* cfi_rows.c - builds unwind rows from an ELF file's .eh_frame: every FDE
 * is found by reading the section entry by entry (dwarf_next_cfi), then
 * libdw's CFI interpreter (dwarf_cfi_addrframe) gives the rules of each
 * stretch where they stay the same; each stretch becomes one row, or a
 * NONE row when its rules are more than a row can say.
 *
 * Which FDE covers an address follows libgcc's lookup through
 * .eh_frame_hdr: the one with the greatest start at or below it, and none
 * when that one ends before it.  The file is untrusted: every read is
 * bounded by the data it reads from, and libdw's work on each FDE by a
 * budget proportional to the FDE's size. */
#include "lib/elf/cfi_rows.h"
#include "lib/base/array.h"

#include <dwarf.h>
#include <elf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* DWARF register numbers of the machines rows are made for. */
struct cfi_machine {
    int machine;      /* EM_* */
    int sp, fp, ra;
};

static const struct cfi_machine machines[] = {
    { EM_X86_64, 7, 6, 16 },      /* rsp, rbp, return address column */
    { EM_AARCH64, 31, 29, 30 },   /* sp, x29, x30 (lr) */
};

/* libdw runs an FDE's program from its start for each row it is asked
 * for, so an FDE of L bytes with R rows costs about R * L: quadratic in
 * the size of one function's FDE.  Each FDE may cost WORK_PER_BYTE * L +
 * WORK_PER_FDE; past that the rest of its code gets a NONE row.  A file
 * then costs at most about 620 times its .eh_frame's size (the worst is
 * FDEs of ~620 bytes, each with as many rows as bytes).  Of the ~3.5
 * million FDEs under one Debian 12's /usr/bin and /usr/lib (gcc, LLVM 14
 * and 15, rustc; measured when this was written) about 400 are cut, all
 * in generated giants such as lto-dump's recognizers. */
#define WORK_PER_BYTE 512u
#define WORK_PER_FDE  (UINT64_C(1) << 16)

/* One FDE: the code it covers (link-time) and its size in .eh_frame. */
struct fde_span {
    uint64_t start, end;
    uint64_t len;
    size_t order;     /* position in .eh_frame: the first of equal starts wins */
};

struct fde_list {
    struct fde_span *v;
    size_t n, cap;
};

/* A CIE's offset in .eh_frame and the encoding of its FDEs' addresses. */
struct cie_enc {
    uint64_t off;
    uint8_t enc;
    bool aug_data;             /* "z": its FDEs carry augmentation data */
};

struct cie_list {
    struct cie_enc *v;
    size_t n, cap;
};

struct exec_seg {
    uint64_t start, end;
};

/* Everything one object's build uses. */
struct build {
    const char *path;
    const struct cfi_machine *m;
    Elf *elf;
    Elf_Data *eh;             /* .eh_frame's bytes */
    uint64_t eh_vaddr;        /* and its link-time address */
    struct exec_seg segs[16];
    size_t nsegs;
    struct fde_list fdes;
    Dwarf_CFI *cfi;
    uint64_t bias;
    struct cfi_rows *out;
};

/* ---- encoded pointers (DW_EH_PE_*) ------------------------------------- */

static int read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    for (unsigned shift = 0; *p < end; shift += 7) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = r;
            return 0;
        }
    }
    return -1;
}

static int read_sleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    while (*p < end) {
        uint8_t b = *(*p)++;
        if (shift < 64)
            r |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
        if (!(b & 0x80)) {
            if (shift < 64 && (b & 0x40))
                r |= ~UINT64_C(0) << shift;
            *v = r;
            return 0;
        }
    }
    return -1;
}

/* A fixed-size little-endian value, sign-extended when `sign`. */
static int read_fixed(const uint8_t **p, const uint8_t *end, size_t size, bool sign,
                      uint64_t *v)
{
    if ((size_t)(end - *p) < size)
        return -1;
    uint64_t r = 0;
    for (size_t i = 0; i < size; i++)
        r |= (uint64_t)(*p)[i] << (8 * i);
    if (sign && size < 8 && (r >> (8 * size - 1)) & 1)
        r |= ~UINT64_C(0) << (8 * size);
    *p += size;
    *v = r;
    return 0;
}

/* The value part of an encoding (its low four bits). */
static int read_format(uint8_t enc, const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    switch (enc & 0x0f) {
    case DW_EH_PE_absptr: return read_fixed(p, end, 8, false, v);
    case DW_EH_PE_uleb128: return read_uleb(p, end, v);
    case DW_EH_PE_udata2: return read_fixed(p, end, 2, false, v);
    case DW_EH_PE_udata4: return read_fixed(p, end, 4, false, v);
    case DW_EH_PE_udata8: return read_fixed(p, end, 8, false, v);
    case DW_EH_PE_sleb128: return read_sleb(p, end, v);
    case DW_EH_PE_sdata2: return read_fixed(p, end, 2, true, v);
    case DW_EH_PE_sdata4: return read_fixed(p, end, 4, true, v);
    case DW_EH_PE_sdata8: return read_fixed(p, end, 8, true, v);
    default: return -1;
    }
}

/* An address: relative to nothing, to the field's own address (pcrel) or
 * to datarel_base; indirect and other bases are not addresses we can
 * compute from the file. */
static int read_address(uint8_t enc, const uint8_t **p, const uint8_t *end,
                        uint64_t field_vaddr, uint64_t datarel_base, uint64_t *v)
{
    if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
        return -1;
    uint64_t raw;
    if (read_format(enc, p, end, &raw) < 0)
        return -1;
    switch (enc & 0x70) {
    case DW_EH_PE_absptr: *v = raw; return 0;
    case DW_EH_PE_pcrel: *v = raw + field_vaddr; return 0;
    case DW_EH_PE_datarel: *v = raw + datarel_base; return 0;
    default: return -1;
    }
}

/* ---- the file ----------------------------------------------------------- */

static const struct cfi_machine *machine_of(int e_machine)
{
    for (size_t i = 0; i < sizeof machines / sizeof machines[0]; i++)
        if (machines[i].machine == e_machine)
            return &machines[i];
    return NULL;
}

static bool fits(uint64_t off, uint64_t len, uint64_t size)
{
    return off <= size && len <= size - off;
}

/* The parts this file reads must lie within it (libelf would otherwise
 * answer some reads and not others); notes the executable segments. */
static int read_segments(struct build *b, const GElf_Ehdr *eh, uint64_t size,
                        struct mp_error *err)
{
    if (eh->e_shoff && !fits(eh->e_shoff, (uint64_t)eh->e_shnum * eh->e_shentsize, size))
        return mp_error_set(err, "%s: truncated ELF file (section headers past its end)",
                            b->path);
    size_t phnum;
    if (elf_getphdrnum(b->elf, &phnum) != 0)
        return mp_error_set(err, "%s: damaged ELF file (program headers): %s", b->path,
                            elf_errmsg(-1));
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(b->elf, (int)i, &ph))
            return mp_error_set(err, "%s: truncated ELF file (program headers)", b->path);
        if ((ph.p_type == PT_LOAD || ph.p_type == PT_GNU_EH_FRAME) &&
            !fits(ph.p_offset, ph.p_filesz, size))
            return mp_error_set(err, "%s: truncated ELF file (a segment lies past its "
                                "end)", b->path);
        if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && ph.p_memsz &&
            b->nsegs < sizeof b->segs / sizeof b->segs[0])
            b->segs[b->nsegs++] = (struct exec_seg){ ph.p_vaddr, ph.p_vaddr + ph.p_memsz };
    }
    return 0;
}

/* libelf on fd, for a 64-bit executable or shared object of a machine in
 * the table, in this host's byte order (rows are read as native words). */
static int open_elf(struct build *b, int fd, struct mp_error *err)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return mp_error_set(err, "%s: cannot read it", b->path);
    if (elf_version(EV_CURRENT) == EV_NONE)
        return mp_error_set(err, "libelf is unusable: %s", elf_errmsg(-1));
    /* Mapped, as elf_object.c reads objects (libelf's copying reads leak
     * on some damaged section tables). */
    b->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    if (!b->elf || elf_kind(b->elf) != ELF_K_ELF || !gelf_getehdr(b->elf, &eh))
        return mp_error_set(err, "%s: not an ELF file", b->path);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
        return mp_error_set(err, "%s: unwind rows are made for 64-bit little-endian "
                            "objects only", b->path);
    if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
        return mp_error_set(err, "%s: not an executable or shared object (ELF type %d)",
                            b->path, eh.e_type);
    b->m = machine_of(eh.e_machine);
    if (!b->m)
        return mp_error_set(err, "%s: unwind rows are made for x86_64 and aarch64 "
                            "only, not ELF machine %d", b->path, eh.e_machine);
    return read_segments(b, &eh, (uint64_t)st.st_size, err);
}

/* .eh_frame through its section header, as libdw finds it first.
 * 1: found, 0: none, -1: unreadable. */
static int eh_frame_from_section(struct build *b, struct mp_error *err)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(b->elf, &shstrndx) != 0 || shstrndx == 0)
        return 0;
    for (Elf_Scn *scn = elf_nextscn(b->elf, NULL); scn; scn = elf_nextscn(b->elf, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(b->elf, shstrndx, sh.sh_name)
                                                   : NULL;
        if (!name || strcmp(name, ".eh_frame") != 0)
            continue;
        if (sh.sh_type != SHT_PROGBITS)
            return 0;             /* a debug file's placeholder */
        b->eh = elf_rawdata(scn, NULL);
        if (!b->eh)
            return mp_error_set(err, "%s: cannot read .eh_frame: %s", b->path,
                                elf_errmsg(-1));
        b->eh_vaddr = sh.sh_addr;
        return 1;
    }
    return 0;
}

/* The file offset of link-time address vaddr and the file bytes of its
 * PT_LOAD from there on. */
static int file_extent_of(struct build *b, uint64_t vaddr, uint64_t *off, uint64_t *len)
{
    size_t phnum;
    if (elf_getphdrnum(b->elf, &phnum) != 0)
        return -1;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(b->elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
            vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
            *off = ph.p_offset + (vaddr - ph.p_vaddr);
            *len = ph.p_filesz - (vaddr - ph.p_vaddr);
            return 0;
        }
    }
    return -1;
}

/* .eh_frame through PT_GNU_EH_FRAME's header (a file without section
 * headers), as libdw falls back to.  1, 0 or -1 as above. */
static int eh_frame_from_segment(struct build *b, struct mp_error *err)
{
    size_t phnum;
    if (elf_getphdrnum(b->elf, &phnum) != 0)
        return 0;
    for (size_t i = 0; i < phnum; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
            continue;
        Elf_Data *hdr = elf_getdata_rawchunk(b->elf, (int64_t)ph.p_offset, ph.p_filesz,
                                             ELF_T_BYTE);
        const uint8_t *p = hdr ? hdr->d_buf : NULL, *end = p ? p + hdr->d_size : NULL;
        uint64_t vaddr, off, len;
        if (!p || hdr->d_size < 4 || p[0] != 1)
            return mp_error_set(err, "%s: damaged .eh_frame_hdr", b->path);
        uint8_t enc = p[1];
        p += 4;
        if (read_address(enc, &p, end, ph.p_vaddr + 4, ph.p_vaddr, &vaddr) < 0 ||
            file_extent_of(b, vaddr, &off, &len) < 0)
            return mp_error_set(err, "%s: damaged .eh_frame_hdr", b->path);
        b->eh = elf_getdata_rawchunk(b->elf, (int64_t)off, len, ELF_T_BYTE);
        if (!b->eh)
            return mp_error_set(err, "%s: cannot read .eh_frame", b->path);
        b->eh_vaddr = vaddr;
        return 1;
    }
    return 0;
}

/* ---- FDEs --------------------------------------------------------------- */

/* libdw keeps one rule per register number up to the highest named, and
 * one copy of them per DW_CFA_remember_state: a crafted program naming
 * register 2^31 (or remembering a million states) would have it allocate
 * gigabytes for one FDE.  No machine memprof reads has registers past 128
 * in its call-frame information (x86_64 stops at 66, aarch64 at 95). */
#define CFI_REG_MAX 128
#define CFI_REMEMBER_MAX 64

static bool reg_ok(const uint8_t **p, const uint8_t *end)
{
    uint64_t r;
    return read_uleb(p, end, &r) == 0 && r <= CFI_REG_MAX;
}

static bool skip_uleb(const uint8_t **p, const uint8_t *end)
{
    uint64_t v;
    return read_uleb(p, end, &v) == 0;
}

static bool skip_block(const uint8_t **p, const uint8_t *end)
{
    uint64_t len;
    if (read_uleb(p, end, &len) < 0 || len > (uint64_t)(end - *p))
        return false;
    *p += len;
    return true;
}

/* One instruction's operands; false when malformed or out of bounds. */
static bool operands_ok(uint8_t op, const uint8_t **p, const uint8_t *end, uint8_t enc,
                        int *depth)
{
    uint64_t v;
    switch (op) {
    case DW_CFA_nop:
        return true;
    case DW_CFA_set_loc:
        return read_format(enc, p, end, &v) == 0;
    case DW_CFA_advance_loc1:
    case DW_CFA_advance_loc2:
    case DW_CFA_advance_loc4: {
        size_t n = op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4;
        if ((size_t)(end - *p) < n)
            return false;
        *p += n;
        return true;
    }
    case DW_CFA_remember_state:
        return ++*depth <= CFI_REMEMBER_MAX;
    case DW_CFA_restore_state:
        --*depth;
        return true;
    case DW_CFA_def_cfa_offset:
    case DW_CFA_def_cfa_offset_sf:
    case DW_CFA_GNU_args_size:
        return skip_uleb(p, end);
    case DW_CFA_def_cfa_expression:
        return skip_block(p, end);
    case DW_CFA_restore_extended:
    case DW_CFA_undefined:
    case DW_CFA_same_value:
    case DW_CFA_def_cfa_register:
        return reg_ok(p, end);
    case DW_CFA_offset_extended:
    case DW_CFA_offset_extended_sf:
    case DW_CFA_def_cfa:
    case DW_CFA_def_cfa_sf:
    case DW_CFA_val_offset:
    case DW_CFA_val_offset_sf:
    case DW_CFA_GNU_negative_offset_extended:
        return reg_ok(p, end) && skip_uleb(p, end);
    case DW_CFA_register:
        return reg_ok(p, end) && reg_ok(p, end);
    case DW_CFA_expression:
    case DW_CFA_val_expression:
        return reg_ok(p, end) && skip_block(p, end);
    default:
        return false;           /* unknown to memprof: not handed to libdw */
    }
}

/* Whether a CIE's or FDE's call-frame program stays within the bounds
 * above (enc: the FDE address encoding, for DW_CFA_set_loc). */
static bool program_bounded(const uint8_t *p, const uint8_t *end, uint8_t enc)
{
    int depth = 0;
    while (p < end) {
        uint8_t op = *p++;
        switch (op & 0xc0) {
        case DW_CFA_advance_loc:
            continue;
        case DW_CFA_offset:
            if (!skip_uleb(&p, end))
                return false;
            continue;
        case DW_CFA_restore:
            continue;               /* registers 0..63 in the opcode */
        }
        if (!operands_ok(op, &p, end, enc, &depth))
            return false;
    }
    return true;
}

/* The encoding of the addresses of a CIE's FDEs, from its augmentation
 * ("zR", "zPLR", ...); -1 when it cannot be known. */
static int fde_encoding(const Dwarf_CIE *cie, uint8_t *enc)
{
    const char *aug = cie->augmentation;
    *enc = DW_EH_PE_absptr;
    if (aug[0] == '\0')
        return 0;
    if (aug[0] != 'z' || !cie->augmentation_data)
        return -1;
    const uint8_t *p = cie->augmentation_data, *end = p + cie->augmentation_data_size;
    for (const char *a = aug + 1; *a; a++) {
        uint64_t skipped;
        if (*a == 'S' || *a == 'B' || *a == 'G')
            continue;
        if (p >= end)
            return -1;
        uint8_t e = *p++;
        if (*a == 'R') {
            *enc = e;
            return 0;
        }
        if (*a == 'P' && read_format(e, &p, end, &skipped) < 0)
            return -1;
        if (*a != 'P' && *a != 'L')
            return -1;
    }
    return 0;
}

static int add_cie(struct cie_list *cies, uint64_t off, const Dwarf_CIE *cie)
{
    uint8_t enc;
    if (fde_encoding(cie, &enc) < 0 ||
        !program_bounded(cie->initial_instructions, cie->initial_instructions_end, enc))
        return 0;                 /* its FDEs will not be found: no rows */
    if (array_reserve(&cies->v, &cies->cap, cies->n + 1, sizeof *cies->v, 16) < 0)
        return -1;
    cies->v[cies->n++] = (struct cie_enc){ off, enc, cie->augmentation[0] == 'z' };
    return 0;
}

/* CIEs are met in increasing offset: binary search.  NULL when the FDE's
 * CIE is unknown (or comes after it). */
static const struct cie_enc *cie_at(const struct cie_list *cies, uint64_t off)
{
    size_t lo = 0, hi = cies->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cies->v[mid].off == off)
            return &cies->v[mid];
        if (cies->v[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

static int add_fde(struct build *b, const struct cie_list *cies, const Dwarf_FDE *fde,
                   uint64_t len)
{
    const struct cie_enc *cie = cie_at(cies, fde->CIE_pointer);
    if (!cie)
        return 0;
    const uint8_t *p = fde->start, *base = b->eh->d_buf;
    uint64_t start, range;
    if (read_address(cie->enc, &p, fde->end, b->eh_vaddr + (uint64_t)(p - base), 0,
                     &start) < 0 ||
        read_format(cie->enc, &p, fde->end, &range) < 0 || start + range < start ||
        (cie->aug_data && !skip_block(&p, fde->end)) ||
        !program_bounded(p, fde->end, cie->enc))
        return 0;                 /* no rows: a walker stops there */
    if (array_reserve(&b->fdes.v, &b->fdes.cap, b->fdes.n + 1, sizeof *b->fdes.v, 256) < 0)
        return -1;
    b->fdes.v[b->fdes.n] = (struct fde_span){ start, start + range, len, b->fdes.n };
    b->fdes.n++;
    return 0;
}

static int cmp_fde(const void *a, const void *c)
{
    const struct fde_span *x = a, *y = c;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* Every FDE of .eh_frame, sorted by start.  A damaged entry ends the
 * list, as it would end a reader's walk through the section. */
static int collect_fdes(struct build *b, struct mp_error *err)
{
    struct cie_list cies = {0};
    const unsigned char *ident = (const unsigned char *)elf_getident(b->elf, NULL);
    Dwarf_Off off = 0, next;
    Dwarf_CFI_Entry e;
    int rc = 0;
    while (rc == 0 && dwarf_next_cfi(ident, b->eh, true, off, &next, &e) == 0) {
        if (dwarf_cfi_cie_p(&e))
            rc = add_cie(&cies, off, &e.cie);
        else
            rc = add_fde(b, &cies, &e.fde, next - off);
        if (next <= off)
            break;
        off = next;
    }
    free(cies.v);
    if (rc < 0)
        return mp_error_set(err, "%s: out of memory reading .eh_frame", b->path);
    if (b->fdes.n)
        qsort(b->fdes.v, b->fdes.n, sizeof *b->fdes.v, cmp_fde);
    return 0;
}

/* ---- rows --------------------------------------------------------------- */

static int push_row(struct build *b, struct cfi_row row)
{
    struct cfi_rows *o = b->out;
    if (array_reserve(&o->v, &o->cap, o->n + 1, sizeof *o->v, 1024) < 0)
        return -1;
    o->v[o->n++] = row;
    return 0;
}

static int push_none(struct build *b, uint64_t link_pc)
{
    return push_row(b, (struct cfi_row){ .pc = link_pc + b->bias });
}

/* The CFA as a register of the table plus an offset. */
static bool cfa_rule(Dwarf_Frame *frame, const struct cfi_machine *m, struct cfi_row *row)
{
    Dwarf_Op *ops;
    size_t nops;
    if (dwarf_frame_cfa(frame, &ops, &nops) != 0 || nops != 1)
        return false;
    uint64_t reg;
    int64_t off;
    if (ops[0].atom == DW_OP_bregx) {
        reg = ops[0].number;
        off = (int64_t)ops[0].number2;
    } else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
        reg = ops[0].atom - DW_OP_breg0;
        off = (int64_t)ops[0].number;
    } else {
        return false;
    }
    if (off < INT32_MIN || off > INT32_MAX)
        return false;
    if (reg == (uint64_t)m->sp)
        row->cfa_reg = CFI_CFA_SP;
    else if (reg == (uint64_t)m->fp)
        row->cfa_reg = CFI_CFA_FP;
    else
        return false;
    row->cfa_off = (int32_t)off;
    return true;
}

/* Where register regno of the caller is: 1 saved at CFA + *off, 0 the
 * same value as here, -1 anything else (undefined, in another register,
 * an expression, a value rather than a location).  libdw's forms are
 * those of libdw.h's dwarf_frame_register. */
static int saved_at(Dwarf_Frame *frame, int regno, int64_t *off)
{
    Dwarf_Op mem[3], *ops;
    size_t nops;
    if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
        return -1;
    if (nops == 0)
        return ops == NULL ? 0 : -1;
    if (ops[0].atom != DW_OP_call_frame_cfa)
        return -1;
    if (nops == 1) {
        *off = 0;
        return 1;
    }
    if (nops == 2 && ops[1].atom == DW_OP_plus_uconst) {
        *off = (int64_t)ops[1].number;
        return 1;
    }
    return -1;
}

/* The caller's stack pointer must be the CFA, as the walker takes it:
 * the usual rule (the CFA as a value) or none at all. */
static bool sp_is_cfa(Dwarf_Frame *frame, int sp)
{
    Dwarf_Op mem[3], *ops;
    size_t nops;
    if (dwarf_frame_register(frame, sp, mem, &ops, &nops) != 0)
        return false;
    if (nops == 0)
        return true;
    return nops == 2 && ops[0].atom == DW_OP_call_frame_cfa &&
           ops[1].atom == DW_OP_stack_value;
}

/* The row for the rules of frame, or a NONE row when a row cannot say them. */
static struct cfi_row frame_row(Dwarf_Frame *frame, int ra_reg, const struct cfi_machine *m,
                                uint64_t pc)
{
    struct cfi_row row = { .pc = pc }, none = { .pc = pc };
    int64_t ra_off, fp_off = 0;
    if (!cfa_rule(frame, m, &row) || !sp_is_cfa(frame, m->sp))
        return none;
    if (saved_at(frame, ra_reg, &ra_off) != 1 || ra_off < INT8_MIN || ra_off > INT8_MAX)
        return none;
    int fp = saved_at(frame, m->fp, &fp_off);
    if (fp < 0 || (fp == 1 && (fp_off == 0 || fp_off < INT16_MIN || fp_off > INT16_MAX)))
        return none;
    row.ra_off = (int8_t)ra_off;
    row.fp_off = (int16_t)fp_off;
    return row;
}

/* Rows for [f->start, stop), one per stretch of constant rules, within
 * the FDE's work budget.  -1: out of memory. */
static int walk_fde(struct build *b, const struct fde_span *f, uint64_t stop)
{
    uint64_t budget = f->len * WORK_PER_BYTE + WORK_PER_FDE, work = 0;
    for (uint64_t pc = f->start; pc < stop;) {
        work += f->len;
        if (work > budget)
            return push_none(b, pc);
        Dwarf_Frame *frame = NULL;
        Dwarf_Addr start = 0, end = 0;
        int ra = -1;
        if (dwarf_cfi_addrframe(b->cfi, pc, &frame) == 0)
            ra = dwarf_frame_info(frame, &start, &end, NULL);
        if (ra < 0 || start > pc || end <= pc) {
            free(frame);
            return push_none(b, pc);
        }
        int rc = push_row(b, frame_row(frame, ra, b->m, pc + b->bias));
        free(frame);
        if (rc < 0)
            return -1;
        pc = end;
    }
    return 0;
}

/* The end of the executable segment holding pc, or 0 when none does. */
static uint64_t segment_end(const struct build *b, uint64_t pc)
{
    for (size_t i = 0; i < b->nsegs; i++)
        if (pc >= b->segs[i].start && pc < b->segs[i].end)
            return b->segs[i].end;
    return 0;
}

/* Each FDE covers code up to its end or the next FDE's start, whichever
 * comes first (libgcc's lookup), within its executable segment; where
 * it stops short of the next start, a NONE row. */
static int rows_of_fdes(struct build *b)
{
    const struct fde_list *l = &b->fdes;
    for (size_t i = 0; i < l->n; i++) {
        const struct fde_span *f = &l->v[i];
        uint64_t seg_end = segment_end(b, f->start);
        if ((i > 0 && l->v[i - 1].start == f->start) || seg_end == 0)
            continue;
        size_t j = i + 1;
        while (j < l->n && l->v[j].start == f->start)
            j++;
        uint64_t next = j < l->n ? l->v[j].start : UINT64_MAX;
        uint64_t stop = f->end < next ? f->end : next;
        if (stop > seg_end)
            stop = seg_end;
        if (walk_fde(b, f, stop) < 0)
            return -1;
        if (stop < next && push_none(b, stop) < 0)
            return -1;
    }
    return 0;
}

static int build_rows(struct build *b, struct mp_error *err)
{
    int found = eh_frame_from_section(b, err);
    if (found == 0)
        found = eh_frame_from_segment(b, err);
    if (found <= 0)
        return found;
    if (collect_fdes(b, err) < 0)
        return -1;
    if (b->fdes.n == 0)
        return 0;
    b->cfi = dwarf_getcfi_elf(b->elf);
    if (!b->cfi)
        return mp_error_set(err, "%s: libdw cannot read its .eh_frame: %s", b->path,
                            dwarf_errmsg(-1));
    if (rows_of_fdes(b) < 0)
        return mp_error_set(err, "%s: out of memory building unwind rows", b->path);
    return 0;
}

int cfi_rows_add_elf(struct cfi_rows *out, int fd, const char *path, uint64_t bias,
                     struct mp_error *err)
{
    struct build b = { .path = path, .bias = bias, .out = out };
    size_t before = out->n;
    int rc = open_elf(&b, fd, err);
    if (rc == 0)
        rc = build_rows(&b, err);
    if (b.cfi)
        dwarf_cfi_end(b.cfi);
    if (b.elf)
        elf_end(b.elf);
    free(b.fdes.v);
    if (rc < 0)
        out->n = before;
    return rc < 0 ? -1 : 0;
}

/* ---- the table ---------------------------------------------------------- */

/* Rows keep the order they were added in among equal pcs (qsort is not
 * stable): the first added wins. */
struct seq_row {
    struct cfi_row row;
    size_t seq;
};

static int cmp_seq_row(const void *a, const void *c)
{
    const struct seq_row *x = a, *y = c;
    if (x->row.pc != y->row.pc)
        return x->row.pc < y->row.pc ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_row(const void *a, const void *c)
{
    const struct cfi_row *x = a, *y = c;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void sort_stable(struct cfi_rows *rows)
{
    if (rows->n == 0)
        return;
    struct seq_row *tmp = malloc(rows->n * sizeof *tmp);
    if (!tmp) {
        /* Out of memory: sorted all the same, equal pcs in any order. */
        qsort(rows->v, rows->n, sizeof *rows->v, cmp_row);
        return;
    }
    for (size_t i = 0; i < rows->n; i++)
        tmp[i] = (struct seq_row){ rows->v[i], i };
    qsort(tmp, rows->n, sizeof *tmp, cmp_seq_row);
    for (size_t i = 0; i < rows->n; i++)
        rows->v[i] = tmp[i].row;
    free(tmp);
}

static bool same_rule(const struct cfi_row *a, const struct cfi_row *b)
{
    if (a->cfa_reg != b->cfa_reg)
        return false;
    return a->cfa_reg == CFI_CFA_NONE ||
           (a->cfa_off == b->cfa_off && a->fp_off == b->fp_off && a->ra_off == b->ra_off);
}

/* Among rows at one pc the first added wins, except that a NONE row
 * loses to a real one: an object's closing NONE row only says its own
 * code ended there, and the next object's may start at that very pc. */
static void one_row_per_pc(struct cfi_rows *rows)
{
    size_t kept = 0;
    for (size_t i = 0; i < rows->n; i++) {
        struct cfi_row r = rows->v[i];
        if (r.cfa_reg == CFI_CFA_NONE)
            r = (struct cfi_row){ .pc = r.pc };
        struct cfi_row *last = kept ? &rows->v[kept - 1] : NULL;
        if (last && last->pc == r.pc) {
            if (last->cfa_reg == CFI_CFA_NONE)
                *last = r;
            continue;
        }
        rows->v[kept++] = r;
    }
    rows->n = kept;
}

void cfi_rows_finish(struct cfi_rows *rows)
{
    sort_stable(rows);
    one_row_per_pc(rows);
    size_t kept = 0;
    for (size_t i = 0; i < rows->n; i++)
        if (!kept || !same_rule(&rows->v[kept - 1], &rows->v[i]))
            rows->v[kept++] = rows->v[i];
    rows->n = kept;
}

void cfi_rows_free(struct cfi_rows *rows)
{
    free(rows->v);
    *rows = (struct cfi_rows){0};
}

const struct cfi_row *cfi_rows_find(const struct cfi_rows *rows, uint64_t pc)
{
    size_t lo = 0, hi = rows->n;      /* rows [0, lo) start at or below pc */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rows->v[mid].pc <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? &rows->v[lo - 1] : NULL;
}
