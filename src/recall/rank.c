/*
 * rank.c: ranking the units that get packed.
 *
 * A unit is a round: a user turn and the replies that follow it. In a
 * chat between people (every turn a "user" with a speaker) a unit is one
 * turn, since each turn is someone's own words; the baseline instead
 * pairs the turns into rounds, as "BM25 over whole rounds" has it.
 *
 * The default ranking fuses, by reciprocal rank (k = 60), BM25 of:
 *   - the unit's lead turn alone (what the user said),
 *   - the whole round (the turn with its replies),
 *   - a window: the round with the turns before and after it, so a short
 *     "ok, do it" borrows the topic of its neighbours.
 * A speaker named in the question counts as an occurrence of that name
 * in the speaker's turns. Units inside the question's time range get a
 * boost after fusion; a question that only names a period lists that
 * period in order.
 *
 * Hybrid: when the store has vectors of the current model (dense.c), two
 * more rankings join the fusion: the cosine of the unit's lead turn, and
 * the best cosine among the pieces of its replies. Without vectors the
 * two are skipped and the ranking is exactly the keyword pipeline's.
 * Between people, from DENSE_PRF_MIN tokens, a second dense pass (a
 * question vector moved towards the first ranking's best turns) adds one
 * more ranking and the units are ranked again (recall.c second_pass).
 */
#include <stdio.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "text/tokenize.h"
#include "util/os.h"
#include "util/sort.h"

/* fn(a) on a second thread while this one runs fn(b), when two (a pool
 * gather loaded in two halves: pool.threads), else both here, a first.
 * Every caller gives a and b disjoint outputs, so the values are the same
 * whichever thread computes them. */
static void run_two(int two, void *(*fn)(void *), void *a, void *b)
{
    pthread_t th;
    if (two && !pthread_create(&th, NULL, fn, a)) {
        fn(b);
        pthread_join(th, NULL);
        return;
    }
    fn(a);
    fn(b);
}

double rank_idf(double n, double df)
{
    if (df <= 0)
        return 0;
    if (df > n)
        n = df;
    return log(1.0 + (n - df + 0.5) / (df + 0.5));
}

double rank_bm25(const double *tf, int nt, double dl, double avgdl, const double *w)
{
    double s = 0;
    /* the length's part once, not a term (the same value, a division a
     * term fewer; issue 23, hook29) */
    double norm = rank_bm25_norm(dl, avgdl);
    for (int t = 0; t < nt; t++) {
        if (tf[t] <= 0)
            continue;
        s += rank_bm25_term(w[t], tf[t], norm);
    }
    return s;
}

/* A turn whose speaker the question names (SPK_FIELD): the speaker is a
 * field of its own, counted without the text's length normalisation, so
 * each of the person's turns holds the name alike and a short "Hey
 * Caroline!" does not outrank, on the name alone, a long turn telling what
 * she did. The text's counts are normalised as in rank_bm25, the fields'
 * counts added and saturated once (BM25F: Robertson, Zaragoza and Taylor,
 * CIKM 2004). */
double rank_bm25f(const double *tf, const double *x, int nt, double dl, double avgdl,
                  const double *w)
{
    double s = 0;
    if (avgdl <= 0)
        avgdl = 1;
    double norm = 1 - BM25_B + BM25_B * dl / avgdl;
    for (int t = 0; t < nt; t++) {
        double f = tf[t] / norm + x[t];
        if (f > 0)
            s += w[t] * f * (BM25_K1 + 1) / (f + BM25_K1);
    }
    return s;
}

_Static_assert(RECALL_MAX_TERMS <= 64, "unit_terms keeps a unit's terms in 64 bits");

/* The terms (bit t: term t, nt <= RECALL_MAX_TERMS = 64) some message of
 * each unit holds, into has[nu]: one read of the pool for every term's
 * unit count, and the units a window needs to read. */
struct terms_job {
    const struct pool *p;
    int                nt, lo, hi;
    uint64_t          *has;
};

static void *unit_terms_run(void *arg)
{
    const struct terms_job *j = arg;
    const struct pool *p = j->p;
    int nt = j->nt;
    uint64_t *has = j->has;
    for (int u = j->lo; u < j->hi; u++) {
        uint64_t b = 0;
        for (int i = p->u[u].first; i <= p->u[u].last; i++) {
            const uint16_t *tf = p->m[i].tf;
            for (int t = 0; tf && t < nt; t++)
                b |= (uint64_t)(tf[t] > 0) << t;
        }
        has[u] = b;
    }
    return NULL;
}

/* On two threads for a pool loaded in two (each unit's bits its own). */
static void unit_terms(const struct pool *p, int nt, uint64_t *has)
{
    int two = p->threads >= 2 && p->nu >= 2;
    struct terms_job a = { p, nt, 0, two ? p->nu / 2 : 0, has };
    struct terms_job b = { p, nt, a.hi, p->nu, has };
    run_two(two, unit_terms_run, &a, &b);
}

/* For each term, the units that contain it in any of their messages,
 * into df[nt]: one pass over has[] for all terms, visiting only the set
 * bits (most units of a big pool hold no term; a pass a term read all of
 * them: issue 23, exact34). */
static void unit_dfs(const struct pool *p, const uint64_t *has, int nt, int *df)
{
    memset(df, 0, (size_t)nt * sizeof *df);
    for (int u = 0; u < p->nu; u++)
        for (uint64_t b = has[u]; b; b &= b - 1)
            df[__builtin_ctzll(b)]++;
}

/* A unit count, with the units of the sessions gather.c left out
 * estimated: their matching messages times the loaded units per matching
 * message. */
static int unit_df_est(const struct pool *p, int df, const struct query *q, int t)
{
    int left = p->pruned_df[t], loaded = q->t[t].df_msg - left;
    if (!left)
        return df;
    return df + (loaded > 0 ? (int)((double)left * df / loaded + 0.5) : left);
}

/* How many assistant messages follow one another from message i on. */
static int reply_run(const struct pool *p, const struct rsession *s, int i)
{
    int n = 0;
    while (i + n < s->first_msg + s->n_msgs && p->m[i + n].role == ROLE_ASSISTANT)
        n++;
    return n;
}

/* The units of sessions [slo, shi) into out[], their turns' m->unit the
 * index in out (build_units moves a second half's into place). */
struct units_job {
    struct pool  *p;
    int           raw, slo, shi;
    struct runit *out;
    int           n;
};

static void *units_run(void *arg)
{
    struct units_job *j = arg;
    struct pool *p = j->p;
    struct runit *out = j->out;
    int raw_rounds = j->raw, nu = 0;
    for (int si = j->slo; si < j->shi; si++) {
        struct rsession *s = &p->s[si];
        const char *first_spk = s->n_msgs ? p->m[s->first_msg].speaker : NULL;
        int run_first = -1, run_long = 0;
        for (int i = s->first_msg; i < s->first_msg + s->n_msgs; i++) {
            struct rmsg *m = &p->m[i];
            int start;
            if (!s->dialog && m->role == ROLE_ASSISTANT &&
                (i == s->first_msg || p->m[i - 1].role != ROLE_ASSISTANT)) {
                run_first = i;                  /* a run of replies begins */
                run_long = reply_run(p, s, i) > UNIT_MAX_REPLIES;
            }
            if (i == s->first_msg) {
                start = 1;
            } else if (!s->dialog) {
                /* a long run of replies (an agent's steps within one
                 * prompt): each reply after the first leads a unit of its
                 * own, so it is ranked and packed on its own merit */
                start = m->role == ROLE_USER ||
                        (!raw_rounds && run_long && i > run_first);
            } else if (!raw_rounds) {
                start = 1;
            } else {
                /* pair the turns: a round opens where the first speaker
                 * speaks again after the other */
                const char *prev = p->m[i - 1].speaker;
                int is_first = first_spk && m->speaker && !strcmp(first_spk, m->speaker);
                int prev_first = first_spk && prev && !strcmp(first_spk, prev);
                start = is_first && !prev_first;
            }
            if (start) {
                struct runit *u = &out[nu++];
                memset(u, 0, sizeof *u);
                u->sess = si;
                u->first = u->last = u->head = i;
            } else {
                out[nu - 1].last = i;
            }
            m->unit = nu - 1;
        }
    }
    j->n = nu;
    return NULL;
}

/* A pool gather loaded in two (pool.threads) has the units of its second
 * half of sessions built on a second thread (~43 M instructions at a
 * million messages, one core's before; issue 23, exact38): written after
 * the first half's turns' count in p->u (a session has no more units than
 * turns, so the first half's cannot reach them), then moved down behind
 * the first half's units and their turns' unit indices offset. The units
 * and indices are those of one pass over every session. */
