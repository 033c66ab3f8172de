/*
 * notes.c: sections of Markdown vaults in recall (docs/VAULTS.md).
 *
 * The unit is a section (a heading and its text), not a file: BM25's
 * length normalisation then works on pieces of comparable size, so the
 * biggest file does not win every question by holding the most words
 * (claude-recall's finding: raw match counts let one big file win 9 of 19
 * unrelated queries). Terms are the question's (query.c: the index's own
 * tokenizer, stop words out), matched in vault_fts in one OR query with
 * per-term counts (cairn_tf), IDF taken over the sections.
 *
 * A section is shown when it holds more than NOTE_FLOOR of the question's
 * IDF weight, when it holds less of a longer question on more rare words
 * (NOTE_GATE_SHARE_MANY, NOTE_GATE_WEIGHT_MANY: it passes the gate then),
 * or when the question names its page: a title or an alias
 * (the file's name is one) written in the question, word for word. For
 * the prompt hook's gate a name counts only when it is distinctive: two
 * words or more, or one rare word (in at most NOTE_NAME_DF sections, and
 * not an everyday word of notes: text/common.c), so
 * "what did we decide about tor" fires on the page "tor" while "the design
 * of it" does not fire on a page called "Design". A rarer word of the
 * question that is one word of a page's name (NOTE_NAME_PART_DF) lets a
 * section of that page holding half of the question through the gate.
 * A section whose page's card holds none of the question's words passes
 * the share-and-weight rules only at a higher weight
 * (NOTE_GATE_WEIGHT_OFFPAGE): the words found there may be in passing.
 * A page whose sections hold nearly all of the question between them
 * (NOTE_GATE_PAGE_SHARE, NOTE_GATE_PAGE_WEIGHT) lets its section holding
 * half of it through: the page is about the question.
 *
 * Rendered in the recall's text after the memories and before the
 * conversations, inside the same fence, one block a section:
 *
 *     [note docs/Payments.md:6 · Payments Service > Keys]
 *     We chose Stripe over Braintree for the lower international fees.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "store/vault.h"
#include "text/tokcount.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/fence.h"

/* "note:" + a vault name + "/" + a path + ":" + a line */
#define PATH_MAX_NOTE 4300
/* a page name's tokens (a name is at most MD_MAX_VALUE bytes) */
#define NOTE_NAME_MAX 1024
/* pages whose names hold a word of the question: past this many, the
 * others are left out (a word of so many pages' names is no page's) */
#define NOTE_PDOCS_MAX 1024

void note_pool_free(struct note_pool *np)
{
    for (int i = 0; i < np->n; i++) {
        struct rnote *x = &np->v[i];
        free(x->shown);
        free(x->vault);
        free(x->path);
        free(x->title);
        free(x->heading);
    }
    free(np->v);
    free(np->order);
    free(np->tf_all);
    memset(np, 0, sizeof *np);
}

static struct rnote *push(struct note_pool *np, int64_t sec, int64_t doc, int ntok)
{
    if (np->n == np->cap) {
        int nc = np->cap ? np->cap * 2 : 64;
        struct rnote *nv = realloc(np->v, (size_t)nc * sizeof *nv);
        if (!nv)
            return NULL;
        np->v = nv;
        np->cap = nc;
    }
    struct rnote *x = &np->v[np->n++];
    memset(x, 0, sizeof *x);
    x->sec = sec;
    x->doc = doc;
    x->ntok = ntok;
    x->first = sec;
    x->tf = np->tf_zero;
    return x;
}

static int on_match(void *arg, int64_t sec, int64_t doc, int line, int ntok, int part,
                    const uint16_t *tf)
{
    struct note_pool *np = arg;
    size_t nt = (size_t)np->nt;
    if (np->n == np->cap) {
        /* the counts grow with the notes (the rows are pointed at once all
         * are in: matches_done) */
        size_t cap = np->cap ? (size_t)np->cap * 2 : 64;
        uint16_t *ntf = realloc(np->tf_all, cap * nt * sizeof *ntf);
        if (!ntf)
            return CAIRN_NOMEM;
        np->tf_all = ntf;
    }
    struct rnote *x = push(np, sec, doc, ntok);
    if (!x)
        return CAIRN_NOMEM;
    memcpy(np->tf_all + (size_t)(np->n - 1) * nt, tf, nt * sizeof *tf);
    x->card = line == 0;
    x->first = sec - part;
    return 0;
}

/* Each match's counts: its row of tf_all, in match order. */
static void matches_done(struct note_pool *np)
{
    for (int i = 0; i < np->n; i++)
        np->v[i].tf = np->tf_all + (size_t)i * (size_t)np->nt;
}

/* Tokens of s (whole ones, as a question's), each NUL-terminated in one
 * block: "tok\0tok\0". */
struct toks {
    char  buf[1024];
    size_t n;
    int   count;
    const char *at[64];
};

static int tok_cb(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    struct toks *t = arg;
    if (coloc)
        return 0;
    if (t->count == 64 || t->n + n + 1 > sizeof t->buf)
        return 1;
    t->at[t->count++] = t->buf + t->n;
    memcpy(t->buf + t->n, tok, n);
    t->buf[t->n + n] = 0;
    t->n += n + 1;
    return 0;
}

static void tokens(const char *s, size_t n, struct toks *t)
{
    t->n = 0;
    t->count = 0;
    text_tokenize(s, n, 1, tok_cb, t);
}

/* The question's words as one list, and the query's terms beside them. */
struct names {
    struct note_pool *np;
    const struct query *q;
    const double *df;           /* per query term: sections that hold it */
    struct toks qt;             /* the question's tokens, stop words kept */
    int ndocs;
    int64_t docs[256];          /* named pages, distinctive ones flagged */
    int distinct[256];
    /* the question's rare words (NOTE_NAME_PART_DF), as the query holds
     * them and stemmed as a name's words are ("AgentRecall" is kept whole
     * in a question, "agentrecall" in a file's name is stemmed) */
    int nrare;
    const char *rare[RECALL_MAX_TERMS];
    int rare_t[RECALL_MAX_TERMS];       /* its query term */
    char rare_stem[RECALL_MAX_TERMS][48];
    int npdocs;                 /* pages whose name holds one of them, */
    struct pdoc {
        int64_t  doc;
        uint64_t mask;          /* which of them (bit r: rare[r]) */
    } pdocs[NOTE_PDOCS_MAX];    /* sorted by doc once all are in */
};

/* 1 when the name's tokens stand in the question in a row; *distinct when
 * the name is distinctive (see the top of this file). */
