/*
 * test_tier.c: term tiers (schema 22; src/recall/tier.c builds them,
 * gather.c's tiered_matches reads them on the pruned path).
 *
 * A store of 60 sessions where "alpha" is in every session and in more
 * than TIER_DF_MIN messages (3,600), "database" in 2,400, "zephyr" in a few:
 * fewer sessions than
 * TIER_SESS, so alpha's tier holds every match of it, and the pruned pool
 * read through the tier must be the one the walk gives (recall.tier "0"):
 * each message's counts, each word's df, what was left out. A tier row
 * changed by hand must show in the pool (the rows are what is read), the
 * messages added after the build are walked (the tail), and forget
 * removes a session's rows and, with the last, the word's tier.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "recall/recall.h"
#include "recall/policy.h"
#include "store/tier.h"
#include "t_store.h"
#include "util/sort.h"
#include "t_pool.h"

static char dir[] = "/tmp/cairn-tier-XXXXXX";
static unsigned rng = 4242;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static const char *const filler[] = { "bravo", "cache", "delta", "kernel", "ledger", "orbit" };

/* Message k of session s: alpha 1-3 times (and zephyr in one of 13),
 * among filler words. */
static void fill(struct buf *b, int s, int k)
{
    (void)k;
    int na = 1 + (int)rnd(3), nf = (int)rnd(3);
    for (int i = 0; i < na; i++)
        buf_adds(b, "alpha ");
    for (int i = 0; i < nf; i++)
        buf_printf(b, "%s ", filler[rnd(6)]);
    if (s < 40)
        buf_adds(b, "database ");    /* its stem, databas, stems to another */
    if (rnd(13) == 0)
        buf_adds(b, "zephyr");
}

/* Session s: n messages. */
static int add_session(struct cairn *db, int s, int n)
{
    return add_json_session(db, "t", s, 0, n, fill);
}

/* A new store dir/name of sessions t0 to t<ns - 1>, 60 messages each
 * (*path gets its file, cap bytes). */
static struct cairn *open_sessions(const char *name, int ns, char *path, size_t cap)
{
    struct cairn *db = NULL;
    snprintf(path, cap, "%s/%s", dir, name);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    for (int s = 0; db && s < ns; s++)
        T_EQ_INT(add_session(db, s, 60), CAIRN_OK);
    return db;
}

static int64_t one(struct cairn *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -2;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

/* The pruned pool of question, the tiers read or not. */
static void pool_of(struct cairn *db, const char *question, int tier, struct query *q,
                    struct pool *p)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.method = CAIRN_METHOD_KEYWORD;
    o.flags = CAIRN_RECALL_MATCHED_ONLY | CAIRN_RECALL_FAST;
    o.budget = 1000;
    T_EQ_INT(cairn_set(db, "recall.tier", tier ? NULL : "0"), CAIRN_OK);
    T_EQ_INT(query_parse(q, question, 1700000000, 0), 0);
    T_EQ_INT(gather(db, q, &o, NULL, NULL, NULL, p), CAIRN_OK);
}

/* The pruned pools of question with and without the tiers are the same. */
static void same_pool(struct cairn *db, const char *question)
{
    struct query qa, qb;
    struct pool a, b;
    pool_of(db, question, 0, &qa, &a);
    pool_of(db, question, 1, &qb, &b);
    t_pools_same(&qa, &a, &qb, &b);
    pool_free(&a);
    pool_free(&b);
    query_free(&qa);
    query_free(&qb);
}

/* alpha's count in message row, as the pruned pool of question has it. */
static int pool_tf(struct cairn *db, int tier, const char *question, int64_t row)
{
    struct query q;
    struct pool p;
    int tf = -1;
    pool_of(db, question, tier, &q, &p);
    for (int i = 0; i < p.nm; i++)
        if (p.m[i].row == row)
            tf = p.m[i].tf ? p.m[i].tf[0] : 0;
    pool_free(&p);
    query_free(&q);
    return tf;
}

/* Forgets sessions t0..t59 but t<except> (forgotten already). */
static void forget_but(struct cairn *db, int except)
{
    for (int s = 0; s < 60; s++) {
        char id[16];
        snprintf(id, sizeof id, "t%d", s);
        if (s != except)
            T_EQ_INT(cairn_forget(db, id), CAIRN_OK);
    }
}