void build_units(struct pool *p, int raw_rounds)
{
    if (p->pu)
        return;                 /* gathered over unit rows: built from them */
    free(p->u);
    p->u = NULL;
    free(p->ord);
    p->ord = NULL;
    p->nu = p->cu = 0;
    p->u = os_alloc_big((size_t)(p->nm ? p->nm : 1) * sizeof *p->u);
    if (!p->u)
        return;
    p->cu = p->nm;
    int two = p->threads >= 2 && p->ns >= 2, mid = two ? p->ns / 2 : p->ns;
    /* the second half's turns: from its first session's on, every first
     * half's turn before them (as gather fills the pool; else one pass) */
    int mb = p->nm;
    for (int si = mid; si < p->ns; si++)
        if (p->s[si].n_msgs) {
            mb = p->s[si].first_msg;
            break;
        }
    for (int si = 0; two && si < p->ns; si++)
        if (p->s[si].n_msgs && (si < mid ? p->s[si].first_msg + p->s[si].n_msgs > mb
                                         : p->s[si].first_msg < mb))
            two = 0;
    if (!two)
        mid = p->ns, mb = p->nm;
    struct units_job a = { p, raw_rounds, 0, mid, p->u, 0 };
    struct units_job b = { p, raw_rounds, mid, p->ns, p->u + mb, 0 };
    run_two(two, units_run, &b, &a);
    if (b.n) {
        if (mb != a.n)
            memmove(p->u + a.n, p->u + mb, (size_t)b.n * sizeof *p->u);
        for (int i = mb; i < p->nm; i++)
            p->m[i].unit += a.n;
    }
    p->nu = a.n + b.n;
}

/* For each message, whether its speaker is named in the question. */
struct spk_match { const struct query *q; int *hit; };

static int spk_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct spk_match *sm = arg;
    for (int t = 0; t < sm->q->nt; t++) {
        if (strlen(sm->q->t[t].norm) == n && !memcmp(sm->q->t[t].norm, tok, n))
            sm->hit[t] = 1;
    }
    return 0;
}

/* Which of q's terms name each turn's speaker, into spk[nm][nt] (NULL:
 * only counted; hit[nt] is scratch). The turns with a named speaker, or
 * -1 on no memory (the stemmer's). */
static int speaker_terms(const struct pool *p, const struct query *q, int *hit, double *spk)
{
    const char *last = NULL;
    int nt = q->nt, named = 0, any = 0;
    for (int i = 0; i < p->nm; i++) {
        const char *name = p->m[i].speaker;
        if (!name)
            continue;
        if (!last || strcmp(last, name)) {
            struct spk_match sm = { q, hit };
            memset(hit, 0, (size_t)nt * sizeof *hit);
            if (text_tokenize(name, strlen(name), 1, spk_cb, &sm))
                return -1;
            last = name;
            any = 0;
            for (int t = 0; t < nt; t++)
                any |= hit[t];
        }
        named += any;
        for (int t = 0; spk && t < nt; t++)
            spk[(size_t)i * (size_t)nt + (size_t)t] = hit[t];
    }
    return named;
}

int rank_named_speaker(const struct pool *p, const struct query *q, const char **name)
{
    const char *last = NULL, *found = NULL;
    int hit[RECALL_MAX_TERMS];
    *name = NULL;
    for (int i = 0; i < p->nm; i++) {
        const char *spk = p->m[i].speaker;
        if (!spk || (last && !strcmp(last, spk)) || (found && !strcmp(found, spk)))
            continue;
        struct spk_match sm = { q, hit };
        int any = 0;
        memset(hit, 0, sizeof hit);
        if (text_tokenize(spk, strlen(spk), 1, spk_cb, &sm))
            return -1;
        last = spk;
        for (int t = 0; t < q->nt; t++)
            any |= hit[t];
        if (any && found)
            return 0;               /* two people named: whose words? */
        if (any)
            found = spk;
    }
    *name = found;
    return found != NULL;
}

/* Sum of term counts over messages [a, b] into tf; returns the length. */
static double sum_tf(const struct pool *p, int a, int b, int nt, const double *extra_base,
                     double *tf)
{
    double dl = 0;
    memset(tf, 0, (size_t)nt * sizeof *tf);
    for (int i = a; i <= b; i++) {
        const struct rmsg *m = &p->m[i];
        dl += m->ntok;
        if (m->tf)
            for (int t = 0; t < nt; t++)
                tf[t] += m->tf[t];
        if (extra_base)
            for (int t = 0; t < nt; t++)
                tf[t] += extra_base[(size_t)i * (size_t)nt + (size_t)t];
    }
    return dl;
}

/* BM25 of message i alone: sum_tf and rank_bm25 over [i, i], the same
 * sums in the same order, without them for a message that holds no term
 * and has no named speaker (0: most of a big pool, where the zeroing
 * and the calls cost more than the rest). */
static double msg_bm25(const struct pool *p, int i, int nt, const double *extra_base,
                       double avgdl, const double *w)
{
    const struct rmsg *m = &p->m[i];
    const double *x = extra_base ? extra_base + (size_t)i * (size_t)nt : NULL;
    double tf[RECALL_MAX_TERMS];
    if (!m->tf && !x)
        return 0;
    if (x && SPK_FIELD) {           /* the named speaker as a field of its own */
        for (int t = 0; t < nt; t++)
            tf[t] = m->tf ? m->tf[t] : 0;
        return rank_bm25f(tf, x, nt, 0.0 + m->ntok, avgdl, w);
    }
    /* 0 + a count is the count exactly (no count is -0): no zeroing */
    for (int t = 0; t < nt; t++) {
        tf[t] = m->tf ? m->tf[t] : 0;
        if (x)
            tf[t] += x[t];
    }
    return rank_bm25(tf, nt, 0.0 + m->ntok, avgdl, w);
}

void unit_window(const struct pool *p, int u, int span, int *first, int *last)
{
    const struct runit *un = &p->u[u];
    int a = un->first, b = un->last;
    for (int d = 1; d <= span; d++) {
        if (u - d >= 0 && p->u[u - d].sess == un->sess)
            a = p->u[u - d].head;
        if (u + d < p->nu && p->u[u + d].sess == un->sess)
            b = p->u[u + d].last;
    }
    *first = a;
    *last = b;
}

/* BM25 of unit u together with up to `span` units on each side of it in
 * the same session; the average length scales with the window. A window
 * whose units hold no term (has, unit_terms) scores 0 unread: BM25 adds
 * nothing for a term counted 0 times. */
static double window_bm25(const struct pool *p, const uint64_t *has, int u, int span, int nt,
                          double *tf, double avg_unit, const double *w)
{
    const struct runit *un = &p->u[u];
    /* the window's ends found in the same loop as its terms (unit_window's
     * a and b: a unit's head is its first message) */
    int ua = u, ub = u;
    uint64_t any = has[u];
    for (int d = 1; d <= span; d++) {
        if (u - d >= 0 && p->u[u - d].sess == un->sess) {
            ua = u - d;
            any |= has[u - d];
        }
        if (u + d < p->nu && p->u[u + d].sess == un->sess) {
            ub = u + d;
            any |= has[u + d];
        }
    }
    if (!any)
        return 0;
    int a = p->u[ua].head, b = p->u[ub].last;
    double dl = sum_tf(p, a, b, nt, NULL, tf);
    return rank_bm25(tf, nt, dl, avg_unit * (b - a + 1) / (un->last - un->first + 1), w);
}

/* One fused ranking's places: the units that scored in s[] (keys[k].val,
 * k < n) and each one's place among them (place[k]; ties by pool order:
 * sort.h keeps ties as the merge sort before it did). kv: 2 * nu pairs of
 * scratch, then nu places (uint32_t), one allocation for all of
 * rank_default's rankings (each its own was 15 MB of fresh pages at a
 * million messages; issue 23, exact30). rc -1 on no memory (a ranking
 * left out would change the order without a word). */
struct rrf_job {
    const struct pool *p;
    const double      *s;
    struct sort_kv    *kv;     /* NULL: allocated by the job (a second thread's) */
    int                n, rc, own;
    int                dense;  /* most units score (the window's): keyed without a branch */
};

