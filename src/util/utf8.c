/*
 * utf8.c: see utf8.h.
 */
#include "utf8.h"

size_t utf8_valid_prefix(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    if (n == 0)
        return 0;
    unsigned char c = u[0];
    if (c < 0x80)
        return 1;
    if (c < 0xC2)
        return 0;                      /* continuation byte or overlong lead */
    if (c < 0xE0) {
        if (n < 2 || (u[1] & 0xC0) != 0x80)
            return 0;
        return 2;
    }
    if (c < 0xF0) {
        if (n < 3 || (u[1] & 0xC0) != 0x80 || (u[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && u[1] < 0xA0)
            return 0;                  /* overlong */
        if (c == 0xED && u[1] >= 0xA0)
            return 0;                  /* UTF-16 surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (u[1] & 0xC0) != 0x80 || (u[2] & 0xC0) != 0x80 ||
            (u[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && u[1] < 0x90)
            return 0;                  /* overlong */
        if (c == 0xF4 && u[1] >= 0x90)
            return 0;                  /* past U+10FFFF */
        return 4;
    }
    return 0;
}

int utf8_valid(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if ((unsigned char)s[i] < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_valid_prefix(s + i, n - i);
        if (!k)
            return 0;
        i += k;
    }
    return 1;
}

size_t utf8_decode(const char *s, size_t n, uint32_t *cp)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t k = utf8_valid_prefix(s, n);
    switch (k) {
    case 1: *cp = u[0]; return 1;
    case 2: *cp = ((uint32_t)(u[0] & 0x1F) << 6) | (u[1] & 0x3F); return 2;
    case 3: *cp = ((uint32_t)(u[0] & 0x0F) << 12) | ((uint32_t)(u[1] & 0x3F) << 6) |
                  (u[2] & 0x3F); return 3;
    case 4: *cp = ((uint32_t)(u[0] & 0x07) << 18) | ((uint32_t)(u[1] & 0x3F) << 12) |
                  ((uint32_t)(u[2] & 0x3F) << 6) | (u[3] & 0x3F); return 4;
    default: *cp = 0xFFFD; return 1;
    }
}

size_t utf8_encode(uint32_t cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        if (cp >= 0xD800 && cp <= 0xDFFF)
            cp = 0xFFFD;
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    if (cp > 0x10FFFF)
        return utf8_encode(0xFFFD, out);
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

#include "buf.h"
#include <string.h>

int utf8_clean(const char *s, size_t n)
{
    return memchr(s, 0, n) == NULL && utf8_valid(s, n);
}

int utf8_repair(const char *s, size_t n, struct buf *out)
{
    size_t i = 0;
    while (i < n && !out->err) {
        size_t run = i;
        /* copy runs of good bytes at once */
        while (run < n) {
            unsigned char c = (unsigned char)s[run];
            if (c && c < 0x80) {
                run++;
                continue;
            }
            if (!c)
                break;
            size_t k = utf8_valid_prefix(s + run, n - run);
            if (!k)
                break;
            run += k;
        }
        buf_add(out, s + i, run - i);
        if (run < n) {
            buf_add(out, "\xEF\xBF\xBD", 3);
            run++;
        }
        i = run;
    }
    return out->err;
}

void utf8_line_col(const char *text, size_t off, size_t *line, size_t *col)
{
    size_t l = 1, c = 1;
    for (size_t i = 0; i < off; i++) {
        if (text[i] == '\n') {
            l++;
            c = 1;
        } else if (((unsigned char)text[i] & 0xC0) != 0x80) {
            c++;
        }
    }
    *line = l;
    *col = c;
}
