/*
 * test_session_units.c: each session's units kept beside its packed turns
 * (session_units, schema 30; store/units.h, the format in store/turns.c,
 * the writers in ingest.c, schema.c and units.c).
 *
 * The reference is recall's own build_units (recall/rank.c) over a pool of
 * the session's packed turns: every row holds exactly its units (turns'
 * count, first id and position, head role, time and token count, round
 * token count), the dialog flag and whether ids rise. After every write
 * path (add, turns added in later adds and in a group, an extended reply,
 * an import, forget, a store-wide redaction, a memory added, a message
 * deleted or rewritten by hand, the migration from 29 and from 26) every
 * session with binary packed turns has a row of the writers' rule and the
 * turns' count, and no row is left that is not valid or whose session has
 * no packed turns (the triggers on messages drop both). The
 * packer against build_units on random sessions (long runs of replies,
 * dialogs, ids that do not rise); damaged rows read a prefix at most and
 * never outside the row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "recall/policy.h"
#include "recall/recall.h"
#include "store/recall_read.h"
#include "store/units.h"
#include "util/buf.h"
#include "t_store.h"

static char dir[] = "/tmp/cairn-sunits-XXXXXX";
static unsigned rng = 4242;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

/* A session's packed turns (past the mark) as a pool of one session, its
 * units built by recall's build_units (raw_rounds 0), and the row the
 * packer writes of them, compared unit by unit: 0 the same, else 1. */
static int same_as_build_units(const char *turns, size_t len, int64_t n, const char *row,
                               size_t rlen)
{
    struct pool p;
    memset(&p, 0, sizeof p);
    struct rsession s = { 0 };
    struct store_msg_row *r = calloc((size_t)n + 1, sizeof *r);
    size_t *spn = calloc((size_t)n + 1, sizeof *spn);
    struct rmsg *m = calloc((size_t)n + 1, sizeof *m);
    int64_t *at = calloc((size_t)n + 1, sizeof *at);
    struct store_unit *us = NULL;
    int bad = 1;
    if (!r || !spn || !m || !at)
        goto out;
    struct turns_cur c = { turns, turns + len, 0, 0, 0 };
    if ((int64_t)store_turns_read(&c, r, spn, (size_t)n) != n)
        goto out;
    s.dialog = 1;
    s.n_msgs = (int)n;
    int rise = 1;
    for (int64_t i = 0; i < n; i++) {
        m[i] = (struct rmsg){ .row = r[i].row, .position = r[i].position,
                              .role = r[i].user ? ROLE_USER : ROLE_ASSISTANT,
                              .ntok = r[i].ntok };
        at[i] = r[i].at;
        s.dialog &= r[i].user;
        rise &= i == 0 || r[i].row > r[i - 1].row;
    }
    p.s = &s;
    p.ns = p.cs = 1;
    p.m = m;
    p.nm = p.cm = (int)n;
    p.threads = 1;
    build_units(&p, 0);
    if (n && !p.u)
        goto out;
    struct units_cur uc;
    int nu, flags;
    if (store_units_open(&uc, row, rlen, &nu, &flags) || nu != p.nu ||
        flags != ((s.dialog ? STORE_UNITS_DIALOG : 0) | (rise ? STORE_UNITS_IDS_RISE : 0)))
        goto out;
    if (!(us = calloc((size_t)p.nu + 1, sizeof *us)))
        goto out;
    for (int k = 0; k < p.nu; k++) {
        struct store_unit *u = &us[k];
        const struct runit *w = &p.u[k];
        int64_t sum = 0;
        for (int i = w->first; i <= w->last; i++)
            sum += m[i].ntok;
        if (store_units_next(&uc, u) != 1 || u->n_turns != w->last - w->first + 1 ||
            w->head != w->first || u->first_id != m[w->first].row ||
            u->first_pos != m[w->first].position ||
            u->head_user != (m[w->head].role == ROLE_USER) || u->head_ntok != m[w->head].ntok ||
            u->head_at != at[w->head] || u->round_ntok != sum)
            goto out;
    }
    if (store_units_next(&uc, &(struct store_unit){ 0 }) != 0)
        goto out;
    /* a match's unit from the row (store_unit_of, ids rising): every
     * turn's is build_units' m->unit; an id before the first unit's none */
    for (int i = 0; rise && i < p.nm; i++)
        if (store_unit_of(us, p.nu, m[i].row) != m[i].unit ||
            (i == 0 && store_unit_of(us, p.nu, m[i].row - 1) != -1))
            goto out;
    /* store_unit_from: the same answer from any unit (after the id's
     * unit: the whole search), and for ids between and past the turns' */
    for (int i = 0; rise && i < p.nm; i++)
        for (int from = -1; from <= p.nu; from++)
            for (int64_t d = -1; d <= 1; d++)
                if (store_unit_from(us, p.nu, from, m[i].row + d) !=
                    store_unit_of(us, p.nu, m[i].row + d))
                    goto out;
    bad = 0;
out:
    free(p.u);
    free(p.ord);
    free(r);
    free(spn);
    free(m);
    free(at);
    free(us);
    return bad;
}

