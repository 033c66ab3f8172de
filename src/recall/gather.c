/*
 * gather.c: candidates for a question.
 *
 * One FTS5 query with every term OR'ed gives each matching message and,
 * through cairn_tf(), how often each term occurs in it. The sessions those
 * messages sit in are then loaded whole (metadata only, not text), because
 * a round is a user turn with the replies around it and a window reaches
 * the turns next to it: both need the neighbours even when they matched
 * nothing. Sessions inside the question's time range are loaded too, so
 * "what did I do yesterday?" finds turns that share no word with it.
 */
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "store/post.h"
#include "store/recall_read.h"
#include "store/tier.h"
#include "text/tokenize.h"
#include "util/os.h"
#include "util/sort.h"

/* The fewest bytes of text that cost one token, for any text the counter
 * sees (ASCII letters cost a token per 6; docs/TOKENS.md). */
#define GATHER_BYTES_PER_TOKEN 8

#define GROW(arr, n, cap) do { \
    if ((n) == (cap)) { \
        int nc_ = (cap) ? (cap) * 2 : 64; \
        void *np_ = realloc((arr), (size_t)nc_ * sizeof *(arr)); \
        if (!np_) { rc = CAIRN_NOMEM; goto out; } \
        (arr) = np_; (cap) = nc_; \
    } \
} while (0)

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* qsort, but a look first: the matches come by row id, and a store added
 * session by session holds each session's rows together, so they are
 * mostly in order already, which a merge sort sorts again at full cost.
 * (qsort here is glibc's merge sort, stable: skipping it on input in
 * order gives the order it would.) */
static void sort_if_needed(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *c = v;
    for (size_t i = 1; i < n; i++) {
        if (cmp(c + (i - 1) * size, c + i * size) > 0) {
            qsort(v, n, size, cmp);
            return;
        }
    }
}

/* Match rows keep their tf until the session's messages are loaded: the
 * counts of every match in one array (struct hits' tf), nt a match, which
 * the pool keeps (pool.tf_all) once messages point into it; a malloc a
 * match cost as much as the rest of the collecting on a big store. */
struct hit { int64_t row, sess; int ntok; double score; uint16_t *tf; };

static int cmp_hit(const void *a, const void *b)
{
    return cmp_i64(&((const struct hit *)a)->row, &((const struct hit *)b)->row);
}

static int cmp_hit_sess(const void *a, const void *b)
{
    return cmp_i64(&((const struct hit *)a)->sess, &((const struct hit *)b)->sess);
}

static int cmp_hit_sess_row(const void *a, const void *b)
{
    int c = cmp_hit_sess(a, b);
    return c ? c : cmp_hit(a, b);
}

/* The setting recall.exhaustive "1": never prune (the reference for tests
 * and benchmarks). */
static int exhaustive(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_EXHAUSTIVE);
    return v && *v && strcmp(v, "0");
}

/*
 * On a big store a question of common words matches messages in nearly
 * every session, and loading them all (~100k turns, then ranking ~100k
 * units) is what cost ~200 ms a recall. When the sessions that hold
 * matches have more than GATHER_PRUNE_MSGS turns, only the GATHER_KEEP
 * sessions whose best match (BM25 of the message alone, exact IDF) is
 * highest are loaded; ranking and packing then run as always on them.
 * Not exact: the rounds' and windows' ranks are taken among the units
 * loaded, and a left-out session may hold a unit that fused ranks high
 * (bench/README.md measures how often the result differs). Keeping the
 * top sessions by the sum of their matches instead, or besides, agreed
 * less with the exhaustive path. Term counts of the left-out matches go
 * to pool.pruned_df (unit IDF); the unit count comes from session_sizes
 * (schema 24, 128 sessions a row; else session_stats).
 * Only callers that ask for it (CAIRN_RECALL_FAST: the prompt hook, which
 * runs on every prompt) get it; recall, the MCP tool and eval stay exact.
 * The setting recall.exhaustive turns pruning off even then. The two numbers
 * are in policy.h.
 *
 * The matches stay in the order FTS5 gave them (by row): each session's
 * best is kept in an array indexed by session row id (ids are dense: one
 * a session ever added), so no array of ~100,000 matches is sorted or
 * copied, and the GATHER_KEEP sessions with the best bests are chosen
 * by a selection (sort_kv_top: linear, no sort), equal bests by session
 * id as the merge sort of the sessions in order did
 * (tests/unit/test_gather_prune.c checks the kept sessions against a
 * brute force).
 */

/* Session row ids spread wider than this many times the matches (a store
 * whose early sessions were mostly forgotten) are looked up in the sorted
 * list of the matches' sessions instead of indexed directly. */
#define PRUNE_SPAN_PER_HIT 4

/* The slot of session sess: its offset from lo, or its place in ids. */
static size_t sess_slot(int64_t sess, int64_t lo, const int64_t *ids, int nids)
{
    if (!ids)
        return (size_t)(sess - lo);
    const int64_t *f = bsearch(&sess, ids, (size_t)nids, sizeof *ids, cmp_i64);
    return (size_t)(f - ids);             /* every match's session is there */
}

/* The sessions of a list of matches: n of them, the session of match i an
 * int64_t at base + i * stride (a struct hit array's, or a packed word's
 * struct post_ent array's). */
struct sess_src {
    const char *base;
    size_t      stride;
    int         n;
};

#define SESS_AT(s, i) (*(const int64_t *)(const void *)((s)->base + (size_t)(i) * (s)->stride))

/*
 * The pruning in three steps, so that a caller with its matches in
 * several sorted lists (packed_matches) scores them as it merges them,
 * without an array of every match (issue 23, hook29): pruner_init sizes
 * the sessions' slots from every list's sessions, pruner_add takes a
 * match's BM25 alone (the IDF of q's dfs, which must be final) into its
 * session's best, pruner_select decides whether the pool is big enough
 * and marks the GATHER_KEEP sessions kept.
 */
struct pruner {
    double        *best;
    unsigned char *keep;
    int64_t       *sorted;     /* the sessions in order, when too sparse for slots */
    int64_t        lo;
    size_t         span;
    int            nids;       /* sessions with a match */
    int            nt;
    double         avg, w[RECALL_MAX_TERMS];
};

static void pruner_free(struct pruner *pr)
{
    free(pr->best);
    free(pr->keep);
    free(pr->sorted);
}

static int pruner_init(struct pruner *pr, const struct pool *p, const struct query *q,
                       const struct sess_src *src, int nsrc)
{
    int64_t lo = INT64_MAX, hi = INT64_MIN, nh = 0;
    memset(pr, 0, sizeof *pr);
    for (int k = 0; k < nsrc; k++) {
        for (int i = 0; i < src[k].n; i++) {
            int64_t s = SESS_AT(&src[k], i);
            lo = s < lo ? s : lo;
            hi = s > hi ? s : hi;
        }
        nh += src[k].n;
    }
    pr->lo = lo;
    if (hi - lo < nh * PRUNE_SPAN_PER_HIT + 1024) {
        pr->span = (size_t)(hi - lo + 1);
    } else {
        if (!(pr->sorted = malloc((size_t)nh * sizeof *pr->sorted)))
            return CAIRN_NOMEM;
        size_t n = 0;
        for (int k = 0; k < nsrc; k++)
            for (int i = 0; i < src[k].n; i++)
                pr->sorted[n++] = SESS_AT(&src[k], i);
        qsort(pr->sorted, n, sizeof *pr->sorted, cmp_i64);
        size_t u = 0;
        for (size_t i = 0; i < n; i++)
            if (!u || pr->sorted[u - 1] != pr->sorted[i])
                pr->sorted[u++] = pr->sorted[i];
        pr->span = u;
    }
    if (!(pr->best = malloc(pr->span * sizeof *pr->best)) || !(pr->keep = calloc(pr->span, 1)))
        return CAIRN_NOMEM;
    for (size_t k = 0; k < pr->span; k++)
        pr->best[k] = -1;                 /* no match (a match's BM25 is >= 0) */
    pr->nt = q->nt;
    pr->avg = p->total_msgs ? (double)p->total_tok / p->total_msgs : 1;
    for (int t = 0; t < q->nt; t++)
        pr->w[t] = rank_idf((double)p->total_msgs, q->t[t].df_msg);
    return CAIRN_OK;
}

/* (inline: a call a match was ~2 M instructions of a hook at a million) */
static inline __attribute__((always_inline)) size_t pruner_slot(const struct pruner *pr,
                                                                int64_t sess)
{
    return pr->sorted ? sess_slot(sess, pr->lo, pr->sorted, (int)pr->span) : (size_t)(sess - pr->lo);
}

/* A match's BM25 alone (rank_bm25's sum, term by term in order, from
 * the counts as they are) into its session's best; has: the terms whose
 * count is not 0, bit t term t. The bits are taken in increasing order,
 * so the sum is the same doubles as a loop over every term skipping the
 * zeros, without a test a term a row (a packed word's row has one term:
 * ~4.5 M instructions at a million messages; issue 23, hook30). */
static inline __attribute__((always_inline)) void
pruner_add_has(struct pruner *pr, int64_t sess, int ntok, const uint16_t *c, uint64_t has)
{
    double norm = rank_bm25_norm(ntok, pr->avg), sc = 0;
    for (; has; has &= has - 1) {
        int t = __builtin_ctzll(has);
        sc += rank_bm25_term(pr->w[t], c[t], norm);
    }
    double *b = &pr->best[pruner_slot(pr, sess)];
    if (*b < 0)
        pr->nids++;
    if (sc > *b)
        *b = sc;
}

static inline __attribute__((always_inline)) void
pruner_add(struct pruner *pr, int64_t sess, int ntok, const uint16_t *c)
{
    uint64_t has = 0;
    for (int t = 0; t < pr->nt; t++)
        has |= (uint64_t)(c[t] != 0) << t;
    pruner_add_has(pr, sess, ntok, c, has);
}

/* Whether to prune (*on), and if so the kept sessions marked in keep;
 * the pool's sizes set either way (tiered as prune says). */
static int pruner_select(struct cairn *h, struct pruner *pr, struct pool *p,
                         const struct store_totals *tiered, int *walk, int *on)
{
    int64_t *ids = NULL, *each = NULL, pool_msgs = 0;
    struct sort_kv *c = NULL;
    int nids = 0, got = 0, rc = CAIRN_OK;
    size_t nalloc = (size_t)(pr->nids ? pr->nids : 1);
    *on = 0;
    /* the sessions in order, with their bests */
    if (!(ids = malloc(nalloc * sizeof *ids)) || !(each = malloc(nalloc * sizeof *each)) ||
        !(c = malloc(nalloc * sizeof *c))) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    for (size_t k = 0; k < pr->span; k++) {
        if (pr->best[k] < 0)
            continue;
        ids[nids] = pr->sorted ? pr->sorted[k] : pr->lo + (int64_t)k;
        c[nids++] = (struct sort_kv){ sort_key_double(pr->best[k]), (int64_t)k };
    }
    if ((rc = store_sessions_size_each(h, ids, nids, &pool_msgs, &p->hit_units, each, &got)))
        goto out;
    p->hit_msgs = pool_msgs;
    const char *lim = cairn__setting(h, CAIRN__SET_RECALL_PRUNE_MSGS);   /* tests: small stores */
    if (pool_msgs <= (lim && *lim ? strtoll(lim, NULL, 10) : GATHER_PRUNE_MSGS)) {
        /* tiered: these are some of the sessions with a match; the walk
         * decides whether the rest makes the pool big enough to prune */
        if (tiered)
            *walk = 1;
        goto out;
    }
    if (tiered) {
        /* a common word is in most sessions: the scope's sizes stand
         * for those of all the sessions with a match (their ratio is
         * what rank.c reads) */
        p->hit_msgs = tiered->msgs;
        p->hit_units = tiered->units;
    }
    /* the GATHER_KEEP best, as the stable sort would rank them, but
     * chosen without sorting the thousands of sessions (only the set is
     * needed: the matches are dropped in their own order) */
    long nkeep = sort_kv_top(c, (size_t)nids, GATHER_KEEP);
    if (nkeep < 0) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    for (long i = 0; i < nkeep; i++)
        pr->keep[c[i].val] = 1;
    *on = 1;
    p->pruned = 1;
    /* the kept sessions' turns, read above: the pool's size from them
     * (kept_turns), not from their 391 rows read again at a million
     * messages (one 4 KB page each: issue 23, hook50) */
    free(p->kept);
    free(p->kept_msgs);
    p->kept = p->kept_msgs = NULL;
    p->nkept = 0;
    if (got && nkeep > 0 && (p->kept = malloc((size_t)nkeep * sizeof *p->kept)) &&
        (p->kept_msgs = malloc((size_t)nkeep * sizeof *p->kept_msgs))) {
        for (size_t k = 0, j = 0; k < pr->span; k++) {
            if (pr->best[k] < 0)
                continue;
            if (pr->keep[k]) {
                p->kept[p->nkept] = ids[j];
                p->kept_msgs[p->nkept++] = each[j];
            }
            j++;
        }
    }
out:
    free(ids);
    free(each);
    free(c);
    return rc;
}

