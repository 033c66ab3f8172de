/*
 * test_session_sizes.c: the pruning's packed session sizes (session_sizes,
 * schema 24; store/schema.c's triggers, recall_read.c's
 * store_sessions_size).
 *
 * After every write path (new sessions over several rows of 128, turns
 * added to sessions in later adds and in a group, forget) each session's
 * slot holds exactly its session_stats (turns, rounds) and every other
 * slot zeros; store_sessions_size of lists of sessions (sparse, dense, with
 * sessions that do not exist) equals the sums over session_stats. A row
 * that is damaged (short, not hex) or missing is not used (the sums stay
 * right); a slot changed to other valid digits changes the sum, so the
 * rows are what is read. A version-23 store gets its rows from the
 * migration. store_hex8, which reads a field's eight digits at once, and
 * store_hex16, a slot's two fields at once, give their reference's value
 * for every byte at every place.
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

static char dir[] = "/tmp/cairn-ssizes-XXXXXX";
static unsigned seed = 2412;

static unsigned pick(unsigned n)
{
    seed = seed * 1664525u + 1013904223u;
    return (seed >> 9) % n;
}

/* Chat c: n turns from turn k0 on; all user turns in some chats (then
 * every turn is a round), mixed in others. */
static void add_chat_turns(struct cairn *db, int c, int k0, int n)
{
    struct buf b = BUF_INIT;
    int all_user = c % 3 == 0;
    buf_printf(&b, "{\"id\":\"c%d\",\"messages\":[", c);
    for (int k = k0; k < k0 + n; k++)
        buf_printf(&b, "%s{\"id\":\"c%d-%d\",\"role\":\"%s\",\"content\":\"chat %d turn %d\"}",
                   k > k0 ? "," : "", c, k, all_user || pick(2) ? "user" : "assistant", c, k);
    buf_adds(&b, "]}");
    T_CHECK(!b.err);
    T_EQ_INT(cairn_add_json(db, b.p, b.n, NULL), CAIRN_OK);
    buf_release(&b);
}

/* Slots against session_stats: none differs, none without a session is
 * anything but zeros, every row 128 slots long. */
static void check_slots(sqlite3 *raw)
{
    /* the digits that are not zero are those of sessions' slots */
    static const char sql[] =
        "SELECT (SELECT count(*) FROM session_stats t WHERE (SELECT substr(sizes, (t.session & "
        "127) * 16 + 1, 16) FROM session_sizes WHERE blk = t.session >> 7) IS NOT printf("
        "'%08x%08x', t.n, CASE WHEN t.nuser = t.n THEN t.n ELSE t.nuser END)), (SELECT count(*) "
        "FROM session_sizes WHERE length(sizes) <> 2048), (SELECT count(*) FROM session_sizes z, "
        "(WITH RECURSIVE i(k) AS (SELECT 0 UNION ALL SELECT k + 1 FROM i WHERE k < 127) SELECT k "
        "FROM i) WHERE substr(z.sizes, k * 16 + 1, 16) <> '0000000000000000' AND NOT EXISTS "
        "(SELECT 1 FROM session_stats WHERE session = z.blk * 128 + k)), (SELECT count(*) FROM "
        "session_stats)";
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    for (int c = 0; c < 3; c++)
        T_EQ_INT(sqlite3_column_int(st, c), 0);
    T_CHECK(sqlite3_column_int(st, 3) > 128);
    sqlite3_finalize(st);
}

/* The sums over session_stats of ids[n] (brute force). */
static void sums(sqlite3 *raw, const int64_t *ids, int n, int64_t *msgs, int64_t *units,
                 int *dialogs)
{
    sqlite3_stmt *st;
    *msgs = *units = 0;
    *dialogs = 0;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT n, CASE WHEN nuser = n THEN n ELSE nuser END, "
                                "nuser = n AND n > 0 FROM session_stats WHERE session = ?", -1, &st, NULL),
             SQLITE_OK);
    for (int i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[i]);
        if (sqlite3_step(st) == SQLITE_ROW) {
            *msgs += sqlite3_column_int64(st, 0);
            *units += sqlite3_column_int64(st, 1);
            *dialogs += sqlite3_column_int64(st, 2);
        }
    }
    sqlite3_finalize(st);
}

