/*
 * gate.c: how well the best of a recall matches its question, for the
 * prompt hook's relevance gate.
 *
 * Injecting memory into a prompt costs the user context and attention, so
 * the hook injects only on a confident match: the best unit (among the top
 * few) must hold a large share of the question's IDF weight, the weight
 * that rare names, numbers and identifiers carry and common words do not.
 * A term written like code (an error's or a function's name) weighs
 * GATE_CODE_W times its IDF there (policy.h).
 * The share is computed over distinct terms; a term counts as found when
 * any message of the unit holds it.
 *
 * The same weight gives recall's relative cut (cairn_recall_opts.
 * min_rel_score): fused scores are reciprocal ranks, nearly flat from one
 * rank to the next (a unit holding one of two rare words scored 98% of
 * the one holding both), so the cut compares what each unit holds of the
 * question instead.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>

#include "recall/recall.h"
#include "recall/policy.h"


/* A term written like code: camelCase, snake_case, letters with digits
 * (x86_64, E11000) or a word of 4 capitals or more
 * (ECONNRESET, ENOENT). Such a term names one thing (an error, a flag, a
 * function), where a word or a name recurs in many contexts. */
static int code_like(const char *s)
{
    int upper = 0, lower = 0, digit = 0, inner_upper = 0, under = 0;
    for (const char *p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c >= 0x80)
            return 0;                   /* other scripts: words, not code */
        if (isupper(c)) {
            upper++;
            inner_upper |= p > s && islower((unsigned char)p[-1]);
        } else if (islower(c)) {
            lower++;
        } else if (isdigit(c)) {
            digit++;
        } else if (c == '_') {
            under++;
        }
    }
    return inner_upper || (under && upper + lower) || (digit && upper + lower) ||
           (!lower && upper >= 4);
}

/* The weight of the terms found in messages a..b: w[t] each (NULL: the
 * IDF), counted once. */
static double range_sum(const struct pool *p, const struct query *q, int a, int b,
                        const double *w)
{
    double sum = 0;
    for (int t = 0; t < q->nt; t++) {
        for (int i = a; i <= b; i++) {
            if (p->m[i].tf && p->m[i].tf[t]) {
                sum += w ? w[t] : q->t[t].idf_msg;
                break;
            }
        }
    }
    return sum;
}

/* range_sum over the terms of has (bit t: term t found), in the same
 * order: the same sum. A pool gathered over unit rows keeps its units'
 * terms as bits (pool_units.has) and not their turns. */
static double bits_sum(const struct query *q, uint64_t has, const double *w)
{
    double sum = 0;
    for (int t = 0; t < q->nt; t++)
        if (has >> t & 1)
            sum += w ? w[t] : q->t[t].idf_msg;
    return sum;
}

static double unit_sum(const struct pool *p, const struct query *q, const struct runit *u,
                       const double *w)
{
    if (p->pu)
        return bits_sum(q, p->pu->has[u - p->u], w);
    return range_sum(p, q, u->first, u->last, w);
}

double unit_weight(const struct pool *p, const struct query *q, const struct runit *u)
{
    /* the unit with the neighbours its window ranking reads (rank.c):
     * between people the answer is often the turn after the one that
     * names the topic */
    int a, b, k = (int)(u - p->u), span = p->s[u->sess].dialog ? SPAN_DIALOG : SPAN_UA;
    if (p->pu) {
        /* the units unit_window spans: those of its session within span */
        uint64_t has = p->pu->has[k];
        for (int d = 1; d <= span; d++) {
            if (k - d >= 0 && p->u[k - d].sess == u->sess)
                has |= p->pu->has[k - d];
            if (k + d < p->nu && p->u[k + d].sess == u->sess)
                has |= p->pu->has[k + d];
        }
        return bits_sum(q, has, NULL);
    }
    unit_window(p, k, span, &a, &b);
    return range_sum(p, q, a, b, NULL);
}

int below_cut(const struct pool *p, const struct query *q, const struct runit *u, double cut)
{
    if (cut <= 0)
        return 0;
    /* chats between people (LoCoMo, MADial's memories) are not cut: their
     * evidence is found by meaning and across turns, and MADial en dev
     * lost 31 of 87.5 points at 4k with the cut at 0.2; the one-fact
     * question it is for is a coding store's */
    if (p->s[u->sess].dialog)
        return 0;
    /* the cut weighs words: a unit holding one of the best CUT_DENSE_KEEP
     * dense hits is not its to judge (MADial dev, found mostly by meaning,
     * lost 30 of 87.5 points at 0.1 when every dense hit was cut) */
    for (int i = u->first; !p->pu && i <= u->last; i++)   /* (over unit rows: no dense hit) */
        if (p->m[i].dense > 0 && p->m[i].dense >= p->cut_dense)
            return 0;
    return unit_weight(p, q, u) < cut;
}

static int cmp_float_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

