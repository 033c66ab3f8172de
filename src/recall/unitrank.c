/*
 * unitrank.c: a session's keyword scores from its unit row and its
 * matches, without its turns (issue 23, step (c) of "Ranking a big pool
 * without its turns" in docs/ARCHITECTURE.md; nothing calls it in a
 * recall yet: gather and pack over units, steps (b) and (d), are left).
 *
 * What rank.c's score_units reads of a unit's turns is kept per unit in
 * its row (store/units.h) or carried by the matches (store/post.h: a
 * match's count per term and its length): the head's BM25 is its own
 * match's; the round's counts are the sums of its matches' counts and its
 * length the row's round token count; a window's the same over its units,
 * the average length scaled by the units' turn counts. Every count and
 * length is an integer held exactly in a double, so the sums are the same
 * doubles in any order and rank_bm25 returns the same score as over the
 * turns (test_unit_rank compares them bit for bit on random pools).
 */
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "store/units.h"

/* Units a..b's summed counts into tf, their length returned: from the
 * prefix sums P (nt + 1 a unit: the counts, then the length; P[0] zeros).
 * Every sum is of integers, so a difference of two is the sum itself,
 * the double rank.c's sum_tf adds up turn by turn. */
static double units_tf(const double *P, int a, int b, int nt, double *tf)
{
    size_t st = (size_t)nt + 1;
    const double *lo = P + (size_t)a * st, *hi = P + (size_t)(b + 1) * st;
    for (int t = 0; t < nt; t++)
        tf[t] = hi[t] - lo[t];
    return hi[nt] - lo[nt];
}

/* rank.c's window_bm25 over the row: unit k with up to span units on
 * each side (all of one session here), 0 unread when none holds a term. */
static double units_window(const struct store_unit *us, int nu, const struct unit_scores *o,
                           const double *P, int k, int span, int nt, double *tf,
                           double avg_unit, const double *w)
{
    int a = k - span < 0 ? 0 : k - span, b = k + span >= nu ? nu - 1 : k + span;
    uint64_t any = 0;
    int turns = 0;
    for (int x = a; x <= b; x++) {
        any |= o[x].has;
        turns += us[x].n_turns;
    }
    if (!any)
        return 0;
    double dl = units_tf(P, a, b, nt, tf);
    /* window_bm25's scale: the window's turns over the unit's */
    return rank_bm25(tf, nt, dl, avg_unit * turns / us[k].n_turns, w);
}

int rank_session_units(const struct store_unit *us, int nu, int dialog,
                       const struct unit_match *mt, int nmt, int nt, const double *w_msg,
                       const double *w_unit, double avg_msg, double avg_unit, double *tfu,
                       struct unit_scores *out, double *s_reply)
{
    double tf[RECALL_MAX_TERMS];
    size_t st = (size_t)nt + 1;
    /* tfu: each unit's counts and length at P[k + 1], then summed into
     * prefix sums (units_tf) */
    double *P = tfu;
    memset(P, 0, (size_t)(nu + 1) * st * sizeof *P);
    for (int k = 0; k < nu; k++)
        out[k] = (struct unit_scores){ 0 };
    /* each match into its unit (store_unit_of): its counts summed, its
     * terms' bits, its own BM25 (a head's, or a reply's for the reply
     * lane; score_units scores no reply of a unit without a term, but
     * such a reply's counts are all 0 and so is its BM25) */
    int prev = -1;
    for (int i = 0; i < nmt; i++) {
        int k = store_unit_of(us, nu, mt[i].row);
        if (k < 0 || k < prev)
            return -1;              /* not this session's, or not by row */
        prev = k;
        for (int t = 0; t < nt; t++) {
            tf[t] = mt[i].tf[t];    /* msg_bm25's sums: 0 + a count is the count */
            P[(size_t)(k + 1) * st + (size_t)t] += tf[t];
            out[k].has |= (uint64_t)(mt[i].tf[t] > 0) << t;
        }
        double s = rank_bm25(tf, nt, 0.0 + mt[i].ntok, avg_msg, w_msg);
        int head = mt[i].row == us[k].first_id;
        s_reply[i] = head ? 0 : s;
        if (head)
            out[k].s_head = s;
    }
    /* the prefix sums, and each round's score once its own are in */
    for (int k = 0; k < nu; k++) {
        double *row = P + (size_t)(k + 1) * st, *before = row - st;
        row[nt] = (double)us[k].round_ntok;
        for (size_t t = 0; t < st; t++)
            row[t] += before[t];
        if (us[k].n_turns > 1 && out[k].has) {
            double dl = units_tf(P, k, k, nt, tf);
            out[k].s_round = rank_bm25(tf, nt, dl, avg_unit, w_unit);
        }
    }
    /* the windows read the units' bits, all set above */
    for (int k = 0; k < nu; k++) {
        out[k].s_win = units_window(us, nu, out, P, k, dialog ? SPAN_DIALOG : SPAN_UA, nt, tf,
                                    avg_unit, w_unit);
        out[k].s_win2 = dialog ? units_window(us, nu, out, P, k, SPAN2_DIALOG, nt, tf,
                                              avg_unit, w_unit) : 0;
    }
    return 0;
}

void rank_session_units_time(const struct store_unit *us, int nu, int64_t started_at,
                             int64_t from, int64_t to, int *in_range)
{
    for (int k = 0; k < nu; k++) {
        /* gather's time of a turn: its own, else its session's start */
        int64_t at = us[k].head_at != CAIRN_NO_TIME ? us[k].head_at : started_at;
        in_range[k] = at != CAIRN_NO_TIME && at >= from && at < to;
    }
}