static void *rrf_places(void *arg)
{
    struct rrf_job *j = arg;
    const struct pool *p = j->p;
    size_t nu1 = (size_t)(p->nu ? p->nu : 1);
    if (!j->kv) {
        /* on the thread that fills it: its fresh pages fault in there */
        j->kv = os_alloc_filled(2 * nu1 * sizeof *j->kv + nu1 * sizeof(uint32_t));
        j->own = 1;
        if (!j->kv) {
            j->rc = -1;
            return NULL;
        }
    }
    struct sort_kv *keys = j->kv, *tmp = j->kv + p->nu;
    uint32_t *place = (uint32_t *)(j->kv + 2 * (size_t)p->nu);
    const double *s = j->s;
    int n = 0;
    if (j->dense) {
        /* every unit's pair written, the count moved by those that
         * scored: no branch a unit, the pair past the last scratch (keys
         * holds nu). Fewer mispredicted branches when many units score
         * (the window's: 82% of them on bench_big's q4 at a million
         * messages, the longer side of rrf_keyword's join), more
         * instructions when few do (the head's: 12% there), so only
         * there (issue 23, rank53) */
        for (int i = 0; i < p->nu; i++) {
            keys[n].key = sort_key_pos(s[i]);
            keys[n].val = i;
            n += s[i] > 0;
        }
    } else {
        for (int i = 0; i < p->nu; i++) {
            if (s[i] > 0) {
                keys[n].key = sort_key_double(s[i]);
                keys[n].val = i;
                n++;
            }
        }
    }
    j->n = n;
    /* each unit's place, not the order: a ranking's scores repeat, and
     * the places of its few distinct scores cost less than the sort of
     * every unit (issue 23, exact34) */
    int rc = sort_kv_places_desc(keys, (size_t)n, tmp, (size_t)p->nu, place);
    if (rc == 1) {                 /* few, or mostly distinct: sorted */
        rc = sort_kv_desc_tmp(keys, (size_t)n, tmp);
        for (int r = 0; rc == 0 && r < n; r++)
            place[r] = (uint32_t)r;
    }
    j->rc = rc < 0 ? -1 : 0;
    return NULL;
}

/* Adds w / (k + place + 1) to each unit's fused score by the ranking j
 * placed: w_dialog for units of chats between people, w_ua for
 * user-assistant. The order of the additions changes no sum, each unit
 * getting one term of this ranking; the rankings are added in a fixed
 * order (rank_default), so each unit's sum is the same double. */
static void rrf_add(struct pool *p, const struct rrf_job *j, double w_dialog, double w_ua)
{
    const struct sort_kv *keys = j->kv;
    const uint32_t *place = (const uint32_t *)(j->kv + 2 * (size_t)p->nu);
    /* one weight for every unit (the two the same, or every session of
     * one kind: a pool over unit rows has no dialog) needs no unit's
     * session, a scattered read a unit (issue 23, rank52) */
    int n_dialog = 0;
    for (int si = 0; si < p->ns && w_dialog != w_ua; si++)
        n_dialog += p->s[si].dialog != 0;
    if (w_dialog == w_ua || n_dialog == 0 || n_dialog == p->ns) {
        double w = w_dialog != w_ua && n_dialog ? w_dialog : w_ua;
        for (int k = 0; k < j->n; k++)
            p->u[keys[k].val].score += w / (RRF_K + place[k] + 1);
        return;
    }
    for (int k = 0; k < j->n; k++) {
        struct runit *u = &p->u[keys[k].val];
        u->score += (p->s[u->sess].dialog ? w_dialog : w_ua) / (RRF_K + place[k] + 1);
    }
}

/* A fused ranking by s[], placed and added on this thread. Returns 0, or
 * -1 on no memory. */
static int rrf(struct pool *p, const double *s, double w_dialog, double w_ua, struct sort_kv *kv)
{
    struct rrf_job j = { p, s, kv, 0, 0, 0, 0 };
    rrf_places(&j);
    if (j.rc)
        return -1;
    rrf_add(p, &j, w_dialog, w_ua);
    return 0;
}

/* The three keyword rankings that every recall fuses, head, round and
 * window, then the wider window (between people). A pool loaded in two
 * (pool.threads) has the window's places (the largest ranking: ~300,000
 * units at a million messages) counted on a second thread while this one
 * places and adds the head's and the round's, then places the wider
 * window's in kv (free again; the window's job has its own): the longer
 * side of the join was the window's, and the wider window's places (a
 * loop over every unit, ~3 M instructions at a million messages, none
 * scoring where no session is between people) need no other ranking's.
 * The window's are added after the join, then the wider window's, so
 * every unit's sum is added in the one-thread order. Returns 0, or -1 on
 * no memory. */
static int rrf_keyword(struct pool *p, const double *s_head, const double *s_round,
                       const double *s_win, const double *s_win2, struct sort_kv *kv)
{
    struct rrf_job win = { p, s_win, NULL, 0, 0, 0, 1 };
    struct rrf_job win2 = { p, s_win2, kv, 0, 0, 0, 0 };
    pthread_t th;
    int two = p->threads >= 2 && !pthread_create(&th, NULL, rrf_places, &win);
    if (!two)
        win.kv = kv;
    int rc = rrf(p, s_head, W_HEAD, W_HEAD, kv) || rrf(p, s_round, W_ROUND, W_ROUND, kv) ? -1 : 0;
    if (two) {
        if (!rc)
            rrf_places(&win2);
        pthread_join(th, NULL);
    } else if (!rc) {
        rrf_places(&win);
    }
    if (!rc && !win.rc)
        rrf_add(p, &win, W_WIN_DIALOG, W_WIN_UA);
    if (win.own)
        free(win.kv);
    if (rc || win.rc)
        return -1;
    if (!two)
        rrf_places(&win2);
    if (win2.rc)
        return -1;
    rrf_add(p, &win2, W_WIN2_DIALOG, 0);
    return 0;
}

/* The question is a transcript whose lines are headed by who speaks
 * (query.c): a unit whose lead turn neither names one of them nor is
 * said by one keeps LABEL_OTHER of its score, when some unit does (what
 * is recalled for a person's words is about that person: memories that
 * say "Bart danced at the party"). */
static int label_demote(struct pool *p, const struct query *q)
{
    int nt = q->nt, any = 0;
    for (int t = 0; t < nt; t++)
        any |= q->t[t].label;
    if (!any)
        return 0;
    char *has = calloc((size_t)(p->nu ? p->nu : 1), 1);
    int *hit = calloc((size_t)(nt ? nt : 1), sizeof *hit);
    if (!has || !hit) {
        free(has);
        free(hit);
        return -1;
    }
    int named = 0;
    for (int u = 0; u < p->nu; u++) {
        const struct rmsg *m = &p->m[p->u[u].head];
        for (int t = 0; t < nt && m->tf && !has[u]; t++)
            has[u] = q->t[t].label && m->tf[t] > 0;
        if (!has[u] && m->speaker) {
            struct spk_match sm = { q, hit };
            memset(hit, 0, (size_t)nt * sizeof *hit);
            if (text_tokenize(m->speaker, strlen(m->speaker), 1, spk_cb, &sm)) {
                free(has);
                free(hit);
                return -1;
            }
            for (int t = 0; t < nt && !has[u]; t++)
                has[u] = q->t[t].label && hit[t];
        }
        named += has[u];
    }
    for (int u = 0; u < p->nu && named; u++)
        if (!has[u])
            p->u[u].score *= LABEL_OTHER;
    free(has);
    free(hit);
    return 0;
}

/* The second pass's ranks (dense_feedback, recall.c second_pass): each
 * unit by its lead turn's cosine to the question moved towards the first
 * ranking's best turns, between people only. Before that pass, or when it
 * did not run, no message has one and nothing is added. */
static int prf_rank(struct pool *p, double w, struct sort_kv *kv)
{
    if (w <= 0)
        return 0;
    double *s = calloc((size_t)(p->nu ? p->nu : 1), sizeof *s);
    if (!s)
        return -1;
    for (int u = 0; u < p->nu; u++)
        s[u] = p->s[p->u[u].sess].dialog ? p->m[p->u[u].head].prf : 0;
    int rc = rrf(p, s, w, 0, kv);
    free(s);
    return rc;
}

/* The question in the named speaker's words (dense_persona, recall.c
 * persona_pass): each unit by its lead turn's cosine to it, between
 * people only. Before that pass, or when it did not run, p->persp is NULL
 * and nothing is added. */
static int persp_rank(struct pool *p, double w, struct sort_kv *kv)
{
    if (w <= 0 || !p->persp)
        return 0;
    double *s = calloc((size_t)(p->nu ? p->nu : 1), sizeof *s);
    if (!s)
        return -1;
    for (int u = 0; u < p->nu; u++)
        s[u] = p->s[p->u[u].sess].dialog ? p->persp[p->u[u].head] : 0;
    int rc = rrf(p, s, w, 0, kv);
    free(s);
    return rc;
}

