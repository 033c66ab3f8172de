/*
 * tx.c: transactions and statements.
 *
 * Every write is one BEGIN IMMEDIATE transaction: the write lock is taken
 * up front, so two writers never deadlock upgrading a read lock, and the
 * busy timeout makes the second wait instead of failing.
 */
#include "internal.h"

int store_prepare(struct cairn *h, const char *sql, sqlite3_stmt **st)
{
    int src = sqlite3_prepare_v2(h->db, sql, -1, st, NULL);
    if (src != SQLITE_OK) {
        *st = NULL;
        return cairn__sqlerr(h, src, "prepare");
    }
    return CAIRN_OK;
}

int store_begin(struct cairn *h)
{
    if (h->readonly)
        return cairn__err(h, CAIRN_IO, "store opened read-only");
    int src = sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (src != SQLITE_OK)
        return cairn__sqlerr(h, src, "begin");
    h->in_tx = 1;
    return CAIRN_OK;
}

int store_commit(struct cairn *h)
{
    int src = sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        int rc = cairn__sqlerr(h, src, "commit");
        store_rollback(h);
        return rc;
    }
    h->in_tx = 0;
    return CAIRN_OK;
}

void store_rollback(struct cairn *h)
{
    if (h->in_tx)
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
    h->in_tx = 0;
}
