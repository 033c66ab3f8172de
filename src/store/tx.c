/*
 * tx.c: transactions and statements.
 *
 * Every write is one BEGIN IMMEDIATE transaction: the write lock is taken
 * up front, so two writers never deadlock upgrading a read lock, and the
 * busy timeout makes the second wait instead of failing. A commit that
 * changed the vectors removes the vector cache file (store/veccache.c).
 */
#include "internal.h"
#include "store/vectors.h"

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
    h->vec_stamp = vec_stamp(h);
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
    /* Vectors changed: the cache file beside the store is stale, and may
     * hold the vectors of text this transaction forgot or rewrote. A
     * reader would ignore it (its stamp no longer matches); removing it
     * is what keeps those vectors off the disk. */
    if (vec_stamp(h) != h->vec_stamp)
        veccache_remove(h);
    return CAIRN_OK;
}

void store_rollback(struct cairn *h)
{
    if (h->in_tx)
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
    h->in_tx = 0;
}