static int named_in(struct names *nm, const char *name, size_t len, int *distinct)
{
    struct toks t;
    /* the name's tokens as the indexer wrote them, apart by spaces */
    t.n = 0;
    t.count = 0;
    for (size_t i = 0; i < len && t.count < 64;) {
        size_t j = i;
        while (j < len && name[j] != ' ')
            j++;
        if (j > i && t.n + (j - i) + 1 <= sizeof t.buf) {
            t.at[t.count++] = t.buf + t.n;
            memcpy(t.buf + t.n, name + i, j - i);
            t.buf[t.n + (j - i)] = 0;
            t.n += j - i + 1;
        }
        i = j + 1;
    }
    if (!t.count || t.count > nm->qt.count)
        return 0;
    int content = 0, last = -1;
    for (int i = 0; i < t.count; i++)
        if (!text_is_stopword(t.at[i], strlen(t.at[i]))) {
            content++;
            last = i;
        }
    if (!content)
        return 0;
    int found = 0;
    for (int s = 0; !found && s + t.count <= nm->qt.count; s++) {
        int k = 0;
        while (k < t.count && !strcmp(t.at[k], nm->qt.at[s + k]))
            k++;
        found = k == t.count;
    }
    if (!found)
        return 0;
    *distinct = content >= 2;
    if (content == 1 && strlen(t.at[last]) >= NOTE_NAME_MIN_LEN &&
        !text_is_common_word(t.at[last], strlen(t.at[last]))) {
        for (int i = 0; i < nm->q->nt; i++)
            if (!strcmp(nm->q->t[i].norm, t.at[last]) && nm->df[i] <= NOTE_NAME_DF)
                *distinct = 1;
    }
    return 1;
}

/* The question's rare words (bit r: rare[r]) that are a word of one of
 * the page's names (its title, an alias, its file's name, taken apart at
 * '-', '_' and '.': "002-agentrecall-readme"). */
static uint64_t names_part(struct names *nm, const char *names)
{
    char w[NOTE_NAME_MAX];
    struct toks t;
    uint64_t mask = 0;
    /* most pages hold none of the words: their names are not tokenized
     * (a stem keeps a word's first NOTE_NAME_MIN_LEN bytes) */
    int maybe = 0;
    for (int r = 0; r < nm->nrare && !maybe; r++)
        maybe = memmem(names, strlen(names), nm->rare[r], NOTE_NAME_MIN_LEN) != NULL;
    if (!maybe)
        return 0;
    for (const char *a = names; *a;) {
        size_t k = 0;
        for (; *a && *a != '\n'; a++)
            if (k < sizeof w)
                w[k++] = *a == '-' || *a == '_' || *a == '.' ? ' ' : *a;
        a += *a == '\n';
        tokens(w, k, &t);
        for (int i = 0; i < t.count; i++)
            for (int r = 0; r < nm->nrare; r++)
                if (!strcmp(t.at[i], nm->rare[r]) || !strcmp(t.at[i], nm->rare_stem[r]))
                    mask |= (uint64_t)1 << r;
    }
    return mask;
}

