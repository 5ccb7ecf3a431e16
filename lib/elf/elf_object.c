/* elf_object.c - reads an ELF file's symbols, PT_LOADs, build-id and
 * debuglink with libelf, into a self-contained struct elf_object. */
#include "lib/elf/elf_object.h"
#include "lib/base/safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Leading underscores mark implementation aliases (__libc_malloc for
 * malloc): fewer is the better name. */
static size_t leading_underscores(const char *name)
{
    size_t n = 0;
    while (name[n] == '_')
        n++;
    return n;
}

static int bind_rank(unsigned char bind)
{
    return bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1 : 2;
}

/* By address; at equal addresses the best name first: sized, function,
 * global, then fewest leading underscores, then by name, so that the
 * choice among aliases is deterministic (qsort is not stable). */
static int cmp_sym(const void *a, const void *b)
{
    const struct elf_symbol *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    if ((x->size == 0) != (y->size == 0))
        return x->size == 0 ? 1 : -1;
    if ((x->type == STT_FUNC) != (y->type == STT_FUNC))
        return x->type == STT_FUNC ? -1 : 1;
    if (bind_rank(x->bind) != bind_rank(y->bind))
        return bind_rank(x->bind) - bind_rank(y->bind);
    size_t ux = leading_underscores(x->name), uy = leading_underscores(y->name);
    if (ux != uy)
        return ux < uy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Stable radix sort of v[0, n) by value, a byte at a time from the
 * lowest, skipping the bytes all values share (most: an object's
 * addresses span a few MB).  tmp holds n symbols. */
static void radix_by_value(struct elf_symbol *v, struct elf_symbol *tmp, size_t n)
{
    uint64_t all_or = 0, all_and = ~(uint64_t)0;
    for (size_t i = 0; i < n; i++) {
        all_or |= v[i].value;
        all_and &= v[i].value;
    }
    for (unsigned shift = 0; shift < 64; shift += 8) {
        if ((((all_or ^ all_and) >> shift) & 0xff) == 0)
            continue;   /* the same byte everywhere: no reordering */
        size_t start[257] = {0};
        for (size_t i = 0; i < n; i++)
            start[((v[i].value >> shift) & 0xff) + 1]++;
        for (int b = 0; b < 256; b++)
            start[b + 1] += start[b];
        for (size_t i = 0; i < n; i++)
            tmp[start[(v[i].value >> shift) & 0xff]++] = v[i];
        memcpy(v, tmp, n * sizeof *v);
    }
}

/* One value's symbols by cmp_sym.  Most runs are two or three aliases:
 * an insertion sort, stable, with no call into qsort's merge sort for each
 * (thousands of runs in a libc's symbol table); a long run (the hundreds
 * of symbols at 0 in a debug file) goes to qsort. */
static void sort_aliases(struct elf_symbol *v, size_t n)
{
    if (n > 8) {
        qsort(v, n, sizeof *v, cmp_sym);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        struct elf_symbol x = v[i];
        size_t j = i;
        for (; j > 0 && cmp_sym(&v[j - 1], &x) > 0; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

/* In cmp_sym's order, equal ones as they were (as glibc's merge sort
 * leaves them): by value with a radix sort, then each run of one value
 * by cmp_sym; qsort of the whole, with a call per comparison, cost a
 * small profile's analysis about 20M instructions. */
static void sort_symbols(struct elf_symbol *v, size_t n)
{
    struct elf_symbol *tmp = n > 1 ? malloc(n * sizeof *tmp) : NULL;
    if (!tmp) {
        if (n > 1)
            qsort(v, n, sizeof *v, cmp_sym);
        return;
    }
    radix_by_value(v, tmp, n);
    free(tmp);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && v[j].value == v[i].value; j++)
            ;
        if (j - i > 1)
            sort_aliases(v + i, j - i);
    }
}

static bool is_symbol_table(const GElf_Shdr *sh)
{
    return (sh->sh_type == SHT_SYMTAB || sh->sh_type == SHT_DYNSYM) && sh->sh_entsize != 0;
}

/* How many symbols a table's data holds: its bytes as read, not the size
 * its header claims (a header may claim anything), over a symbol's size. */
static size_t symbol_count(Elf *elf, Elf_Scn *scn, Elf_Data **data)
{
    *data = elf_getdata(scn, NULL);
    if (!*data || !(*data)->d_buf)
        return 0;
    size_t one = gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Sym) : sizeof(Elf64_Sym);
    return (*data)->d_size / one;
}

/* The string table a symbol table names (sh_link), if it is one. */
static Elf_Data *string_table(Elf *elf, const GElf_Shdr *sh)
{
    Elf_Scn *str = elf_getscn(elf, sh->sh_link);
    GElf_Shdr ssh;
    if (!str || !gelf_getshdr(str, &ssh) || ssh.sh_type != SHT_STRTAB)
        return NULL;
    Elf_Data *d = elf_getdata(str, NULL);
    return d && d->d_buf && d->d_size > 0 ? d : NULL;
}

/* A symbol table's string table, copied to dst (obj->strings, after the
 * tables before it) with every '@' made a NUL, so that each name ends
 * where it should be cut: versioned definitions keep "@@GLIBC_2.34" in
 * .symtab names (in debug files), and no C or C++ name contains '@'.
 * (A name that shares its tail with another, as linkers merge strings,
 * still ends at the first '@' after its own start.)  Names then point into
 * the copies: one pass over the symbols, no per-name copy. */
static size_t copy_string_table(Elf *elf, const GElf_Shdr *sh, char *dst, size_t room)
{
    Elf_Data *d = string_table(elf, sh);
    if (!d || d->d_size > room)
        return 0;
    memcpy(dst, d->d_buf, d->d_size);
    for (char *c = dst; (c = memchr(c, '@', d->d_size - (size_t)(c - dst))); c++)
        *c = '\0';
    dst[d->d_size - 1] = '\0';   /* a table that does not end in NUL ends there */
    return d->d_size;
}

/* Append the named symbols of one table (its strings at obj->strings +
 * base, size bytes), obj->syms having room for room in all.  A source
 * file's symbol (STT_FILE, value 0) names no address: skipped, which also
 * spares sorting them (a libc debug file has 1788 of its 10018 symbols so). */
static void add_symbols(struct elf_object *obj, size_t room, Elf *elf, Elf_Scn *scn,
                        const GElf_Shdr *sh, size_t base, size_t size)
{
    if (size == 0)
        return;
    Elf_Data *data;
    size_t n = symbol_count(elf, scn, &data);
    for (size_t i = 1; i < n; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(data, (int)i, &sym) || obj->nsyms == room)
            break;
        if (GELF_ST_TYPE(sym.st_info) == STT_FILE || sym.st_name >= size ||
            obj->strings[base + sym.st_name] == '\0')
            continue;
        struct elf_symbol *s = &obj->syms[obj->nsyms++];
        s->value = sym.st_value;
        s->size = sym.st_size;
        s->name = obj->strings + base + sym.st_name;
        s->type = GELF_ST_TYPE(sym.st_info);
        s->bind = GELF_ST_BIND(sym.st_info);
        s->defined = sym.st_shndx != SHN_UNDEF;
        s->dynamic = sh->sh_type == SHT_DYNSYM;
    }
}

