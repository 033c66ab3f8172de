/*
 * memories.c: explicit memories in recall (docs/MEMORIES.md).
 *
 * The memories a user or an assistant chose to keep are few and short, so
 * they are not indexed apart: recall reads the live ones of the question's
 * scope (at most MEM_SCAN_MAX, the most recently changed) and tokenizes
 * them with the index's tokenizer on every question. Each is scored by
 * BM25 with IDFs taken over the messages in scope and the memories
 * together, so a word common in the record weighs little here too.
 *
 * A memory is shown only above a floor (MEM_FLOOR: the share of the
 * question's weight it holds), so an unrelated question gets none; the
 * ones that pass take at most MEM_SHARE of the budget and come first in
 * the text, one block before the conversations, inside the same fence:
 *
 *     [memory #3 · preference · 2026-12-01 · myproj] two spaces, never tabs
 *     [memory #5 · fact · 2026-11-30 · contradicts #7] the API is v2
 *     [memory #7 · fact · 2026-11-20 · contradicts #5] the API is v1
 *
 * Two live memories tied by `contradicts` are shown together, each
 * flagged with the other's id, never one of them silently: the partner
 * follows the memory that passed, whatever its own score (and when it
 * cannot fit, the flag still names it).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "text/tokcount.h"
#include "text/tokenize.h"
#include "util/fence.h"
#include "util/hash.h"

void mem_pool_free(struct mem_pool *mp)
{
    for (int i = 0; i < mp->n; i++) {
        free(mp->v[i].type);
        free(mp->v[i].text);
        free(mp->v[i].scope);
        free(mp->v[i].contra);
        free(mp->v[i].vec);
        free(mp->v[i].vmodel);
    }
    free(mp->v);
    free(mp->order);
    memset(mp, 0, sizeof *mp);
}

/* "7,9" into m->contra. */
static int parse_contra(struct rmem *m, const char *s)
{
    int n = 0;
    for (const char *c = s; *c; c++)
        n += *c == ',';
    if (!*s)
        return 0;
    if (!(m->contra = malloc((size_t)(n + 1) * sizeof *m->contra)))
        return -1;
    for (char *e; *s; s = *e ? e + 1 : e) {
        long long v = strtoll(s, &e, 10);
        if (e == s)
            break;
        m->contra[m->ncontra++] = v;
    }
    return 0;
}

int mem_push(struct mem_pool *mp, int64_t id, const char *type, const char *text,
             const char *scope, int64_t created, int64_t updated, const char *contra)
{
    if (mp->n == mp->cap) {
        int nc = mp->cap ? mp->cap * 2 : 16;
        struct rmem *nv = realloc(mp->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return -1;
        mp->v = nv;
        mp->cap = nc;
    }
    struct rmem *m = &mp->v[mp->n++];
    memset(m, 0, sizeof *m);
    m->id = id;
    m->created = created;
    m->updated = updated;
    m->type = strdup(type);
    m->text = strdup(text);
    m->scope = strdup(scope);
    if (!m->type || !m->text || !m->scope || parse_contra(m, contra ? contra : ""))
        return -1;
    return 0;
}

int mem_push_vec(struct mem_pool *mp, const char *model, const float *v, int dim)
{
    struct rmem *m = &mp->v[mp->n - 1];
    if (!(m->vec = malloc((size_t)dim * sizeof *m->vec)) || !(m->vmodel = strdup(model)))
        return -1;
    memcpy(m->vec, v, (size_t)dim * sizeof *m->vec);
    m->dim = dim;
    return 0;
}

int mem_any_vec(const struct mem_pool *mp)
{
    for (int i = 0; i < mp->n; i++)
        if (mp->v[i].vec)
            return 1;
    return 0;
}

static int load_row(void *arg, const struct store_memory_row *r)
{
    if (mem_push(arg, r->id, r->type, r->text, r->scope, r->created, r->updated, r->contradicts))
        return CAIRN_NOMEM;
    /* a vector of another text (an undo, an import) is not this memory's
     * (store/memory_vec.c): keywords only until a backfill */
    if (r->vmodel && (uint64_t)r->text_hash == hash64(r->text, strlen(r->text), 0) &&
        mem_push_vec(arg, r->vmodel, r->vec, r->dim))
        return CAIRN_NOMEM;
    return 0;
}

int mem_load(struct cairn *h, const struct cairn_recall_opts *o, struct mem_pool *mp)
{
    /* expiry is by the clock, not by the question's "now" (an eval asks
     * as of a past date; a memory expired today is gone all the same) */
    int rc = store_recall_memories(h, o->project, (int64_t)time(NULL), MEM_SCAN_MAX, load_row,
                                   mp);
    if (rc == CAIRN_NOMEM)
        cairn__err(h, rc, "out of memory");
    return rc;
}

/* ---- scoring ---- */

struct tf_ctx {
    const struct query *q;
    double tf[RECALL_MAX_TERMS];
    int dl;
};

static int tf_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int colocated)
{
    struct tf_ctx *c = arg;
    (void)s;
    (void)e;
    c->dl += !colocated;        /* a compound's parts share its position */
    for (int t = 0; t < c->q->nt; t++)
        if (!c->q->t[t].stop && strlen(c->q->t[t].norm) == n && !memcmp(c->q->t[t].norm, tok, n))
            c->tf[t]++;
    return 0;
}

