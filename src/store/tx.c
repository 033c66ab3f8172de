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
#include <stdlib.h>
#include <string.h>
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

/* The page size of a new store, and the one `cairn reindex --pages`
 * rewrites an older store to. A one-shot reader pays a `pread` a page (a
 * system call, ~5 us on the paravirtualised host), and the prompt hook's
 * reads are the kept sessions' rows and packed turns, spread over whole
 * tables: at 16 KB it makes 168 reads at 100,000 messages where it made
 * 474 at 4 KB, for 0.92-0.95 of the CPU, and the exact recall at a
 * million 0.80 of its wall on a loaded host (bench/README.md, "The hook
 * at 100,000: pages of 16 KB", issue 23, hook54); idle, 0.90-0.94 of a
 * 4 KB store's for the hook and 0.90-0.99 for the exact recall ("The
 * merge's check, issues 23 and 16 (integ54)"). 32 KB read fewer pages (112) but faulted
 * in more (214 against 162: a reader's cache holds bigger buffers), and
 * 64 KB cost more than 4 KB. */
#define STORE_PAGE_SIZE 16384
/* the open's busy timeout (api.c) */
#define REPAGE_WAL_WAIT_MS 15000

int store_page_size_new(struct cairn *h)
{
    /* only before the first table: SQLite fixes the size with the file's
     * first page, and WAL (store_wal, next) fixes it for good */
    char sql[40];
    snprintf(sql, sizeof sql, "PRAGMA page_size=%d", STORE_PAGE_SIZE);
    return exec(h, sql);
}

static int pragma_text(struct cairn *h, const char *sql, char *out, size_t n)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    out[0] = 0;
    if (src == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(st, 0);
        snprintf(out, n, "%s", t ? (const char *)t : "");
        src = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return src == SQLITE_OK || src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, sql);
}

int cairn_repage(struct cairn *h, int *was)
{
    char v[32];
    int rc, rc2;
    if (!h)
        return CAIRN_INVALID;
    if (h->pg)
        return cairn__err(h, CAIRN_INVALID, "reindex --pages: SQLite stores only");
    if (h->readonly || !h->path || !strcmp(h->path, ":memory:"))
        return cairn__err(h, CAIRN_INVALID, "reindex --pages: a store opened for writing");
    if ((rc = pragma_text(h, "PRAGMA page_size", v, sizeof v)))
        return rc;
    if (was)
        *was = atoi(v);
    if (atoi(v) == STORE_PAGE_SIZE)
        return CAIRN_OK;
    /* WAL keeps the page size; leaving it needs the only connection to
     * the file (SQLite says the database is locked while another process
     * has it open, and then nothing has changed) */
    if ((rc = pragma_text(h, "PRAGMA journal_mode=DELETE", v, sizeof v)))
        return rc;
    if (strcmp(v, "delete"))
        return cairn__err(h, CAIRN_BUSY, "reindex --pages: another process has %s open "
                          "(journal mode stays %s); run it again when it is done", h->path, v);
    /* VACUUM writes every live page anew at the new size, in one
     * transaction (the old file's pages in a rollback journal meanwhile:
     * an interruption leaves the store as it was) */
    char sql[40];
    int temp = 0;
    snprintf(sql, sizeof sql, "PRAGMA page_size=%d", STORE_PAGE_SIZE);
    /* VACUUM builds the copy in a transient database, which temporary
     * storage in memory (store_pragmas) would hold whole: 208 MB of RSS
     * at 100,000 messages; in a file, a page cache's worth */
    if (!(rc = store_temp_store(h, 1, &temp)) && !(rc = exec(h, sql)))
        rc = exec(h, "VACUUM");
    /* back to WAL whatever happened: readers must not block the writer */
    rc2 = store_wal(h, REPAGE_WAL_WAIT_MS);
    if (!rc2)
        rc2 = store_temp_store(h, temp, NULL);
    return rc ? rc : rc2;
}

int cairn_repage_due(struct cairn *h, int *due, int *page)
{
    char v[32];
    int rc;
    if (due)
        *due = 0;
    if (page)
        *page = 0;
    if (!h)
        return CAIRN_INVALID;
    if (h->pg)
        return CAIRN_OK;
    if ((rc = pragma_text(h, "PRAGMA page_size", v, sizeof v)))
        return rc;
    if (page)
        *page = atoi(v);
    /* a store in memory has no file for a reader to pread */
    if (due)
        *due = atoi(v) < STORE_PAGE_SIZE && h->path && strcmp(h->path, ":memory:");
    return CAIRN_OK;
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
