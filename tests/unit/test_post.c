/*
 * test_post.c: the common words' packed postings (schema 26; store/post.c
 * writes and reads them, recall/tier.c's build fills them, gather.c's
 * packed_matches reads them in place of the FTS5 walk).
 *
 * A store of 60 sessions where "alpha" is in every message (1-3 times)
 * and "bravo" in about half: both common (TIER_DF_MIN), "zephyr" and
 * "kernel" not. After every write path (the build, adds, a group that
 * adds a message and extends it, a reply extended later, a store-wide
 * redaction, forget) each packed word's blocks, read whole, are exactly
 * what the FTS5 walk of the word gives (message, session, count, length)
 * but for the messages post_dirty lists, and the pools of gather, exact
 * and pruned, with a session excluded or not, are the walk's (recall.packed
 * "0"): the same messages, counts, dfs and left-out counts ("database",
 * whose stem "databas" a query of it would not find, packed too by the
 * word: schema 28). Blocks damaged,
 * missing or with a wrong count are not read (the word is walked); past
 * POST_DIRTY_MAX rewritten messages every word is walked; a version-25
 * store gets empty tables and walks until the next build.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "recall/recall.h"
#include "store/post.h"
#include "store/recall_read.h"
#include "util/buf.h"
#include "t_pool.h"
#include "t_store.h"

static char dir[] = "/tmp/cairn-post-XXXXXX";
static unsigned rng = 2626;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static const char *const filler[] = { "cache", "delta", "kernel", "ledger", "orbit" };

/* A message of alpha, filler words and bravo (and zephyr in one of 13). */
static void fill(struct buf *b, int s, int k)
{
    int na = 1 + (int)rnd(3), nb = rnd(2) ? 1 + (int)rnd(2) : 0, nf = (int)rnd(4);
    for (int i = 0; i < na; i++)
        buf_adds(b, "alpha ");
    for (int i = 0; i < nf; i++)
        buf_printf(b, "%s ", filler[rnd(5)]);
    for (int i = 0; i < nb; i++)
        buf_adds(b, "bravo ");
    if (rnd(13) == 0)
        buf_adds(b, "zephyr ");
    /* two messages in three (no draw: the others' counts as before):
     * common, its stem "databas" a query of which finds another token */
    if ((s + k) % 3)
        buf_adds(b, "database");
}

/* Session s: n messages (ids from k0 on). */
static int add_session(struct cairn *db, int s, int k0, int n)
{
    return add_json_session(db, "p", s, k0, n, fill);
}

static int t_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The walk of one word, as the reader would otherwise take it. */
struct walk {
    struct post_ent v[8192];
    int             n;
};

static int on_walk(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    struct walk *w = arg;
    if (w->n == 8192)
        return CAIRN_TOOBIG;
    w->v[w->n++] = (struct post_ent){ row, sess, tf[0], ntok };
    return 0;
}

/* Token tok's blocks read whole (want_whole) and equal the walk of a
 * query of word (tok itself when NULL) up to upto but for the dirty
 * messages; or do not read at all. */
static void check_spelt(struct cairn *db, const char *tok, const char *word, int want_whole)
{
    static struct walk w;
    const struct store_scope all = { NULL, NULL };
    struct post_ent *v = NULL;
    int64_t upto = 0, *d = NULL;
    int nv = 0, nd = 0;
    char expr[64];
    T_EQ_INT(store_post_state(db, &upto, &d, &nd), CAIRN_OK);
    T_EQ_INT(store_post_read(db, tok, strlen(tok), &v, &nv), CAIRN_OK);
    T_EQ_INT(v != NULL, want_whole);
    if (v) {
        snprintf(expr, sizeof expr, "\"%s\"", word ? word : tok);
        w.n = 0;
        T_EQ_INT(store_term_matches_in(db, &all, expr, strlen(expr), 1, NULL, 1, INT64_MIN, upto,
                                       1, on_walk, &w), CAIRN_OK);
        int i = 0, j = 0, diff = 0;
        for (; i < nv; i++) {
            if (bsearch(&v[i].row, d, (size_t)nd, sizeof *d, t_cmp_i64))
                continue;             /* the reader drops it and walks it */
            while (j < w.n && bsearch(&w.v[j].row, d, (size_t)nd, sizeof *d, t_cmp_i64))
                j++;
            if (j >= w.n || memcmp(&v[i], &w.v[j], sizeof v[i])) {
                diff++;
                break;
            }
            j++;
        }
        while (j < w.n && bsearch(&w.v[j].row, d, (size_t)nd, sizeof *d, t_cmp_i64))
            j++;
        T_EQ_INT(diff, 0);
        T_EQ_INT(j, w.n);
        T_CHECK(nv >= 1000);
    }
    free(v);
    free(d);
}

