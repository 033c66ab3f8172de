/*
 * test_gather_prune.c: the prompt hook's candidates (src/recall/gather.c)
 * against a brute-force computation on generated stores.
 *
 * gather reads the scope's totals from the one-row store_totals (schema
 * 14) less the session left out, and the sizes of the sessions with
 * matches from session_stats (a range scan merged with the list from
 * 2,048 sessions on). Here the same quantities are computed from the
 * messages themselves (every text tokenized again, every sum taken over
 * the rows), and the pruned pool must agree: the totals, each term's
 * matching messages, the sessions kept (the GATHER_KEEP best by their
 * best single message's BM25, ties by session), the matches left out per
 * term and the sizes of all sessions with matches. Stores are random
 * (Zipf-like words so that some terms match nearly every session), then
 * changed by the write paths that move the totals: more messages, an
 * extended reply, forget. Scopes: all, one session left out, a project.
 * The exact path (no pruning) maps the matches to their sessions through
 * msg_runs (schema 17): its pool must hold every match with its counts,
 * and msg_runs must cover exactly the stored messages after every write.
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
#include "text/tokenize.h"
#include "t_store.h"

static char dir[] = "/tmp/cairn-gprune-XXXXXX";
static unsigned rng = 12345;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static const char *const words[] = {
    "alpha", "bravo", "cache", "delta", "eviction", "fixture", "gamma", "harbor", "index",
    "jitter", "kernel", "ledger", "module", "network", "orbit", "parser", "quorum", "router",
    "socket", "tensor", "update", "vector", "widget", "yonder", "zephyr",
};
#define NWORDS ((int)(sizeof words / sizeof words[0]))

/* Word i with probability ~ 1/(i+1): the first few are in most messages. */
static const char *zipf_word(void)
{
    for (;;) {
        int i = (int)rnd(NWORDS);
        if (rnd((unsigned)(i + 1)) == 0)
            return words[i];
    }
}

static void add_text(struct buf *b, int nwords)
{
    for (int i = 0; i < nwords; i++)
        buf_printf(b, "%s%s", i ? " " : "", zipf_word());
}

/* Session s with n messages (ids "s<s>-<k>" from k0 on). */
static int add_session(struct cairn *db, int s, int k0, int n, int dialog)
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "{\"id\":\"g%d\",\"project\":\"%s\",\"messages\":[", s,
               s % 3 == 0 ? "/p/one" : s % 3 == 1 ? "/p/two" : "");
    for (int k = k0; k < k0 + n; k++) {
        buf_printf(&b, "%s{\"id\":\"g%d-%d\",\"role\":\"%s\",\"content\":\"", k > k0 ? "," : "",
                   s, k, dialog || k % 2 == 0 ? "user" : "assistant");
        add_text(&b, 1 + (int)rnd(12));
        buf_adds(&b, "\"}");
    }
    buf_adds(&b, "]}");
    int rc = b.err ? CAIRN_NOMEM : cairn_add_json(db, b.p, b.n, NULL);
    buf_release(&b);
    return rc;
}

/* ---- the brute force ---- */

struct bmsg { int64_t row, sess; int ntok, user; int64_t bytes; double tf[RECALL_MAX_TERMS]; };
struct bsess { int64_t sess, n, nuser; double best; int has, keep; };

struct count_arg { const struct query *q; double *tf; };

static int count_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct count_arg *c = arg;
    (void)s, (void)e, (void)col;
    for (int t = 0; t < c->q->nt; t++)
        if (strlen(c->q->t[t].norm) == n && !memcmp(c->q->t[t].norm, tok, n))
            c->tf[t]++;
    return 0;
}

static int cmp_best(const void *a, const void *b)
{
    const struct bsess *x = a, *y = b;
    if (x->best != y->best)
        return x->best < y->best ? 1 : -1;
    return x->sess < y->sess ? -1 : x->sess > y->sess;
}