static int cmp_mem(const void *a, const void *b);
static int cmp_score(const void *a, const void *b);
static int cmp_cos(const void *a, const void *b);

static double cosine(const float *a, const float *b, int n)
{
    double d = 0, na = 0, nb = 0;
    for (int i = 0; i < n; i++) {
        d += (double)a[i] * b[i];
        na += (double)a[i] * a[i];
        nb += (double)b[i] * b[i];
    }
    return na > 0 && nb > 0 ? d / sqrt(na * nb) : 0;
}

/* Reciprocal-rank fusion, as rank.c fuses turns: each memory's place by
 * BM25 (those with a score) and by cosine (those with one). */
static void fuse(struct mem_pool *mp, struct rmem **ord)
{
    int n = 0;
    for (int i = 0; i < mp->n; i++)
        mp->v[i].fused = 0;
    for (int i = 0; i < mp->n; i++)
        if (mp->v[i].score > 0)
            ord[n++] = &mp->v[i];
    qsort(ord, (size_t)n, sizeof *ord, cmp_score);
    for (int i = 0; i < n; i++)
        ord[i]->fused += 1.0 / (RRF_K + i + 1);
    n = 0;
    for (int i = 0; i < mp->n; i++)
        if (mp->v[i].has_cos)
            ord[n++] = &mp->v[i];
    qsort(ord, (size_t)n, sizeof *ord, cmp_cos);
    for (int i = 0; i < n; i++)
        ord[i]->fused += 1.0 / (RRF_K + i + 1);
}

