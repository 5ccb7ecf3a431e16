/* dwarf_sections.c - a debug file's sections as libdw gets them: the ones
 * no lookup reads hidden, a compressed .debug_info, .debug_abbrev and
 * .debug_line inflated lazily, as far as the units asked for, the other
 * compressed .debug_* sections inflated whole by memprof with libdeflate
 * (dwarf_sections.h says why).
 *
 * Two inflaters: zlib's can stop anywhere and go on later, which the lazy
 * sections need; libdeflate's inflates only a whole stream, 2.6 times as
 * fast (355-457 MB/s against 136-177 MB/s on Debian's libc6-dbg and ld.so
 * debug files, measured on a 2-core VM).  So a section read whole is
 * inflated by libdeflate, and so is a lazy one once a lookup needs more of
 * it than zlib could inflate in the same time (WHOLE_FRACTION).
 *
 * Each inflated text goes to one buffer of the section's full size, made
 * at once (the pages never written are never touched, so they cost no
 * memory) so that it never moves; libdw sees its first `ready` bytes
 * through the section's Elf_Data. */
#include "lib/symbolize/dwarf_sections.h"
#include "lib/symbolize/abbrev_end.h"

#include <gelf.h>
#include <libdeflate.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Inflate at least this much more each time, and an eighth more of what
 * is ready, so that a walk through many units reopens libdw a few times,
 * not once per unit, without inflating much past the last unit asked for. */
#define MIN_STEP (16u << 10)

/* A lazy section is inflated whole (libdeflate) rather than on (zlib) when
 * more than 2/5 of it would have to be inflated by zlib: libdeflate is
 * 2.6 times as fast. */
#define WHOLE_FRACTION_NUM 2
#define WHOLE_FRACTION_DEN 5

/* The most deflate makes of one byte (zlib_payload). */
#define DEFLATE_MAX_RATIO 1032

/* One compressed section taken over: .debug_info, .debug_abbrev or
 * .debug_line.  data is NULL for a section left to libdw (absent, or not
 * compressed). */
struct lazy_section {
    Elf_Data *data;          /* what libdw reads: d_buf = text, d_size = ready */
    unsigned char *text;     /* the section inflated, size bytes once whole */
    uint64_t size, ready;
    const unsigned char *in; /* the raw deflate stream (in the file's mapping) */
    size_t inlen;
    z_stream z;
    bool broken;             /* the stream failed: ready is all there is */
    bool whole_failed;       /* libdeflate refused the stream: zlib only */
};

struct dwarf_sections {
    struct lazy_section info, abbrev, line;
    unsigned char **whole;   /* the texts of the sections inflated whole */
    size_t nwhole;
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

/* The zlib header of a stream (RFC 1950): deflate with at most a 32 KiB
 * window, no preset dictionary, the header's own check. */
static bool zlib_header_ok(const unsigned char *h, size_t len)
{
    return len >= 2 && (h[0] & 0x0f) == 8 && (h[0] >> 4) <= 7 && !(h[1] & 0x20) &&
           ((unsigned)h[0] << 8 | h[1]) % 31 == 0;
}

/* The compressed payload of scn (after its Chdr and the zlib header: it is
 * inflated raw, without the Adler-32 of everything inflated that zlib
 * would compute and check only at the stream's end, which a lazy section
 * seldom reaches: 5% of a small profile's analysis) and its inflated
 * size. */
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
    if (!zlib_header_ok(*in, *inlen))
        return false;
    *in += 2;
    *inlen -= 2;
    /* Deflate inflates at most 1032 bytes per byte (a length-258 match in
     * two bits): a header claiming more is not believed, nor allocated. */
    return *inlen <= UINT32_MAX && *size / DEFLATE_MAX_RATIO <= *inlen;
}

static int inflate_to(struct lazy_section *s, uint64_t end);
static void lazy_free(struct lazy_section *s);

/* The raw deflate stream in of inlen bytes into out, which it must fill
 * exactly (size bytes). */
static bool inflate_whole(const unsigned char *in, size_t inlen, unsigned char *out,
                          uint64_t size)
{
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    size_t got = 0;
    bool ok = d && libdeflate_deflate_decompress(d, in, inlen, out, size, &got) ==
                   LIBDEFLATE_SUCCESS && got == size;
    libdeflate_free_decompressor(d);
    return ok;
}

/* Take over scn into *s (zeroed): libdw will read our buffer, with no
 * SHF_COMPRESSED.  False (and *s still zeroed) when it cannot be. */
