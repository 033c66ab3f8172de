/*
 * test_session_turns.c: each session's packed turns (session_turns, schema
 * 21; store/turns.c, ingest.c, recall_read.c).
 *
 * After every write path (add, more turns added to a session in later
 * adds and in a group, an extended reply, forget, a store-wide redaction
 * of speakers) each session with messages has exactly one row, and its
 * text is byte for byte what TURNS_ROW_SQL makes of the messages now (the
 * migration's fill): what ingest appends in C equals what SQL packs. What
 * store_messages_meta gives for a list of sessions equals the messages'
 * rows read one by one, speakers (with the separators of the format in
 * them, and non-ASCII), times (none, going back) and all; so does it where
 * a session has no row (a delete of one message dropped it), a damaged
 * row or a wrong count (read from messages_meta instead). A version-20
 * store is filled by the migration; a session whose row went gets it back
 * with its next add. The reader agrees with the reference reader
 * (store_turns_next_checked) on written rows and damaged ones.
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

/* The rows, byte for byte, against the messages packed again in SQL:
 * missing sessions (without a row) counted, none that differs. */
static void check_rows(sqlite3 *raw, int want_missing)
{
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, "WITH p AS (SELECT session, count(*) AS n, group_concat(t, "
                                "'') AS turns FROM (SELECT session, " TURNS_ROW_SQL " AS t FROM "
                                "messages WINDOW w AS (PARTITION BY session ORDER BY position) "
                                "ORDER BY session, position) GROUP BY session) SELECT "
                                "(SELECT count(*) FROM p WHERE session NOT IN (SELECT session "
                                "FROM session_turns)), (SELECT count(*) FROM session_turns t "
                                "WHERE NOT EXISTS (SELECT 1 FROM p WHERE p.session = t.session "
                                "AND p.n = t.n AND p.turns = t.turns)), (SELECT count(*) FROM "
                                "session_turns)", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_INT(sqlite3_column_int(st, 0), want_missing);
    T_EQ_INT(sqlite3_column_int(st, 1), 0);
    T_CHECK(sqlite3_column_int(st, 2) > 0);
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
    check_rows(raw, 0);
    check_read(db, raw);
    /* more turns in later adds: appended after the last stored turn */
    for (int k = 0; k < 30; k++)
        add_session(db, (int)rnd(40), 20 + k * 10, 1 + (int)rnd(4));
    check_rows(raw, 0);
    check_read(db, raw);
    /* a group: sessions and their later turns in one transaction */
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    for (int k = 0; k < 10; k++)
        add_session(db, k < 5 ? 40 + k : (int)rnd(45), 500 + k * 10, 1 + (int)rnd(4));
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    check_rows(raw, 0);
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
    check_rows(raw, 0);
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
    check_rows(raw, 0);
    check_read(db, raw);
    /* a store-wide redaction rewrites a speaker: its session packed again */
    T_EQ_INT(cairn_set(db, "redact", "0"), CAIRN_OK);
    const char *k1 = "{\"id\":\"k\",\"messages\":[{\"role\":\"user\",\"speaker\":"
                     "\"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"content\":\"hi\"}]}";
    T_EQ_INT(cairn_add_json(db, k1, strlen(k1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "redact", NULL), CAIRN_OK);
    T_EQ_INT(cairn_redact_store(db, 0, &rep), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM session_turns WHERE turns LIKE '%sk-ant%'"), 0);
    check_rows(raw, 0);
    check_read(db, raw);
    /* no write path deletes one message of a session, but where one goes
     * its session has no row, and is read from messages_meta */
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM messages WHERE id IN (SELECT max(id) FROM messages "
                          "GROUP BY session HAVING count(*) > 2 LIMIT 3)", NULL, NULL, NULL),
             SQLITE_OK);
    check_rows(raw, 3);
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
    check_rows(raw, 5);
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
    check_rows(raw, 4);
    check_read(db, raw);
    /* a version-20 store: the migration packs every session */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, SESSION_TURNS_V21_DROP "PRAGMA user_version=20", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(rw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(count(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    check_rows(raw, 0);
    check_read(db, raw);
    sqlite3_close(raw);
    cairn_close(db);
}

/* Numbers the mutations splice in: limits, leading zeros past 19 digits. */
static const char *const odd_nums[] = {
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "00000000000000000000001", "0000000000000000000", "99999999999999999999",
    "2147483647", "2147483648", "-2147483649", "-", "", "0", "-0",
};

/* store_turns_next (one at a time) and store_turns_read (a row at a time)
 * against the reference reader (store_turns_next_checked: a bound and an
 * overflow test a digit, the reader before exact28) on rows made by store_turn_write and then damaged:
 * bytes changed, cut short, numbers from odd_nums spliced in, a digit
 * last (the checked path) or not. Same turns, same fields, same stop. */
static void test_reader_reference(void)
{
    enum { ROUNDS = 20000, MAXN = 40 };
    int agree = 0, cut = 0, bad = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct buf b = BUF_INIT;
        struct turns_cur w = { NULL, NULL, 0, 0, 0 };
        int n = (int)rnd(MAXN);
        int64_t id = rnd(1000), at = 1672533899;
        for (int i = 0; i < n; i++) {
            id += rnd(3) ? 1 : (int64_t)rnd(100000) - 50000;
            at += rnd(4) ? (int64_t)rnd(400) : -(int64_t)rnd(100000);
            store_turn_write(&b, &w, id, i + (int)rnd(2), (int)rnd(2),
                             rnd(6) ? at : CAIRN_NO_TIME, (int)rnd(rnd(2) ? 300 : 70000),
                             speakers[rnd(sizeof speakers / sizeof *speakers)]);
        }
        T_CHECK(!b.err);
        struct buf d = BUF_INIT;
        buf_add(&d, b.p ? b.p : "", b.n);
        int kind = (int)rnd(5);
        if (kind == 1 && d.n) {
            for (int k = (int)rnd(4) + 1; k > 0; k--)
                d.p[rnd((unsigned)d.n)] = "0123456789,;:-x"[rnd(15)];
        } else if (kind == 2 && d.n) {
            d.n = rnd((unsigned)d.n);             /* cut: often ends in a digit */
        } else if (kind == 3) {
            struct buf e = BUF_INIT;
            size_t at0 = d.n ? rnd((unsigned)d.n) : 0;
            buf_add(&e, d.p ? d.p : "", at0);
            const char *o = odd_nums[rnd(sizeof odd_nums / sizeof *odd_nums)];
            buf_add(&e, o, strlen(o));
            buf_add(&e, d.p ? d.p + at0 : "", d.n - at0);
            buf_release(&d);
            d = e;
        } else if (kind == 4) {
            const char *o = odd_nums[rnd(sizeof odd_nums / sizeof *odd_nums)];
            char t[160];
            snprintf(t, sizeof t, "%s,%s,%d,%s,%s,;", rnd(2) ? o : "1", rnd(2) ? o : "1",
                     (int)rnd(2), rnd(2) ? o : "5", rnd(2) ? o : "7");
            buf_add(&d, t, strlen(t));
        }
        T_CHECK(!d.err);
        /* exactly the row's bytes (no NUL after it: a read past is a
         * valgrind report) */
        char *text = malloc(d.n ? d.n : 1);
        T_CHECK(text != NULL);
        if (d.n)
            memcpy(text, d.p, d.n);
        struct turns_cur rc0 = { text, text + d.n, 0, 0, 0 }, c1 = rc0, c2 = rc0;
        struct store_msg_row want[MAXN + 4], got[MAXN + 4];
        size_t wspn[MAXN + 4], gspn[MAXN + 4];
        const char *wsp[MAXN + 4];
        int nw = 0, last = 0, same = 1;
        while (nw < MAXN + 4 && (last = store_turns_next_checked(&rc0, &want[nw], &wsp[nw], &wspn[nw])) == 1)
            nw++;
        for (int i = 0; i < nw + 1 && i < MAXN + 4; i++) {
            struct store_msg_row x = { 0 };
            const char *xs = NULL;
            size_t xn = 0;
            int r = store_turns_next(&c1, &x, &xs, &xn);
            if (i < nw)
                same &= r == 1 && x.row == want[i].row && x.position == want[i].position &&
                        x.user == want[i].user && x.at == want[i].at &&
                        x.ntok == want[i].ntok && xs == wsp[i] && xn == wspn[i];
            else
                same &= r == last;
        }
        same &= c1.p == rc0.p && c1.id == rc0.id && c1.pos == rc0.pos && c1.at == rc0.at;
        size_t ng = store_turns_read(&c2, got, gspn, MAXN + 4);
        same &= ng == (size_t)nw && c2.p == rc0.p && c2.id == rc0.id && c2.at == rc0.at;
        for (size_t i = 0; i < ng && i < (size_t)nw; i++)
            same &= got[i].row == want[i].row && got[i].position == want[i].position &&
                    got[i].user == want[i].user && got[i].at == want[i].at &&
                    got[i].ntok == want[i].ntok && got[i].speaker == wsp[i] &&
                    gspn[i] == wspn[i];
        if (!same)
            fprintf(stderr, "reader differs from the reference on round %d: %.*s\n", round,
                    (int)d.n, d.p ? d.p : "");
        agree += same;
        cut += last == -1;
        bad += kind != 0;
        free(text);
        buf_release(&b);
        buf_release(&d);
    }
    T_EQ_INT(agree, ROUNDS);
    T_CHECK(cut > ROUNDS / 10);         /* the damaged rows were refused somewhere */
    T_CHECK(bad > ROUNDS / 2);
}

int main(void)
{
    T_CHECK(mkdtemp(dir) != NULL);
    T_RUN(test_reader_reference);
    T_RUN(test_write_paths);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
