/*
 * test_session_turns.c: each session's packed turns (session_turns, schema
 * 21; store/turns.c, ingest.c, recall_read.c).
 *
 * After every write path (add, more turns added to a session in later
 * adds and in a group, an extended reply, forget, a store-wide redaction
 * of speakers) each session with messages has exactly one row, and it is
 * byte for byte what store_turns_fill (the migration's and repacking's
 * writer) packs of the messages now: what ingest appends equals it. What
 * store_messages_meta gives for a list of sessions equals the messages'
 * rows read one by one, speakers (with the separators of the format in
 * them, and non-ASCII), times (none, going back) and all; so does it where
 * a session has no row (a delete of one message dropped it), a damaged
 * row or a wrong count (read from messages_meta instead). A version-20
 * store is filled by the migration; a session whose row went gets it back
 * with its next add. A version-26 store (text rows) is read without
 * them until it is migrated, then packed again in binary (schema 27).
 * Rows written read back as written; cut or damaged, a prefix at most.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "store/recall_read.h"
#include "util/buf.h"
#include "t_store.h"

static char dir[] = "/tmp/cairn-sturns-XXXXXX";
static unsigned rng = 777;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static const char *const speakers[] = {
    NULL, "Caroline", "Mel", "a,b;c:d", "3:x;", "Zo\xc3\xab", "",
};

/* Session s: n messages (ids "s<s>-<k>" from k0 on), some with speakers,
 * some with times (not in order), some without. */
static void add_session(struct cairn *db, int s, int k0, int n)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "{\"id\":\"s%d\",\"messages\":[", s);
    for (int k = k0; k < k0 + n; k++) {
        const char *sp = speakers[rnd(sizeof speakers / sizeof speakers[0])];
        buf_printf(&b, "%s{\"id\":\"s%d-%d\",\"role\":\"%s\",\"content\":\"turn %d of %d\"",
                   k > k0 ? "," : "", s, k, rnd(2) ? "user" : "assistant", k, s);
        if (sp) {
            buf_adds(&b, ",\"speaker\":");
            buf_add_json_str(&b, sp, strlen(sp));
        }
        if (rnd(3))
            buf_printf(&b, ",\"at\":%u", 1700000000u + rnd(100000));
        buf_adds(&b, "}");
    }
    buf_adds(&b, "]}");
    T_CHECK(!b.err);
    T_EQ_INT(cairn_add_json(db, b.p, b.n, NULL), CAIRN_OK);
    buf_release(&b);
}

/* The rows, byte for byte, against each session packed again from its
 * messages (store_turns_fill, the migration's and repacking's writer:
 * what ingest appends equals what a fill packs; check_read reads the
 * rows against the messages): missing sessions (without a row) counted,
 * none that differs, none of a session without messages. */
static void check_rows(struct cairn *db, sqlite3 *raw, int want_missing)
{
    sqlite3_stmt *st, *row;
    struct buf have = BUF_INIT;
    struct store_ids ids = { NULL, 0, 0 };
    int rows = 0, differ = 0;
    /* the ids first: a statement left running would hold raw's snapshot,
     * and the second read below would see the row from before the fill */
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT session FROM session_turns ORDER BY session", -1,
                                &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        T_EQ_INT(store_ids_push(db, &ids, sqlite3_column_int64(st, 0)), CAIRN_OK);
    sqlite3_finalize(st);
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT n, turns FROM session_turns WHERE session = ?1",
                                -1, &row, NULL), SQLITE_OK);
    for (int i = 0; i < ids.n; i++) {
        int64_t s = ids.v[i];
        int64_t n[2] = { -1, -1 };
        for (int k = 0; k < 2; k++) {
            sqlite3_reset(row);
            sqlite3_bind_int64(row, 1, s);
            T_EQ_INT(sqlite3_step(row), SQLITE_ROW);
            n[k] = sqlite3_column_int64(row, 0);
            const void *p = sqlite3_column_blob(row, 1);
            size_t bytes = (size_t)sqlite3_column_bytes(row, 1);
            if (k == 0) {
                buf_reset(&have);
                buf_add(&have, p, bytes);
                sqlite3_reset(row);       /* no read lock held across the fill */
                T_EQ_INT(store_turns_fill(db, s), CAIRN_OK);
            } else {
                differ += n[0] != n[1] || bytes != have.n || (bytes && memcmp(p, have.p, bytes));
            }
            sqlite3_reset(row);
        }
        rows++;
    }
    T_CHECK(!have.err);
    sqlite3_finalize(row);
    free(ids.v);
    buf_release(&have);
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT (SELECT count(DISTINCT session) FROM messages WHERE "
                                "session NOT IN (SELECT session FROM session_turns)), (SELECT "
                                "count(*) FROM session_turns WHERE session NOT IN (SELECT session "
                                "FROM messages))", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_INT(sqlite3_column_int(st, 0), want_missing);
    T_EQ_INT(differ + sqlite3_column_int(st, 1), 0);
    T_CHECK(rows > 0);
    sqlite3_finalize(st);
}

