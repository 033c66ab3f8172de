/*
 * common.c: see common.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "embed/common.h"
#include "util/buf.h"

void embed_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

char *embed_read_file(const char *dir, const char *name, size_t cap, size_t *len,
                      int *missing, char *err, size_t errlen)
{
    struct buf b = BUF_INIT;
    char path[PATH_MAX], chunk[65536];
    size_t n;
    FILE *f;

    if (missing)
        *missing = 0;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
        embed_errf(err, errlen, "path too long");
        return NULL;
    }
    f = fopen(path, "rb");
    if (!f) {
        if (missing)
            *missing = errno == ENOENT;
        embed_errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    buf_init(&b, cap);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_add(&b, chunk, n) != BUF_OK)
            break;
    if (ferror(f) || b.err) {
        embed_errf(err, errlen, "%s: %s", path, b.err ? "file too large" : "read error");
        fclose(f);
        buf_release(&b);
        return NULL;
    }
    fclose(f);
    if (len)
        *len = b.n;
    return buf_detach(&b, NULL);
}
