/*
 * buf.h: a growable byte buffer with a hard size cap.
 *
 * Everything fed by untrusted input (JSON lines, hook stdin, transcripts)
 * goes through a struct buf so a hostile 10 GB line cannot eat the machine:
 * once an append would pass `cap`, the buffer is released and the append
 * fails with BUF_TOOBIG (curl's dynbuf idea). `p` is never NULL after
 * buf_init and is always NUL-terminated, so it can be used as a C string
 * (git's strbuf invariant); `n` is the length without the NUL.
 *
 * Errors are sticky: once an append failed, `err` stays set and later
 * appends are no-ops, so straight-line builders check once at the end.
 */
#ifndef CAIRN_BUF_H
#define CAIRN_BUF_H

#include <stddef.h>
#include <stdarg.h>

#define BUF_OK      0
#define BUF_NOMEM   1
#define BUF_TOOBIG  2

/* Default cap when none is given: 256 MiB. */
#define BUF_DEFAULT_CAP ((size_t)256 << 20)

struct buf {
    char  *p;      /* bytes, NUL-terminated; points at a static "" until first growth */
    size_t n;      /* bytes used, not counting the NUL */
    size_t alloc;  /* bytes allocated (0 while p is the static "") */
    size_t cap;    /* hard limit on n */
    int    err;    /* BUF_OK, or the first error met */
};

extern char buf_empty[1];
#define BUF_INIT { buf_empty, 0, 0, BUF_DEFAULT_CAP, BUF_OK }

void buf_init(struct buf *b, size_t cap);     /* cap 0 means BUF_DEFAULT_CAP */
void buf_release(struct buf *b);              /* frees; b is ready for reuse (empty) */
void buf_reset(struct buf *b);                /* n = 0, keeps memory, clears err */
int  buf_grow(struct buf *b, size_t extra);   /* room for `extra` more bytes */
int  buf_add(struct buf *b, const void *data, size_t len);
int  buf_adds(struct buf *b, const char *s);
int  buf_addc(struct buf *b, char c);
int  buf_printf(struct buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int  buf_vprintf(struct buf *b, const char *fmt, va_list ap);
/* Appends s as a JSON string literal, quotes included. Invalid UTF-8 bytes
 * become U+FFFD so the output is always valid JSON. */
int  buf_add_json_str(struct buf *b, const char *s, size_t len);
/* Takes the bytes out: returns p (caller frees with free()), leaves b empty.
 * Returns NULL if b->err is set or on allocation failure. */
char *buf_detach(struct buf *b, size_t *len);
void buf_truncate(struct buf *b, size_t n);

#endif
