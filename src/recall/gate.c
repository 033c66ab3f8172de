/*
 * gate.c: how well the best of a recall matches its question, for the
 * prompt hook's relevance gate.
 *
 * Injecting memory into a prompt costs the user context and attention, so
 * the hook injects only on a confident match: the best unit (among the top
 * few) must hold a large share of the question's IDF weight, the weight
 * that rare names, numbers and identifiers carry and common words do not.
 * The share is computed over distinct terms; a term counts as found when
 * any message of the unit holds it.
 */
#include <math.h>
#include <stdlib.h>

#include "recall/recall.h"

/* How many of the best units are looked at. */
#define GATE_TOP 3

void recall_gate(struct pool *p, const struct query *q, double *share, double *weight)
{
    double total = 0, best_share = 0, best_w = 0;
    const int *ord;
    *share = 0;
    *weight = 0;
    for (int t = 0; t < q->nt; t++)
        total += q->t[t].idf_msg;
    if (total <= 0 || p->nu == 0)
        return;
    ord = units_by_rank(p);
    if (!ord)
        return;
    for (int r = 0; r < GATE_TOP && r < p->nu; r++) {
        const struct runit *u = &p->u[ord[r]];
        double w = 0;
        if (u->score <= 0)
            break;
        for (int t = 0; t < q->nt; t++) {
            for (int i = u->first; i <= u->last; i++) {
                if (p->m[i].tf && p->m[i].tf[t]) {
                    w += q->t[t].idf_msg;
                    break;
                }
            }
        }
        if (w / total > best_share) {
            best_share = w / total;
            best_w = w;
        }
    }
    *share = best_share;
    /* In units of "one term found in a single message": IDF grows with the
     * store, so a raw sum would make the gate stricter for a new user than
     * for one with years of history. */
    *weight = best_w / log(1.0 + (double)p->total_msgs + 1.0);
}

/*
 * Gate thresholds (see cairn.h), measured with `cairn eval inject` at 1,000
 * tokens (fires with memory / fires without / all evidence when it fires):
 *   LoCoMo dev 760 q:  share 0.5 weight 1.0: 53.8 / 28.2 / 86.3%
 *                      share 0.6 weight 1.5: 33.3 /  7.9 / 93.7%  (chosen)
 *                      share 0.7 weight 2.0: 15.8 /  2.0 / 95.8%
 *   BEAM dev 179 q:    share 0.6 weight 1.5: 49.7 / 40.8 / 55.1%
 * (BEAM's "without" store keeps the chat's other sessions on the same
 * project, so firing there is often still useful.) Injection must be
 * confident: a wrong injection costs the user more than a missed one, who
 * still has the recall tool.
 */
#define CAIRN_GATE_SHARE  0.6
#define CAIRN_GATE_WEIGHT 1.5
/*
 * The best cosine, when dense recall took part (issue: "the best cosine
 * match as part of the gate"). With use-lite-en it barely tells a question
 * with its answer in memory from one without (LoCoMo dev cosine deciles
 * 0.45..0.65 with, 0.43..0.62 without); at 0.7 it adds 2.6 points of
 * firing with memory and 1.2 without (35.0 / 9.2%), at 0.6 it would add
 * 16.7 / 11.5. A stronger model moves this; the prompt hook asks for
 * keyword recall unless CAIRN_INJECT_DENSE=1, so by default it is unused.
 */
#define CAIRN_GATE_COSINE 0.7

int cairn_inject_gate(const struct cairn_recall *r, const char **why)
{
    const char *dummy;
    if (!why)
        why = &dummy;
    if (!r || r->n_items == 0) {
        *why = "nothing recalled";
        return 0;
    }
    if (r->only_time) {
        *why = "a question about a period that has records";
        return 1;
    }
    if (r->cosine >= CAIRN_GATE_COSINE) {
        *why = "close in meaning (cosine)";
        return 1;
    }
    if (r->match < CAIRN_GATE_SHARE) {
        *why = "weak match: the best memory holds too little of the question";
        return 0;
    }
    if (r->match_weight < CAIRN_GATE_WEIGHT) {
        *why = "weak match: only common words are shared";
        return 0;
    }
    *why = "strong match on distinctive words";
    return 1;
}