static int cmp_sess(const void *a, const void *b)
{
    const struct bsess *x = a, *y = b;
    return x->sess < y->sess ? -1 : x->sess > y->sess;
}

static int cmp_bmsg(const void *a, const void *b)
{
    const struct bmsg *x = a, *y = b;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* pruned pools sized from the kept sessions' sizes (pool.kept) */
static int kept_sized;

/* One question in one scope: gather's pool against the brute force, pruned
 * (fast: each match's length read with it) or exact (the matches mapped to
 * their sessions through msg_runs, schema 17). */
static void check_one(struct cairn *db, sqlite3 *raw, const char *question, const char *project,
                      const char *exclude, int fast)
{
    struct query q;
    struct pool p;
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.project = project;
    o.exclude_session = exclude;
    o.method = CAIRN_METHOD_KEYWORD;
    o.flags = CAIRN_RECALL_MATCHED_ONLY | (fast ? CAIRN_RECALL_FAST : 0);
    o.budget = 1000;
    T_EQ_INT(query_parse(&q, question, 1700000000, 0), 0);
    /* the loaded pool's turns are checked here (the unit rows' pool, on
     * by default, against the loaded one: test_recall_units) */
    T_EQ_INT(cairn_set(db, "recall.units", "0"), CAIRN_OK);
    T_EQ_INT(gather(db, &q, &o, NULL, NULL, NULL, &p), CAIRN_OK);
    /* the exact pool's turns' array was sized once, from the sessions'
     * sizes (store_sessions_size), not grown: exactly its turns; so was
     * a pruned one, the kept sessions' sizes from the pruning's read
     * (pool.kept) and the others' from the store */
    if ((!fast || p.kept) && p.nm > 64)
        T_EQ_INT(p.cm, p.nm);
    if (p.kept)
        kept_sized++;

    /* every message in scope, its counts by the tokenizer */
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT m.id, m.session, m.ntok, m.role = 'user', "
                                "length(CAST(m.content AS BLOB)), m.content FROM messages m "
                                "JOIN sessions s ON s.id = m.session WHERE (?1 IS NULL OR "
                                "s.project = ?1) AND (?2 IS NULL OR s.ext_id <> ?2) ORDER BY m.id",
                                -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, exclude, -1, SQLITE_STATIC);
    int nm = 0, cm = 1024;
    struct bmsg *m = malloc((size_t)cm * sizeof *m);
    int64_t tot_n = 0, tot_tok = 0, tot_user = 0, tot_bytes = 0;
    int df[RECALL_MAX_TERMS] = { 0 };
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (nm == cm)
            m = realloc(m, (size_t)(cm *= 2) * sizeof *m);
        struct bmsg *b = &m[nm++];
        memset(b, 0, sizeof *b);
        b->row = sqlite3_column_int64(st, 0);
        b->sess = sqlite3_column_int64(st, 1);
        b->ntok = sqlite3_column_int(st, 2);
        b->user = sqlite3_column_int(st, 3);
        b->bytes = sqlite3_column_int64(st, 4);
        const char *text = (const char *)sqlite3_column_text(st, 5);
        struct count_arg ca = { &q, b->tf };
        text_tokenize(text, strlen(text), 0, count_cb, &ca);
        tot_n++, tot_tok += b->ntok, tot_user += b->user, tot_bytes += b->bytes;
        for (int t = 0; t < q.nt; t++)
            df[t] += b->tf[t] > 0;
    }
    sqlite3_finalize(st);
    T_EQ_INT(p.total_msgs, tot_n);
    T_EQ_INT(p.total_tok, tot_tok);
    T_EQ_INT(p.total_user, tot_user);
    T_EQ_INT(p.total_bytes, tot_bytes);
    for (int t = 0; t < q.nt; t++)
        T_EQ_INT(q.t[t].df_msg, df[t]);

    /* sessions with matches, each by its best message alone */
    double w[RECALL_MAX_TERMS], avg = tot_n ? (double)tot_tok / tot_n : 1;
    for (int t = 0; t < q.nt; t++)
        w[t] = rank_idf((double)tot_n, df[t]);
    int ns = 0;
    struct bsess *s = calloc((size_t)(nm ? nm : 1), sizeof *s);
    for (int i = 0; i < nm; i++) {
        int any = 0;
        for (int t = 0; t < q.nt; t++)
            any |= m[i].tf[t] > 0;
        if (!any)
            continue;
        double sc = rank_bm25(m[i].tf, q.nt, m[i].ntok, avg, w);
        int j = ns && s[ns - 1].sess == m[i].sess ? ns - 1 : 0;   /* rows come by session */
        for (; j < ns && s[j].sess != m[i].sess; j++)
            ;
        if (j == ns)
            s[ns++] = (struct bsess){ .sess = m[i].sess };
        if (sc > s[j].best)
            s[j].best = sc;
    }
    int64_t hit_n = 0, hit_units = 0;
    for (int j = 0; j < ns; j++) {
        T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT n, nuser FROM session_stats WHERE session = ?",
                                    -1, &st, NULL), SQLITE_OK);
        sqlite3_bind_int64(st, 1, s[j].sess);
        if (sqlite3_step(st) == SQLITE_ROW) {
            int64_t n = sqlite3_column_int64(st, 0), nu = sqlite3_column_int64(st, 1);
            hit_n += n;
            hit_units += nu == n ? n : nu;
        }
        sqlite3_finalize(st);
    }
    qsort(s, (size_t)ns, sizeof *s, cmp_sess);
    qsort(s, (size_t)ns, sizeof *s, cmp_best);
    for (int j = 0; j < ns && j < GATHER_KEEP; j++)
        s[j].keep = 1;
    int want_pruned = fast && ns > 0 && hit_n > 1;       /* recall.prune_msgs below */
    T_EQ_INT(p.pruned, want_pruned);
    if (want_pruned) {
        T_EQ_INT(p.hit_msgs, hit_n);
        T_EQ_INT(p.hit_units, hit_units);
    }
    /* the sessions loaded are the ones kept, and what was left out */
    qsort(s, (size_t)ns, sizeof *s, cmp_sess);
    int kept = 0, ok = 1;
    for (int j = 0; j < ns; j++)
        kept += s[j].keep || !want_pruned;
    T_EQ_INT(p.ns, kept);
    for (int i = 0, j = 0; i < p.ns && ok; i++) {
        while (j < ns && !(s[j].keep || !want_pruned))
            j++;
        ok = j < ns && s[j].sess == p.s[i].row;
        j++;
    }
    T_CHECK(ok);
    int left[RECALL_MAX_TERMS] = { 0 };
    for (int i = 0; i < nm && want_pruned; i++) {
        struct bsess key = { .sess = m[i].sess };
        struct bsess *f = bsearch(&key, s, (size_t)ns, sizeof *s, cmp_sess);
        for (int t = 0; f && !f->keep && t < q.nt; t++)
            left[t] += m[i].tf[t] > 0;
    }
    for (int t = 0; t < q.nt; t++)
        T_EQ_INT(p.pruned_df[t], want_pruned ? left[t] : 0);
    /* every turn loaded carries its counts (none when it matched nothing),
     * every message in scope with a match is loaded unless pruned */
    int loaded = 0, bad = 0;
    for (int i = 0; i < p.nm; i++) {
        struct bmsg key = { .row = p.m[i].row };
        struct bmsg *f = bsearch(&key, m, (size_t)nm, sizeof *m, cmp_bmsg);
        int any = 0;
        for (int t = 0; f && t < q.nt; t++)
            any |= f->tf[t] > 0;
        if (!f || any != (p.m[i].tf != NULL)) {
            bad++;
            continue;
        }
        loaded += any;
        for (int t = 0; any && t < q.nt; t++)
            bad += p.m[i].tf[t] != f->tf[t];
    }
    T_EQ_INT(bad, 0);
    if (!want_pruned) {
        int with = 0;
        for (int i = 0; i < nm; i++) {
            int any = 0;
            for (int t = 0; t < q.nt; t++)
                any |= m[i].tf[t] > 0;
            with += any;
        }
        T_EQ_INT(loaded, with);
    }
    free(s);
    free(m);
    pool_free(&p);
    query_free(&q);
}