int mem_score(struct mem_pool *mp, const struct query *q, const struct pool *p, int use_time,
              const float *qv, int qdim, const char *model)
{
    double (*tf)[RECALL_MAX_TERMS] = NULL;
    int *dl = NULL, df[RECALL_MAX_TERMS] = { 0 }, rc = -1;
    double w[RECALL_MAX_TERMS] = { 0 }, wsum = 0, dlsum = 0;
    if (mp->n == 0)
        return 0;
    tf = calloc((size_t)mp->n, sizeof *tf);
    dl = calloc((size_t)mp->n, sizeof *dl);
    if (!tf || !dl)
        goto out;
    for (int i = 0; i < mp->n; i++) {
        struct tf_ctx c = { .q = q };
        const char *s = mp->v[i].text;
        if (text_tokenize(s, strlen(s), 0, tf_cb, &c))
            goto out;
        memcpy(tf[i], c.tf, sizeof c.tf);
        dl[i] = c.dl;
        dlsum += c.dl;
        for (int t = 0; t < q->nt; t++)
            df[t] += c.tf[t] > 0;
    }
    /* A word in neither the record nor the memories is a rare word the
     * memory does not hold: it weighs as one found once. */
    double n_all = (double)p->total_msgs + mp->n;
    for (int t = 0; t < q->nt; t++) {
        if (q->t[t].stop)
            continue;
        int d = q->t[t].df_msg + df[t];
        w[t] = rank_idf(n_all + 1, d > 0 ? d : 1);
        wsum += w[t];
    }
    /* the model's cosine for a memory alone (0: not measured: none) */
    struct model_policy pol;
    policy_model(model, &pol);
    for (int i = 0; i < mp->n; i++) {
        struct rmem *m = &mp->v[i];
        double held = 0;
        for (int t = 0; t < q->nt; t++)
            held += tf[i][t] > 0 ? w[t] : 0;
        m->score = rank_bm25(tf[i], q->nt, dl[i], dlsum / mp->n, w);
        m->cover = wsum > 0 ? held / wsum : 0;
        m->has_cos = qv && m->vec && m->dim == qdim && !strcmp(m->vmodel, model);
        m->cos = m->has_cos ? cosine(qv, m->vec, qdim) : 0;
        if (use_time && q->has_range)
            m->in_range = (m->updated >= q->from && m->updated < q->to) ||
                          (m->created >= q->from && m->created < q->to);
        /* the same time rule as conversations: a question about a period
         * is answered by what falls in it */
        m->pass = q->only_time ? m->in_range
                               : (m->score > 0 && m->cover > MEM_FLOOR) ||
                                 (m->has_cos && pol.gate_cosine > 0 &&
                                  m->cos >= pol.gate_cosine);
    }
    struct rmem **ord = malloc((size_t)mp->n * sizeof *ord);
    if (!ord)
        goto out;
    fuse(mp, ord);
    for (int i = 0; i < mp->n; i++)
        ord[i] = &mp->v[i];
    qsort(ord, (size_t)mp->n, sizeof *ord, cmp_mem);
    for (int i = 0; i < mp->n; i++)
        ord[i]->rank = i;
    free(ord);
    rc = 0;
out:
    free(tf);
    free(dl);
    return rc;
}

/* Newest, then the higher id, first: the last word on ties. */
static int cmp_newest(const struct rmem *x, const struct rmem *y)
{
    if (x->updated != y->updated)
        return x->updated < y->updated ? 1 : -1;
    return x->id < y->id ? 1 : x->id > y->id;
}

static int cmp_score(const void *a, const void *b)
{
    const struct rmem *x = *(struct rmem *const *)a, *y = *(struct rmem *const *)b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return cmp_newest(x, y);
}

static int cmp_cos(const void *a, const void *b)
{
    const struct rmem *x = *(struct rmem *const *)a, *y = *(struct rmem *const *)b;
    if (x->cos != y->cos)
        return x->cos < y->cos ? 1 : -1;
    return cmp_newest(x, y);
}

/* Best first: passing, in the question's period, fused, newest, id. */
static int cmp_mem(const void *a, const void *b)
{
    const struct rmem *x = *(struct rmem *const *)a, *y = *(struct rmem *const *)b;
    if (x->pass != y->pass)
        return y->pass - x->pass;
    if (x->in_range != y->in_range)
        return y->in_range - x->in_range;
    if (x->fused != y->fused)
        return x->fused < y->fused ? 1 : -1;
    return cmp_newest(x, y);
}

/* ---- packing and rendering ---- */

/* The line of memory m, its text cut to `keep` bytes (-1: whole). */
static void mem_line(const struct rmem *m, int keep, struct buf *b)
{
    char ts[16] = "undated";
    struct tm tm;
    time_t tt = (time_t)m->updated;
    if (localtime_r(&tt, &tm))
        strftime(ts, sizeof ts, "%Y-%m-%d", &tm);
    buf_printf(b, "[memory #%lld · %s · %s", (long long)m->id, m->type, ts);
    if (*m->scope) {
        buf_adds(b, " · ");
        fence_line(b, m->scope, strlen(m->scope));
    }
    for (int j = 0; j < m->ncontra; j++)
        buf_printf(b, "%s#%lld", j ? ", " : " · contradicts ", (long long)m->contra[j]);
    buf_adds(b, "] ");
    if (keep < 0) {
        buf_adds(b, m->text);
    } else {
        buf_add(b, m->text, (size_t)keep);
        buf_adds(b, "…");
    }
    buf_addc(b, '\n');
}