static void test_tiers(void)
{
    char path[300];
    struct cairn *db;
    int64_t terms = 0, rows = 0;
    db = open_sessions("tier.db", 60, path, sizeof path);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "10"), CAIRN_OK);

    /* no tier built: both ways walk */
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), 0);
    same_pool(db, "alpha");

    T_EQ_INT(cairn_tier_build(db, &terms, &rows), CAIRN_OK);
    T_EQ_INT(terms, 1);                   /* alpha only: the rest is under TIER_DF_MIN */
    T_EQ_INT(rows, 3600);                 /* every match: 60 sessions < TIER_SESS */
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 3600);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), one(db, "SELECT max(id) FROM messages"));
    /* the counts are the tokenizer's */
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post p JOIN messages m ON m.id = p.msg WHERE "
                 "p.tf <> (length(m.content) - length(replace(m.content, 'alpha', ''))) / 5 "
                 "OR p.ntok <> m.ntok OR p.sess <> m.session"), 0);

    /* a common word a query cannot spell: its df, no rows */
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'databas'"), 2400);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post p JOIN tier_terms t ON t.id = p.term "
                 "WHERE t.term = 'databas'"), 0);

    /* the words looked up by one statement: alpha's rows, databas's df
     * without rows, none for a word without a tier or no token, and a
     * second alpha as the first (the statement reset between them) */
    {
        const char *tok[5] = { "alpha", NULL, "databas", "zephyr", "alpha" };
        size_t tn[5] = { 5, 0, 7, 6, 5 };
        int64_t id[5] = { -1, -1, -1, -1, -1 }, df[5] = { -1, -1, -1, -1, -1 };
        T_EQ_INT(store_tier_terms(db, tok, tn, 5, id, df), CAIRN_OK);
        T_EQ_INT(id[0], one(db, "SELECT id FROM tier_terms WHERE term = 'alpha'"));
        T_CHECK(id[0] > 0);
        T_EQ_INT(df[0], 3600);
        T_EQ_INT(id[1], 0);
        T_EQ_INT(df[1], 0);
        T_EQ_INT(id[2], 0);
        T_EQ_INT(df[2], 2400);
        T_EQ_INT(id[3], 0);
        T_EQ_INT(df[3], 0);
        T_EQ_INT(id[4], id[0]);
        T_EQ_INT(df[4], 3600);
        T_EQ_INT(store_tier_terms(db, tok, tn, 0, id, df), CAIRN_OK);
    }

    same_pool(db, "alpha");
    same_pool(db, "alpha zephyr");        /* zephyr walked, alpha counted on its rows */
    same_pool(db, "alpha database");      /* 3,600 < TIER_SHARE x 2,400: the walk */
    /* a pool the walk would not prune is not pruned through the tier */
    struct query q;
    struct pool p;
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "100000"), CAIRN_OK);
    pool_of(db, "alpha", 1, &q, &p);
    T_CHECK(!p.pruned);
    T_EQ_INT(p.nm, 3600);
    T_EQ_INT(q.t[0].df_msg, 3600);
    pool_free(&p);
    query_free(&q);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "10"), CAIRN_OK);
    same_pool(db, "zephyr kernel");       /* no tier: the walk */

    /* the rows are what is read */
    int64_t row = one(db, "SELECT min(msg) FROM tier_post");
    int tf = pool_tf(db, 1, "alpha", row);
    T_CHECK(tf >= 1 && tf <= 3);
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE tier_post SET tf = tf + 7 WHERE msg = "
                          "(SELECT min(msg) FROM tier_post)", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(pool_tf(db, 1, "alpha", row), tf + 7);
    T_EQ_INT(pool_tf(db, 0, "alpha", row), tf);
    /* zephyr (under TIER_DF_MIN) and alpha: 3,600 >= TIER_SHARE x 1,000,
     * the tier read; database's 2,400 known: alpha walked */
    T_EQ_INT(pool_tf(db, 1, "alpha zephyr", row), tf + 7);
    T_EQ_INT(pool_tf(db, 1, "alpha database", row), tf);
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE tier_post SET tf = tf - 7 WHERE msg = "
                          "(SELECT min(msg) FROM tier_post)", NULL, NULL, NULL), SQLITE_OK);

    /* kept by the write path (schema 23): alpha's tier holds every
     * session (cut 0), so the new session's matches all go in, with the
     * tokenizer's counts; df and upto follow, and the pool is the walk's */
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_terms WHERE term = 'alpha' AND cut = 0"), 1);
    T_EQ_INT(add_session(db, 60, 60), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), one(db, "SELECT max(id) FROM messages"));
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 3660);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post"), 3660);
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'databas'"), 2400);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post p JOIN messages m ON m.id = p.msg WHERE "
                 "p.tf <> (length(m.content) - length(replace(m.content, 'alpha', ''))) / 5 "
                 "OR p.ntok <> m.ntok OR p.sess <> m.session"), 0);
    same_pool(db, "alpha");
    same_pool(db, "alpha zephyr");

    /* "store.tier_keep" "0": messages added are the tail, walked */
    T_EQ_INT(cairn_set(db, "store.tier_keep", "0"), CAIRN_OK);
    T_EQ_INT(add_session(db, 61, 30), CAIRN_OK);
    int64_t upto = one(db, "SELECT upto FROM tier_state");
    T_CHECK(one(db, "SELECT max(id) FROM messages") > upto);
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 3660);
    same_pool(db, "alpha");
    /* and with a tail there, keeping again keeps nothing (upto cannot
     * move past messages no one kept) until the next build */
    T_EQ_INT(cairn_set(db, "store.tier_keep", NULL), CAIRN_OK);
    T_EQ_INT(add_session(db, 62, 30), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), upto);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post"), 3660);
    same_pool(db, "alpha");
    same_pool(db, "alpha zephyr");

    /* forget drops a session's rows; the last one's, the tier */
    T_EQ_INT(cairn_forget(db, "t3"), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post WHERE sess NOT IN (SELECT id FROM sessions)"),
             0);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post"), 3600);
    T_EQ_INT(cairn_forget(db, "t60"), CAIRN_OK);
    forget_but(db, 3);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post"), 0);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_terms"), 0);
    same_pool(db, "alpha");               /* t61, t62 alone, walked */
    cairn_close(db);
}