static void check_all(struct cairn *db, sqlite3 *raw, int nq, int nsess)
{
    for (int k = 0; k < nq; k++) {
        char question[200], ex[32];
        /* common words, and one rare word alone: a few matches in
         * sessions far apart (gather's sorted lookup, not its array) */
        if (k % 3 == 2)
            snprintf(question, sizeof question, "%s", words[NWORDS - 1 - (int)rnd(5)]);
        else
            snprintf(question, sizeof question, "%s %s %s", zipf_word(), words[rnd(NWORDS)],
                     k % 2 ? zipf_word() : "");
        snprintf(ex, sizeof ex, "g%u", rnd((unsigned)nsess));
        for (int fast = 0; fast < 2; fast++) {
            check_one(db, raw, question, NULL, NULL, fast);
            check_one(db, raw, question, NULL, ex, fast);
            check_one(db, raw, question, k % 2 ? "/p/one" : "", NULL, fast);
        }
    }
}

/* msg_runs (schema 17) covers exactly the stored messages: each message in
 * one run, of its session, no run holds an id that is not stored, and
 * consecutive ids of one session share a run (what keeps it small). Each
 * run's counts (schema 19) are its messages' ntok in id order, built here
 * one message at a time; a run without them only where a delete cut it
 * (cut: the caller deleted single messages). */
