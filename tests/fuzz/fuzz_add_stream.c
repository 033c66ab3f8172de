/*
 * fuzz_add_stream.c: libFuzzer target for the reader that cuts `cairn
 * add`'s input into documents while reading it (cli/add_stream.c). The
 * first byte picks a window of 1 to 32 bytes; the rest is the input. The
 * cut must not depend on the window: the same documents, malformed spots
 * (line and column) and end as when the whole input is in one window, and
 * every document is a piece of the input, in order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../cli/add_stream.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct cut {
    int got, type;
    size_t off, n, line, col;
};

/* The cuts of in[0..n) read through a window of `chunk` bytes, into out
 * (at most cap); how many, or -1 if a document is not a piece of the input. */
static int cuts(const char *in, size_t n, size_t chunk, struct cut *out, int cap)
{
    FILE *f = fmemopen((void *)in, n, "rb");
    struct add_stream s;
    int k = 0;
    size_t from = 0;
    if (!f)
        abort();
    add_stream_init(&s, f, chunk, (size_t)1 << 20);
    for (; k < cap; k++) {
        const char *doc = NULL;
        struct cut *c = &out[k];
        memset(c, 0, sizeof c[0]);
        c->got = add_stream_next(&s, &doc, &c->n, &c->type, &c->line, &c->col);
        if (c->got < 0)
            break;
        if (c->got) {
            /* the window moves: find the piece by content, from the last one */
            const char *at = c->n <= n - from ? memmem(in + from, n - from, doc, c->n) : NULL;
            if (!at || c->n == 0) {
                k = -1;
                break;
            }
            c->off = (size_t)(at - in);
            from = c->off + c->n;
        }
    }
    if (s.err)
        abort();        /* fmemopen does not fail to read; no document is 1 MiB */
    add_stream_free(&s);
    fclose(f);
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cut a[256], b[256];
    if (size < 2)
        return 0;
    size_t chunk = 1 + data[0] % 32;
    const char *in = (const char *)data + 1;
    size_t n = size - 1;
    int na = cuts(in, n, chunk, a, 256), nb = cuts(in, n, n + 1, b, 256);
    if (na < 0 || nb < 0 || na != nb)
        abort();
    for (int i = 0; i < na; i++) {
        if (a[i].got != b[i].got || a[i].line != b[i].line)
            abort();
        if (a[i].got ? a[i].type != b[i].type || a[i].n != b[i].n : a[i].col != b[i].col)
            abort();
    }
    return 0;
}