/* The entity pass's ranks (entity.c, recall.c entity_second): each unit
 * by the BM25 of its best message over the rare words the first ranking's
 * best turns share. Before the pass, or when it did not run, p->ent is
 * NULL and nothing is added. */
static int ent_rank(struct pool *p, struct sort_kv *kv)
{
    return p->ent ? rrf(p, p->ent, ENT_W_DIALOG, ENT_W_UA, kv) : 0;
}

/* A length prior between people (W_LEN_DIALOG; 0: off), from a budget
 * of LEN_DIALOG_MIN_BUDGET tokens (pool.budget): the units that
 * matched something (a word, a window, a dense hit) ranked by their lead
 * turn's length, longest first, as one more fused ranking. Why it was
 * tried: of LoCoMo's multi-hop evidence turns missed at 2k, most are
 * longer than the turns of their session ranked above them (docs/
 * ARCHITECTURE.md, "Multi-hop: ranking a turn within its session").
 * Returns 0, or -1 on no memory. */
static int len_rank(struct pool *p, const double *s_head, const double *s_win,
                    const double *s_win2, const struct dense_result *dense, struct sort_kv *kv)
{
    double w = W_LEN_DIALOG;       /* a variable: 0.0 (off) compares as a value */
    /* below the gate the budget holds only the most precise units, and a
     * long turn costs it what it gains in rank */
    if (w <= 0 || !p->any_dialog || p->budget < LEN_DIALOG_MIN_BUDGET)
        return 0;
    double *s = calloc((size_t)(p->nu ? p->nu : 1), sizeof *s);
    if (!s)
        return -1;
    for (int u = 0; u < p->nu; u++) {
        const struct runit *un = &p->u[u];
        int matched = s_head[u] > 0 || s_win[u] > 0 || s_win2[u] > 0 ||
                      (dense && p->m[un->head].dense > 0);
        s[u] = p->s[un->sess].dialog && matched ? p->m[un->head].ntok : 0;
    }
    int rc = rrf(p, s, w, 0, kv);
    free(s);
    return rc;
}

static double max_of(const double *s, int n)
{
    double b = 0;
    for (int i = 0; i < n; i++)
        if (s[i] > b)
            b = s[i];
    return b;
}

int rank_lrn_features(const struct pool *p, const double *s_head, const double *s_win,
                      const double *s_win2, double *f)
{
    int nu = p->nu, nh = 0, rc = -1;
    double bh = max_of(s_head, nu), bw = max_of(s_win, nu), bw2 = max_of(s_win2, nu);
    double bent = p->ent ? max_of(p->ent, nu) : 0;
    double *sess_best = calloc((size_t)(p->ns ? p->ns : 1), sizeof *sess_best);
    int *hits = malloc((size_t)(nu ? nu : 1) * sizeof *hits);
    if (!sess_best || !hits)
        goto out;
    /* the cosines of the dense hits: their best, mean and spread */
    double bc = 0, bp = 0, sum = 0, sq = 0;
    for (int u = 0; u < nu; u++) {
        const struct rmsg *m = &p->m[p->u[u].head];
        if (s_head[u] > sess_best[p->u[u].sess])
            sess_best[p->u[u].sess] = s_head[u];
        if (m->prf > 0 && m->prf - 1 > bp)
            bp = m->prf - 1;
        if (m->dense <= 0)
            continue;
        double c = m->dense - 1;
        bc = c > bc ? c : bc;
        sum += c;
        sq += c * c;
        hits[nh++] = u;
    }
    double mean = nh ? sum / nh : 0, var = nh ? sq / nh - mean * mean : 0;
    double sd = var > 1e-12 ? sqrt(var) : 0;
    /* how far the best hit stands out of the question's hits (its
     * z-score), less LRN_MARG_MID: a per-question weight on dense */
    double marg = sd > 0 ? (bc - mean) / sd - LRN_MARG_MID : 0;
    for (int u = 0; u < nu; u++) {
        const struct runit *un = &p->u[u];
        const struct rmsg *m = &p->m[un->head];
        double *x = f + (size_t)u * RANK_LRN_NF;
        memset(x, 0, RANK_LRN_NF * sizeof *x);
        if (!p->s[un->sess].dialog)
            continue;
        x[RANK_LRN_HEAD] = bh > 0 ? s_head[u] / bh : 0;
        x[RANK_LRN_WIN] = bw > 0 ? s_win[u] / bw : 0;
        x[RANK_LRN_WIN2] = bw2 > 0 ? s_win2[u] / bw2 : 0;
        if (m->dense > 0 && bc > 0) {
            x[RANK_LRN_COS] = (m->dense - 1) / bc;
            x[RANK_LRN_COSZ] = sd > 0 ? (m->dense - 1 - mean) / sd : 0;
        }
        x[RANK_LRN_SESS] = bh > 0 ? sess_best[un->sess] / bh : 0;
        x[RANK_LRN_LEN] = m->ntok / (m->ntok + 20.0);
        x[RANK_LRN_PRF] = m->prf > 0 && bp > 0 ? (m->prf - 1) / bp : 0;
        x[RANK_LRN_ENT] = bent > 0 ? p->ent[u] / bent : 0;
    }
    /* each hit's place among the hits (ties by pool order), as a rank-1
     * share: the hits are the dense top-k's turns, few */
    for (int i = 0; i < nh; i++) {
        float d = p->m[p->u[hits[i]].head].dense;
        int place = 0;
        for (int j = 0; j < nh; j++) {
            float e = p->m[p->u[hits[j]].head].dense;
            place += e > d || (e == d && j < i);
        }
        double *x = f + (size_t)hits[i] * RANK_LRN_NF;
        if (!p->s[p->u[hits[i]].sess].dialog)
            continue;
        x[RANK_LRN_DRRF] = (RRF_K + 1) / (RRF_K + place + 1);
        x[RANK_LRN_DMARG] = marg * x[RANK_LRN_DRRF];
    }
    rc = 0;
out:
    free(sess_best);
    free(hits);
    return rc;
}

#ifdef CAIRN_RANK_DUMP
/* A build for fitting the weights only (make CFLAGS=-DCAIRN_RANK_DUMP):
 * each unit's features, its fused score so far and where it is, one line
 * a unit, appended to the file $CAIRN_RANK_DUMP. The shipped library
 * writes nothing. */
static void lrn_dump(const struct pool *p, const struct query *q, const double *f)
{
    const char *path = getenv("CAIRN_RANK_DUMP");
    FILE *out = path && *path ? fopen(path, "a") : NULL;
    if (!out)
        return;
    static int call;
    call++;
    for (int u = 0; u < p->nu; u++) {
        const struct runit *un = &p->u[u];
        if (un->score <= 0 || !p->s[un->sess].dialog)
            continue;
        fprintf(out, "%d\t%d\t%s\t%s\t%d\t%.9g\t%d", call, p->budget, q->text,
                p->s[un->sess].ext_id ? p->s[un->sess].ext_id : "",
                p->m[un->head].position, un->score * (RRF_K + 1), un->in_range);
        for (int k = 0; k < RANK_LRN_NF; k++)
            fprintf(out, "\t%.6g", f[(size_t)u * RANK_LRN_NF + k]);
        fputc('\n', out);
    }
    fclose(out);
}
#endif

int rank_learned(struct pool *p, const struct query *q, const double *s_head,
                 const double *s_win, const double *s_win2, const double *w)
{
    int on = 0;
    for (int k = 0; k < RANK_LRN_NF; k++)
        on |= w[k] != 0;
#ifndef CAIRN_RANK_DUMP
    if (!on)
        return 0;
#endif
    if (!p->any_dialog || p->nu == 0)
        return 0;
    double *f = malloc((size_t)p->nu * RANK_LRN_NF * sizeof *f);
    if (!f || rank_lrn_features(p, s_head, s_win, s_win2, f)) {
        free(f);
        return -1;
    }
#ifdef CAIRN_RANK_DUMP
    lrn_dump(p, q, f);
#endif
    for (int u = 0; u < p->nu && on; u++) {
        struct runit *un = &p->u[u];
        double add = 0;
        /* a unit nothing matched stays unranked */
        if (un->score <= 0)
            continue;
        for (int k = 0; k < RANK_LRN_NF; k++)
            add += w[k] * f[(size_t)u * RANK_LRN_NF + k];
        un->score += add / (RRF_K + 1);
        if (un->score <= 0)
            un->score = 1e-9;      /* matched: ranked, last */
    }
    free(f);
    return 0;
}

