/*
 * test_unit_rank.c: a session's keyword scores from its unit row and its
 * matches (recall/unitrank.c, rank_session_units; issue 23 step (c))
 * against rank.c's own over the turns (rank_unit_scores: unit_terms and
 * score_units), bit for bit.
 *
 * Random pools of several sessions (user-assistant with long runs of
 * replies, dialogs, matches on heads and replies, counts of 0 in a match,
 * rising ids), one and two threads: each session's turns packed as the
 * writers pack them (store_turn_write), its row by store_units_pack, its
 * matches in row order; every unit's head, round, window and wider window
 * scores, its terms' bits and every reply's own BM25 must be the same
 * doubles, and whether its head lies in the question's period
 * (rank_session_units_time; turns without a time, sessions without a
 * start) the same as score_units' in_range. Matches out of row order or
 * before the first unit are refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "internal.h"
#include "recall/policy.h"
#include "recall/recall.h"
#include "store/recall_read.h"
#include "store/units.h"
#include "util/buf.h"

static unsigned rng = 2323;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static int same_d(double a, double b)
{
    return !memcmp(&a, &b, sizeof a);
}

enum { MAXS = 6, MAXN = 40, MAXT = 5 };
#define T0 1672531200                   /* 2023-01-01 */

static void test_random_pools(void)
{
    enum { ROUNDS = 1500 };
    int differ = 0, refused = 0, tries = 0, timed = 0;
    int given_same = 0, given_tries = 0, given_refused = 0, given_bad = 0;
    int checked_units = 0, windows = 0, dialogs = 0, replies = 0;
    for (int round = 0; round < ROUNDS; round++) {
        int ns = 1 + (int)rnd(MAXS), nt = 1 + (int)rnd(MAXT);
        struct pool p;
        memset(&p, 0, sizeof p);
        struct query q;
        memset(&q, 0, sizeof q);
        q.nt = nt;
        struct rsession *s = calloc((size_t)ns, sizeof *s);
        struct rmsg *m = calloc((size_t)ns * MAXN + 1, sizeof *m);
        uint16_t *tf_all = calloc(((size_t)ns * MAXN + 1) * MAXT, sizeof *tf_all);
        int64_t *raw_at = calloc((size_t)ns * MAXN + 1, sizeof *raw_at);
        T_CHECK(s && m && tf_all && raw_at);
        if (!s || !m || !tf_all || !raw_at)
            return;
        /* a period around the middle of the turns' times (some heads in it) */
        q.has_range = 1;
        q.from = T0 + (int64_t)rnd(20000);
        q.to = q.from + (int64_t)rnd(40000);
        int nm = 0;
        int64_t id = 1 + rnd(1000);
        for (int si = 0; si < ns; si++) {
            int n = 1 + (int)rnd(MAXN), dialog = rnd(4) == 0, run = 0;
            int64_t start = rnd(4) ? T0 + (int64_t)rnd(30000) : CAIRN_NO_TIME;
            s[si] = (struct rsession){ .row = si + 1, .dialog = dialog, .first_msg = nm,
                                       .n_msgs = n, .started_at = start };
            dialogs += dialog;
            for (int i = 0; i < n; i++, nm++) {
                int user = dialog ? 1 : run > 0 ? 0 : (int)rnd(2);
                if (run > 0)
                    run--;
                else if (!user)
                    run = (int)rnd(9);
                id += 1 + rnd(3);
                struct rmsg *x = &m[nm];
                *x = (struct rmsg){ .row = id, .position = i, .sess = si,
                                    .role = user ? ROLE_USER : ROLE_ASSISTANT,
                                    .ntok = (int)rnd(3000), .bytes = -1 };
                /* the row keeps a turn's own time; gather puts the session's
                 * start where there is none */
                raw_at[nm] = rnd(3) ? T0 + (int64_t)rnd(60000) : CAIRN_NO_TIME;
                x->at = raw_at[nm] != CAIRN_NO_TIME ? raw_at[nm] : s[si].started_at;
                if (rnd(3) == 0) {
                    x->tf = tf_all + (size_t)nm * MAXT;
                    for (int t = 0; t < nt; t++)
                        x->tf[t] = rnd(3) ? (uint16_t)rnd(4) : 0;
                }
            }
            /* gather's rule: a session whose every turn is a user's is a dialog */
            int all_user = 1;
            for (int i = s[si].first_msg; i < nm; i++)
                all_user &= m[i].role == ROLE_USER;
            dialogs += all_user && !dialog;
            s[si].dialog = all_user;
        }
        p.s = s;
        p.ns = p.cs = ns;
        p.m = m;
        p.nm = p.cm = nm;
        p.threads = 1 + (int)rnd(2);
        build_units(&p, 0);
        T_CHECK(p.u != NULL);
        size_t nu1 = (size_t)p.nu + 1;
        double *sh = calloc(nu1, sizeof *sh), *sr = calloc(nu1, sizeof *sr);
        double *sw = calloc(nu1, sizeof *sw), *sw2 = calloc(nu1, sizeof *sw2);
        uint64_t *has = calloc(nu1, sizeof *has);
        double w_msg[MAXT], w_unit[MAXT];
        for (int t = 0; t < nt; t++) {
            w_msg[t] = 0.1 + rnd(1000) / 97.0;
            w_unit[t] = 0.1 + rnd(1000) / 89.0;
        }
        double avg_msg = 5 + rnd(500) / 3.0, avg_unit = 20 + rnd(2000) / 7.0;
        T_CHECK(sh && sr && sw && sw2 && has);
        rank_unit_scores(&p, &q, 1, w_msg, w_unit, avg_msg, avg_unit, has, sh, sr, sw, sw2);

        for (int si = 0; si < ns; si++) {
            const struct rsession *x = &s[si];
            struct buf t = BUF_INIT, row = BUF_INIT;
            struct turns_cur w = { NULL, NULL, 0, 0, 0 };
            for (int i = x->first_msg; i < x->first_msg + x->n_msgs; i++)
                store_turn_write(&t, &w, m[i].row, m[i].position, m[i].role == ROLE_USER,
                                 raw_at[i], m[i].ntok, NULL, 0);
            T_EQ_INT(store_units_pack(&row, t.p, t.n, x->n_msgs), 0);
            struct units_cur c;
            int nu, flags;
            T_EQ_INT(store_units_open(&c, row.p, row.n, &nu, &flags), 0);
            T_CHECK(flags & STORE_UNITS_IDS_RISE);
            T_EQ_INT(!!(flags & STORE_UNITS_DIALOG), x->dialog);
            struct store_unit *us = calloc((size_t)nu + 1, sizeof *us);
            struct unit_scores *out = calloc((size_t)nu + 1, sizeof *out);
            double *tfu = calloc(((size_t)nu + 1) * ((size_t)nt + 1), sizeof *tfu);
            struct unit_match *mt = calloc((size_t)x->n_msgs + 1, sizeof *mt);
            double *s_reply = calloc((size_t)x->n_msgs + 1, sizeof *s_reply);
            int *at = calloc((size_t)x->n_msgs + 1, sizeof *at);
            T_CHECK(us && out && tfu && mt && s_reply && at);
            T_EQ_INT((int)store_units_read(&c, us, (size_t)nu), nu);
            int nmt = 0;
            for (int i = x->first_msg; i < x->first_msg + x->n_msgs; i++)
                if (m[i].tf) {
                    at[nmt] = i;
                    mt[nmt++] = (struct unit_match){ m[i].row, m[i].ntok, m[i].tf };
                }
            T_EQ_INT(rank_session_units(us, nu, !!(flags & STORE_UNITS_DIALOG), mt, NULL, 0, nmt,
                                        nt, w_msg, w_unit, avg_msg, avg_unit, tfu, out, s_reply),
                     0);
            /* the matches' units given (gather's munit: each found from
             * the one before, numbered from a pool's ubase): the same
             * bytes as each searched */
            {
                int *mu = calloc((size_t)nmt + 1, sizeof *mu), ubase = (int)rnd(1000), k = 0;
                struct unit_scores *o2 = calloc((size_t)nu + 1, sizeof *o2);
                double *r2 = calloc((size_t)nmt + 1, sizeof *r2);
                T_CHECK(mu && o2 && r2);
                for (int j = 0; j < nmt; j++) {
                    k = store_unit_from(us, nu, k, mt[j].row);
                    T_EQ_INT(k, store_unit_of(us, nu, mt[j].row));
                    mu[j] = ubase + k;
                }
                T_EQ_INT(rank_session_units(us, nu, !!(flags & STORE_UNITS_DIALOG), mt, mu, ubase,
                                            nmt, nt, w_msg, w_unit, avg_msg, avg_unit, tfu, o2,
                                            r2), 0);
                given_same += !memcmp(o2, out, (size_t)nu * sizeof *out) &&
                              !memcmp(r2, s_reply, (size_t)nmt * sizeof *r2);
                given_tries++;
                /* a unit out of the session's, or out of row order: refused */
                if (nmt >= 2 && mu[0] != mu[nmt - 1]) {
                    int sw0 = mu[0];
                    mu[0] = mu[nmt - 1];
                    mu[nmt - 1] = sw0;
                    int bad1 = rank_session_units(us, nu, 0, mt, mu, ubase, nmt, nt, w_msg, w_unit,
                                                  avg_msg, avg_unit, tfu, o2, r2);
                    mu[0] = ubase + nu;
                    int bad2 = rank_session_units(us, nu, 0, mt, mu, ubase, 1, nt, w_msg, w_unit,
                                                  avg_msg, avg_unit, tfu, o2, r2);
                    given_refused += bad1 == -1 && bad2 == -1;
                    given_bad++;
                }
                free(mu);
                free(o2);
                free(r2);
            }
            int u0 = m[x->first_msg].unit;
            T_EQ_INT(p.m[x->first_msg + x->n_msgs - 1].unit - u0 + 1, nu);
            int *in_range = calloc((size_t)nu + 1, sizeof *in_range);
            T_CHECK(in_range != NULL);
            rank_session_units_time(us, nu, x->started_at, q.from, q.to, in_range);
            for (int k = 0; k < nu; k++) {
                differ += in_range[k] != p.u[u0 + k].in_range;
                timed += in_range[k];
            }
            free(in_range);
            for (int k = 0; k < nu; k++) {
                int u = u0 + k, bad = !same_d(out[k].s_head, sh[u]) ||
                                      !same_d(out[k].s_round, sr[u]) ||
                                      !same_d(out[k].s_win, sw[u]) ||
                                      !same_d(out[k].s_win2, sw2[u]) || out[k].has != has[u];
                if (bad && differ < 5)
                    fprintf(stderr, "round %d session %d unit %d: head %.17g/%.17g round "
                            "%.17g/%.17g win %.17g/%.17g win2 %.17g/%.17g\n", round, si, k,
                            out[k].s_head, sh[u], out[k].s_round, sr[u], out[k].s_win, sw[u],
                            out[k].s_win2, sw2[u]);
                differ += bad;
                windows += sw[u] > 0 && sr[u] != sw[u];
                checked_units++;
            }
            for (int j = 0; j < nmt; j++) {
                int i = at[j];
                if (i == p.u[m[i].unit].head)
                    continue;
                differ += !same_d(s_reply[j], m[i].s_msg);
                replies += s_reply[j] > 0;
            }
            /* two matches of different units swapped: not in row order */
            if (nmt >= 2 && store_unit_of(us, nu, mt[0].row) !=
                                store_unit_of(us, nu, mt[nmt - 1].row)) {
                struct unit_match tmp = mt[0];
                mt[0] = mt[nmt - 1];
                mt[nmt - 1] = tmp;
                int r1 = rank_session_units(us, nu, x->dialog, mt, NULL, 0, nmt, nt, w_msg, w_unit,
                                            avg_msg, avg_unit, tfu, out, s_reply);
                /* and a match before the session's first turn */
                mt[0] = (struct unit_match){ us[0].first_id - 1, 1, mt[1].tf };
                int r2 = rank_session_units(us, nu, x->dialog, mt, NULL, 0, 1, nt, w_msg, w_unit,
                                            avg_msg, avg_unit, tfu, out, s_reply);
                refused += r1 == -1 && r2 == -1;
                tries++;
            }
            free(us);
            free(out);
            free(tfu);
            free(mt);
            free(s_reply);
            free(at);
            buf_release(&t);
            buf_release(&row);
        }
        free(sh);
        free(sr);
        free(sw);
        free(sw2);
        free(has);
        free(p.u);
        free(p.ord);
        free(s);
        free(m);
        free(tf_all);
        free(raw_at);
    }
    T_EQ_INT(differ, 0);
    /* every part was met: windows wider than their round, dialogs, replies
     * scored, refusals */
    T_CHECK(checked_units > 10000 && windows > 1000 && dialogs > 500 && replies > 1000);
    T_CHECK(timed > 1000 && timed < checked_units / 2);     /* heads in and out of periods */
    T_EQ_INT(refused, tries);
    T_CHECK(tries > 500);
    T_EQ_INT(given_same, given_tries);
    T_EQ_INT(given_refused, given_bad);
    T_CHECK(given_bad > 500);
}

int main(void)
{
    T_RUN(test_random_pools);
    return T_DONE();
}