/* lists whose sessions' turns came one by one (the packed rows answered) */
static int each_lists;

/* store_sessions_size against the brute force for lists of every
 * density, and store_sessions_size_each's sums and each session's turns
 * when the rows answered; returns how many lists differed (0 when
 * right). */
static int check_sizes(struct cairn *db, sqlite3 *raw, int64_t top)
{
    int64_t ids[600], each[600], m, u, wm, wu, em, eu;
    int bad = 0, d, wd;
    for (int l = 0; l < 40; l++) {
        int n = 0;
        unsigned keep = 1 + pick(l % 4 == 0 ? 40 : 2);    /* one in keep */
        for (int64_t s = 1 + pick(5); s <= top + 3 && n < 600; s++)
            if (!pick(keep))
                ids[n++] = s;
        if (!n)
            ids[n++] = top;
        T_EQ_INT(store_sessions_shape(db, ids, n, &m, &u, &d), CAIRN_OK);
        sums(raw, ids, n, &wm, &wu, &wd);
        bad += m != wm || u != wu || d != wd;
        T_EQ_INT(store_sessions_size(db, ids, n, &wm, &wu), CAIRN_OK);
        bad += m != wm || u != wu;
        int got = -1;
        for (int i = 0; i < n; i++)
            each[i] = -2;
        T_EQ_INT(store_sessions_size_each(db, ids, n, &em, &eu, each, &got), CAIRN_OK);
        bad += em != m || eu != u || (got != 0 && got != 1);
        for (int i = 0; got == 1 && i < n; i++) {
            int64_t one, ou;
            int od;
            sums(raw, &ids[i], 1, &one, &ou, &od);
            bad += each[i] != one;
        }
        each_lists += got == 1;
    }
    return bad;
}