/* A text result of sql, copied into out. */
static void text_of(struct cairn *db, const char *sql, char *out, size_t cap)
{
    sqlite3_stmt *st = NULL;
    out[0] = '\0';
    T_EQ_INT(sqlite3_prepare_v2(db->db, sql, -1, &st, NULL), SQLITE_OK);
    if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
        snprintf(out, cap, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
}

/* A build over built tiers: tier_post's index and triggers are dropped
 * for it (the table truncated, the index sorted once) and made again from
 * their own CREATE statements, so the schema is as before, the rows those
 * of the first build, and the triggers and the index work after it. */
static void test_rebuild(void)
{
    static const char *const schema_sql = "SELECT group_concat(type || ' ' || name || ' ' || "
        "sql, char(10)) FROM (SELECT * FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name)";
    static const char *const rows_sql = "SELECT count(*) || ' ' || sum(term * 1000003 + msg) || "
        "' ' || sum(sess * 7 + tf * 131 + ntok) FROM tier_post";
    char path[300], schema1[16384], schema2[16384], rows1[128], rows2[128];
    struct cairn *db;
    int64_t terms = 0, rows = 0;
    db = open_sessions("rebuild.db", 60, path, sizeof path);
    text_of(db, schema_sql, schema1, sizeof schema1);
    T_CHECK(strstr(schema1, "tier_post_msg") && strstr(schema1, "tier_terms_gone"));
    T_EQ_INT(cairn_tier_build(db, &terms, &rows), CAIRN_OK);
    T_EQ_INT(rows, 3600);
    text_of(db, rows_sql, rows1, sizeof rows1);
    text_of(db, schema_sql, schema2, sizeof schema2);
    T_EQ_STR(schema2, schema1);
    /* again, over its own rows */
    T_EQ_INT(cairn_tier_build(db, &terms, &rows), CAIRN_OK);
    T_EQ_INT(rows, 3600);
    text_of(db, rows_sql, rows2, sizeof rows2);
    T_EQ_STR(rows2, rows1);
    text_of(db, schema_sql, schema2, sizeof schema2);
    T_EQ_STR(schema2, schema1);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post INDEXED BY tier_post_msg WHERE msg = "
                 "(SELECT min(msg) FROM tier_post)"), 1);
    char ok[64];
    text_of(db, "PRAGMA integrity_check", ok, sizeof ok);
    T_EQ_STR(ok, "ok");
    /* the triggers again: a forgotten session's rows go, the last takes the word */
    T_EQ_INT(cairn_forget(db, "t5"), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post"), 3540);
    forget_but(db, 5);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_terms"), 0);
    /* the temporary storage the build switched is the connection's again */
    T_EQ_INT(one(db, "PRAGMA temp_store"), 2);
    cairn_close(db);
}

/* FNV-1a of every packed block's key and bytes, in key order. */
static uint64_t blocks_hash(struct cairn *db)
{
    sqlite3_stmt *st = NULL;
    uint64_t x = 14695981039346656037ULL;
    T_EQ_INT(sqlite3_prepare_v2(db->db, "SELECT term, lo, hi, n, data FROM post_blocks "
                                "ORDER BY term, lo", -1, &st, NULL), SQLITE_OK);
    while (st && sqlite3_step(st) == SQLITE_ROW)
        for (int c = 0; c < 5; c++) {
            const unsigned char *p = c == 4 ? sqlite3_column_blob(st, c)
                                            : sqlite3_column_text(st, c);
            for (int i = 0, n = sqlite3_column_bytes(st, c); p && i < n; i++)
                x = (x ^ p[i]) * 1099511628211ULL;
            x = (x ^ 0xff) * 1099511628211ULL;
        }
    sqlite3_finalize(st);
    return x;
}

