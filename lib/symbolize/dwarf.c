/* dwarf.c - DWARF line tables and inlined-subroutine scopes through
 * libdw.  Finds an address's compile unit through .debug_aranges when the
 * file has it (touching one unit, not all: every view reads DWARF, and a
 * libc debug file has thousands of units); else, or when aranges do not
 * cover an address, through its own sorted index of every unit's ranges,
 * built on first need, because .debug_aranges is optional (clang omits it)
 * and libdw 0.188's dwarf_addrdie relies on it.  A compressed .debug_info
 * (with its .debug_abbrev and .debug_line) is inflated a unit at a time
 * (dwarf_sections.h): a unit is made readable before it is read, with every unit when it may refer to
 * another (DW_FORM_ref_addr, imported units) or when aranges cannot say
 * which unit to read. */
#include "lib/symbolize/dwarf.h"
#include "lib/base/array.h"
#include "lib/base/safe_open.h"
#include "lib/base/u64map.h"
#include "lib/elf/elf_object.h"
#include "lib/symbolize/aranges.h"
#include "lib/symbolize/dwarf_sections.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SCRATCH_FRAMES 32

struct sym_dwarf {
    /* Names and files built for the last lookup (see sym_dwarf_frame). */
    char names[SCRATCH_FRAMES][512];
    char files[SCRATCH_FRAMES + 1][1024];
    int fd;
    Elf *elf;
    Dwarf *dw;
    Dwarf_Aranges *aranges;   /* NULL when the file has none */
    Dwarf_Die arange_cu;      /* the unit the last aranges lookup found */
    struct dwarf_sections *lazy;  /* a compressed .debug_info, or NULL */
    struct u64map units_read;     /* units made readable (lazy only) */
    struct aranges lazy_aranges;  /* lazy only: libdw's refuses a part */
    bool indexed;             /* index built */
    struct aranges index;     /* every unit's ranges -> its DIE's offset */
};

static int index_units(struct sym_dwarf *d)
{
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    uint8_t unit_type;
    while (dwarf_get_units(d->dw, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
        if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
            unit_type != DW_UT_skeleton)
            continue;
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
            if (aranges_add(&d->index, lo, hi, dwarf_dieoffset(&cudie)))
                return -1;
    }
    aranges_sort(&d->index);
    return 0;
}

/* The address -> unit table of a lazy .debug_info, read by memprof.  When
 * it cannot be had, every unit is made readable and libdw's is used. */
static void read_aranges(struct sym_dwarf *d)
{
    size_t len = 0;
    const unsigned char *bytes = dwarf_sections_bytes(d->elf, ".debug_aranges", &len);
    if (!bytes || aranges_read(bytes, len, &d->lazy_aranges) != 0 || d->lazy_aranges.n == 0)
        dwarf_sections_need_all(d->lazy);
}

/* libdw on d->elf, again after more of a lazy .debug_info was inflated
 * (libdw reads a section's size once). */
static int open_dwarf(struct sym_dwarf *d)
{
    if (d->dw)
        dwarf_end(d->dw);
    d->aranges = NULL;
    d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
    if (!d->dw)
        return -1;
    size_t naranges = 0;
    if (dwarf_getaranges(d->dw, &d->aranges, &naranges) != 0 || naranges == 0)
        d->aranges = NULL;
    return 0;
}

/* Is fd's file of this build-id? */
static bool is_build(int fd, const uint8_t *build_id, size_t len)
{
    uint8_t id[64];
    size_t got = 0;
    return elf_object_read_build_id(fd, id, sizeof id, &got) == 0 && got == len &&
           memcmp(id, build_id, len) == 0;
}

struct sym_dwarf *sym_dwarf_open(const char *root, const char *path, const uint8_t *build_id,
                                 size_t build_id_len, struct mp_error *err)
{
    struct sym_dwarf *d = calloc(1, sizeof *d);
    if (!d) {
        mp_error_set(err, "out of memory");
        return NULL;
    }
    d->fd = safe_open_in_root(root, path, false, NULL);
    if (d->fd < 0) {
        mp_error_set(err, "cannot open %s: %s", path,
                     errno == EINVAL ? "not a regular file" : strerror(errno));
        goto fail;
    }
    if (build_id_len && !is_build(d->fd, build_id, build_id_len)) {
        mp_error_set(err, "%s is no longer the build whose symbols were read", path);
        goto fail;
    }
    lseek(d->fd, 0, SEEK_SET);
    elf_version(EV_CURRENT);
    /* private: dwarf_sections changes section headers in memory */
    d->elf = elf_begin(d->fd, ELF_C_READ_MMAP_PRIVATE, NULL);
    if (d->elf && (d->lazy = dwarf_sections_prepare(d->elf)) != NULL)
        read_aranges(d);
    if (!d->elf || open_dwarf(d) != 0) {
        mp_error_set(err, "%s has no usable DWARF: %s", path, dwarf_errmsg(-1));
        goto fail;
    }
    return d;
fail:
    sym_dwarf_free(d);
    return NULL;
}

