/*
 * entity.c: the entity-driven keyword pass (issue 16, multi-hop).
 *
 * "What activities does Melanie partake in?" is answered by turns in many
 * sessions that share no content word with the question. The first
 * ranking finds a few of them, and what they share ("pottery", "creative",
 * "counseling") is what the others hold. So the lead turns of the ENT_TOP
 * best units are read; their words that the question lacks, that at least
 * ENT_MIN_TOP of those turns hold and that are rare in the scope are
 * searched again as one more FTS5 OR query, and each unit's BM25 over them
 * is one more fused ranking (rank.c ent_rank). Words rather than vectors:
 * it runs in keyword-only recall (the prompt hook's default) too. Picking
 * the rarest words alone, without the shared-turns condition, picked the
 * turns' chatter ("Sorry", "it'd", "cause": rare by chance).
 *
 * Cost is bounded: ENT_TOP texts of at most ENT_READ_MAX bytes each, at
 * most ENT_CAND candidate words, and the second query stops, and the pass
 * is skipped with the ranking left as it was, past ENT_MAX_MATCHES
 * matches.
 */
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "text/tokenize.h"
#include "util/buf.h"

/* what ent_on_match returns to stop the read: no CAIRN_* code */
#define ENT_TOO_MANY (-2)

struct ent_collect {
    const struct query *q;
    const char         *text;
    int                 ti;        /* the text's index */
    struct ent_word    *w;
    int                 n, max;
    int                 err;
};

static int ent_add(void *arg, const char *tok, size_t n, size_t start, size_t end, int colocated)
{
    struct ent_collect *c = arg;
    if (colocated || n < ENT_MIN_BYTES || text_is_stopword(tok, n))
        return 0;
    for (int t = 0; t < c->q->nt; t++)
        if (strlen(c->q->t[t].norm) == n && !memcmp(c->q->t[t].norm, tok, n))
            return 0;
    for (int i = 0; i < c->n; i++) {
        struct ent_word *w = &c->w[i];
        if (strlen(w->norm) == n && !memcmp(w->norm, tok, n)) {
            if (w->last != c->ti) {
                w->last = c->ti;
                w->ntop++;
            }
            return 0;
        }
    }
    if (c->n >= c->max)
        return 0;       /* full: later words may still add to the counts */
    struct ent_word *w = &c->w[c->n];
    memset(w, 0, sizeof *w);
    w->norm = strndup(tok, n);
    w->surface = strndup(c->text + start, end - start);
    if (!w->norm || !w->surface) {
        free(w->norm);
        free(w->surface);
        c->err = 1;
        return 1;
    }
    w->ntop = 1;
    w->last = c->ti;
    c->n++;
    return 0;
}

int entity_words(const struct query *q, const char *const *texts, int ntexts, struct ent_word *w,
                 int max)
{
    struct ent_collect c = { q, NULL, 0, w, 0, max, 0 };
    for (int i = 0; i < ntexts && !c.err; i++) {
        if (!texts[i])
            continue;
        c.text = texts[i];
        c.ti = i;
        if (text_tokenize(texts[i], strlen(texts[i]), 1, ent_add, &c))
            c.err = 1;                  /* no memory (the stemmer's or ours) */
    }
    if (c.err) {
        for (int i = 0; i < c.n; i++) {
            free(w[i].norm);
            free(w[i].surface);
        }
        return -1;
    }
    return c.n;
}

/* The matches of the second query: per match its row, session and counts. */
struct ent_hits {
    int64_t  *row, *sess;
    uint16_t *tf;          /* n * nw */
    int       n, cap, nw;
    int      *df;
};

static int ent_on_match(void *arg, int64_t row, int64_t sess, int ntok, const uint16_t *tf)
{
    struct ent_hits *eh = arg;
    if (eh->n >= ENT_MAX_MATCHES)
        return ENT_TOO_MANY;
    if (eh->n == eh->cap) {
        int cap = eh->cap ? eh->cap * 2 : 256;
        int64_t *r = realloc(eh->row, (size_t)cap * sizeof *r);
        if (r)
            eh->row = r;
        int64_t *s = realloc(eh->sess, (size_t)cap * sizeof *s);
        if (s)
            eh->sess = s;
        uint16_t *t = realloc(eh->tf, (size_t)cap * (size_t)eh->nw * sizeof *t);
        if (t)
            eh->tf = t;
        if (!r || !s || !t)
            return CAIRN_NOMEM;
        eh->cap = cap;
    }
    eh->row[eh->n] = row;
    eh->sess[eh->n] = sess;
    memcpy(eh->tf + (size_t)eh->n * (size_t)eh->nw, tf, (size_t)eh->nw * sizeof *tf);
    for (int t = 0; t < eh->nw; t++)
        eh->df[t] += tf[t] > 0;
    eh->n++;
    return 0;
}

/* The pool message of row in session sess, or -1 (a session the pool did
 * not load). Sessions are in row order (gather.c); a session's messages
 * are in position order, which rows need not follow. */
static int pool_msg(const struct pool *p, int64_t sess, int64_t row)
{
    int lo = 0, hi = p->ns;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (p->s[mid].row < sess)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo >= p->ns || p->s[lo].row != sess)
        return -1;
    const struct rsession *s = &p->s[lo];
    for (int i = s->first_msg; i < s->first_msg + s->n_msgs; i++)
        if (p->m[i].row == row)
            return i;
    return -1;
}

/* The words the most of the best turns share first, the rarer first
 * among them; ties in the order they were read. */