static void check_word(struct cairn *db, const char *tok, int want_whole)
{
    check_spelt(db, tok, NULL, want_whole);
}

/* The pool of question, packed postings read or not; two: the exact
 * merge (and the pool's load) on two threads from the first match
 * (recall.split_msgs "1"), else on one (recall.threads "1"). */
static void pool_of2(struct cairn *db, const char *question, int packed, int fast,
                     const char *excl, int two, struct query *q, struct pool *p)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.method = CAIRN_METHOD_KEYWORD;
    o.flags = CAIRN_RECALL_MATCHED_ONLY | (fast ? CAIRN_RECALL_FAST : 0);
    o.budget = 1000;
    o.exclude_session = excl;
    T_EQ_INT(cairn_set(db, "recall.packed", packed ? NULL : "0"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.threads", two ? NULL : "1"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.split_msgs", two ? "1" : NULL), CAIRN_OK);
    /* the loaded pools' turns compared (the unit rows' pool, on by
     * default, against the loaded one: test_recall_units) */
    T_EQ_INT(cairn_set(db, "recall.units", "0"), CAIRN_OK);
    T_EQ_INT(query_parse(q, question, 1700000000, 0), 0);
    T_EQ_INT(gather(db, q, &o, NULL, NULL, NULL, p), CAIRN_OK);
}

/* The pool of question, packed postings read or not. */
static void pool_of(struct cairn *db, const char *question, int packed, int fast,
                    const char *excl, struct query *q, struct pool *p)
{
    pool_of2(db, question, packed, fast, excl, 0, q, p);
}

/* The pools of question with and without the packed postings are the same. */
static void same_pool1(struct cairn *db, const char *question, int fast, const char *excl)
{
    struct query qa, qb;
    struct pool a, b;
    pool_of(db, question, 0, fast, excl, &qa, &a);
    pool_of(db, question, 1, fast, excl, &qb, &b);
    T_CHECK(t_pools_same(&qa, &a, &qb, &b) > 0);
    pool_free(&b);
    query_free(&qb);
    /* the exact merge split by row on two threads: the walk's pool too
     * (a half put before the other, its rows or dfs lost, fails) */
    pool_of2(db, question, 1, fast, excl, 1, &qb, &b);
    T_CHECK(t_pools_same(&qa, &a, &qb, &b) > 0);
    pool_free(&a);
    pool_free(&b);
    query_free(&qa);
    query_free(&qb);
    T_EQ_INT(cairn_set(db, "recall.threads", NULL), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.split_msgs", NULL), CAIRN_OK);
}

static void same_pools(struct cairn *db)
{
    static const char *const qs[] = { "alpha", "alpha bravo", "bravo zephyr", "zephyr kernel",
                                      "alpha kernel orbit", "bravo", "database",
                                      "databases zephyr", "bravo database alpha" };
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        for (int fast = 0; fast < 2; fast++) {
            same_pool1(db, qs[i], fast, NULL);
            same_pool1(db, qs[i], fast, "p3");
        }
    }
}

/* The words read by one batch (store_post_reads: two statements, reset
 * between words) are each the word's store_post_read: a word with no
 * token (NULL), one not packed, the same word twice. */
