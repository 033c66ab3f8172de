/*
 * buf.c: the capped growable buffer (see buf.h).
 */
#include "buf.h"
#include "utf8.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char buf_empty[1];

void buf_init(struct buf *b, size_t cap)
{
    b->p = buf_empty;
    b->n = 0;
    b->alloc = 0;
    b->cap = cap ? cap : BUF_DEFAULT_CAP;
    b->err = BUF_OK;
}

void buf_release(struct buf *b)
{
    if (b->alloc)
        free(b->p);
    b->p = buf_empty;
    b->n = 0;
    b->alloc = 0;
    b->err = BUF_OK;
}

void buf_reset(struct buf *b)
{
    b->n = 0;
    if (b->alloc)
        b->p[0] = '\0';
    b->err = BUF_OK;
}

static int fail(struct buf *b, int err)
{
    /* Like dynbuf: a buffer that grew too big is freed at once, so a
     * hostile input does not keep its memory while the caller unwinds. */
    size_t cap = b->cap;
    buf_release(b);
    b->cap = cap;
    b->err = err;
    return err;
}

int buf_grow(struct buf *b, size_t extra)
{
    if (b->err)
        return b->err;
    if (extra > b->cap || b->n > b->cap - extra)
        return fail(b, BUF_TOOBIG);
    size_t need = b->n + extra + 1;
    if (need <= b->alloc)
        return BUF_OK;
    size_t na = b->alloc ? b->alloc : 64;
    while (na < need)
        na = na > ((size_t)-1) / 2 ? need : na * 2;
    if (na > b->cap + 1)
        na = b->cap + 1;
    char *np = b->alloc ? realloc(b->p, na) : malloc(na);
    if (!np)
        return fail(b, BUF_NOMEM);
    if (!b->alloc)
        np[0] = '\0';
    b->p = np;
    b->alloc = na;
    return BUF_OK;
}

int buf_add(struct buf *b, const void *data, size_t len)
{
    if (buf_grow(b, len))
        return b->err;
    if (len)
        memcpy(b->p + b->n, data, len);
    b->n += len;
    b->p[b->n] = '\0';
    return BUF_OK;
}

int buf_adds(struct buf *b, const char *s)
{
    return buf_add(b, s, strlen(s));
}

int buf_addc(struct buf *b, char c)
{
    return buf_add(b, &c, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
    va_list cp;
    if (b->err)
        return b->err;
    va_copy(cp, ap);
    int len = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (len < 0)
        return fail(b, BUF_NOMEM);
    if (buf_grow(b, (size_t)len))
        return b->err;
    vsnprintf(b->p + b->n, (size_t)len + 1, fmt, ap);
    b->n += (size_t)len;
    return BUF_OK;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = buf_vprintf(b, fmt, ap);
    va_end(ap);
    return rc;
}

int buf_add_json_str(struct buf *b, const char *s, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    buf_addc(b, '"');
    while (i < len && !b->err) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t k = utf8_valid_prefix(s + i, len - i);
            if (k == 0) {
                buf_adds(b, "\xEF\xBF\xBD");
                i++;
            } else {
                buf_add(b, s + i, k);
                i += k;
            }
            continue;
        }
        switch (c) {
        case '"':  buf_adds(b, "\\\""); break;
        case '\\': buf_adds(b, "\\\\"); break;
        case '\n': buf_adds(b, "\\n"); break;
        case '\r': buf_adds(b, "\\r"); break;
        case '\t': buf_adds(b, "\\t"); break;
        default:
            if (c < 0x20) {
                char e[6] = { '\\', 'u', '0', '0', hex[c >> 4], hex[c & 15] };
                buf_add(b, e, 6);
            } else {
                buf_addc(b, (char)c);
            }
        }
        i++;
    }
    buf_addc(b, '"');
    return b->err;
}

char *buf_detach(struct buf *b, size_t *len)
{
    char *p;
    if (b->err)
        return NULL;
    if (!b->alloc) {
        p = malloc(1);
        if (!p)
            return NULL;
        p[0] = '\0';
    } else {
        p = b->p;
    }
    if (len)
        *len = b->n;
    b->p = buf_empty;
    b->n = 0;
    b->alloc = 0;
    return p;
}

void buf_truncate(struct buf *b, size_t n)
{
    if (n < b->n) {
        b->n = n;
        b->p[n] = '\0';
    }
}
