/*
 * bench_unitrank.c: a real question's keyword scores over its pool's turns
 * (today: build_units, then unit_terms and score_units by rank_unit_scores)
 * against the same from the pool's sessions' unit rows and its matches
 * (rank_session_units, recall/unitrank.c; issue 23 step (c)), and whether
 * they are the same doubles on that store.
 *
 * The pool is gather's for the question (keyword only, as `cairn recall
 * --method keyword`), its weights rank_default's; both modes score it with
 * the same weights and averages. The rows mode reads each pool session's
 * row by its id (SELECT n, rule, units FROM session_units WHERE session =
 * ?), valid with the reader's rule, the session's turn count and rising
 * ids (else the session is counted as one a recall would load); its
 * matches are taken from the pool before the timing (in a recall they
 * would come from gather's merged postings, which it reads either way).
 * Each mode in turn for N rounds, CPU medians; under `valgrind
 * --tool=callgrind` run one mode (--only) with --runs 1.
 *
 * usage: bench_unitrank STORE "QUESTION" [--runs N] [--only turns|units] [--scan]
 * (the store at schema 30: opened once by this build first)
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "internal.h"
#include "recall/recall.h"
#include "store/units.h"

struct sess_m { int first, n; };    /* a pool session's matches in mt[] */

static void by_turns(struct pool *p, const struct query *q, const double *w_msg,
                     const double *w_unit, double avg_msg, double avg_unit, uint64_t *has,
                     double *sh, double *sr, double *sw, double *sw2)
{
    build_units(p, 0);
    rank_unit_scores(p, q, 0, w_msg, w_unit, avg_msg, avg_unit, has, sh, sr, sw, sw2);
}

/* Every pool session's row read and scored: the sessions without a valid
 * row (*fallback), the units scored. out[] in pool order. */
static int64_t by_rows(sqlite3 *db, int scan, const struct pool *p, const struct query *q,
                       const struct unit_match *mt, const struct sess_m *sm,
                       const double *w_msg, const double *w_unit, double avg_msg,
                       double avg_unit, struct store_unit *us, double *tfu,
                       struct unit_scores *out, double *s_reply, int *fallback)
{
    sqlite3_stmt *st;
    int64_t nu_all = 0;
    *fallback = 0;
    /* scan: the rows in session order from the pool's first, each taken
     * or stepped over (the pool's sessions rise by id); else a lookup a
     * session; both in one read transaction (a statement's own costs a
     * lookup ~1,700 instructions more) */
    if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) ||
        sqlite3_prepare_v2(db, scan ? "SELECT session, n, rule, units FROM session_units "
                                      "WHERE session >= ?1 ORDER BY session"
                                    : "SELECT session, n, rule, units FROM session_units "
                                      "WHERE session = ?1", -1, &st, NULL))
        return -1;
    int at = 0;                     /* scan: a row is current */
    if (scan && p->ns) {
        sqlite3_bind_int64(st, 1, p->s[0].row);
        at = sqlite3_step(st) == SQLITE_ROW;
    }
    for (int si = 0; si < p->ns; si++) {
        const struct rsession *s = &p->s[si];
        int nu = 0, flags = 0;
        struct units_cur c;
        if (scan) {
            while (at && sqlite3_column_int64(st, 0) < s->row)
                at = sqlite3_step(st) == SQLITE_ROW;
        } else {
            sqlite3_bind_int64(st, 1, s->row);
            at = sqlite3_step(st) == SQLITE_ROW;
        }
        if (!at || sqlite3_column_int64(st, 0) != s->row ||
            sqlite3_column_int64(st, 1) != s->n_msgs ||
            sqlite3_column_int(st, 2) != STORE_UNITS_RULE ||
            store_units_open(&c, sqlite3_column_blob(st, 3),
                             (size_t)sqlite3_column_bytes(st, 3), &nu, &flags) ||
            !(flags & STORE_UNITS_IDS_RISE) ||
            (int)store_units_read(&c, us + nu_all, (size_t)nu) != nu ||
            rank_session_units(us + nu_all, nu, !!(flags & STORE_UNITS_DIALOG),
                               mt + sm[si].first, NULL, 0, sm[si].n, q->nt, w_msg, w_unit, avg_msg,
                               avg_unit, tfu, out + nu_all, s_reply + sm[si].first)) {
            (*fallback)++;
            nu = 0;
        }
        nu_all += nu;
        if (!scan)
            sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return nu_all;
}

