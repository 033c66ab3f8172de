/*
 * test_forget.c: forget and redact leave no recoverable byte
 * (store/scrub.c), checked by scanning the raw bytes of the store file,
 * its -wal and the vector cache file for distinctive markers:
 *
 *  - cairn_forget through a handle that stays open (as `cairn mcp` does),
 *    while another handle has the vector cache mapped: the text, the title,
 *    the index terms (which FTS5 keeps in its old segments and tombstones)
 *    and the session's vectors are in none of the three files, the WAL is
 *    empty, and the index still answers for the other sessions;
 *  - cairn_redact_store: the unmasked secret is in none of the files;
 *  - a reader holding a read transaction keeps the WAL from being
 *    emptied: forget says CAIRN_SCRUB_PENDING (never CAIRN_OK), the session
 *    is gone for readers, and cairn_scrub finishes the wipe once the
 *    reader is done;
 *  - a session deleted as cairn did before (rows only): its terms stay
 *    in the index until cairn_scrub (`cairn forget --scrub`) wipes them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "store/vectors.h"
#include "t_store.h"
#include "t_open.h"

enum { D = 16, PIECES = 80 };
#define MODEL "test-model:1"
#define VEC_MARK "VkVeCmArK!victim"            /* D bytes: the victim's vectors */
#define SECRET "ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo"

/* Tails of the markers: FTS5 stores a term after the prefix it shares
 * with the term before it, so a term is found by its end. */
static const char *const marks[] = {
    "078-05-1120",                  /* verbatim text (an SSN) */
    "jvwkplorbat",                  /* index term zqxjvwkplorbat */
    "mbrixagond",                   /* index term flumbrixagond */
    "rtitlemarker",                 /* the title */
    VEC_MARK,
};
#define N_MARKS (sizeof marks / sizeof marks[0])

static char dir[256], store[300], wal[310], cache[310];

static off_t file_size(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 ? st.st_size : -1;
}

/* Whether the file holds the bytes of `mark` (a missing file holds none). */
static int holds(const char *path, const char *mark)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 20, n = 0, r;
    char *b;
    int found;
    if (!f)
        return 0;
    b = malloc(cap);
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb) {
                free(b);
                b = NULL;
            }
            b = nb;
        }
    }
    fclose(f);
    T_CHECK(b != NULL);
    found = b && memmem(b, n, mark, strlen(mark)) != NULL;
    free(b);
    return found;
}

static int anywhere(const char *mark)
{
    return holds(store, mark) || holds(wal, mark) || holds(cache, mark);
}

/* No marker in any of the three files, and the WAL truncated (or gone). */
static void check_wiped(void)
{
    for (size_t i = 0; i < N_MARKS; i++)
        T_CHECK(!anywhere(marks[i]));
    T_CHECK(file_size(wal) <= 0);
}

static void add_victim(struct cairn *h)
{
    struct cairn_message m[2];
    memset(m, 0, sizeof m);
    m[0].role = "user";
    m[0].content = "My SSN is 078-05-1120 and the word is zqxjvwkplorbat, remember "
                   "flumbrixagond. Token " SECRET;
    m[0].at = CAIRN_NO_TIME;
    m[1].role = "assistant";
    m[1].content = "Noted: zqxjvwkplorbat and flumbrixagond and SSN 078-05-1120.";
    m[1].at = CAIRN_NO_TIME;
    struct cairn_session s = { 0 };
    s.id = "victim";
    s.title = "Qzvrtitlemarker";
    s.started_at = s.ended_at = CAIRN_NO_TIME;
    s.messages = m;
    s.n_messages = 2;
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
}

/* A store of 8 chats and the victim, every message with PIECES vectors
 * (the victim's all VEC_MARK), dated back so a reader writes the cache. */