static bool take_section(Elf *elf, Elf_Scn *scn, struct lazy_section *s)
{
    GElf_Shdr sh;
    const unsigned char *in;
    size_t inlen;
    uint64_t size;
    Elf_Data *data;
    if (!gelf_getshdr(scn, &sh) || !zlib_payload(elf, scn, &in, &inlen, &size) ||
        !(s->text = malloc(size)))
        return false;
    /* in place: zlib's state points back at its z_stream */
    if (inflateInit2(&s->z, -MAX_WBITS) != Z_OK || !(data = elf_getdata(scn, NULL))) {
        inflateEnd(&s->z);
        free(s->text);
        *s = (struct lazy_section){0};
        return false;
    }
    s->data = data;
    s->size = size;
    s->in = in;
    s->inlen = inlen;
    s->z.next_in = (unsigned char *)in;
    s->z.avail_in = (uInt)inlen;
    s->data->d_buf = s->text;
    s->data->d_size = 0;
    s->data->d_type = ELF_T_BYTE;
    sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
    sh.sh_size = size;
    gelf_update_shdr(scn, &sh);
    /* Never empty: libdw treats an empty .debug_info as none at all. */
    inflate_to(s, 1);
    return true;
}

/* Inflate scn whole into a buffer of s's and show libdw that, with no
 * SHF_COMPRESSED; when it cannot be (a corrupt stream, no memory), the
 * section is left as it was, for libdw to read or refuse. */
static void take_whole(struct dwarf_sections *s, Elf *elf, Elf_Scn *scn)
{
    GElf_Shdr sh;
    const unsigned char *in;
    size_t inlen;
    uint64_t size;
    Elf_Data *data;
    unsigned char *text, **more;
    if (!gelf_getshdr(scn, &sh) || !zlib_payload(elf, scn, &in, &inlen, &size))
        return;
    if (!(more = realloc(s->whole, (s->nwhole + 1) * sizeof *more)))
        return;
    s->whole = more;
    if (!(text = malloc(size)))
        return;
    if (!inflate_whole(in, inlen, text, size) || !(data = elf_getdata(scn, NULL))) {
        free(text);
        return;
    }
    s->whole[s->nwhole++] = text;
    data->d_buf = text;
    data->d_size = size;
    data->d_type = ELF_T_BYTE;
    sh.sh_flags &= ~(GElf_Xword)SHF_COMPRESSED;
    sh.sh_size = size;
    gelf_update_shdr(scn, &sh);
}

/* Which of the three lazy sections name is: 0 info, 1 abbrev, 2 line, -1
 * none. */
static int lazy_index(const char *name)
{
    static const char *const lazy[] = {".debug_info", ".debug_abbrev", ".debug_line"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, lazy[i]) == 0)
            return i;
    return -1;
}

struct dwarf_sections *dwarf_sections_prepare(Elf *elf)
{
    size_t shstrndx;
    Elf_Scn *compressed[3] = {NULL, NULL, NULL};   /* info, abbrev, line */
    Elf_Scn *others[16];                           /* the other compressed .debug_* */
    size_t nothers = 0;
    if (elf_getshdrstrndx(elf, &shstrndx) != 0)
        return NULL;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name;
        int i;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
            !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
            continue;
        if (unread_section(name))
            hide_section(scn, &sh);
        else if (!(sh.sh_flags & SHF_COMPRESSED))
            continue;
        else if ((i = lazy_index(name)) >= 0)
            compressed[i] = compressed[i] ? compressed[i] : scn;
        else if (strncmp(name, ".debug_", 7) == 0 && nothers < sizeof others / sizeof others[0])
            others[nothers++] = scn;
    }
    /* abbrev and line only with info: lookups are confined by units */
    struct dwarf_sections *s = compressed[0] ? calloc(1, sizeof *s) : NULL;
    if (!s)
        return NULL;
    if (!take_section(elf, compressed[0], &s->info)) {
        free(s);
        return NULL;
    }
    if (compressed[1])
        take_section(elf, compressed[1], &s->abbrev);
    if (compressed[2])
        take_section(elf, compressed[2], &s->line);
    for (size_t k = 0; k < nothers; k++)
        take_whole(s, elf, others[k]);
    return s;
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

/* A taken-over section's buffer and stream (libdw is done with them). */
static void lazy_free(struct lazy_section *s)
{
    if (!s->data)
        return;
    inflateEnd(&s->z);
    free(s->text);
}

void dwarf_sections_free(struct dwarf_sections *s)
{
    if (!s)
        return;
    lazy_free(&s->info);
    lazy_free(&s->abbrev);
    lazy_free(&s->line);
    for (size_t k = 0; k < s->nwhole; k++)
        free(s->whole[k]);
    free(s->whole);
    free(s);
}