void sym_dwarf_free(struct sym_dwarf *d)
{
    if (!d)
        return;
    if (d->dw)
        dwarf_end(d->dw);
    dwarf_sections_free(d->lazy);
    u64map_free(&d->units_read);
    aranges_free(&d->lazy_aranges);
    if (d->elf)
        elf_end(d->elf);
    if (d->fd >= 0)
        close(d->fd);
    aranges_free(&d->index);
    free(d);
}

/* After more of .debug_info was inflated (1), libdw is opened again; -1
 * when that fails (no lookup finds anything then). */
static int lazy_result(struct sym_dwarf *d, int grown)
{
    if (grown > 0 && open_dwarf(d) != 0)
        return -1;
    return grown < 0 ? -1 : 0;
}

/* Every unit readable: the lookups that cannot be confined to one. */
static int lazy_all(struct sym_dwarf *d)
{
    if (!d->lazy || dwarf_sections_whole(d->lazy))
        return 0;
    return lazy_result(d, dwarf_sections_need_all(d->lazy));
}

/* Whether the unit's abbreviations allow a reference out of it: a
 * DW_FORM_ref_addr attribute or a DW_TAG_imported_unit. */
static bool refers_outside(Dwarf_Die *cudie)
{
    size_t off = 0, len;
    Dwarf_Abbrev *ab;
    while ((ab = dwarf_getabbrev(cudie, off, &len)) != NULL && ab != DWARF_END_ABBREV) {
        if (dwarf_getabbrevtag(ab) == DW_TAG_imported_unit)
            return true;
        /* to the end of its list: libdw 0.188's dwarf_getattrcnt was
         * seen counting one more attribute than there are */
        unsigned int name, form;
        for (size_t i = 0; dwarf_getabbrevattr(ab, i, &name, &form, NULL) == 0; i++)
            if (form == DW_FORM_ref_addr)
                return true;
        off += len;
    }
    return ab == NULL;   /* unreadable abbreviations: assume the worst */
}

/* The offset of the unit's line table (DW_AT_stmt_list), read from the
 * attribute's bytes: libdw's dwarf_formudata checks it against the part
 * of .debug_line inflated so far. */
static int stmt_list(Dwarf_Die *cudie, int offset_size, uint64_t *off)
{
    Dwarf_Attribute attr;
    uint32_t off32;
    if (!dwarf_attr(cudie, DW_AT_stmt_list, &attr) || !attr.valp)
        return -1;
    if (attr.form == DW_FORM_data8 || (attr.form == DW_FORM_sec_offset && offset_size == 8)) {
        memcpy(off, attr.valp, 8);
        return 0;
    }
    if (attr.form != DW_FORM_data4 && attr.form != DW_FORM_sec_offset)
        return -1;
    memcpy(&off32, attr.valp, 4);
    *off = off32;
    return 0;
}

/* Make the unit whose header is at cu_off readable (its entries,
 * abbreviations and line table), and every unit when it may refer to
 * another.  0, or -1 when it cannot be read. */
static int unit_readable(struct sym_dwarf *d, Dwarf_Off cu_off)
{
    if (!d->lazy || dwarf_sections_whole(d->lazy))
        return 0;
    uint32_t *seen = u64map_slot(&d->units_read, cu_off);
    if (!seen)
        return lazy_all(d);
    if (*seen != U64MAP_NEW)
        return 0;
    *seen = 1;
    if (lazy_result(d, dwarf_sections_need_unit(d->lazy, cu_off)) != 0)
        return -1;
    Dwarf_Die cudie;
    Dwarf_Off next;
    size_t header;
    uint8_t offset_size;
    uint64_t line;
    if (dwarf_next_unit(d->dw, cu_off, &next, &header, NULL, NULL, NULL, &offset_size, NULL,
                        NULL) != 0 ||
        !dwarf_offdie(d->dw, cu_off + header, &cudie) || refers_outside(&cudie))
        return lazy_all(d);
    if (stmt_list(&cudie, offset_size, &line) != 0)
        return 0;   /* no line table */
    return lazy_result(d, dwarf_sections_need_line(d->lazy, line));
}

/* The unit .debug_aranges names for vaddr: memprof's table while
 * .debug_info is inflated lazily, then libdw's. */