/* The shipped weights (LRN_* in policy.h); the fitting build reads
 * "w0,w1,..." from $CAIRN_LRN_W instead, to try weights without a
 * rebuild. Returns 0, or -1 on no memory. */
static int lrn_fuse(struct pool *p, const struct query *q, const double *s_head,
                    const double *s_win, const double *s_win2)
{
    double w[RANK_LRN_NF] = { LRN_W_HEAD, LRN_W_WIN, LRN_W_WIN2, LRN_W_COS, LRN_W_COSZ,
                              LRN_W_SESS, LRN_W_LEN, LRN_W_PRF, LRN_W_ENT, LRN_W_DRRF,
                              LRN_W_DMARG };
#ifdef CAIRN_RANK_DUMP
    const char *env = getenv("CAIRN_LRN_W");
    for (int k = 0; env && *env && k < RANK_LRN_NF; k++) {
        char *end;
        w[k] = strtod(env, &end);
        env = *end == ',' ? end + 1 : end;
    }
#endif
    return rank_learned(p, q, s_head, s_win, s_win2, w);
}

/* Topical segments (segment.c, issue 16): the segments ranked as units
 * of their own, each unit taking its segment's place (not one place a
 * unit: a segment's turns tie, and sort order would rank its first turns
 * above its last). The BM25 of a segment uses IDF over units and an
 * average length scaled with the segment, as a window's. */
int rank_segments(struct pool *p, int nt, const double *w_unit, double avg_unit,
                  double w_dense, double w_bm25)
{
    if (!p->seg || !p->nseg || (w_dense <= 0 && w_bm25 <= 0))
        return 0;
    int ns = p->nseg, rc = -1;
    double *bm = calloc((size_t)ns, sizeof *bm), *len = calloc((size_t)ns, sizeof *len);
    double *tf = calloc((size_t)ns * (size_t)(nt ? nt : 1), sizeof *tf);
    int *place = malloc((size_t)ns * sizeof *place);
    struct sort_kv *o = malloc((size_t)ns * sizeof *o);
    if (!bm || !len || !tf || !place || !o)
        goto out;
    for (int i = 0; i < p->nm; i++) {
        int g = p->seg[i];
        if (g < 0)
            continue;
        len[g] += 1;
        bm[g] += p->m[i].ntok;      /* the length, until the scores below */
        for (int t = 0; p->m[i].tf && t < nt; t++)
            tf[(size_t)g * (size_t)nt + (size_t)t] += p->m[i].tf[t];
    }
    for (int g = 0; g < ns; g++)
        bm[g] = rank_bm25(tf + (size_t)g * (size_t)nt, nt, bm[g], avg_unit * len[g], w_unit);
    for (int pass = 0; pass < 2; pass++) {
        double w = pass ? w_bm25 : w_dense;
        int n = 0;
        if (w <= 0)
            continue;
        for (int g = 0; g < ns; g++) {
            double sc = pass ? bm[g] : p->seg_cos[g];
            if (sc > 0) {
                o[n].key = sort_key_double(sc);
                o[n++].val = g;
            }
        }
        if (sort_kv_desc(o, (size_t)n))
            goto out;
        for (int g = 0; g < ns; g++)
            place[g] = -1;
        for (int r = 0; r < n; r++)
            place[o[r].val] = r;
        for (int u = 0; u < p->nu; u++) {
            int g = p->seg[p->u[u].head];
            if (g >= 0 && place[g] >= 0)
                p->u[u].score += w / (RRF_K + place[g] + 1);
        }
    }
    rc = 0;
out:
    free(bm);
    free(len);
    free(tf);
    free(place);
    free(o);
    return rc;
}

/* SEG_LIFT: each unit gains lift times the best fused score among the
 * other units of its segment (a turn deep in a segment whose other turns
 * match). Returns 0, or -1 on no memory. */
static int seg_lift(struct pool *p, double lift)
{
    if (!p->seg || !p->nseg || lift <= 0)
        return 0;
    double *b1 = calloc((size_t)p->nseg, sizeof *b1), *b2 = calloc((size_t)p->nseg, sizeof *b2);
    if (!b1 || !b2) {
        free(b1);
        free(b2);
        return -1;
    }
    for (int u = 0; u < p->nu; u++) {
        int g = p->seg[p->u[u].head];
        double sc = p->u[u].score;
        if (g < 0)
            continue;
        if (sc > b1[g]) {
            b2[g] = b1[g];
            b1[g] = sc;
        } else if (sc > b2[g]) {
            b2[g] = sc;
        }
    }
    for (int u = 0; u < p->nu; u++) {
        int g = p->seg[p->u[u].head];
        if (g < 0)
            continue;
        /* the best of the others: the second best when this is the best */
        double other = p->u[u].score >= b1[g] ? b2[g] : b1[g];
        p->u[u].score += lift * other;
    }
    free(b1);
    free(b2);
    return 0;
}

/* A time or position negated for "the first time" (descending sorts put
 * the earliest first), in two's complement: an unknown time
 * (CAIRN_NO_TIME, INT64_MIN) stays the smallest key either way, so it is
 * ranked last in both orders, and no signed overflow is computed. */
static int64_t ord_key(int neg, int64_t v)
{
    return neg ? (int64_t)(0 - (uint64_t)v) : v;
}

/* A question about the first (last) time (query_ordinal): of the ORD_TOP
 * best units, the earliest (latest) gets W_ORDINAL in rank-1 units, the
 * next half that, and so on: a ranking by time among those the words
 * chose, so the topic still decides which units compete and time decides
 * between them. In order of the lead turn's time, then of the session's
 * start, then of position (a coding store gives every turn of a session
 * its start); with ORD_DAY the units of one session share its place, and
 * the words order them. Returns 0, or -1 on no memory. */
static int order_boost(struct pool *p, int ordinal)
{
    int top = ORD_TOP;
    double w = W_ORDINAL;
    if (!ordinal || top <= 0 || w <= 0 || p->nu == 0)
        return 0;
    struct sort_kv *o = os_alloc_big((size_t)p->nu * sizeof *o);
    if (!o)
        return -1;
    int n = 0;
    for (int u = 0; u < p->nu; u++) {
        if (p->u[u].score > 0) {
            o[n].key = sort_key_double(p->u[u].score);
            o[n].val = u;
            n++;
        }
    }
    if (sort_kv_desc(o, (size_t)n))
        goto fail;
    if (n > top)
        n = top;
    /* three stable passes, the least significant key first; descending
     * sorts, so the earliest first is the largest negated key */
    int neg = (ordinal & ORD_FIRST) != 0;
    int by_day = ORD_BY_DAY && (ordinal & ORD_DAY);
    for (int i = 0; i < n && !by_day; i++)
        o[i].key = sort_key_i64(ord_key(neg, unit_head_pos(p, (int)o[i].val)));
    if (!by_day && sort_kv_desc(o, (size_t)n))
        goto fail;
    for (int i = 0; i < n; i++)
        o[i].key = sort_key_i64(ord_key(neg, p->s[p->u[o[i].val].sess].started_at));
    if (sort_kv_desc(o, (size_t)n))
        goto fail;
    for (int i = 0; i < n; i++)
        o[i].key = sort_key_i64(ord_key(neg, unit_head_at(p, (int)o[i].val)));
    if (sort_kv_desc(o, (size_t)n))
        goto fail;
    /* by day: a session's units share its place (ties keep score order) */
    for (int i = 0, r = 0; i < n; i++) {
        if (by_day && i && p->u[o[i].val].sess != p->u[o[i - 1].val].sess)
            r++;
        else if (!by_day)
            r = i;
        p->u[o[i].val].ord_bonus = w / (RRF_K + 1) / (r + 1);
        p->u[o[i].val].score += p->u[o[i].val].ord_bonus;
    }
    free(o);
    return 0;
fail:
    free(o);
    return -1;
}

/* The four scores of units [lo, hi), each unit's from its own turns and
 * its session's neighbours alone (a turn's s_msg written by the unit that
 * holds it): any range of units can be scored apart from the rest, and
 * the scores are the same doubles whichever thread computes them. */
struct unit_job {
    struct pool       *p;
    const struct query *q;
    int                use_time, nt, lo, hi;
    const double      *spk, *w_msg, *w_unit;
    double             avg_msg, avg_unit;
    const uint64_t    *has;
    double            *s_head, *s_round, *s_win, *s_win2;
    double             tf[RECALL_MAX_TERMS];   /* the range's scratch */
};