/* The turns of the sessions sess[n] (in order, no repeats): the kept
 * sessions' from what the pruning read (pool.kept), the others' from the
 * store, the same sum as store_sessions_size of the list while the rows
 * are unchanged (the pool's size only: turns added since are grown into). */
static int kept_turns(struct cairn *h, const struct pool *p, const int64_t *sess, int n,
                      int64_t *n_msgs)
{
    int64_t units, m = 0, *rest = NULL;
    int nr = 0, rc = CAIRN_OK;
    if (!p->kept) {
        *n_msgs = 0;
        return store_sessions_size(h, sess, n, n_msgs, &units);
    }
    if (!(rest = malloc((size_t)(n ? n : 1) * sizeof *rest)))
        return CAIRN_NOMEM;
    for (int i = 0, j = 0; i < n; i++) {
        while (j < p->nkept && p->kept[j] < sess[i])
            j++;
        if (j < p->nkept && p->kept[j] == sess[i])
            m += p->kept_msgs[j];
        else
            rest[nr++] = sess[i];
    }
    if (nr && (rc = store_sessions_size(h, rest, nr, n_msgs, &units)))
        goto out;
    *n_msgs = (nr ? *n_msgs : 0) + m;
out:
    free(rest);
    return rc;
}

static inline int pruner_keeps(const struct pruner *pr, int64_t sess)
{
    return pr->keep[pruner_slot(pr, sess)];
}

static int prune(struct cairn *h, struct query *q, struct pool *p, struct hit *hits, int *nhp,
                 const struct store_totals *tiered, int *walk)
{
    struct pruner pr;
    int nh = *nhp, on = 0, rc;
    struct sess_src src = { (const char *)&hits[0].sess, sizeof *hits, nh };

    if ((rc = pruner_init(&pr, p, q, &src, 1)))
        goto out;
    /* Each match's BM25 alone, and per session the best. */
    for (int i = 0; i < nh; i++)
        pruner_add(&pr, hits[i].sess, hits[i].ntok, hits[i].tf);
    if ((rc = pruner_select(h, &pr, p, tiered, walk, &on)) || !on)
        goto out;
    /* Drop the matches of the sessions left out. */
    int k = 0;
    for (int i = 0; i < nh; i++) {
        if (pruner_keeps(&pr, hits[i].sess)) {
            hits[k++] = hits[i];
            continue;
        }
        for (int t = 0; t < q->nt; t++)
            p->pruned_df[t] += hits[i].tf[t] > 0;
    }
    /* tiered: not every match was read; those left out are the rest of
     * the word's df (a tier keeps all of a kept session's matches) */
    for (int t = 0; tiered && t < q->nt; t++) {
        int kept = 0;
        for (int i = 0; i < k; i++)
            kept += hits[i].tf[t] > 0;
        p->pruned_df[t] = q->t[t].df_msg > kept ? q->t[t].df_msg - kept : 0;
    }
    *nhp = k;
out:
    pruner_free(&pr);
    return rc;
}

/* Collects the matches of store_term_matches. */
struct hits {
    struct hit   *v;
    int           n, cap;
    uint16_t     *tf;        /* n * nt counts; hit i's at tf + i * nt */
    struct query *q;
};

static int add_hit(struct hits *hs, int64_t row, int64_t sess, int ntok, const uint16_t *tf,
                   int count_df)
{
    struct query *q = hs->q;
    int rc = CAIRN_OK;
    size_t nt = (size_t)(q->nt ? q->nt : 1);
    if (hs->n == hs->cap) {
        /* the counts grow with the hits (pointers are set once all are in) */
        uint16_t *ntf = realloc(hs->tf, (size_t)(hs->cap ? hs->cap * 2 : 64) * nt * sizeof *ntf);
        if (!ntf)
            return CAIRN_NOMEM;
        hs->tf = ntf;
    }
    GROW(hs->v, hs->n, hs->cap);
    struct hit *ht = &hs->v[hs->n];
    ht->row = row;
    ht->sess = sess;
    ht->ntok = ntok;
    ht->tf = NULL;
    uint16_t *c = hs->tf + (size_t)hs->n * nt;
    for (int t = 0; t < q->nt; t++) {
        c[t] = tf[t];
        q->t[t].df_msg += count_df && tf[t] > 0;
    }
    hs->n++;
out:
    return rc;
}

static int on_match(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    return add_hit(arg, row, sess, ntok, tf, 1);
}

/*
 * Term tiers (recall/tier.c, schema 22): on the pruned path, a word of the
 * question with a tier is not walked below tier_state.upto; its tier's
 * rows (its matches in the sessions where it scores best) stand for its
 * matches there. The other words are walked as before, and their matches
 * below upto count the common words too: "(R) AND (R OR C)" matches what
 * R does, and cairn_tf counts C's instances in those rows. Messages above
 * upto (added since the build) are walked with every word.
 */

/* The one token a question's phrase is, if it is one. */
struct tok1 {
    char   t[128];
    size_t n;
    int    count;
};

static int tok1_cb(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    (void)start, (void)end, (void)coloc;
    struct tok1 *o = arg;
    if (++o->count == 1 && n < sizeof o->t) {
        memcpy(o->t, tok, n);
        o->n = n;
    }
    return 0;
}

/* Each query word that is one index token looked up by one batch of
 * statements, not a prepare a word (issue 23, hook51): its term tier
 * (id and df non-NULL: store_tier_terms) or its packed postings
 * (store_post_reads); a word of no single token gets none. */
static int words_read(struct cairn *h, const struct query *q, int64_t *id, int64_t *df,
                      struct post_ent **pe, int *npe)
{
    struct tok1 o[RECALL_MAX_TERMS];
    const char *tok[RECALL_MAX_TERMS];
    size_t tn[RECALL_MAX_TERMS];
    for (int t = 0; t < q->nt; t++) {
        const char *su = q->t[t].surface;
        o[t] = (struct tok1){ .count = 0 };
        tok[t] = NULL;
        tn[t] = 0;
        if (text_tokenize(su, strlen(su), 1, tok1_cb, &o[t]) || o[t].count != 1 || !o[t].n)
            continue;
        tok[t] = o[t].t;
        tn[t] = o[t].n;
    }
    return id ? store_tier_terms(h, tok, tn, q->nt, id, df)
              : store_post_reads(h, tok, tn, q->nt, pe, npe);
}

static int tier_off(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_TIER);
    return !TIER_ON || (v && !strcmp(v, "0"));
}

/* A tier row: one word's count. */
struct tier_arg {
    struct hits *hs;
    int          t;
};

static int on_tier(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    struct tier_arg *ta = arg;
    uint16_t c[RECALL_MAX_TERMS] = { 0 };
    c[ta->t] = tf[0];
    return add_hit(ta->hs, row, sess, ntok, c, 0);
}

/* The hits by row, each row once with the larger count of each term (a
 * row read by the walk and by a tier, or by two tiers). */
static int merge_rows(struct hits *hs)
{
    size_t nt = (size_t)(hs->q->nt ? hs->q->nt : 1);
    for (int i = 0; i < hs->n; i++)
        hs->v[i].score = i;             /* where its counts are */
    qsort(hs->v, (size_t)hs->n, sizeof *hs->v, cmp_hit);
    uint16_t *tf = malloc((size_t)(hs->n ? hs->n : 1) * nt * sizeof *tf);
    if (!tf)
        return CAIRN_NOMEM;
    int k = 0;
    for (int i = 0; i < hs->n; i++) {
        const uint16_t *c = hs->tf + (size_t)hs->v[i].score * nt;
        if (k && hs->v[k - 1].row == hs->v[i].row) {
            uint16_t *d = tf + (size_t)(k - 1) * nt;
            for (size_t t = 0; t < nt; t++)
                d[t] = c[t] > d[t] ? c[t] : d[t];
            continue;
        }
        memcpy(tf + (size_t)k * nt, c, nt * sizeof *tf);
        hs->v[k++] = hs->v[i];
    }
    free(hs->tf);
    hs->tf = tf;
    hs->n = k;
    hs->cap = k;
    return CAIRN_OK;
}

static int tiered_matches(struct cairn *h, struct query *q, const struct store_scope *sc,
                          struct hits *hs, int *used)
{
    struct buf all = BUF_INIT, rare = BUF_INIT;
    int64_t upto = 0, id[RECALL_MAX_TERMS] = { 0 }, df[RECALL_MAX_TERMS] = { 0 };
    int map[3 * RECALL_MAX_TERMS], np = 0, nc = 0, nr = 0, rc = CAIRN_OK;
    *used = 0;
    if (tier_off(h) || sc->project || (rc = store_tier_upto(h, &upto)) || upto <= 0)
        goto out;
    if ((rc = words_read(h, q, id, df, NULL, NULL)))
        goto out;
    /* only the commonest: of two common words the messages with both
     * score best, and they are in neither word's tier; and only when it
     * is at least TIER_SHARE of what the others match (a word without a
     * row had fewer than TIER_DF_MIN), else the walk of the others with
     * its counts costs more than its own walk saves */
    int top = -1;
    double rest = 0;
    for (int t = 0; t < q->nt; t++)
        if (id[t] && (top < 0 || df[t] > df[top]))
            top = t;
    for (int t = 0; t < q->nt; t++) {
        if (t != top) {
            id[t] = 0;
            rest += df[t] ? (double)df[t] : TIER_DF_MIN;
        }
    }
    nc = top >= 0 && (double)df[top] >= TIER_SHARE * rest;
    if (!nc)
        goto out;
    *used = 1;
    /* 1. the tail: every word, every message added since the build */
    query_match_expr(q, &all);
    if (all.err) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    if ((rc = store_term_matches_in(h, sc, all.p, all.n, q->nt, NULL, q->nt, upto, INT64_MAX, 1,
                                    on_match, hs)))
        goto out;
    int64_t tail[RECALL_MAX_TERMS];
    for (int t = 0; t < q->nt; t++)
        tail[t] = q->t[t].df_msg;
    /* 2. below it, the rare words' matches, with the common words' counts */
    buf_addc(&rare, '(');
    for (int pass = 0, first = 1; pass < 3; pass++) {
        if (pass == 1) {
            buf_adds(&rare, ") AND (");
            first = 1;
        }
        for (int t = 0; t < q->nt; t++) {
            if ((pass < 2) != !id[t])     /* passes 0, 1: the rare words; 2: the common */
                continue;
            if (!first)
                buf_adds(&rare, " OR ");
            first = 0;
            query_add_phrase(&rare, q->t[t].surface);
            map[np++] = t;
        }
        nr += pass == 0 ? np : 0;
    }
    buf_addc(&rare, ')');
    if (rare.err) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    if (nr && (rc = store_term_matches_in(h, sc, rare.p, rare.n, np, map, q->nt, INT64_MIN, upto,
                                          1, on_match, hs)))
        goto out;
    /* 3. the tiers' rows; a common word's df: its tier's and the tail's */
    for (int t = 0; t < q->nt; t++) {
        if (!id[t])
            continue;
        struct tier_arg ta = { hs, t };
        if ((rc = store_tier_posts(h, id[t], sc->exclude_session, on_tier, &ta)))
            goto out;
        q->t[t].df_msg = (int)(df[t] + tail[t] < INT_MAX ? df[t] + tail[t] : INT_MAX);
    }
    rc = merge_rows(hs);
out:
    buf_release(&all);
    buf_release(&rare);
    return rc;
}

/*
 * Packed postings (store/post.c, schema 26): a word of the question with
 * blocks that read whole is not walked at or below post_state.upto; its
 * blocks give what the walk would (row, session, count, length), so the
 * matches, their counts and the dfs are the walk's, on both paths:
 *   the other words, walked at or below upto (their counts only);
 *   the packed words' blocks, less the excluded session and the messages
 *     rewritten or deleted since (post_dirty), which are walked again with
 *     the packed words alone;
 *   every word above upto (the tail, as the term tiers' is).
 * Each part comes by row; they are merged by row, a row's counts the
 * larger of each term's (each term is counted by one part only), then the
 * tail follows. recall.packed "0" (CAIRN_RECALL_PACKED=0) walks as before.
 */
static int64_t split_min(const struct cairn *h);

/* The exact merge's matches from which it takes two threads (a thread's
 * start is ~50-100 us, a few thousand rows' merge). */
#define MERGE_TWO_MIN 65536

static int packed_off(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_PACKED);
    return v && !strcmp(v, "0");
}

static int on_part(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    return add_hit(arg, row, sess, ntok, tf, 0);
}

/* One merge source: a sorted list of hits (nt counts each) or of one
 * term's packed matches. */
struct part {
    struct hits     *h;      /* or */
    struct post_ent *e;
    int              t;      /* e's term */
    int              i, n;
};

static int64_t part_row(const struct part *s)
{
    return s->i >= s->n ? INT64_MAX : s->h ? s->h->v[s->i].row : s->e[s->i].row;
}

/* The parts merged by row, each row once with each term's count from the
 * part that counts it (the larger, were there two). The row of each
 * part's next match is kept beside it (head), so a step reads ns rows
 * rather than asking each part twice (a row cost ~140 instructions, ~150,000
 * rows a hook of a common word at a million messages; issue 23, hook29);
 * a part is dropped as it ends. */
#define MERGE_MAX (RECALL_MAX_TERMS + 3)
struct merge {
    struct part p[MERGE_MAX];
    int64_t     head[MERGE_MAX];
    int         ns, want_len;
    size_t      nt;
};