static void read_notes(Elf_Scn *scn, struct elf_object *obj)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data)
        return;
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
            nh.n_descsz <= sizeof obj->build_id) {
            memcpy(obj->build_id, (char *)data->d_buf + desc_off, nh.n_descsz);
            obj->build_id_len = nh.n_descsz;
        }
    }
}

static void read_debuglink(Elf_Scn *scn, struct elf_object *obj)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (obj->debuglink || !data || data->d_size < 8)
        return;     /* the first of several wins (a crafted file may have more) */
    const char *name = data->d_buf;
    size_t len = strnlen(name, data->d_size);
    if (len == 0 || len >= data->d_size)
        return;
    size_t crc_off = (len + 4) & ~(size_t)3;
    if (crc_off + 4 > data->d_size)
        return;
    obj->debuglink = strndup(name, len);
    memcpy(&obj->debuglink_crc, (char *)data->d_buf + crc_off, 4);
}

/* Whether the dynamic section asks the loader to write into text
 * (DT_TEXTREL, or DF_TEXTREL in DT_FLAGS); true when it cannot be read. */
static bool dynamic_textrel(Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *data = elf_getdata(scn, NULL);
    if (!data || sh->sh_entsize == 0)
        return true;
    size_t n = data->d_size / sh->sh_entsize;
    for (size_t i = 0; i < n; i++) {
        GElf_Dyn dyn;
        if (!gelf_getdyn(data, (int)i, &dyn))
            return true;
        if (dyn.d_tag == DT_NULL)
            break;
        if (dyn.d_tag == DT_TEXTREL || (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_TEXTREL)))
            return true;
    }
    return false;
}