static int unit_of(struct sym_dwarf *d, uint64_t vaddr, Dwarf_Off *cu_off)
{
    uint64_t unit;
    Dwarf_Off next;
    size_t header;
    if (d->lazy && !dwarf_sections_whole(d->lazy)) {
        /* aranges name the unit's header; libdw's table its DIE */
        if (aranges_find(&d->lazy_aranges, vaddr, &unit) != 0 || unit_readable(d, unit) != 0 ||
            dwarf_next_unit(d->dw, unit, &next, &header, NULL, NULL, NULL, NULL, NULL, NULL) != 0)
            return -1;
        *cu_off = unit + header;
        return 0;
    }
    Dwarf_Arange *ar = d->aranges ? dwarf_getarange_addr(d->aranges, vaddr) : NULL;
    return ar && dwarf_getarangeinfo(ar, NULL, NULL, cu_off) == 0 ? 0 : -1;
}

/* The compile unit covering vaddr.  Ranges can nest or overlap (a CU's
 * range list with holes), so look back a little from the last start <=
 * vaddr. */
static Dwarf_Die *find_cu(struct sym_dwarf *d, uint64_t vaddr)
{
    Dwarf_Off cu_off;
    if (!d->dw)
        return NULL;
    if (unit_of(d, vaddr, &cu_off) == 0 && dwarf_offdie(d->dw, cu_off, &d->arange_cu))
        return &d->arange_cu;
    if (!d->indexed) {
        d->indexed = true;
        if (lazy_all(d) != 0)
            return NULL;
        if (index_units(d))
            aranges_free(&d->index);   /* out of memory: frames stay unexpanded */
    }
    uint64_t die;
    if (aranges_find(&d->index, vaddr, &die) == 0 && dwarf_offdie(d->dw, die, &d->arange_cu))
        return &d->arange_cu;
    return NULL;
}

/* Follow DW_AT_abstract_origin / DW_AT_specification to the DIE that
 * declares the function (inside its namespace or class). */
static Dwarf_Die declaration_of(Dwarf_Die *die)
{
    Dwarf_Die cur = *die, next;
    Dwarf_Attribute attr;
    for (int hops = 0; hops < 8; hops++) {
        if (!(dwarf_attr(&cur, DW_AT_abstract_origin, &attr) ||
              dwarf_attr(&cur, DW_AT_specification, &attr)) ||
            !dwarf_formref_die(&attr, &next))
            break;
        cur = next;
    }
    return cur;
}

static bool is_name_scope(int tag)
{
    return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
           tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* Whether die's unit is C, where no function is inside a name scope. */
static bool in_c_unit(Dwarf_Die *die)
{
    Dwarf_Die cu;
    if (!dwarf_diecu(die, &cu, NULL, NULL))
        return false;
    int lang = dwarf_srclang(&cu);
    return lang == DW_LANG_C89 || lang == DW_LANG_C || lang == DW_LANG_C99 || lang == DW_LANG_C11;
}

/* "ns::Class::name" for a function with no linkage name (a static or
 * C function), built from the declaration's enclosing scopes (found by
 * walking its unit from the start, so not in C, which has none). */
static const char *qualified_name(Dwarf_Die *die, const char *name, char *buf, size_t len)
{
    Dwarf_Die decl = declaration_of(die);
    Dwarf_Die *scopes = NULL;
    int n = in_c_unit(&decl) ? 0 : dwarf_getscopes_die(&decl, &scopes);
    size_t pos = 0;
    buf[0] = '\0';
    for (int i = n - 1; i >= 1; i--) {
        const char *scope = dwarf_diename(&scopes[i]);
        if (!is_name_scope(dwarf_tag(&scopes[i])))
            continue;
        int w = snprintf(buf + pos, len - pos, "%s::", scope ? scope : "(anonymous namespace)");
        if (w < 0 || (size_t)w >= len - pos)
            break;
        pos += (size_t)w;
    }
    free(scopes);
    snprintf(buf + pos, len - pos, "%s", name);
    return buf;
}

static const char *die_name(Dwarf_Die *die, char *buf, size_t len)
{
    Dwarf_Attribute attr;
    const char *name = NULL;
    /* attr_integrate follows DW_AT_abstract_origin and DW_AT_specification,
     * where an inlined or out-of-class member keeps its names. */
    if (dwarf_attr_integrate(die, DW_AT_linkage_name, &attr) ||
        dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &attr))
        name = dwarf_formstring(&attr);
    if (name)
        return name;
    if (dwarf_attr_integrate(die, DW_AT_name, &attr))
        name = dwarf_formstring(&attr);
    return name ? qualified_name(die, name, buf, len) : NULL;
}

/* A file name made absolute with the compilation directory, as
 * addr2line shows it. */
static const char *absolute_file(Dwarf_Die *cudie, const char *file, char *buf, size_t len)
{
    if (!file || file[0] == '/')
        return file;
    Dwarf_Attribute attr;
    const char *dir = dwarf_attr(cudie, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr) : NULL;
    if (!dir)
        return file;
    snprintf(buf, len, "%s/%s", dir, file);
    return buf;
}

