/*
 * segment.c: topical segments (issue 16, multi-hop).
 *
 * The turns that answer a multi-hop question ("What activities does
 * Melanie partake in?") often match neither the question's words nor its
 * vector, and sit deep inside a session: "I'm off to go swimming with the
 * kids". The windows of rank.c give a turn its neighbours' words, two and
 * five turns each side whatever the topic; a segment is a run of turns on
 * one topic, cut where the conversation moves on, so that it can be
 * ranked as a unit of its own (rank.c seg_rank).
 *
 * Cut at query time, from the vectors the store already holds (no word of
 * the turns is read): between people, in each session of the pool, the
 * mean unit vector of the SEG_BLOCK turns before a gap is compared with
 * that of the SEG_BLOCK turns after it (TextTiling, Hearst 1997, with
 * vectors for its word counts), and a gap is cut where that similarity
 * dips by SEG_DEPTH or more below the peaks on both sides (its depth),
 * deepest first, no segment shorter than SEG_MIN turns. Each segment's
 * score is the cosine of the question to its turns' mean unit vector.
 *
 * Cost: one read of each pool turn's vector pieces (a binary search a
 * turn in the set, sorted by message) and a few dot products a turn; only
 * in hybrid recall between people, from SEG_MIN_BUDGET tokens.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"

int segment_on(int budget)
{
    /* variables: 0.0 (off) compares as a value */
    double wd = SEG_W_DENSE, wb = POLICY_GET(SEG_W_BM25), lift = SEG_LIFT;
    return (wd > 0 || wb > 0 || lift > 0) && budget >= POLICY_GET(SEG_MIN_BUDGET);
}

static double dot(const float *a, const float *b, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += (double)a[i] * b[i];
    return s;
}

static double cosine(const float *a, const float *b, int n)
{
    double aa = dot(a, a, n), bb = dot(b, b, n);
    return aa > 0 && bb > 0 ? dot(a, b, n) / sqrt(aa * bb) : 0;
}

struct gap { double depth; int at; };

static int cmp_gap(const void *a, const void *b)
{
    const struct gap *x = a, *y = b;
    if (x->depth != y->depth)
        return x->depth < y->depth ? 1 : -1;
    return (x->at > y->at) - (x->at < y->at);
}

int segment_cuts(const float *v, int n, int dim, int block, double depth, int min_len,
                 int *seg)
{
    int nseg = 0, rc = -1;
    double *sim = NULL;
    float *l = NULL, *r = NULL;
    struct gap *g = NULL;
    char *cut = NULL;
    if (n <= 0)
        return 0;
    if (block < 1)
        block = 1;
    if (min_len < 1)
        min_len = 1;
    if (n < 2 * min_len || depth <= 0) {
        for (int i = 0; i < n; i++)
            seg[i] = 0;
        return 1;
    }
    sim = malloc((size_t)(n - 1) * sizeof *sim);
    l = malloc((size_t)dim * sizeof *l);
    r = malloc((size_t)dim * sizeof *r);
    g = malloc((size_t)(n - 1) * sizeof *g);
    cut = calloc((size_t)n, 1);
    if (!sim || !l || !r || !g || !cut)
        goto out;
    /* the gap after turn i: the block before it against the block after */
    for (int i = 0; i < n - 1; i++) {
        memset(l, 0, (size_t)dim * sizeof *l);
        memset(r, 0, (size_t)dim * sizeof *r);
        for (int j = i; j > i - block && j >= 0; j--)
            for (int d = 0; d < dim; d++)
                l[d] += v[(size_t)j * (size_t)dim + (size_t)d];
        for (int j = i + 1; j <= i + block && j < n; j++)
            for (int d = 0; d < dim; d++)
                r[d] += v[(size_t)j * (size_t)dim + (size_t)d];
        sim[i] = cosine(l, r, dim);
    }
    /* depth: how far the similarity climbs on each side before it falls */
    int ng = 0;
    for (int i = 0; i < n - 1; i++) {
        double lp = sim[i], rp = sim[i];
        for (int j = i - 1; j >= 0 && sim[j] >= lp; j--)
            lp = sim[j];
        for (int j = i + 1; j < n - 1 && sim[j] >= rp; j++)
            rp = sim[j];
        /* a valley only: on a slope one side does not climb (a slope's
         * depth counted, the cuts fell every min_len turns down it) */
        double dp = (lp - sim[i]) + (rp - sim[i]);
        if (lp > sim[i] && rp > sim[i] && dp >= depth)
            g[ng++] = (struct gap){ dp, i };
    }
    qsort(g, (size_t)ng, sizeof *g, cmp_gap);
    /* cut[i]: a segment starts at turn i; deepest first, none shorter
     * than min_len turns on either side */
    for (int k = 0; k < ng; k++) {
        int at = g[k].at + 1, ok = at >= min_len && n - at >= min_len;
        for (int j = at - min_len + 1; ok && j < at + min_len; j++)
            ok = j <= 0 || j >= n || !cut[j];
        if (ok)
            cut[at] = 1;
    }
    for (int i = 0; i < n; i++) {
        nseg += i > 0 && cut[i];
        seg[i] = nseg;
    }
    rc = nseg + 1;
out:
    free(sim);
    free(l);
    free(r);
    free(g);
    free(cut);
    return rc;
}