/* store_messages_meta's rows, written out one a line. */
static int sig_cb(void *arg, const struct store_msg_row *r)
{
    buf_printf(arg, "%lld %lld %d %d %s%s %lld %d\n", (long long)r->row, (long long)r->sess,
               r->position, r->user, r->speaker ? "=" : "-", r->speaker ? r->speaker : "",
               (long long)r->at, r->ntok);
    return 0;
}

/* The turns of every session (listed out of order, one twice, one that
 * does not exist), through store_messages_meta, against the messages read
 * with plain SQL in (session, position) order. */
static void check_read(struct cairn *db, sqlite3 *raw)
{
    struct buf have = BUF_INIT, want = BUF_INIT;
    struct store_ids ids = { NULL, 0, 0 };
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT id FROM sessions ORDER BY id DESC", -1, &st, NULL),
             SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        T_EQ_INT(store_ids_push(db, &ids, sqlite3_column_int64(st, 0)), CAIRN_OK);
    sqlite3_finalize(st);
    T_CHECK(ids.n > 2);
    T_EQ_INT(store_ids_push(db, &ids, ids.v[1]), CAIRN_OK);
    T_EQ_INT(store_ids_push(db, &ids, 1000000), CAIRN_OK);
    T_EQ_INT(store_messages_meta(db, ids.v, ids.n, sig_cb, &have), CAIRN_OK);
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT id, session, position, role = 'user', speaker, "
                                "coalesce(created_at, ?1), ntok FROM messages ORDER BY session, "
                                "position", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, CAIRN_NO_TIME);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *sp = (const char *)sqlite3_column_text(st, 4);
        buf_printf(&want, "%lld %lld %d %d %s%s %lld %d\n", sqlite3_column_int64(st, 0),
                   sqlite3_column_int64(st, 1), sqlite3_column_int(st, 2),
                   sqlite3_column_int(st, 3), sp ? "=" : "-", sp ? sp : "",
                   sqlite3_column_int64(st, 5), sqlite3_column_int(st, 6));
    }
    sqlite3_finalize(st);
    T_CHECK(want.n > 0);
    T_EQ_INT((int64_t)have.n, (int64_t)want.n);
    T_CHECK(have.n == want.n && !memcmp(have.p, want.p, want.n));
    free(ids.v);
    buf_release(&have);
    buf_release(&want);
}

/* One turn's text as schemas 21-26 packed it (internal.h's TURNS_ROW_SQL
 * then), over messages with the window w (PARTITION BY session ORDER BY
 * position): the rows of a version-26 store. */
#define TURNS_V26 "(id - lag(id, 1, 0) OVER w) || ',' || (position - lag(position, 1, 0) " \
    "OVER w) || ',' || (role = 'user') || ',' || CASE WHEN created_at IS NULL THEN '' ELSE " \
    "created_at - coalesce(lag(created_at) OVER w, 0) END || ',' || ntok || ',' || CASE WHEN " \
    "speaker IS NULL THEN '' ELSE length(CAST(speaker AS BLOB)) || ':' || speaker END || ';'"