static void check_batch(struct cairn *db)
{
    const char *tok[6] = { "alpha", NULL, "zephyr", "bravo", "nosuchword", "alpha" };
    size_t tn[6];
    struct post_ent *v[6], *one;
    int nv[6], n1;
    for (int i = 0; i < 6; i++)
        tn[i] = tok[i] ? strlen(tok[i]) : 0;
    T_EQ_INT(store_post_reads(db, tok, tn, 6, v, nv), CAIRN_OK);
    T_CHECK(!v[1] && !nv[1] && !v[4] && !nv[4]);
    for (int i = 0; i < 6; i++) {
        if (!tok[i])
            continue;
        T_EQ_INT(store_post_read(db, tok[i], tn[i], &one, &n1), CAIRN_OK);
        T_EQ_INT(nv[i], n1);
        T_EQ_INT(v[i] != NULL, one != NULL);
        T_CHECK(!one || !memcmp(v[i], one, (size_t)n1 * sizeof *one));
        free(one);
    }
    T_EQ_INT(nv[0], nv[5]);
    for (int i = 0; i < 6; i++)
        free(v[i]);
}

static void check_all(struct cairn *db, int whole)
{
    check_batch(db);
    check_word(db, "alpha", whole);
    check_word(db, "bravo", whole);
    check_spelt(db, "databas", "database", whole);
    same_pools(db);
}