static void score_units(struct unit_job *j)
{
    /* the job's fields as locals: tf's stores could otherwise be taken
     * to change them, and each read again a unit */
    struct pool *p = j->p;
    const struct query *q = j->q;
    const uint64_t *has = j->has;
    const double *spk = j->spk, *w_msg = j->w_msg, *w_unit = j->w_unit;
    double *s_head = j->s_head, *s_round = j->s_round, *s_win = j->s_win, *s_win2 = j->s_win2;
    double *tf = j->tf, avg_msg = j->avg_msg, avg_unit = j->avg_unit;
    int nt = j->nt, use_time = j->use_time;
    for (int u = j->lo; u < j->hi; u++) {
        struct runit *un = &p->u[u];
        double dl;
        un->score = 0;
        un->ord_bonus = 0;
        /* the lead turn alone */
        s_head[u] = msg_bm25(p, un->head, nt, spk, avg_msg, w_msg);
        p->m[un->head].s_msg = s_head[u];
        /* each reply alone, for the reply lane (a unit without a term
         * has none to score) */
        for (int i = un->first; has[u] && i <= un->last; i++) {
            if (i == un->head || !p->m[i].tf)
                continue;
            p->m[i].s_msg = msg_bm25(p, i, nt, NULL, avg_msg, w_msg);
        }
        /* the whole round (none of the terms, no speaker named: 0) */
        if (un->last > un->first && (has[u] || spk)) {
            dl = sum_tf(p, un->first, un->last, nt, spk, tf);
            s_round[u] = rank_bm25(tf, nt, dl, avg_unit, w_unit);
        } else {
            s_round[u] = 0;
        }
        /* the window: neighbouring units in the same session */
        int dialog = p->s[un->sess].dialog;
        int span = dialog ? SPAN_DIALOG : SPAN_UA;
        s_win[u] = window_bm25(p, has, u, span, nt, tf, avg_unit, w_unit);
        /* a wider window: the neighbourhood's topic */
        s_win2[u] = dialog ? window_bm25(p, has, u, SPAN2_DIALOG, nt, tf, avg_unit, w_unit) : 0;
        if (use_time && (q->has_range || q->vague)) {
            int64_t at = p->m[un->head].at;
            un->in_range = at != CAIRN_NO_TIME && at >= q->from && at < q->to;
            for (int i = un->first; i <= un->last && TIME_EVENTS && !un->in_range; i++)
                un->in_range = p->m[i].event;
        }
    }
}

static void *score_units_run(void *arg)
{
    score_units(arg);
    return NULL;
}

/* Every unit's scores: a pool gather loaded in two halves (pool.threads)
 * has the second half of its units scored on a second thread while this
 * one scores the first (~180 M instructions at a million messages, the
 * windows' most of them); else, or when no thread starts, all here. */
static void score_all_units(const struct unit_job *proto)
{
    struct unit_job a = *proto, b = *proto;
    int two = proto->p->threads >= 2 && proto->p->nu >= 2;
    a.lo = 0;
    a.hi = two ? proto->p->nu / 2 : proto->p->nu;
    b.lo = a.hi;
    b.hi = proto->p->nu;
    run_two(two, score_units_run, &b, &a);
}

void rank_unit_scores(struct pool *p, const struct query *q, int use_time, const double *w_msg,
                      const double *w_unit, double avg_msg, double avg_unit, uint64_t *has,
                      double *s_head, double *s_round, double *s_win, double *s_win2)
{
    unit_terms(p, q->nt, has);
    struct unit_job job = { .p = p, .q = q, .use_time = use_time, .nt = q->nt, .w_msg = w_msg,
                            .w_unit = w_unit, .avg_msg = avg_msg, .avg_unit = avg_unit,
                            .has = has, .s_head = s_head, .s_round = s_round, .s_win = s_win,
                            .s_win2 = s_win2 };
    score_all_units(&job);
}

int rank_default(struct pool *p, struct query *q, int use_time, const struct dense_result *dense)
{
    double *s_dhead = NULL, *s_dreply = NULL;
    int rc = -1;
    int nt = q->nt;
    double *w_msg = calloc((size_t)(nt ? nt : 1), sizeof *w_msg);
    double *w_unit = calloc((size_t)(nt ? nt : 1), sizeof *w_unit);
    /* every unit's four scores are written below (over unit rows their
     * pages and rrf's scratch's are faulted in by rank_pool_units' two
     * threads) */
    size_t nu1 = (size_t)(p->nu ? p->nu : 1);
    void *(*alloc)(size_t) = p->pu ? os_alloc_big : os_alloc_filled;
    double *s_head = alloc(nu1 * sizeof *s_head);
    double *s_round = alloc(nu1 * sizeof *s_round);
    double *s_win = alloc(nu1 * sizeof *s_win);
    double *s_win2 = alloc(nu1 * sizeof *s_win2);
    double *spk = NULL;
    int *hit = calloc((size_t)(nt ? nt : 1), sizeof *hit);
    /* a pool over unit rows: the bits gather set from its matches, read
     * where they are (a copy was 3.8 MB of fresh pages and as much
     * copied at a million messages; issue 23, exact51) */
    uint64_t *has = p->pu ? NULL : os_alloc_filled(nu1 * sizeof *has);
    const uint64_t *bits = p->pu ? p->pu->has : has;
    /* rrf's scratch: 2 * nu pairs, then nu places */
    size_t nkv = 2 * nu1 * sizeof(struct sort_kv) + nu1 * sizeof(uint32_t);
    struct sort_kv *kv = alloc(nkv);
    if (!w_msg || !w_unit || !s_head || !s_round || !s_win || !s_win2 || !hit || !bits ||
        !kv)
        goto out;
    if (!p->pu)
        unit_terms(p, nt, has);

    /* Speakers named in the question count as one occurrence of the name
     * in each of their turns: counted first, and only a pool where some
     * turn's speaker is named gets the array (all zeros add nothing). */
    if (p->any_dialog && nt) {
        int named_turns = speaker_terms(p, q, hit, NULL);
        if (named_turns < 0)
            goto out;                       /* no memory for the stemmer */
        if (named_turns > 0) {
            if (!(spk = calloc((size_t)p->nm * (size_t)nt, sizeof *spk)) ||
                speaker_terms(p, q, hit, spk) < 0)
                goto out;
        }
    }

    /* IDF over messages (exact: df counted in the scope) and over units
     * (df counted on the loaded units, N scaled from the message count). */
    double n_units = p->nm ? (double)p->total_msgs * p->nu / p->nm : 1;
    if (p->pruned && p->hit_msgs > 0)
        n_units = (double)p->total_msgs * p->hit_units / p->hit_msgs;
    double avg_msg = p->total_msgs ? (double)p->total_tok / p->total_msgs : 1;
    double avg_unit = n_units ? (double)p->total_tok / n_units : 1;
    int dfs[RECALL_MAX_TERMS];
    if (p->pu)                      /* counted as gather set the bits */
        memcpy(dfs, p->pu->df, (size_t)nt * sizeof *dfs);
    else
        unit_dfs(p, bits, nt, dfs);
    for (int t = 0; t < nt; t++) {
        int df_u = unit_df_est(p, dfs[t], q, t);
        q->t[t].idf_msg = rank_idf((double)p->total_msgs, q->t[t].df_msg);
        q->t[t].idf_unit = rank_idf(n_units, df_u);
        w_msg[t] = q->t[t].idf_msg;
        w_unit[t] = q->t[t].idf_unit;
    }


    struct unit_job job = { .p = p, .q = q, .use_time = use_time, .nt = nt, .spk = spk,
                            .w_msg = w_msg, .w_unit = w_unit, .avg_msg = avg_msg,
                            .avg_unit = avg_unit, .has = has, .s_head = s_head,
                            .s_round = s_round, .s_win = s_win, .s_win2 = s_win2 };
    if (!p->pu)
        score_all_units(&job);
    else if (rank_pool_units(p, nt, w_msg, w_unit, avg_msg, avg_unit, s_head, s_round, s_win,
                             s_win2, kv, nkv))
        goto out;
    if (rrf_keyword(p, s_head, s_round, s_win, s_win2, kv) || ent_rank(p, kv))
        goto out;
    if (len_rank(p, s_head, s_win, s_win2, dense, kv))
        goto out;
    if (dense && dense->n > 0) {
        double wd = 1.0;
        /* the keyword rankings' fused score, for the gate (gate.c); kept
         * beside the units, not in them, so a keyword recall's units stay
         * as small as before (a field in struct runit cost the keyword
         * hook ~28 page faults on 100,000 messages) */
        free(p->s_words);
        if (!(p->s_words = malloc(nu1 * sizeof *p->s_words)))
            goto out;
        for (int u = 0; u < p->nu; u++)
            p->s_words[u] = p->u[u].score;
        /* an English model's vectors mean little for a CJK question; a
         * model that covers CJK keeps its weight (its registry entry) */
        if (dense->cjk >= DENSE_CJK_SHARE && !dense->pol.cjk)
            wd = DENSE_CJK_W;
        s_dhead = calloc((size_t)(p->nu ? p->nu : 1), sizeof *s_dhead);
        s_dreply = calloc((size_t)(p->nu ? p->nu : 1), sizeof *s_dreply);
        if (!s_dhead || !s_dreply)
            goto out;
        if (wd > 0) {
            for (int u = 0; u < p->nu; u++) {
                const struct runit *un = &p->u[u];
                s_dhead[u] = p->m[un->head].dense;
                for (int i = un->first; i <= un->last; i++)
                    if (i != un->head && p->m[i].dense > s_dreply[u])
                        s_dreply[u] = p->m[i].dense;
            }
            double wh = wd * W_DENSE_HEAD, wr = wd * W_DENSE_REPLY;
            /* where the question was also searched in the speaker's words,
             * PERSP_REPL of its own head weight goes to that */
            double wdh = wd * W_DENSE_HEAD_DIALOG * (p->persp ? 1 - POLICY_GET(PERSP_REPL) : 1);
            if (rrf(p, s_dhead, wdh, wh, kv) ||
                rrf(p, s_dreply, wr, wr, kv) || prf_rank(p, wd * DENSE_PRF_W, kv) ||
                persp_rank(p, wd * POLICY_GET(PERSP_W), kv))
                goto out;
        }
    }
    /* the learned share of the scores themselves (LRN_*: off) */
    if (lrn_fuse(p, q, s_head, s_win, s_win2))
        goto out;
    /* topical segments, when recall.c cut them (SEG_*: their BM25 from 8k) */
    if (rank_segments(p, nt, w_unit, avg_unit, SEG_W_DENSE, POLICY_GET(SEG_W_BM25)) ||
        seg_lift(p, SEG_LIFT))
        goto out;
    int named = 0;
    if (spk) {
        double other = SPK_OTHER;
        for (size_t i = 0; i < (size_t)p->nm * (size_t)nt; i++)
            named |= spk[i] > 0;
        for (int u = 0; u < p->nu && named; u++) {
            int h = p->u[u].head, is_named = 0;
            for (int t = 0; t < nt; t++)
                is_named |= spk[(size_t)h * (size_t)nt + (size_t)t] > 0;
            if (!is_named)
                p->u[u].score *= other;
        }
    }
    /* a question naming a speaker of the store was judged by it above */
    if (!named && LABEL_OTHER < 1.0 && label_demote(p, q))
        goto out;
    /* a pool over unit rows has its units' round and window scores from
     * rank_pool_units, and no unit in a time range (gather takes no
     * question with one over the rows: units_may) */
    for (int u = 0; u < p->nu && !p->pu; u++) {
        struct runit *un = &p->u[u];
        if (un->in_range) {
            if (q->vague) {
                if (un->score > 0)
                    un->score += W_TIME_VAGUE * W_TIME / (RRF_K + 1);
            } else if (q->only_time || nt == 0) {
                un->score += W_ONLY_TIME; /* the period itself is the question */
            } else if (un->score > 0) {   /* a boost, never a match by itself */
                un->score += W_TIME / (RRF_K + 1);
            }
        }
        un->s_round = s_round[u];
        un->s_window = s_win[u];
    }
    if (use_time && order_boost(p, q->ordinal))
        goto out;
    rc = 0;
out:
    free(w_msg);
    free(w_unit);
    free(s_head);
    free(s_round);
    free(s_win);
    free(s_win2);
    free(s_dhead);
    free(s_dreply);
    free(spk);
    free(hit);
    free(has);
    free(kv);
    return rc;
}

