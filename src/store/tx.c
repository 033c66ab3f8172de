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
#include <time.h>

#include "internal.h"
#include "store/post.h"
#include "store/tier.h"
#include "util/os.h"

static int exec(struct cairn *h, const char *sql)
{
    int src = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
    return src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, sql);
}

/* exec() for a statement SQLite may fail with SQLITE_BUSY without calling
 * the busy handler: it is retried, with growing sleeps, until timeout_ms
 * have passed since the first try. */
static int exec_retry(struct cairn *h, const char *sql, int timeout_ms)
{
    static const int sleep_ms[] = { 1, 2, 5, 10, 20, 50, 100 };
    const int nsleep = (int)(sizeof sleep_ms / sizeof sleep_ms[0]);
    double deadline = os_now_ms() + timeout_ms;
    for (int i = 0; ; i++) {
        int src = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
        if (src == SQLITE_OK)
            return CAIRN_OK;
        if ((src & 0xff) != SQLITE_BUSY || os_now_ms() >= deadline)
            return cairn__sqlerr(h, src, sql);
        int ms = sleep_ms[i < nsleep ? i : nsleep - 1];
        struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
}

int store_wal(struct cairn *h, int timeout_ms)
{
    /* journal_mode=WAL is sticky in the file; asking again is cheap (a
     * read of the header). Switching a new or rollback-journal file reads
     * the header under a read lock and then asks for the write lock;
     * SQLite does not call the busy handler for that upgrade (the read
     * lock could deadlock a writer waiting on it), so when several
     * processes create the store at once all but one get SQLITE_BUSY at
     * once. The retry waits for the one that wins. */
    return exec_retry(h, "PRAGMA journal_mode=WAL", timeout_ms);
}

int store_pragmas(struct cairn *h)
{
    /* secure_delete: every deleted cell and freed page is zeroed, not left
     * in free space, so what forget and redact wipe (store/scrub.c) has no
     * older copies from replaced messages or merged index segments. It is
     * Debian's compiled-in default; said here so no build depends on it.
     * The page cache: 16 MB for a writer (ingest merges FTS segments and
     * inserts into five B-trees), 256 KB for a reader. A reader (the
     * prompt hook, recall) reads most pages once, and every page of a
     * bigger cache is fresh memory to fault in, where a page that leaves
     * a small one frees its buffer for the next: on a million messages a
     * --fast recall faulted in 6,900 pages with 16 MB and 3,200 with 2 MB,
     * and took ~30% less CPU (bench/README.md, "A million messages"); the
     * hook at 100,000 messages 1,719 pages with 2 MB and 1,292 with 256
     * KB, 101 -> 82 ms of CPU ("Page faults"). The B-trees' inner pages,
     * read at every descent, stay: the cache drops the least recent. */
    int rc = exec(h, "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON; PRAGMA secure_delete=ON;"
                     "PRAGMA temp_store=MEMORY");
    if (!rc)
        rc = store_cache_size(h, 0);
    return rc;
}

/* a one-shot reader's page cache (store_pragmas) */
#define READER_CACHE_KB 256

int store_cache_size(struct cairn *h, int mb)
{
    /* A long-lived process (`cairn web`, the MCP server) asks for more:
     * its cache stays warm from one request to the next, for as long as
     * no other connection writes (SQLite drops it when the file changed). */
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA cache_size=-%d",
             mb > 0 ? mb * 1000 : h->readonly ? READER_CACHE_KB : 16000);
    return exec(h, sql);
}

int store_temp_store(struct cairn *h, int mode, int *was)
{
    sqlite3_stmt *st;
    char sql[32];
    int rc;
    if (was) {
        if ((rc = store_prepare(h, "PRAGMA temp_store", &st)))
            return rc;
        *was = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
        sqlite3_finalize(st);
    }
    snprintf(sql, sizeof sql, "PRAGMA temp_store=%d", mode);
    return exec(h, sql);
}

int store_probe(struct cairn *h)
{
    return sqlite3_exec(h->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
}

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
    /* every write begins here: a server store is read through, written
     * only by sync (docs/POSTGRES.md) */
    if (h->pg)
        return cairn__err(h, CAIRN_INVALID, "not supported on a server store yet: write to a "
                          "local store and share it with `cairn sync --server URL`");
    /* another write on a handle with sessions pending in a group lands
     * them first (cairn_add_group) */
    int rc = h->group_tx ? store_group_commit(h) : CAIRN_OK;
    if (rc)
        return rc;
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
    /* the term tiers' dfs and upto, for what this transaction added */
    int krc = store_tier_keep_flush(h);
    if (!krc)
        krc = store_post_keep_flush(h);      /* and the packed postings' */
    if (krc) {
        store_rollback(h);
        return krc;
    }
    int src = sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
    if (src != SQLITE_OK) {
        int rc = cairn__sqlerr(h, src, "commit");
        store_rollback(h);
        return rc;
    }
    h->in_tx = 0;
    store_tier_keep_drop(h);
    store_post_keep_drop(h);
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
    store_tier_keep_drop(h);
    store_post_keep_drop(h);
}