static void test_write_paths(void)
{
    char path[300];
    struct cairn *db;
    struct cairn_redact_report rep;
    snprintf(path, sizeof path, "%s/post.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    /* the tiers decide too on the pruned path: off, so the walk is what
     * the packed postings replace on both paths */
    T_EQ_INT(cairn_set(db, "recall.tier", "0"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "10"), CAIRN_OK);
    for (int s = 0; s < 60; s++)
        T_EQ_INT(add_session(db, s, 0, 40), CAIRN_OK);
    /* a secret, for the redaction below */
    T_EQ_INT(cairn_set(db, "redact", "0"), CAIRN_OK);
    const char *k1 = "{\"id\":\"k\",\"messages\":[{\"role\":\"user\",\"content\":\"alpha bravo "
                     "sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA alpha\"}]}";
    T_EQ_INT(cairn_add_json(db, k1, strlen(k1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "redact", NULL), CAIRN_OK);
    /* none built: nothing read */
    T_EQ_INT(count(db, "SELECT upto FROM post_state"), 0);
    check_all(db, 0);

    /* the build: both words, every match up to the newest message */
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT upto FROM post_state"), count(db, "SELECT max(id) FROM messages"));
    T_EQ_INT(count(db, "SELECT count(*) FROM post_terms"), 3);   /* and databas */
    T_EQ_INT(count(db, "SELECT n FROM post_terms WHERE term = 'alpha'"), 2401);
    T_CHECK(count(db, "SELECT count(*) FROM post_blocks WHERE term = 'alpha'") >= 2401 / POST_BLOCK);
    check_all(db, 1);

    /* adds: appended, upto moves, nothing left to walk; enough of them
     * that small blocks fill up to POST_MERGE and new ones start */
    for (int k = 0; k < 40; k++)
        T_EQ_INT(add_session(db, (int)rnd(70), 100 + 10 * k, 1 + (int)rnd(6)), CAIRN_OK);
    T_CHECK(count(db, "SELECT count(*) FROM post_blocks WHERE term = 'alpha' AND n >= "
                "64 AND lo > 2000") >= 1);
    T_EQ_INT(count(db, "SELECT upto FROM post_state"), count(db, "SELECT max(id) FROM messages"));
    T_EQ_INT(count(db, "SELECT n FROM post_terms WHERE term = 'alpha'"),
             count(db, "SELECT count(*) FROM messages WHERE content LIKE '%alpha%'"));
    check_all(db, 1);

    /* a group: a message added, then extended in the same transaction */
    const char *e1 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x1\",\"role\":\"user\",\"content\":"
                     "\"alpha then\"}]}";
    const char *e2 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x1\",\"role\":\"user\",\"content\":"
                     "\"alpha then bravo bravo alpha alpha\"},{\"id\":\"x2\",\"role\":"
                     "\"assistant\",\"content\":\"bravo\"}]}";
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, e1, strlen(e1), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, e2, strlen(e2), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_dirty"), 0);
    check_all(db, 1);

    /* a reply extended later: dirty, walked */
    const char *e3 = "{\"id\":\"x\",\"messages\":[{\"id\":\"x1\",\"role\":\"user\",\"content\":"
                     "\"alpha then bravo bravo alpha alpha and more bravo\"}]}";
    T_EQ_INT(cairn_add_json(db, e3, strlen(e3), NULL), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_dirty"), 1);
    check_all(db, 1);

    /* a store-wide redaction rewrites the secret's message */
    T_EQ_INT(cairn_redact_store(db, 0, &rep), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_dirty"), 2);
    check_all(db, 1);

    /* forget: its messages dirty (dropped from the blocks) */
    int frc = cairn_forget(db, "p7");
    T_CHECK(frc == CAIRN_OK || frc == CAIRN_SCRUB_PENDING);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_dirty"), 2 + 40);
    check_all(db, 1);

    /* the next build starts clean */
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_dirty"), 0);
    check_all(db, 1);

    /* damage: a block's bytes, a count, a block gone: that word walked */
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE post_blocks SET data = x'ffffffffffffffffffff' WHERE "
                          "term = 'alpha' AND lo = (SELECT max(lo) FROM post_blocks WHERE term "
                          "= 'alpha')", NULL, NULL, NULL), SQLITE_OK);
    check_word(db, "alpha", 0);
    check_word(db, "bravo", 1);
    same_pools(db);
    /* an add after damage: a full last block is not read, the new
     * matches get a block of their own, the word still does not read
     * whole; a small damaged last block drops the word */
    T_EQ_INT(add_session(db, 3, 900, 3), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_terms WHERE term = 'alpha'"), 1);
    check_word(db, "alpha", 0);
    check_word(db, "bravo", 1);
    same_pools(db);
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE post_blocks SET data = x'00' WHERE term = 'alpha' AND "
                          "lo = (SELECT max(lo) FROM post_blocks WHERE term = 'alpha')", NULL,
                          NULL, NULL), SQLITE_OK);
    T_EQ_INT(add_session(db, 3, 950, 2), CAIRN_OK);
    T_EQ_INT(count(db, "SELECT count(*) FROM post_terms WHERE term = 'alpha'"), 0);
    check_word(db, "alpha", 0);
    check_word(db, "bravo", 1);
    same_pools(db);
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE post_terms SET n = n + 1 WHERE term = 'bravo'", NULL,
                          NULL, NULL), SQLITE_OK);
    check_word(db, "bravo", 0);
    same_pools(db);
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE post_terms SET n = n - 1 WHERE term = 'bravo'", NULL,
                          NULL, NULL), SQLITE_OK);
    check_word(db, "bravo", 1);
    T_EQ_INT(sqlite3_exec(db->db, "DELETE FROM post_blocks WHERE term = 'bravo' AND lo = (SELECT "
                          "min(lo) FROM post_blocks WHERE term = 'bravo' AND lo > 0)", NULL,
                          NULL, NULL), SQLITE_OK);
    check_word(db, "bravo", 0);
    same_pools(db);

    /* past POST_DIRTY_MAX rewritten messages: every word walked */
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    check_all(db, 1);
    T_EQ_INT(sqlite3_exec(db->db, "INSERT INTO post_dirty SELECT id FROM messages ORDER BY id "
                          "LIMIT 300", NULL, NULL, NULL), SQLITE_OK);
    int64_t upto = 0, *d = NULL;
    int nd = 0;
    T_EQ_INT(store_post_state(db, &upto, &d, &nd), CAIRN_OK);
    T_CHECK(nd > POST_DIRTY_MAX && !d);
    same_pools(db);
    T_CHECK(count(db, "SELECT built FROM tier_state") > 0);
    cairn_close(db);

    /* a version-25 store: empty tables, walked until the next build */
    sqlite3 *rw;
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, POST_V26_DROP "PRAGMA user_version=25", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(rw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(count(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(db, "SELECT upto FROM post_state"), 0);
    /* 28: the build is due again (none built since) */
    T_EQ_INT(count(db, "SELECT built FROM tier_state"), 0);
    T_EQ_INT(cairn_set(db, "recall.tier", "0"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "10"), CAIRN_OK);
    check_all(db, 0);
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    check_all(db, 1);
    cairn_close(db);
}

/* The blob: what goes in comes out, and damage reads as none. */
static void test_blob(void)
{
    struct buf b = BUF_INIT;
    struct post_ent in[600], out[600];
    int64_t row = 5, sess = 0;
    for (int i = 0; i < 600; i++) {
        in[i] = (struct post_ent){ row + 1 + (int64_t)rnd(1000) * (i == 7 ? 1000000000 : 1),
                                   1 + (int64_t)rnd(50) + (i == 9 ? INT64_MAX / 4 : 0),
                                   1 + (int)rnd(65535), (int)rnd(1u << 31) };
        post_blob_put(&b, &row, &sess, &in[i]);
    }
    T_CHECK(!b.err);
    T_EQ_INT(post_blob_get((const unsigned char *)b.p, b.n, 5, out, 600), 600);
    T_CHECK(!memcmp(in, out, sizeof in));
    T_EQ_INT(post_blob_get((const unsigned char *)b.p, b.n, 5, out, 599), -1);
    T_EQ_INT(post_blob_get((const unsigned char *)b.p, b.n - 1, 5, out, 600), -1);
    /* the rows are steps from the block's lo */
    T_EQ_INT(post_blob_get((const unsigned char *)b.p, b.n, 6, out, 600), 600);
    T_EQ_INT(out[0].row, in[0].row + 1);
    T_EQ_INT(post_blob_get((const unsigned char *)b.p, 0, 5, out, 600), 0);
    const unsigned char zero_step[] = { 0, 2, 1, 1 }, zero_tf[] = { 1, 2, 0, 1 },
                        long_int[] = { 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1,
                                       1, 1 },
                        no_sess[] = { 1, 0, 1, 1 };
    T_EQ_INT(post_blob_get(zero_step, sizeof zero_step, 0, out, 4), -1);
    T_EQ_INT(post_blob_get(zero_tf, sizeof zero_tf, 0, out, 4), -1);
    T_EQ_INT(post_blob_get(long_int, sizeof long_int, 0, out, 4), -1);
    T_EQ_INT(post_blob_get(no_sess, sizeof no_sess, 0, out, 4), -1);
    buf_release(&b);
}

/* post_blob_get's reference: every varint by the loop, every range by
 * two tests (the reader before its one- and two-byte varints inline and
 * its folded range tests, issue 23, hook50, and before its path for a
 * match of one-byte fields and a short length, hook52). */
static int blob_get_ref(const unsigned char *p, size_t n, int64_t lo, struct post_ent *out, int max)
{
    const unsigned char *end = p + n;
    int64_t row = lo, sess = 0;
    int k = 0;
    while (p < end) {
        uint64_t v[4];
        for (int f = 0; f < 4; f++) {
            uint64_t x = 0;
            int done = 0;
            for (int i = 0; i < 9 && p < end && !done; i++) {
                unsigned c = *p++;
                x |= (uint64_t)(c & 127) << (7 * i);
                done = !(c & 128);
            }
            if (!done)
                return -1;
            v[f] = x;
        }
        if (k >= max)
            return -1;
        int64_t ds = (int64_t)(v[1] >> 1) ^ -(int64_t)(v[1] & 1);
        if (v[0] < 1 || v[0] > (uint64_t)(INT64_MAX - row) || v[2] < 1 || v[2] > 65535 ||
            v[3] > INT32_MAX || (ds > 0 && sess > INT64_MAX - ds) || sess + ds < 1)
            return -1;
        row += (int64_t)v[0];
        sess += ds;
        out[k++] = (struct post_ent){ row, sess, (int32_t)v[2], (int32_t)v[3] };
    }
    return k;
}

/* post_blob_get against its reference on written blocks damaged at
 * random (bytes changed, cut, fields at and past each range's ends
 * spliced in, rows near INT64_MAX): the same count and the same matches,
 * or -1 from both. */
static void test_blob_ref(void)
{
    static const uint64_t edge[] = { 0, 1, 127, 128, 16383, 16384, 65534, 65535, 65536,
                                     INT32_MAX, (uint64_t)INT32_MAX + 1, INT64_MAX,
                                     (uint64_t)INT64_MAX + 1, UINT64_MAX };
    struct post_ent in[64], a[64], b[64];
    int differ = 0, whole = 0;
    for (int r = 0; r < 20000; r++) {
        struct buf bl = BUF_INIT;
        /* (rows near INT64_MAX: at most 40 steps of 300 fit below it) */
        int64_t lo = r % 7 == 0 ? INT64_MAX - 12000 - (int64_t)rnd(3000) : (int64_t)rnd(1000);
        int64_t row = lo, sess = 0;
        int n = 1 + (int)rnd(40);
        for (int i = 0; i < n; i++) {
            in[i] = (struct post_ent){ row + 1 + (int64_t)rnd(r % 3 ? 100 : 300),
                                       1 + (int64_t)rnd(r % 5 ? 20 : 100000),
                                       1 + (int)rnd(r % 4 ? 200 : 65535),
                                       (int)rnd(r % 2 ? 300 : 1u << 20) };
            post_blob_put(&bl, &row, &sess, &in[i]);
        }
        T_CHECK(!bl.err);
        unsigned char blob[1024];
        size_t len = bl.n < sizeof blob - 32 ? bl.n : sizeof blob - 32;
        memcpy(blob, bl.p, len);
        buf_release(&bl);
        switch (r % 4) {
        case 1:                           /* bytes changed */
            for (int k = 0; k < 1 + (int)rnd(3); k++)
                blob[rnd((unsigned)len)] = (unsigned char)rnd(256);
            break;
        case 2:                           /* cut */
            len = rnd((unsigned)len + 1);
            break;
        case 3: {                         /* an edge value as one field's varint */
            unsigned char t[10];
            int m = 0;
            uint64_t x = edge[rnd(sizeof edge / sizeof *edge)];
            do {
                t[m] = (unsigned char)(x & 127);
                x >>= 7;
                t[m++] |= x ? 128 : 0;
            } while (x && m < 10);
            size_t at = rnd((unsigned)len + 1);
            memmove(blob + at + m, blob + at, len - at);
            memcpy(blob + at, t, (size_t)m);
            len += (size_t)m;
            break;
        }
        }
        int max = r % 9 == 0 ? (int)rnd(64) : 64;
        int ka = post_blob_get(blob, len, lo, a, max), kb = blob_get_ref(blob, len, lo, b, max);
        differ += ka != kb || (ka > 0 && memcmp(a, b, (size_t)ka * sizeof *a));
        whole += ka > 0;
    }
    T_EQ_INT(differ, 0);
    T_CHECK(whole > 1000);
    /* a row at INT64_MAX is one; no step after it is (0 is none either) */
    const unsigned char at_max[] = { 1, 2, 1, 1 }, past_max[] = { 1, 2, 1, 1, 1, 0, 1, 1 },
                        zero_at_max[] = { 1, 2, 1, 1, 0, 0, 1, 1 };
    T_EQ_INT(post_blob_get(at_max, sizeof at_max, INT64_MAX - 1, a, 4), 1);
    T_CHECK(a[0].row == INT64_MAX);
    T_EQ_INT(post_blob_get(past_max, sizeof past_max, INT64_MAX - 1, a, 4), -1);
    T_EQ_INT(post_blob_get(zero_at_max, sizeof zero_at_max, INT64_MAX - 1, a, 4), -1);
    T_EQ_INT(blob_get_ref(zero_at_max, sizeof zero_at_max, INT64_MAX - 1, a, 4), -1);
    /* each range's ends: a count of 65,535 and a length of INT32_MAX are
     * one, 65,536 and INT32_MAX + 1 are not */
    const unsigned char tf_top[] = { 1, 2, 0xff, 0xff, 0x03, 1 },
                        tf_past[] = { 1, 2, 0x80, 0x80, 0x04, 1 },
                        len_top[] = { 1, 2, 1, 0xff, 0xff, 0xff, 0xff, 0x07 },
                        len_past[] = { 1, 2, 1, 0x80, 0x80, 0x80, 0x80, 0x08 };
    T_EQ_INT(post_blob_get(tf_top, sizeof tf_top, 0, a, 4), 1);
    T_EQ_INT(a[0].tf, 65535);
    T_EQ_INT(post_blob_get(tf_past, sizeof tf_past, 0, a, 4), -1);
    T_EQ_INT(post_blob_get(len_top, sizeof len_top, 0, a, 4), 1);
    T_EQ_INT(a[0].ntok, INT32_MAX);
    T_EQ_INT(post_blob_get(len_past, sizeof len_past, 0, a, 4), -1);
}

int main(void)
{
    T_CHECK(mkdtemp(dir) != NULL);
    T_RUN(test_blob);
    T_RUN(test_blob_ref);
    T_RUN(test_write_paths);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