/* The parts with rows, from their first, in their order (which the
 * counts do not depend on but the lengths' choice keeps). */
static void merge_start(struct merge *m, const struct part *src, int ns, size_t nt, int want_len)
{
    m->ns = 0;
    m->nt = nt;
    m->want_len = want_len;
    for (int s = 0; s < ns; s++) {
        if (src[s].n <= 0)
            continue;
        m->p[m->ns] = src[s];
        m->p[m->ns].i = 0;
        m->head[m->ns] = part_row(&m->p[m->ns]);
        m->ns++;
    }
}

/* The next row: its session, length (-1: not read) and nt counts into
 * tf (RECALL_MAX_TERMS of them, the rest 0), the terms whose count is
 * not 0 as bits in *hasp; 0 when every part has ended. */
static inline __attribute__((always_inline)) int
merge_next(struct merge *m, int64_t *rowp, int64_t *sessp, int *ntokp,
           uint16_t tf[static RECALL_MAX_TERMS], uint64_t *hasp)
{
    int ns = m->ns, ntok = -1, any = 0, ended = 0;
    int64_t row = INT64_MAX, sess = 0;
    uint64_t has = 0;
    if (!ns)
        return 0;
    for (int s = 0; s < ns; s++)
        row = m->head[s] < row ? m->head[s] : row;
    /* the first eight counts by one 16-byte store, inline (a question of
     * more words has the rest by a loop): a loop of nt was a memset call
     * a row, ~2 M instructions of a hook at a million messages, and all
     * RECALL_MAX_TERMS by a constant memset ~3 M */
    memset(tf, 0, 8 * sizeof *tf);
    for (size_t t = 8; t < m->nt; t++)
        tf[t] = 0;
    for (int s = 0; s < ns; s++) {
        if (m->head[s] != row)
            continue;
        struct part *p = &m->p[s];
        if (p->h) {
            const uint16_t *c = p->h->tf + (size_t)p->i * m->nt;
            for (size_t t = 0; t < m->nt; t++) {
                tf[t] = c[t] > tf[t] ? c[t] : tf[t];
                has |= (uint64_t)(c[t] != 0) << t;
            }
            if (!any || ntok < 0)
                ntok = p->h->v[p->i].ntok;
            sess = p->h->v[p->i].sess;
        } else {
            const struct post_ent *e = &p->e[p->i];
            tf[p->t] = (uint16_t)(e->tf > tf[p->t] ? e->tf : tf[p->t]);
            has |= (uint64_t)1 << p->t;       /* a packed count is at least 1 */
            if (!any || ntok < 0)
                ntok = m->want_len ? e->ntok : -1;
            sess = e->sess;
        }
        any = 1;
        p->i++;
        m->head[s] = part_row(p);
        ended |= m->head[s] == INT64_MAX;
    }
    for (int s = 0; ended && s < m->ns; s++) {
        if (m->head[s] != INT64_MAX)
            continue;
        memmove(&m->p[s], &m->p[s + 1], (size_t)(m->ns - s - 1) * sizeof *m->p);
        memmove(&m->head[s], &m->head[s + 1], (size_t)(m->ns - s - 1) * sizeof *m->head);
        m->ns--;
        s--;
    }
    *rowp = row;
    *sessp = sess;
    *ntokp = ntok;
    *hasp = has;
    return 1;
}

/* The part whose next row is the lowest (*lop) and the next lowest row
 * of the others (*r2p, INT64_MAX when none); 1 when two parts hold that
 * row (merge_next's step), 0 when one alone does up to *r2p. */
static inline int merge_low(const struct merge *m, int *lop, int64_t *r2p)
{
    int lo = 0;
    int64_t r1 = m->head[0], r2 = INT64_MAX;
    for (int s = 1; s < m->ns; s++) {
        int64_t hd = m->head[s];
        if (hd < r1) {
            r2 = r1;
            r1 = hd;
            lo = s;
        } else if (hd < r2) {
            r2 = hd;
        }
    }
    *lop = lo;
    *r2p = r2;
    return r1 == r2;
}

/* Part lo taken up to its match i: its head moved on, or dropped at its end. */
static inline void merge_moved(struct merge *m, int lo, int i)
{
    int ns = m->ns;
    m->p[lo].i = i;
    if ((m->head[lo] = part_row(&m->p[lo])) == INT64_MAX) {
        memmove(&m->p[lo], &m->p[lo + 1], (size_t)(ns - lo - 1) * sizeof *m->p);
        memmove(&m->head[lo], &m->head[lo + 1], (size_t)(ns - lo - 1) * sizeof *m->head);
        m->ns--;
    }
}

/*
 * The merge's rows, each one's BM25 alone into its session's best: what
 * merge_next and pruner_add_has give row by row, the same doubles, but a
 * row that one part alone holds (most of them: a common word's matches
 * seldom share a message with another word's) is taken from that part
 * directly, in runs up to the next part's head, without the counts'
 * array and the step over every part a row (~135 instructions a row,
 * ~150,000 rows a hook of common words at a million messages; issue 23,
 * hook50). A row that two parts hold takes merge_next's step.
 */
static void merge_score(struct merge *m, struct pruner *pr)
{
    uint16_t one[RECALL_MAX_TERMS] = { 0 };
    while (m->ns) {
        int lo;
        int64_t r2;
        if (merge_low(m, &lo, &r2)) {
            int64_t row, sess;
            int ntok;
            uint16_t tf[RECALL_MAX_TERMS];
            uint64_t has;
            merge_next(m, &row, &sess, &ntok, tf, &has);
            pruner_add_has(pr, sess, ntok, tf, has);
            continue;
        }
        struct part *p = &m->p[lo];
        int i = p->i, n = p->n;
        if (p->e) {
            const struct post_ent *e = p->e;
            int t = p->t;
            uint64_t bit = (uint64_t)1 << t;
            for (; i < n && e[i].row < r2; i++) {
                one[t] = (uint16_t)e[i].tf;         /* a packed count is at least 1 */
                pruner_add_has(pr, e[i].sess, m->want_len ? e[i].ntok : -1, one, bit);
            }
        } else {
            const struct hits *h = p->h;
            size_t nt = m->nt;
            for (; i < n && h->v[i].row < r2; i++) {
                const uint16_t *c = h->tf + (size_t)i * nt;
                uint64_t has = 0;
                for (size_t t = 0; t < nt; t++)
                    has |= (uint64_t)(c[t] != 0) << t;
                pruner_add_has(pr, h->v[i].sess, h->v[i].ntok, c, has);
            }
        }
        merge_moved(m, lo, i);
    }
}

/* Room in hs for n more hits and their counts, in one step. */
static int hits_reserve(struct hits *hs, size_t n)
{
    size_t nt = (size_t)(hs->q->nt ? hs->q->nt : 1), need = (size_t)hs->n + n;
    if (need <= (size_t)hs->cap)
        return CAIRN_OK;
    if (need > INT_MAX / 2)
        return CAIRN_NOMEM;
    uint16_t *ntf = realloc(hs->tf, need * nt * sizeof *ntf);
    if (!ntf)
        return CAIRN_NOMEM;
    hs->tf = ntf;
    struct hit *nv = realloc(hs->v, need * sizeof *nv);
    if (!nv)
        return CAIRN_NOMEM;
    hs->v = nv;
    hs->cap = (int)need;
    return CAIRN_OK;
}

/*
 * Every row of the merge into v[] and its counts into tf[] (nt a row, room
 * for the parts' matches, whose sum bounds the rows), each term's matches
 * added to df[]; returns the rows. What add_hit of each merge_next gives,
 * the same hits in the same order with the same counts, lengths and dfs,
 * but built as merge_score walks: a row that one part alone holds (most:
 * a common word's matches seldom share a message with another's) is
 * copied from that part in a run up to the next part's head, into room
 * sized once, not grown by doubling (~230 instructions a row through
 * merge_next and add_hit, ~250,000 rows an exact recall of common words
 * at a million messages; issue 23, exact51). A row that two parts hold
 * takes merge_next's step.
 */
static int merge_run(struct merge *m, struct hit *v, uint16_t *tfo, int *df)
{
    size_t nt = m->nt;
    int n = 0;
    while (m->ns) {
        int lo;
        int64_t r2;
        if (merge_low(m, &lo, &r2)) {
            /* the row of two parts: merge_next's step, straight into the hit */
            struct hit *ht = &v[n];
            uint16_t tf[RECALL_MAX_TERMS];
            uint64_t has;
            *ht = (struct hit){ .tf = NULL };
            merge_next(m, &ht->row, &ht->sess, &ht->ntok, tf, &has);
            uint16_t *c = tfo + (size_t)n * nt;
            for (size_t t = 0; t < nt; t++) {
                c[t] = tf[t];
                df[t] += tf[t] > 0;
            }
            n++;
            continue;
        }
        struct part *p = &m->p[lo];
        int i = p->i, end = p->i;
        if (p->e) {
            const struct post_ent *e = p->e;
            int t = p->t, want_len = m->want_len;
            while (end < p->n && e[end].row < r2)
                end++;
            for (; i < end; i++, n++) {
                v[n] = (struct hit){ .row = e[i].row, .sess = e[i].sess,
                                     .ntok = want_len ? e[i].ntok : -1 };
                uint16_t *c = tfo + (size_t)n * nt;
                memset(c, 0, nt * sizeof *c);
                c[t] = (uint16_t)e[i].tf;        /* a packed count is at least 1 */
            }
            df[t] += end - p->i;
        } else {
            const struct hits *h = p->h;
            while (end < p->n && h->v[end].row < r2)
                end++;
            for (; i < end; i++, n++) {
                v[n] = (struct hit){ .row = h->v[i].row, .sess = h->v[i].sess,
                                     .ntok = h->v[i].ntok };
                const uint16_t *src = h->tf + (size_t)i * nt;
                uint16_t *c = tfo + (size_t)n * nt;
                for (size_t t = 0; t < nt; t++) {
                    c[t] = src[t];
                    df[t] += src[t] > 0;
                }
            }
        }
        merge_moved(m, lo, end);
    }
    return n;
}

/* The merge's rows appended to hs (count_df: its dfs added to the
 * question's). */
static int merge_into(struct merge *m, struct hits *hs, int count_df)
{
    struct query *q = hs->q;
    size_t nt = m->nt, total = 0;
    int rc = CAIRN_OK;
    int df[RECALL_MAX_TERMS] = { 0 };
    for (int s = 0; s < m->ns; s++)
        total += (size_t)(m->p[s].n - m->p[s].i);
    /* merge_start's nt is q's (add_hit's stride), at least 1 */
    if ((rc = hits_reserve(hs, total)))
        return rc;
    hs->n += merge_run(m, hs->v + hs->n, hs->tf + (size_t)hs->n * nt, df);
    for (size_t t = 0; count_df && t < nt; t++)
        q->t[t].df_msg += df[t];
    return rc;
}

/* One half of a merge split by row, and the thread that merges it. */
struct merge_half {
    struct merge m;
    struct hits  view[MERGE_MAX];   /* the hits parts' halves */
    struct hit  *v;
    uint16_t    *tf;
    int          n, df[RECALL_MAX_TERMS];
};

static void *merge_half_run(void *arg)
{
    struct merge_half *w = arg;
    w->n = merge_run(&w->m, w->v, w->tf, w->df);
    return NULL;
}

/* The first of n int64 keys at base, stride bytes apart (ascending),
 * at or after key, or n. */