/* Every row against its session's packed turns (same_as_build_units), and
 * every session with binary packed turns holding a valid row: returns the
 * rows checked. */
static int check_units(sqlite3 *raw)
{
    sqlite3_stmt *st;
    int rows = 0, differ = 0, missing = 0, stale = 0;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT t.session, t.n, t.turns, u.n, u.rule, u.units "
                                "FROM session_turns t LEFT JOIN session_units u ON u.session "
                                "= t.session ORDER BY t.session", -1, &st, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = sqlite3_column_blob(st, 2);
        int tb = sqlite3_column_bytes(st, 2);
        if (!t || tb < 1 || (unsigned char)t[0] != STORE_TURNS_MARK)
            continue;
        if (sqlite3_column_type(st, 3) == SQLITE_NULL) {
            missing++;
            continue;
        }
        if (sqlite3_column_int64(st, 3) != sqlite3_column_int64(st, 1) ||
            sqlite3_column_int(st, 4) != STORE_UNITS_RULE) {
            stale++;
            continue;
        }
        differ += same_as_build_units(t + 1, (size_t)tb - 1, sqlite3_column_int64(st, 1),
                                      sqlite3_column_blob(st, 5),
                                      (size_t)sqlite3_column_bytes(st, 5));
        rows++;
    }
    sqlite3_finalize(st);
    T_EQ_INT(missing, 0);
    T_EQ_INT(stale, 0);
    T_EQ_INT(differ, 0);
    /* no row of a session without packed turns */
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT count(*) FROM session_units WHERE session NOT IN "
                                "(SELECT session FROM session_turns)", -1, &st, NULL),
             SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_INT(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    T_CHECK(rows > 0);
    return rows;
}

/* Session s: n turns from k0 on, roles drawn so that long runs of replies
 * come (a run of 1-8), some sessions all user (a dialog), some speakers
 * and times. */
static void add_session(struct cairn *db, int s, int k0, int n)
{
    struct buf b = BUF_INIT;
    int dialog = s % 5 == 0, run = 0;
    buf_printf(&b, "{\"id\":\"s%d\",\"messages\":[", s);
    for (int k = k0; k < k0 + n; k++) {
        int user;
        if (dialog) {
            user = 1;
        } else if (run > 0) {
            user = 0;
            run--;
        } else {
            user = rnd(2);
            if (!user)
                run = (int)rnd(8);
        }
        buf_printf(&b, "%s{\"id\":\"s%d-%d\",\"role\":\"%s\",\"content\":\"turn %d of %d %s\"",
                   k > k0 ? "," : "", s, k, user ? "user" : "assistant", k, s,
                   rnd(3) ? "" : "with a few more words in it");
        if (dialog)
            buf_printf(&b, ",\"speaker\":\"%s\"", k % 2 ? "Mel" : "Caroline");
        if (rnd(3))
            buf_printf(&b, ",\"at\":%u", 1700000000u + rnd(100000));
        buf_adds(&b, "}");
    }
    buf_adds(&b, "]}");
    T_CHECK(!b.err);
    T_EQ_INT(cairn_add_json(db, b.p, b.n, NULL), CAIRN_OK);
    buf_release(&b);
}

