/*
 * unitrank.c: a session's keyword scores from its unit row and its
 * matches, without its turns (issue 23, step (c) of "Ranking a big pool
 * without its turns" in docs/ARCHITECTURE.md), and a whole pool's when
 * gather built it over the rows (rank_pool_units, recall.units).
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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "store/units.h"
#include "util/os.h"

/* rank.c's window_bm25 over the row: unit k with up to span units on
 * each side (all of one session here), 0 unread when none holds a term.
 * Its counts are the sums of its units' (C: nt a unit), those of a unit
 * without a term all 0 and left out; its length the sum of its rounds'.
 * Integers all, held exactly in doubles: any order of the sums gives the
 * doubles rank.c's sum_tf adds up turn by turn. */
static inline __attribute__((always_inline)) double
units_window(const struct store_unit *us, int nu, const struct unit_scores *o,
                           const double *C, int k, int span, int nt, double *tf,
                           double avg_unit, const double *w)
{
    int a = k - span < 0 ? 0 : k - span, b = k + span >= nu ? nu - 1 : k + span;
    int turns = 0, n_has = 0;
    int64_t dl = 0;
    const double *one = NULL;
    for (int x = a; x <= b; x++) {
        turns += us[x].n_turns;
        dl += us[x].round_ntok;
        if (!o[x].has)
            continue;
        const double *c = C + (size_t)x * (size_t)nt;
        if (n_has == 1)
            for (int t = 0; t < nt; t++)
                tf[t] = one[t] + c[t];
        else if (n_has > 1)
            for (int t = 0; t < nt; t++)
                tf[t] += c[t];
        one = c;
        n_has++;
    }
    if (!n_has)
        return 0;
    /* window_bm25's scale: the window's turns over the unit's; a window
     * with one unit holding a term has that unit's counts */
    return rank_bm25(n_has == 1 ? one : tf, nt, (double)dl, avg_unit * turns / us[k].n_turns, w);
}