static int first_at(const int64_t *base, size_t stride, int n, int64_t key)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (*(const int64_t *)((const char *)base + (size_t)mid * stride) < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Part s's first match at or after row (its rows ascend). */
static int part_from(const struct part *s, int64_t row)
{
    if (s->n <= 0)
        return 0;
    return s->h ? first_at(&s->h->v[0].row, sizeof *s->h->v, s->n, row)
                : first_at(&s->e[0].row, sizeof *s->e, s->n, row);
}

/* A half of src[ns]: each part's matches [from[s], to[s]) as a part of
 * its own (a hits part through a view of its own), merged from the start. */
static void merge_half_start(struct merge_half *w, const struct part *src, int ns,
                             const int *from, const int *to, size_t nt, int want_len)
{
    struct part half[MERGE_MAX];
    for (int s = 0; s < ns; s++) {
        half[s] = src[s];
        half[s].i = 0;
        half[s].n = to[s] - from[s];
        if (half[s].n <= 0)
            continue;                   /* (merge_start skips it) */
        if (src[s].h) {
            const struct hits *h = src[s].h;
            w->view[s] = (struct hits){ h->v + from[s], half[s].n, half[s].n,
                                        h->tf + (size_t)from[s] * nt, h->q };
            half[s].h = &w->view[s];
        } else {
            half[s].e = src[s].e + from[s];
        }
    }
    merge_start(&w->m, half, ns, nt, want_len);
}

/*
 * merge_into of src[ns] (merge_start's parts, from their first) on two
 * threads when they hold at least min matches: split at a row, the
 * middle one of the largest part, the rows below it merged here and
 * the rest on a thread of their own, straight into hs after the first
 * half's room (the sum of its parts' matches), moved down when rows two
 * parts held left some of that room empty. Every part is cut at the same
 * row, so each row's matches are all in one half, in the parts' order:
 * the same hits, counts and dfs as the one merge's (issue 23, par52: the
 * merge, ~37 M instructions at a million messages, was the recall's
 * thread's alone while the other was idle).
 */
static int merge_into_two(const struct part *src, int ns, size_t nt, int want_len,
                          struct hits *hs, int64_t min)
{
    struct merge m;
    size_t total = 0;
    int big = 0;
    for (int s = 0; s < ns; s++) {
        total += (size_t)src[s].n;
        big = src[s].n > src[big].n ? s : big;
    }
    pthread_t th;
    int from[MERGE_MAX], mid[MERGE_MAX], to[MERGE_MAX];
    struct merge_half *w = NULL;
    if ((int64_t)total < min || total < 2 || !(w = malloc(2 * sizeof *w))) {
        merge_start(&m, src, ns, nt, want_len);
        return merge_into(&m, hs, 1);
    }
    const struct part *b = &src[big];
    int64_t row = b->h ? b->h->v[b->n / 2].row : b->e[b->n / 2].row;
    size_t room = 0;
    for (int s = 0; s < ns; s++) {
        from[s] = 0;
        to[s] = src[s].n;
        mid[s] = part_from(&src[s], row);
        room += (size_t)mid[s];
    }
    int rc = hits_reserve(hs, total);
    if (rc) {
        free(w);
        return rc;
    }
    merge_half_start(&w[0], src, ns, from, mid, nt, want_len);
    merge_half_start(&w[1], src, ns, mid, to, nt, want_len);
    w[0].v = hs->v + hs->n;
    w[0].tf = hs->tf + (size_t)hs->n * nt;
    w[1].v = w[0].v + room;
    w[1].tf = w[0].tf + room * nt;
    memset(w[0].df, 0, sizeof w[0].df);
    memset(w[1].df, 0, sizeof w[1].df);
    int two = !pthread_create(&th, NULL, merge_half_run, &w[1]);
    merge_half_run(&w[0]);
    if (two)
        pthread_join(th, NULL);
    else
        merge_half_run(&w[1]);
    if ((size_t)w[0].n < room && w[1].n) {
        memmove(w[0].v + w[0].n, w[1].v, (size_t)w[1].n * sizeof *w[1].v);
        memmove(w[0].tf + (size_t)w[0].n * nt, w[1].tf, (size_t)w[1].n * nt * sizeof *w[1].tf);
    }
    hs->n += w[0].n + w[1].n;
    for (size_t t = 0; t < nt; t++)
        hs->q->t[t].df_msg += w[0].df[t] + w[1].df[t];
    free(w);
    return CAIRN_OK;
}

/* A walk over rows (lo, hi] of the terms listed in map (np of them; all
 * when map is NULL). */
static int walk_part(struct cairn *h, struct query *q, const struct store_scope *sc,
                     const int *map, int np, int64_t lo, int64_t hi, int want_len,
                     store_match_fn fn, void *arg)
{
    struct buf e = BUF_INIT;
    int rc = CAIRN_OK;
    for (int i = 0; i < np; i++) {
        if (i)
            buf_adds(&e, " OR ");
        query_add_phrase(&e, q->t[map ? map[i] : i].surface);
    }
    if (e.err)
        rc = CAIRN_NOMEM;
    else if (np)
        rc = store_term_matches_in(h, sc, e.p, e.n, np, map, q->nt, lo, hi, want_len, fn, arg);
    buf_release(&e);
    return rc;
}

static int cmp_dirty(const void *a, const void *b)
{
    return cmp_i64(a, b);
}

/* A part's matches of the sessions kept (keep) or not excluded (excl,
 * dirty: the matches the walk would not give), in place. */
static void part_filter(struct part *s, const struct pruner *keep, int64_t excl,
                        const int64_t *dirty, int nd, size_t nt)
{
    int k = 0;
    if (keep && !s->h) {
        /* a packed word's matches to the kept sessions: the bulk of the
         * rows a hook filters, so a loop of its own (one slot test a
         * match, not the three cases' tests: 4.0 -> 1.9 M instructions
         * at a million messages) */
        for (int i = 0; i < s->n; i++)
            if (pruner_keeps(keep, s->e[i].sess))
                s->e[k++] = s->e[i];
        s->n = k;
        return;
    }
    for (int i = 0; i < s->n; i++) {
        int64_t sess = s->h ? s->h->v[i].sess : s->e[i].sess;
        if (keep && !pruner_keeps(keep, sess))
            continue;
        if (!keep && ((excl && sess == excl) ||
                      (nd && bsearch(&s->e[i].row, dirty, (size_t)nd, sizeof *dirty, cmp_dirty))))
            continue;
        if (s->h) {
            s->h->v[k] = s->h->v[i];
            for (size_t t = 0; t < nt; t++)       /* k <= i: in place */
                s->h->tf[(size_t)k * nt + t] = s->h->tf[(size_t)i * nt + t];
        } else {
            s->e[k] = s->e[i];
        }
        k++;
    }
    s->n = k;
    if (s->h)
        s->h->n = k;
}

/*
 * The pruned path's merge (gather's prune, fused; issue 23, hook29): each
 * term's df is what the merge would count (each term is counted by one
 * part a row: the packed words by their blocks and the dirty messages'
 * walk, the others by theirs, every word above upto by the tail), so the
 * IDF is known first; the merge then only scores each row into its
 * session's best, and the kept sessions' matches, filtered part by part,
 * are merged again into hs, a few thousand rows instead of every match
 * held in an array and walked twice more. The same values as prune()
 * over the merged hits: the same BM25 of the same counts and lengths,
 * the same selection, the left-out counts the df less the kept.
 */
static int merge_pruned(struct cairn *h, struct query *q, struct pool *p, struct part *src, int ns,
                        struct hits *hs)
{
    struct pruner pr = { 0 };
    struct sess_src ss[MERGE_MAX];
    struct merge m;
    int64_t df[RECALL_MAX_TERMS] = { 0 }, total = 0;
    int on = 0, walk = 0, rc = CAIRN_OK;
    size_t nt = (size_t)q->nt;

    for (int s = 0; s < ns; s++) {
        const struct part *x = &src[s];
        for (int i = 0; x->h && i < x->n; i++)
            for (size_t t = 0; t < nt; t++)
                df[t] += x->h->tf[(size_t)i * nt + t] > 0;
        if (x->e)
            df[x->t] += x->n;             /* a packed count is at least 1 */
        ss[s] = (struct sess_src){ NULL, 0, 0 };
        if (x->n > 0)
            ss[s] = x->h ? (struct sess_src){ (const char *)&x->h->v[0].sess, sizeof *x->h->v, x->n }
                         : (struct sess_src){ (const char *)&x->e[0].sess, sizeof *x->e, x->n };
        total += x->n;
    }
    if (!total)
        goto out;
    for (size_t t = 0; t < nt; t++)
        q->t[t].df_msg += (int)(df[t] < INT_MAX ? df[t] : INT_MAX);
    if ((rc = pruner_init(&pr, p, q, ss, ns)))
        goto out;
    merge_start(&m, src, ns, nt, 1);
    merge_score(&m, &pr);
    if ((rc = pruner_select(h, &pr, p, NULL, &walk, &on)))
        goto out;
    for (int s = 0; on && s < ns; s++)
        part_filter(&src[s], &pr, 0, NULL, 0, nt);
    merge_start(&m, src, ns, nt, 1);
    if ((rc = merge_into(&m, hs, 0)) || !on)
        goto out;
    for (size_t t = 0; t < nt; t++) {
        int64_t kept = 0;
        for (int i = 0; i < hs->n; i++)
            kept += hs->tf[(size_t)i * nt + t] > 0;
        p->pruned_df[t] = (int)(df[t] - kept);
    }
out:
    pruner_free(&pr);
    return rc;
}

/* p: the pruned path's pool (the matches pruned here, p->pruned says
 * whether any were left out), else NULL. */
static int packed_matches(struct cairn *h, struct query *q, const struct store_scope *sc,
                          int want_len, struct pool *p, struct hits *hs, int *used)
{
    struct post_ent *pe[RECALL_MAX_TERMS] = { NULL };
    int npe[RECALL_MAX_TERMS] = { 0 }, rare[RECALL_MAX_TERMS], packed[RECALL_MAX_TERMS];
    int nrare = 0, npk = 0, nd = 0, rc = CAIRN_OK;
    int64_t upto = 0, excl = 0, *dirty = NULL;
    struct hits walked = { NULL, 0, 0, NULL, q }, redo = { NULL, 0, 0, NULL, q };
    struct hits tail = { NULL, 0, 0, NULL, q };
    *used = 0;
    if (packed_off(h) || h->pg || sc->project || q->nt < 1 ||
        (rc = store_post_state(h, &upto, &dirty, &nd)) || upto <= 0 || (nd && !dirty))
        goto out;
    if ((rc = words_read(h, q, NULL, NULL, pe, npe)))
        goto out;
    for (int t = 0; t < q->nt; t++) {
        if (pe[t])
            packed[npk++] = t;
        else
            rare[nrare++] = t;
    }
    if (!npk || (rc = store_session_row(h, sc->exclude_session, &excl)))
        goto out;
    *used = 1;
    /* the other words, and the dirty messages' packed words */
    if ((rc = walk_part(h, q, sc, rare, nrare, INT64_MIN, upto, want_len, on_part, &walked)))
        goto out;
    for (int i = 0; i < nd; i++) {
        int j = i;                    /* a run of consecutive ids: one walk */
        while (j + 1 < nd && dirty[j + 1] == dirty[j] + 1)
            j++;
        if ((rc = walk_part(h, q, sc, packed, npk, dirty[i] - 1, dirty[j], want_len, on_part,
                            &redo)))
            goto out;
        i = j;
    }
    /* every word above upto (the tail): after the rest by row */
    if ((rc = walk_part(h, q, sc, NULL, q->nt, upto, INT64_MAX, want_len, on_part, &tail)))
        goto out;
    /* the merge: ~nt + 3 sources; the excluded session's and the dirty
     * messages' packed matches are not the walk's */
    struct part src[MERGE_MAX];
    int ns = 0;
    src[ns++] = (struct part){ &walked, NULL, 0, 0, walked.n };
    src[ns++] = (struct part){ &redo, NULL, 0, 0, redo.n };
    for (int k = 0; k < npk; k++) {
        src[ns] = (struct part){ NULL, pe[packed[k]], packed[k], 0, npe[packed[k]] };
        if (excl || nd)
            part_filter(&src[ns], NULL, excl, dirty, nd, 0);
        ns++;
    }
    src[ns++] = (struct part){ &tail, NULL, 0, 0, tail.n };
    if (p) {
        rc = merge_pruned(h, q, p, src, ns, hs);
    } else {
        /* (from MERGE_TWO_MIN matches, fewer when recall.split_msgs
         * says so; recall.threads "1": one thread) */
        int64_t min = split_min(h);
        rc = merge_into_two(src, ns, (size_t)q->nt, want_len, hs,
                            min < MERGE_TWO_MIN ? min : MERGE_TWO_MIN);
    }
out:
    for (int t = 0; t < RECALL_MAX_TERMS; t++)
        free(pe[t]);
    free(dirty);
    free(walked.v);
    free(walked.tf);
    free(redo.v);
    free(redo.tf);
    free(tail.v);
    free(tail.tf);
    return rc;
}

/* A session's four strings into rs, in one block: the exact recall of a
 * common word loads nearly every session of the store (50,000 at a
 * million messages), and four allocations and frees each were ~3% of it */
static int sess_strings(struct rsession *rs, const struct store_session_row *r)
{
    const char *src[4] = { r->ext_id, r->source, r->project, r->title };
    char **dst[4] = { &rs->ext_id, &rs->source, &rs->project, &rs->title };
    size_t len[4], all = 0;
    for (int k = 0; k < 4; k++) {
        len[k] = src[k] ? strlen(src[k]) + 1 : 0;
        all += len[k];
    }
    rs->strs = malloc(all ? all : 1);
    for (size_t k = 0, at = 0; rs->strs && k < 4; at += len[k], k++) {
        if (src[k]) {
            memcpy(rs->strs + at, src[k], len[k]);
            *dst[k] = rs->strs + at;
        }
    }
    return !rs->strs || !rs->ext_id ? CAIRN_NOMEM : CAIRN_OK;
}

static int on_session(void *arg, const struct store_session_row *r)
{
    struct pool *p = arg;
    int rc = CAIRN_OK;
    GROW(p->s, p->ns, p->cs);
    struct rsession *rs = &p->s[p->ns];
    memset(rs, 0, sizeof *rs);
    rs->row = r->row;
    rc = sess_strings(rs, r);
    rs->started_at = r->started_at;
    rs->dialog = 1;
    p->ns++;
out:
    return rc;
}

/* Messages onto their sessions, with the matches' counts. */
struct msg_load {
    struct pool *p;
    struct hit  *hits;    /* by session, then row */
    int          nh;
    int          si;      /* the session being filled */
    int          hlo, hhi;  /* its hits: hits[hlo..hhi) */
    int          cur;     /* its first hit not below last_row */
    int64_t      last_row;  /* the row of its message before */
    /* a half of a pool loaded in two (load_split): where its sessions and
     * turns will sit in the whole pool, and whether p->m is its share of
     * the pool's one array (grown: copied to an array of its own) */
    int          sess_base, msg_base, borrowed;
};

/* A half's share of the pool's array is full (turns added since it was
 * sized): its turns go on in an array of their own, never a realloc of
 * the share (the other half's turns follow it). */
static int unborrow(struct msg_load *ml)
{
    struct pool *p = ml->p;
    int nc = p->cm ? p->cm * 2 : 64;
    struct rmsg *m = malloc((size_t)nc * sizeof *m);
    if (!m)
        return CAIRN_NOMEM;
    if (p->nm)
        memcpy(m, p->m, (size_t)p->nm * sizeof *m);
    p->m = m;
    p->cm = nc;
    ml->borrowed = 0;
    return CAIRN_OK;
}

/* half: a half of a split load (its offsets and its share of the array
 * read); a constant in each caller, so the one-thread load is compiled
 * without them (a test and two adds a turn were ~0.5 M instructions of
 * a recall at 100,000 messages) */
static inline __attribute__((always_inline)) int
msg_add(struct msg_load *ml, const struct store_msg_row *r, const int half)
{
    struct pool *p = ml->p;
    int rc = CAIRN_OK;
    if (ml->si < 0 || p->s[ml->si].row != r->sess) {
        ml->si++;
        while (ml->si < p->ns && p->s[ml->si].row != r->sess)
            ml->si++;
        if (ml->si >= p->ns)
            return -1;                 /* cannot happen: both ordered by session */
        p->s[ml->si].first_msg = (half ? ml->msg_base : 0) + p->nm;
        /* sessions come in order, as the hits: the next run is its own */
        int c = ml->hhi;
        while (c < ml->nh && ml->hits[c].sess < r->sess)
            c++;
        ml->hlo = c;
        while (c < ml->nh && ml->hits[c].sess == r->sess)
            c++;
        ml->hhi = c;
        ml->cur = ml->hlo;
        ml->last_row = INT64_MIN;
    }
    int si = ml->si;
    if (half && p->nm == p->cm && ml->borrowed && unborrow(ml))
        return CAIRN_NOMEM;
    GROW(p->m, p->nm, p->cm);
    struct rmsg *m = &p->m[p->nm];
    /* one initialiser, not a memset call and the fields after: the
     * compiler writes the 96 bytes once, inline (a turn of every session
     * with a match goes through here: ~916,000 at a million messages) */
    *m = (struct rmsg){
        .row = r->row,
        .sess = (half ? ml->sess_base : 0) + si,
        .position = r->position,
        .role = r->user ? ROLE_USER : ROLE_ASSISTANT,
        .at = r->at == CAIRN_NO_TIME ? p->s[si].started_at : r->at,
        .ntok = r->ntok,
        .bytes = -1,
    };
    p->nm++;
    if (r->speaker && !(m->speaker = strdup(r->speaker)))
        return CAIRN_NOMEM;
    p->s[si].n_msgs++;
    if (m->role == ROLE_ASSISTANT)
        p->s[si].dialog = 0;
    /* the session's hits are sorted by row id; messages come by
     * position, which row ids follow when the session was added in one
     * go: while they rise, a cursor walks the hits (those it passes have
     * rows no later message asks for), and a row below the one before
     * is searched for */
    struct hit *hh = NULL;
    if (m->row > ml->last_row) {
        while (ml->cur < ml->hhi && ml->hits[ml->cur].row < m->row)
            ml->cur++;
        if (ml->cur < ml->hhi && ml->hits[ml->cur].row == m->row)
            hh = &ml->hits[ml->cur];
    } else if (ml->hhi > ml->hlo) {
        struct hit key = { .row = m->row };
        hh = bsearch(&key, ml->hits + ml->hlo, (size_t)(ml->hhi - ml->hlo), sizeof *ml->hits,
                     cmp_hit);
    }
    ml->last_row = m->row;
    if (hh) {
        m->tf = hh->tf;
        hh->tf = NULL;
    }
out:
    return rc;
}

static int on_message(void *arg, const struct store_msg_row *r)
{
    return msg_add(arg, r, 0);
}

static int on_message_half(void *arg, const struct store_msg_row *r)
{
    return msg_add(arg, r, 1);
}

/*
 * The pool's load on two threads (issue 23, exact36). The exact recall of
 * a common word at a million messages loads ~40,000 sessions and ~900,000
 * turns: the sessions' rows and the turns' packed rows read and put in
 * the pool were ~320 M of its ~980 M instructions, all on one core. From
 * GATHER_SPLIT_MSGS turns (recall.split_msgs) the sessions are split in
 * two halves by count: the first is loaded here on h, the second on a
 * thread of its own through a read-only handle of the same store (each
 * SQLite connection used by one thread), into its own pool of sessions
 * and its share of one array of turns, sized for both halves from
 * store_sessions_size. The halves are then joined in pool order: the
 * second's sessions after the first's, its turns after the first's in
 * the same array, so the pool is the one-thread pool, value for value.
 * The second half writes its turns' session index and its sessions'
 * first turn as if the first half held every session listed and every
 * turn sized (true unless the store changed between the reads: then
 * they are moved, and a share that overflowed is copied together).
 * The two reads are separate statements, as the one-thread path's are
 * (each sees the store as committed when it runs). recall.threads "1"
 * loads on one thread; a store another handle cannot read the same
 * (store_split_ok) or a reader that does not open loads both halves here.
 */
#define GATHER_SPLIT_MSGS 200000

static int64_t split_min(const struct cairn *h)
{
    const char *t = cairn__setting(h, CAIRN__SET_RECALL_THREADS);
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_SPLIT_MSGS);
    if (t && !strcmp(t, "1"))
        return INT64_MAX;
    return v && *v ? strtoll(v, NULL, 10) : GATHER_SPLIT_MSGS;
}

