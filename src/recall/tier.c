/*
 * tier.c: term tiers, built (schema 22; docs/ARCHITECTURE.md, "Term
 * tiers"; the reader is gather.c's tiered_matches).
 *
 * The pruned recall (CAIRN_RECALL_FAST, the prompt hook) keeps the
 * GATHER_KEEP sessions whose best single message scores highest, but to
 * know them it walked every match of every word of the question: on a
 * million messages "fix" is in 95,000 of them, ~120 ms, whatever the
 * answer. A session's best on one word alone, w * f(tf, len), orders the
 * sessions the same for any IDF w, so the sessions a word would keep can
 * be chosen once, ahead: a tier holds every match of the word in its
 * TIER_SESS best sessions by that score (lengths against the store's
 * average when built), and the recall reads those rows instead of the
 * walk. The rows of a kept session are all its matches of the word, so
 * ranking inside it sees the same counts as before.
 *
 * Built whole by cairn_tier_build (`cairn reindex --tiers`), in one
 * transaction; messages added since (ids above tier_state.upto) are walked
 * as before by every recall, deletes and rewrites drop their rows
 * (triggers). Not exact: a session the question's other words bring in
 * has its matches of the word outside the tier counted 0, so the reader
 * tiers only a word that outweighs the others (TIER_SHARE);
 * bench/README.md ("Term tiers") says how often the answer changed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recall/policy.h"
#include "recall/recall.h"
#include "store/post.h"
#include "store/recall_read.h"
#include "store/tier.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/sort.h"

/* A word of the vocabulary, copied (its row is gone at the next step);
 * spelt: 1, a query of it finds it; 2, a query of spell[i] (another word
 * that is this token alone) finds it: its postings are packed, its tier
 * keeps only its df; 0: only its df is kept. */
struct vocab {
    char   **tok;
    char   **spell;
    int64_t *df;
    char    *spelt;
    int      n, cap;
};

/* The token a query of tok finds (for_query tokenization): a word whose
 * stem stems again to something else would find other matches. */
struct one_tok {
    const char *want;
    size_t      n;
    int         count, same;
};

static int one_tok_cb(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    (void)start, (void)end, (void)coloc;
    struct one_tok *o = arg;
    o->same = ++o->count == 1 && n == o->n && !memcmp(tok, o->want, n);
    return 0;
}

/* Endings a stem's words commonly add ("databas": "database"), tried in
 * turn when the stem itself does not stem to itself; a doubled last
 * letter is tried before "ing" and "ed" too ("embed": "embedding"). */
static const char *const spell_end[] = { "e", "s", "es", "ing", "ed", "y", "er", "ion", "al" };

/* A word a query of which is token tok[0..n) alone (for_query
 * tokenization, as gather.c's reader tokenizes a question's word), into
 * out (cap bytes); 0 if none of the endings gives one. */
static int spell_of(const char *tok, size_t n, char *out, size_t cap)
{
    for (int dbl = 0; dbl < 2; dbl++) {
        for (size_t k = 0; k < sizeof spell_end / sizeof spell_end[0]; k++) {
            const char *e = spell_end[k];
            if (dbl && e[0] != 'i' && !(e[0] == 'e' && e[1] == 'd'))
                continue;
            char last[2] = { dbl ? tok[n - 1] : 0, 0 };
            int w = snprintf(out, cap, "%.*s%s%s", (int)n, tok, last, e);
            if (w < 0 || (size_t)w >= cap)
                continue;
            struct one_tok o = { tok, n, 0, 0 };
            if (!text_tokenize(out, (size_t)w, 1, one_tok_cb, &o) && o.same && o.count == 1)
                return 1;
        }
    }
    return 0;
}