static int render(const struct mem_pool *mp, struct buf *b)
{
    buf_reset(b);
    for (int j = 0; j < mp->norder; j++) {
        const struct rmem *m = &mp->v[mp->order[j]];
        mem_line(m, m->picked == 2 ? m->cut_bytes : -1, b);
    }
    if (b->err)
        return -1;
    return b->n ? text_count_tokens(b->p, b->n) + 1 : 0;   /* + the blank line after it */
}

/* 1 when exclude lists "\tmemory:ID" as a line of its own. */
static int excluded(const char *exclude, int64_t id)
{
    char key[40];
    int n = snprintf(key, sizeof key, "\tmemory:%lld", (long long)id);
    for (const char *s = exclude ? strstr(exclude, key) : NULL; s; s = strstr(s + 1, key))
        if ((s == exclude || s[-1] == '\n') && (s[n] == '\n' || s[n] == '\0'))
            return 1;
    return 0;
}

/* Adds memory i whole, or cut to what is left of cap, when it fits. */
static int try_pick(struct mem_pool *mp, int i, int cap, int *used, struct buf *line)
{
    struct rmem *m = &mp->v[i];
    if (m->picked || mp->norder >= MEM_MAX_ITEMS)
        return 0;
    buf_reset(line);
    mem_line(m, -1, line);
    if (line->err)
        return -1;
    int c = text_count_tokens(line->p, line->n);
    if (*used + c > cap) {
        /* the header and the mark cost what the empty cut costs */
        buf_reset(line);
        mem_line(m, 0, line);
        int head = text_count_tokens(line->p, line->n);
        int room = cap - *used - head;
        if (line->err || room < MEM_MIN_CUT)
            return line->err ? -1 : 0;
        size_t k = text_prefix_within(m->text, strlen(m->text), room);
        if (k == 0)
            return 0;
        m->cut_bytes = (int)k;
        buf_reset(line);
        mem_line(m, (int)k, line);
        c = text_count_tokens(line->p, line->n);
        if (line->err || *used + c > cap)
            return line->err ? -1 : 0;
        m->picked = 2;
    } else {
        m->picked = 1;
    }
    mp->order[mp->norder++] = i;
    *used += c;
    return 0;
}

static int find_id(const struct mem_pool *mp, int64_t id)
{
    for (int i = 0; i < mp->n; i++)
        if (mp->v[i].id == id)
            return i;
    return -1;
}

int mem_pack(struct mem_pool *mp, int budget, const char *exclude, struct buf *b)
{
    struct buf line = BUF_INIT;
    int *ord = NULL, rc = -1, used = 1;     /* the blank line after the block */
    int cap = (int)(budget * MEM_SHARE);
    buf_reset(b);
    mp->norder = 0;
    for (int i = 0; i < mp->n; i++)
        mp->v[i].picked = 0;
    if (mp->n == 0)
        return 0;
    ord = malloc((size_t)mp->n * sizeof *ord);
    free(mp->order);
    mp->order = malloc((size_t)mp->n * sizeof *mp->order);
    if (!ord || !mp->order)
        goto out;
    for (int i = 0; i < mp->n; i++)
        ord[mp->v[i].rank] = i;
    for (int r = 0; r < mp->n && mp->norder < MEM_MAX_ITEMS; r++) {
        const struct rmem *m = &mp->v[ord[r]];
        if (!m->pass)
            break;                  /* ranked after every one that passes */
        if (excluded(exclude, m->id))
            continue;
        int before = mp->norder;
        if (try_pick(mp, ord[r], cap, &used, &line))
            goto out;
        if (mp->norder == before)
            continue;
        /* its contradicting partners, right after it, with some room of
         * their own: a conflict shown by halves misleads */
        int cap_pair = cap + (int)(cap * MEM_PAIR_EXTRA);
        for (int j = 0; j < m->ncontra; j++) {
            int k = find_id(mp, m->contra[j]);
            if (k >= 0 && !excluded(exclude, mp->v[k].id) &&
                try_pick(mp, k, cap_pair, &used, &line))
                goto out;
        }
    }
    rc = render(mp, b);
out:
    free(ord);
    buf_release(&line);
    return rc;
}

int mem_unpick_last(struct mem_pool *mp, struct buf *b)
{
    if (mp->norder > 0)
        mp->v[mp->order[--mp->norder]].picked = 0;
    return render(mp, b);
}