int rank_raw_bm25(struct pool *p, struct query *q)
{
    int nt = q->nt, rc = -1;
    double *tf = calloc((size_t)(nt ? nt : 1), sizeof *tf);
    double *w = calloc((size_t)(nt ? nt : 1), sizeof *w);
    uint64_t *has = malloc((size_t)(p->nu ? p->nu : 1) * sizeof *has);
    if (!tf || !w || !has)
        goto out;
    unit_terms(p, nt, has);
    double n_units = p->nm ? (double)p->total_msgs * p->nu / p->nm : 1;
    double avg_unit = n_units ? (double)p->total_tok / n_units : 1;
    int dfs[RECALL_MAX_TERMS];
    unit_dfs(p, has, nt, dfs);
    for (int t = 0; t < nt; t++)
        w[t] = rank_idf(n_units, dfs[t]);
    for (int u = 0; u < p->nu; u++) {
        double dl = sum_tf(p, p->u[u].first, p->u[u].last, nt, NULL, tf);
        p->u[u].score = rank_bm25(tf, nt, dl, avg_unit, w);
        p->u[u].s_round = p->u[u].score;
    }
    rc = 0;
out:
    free(tf);
    free(w);
    free(has);
    return rc;
}

/* Units by fused score, ties the more recent first, then the earlier in
 * the store: what two stable passes give, time then score, with less
 * sorting. With no score below 0 (the policy's weights), the units that
 * scored come first, in that order, and those at 0 after them by time
 * alone; the scored ones are sorted by score on pool order, then each run
 * of equal scores (few and short) by time: the same order as the two
 * passes, one whole-pool sort fewer. The units at 0 (172,759 of 478,170
 * in an exact recall of a common word at a million messages) are left in
 * pool order, unranked, until units_rank_all: every reader of the order
 * stops at the first unit at 0, and only a picked unit's rank is shown
 * (issue 23, exact30). */
#define RANK_AHEAD 16

/* units_by_rank's unit at place i of o[0..last]. The units in score order
 * are scattered over the pool: each one's rank a cache miss unless asked
 * for ahead (issue 23, exact51; the last unit's again near the end, not a
 * test of the bound). */
static inline void put_rank(struct pool *p, const struct sort_kv *o, int *ord, int i, int last)
{
    int a = i + RANK_AHEAD < last ? i + RANK_AHEAD : last;
    __builtin_prefetch(&p->u[o[a].val].rank, 1);
    ord[i] = (int)o[i].val;
    p->u[o[i].val].rank = i;
}

/* Writes the ranks of o[i0, i1) (sorted by score; i0 the start of a run
 * of equal scores, i1 the end of one): each run sorted by time, its units
 * but the last written in its own loop (one test a unit: a loop a run
 * and a bound a prefetch were ~38 instructions a unit, issue 23, rank53;
 * a run's keys are its units' times once sorted, so the next test is past
 * it). -1: no memory. */
static int put_ranks(struct pool *p, struct sort_kv *o, int *ord, int i0, int i1)
{
    for (int i = i0, last = i1 - 1; i < i1; i++) {
        if (i < last && o[i + 1].key == o[i].key) {
            int j = i + 2;
            while (j < i1 && o[j].key == o[i].key)
                j++;
            for (int r = i; r < j; r++)
                o[r].key = sort_key_i64(unit_head_at(p, (int)o[r].val));
            if (sort_kv_desc(o + i, (size_t)(j - i)))
                return -1;
            for (; i < j - 1; i++)
                put_rank(p, o, ord, i, last);
        }
        put_rank(p, o, ord, i, last);
    }
    return 0;
}

/* units_by_rank of a big pool on two threads (issue 23, exact54: its
 * keys, the merge of the two sorted halves and the ranks were ~30 M
 * instructions a recall at a million messages on the recall's thread
 * alone, the second idle). The units are cut in two at h: the front's
 * scored keys go to o's front and its units at 0 to ord's, in pool
 * order; the back's, walked from the last unit down, to o's and ord's
 * ends, so each part is in pool order too. Each sorts its part (stable),
 * then the two are merged from both ends at once: the front writes the
 * first n / 2 places (on equal keys the front's unit first), the back
 * the rest from the last place down (on equal keys the back's unit
 * last): the stable sort of all, as sort_kv_desc_two's halves and merge
 * gave. The ranks are then written from both ends too, cut where a run
 * of equal scores ends (put_ranks sorts each run whole). */
#define UBR_TWO_MIN 65536

struct ubr {
    struct pool       *p;
    struct sort_kv    *o, *out;
    int               *ord;
    int                h, b, two;
    int                np[2], nz[2], neg[2], bad[2];
    pthread_barrier_t  bar;
};

static void ubr_wait(struct ubr *s)
{
    if (s->two)
        pthread_barrier_wait(&s->bar);
}