static int on_vocab(void *arg, const char *tok, size_t n, int64_t df)
{
    struct vocab *v = arg;
    struct one_tok o = { tok, n, 0, 0 };
    char sp[160];
    if (!n || text_is_stopword(tok, n) || text_tokenize(tok, n, 1, one_tok_cb, &o))
        return 0;                   /* no question asks for it */
    int spelt = o.same && o.count == 1 ? 1 : spell_of(tok, n, sp, sizeof sp) ? 2 : 0;
    if (v->n == v->cap) {
        int nc = v->cap ? v->cap * 2 : 256;
        char **nt = realloc(v->tok, (size_t)nc * sizeof *nt);
        if (!nt)
            return CAIRN_NOMEM;
        v->tok = nt;
        char **nsp = realloc(v->spell, (size_t)nc * sizeof *nsp);
        if (!nsp)
            return CAIRN_NOMEM;
        v->spell = nsp;
        int64_t *nd = realloc(v->df, (size_t)nc * sizeof *nd);
        if (!nd)
            return CAIRN_NOMEM;
        v->df = nd;
        char *ns = realloc(v->spelt, (size_t)nc);
        if (!ns)
            return CAIRN_NOMEM;
        v->spelt = ns;
        v->cap = nc;
    }
    v->spell[v->n] = NULL;
    if (!(v->tok[v->n] = strndup(tok, n)) || (spelt == 2 && !(v->spell[v->n] = strdup(sp)))) {
        free(v->tok[v->n]);
        return CAIRN_NOMEM;
    }
    v->spelt[v->n] = (char)spelt;
    v->df[v->n++] = df;
    return 0;
}

static void tmatches_free(struct tmatches *m)
{
    free(m->v);
    free(m->keep);
    free(m->idx);
    free(m->kv);
    free(m->mark);
    post_enc_free(&m->enc);
}