static void test_write_paths(void)
{
    char path[256], file[256];
    struct cairn *db;
    sqlite3 *raw, *rw;
    struct cairn_redact_report rep;
    snprintf(path, sizeof path, "%s/w.db", dir);
    T_EQ_INT(STORE_UNIT_MAX_REPLIES, UNIT_MAX_REPLIES);    /* the writers' rule is recall's */
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    /* add */
    for (int s = 0; s < 40; s++)
        add_session(db, s, 0, 1 + (int)rnd(20));
    T_EQ_INT(check_units(raw), 40);
    /* more turns in later adds (appended), and in a group */
    for (int k = 0; k < 30; k++)
        add_session(db, (int)rnd(40), 100 + k * 20, 1 + (int)rnd(10));
    check_units(raw);
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    for (int k = 0; k < 10; k++)
        add_session(db, k < 5 ? 40 + k : (int)rnd(45), 1000 + k * 20, 1 + (int)rnd(10));
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    T_EQ_INT(check_units(raw), 45);
    /* an extended reply (its session packed again), then a turn after it */
    const char *e1 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x1\",\"role\":\"user\",\"content\":"
                     "\"Hi\"},{\"id\":\"x2\",\"role\":\"assistant\",\"content\":\"a\"}]}";
    const char *e2 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x2\",\"role\":\"assistant\","
                     "\"content\":\"a longer reply now\"},{\"id\":\"x3\",\"role\":\"user\","
                     "\"content\":\"thanks\"}]}";
    T_EQ_INT(cairn_add_json(db, e1, strlen(e1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, e2, strlen(e2), NULL), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT n FROM session_units WHERE session = (SELECT id FROM sessions "
                       "WHERE ext_id = 'x')"), 3);
    T_EQ_INT(check_units(raw), 46);
    /* an import (the `cairn add` format) */
    snprintf(file, sizeof file, "%s/in.jsonl", dir);
    FILE *f = fopen(file, "w");
    T_CHECK(f != NULL);
    for (int s = 0; f && s < 5; s++) {
        fprintf(f, "{\"id\":\"imp%d\",\"messages\":[", s);
        for (int k = 0; k < 9; k++)
            fprintf(f, "%s{\"role\":\"%s\",\"content\":\"imported %d %d\"}", k ? "," : "",
                    k % 4 ? "assistant" : "user", s, k);
        fprintf(f, "]}\n");
    }
    if (f)
        fclose(f);
    struct cairn_import_stats ist;
    memset(&ist, 0, sizeof ist);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_JSONL, file, NULL, &ist), CAIRN_OK);
    T_EQ_INT((int64_t)ist.sessions_added, 5);
    T_EQ_INT(check_units(raw), 51);
    /* forget: the row goes with the session */
    for (int k = 0; k < 5; k++) {
        char id[16];
        snprintf(id, sizeof id, "s%d", k * 7);
        int rc = cairn_forget(db, id);
        T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    }
    T_EQ_INT(check_units(raw), 46);
    /* a store-wide redaction rewriting a speaker: its session packed again */
    T_EQ_INT(cairn_set(db, "redact", "0"), CAIRN_OK);
    const char *k1 = "{\"id\":\"k\",\"messages\":[{\"role\":\"user\",\"speaker\":"
                     "\"sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"content\":\"hi\"},"
                     "{\"role\":\"assistant\",\"content\":\"hello\"}]}";
    T_EQ_INT(cairn_add_json(db, k1, strlen(k1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "redact", NULL), CAIRN_OK);
    T_EQ_INT(cairn_redact_store(db, 0, &rep), CAIRN_OK);
    T_EQ_INT(check_units(raw), 47);
    /* a memory: no session's row moves */
    int64_t before = count(db, "SELECT sum(length(units)) + count(*) FROM session_units");
    struct cairn_memory_new mem = { .text = "the build uses ninja", .scope = "p" };
    T_EQ_INT(cairn_memory_add(db, &mem, NULL), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT sum(length(units)) + count(*) FROM session_units"), before);
    T_EQ_INT(check_units(raw), 47);
    /* by hand: a message rewritten (its length) or deleted drops the packed
     * turns and so the units; a row with another rule or count is not
     * valid (check_units counts it stale), and the next add packs both */
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, "UPDATE messages SET ntok = ntok + 1 WHERE id = (SELECT min(id) "
                          "FROM messages WHERE session = (SELECT id FROM "
                          "sessions WHERE ext_id = 's1')); DELETE FROM messages WHERE id = "
                          "(SELECT max(id) FROM messages WHERE session = (SELECT id FROM "
                          "sessions WHERE ext_id = 's2'))", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM session_units WHERE session IN (SELECT id FROM "
                       "sessions WHERE ext_id IN ('s1', 's2'))"), 0);
    T_EQ_INT(check_units(raw), 45);
    add_session(db, 1, 5000, 3);
    add_session(db, 2, 5000, 3);
    T_EQ_INT(check_units(raw), 47);
    /* a row written with another rule is left alone by readers; the
     * migration's fill (below) writes it again */
    T_EQ_INT(sqlite3_exec(rw, "UPDATE session_units SET rule = 7 WHERE session = (SELECT "
                          "min(session) FROM session_units)", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(store_units_fill(db, -1), CAIRN_OK);
    T_EQ_INT(check_units(raw), 47);
    /* a version-29 store: the migration writes every session's row */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, SESSION_UNITS_V30_DROP "PRAGMA user_version=29", NULL, NULL, NULL),
             SQLITE_OK);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(count(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(check_units(raw), 47);
    /* one made older by hand that kept the table (its rows go, all are
     * written again); and a version-26 store whose turns are packed again
     * (store_turns_fill writes the units of what it packs) */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, "UPDATE session_units SET units = x'00'; PRAGMA user_version=29",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(check_units(raw), 47);
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM session_turns; " VAULT_TOTALS_V29_DROP
                          "PRAGMA user_version=26", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(count_raw(rw, "SELECT count(*) FROM sqlite_master WHERE name = 'session_units'"),
             0);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(check_units(raw), 47);
    sqlite3_close(rw);
    sqlite3_close(raw);
    cairn_close(db);
}

/* Random sessions (long runs of replies, dialogs, ids not rising, odd
 * times) packed, against build_units; rows cut or changed read a prefix
 * at most, inside the row. */
static void test_pack(void)
{
    enum { ROUNDS = 5000, MAXN = 60 };
    int same = 0, cut_ok = 0, dialogs = 0, longs = 0, rising = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct buf t = BUF_INIT, u = BUF_INIT;
        struct turns_cur w = { NULL, NULL, 0, 0, 0 };
        int n = (int)rnd(MAXN), dialog = rnd(6) == 0, run = 0;
        int64_t id = rnd(1000), at = 1672533899;
        for (int i = 0; i < n; i++) {
            id += rnd(5) ? 1 : (int64_t)rnd(1000) - 500;
            at += rnd(4) ? (int64_t)rnd(400) : -(int64_t)rnd(100000);
            int user = dialog ? 1 : run > 0 ? 0 : (int)rnd(2);
            if (run > 0)
                run--;
            else if (!user)
                run = (int)rnd(9);
            longs += run > UNIT_MAX_REPLIES;
            store_turn_write(&t, &w, id, i + (int)rnd(2), user, rnd(5) ? at : CAIRN_NO_TIME,
                             (int)rnd(3000), NULL, 0);
        }
        dialogs += dialog && n;
        T_CHECK(!t.err);
        T_EQ_INT(store_units_pack(&u, t.p ? t.p : "", t.n, n), 0);
        /* a wrong count is no row */
        struct buf v = BUF_INIT;
        T_EQ_INT(store_units_pack(&v, t.p ? t.p : "", t.n, n + 1), -1);
        buf_release(&v);
        same += !same_as_build_units(t.p ? t.p : "", t.n, n, u.p, u.n);
        {
            struct units_cur o;
            int onu, ofl;
            rising += !store_units_open(&o, u.p, u.n, &onu, &ofl) &&
                      (ofl & STORE_UNITS_IDS_RISE) && onu >= 3;
        }
        /* cut or changed: every unit read lies in the row */
        char *row = malloc(u.n);
        T_CHECK(row != NULL);
        memcpy(row, u.p, u.n);
        size_t cut = rnd((unsigned)u.n);
        struct units_cur c = { row, row, 0, 0, 0, 0 };
        int nu, fl, k = 0, r = -1;
        struct store_unit x;
        if (!store_units_open(&c, row, cut, &nu, &fl)) {
            while ((r = store_units_next(&c, &x)) == 1)
                k++;
        }
        cut_ok += r == -1 && c.p <= row + cut;
        for (int z = (int)rnd(3) + 1; z > 0; z--)
            row[rnd((unsigned)u.n)] = (char)rnd(256);
        if (!store_units_open(&c, row, u.n, &nu, &fl)) {
            while (store_units_next(&c, &x) == 1)
                T_CHECK(c.p > row && c.p <= row + u.n);
        }
        free(row);
        buf_release(&t);
        buf_release(&u);
    }
    T_EQ_INT(same, ROUNDS);
    T_EQ_INT(cut_ok, ROUNDS);
    T_CHECK(dialogs > 100 && longs > 100);      /* both rules were met */
    T_CHECK(rising > 100);                      /* store_unit_of was tried */
}

/* A value of 1 to 64 bits, most small (a varint of each length met). */
static uint64_t rnd_bits(void)
{
    uint64_t v = ((uint64_t)rnd(1u << 22) << 42) ^ ((uint64_t)rnd(1u << 21) << 21) ^ rnd(1u << 21);
    unsigned bits = rnd(3) ? 1 + rnd(16) : 1 + rnd(64);
    return bits >= 64 ? v : v & ((UINT64_C(1) << bits) - 1);
}

/* a + b as the rows' sums wrap (the test's own values never overflow) */
static int64_t wrap_add(int64_t a, uint64_t b)
{
    return (int64_t)((uint64_t)a + b);
}

/* store_units_read (no end checked a varint while a whole unit's bytes
 * are left, the row's last bytes read from a copy) against store_units_next
 * one unit at a time, the reference: the same count, units and cursor on
 * random rows, cut, changed, grown with overlong varints, or random bytes,
 * each at the end of its own block (the sanitizer build sees a byte read
 * past it). */
static void test_read_many(void)
{
    enum { ROUNDS = 20000, MAXU = 40 };
    int kinds[5] = { 0 }, long_rows = 0, short_rows = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct buf b = BUF_INIT;
        struct units_cur w = { NULL, NULL, 0, 0, 0, 0 };
        int nu = (int)rnd(MAXU), kind = (int)rnd(5);
        buf_addc(&b, (char)STORE_UNITS_MARK);
        buf_addc(&b, (char)nu);
        buf_addc(&b, (char)rnd(4));
        for (int i = 0; i < nu; i++) {
            int big = !rnd(4);
            struct store_unit u = {
                .first_id = big ? (int64_t)rnd_bits() : wrap_add(w.id, 1 + rnd(5)),
                .first_pos = wrap_add(w.pos, rnd(4) - (big && rnd(2) ? rnd_bits() : 0)),
                .head_at = rnd(4) ? (big ? (int64_t)rnd_bits() : wrap_add(w.at, rnd(5000)))
                                  : CAIRN_NO_TIME,
                .n_turns = big ? (int)(rnd_bits() & 0x7fffffff) : 1 + (int)rnd(6),
                .head_user = (int)rnd(2),
                .head_ntok = big ? (int)(rnd_bits() & 0x7fffffff) : (int)rnd(3000),
            };
            u.round_ntok = u.head_ntok + (big ? (int64_t)(rnd_bits() >> 1) : (int64_t)rnd(20000));
            store_unit_write(&b, &w, &u);
        }
        T_CHECK(!b.err);
        size_t len = b.n;
        if (kind == 1 && len > 3) {
            len = 3 + rnd((unsigned)(len - 3));               /* cut */
        } else if (kind == 2) {
            for (int z = (int)rnd(4) + 1; z > 0; z--)          /* changed */
                b.p[rnd((unsigned)b.n)] = (char)rnd(256);
        } else if (kind == 3) {
            /* an overlong varint (10-13 bytes, the tenth's value too big
             * or not) put in somewhere, or at the end */
            size_t at = 3 + rnd((unsigned)(b.n - 2));
            int ol = 10 + (int)rnd(4);
            char run[13];
            for (int j = 0; j < ol; j++)
                run[j] = (char)(0x80 | rnd(128));
            run[9] = (char)(rnd(2) ? 0x01 : 0x02 | (rnd(2) << 7));
            run[ol - 1] &= 0x7f;
            struct buf g = BUF_INIT;
            buf_add(&g, b.p, at > b.n ? b.n : at);
            buf_add(&g, run, (size_t)ol);
            if (at < b.n)
                buf_add(&g, b.p + at, b.n - at);
            T_CHECK(!g.err);
            buf_release(&b);
            b = g;
            len = b.n;
        } else if (kind == 4) {
            len = rnd(200);                                      /* random bytes */
            buf_reset(&b);
            buf_addc(&b, (char)STORE_UNITS_MARK);
            buf_addc(&b, (char)rnd(60));
            for (size_t j = 2; j < len; j++)
                buf_addc(&b, (char)(rnd(3) ? rnd(256) : 0x80 | rnd(128)));
            T_CHECK(!b.err);
            len = len < b.n ? len : b.n;
        }
        kinds[kind]++;
        long_rows += len > 200;
        short_rows += len < 61;
        char *row = malloc(len ? len : 1);
        T_CHECK(row != NULL);
        if (len)
            memcpy(row, b.p, len);
        struct units_cur c1, c2;
        int n1, f1;
        if (!store_units_open(&c1, row, len, &n1, &f1)) {
            c2 = c1;
            size_t want = rnd(4) ? (size_t)n1 : rnd(MAXU + 1);
            struct store_unit r1[MAXU + 64], r2[MAXU + 64];
            size_t k1 = 0;
            while (k1 < want && k1 < MAXU + 64 && store_units_next(&c1, &r1[k1]) == 1)
                k1++;
            size_t k2 = store_units_read(&c2, r2, want < MAXU + 64 ? want : MAXU + 64);
            T_EQ_INT((int)k2, (int)k1);
            for (size_t j = 0; j < k1 && j < k2; j++)
                T_CHECK(r1[j].first_id == r2[j].first_id && r1[j].first_pos == r2[j].first_pos &&
                        r1[j].head_at == r2[j].head_at && r1[j].round_ntok == r2[j].round_ntok &&
                        r1[j].n_turns == r2[j].n_turns && r1[j].head_user == r2[j].head_user &&
                        r1[j].head_ntok == r2[j].head_ntok);
            T_CHECK(c1.p == c2.p && c1.id == c2.id && c1.pos == c2.pos && c1.at == c2.at &&
                    c1.left == c2.left);
        }
        free(row);
        buf_release(&b);
    }
    for (int k = 0; k < 5; k++)
        T_CHECK(kinds[k] > ROUNDS / 10);
    T_CHECK(long_rows > 1000 && short_rows > 1000);   /* both of its paths were met */
}

int main(void)
{
    T_CHECK(mkdtemp(dir) != NULL);
    T_RUN(test_pack);
    T_RUN(test_read_many);
    T_RUN(test_write_paths);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