/* The walks ahead in a thread of their own (store.tier_walk, the default)
 * and the build walking alone write the same rows and packed postings. */
static void test_walk_thread(void)
{
    static const char *const rows_sql = "SELECT count(*) || ' ' || sum(term * 1000003 + msg) || "
        "' ' || sum(sess * 7 + tf * 131 + ntok) || ' ' || (SELECT group_concat(term || cut || "
        "df, ',') FROM tier_terms) FROM tier_post";
    char path[300], rows1[4096], rows2[4096];
    uint64_t post1, post2;
    int64_t terms = 0, rows = 0;
    struct cairn *db = open_sessions("walk.db", 60, path, sizeof path);
    T_EQ_INT(cairn_set(db, "store.tier_walk", "0"), CAIRN_OK);
    T_EQ_INT(cairn_tier_build(db, &terms, &rows), CAIRN_OK);
    T_EQ_INT(rows, 3600);
    text_of(db, rows_sql, rows1, sizeof rows1);
    post1 = blocks_hash(db);
    T_EQ_INT(cairn_set(db, "store.tier_walk", NULL), CAIRN_OK);
    T_EQ_INT(cairn_tier_build(db, &terms, &rows), CAIRN_OK);
    T_EQ_INT(rows, 3600);
    text_of(db, rows_sql, rows2, sizeof rows2);
    post2 = blocks_hash(db);
    T_EQ_STR(rows2, rows1);
    T_CHECK(post2 == post1);
    T_CHECK(one(db, "SELECT count(*) FROM post_blocks") > 0);
    cairn_close(db);
}

/* One session of one message, added (or appended to: same session id). */
static int add_one(struct cairn *db, const char *sid, const char *mid, const char *text)
{
    char js[1024];
    int n = snprintf(js, sizeof js, "{\"id\":\"%s\",\"messages\":[{\"id\":\"%s\","
                     "\"role\":\"user\",\"content\":\"%s\"}]}", sid, mid, text);
    return n < 0 || n >= (int)sizeof js ? CAIRN_TOOBIG : cairn_add_json(db, js, (size_t)n, NULL);
}

static int64_t rows_of(struct cairn *db, const char *mid)
{
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tier_post WHERE msg = (SELECT id FROM "
             "messages WHERE ext_id = '%s')", mid);
    return one(db, sql);
}

/* The cut: a new match enters when it scores at least its word's cut
 * (tf (k1 + 1) / (tf + k1 (1 - b + b len / avg)), the build's avg) or its
 * session is in the tier; df counts it either way. The cut set by hand
 * (a full tier's, which takes TIER_SESS sessions to build). */