static int on_tmatch(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    struct tmatches *m = arg;
    if (m->n == m->cap) {
        int nc = m->cap ? m->cap * 2 : 4096;
        struct post_ent *nv = realloc(m->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return CAIRN_NOMEM;
        m->v = nv;
        m->cap = nc;
    }
    m->v[m->n++] = (struct post_ent){ row, sess, tf[0], ntok };
    return 0;
}

/* The matches' order by session then row, through their places in m->v
 * (qsort_r's argument): the match records stay in the row order the
 * packing needs, and a place is 4 bytes where a record is 24. */
static int cmp_idx_sess(const void *a, const void *b, void *arg)
{
    const struct post_ent *v = arg, *x = &v[*(const int *)a], *y = &v[*(const int *)b];
    if (x->sess != y->sess)
        return x->sess < y->sess ? -1 : 1;
    return x->row < y->row ? -1 : x->row > y->row;
}

/* The best single-message score on the word alone of the session whose
 * matches start at idx[i] (idx by session); *end: where they end. */
static double sess_best(const struct tmatches *m, int i, double avg, int *end)
{
    double best = 0, w = 1, tf;
    int j = i;
    int64_t sess = m->v[m->idx[i]].sess;
    for (; j < m->n && m->v[m->idx[j]].sess == sess; j++) {
        const struct post_ent *t = &m->v[m->idx[j]];
        tf = t->tf;
        double s = rank_bm25(&tf, 1, t->ntok, avg, &w);
        best = s > best ? s : best;
    }
    *end = j;
    return best;
}

/* Grows *p (of *cap elements of size sz) to hold n. */
static int grow(void *p, int *cap, int n, size_t sz)
{
    if (n <= *cap)
        return 0;
    void *np = realloc(*(void **)p, (size_t)n * sz);
    if (!np)
        return CAIRN_NOMEM;
    *(void **)p = np;
    *cap = n;
    return 0;
}

/* The word's tier from its walk m (its matches by row): its sessions by
 * best single-message score, the TIER_SESS best sessions' matches into
 * m->keep by row, and the cut a new match needs to enter
 * (store/tier_keep.c): the last kept session's score, 0 while the tier
 * holds every session. Needs no store, so the walker's thread chooses
 * while the build writes the word before (issue 23, add33).
 * Branch add34: no sort a fresh add does not need. The places by session
 * are sorted only when the sessions are not already in row order (an add
 * of whole sessions gives each its run of ids: at a million messages the
 * sort was ~a third of the walker's instructions); of the sessions' keys
 * only the set of the TIER_SESS best is needed (sort_kv_top, linear: the
 * set sort_kv_desc's first TIER_SESS is), and their matches are taken
 * from m->v, which is by row, by a mark a match, instead of being sorted
 * by row again. The same rows and cut as the sorts (test_tier
 * test_choose: against them, on matches in and out of session order). */
int tier_choose(struct tmatches *m, double avg)
{
    int ns = 0, in_order = 1;
    m->nkeep = 0;
    m->cut = 0;
    if (grow(&m->idx, &m->capidx, m->n, sizeof *m->idx))
        return CAIRN_NOMEM;
    for (int i = 0; i < m->n; i++) {
        m->idx[i] = i;
        in_order &= !i || m->v[i].sess >= m->v[i - 1].sess;
    }
    /* by session then row: rows are unique and rise, so sessions that
     * never fall are that order already */
    if (!in_order)
        qsort_r(m->idx, (size_t)m->n, sizeof *m->idx, cmp_idx_sess, m->v);
    /* a key a session, not a match (a slot keeps its arrays) */
    for (int i = 0; i < m->n; i++)
        ns += !i || m->v[m->idx[i]].sess != m->v[m->idx[i - 1]].sess;
    if (grow(&m->kv, &m->capkv, ns, sizeof *m->kv))
        return CAIRN_NOMEM;
    ns = 0;
    /* each session's best, keyed; val: the place of its first match */
    for (int i = 0; i < m->n;) {
        int j = i;
        m->kv[ns++] = (struct sort_kv){ sort_key_double(sess_best(m, i, avg, &j)), i };
        i = j;
    }
    int nk = ns < TIER_SESS ? ns : TIER_SESS, end;
    if (ns > TIER_SESS && sort_kv_top(m->kv, (size_t)ns, TIER_SESS) < 0)
        return CAIRN_NOMEM;
    if (ns >= TIER_SESS) {
        /* the last of the kept in sort_kv_desc's order: the least key
         * (equal keys, equal scores) */
        int low = 0;
        for (int k = 1; k < nk; k++)
            low = m->kv[k].key < m->kv[low].key ? k : low;
        m->cut = sess_best(m, (int)m->kv[low].val, avg, &end);
    }
    /* the kept sessions' matches marked, then taken in message order: the
     * word's rows are the newest of the table's key (its id the largest
     * yet), so each goes in after the last, where SQLite appends without
     * a search; in the sessions' order each searched the word's range */
    if (grow(&m->mark, &m->capmark, m->n, 1))
        return CAIRN_NOMEM;
    memset(m->mark, 0, (size_t)m->n);
    int nkeep = 0;
    for (int k = 0; k < nk; k++) {
        int from = (int)m->kv[k].val;
        int64_t sess = m->v[m->idx[from]].sess;
        for (end = from; end < m->n && m->v[m->idx[end]].sess == sess; end++)
            m->mark[m->idx[end]] = 1;
        nkeep += end - from;
    }
    if (grow(&m->keep, &m->capkeep, nkeep, sizeof *m->keep))
        return CAIRN_NOMEM;
    for (int i = 0; i < m->n; i++)
        if (m->mark[i])
            m->keep[m->nkeep++] = m->v[i];
    return CAIRN_OK;
}

/* The walk of a query of word (one token) up to upto on handle r (the
 * build's own, or a walker's reader: the same snapshot); runs (NULL:
 * none held) gives each match's session and length (add34). */
static int walk_word(struct cairn *r, const char *word, int64_t upto,
                     const struct store_runs *runs, struct tmatches *m)
{
    struct buf expr = BUF_INIT;
    const struct store_scope all = { NULL, NULL };
    int rc;
    m->n = 0;
    query_add_phrase(&expr, word);
    if (expr.err)
        rc = CAIRN_NOMEM;
    else if (runs)
        rc = store_term_matches_runs(r, runs, expr.p, expr.n, upto, on_tmatch, m);
    else
        rc = store_term_matches_in(r, &all, expr.p, expr.n, 1, NULL, 1, INT64_MIN, upto, 1,
                                   on_tmatch, m);
    buf_release(&expr);
    return rc;
}

/* A walk's matches, if at least TIER_DF_MIN (*common), packed as token
 * tok's (store/post.c), by row: the blocks walk_choose encoded. */
static int pack_word(struct cairn *h, const char *tok, const struct tmatches *m, int *common)
{
    *common = m->n >= TIER_DF_MIN;
    return *common ? store_post_put(h, tok, strlen(tok), &m->enc) : CAIRN_OK;
}

/* The tier of one word from its walk m (its matches up to upto, its
 * tier chosen by tier_choose): its packed postings, its cut and its kept
 * sessions' matches stored. */
static int build_one(struct cairn *h, const char *tok, struct tmatches *m,
                     struct store_tier_writer *ins, int64_t *rows)
{
    int rc, common = 0;
    int64_t id;
    if ((rc = pack_word(h, tok, m, &common)) || !common)
        return rc;
    if ((rc = store_tier_add_term(h, tok, strlen(tok), m->n, &m->cut, &id)))
        return rc;
    for (int i = 0; i < m->nkeep; i++) {
        const struct post_ent *k = &m->keep[i];
        if ((rc = store_tier_add_post(h, ins, id, k->row, k->sess, k->tf, k->ntok)))
            return rc;
        ++*rows;
    }
    return CAIRN_OK;
}

/*
 * The walks ahead, in a thread of their own. A build is a walk of each
 * common word through FTS5 (~40% of its CPU) then writes (its packed
 * postings, its tier's rows): the walks only read, so a second thread
 * walks the next words on a reader of the same store (store_tier_reader)
 * while the build writes this one's, on the machine's second core. Each
 * word's matches are the same whichever handle walks them; the build
 * takes them in the vocabulary's order, so the rows go in as before.
 * The walker also chooses each word's tier (tier_choose: the sort by
 * session, the sessions' best scores and their order, the kept matches
 * by row), which needs no store: the build's thread only writes.
 * WALK_AHEAD slots bound the memory: a slot is a word's matches (24
 * bytes each), their places by session (4) and marks (1), its sessions'
 * keys (16 a session), its tier's matches (24 each, TIER_SESS sessions'
 * worth) and its packed blocks (~5 bytes a match: the walker encodes
 * them too, add34), refilled only once the build is done with it.
 */
#define WALK_AHEAD 4
/* Branch add34: at a million messages the walks were the tier build's
 * wall (the walker's thread ~45 s of CPU while the build's waited for it
 * ~85% of the time: bench/README.md, "The tier build's walks on two
 * threads"), so WALK_THREADS walkers take the words in turn, seq % 2,
 * each on a reader of its own, and the build's thread writes between. A
 * slot is seq % WALK_AHEAD; a walker fills it only once the build has
 * given back the word WALK_AHEAD before (taken), so the slots are filled
 * and taken in the vocabulary's order whichever walker is first. */
#define WALK_THREADS 2

struct walker;
struct walker_arg {
    struct walker *w;
    int            t;            /* this walker: words seq % nth == t */
};

struct walker {
    struct cairn      *h;        /* the build's handle */
    struct cairn      *r[WALK_THREADS]; /* readers; none: the build walks alone */
    const struct vocab *v;
    int64_t            upto;
    const struct store_runs *runs; /* the messages' sessions and lengths, or NULL */
    double             avg;      /* the build's average length (tier_choose) */
    pthread_t          th[WALK_THREADS];
    struct walker_arg  arg[WALK_THREADS];
    int                nth;      /* walkers running (0: the build walks alone) */
    pthread_mutex_t    mu;
    pthread_cond_t     cv;
    struct tmatches    slot[WALK_AHEAD];
    int                word[WALK_AHEAD]; /* the word a slot holds; -1: empty */
    int                rc[WALK_AHEAD];   /* its walk's code (then the walks stop) */
    int                who[WALK_AHEAD];  /* the walker that filled it */
    int                stop;             /* the build gave up */
    int                taken;            /* the words the build has taken */
    struct tmatches    own;              /* the build's, walking alone */
};

/* The word a query finds word i by: itself, or the word that is it alone;
 * NULL: not walked (its df only). */
static const char *walk_spell(const struct vocab *v, int i)
{
    return v->spelt[i] == 1 ? v->tok[i] : v->spelt[i] == 2 ? v->spell[i] : NULL;
}

/* Word i's walk into m and, for a word whose tier is built (spelt 1,
 * common), its tier chosen: on the walker's thread, all of a word's work
 * that needs no write. */
static int walk_choose(struct cairn *r, const struct walker *w, int i, struct tmatches *m)
{
    int rc = walk_word(r, walk_spell(w->v, i), w->upto, w->runs, m);
    if (!rc && m->n >= TIER_DF_MIN)
        rc = post_encode(&m->enc, m->v, m->n);
    if (!rc && w->v->spelt[i] == 1 && m->n >= TIER_DF_MIN)
        rc = tier_choose(m, w->avg);
    return rc;
}

static void *walker_run(void *arg)
{
    struct walker_arg *a = arg;
    struct walker *w = a->w;
    for (int i = 0, seq = 0; i < w->v->n; i++) {
        if (!walk_spell(w->v, i))
            continue;
        int s = seq++, stop;
        if (s % w->nth != a->t)
            continue;                  /* another walker's */
        int k = s % WALK_AHEAD;
        pthread_mutex_lock(&w->mu);
        while (w->taken + WALK_AHEAD <= s && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        stop = w->stop;
        pthread_mutex_unlock(&w->mu);
        if (stop)
            break;
        int rc = walk_choose(w->r[a->t], w, i, &w->slot[k]);
        pthread_mutex_lock(&w->mu);
        w->word[k] = i;
        w->rc[k] = rc;
        w->who[k] = a->t;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        if (rc)
            break;
    }
    return NULL;
}

/* Starts the walks ahead on as many readers as open, up to WALK_THREADS
 * (one on a single processor: a second walker would only take turns with
 * the build's writes), else the build walks each word itself, as before. */
static void walker_start(struct cairn *h, struct walker *w, const struct vocab *v, int64_t upto,
                         const struct store_runs *runs, double avg)
{
    memset(w, 0, sizeof *w);
    w->h = h;
    w->v = v;
    w->upto = upto;
    w->runs = runs;
    w->avg = avg;
    for (int k = 0; k < WALK_AHEAD; k++)
        w->word[k] = -1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cpus > 1 ? WALK_THREADS : 1, nr = 0;
    /* a reader's page cache: 16 MB when each walk steps msg_runs again,
     * 4 when the runs are held (runs): then a walk reads its word's
     * doclist once, and two readers' 16 MB took the million's add past
     * 100 MB of peak RSS (108 MB with 4 slots; bench/README.md) */
    int mb = runs ? 4 : 16;
    while (nr < want && !store_tier_reader(h, mb, &w->r[nr]) && w->r[nr])
        nr++;
    if (!nr)
        return;
    if (pthread_mutex_init(&w->mu, NULL))
        goto alone;
    if (pthread_cond_init(&w->cv, NULL)) {
        pthread_mutex_destroy(&w->mu);
        goto alone;
    }
    /* nth is read by every walker: set before the first starts; a walker
     * that fails to start leaves its words to none, so all or nothing */
    w->nth = nr;
    int t = 0;
    for (; t < nr; t++) {
        w->arg[t] = (struct walker_arg){ w, t };
        if (pthread_create(&w->th[t], NULL, walker_run, &w->arg[t]))
            break;
    }
    if (t == nr)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    while (t-- > 0)
        pthread_join(w->th[t], NULL);
    w->nth = 0;
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
alone:
    for (int k = 0; k < nr; k++) {
        store_tier_reader_close(h, w->r[k]);
        w->r[k] = NULL;
    }
}

/* Word i's walk (*m), walked here or waited for; walker_done gives its
 * slot back. */
static int walker_take(struct cairn *h, struct walker *w, int i, struct tmatches **m)
{
    if (!w->nth) {
        *m = &w->own;
        return walk_choose(h, w, i, &w->own);
    }
    int k = w->taken % WALK_AHEAD, rc;
    pthread_mutex_lock(&w->mu);
    while (w->word[k] != i)
        pthread_cond_wait(&w->cv, &w->mu);
    rc = w->rc[k];
    pthread_mutex_unlock(&w->mu);
    *m = &w->slot[k];
    if (rc && rc != CAIRN_NOMEM)
        rc = cairn__err(h, rc, "term tiers: %s", cairn_errmsg(w->r[w->who[k]]));
    return rc;
}

static void walker_done(struct walker *w)
{
    if (!w->nth)
        return;
    pthread_mutex_lock(&w->mu);
    w->word[w->taken++ % WALK_AHEAD] = -1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Stops the walks (those left are not needed, or the build failed) and
 * frees them. */
static void walker_end(struct walker *w)
{
    if (w->nth) {
        pthread_mutex_lock(&w->mu);
        w->stop = 1;
        pthread_cond_broadcast(&w->cv);
        pthread_mutex_unlock(&w->mu);
        for (int t = 0; t < w->nth; t++)
            pthread_join(w->th[t], NULL);
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
    }
    for (int t = 0; t < WALK_THREADS; t++)
        store_tier_reader_close(w->h, w->r[t]);
    for (int k = 0; k < WALK_AHEAD; k++)
        tmatches_free(&w->slot[k]);
    tmatches_free(&w->own);
}

int cairn_tier_build(struct cairn *h, int64_t *terms, int64_t *rows)
{
    struct vocab v = { 0 };
    struct walker wk;
    struct store_runs runs = { 0 };
    int walking = 0, have_runs = 0;
    struct store_tier_writer *ins = NULL;
    const struct store_scope all = { NULL, NULL };
    struct store_totals tot;
    int64_t upto = 0, nterms = 0, nrows = 0;
    int rc;
    if (!h)
        return CAIRN_INVALID;
    if (h->pg)
        return cairn__err(h, CAIRN_INVALID, "term tiers: SQLite stores only");
    /* the index by message is made again by a sort (store_tier_finish):
     * with temporary storage in memory (store_pragmas) its runs would be
     * held whole, ~60 bytes a row (112 MB of peak RSS at 100,000
     * messages); in files, a page cache's worth at a time. Only memory
     * depends on it: a handle that cannot switch (a temporary table open
     * in a transaction) builds as before */
    int temp = -1;
    if (store_temp_store(h, 1, &temp))
        temp = -1;
    if ((rc = store_begin(h)))
        goto out;
    if ((rc = store_max_message(h, &upto)) || (rc = store_scope_totals(h, &all, &tot)))
        goto fail;
    double avg = tot.msgs ? (double)tot.tok / (double)tot.msgs : 1;
    /* what ingest scores a new message with to keep the tiers (avg 0:
     * not kept, the messages added since are the reader's tail) */
    const struct store_tier_scoring sc = { TIER_KEEP ? avg : 0, BM25_K1, BM25_B, tot.msgs };
    if ((rc = store_tier_reset(h, upto, &sc, &ins)) || (rc = store_post_reset(h, upto)) ||
        (rc = store_tier_vocab(h, TIER_DF_MIN, on_vocab, &v)))
        goto fail;
    /* the runs once for every word's walk (add34); too sparse: each walk
     * reads them, as before */
    if ((rc = store_runs_load(h, upto, &runs, &have_runs)))
        goto fail;
    walker_start(h, &wk, &v, upto, have_runs ? &runs : NULL, avg);
    walking = 1;
    for (int i = 0; i < v.n; i++) {
        int64_t before = nrows, id;
        struct tmatches *m = NULL;
        int common;
        /* a stem that stems again to another: a question's word comes
         * to it, but a query of it finds something else; its df tells
         * the reader the word is common (gather.c weighs the walk). A
         * word that is the stem alone ("database" for "databas") finds
         * it: its postings are packed (the walk's, whichever word the
         * question spells it with; issue 23, hook29), its tier is not
         * built (a tier changes the pruned answer; not measured here) */
        if (v.spelt[i] != 1) {
            if ((rc = store_tier_add_term(h, v.tok[i], strlen(v.tok[i]), v.df[i], NULL, &id)))
                goto fail;
            if (v.spelt[i] == 2) {
                if ((rc = walker_take(h, &wk, i, &m)) || (rc = pack_word(h, v.tok[i], m, &common)))
                    goto fail;
                walker_done(&wk);
            }
            continue;
        }
        if ((rc = walker_take(h, &wk, i, &m)) || (rc = build_one(h, v.tok[i], m, ins, &nrows)))
            goto fail;
        walker_done(&wk);
        nterms += nrows > before;
    }
    walker_end(&wk);
    walking = 0;
    rc = store_tier_finish(h, ins);
    ins = NULL;
    if (rc)
        goto fail;
    if ((rc = store_commit(h)))
        goto out;
    if (terms)
        *terms = nterms;
    if (rows)
        *rows = nrows;
    goto out;
fail:
    store_tier_done(ins);
    store_rollback(h);
out:
    if (walking)
        walker_end(&wk);
    store_runs_free(&runs);
    if (temp >= 0 && temp != 1)
        store_temp_store(h, temp, NULL);     /* as above: memory only */
    for (int i = 0; i < v.n; i++) {
        free(v.tok[i]);
        free(v.spell[i]);
    }
    free(v.tok);
    free(v.spell);
    free(v.df);
    free(v.spelt);
    if (rc == CAIRN_NOMEM)
        cairn__err(h, rc, "out of memory");
    return rc;
}

int cairn_tier_due(struct cairn *h, int *due, int64_t *msgs)
{
    const struct store_scope all = { NULL, NULL };
    struct store_totals tot;
    int64_t built = 0;
    int rc;
    if (!h || !due)
        return CAIRN_INVALID;
    *due = 0;
    if (msgs)
        *msgs = 0;
    const char *v = cairn__setting(h, CAIRN__SET_TIER_KEEP);
    if (!TIER_KEEP || h->pg || h->readonly || (v && !strcmp(v, "0")))
        return CAIRN_OK;
    if ((rc = store_scope_totals(h, &all, &tot)) || (rc = store_tier_built(h, &built)))
        return rc;
    if (msgs)
        *msgs = tot.msgs;
    /* geometric: all the builds of a growing store cost at most g / (g - 1)
     * times the last one (g = TIER_AUTO_GROW) */
    *due = tot.msgs >= TIER_AUTO_MSGS && (!built || (double)tot.msgs >= TIER_AUTO_GROW *
                                                    (double)built);
    return CAIRN_OK;
}