double recall_cut(struct pool *p, const struct query *q, double share)
{
    double best = 0;
    float top[DENSE_TOPK];
    int n = 0;
    for (int i = 0; share > 0 && i < p->nu; i++) {
        double w = p->u[i].score > 0 ? unit_weight(p, q, &p->u[i]) : 0;
        if (w > best)
            best = w;
    }
    /* the dense value of the CUT_DENSE_KEEP-th best hit */
    for (int i = 0; share > 0 && !p->pu && i < p->nm && n < DENSE_TOPK; i++)
        if (p->m[i].dense > 0)
            top[n++] = p->m[i].dense;
    qsort(top, (size_t)n, sizeof *top, cmp_float_desc);
    p->cut_dense = n ? top[n < CUT_DENSE_KEEP ? n - 1 : CUT_DENSE_KEEP - 1] : 0;
    return share * best;
}

/* A unit's fused score without the first/last preference (rank.c). */
static double words_score(const struct runit *u)
{
    return u->score - u->ord_bonus;
}

/* Each term's weight in the gate into w_t; their sum. */
static double gate_weights(const struct query *q, double *w_t)
{
    double total = 0;
    for (int t = 0; t < q->nt; t++) {
        /* a code-like term weighs GATE_CODE_W times its IDF: one error
         * name in a coding history is as telling as two rare words */
        w_t[t] = q->t[t].idf_msg * (code_like(q->t[t].surface) ? GATE_CODE_W : 1.0);
        total += w_t[t];
    }
    return total;
}

/* In units of "one term found in a single message": IDF grows with the
 * store, so a raw sum would make the gate stricter for a new user than
 * for one with years of history. */
static double gate_units(const struct pool *p, double w)
{
    return w / log(1.0 + (double)p->total_msgs + 1.0);
}

void recall_gate(struct pool *p, const struct query *q, double *share, double *weight)
{
    double total, best_share = 0, best_w = 0, w_t[RECALL_MAX_TERMS];
    const int *ord;
    *share = 0;
    *weight = 0;
    total = gate_weights(q, w_t);
    if (total <= 0 || p->nu == 0)
        return;
    ord = units_by_rank(p);
    if (!ord)
        return;
    for (int r = 0; r < GATE_TOP && r < p->nu; r++) {
        const struct runit *u = &p->u[ord[r]];
        if (u->score <= 0)
            break;
        double w = unit_sum(p, q, u, w_t);
        if (w / total > best_share) {
            best_share = w / total;
            best_w = w;
        }
    }
    /* A question about the first or last time puts the earliest (latest)
     * of the topic's units first (rank.c order_boost): an order, not a
     * judgement of relevance, so the units the words ranked best are
     * judged too (devmem dev, the hook at 1k: it fired for 2 fewer
     * questions without this). */
    if (q->ordinal) {
        int top[GATE_TOP], nb = 0;
        for (int i = 0; i < p->nu; i++) {
            if (p->u[i].score <= 0 || words_score(&p->u[i]) <= 0)
                continue;
            if (nb < GATE_TOP)
                top[nb++] = i;
            else if (words_score(&p->u[i]) > words_score(&p->u[top[nb - 1]]))
                top[nb - 1] = i;
            else
                continue;
            for (int j = nb - 1;
                 j > 0 && words_score(&p->u[top[j - 1]]) < words_score(&p->u[top[j]]); j--) {
                int t = top[j - 1];
                top[j - 1] = top[j];
                top[j] = t;
            }
        }
        for (int r = 0; r < nb; r++) {
            double w = unit_sum(p, q, &p->u[top[r]], w_t);
            if (w / total > best_share) {
                best_share = w / total;
                best_w = w;
            }
        }
    }
    /* A question about what the assistant said or did gets the replies
     * that match best (pack.c's reply lane): their rounds are judged too,
     * though "fix" in thirty user turns ranks other rounds first. */
    if (q->asks_reply && p->any_assistant) {
        /* the replies in pool order: the turns, or over unit rows the
         * matches (every reply with a score is one), by session and row */
        int best[GATE_TOP], bu[GATE_TOP], nb = 0, n = p->pu ? p->pu->nmt : p->nm;
        double bs[GATE_TOP];
        for (int i = 0; i < n; i++) {
            int reply, u;
            double sc;
            if (p->pu) {
                sc = unit_match_s(p, i, &reply);
                u = p->pu->munit[i];
            } else {
                reply = p->m[i].role == ROLE_ASSISTANT;
                sc = p->m[i].s_msg;
                u = p->m[i].unit;
            }
            if (!reply || sc <= 0)
                continue;
            if (nb < GATE_TOP)
                nb++;
            else if (!(sc > bs[nb - 1]))
                continue;
            best[nb - 1] = i;
            bs[nb - 1] = sc;
            bu[nb - 1] = u;
            for (int j = nb - 1; j > 0 && bs[j - 1] < bs[j]; j--) {
                int t = best[j - 1], tu = bu[j - 1];
                double ts = bs[j - 1];
                best[j - 1] = best[j], bu[j - 1] = bu[j], bs[j - 1] = bs[j];
                best[j] = t, bu[j] = tu, bs[j] = ts;
            }
        }
        for (int r = 0; r < nb; r++) {
            double w = unit_sum(p, q, &p->u[bu[r]], w_t);
            if (w / total > best_share) {
                best_share = w / total;
                best_w = w;
            }
        }
    }
    *share = best_share;
    *weight = gate_units(p, best_w);
}