/* The first piece of message row in the set (sorted by message), or -1. */
static long first_piece(const struct vec_set *s, int64_t row)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->msg[mid] < row)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->msg[lo] == row ? (long)lo : -1;
}

/* Message row's unit vector (the mean of its pieces' unit vectors) into
 * out[dim]; 0 when it has none (out zeroed). */
static int msg_vec(const struct vec_set *s, int64_t row, float *out)
{
    memset(out, 0, (size_t)s->dim * sizeof *out);
    long i = first_piece(s, row);
    if (i < 0)
        return 0;
    for (size_t k = (size_t)i; k < s->n && s->msg[k] == row; k++) {
        float sc = s->inv_norm[k];
        for (int d = 0; d < s->dim; d++)
            out[d] += (s->f32 ? s->vf[k * (size_t)s->dim + (size_t)d]
                              : (float)s->v8[k * (size_t)s->dim + (size_t)d]) * sc;
    }
    double nn = dot(out, out, s->dim);
    if (nn <= 0)
        return 0;
    float inv = (float)(1.0 / sqrt(nn));
    for (int d = 0; d < s->dim; d++)
        out[d] *= inv;
    return 1;
}

int segment_pool(struct cairn *h, struct pool *p, const struct dense_result *r)
{
    const struct vec_set *set = NULL;
    float *v = NULL, *c = NULL;
    int *seg = NULL, rc = CAIRN_OK;

    free(p->seg);
    free(p->seg_cos);
    p->seg = NULL;
    p->seg_cos = NULL;
    p->nseg = 0;
    if (!r || !r->qv || r->n <= 0 || !p->any_dialog || !p->nm)
        return CAIRN_OK;
    if (r->cjk >= DENSE_CJK_SHARE && !r->pol.cjk && DENSE_CJK_W <= 0)
        return CAIRN_OK;
    if ((rc = vec_set_get(h, r->model, r->qdim, &set)))
        return rc;
    if (set->dim != r->qdim || set->n == 0 || set->by_index)
        return CAIRN_OK;
    int dim = set->dim, maxn = 0;
    for (int si = 0; si < p->ns; si++)
        if (p->s[si].dialog && p->s[si].n_msgs > maxn)
            maxn = p->s[si].n_msgs;
    if (!maxn)
        return CAIRN_OK;
    p->seg = malloc((size_t)p->nm * sizeof *p->seg);
    v = malloc((size_t)maxn * (size_t)dim * sizeof *v);
    c = malloc((size_t)dim * sizeof *c);
    seg = malloc((size_t)maxn * sizeof *seg);
    if (!p->seg || !v || !c || !seg)
        goto nomem;
    int cap = 0;
    for (int i = 0; i < p->nm; i++)
        p->seg[i] = -1;
    for (int si = 0; si < p->ns; si++) {
        const struct rsession *s = &p->s[si];
        if (!s->dialog || !s->n_msgs)
            continue;
        int n = s->n_msgs;
        for (int i = 0; i < n; i++)
            msg_vec(set, p->m[s->first_msg + i].row, v + (size_t)i * (size_t)dim);
        int k = segment_cuts(v, n, dim, SEG_BLOCK, SEG_DEPTH, SEG_MIN, seg);
        if (k < 0)
            goto nomem;
        if (p->nseg + k > cap) {
            int nc = cap ? cap * 2 : 64;
            while (nc < p->nseg + k)
                nc *= 2;
            float *t = realloc(p->seg_cos, (size_t)nc * sizeof *t);
            if (!t)
                goto nomem;
            p->seg_cos = t;
            cap = nc;
        }
        /* each segment's mean unit vector against the question's */
        for (int a = 0; a < n;) {
            int b = a;
            memset(c, 0, (size_t)dim * sizeof *c);
            while (b < n && seg[b] == seg[a]) {
                for (int d = 0; d < dim; d++)
                    c[d] += v[(size_t)b * (size_t)dim + (size_t)d];
                p->seg[s->first_msg + b] = p->nseg;
                b++;
            }
            p->seg_cos[p->nseg++] = (float)(1.0 + cosine(c, r->qv, dim));
            a = b;
        }
    }
    goto out;
nomem:
    rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
    free(p->seg);
    free(p->seg_cos);
    p->seg = NULL;
    p->seg_cos = NULL;
    p->nseg = 0;
out:
    free(v);
    free(c);
    free(seg);
    return rc;
}