static int cmp_pdoc(const void *a, const void *b)
{
    const struct pdoc *x = a, *y = b;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

/* The page doc among those whose names hold a rare word, or NULL. */
static const struct pdoc *page_of(const struct names *nm, int64_t doc)
{
    struct pdoc key = { doc, 0 };
    return bsearch(&key, nm->pdocs, (size_t)nm->npdocs, sizeof *nm->pdocs, cmp_pdoc);
}

/* The words of more than NOTE_NAME_PART_DF sections that count (bit r:
 * rare[r]): those of which at least NOTE_NAME_PART_CONC of the sections
 * (df, cards included) are in pages whose names hold them. */
static uint64_t names_conc(const struct names *nm, const struct note_pool *np, const double *df)
{
    int in[RECALL_MAX_TERMS] = { 0 };
    int64_t last[RECALL_MAX_TERMS];
    uint64_t keep = 0;
    for (int r = 0; r < nm->nrare; r++)
        last[r] = -1;
    for (int i = 0; i < np->n; i++) {
        const struct rnote *x = &np->v[i];
        const struct pdoc *d = page_of(nm, x->doc);
        /* sections as df counts them: a cut one's pieces once */
        for (int r = 0; d && r < nm->nrare; r++)
            if ((d->mask >> r & 1) && x->tf[nm->rare_t[r]] && x->first != last[r]) {
                in[r]++;
                last[r] = x->first;
            }
    }
    for (int r = 0; r < nm->nrare; r++) {
        double n = df[nm->rare_t[r]];
        if (n > NOTE_NAME_PART_DF && in[r] >= NOTE_NAME_PART_CONC * n)
            keep |= (uint64_t)1 << r;
    }
    return keep;
}

static int on_name(void *arg, int64_t doc, const char *names)
{
    struct names *nm = arg;
    int named = 0, distinct = 0, d;
    if (nm->ndocs == 256)
        return 0;
    for (const char *a = names ? names : ""; *a;) {
        const char *nl = strchr(a, '\n');
        size_t n = nl ? (size_t)(nl - a) : strlen(a);
        if (n && named_in(nm, a, n, &d)) {
            named = 1;
            distinct |= d;
        }
        a += n + (nl != NULL);
    }
    /* an everyday name is no name: "tokens" in a question is not about
     * the page TOKENS.md more than about any other */
    if (named && distinct) {
        nm->docs[nm->ndocs] = doc;
        nm->distinct[nm->ndocs++] = distinct;
        return 0;
    }
    uint64_t mask;
    if (nm->nrare && nm->npdocs < NOTE_PDOCS_MAX && names && (mask = names_part(nm, names))) {
        nm->pdocs[nm->npdocs++] = (struct pdoc){ doc, mask };
    }
    return 0;
}

/* The gate's heading rule (NOTE_GATE_HEAD): the question's rare words,
 * and the sections whose headings are read for them. */
struct heads {
    const struct query *q;
    struct note_pool *np;
    int nrare;
    int rare_t[RECALL_MAX_TERMS];       /* its query term */
    char rare_stem[RECALL_MAX_TERMS][48];
    int idx[NOTE_HEAD_READS];           /* the sections read, in np */
    int opened;
};

/* As tok_cb, a compound's parts kept too ("STORE-vec": "vec"). */
static int tok_all_cb(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    return tok_cb(arg, tok, n, start, end, 0);
}

static int on_heading(void *arg, int i, const char *heading)
{
    struct heads *hs = arg;
    struct rnote *x = &hs->np->v[hs->idx[i]];
    struct toks t = { .n = 0, .count = 0 };
    /* as the index tokenizes it (for_query 0): whole tokens only missed
     * a compound's part ("-vec" in "STORE-vec", dev query q012) */
    text_tokenize(heading, strlen(heading), 0, tok_all_cb, &t);
    for (int r = 0; r < hs->nrare && !x->gate; r++) {
        int qt = hs->rare_t[r];
        if (!x->tf[qt])         /* a word of its text too, not of a parent's only */
            continue;
        for (int k = 0; k < t.count; k++)
            if (!strcmp(t.at[k], hs->q->t[qt].norm) || !strcmp(t.at[k], hs->rare_stem[r])) {
                x->gate = x->pass = 1;
                hs->opened = 1;
                break;
            }
    }
    return 0;
}

/* A section holding NOTE_GATE_SHARE of the question whose heading path
 * holds one of its rare words passes the gate (policy.h): the best
 * NOTE_HEAD_READS such sections (np in rank order) have their headings
 * read; none when the question has no rare word. *opened: one passed. */
static int head_gate(struct cairn *h, const struct query *q, const double *idf, const int *num,
                     double unit, double gtotal, struct note_pool *np, int *opened)
{
    struct heads hs;
    int64_t secs[NOTE_HEAD_READS];
    int n = 0;
    *opened = 0;
    if (NOTE_GATE_HEAD <= 0 || gtotal <= 0 || unit <= 0)
        return CAIRN_OK;
    hs.q = q;
    hs.np = np;
    hs.nrare = 0;
    hs.opened = 0;
    for (int t = 0; t < q->nt; t++) {
        const char *w = q->t[t].norm;
        size_t len = strlen(w);
        if (q->t[t].stop || num[t] || len < NOTE_NAME_MIN_LEN || text_is_common_word(w, len) ||
            idf[t] / unit < NOTE_GATE_HEAD)
            continue;
        struct toks st;
        tokens(w, len, &st);
        snprintf(hs.rare_stem[hs.nrare], sizeof hs.rare_stem[0], "%s",
                 st.count == 1 ? st.at[0] : "");
        hs.rare_t[hs.nrare++] = t;
    }
    for (int i = 0; i < np->n && hs.nrare && n < NOTE_HEAD_READS; i++) {
        const struct rnote *x = &np->v[i];
        int holds = 0;
        if (x->card || x->gate || x->gheld / gtotal < NOTE_GATE_SHARE)
            continue;
        for (int r = 0; r < hs.nrare && !holds; r++)
            holds = x->tf[hs.rare_t[r]] > 0;
        if (!holds)
            continue;
        hs.idx[n] = i;
        secs[n++] = x->sec;
    }
    if (!n)
        return CAIRN_OK;
    int rc = store_vault_headings(h, secs, n, on_heading, &hs);
    *opened = hs.opened;
    return rc;
}

static int by_rank(const void *a, const void *b)
{
    const struct rnote *x = a, *y = b;
    if (x->pass != y->pass)
        return y->pass - x->pass;
    if (x->named != y->named)
        return y->named - x->named;
    if (x->fused != y->fused)          /* 0 without vectors */
        return x->fused < y->fused ? 1 : -1;
    if (x->held != y->held)
        return x->held < y->held ? 1 : -1;
    if (x->card != y->card)
        return x->card - y->card;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return x->sec < y->sec ? -1 : x->sec > y->sec;
}

/* By page, then section: a cut section's pieces stay in a row (names_conc
 * counts them once). */
static int by_doc(const void *a, const void *b)
{
    const struct rnote *x = a, *y = b;
    if (x->doc != y->doc)
        return x->doc < y->doc ? -1 : 1;
    return x->sec < y->sec ? -1 : x->sec > y->sec;
}

/* The baseline: the matching sections summed into their files, each file
 * one unit scored by BM25 over files. Nothing else: no names, no gate. */
static int rank_files(struct cairn *h, const struct query *q, struct note_pool *np)
{
    int64_t docs, tok;
    int rc = store_vault_doc_totals(h, &docs, &tok);
    if (rc || !np->n)
        return rc;
    qsort(np->v, (size_t)np->n, sizeof *np->v, by_doc);
    int k = 0;
    for (int i = 0; i < np->n; i++) {
        struct rnote *x = &np->v[i];
        if (x->card)           /* the file's bytes only */
            continue;
        if (k && np->v[k - 1].doc == x->doc) {
            struct rnote *d = &np->v[k - 1];
            for (int t = 0; t < q->nt; t++)
                d->tf[t] = (uint16_t)(d->tf[t] + x->tf[t] < 65535 ? d->tf[t] + x->tf[t] : 65535);
            d->ntok += x->ntok;
            continue;
        }
        np->v[k] = *x;
        np->v[k++].whole = 1;
    }
    np->n = k;
    double df[RECALL_MAX_TERMS] = { 0 }, idf[RECALL_MAX_TERMS], tf[RECALL_MAX_TERMS];
    for (int i = 0; i < np->n; i++)
        for (int t = 0; t < q->nt; t++)
            df[t] += np->v[i].tf[t] > 0;
    for (int t = 0; t < q->nt; t++)
        idf[t] = rank_idf((double)docs, df[t]);
    for (int i = 0; i < np->n; i++) {
        struct rnote *x = &np->v[i];
        for (int t = 0; t < q->nt; t++)
            tf[t] = x->tf[t];
        x->score = rank_bm25(tf, q->nt, x->ntok, docs ? (double)tok / (double)docs : 1, idf);
        x->pass = x->score > 0;
    }
    qsort(np->v, (size_t)np->n, sizeof *np->v, by_rank);
    for (int i = 0; i < np->n; i++)
        np->v[i].rank = i;
    return CAIRN_OK;
}

int notes_want_dense(struct cairn *h, int *want)
{
    return store_vault_vec_any(h, want);
}

/* Every section's cosine with the question, by section id, and the best
 * NOTE_DENSE_TOPK of them. */
struct dense_sec {
    int64_t sec, doc;
    int     ntok;
    double  cos;
};
struct dense_scan {
    const struct notes_dense *nd;
    double qnorm;
    double sum, sum2;             /* of the cosines: their mean and spread */
    struct dense_sec *all;
    size_t n, cap;
};

static int on_vec(void *arg, int64_t sec, int64_t doc, int ntok, const void *v8)
{
    struct dense_scan *ds = arg;
    const int8_t *v = v8;
    double dot = 0, nn = 0;
    for (int i = 0; i < ds->nd->dim; i++) {
        dot += (double)ds->nd->qv[i] * v[i];
        nn += (double)v[i] * v[i];
    }
    if (ds->n == ds->cap) {
        size_t nc = ds->cap ? ds->cap * 2 : 256;
        struct dense_sec *na = realloc(ds->all, nc * sizeof *na);
        if (!na)
            return CAIRN_NOMEM;
        ds->all = na;
        ds->cap = nc;
    }
    /* int8 with one scale: the scale cancels in the cosine */
    double c = nn > 0 && ds->qnorm > 0 ? dot / (sqrt(nn) * ds->qnorm) : 0;
    ds->all[ds->n++] = (struct dense_sec){ sec, doc, ntok, c };
    ds->sum += c;
    ds->sum2 += c * c;
    return 0;
}

static int by_cos(const void *a, const void *b)
{
    const struct dense_sec *x = a, *y = b;
    if (x->cos != y->cos)
        return x->cos < y->cos ? 1 : -1;
    return x->sec < y->sec ? -1 : x->sec > y->sec;
}

/* The gate's weight for a section its cosine vouches for: NOTE_GATE_WEIGHT
 * less NOTE_GATE_COS_Z for each standard deviation its cosine stands above
 * the mean of the question's cosines with every section, never under
 * NOTE_GATE_WEIGHT_COS. An everyday prompt's best cosines stand little
 * above the rest of the vault's, however high they are (policy.h). */
static double cos_need(const struct note_pool *np, double cos)
{
    if (NOTE_GATE_COS_Z <= 0)
        return NOTE_GATE_WEIGHT_COS;
    double z = np->cos_sd > 0 ? (cos - np->cos_mean) / np->cos_sd : 0;
    return fmax(NOTE_GATE_WEIGHT_COS, NOTE_GATE_WEIGHT - NOTE_GATE_COS_Z * z);
}

/* A matched section's id and its place in the pool. */
struct sec_ix {
    int64_t sec;
    int     i;
};

static int by_sec_ix(const void *a, const void *b)
{
    const struct sec_ix *x = a, *y = b;
    return x->sec < y->sec ? -1 : x->sec > y->sec;
}

/* The sections' cosines into np: each matched section gets its own, and
 * the best NOTE_DENSE_TOPK join the pool when no word of the question
 * found them (a paraphrase: "come back on its own after a crash" for a
 * page on restart policies). */
static int dense_notes(struct cairn *h, const struct notes_dense *nd, struct note_pool *np)
{
    struct dense_scan ds = { nd, 0, 0, 0, NULL, 0, 0 };
    int rc;
    for (int i = 0; i < nd->dim; i++)
        ds.qnorm += (double)nd->qv[i] * nd->qv[i];
    ds.qnorm = sqrt(ds.qnorm);
    if ((rc = store_vault_vectors(h, nd->model, nd->dim, on_vec, &ds))) {
        free(ds.all);
        return rc == CAIRN_NOMEM ? cairn__err(h, rc, "out of memory") : rc;
    }
    if (!ds.n)
        return CAIRN_OK;
    np->cos_mean = ds.sum / (double)ds.n;
    double var = ds.sum2 / (double)ds.n - np->cos_mean * np->cos_mean;
    np->cos_sd = var > 0 ? sqrt(var) : 0;
    /* each matched section's cosine: the matches sorted by id, and one
     * walk of the scan looking each vector's section up among them (a
     * walk of the scan for each match was a quarter of a hook's
     * instructions with vectors on 1,000 notes: branch vault26,
     * docs/VAULTS.md) */
    if (np->n) {
        struct sec_ix *ix = malloc((size_t)np->n * sizeof *ix);
        if (!ix) {
            free(ds.all);
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        }
        for (int i = 0; i < np->n; i++)
            ix[i] = (struct sec_ix){ np->v[i].sec, i };
        qsort(ix, (size_t)np->n, sizeof *ix, by_sec_ix);
        for (size_t k = 0; k < ds.n; k++) {
            struct sec_ix key = { ds.all[k].sec, 0 };
            const struct sec_ix *m = bsearch(&key, ix, (size_t)np->n, sizeof *ix, by_sec_ix);
            /* a section is matched once; its rows in a run all the same */
            while (m && m > ix && m[-1].sec == key.sec)
                m--;
            for (; m && m < ix + np->n && m->sec == key.sec; m++) {
                np->v[m->i].has_cos = 1;
                np->v[m->i].cos = ds.all[k].cos;
            }
        }
        free(ix);
    }
    /* the best NOTE_DENSE_TOPK in by_cos's order (a total order: ties by
     * section id), kept in a row at the front by insertion: no sort of
     * all of them. Position k is read before anything is written at it. */
    size_t nbest = 0;
    for (size_t k = 0; k < ds.n && NOTE_DENSE_TOPK > 0; k++) {
        if (nbest == NOTE_DENSE_TOPK && by_cos(&ds.all[k], &ds.all[nbest - 1]) >= 0)
            continue;
        struct dense_sec c = ds.all[k];
        size_t j = nbest < NOTE_DENSE_TOPK ? nbest++ : nbest - 1;
        for (; j > 0 && by_cos(&c, &ds.all[j - 1]) < 0; j--)
            ds.all[j] = ds.all[j - 1];
        ds.all[j] = c;
    }
    int base = np->n;
    for (size_t k = 0; k < nbest; k++) {
        int found = 0;
        for (int i = 0; i < base && !found; i++)
            found = np->v[i].sec == ds.all[k].sec;
        if (found)
            continue;
        struct rnote *x = push(np, ds.all[k].sec, ds.all[k].doc, ds.all[k].ntok);
        if (!x) {
            free(ds.all);
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        }
        x->has_cos = 1;
        x->cos = ds.all[k].cos;
    }
    free(ds.all);
    return CAIRN_OK;
}

/* ---- the link lift (NOTE_LINK_LIFT) ---- */

/* The pages linked from the best ones or linking to them. */
struct links {
    int64_t top[NOTE_LINK_TOP];
    int     ntop;
    char  **toplinks;             /* the top pages' links, as names, sorted */
    size_t  ntl, captl;
    char  **topnames;             /* the top pages' names, sorted */
    size_t  ntn, captn;
    int64_t *near;                /* the pages lifted */
    size_t  nn, capn;
    int     nomem;
};

static int is_top(const struct links *l, int64_t doc)
{
    for (int i = 0; i < l->ntop; i++)
        if (l->top[i] == doc)
            return 1;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_str(struct links *l, char ***v, size_t *n, size_t *cap, const char *s, size_t len)
{
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 32;
        char **nv = nc <= 4096 ? realloc(*v, nc * sizeof *nv) : NULL;
        if (!nv) {
            l->nomem |= nc <= 4096;
            return;
        }
        *v = nv;
        *cap = nc;
    }
    char *c = strndup(s, len);
    if (!c) {
        l->nomem = 1;
        return;
    }
    (*v)[(*n)++] = c;
}

static int has_str(char **v, size_t n, const char *s, size_t len)
{
    char key[NOTE_NAME_MAX];
    if (!n || len >= sizeof key)
        return 0;
    memcpy(key, s, len);
    key[len] = 0;
    const char *k = key;
    return bsearch(&k, v, n, sizeof *v, cmp_str) != NULL;
}

static void add_near(struct links *l, int64_t doc)
{
    for (size_t i = 0; i < l->nn; i++)
        if (l->near[i] == doc)
            return;
    if (l->nn == l->capn) {
        size_t nc = l->capn ? l->capn * 2 : 32;
        int64_t *nv = realloc(l->near, nc * sizeof *nv);
        if (!nv) {
            l->nomem = 1;
            return;
        }
        l->near = nv;
        l->capn = nc;
    }
    l->near[l->nn++] = doc;
}

/* What to do with each name of a list (a name a line). */
enum { LINE_TO_TOPLINKS, LINE_TO_TOPNAMES, LINE_IN_TOPLINKS, LINE_IN_TOPNAMES };

static void each_line(struct links *l, const char *s, int what, int64_t doc)
{
    for (const char *a = s ? s : "", *nl; *a; a += (nl ? (size_t)(nl - a) + 1 : strlen(a))) {
        nl = strchr(a, '\n');
        size_t n = nl ? (size_t)(nl - a) : strlen(a);
        if (what == LINE_TO_TOPLINKS)
            add_str(l, &l->toplinks, &l->ntl, &l->captl, a, n);
        else if (what == LINE_TO_TOPNAMES)
            add_str(l, &l->topnames, &l->ntn, &l->captn, a, n);
        else if (has_str(what == LINE_IN_TOPLINKS ? l->toplinks : l->topnames,
                         what == LINE_IN_TOPLINKS ? l->ntl : l->ntn, a, n))
            add_near(l, doc);
    }
}

/* A page's links as names (text_name_tokens, as vault_docs.names), then
 * each_line. */
static void each_link(struct links *l, const char *links, int what, int64_t doc)
{
    struct buf b = BUF_INIT;
    for (const char *a = links ? links : "", *nl; *a;
         a += (nl ? (size_t)(nl - a) + 1 : strlen(a))) {
        nl = strchr(a, '\n');
        text_name_tokens(a, nl ? (size_t)(nl - a) : strlen(a), &b);
    }
    buf_addc(&b, 0);
    l->nomem |= b.err;
    if (!b.err)
        each_line(l, b.p, what, doc);
    buf_release(&b);
}

/* Pass 1: the top pages' links. */
static int on_top_links(void *arg, int64_t doc, const char *links)
{
    struct links *l = arg;
    if (is_top(l, doc))
        each_link(l, links, LINE_TO_TOPLINKS, doc);
    return 0;
}

/* Pass 2: the top pages' names, and the pages they link to. */
static int on_top_names(void *arg, int64_t doc, const char *names)
{
    struct links *l = arg;
    each_line(l, names, is_top(l, doc) ? LINE_TO_TOPNAMES : LINE_IN_TOPLINKS, doc);
    return 0;
}

/* Pass 3: the pages that link to a top page. */
static int on_back_links(void *arg, int64_t doc, const char *links)
{
    struct links *l = arg;
    if (!is_top(l, doc))
        each_link(l, links, LINE_IN_TOPNAMES, doc);
    return 0;
}

/* The sections of pages linked from the NOTE_LINK_TOP best pages (or
 * linking to them) weigh 1 + NOTE_LINK_LIFT times what they hold: a page
 * of a topic links its neighbours (docker's `image prune` page links
 * `system prune`). Order and showing only: the gate is decided before. */
int notes_link_lift(struct cairn *h, struct note_pool *np, double lw)
{
    double total = np->total;
    struct links l;
    int rc = CAIRN_OK;
    memset(&l, 0, sizeof l);
    for (int i = 0; i < np->n && l.ntop < NOTE_LINK_TOP && np->v[i].pass; i++)
        if (!is_top(&l, np->v[i].doc))
            l.top[l.ntop++] = np->v[i].doc;
    if (!l.ntop || total <= 0)
        return CAIRN_OK;
    if ((rc = store_vault_links(h, on_top_links, &l)))
        goto out;
    qsort(l.toplinks, l.ntl, sizeof *l.toplinks, cmp_str);
    if ((rc = store_vault_names(h, on_top_names, &l)))
        goto out;
    qsort(l.topnames, l.ntn, sizeof *l.topnames, cmp_str);
    if ((rc = store_vault_links(h, on_back_links, &l)))
        goto out;
    if (l.nomem) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < np->n; i++) {
        struct rnote *x = &np->v[i];
        int near = 0;
        for (size_t k = 0; k < l.nn && !near; k++)
            near = l.near[k] == x->doc;
        if (!near)
            continue;
        double lift = lw * x->held;
        x->held += lift;
        if (np->dense)
            x->fused += lift / total;
        x->pass |= x->held / total > NOTE_FLOOR;
        x->linked = 1;
    }
    qsort(np->v, (size_t)np->n, sizeof *np->v, by_rank);
out:
    for (size_t i = 0; i < l.ntl; i++)
        free(l.toplinks[i]);
    for (size_t i = 0; i < l.ntn; i++)
        free(l.topnames[i]);
    free(l.toplinks);
    free(l.topnames);
    free(l.near);
    return rc;
}