/* The second half, and the thread that loads it. */
struct half {
    struct cairn  *h;        /* the recall's handle (opens the reader) */
    struct cairn  *r;        /* the reader; NULL: loaded on h */
    const int64_t *sess;
    int            n;
    struct pool    p;        /* its sessions, and its turns (p.m: its share) */
    struct msg_load ml;
    int            rc;
};

static int half_load(struct half *w, struct cairn *on)
{
    int rc;
    os_populate(w->p.m, (size_t)w->p.cm * sizeof *w->p.m);
    if ((rc = store_sessions_meta(on, w->sess, w->n, on_session, &w->p)))
        return rc;
    rc = store_messages_meta(on, w->sess, w->n, on_message_half, &w->ml);
    return rc == -1 ? CAIRN_OK : rc;        /* stopped early: nothing is wrong */
}

/* A second thread's read-only handle on h's store, or NULL when none
 * opens (then the first thread does that thread's share itself). */
static struct cairn *reader_open(struct cairn *h)
{
    struct cairn *r = NULL;
    if (h->open_reader(h, &r)) {
        if (r)
            h->close_reader(r);
        return NULL;
    }
    return r;
}

/* The second thread: the half on a reader of its own, or nothing when
 * none opens (then the first thread loads it on h, after its own). */
static void *half_run(void *arg)
{
    struct half *w = arg;
    if (!(w->r = reader_open(w->h)))
        return NULL;
    w->rc = half_load(w, w->r);
    return NULL;
}

/* What is left of the second half when it is not joined: its strings
 * and an array of its own. */
static void half_free(struct half *w)
{
    for (int i = 0; i < w->p.ns; i++)
        free(w->p.s[i].strs);
    for (int i = 0; i < w->p.nm; i++)
        free(w->p.m[i].speaker);
    if (!w->ml.borrowed)
        free(w->p.m);
    free(w->p.s);
}

/* The second half after the first (p, whose turns began at base; n1 and
 * mid: what the second half took the first to hold). */
static int halves_join(struct pool *p, struct rmsg *base, int n1, int mid, int borrowed1,
                       struct half *w)
{
    int ns1 = p->ns, nm1 = p->nm, nm2 = w->p.nm;
    /* p->s was sized for every listed session: the first half's at most
     * mid, the second's at most the rest */
    if (w->p.ns)
        memcpy(p->s + ns1, w->p.s, (size_t)w->p.ns * sizeof *p->s);
    for (int i = ns1; i < ns1 + w->p.ns; i++)
        p->s[i].first_msg += nm1 - n1;
    p->ns += w->p.ns;
    free(w->p.s);
    w->p.s = NULL;
    w->p.ns = 0;
    for (int i = 0; ns1 != mid && i < nm2; i++)
        w->p.m[i].sess += ns1 - mid;
    if (borrowed1 && w->ml.borrowed && nm1 == n1) {
        p->m = base;                  /* the halves already in place */
        p->nm = nm1 + nm2;
        p->cm = n1 + w->p.cm;
        return CAIRN_OK;
    }
    struct rmsg *m = malloc((size_t)(nm1 + nm2 ? nm1 + nm2 : 1) * sizeof *m);
    if (!m) {
        half_free(w);
        if (!borrowed1)
            free(base);
        return CAIRN_NOMEM;
    }
    if (nm1)
        memcpy(m, p->m, (size_t)nm1 * sizeof *m);
    if (nm2)
        memcpy(m + nm1, w->p.m, (size_t)nm2 * sizeof *m);
    if (!borrowed1)
        free(p->m);
    if (!w->ml.borrowed)
        free(w->p.m);
    free(base);
    p->m = m;
    p->nm = p->cm = nm1 + nm2;
    return CAIRN_OK;
}

/* Sessions sess[n] and their turns into p, in two halves (hits[nh]: by
 * session then row; n_msgs: the sessions' turns). */
static int load_split(struct cairn *h, struct pool *p, const int64_t *sess, int n,
                      struct hit *hits, int nh, int64_t n_msgs)
{
    int mid = n / 2, h1 = 0, started = 0, rc;
    int64_t n1 = 0, u1 = 0;
    struct half w;
    pthread_t th;

    memset(&w, 0, sizeof w);
    if ((rc = store_sessions_size(h, sess, mid, &n1, &u1)))
        return rc;
    if (n1 > n_msgs)                  /* (a change between the two counts) */
        n1 = n_msgs;
    while (h1 < nh && hits[h1].sess < sess[mid])
        h1++;
    struct rmsg *base = os_alloc_big((size_t)n_msgs * sizeof *base);
    p->s = malloc((size_t)n * sizeof *p->s);
    if (!base || !p->s) {
        free(base);
        return CAIRN_NOMEM;
    }
    p->cs = n;
    p->m = base;
    p->cm = (int)n1;
    w.h = h;
    w.sess = sess + mid;
    w.n = n - mid;
    w.p.m = base + n1;
    w.p.cm = (int)(n_msgs - n1);
    w.ml = (struct msg_load){ &w.p, hits + h1, nh - h1, -1, 0, 0, 0, INT64_MIN,
                              mid, (int)n1, 1 };
    if (store_split_ok(h) && !pthread_create(&th, NULL, half_run, &w))
        started = 1;
    struct msg_load ml = { p, hits, h1, -1, 0, 0, 0, INT64_MIN, 0, 0, 1 };
    os_populate(base, (size_t)n1 * sizeof *base);
    rc = store_sessions_meta(h, sess, mid, on_session, p);
    if (!rc && (rc = store_messages_meta(h, sess, mid, on_message_half, &ml)) == -1)
        rc = CAIRN_OK;
    int loaded = 0;
    if (started) {
        pthread_join(th, NULL);
        loaded = w.r != NULL;
        p->split = loaded;
        /* the reader's message onto h, as the one thread's read gives it
         * (NOMEM has none: gather's end writes it) */
        if (!rc && w.rc)
            rc = w.rc == CAIRN_NOMEM ? w.rc : cairn__err(h, w.rc, "%s", cairn_errmsg(w.r));
        if (w.r)
            h->close_reader(w.r);
    }
    if (!rc && !loaded)               /* no thread, or no reader */
        rc = half_load(&w, h);
    int jrc = halves_join(p, base, (int)n1, mid, ml.borrowed, &w);
    return rc ? rc : jrc;
}

/*
 * Gathering over unit rows (issue 23, the setting recall.units; docs/
 * ARCHITECTURE.md, "Ranking a big pool without its turns"). The exact
 * recall of a common word at a million messages loaded ~900,000 turns of
 * ~40,000 sessions (the sessions' rows ~115 M instructions, their turns
 * ~305 M) to rank units, most of which hold no word of the question. For
 * a keyword-only pool the rows of session_units (store/units.h) hold what
 * the ranking reads of a unit, and the matches the rest: the pool's
 * sessions and units are built from the rows (the same indices as the
 * loaded pool's: a session's turns where they would sit, a unit's first,
 * last and head turn), the matches are mapped to their units, and a
 * session's turns and strings are read only when packing first needs
 * them (pool_load). Every case the rows cannot answer is gathered as
 * before, whole: a session without a valid row whose ids rise with
 * position, a dialog (speakers are in the turns), dense hits, a period
 * (its sessions and the events' turns), the whole scope (all_mode), a
 * pasted transcript's labels, a relative cut, the pruned path, the raw
 * baseline. The reply lane ranks the matches that are replies (pack.c,
 * pack_replies_by_score) and reads a reply's session when it tries it.
 */