static int read_sections(Elf *elf, struct elf_object *obj, struct mp_error *err)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        shstrndx = 0;
    /* Room first: every entry of every symbol table, every string table. */
    size_t nsyms = 0, nbytes = 0;
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        Elf_Data *d, *syms;
        if (gelf_getshdr(scn, &sh) && is_symbol_table(&sh) && (d = string_table(elf, &sh))) {
            nsyms += symbol_count(elf, scn, &syms);
            nbytes += d->d_size;
        }
    }
    obj->syms = calloc(nsyms ? nsyms : 1, sizeof *obj->syms);
    obj->strings = malloc(nbytes ? nbytes : 1);
    if (!obj->syms || !obj->strings)
        return mp_error_set(err, "%s: out of memory reading symbols", obj->path);
    size_t strpos = 0;
    scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        const char *sname = shstrndx ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (is_symbol_table(&sh)) {
            obj->has_symtab |= sh.sh_type == SHT_SYMTAB;
            size_t size = copy_string_table(elf, &sh, obj->strings + strpos, nbytes - strpos);
            add_symbols(obj, nsyms, elf, scn, &sh, strpos, size);
            strpos += size;
        } else if (sh.sh_type == SHT_NOTE) {
            if (!obj->build_id_len)
                read_notes(scn, obj);
        } else if (sh.sh_type == SHT_DYNAMIC) {
            obj->textrel = dynamic_textrel(scn, &sh);
        } else if (sname && strcmp(sname, ".gnu_debuglink") == 0) {
            read_debuglink(scn, obj);
        } else if (sname && sh.sh_type != SHT_NOBITS &&
                   strcmp(sname, ".debug_info") == 0) {
            obj->has_debug_info = true;
        }
    }
    sort_symbols(obj->syms, obj->nsyms);
    return 0;
}

static int read_phdrs(Elf *elf, struct elf_object *obj, struct mp_error *err)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        n = 0;
    obj->loads = calloc(n ? n : 1, sizeof *obj->loads);
    if (!obj->loads)
        return mp_error_set(err, "%s: out of memory", obj->path);
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph))
            continue;
        if (ph.p_type == PT_GNU_EH_FRAME) {
            obj->eh_frame_hdr_vaddr = ph.p_vaddr;
            obj->eh_frame_hdr_size = ph.p_memsz;
        } else if (ph.p_type == PT_GNU_RELRO) {
            obj->relro_vaddr = ph.p_vaddr;
            obj->relro_size = ph.p_memsz;
        } else if (ph.p_type == PT_DYNAMIC) {
            obj->textrel = true;       /* until its section says otherwise */
        }
        if (ph.p_type != PT_LOAD)
            continue;
        struct elf_load_segment *l = &obj->loads[obj->nloads++];
        l->vaddr = ph.p_vaddr;
        l->memsz = ph.p_memsz;
        l->offset = ph.p_offset;
        l->filesz = ph.p_filesz;
        l->flags = ph.p_flags;
    }
    return 0;
}

struct elf_object *elf_object_open_fd(int fd, const char *path, struct mp_error *err)
{
    if (elf_version(EV_CURRENT) == EV_NONE) {
        mp_error_set(err, "libelf is too old");
        return NULL;
    }
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf || elf_kind(elf) != ELF_K_ELF) {
        mp_error_set(err, "%s is not an ELF file", path);
        if (elf)
            elf_end(elf);
        return NULL;
    }
    struct elf_object *obj = calloc(1, sizeof *obj);
    GElf_Ehdr eh;
    if (!obj || !(obj->path = strdup(path)) || !gelf_getehdr(elf, &eh)) {
        mp_error_set(err, "%s: cannot read the ELF header", path);
        goto fail;
    }
    obj->elf_class = gelf_getclass(elf);
    obj->machine = eh.e_machine;
    obj->type = eh.e_type;
    obj->entry = eh.e_entry;
    if (read_phdrs(elf, obj, err) || read_sections(elf, obj, err))
        goto fail;
    elf_end(elf);
    return obj;