int notes_rank(struct cairn *h, const struct query *q, int files, const struct notes_dense *nd,
               struct note_pool *np)
{
    struct buf expr = BUF_INIT;
    struct names *nm = NULL;
    double df[RECALL_MAX_TERMS] = { 0 }, idf[RECALL_MAX_TERMS] = { 0 }, total = 0;
    int any = 0, rc;
    memset(np, 0, sizeof *np);
    if ((rc = store_vault_any(h, &any)) || !any)
        return rc;
    if ((rc = store_vault_totals(h, &np->nsec, &np->tok, &np->nwhole)))
        return rc;
    if (q->nt) {
        query_match_expr(q, &expr);
        if (expr.err) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        np->nt = q->nt;                        /* <= RECALL_MAX_TERMS */
        rc = store_vault_matches(h, expr.p, expr.n, q->nt, on_match, np);
        matches_done(np);
        if (rc) {
            if (rc == CAIRN_NOMEM)
                cairn__err(h, rc, "out of memory");
            goto out;
        }
    }
    if (files) {
        rc = rank_files(h, q, np);
        goto out;
    }
    if (nd && (rc = dense_notes(h, nd, np)))
        goto out;
    /* a word's sections, a cut one's pieces once (md_split): cutting a
     * long page does not make its words commoner. The matches come in id
     * order, a section's pieces in a row; a row the dense search added
     * matched no word. */
    int64_t last[RECALL_MAX_TERMS];
    for (int t = 0; t < q->nt; t++)
        last[t] = -1;
    for (int i = 0; i < np->n; i++)
        for (int t = 0; t < q->nt; t++)
            if (np->v[i].tf[t] && np->v[i].first != last[t]) {
                df[t]++;
                last[t] = np->v[i].first;
            }
    double nwhole = (double)np->nwhole;
    int content = 0;
    for (int t = 0; t < q->nt; t++)
        content += !q->t[t].stop;
    for (int t = 0; t < q->nt; t++) {
        idf[t] = rank_idf(nwhole, df[t]);
        /* the share is of the content words, unless there are none */
        if (!q->t[t].stop || !content)
            total += idf[t] > 0 ? idf[t] : rank_idf(nwhole, 1);
    }
    /* pages the question names: their best section, else their first */
    if (!(nm = calloc(1, sizeof *nm))) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    nm->np = np;
    nm->q = q;
    nm->df = df;
    tokens(q->text, strlen(q->text), &nm->qt);
    double avgdl = np->nsec ? (double)np->tok / (double)np->nsec : 1;
    /* the gate's share and weight leave out a number found in more than
     * NOTE_GATE_NUM_DF sections: "line 12", "3 times" name no topic, and a
     * list of dated entries holds every such number ("fix the typo in the
     * function name on line 12" on OpenBLAS's contributors); "5432" in a
     * few sections still counts */
    int num[RECALL_MAX_TERMS] = { 0 };
    double gtotal = 0;
    for (int t = 0; t < q->nt; t++) {
        const char *c = q->t[t].norm;
        while (*c >= '0' && *c <= '9')
            c++;
        num[t] = NOTE_GATE_NUM_DF > 0 && !*c && df[t] > NOTE_GATE_NUM_DF;
        if ((!q->t[t].stop || !content) && !num[t])
            gtotal += idf[t] > 0 ? idf[t] : rank_idf(nwhole, 1);
    }
    double unit = log(2.0 + nwhole);
    /* an everyday word of the question (common.c) names no page by the
     * card, and counts less in what a section holds for the gate: in a
     * small vault "test" or "api" is as rare as a topic (policy.h) */
    double gw[RECALL_MAX_TERMS];
    int everyday[RECALL_MAX_TERMS];
    for (int t = 0; t < q->nt; t++) {
        everyday[t] = text_is_common_word(q->t[t].norm, strlen(q->t[t].norm));
        gw[t] = num[t] ? 0 : everyday[t] ? NOTE_GATE_EVERYDAY_W : 1;
    }
    /* the question's rare words, for the pages whose names hold one: a
     * content word of NOTE_NAME_MIN_LEN bytes or more, not an everyday one,
     * in at most NOTE_NAME_PART_DF sections */
    for (int t = 0; t < q->nt && NOTE_NAME_PART_DF > 0; t++) {
        const char *w = q->t[t].norm;
        size_t n = strlen(w);
        if (q->t[t].stop || df[t] < 1 || n < NOTE_NAME_MIN_LEN || text_is_common_word(w, n) ||
            (df[t] > NOTE_NAME_PART_DF && NOTE_NAME_PART_CONC <= 0))
            continue;
        struct toks st;
        tokens(w, n, &st);
        snprintf(nm->rare_stem[nm->nrare], sizeof nm->rare_stem[0], "%s",
                 st.count == 1 ? st.at[0] : "");
        nm->rare_t[nm->nrare] = t;
        nm->rare[nm->nrare++] = w;
    }
    if ((rc = store_vault_names(h, on_name, nm)))
        goto out;
    qsort(nm->pdocs, (size_t)nm->npdocs, sizeof *nm->pdocs, cmp_pdoc);
    for (int i = 0; i < np->n; i++) {
        struct rnote *x = &np->v[i];
        double tf[RECALL_MAX_TERMS], held = 0;
        for (int t = 0; t < q->nt; t++) {
            tf[t] = x->tf[t];
            if (x->tf[t] && (!q->t[t].stop || !content))
                held += idf[t];
        }
        x->score = rank_bm25(tf, q->nt, x->ntok, avgdl, idf);
        x->share = total > 0 ? held / total : 0;
        x->weight = held / unit;
    }
    /* what each section holds of the question with its page's card (the
     * page's names and path): a section is a bounded piece of text, so a
     * long page holding every common word does not pass by its length */
    if (np->n) {
        qsort(np->v, (size_t)np->n, sizeof *np->v, by_doc);
        for (int a = 0, b; a < np->n; a = b) {
            const struct rnote *card = NULL;
            for (b = a; b < np->n && np->v[b].doc == np->v[a].doc; b++)
                if (np->v[b].card)
                    card = &np->v[b];
            double best[RECALL_MAX_TERMS] = { 0 }, page = 0;
            for (int i = a; i < b; i++) {
                struct rnote *x = &np->v[i];
                /* a word counts in full in the card or in a section of
                 * average length or less, and less in a longer one unless
                 * it recurs (BM25's saturation, against a single mention):
                 * a changelog holds every common word once */
                double len = 1 - BM25_B + BM25_B * x->ntok / (avgdl > 0 ? avgdl : 1);
                x->held = x->gheld = x->gfull = 0;
                x->oncard = 0;
                for (int t = 0; t < q->nt; t++) {
                    if (q->t[t].stop && content)
                        continue;
                    double f = x->tf[t] * (BM25_K1 + 1) / (x->tf[t] + BM25_K1 * len);
                    if (card && card->tf[t]) {
                        f = 1;
                        x->oncard |= !num[t] && idf[t] / unit >= NOTE_GATE_CARD_W &&
                                     (NOTE_GATE_CARD_EVERYDAY || !everyday[t]);
                    }
                    double g = gw[t] * idf[t] * (f < 1 ? f : 1);
                    x->held += idf[t] * (f < 1 ? f : 1);
                    x->gheld += g;
                    if (!num[t])
                        x->gfull += idf[t] * (f < 1 ? f : 1);
                    best[t] = fmax(best[t], g);
                }
            }
            /* what the page holds of the question across its sections,
             * for the page rule of the gate (NOTE_GATE_PAGE_*) */
            for (int t = 0; t < q->nt; t++)
                page += best[t];
            for (int i = a; i < b; i++)
                np->v[i].pheld = page;
        }
    }
    /* which of the words count: a rare one (NOTE_NAME_PART_DF) always; a
     * commoner one when at least NOTE_NAME_PART_CONC of the sections that
     * hold it are in the pages whose names hold it: the word is the topic
     * of those pages ("openblas" in OpenBLAS's usage notes, 27 of its 43
     * sections), not a word of every page ("push" in 10 of 101 sections
     * of pages named by it) */
    uint64_t keep = 0;
    for (int r = 0; r < nm->nrare; r++)
        if (df[nm->rare_t[r]] <= NOTE_NAME_PART_DF)
            keep |= (uint64_t)1 << r;
    if (NOTE_NAME_PART_CONC > 0 && nm->npdocs)
        keep |= names_conc(nm, np, df);
    for (int i = 0; i < np->n && keep; i++) {
        const struct pdoc *d = page_of(nm, np->v[i].doc);
        np->v[i].part = d && (d->mask & keep);
    }
    for (int k = 0; k < nm->ndocs; k++) {
        struct rnote *best = NULL;
        for (int i = 0; i < np->n; i++)
            if (np->v[i].doc == nm->docs[k] && !np->v[i].card &&
                (!best || np->v[i].score > best->score))
                best = &np->v[i];
        if (!best) {
            int64_t sec;
            int ntok;
            if ((rc = store_vault_first_section(h, nm->docs[k], &sec, &ntok)))
                goto out;
            if (!sec)
                continue;
            if (!(best = push(np, sec, nm->docs[k], ntok))) {
                rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                goto out;
            }
        }
        best->named = 1;
        best->gate |= nm->distinct[k];
    }
    for (int i = 0; i < np->n; i++) {
        struct rnote *x = &np->v[i];
        double held = total > 0 ? x->held / total : 0;
        /* the gate's share and weight (numbers aside, above) */
        double share = gtotal > 0 ? x->gheld / gtotal : 0, weight = x->gheld / unit;
        x->pass = x->named || held > NOTE_FLOOR;
        /* a page whose names hold none of the question's words needs more
         * weight: its words may be the question's in passing (policy.h) */
        double need = x->oncard ? NOTE_GATE_WEIGHT
                                : fmax(NOTE_GATE_WEIGHT, NOTE_GATE_WEIGHT_OFFPAGE);
        x->gate |= share >= NOTE_GATE_SHARE && weight >= need;
        /* a section of a page whose name holds one of the question's rare
         * words, holding half of the question: "how do I install
         * AgentRecall with npx?" and seeds/002-agentrecall-readme.md (its
         * words weigh 1.44 there, under NOTE_GATE_WEIGHT: a short
         * question) */
        if (x->part && !x->card && share >= NOTE_GATE_SHARE)
            x->gate = x->pass = 1;
        /* a page whose sections hold nearly all of the question between
         * them, on about two rare words, is about it though no one section
         * weighs enough: its sections holding half of the question pass
         * (a page's section on one detail holds two of the words, its
         * other sections the rest; dev query q019, policy.h) */
        if (NOTE_GATE_PAGE_SHARE > 0 && !x->card && gtotal > 0 && share >= NOTE_GATE_SHARE &&
            x->pheld / gtotal >= NOTE_GATE_PAGE_SHARE && x->pheld / unit >= NOTE_GATE_PAGE_WEIGHT)
            x->gate = x->pass = 1;
        /* a longer question is answered by a section holding less of it
         * on more rare words ("the intended layer order from the original
         * architecture sketch, before masking moved"): shown and gated;
         * the everyday prompts' best sections hold common words, so
         * their weight stays low at this share (docs/VAULTS.md) */
        if (NOTE_GATE_SHARE_MANY > 0 && share >= NOTE_GATE_SHARE_MANY &&
            weight >= fmax(NOTE_GATE_WEIGHT_MANY, need))
            x->gate = x->pass = 1;
        if (!nd || !x->has_cos)
            continue;
        /* with vectors: a section close in meaning passes, and the order
         * is what it holds of the question and its cosine together */
        x->fused = held + NOTE_W_DENSE * x->cos;
        x->pass |= x->cos >= NOTE_DENSE_FLOOR;
        /* a cosine alone does not open the gate (dev set: the must-not-fire
         * prompts reach 0.75, above every right page), but it vouches for
         * a section that holds the question's share on fewer rare words,
         * when its vector saw most of it: the vector is of the section's
         * opening (~128 tokens), and in a longer one the question's words
         * may stand far past it; the fewer rare words it holds, the
         * further its cosine must stand above the question's cosines
         * with the rest of the vault (cos_need) */
        /* (every word whole: the cosine says the section is about the
         * question, so its everyday words are not in passing) */
        double cshare = gtotal > 0 ? x->gfull / gtotal : 0, cweight = x->gfull / unit;
        x->gate |= nd->gate_cosine > 0 && x->cos >= nd->gate_cosine - NOTE_GATE_COS_BELOW &&
                   (NOTE_GATE_COS_MAXTOK <= 0 || x->ntok <= NOTE_GATE_COS_MAXTOK) &&
                   cshare >= NOTE_GATE_SHARE && cweight >= cos_need(np, x->cos);
    }
    np->dense = nd != NULL;
    if (np->n)
        qsort(np->v, (size_t)np->n, sizeof *np->v, by_rank);
    int opened = 0;
    if (np->n && (rc = head_gate(h, q, idf, num, unit, gtotal, np, &opened)))
        goto out;
    if (opened)
        qsort(np->v, (size_t)np->n, sizeof *np->v, by_rank);
    np->total = total;
    if (NOTE_LINK_LIFT > 0 && (rc = notes_link_lift(h, np, NOTE_LINK_LIFT)))
        goto out;
    for (int i = 0; i < np->n; i++)
        np->v[i].rank = i;
out:
    free(nm);
    buf_release(&expr);
    return rc;
}

