/*
 * fts.c: FTS5 helpers registered on every connection.
 *
 * cairn_tf(messages_fts) is an auxiliary function that returns, for the
 * current row, how often each phrase of the MATCH expression occurs, as a
 * blob of little-endian uint16 counts (saturating), one per phrase. Recall
 * asks for all query terms in one OR query and then computes BM25 itself
 * at several granularities (a turn, a round, a window of turns), which
 * FTS5's built-in bm25() cannot do.
 *
 * store_fts_register puts it and the tokenizer "cairn" (text/tokenize.c)
 * on a connection: the one statement that reaches the FTS5 API. A handle's
 * connection gets its tap (struct text_fts_tap, h->fts_tap), through which
 * store/keep.c hands the tokens of the message being indexed to the
 * term tiers and the packed postings (tier_keep.c, post.c).
 *
 * messages_fts is an external-content index of messages.content, kept in
 * step by the code that writes messages, in the same transaction, through
 * the functions below (no triggers since schema version 7): an insert adds
 * the row, a rewrite of the text replaces it, a delete removes it first.
 * A trigger would make SQLite open a statement journal and FTS5 flush its
 * pending terms at every message insert (schema.c, version 3).
 */
#include <string.h>

#include "internal.h"
#include "text/tokenize.h"

static void tf_func(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx,
                    int nval, sqlite3_value **val)
{
    unsigned char stack[128], *out = stack;
    int nphrase = api->xPhraseCount(fts), ninst = 0, rc;
    size_t bytes = (size_t)nphrase * 2;
    if (bytes > sizeof stack) {
        out = sqlite3_malloc64(bytes);
        if (!out) {
            sqlite3_result_error_nomem(ctx);
            return;
        }
    }
    memset(out, 0, bytes);
    rc = api->xInstCount(fts, &ninst);
    for (int i = 0; rc == SQLITE_OK && i < ninst; i++) {
        int phrase, col, off;
        rc = api->xInst(fts, i, &phrase, &col, &off);
        if (rc == SQLITE_OK && phrase >= 0 && phrase < nphrase) {
            unsigned v = out[2 * phrase] | (unsigned)out[2 * phrase + 1] << 8;
            if (v < 65535)
                v++;
            out[2 * phrase] = (unsigned char)(v & 0xff);
            out[2 * phrase + 1] = (unsigned char)(v >> 8);
        }
    }
    if (rc != SQLITE_OK)
        sqlite3_result_error_code(ctx, rc);
    else
        sqlite3_result_blob(ctx, out, (int)bytes, SQLITE_TRANSIENT);
    if (out != stack)
        sqlite3_free(out);
}

int store_fts_add(struct cairn *h, sqlite3_stmt **st, int64_t row, const char *text, size_t n)
{
    int rc, src;
    if (!*st && (rc = store_prepare(h, "INSERT INTO messages_fts(rowid, content) VALUES (?, ?)",
                                    st)))
        return rc;
    sqlite3_reset(*st);
    sqlite3_bind_int64(*st, 1, row);
    sqlite3_bind_text(*st, 2, text, (int)n, SQLITE_STATIC);
    src = sqlite3_step(*st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "index message");
}

int store_fts_replace(struct cairn *h, int64_t row, const char *old, size_t on,
                      const char *text, size_t n)
{
    sqlite3_stmt *del = NULL, *add = NULL;
    int rc = store_prepare(h, "INSERT INTO messages_fts(messages_fts, rowid, content) "
                           "VALUES ('delete', ?, ?)", &del);
    if (rc)
        return rc;
    sqlite3_bind_int64(del, 1, row);
    /* a copy: old may point into a row this transaction is rewriting */
    sqlite3_bind_text(del, 2, old, (int)on, SQLITE_TRANSIENT);
    int src = sqlite3_step(del);
    sqlite3_finalize(del);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "unindex message");
    rc = store_fts_add(h, &add, row, text, n);
    sqlite3_finalize(add);
    return rc;
}

int store_fts_register(sqlite3 *db)
{
    return store_fts_register_tap(db, NULL);
}

int store_fts_register_tap(sqlite3 *db, struct text_fts_tap *tap)
{
    fts5_api *api = NULL;
    sqlite3_stmt *st;
    /* the documented way to reach the FTS5 API: a pointer bound to fts5() */
    int src = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, NULL);
    if (src != SQLITE_OK)
        return src;
    sqlite3_bind_pointer(st, 1, (void *)&api, "fts5_api_ptr", NULL);
    src = sqlite3_step(st);
    if (src != SQLITE_ROW && src != SQLITE_DONE) {
        sqlite3_finalize(st);
        return src;
    }
    src = sqlite3_finalize(st);
    if (src != SQLITE_OK || !api || api->iVersion < 2)
        return src ? src : SQLITE_ERROR;
    src = api->xCreateTokenizer(api, "cairn", tap, text_fts_tokenizer(), NULL);
    if (src != SQLITE_OK)
        return src;
    return api->xCreateFunction(api, "cairn_tf", NULL, tf_func, NULL);
}