static void check_runs(sqlite3 *raw, int cut)
{
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT (SELECT count(*) FROM messages m WHERE (SELECT "
                                "count(*) FROM msg_runs r WHERE m.id BETWEEN r.first AND r.last "
                                "AND r.session = m.session) <> 1), (SELECT coalesce(sum(last - "
                                "first + 1), 0) FROM msg_runs) - (SELECT count(*) FROM messages), "
                                "(SELECT count(*) FROM msg_runs WHERE last < first), "
                                "(SELECT count(*) FROM msg_runs a JOIN msg_runs b ON b.first = "
                                "a.last + 1 AND b.session = a.session)",
                                -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_INT(sqlite3_column_int(st, 0), 0);
    T_EQ_INT(sqlite3_column_int(st, 1), 0);
    T_EQ_INT(sqlite3_column_int(st, 2), 0);
    T_EQ_INT(sqlite3_column_int(st, 3), 0);       /* one run, not two, if consecutive */
    sqlite3_finalize(st);
    /* the counts: runs and messages both in id order, side by side */
    sqlite3_stmt *m;
    struct buf want = BUF_INIT;
    int runs = 0, without = 0, wrong = 0;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT first, last, lens FROM msg_runs ORDER BY first", -1,
                                &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT ntok FROM messages WHERE id BETWEEN ?1 AND ?2 "
                                "ORDER BY id", -1, &m, NULL), SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        runs++;
        if (sqlite3_column_type(st, 2) == SQLITE_NULL) {
            without++;
            continue;
        }
        buf_reset(&want);
        sqlite3_reset(m);
        sqlite3_bind_int64(m, 1, sqlite3_column_int64(st, 0));
        sqlite3_bind_int64(m, 2, sqlite3_column_int64(st, 1));
        for (int i = 0; sqlite3_step(m) == SQLITE_ROW; i++)
            buf_printf(&want, "%s%d", i ? "," : "", sqlite3_column_int(m, 0));
        const char *have = (const char *)sqlite3_column_text(st, 2);
        wrong += strlen(have) != want.n || memcmp(have, want.p, want.n) != 0;
    }
    T_EQ_INT(wrong, 0);
    T_CHECK(runs > 0);
    if (cut)
        T_CHECK(without > 0);
    else
        T_EQ_INT(without, 0);
    sqlite3_finalize(st);
    sqlite3_finalize(m);
    buf_release(&want);
}