/* "\tnote:VAULT/PATH:LINE": the message id of a note (the hook's "never
 * twice" list names it so). */
static void note_id(const struct rnote *x, char *out, size_t n)
{
    snprintf(out, n, "note:%s/%s:%d", x->vault, x->path, x->line);
}

static int excluded(const char *exclude, const struct rnote *x)
{
    char key[PATH_MAX_NOTE];
    key[0] = '\t';
    note_id(x, key + 1, sizeof key - 1);
    size_t n = strlen(key);
    for (const char *s = exclude ? strstr(exclude, key) : NULL; s; s = strstr(s + 1, key))
        if ((s == exclude || s[-1] == '\n') && (s[n] == '\n' || s[n] == '\0'))
            return 1;
    return 0;
}

/* The header line of note x, its names on one line (fence_line). */
static void header(const struct rnote *x, struct buf *b)
{
    char at[32];
    buf_adds(b, "[note ");
    fence_line(b, x->path, strlen(x->path));
    snprintf(at, sizeof at, ":%d", x->line);
    buf_adds(b, at);
    const char *h = *x->heading ? x->heading : x->title;
    if (*h) {
        buf_adds(b, " · ");
        if (*x->heading && *x->title && strncmp(x->heading, x->title, strlen(x->title))) {
            fence_line(b, x->title, strlen(x->title));
            buf_adds(b, " > ");
        }
        fence_line(b, h, strlen(h));
    }
    buf_adds(b, "]\n");
}