/* Inflate until at least end bytes are ready (or the section is whole). */
static int inflate_to(struct lazy_section *s, uint64_t end)
{
    if (!s->data)
        return 0;   /* libdw's own: whole */
    if (end > s->size)
        end = s->size;
    if (s->ready >= end)
        return 0;
    if (s->broken)
        return -1;
    /* From the stream's start: the bytes already ready are written again,
     * the same (one stream has one inflation), also when libdeflate stops
     * short (a header claiming more than the stream holds) and zlib then
     * goes on from where it was. */
    if (!s->whole_failed && (end - s->ready) * WHOLE_FRACTION_DEN > s->size * WHOLE_FRACTION_NUM) {
        if (inflate_whole(s->in, s->inlen, s->text, s->size)) {
            s->ready = s->data->d_size = s->size;
            return 1;
        }
        s->whole_failed = true;
    }
    uint64_t step = s->ready / 8 > MIN_STEP ? s->ready / 8 : MIN_STEP;
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

/* A unit's length field at off: 4 bytes, or 0xffffffff and 8 more
 * (DWARF64).  *end is where the unit ends, *offset_size 4 or 8. */
static int unit_end(struct lazy_section *s, uint64_t off, uint64_t *end, int *offset_size)
{
    if (s->size < 4 || off > s->size - 4 || inflate_to(s, off + 12) < 0)
        return -1;
    uint32_t len32;
    memcpy(&len32, s->text + off, 4);
    *offset_size = 4;
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
    *offset_size = 8;
    return 0;
}

/* Make the whole unit (length-prefixed) at off readable. */
static int need_unit(struct lazy_section *s, uint64_t off, int *offset_size)
{
    uint64_t end;
    if (!s->data)
        return 0;
    if (off >= s->size || unit_end(s, off, &end, offset_size) || end > s->size)
        return -1;
    return inflate_to(s, end) < 0 ? -1 : 0;
}

/* The .debug_abbrev offset in the header of the unit at off (whose first
 * 24 bytes are readable): after the version in DWARF 2 to 4, after the
 * unit type and address size in DWARF 5. */
static int abbrev_offset(const struct lazy_section *info, uint64_t off, int offset_size,
                         uint64_t *abbrev)
{
    uint64_t pos = off + (offset_size == 8 ? 12 : 4);
    uint16_t version;
    if (pos + 2 > info->ready)
        return -1;
    memcpy(&version, info->text + pos, 2);
    pos += version >= 5 ? 4 : 2;
    if (pos + (uint64_t)offset_size > info->ready)
        return -1;
    uint32_t off32;
    if (offset_size == 8)
        memcpy(abbrev, info->text + pos, 8);
    else {
        memcpy(&off32, info->text + pos, 4);
        *abbrev = off32;
    }
    return 0;
}

/* Make the abbreviation table at off readable, inflating until its end
 * has been seen. */
static int need_abbrev(struct lazy_section *s, uint64_t off)
{
    if (!s->data)
        return 0;
    for (;;) {
        size_t end;
        int rc = off < s->ready ? abbrev_table_end(s->text, s->ready, off, &end) : 1;
        if (rc <= 0)
            return rc;
        /* at least up to the table's start: one step when it lies far in */
        if (s->ready == s->size || inflate_to(s, (off > s->ready ? off : s->ready) + 1) < 0)
            return -1;
    }
}

static uint64_t ready_sum(const struct dwarf_sections *s)
{
    return s->info.ready + s->abbrev.ready + s->line.ready;
}

int dwarf_sections_need_unit(struct dwarf_sections *s, uint64_t off)
{
    uint64_t before = ready_sum(s), abbrev;
    int offset_size;
    if (need_unit(&s->info, off, &offset_size) ||
        abbrev_offset(&s->info, off, offset_size, &abbrev) || need_abbrev(&s->abbrev, abbrev))
        return -1;
    return ready_sum(s) > before;
}

int dwarf_sections_need_line(struct dwarf_sections *s, uint64_t off)
{
    uint64_t before = ready_sum(s);
    int offset_size;
    if (need_unit(&s->line, off, &offset_size))
        return -1;
    return ready_sum(s) > before;
}

int dwarf_sections_need_all(struct dwarf_sections *s)
{
    uint64_t before = ready_sum(s);
    if (inflate_to(&s->info, s->info.size) < 0 || inflate_to(&s->abbrev, s->abbrev.size) < 0 ||
        inflate_to(&s->line, s->line.size) < 0)
        return -1;
    return ready_sum(s) > before;
}

static bool lazy_whole(const struct lazy_section *s)
{
    return !s->data || s->ready == s->size || s->broken;
}

bool dwarf_sections_whole(const struct dwarf_sections *s)
{
    return lazy_whole(&s->info) && lazy_whole(&s->abbrev) && lazy_whole(&s->line);
}