/* part side's keys (0: units [0, h), 1: [h, nu)), sorted */
static void ubr_keys(struct ubr *s, int side)
{
    struct pool *p = s->p;
    int nu = p->nu, np = 0, nz = 0, neg = 0;
    if (!side) {
        os_populate(s->o, (size_t)s->h * sizeof *s->o);
        for (int i = 0; i < s->h; i++) {
            double sc = p->u[i].score;
            if (sc > 0) {
                s->o[np].key = sort_key_double(sc);
                s->o[np++].val = i;
            } else {
                neg |= sc < 0;
                s->ord[nz++] = i;
            }
        }
    } else {
        os_populate(s->o + s->h, (size_t)(nu - s->h) * sizeof *s->o);
        for (int i = nu - 1; i >= s->h; i--) {
            double sc = p->u[i].score;
            if (sc > 0) {
                s->o[nu - 1 - np].key = sort_key_double(sc);
                s->o[nu - 1 - np++].val = i;
            } else {
                neg |= sc < 0;
                s->ord[nu - 1 - nz++] = i;
            }
        }
    }
    s->np[side] = np;
    s->nz[side] = nz;
    s->neg[side] = neg;
    if (!neg && sort_kv_desc(side ? s->o + nu - np : s->o, (size_t)np))
        s->bad[side] = 1;
}

/* side's half of the merge into out: the front's first n / 2 places, the
 * back's the rest; and the front's units at 0 moved after the places (the
 * back's are where they belong already) */
static void ubr_merge(struct ubr *s, int side)
{
    const struct sort_kv *a = s->o, *b = s->o + s->p->nu - s->np[1];
    int na = s->np[0], nb = s->np[1], n = na + nb, m = n / 2;
    if (!side) {
        int i = 0, j = 0;
        for (int k = 0; k < m; k++)
            s->out[k] = j < nb && (i >= na || b[j].key > a[i].key) ? b[j++] : a[i++];
        memmove(s->ord + n, s->ord, (size_t)s->nz[0] * sizeof *s->ord);
    } else {
        int i = na - 1, j = nb - 1;
        for (int k = n - 1; k >= m; k--)
            s->out[k] = j >= 0 && (i < 0 || b[j].key <= a[i].key) ? b[j--] : a[i--];
    }
}

/* side's ranks: the front's places [0, b), the back's [b, n); and its
 * units at 0 unranked */
static void ubr_ranks(struct ubr *s, int side)
{
    struct pool *p = s->p;
    int n = s->np[0] + s->np[1], z0 = side ? n + s->nz[0] : n, z1 = side ? p->nu : n + s->nz[0];
    if (put_ranks(p, s->out, s->ord, side ? s->b : 0, side ? n : s->b))
        s->bad[side] = 1;
    for (int i = z0; i < z1; i++)
        p->u[s->ord[i]].rank = -1;
}

static int ubr_skip(const struct ubr *s)
{
    return s->neg[0] || s->neg[1] || s->bad[0] || s->bad[1];
}

static void *ubr_back(void *arg)
{
    struct ubr *s = arg;
    ubr_keys(s, 1);
    ubr_wait(s);
    if (!ubr_skip(s))
        ubr_merge(s, 1);
    ubr_wait(s);
    ubr_wait(s);                    /* the front finds b */
    if (!ubr_skip(s))
        ubr_ranks(s, 1);
    return NULL;
}

/* 1: p->ord written; 0: a score below 0 (the caller sorts them all);
 * -1: no memory */
static int units_by_rank_two(struct pool *p)
{
    struct ubr s;
    pthread_t th;
    int rc = -1, nu = p->nu;
    memset(&s, 0, sizeof s);
    s.p = p;
    s.h = nu / 2;
    s.ord = malloc((size_t)nu * sizeof *s.ord);
    s.o = os_alloc_big((size_t)nu * sizeof *s.o);
    s.out = os_alloc_big((size_t)nu * sizeof *s.out);
    if (!s.ord || !s.o || !s.out)
        goto out;
    s.two = !pthread_barrier_init(&s.bar, NULL, 2);
    if (s.two && pthread_create(&th, NULL, ubr_back, &s)) {
        pthread_barrier_destroy(&s.bar);
        s.two = 0;
    }
    /* (one thread: the back's steps after the front's, in the same order) */
    ubr_keys(&s, 0);
    if (!s.two)
        ubr_keys(&s, 1);
    ubr_wait(&s);
    int n = s.np[0] + s.np[1], m = n / 2;
    if (!ubr_skip(&s)) {
        ubr_merge(&s, 0);
        if (!s.two)
            ubr_merge(&s, 1);
    }
    ubr_wait(&s);
    /* the cut at the end of the run holding place m - 1 */
    s.b = m;
    while (!ubr_skip(&s) && m > 0 && s.b < n && s.out[s.b].key == s.out[m - 1].key)
        s.b++;
    ubr_wait(&s);
    if (!ubr_skip(&s)) {
        ubr_ranks(&s, 0);
        if (!s.two)
            ubr_ranks(&s, 1);
    }
    if (s.two) {
        pthread_join(th, NULL);
        pthread_barrier_destroy(&s.bar);
    }
    if (s.bad[0] || s.bad[1])
        goto out;
    rc = 0;
    if (s.neg[0] || s.neg[1])
        goto out;
    p->ord = s.ord;
    s.ord = NULL;
    p->ord_tail = nu - n;
    rc = 1;
out:
    free(s.ord);
    free(s.o);
    free(s.out);
    return rc;
}

const int *units_by_rank(struct pool *p)
{
    if (p->ord)
        return p->ord;       /* the gate and pack.c both ask; scores are final */
    int two = p->threads >= 2 && p->nu >= UBR_TWO_MIN ? units_by_rank_two(p) : 0;
    if (two < 0)
        return NULL;
    if (two)
        return p->all_mode && units_rank_all(p) ? NULL : p->ord;
    int *ord = malloc((size_t)(p->nu ? p->nu : 1) * sizeof *ord);
    struct sort_kv *o = os_alloc_filled((size_t)(p->nu ? p->nu : 1) * sizeof *o);
    if (!ord || !o)
        goto fail;
    /* one pass over the units (a count first was a second pass: ~5.7 M
     * instructions at a million messages; issue 23, exact35): the scored
     * ones' keys into o, those at 0 to ord's front in pool order, moved
     * to its end once their number is known */
    int npos = 0, nzero = 0, neg = 0;
    for (int i = 0; i < p->nu; i++) {
        double s = p->u[i].score;
        if (s > 0) {
            o[npos].key = sort_key_double(s);
            o[npos++].val = i;
        } else {
            neg |= s < 0;
            ord[nzero++] = i;  /* pool order, ranked by units_rank_all */
        }
    }
    if (neg) {               /* a policy with negative weights: sort them all */
        for (int i = 0; i < p->nu; i++) {
            o[i].key = sort_key_double(p->u[i].score);
            o[i].val = i;
        }
        npos = p->nu;
        nzero = 0;
    }
    memmove(ord + npos, ord, (size_t)nzero * sizeof *ord);
    /* the scored ones by score, then each run of equal scores by time:
     * both sorts stable on pool order, as the two passes over all. A run
     * is found where it begins, in the loop that writes the order (a pass
     * of its own to find the runs, few and short, was ~6 M) */
    if (sort_kv_desc_two(o, (size_t)npos, p->threads >= 2) || put_ranks(p, o, ord, 0, npos))
        goto fail;
    for (int i = npos; i < p->nu; i++)
        p->u[ord[i]].rank = -1;
    free(o);
    p->ord = ord;
    p->ord_tail = p->nu - npos;
    /* a pool that may be packed whole shows every unit's rank */
    if (p->all_mode && units_rank_all(p))
        return NULL;
    return ord;
fail:
    free(ord);
    free(o);
    return NULL;
}

int units_rank_all(struct pool *p)
{
    if (!p->ord && !units_by_rank(p))
        return -1;
    int n = p->ord_tail, npos = p->nu - n;
    if (n == 0)
        return 0;
    struct sort_kv *o = os_alloc_filled((size_t)n * sizeof *o);
    if (!o)
        return -1;
    /* by time alone, stable on pool order (the tail is in pool order) */
    for (int i = 0; i < n; i++) {
        o[i].key = sort_key_i64(unit_head_at(p, p->ord[npos + i]));
        o[i].val = p->ord[npos + i];
    }
    if (sort_kv_desc(o, (size_t)n)) {
        free(o);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        p->ord[npos + i] = (int)o[i].val;
        p->u[o[i].val].rank = npos + i;
    }
    free(o);
    p->ord_tail = 0;
    return 0;
}