static void test_keep_cut(void)
{
    char path[300];
    struct cairn *db;
    db = open_sessions("cut.db", 60, path, sizeof path);
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    T_CHECK(one(db, "SELECT avg * 100 FROM tier_state") > 100);
    T_EQ_INT(one(db, "SELECT k1 * 100 FROM tier_state"), (int64_t)(BM25_K1 * 100 + 0.5));
    T_EQ_INT(one(db, "SELECT b * 100 FROM tier_state"), (int64_t)(BM25_B * 100 + 0.5));
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE tier_terms SET cut = 1.0 WHERE term = 'alpha'", NULL,
                          NULL, NULL), SQLITE_OK);
    int64_t rows = one(db, "SELECT count(*) FROM tier_post");
    /* short, alpha 3 times: 1.6 or so; one alpha among 30 words: ~0.3 */
    T_EQ_INT(add_one(db, "hi", "hi-1", "alpha alpha alpha"), CAIRN_OK);
    T_EQ_INT(add_one(db, "lo", "lo-1", "alpha bravo cache delta kernel ledger orbit bravo cache "
                     "delta kernel ledger orbit bravo cache delta kernel ledger orbit bravo cache "
                     "delta kernel ledger orbit bravo cache delta"), CAIRN_OK);
    T_EQ_INT(rows_of(db, "hi-1"), 1);
    T_EQ_INT(rows_of(db, "lo-1"), 0);
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 3602);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), one(db, "SELECT max(id) FROM messages"));
    /* a session in the tier keeps every match: a weak one in "hi" goes in,
     * in "lo" (not in it) not */
    T_EQ_INT(add_one(db, "hi", "hi-2", "alpha bravo cache delta kernel ledger orbit bravo cache "
                     "delta kernel ledger orbit bravo cache delta kernel ledger orbit bravo"),
             CAIRN_OK);
    T_EQ_INT(add_one(db, "lo", "lo-2", "alpha bravo cache delta kernel ledger orbit bravo cache "
                     "delta kernel ledger orbit bravo cache delta kernel ledger orbit bravo"),
             CAIRN_OK);
    T_EQ_INT(rows_of(db, "hi-2"), 1);
    T_EQ_INT(rows_of(db, "lo-2"), 0);
    /* a session written whole: its weak first message goes in with the
     * strong second one that brings the session in, as a build has it */
    const char *both = "{\"id\":\"two\",\"messages\":[{\"id\":\"two-1\",\"role\":"
                       "\"user\",\"content\":\"alpha bravo cache delta kernel ledger orbit "
                       "bravo cache delta kernel ledger orbit bravo cache delta kernel\"},"
                       "{\"id\":\"two-2\",\"role\":\"assistant\",\"content\":"
                       "\"alpha alpha alpha\"}]}";
    T_EQ_INT(cairn_add_json(db, both, strlen(both), NULL), CAIRN_OK);
    T_EQ_INT(rows_of(db, "two-1"), 1);
    T_EQ_INT(rows_of(db, "two-2"), 1);
    rows += 2;
    /* a reply extended in place: its rows go with the old text (trigger)
     * and come back for the new one; df as it was */
    T_EQ_INT(add_one(db, "ext", "ext-1", "kernel"), CAIRN_OK);
    T_EQ_INT(rows_of(db, "ext-1"), 0);
    T_EQ_INT(add_one(db, "ext", "ext-1", "kernel alpha alpha alpha"), CAIRN_OK);
    T_EQ_INT(rows_of(db, "ext-1"), 1);
    T_EQ_INT(one(db, "SELECT tf FROM tier_post WHERE msg = (SELECT id FROM messages WHERE "
                 "ext_id = 'ext-1')"), 3);
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 3606);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_post"), rows + 3);
    /* in a group (one transaction, the rows held until its commit): a
     * session met again still counts as in the tier, and a reply
     * extended within the group keeps only its new text's row */
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    T_EQ_INT(add_one(db, "grp", "grp-1", "alpha alpha alpha"), CAIRN_OK);
    T_EQ_INT(add_one(db, "other", "other-1", "kernel"), CAIRN_OK);
    T_EQ_INT(add_one(db, "grp", "grp-2", "alpha bravo cache delta kernel ledger orbit bravo cache "
                     "delta kernel ledger orbit bravo cache delta kernel ledger orbit bravo"),
             CAIRN_OK);
    T_EQ_INT(add_one(db, "grp", "grp-1", "alpha alpha alpha alpha"), CAIRN_OK);
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    T_EQ_INT(rows_of(db, "grp-1"), 1);
    T_EQ_INT(rows_of(db, "grp-2"), 1);
    T_EQ_INT(one(db, "SELECT tf FROM tier_post WHERE msg = (SELECT id FROM messages WHERE "
                 "ext_id = 'grp-1')"), 4);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), one(db, "SELECT max(id) FROM messages"));
    /* a word of several bytes a character (a CJK bigram, as the
     * tokenizer gives it), tiered by hand: kept like the others */
    T_EQ_INT(sqlite3_exec(db->db, "INSERT INTO tier_terms(term, df, cut) VALUES ('数据', 5, 0)",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(add_one(db, "zh", "zh-1", "数据"), CAIRN_OK);
    T_EQ_INT(rows_of(db, "zh-1"), 1);
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = '数据'"), 6);
    /* a tier built before schema 23 (no avg): left as built, the tail */
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE tier_state SET avg = 0", NULL, NULL, NULL), SQLITE_OK);
    int64_t upto = one(db, "SELECT upto FROM tier_state");
    T_EQ_INT(add_one(db, "late", "late-1", "alpha alpha alpha"), CAIRN_OK);
    T_EQ_INT(rows_of(db, "late-1"), 0);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), upto);
    cairn_close(db);
}

/* A version-21 store gets the empty tables, and a build fills them. */
static void test_migrate_v21(void)
{
    char path[300];
    struct cairn *db;
    sqlite3 *raw;
    snprintf(path, sizeof path, "%s/v21.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(add_session(db, 0, 5), CAIRN_OK);
    cairn_close(db);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, TIER_V22_DROP "PRAGMA user_version=21", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(one(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), 0);
    int64_t terms = -1;
    T_EQ_INT(cairn_tier_build(db, &terms, NULL), CAIRN_OK);
    T_EQ_INT(terms, 0);                   /* 5 messages: no word is common */
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), 5);
    cairn_close(db);
}