int rank_session_units(const struct store_unit *us, int nu, int dialog,
                       const struct unit_match *mt, const int *mu, int ubase, int nmt, int nt,
                       const double *w_msg, const double *w_unit, double avg_msg,
                       double avg_unit, double *tfu, struct unit_scores *out, double *s_reply)
{
    double tf[RECALL_MAX_TERMS];
    size_t snt = (size_t)nt;
    /* tfu: each unit's counts (nt a unit), summed from its matches; a
     * round's and a window's read from them (issue 23, rank52: no prefix
     * sums over every unit, most holding no term) */
    double *C = tfu;
    memset(C, 0, (size_t)nu * snt * sizeof *C);
    for (int k = 0; k < nu; k++)
        out[k] = (struct unit_scores){ 0 };
    /* each match into its unit (gather's, else store_unit_of): its
     * counts summed, its terms' bits, its own BM25 (a head's, or a
     * reply's for the reply lane; score_units scores no reply of a unit
     * without a term, but such a reply's counts are all 0 and so is its
     * BM25) */
    int prev = -1;
    for (int i = 0; i < nmt; i++) {
        int k = mu ? mu[i] - ubase : store_unit_of(us, nu, mt[i].row);
        if (k < 0 || k >= nu || k < prev)
            return -1;              /* not this session's, or not by row */
        prev = k;
        double *c = C + (size_t)k * snt;
        /* rank_bm25 of the counts (msg_bm25's sums: 0 + a count is the
         * count) by its parts, in its order, as the counts are summed:
         * the same double, without a copy and a call a match */
        double s = 0, norm = rank_bm25_norm(0.0 + mt[i].ntok, avg_msg);
        for (int t = 0; t < nt; t++) {
            double f = mt[i].tf[t];
            c[t] += f;
            if (f <= 0)
                continue;
            out[k].has |= (uint64_t)1 << t;
            s += rank_bm25_term(w_msg[t], f, norm);
        }
        int head = mt[i].row == us[k].first_id;
        s_reply[i] = head ? 0 : s;
        if (head)
            out[k].s_head = s;
    }
    /* each round's score from its own counts and length, then the
     * windows', which read the units' bits, all set above */
    for (int k = 0; k < nu; k++)
        if (us[k].n_turns > 1 && out[k].has)
            out[k].s_round = rank_bm25(C + (size_t)k * snt, nt, (double)us[k].round_ntok,
                                       avg_unit, w_unit);
    /* (inlined with each span a constant: the user-assistant loop, every
     * pool over rows, is most of a million-message recall's windows) */
    for (int k = 0; k < nu && !dialog; k++) {
        out[k].s_win = units_window(us, nu, out, C, k, SPAN_UA, nt, tf, avg_unit, w_unit);
        out[k].s_win2 = 0;
    }
    for (int k = 0; k < nu && dialog; k++) {
        out[k].s_win = units_window(us, nu, out, C, k, SPAN_DIALOG, nt, tf, avg_unit, w_unit);
        out[k].s_win2 = units_window(us, nu, out, C, k, SPAN2_DIALOG, nt, tf, avg_unit, w_unit);
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

/* The sessions [slo, shi) of a pool gathered over unit rows, scored by
 * rank_session_units with their own scratch. */
struct pool_units_job {
    struct pool  *p;
    int           nt, slo, shi, rc;
    const double *w_msg, *w_unit;
    double        avg_msg, avg_unit;
    double       *s_head, *s_round, *s_win, *s_win2;
    char         *fill;
    size_t        nfill;
};

static void *pool_units_run(void *arg)
{
    struct pool_units_job *j = arg;
    struct pool *p = j->p;
    struct pool_units *pu = p->pu;
    size_t mu = (size_t)(pu->maxu ? pu->maxu : 1);
    double *tfu = malloc((mu + 1) * ((size_t)j->nt + 1) * sizeof *tfu);
    struct unit_scores *out = malloc(mu * sizeof *out);
    j->rc = -1;
    if (!tfu || !out)
        goto out;
    /* (the four arrays' pages and half the caller's scratch faulted in
     * by each thread: ~34 MB at a million messages were the recall's
     * thread's alone, the second idle; issue 23, exact54) */
    size_t u0 = (size_t)pu->ufirst[j->slo], nus = (size_t)pu->ufirst[j->shi] - u0;
    os_populate(j->s_head + u0, nus * sizeof *j->s_head);
    os_populate(j->s_round + u0, nus * sizeof *j->s_round);
    os_populate(j->s_win + u0, nus * sizeof *j->s_win);
    os_populate(j->s_win2 + u0, nus * sizeof *j->s_win2);
    os_populate(j->fill, j->nfill);
    for (int si = j->slo; si < j->shi; si++) {
        int uf = pu->ufirst[si], nu = pu->ufirst[si + 1] - uf, mf = pu->mfirst[si];
        /* each match's unit as gather found it (issue 23, rank52: the
         * second binary search a match was ~8 M instructions a thread at
         * a million messages) */
        if (rank_session_units(pu->us + uf, nu, 0, pu->mt + mf, pu->munit + mf, uf,
                               pu->mfirst[si + 1] - mf, j->nt, j->w_msg, j->w_unit, j->avg_msg,
                               j->avg_unit, tfu, out, pu->s_reply + mf))
            goto out;
        for (int k = 0; k < nu; k++) {
            struct runit *un = &p->u[uf + k];
            j->s_head[uf + k] = pu->s_head[uf + k] = out[k].s_head;
            j->s_round[uf + k] = out[k].s_round;
            j->s_win[uf + k] = out[k].s_win;
            j->s_win2[uf + k] = out[k].s_win2;
            un->score = 0;
            un->ord_bonus = 0;
            /* (rank_default's last loop over every unit wrote these: on
             * the recall's thread alone, ~5 M instructions and the pool's
             * units read whole at a million messages; issue 23, exact54) */
            un->s_round = out[k].s_round;
            un->s_window = out[k].s_win;
        }
        if (pu->state[si] != POOL_LOADED)
            continue;
        /* a session loaded already (a ranking again): its turns' s_msg */
        const struct rsession *s = &p->s[si];
        for (int i = s->first_msg, mi = mf; i < s->first_msg + s->n_msgs; i++) {
            struct rmsg *m = &p->m[i];
            while (mi < pu->mfirst[si + 1] && pu->mt[mi].row < m->row)
                mi++;
            int hit = mi < pu->mfirst[si + 1] && pu->mt[mi].row == m->row;
            m->s_msg = p->u[m->unit].head == i ? pu->s_head[m->unit] : hit ? pu->s_reply[mi] : 0;
        }
    }
    j->rc = 0;
out:
    free(tfu);
    free(out);
    return NULL;
}

int rank_pool_units(struct pool *p, int nt, const double *w_msg, const double *w_unit,
                    double avg_msg, double avg_unit, double *s_head, double *s_round,
                    double *s_win, double *s_win2, void *fill, size_t nfill)
{
    struct pool_units_job a = { p, nt, 0, p->ns, 0, w_msg, w_unit, avg_msg, avg_unit,
                                s_head, s_round, s_win, s_win2, fill, nfill };
    struct pool_units_job b = a;
    pthread_t th;
    /* a big pool's second half of sessions on a thread of its own (each
     * session's scores its own: the same doubles either way) */
    int two = p->threads >= 2 && p->ns >= 2;
    if (two) {
        a.shi = b.slo = p->ns / 2;
        a.nfill = nfill / 2;
        b.fill = (char *)fill + a.nfill;
        b.nfill = nfill - a.nfill;
        if (pthread_create(&th, NULL, pool_units_run, &b))
            two = 0, a.shi = p->ns, a.nfill = nfill;
    }
    pool_units_run(&a);
    if (two)
        pthread_join(th, NULL);
    return a.rc || (two && b.rc) ? -1 : 0;
}