static int render(const struct note_pool *np, struct buf *b)
{
    buf_reset(b);
    for (int j = 0; j < np->norder; j++) {
        const struct rnote *x = &np->v[np->order[j]];
        if (j)
            buf_addc(b, '\n');
        header(x, b);
        buf_adds(b, x->shown);
        if (b->n && b->p[b->n - 1] != '\n')
            buf_addc(b, '\n');
    }
    if (b->err)
        return -1;
    return b->n ? text_count_tokens(b->p, b->n) + 1 : 0;   /* + the blank line after it */
}

/* Strips the trailing blank lines of a section's text. */
static size_t trimmed(const char *s)
{
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    return n;
}

/* The block, counted as one text, is over its budget by `over` tokens
 * (the pieces were counted apart, and a count is not quite additive): the
 * last section is cut by that much more, not dropped, when what is left
 * of it is at least NOTE_MIN_CUT. A whole section dropped for a token or
 * two was the right page, third in the ranking (dev query q015). Returns
 * the new count, -1 out of memory, -2 when the last is to be dropped. */
static int recut_last(struct note_pool *np, const struct query *q, int over, struct buf *b)
{
    if (NOTE_RECUT_MARGIN <= 0 || np->norder == 0)
        return -2;
    struct rnote *x = &np->v[np->order[np->norder - 1]];
    size_t n = strlen(x->shown);
    int want = text_count_tokens(x->shown, n) - over - NOTE_RECUT_MARGIN;
    if (x->whole || want < NOTE_MIN_CUT)
        return -2;
    char *cut = pack_excerpt(x->shown, n, q, want, 0, 0);
    if (!cut)
        return -1;
    /* an excerpt no shorter (one passage longer than want) is dropped */
    if (text_count_tokens(cut, strlen(cut)) > want) {
        free(cut);
        return -2;
    }
    free(x->shown);
    x->shown = cut;
    x->picked = 2;
    return render(np, b);
}