/* A store of nsess sessions, checked; then changed by each write path
 * that moves the totals, and checked again. */
static void test_random_store(int nsess, int nq, unsigned seed)
{
    char path[256];
    struct cairn *db;
    sqlite3 *raw;
    rng = seed;
    snprintf(path, sizeof path, "%s/s%u.db", dir, seed);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "1"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "store.keep_turns", seed % 2 ? "1" : NULL), CAIRN_OK);
    for (int s = 0; s < nsess; s++)
        T_EQ_INT(add_session(db, s, 0, 1 + (int)rnd(4), s % 7 == 0), CAIRN_OK);
    T_EQ_INT(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    check_runs(raw, 0);
    check_all(db, raw, nq, nsess);
    /* over GATHER_KEEP sessions: the common words' postings packed
     * (schema 26), so the pruning scores their blocks as it merges them
     * (gather.c, merge_pruned), against the same brute force here and
     * after the writes below (kept blocks, dirty messages); the tiers off,
     * whose pruned pool is not the walk's */
    int64_t terms = 0;
    if (nsess > GATHER_KEEP) {
        T_EQ_INT(cairn_set(db, "recall.tier", "0"), CAIRN_OK);
        T_EQ_INT(cairn_tier_build(db, &terms, NULL), CAIRN_OK);
        T_CHECK(terms >= 2);
        sqlite3_stmt *st;
        T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT count(*) FROM post_terms", -1, &st, NULL),
                 SQLITE_OK);
        T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
        T_CHECK(sqlite3_column_int(st, 0) >= 2);
        sqlite3_finalize(st);
        check_all(db, raw, nq, nsess);
    }
    /* more messages in some sessions, an extended reply, forgets */
    for (int k = 0; k < nsess / 10; k++)
        T_EQ_INT(add_session(db, (int)rnd((unsigned)nsess), 10, 1 + (int)rnd(3), 0), CAIRN_OK);
    const char *ext = "{\"id\":\"g1\",\"messages\":[{\"id\":\"g1-99\",\"role\":\"user\","
                      "\"content\":\"alpha bravo cache delta eviction and a longer tail\"}]}";
    const char *ext2 = "{\"id\":\"g1\",\"messages\":[{\"id\":\"g1-99\",\"role\":\"user\","
                       "\"content\":\"alpha bravo cache delta eviction and a longer tail, "
                       "alpha alpha socket router\"}]}";
    T_EQ_INT(cairn_add_json(db, ext, strlen(ext), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, ext2, strlen(ext2), NULL), CAIRN_OK);
    for (int k = 0; k < nsess / 20; k++) {
        char id[32];
        snprintf(id, sizeof id, "g%u", rnd((unsigned)nsess));
        int rc = cairn_forget(db, id);
        T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING || rc == CAIRN_NOTFOUND);
    }
    check_runs(raw, 0);             /* an extended reply's run counted again, forgets */
    check_all(db, raw, nq, nsess);
    /* no write path deletes one message of a session, but the trigger cuts
     * a run wherever one goes (a first, a middle and a last id): checked
     * in a transaction rolled back */
    sqlite3 *rw;
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    const char *cut = "DELETE FROM messages WHERE id IN (SELECT first FROM msg_runs "
                      "WHERE last > first + 2 LIMIT 3); DELETE FROM messages WHERE id IN "
                      "(SELECT first + 1 FROM msg_runs WHERE last > first + 2 LIMIT 3); "
                      "DELETE FROM messages WHERE id IN (SELECT last FROM msg_runs WHERE "
                      "last > first + 1 LIMIT 3)";
    T_EQ_INT(sqlite3_exec(rw, "BEGIN", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, cut, NULL, NULL, NULL), SQLITE_OK);
    check_runs(rw, 1);
    T_EQ_INT(sqlite3_exec(rw, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
    /* a version-18 store: the migration counts every run's messages */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, MSG_RUNS_LENS_V19_DROP "PRAGMA user_version=18", NULL, NULL, NULL),
             SQLITE_OK);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "1"), CAIRN_OK);
    check_runs(raw, 0);
    check_all(db, raw, 2, nsess);
    /* runs cut for good: their matches' lengths are looked up, the pool
     * the same as the brute force's */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, cut, NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "1"), CAIRN_OK);
    check_runs(raw, 1);
    check_all(db, raw, 2, nsess);
    /* a version-16 store: the migration fills msg_runs from the messages */
    cairn_close(db);
    T_EQ_INT(sqlite3_exec(rw, AFTER_V16_DROP "PRAGMA user_version=16", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(rw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "recall.prune_msgs", "1"), CAIRN_OK);
    check_runs(raw, 0);
    check_all(db, raw, 2, nsess);
    /* sessions whose turns' positions run against their row ids: gather
     * pairs the matches with them by search, not by its cursor */
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, "UPDATE messages SET position = -1 - position WHERE session % 3 = 0",
                          NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(rw);
    /* (the handle reopened above keeps no turns: odd seeds keep them again) */
    T_EQ_INT(cairn_set(db, "store.keep_turns", seed % 2 ? "1" : NULL), CAIRN_OK);
    check_all(db, raw, 2, nsess);
    sqlite3_close(raw);
    cairn_close(db);
}