static struct cairn *fresh_store(void)
{
    struct cairn *h = NULL;
    sqlite3_stmt *st;
    unlink(store);
    unlink(wal);
    unlink(cache);
    t_redact = "0";                              /* the text stored verbatim */
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    for (int s = 0; s < 4; s++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", s);
        add_chat(h, id, 16);
    }
    add_victim(h);
    for (int s = 4; s < 8; s++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", s);
        add_chat(h, id, 16);
    }
    t_redact = NULL;
    T_EQ_INT(sqlite3_prepare_v2(h->db, "WITH RECURSIVE p(x) AS (SELECT 0 UNION ALL SELECT x + 1 "
                                "FROM p WHERE x + 1 < ?1) INSERT INTO vectors(model, msg, piece, "
                                "session, dim, scale, v) SELECT ?2, m.id, p.x, m.session, ?3, 1, "
                                "CASE WHEN m.session = (SELECT id FROM sessions WHERE ext_id = "
                                "'victim') THEN CAST(?4 AS BLOB) ELSE randomblob(?3) END "
                                "FROM messages m, p", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int(st, 1, PIECES);
    sqlite3_bind_text(st, 2, MODEL, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, D);
    sqlite3_bind_text(st, 4, VEC_MARK, D, SQLITE_STATIC);
    T_EQ_INT(sqlite3_step(st), SQLITE_DONE);
    sqlite3_finalize(st);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vec_stamp SET changed_at = changed_at - 60", NULL, NULL,
                          NULL), SQLITE_OK);
    /* in the main file, as in a store used for a while: the old FTS5
     * segments are there, not only in the WAL */
    T_EQ_INT(sqlite3_exec(h->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
    return h;
}

static void test_forget_wipes(void)
{
    struct cairn *srv = fresh_store(), *rd = NULL;
    const struct vec_set *vs = NULL;
    /* a reader maps the vectors (and writes the cache file), and stays */
    T_EQ_INT(t_open(store, CAIRN_OPEN_READONLY, &rd), CAIRN_OK);
    T_EQ_INT(vec_set_get(rd, MODEL, D, &vs), CAIRN_OK);
    T_CHECK(vs && vs->n == 130 * PIECES);
    T_CHECK(file_size(cache) > 0);
    /* the scan finds every marker before: it can fail */
    for (size_t i = 0; i < N_MARKS; i++)
        T_CHECK(anywhere(marks[i]));
    T_CHECK(holds(cache, VEC_MARK));

    T_EQ_INT(cairn_forget(srv, "victim"), CAIRN_OK);
    for (size_t i = 0; i < N_MARKS; i++) {
        T_CHECK(!holds(store, marks[i]));
        T_CHECK(!holds(wal, marks[i]));
        T_CHECK(!holds(cache, marks[i]));
    }
    T_CHECK(!anywhere(SECRET + 8));
    T_CHECK(file_size(wal) <= 0);                /* truncated (or gone) */
    /* the rest is intact and still found */
    T_EQ_INT(count(srv, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 's3'"), 16);
    T_EQ_INT(count(srv, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH "
                   "'zqxjvwkplorbat'"), 0);
    T_EQ_INT(sqlite3_exec(srv->db, "INSERT INTO messages_fts(messages_fts) "
                          "VALUES('integrity-check')", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(count(srv, "SELECT count(*) FROM vectors"), 128 * PIECES);
    T_EQ_INT(count(srv, "PRAGMA integrity_check") != -1, 1);
    T_EQ_INT(cairn_forget(srv, "victim"), CAIRN_NOTFOUND);
    cairn_close(rd);
    cairn_close(srv);
}

static void test_redact_wipes(void)
{
    struct cairn *h = fresh_store();
    struct cairn_redact_report rep;
    T_CHECK(anywhere(SECRET + 8));
    T_EQ_INT(cairn_redact_store(h, 0, &rep), CAIRN_OK);
    T_CHECK(rep.messages_changed >= 1);
    T_CHECK(!anywhere(SECRET + 8));
    T_CHECK(file_size(wal) <= 0);
    /* the rest of the message is kept and indexed */
    T_CHECK(anywhere("078-05-1120"));
    T_EQ_INT(count(h, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH "
                   "'flumbrixagond'"), 2);
    cairn_close(h);
}

static void test_reader_holds_wal(void)
{
    struct cairn *h = fresh_store();
    sqlite3 *r = NULL;
    sqlite3_stmt *st = NULL;
    cairn_close(h);
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    /* another process in the middle of a long read (an export in a pager) */
    T_EQ_INT(sqlite3_open_v2(store, &r, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(r, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(r, "SELECT content FROM messages", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    sqlite3_busy_timeout(h->db, 200);
    T_EQ_INT(cairn_forget(h, "victim"), CAIRN_SCRUB_PENDING);
    T_CHECK(strstr(cairn_errmsg(h), "-wal") != NULL);
    /* committed all the same: no reader that starts now sees it */
    T_EQ_INT(count(h, "SELECT count(*) FROM sessions WHERE ext_id = 'victim'"), 0);
    T_CHECK(file_size(wal) > 0);
    /* the reader is done: the wipe is finished */
    sqlite3_finalize(st);
    sqlite3_exec(r, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(r);
    T_EQ_INT(cairn_scrub(h), CAIRN_OK);
    check_wiped();
    T_EQ_INT(count(h, "SELECT count(*) FROM messages"), 128);
    cairn_close(h);
}

static void test_scrub_after_old_forget(void)
{
    struct cairn *h = fresh_store();
    /* the rows and their FTS rows, as the trigger of versions 1-6 did */
    T_EQ_INT(sqlite3_exec(h->db, "BEGIN IMMEDIATE;"
                          "INSERT INTO messages_fts(messages_fts, rowid, content) "
                          "  SELECT 'delete', id, content FROM messages WHERE session = "
                          "  (SELECT id FROM sessions WHERE ext_id = 'victim');"
                          "DELETE FROM messages WHERE session = (SELECT id FROM sessions "
                          "  WHERE ext_id = 'victim');"
                          "DELETE FROM session_stats WHERE session = (SELECT id FROM sessions "
                          "  WHERE ext_id = 'victim');"
                          "DELETE FROM sessions WHERE ext_id = 'victim'; COMMIT;"
                          "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
    T_CHECK(holds(store, "jvwkplorbat"));          /* the old forget's leftovers */
    T_EQ_INT(cairn_scrub(h), CAIRN_OK);
    check_wiped();
    T_EQ_INT(count(h, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH 's5'"), 16);
    cairn_close(h);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/cairn-forget-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                         : "/tmp");
    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(store, sizeof store, "%s/m.db", dir);
    snprintf(wal, sizeof wal, "%s-wal", store);
    snprintf(cache, sizeof cache, "%s-vec", store);
    T_RUN(test_forget_wipes);
    T_RUN(test_redact_wipes);
    T_RUN(test_reader_holds_wal);
    T_RUN(test_scrub_after_old_forget);
    unlink(store);
    unlink(wal);
    unlink(cache);
    char shm[320];
    snprintf(shm, sizeof shm, "%s-shm", store);
    unlink(shm);
    rmdir(dir);
    return T_DONE();
}
