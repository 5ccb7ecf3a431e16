/* text_escape.c - escaping target strings for the terminal and for
 * markup (see lib/base/text_escape.h). */
#include "lib/base/text_escape.h"

#include <string.h>

/* Length of the valid, printable UTF-8 character at c (1..4), or 0 when
 * the byte must be escaped: a C0 control or DEL, a C1 control (U+0080..
 * U+009F: 8-bit CSI and OSC on some terminals), an invalid, overlong or
 * truncated sequence, a surrogate or a code point beyond U+10FFFF. */
static size_t safe_char_len(const unsigned char *c)
{
    if (c[0] < 0x20 || c[0] == 0x7f)
        return 0;
    if (c[0] < 0x80)
        return 1;
    size_t len;
    unsigned cp;
    if (c[0] >= 0xc2 && c[0] <= 0xdf) {
        len = 2;
        cp = c[0] & 0x1f;
    } else if (c[0] >= 0xe0 && c[0] <= 0xef) {
        len = 3;
        cp = c[0] & 0x0f;
    } else if (c[0] >= 0xf0 && c[0] <= 0xf4) {
        len = 4;
        cp = c[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((c[i] & 0xc0) != 0x80)   /* also stops at the NUL */
            return 0;
        cp = cp << 6 | (c[i] & 0x3f);
    }
    static const unsigned min_for_len[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (cp < min_for_len[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) ||
        (cp >= 0x80 && cp <= 0x9f))
        return 0;
    return len;
}

bool text_is_safe(const char *s)
{
    const unsigned char *c = (const unsigned char *)s;
    while (*c) {
        size_t n = safe_char_len(c);
        if (!n)
            return false;
        c += n;
    }
    return true;
}

static const char hex[] = "0123456789abcdef";

const char *text_escape(const char *s, char *buf, size_t cap)
{
    if (!s || text_is_safe(s) || cap == 0)
        return s;
    static const char more[] = "...";
    size_t used = 0;
    const unsigned char *c = (const unsigned char *)s;
    while (*c) {
        size_t n = safe_char_len(c);
        size_t need = n ? n : 4;
        /* Room for this piece, and for "..." should a later one not fit. */
        if (used + need + sizeof more > cap) {
            if (used + sizeof more <= cap) {
                memcpy(buf + used, more, sizeof more - 1);
                used += sizeof more - 1;
            }
            break;
        }
        if (n) {
            memcpy(buf + used, c, n);
            c += n;
        } else {
            buf[used] = '\\';
            buf[used + 1] = 'x';
            buf[used + 2] = hex[*c >> 4];
            buf[used + 3] = hex[*c & 15];
            c++;
        }
        used += need;
    }
    buf[used < cap ? used : cap - 1] = 0;
    return buf;
}

void text_escape_put(FILE *out, const char *s)
{
    const unsigned char *c = (const unsigned char *)s;
    while (*c) {
        size_t n = safe_char_len(c);
        if (n) {
            fwrite(c, 1, n, out);
            c += n;
        } else {
            fprintf(out, "\\x%02x", *c++);
        }
    }
}

size_t text_markup_chars(const char *s)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; n++) {
        size_t len = safe_char_len(c);
        c += len ? len : 1;
    }
    return n;
}

void text_markup_put(FILE *out, const char *s, size_t max)
{
    size_t total = text_markup_chars(s), keep = total <= max ? total : max >= 2 ? max - 2 : 0;
    const unsigned char *c = (const unsigned char *)s;
    for (size_t i = 0; i < keep; i++) {
        size_t len = safe_char_len(c);
        switch (len == 1 ? *c : 0) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            if (len == 0)
                putc('?', out);
            else
                fwrite(c, 1, len, out);
        }
        c += len ? len : 1;
    }
    if (keep < total)
        fputs("..", out);
}