static int units_setting(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_UNITS);
    return !v || strcmp(v, "0");            /* on unless "0" */
}

/* Whether the question and options leave the pool to the rows (the
 * store's and the matches' part is decided as they are read). */
static int units_may(struct cairn *h, const struct query *q, const struct cairn_recall_opts *o,
                     const struct pool *p, int may_prune)
{
    if (!units_setting(h) || !store_units_ok(h) || may_prune || p->all_mode || q->nt < 1 ||
        o->method == CAIRN_METHOD_RAW_BM25 || q->has_range || q->vague ||
        o->min_rel_score > 0 || (ENT_W_UA > 0 && o->budget >= ENT_MIN))
        return 0;
    for (int t = 0; t < q->nt; t++)
        if (q->t[t].label)
            return 0;
    return 1;
}

/* The rows' read: each session's units appended, its slots placed. A row
 * that cannot be ranked from stops it (not a CAIRN_* code). */
#define ROWS_UNUSED (-100)
struct urows {
    struct pool       *p;
    struct store_unit *us;
    int                nu, cu;
    int               *ufirst;      /* ns + 1 */
    int64_t            nm;
    int                filled;      /* us[0..filled) paged in */
};

/* Units paged in ahead of the rows' read, so many at a time: us is sized
 * for the scope's turns, more than the rows fill, and a fresh 4 KB page
 * is a trap into the kernel each, dear on a paravirtualised host (the
 * recall at 100,000 messages took ~1,000 more of them than the loaded
 * pool's, whose arrays are faulted in by one call: os_alloc_filled). */
#define UNITS_FILL_AHEAD 16384

/* ROWS_UNUSED (not an error: the pool is gathered whole) for a row the
 * path cannot rank from. */
static int on_units_row(void *arg, const struct store_units_row *r)
{
    struct urows *ur = arg;
    struct pool *p = ur->p;
    struct units_cur c;
    int nu = 0, flags = 0, rc = CAIRN_OK;
    if (!r->units || store_units_open(&c, r->units, r->len, &nu, &flags) ||
        !(flags & STORE_UNITS_IDS_RISE) || (flags & STORE_UNITS_DIALOG) || nu <= 0 ||
        r->n < nu || r->n > INT_MAX / 4 || ur->nm + r->n > INT_MAX / 4 || nu > INT_MAX / 4 - ur->nu)
        return ROWS_UNUSED;
    if (ur->nu + nu > ur->cu) {
        /* (sized for the scope's turns first: a store changed since its
         * totals were read grows it) */
        int nc = ur->cu ? ur->cu : 1024;
        while (nc < ur->nu + nu)
            nc *= 2;
        struct store_unit *nus = realloc(ur->us, (size_t)nc * sizeof *nus);
        if (!nus)
            return CAIRN_NOMEM;
        ur->us = nus;
        ur->cu = nc;
        ur->filled = ur->nu;            /* (a new block: its own pages) */
    }
    if (ur->nu + nu > ur->filled) {
        int to = ur->nu + nu + UNITS_FILL_AHEAD < ur->cu ? ur->nu + nu + UNITS_FILL_AHEAD : ur->cu;
        os_populate(ur->us + ur->filled, (size_t)(to - ur->filled) * sizeof *ur->us);
        ur->filled = to;
    }
    struct store_unit *u = ur->us + ur->nu;
    if ((int)store_units_read(&c, u, (size_t)nu) != nu)
        return ROWS_UNUSED;
    int64_t turns = 0;
    for (int k = 0; k < nu; k++) {
        if (u[k].n_turns < 1)
            return ROWS_UNUSED;
        turns += u[k].n_turns;
    }
    if (turns != r->n)
        return ROWS_UNUSED;
    GROW(p->s, p->ns, p->cs);
    struct rsession *rs = &p->s[p->ns];
    memset(rs, 0, sizeof *rs);
    rs->row = r->sess;
    rs->started_at = r->started_at;
    rs->first_msg = (int)ur->nm;
    rs->n_msgs = (int)r->n;
    ur->ufirst[p->ns++] = ur->nu;
    ur->nu += nu;
    ur->nm += r->n;
out:
    return rc;
}

/* The rows of sessions sess[n] into ur (its pool's sessions sized for n,
 * ufirst for n + 1): a unit a turn at most, so sized for the scope's
 * turns first (a big array's pages faulted in as huge pages where the
 * kernel allows: a page fault a 4 KB page was ~6,000 of them at a million
 * messages); cap: the sessions the pool will hold. ROWS_UNUSED: a row
 * the path cannot rank from. */
static int urows_read(struct cairn *h, struct urows *ur, const int64_t *sess, int n, int cap,
                      int64_t total)
{
    if (!(ur->ufirst = malloc(((size_t)cap + 1) * sizeof *ur->ufirst)) ||
        !(ur->p->s = os_alloc_filled((size_t)(cap ? cap : 1) * sizeof *ur->p->s)))
        return CAIRN_NOMEM;
    ur->p->cs = cap;
    if (total > 0 && total < INT_MAX / 4) {
        if (!(ur->us = os_alloc_big((size_t)total * sizeof *ur->us)))
            return CAIRN_NOMEM;
        ur->cu = (int)total;
    }
    int rc = n ? store_units_rows(h, sess, n, STORE_UNITS_RULE, on_units_row, ur) : CAIRN_OK;
    if (!rc && ur->p->ns != n)
        rc = ROWS_UNUSED;           /* a session gone */
    return rc;
}

/* The second half of a big pool's rows, read on a thread of its own
 * through a read-only handle (load_split's way: ~110 M instructions of
 * SQLite's steps and the rows' decoding at a million messages, which
 * were the recall's thread's alone). */
struct urows_half {
    struct cairn  *h, *r;
    const int64_t *sess;
    int            n, rc;
    int64_t        total;
    struct pool    p;               /* its sessions */
    struct urows   ur;
};

static void *urows_run(void *arg)
{
    struct urows_half *w = arg;
    if (!(w->r = reader_open(w->h)))
        return NULL;
    w->rc = urows_read(w->r, &w->ur, w->sess, w->n, w->n, w->total);
    return NULL;
}

/* The second half (w) after the first (ur): its sessions' turns and units
 * offset by the first's. ROWS_UNUSED when they do not fit (cannot happen:
 * each half holds what it read). */
static int urows_join(struct urows *ur, struct urows_half *w, int n)
{
    struct pool *p = ur->p;
    int ns1 = p->ns, n2 = w->p.ns;
    if (ns1 + n2 > n)
        return ROWS_UNUSED;
    if (ur->nu + w->ur.nu > ur->cu) {
        struct store_unit *nus = realloc(ur->us, ((size_t)ur->nu + (size_t)w->ur.nu + 1) *
                                                 sizeof *nus);
        if (!nus)
            return CAIRN_NOMEM;
        ur->us = nus;
        ur->cu = ur->nu + w->ur.nu + 1;
    }
    /* (its units are copied by units_part, on the thread that indexes
     * them: the copy was ~12 MB and its fresh pages, the recall's
     * thread's alone; issue 23, par52) */
    for (int i = 0; i < n2; i++) {
        p->s[ns1 + i] = w->p.s[i];
        p->s[ns1 + i].first_msg += (int)ur->nm;
        ur->ufirst[ns1 + i] = w->ur.ufirst[i] + ur->nu;
    }
    p->ns += n2;
    ur->nu += w->ur.nu;
    ur->nm += w->ur.nm;
    return CAIRN_OK;
}

static void pool_units_free(struct pool_units *pu)
{
    if (!pu)
        return;
    free(pu->us);
    free(pu->ufirst);
    free(pu->has);
    free(pu->mt);
    free(pu->mfirst);
    free(pu->s_reply);
    free(pu->munit);
    free(pu->s_head);
    free(pu->state);
    free(pu);
}

/* The pool's units and the matches' of sessions [s0, s1), whose units
 * are us0 + (ufirst[si] - ub) (the rows' second half's own array, or
 * pu->us): each match into its unit (the units' terms, rank.c
 * unit_terms' bits, by store_unit_from's search of the row's first
 * ids), the units where build_units puts them, the turns' slots empty;
 * and the second half's units from[c0, c1) copied into pu->us from
 * ufirst of its first session (cu). Each part writes only its sessions' units and
 * matches and its share of the copy, and faults in their pages itself:
 * the two parts on two threads give the one pass's values (issue 23,
 * par52: ~45 M instructions, a 12 MB copy and ~40 MB of fresh pages at
 * a million messages were the recall's thread's alone). bad: a match its
 * rows do not place (the caller gathers the pool whole). */
struct units_part {
    struct pool             *p;
    const struct hits       *hs;
    const struct store_unit *us0, *from;
    int                      ub, cu, c0, c1;
    int                      nt, s0, s1, m0, m1, maxu, bad;
    int                      df[RECALL_MAX_TERMS];  /* its units' with each bit */
};

static void *units_part_run(void *arg)
{
    struct units_part *w = arg;
    struct pool *p = w->p;
    struct pool_units *pu = p->pu;
    const struct hits *hs = w->hs;
    int nt = w->nt, u0 = pu->ufirst[w->s0], u1 = pu->ufirst[w->s1], mi = w->m0;
    size_t nu = (size_t)(u1 - u0), nh = (size_t)(w->m1 - w->m0);
    if (w->c1 > w->c0)
        memcpy(pu->us + w->cu + w->c0, w->from + w->c0, (size_t)(w->c1 - w->c0) * sizeof *pu->us);
    os_populate(pu->has + u0, nu * sizeof *pu->has);
    os_populate(pu->s_head + u0, nu * sizeof *pu->s_head);
    os_populate(p->u + u0, nu * sizeof *p->u);
    os_populate(pu->mt + w->m0, nh * sizeof *pu->mt);
    os_populate(pu->s_reply + w->m0, nh * sizeof *pu->s_reply);
    os_populate(pu->munit + w->m0, nh * sizeof *pu->munit);
    memset(pu->has + u0, 0, nu * sizeof *pu->has);
    memset(pu->s_head + u0, 0, nu * sizeof *pu->s_head);
    memset(pu->s_reply + w->m0, 0, nh * sizeof *pu->s_reply);
    for (int si = w->s0; si < w->s1; si++) {
        const struct store_unit *us = w->us0 + (pu->ufirst[si] - w->ub);
        int nus = pu->ufirst[si + 1] - pu->ufirst[si], ku = 0;
        w->maxu = nus > w->maxu ? nus : w->maxu;
        pu->mfirst[si] = mi;
        /* each match's unit searched forward from the session's match
         * before (its matches rise by row); kept in munit, which the
         * ranking reads instead of searching again */
        for (; mi < w->m1 && hs->v[mi].sess == p->s[si].row; mi++) {
            const struct hit *ht = &hs->v[mi];
            ku = store_unit_from(us, nus, ku, ht->row);
            if (ku < 0 || ht->ntok < 0) {
                w->bad = 1;
                return NULL;
            }
            uint64_t b = 0;
            for (int t = 0; t < nt; t++)
                b |= (uint64_t)(ht->tf[t] > 0) << t;
            /* the units' dfs counted as a bit is first set (rank.c's
             * unit_dfs was a pass over every unit on the recall's thread
             * alone: ~5 M instructions at a million messages; issue 23,
             * exact54) */
            uint64_t *hu = &pu->has[pu->ufirst[si] + ku];
            for (uint64_t nb = b & ~*hu; nb; nb &= nb - 1)
                w->df[__builtin_ctzll(nb)]++;
            *hu |= b;
            pu->mt[mi] = (struct unit_match){ ht->row, ht->ntok, ht->tf };
            pu->munit[mi] = pu->ufirst[si] + ku;
        }
        int at = p->s[si].first_msg;
        for (int k = 0; k < nus; k++) {
            p->u[pu->ufirst[si] + k] = (struct runit){ .sess = si, .first = at, .head = at,
                                                       .last = at + us[k].n_turns - 1 };
            at += us[k].n_turns;
        }
    }
    w->bad = mi != w->m1;           /* a match of a session not listed */
    return NULL;
}

/* The pool of hs's sessions (sess[n], ascending) from their unit rows;
 * *used 0 when some session or match cannot be ranked from them (nothing
 * kept: the caller gathers the pool whole). hs by session, then row.
 * two: the second half of the rows read on a thread of its own. */