/* A version-22 store with tiers built (main's): the migration adds the
 * columns empty (avg 0, built 0), so adds leave the tiers as built (the
 * tail) and they are due again; a build fills the columns and adds keep. */
static void test_migrate_v22(void)
{
    char path[300];
    struct cairn *db;
    sqlite3 *raw;
    db = open_sessions("v22.db", 20, path, sizeof path);
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    cairn_close(db);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, SESSION_SIZES_V24_DROP "ALTER TABLE tier_terms DROP COLUMN cut; ALTER TABLE tier_state "
                          "DROP COLUMN b; ALTER TABLE tier_state DROP COLUMN k1; ALTER TABLE "
                          "tier_state DROP COLUMN avg; ALTER TABLE tier_state DROP COLUMN built; "
                          "PRAGMA user_version=22", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(one(db, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(one(db, "SELECT avg = 0 AND built = 0 AND k1 = 0 FROM tier_state"), 1);
    T_EQ_INT(one(db, "SELECT count(*) FROM tier_terms WHERE cut IS NOT NULL"), 0);
    int64_t upto = one(db, "SELECT upto FROM tier_state");
    T_EQ_INT(add_session(db, 20, 10), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), upto);
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 1200);
    int due = 0;
    int64_t msgs = 0;
    T_EQ_INT(cairn_tier_due(db, &due, &msgs), CAIRN_OK);
    T_EQ_INT(msgs, 1210);
    T_EQ_INT(due, 0);                     /* under TIER_AUTO_MSGS */
    T_EQ_INT(cairn_tier_build(db, NULL, NULL), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT built FROM tier_state"), 1210);
    T_EQ_INT(add_session(db, 21, 10), CAIRN_OK);
    T_EQ_INT(one(db, "SELECT upto FROM tier_state"), one(db, "SELECT max(id) FROM messages"));
    T_EQ_INT(one(db, "SELECT df FROM tier_terms WHERE term = 'alpha'"), 1220);
    cairn_close(db);
}

/* A walk's matches, kept whole to be compared. */
struct walked { int64_t v[4 * 8192]; int n; };

static int on_walked(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    struct walked *w = arg;
    if (w->n + 4 > (int)(sizeof w->v / sizeof w->v[0]))
        return CAIRN_TOOBIG;
    w->v[w->n++] = row;
    w->v[w->n++] = sess;
    w->v[w->n++] = ntok;
    w->v[w->n++] = tf[0];
    return 0;
}

/* The build's walk from the runs held by id (store_term_matches_runs,
 * branch add34) gives what the walk through msg_runs gives: the same
 * matches, sessions, lengths and counts, with a run whose counts are gone
 * (a lookup a match), a run gone (its ids in no walk) and an upto short
 * of the last message. A length taken from the wrong id, or a hole
 * walked, fails it. */
static void test_runs_walk(void)
{
    char path[300];
    struct cairn *db = open_sessions("runs.db", 60, path, sizeof path);
    static struct walked a, b;
    static const char *const words[] = { "\"alpha\"", "\"bravo\"", "\"zephyr\"" };
    const struct store_scope all = { NULL, NULL };
    struct store_runs runs;
    int loaded = 0;
    T_EQ_INT(sqlite3_exec(db->db, "UPDATE msg_runs SET lens = NULL WHERE first = (SELECT first "
                          "FROM msg_runs ORDER BY first LIMIT 1 OFFSET 3); DELETE FROM msg_runs "
                          "WHERE first = (SELECT first FROM msg_runs ORDER BY first LIMIT 1 "
                          "OFFSET 7)", NULL, NULL, NULL), SQLITE_OK);
    int64_t upto = one(db, "SELECT max(id) - 25 FROM messages");
    T_EQ_INT(store_runs_load(db, upto, &runs, &loaded), CAIRN_OK);
    T_EQ_INT(loaded, 1);
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        a.n = b.n = 0;
        T_EQ_INT(store_term_matches_in(db, &all, words[k], strlen(words[k]), 1, NULL, 1,
                                       INT64_MIN, upto, 1, on_walked, &a), CAIRN_OK);
        T_EQ_INT(store_term_matches_runs(db, &runs, words[k], strlen(words[k]), upto, on_walked,
                                         &b), CAIRN_OK);
        T_CHECK(a.n > 0);
        T_EQ_INT(b.n, a.n);
        T_CHECK(!memcmp(a.v, b.v, (size_t)a.n * sizeof a.v[0]));
    }
    store_runs_free(&runs);
    cairn_close(db);
}