/* The turns gather loads, counted: n sessions, their turns. */
static void pool_size(struct cairn *db, const char *question, int *ns, int *nm)
{
    struct query q;
    struct pool p;
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.method = CAIRN_METHOD_KEYWORD;
    o.flags = CAIRN_RECALL_MATCHED_ONLY;
    o.budget = 1000;
    T_EQ_INT(query_parse(&q, question, 1700000000, 0), 0);
    T_EQ_INT(cairn_set(db, "recall.units", "0"), CAIRN_OK);    /* (the loaded pool's) */
    T_EQ_INT(gather(db, &q, &o, NULL, NULL, NULL, &p), CAIRN_OK);
    *ns = p.ns;
    *nm = p.nm;
    pool_free(&p);
    query_free(&q);
}

/* What a recall answers, byte for byte: the text and every item. */
static void recall_sig(struct cairn *db, const char *question, struct buf *out)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = 300;
    o.explain = 1;
    buf_reset(out);
    T_EQ_INT(cairn_recall(db, question, &o, &r), CAIRN_OK);
    if (!r)
        return;
    buf_printf(out, "%d\n%s\n", r->tokens, r->text);
    for (size_t i = 0; i < r->n_items; i++)
        buf_printf(out, "%s %s %d %.9f %s\n", r->items[i].session, r->items[i].message,
                   r->items[i].rank, r->items[i].score, r->items[i].why ? r->items[i].why : "");
    cairn_recall_free(r);
}

/* The kept handle's answer is a fresh handle's (opened now), and asking
 * again on the kept handle gives it once more. */
static void same_as_fresh(struct cairn *db, const char *path)
{
    static const char *const qs[] = { "alpha bravo", "cache eviction", "zulu socket router" };
    struct cairn *fresh;
    struct buf a = BUF_INIT, b = BUF_INIT, c = BUF_INIT;
    T_EQ_INT(cairn_open(path, CAIRN_OPEN_READONLY, &fresh), CAIRN_OK);
    for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
        recall_sig(db, qs[i], &a);
        recall_sig(db, qs[i], &b);
        recall_sig(fresh, qs[i], &c);
        T_CHECK(a.n > 0);
        T_CHECK(a.n == b.n && !memcmp(a.p, b.p, a.n));
        T_CHECK(a.n == c.n && !memcmp(a.p, c.p, a.n));
    }
    cairn_close(fresh);
    buf_release(&a);
    buf_release(&b);
    buf_release(&c);
}