static int gather_units(struct cairn *h, struct query *q, struct pool *p, struct hits *hs,
                        const int64_t *sess, int n, int two, int *used)
{
    struct urows ur = { p, NULL, 0, 0, NULL, 0, 0 };
    struct urows_half w;
    struct pool_units *pu = NULL;
    pthread_t th;
    int rc = CAIRN_OK, nt = q->nt, mid = two && n >= 2 ? n / 2 : n, started = 0;
    *used = 0;
    memset(&w, 0, sizeof w);
    w.h = h;
    w.sess = sess + mid;
    w.n = n - mid;
    w.total = p->total_msgs;
    w.ur = (struct urows){ &w.p, NULL, 0, 0, NULL, 0, 0 };
    if (w.n && store_split_ok(h) && !pthread_create(&th, NULL, urows_run, &w))
        started = 1;
    rc = urows_read(h, &ur, sess, mid, n, p->total_msgs);
    int read = 0;
    if (started) {
        pthread_join(th, NULL);
        read = w.r != NULL;
        /* the reader's message onto h (NOMEM has none: gather's end
         * writes it) */
        if (!rc && w.rc && w.rc != ROWS_UNUSED)
            rc = w.rc == CAIRN_NOMEM ? w.rc : cairn__err(h, w.rc, "%s", cairn_errmsg(w.r));
        if (w.r)
            h->close_reader(w.r);
    }
    if (!rc && w.n && !read)        /* no thread, or no reader: here */
        w.rc = urows_read(h, &w.ur, w.sess, w.n, w.n, p->total_msgs);
    if (!rc)
        rc = w.rc;
    int ns1 = p->ns;                /* the first half's sessions */
    if (!rc && w.n)
        rc = urows_join(&ur, &w, n);
    if (rc == ROWS_UNUSED || (!rc && p->ns != n))
        goto not_used;
    if (rc)
        goto fail;
    if (started)
        p->split = 1;
    ur.ufirst[p->ns] = ur.nu;
    if (!(pu = calloc(1, sizeof *pu))) {
        rc = CAIRN_NOMEM;
        goto fail;
    }
    size_t nu1 = (size_t)(ur.nu ? ur.nu : 1), nh1 = (size_t)(hs->n ? hs->n : 1);
    pu->h = h;
    pu->us = ur.us;
    ur.us = NULL;
    pu->ufirst = ur.ufirst;
    ur.ufirst = NULL;
    pu->nmt = hs->n;
    /* (each written whole by units_part or by rank, each part's pages
     * faulted in by its own thread) */
    if (!(pu->has = os_alloc_big(nu1 * sizeof *pu->has)) ||
        !(pu->mt = os_alloc_big(nh1 * sizeof *pu->mt)) ||
        !(pu->mfirst = malloc(((size_t)n + 1) * sizeof *pu->mfirst)) ||
        !(pu->s_reply = os_alloc_big(nh1 * sizeof *pu->s_reply)) ||
        !(pu->munit = os_alloc_big(nh1 * sizeof *pu->munit)) ||
        !(pu->s_head = os_alloc_big(nu1 * sizeof *pu->s_head)) ||
        !(pu->state = calloc((size_t)(n ? n : 1), 1)) ||
        !(p->u = os_alloc_big(nu1 * sizeof *p->u)) ||
        !(p->m = calloc((size_t)(ur.nm ? ur.nm : 1), sizeof *p->m))) {
        rc = CAIRN_NOMEM;
        goto fail;
    }
    p->pu = pu;
    /* the first half's sessions here, the second's (copied in from its
     * rows) on a thread of their own when its rows had one */
    int mmid = hs->n;
    if (ns1 < p->ns && hs->n)
        mmid = first_at(&hs->v[0].sess, sizeof *hs->v, hs->n, p->s[ns1].row);
    /* the second half's sessions' units read where its rows put them,
     * and copied into place by both, half each */
    int cu = pu->ufirst[ns1], n2 = ur.nu - cu;
    const struct store_unit *from = n2 ? w.ur.us : pu->us + cu;
    struct units_part a = { p, hs, pu->us, from, 0, cu, 0, n2 / 2,
                            nt, 0, ns1, 0, mmid, 0, 0, { 0 } },
                      b = { p, hs, from, from, cu, cu, n2 / 2, n2,
                            nt, ns1, p->ns, mmid, hs->n, 0, 0, { 0 } };
    if (!(started && !pthread_create(&th, NULL, units_part_run, &b)))
        started = 0;
    units_part_run(&a);
    if (started)
        pthread_join(th, NULL);
    else
        units_part_run(&b);
    free(w.ur.us);
    free(w.ur.ufirst);
    free(w.p.s);
    w.ur.us = NULL;
    w.ur.ufirst = NULL;
    w.p.s = NULL;
    if (a.bad || b.bad)
        goto not_used;
    pu->maxu = a.maxu > b.maxu ? a.maxu : b.maxu;
    for (int t = 0; t < nt; t++)
        pu->df[t] = a.df[t] + b.df[t];
    pu->mfirst[p->ns] = hs->n;
    p->nu = p->cu = ur.nu;
    p->nm = p->cm = (int)ur.nm;
    p->tf_all = hs->tf;             /* the matches' counts, which mt[] points into */
    hs->tf = NULL;
    p->any_assistant = p->ns > 0;
    if (p->nm >= split_min(h))
        p->threads = 2;
    *used = 1;
    return CAIRN_OK;
not_used:
    rc = CAIRN_OK;
fail:
    free(w.ur.us);
    free(w.ur.ufirst);
    free(w.p.s);
    free(ur.us);
    free(ur.ufirst);
    pool_units_free(pu);
    p->pu = NULL;
    free(p->s);
    free(p->u);
    free(p->m);
    p->s = NULL;
    p->u = NULL;
    p->m = NULL;
    p->ns = p->cs = p->nu = p->cu = p->nm = p->cm = 0;
    return rc;
}