static void test_sizes(void)
{
    char path[256];
    struct cairn *db;
    sqlite3 *raw, *rw;
    snprintf(path, sizeof path, "%s/z.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    for (int c = 0; c < 300; c++)
        add_chat_turns(db, c, 0, 1 + (int)pick(6));
    check_slots(raw);
    T_EQ_INT(check_sizes(db, raw, 300), 0);
    T_CHECK(each_lists > 0);              /* the rows answered some lists one by one */
    /* later turns, alone and in a group */
    for (int k = 0; k < 40; k++)
        add_chat_turns(db, (int)pick(300), 10 + k * 10, 1 + (int)pick(4));
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    for (int k = 0; k < 20; k++)
        add_chat_turns(db, k < 4 ? 300 + k : (int)pick(304), 900 + k * 10, 1 + (int)pick(4));
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    check_slots(raw);
    T_EQ_INT(check_sizes(db, raw, 304), 0);
    /* forget: the slot goes back to zeros */
    for (int k = 0; k < 6; k++) {
        char id[16];
        snprintf(id, sizeof id, "c%d", k * 41);
        int rc = cairn_forget(db, id);
        T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    }
    check_slots(raw);
    T_EQ_INT(check_sizes(db, raw, 304), 0);
    /* other valid digits in a slot: read, so the sums move */
    T_EQ_INT(sqlite3_exec(rw, "UPDATE session_sizes SET sizes = substr(sizes, 1, 16 * 5) || "
                          "'0000009900000099' || substr(sizes, 16 * 6 + 1) WHERE blk = 1",
                          NULL, NULL, NULL), SQLITE_OK);
    T_CHECK(check_sizes(db, raw, 304) > 0);
    /* damaged or missing rows: not used */
    T_EQ_INT(sqlite3_exec(rw, "UPDATE session_sizes SET sizes = substr(sizes, 1, 16 * 5) || "
                          "'00000x0100000001' || substr(sizes, 16 * 6 + 1) WHERE blk = 1;"
                          "UPDATE session_sizes SET sizes = substr(sizes, 2) WHERE blk = 0",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(check_sizes(db, raw, 304), 0);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM session_sizes WHERE blk = 1", NULL, NULL, NULL),
             SQLITE_OK);
    T_EQ_INT(check_sizes(db, raw, 304), 0);
    /* a version-23 store: the migration fills every row */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, SESSION_SIZES_V24_DROP "PRAGMA user_version=23", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(rw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM session_sizes"), 3);
    T_EQ_INT(count(db, "SELECT user_version FROM pragma_user_version"), CAIRN_SCHEMA_VERSION);
    check_slots(raw);
    T_EQ_INT(check_sizes(db, raw, 304), 0);
    cairn_close(db);
    sqlite3_close(raw);
}

/* store_hex8 against its reference, store_hex_field(p, 8): random fields
 * of digits, each with every byte value at each of its eight places (the
 * edges of both ranges, bytes with the top bit set, upper case), and
 * random bytes; every one the same value or the same -1. A bound off by
 * one in either range (0x2f, 0x3a, 0x60, 0x67 taken) fails it. */
static void test_hex8(void)
{
    static const char hx[] = "0123456789abcdef";
    unsigned char f[8];
    long bad = 0, valid = 0;
    for (int r = 0; r < 2000; r++) {
        for (int i = 0; i < 8; i++)
            f[i] = (unsigned char)hx[pick(16)];
        if (store_hex8(f) != store_hex_field(f, 8))
            bad++;
        valid += store_hex8(f) >= 0;
        for (int at = 0; r < 40 && at < 8; at++) {
            unsigned char keep = f[at];
            for (int c = 0; c < 256; c++) {
                f[at] = (unsigned char)c;
                bad += store_hex8(f) != store_hex_field(f, 8);
            }
            f[at] = keep;
        }
        for (int i = 0; i < 8; i++)
            f[i] = (unsigned char)pick(256);
        bad += store_hex8(f) != store_hex_field(f, 8);
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(valid, 2000);
    memcpy(f, "ffffffff", 8);
    T_CHECK(store_hex8(f) == 0xffffffffll);
    memcpy(f, "0000001a", 8);
    T_CHECK(store_hex8(f) == 26);
}

/* One slot's reference: both fields by store_hex_field, -1 if either is
 * not digits. */
static int hex16_ref(const unsigned char *p, int64_t *a, int64_t *b)
{
    *a = store_hex_field(p, 8);
    *b = store_hex_field(p + 8, 8);
    return *a < 0 || *b < 0 ? -1 : 0;
}

/* store_hex16 (a slot at once: SSE2 on x86-64) against hex16_ref, as
 * test_hex8 does: random slots, each with every byte value at each of its
 * sixteen places, and random bytes; the same answer and, when it reads,
 * the same two values. */
static void test_hex16(void)
{
    static const char hx[] = "0123456789abcdef";
    unsigned char f[16];
    long bad = 0, valid = 0, tried = 0;
    for (int r = 0; r < 2000; r++) {
        int64_t a, b, ra, rb;
        for (int i = 0; i < 16; i++)
            f[i] = (unsigned char)hx[pick(16)];
        int got = store_hex16(f, &a, &b);
        bad += got != hex16_ref(f, &ra, &rb) || (!got && (a != ra || b != rb));
        valid += got == 0;
        for (int at = 0; r < 40 && at < 16; at++) {
            unsigned char keep = f[at];
            for (int c = 0; c < 256; c++) {
                f[at] = (unsigned char)c;
                got = store_hex16(f, &a, &b);
                bad += got != hex16_ref(f, &ra, &rb) || (!got && (a != ra || b != rb));
                tried++;
            }
            f[at] = keep;
        }
        for (int i = 0; i < 16; i++)
            f[i] = (unsigned char)pick(256);
        got = store_hex16(f, &a, &b);
        bad += got != hex16_ref(f, &ra, &rb) || (!got && (a != ra || b != rb));
    }
    T_EQ_INT(bad, 0);
    T_EQ_INT(valid, 2000);
    T_EQ_INT(tried, 40 * 16 * 256);
    int64_t a = 0, b = 0;
    memcpy(f, "ffffffff0000001a", 16);
    T_EQ_INT(store_hex16(f, &a, &b), 0);
    T_CHECK(a == 0xffffffffll && b == 26);
    memcpy(f, "0000001aFfffffff", 16);     /* upper case is not a digit */
    T_EQ_INT(store_hex16(f, &a, &b), -1);
}

int main(void)
{
    T_CHECK(mkdtemp(dir) != NULL);
    T_RUN(test_hex8);
    T_RUN(test_hex16);
    T_RUN(test_sizes);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
