/* dwarf_sections.c - a debug file's sections as libdw gets them: the ones
 * no lookup reads hidden, a compressed .debug_info inflated lazily, as far
 * as the units asked for (dwarf_sections.h says why).
 *
 * The inflated text goes to one buffer of the section's full size, made
 * at once (the pages never written are never touched, so they cost no
 * memory) so that it never moves; libdw sees its first `ready` bytes
 * through the section's Elf_Data. */
#include "lib/symbolize/dwarf_sections.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Inflate at least this much more each time, so that a walk through many
 * units reopens libdw a few times, not once per unit. */
#define MIN_STEP (64u << 10)

struct dwarf_sections {
    Elf_Data *data;          /* what libdw reads: d_buf = text, d_size = ready */
    unsigned char *text;     /* the section inflated, size bytes once whole */
    uint64_t size, ready;
    z_stream z;
    bool broken;             /* the stream failed: ready is all there is */
};

/* Sections a lookup never reads: libdw would inflate them for nothing. */
static bool unread_section(const char *name)
{
    static const char *const unread[] = {
        ".debug_loc", ".debug_loclists", ".debug_macro", ".debug_macinfo",
    };
    for (size_t i = 0; i < sizeof unread / sizeof unread[0]; i++)
        if (strcmp(name, unread[i]) == 0)
            return true;
    return false;
}

static void hide_section(Elf_Scn *scn, GElf_Shdr *sh)
{
    sh->sh_type = SHT_NOBITS;   /* libdw skips these */
    gelf_update_shdr(scn, sh);
}

/* The compressed payload of scn (after its Chdr) and its inflated size. */
static bool zlib_payload(Elf *elf, Elf_Scn *scn, const unsigned char **in,
                         size_t *inlen, uint64_t *size)
{
    GElf_Chdr ch;
    Elf_Data *raw = elf_rawdata(scn, NULL);
    size_t hdr = gelf_getclass(elf) == ELFCLASS32 ? sizeof(Elf32_Chdr) : sizeof(Elf64_Chdr);
    if (!raw || !raw->d_buf || raw->d_size < hdr || !gelf_getchdr(scn, &ch) ||
        ch.ch_type != ELFCOMPRESS_ZLIB || ch.ch_size == 0 || ch.ch_size > SIZE_MAX / 2)
        return false;
    *in = (const unsigned char *)raw->d_buf + hdr;
    *inlen = raw->d_size - hdr;
    *size = ch.ch_size;
    return *inlen <= UINT32_MAX;
}

static int inflate_to(struct dwarf_sections *s, uint64_t end);

/* Take over scn: libdw will read our buffer, with no SHF_COMPRESSED. */
static struct dwarf_sections *take_info(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh)
{
    const unsigned char *in;
    size_t inlen;
    uint64_t size;
    if (!zlib_payload(elf, scn, &in, &inlen, &size))
        return NULL;
    struct dwarf_sections *s = calloc(1, sizeof *s);
    if (!s || !(s->text = malloc(size)) || inflateInit(&s->z) != Z_OK) {
        if (s)
            free(s->text);
        free(s);
        return NULL;
    }
    s->size = size;
    s->z.next_in = (unsigned char *)in;
    s->z.avail_in = (uInt)inlen;
    s->data = elf_getdata(scn, NULL);
    if (!s->data) {
        dwarf_sections_free(s);
        return NULL;
    }
    s->data->d_buf = s->text;
    s->data->d_size = 0;
    s->data->d_type = ELF_T_BYTE;
    sh->sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
    sh->sh_size = size;
    gelf_update_shdr(scn, sh);
    /* Never empty: libdw treats an empty .debug_info as none at all. */
    inflate_to(s, 1);
    return s;
}

struct dwarf_sections *dwarf_sections_prepare(Elf *elf)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    struct dwarf_sections *info = NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
            !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
            continue;
        if (unread_section(name))
            hide_section(scn, &sh);
        else if (!info && strcmp(name, ".debug_info") == 0 && (sh.sh_flags & SHF_COMPRESSED))
            info = take_info(elf, scn, &sh);
    }
    return info;
}

const unsigned char *dwarf_sections_bytes(Elf *elf, const char *name, size_t *len)
{
    size_t shstrndx;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *n;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
            !(n = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(n, name) != 0)
            continue;
        if ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
            return NULL;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf)
            return NULL;
        *len = data->d_size;
        return data->d_buf;
    }
    return NULL;
}

void dwarf_sections_free(struct dwarf_sections *s)
{
    if (!s)
        return;
    inflateEnd(&s->z);
    free(s->text);
    free(s);
}

/* Inflate until at least end bytes are ready (or the section is whole). */
static int inflate_to(struct dwarf_sections *s, uint64_t end)
{
    if (end > s->size)
        end = s->size;
    if (s->ready >= end)
        return 0;
    if (s->broken)
        return -1;
    uint64_t step = s->ready > MIN_STEP ? s->ready : MIN_STEP;
    uint64_t target = end - s->ready < step ? s->ready + step : end;
    if (target > s->size)
        target = s->size;
    int rc = Z_OK;
    while (s->ready < target && rc == Z_OK) {
        uint64_t want = target - s->ready;
        s->z.next_out = s->text + s->ready;
        s->z.avail_out = want > UINT32_MAX ? UINT32_MAX : (uInt)want;
        uInt before = s->z.avail_out;
        rc = inflate(&s->z, Z_SYNC_FLUSH);
        s->ready += before - s->z.avail_out;
        if (rc == Z_BUF_ERROR && s->z.avail_out == 0)
            rc = Z_OK;
    }
    s->data->d_size = s->ready;
    if (s->ready < end) {
        s->broken = true;     /* ended early or corrupt */
        return -1;
    }
    return 1;
}

/* A unit's length field: 4 bytes, or 0xffffffff and 8 more (DWARF64). */
static int unit_end(struct dwarf_sections *s, uint64_t off, uint64_t *end)
{
    if (off > s->size - 4 || inflate_to(s, off + 12) < 0)
        return -1;
    uint32_t len32;
    memcpy(&len32, s->text + off, 4);
    if (len32 < 0xfffffff0u) {
        *end = off + 4 + len32;
        return 0;
    }
    uint64_t len64;
    if (len32 != 0xffffffffu || off > s->size - 12)
        return -1;
    memcpy(&len64, s->text + off + 4, 8);
    if (len64 > s->size)
        return -1;
    *end = off + 12 + len64;
    return 0;
}

int dwarf_sections_need_unit(struct dwarf_sections *s, uint64_t off)
{
    uint64_t before = s->ready, end;
    if (s->size < 4 || off >= s->size || unit_end(s, off, &end) || end > s->size ||
        inflate_to(s, end) < 0)
        return -1;
    return s->ready > before;
}

int dwarf_sections_need_all(struct dwarf_sections *s)
{
    uint64_t before = s->ready;
    if (inflate_to(s, s->size) < 0)
        return -1;
    return s->ready > before;
}

bool dwarf_sections_whole(const struct dwarf_sections *s)
{
    return s->ready == s->size || s->broken;
}