int pool_sess_of(const struct pool *p, int i)
{
    int lo = 0, hi = p->ns - 1;
    while (lo < hi) {                /* the last session starting at or before i */
        int mid = lo + (hi - lo + 1) / 2;
        if (p->s[mid].first_msg <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* A load of sessions idx[n] (ascending indices into p->s): their strings,
 * then their turns onto their slots (at: the session being read, j its
 * turns so far, k its unit, mi its match). */
struct lazy_load {
    struct pool *p;
    const int   *idx;
    int          n, at, j, k, mi;
};

static int on_lazy_session(void *arg, const struct store_session_row *r)
{
    struct lazy_load *ld = arg;
    struct pool *p = ld->p;
    while (ld->at < ld->n && p->s[ld->idx[ld->at]].row < r->row)
        ld->at++;
    if (ld->at == ld->n || p->s[ld->idx[ld->at]].row != r->row)
        return CAIRN_OK;
    struct rsession *rs = &p->s[ld->idx[ld->at]];
    free(rs->strs);
    rs->strs = NULL;
    rs->ext_id = rs->source = rs->project = rs->title = NULL;
    return sess_strings(rs, r);
}

static void lazy_fail(struct pool *p, int si)
{
    const struct rsession *s = &p->s[si];
    for (int i = s->first_msg; i < s->first_msg + s->n_msgs; i++)
        free(p->m[i].speaker);
    memset(p->m + s->first_msg, 0, (size_t)s->n_msgs * sizeof *p->m);
    p->pu->state[si] = POOL_FAILED;
}

static int on_lazy_turn(void *arg, const struct store_msg_row *r)
{
    struct lazy_load *ld = arg;
    struct pool *p = ld->p;
    struct pool_units *pu = p->pu;
    if (ld->at < 0 || ld->at >= ld->n || p->s[ld->idx[ld->at]].row != r->sess) {
        int a = ld->at < 0 ? 0 : ld->at + 1;
        while (a < ld->n && p->s[ld->idx[a]].row < r->sess)
            a++;
        if (a == ld->n || p->s[ld->idx[a]].row != r->sess)
            return CAIRN_OK;         /* (not asked for) */
        ld->at = a;
        ld->j = 0;
        ld->k = pu->ufirst[ld->idx[a]];
        ld->mi = pu->mfirst[ld->idx[a]];
    }
    int si = ld->idx[ld->at];
    const struct rsession *s = &p->s[si];
    if (pu->state[si] != POOL_LOADED)
        return CAIRN_OK;             /* failed already */
    if (ld->j >= s->n_msgs) {
        lazy_fail(p, si);            /* more turns than its row's */
        return CAIRN_OK;
    }
    int i = s->first_msg + ld->j++;
    while (ld->k + 1 < pu->ufirst[si + 1] && p->u[ld->k + 1].first <= i)
        ld->k++;
    int head = p->u[ld->k].head == i;
    if (head && (r->row != pu->us[ld->k].first_id || r->position != pu->us[ld->k].first_pos ||
                 r->user != pu->us[ld->k].head_user || r->ntok != pu->us[ld->k].head_ntok)) {
        lazy_fail(p, si);            /* not the row's unit */
        return CAIRN_OK;
    }
    while (ld->mi < pu->mfirst[si + 1] && pu->mt[ld->mi].row < r->row)
        ld->mi++;
    int hit = ld->mi < pu->mfirst[si + 1] && pu->mt[ld->mi].row == r->row;
    struct rmsg *m = &p->m[i];
    /* as gather's msg_add fills a turn, with rank's s_msg */
    *m = (struct rmsg){
        .row = r->row,
        .sess = si,
        .position = r->position,
        .role = r->user ? ROLE_USER : ROLE_ASSISTANT,
        .at = r->at == CAIRN_NO_TIME ? s->started_at : r->at,
        .ntok = r->ntok,
        .bytes = -1,
        .unit = ld->k,
        .tf = hit ? (uint16_t *)pu->mt[ld->mi].tf : NULL,
        .s_msg = head ? pu->s_head[ld->k] : hit ? pu->s_reply[ld->mi] : 0,
    };
    if (r->speaker && !(m->speaker = strdup(r->speaker)))
        return CAIRN_NOMEM;
    return CAIRN_OK;
}

/* The turns' slots of sessions idx[k] (ascending) faulted in before
 * on_lazy_turn writes them, a call a run of sessions whose pages meet or
 * nearly meet: p->m is sized for every turn of the pool (88 MB at a
 * million messages) and a recall writes the few hundred sessions pack
 * reads, each a page or two of it, scattered; a fault a page cost ~13 us
 * on the paravirtualised host, the call for one to a few pages 1-4
 * (bench/README.md, issue 23, mem54). Pages between two runs up to
 * TURNS_GAP apart are faulted in with them, cheaper than a call. */
#define TURNS_GAP ((uintptr_t)2 * 4096)
/* Below malloc's mmap threshold (32 MB: os_heap_keep) the array is the
 * heap's, often resident already: the calls saved no trap at 100,000
 * messages (~9 MB), only cost */
#define TURNS_POPULATE_MIN ((size_t)32 << 20)

static void turns_populate(struct pool *p, const int *idx, int k)
{
    uintptr_t a = 0, b = 0;
    if ((size_t)p->nm * sizeof *p->m < TURNS_POPULATE_MIN)
        return;
    for (int i = 0; i <= k; i++) {
        const struct rsession *s = i < k ? &p->s[idx[i]] : NULL;
        uintptr_t x = s ? (uintptr_t)(p->m + s->first_msg) : 0;
        if (s && !s->n_msgs)
            continue;
        if (b && s && x <= b + TURNS_GAP) {
            b = (uintptr_t)(p->m + s->first_msg + s->n_msgs);
            continue;
        }
        if (b)
            os_populate_pages((void *)a, b - a);
        if (s) {
            a = x;
            b = (uintptr_t)(p->m + s->first_msg + s->n_msgs);
        }
    }
}

/* The sessions of si[n] still unloaded (names: and without their
 * strings), ascending, each once, into *idx, their rows into *rows (room
 * for 2 n: pool_load lists the unnamed ones' after them); how many, or -1
 * on no memory. */
static int lazy_pick(const struct pool *p, const int *si, int n, int names, int **idx,
                     int64_t **rows)
{
    int k = 0, u = 0;
    if (!(*idx = malloc((size_t)n * sizeof **idx)) ||
        !(*rows = malloc(2 * (size_t)n * sizeof **rows)))
        return -1;
    for (int i = 0; i < n; i++)
        if (p->pu->state[si[i]] == POOL_UNLOADED && !(names && p->s[si[i]].ext_id))
            (*idx)[k++] = si[i];
    qsort(*idx, (size_t)k, sizeof **idx, sort_cmp_int);
    for (int i = 0; i < k; i++)
        if (!u || (*idx)[u - 1] != (*idx)[i])
            (*idx)[u++] = (*idx)[i];
    for (int i = 0; i < u; i++)
        (*rows)[i] = p->s[(*idx)[i]].row;
    return u;
}

int pool_names(struct pool *p, const int *si, int n)
{
    int *idx = NULL, rc = CAIRN_OK, k;
    int64_t *rows = NULL;
    if (!p->pu || n <= 0)
        return CAIRN_OK;
    if ((k = lazy_pick(p, si, n, 1, &idx, &rows)) < 0) {
        rc = CAIRN_NOMEM;
        k = 0;
    }
    struct lazy_load ld = { p, idx, k, 0, 0, 0, 0 };
    if (k)
        rc = store_sessions_meta(p->pu->h, rows, k, on_lazy_session, &ld);
    for (int i = 0; i < k; i++)
        if (!p->s[idx[i]].ext_id)
            lazy_fail(p, idx[i]);    /* its row gone since gather, or not read */
    if (rc == CAIRN_NOMEM)
        cairn__err(p->pu->h, rc, "out of memory");
    free(idx);
    free(rows);
    return rc;
}

int pool_load(struct pool *p, const int *si, int n)
{
    struct pool_units *pu = p->pu;
    int *idx = NULL, k = 0, rc = CAIRN_OK;
    int64_t *rows = NULL;
    if (!pu || n <= 0)
        return CAIRN_OK;
    for (int i = 0; i < n && !k; i++)
        k = pu->state[si[i]] == POOL_UNLOADED;
    if (!k)
        return CAIRN_OK;
    if ((k = lazy_pick(p, si, n, 0, &idx, &rows)) < 0) {
        rc = CAIRN_NOMEM;
        k = 0;
        goto out;
    }
    for (int i = 0; i < k; i++)
        pu->state[idx[i]] = POOL_LOADED;   /* until a turn says otherwise */
    turns_populate(p, idx, k);
    /* the strings of those whose header did not read them (pool_names) */
    int64_t *named = rows + k;
    int nn = 0;
    for (int i = 0; i < k; i++)
        if (!p->s[idx[i]].ext_id)
            named[nn++] = rows[i];
    struct lazy_load ld = { p, idx, k, 0, 0, 0, 0 };
    if (nn && (rc = store_sessions_meta(pu->h, named, nn, on_lazy_session, &ld)))
        goto out;
    ld.at = -1;
    if ((rc = store_messages_meta(pu->h, rows, k, on_lazy_turn, &ld)))
        goto out;
    for (int i = 0; i < k; i++) {
        struct rsession *s = &p->s[idx[i]];
        /* every turn of its row, and its strings (a session gone since) */
        int n_read = 0;
        for (int x = s->first_msg; x < s->first_msg + s->n_msgs; x++)
            n_read += p->m[x].row != 0;
        if (pu->state[idx[i]] == POOL_LOADED && (n_read != s->n_msgs || !s->ext_id))
            lazy_fail(p, idx[i]);
    }
out:
    if (rc) {
        for (int i = 0; i < k; i++)
            if (pu->state[idx[i]] == POOL_LOADED)
                lazy_fail(p, idx[i]);
        if (rc == CAIRN_NOMEM)
            cairn__err(pu->h, rc, "out of memory");
    }
    free(idx);
    free(rows);
    return rc;
}

int gather(struct cairn *h, struct query *q, const struct cairn_recall_opts *o,
           const struct dense_result *extra, gather_late_fn late, void *late_arg,
           struct pool *p)
{
    struct buf expr = BUF_INIT;
    struct hits hs = { NULL, 0, 0, NULL, q };
    int rc = CAIRN_OK;
    struct store_ids sess = { 0 }, evm = { 0 };
    const struct store_scope scope = { o->project, o->exclude_session };
    struct store_totals tot;

    memset(p, 0, sizeof *p);
    /* over unit rows: the matches and the rows read in one transaction
     * (the rows must be those of the sessions the matches were read in) */
    int began = 0;
    if (units_setting(h) && store_units_ok(h) && (rc = store_read_begin(h, &began)))
        goto out;

    /* Scope totals, for IDF and average lengths. */
    if ((rc = store_scope_totals(h, &scope, &tot)))
        goto out;
    p->total_msgs = tot.msgs;
    p->total_tok = tot.tok;
    p->total_user = tot.user;
    p->total_bytes = tot.bytes;
    if (p->total_msgs == 0)
        goto out;
    /* Could the whole scope fit? No text costs less than a token per
     * GATHER_BYTES_PER_TOKEN bytes (docs/TOKENS.md), so this never misses
     * a store that fits; pack.c finds out exactly. */
    p->all_mode = !(o->flags & CAIRN_RECALL_MATCHED_ONLY) &&
                  p->total_bytes <= (int64_t)o->budget * GATHER_BYTES_PER_TOKEN;

    /* 1. Messages matching any term, with per-term counts. */
    query_match_expr(q, &expr);
    if (expr.err) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    /* Only pruning reads each match's length (its BM25 alone); the
     * sessions' turns bring theirs. */
    int may_prune = !p->all_mode && o->method != CAIRN_METHOD_RAW_BM25 &&
                    (o->flags & CAIRN_RECALL_FAST) && !exhaustive(h);
    /* (and ranking over unit rows: a match's own BM25 there) */
    int units = units_may(h, q, o, p, may_prune), want_len = may_prune || units;
    int tiered = 0, walk = 0;
    if (q->nt > 0 && may_prune && (rc = tiered_matches(h, q, &scope, &hs, &tiered)))
        goto out;
    for (int i = 0; tiered && i < hs.n; i++)
        hs.v[i].tf = hs.tf + (size_t)i * (size_t)q->nt;
    if (tiered && hs.n && (rc = prune(h, q, p, hs.v, &hs.n, &tot, &walk)))
        goto out;
    if (walk) {                       /* a pool too small to prune for sure */
        hs.n = 0;
        for (int t = 0; t < q->nt; t++)
            q->t[t].df_msg = 0;
        tiered = 0;
    }
    int packed = 0;
    if (q->nt > 0 && !tiered &&
        (rc = packed_matches(h, q, &scope, want_len, may_prune ? p : NULL, &hs, &packed)))
        goto out;
    if (q->nt > 0 && !tiered && !packed &&
        (rc = store_term_matches(h, &scope, expr.p, expr.n, q->nt, want_len, on_match, &hs)))
        goto out;
    for (int i = 0; !tiered && i < hs.n; i++)
        hs.v[i].tf = hs.tf + (size_t)i * (size_t)q->nt;
    /* (packed: pruned as they were merged) */
    if (!tiered && !packed && hs.n && may_prune && (rc = prune(h, q, p, hs.v, &hs.n, NULL, &walk)))
        goto out;
    /* the keyword matches are read: the caller's late work (the dense
     * search) before the sessions it may add are loaded */
    if (late && (rc = late(late_arg, &extra)))
        goto out;
    /* the pool from its sessions' unit rows, when they can answer */
    if (units && !(extra && extra->n) && hs.n) {
        int used = 0;
        sort_if_needed(hs.v, (size_t)hs.n, sizeof *hs.v, cmp_hit_sess_row);
        for (int i = 0; i < hs.n; i++) {
            if (i && hs.v[i].sess == hs.v[i - 1].sess)
                continue;
            GROW(sess.v, sess.n, sess.cap);
            sess.v[sess.n++] = hs.v[i].sess;
        }
        /* a pool big enough for two threads (gather's rule below): the
         * rows' second half read on a second, which reads outside this
         * transaction (as load_split's halves read, each on its own) */
        /* and a pool holding a session without a reply (its rows flag it
         * a dialog, which they cannot rank) is known from its sizes'
         * rows before any unit row is read: gathered whole at once, as
         * with the rows off, instead of after reading them (+20% of the
         * exact recall at 100,000 messages for the same answer) */
        int64_t n_msgs = 0, n_units;
        int dialogs = 0;
        if ((rc = store_sessions_shape(h, sess.v, sess.n, &n_msgs, &n_units, &dialogs)))
            goto out;
        int two = sess.n >= 2 && n_msgs >= split_min(h) && n_msgs < INT_MAX / 2;
        if (two && !dialogs)
            store_read_end(h, &began);
        if (!dialogs && (rc = gather_units(h, q, p, &hs, sess.v, sess.n, two, &used)))
            goto out;
        store_read_end(h, &began);
        if (used)
            goto loaded;
        sess.n = 0;
    }
    store_read_end(h, &began);

    for (int i = 0; i < hs.n; i++) {
        GROW(sess.v, sess.n, sess.cap);
        sess.v[sess.n++] = hs.v[i].sess;
    }
    /* 2. Sessions inside the time range. */
    if (q->has_range && (rc = store_range_sessions(h, &scope, q->from, q->to, &sess)))
        goto out;
    /* 2'. Sessions of the turns that speak of a date in it (store/events.c). */
    if (q->has_range && TIME_EVENTS &&
        (rc = store_event_msgs(h, &scope, q->from, q->to, &evm, &sess)))
        goto out;
    /* 2a. Sessions of the dense hits (already limited to the scope). */
    for (int i = 0; extra && i < extra->n; i++) {
        GROW(sess.v, sess.n, sess.cap);
        sess.v[sess.n++] = extra->hits[i].sess;
    }
    /* 2b. Everything in scope, when it may all fit. */
    if (p->all_mode && (rc = store_scope_sessions(h, &scope, &sess)))
        goto out;
    if (sess.n == 0)
        goto out;
    sort_if_needed(sess.v, (size_t)sess.n, sizeof *sess.v, cmp_i64);
    int k = 0;
    for (int i = 0; i < sess.n; i++) {
        if (!k || sess.v[k - 1] != sess.v[i])
            sess.v[k++] = sess.v[i];
    }
    sess.n = k;
    if (hs.n)
        sort_if_needed(hs.v, (size_t)hs.n, sizeof *hs.v, cmp_hit_sess_row);

    /* 3. Sessions and their messages (metadata), in order. The turns'
     * array at its size, filled once: grown by doubling it was copied and
     * paged in again (GROW still covers turns added since). The size from
     * session_sizes (128 sessions a row), not from a join of session_stats
     * to every session's row: at a million messages ~9 M instructions for
     * ~41,000 sessions against ~30 M. */
    int64_t n_msgs = 0;
    if ((rc = kept_turns(h, p, sess.v, sess.n, &n_msgs)))
        goto out;
    p->tf_all = hs.tf;            /* the loaded messages' tf point into it */
    hs.tf = NULL;
    if (sess.n >= 2 && n_msgs >= split_min(h) && n_msgs < INT_MAX / 2) {
        p->threads = 2;
        if ((rc = load_split(h, p, sess.v, sess.n, hs.v, hs.n, n_msgs)))
            goto out;
        goto loaded;
    }
    if ((rc = store_sessions_meta(h, sess.v, sess.n, on_session, p)))
        goto out;
    if (n_msgs > 64 && n_msgs < INT_MAX / 2) {
        if (!(p->m = os_alloc_filled((size_t)n_msgs * sizeof *p->m))) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        p->cm = (int)n_msgs;
    }
    struct msg_load ml = { p, hs.v, hs.n, -1, 0, 0, 0, INT64_MIN, 0, 0, 0 };
    rc = store_messages_meta(h, sess.v, sess.n, on_message, &ml);
    if (rc == -1)                     /* stopped early: nothing is wrong */
        rc = CAIRN_OK;
    if (rc)
        goto out;
loaded:
    /* Event dates onto the loaded messages (rank.c reads them). */
    if (evm.n) {
        sort_if_needed(evm.v, (size_t)evm.n, sizeof *evm.v, cmp_i64);
        for (int j = 0; j < p->nm; j++)
            p->m[j].event = bsearch(&p->m[j].row, evm.v, (size_t)evm.n, sizeof *evm.v,
                                    cmp_i64) != NULL;
    }
    /* Dense scores onto the loaded messages. */
    if (extra && extra->n) {
        struct hit *dh = malloc((size_t)extra->n * sizeof *dh);
        if (!dh) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        for (int i = 0; i < extra->n; i++)
            dh[i].row = extra->hits[i].msg, dh[i].tf = NULL;
        qsort(dh, (size_t)extra->n, sizeof *dh, cmp_hit);
        for (int j = 0; j < p->nm; j++) {
            struct hit key = { .row = p->m[j].row };
            struct hit *f = bsearch(&key, dh, (size_t)extra->n, sizeof *dh, cmp_hit);
            if (f) {
                for (int i = 0; i < extra->n; i++)
                    if (extra->hits[i].msg == p->m[j].row)
                        p->m[j].dense = 1.0f + extra->hits[i].cos;
            }
        }
        free(dh);
    }
    for (int i = 0; i < p->ns; i++) {
        p->any_dialog |= p->s[i].dialog;
        p->any_assistant |= !p->s[i].dialog;
    }
out:
    store_read_end(h, &began);
    free(hs.tf);
    free(hs.v);
    free(sess.v);
    free(evm.v);
    buf_release(&expr);
    if (rc == CAIRN_NOMEM)
        cairn__err(h, rc, "out of memory");
    return rc;
}

void pool_free(struct pool *p)
{
    free(p->kept);
    free(p->kept_msgs);
    for (int i = 0; i < p->ns; i++) {
        struct rsession *s = &p->s[i];
        if (s->strs) {
            free(s->strs);
            continue;
        }
        free(s->ext_id);
        free(s->source);
        free(s->project);
        free(s->title);
    }
    /* most of a big pool's turns hold none of these: a call to free a
     * NULL each was ~40 M instructions of the exact recall at a million
     * messages (a pool over unit rows: the loaded sessions' only) */
    for (int i = 0, si = 0; i < p->nm; i++) {
        if (p->pu) {
            while (si + 1 < p->ns && p->s[si + 1].first_msg <= i)
                si++;
            if (p->pu->state[si] != POOL_LOADED) {
                i = p->s[si].first_msg + p->s[si].n_msgs - 1;
                continue;
            }
        }
        struct rmsg *m = &p->m[i];
        /* one test for the four (a compiler drops `if (x) free(x)`) */
        if (!m->speaker && !m->ext_id && !m->text && (p->tf_all || !m->tf))
            continue;
        free(m->speaker);
        free(m->ext_id);
        if (!p->tf_all)           /* a pool made by hand (tests) */
            free(m->tf);
        free(m->text);
    }
    free(p->tf_all);
    pool_units_free(p->pu);
    free(p->s);
    free(p->m);
    free(p->u);
    free(p->ord);
    free(p->ent);
    free(p->s_words);
    free(p->persp);
    free(p->seg);
    free(p->seg_cos);
    memset(p, 0, sizeof *p);
}

