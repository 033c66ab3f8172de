/*
 * tx.c: transactions and statements.
 *
 * Every write is one BEGIN IMMEDIATE transaction: the write lock is taken
 * up front, so two writers never deadlock upgrading a read lock, and the
 * busy timeout makes the second wait instead of failing. Code that keeps
 * something derived from the store outside it (the vector cache file,
 * store/vectors.c) registers a hook here and hears of every transaction;
 * tx.c knows nothing else of it.
 */
#include "internal.h"

int store_tx_hook_add(struct cairn *h, const struct store_tx_hook *hook)
{
    if (h->n_tx_hooks >= STORE_TX_HOOKS)
        return cairn__err(h, CAIRN_ERROR, "too many transaction hooks");
    h->tx_hooks[h->n_tx_hooks++] = hook;
    return CAIRN_OK;
}

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
    for (int i = 0; i < h->n_tx_hooks; i++)
        if (h->tx_hooks[i]->begin)
            h->tx_hooks[i]->begin(h);
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
    for (int i = 0; i < h->n_tx_hooks; i++)
        if (h->tx_hooks[i]->commit)
            h->tx_hooks[i]->commit(h);
    return CAIRN_OK;
}

void store_rollback(struct cairn *h)
{
    if (h->in_tx)
        sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
    h->in_tx = 0;
}