/* "store.keep_turns" (cairn web): the turns kept between recalls are
 * read again after a write through the handle itself (its change count)
 * or a commit by another connection (data_version), so the pool is always
 * the one a fresh handle gathers. */
static void test_keep_turns(void)
{
    char path[256];
    struct cairn *db, *fresh;
    sqlite3 *rw;
    int ns, nm, ns2, nm2;
    rng = 7;
    snprintf(path, sizeof path, "%s/keep.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "store.keep_turns", "1"), CAIRN_OK);
    for (int s = 0; s < 30; s++)
        T_EQ_INT(add_session(db, s, 0, 2 + (int)rnd(4), 0), CAIRN_OK);
    pool_size(db, "alpha bravo", &ns, &nm);
    T_CHECK(nm > 30);
    same_as_fresh(db, path);
    /* a write through the handle */
    T_EQ_INT(add_session(db, 3, 50, 5, 0), CAIRN_OK);
    same_as_fresh(db, path);
    pool_size(db, "alpha bravo", &ns2, &nm2);
    T_EQ_INT(cairn_open(path, CAIRN_OPEN_READONLY, &fresh), CAIRN_OK);
    pool_size(fresh, "alpha bravo", &ns, &nm);
    T_EQ_INT(ns2, ns);
    T_EQ_INT(nm2, nm);
    /* a commit by another connection: one more turn in session g3 (added
     * as every message is, by ingest.c, which keeps session_turns) */
    struct cairn *other;
    const char *more = "{\"id\":\"g3\",\"messages\":[{\"id\":\"g3-999\",\"role\":\"user\","
                       "\"content\":\"zzz\"}]}";
    T_EQ_INT(t_open(path, 0, &other), CAIRN_OK);
    T_EQ_INT(cairn_add_json(other, more, strlen(more), NULL), CAIRN_OK);
    cairn_close(other);
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    same_as_fresh(db, path);
    /* the sessions are kept too: a session's project and start moved by
     * another connection, and a session with no turn */
    T_EQ_INT(sqlite3_exec(rw, "UPDATE sessions SET project = '/p/moved', started_at = 86400 "
                          "WHERE ext_id IN ('g4', 'g7')", NULL, NULL, NULL), SQLITE_OK);
    same_as_fresh(db, path);
    T_EQ_INT(sqlite3_exec(rw, "INSERT INTO sessions(ext_id, source, started_at, stored_at) "
                          "VALUES ('empty', 'test', 0, 0)", NULL, NULL, NULL), SQLITE_OK);
    same_as_fresh(db, path);
    sqlite3_close(rw);
    pool_size(db, "alpha bravo", &ns2, &nm2);
    T_EQ_INT(nm2, nm + 1);
    pool_size(fresh, "alpha bravo", &ns, &nm);
    T_EQ_INT(nm2, nm);
    cairn_close(fresh);
    /* the setting back to its default: read from the store again */
    T_EQ_INT(cairn_set(db, "store.keep_turns", NULL), CAIRN_OK);
    pool_size(db, "alpha bravo", &ns2, &nm2);
    T_EQ_INT(nm2, nm);
    cairn_close(db);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(dir))
        return 1;
    /* small stores: many seeds, fewer sessions than GATHER_KEEP (all kept) */
    for (unsigned seed = 1; seed <= 4; seed++)
        test_random_store(40 + (int)seed * 10, 6, seed);
    /* over GATHER_KEEP sessions with matches, and over the 2,048 from which
     * the sizes are read by a range scan */
    test_random_store(2300, 6, 99);
    T_CHECK(kept_sized > 0);              /* some pruned pools were sized from pool.kept */
    test_keep_turns();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return T_DONE();
}
