/*
 * units.c: a session's units written beside its packed turns
 * (session_units, schema 30; store/units.h; the row's format and its
 * packer are in turns.c, beside the turns' own varints).
 *
 * Written wherever session_turns is: ingest.c after its append (from the
 * row as it now is), store_turns_fill (schema.c) for each session it packs,
 * and the migration to 30 for every session (store_units_fill). The
 * triggers that drop a session's packed turns when one of its messages is
 * deleted or rewritten drop its row too (none on session_turns itself: a
 * statement firing one opens a savepoint, where FTS5 flushes its pending
 * terms; schema.c); a row is used only with the reader's rule and the
 * packed turns' count (test_session_units checks every write path).
 */
#include "internal.h"
#include "store/recall_read.h"
#include "store/units.h"
#include "util/buf.h"

int store_units_write(struct cairn *h, sqlite3_stmt *ins, int64_t sess, const char *turns,
                      size_t len, int64_t n, struct buf *b)
{
    buf_reset(b);
    if (store_units_pack(b, turns, len, n)) {
        if (b->err)
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        return CAIRN_OK;            /* turns that do not read: no row, turns read instead */
    }
    sqlite3_reset(ins);
    sqlite3_bind_int64(ins, 1, sess);
    sqlite3_bind_int64(ins, 2, n);
    sqlite3_bind_int(ins, 3, STORE_UNITS_RULE);
    sqlite3_bind_blob(ins, 4, b->p, (int)b->n, SQLITE_STATIC);
    int src = sqlite3_step(ins);
    sqlite3_reset(ins);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "session units");
}

int store_units_fill(struct cairn *h, int64_t sess)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    struct buf b = BUF_INIT;
    int rc, src;
    if ((rc = store_prepare(h, sess >= 0
                            ? "SELECT session, n, turns FROM session_turns WHERE session = ?1"
                            : "SELECT t.session, t.n, t.turns FROM session_turns t WHERE NOT "
                              "EXISTS (SELECT 1 FROM session_units u WHERE u.session = "
                              "t.session AND u.rule = ?2 AND u.n = t.n)", &st)) ||
        (rc = store_prepare(h, STORE_UNITS_INS_SQL, &ins)))
        goto out;
    if (sess >= 0)
        sqlite3_bind_int64(st, 1, sess);
    else
        sqlite3_bind_int(st, 2, STORE_UNITS_RULE);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = sqlite3_column_blob(st, 2);
        int bytes = sqlite3_column_bytes(st, 2);
        /* a row without the binary mark (schema 21-26's text) has no units */
        if (!t || bytes < 1 || (unsigned char)t[0] != STORE_TURNS_MARK)
            continue;
        if ((rc = store_units_write(h, ins, sqlite3_column_int64(st, 0), t + 1, (size_t)bytes - 1,
                              sqlite3_column_int64(st, 1), &b)))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "session units");
out:
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    buf_release(&b);
    return rc;
}