/* The GATE_TOP units of the best s_words into top (their count). */
static int words_top(const struct pool *p, int *top)
{
    const double *sw = p->s_words;
    int nb = 0;
    for (int i = 0; sw && i < p->nu; i++) {
        if (p->u[i].score <= 0 || sw[i] <= 0)
            continue;
        if (nb < GATE_TOP)
            top[nb++] = i;
        else if (sw[i] > sw[top[nb - 1]])
            top[nb - 1] = i;
        else
            continue;
        for (int j = nb - 1; j > 0 && sw[top[j - 1]] < sw[top[j]]; j--) {
            int t = top[j - 1];
            top[j - 1] = top[j];
            top[j] = t;
        }
    }
    return nb;
}

void recall_gate_dense(struct pool *p, const struct query *q, double *share, double *weight,
                       double *agree)
{
    double total, w_t[RECALL_MAX_TERMS], best = 0;
    float top[DENSE_TOPK], need;
    const int *ord;
    int n = 0, wtop[GATE_TOP], nw;
    *agree = 0;
    total = gate_weights(q, w_t);
    /* (over unit rows the turns' dense hits are not kept: keyword only) */
    if (total <= 0 || p->nu == 0 || p->pu)
        return;
    for (int i = 0; i < p->nm && n < DENSE_TOPK; i++)
        if (p->m[i].dense > 0)
            top[n++] = p->m[i].dense;
    if (!n || !(ord = units_by_rank(p)))
        return;
    qsort(top, (size_t)n, sizeof *top, cmp_float_desc);
    need = top[n < GATE_DENSE_AGREE ? n - 1 : GATE_DENSE_AGREE - 1];
    for (int r = 0; r < GATE_TOP && r < p->nu; r++) {
        const struct runit *u = &p->u[ord[r]];
        int agrees = 0;
        if (u->score <= 0)
            break;
        for (int i = u->first; i <= u->last && !agrees; i++)
            agrees = p->m[i].dense > 0 && p->m[i].dense >= need;
        double w = unit_sum(p, q, u, w_t);
        if (agrees && w / total > *agree)
            *agree = w / total;
    }
    /* the units keyword's gate would have judged (LoCoMo dev, tuned part:
     * without them the hybrid hook fired for 5 fewer questions with memory
     * than keyword's; docs/HYBRID.md) */
    nw = words_top(p, wtop);
    for (int r = 0; r < nw; r++) {
        double w = unit_sum(p, q, &p->u[wtop[r]], w_t);
        if (w > best)
            best = w;
    }
    if (best / total > *share) {
        *share = best / total;
        *weight = gate_units(p, best);
    }
}

int gate_cosine_opens(const struct cairn_recall *r)
{
    return r->gate_cosine > 0 && r->cosine >= r->gate_cosine && r->cosine_z >= GATE_COS_Z;
}

int gate_words(const struct cairn_recall *r)
{
    if (r->match < CAIRN_GATE_SHARE)
        return GATE_SHARE_LOW;
    if (r->match_weight < CAIRN_GATE_WEIGHT)
        return GATE_COMMON_ONLY;
    /* more units judged find more weak matches, in memory or not: one of
     * under GATE_DENSE_WEIGHT passes where the dense hits agree */
    if (r->gate_dense && r->match_weight < GATE_DENSE_WEIGHT && r->match_dense < GATE_AGREE_SHARE)
        return GATE_DENSE_DISAGREE;
    return GATE_PASS;
}


int cairn_inject_gate(const struct cairn_recall *r, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    /* a recall stopped by CAIRN_RECALL_GATE_ONLY has no conversations
     * packed: its reason is below (a weak match) */
    if (!r || (r->n_items == 0 && !r->gate_stopped)) {
        *why = "nothing recalled";
        return 0;
    }
    if (r->items && r->items[0].memory) {    /* memories come first (memories.c) */
        *why = "a kept memory matches the question";
        return 1;
    }
    for (size_t i = 0; r->items && i < r->n_items; i++)
        if (r->items[i].note_gate) {     /* notes come next (notes.c) */
            *why = r->items[i].note_named ? "the question names a note's page"
                                          : "a note holds the question's distinctive words";
            return 1;
        }
    if (r->only_time) {
        *why = "a question about a period that has records";
        return 1;
    }
    if (gate_cosine_opens(r)) {
        *why = "close in meaning (cosine)";
        return 1;
    }
    switch (gate_words(r)) {
    case GATE_SHARE_LOW:
        *why = "weak match: the best turn holds too little of the question";
        return 0;
    case GATE_COMMON_ONLY:
        *why = "weak match: only common words are shared";
        return 0;
    case GATE_DENSE_DISAGREE:
        *why = "weak match: few distinctive words, and the closest in meaning are elsewhere";
        return 0;
    }
    *why = "strong match on distinctive words";
    return 1;
}