/* How many passing sections after candidate i could still be shown
 * beside it: at most NOTE_MAX_ITEMS in all, NOTE_PER_DOC of a page
 * (counting those shown and those before them in the ranking). A bound,
 * not a promise: one may yet be left out (excluded, a duplicate), and its
 * share then goes to the ones after it. Quadratic in NOTE_MAX_ITEMS'
 * reach, not in the candidates: it stops once the items are counted. */
static int showable_after(const struct note_pool *np, int i)
{
    int left = 0;
    for (int j = i + 1; j < np->n && np->v[j].pass && np->norder + 1 + left < NOTE_MAX_ITEMS;
         j++) {
        int64_t doc = np->v[j].doc;
        int same = np->v[i].doc == doc;
        for (int k = 0; k < np->norder; k++)
            same += np->v[np->order[k]].doc == doc;
        for (int k = i + 1; k < j; k++)
            same += np->v[k].doc == doc;
        left += same < NOTE_PER_DOC;
    }
    return left;
}

int notes_pack(struct cairn *h, struct note_pool *np, const struct query *q, int cap,
               const char *exclude, struct buf *b, int *rc)
{
    struct buf line = BUF_INIT;
    int used = 1, tokens = -1;     /* 1: the blank line after the block */
    *rc = CAIRN_OK;
    buf_reset(b);
    np->norder = 0;
    free(np->order);
    if (!np->n || !(np->order = malloc((size_t)np->n * sizeof *np->order))) {
        np->order = NULL;
        if (np->n)
            *rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        return np->n ? -1 : 0;
    }
    /* each candidate costs a read: at most NOTE_READS_MAX of them, and
     * none once what is left could not hold a cut one */
    int reads = 0;
    for (int i = 0; i < np->n && np->v[i].pass && (np->v[i].whole || np->norder < NOTE_MAX_ITEMS) &&
         reads < NOTE_READS_MAX && cap - used > NOTE_MIN_CUT;
         i++) {
        struct rnote *x = &np->v[i];
        int same = 0;
        for (int j = 0; j < np->norder; j++)
            same += np->v[np->order[j]].doc == x->doc;
        if (same >= NOTE_PER_DOC)
            continue;
        if (x->card) {
            /* found by its names: shown by its first section */
            int ntok;
            if ((*rc = store_vault_first_section(h, x->doc, &x->sec, &ntok)))
                goto out;
            x->card = 0;
            if (!x->sec)
                continue;
        }
        int dup = 0;
        for (int j = 0; j < np->norder; j++)
            dup |= !x->whole && np->v[np->order[j]].sec == x->sec;
        if (dup)
            continue;
        struct store_vsec s;
        reads++;
        if ((*rc = x->whole ? store_vault_doc_text(h, x->doc, &s)
                            : store_vault_section(h, x->sec, &s)))
            goto out;
        x->vault = s.vault;
        x->path = s.path;
        x->title = s.title;
        x->heading = s.heading;
        x->line = s.line;
        x->mtime = s.mtime / 1000000000;
        if (excluded(exclude, x)) {
            free(s.text);
            continue;
        }
        size_t n = trimmed(s.text);
        buf_reset(&line);
        header(x, &line);
        buf_addc(&line, '\n');
        if (line.err) {
            free(s.text);
            *rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        int head = text_count_tokens(line.p, line.n), room = cap - used - head, body = room + 1;
        /* one section does not take the whole budget while others passed:
         * the ranking's second and third pages are often the right one, so
         * the best is cut to its share when a next candidate exists (an
         * even share of what is left with NOTE_PACK_EVEN) */
        int left = NOTE_PACK_EVEN && !x->whole ? showable_after(np, i) : 0;
        if (left) {
            int even = (cap - used) / (1 + left) - head;
            if (room > even)
                room = even > NOTE_MIN_CUT ? even : NOTE_MIN_CUT;
        } else if (!NOTE_PACK_EVEN && !x->whole && i + 1 < np->n && np->v[i + 1].pass &&
                   room > cap / NOTE_PACK_SPLIT)
            room = cap / NOTE_PACK_SPLIT > NOTE_MIN_CUT ? cap / NOTE_PACK_SPLIT : NOTE_MIN_CUT;
        /* whether it fits, from a prefix: a long section is not counted whole */
        if (room > 0 && text_prefix_within(s.text, n, room) == n)
            body = text_count_tokens(s.text, n);
        if (body <= room) {
            s.text[n] = 0;
            x->shown = s.text;
            x->picked = 1;
            used += head + body + 1;
        } else if (x->whole && room >= NOTE_MIN_CUT) {
            /* the baseline packs files best-first: the last one cut */
            /* (a margin: the block is counted again as one text) */
            size_t k = text_prefix_within(s.text, n, room - 4);
            s.text[k] = 0;
            x->shown = s.text;
            x->picked = 2;
            used += head + text_count_tokens(x->shown, k) + 1;
        } else if (room >= NOTE_MIN_CUT) {
            x->shown = pack_excerpt(s.text, n, q, room - 4, 0, 0);
            free(s.text);
            if (!x->shown) {
                *rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                goto out;
            }
            x->picked = 2;
            used += head + text_count_tokens(x->shown, strlen(x->shown)) + 1;
        } else {
            free(s.text);
            continue;
        }
        np->order[np->norder++] = i;
    }
    /* the block counted as one text: the budget is a hard limit */
    tokens = render(np, b);
    while (tokens > cap && np->norder) {
        int t = recut_last(np, q, tokens - cap, b);
        if (t == -1) {
            tokens = -1;
            break;
        }
        tokens = t == -2 ? notes_unpick_last(np, b) : t;
    }
    if (tokens < 0)
        *rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
out:
    buf_release(&line);
    return *rc ? -1 : tokens;
}

int notes_unpick_last(struct note_pool *np, struct buf *b)
{
    if (np->norder > 0)
        np->v[np->order[--np->norder]].picked = 0;
    return render(np, b);
}

int note_item(const struct note_pool *np, int j, struct cairn_recall_item *it)
{
    const struct rnote *x = &np->v[np->order[j]];
    char id[PATH_MAX_NOTE];
    note_id(x, id, sizeof id);
    it->session = strdup("");
    it->message = strdup(id);
    it->note_vault = strdup(x->vault);
    it->note_path = strdup(x->path);
    it->role = "note";
    it->at = x->mtime;
    it->excerpt = x->picked == 2;
    it->score = x->whole ? x->score : x->share;
    it->rank = x->rank;
    it->note_line = x->line;
    it->note_named = x->named;
    it->note_gate = x->gate;
    return it->session && it->message && it->note_vault && it->note_path ? 0 : -1;
}