/* The call site an inlined subroutine was expanded at. */
static void call_site(Dwarf_Die *inlined, Dwarf_Files *files, size_t nfiles,
                      const char **file, int *line)
{
    Dwarf_Attribute attr;
    Dwarf_Word value;
    *file = NULL;
    *line = 0;
    if (files && dwarf_attr(inlined, DW_AT_call_file, &attr) &&
        dwarf_formudata(&attr, &value) == 0 && value < nfiles)
        *file = dwarf_filesrc(files, value, NULL, NULL);
    if (dwarf_attr(inlined, DW_AT_call_line, &attr) &&
        dwarf_formudata(&attr, &value) == 0)
        *line = (int)value;
}

/* Children of tag may be functions: the unit, functions and blocks, and
 * the name scopes Rust nests its functions in. */
static bool may_hold_functions(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_lexical_block || tag == DW_TAG_compile_unit ||
           tag == DW_TAG_partial_unit || tag == DW_TAG_module ||
           tag == DW_TAG_enumeration_type || is_name_scope(tag);
}

#define MAX_SCOPE_DEPTH 64

/* The DIEs from a unit down to the deepest one holding an address, and
 * which of them is the innermost function (-1: none). */
struct scope_path {
    Dwarf_Die die[MAX_SCOPE_DEPTH + 1];
    int n, func;
};

/* Extend path with the function-like DIEs under parent whose code holds
 * vaddr, down to the deepest; true when one of parent's children holds
 * it (else path is as it was). */
static bool search_function(Dwarf_Die *parent, uint64_t vaddr, struct scope_path *path)
{
    Dwarf_Die child;
    if (path->n > MAX_SCOPE_DEPTH || dwarf_child(parent, &child) != 0)
        return false;
    do {
        int tag = dwarf_tag(&child);
        if (!may_hold_functions(tag))
            continue;
        path->die[path->n] = child;
        if (dwarf_haspc(&child, vaddr) != 1) {
            /* a name scope has no addresses of its own: look inside */
            if (!is_name_scope(tag) && tag != DW_TAG_module && tag != DW_TAG_enumeration_type)
                continue;
            path->n++;
            if (search_function(&child, vaddr, path))
                return true;
            path->n--;
            continue;
        }
        if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine)
            path->func = path->n;
        path->n++;
        search_function(&child, vaddr, path);
        return true;
    } while (dwarf_siblingof(&child, &child) == 0);
    return false;
}

/* The innermost function-like scope (inlined or not) holding vaddr, and
 * the scopes it is in, innermost first, in chain[0, return).  Walked by
 * hand: dwarf_getscopes does not descend into DIEs without addresses, so
 * never finds the functions Rust nests in namespace and struct DIEs; and
 * the walk down is the chain up (an inlined instance's parent is the
 * function it was inlined into), so no second walk of the unit
 * (dwarf_getscopes_die) is needed. */
static int innermost_function(Dwarf_Die *cudie, uint64_t vaddr, struct scope_path *path,
                              Dwarf_Die *chain)
{
    path->n = 0;
    path->func = -1;
    if (!search_function(cudie, vaddr, path))
        return 0;
    int n = 0;
    for (int i = path->func; i >= 0; i--)
        chain[n++] = path->die[i];
    return n;
}

int sym_dwarf_lookup(struct sym_dwarf *d, uint64_t vaddr,
                     struct sym_dwarf_frame *out, int max)
{
    Dwarf_Die *cudie = find_cu(d, vaddr);
    if (!cudie || max < 1)
        return 0;
    if (max > SCRATCH_FRAMES)
        max = SCRATCH_FRAMES;
    const char *file = NULL;
    int line = 0;
    Dwarf_Line *dl = dwarf_getsrc_die(cudie, vaddr);
    if (dl) {
        file = absolute_file(cudie, dwarf_linesrc(dl, NULL, NULL), d->files[SCRATCH_FRAMES],
                             sizeof d->files[0]);
        dwarf_lineno(dl, &line);
    }
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0)
        files = NULL;
    struct scope_path path;
    Dwarf_Die chain[MAX_SCOPE_DEPTH + 1];
    int nchain = innermost_function(cudie, vaddr, &path, chain);
    int n = 0;
    for (int i = 0; i < nchain && n < max; i++) {
        int tag = dwarf_tag(&chain[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
            continue;
        const char *name = die_name(&chain[i], d->names[n], sizeof d->names[0]);
        out[n++] = (struct sym_dwarf_frame){name, file, line};
        if (tag == DW_TAG_subprogram)
            break;
        /* The next (outer) frame is positioned at this one's call site. */
        call_site(&chain[i], files, nfiles, &file, &line);
        file = absolute_file(cudie, file, d->files[n], sizeof d->files[0]);
    }
    if (n == 0) /* a CU without subprogram DIEs: still give the line */
        out[n++] = (struct sym_dwarf_frame){NULL, file, line};
    return n;
}
