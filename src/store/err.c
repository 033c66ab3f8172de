/*
 * err.c: the error plumbing: a code returned, a message kept on the
 * handle (cairn_errmsg). In the store layer because the store and every
 * layer above it (capture, recall, api) report through it, and calls go
 * only downward (docs/ARCHITECTURE.md, "Layers").
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

const char *cairn_errstr(int rc)
{
    switch (rc) {
    case CAIRN_OK:              return "ok";
    case CAIRN_ERROR:           return "error";
    case CAIRN_NOMEM:           return "out of memory";
    case CAIRN_INVALID:         return "invalid input";
    case CAIRN_NOTFOUND:        return "not found";
    case CAIRN_BUSY:            return "store is locked";
    case CAIRN_CORRUPT:         return "store is corrupt or not a cairn store";
    case CAIRN_IO:              return "I/O error";
    case CAIRN_TOOBIG:          return "input too large";
    case CAIRN_VERSION_TOO_NEW: return "store written by a newer cairn";
    case CAIRN_SCRUB_PENDING:   return "committed, but old bytes remain in the WAL";
    }
    return "unknown error";
}

int cairn__err(struct cairn *h, int rc, const char *fmt, ...)
{
    va_list ap;
    if (!h)
        return rc;
    va_start(ap, fmt);
    vsnprintf(h->errmsg, sizeof h->errmsg, fmt, ap);
    va_end(ap);
    return rc;
}

int cairn__opts(struct cairn *h, void *out, size_t out_size, const void *in, size_t min_size,
                const char *what)
{
    size_t n;
    if (!in)
        return CAIRN_OK;
    memcpy(&n, in, sizeof n);
    /* 0 is a struct that was zeroed instead of set from its *_INIT macro */
    if (n < min_size || n > out_size)
        return cairn__err(h, CAIRN_INVALID,
                          "%s: size %zu is not one this library knows (%zu); start from the "
                          "*_INIT macro", what, n, out_size);
    memcpy(out, in, n);
    return CAIRN_OK;
}

int cairn__sqlerr(struct cairn *h, int src, const char *what)
{
    int rc;
    switch (src & 0xff) {
    case SQLITE_NOMEM:   rc = CAIRN_NOMEM; break;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:  rc = CAIRN_BUSY; break;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:  rc = CAIRN_CORRUPT; break;
    case SQLITE_CANTOPEN:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_READONLY:
    case SQLITE_PERM:    rc = CAIRN_IO; break;
    case SQLITE_TOOBIG:  rc = CAIRN_TOOBIG; break;
    default:             rc = CAIRN_ERROR;
    }
    const char *m = h && h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(src);
    return cairn__err(h, rc, "%s: %s", what, m);
}

const char *cairn_errmsg(const struct cairn *db)
{
    return db ? db->errmsg : "out of memory";
}