static int by_weight(const void *a, const void *b)
{
    const struct ent_word *x = *(const struct ent_word *const *)a;
    const struct ent_word *y = *(const struct ent_word *const *)b;
    double kx = x->idf * x->ntop, ky = y->idf * y->ntop;
    if (kx != ky)
        return kx < ky ? 1 : -1;
    return (x > y) - (x < y);
}

int entity_pass(struct cairn *h, struct pool *p, struct query *q,
                const struct cairn_recall_opts *o, int *changed)
{
    struct store_msg_text v[ENT_TOP];
    const char *texts[ENT_TOP];
    struct ent_word w[ENT_CAND];
    struct ent_word *pick[ENT_CAND];
    int df[ENT_CAND], keep[ENT_TERMS];
    double wt[ENT_TERMS];
    struct ent_hits eh = { 0 };
    struct buf expr = BUF_INIT;
    int nv = 0, nw = 0, nk = 0, rc = CAIRN_OK;
    double *msg_s = NULL;

    *changed = 0;
    memset(v, 0, sizeof v);
    if ((ENT_W_DIALOG <= 0 && ENT_W_UA <= 0) || o->budget < ENT_MIN || q->nt == 0 || !p->nu)
        return CAIRN_OK;
    const int *ord = units_by_rank(p);
    if (!ord)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    /* the lead turns of the best units that matched the question */
    for (int r = 0; r < p->nu && nv < ENT_TOP; r++) {
        const struct runit *u = &p->u[ord[r]];
        if (u->score <= 0)
            break;
        if ((p->s[u->sess].dialog ? ENT_W_DIALOG : ENT_W_UA) > 0)
            v[nv++].row = unit_head_row(p, ord[r]);
    }
    /* (a pool over unit rows has its turns unread: gather leaves a pool
     * the pass would read to the loaded path) */
    if (nv < ENT_MIN_TOP || p->pu)
        return CAIRN_OK;
    if ((rc = store_msgs_meta(h, v, nv)) || (rc = store_msgs_text(h, v, nv, ENT_READ_MAX)))
        goto out;
    for (int i = 0; i < nv; i++)
        texts[i] = v[i].text;
    if ((nw = entity_words(q, texts, nv, w, ENT_CAND)) < 0) {
        nw = 0;
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    /* only the words enough of the turns share are searched */
    int nc = 0;
    for (int i = 0; i < nw; i++) {
        if (w[i].ntop < ENT_MIN_TOP)
            continue;
        if (nc)
            buf_adds(&expr, " OR ");
        query_add_phrase(&expr, w[i].surface);
        pick[nc++] = &w[i];
    }
    if (!nc)
        goto out;
    if (expr.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    memset(df, 0, sizeof df);
    eh.nw = nc;
    eh.df = df;
    const struct store_scope scope = { o->project, o->exclude_session };
    rc = store_term_matches(h, &scope, expr.p, expr.n, nc, 0, ent_on_match, &eh);
    if (rc == ENT_TOO_MANY) {
        rc = CAIRN_OK;
        goto out;
    }
    if (rc == CAIRN_NOMEM)
        cairn__err(h, rc, "out of memory");
    if (rc)
        goto out;
    /* pick[i] is the i-th phrase: its df, then the order of weight; a word
     * of one message is only the turn it came from, a common one brings
     * everything */
    for (int i = 0; i < nc; i++) {
        pick[i]->df = df[i];
        pick[i]->idf = rank_idf((double)p->total_msgs, df[i]);
        pick[i]->last = i;              /* now: its column in eh.tf */
    }
    qsort(pick, (size_t)nc, sizeof *pick, by_weight);
    for (int i = 0; i < nc && nk < ENT_TERMS; i++) {
        if (pick[i]->df < 2 || pick[i]->idf < ENT_MIN_IDF)
            continue;
        keep[nk] = pick[i]->last;
        wt[nk++] = pick[i]->idf;
    }
    if (!nk)
        goto out;
    /* each matching pool message's BM25 over the kept words; a unit's is
     * its best message's */
    msg_s = calloc((size_t)p->nm, sizeof *msg_s);
    if (!p->ent)
        p->ent = calloc((size_t)p->nu, sizeof *p->ent);
    if (!msg_s || !p->ent) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    double avg_msg = p->total_msgs ? (double)p->total_tok / p->total_msgs : 1;
    for (int i = 0; i < eh.n; i++) {
        double tf[ENT_TERMS];
        int any = 0;
        for (int k = 0; k < nk; k++)
            any |= (tf[k] = eh.tf[(size_t)i * (size_t)nc + (size_t)keep[k]]) > 0;
        if (!any)
            continue;
        int m = pool_msg(p, eh.sess[i], eh.row[i]);
        if (m >= 0)
            msg_s[m] = rank_bm25(tf, nk, p->m[m].ntok, avg_msg, wt);
    }
    for (int u = 0; u < p->nu; u++) {
        double best = 0;
        for (int i = p->u[u].first; i <= p->u[u].last; i++)
            if (msg_s[i] > best)
                best = msg_s[i];
        p->ent[u] = best;
    }
    *changed = 1;
out:
    for (int i = 0; i < nv; i++) {
        free(v[i].ext_id);
        free(v[i].text);
    }
    for (int i = 0; i < nw; i++) {
        free(w[i].norm);
        free(w[i].surface);
    }
    free(eh.row);
    free(eh.sess);
    free(eh.tf);
    free(msg_s);
    buf_release(&expr);
    return rc;
}