/* The FTS5 queries a handle runs (sqlite3_trace_v2's statements). */
static int on_stmt(unsigned what, void *arg, void *stmt, void *x)
{
    (void)what, (void)x;
    const char *sql = sqlite3_sql(stmt);
    if (sql && strstr(sql, "messages_fts MATCH"))
        ++*(int *)arg;
    return 0;
}

/* A walk over ids (lo, hi] is the whole walk's matches in (lo, hi],
 * wherever lo and hi fall: before the first run, inside a run, at its
 * last id, in a run gone (its ids in no walk), at and past the last
 * message; and one that no run reaches runs no FTS5 query at all
 * (runs_reach, branch hook51: a hook's tail above upto). A check that
 * skipped a range some run reaches, or a run it should have started
 * from, fails the comparison. */
static void test_ranged_walk(void)
{
    char path[300];
    struct cairn *db = open_sessions("ranged.db", 12, path, sizeof path);
    static struct walked whole, a;
    const struct store_scope all = { NULL, NULL };
    int fts = 0;
    T_EQ_INT(sqlite3_exec(db->db, "DELETE FROM msg_runs WHERE first = (SELECT first FROM "
                          "msg_runs ORDER BY first LIMIT 1 OFFSET 5)", NULL, NULL, NULL),
             SQLITE_OK);
    int64_t max = one(db, "SELECT max(id) FROM messages");
    int64_t r3 = one(db, "SELECT first FROM msg_runs ORDER BY first LIMIT 1 OFFSET 3");
    int64_t l4 = one(db, "SELECT last FROM msg_runs ORDER BY first LIMIT 1 OFFSET 4");
    int64_t gone = l4 + 10;           /* inside the run deleted */
    T_CHECK(max > 0 && r3 > 1 && l4 > r3 && gone < max);
    T_EQ_INT(store_term_matches_in(db, &all, "\"alpha\"", 7, 1, NULL, 1, INT64_MIN, INT64_MAX,
                                   1, on_walked, &whole), CAIRN_OK);
    T_CHECK(whole.n > 0);
    const int64_t los[] = { 0, r3 - 1, r3, r3 + 7, l4, gone, l4 + 60, max - 1, max, max + 5 };
    for (size_t i = 0; i < sizeof los / sizeof los[0]; i++) {
        const int64_t his[] = { INT64_MAX, los[i] + 30, l4, gone, max };
        for (size_t j = 0; j < sizeof his / sizeof his[0]; j++) {
            int64_t lo = los[i], hi = his[j];
            int k = 0, ok = 1;
            a.n = 0;
            T_EQ_INT(store_term_matches_in(db, &all, "\"alpha\"", 7, 1, NULL, 1, lo, hi, 1,
                                           on_walked, &a), CAIRN_OK);
            for (int w = 0; w < whole.n; w += 4) {
                if (whole.v[w] <= lo || whole.v[w] > hi)
                    continue;
                ok &= k + 4 <= a.n && !memcmp(&a.v[k], &whole.v[w], 4 * sizeof a.v[0]);
                k += 4;
            }
            if (!ok || k != a.n)
                fprintf(stderr, "ranged walk (%lld, %lld]: %d of %d\n", (long long)lo,
                        (long long)hi, a.n / 4, k / 4);
            T_CHECK(ok && k == a.n);
        }
    }
    /* nothing past the last message, and no query to find so */
    sqlite3_trace_v2(db->db, SQLITE_TRACE_STMT, on_stmt, &fts);
    a.n = 0;
    T_EQ_INT(store_term_matches_in(db, &all, "\"alpha\"", 7, 1, NULL, 1, max, INT64_MAX, 1,
                                   on_walked, &a), CAIRN_OK);
    T_EQ_INT(a.n, 0);
    T_EQ_INT(fts, 0);
    T_EQ_INT(store_term_matches_in(db, &all, "\"alpha\"", 7, 1, NULL, 1, max - 1, INT64_MAX, 1,
                                   on_walked, &a), CAIRN_OK);
    T_EQ_INT(fts, 1);
    T_EQ_INT(a.n, 4);                 /* every message holds alpha */
    /* a session added after: its matches are the tail's */
    sqlite3_trace_v2(db->db, 0, NULL, NULL);
    T_EQ_INT(add_session(db, 12, 20), CAIRN_OK);
    a.n = 0;
    T_EQ_INT(store_term_matches_in(db, &all, "\"alpha\"", 7, 1, NULL, 1, max, INT64_MAX, 1,
                                   on_walked, &a), CAIRN_OK);
    T_EQ_INT(a.n, 4 * 20);
    T_CHECK(a.n && a.v[0] > max);
    cairn_close(db);
}