static void test_write_paths(void)
{
    char path[256];
    struct cairn *db;
    sqlite3 *raw, *rw;
    struct cairn_redact_report rep;
    snprintf(path, sizeof path, "%s/w.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    for (int s = 0; s < 40; s++)
        add_session(db, s, 0, 1 + (int)rnd(9));
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* more turns in later adds: appended after the last stored turn */
    for (int k = 0; k < 30; k++)
        add_session(db, (int)rnd(40), 20 + k * 10, 1 + (int)rnd(4));
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* a group: sessions and their later turns in one transaction */
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    for (int k = 0; k < 10; k++)
        add_session(db, k < 5 ? 40 + k : (int)rnd(45), 500 + k * 10, 1 + (int)rnd(4));
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* an extended reply (a longer ntok), then new turns after it */
    const char *e1 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x1\",\"role\":\"user\",\"speaker\":"
                     "\"Mel\",\"content\":\"Hi Tim,\"}]}";
    const char *e2 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x1\",\"role\":\"user\",\"speaker\":"
                     "\"Mel\",\"content\":\"Hi Tim, the build is green again\"},{\"id\":\"x2\","
                     "\"role\":\"assistant\",\"content\":\"good\"}]}";
    T_EQ_INT(cairn_add_json(db, e1, strlen(e1), NULL), CAIRN_OK);
    int64_t before = count(db, "SELECT n FROM session_turns WHERE session = (SELECT id FROM "
                               "sessions WHERE ext_id = 'x')");
    T_EQ_INT(before, 1);
    T_EQ_INT(cairn_add_json(db, e2, strlen(e2), NULL), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT n FROM session_turns WHERE session = (SELECT id FROM sessions "
                       "WHERE ext_id = 'x')"), 2);
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* forget: the row goes with the session */
    for (int k = 0; k < 5; k++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", k * 7);
        int rc = cairn_forget(db, id);
        T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    }
    T_EQ_INT(count(db, "SELECT count(*) FROM session_turns WHERE session NOT IN (SELECT "
                       "session FROM messages)"), 0);
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* a store-wide redaction rewrites a speaker: its session packed again */
    T_EQ_INT(cairn_set(db, "redact", "0"), CAIRN_OK);
    const char *k1 = "{\"id\":\"k\",\"messages\":[{\"role\":\"user\",\"speaker\":"
                     "\"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"content\":\"hi\"}]}";
    T_EQ_INT(cairn_add_json(db, k1, strlen(k1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "redact", NULL), CAIRN_OK);
    T_EQ_INT(cairn_redact_store(db, 0, &rep), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM session_turns WHERE turns LIKE '%sk-ant%'"), 0);
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* no write path deletes one message of a session, but where one goes
     * its session has no row, and is read from messages_meta */
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM messages WHERE id IN (SELECT max(id) FROM messages "
                          "GROUP BY session HAVING count(*) > 2 LIMIT 3)", NULL, NULL, NULL),
             SQLITE_OK);
    check_rows(db, raw, 3);
    check_read(db, raw);
    /* a damaged row or a wrong count: not used */
    T_EQ_INT(sqlite3_exec(rw, "UPDATE session_turns SET turns = '1,0,1,,5,9:ab;' WHERE session = "
                          "(SELECT min(session) FROM session_turns); UPDATE session_turns SET n "
                          "= n + 1 WHERE session = (SELECT max(session) FROM session_turns)",
                          NULL, NULL, NULL), SQLITE_OK);
    check_read(db, raw);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM session_turns WHERE turns = '1,0,1,,5,9:ab;' OR n <> "
                          "(SELECT count(*) FROM messages m WHERE m.session = "
                          "session_turns.session)", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_changes(rw), 2);
    check_rows(db, raw, 5);
    /* the next add to a session without a row packs it again */
    int64_t lost = count(db, "SELECT min(session) FROM messages WHERE session NOT IN (SELECT "
                             "session FROM session_turns)");
    char q[128];
    snprintf(q, sizeof q, "SELECT cast(substr(ext_id, 2) AS INTEGER) FROM sessions WHERE id = %lld",
             (long long)lost);
    add_session(db, (int)count(db, q), 9000, 2);
    snprintf(q, sizeof q, "SELECT count(*) FROM session_turns WHERE session = %lld",
             (long long)lost);
    T_EQ_INT(count(db, q), 1);
    check_rows(db, raw, 4);
    check_read(db, raw);
    /* a version-20 store: the migration packs every session */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, SESSION_TURNS_V21_DROP "PRAGMA user_version=20", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(rw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(count(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    check_rows(db, raw, 0);
    check_read(db, raw);
    /* a version-26 store, its rows text as 21-26 packed them (TURNS_V26):
     * opened read-only it is not migrated, its rows (no mark) are not
     * used, the turns come from messages_meta; opened to write, every
     * session is packed again in binary */
    cairn_close(db);
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM session_turns; INSERT INTO session_turns(session, n, "
                          "turns) SELECT session, count(*), group_concat(t, '') FROM (SELECT "
                          "session, " TURNS_V26 " AS t FROM messages WINDOW w AS (PARTITION BY "
                          "session ORDER BY position) ORDER BY session, position) GROUP BY "
                          "session; " VAULT_TOTALS_V29_DROP "PRAGMA user_version=26",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(count_raw(rw, "SELECT count(*) FROM session_turns WHERE substr(turns, 1, 1) "
                           "NOT BETWEEN '0' AND '9'"), 0);
    sqlite3_close(rw);
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &db), CAIRN_OK);
    check_read(db, raw);
    cairn_close(db);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(count(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    check_rows(db, raw, 0);
    check_read(db, raw);
    sqlite3_close(raw);
    cairn_close(db);
}

/* Values at the edges of what a turn holds. */
static const int64_t odd[] = {
    0, 1, -1, 63, 64, 127, 128, -64, -65, 16383, 16384, INT32_MAX, INT32_MIN,
    (int64_t)INT32_MAX + 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, 1672533899,
};

static int64_t pick(int64_t plain)
{
    return rnd(8) ? plain : odd[rnd(sizeof odd / sizeof *odd)];
}

/* Rows written by store_turn_write, fields at the edges included, read
 * back by store_turns_next (a turn at a time) and store_turns_read (a row
 * at a time) as written; the same rows damaged (cut anywhere, bytes
 * changed) read a prefix of the turns written, then stop, and never
 * outside the row (a buffer of exactly its size: valgrind would say). */
static void test_round_trip(void)
{
    enum { ROUNDS = 20000, MAXN = 40 };
    int same = 0, cut_prefix = 0, cuts = 0, refused = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct buf b = BUF_INIT;
        struct turns_cur w = { NULL, NULL, 0, 0, 0 };
        struct store_msg_row want[MAXN];
        const char *wsp[MAXN];
        size_t ends[MAXN];
        int n = (int)rnd(MAXN), m = 0;
        int64_t id = rnd(1000), at = 1672533899;
        for (int i = 0; i < n; i++) {
            id += rnd(3) ? 1 : (int64_t)rnd(100000) - 50000;
            at += rnd(4) ? (int64_t)rnd(400) : -(int64_t)rnd(100000);
            int64_t tid = pick(id), tat = rnd(6) ? pick(at) : CAIRN_NO_TIME;
            int64_t pos = rnd(8) ? i : pick(i);
            int ntok = (int)(rnd(8) ? (int64_t)rnd(70000) : pick(5));
            const char *sp = speakers[rnd(sizeof speakers / sizeof *speakers)];
            store_turn_write(&b, &w, tid, pos, (int)rnd(2), tat, ntok, sp, sp ? strlen(sp) : 0);
            /* out of the reader's range (a position past int, a
             * negative count): it stops at that turn */
            want[m] = (struct store_msg_row){ .row = tid, .position = (int)pos,
                                              .user = 0, .at = tat, .ntok = ntok };
            wsp[m] = sp;
            ends[m++] = b.n;
        }
        T_CHECK(!b.err);
        char *text = malloc(b.n ? b.n : 1);
        T_CHECK(text != NULL);
        if (b.n)
            memcpy(text, b.p, b.n);
        /* whole: every turn back, unless a field was out of the reader's
         * range (then it stops there) */
        struct turns_cur c1 = { text, text + b.n, 0, 0, 0 }, c2 = c1;
        struct store_msg_row got[MAXN];
        size_t gspn[MAXN];
        int k = 0, r;
        const char *xs;
        size_t xn;
        struct store_msg_row x;
        while ((r = store_turns_next(&c1, &x, &xs, &xn)) == 1 && k < n) {
            if (x.row != want[k].row || x.position != want[k].position || x.at != want[k].at ||
                x.ntok != want[k].ntok || !xs != !wsp[k] ||
                (xs && (xn != strlen(wsp[k]) || memcmp(xs, wsp[k], xn))))
                break;
            k++;
        }
        size_t g = store_turns_read(&c2, got, gspn, MAXN);
        int whole = k == n && r == 0;
        refused += !whole;
        same += (size_t)k == g && c1.p == c2.p && (whole || r == -1);
        /* cut anywhere: the turns that end before the cut, then a stop */
        size_t cut = b.n ? rnd((unsigned)b.n) : 0;
        struct turns_cur c3 = { text, text + cut, 0, 0, 0 };
        size_t gc = store_turns_read(&c3, got, gspn, MAXN);
        size_t before = 0;
        while (before < (size_t)k && ends[before] <= cut)
            before++;
        cuts++;
        cut_prefix += gc == before;
        /* bytes changed: a prefix at most, inside the row */
        if (b.n) {
            for (int z = (int)rnd(3) + 1; z > 0; z--)
                text[rnd((unsigned)b.n)] = (char)rnd(256);
            struct turns_cur c4 = { text, text + b.n, 0, 0, 0 };
            store_turns_read(&c4, got, gspn, MAXN);
            T_CHECK(c4.p >= text && c4.p <= text + b.n);
        }
        free(text);
        buf_release(&b);
    }
    T_EQ_INT(same, ROUNDS);
    T_EQ_INT(cut_prefix, cuts);
    T_CHECK(refused > 0 && refused < ROUNDS / 2);   /* the edges were met */
}

int main(void)
{
    T_CHECK(mkdtemp(dir) != NULL);
    T_RUN(test_round_trip);
    T_RUN(test_write_paths);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
