/*
 * scrub.c: changes that must leave no recoverable byte behind (forget,
 * redact) go through one function, store_scrub.
 *
 * Deleting a row in SQLite only unlinks it: its bytes stay in the page's
 * free space, in freed pages and in older frames of the WAL. FTS5 does not
 * even unlink: a 'delete' appends a tombstone (which itself lists the
 * terms) in a new segment and leaves the old segments, terms and
 * positions, as they were, even through VACUUM. FTS5's 'secure-delete'
 * option would fix that part but needs SQLite 3.42; Debian 12 has 3.40.1.
 * So store_scrub:
 *
 *  1. sets PRAGMA secure_delete (api.c sets it on every connection; it is
 *     set again because this path relies on it): SQLite zeroes a deleted
 *     cell in its page, and every page it frees;
 *  2. runs the caller's change in one write transaction;
 *  3. in the same transaction rewrites the full-text index ('optimize':
 *     every segment merged into one, tombstones applied and dropped), so
 *     the old segments, which held the rows' terms with their positions,
 *     are deleted, and zeroed by 1;
 *  4. commits, and removes the vector cache file (store_commit already
 *     does when the vectors changed);
 *  5. checkpoints the WAL into the main file and truncates it to zero
 *     bytes: the WAL held the text as written, and the pages from before
 *     they were zeroed.
 *
 * 3 is the cost: the whole index is rewritten, half a second of CPU on a
 * 100,000-message store (bench/bench_forget.c, bench/README.md). FTS5's
 * commands cannot merge only the segments that held some rows ('merge'
 * picks segments by level), and an old session's rows sit in the biggest
 * segment anyway.
 *
 * 5 cannot happen while another connection holds a read transaction (a
 * `cairn export` piped into a pager): SQLite must keep the frames that
 * reader may still need. The checkpoint waits for it up to the busy
 * timeout; if the reader is still there the change stays committed (no
 * reader that starts now sees the rows) but the old bytes are still in
 * STORE-wal, and the result is CAIRN_SCRUB_PENDING, never CAIRN_OK.
 * cairn_scrub (`cairn forget --scrub`) finishes the job later.
 *
 * What is not covered: the memory of other processes (what they already
 * read), and the disk blocks a file system freed when the WAL was
 * truncated (only the files' contents are in reach of a library).
 */
#include "internal.h"
#include "store/vectors.h"

static int exec(struct cairn *h, const char *sql, const char *what)
{
    int src = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
    return src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, what);
}

int store_checkpoint(struct cairn *h)
{
    sqlite3_stmt *st;
    int rc, busy = 1, log = -1;
    if ((rc = store_prepare(h, "PRAGMA main.wal_checkpoint(TRUNCATE)", &st)))
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        busy = sqlite3_column_int(st, 0);
        log = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    if (src != SQLITE_ROW && (src & 0xff) != SQLITE_BUSY)
        return cairn__sqlerr(h, src, "checkpoint");
    /* A truncated WAL reports 0 frames; -1 means the store is not in WAL
     * mode (an in-memory store), which has no log to empty. */
    if (src == SQLITE_ROW && !busy && log <= 0)
        return CAIRN_OK;
    return cairn__err(h, CAIRN_SCRUB_PENDING, "the change is committed, but another process "
                      "is reading the store, so the old text is still in %s-wal; run "
                      "`cairn forget --scrub` when that process is done", h->path);
}

int store_scrub(struct cairn *h, int (*change)(struct cairn *, void *), void *arg)
{
    int rc;
    if ((rc = exec(h, "PRAGMA secure_delete=ON", "secure_delete")) ||
        (rc = store_begin(h)))
        return rc;
    if (change && (rc = change(h, arg)))
        goto fail;
    if ((rc = exec(h, "INSERT INTO messages_fts(messages_fts) VALUES('optimize')",
                   "rewriting the full-text index")))
        goto fail;
    if ((rc = store_commit(h)))
        return rc;
    veccache_remove(h);
    return store_checkpoint(h);
fail:
    store_rollback(h);
    return rc;
}

int cairn_scrub(struct cairn *h)
{
    int rc = store_scrub(h, NULL, NULL);
    if (rc)
        return rc;
    /* And what a store written without secure_delete (a SQLite built
     * without it, before api.c set it) may hold in its free space: VACUUM
     * writes every live page anew and the file ends after them. */
    if ((rc = exec(h, "VACUUM", "vacuum")))
        return rc;
    return store_checkpoint(h);
}