fail:
    elf_end(elf);
    elf_object_free(obj);
    return NULL;
}

struct elf_object *elf_object_open(const char *path, struct mp_error *err)
{
    int fd = safe_open_regular(AT_FDCWD, path, false, NULL);
    if (fd < 0) {
        mp_error_set(err, "cannot open %s: %s", path,
                     errno == EINVAL ? "not a regular file" : strerror(errno));
        return NULL;
    }
    struct elf_object *obj = elf_object_open_fd(fd, path, err);
    close(fd);
    return obj;
}

void elf_object_free(struct elf_object *obj)
{
    if (!obj)
        return;
    free(obj->path);
    free(obj->debuglink);
    free(obj->loads);
    free(obj->syms);
    free(obj->strings);
    free(obj);
}

/* Does the PT_LOAD's file range, widened down to its page, hold off? */
static bool load_covers(const struct elf_load_segment *l, uint64_t off)
{
    uint64_t pstart = l->offset & ~(uint64_t)0xfff;
    return off >= pstart && off < l->offset + (l->filesz ? l->filesz : 1);
}

int elf_object_bias(const struct elf_object *obj, uint64_t map_start,
                    uint64_t map_offset, uint64_t *bias)
{
    if (obj->type == ET_EXEC) {
        *bias = 0;
        return 0;
    }
    /* Two PT_LOADs can share a page (text ending and data starting in the
     * same page), so a segment that begins on exactly this page is the one
     * the mapping was made for; else any segment that covers it. */
    const struct elf_load_segment *hit = NULL;
    for (size_t i = 0; i < obj->nloads && !hit; i++)
        if ((obj->loads[i].offset & ~(uint64_t)0xfff) == map_offset)
            hit = &obj->loads[i];
    for (size_t i = 0; i < obj->nloads && !hit; i++)
        if (load_covers(&obj->loads[i], map_offset))
            hit = &obj->loads[i];
    if (!hit)
        return -1;
    *bias = map_start - map_offset - (hit->vaddr - hit->offset);
    return 0;
}

static bool is_code_or_data(const struct elf_symbol *s)
{
    return s->defined && (s->type == STT_FUNC || s->type == STT_OBJECT ||
                          s->type == STT_GNU_IFUNC || s->type == STT_NOTYPE);
}

static bool usable(const struct elf_symbol *s)
{
    return is_code_or_data(s) && s->type != STT_NOTYPE;
}

/* Aliases at one address are sorted best first (cmp_sym), and the lookup
 * walks backwards, so step back to the first alias that also covers. */
static const struct elf_symbol *best_alias(const struct elf_object *obj,
                                           const struct elf_symbol *hit, uint64_t vaddr)
{
    for (const struct elf_symbol *p = hit; p > obj->syms && p[-1].value == hit->value; ) {
        p--;
        if (usable(p) && p->size && vaddr < p->value + p->size)
            hit = p;
    }
    return hit;
}

const struct elf_symbol *elf_object_symbol_at(const struct elf_object *obj,
                                              uint64_t vaddr)
{
    /* Last symbol with value <= vaddr. */
    size_t lo = 0, hi = obj->nsyms;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (obj->syms[mid].value <= vaddr)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct elf_symbol *fallback = NULL;
    /* Walk back over symbols at or below vaddr; a sized symbol that covers
     * vaddr wins; the nearest unsized function is the fallback.  Bounded so
     * that a huge table cannot make one lookup slow. */
    for (size_t i = lo, steps = 0; i > 0 && steps < 64; i--, steps++) {
        const struct elf_symbol *s = &obj->syms[i - 1];
        if (!usable(s))
            continue;
        if (s->size && vaddr < s->value + s->size)
            return best_alias(obj, s, vaddr);
        if (!s->size && s->type == STT_FUNC && !fallback)
            fallback = s;
        if (s->size && !fallback)
            break; /* a sized symbol ending before vaddr: nothing covers it */
    }
    return fallback;
}