static int same_d(double a, double b)
{
    return !memcmp(&a, &b, sizeof a);
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int runs = 11, scan = 0;
    if (argc < 3) {
        fprintf(stderr, "usage: bench_unitrank STORE QUESTION [--runs N] "
                        "[--only turns|units] [--scan]\n");
        return 2;
    }
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            only = argv[++i];
        else if (!strcmp(argv[i], "--scan"))
            scan = 1;
    }
    struct cairn *h = NULL;
    if (cairn_open(argv[1], CAIRN_OPEN_READONLY | CAIRN_OPEN_NOCREATE, &h) != CAIRN_OK) {
        fprintf(stderr, "bench_unitrank: %s\n", h ? cairn_errmsg(h) : "out of memory");
        cairn_close(h);
        return 1;
    }
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    o.method = CAIRN_METHOD_KEYWORD;
    o.budget = 1000;
    struct query q;
    struct pool p;
    memset(&q, 0, sizeof q);
    memset(&p, 0, sizeof p);
    if (query_parse(&q, argv[2], o.now == CAIRN_NO_TIME ? 1767225600 : o.now, 1) ||
        gather(h, &q, &o, NULL, NULL, NULL, &p)) {
        fprintf(stderr, "bench_unitrank: gather failed\n");
        return 1;
    }
    build_units(&p, 0);
    /* rank_default's weights (it sets the terms' IDFs) */
    if (rank_default(&p, &q, 1, NULL)) {
        fprintf(stderr, "bench_unitrank: rank failed\n");
        return 1;
    }
    int nt = q.nt;
    double w_msg[RECALL_MAX_TERMS], w_unit[RECALL_MAX_TERMS];
    for (int t = 0; t < nt; t++) {
        w_msg[t] = q.t[t].idf_msg;
        w_unit[t] = q.t[t].idf_unit;
    }
    double n_units = p.nm ? (double)p.total_msgs * p.nu / p.nm : 1;
    if (p.pruned && p.hit_msgs > 0)
        n_units = (double)p.total_msgs * p.hit_units / p.hit_msgs;
    double avg_msg = p.total_msgs ? (double)p.total_tok / p.total_msgs : 1;
    double avg_unit = n_units ? (double)p.total_tok / n_units : 1;

    /* the matches by session, as a recall over the rows would have them */
    struct unit_match *mt = calloc((size_t)p.nm + 1, sizeof *mt);
    struct sess_m *sm = calloc((size_t)p.ns + 1, sizeof *sm);
    size_t nu1 = (size_t)p.nu + 1;
    double *sh = calloc(nu1, sizeof *sh), *sr = calloc(nu1, sizeof *sr);
    double *sw = calloc(nu1, sizeof *sw), *sw2 = calloc(nu1, sizeof *sw2);
    uint64_t *has = calloc(nu1, sizeof *has);
    struct store_unit *us = calloc(nu1 + (size_t)p.nm, sizeof *us);
    struct unit_scores *out = calloc(nu1 + (size_t)p.nm, sizeof *out);
    double *tfu = calloc(((size_t)p.nm + 2) * ((size_t)nt + 1), sizeof *tfu);
    double *s_reply = calloc((size_t)p.nm + 1, sizeof *s_reply);
    int *mt_at = calloc((size_t)p.nm + 1, sizeof *mt_at);
    double *tt = calloc((size_t)runs + 1, sizeof *tt), *tu = calloc((size_t)runs + 1, sizeof *tu);
    if (!mt || !sm || !sh || !sr || !sw || !sw2 || !has || !us || !out || !tfu || !s_reply ||
        !mt_at || !tt || !tu) {
        fprintf(stderr, "bench_unitrank: out of memory\n");
        return 1;
    }
    int nmt = 0, matched_units = 0;
    for (int si = 0; si < p.ns; si++) {
        sm[si].first = nmt;
        for (int i = p.s[si].first_msg; i < p.s[si].first_msg + p.s[si].n_msgs; i++)
            if (p.m[i].tf) {
                mt_at[nmt] = i;
                mt[nmt++] = (struct unit_match){ p.m[i].row, p.m[i].ntok, p.m[i].tf };
            }
        sm[si].n = nmt - sm[si].first;
    }
    int fallback = 0;
    int64_t nu_rows = 0;
    for (int si = 1; si < p.ns; si++)
        if (p.s[si].row <= p.s[si - 1].row) {
            scan = 0;                   /* not in id order: lookups */
            break;
        }
    for (int r = 0; r < runs; r++) {
        if (!only || !strcmp(only, "turns")) {
            double t0 = bench_cpu_ms();
            by_turns(&p, &q, w_msg, w_unit, avg_msg, avg_unit, has, sh, sr, sw, sw2);
            tt[r] = bench_cpu_ms() - t0;
        }
        if (!only || !strcmp(only, "units")) {
            double t0 = bench_cpu_ms();
            nu_rows = by_rows(h->db, scan, &p, &q, mt, sm, w_msg, w_unit, avg_msg, avg_unit, us,
                              tfu, out, s_reply, &fallback);
            tu[r] = bench_cpu_ms() - t0;
        }
    }
    printf("pool: %d sessions, %d turns, %d units, %d matches, %d terms\n", p.ns, p.nm, p.nu,
           nmt, nt);
    if (!only || !strcmp(only, "turns"))
        printf("turns: build_units + score_units       %8.2f ms CPU (median of %d)\n",
               bench_median(tt, runs), runs);
    if (!only || !strcmp(only, "units"))
        printf("%s: rows read + rank_session_units  %8.2f ms CPU (median of %d); %lld units, "
               "%d sessions without a valid row\n", scan ? "scan " : "units",
               bench_median(tu, runs), runs, (long long)nu_rows, fallback);
    if (!only && !fallback) {
        /* every unit's scores and every reply's, bit for bit */
        int64_t differ = 0;
        for (int u = 0; u < p.nu; u++) {
            differ += !same_d(out[u].s_head, sh[u]) || !same_d(out[u].s_round, sr[u]) ||
                      !same_d(out[u].s_win, sw[u]) || !same_d(out[u].s_win2, sw2[u]) ||
                      out[u].has != has[u];
            matched_units += has[u] != 0;
        }
        for (int j = 0; j < nmt; j++) {
            int i = mt_at[j];
            if (i != p.u[p.m[i].unit].head)
                differ += !same_d(s_reply[j], p.m[i].s_msg);
        }
        printf("identical: %s (%lld of %d units and replies differ; %d units hold a term)\n",
               differ ? "NO" : "yes", (long long)differ, p.nu, matched_units);
        if (differ)
            return 1;
    }
    free(mt);
    free(sm);
    free(sh);
    free(sr);
    free(sw);
    free(sw2);
    free(has);
    free(us);
    free(out);
    free(tfu);
    free(s_reply);
    free(mt_at);
    free(tt);
    free(tu);
    pool_free(&p);
    query_free(&q);
    cairn_close(h);
    return 0;
}
