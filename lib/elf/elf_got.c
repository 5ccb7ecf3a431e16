/* elf_got.c - an object's call-table slots for named functions, from the
 * relocation sections its dynamic loader applies (.rela.plt, .rela.dyn). */
#include "lib/elf/elf_got.h"

#include <elf.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#ifndef R_AARCH64_GLOB_DAT
#define R_AARCH64_GLOB_DAT 1025
#define R_AARCH64_JUMP_SLOT 1026
#endif

/* Whether a relocation of this type fills a slot with a symbol's address
 * (and nothing else: no addend, no copy). */
static bool is_slot_type(int machine, unsigned type)
{
    switch (machine) {
    case EM_X86_64:
        return type == R_X86_64_JUMP_SLOT || type == R_X86_64_GLOB_DAT;
    case EM_AARCH64:
        return type == R_AARCH64_JUMP_SLOT || type == R_AARCH64_GLOB_DAT;
    default:
        return false;
    }
}

static int add_slot(struct elf_got_slots *out, uint64_t addr, unsigned name)
{
    if (out->n == out->cap) {
        size_t cap = out->cap ? out->cap * 2 : 16;
        struct elf_got_slot *v = realloc(out->v, cap * sizeof *v);
        if (!v)
            return -1;
        out->v = v;
        out->cap = cap;
    }
    out->v[out->n++] = (struct elf_got_slot){addr, name};
    return 0;
}

static long name_index(const char *name, const char *const *names, size_t nnames)
{
    for (size_t i = 0; name && i < nnames; i++)
        if (strcmp(name, names[i]) == 0)
            return (long)i;
    return -1;
}

/* The slots of one SHT_RELA section whose symbols live in symtab. */
static int rela_section(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, int machine,
                        const char *const *names, size_t nnames, struct elf_got_slots *out)
{
    Elf_Scn *symscn = elf_getscn(elf, sh->sh_link);
    GElf_Shdr symsh;
    if (!symscn || !gelf_getshdr(symscn, &symsh) || symsh.sh_type != SHT_DYNSYM)
        return 0;       /* not the loader's */
    Elf_Data *rel = elf_getdata(scn, NULL), *syms = elf_getdata(symscn, NULL);
    if (!rel || !syms || !sh->sh_entsize || !symsh.sh_entsize)
        return 0;
    size_t nrel = rel->d_size / sh->sh_entsize, nsym = syms->d_size / symsh.sh_entsize;
    for (size_t i = 0; i < nrel; i++) {
        GElf_Rela r;
        GElf_Sym sym;
        if (!gelf_getrela(rel, (int)i, &r) || !is_slot_type(machine, GELF_R_TYPE(r.r_info)))
            continue;
        size_t si = GELF_R_SYM(r.r_info);
        if (si == 0 || si >= nsym || !gelf_getsym(syms, (int)si, &sym) ||
            GELF_ST_TYPE(sym.st_info) == STT_OBJECT)
            continue;
        long k = name_index(elf_strptr(elf, symsh.sh_link, sym.st_name), names, nnames);
        if (k >= 0 && add_slot(out, r.r_offset, (unsigned)k) < 0)
            return -1;
    }
    return 0;
}

int elf_got_slots_read(int fd, const char *path, const char *const *names, size_t nnames,
                       struct elf_got_slots *out, struct mp_error *err)
{
    elf_version(EV_CURRENT);
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    GElf_Ehdr eh;
    if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
        if (elf)
            elf_end(elf);
        return mp_error_set(err, "%s is not an ELF file", path);
    }
    int rc = 0;
    for (Elf_Scn *scn = NULL; rc == 0 && (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_RELA &&
            rela_section(elf, scn, &sh, eh.e_machine, names, nnames, out) < 0)
            rc = mp_error_set(err, "out of memory reading the relocations of %s", path);
    }
    elf_end(elf);
    return rc;
}

void elf_got_slots_free(struct elf_got_slots *s)
{
    free(s->v);
    *s = (struct elf_got_slots){0};
}