/* tier_choose's reference: the sorts it replaced (add33's choice) */
static int ref_cmp_sess(const void *a, const void *b, void *arg)
{
    const struct post_ent *v = arg, *x = &v[*(const int *)a], *y = &v[*(const int *)b];
    if (x->sess != y->sess)
        return x->sess < y->sess ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

static int ref_cmp_row(const void *a, const void *b)
{
    const struct post_ent *x = a, *y = b;
    return x->row < y->row ? -1 : x->row > y->row;
}

static double ref_best(const struct post_ent *v, const int *idx, int n, int i, double avg, int *end)
{
    double best = 0, w = 1, tf;
    int j = i;
    for (; j < n && v[idx[j]].sess == v[idx[i]].sess; j++) {
        tf = v[idx[j]].tf;
        double s = rank_bm25(&tf, 1, v[idx[j]].ntok, avg, &w);
        best = s > best ? s : best;
    }
    *end = j;
    return best;
}

/* Every session's matches sorted by session, the sessions by best score
 * (stable), the first TIER_SESS kept, their matches sorted by row. */
static int ref_choose(const struct post_ent *v, int n, double avg, struct post_ent *keep,
                      double *cut)
{
    int *idx = malloc((size_t)n * sizeof *idx), ns = 0, nkeep = 0, end;
    struct sort_kv *kv = malloc((size_t)n * sizeof *kv);
    for (int i = 0; i < n; i++)
        idx[i] = i;
    qsort_r(idx, (size_t)n, sizeof *idx, ref_cmp_sess, (void *)v);
    for (int i = 0; i < n;) {
        int j;
        kv[ns++] = (struct sort_kv){ sort_key_double(ref_best(v, idx, n, i, avg, &j)), i };
        i = j;
    }
    T_EQ_INT(sort_kv_desc(kv, (size_t)ns), 0);
    *cut = ns >= TIER_SESS ? ref_best(v, idx, n, (int)kv[TIER_SESS - 1].val, avg, &end) : 0;
    for (int k = 0; k < ns && k < TIER_SESS; k++)
        for (int i = (int)kv[k].val; i < n && v[idx[i]].sess == v[idx[kv[k].val]].sess; i++)
            keep[nkeep++] = v[idx[i]];
    qsort(keep, (size_t)nkeep, sizeof *keep, ref_cmp_row);
    free(idx);
    free(kv);
    return nkeep;
}

/* tier_choose against the sorts it replaced (branch add34): matches whose
 * sessions come in row order (a fresh add: no sort) and interleaved (the
 * sort by session), more sessions than TIER_SESS (the selection) with
 * scores that tie (the same count and length), and fewer. The kept rows
 * and the cut must be the same: an order that took ties from the later
 * session, or kept a session short of a match, fails it. */
static void test_choose(void)
{
    for (int c = 0; c < 4; c++) {
        int nsess = c & 1 ? 600 : 2500, interleave = c >= 2, n = 0;
        struct tmatches m = { 0 };
        m.cap = nsess * 6;
        m.v = calloc((size_t)m.cap, sizeof *m.v);
        struct post_ent *keep = calloc((size_t)m.cap, sizeof *keep);
        double cut = -1;
        for (int64_t row = 1; n < m.cap - 4; row += 1 + rnd(3)) {
            /* in order: session = row / 5; interleaved: any session */
            int64_t sess = interleave ? 1 + rnd((unsigned)nsess) : 1 + (row * nsess) / (m.cap * 2);
            m.v[n++] = (struct post_ent){ row, sess, 1 + (int)rnd(3), 5 + (int)rnd(4) * 10 };
        }
        m.n = n;
        T_EQ_INT(tier_choose(&m, 20.0), CAIRN_OK);
        int nref = ref_choose(m.v, m.n, 20.0, keep, &cut);
        T_EQ_INT(m.nkeep, nref);
        T_CHECK(m.cut == cut);
        T_CHECK(c & 1 ? cut == 0 : cut > 0);
        int same = m.nkeep == nref;
        for (int i = 0; same && i < nref; i++)
            same = m.keep[i].row == keep[i].row && m.keep[i].sess == keep[i].sess &&
                   m.keep[i].tf == keep[i].tf && m.keep[i].ntok == keep[i].ntok;
        T_CHECK(same);
        T_CHECK(c & 1 ? m.nkeep == m.n : m.nkeep < m.n);
        free(m.v);
        free(m.keep);
        free(m.idx);
        free(m.kv);
        free(m.mark);
        free(keep);
    }
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_tiers);
    T_RUN(test_keep_cut);
    T_RUN(test_rebuild);
    T_RUN(test_walk_thread);
    T_RUN(test_choose);
    T_RUN(test_runs_walk);
    T_RUN(test_ranged_walk);
    T_RUN(test_migrate_v21);
    T_RUN(test_migrate_v22);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return T_DONE();
}