const struct elf_symbol *elf_object_symbol_named(const struct elf_object *obj,
                                                 const char *name)
{
    for (size_t i = 0; i < obj->nsyms; i++)
        if (obj->syms[i].defined && strcmp(obj->syms[i].name, name) == 0)
            return &obj->syms[i];
    return NULL;
}

void elf_object_build_id_hex(const struct elf_object *obj, char *buf, size_t buflen)
{
    size_t pos = 0;
    if (buflen)
        buf[0] = '\0';
    for (size_t i = 0; i < obj->build_id_len && pos + 3 <= buflen; i++)
        pos += (size_t)snprintf(buf + pos, buflen - pos, "%02x", obj->build_id[i]);
}

/* Build-id from PT_NOTE segments (cheap: no section or symbol reading),
 * falling back to SHT_NOTE sections for files without program headers
 * (separate debug files keep their notes as sections). */
static size_t note_build_id(Elf_Data *data, uint8_t *out, size_t cap)
{
    size_t off = 0, name_off, desc_off;
    GElf_Nhdr nh;
    while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 &&
            nh.n_descsz <= cap) {
            memcpy(out, (char *)data->d_buf + desc_off, nh.n_descsz);
            return nh.n_descsz;
        }
    }
    return 0;
}

static size_t build_id_from_phdrs(Elf *elf, uint8_t *out, size_t cap)
{
    size_t n;
    if (elf_getphdrnum(elf, &n) != 0)
        return 0;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
            continue;
        Elf_Data *data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
                                              ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
        size_t len = note_build_id(data, out, cap);
        if (len)
            return len;
    }
    return 0;
}

static size_t build_id_from_sections(Elf *elf, uint8_t *out, size_t cap)
{
    Elf_Scn *scn = NULL;
    while ((scn = elf_nextscn(elf, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
            continue;
        size_t len = note_build_id(elf_getdata(scn, NULL), out, cap);
        if (len)
            return len;
    }
    return 0;
}

int elf_object_read_build_id(int fd, uint8_t *out, size_t cap, size_t *len)
{
    *len = 0;
    if (elf_version(EV_CURRENT) == EV_NONE)
        return -1;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    if (!elf)
        return -1;
    if (elf_kind(elf) != ELF_K_ELF) {
        elf_end(elf);
        return -1;
    }
    *len = build_id_from_phdrs(elf, out, cap);
    if (!*len)
        *len = build_id_from_sections(elf, out, cap);
    elf_end(elf);
    return 0;
}

/* The C runtime's functions the toolchain puts into every object
 * (crti/crtn, crtbegin/crtend, crt1): no program code. */
static bool runtime_stub(const char *name)
{
    static const char *const stubs[] = {
        "_init", "_fini", "deregister_tm_clones", "register_tm_clones",
        "__do_global_dtors_aux", "frame_dummy", "_start", "_dl_relocate_static_pie",
        "call_weak_fn", "__libc_csu_init", "__libc_csu_fini",
    };
    for (size_t i = 0; i < sizeof stubs / sizeof stubs[0]; i++)
        if (strcmp(name, stubs[i]) == 0)
            return true;
    return false;
}

/* Executable bytes the stubs take at most (GCC's on x86-64: about 260 with
 * .init, .plt and .fini); beyond them, code of the object's own even when
 * a stripped object names none of it. */
#define RUNTIME_STUB_BYTES 1024u

bool elf_object_has_own_code(const struct elf_object *obj)
{
    uint64_t exec = 0;
    for (size_t i = 0; i < obj->nloads; i++)
        if (obj->loads[i].flags & PF_X)
            exec += obj->loads[i].filesz;
    if (exec == 0)
        return false;
    if (exec > RUNTIME_STUB_BYTES)
        return true;
    for (size_t i = 0; i < obj->nsyms; i++) {
        const struct elf_symbol *s = &obj->syms[i];
        if (s->defined && s->name && (s->type == STT_FUNC || s->type == STT_GNU_IFUNC) &&
            !runtime_stub(s->name))
            return true;
    }
    return false;
}
