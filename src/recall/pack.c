/*
 * pack.c: fitting ranked units into a token budget, and the text.
 *
 * User-first: what the user said carries the facts about them, and
 * replies are long. The best PACK_FULL_ROUNDS rounds keep their replies;
 * the rest give their user turns. In a chat between people every turn is
 * someone's own words, so units are single turns and nothing is demoted.
 * Long turns are cut to excerpts (the opening and the passages closest to
 * the question; the store keeps the whole). Once every matching turn is
 * in, what is left of the budget makes the best rounds whole. When the
 * whole scope fits, everything is returned verbatim.
 *
 * The budget is a hard limit on the final text, headers included: costs
 * are summed as items are chosen, and the rendered text is counted again
 * at the end, dropping the lowest-ranked items until it fits.
 *
 * Names in the text (titles, projects, sources, speakers) are printed on
 * one line with no fence tag in them (fence_line), so a title cannot
 * start a paragraph of its own.
 *
 * Text layout, grouped by session, oldest first (with CAIRN_RECALL_CITE:
 * the session of the best unit first, and its id in the header):
 *     [2023-05-08 13:56 · locomo · conv-26]
 *     Caroline: I went to a LGBTQ support group yesterday ...
 *     …
 *     Melanie: ...
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"
#include "store/recall_read.h"
#include "text/tokcount.h"
#include "text/tokenize.h"
#include "util/fence.h"
#include "util/sort.h"
#include "util/timeutil.h"


/* The setting recall.reply_lane: the reply lane's share of the budget (0
 * to 0.5). */
static double reply_lane_share(const char *v)
{
    double x = v && *v ? strtod(v, NULL) : REPLY_LANE_SHARE;
    return x < 0 ? 0 : x > 0.5 ? 0.5 : x;
}

/* A picked or ordered message's unit rank is read: a unit at score 0
 * (rank.c units_by_rank leaves them unranked, rank -1) gets the whole
 * order ranked first. After that every rank is known and the test is all
 * a call costs. Returns 0, or -1 on no memory. */
static int unit_ranked(struct pool *p, int64_t msg)
{
    return p->u[p->m[msg].unit].rank < 0 ? units_rank_all(p) : 0;
}

/* The reply lane's entries: turns, or over unit rows (gather.c,
 * recall.units) matches, whose turns are read when the lane tries them:
 * entry x's unit. */
static int lane_unit(const struct pool *p, int x)
{
    return p->pu ? p->pu->munit[x] : p->m[x].unit;
}

/* How many places of the lane's fused order pack_replies_by_score sorts at
 * first: the lane reads a few dozen replies (its share of the budget,
 * each reply at most cap_reply); past this many it asks for all. Not a
 * policy: any value gives the same order, only the work differs. */
#define LANE_PREFIX 512
/* With a limit, the own order is sorted for its first 2 limits places
 * only (at least LANE_OWN_MIN), when there are twice as many replies:
 * see lane_bounded. Not a policy either: past the own places known the
 * order is asked for whole (PACK_LANE_LATER), as past the fused ones. */
#define LANE_OWN_MIN 256
/* lane_bounded's buckets of own keys (a first bound on a place) */
#define LANE_BUCKETS 4096

/* The own order's (key, entry) pairs: larger key first, the earlier entry
 * (the input order: entries are added in increasing order) on equal keys,
 * sort_kv_desc's order as a total one. */
static int lane_before(const struct sort_kv *a, const struct sort_kv *b)
{
    return a->key > b->key || (a->key == b->key && a->val < b->val);
}

static int lane_cmp(const void *x, const void *y)
{
    const struct sort_kv *a = x, *b = y;
    return lane_before(a, b) ? -1 : lane_before(b, a);
}

/* h[0..n) a heap with its last pair in the own order at the root. */
static void lane_sift(struct sort_kv *h, size_t n, size_t i)
{
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n)
            return;
        if (c + 1 < n && lane_before(&h[c], &h[c + 1]))
            c++;
        if (!lane_before(&h[i], &h[c]))
            return;
        struct sort_kv t = h[i];
        h[i] = h[c];
        h[c] = t;
        i = c;
    }
}

/* A reply's fused key: its own place i, its round's rank. Monotone in i
 * for a given rank (the division and the sum round monotonely), which
 * lane_bounded's bound rests on. */
static uint64_t lane_fused(int i, int rank)
{
    if (i < REPLY_LANE_OWN_TOP)
        return sort_key_double(1.0 + (REPLY_LANE_OWN_TOP - i));
    return sort_key_double(1.0 / (RRF_K + i + 1) + W_REPLY_ROUND / (RRF_K + rank + 1));
}

static long lane_bounded_runs;
long pack_lane_bounded_runs(void) { return lane_bounded_runs; }

/* The reply lane's first `limit` fused places without the whole own order
 * (issue 23, pack53b: the sort of ~75,000 replies was ~17 M instructions
 * at a million for a lane that reads a few dozen). v[n]: the replies'
 * (own key, entry) pairs in input order. The own order's first t places
 * are kept in a heap (one compare for most replies) and sorted: own[0..t),
 * exact. Of those t the limit-th best fused key is kth; a reply past them
 * has a place >= t, so its fused key is at most lane_fused(t, its rank):
 * only those whose round ranks at most rmax (the last rank whose bound
 * reaches kth) can enter the first `limit` (any other is below kth, which
 * `limit` of the t reach). Their exact places are counted in one pass over
 * the rest (a binary search among them, sorted); then the t and them, in
 * own order, are sorted stably by fused key: the first `limit` places are
 * the whole sort's (the same keys, the same order of ties). Into fv (the
 * first *nf fused pairs, val an entry; room for 2 t) and own (*nown
 * places). Returns 0; 1 when more than t replies pass the bound (the
 * caller sorts all); 2 when a reply's unit is unranked (the caller ranks
 * all and asks again); -1 on no memory. */
static int lane_bounded(struct pool *p, const struct sort_kv *v, int n, int limit, int t,
                        struct sort_kv *fv, int *nf, int *own, int *nown)
{
    struct sort_kv *h = malloc((size_t)t * sizeof *h), *c = NULL;
    int *cnt = NULL, *first = NULL, *same = NULL, nc = 0, rc = -1;
    if (!h || t < 1 || t > n)
        goto out;
    memcpy(h, v, (size_t)t * sizeof *h);
    uint64_t kmin = UINT64_MAX;         /* the least own key, for the buckets */
    for (int j = 0; j < t; j++)
        kmin = v[j].key < kmin ? v[j].key : kmin;
    for (int j = t / 2; j-- > 0;)
        lane_sift(h, (size_t)t, (size_t)j);
    for (int i = t; i < n; i++) {
        kmin = v[i].key < kmin ? v[i].key : kmin;
        if (lane_before(&v[i], &h[0])) {
            h[0] = v[i];
            lane_sift(h, (size_t)t, 0);
        }
    }
    struct sort_kv last = h[0];         /* the own order's t-th */
    qsort(h, (size_t)t, sizeof *h, lane_cmp);
    for (int i = 0; i < t; i++) {
        int rank = p->u[lane_unit(p, (int)h[i].val)].rank;
        if (rank < 0) {
            rc = 2;
            goto out;
        }
        own[i] = (int)h[i].val;
        fv[i].key = lane_fused(i, rank);
        fv[i].val = own[i];
    }
    /* the limit-th fused key of the t: a copy selected, fv's order kept */
    for (int i = 0; i < t; i++)
        h[i] = fv[i];
    if (sort_kv_top(h, (size_t)t, (size_t)limit) < 0)
        goto out;
    uint64_t kth = h[0].key;
    for (int i = 1; i < limit; i++)
        kth = h[i].key < kth ? h[i].key : kth;
    int rmax = -1;                      /* bounds fall as ranks grow */
    for (int lo = 0, hi = p->nu; lo < hi;) {
        int mid = lo + (hi - lo) / 2;
        if (lane_fused(t, mid) >= kth)
            rmax = mid, lo = mid + 1;
        else
            hi = mid;
    }
    /* the rest whose bound reaches it: at most t of them; and a
     * histogram of the rest's own keys, LANE_BUCKETS over their range */
    int sh = 0;
    while (((last.key - kmin) >> sh) >= LANE_BUCKETS)
        sh++;
    if (!(c = malloc((size_t)t * sizeof *c)) || !(cnt = calloc(LANE_BUCKETS + 1, sizeof *cnt)))
        goto out;
    for (int i = 0; i < n; i++) {
        if (!lane_before(&last, &v[i]))
            continue;                   /* one of the t */
        cnt[(v[i].key - kmin) >> sh]++;
        int rank = p->u[lane_unit(p, (int)v[i].val)].rank;
        if (rank < 0) {
            rc = 2;
            goto out;
        }
        if (rank > rmax)
            continue;
        if (nc == t) {
            rc = 1;
            goto out;
        }
        c[nc++] = v[i];
    }
    if (nc) {
        /* their places: t + the rest before each (after one of them in
         * the own order, so counted at the first of them it precedes) */
        qsort(c, (size_t)nc, sizeof *c, lane_cmp);
        /* a first bound on each one's place: t + the rest in the buckets
         * above its own, or its place among them (either is a count of
         * replies before it); those it leaves under kth go (most: their
         * own keys rank low), the others keep their order */
        for (int b = LANE_BUCKETS - 1, above = 0; b >= 0; b--) {
            int here = cnt[b];
            cnt[b] = above;
            above += here;
        }
        int ns = 0;
        for (int k = 0; k < nc; k++) {
            int before = cnt[(c[k].key - kmin) >> sh];
            before = before > k ? before : k;
            if (lane_fused(t + before, p->u[lane_unit(p, (int)c[k].val)].rank) >= kth)
                c[ns++] = c[k];
        }
        nc = ns;
    }
    if (nc) {
        /* their exact places: t + the rest in the buckets above (cnt
         * now) + those of their own bucket before them, found among the
         * ones left of that bucket (a run of c[], the buckets falling
         * along the own order); a reply of a bucket with none is passed
         * over at one look */
        if (!(first = malloc(2 * LANE_BUCKETS * sizeof *first)) ||
            !(same = calloc((size_t)nc + 1, sizeof *same)))
            goto out;
        int *stop = first + LANE_BUCKETS;   /* the run's end */
        for (int b = 0; b < LANE_BUCKETS; b++)
            first[b] = -1;
        for (int k = 0; k < nc; k++) {
            size_t b = (c[k].key - kmin) >> sh;
            if (first[b] < 0)
                first[b] = k;
            stop[b] = k + 1;
        }
        for (int i = 0; i < n; i++) {
            size_t b = (v[i].key - kmin) >> sh;
            if (first[b] < 0 || !lane_before(&last, &v[i]))
                continue;               /* none of them there, or one of the t */
            int lo = first[b], hi = stop[b] - 1;    /* the first of them v[i] precedes */
            if (!lane_before(&v[i], &c[hi]))
                continue;               /* after them all */
            while (lo < hi) {
                int mid = (lo + hi) / 2;
                if (lane_before(&v[i], &c[mid]))
                    hi = mid;
                else
                    lo = mid + 1;
            }
            same[lo]++;
        }
        for (int k = 0, before = 0; k < nc; k++) {
            size_t b = (c[k].key - kmin) >> sh;
            before = first[b] == k ? same[k] : before + same[k];
            fv[t + k].key = lane_fused(t + cnt[b] + before, p->u[lane_unit(p, (int)c[k].val)].rank);
            fv[t + k].val = c[k].val;
        }
    }
    if (sort_kv_desc(fv, (size_t)(t + nc)))
        goto out;
    *nf = limit;
    *nown = t;
    lane_bounded_runs++;
    rc = 0;
out:
    free(h);
    free(c);
    free(cnt);
    free(first);
    free(same);
    return rc;
}
/* Assistant messages that match the question, best first (caller frees):
 * the REPLY_LANE_OWN_TOP that match best alone, then by reciprocal rank
 * of their own BM25 among the replies and of the rank of their round, so
 * a reply that matches well in a round that ranks well comes first. Its
 * own BM25 alone put long replies that repeat the question's words first
 * (devmem dev, lane share 0.5: the round's rank added gave answer spans
 * for 3 more of 80 questions at 4k, 1 more at 8k). With every > 0, places
 * every, 2 * every, ... (from 0) go to the best by own BM25 not yet placed
 * instead: the reply that answers often follows a turn that pasted a log
 * or an error, its round ranks 20th to 45th and the fused order put it
 * past what a small lane holds, while it was 2nd or 3rd alone (policy.h,
 * REPLY_LANE_OWN_EVERY).
 *
 * limit > 0: only the places the first `limit` of the fused order fill
 * are computed, the rest are PACK_LANE_LATER (issue 23, exact31: the lane reads
 * a few dozen of ~130,000 matching replies at a million messages, and the
 * fused sort of them all was 13 M instructions). Exact by construction:
 * sort_kv_top moves the pairs a stable sort puts first to the front in
 * their input order, and a stable sort of them is that sort's first
 * `limit` places; the loop below takes fused places in order, so it stops
 * at the first place that would need one past them. The own order (the
 * first sort) stays whole: each reply's own place is in its fused key. */
int *pack_replies_by_score(struct pool *p, int every, int limit)
{
    return pack_replies_in(p, every, limit, NULL, 0);
}

int *pack_replies_in(struct pool *p, int every, int limit, void *scratch, size_t bytes)
{
    /* the entries: turns, or over unit rows matches (~250,000 of a
     * million turns at a million messages: each array sized for them,
     * and the order -1 ended, not p->nm places; pack53) */
    size_t nm1 = (size_t)(p->pu ? p->pu->nmt : p->nm) + 1;
    /* the pairs in the caller's scratch when they fit (pack54: a fresh
     * block's pages were 293 of the ~945 page faults of an exact recall
     * at a million messages; pack's planned places' free end is resident) */
    struct sort_kv *v = scratch && bytes / sizeof *v >= nm1 ? scratch : malloc(nm1 * sizeof *v);
    struct sort_kv *fv = NULL, *own_v = v == scratch ? NULL : v;
    int *out = malloc(nm1 * sizeof *out);
    int *own = malloc(nm1 * sizeof *own);
    char *taken = calloc(nm1, 1);
    int n = 0, unranked = 0;
    if (!v || !out || !own || !taken)
        goto fail;
    if (p->pu) {
        /* over unit rows: the matches that are replies, in pool order
         * (by session and row), as entries (lane_unit) */
        for (int i = 0; i < p->pu->nmt; i++) {
            int reply;
            double sc = unit_match_s(p, i, &reply);
            if (reply && sc > 0) {
                v[n].key = sort_key_double(sc);
                v[n].val = i;
                n++;
            }
        }
    }
    for (int i = 0; !p->pu && i < p->nm; i++) {
        if (p->m[i].role == ROLE_ASSISTANT && p->m[i].s_msg > 0) {
            v[n].key = sort_key_double(p->m[i].s_msg);
            v[n].val = i;
            n++;
        }
    }
    struct sort_kv *fz = v;             /* the fused order's sorted places */
    int nf = n, nown = n;               /* fused places sorted, own places */
    int t = 2 * limit > LANE_OWN_MIN ? 2 * limit : LANE_OWN_MIN;
    if (limit > 0 && limit < t && t <= n / 2) {
        if (!(fv = malloc(2 * (size_t)t * sizeof *fv)))
            goto fail;
        int b = lane_bounded(p, v, n, limit, t, fv, &nf, own, &nown);
        if (b == 2) {
            /* a unit at 0 (unranked): the whole order ranked, once */
            if (units_rank_all(p))
                goto fail;
            b = lane_bounded(p, v, n, limit, t, fv, &nf, own, &nown);
        }
        if (b < 0 || b == 2)
            goto fail;
        if (b == 0) {
            fz = fv;
            goto place;
        }
        nf = n;
    }
    /* stable, as the merge sort before: ties keep the first order (on
     * both threads for a pool loaded in two: the same order) */
    if (sort_kv_desc_two(v, (size_t)n, p->threads >= 2))
        goto fail;
    /* the fused key reads each reply's unit rank: a unit at 0 (unranked)
     * has the whole order ranked and the keys made again (one pass over
     * the scattered units, not a check's pass before) */
    for (int again = 0; again < 2; again++) {
        for (int i = 0; i < n; i++) {
            int x = (int)v[i].val, rank = p->u[lane_unit(p, x)].rank;
            unranked |= rank < 0;
            own[i] = x;
            v[i].key = sort_key_double(1.0 / (RRF_K + i + 1) + W_REPLY_ROUND / (RRF_K + rank + 1));
            /* the replies that match best alone lead, in that order (policy.h,
             * REPLY_LANE_OWN_TOP); fused scores stay under 2 / (RRF_K + 1) */
            if (i < REPLY_LANE_OWN_TOP)
                v[i].key = sort_key_double(1.0 + (REPLY_LANE_OWN_TOP - i));
        }
        if (!unranked)
            break;
        if (again || units_rank_all(p))
            goto fail;
        unranked = 0;
    }
    if (limit > 0 && limit < n && (nf = (int)sort_kv_top(v, (size_t)n, (size_t)limit)) < 0)
        goto fail;
    if (sort_kv_desc(v, (size_t)nf))
        goto fail;
place:;
    /* the fused order, with every every-th place given to the own order */
    int j = 0;
    for (int a = 0, b = 0; j < n; j++) {
        int x = -1;
        if (every > 0 && j > 0 && j % every == 0) {
            while (a < nown && taken[own[a]])
                a++;
            if (a == nown && nown < n)
                break;                  /* past the own places known */
            if (a < n)
                x = own[a];
        }
        if (x < 0) {
            while (b < nf && taken[fz[b].val])
                b++;                    /* n places, n replies: one is left */
            if (b == nf)
                break;                  /* past the sorted places (limit) */
            x = (int)fz[b].val;
        }
        taken[x] = 1;
        out[j] = x;
    }
    for (int i = j; i < n; i++)
        out[i] = PACK_LANE_LATER;
    out[n] = -1;
    free(own_v);
    free(fv);
    free(own);
    free(taken);
    return out;
fail:
    free(own_v);
    free(fv);
    free(out);
    free(own);
    free(taken);
    return NULL;
}
/* The most of one message's text that recall reads: a longer one (a
 * pasted log, a dumped file) is excerpted from its opening this many
 * bytes and never shown whole. Excerpting costs time linear in the text
 * (tokenizing it to find the passages closest to the question: ~40 ms of
 * CPU a megabyte, several times that in wall time on a loaded machine),
 * which a 50 MB paste would add to every prompt that matches it; the
 * store keeps the whole. */
#define PACK_SCAN_MAX (4 << 20)

/* ---- excerpts ---- */

struct psg { size_t a, b; double score; int keep; };

struct term_hits { const struct query *q; double score; char *seen; };

static int psg_cb(void *arg, const char *tok, size_t n, size_t s, size_t e, int col)
{
    struct term_hits *th = arg;
    for (int t = 0; t < th->q->nt; t++) {
        if (!th->seen[t] && strlen(th->q->t[t].norm) == n && !memcmp(th->q->t[t].norm, tok, n)) {
            th->seen[t] = 1;
            th->score += th->q->t[t].idf_msg > 0 ? th->q->t[t].idf_msg : 1;
        }
    }
    return 0;
}

/* Splits text into passages at line breaks and sentence ends, about
 * 30-80 tokens each. */
static int split_passages(const char *s, size_t n, struct psg **out)
{
    int cap = 16, np = 0;
    struct psg *v = malloc((size_t)cap * sizeof *v);
    if (!v)
        return -1;
    size_t a = 0;
    while (a < n) {
        size_t b = a, best = 0;
        size_t lim = a + 400 < n ? a + 400 : n;     /* ~100 tokens of English */
        for (b = a; b < lim; b++) {
            char c = s[b];
            if (c == '\n' && b > a + 40) {
                best = b + 1;
                break;
            }
            if ((c == '.' || c == '?' || c == '!') && b + 1 < n &&
                (s[b + 1] == ' ' || s[b + 1] == '\n') && b > a + 120) {
                best = b + 1;
                break;
            }
            /* 。！？ are E3 80 82, EF BC 81, EF BC 9F */
            if ((unsigned char)c == 0xE3 && b + 2 < n && (unsigned char)s[b + 1] == 0x80 &&
                (unsigned char)s[b + 2] == 0x82 && b > a + 90) {
                best = b + 3;
                break;
            }
        }
        if (!best) {
            best = lim;
            /* do not cut inside a UTF-8 sequence; prefer a space */
            size_t k = best;
            while (k > a + 200 && k < n && s[k] != ' ' && s[k] != '\n')
                k--;
            if (k > a + 200 && k < n)
                best = k + 1;
            while (best < n && ((unsigned char)s[best] & 0xC0) == 0x80)
                best++;
        }
        if (np == cap) {
            cap *= 2;
            struct psg *nv = realloc(v, (size_t)cap * sizeof *v);
            if (!nv) {
                free(v);
                return -1;
            }
            v = nv;
        }
        v[np].a = a;
        v[np].b = best;
        v[np].score = 0;
        v[np].keep = 0;
        np++;
        a = best;
    }
    *out = v;
    return np;
}

/* Passages that share terms with the question, best first; equal scores
 * keep text order. */
struct pcand { double score; int i; };

static int cmp_pcand(const void *a, const void *b)
{
    const struct pcand *x = a, *y = b;
    if (x->score != y->score)
        return x->score < y->score ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Scores every passage: the IDF weight of the question terms it holds. */
static int score_passages(const char *s, struct psg *v, int np, const struct query *q)
{
    char *seen = calloc((size_t)(q->nt ? q->nt : 1), 1);
    if (!seen)
        return -1;
    for (int i = 0; i < np; i++) {
        struct term_hits th = { q, 0, seen };
        memset(seen, 0, (size_t)(q->nt ? q->nt : 1));
        text_tokenize(s + v[i].a, v[i].b - v[i].a, 1, psg_cb, &th);
        v[i].score = th.score;
    }
    free(seen);
    return 0;
}

/* Keeps the best-scoring passages that fit, best first. One sort, then
 * one pass: a pasted log of 50 MB has ~250k passages, and looking for the
 * best again after each pick (as this once did) took minutes. */
static int pick_passages(const char *s, struct psg *v, int np, int sep, int max_tokens,
                         int *used)
{
    struct pcand *c = malloc((size_t)np * sizeof *c);
    int nc = 0;
    if (!c)
        return -1;
    for (int i = 0; i < np; i++)
        if (!v[i].keep && v[i].score > 0)
            c[nc++] = (struct pcand){ v[i].score, i };
    qsort(c, (size_t)nc, sizeof *c, cmp_pcand);
    /* every passage costs at least the separator: stop when that is all
     * that is left */
    for (int j = 0; j < nc && max_tokens - *used >= sep; j++) {
        const struct psg *p = &v[c[j].i];
        int cost = text_count_tokens(s + p->a, p->b - p->a) + sep;
        if (*used + cost > max_tokens)
            continue;               /* too long: try the next best */
        v[c[j].i].keep = 1;
        *used += cost;
    }
    free(c);
    return 0;
}

/* An excerpt of s within max_tokens: the opening (its first passage, and
 * the passages after it that fit in lead tokens) and the passages that
 * share the most (IDF-weighted) terms with the question, in their order,
 * joined by " … ". Time is linear in n (plus a sort of the passages).
 * Returns a malloc'd string or NULL. */
char *pack_excerpt(const char *s, size_t n, const struct query *q, int max_tokens, int lead,
                   int tail)
{
    struct psg *v = NULL;
    struct buf b = BUF_INIT;
    char *res = NULL;
    int np = split_passages(s, n, &v);
    if (np <= 0 || score_passages(s, v, np, q))
        goto out;
    int used = 0, sep = text_count_tokens(" … ", 5);
    /* the opening, when it is not the whole budget (or the lead holds it) */
    int c0 = text_count_tokens(s + v[0].a, v[0].b - v[0].a);
    if (c0 <= max_tokens / 3 || c0 <= lead || np == 1) {
        v[0].keep = 1;
        used += c0;
    }
    /* a reply's closing: its last passages, in order, while they fit in
     * tail tokens (policy.h, PACK_REPLY_TAIL) */
    if (tail > 0 && v[0].keep) {
        int t = 0, first = np;
        for (int i = np - 1; i > 0; i--) {
            int c = text_count_tokens(s + v[i].a, v[i].b - v[i].a);
            if (t + c > tail || used + t + c > max_tokens)
                break;
            t += c;
            first = i;
        }
        for (int i = first; i < np; i++)
            v[i].keep = 1;
        used += t;
    }
    /* a reply's lead: the passages after the opening, in order, while
     * they fit in lead tokens (policy.h, PACK_REPLY_LEAD) */
    for (int i = 1; i < np && v[i - 1].keep && !v[i].keep; i++) {
        int c = text_count_tokens(s + v[i].a, v[i].b - v[i].a);
        if (used + c > lead)
            break;
        v[i].keep = 1;
        used += c;
    }
    if (pick_passages(s, v, np, sep, max_tokens, &used))
        goto out;
    /* fill with the passages after kept ones, in order, while they fit */
    for (int i = 1; i < np; i++) {
        if (v[i].keep || !v[i - 1].keep)
            continue;
        int c = text_count_tokens(s + v[i].a, v[i].b - v[i].a);
        if (used + c <= max_tokens) {
            v[i].keep = 1;
            used += c;
        }
    }
    int last = -2;
    for (int i = 0; i < np; i++) {
        if (!v[i].keep)
            continue;
        if (last != i - 1 && b.n)
            buf_adds(&b, " … ");
        else if (last != i - 1 && i > 0)
            buf_adds(&b, "… ");
        size_t a = v[i].a, e = v[i].b;
        while (e > a && (s[e - 1] == '\n' || s[e - 1] == ' '))
            e--;
        if (b.n && last == i - 1)
            buf_addc(&b, ' ');
        buf_add(&b, s + a, e - a);
        last = i;
    }
    if (last != np - 1 && b.n)
        buf_adds(&b, " …");
    /* the estimate above is a sum; the real count decides */
    if (b.n && text_count_tokens(b.p, b.n) > max_tokens) {
        size_t k = text_prefix_within(b.p, b.n, max_tokens - 2);
        buf_truncate(&b, k);
        buf_adds(&b, " …");
    }
    if (!b.n) {
        size_t k = text_prefix_within(s, n, max_tokens - 2);
        buf_add(&b, s, k);
        buf_adds(&b, " …");
    }
    res = buf_detach(&b, NULL);
out:
    free(v);
    buf_release(&b);
    return res;
}

/* ---- rendering ---- */

/* A session header's opening: "[" and the session's time (else at's),
 * or "[undated", into ts[48]; its length. d: the day names read so far
 * (a packer's, kept for the pack; else the caller's own). */
static size_t session_stamp(const struct pool *p, int si, int64_t at, char *ts,
                            struct stamp_days *d)
{
    const struct rsession *s = &p->s[si];
    int64_t t = s->started_at != CAIRN_NO_TIME ? s->started_at : at;
    size_t n = 0;
    ts[0] = '[';
    if (t != CAIRN_NO_TIME)
        n = time_stamp_minute(t, d, ts + 1);   /* strftime's 40 bytes */
    if (n == 0) {
        memcpy(ts + 1, "undated", 8);
        n = 7;
    }
    return n + 1;
}

/* session_header after its opening, ts[tn] (session_stamp's) */
static void header_rest(const struct pool *p, int si, const char *ts, size_t tn, struct buf *b)
{
    const struct rsession *s = &p->s[si];
    buf_add(b, ts, tn);
    if (s->source && *s->source) {
        buf_adds(b, " · ");
        fence_line(b, s->source, strlen(s->source));
    }
    const char *name = s->title && *s->title ? s->title : s->project;
    if (name && *name) {
        /* titles are data: one short line, no fence tag (util/fence.h) */
        struct buf line = BUF_INIT;
        fence_line(&line, name, strlen(name));
        size_t k = text_prefix_within(line.p, line.n, 16);
        buf_adds(b, " · ");
        buf_add(b, line.p, k);
        if (k < line.n)
            buf_adds(b, "…");
        buf_release(&line);
    }
    if (p->cite) {
        /* whole, as get_conversation takes it; quoted so a title cannot pass for it */
        struct buf id = BUF_INIT;
        fence_line(&id, s->ext_id, strlen(s->ext_id));
        buf_adds(b, " · session_id ");
        buf_add_json_str(b, id.p, id.n);
        buf_release(&id);
    }
    buf_adds(b, "]\n");
}

static void session_header(const struct pool *p, int si, int64_t at, struct buf *b)
{
    char ts[48];
    struct stamp_days d = { 0 };
    header_rest(p, si, ts, session_stamp(p, si, at, ts, &d), b);
}

static void message_line(const struct rmsg *m, struct buf *b)
{
    if (m->speaker && *m->speaker) {
        fence_line(b, m->speaker, strlen(m->speaker));
        buf_adds(b, ": ");
    } else
        buf_adds(b, m->role == ROLE_USER ? "user: " : "assistant: ");
    buf_adds(b, m->text ? m->text : "");
    buf_addc(b, '\n');
}

/* 1 when session a is printed before session b: oldest first, or with
 * p->cite the one holding the better-ranked unit first (best[]: each
 * session's best rank among its picked messages), since a reader who
 * follows up reads the best first (docs/MCP.md). */
static int session_before(const struct pool *p, const int *best, int a, int b)
{
    if (best) {
        if (best[a] != best[b])
            return best[a] < best[b];
        return a < b;
    }
    int64_t ta = p->s[a].started_at == CAIRN_NO_TIME ? INT64_MAX : p->s[a].started_at;
    int64_t tb = p->s[b].started_at == CAIRN_NO_TIME ? INT64_MAX : p->s[b].started_at;
    return ta < tb || (ta == tb && a < b);
}

/* The sessions of the picked messages order[n] in text order, -1 ended
 * (caller frees), or NULL on no memory. Only a session with a turn picked
 * renders anything: the pool's others (~34,000 at a million messages,
 * sorted and walked twice a pack) are left out (pack53; p->pack_walk:
 * every session, as before). */
static int *session_order(const struct pool *p, const int *order, int n)
{
    int all = p->pack_walk, ns = 0;
    int *so = malloc(((size_t)(all ? p->ns : n) + 1) * sizeof *so), *best = NULL;
    if (!so || (p->cite && !(best = malloc((size_t)(p->ns ? p->ns : 1) * sizeof *best)))) {
        free(so);
        return NULL;
    }
    if (!all) {
        for (int j = 0; j < n; j++)
            so[j] = p->m[order[j]].sess;
        qsort(so, (size_t)n, sizeof *so, sort_cmp_int);
    }
    for (int j = 0; j < (all ? p->ns : n); j++)
        if (all || !ns || so[ns - 1] != so[j]) {
            so[ns] = all ? j : so[j];
            if (best)
                best[so[ns]] = INT_MAX;
            ns++;
        }
    for (int j = 0; best && j < n; j++) {
        const struct rmsg *m = &p->m[order[j]];
        if (p->u[m->unit].rank < best[m->sess])
            best[m->sess] = p->u[m->unit].rank;
    }
    for (int i = 1; i < ns; i++) {          /* insertion sort: few sessions */
        int k = so[i], j = i - 1;
        while (j >= 0 && !session_before(p, best, so[j], k)) {
            so[j + 1] = so[j];
            j--;
        }
        so[j + 1] = k;
    }
    so[ns] = -1;
    free(best);
    return so;
}

/* Renders the picked messages order[n], sessions in session_order(). */
static int render(const struct pool *p, const int *order, int n, struct buf *b)
{
    int *so = session_order(p, order, n);
    if (!so)
        return CAIRN_NOMEM;
    int first_block = 1;
    for (int k = 0; so[k] >= 0; k++) {
        const struct rsession *s = &p->s[so[k]];
        int last = -1;
        for (int i = s->first_msg; i < s->first_msg + s->n_msgs; i++) {
            if (!p->m[i].picked)
                continue;
            if (last < 0) {
                if (!first_block)
                    buf_addc(b, '\n');
                session_header(p, so[k], p->m[i].at, b);
                first_block = 0;
            } else if (i != last + 1) {
                buf_adds(b, "…\n");
            }
            message_line(&p->m[i], b);
            last = i;
        }
    }
    free(so);
    return b->err ? CAIRN_NOMEM : CAIRN_OK;
}

/* ---- choosing ---- */

enum { FETCH_NONE, FETCH_META, FETCH_TEXT, FETCH_FAILED };
#define FETCH_BATCH 16

/* What a pack keeps of the session stamps it wrote (exact33) */
struct pack_stamps {
    struct stamp_days days;    /* session_stamp's day names, read once a pack */
    struct tc_memo counts;     /* the floors' openings counted, by shape */
    int least;                 /* least_floor's: 0 not yet, -1 none */
};

struct packer {
    const struct pack_src *src;
    struct pool  *p;
    const struct query *q;
    int budget, used;
    char *sess_open;     /* a header is already paid for */
    int  *order;         /* picked messages, in the order they were picked */
    int   norder;
    char **excl;         /* "session\tmessage" keys never to pack, sorted */
    int   nexcl;
    /* What was read of each message (see fetch()) */
    struct store_msg_text *ld;
    char *state;         /* per message: FETCH_* */
    int  *cand, ncand;   /* messages in the order pack is likely to try them */
    int  *cpos;          /* the planned messages' places in cand (cpos_of) */
    unsigned cpos_mask;  /* its slots - 1, a power of two less one */
    int   plan_r0, plan_nfull;   /* plan_to's: the next place, rounds planned whole */
    int  *rd, nrd;       /* the messages fetched (their ld to free), once each */
    int  *hdr;           /* per session: header_or_refuse's cost, minus its floor, or 0 */
    struct pack_stamps *st;    /* the headers' openings (a pointer: the packer
                                * held whole made pack()'s loops ~4 M slower) */
    char *snip;          /* per message: packed as a reply snippet (may grow) */
    int   year4;         /* every session not open has a four-digit year's
                          * stamp: 1, 0 not, -1 not asked (pass_closed) */
    const int *ord;      /* units_by_rank's */
    const int *tnext;    /* past pass_closed's point: pass_tail's places
                          * after the unit tried, else NULL */
};

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Parses opts->exclude_items into a sorted key list. */
static int load_excluded(struct packer *k, const char *list)
{
    int n = 0;
    if (!list || !*list)
        return 0;
    for (const char *s = list; *s; s++)
        n += *s == '\n';
    k->excl = calloc((size_t)n + 1, sizeof *k->excl);
    if (!k->excl)
        return -1;
    const char *s = list;
    while (*s) {
        const char *e = strchr(s, '\n');
        size_t len = e ? (size_t)(e - s) : strlen(s);
        if (len && strchr(s, '\t') && (size_t)(strchr(s, '\t') - s) < len) {
            k->excl[k->nexcl] = strndup(s, len);
            if (!k->excl[k->nexcl])
                return -1;
            k->nexcl++;
        }
        if (!e)
            break;
        s = e + 1;
    }
    qsort(k->excl, (size_t)k->nexcl, sizeof *k->excl, cmp_str);
    return 0;
}

static int is_excluded(const struct packer *k, const struct rmsg *m)
{
    char key[512];
    if (!k->nexcl)
        return 0;
    snprintf(key, sizeof key, "%s\t%s", k->p->s[m->sess].ext_id, m->ext_id);
    const char *pk = key;
    return bsearch(&pk, k->excl, (size_t)k->nexcl, sizeof *k->excl, cmp_str) != NULL;
}

/* Cost of a message line with text t. */
static int line_cost(const struct rmsg *m, const char *t, size_t n)
{
    int c = text_count_tokens(t, n) + 1;    /* + the newline */
    if (m->speaker && *m->speaker) {
        /* as message_line prints it; a copy only when fence_line changes it */
        struct buf name = BUF_INIT;
        size_t sn = strlen(m->speaker);
        if (!fence_line_plain(m->speaker, sn))
            fence_line(&name, m->speaker, sn);
        c += (name.n ? text_count_tokens(name.p, name.n)
                     : text_count_tokens(m->speaker, sn)) + 1;
        buf_release(&name);
    } else
        c += 2;
    return c;
}

/* pack_header_cost with its opening given (ts[tn], session_stamp's) */
static int header_cost_of(const struct pool *p, int si, const char *ts, size_t tn)
{
    struct buf b = BUF_INIT;
    header_rest(p, si, ts, tn, &b);
    int c = text_count_tokens(b.p, b.n) + 2;   /* + the blank line and a gap mark */
    buf_release(&b);
    return c;
}

int pack_header_cost(const struct pool *p, int si)
{
    char ts[48];
    struct stamp_days d = { 0 };
    return header_cost_of(p, si, ts, session_stamp(p, si, CAIRN_NO_TIME, ts, &d));
}

/* The least pack_header_cost can be, without the title, the source and
 * their fencing (issue 23, exact31: an exact recall at a million messages
 * whose budget is nearly spent tried 83,525 lead turns of 30,200 sessions,
 * each refused for want of room, and costing their headers was 487 M of
 * its 1,552 M instructions). The count is a sum over runs, each costed on
 * its own bytes and the runs before it (docs/TOKENS.md), so whole runs of
 * the header cost at most what it does. Counted: the opening, "[" and its
 * time (what follows it, a space or "]", starts another run); then 1 for
 * the run with the closing "]" and 1 for the "\n" after it, two runs
 * after the opening whatever comes between (exact32: without them the
 * floor of "the migration that failed on the staging database" refused
 * none of its 33,760 sessions); and the 2 of the blank line and the gap
 * mark. test_recall_pool checks it on many headers. The opening is
 * counted by its shape (m: exact33; one count a pack for most stamps). */
static int header_floor_of(struct tc_memo *m, const char *ts, size_t tn)
{
    return text_count_tokens_memo(m, ts, tn) + 2 + 2;
}

int pack_header_floor(const struct pool *p, int si)
{
    char ts[48];
    struct stamp_days d = { 0 };
    struct tc_memo m = { 0 };
    return header_floor_of(&m, ts, session_stamp(p, si, CAIRN_NO_TIME, ts, &d));
}

/* The least floor of a session whose stamp has a year of four digits
 * (STAMP_YEAR4_LO-HI; exact33): header_floor_of "[0000-00-00 N 00:00" for
 * the cheapest of the locale's day names N. Such a stamp is that shape
 * with other digits (time_stamp_minute writes its fields by hand, no
 * other bytes), and digits cost by their runs' lengths alone
 * (text_count_tokens_memo), so no such session floors lower. 0 when a
 * day name cannot be read (those stamps go through strftime). */
static int least_floor(struct pack_stamps *st)
{
    if (st->least == 0) {
        int best = INT_MAX;
        st->least = -1;
        for (int w = 0; w < 7; w++) {
            size_t dn = stamp_day(&st->days, w);
            char s[48];
            if (!dn)
                return 0;
            memcpy(s, "[0000-00-00 ", 12);
            memcpy(s + 12, st->days.name[w], dn);
            memcpy(s + 12 + dn, " 00:00", 6);
            int c = header_floor_of(&st->counts, s, 12 + dn + 6);
            best = c < best ? c : best;
        }
        st->least = best;
    }
    return st->least > 0 ? st->least : 0;
}

/* least_floor of session si when its time has a four-digit year, else 0 */
static int session_least(const struct pool *p, int si, struct pack_stamps *st)
{
    int64_t t = p->s[si].started_at;
    return t >= STAMP_YEAR4_LO && t <= STAMP_YEAR4_HI ? least_floor(st) : 0;
}

int pack_header_least(const struct pool *p, int si)
{
    struct pack_stamps st = { 0 };
    return session_least(p, si, &st);
}

/* The planned messages' places in cand (issue 23, pack53): pairs of
 * message + 1 and place + 1, open addressing, grown at half full. An
 * array of every message's place was 4 MB cleared a pack at a million
 * messages (calloc on fresh pages: ~390 page faults, the process's most)
 * to plan a few hundred. */
#define CPOS_SLOTS 64     /* (grown in a few steps to a recall's ~500) */

static unsigned cpos_hash(const struct packer *k, int i)
{
    return (unsigned)(((uint64_t)(unsigned)i * 0x9E3779B97F4A7C15ull) >> 32) & k->cpos_mask;
}

/* message i's place in cand + 1, or 0: not planned */
static int cpos_of(const struct packer *k, int i)
{
    for (unsigned j = cpos_hash(k, i);; j = (j + 1) & k->cpos_mask) {
        if (k->cpos[2 * j] == i + 1)
            return k->cpos[2 * j + 1];
        if (!k->cpos[2 * j])
            return 0;
    }
}

static void cpos_put(struct packer *k, int i, int place1)
{
    unsigned j = cpos_hash(k, i);
    while (k->cpos[2 * j])
        j = (j + 1) & k->cpos_mask;
    k->cpos[2 * j] = i + 1;
    k->cpos[2 * j + 1] = place1;
}

/* Twice the slots, the pairs put again; -1 on no memory (none lost). */
static int cpos_grow(struct packer *k)
{
    unsigned n = 2 * (k->cpos_mask + 1), om = k->cpos_mask;
    int *t = calloc(n, 2 * sizeof *t), *old = k->cpos;
    if (!t)
        return -1;
    k->cpos = t;
    k->cpos_mask = n - 1;
    for (unsigned j = 0; j <= om; j++)
        if (old[2 * j])
            cpos_put(k, old[2 * j] - 1, old[2 * j + 1]);
    free(old);
    return 0;
}

static int ahead_refused(struct packer *k, int si);

/* Session si, then those of the next turns the first pass will try (past
 * place i's, FETCH_BATCH at most) still unloaded: for lazy_need (names 0:
 * those a read ahead may not leave out) and lazy_names (1: those not yet
 * named), to be read in one call. How many went into want. */
static int ahead_sessions(struct packer *k, int si, int i, int names, int *want)
{
    const struct pool *p = k->p;
    int n = 0, c0 = i >= 0 ? cpos_of(k, i) : 0;
    want[n++] = si;
    for (int c = c0 ? c0 : k->ncand; c < k->ncand && n <= FETCH_BATCH; c++) {
        int sj = pool_sess_of(p, k->cand[c]);
        if (pool_state(p, sj) == POOL_UNLOADED &&
            (names ? !p->s[sj].ext_id : !ahead_refused(k, sj)))
            want[n++] = sj;
    }
    return n;
}

/* A pool gathered over unit rows (gather.c, recall.units) has a
 * session's turns read when packing first needs them: its header's cost
 * with room to spare (its title; lazy_names reads the title alone where
 * the header may refuse), or one of its turns tried past the header. Read with it:
 * the sessions of the next turns the first pass will try (as fetch reads
 * their texts ahead), in one read. 0 when session si is loaded, else its
 * turns could not be read (the store changed since gather): every turn of
 * it is refused. */
static int lazy_need(struct packer *k, int si, int i)
{
    struct pool *p = k->p;
    if (pool_state(p, si) == POOL_UNLOADED) {
        int want[FETCH_BATCH + 1];
        int n = ahead_sessions(k, si, i, 0, want);
        (void)pool_load(p, want, n);    /* (what failed is marked failed) */
    }
    return pool_state(p, si) != POOL_LOADED;
}

/* Below this much room left (and 8), a header may refuse its turn, so
 * lazy_names reads the strings alone and ahead_refused weighs the
 * sessions read ahead; with more, the header most likely fits and the
 * turns are read with the strings, in one read, as before (a second
 * read a session, and headers costed ahead of their tries, were 0.2-0.4
 * M instructions more on the questions whose headers all fit). A guess
 * for the reads alone: no value changes what is packed. */
#define NAMES_LEFT 48

/* A pool gathered over unit rows: session si's strings (its header's
 * title, source and id) read without its turns, with those of the
 * sessions of the next turns the first pass will try, in one read
 * (pack54: the first pass costed ~220 headers on "how did we fix the
 * websocket reconnect bug" at a million messages, and ~150 of them were
 * refused for want of room once costed, each session's turns read for
 * its title). 0 when they are read, else its row could not be read. */
static int lazy_names(struct packer *k, int si, int i)
{
    struct pool *p = k->p;
    if (k->budget - k->used >= 8 + NAMES_LEFT)
        return lazy_need(k, si, i);
    if (pool_state(p, si) == POOL_UNLOADED && !p->s[si].ext_id) {
        int want[FETCH_BATCH + 1];
        int n = ahead_sessions(k, si, i, 1, want);
        (void)pool_names(p, want, n);   /* (what failed is marked failed) */
    }
    return pool_state(p, si) == POOL_FAILED || !p->s[si].ext_id;
}

static int header_or_refuse(struct packer *k, int si, int i);

/* Whether a read ahead may leave session si out: over unit rows, a
 * session not open whose header, its strings read, leaves less than 8
 * tokens of room now. In the first pass the room only shrinks, so its
 * turns would be refused there; anything later reads them when it tries
 * them. A guess for the reads alone: what is packed is the same either
 * way (the header's cost kept is its own, as header_or_refuse keeps it). */
static int ahead_refused(struct packer *k, int si)
{
    const struct pool *p = k->p;
    if (!p->pu || k->sess_open[si] || !p->s[si].ext_id || k->budget - k->used >= 8 + NAMES_LEFT)
        return 0;
    int h = header_or_refuse(k, si, -1);
    return !h || k->budget - k->used - h < 8;
}

/* Over unit rows: the turn of the reply lane's entry mi (a match), its
 * session read; -1 when it cannot be. */
static int lane_slot(struct packer *k, int mi)
{
    struct pool *p = k->p;
    const struct runit *u = &p->u[p->pu->munit[mi]];
    if (lazy_need(k, u->sess, -1))
        return -1;
    for (int i = u->first; i <= u->last; i++)
        if (p->m[i].row == p->pu->mt[mi].row)
            return i;
    return -1;
}

/* try_add's header: its cost, or 0 (nothing costed) when the session's
 * floor leaves less than 8 tokens of room. k->hdr[si] keeps what was
 * asked: the cost (> 0), minus a floor (< 0), or 0. Both are the
 * session's own, the same all through a pack, and each call weighs them
 * against the room left then, so each is counted once a pack (exact31
 * floored a session again for each of its refused turns). The first
 * floor asked is the least of the session's year (exact33: refused on it,
 * the stamp is not written: localtime_r and the count were ~30 M of a
 * million-message recall); one that leaves room is asked its own. */
static int header_or_refuse(struct packer *k, int si, int i)
{
    int *h = &k->hdr[si], left = k->budget - k->used, least;
    if (*h > 0)
        return *h;
    if (*h < 0 && left + *h < 8)
        return 0;
    /* asked only near a full pack: 24 bytes the longest C-locale stamp
     * (a guess like the one below, never what is refused) */
    if (*h == 0 && left < 8 + 4 + 24 && (least = session_least(k->p, si, k->st)) &&
        left - least < 8) {
        *h = -least;
        return 0;
    }
    char ts[48];
    size_t tn = session_stamp(k->p, si, CAIRN_NO_TIME, ts, &k->st->days);
    /* floored only where it may refuse: an opening of ASCII bytes costs a
     * token a byte at most (a guess, not a bound: it decides only whether
     * the floor is asked, never what is refused) */
    if (*h <= 0 && left < 8 + 4 + (int)tn) {
        *h = -header_floor_of(&k->st->counts, ts, tn);
        if (left + *h < 8)
            return 0;
    }
    if (lazy_names(k, si, i))
        return 0;               /* (its strings: the cost reads its title) */
    return *h = header_cost_of(k->p, si, ts, tn);
}

/* The first pass's tail (issue 23, pack53). Once the room left is under
 * the least header floor plus 8, a unit of a session not open is refused
 * on that floor by header_or_refuse (its memo aside, nothing read or
 * kept), and the room only shrinks through the pass: only the units of
 * the sessions open then can still be packed, and the sessions open stay
 * those (a unit packs turns of its own session only). At a million
 * messages a 1,000-token recall tried ~104,000 units past that point,
 * each a few cache misses (its unit, session, header memo and state),
 * and packed one. 1 when that point is reached: header_or_refuse's own
 * test, and every session not open has a stamp of a four-digit year (a
 * scan of the sessions, once; any other is floored by its own stamp). */
static int pass_closed(struct packer *k)
{
    int left = k->budget - k->used, least;
    if (left >= 8 + 4 + 24 || !(least = least_floor(k->st)) || left - least >= 8)
        return 0;
    if (k->year4 < 0) {
        const struct pool *p = k->p;
        k->year4 = 1;
        for (int si = 0; si < p->ns && k->year4; si++)
            if (!k->sess_open[si] &&
                (p->s[si].started_at < STAMP_YEAR4_LO || p->s[si].started_at > STAMP_YEAR4_HI))
                k->year4 = 0;
    }
    return k->year4;
}

/* The places after r0 (in units_by_rank's order, which a scored unit's
 * rank is) of the scored units of the open sessions, ascending, -1 ended
 * (caller frees), or NULL on no memory: what pass_closed leaves to try. */
static int *pass_tail(const struct packer *k, int r0)
{
    const struct pool *p = k->p;
    int *ss = malloc(((size_t)k->norder + 1) * sizeof *ss), ns = 0, *rk = NULL, n = 0;
    size_t room = 1;
    if (!ss)
        return NULL;
    for (int j = 0; j < k->norder; j++)
        ss[ns++] = p->m[k->order[j]].sess;
    qsort(ss, (size_t)ns, sizeof *ss, sort_cmp_int);
    int u = 0;
    for (int j = 0; j < ns; j++)
        if (!u || ss[u - 1] != ss[j]) {
            ss[u++] = ss[j];
            room += (size_t)p->s[ss[j]].n_msgs;
        }
    ns = u;
    if (!(rk = malloc(room * sizeof *rk)))
        goto out;
    for (int j = 0; j < ns; j++) {
        /* an open session is read (try_add_in read it to pack a turn) */
        const struct rsession *s = &p->s[ss[j]];
        for (int i = s->first_msg; i < s->first_msg + s->n_msgs; i++) {
            const struct runit *x = &p->u[p->m[i].unit];
            if (x->head == i && x->score > 0 && x->rank > r0)
                rk[n++] = x->rank;
        }
    }
    qsort(rk, (size_t)n, sizeof *rk, sort_cmp_int);
    rk[n] = -1;
out:
    free(ss);
    return rk;
}

/* The places (units_by_rank's) of the scored units whose lead turn is
 * packed, ascending, -1 ended (caller frees), or NULL on no memory. The
 * second pass makes those rounds whole, best first: it walked every
 * scored unit in rank order for them (~410,000 at a million messages,
 * each a cache miss or two, for the ~10 packed; pack53). Its tries add
 * turns of their own rounds only, none a lead turn of another, so the
 * list made before it is the one it would find. */
static int *picked_ranks(const struct packer *k)
{
    const struct pool *p = k->p;
    int *rk = malloc(((size_t)(p->pack_walk ? p->nu : k->norder) + 1) * sizeof *rk), n = 0;
    if (!rk)
        return NULL;
    /* the reference (p->pack_walk): every scored unit, as the walk took them */
    for (; p->pack_walk && n < p->nu && p->u[k->ord[n]].score > 0; n++)
        rk[n] = n;
    for (int j = 0; !p->pack_walk && j < k->norder; j++) {
        const struct runit *x = &p->u[p->m[k->order[j]].unit];
        if (x->head == k->order[j] && x->score > 0)
            rk[n++] = x->rank;
    }
    qsort(rk, (size_t)n, sizeof *rk, sort_cmp_int);   /* (order holds a turn once) */
    rk[n] = -1;
    return rk;
}

/* ---- reading the texts ----
 *
 * What a message costs is the token count of its text, so pack reads the
 * texts of the messages it tries before choosing. It does not go back to
 * the store for each one: the first time it needs a message, it reads it
 * together with those it will try next as far as that can be told before
 * choosing. The first pass tries the lead turns in rank order (and the
 * best rounds' replies): those are read FETCH_BATCH at a time. A round
 * made whole later, a round of the baseline, a reply of the reply lane:
 * the rest of that round's turns with it. Reading further ahead costs
 * more than it saves (measured: 32 to 256 ahead read 5 to 10 times the
 * text a recall needs, and made a whole `cairn recall` ~12% slower). A
 * message over PACK_SCAN_MAX bytes is read only when it is tried (its
 * opening: excerpted, never whole). What is read but not picked is freed
 * at the end; the choice is the same as reading one at a time. */


static void cand_add(struct packer *k, int i)
{
    if (cpos_of(k, i) || (2 * ((unsigned)k->ncand + 1) > k->cpos_mask + 1 && cpos_grow(k)))
        return;     /* (no memory: not planned, read when tried; the same choice) */
    k->cand[k->ncand++] = i;
    cpos_put(k, i, k->ncand);
}

#define PLAN_AHEAD 8
/* How many places ahead of the unit it tries the first pass has planned:
 * a read ahead takes FETCH_BATCH turns or sessions not read yet */
#define PLAN_WINDOW (8 * FETCH_BATCH)

/* The order of the first pass of pack(), the places of ord before end
 * (k->ord; those planned already skipped): the lead turns by rank and
 * the replies of the best rounds. The pass plans as it goes, PLAN_WINDOW
 * places ahead (pack53: planned whole up front it read each of ~410,000
 * scored units, its head's place and its session, three cache misses a
 * unit, to try ~100 at a million messages, and 4 MB of places set). */
static void plan_to(struct packer *k, int end)
{
    const struct pool *p = k->p;
    const int *ord = k->ord;
    int nfull = k->plan_nfull, r0 = k->plan_r0;
    for (; r0 < p->nu && r0 < end; r0++) {
        if (p->u[ord[r0]].score <= 0) {
            r0 = p->nu;         /* no more to plan */
            break;
        }
        const struct runit *u = &p->u[ord[r0]];
        /* rank order is scattered over the pool: each unit, its head's
         * place and its session a cache miss apart (at a million
         * messages ~140,000 units, half of pack's time on this host),
         * asked for some units ahead, the unit first (issue 23, exact51) */
        if (r0 + 2 * PLAN_AHEAD < p->nu)
            __builtin_prefetch(&p->u[ord[r0 + 2 * PLAN_AHEAD]]);
        if (r0 + PLAN_AHEAD < p->nu) {
            const struct runit *v = &p->u[ord[r0 + PLAN_AHEAD]];
            __builtin_prefetch(&p->s[v->sess]);
        }
        cand_add(k, u->head);
        /* a server's source (ahead): every round's replies too, since the
         * snippets and the reply lane try them, each else a round trip */
        if (!p->s[u->sess].dialog && (nfull++ < PACK_FULL_ROUNDS || k->src->ahead > 1))
            for (int i = u->first; i <= u->last; i++)
                cand_add(k, i);
    }
    k->plan_r0 = r0;
    k->plan_nfull = nfull;
}

/* The plan before the first pass: the whole store when it may fit, and
 * for a server's source (ahead: its replies read with every round) or a
 * store that may fit the whole order; else plan_to as the pass goes. The
 * baseline (raw) reads round by round. */
static void plan_reads(struct packer *k, int raw)
{
    const struct pool *p = k->p;
    if (raw)
        return;
    if (p->all_mode)
        for (int i = 0; i < p->nm; i++)
            cand_add(k, i);
    if (p->all_mode || k->src->ahead > 1)
        plan_to(k, p->nu);
}

/* Message x cannot be read. A slot is written when its state first
 * leaves FETCH_NONE (ld is not cleared up front: issue 23, mem53), so one
 * never read is emptied here for the cleanup, which frees what it holds. */
static void fetch_failed(struct packer *k, int x)
{
    if (k->state[x] == FETCH_NONE)
        k->ld[x] = (struct store_msg_text){ 0 };
    k->state[x] = FETCH_FAILED;
}

/* Reads v[n] with the source, and when the batch fails (a message
 * forgotten since gather), each alone: the others are still read. */
static void fetch_batch(struct packer *k, int *idx, int n, int text)
{
    const struct pack_src *src = k->src;
    struct store_msg_text *v = malloc((size_t)n * sizeof *v);
    if (!v)
        goto fail;
    for (int j = 0; j < n; j++) {
        /* a message never read has an untouched (zero) slot: on a big
         * pool most are, and filling them all cost more than packing */
        if (k->state[idx[j]] == FETCH_NONE)
            v[j] = (struct store_msg_text){ .row = k->p->m[idx[j]].row, .bytes = -1 };
        else
            v[j] = k->ld[idx[j]];
    }
    int rc = text ? src->text(src->arg, v, n, PACK_SCAN_MAX) : src->meta(src->arg, v, n);
    for (int j = 0; j < n; j++) {
        if (k->state[idx[j]] == FETCH_NONE)
            k->rd[k->nrd++] = idx[j];     /* its ld is filled now */
        if (rc && (text ? src->text(src->arg, &v[j], 1, PACK_SCAN_MAX)
                        : src->meta(src->arg, &v[j], 1))) {
            k->state[idx[j]] = FETCH_FAILED;
        } else if (k->state[idx[j]] != FETCH_FAILED) {
            k->state[idx[j]] = text ? FETCH_TEXT : FETCH_META;
            if (!text) {
                /* the pool keeps the external id (the items borrow it) */
                struct rmsg *m = &k->p->m[idx[j]];
                m->ext_id = v[j].ext_id;
                v[j].ext_id = NULL;
                m->bytes = v[j].bytes;
            }
        }
        k->ld[idx[j]] = v[j];
    }
    free(v);
    return;
fail:
    for (int j = 0; j < n; j++)
        fetch_failed(k, idx[j]);
}

/* Makes sure message i's meta (ext_id, bytes) and, when want_text, its
 * text are read. Returns 0, or -1 when it cannot be read. */
static int fetch(struct packer *k, int i, int want_text)
{
    int want = want_text ? FETCH_TEXT : FETCH_META;
    if (k->state[i] == FETCH_FAILED)
        return -1;
    if (k->state[i] >= want)
        return 0;
    const struct runit *u = &k->p->u[k->p->m[i].unit];
    /* a server's reads are round trips: its source reads further ahead */
    int batch = FETCH_BATCH * (k->src->ahead > 1 ? k->src->ahead : 1);
    int room = u->last - u->first + 1 > batch ? u->last - u->first + 1 : batch;
    int *idx = malloc(2 * (size_t)room * sizeof *idx), *sel, n = 0, c0;
    if (!idx)
        return -1;
    sel = idx + room;
    idx[n++] = i;
    if (k->tnext) {
        /* the first pass's tail tries the open sessions' units alone: their
         * heads, not the planned turns of the sessions it refuses (each a
         * session's turns read, ~400 sessions for 27 tries; pack53) */
        for (const int *t = k->tnext; *t >= 0 && n < batch; t++) {
            int x = k->p->u[k->ord[*t]].head;
            if (x != i && k->state[x] < want)
                idx[n++] = x;
        }
    } else if ((c0 = cpos_of(k, i))) {
        /* the first pass: the next turns it will try */
        for (int c = c0; c < k->ncand && n < batch; c++)
            if (k->state[k->cand[c]] < want &&
                !(k->p->pu && ahead_refused(k, pool_sess_of(k->p, k->cand[c]))))
                idx[n++] = k->cand[c];
    } else {
        /* a round made whole: the rest of it */
        for (int x = u->first; x <= u->last; x++)
            if (x != i && k->state[x] < want)
                idx[n++] = x;
    }
    if (k->p->pu) {
        /* over unit rows: the batch's sessions read, its turns of those
         * that could not be refused */
        for (int j = 0; j < n; j++)
            sel[j] = pool_sess_of(k->p, idx[j]);
        (void)pool_load(k->p, sel, n);
        int kept = 0;
        for (int j = 0; j < n; j++) {
            if (pool_state(k->p, sel[j]) == POOL_LOADED)
                idx[kept++] = idx[j];
            else
                fetch_failed(k, idx[j]);
        }
        n = kept;
    }
    int nb = 0;                         /* the meta first */
    for (int j = 0; j < n; j++)
        if (k->state[idx[j]] == FETCH_NONE)
            sel[nb++] = idx[j];
    if (nb)
        fetch_batch(k, sel, nb, 0);
    if (want_text) {
        /* then the texts; a huge message's opening only when it is tried */
        nb = 0;
        for (int j = 0; j < n; j++) {
            int x = idx[j];
            if (k->state[x] == FETCH_META && (x == i || k->p->m[x].bytes <= PACK_SCAN_MAX))
                sel[nb++] = x;
        }
        if (nb)
            fetch_batch(k, sel, nb, 1);
    }
    free(idx);
    return k->state[i] == want ? 0 : -1;
}

/* Takes message i back; a whole text goes back to the cache. */
static void unpick(struct packer *k, int i)
{
    struct rmsg *m = &k->p->m[i];
    if (m->picked == 1 && !k->ld[i].text)
        k->ld[i].text = m->text;
    else
        free(m->text);
    m->picked = 0;
    m->text = NULL;
}

static int widen(struct packer *k, int i, int cap);

/* How much of an excerpt of message m (at most max tokens) goes to its
 * opening, in order, before the passages that match: a reply opens by
 * saying what it found and what it does, where the answer usually is,
 * and the lines that repeat the question's words come later (policy.h). */
static int reply_lead(const struct rmsg *m, int max)
{
    return m->role == ROLE_ASSISTANT ? (int)(max * PACK_REPLY_LEAD) : 0;
}

/* How much of it goes to its closing lines, kept beside the opening: a
 * coding assistant ends a long reply with a summary of what it changed
 * (policy.h, PACK_REPLY_TAIL). */
static int reply_tail(const struct rmsg *m, int max)
{
    return m->role == ROLE_ASSISTANT && max >= PACK_REPLY_TAIL_MIN ? (int)(max * PACK_REPLY_TAIL)
                                                                   : 0;
}

/* Tries to add message i whole, or as an excerpt of at most cap tokens
 * (cap 0: whole only). Returns 1 if added (or a snippet grew). */
static int try_add_in(struct packer *k, int i, int si, int cap);

static int try_add(struct packer *k, int i, int cap)
{
    return try_add_in(k, i, -1, cap);
}

/* try_add of turn i of session si (-1: the turn's; over unit rows a slot
 * not read yet has none, and its session is searched for) */
static int try_add_in(struct packer *k, int i, int si, int cap)
{
    struct rmsg *m = &k->p->m[i];
    /* over unit rows a slot of a session not read is not read either: a
     * first read of each of its pages is a page fault (~30,000 of them,
     * most of a second, when the second pass read every head's) */
    int unread = k->p->pu && si >= 0 && pool_state(k->p, si) != POOL_LOADED;
    if (!unread && m->picked == 2 && k->snip[i])
        return widen(k, i, cap);
    if (!unread && m->picked)
        return 0;
    /* a session's header is costed once: once the budget is nearly spent,
     * every unit left is tried and refused for want of room; refused on
     * its floor, whatever its title, it is not costed (the same as below,
     * room < 8, since the floor is at most the cost) */
    int hdr = 2;
    if (si < 0)
        si = k->p->pu ? pool_sess_of(k->p, i) : m->sess;
    if (!k->sess_open[si] && !(hdr = header_or_refuse(k, si, i)))
        return 0;
    int room = k->budget - k->used - hdr;
    if (room < 8 || (k->p->pu && lazy_need(k, si, i)) || fetch(k, i, 0) || is_excluded(k, m))
        return 0;
    /* a cheap lower bound before reading the text: ~4 bytes a token */
    if (cap == 0 && m->bytes / 6 > room)
        return 0;
    /* a message over PACK_SCAN_MAX is never shown whole: it is excerpted
     * from its opening PACK_SCAN_MAX bytes */
    int huge = m->bytes > PACK_SCAN_MAX;
    if (huge && cap == 0)
        return 0;
    if (fetch(k, i, 1))
        return 0;
    const char *text = k->ld[i].text;
    size_t len = k->ld[i].len;
    int limit = cap > 0 && cap < room ? cap : room;
    int c = huge ? limit + 1 : line_cost(m, text, len);
    if (c <= limit) {
        m->text = k->ld[i].text;     /* the pool owns it now */
        k->ld[i].text = NULL;
        m->picked = 1;
    } else if (cap > 0 && limit >= PACK_MIN_EXCERPT) {
        int overhead = line_cost(m, "", 0);
        char *ex = pack_excerpt(text, len, k->q, limit - overhead, reply_lead(m, limit - overhead),
                                 reply_tail(m, limit - overhead));
        if (!ex)
            return 0;
        c = line_cost(m, ex, strlen(ex));
        if (c > limit) {
            free(ex);
            return 0;
        }
        m->text = ex;
        m->picked = 2;
    } else {
        return 0;
    }
    k->used += c + hdr;
    k->sess_open[m->sess] = 1;
    k->order[k->norder++] = i;
    return 1;
}

/* A reply packed as a snippet and tried again with a larger cap (the
 * reply lane, leftover budget): the excerpt grows to what the cap and the
 * budget left allow, or to the whole reply, as if it had been tried with
 * that cap first. Returns 1 if it grew. */
static int widen(struct packer *k, int i, int cap)
{
    struct rmsg *m = &k->p->m[i];
    int old = line_cost(m, m->text, strlen(m->text));
    int room = k->budget - k->used + old;
    int limit = cap > 0 && cap < room ? cap : room;
    char *ex = NULL;
    if (limit <= old || fetch(k, i, 1))
        return 0;
    const char *text = k->ld[i].text;
    size_t len = k->ld[i].len;
    int c = m->bytes > PACK_SCAN_MAX ? limit + 1 : line_cost(m, text, len);
    if (c > limit) {
        int max = limit - line_cost(m, "", 0);
        if (cap == 0 || !(ex = pack_excerpt(text, len, k->q, max, reply_lead(m, max),
                                           reply_tail(m, max))))
            return 0;
        c = line_cost(m, ex, strlen(ex));
        if (c > limit || c <= old) {
            free(ex);
            return 0;
        }
    }
    free(m->text);
    if (ex) {
        m->text = ex;
    } else {
        m->text = k->ld[i].text;     /* the pool owns it now */
        k->ld[i].text = NULL;
        m->picked = 1;
        k->snip[i] = 0;
    }
    k->used += c - old;
    return 1;
}

/* The reply of unit u that matches the question best on its own (BM25 of
 * the message alone; the first reply when none matches), or -1 when the
 * unit has none. */
static int best_reply(const struct pool *p, const struct runit *u)
{
    int best = -1;
    for (int i = u->first; i <= u->last; i++)
        if (i != u->head && p->m[i].role == ROLE_ASSISTANT &&
            (best < 0 || p->m[i].s_msg > p->m[best].s_msg))
            best = i;
    return best;
}

/* best_reply, when it matches better than the unit's lead turn; else -1. */
static int snippet_reply(const struct pool *p, const struct runit *u)
{
    int best = best_reply(p, u);
    return best >= 0 && p->m[best].s_msg > p->m[u->head].s_msg ? best : -1;
}

static void unpick_all(struct packer *k)
{
    for (int j = 0; j < k->norder; j++)
        unpick(k, k->order[j]);
    k->norder = 0;
    k->used = 0;
    memset(k->sess_open, 0, (size_t)(k->p->ns ? k->p->ns : 1));
}

/* Tries to pack every message whole. Returns 1 if all fit; otherwise
 * takes everything back and returns 0. */
static int pack_everything(struct packer *k)
{
    for (int i = 0; i < k->p->nm; i++) {
        if (!try_add(k, i, 0)) {
            unpick_all(k);
            return 0;
        }
    }
    return 1;
}

static int store_meta(void *h, struct store_msg_text *v, int n)
{
    return store_msgs_meta(h, v, n);
}

static int store_text(void *h, struct store_msg_text *v, int n, size_t max)
{
    return store_msgs_text(h, v, n, max);
}

struct pack_src pack_src_store(struct cairn *h)
{
    return (struct pack_src){ store_meta, store_text, h, cairn__setting(h, CAIRN__SET_REPLY_LANE),
                              store_read_ahead(h) };
}


/* Session spread (policy.h, PACK_SPREAD_*; off as shipped: measured and
 * not kept, docs/ARCHITECTURE.md "Multi-hop: session spread"): a
 * multi-hop question's evidence is spread over sessions of different
 * dates, while the best units often come from a few sessions. The first
 * `top` units that matched are taken greedily by their score times
 * decay^k, k the units of their session already taken beyond the first
 * `nfree` (with `step`, k is at most 1: one factor for every unit past
 * them); the rest follow in rank order. A new array of p->nu units, or
 * NULL (out of memory). O(top x sessions among them). */
int *pack_spread_order(const struct pool *p, const int *ord, int top, double decay, int nfree,
                       int step)
{
    size_t nu1 = (size_t)(p->nu ? p->nu : 1), ns1 = (size_t)(p->ns ? p->ns : 1);
    int *out = malloc(nu1 * sizeof *out), *nxt = malloc(nu1 * sizeof *nxt);
    int *head = malloc(ns1 * sizeof *head), *cnt = calloc(ns1, sizeof *cnt);
    int *ss = malloc(nu1 * sizeof *ss);
    int m = 0, nss = 0;
    if (!out || !nxt || !head || !cnt || !ss) {
        free(out);
        out = NULL;
        goto out;
    }
    while (m < p->nu && m < top && p->u[ord[m]].score > 0)
        m++;
    for (int s = 0; s < p->ns; s++)
        head[s] = -1;
    /* each session's units among the first m, best first, as a list */
    for (int j = m - 1; j >= 0; j--) {
        int s = p->u[ord[j]].sess;
        nxt[j] = head[s];
        head[s] = j;
    }
    for (int j = 0; j < m; j++) {
        int s = p->u[ord[j]].sess;
        if (head[s] == j)
            ss[nss++] = s;       /* sessions in order of their best unit */
    }
    for (int k = 0; k < m; k++) {
        int bs = -1;
        double be = 0;
        for (int t = 0; t < nss; t++) {
            int s = ss[t];
            if (head[s] < 0)
                continue;
            int over = cnt[s] - nfree + 1;
            if (over > 1 && step)
                over = 1;
            double e = p->u[ord[head[s]]].score * (over > 0 ? pow(decay, over) : 1.0);
            /* ties: the better rank */
            if (bs < 0 || e > be || (e == be && head[s] < head[bs])) {
                bs = s;
                be = e;
            }
        }
        out[k] = ord[head[bs]];
        head[bs] = nxt[head[bs]];
        cnt[bs]++;
    }
    for (int j = m; j < p->nu; j++)
        out[j] = ord[j];
out:
    free(nxt);
    free(head);
    free(cnt);
    free(ss);
    return out;
}

int pack(const struct pack_src *src, struct pool *p, struct query *q,
         const struct cairn_recall_opts *o, int raw, struct cairn_recall *r)
{
    struct packer k = { .src = src, .p = p, .q = q, .budget = o->budget, .year4 = -1 };
    struct pack_stamps stamps = { 0 };
    struct buf b = BUF_INIT;
    const int *ord = NULL;
    int *spread = NULL, *tail = NULL;
    int rc = CAIRN_OK;
    size_t nm1 = (size_t)(p->nm ? p->nm : 1);
    k.sess_open = calloc((size_t)(p->ns ? p->ns : 1), 1);
    k.order = malloc(nm1 * sizeof *k.order);
    /* not cleared: a message's slot is written when it is first read or
     * fails (fetch_batch, fetch_failed), and read only after (k.state);
     * at a million messages clearing it was a 37 MB memset a recall */
    k.ld = malloc(nm1 * sizeof *k.ld);
    k.state = calloc(nm1, 1);
    k.cand = malloc(nm1 * sizeof *k.cand);
    k.cpos_mask = CPOS_SLOTS - 1;
    k.cpos = calloc(CPOS_SLOTS, 2 * sizeof *k.cpos);
    k.rd = malloc(nm1 * sizeof *k.rd);
    k.hdr = calloc((size_t)(p->ns ? p->ns : 1), sizeof *k.hdr);
    k.st = &stamps;
    k.snip = calloc(nm1, 1);
    ord = k.ord = units_by_rank(p);
    if (!k.sess_open || !k.order || !k.ld || !k.state || !k.cand || !k.cpos || !k.rd || !k.hdr ||
        !k.snip || !ord ||
        load_excluded(&k, o->exclude_items)) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    p->pack_tail = -1;
    plan_reads(&k, raw);
    p->cite = !!(o->flags & CAIRN_RECALL_CITE);
    /* A long turn may take at most this share of the budget. */
    int ct = (int)(k.budget * PACK_CAP_TURN);
    int cr = (int)(k.budget * PACK_CAP_REPLY);
    int cap_turn = ct > PACK_FLOOR_TURN ? ct : PACK_FLOOR_TURN;
    int cap_reply = cr > PACK_FLOOR_REPLY ? cr : PACK_FLOOR_REPLY;
    int nfull_max = PACK_FULL_ROUNDS;
    /* A question about what the assistant said or did: the best round's
     * replies are where its answer most likely is, and cut to cap_reply
     * (5% of the budget) a long reply keeps the lines that match and
     * loses the ones after them, often the answer (policy.h). */
    int ctop = (int)(k.budget * PACK_CAP_TOP);
    int cap_top = q->asks_reply && ctop > cap_reply ? ctop : cap_reply;
    /* A question asking for a summary: a little of every round rather
     * than all of a few (policy.h, PACK_SUM_*). */
    int summary = PACK_SUMMARY && (q->asks_summary == 1 || (q->asks_summary && PACK_SUM_ORDER)) &&
                  p->any_assistant && k.budget >= PACK_SUM_MIN;
    if (summary) {
        cap_turn = PACK_SUM_TURN;
        nfull_max = 0;
    }

    if (raw) {
        /* The baseline: whole rounds, best first, while they fit. */
        for (int r0 = 0; r0 < p->nu; r0++) {
            struct runit *u = &p->u[ord[r0]];
            if (u->score <= 0 || k.budget - k.used < 10)
                break;              /* try_add needs 8 tokens after a header of 2 */
            int need = 0;
            for (int i = u->first; i <= u->last; i++)
                need += fetch(&k, i, 0) ? 0 : p->m[i].bytes / 6;
            if (need > k.budget - k.used)
                continue;
            int save_used = k.used, save_n = k.norder, ok = 1;
            for (int i = u->first; i <= u->last && ok; i++)
                ok = try_add(&k, i, 0);
            if (!ok) {              /* roll the partial round back */
                for (int j = save_n; j < k.norder; j++)
                    unpick(&k, k.order[j]);
                k.norder = save_n;
                k.used = save_used;
            }
        }
    } else if (p->all_mode && pack_everything(&k)) {
        /* the whole scope fits: everything, verbatim */
    } else {
        int nfull = 0, full_budget = k.budget;
        /* The relative score cut (opts.min_rel_score): units clearly below
         * the best, in what they hold of the question (gate.c), get none
         * of the budget, nor do their replies (1b). */
        double cut = recall_cut(p, q, o->min_rel_score);
        /* The reply lane: in user-assistant stores a share of the budget
         * is kept for the replies that match best (with the turn that
         * asked), since the answer is often something the assistant
         * worked out. It opens for a question about what the assistant
         * said or did ("how did we fix...", query.c), and from
         * REPLY_LANE_MIN tokens on for any question when recall.reply_lane
         * sets a share (none by default: on BEAM dev it cost user-only
         * questions more than it gave). */
        int lane = 0;
        if (summary)
            lane = 0;                   /* the breadth is the point */
        else if (p->any_assistant && q->asks_reply)
            lane = (int)(k.budget * REPLY_CUE_SHARE);
        else if (p->any_assistant && k.budget >= REPLY_LANE_MIN)
            lane = (int)(k.budget * reply_lane_share(src->reply_lane));
        k.budget -= lane;
        /* Reply snippets: how many of the rounds packed first may give
         * their best reply as a short excerpt (policy.h) */
        int nsnip = p->any_assistant && o->budget >= PACK_SNIP_MIN ? o->budget / PACK_SNIP_EVERY
                                                                   : 0;
        /* Reply pairs: below PACK_SNIP_MIN, fewer snippets, each paid
         * for by a shorter turn (policy.h, PACK_PAIR_*) */
        int pair_every = PACK_PAIR_EVERY;   /* a variable: 0 (off) divides nothing */
        int pair = p->any_assistant && o->budget < PACK_SNIP_MIN && pair_every > 0 && !summary;
        if (pair)
            nsnip = o->budget / pair_every;
        int cap_pair = (int)(cap_turn * PACK_PAIR_TURN);
        int nseen = 0;
        /* Session spread: between people, the first pass's order gives a
         * session not yet held a place before more of one that is */
        const int *ord1 = ord;
        double decay = PACK_SPREAD_DECAY;   /* a variable: 1.0 (off) compares as a value */
        if (decay < 1.0 && p->any_dialog && !p->any_assistant && o->budget >= PACK_SPREAD_MIN &&
            o->budget < PACK_SPREAD_MAX) {
            if (!(spread = pack_spread_order(p, ord, PACK_SPREAD_TOP, decay, PACK_SPREAD_FREE,
                                             PACK_SPREAD_STEP))) {
                rc = CAIRN_NOMEM;
                goto out;
            }
            ord1 = spread;
        }
        /* 1. ranked units: lead turns, the best rounds whole, and the
         * snippets of replies that answer better than their turn */
        int *t = NULL;
        for (int r0 = 0; r0 < p->nu; r0 = t ? (*t >= 0 ? *t++ : p->nu) : r0 + 1) {
            struct runit *u = &p->u[ord1[r0]];
            if (u->score <= 0)
                break;
            if (!t)
                plan_to(&k, ord1 == ord && !p->pack_walk ? r0 + PLAN_WINDOW : p->nu);
            /* past pass_closed's point, the open sessions' units alone */
            if (!tail && ord1 == ord && !p->pack_walk && (!pair || nseen >= nsnip) &&
                pass_closed(&k)) {
                if (!(t = tail = pass_tail(&k, r0))) {
                    rc = CAIRN_NOMEM;
                    goto out;
                }
                p->pack_tail = r0;
            }
            k.tnext = t;
            /* what the tries ahead read, asked for ahead (plan_to) */
            if (r0 + 2 * PLAN_AHEAD < p->nu)
                __builtin_prefetch(&p->u[ord1[r0 + 2 * PLAN_AHEAD]]);
            if (r0 + PLAN_AHEAD < p->nu) {
                const struct runit *v = &p->u[ord1[r0 + PLAN_AHEAD]];
                __builtin_prefetch(&p->s[v->sess]);
                __builtin_prefetch(&k.sess_open[v->sess]);
                __builtin_prefetch(&k.hdr[v->sess]);
            }
            if (below_cut(p, q, u, cut))
                continue;
            const struct rsession *s = &p->s[u->sess];
            int paired = pair && !s->dialog && nfull >= nfull_max && nseen < nsnip &&
                         (!p->pu || !lazy_need(&k, u->sess, u->head)) &&
                         snippet_reply(p, u) >= 0;
            try_add_in(&k, u->head, u->sess, paired ? cap_pair : cap_turn);
            int picked = pool_state(p, u->sess) == POOL_LOADED && p->m[u->head].picked;
            if (!s->dialog && nfull < nfull_max && picked) {
                for (int i = u->first; i <= u->last; i++)
                    if (i != u->head)
                        try_add(&k, i, cap_top);
                nfull++;
            } else if (summary && !s->dialog && picked &&
                       q->asks_summary == 1) {
                int x = best_reply(p, u);
                if (x >= 0 && try_add(&k, x, PACK_SUM_REPLY) && p->m[x].picked == 2)
                    k.snip[x] = 1;
            } else if (!s->dialog && picked && nseen < nsnip) {
                int x = snippet_reply(p, u);
                if (x >= 0 && try_add(&k, x, PACK_MIN_EXCERPT) && p->m[x].picked == 2)
                    k.snip[x] = 1;
            }
            if (!s->dialog && picked)
                nseen++;
            if (k.budget - k.used < 12)
                break;
        }
        /* 1b. the reply lane, best-matching replies first */
        k.tnext = NULL;
        k.budget = full_budget;
        if (lane > 0) {
            int every = o->budget < REPLY_LANE_OWN_MAX ? REPLY_LANE_OWN_EVERY : 0;
            /* the lane's pairs in the planned places' array past its
             * last (nothing is planned after the first pass): those pages
             * are the heap's, resident, where a block of their own came
             * fresh from the heap's top (pack54) */
            size_t c0 = (size_t)k.ncand +
                        ((uintptr_t)(k.cand + k.ncand) % _Alignof(struct sort_kv) != 0);
            void *sc = c0 < nm1 ? k.cand + c0 : NULL;
            size_t scb = sc ? (nm1 - c0) * sizeof *k.cand : 0;
            int *ro = pack_replies_in(p, every, LANE_PREFIX, sc, scb);
            if (!ro) {
                rc = CAIRN_NOMEM;
                goto out;
            }
            int lane_end = k.used + lane;
            for (int j = 0; ro[j] != -1 && k.used < lane_end - 40; j++) {
                if (ro[j] == PACK_LANE_LATER) {
                    /* past the places sorted first: all of them (the
                     * same order, so j's place is the same) */
                    free(ro);
                    if (!(ro = pack_replies_in(p, every, 0, sc, scb))) {
                        rc = CAIRN_NOMEM;
                        goto out;
                    }
                }
                int x = p->pu ? lane_slot(&k, ro[j]) : ro[j];
                if (x < 0)
                    continue;           /* its session no longer reads */
                struct rmsg *m = &p->m[x];
                if (m->s_msg <= 0)
                    break;
                if ((m->picked && !k.snip[x]) || below_cut(p, q, &p->u[m->unit], cut))
                    continue;
                int head = p->u[m->unit].head;
                int save = k.budget;
                k.budget = lane_end;
                if (!p->m[head].picked)
                    try_add(&k, head, cap_turn / 2);
                try_add(&k, x, cap_reply);
                k.budget = save;
            }
            free(ro);
        }
        /* 2. budget left: make the next rounds whole, best first (the
         * rounds whose lead turn is packed: picked_ranks' places) */
        free(tail);
        if (!(t = tail = picked_ranks(&k))) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        for (; *t >= 0 && k.budget - k.used >= 12; t++) {
            struct runit *u = &p->u[ord[*t]];
            if (pool_state(p, u->sess) != POOL_LOADED || !p->m[u->head].picked)
                continue;
            for (int i = u->first; i <= u->last; i++)
                try_add(&k, i, cap_reply);
        }
    }

    /* A picked message's unit rank is shown (the items, render's best
     * session first): a unit at score 0 is ranked first (rank.c
     * units_by_rank leaves them unranked) */
    for (int j = 0; j < k.norder; j++)
        if (unit_ranked(p, k.order[j])) {
            rc = CAIRN_NOMEM;
            goto out;
        }
    /* Render, and hold the hard limit: drop the latest picks until the
     * counted text fits (sums of line costs can differ from the count of
     * the joined text at the edges). */
    for (;;) {
        buf_reset(&b);
        if ((rc = render(p, k.order, k.norder, &b)))
            goto out;
        int t = text_count_tokens(b.p, b.n);
        if (t <= k.budget || k.norder == 0) {
            r->tokens = t;
            break;
        }
        unpick(&k, k.order[--k.norder]);
    }
    if (b.n == 0)
        r->tokens = 0;

    /* Items, in text order. */
    r->items = calloc((size_t)(k.norder ? k.norder : 1), sizeof *r->items);
    if (!r->items) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    r->n_items = 0;
    {
        /* picked messages in text order: render's sessions, then position */
        int *so = session_order(p, k.order, k.norder);
        if (!so) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        for (int j = 0; so[j] >= 0; j++) {
            const struct rsession *s = &p->s[so[j]];
            for (int i = s->first_msg; i < s->first_msg + s->n_msgs; i++) {
                struct rmsg *m = &p->m[i];
                if (!m->picked)
                    continue;
                struct cairn_recall_item *it = &r->items[r->n_items++];
                /* borrowed from the pool; recall.c copies them */
                it->session = s->ext_id;
                it->message = m->ext_id;
                it->role = m->role == ROLE_USER ? "user" : "assistant";
                it->speaker = m->speaker;
                it->at = m->at;
                it->excerpt = m->picked == 2;
                it->score = p->u[m->unit].score;
                it->rank = p->u[m->unit].rank;
                it->position = m->position;
            }
        }
        free(so);
    }
    r->text = buf_detach(&b, NULL);
    if (!r->text)
        rc = CAIRN_NOMEM;
out:
    for (int j = 0; k.ld && j < k.nrd; j++) {
        free(k.ld[k.rd[j]].ext_id);
        free(k.ld[k.rd[j]].text);
    }
    free(k.ld);
    free(k.state);
    free(k.cand);
    free(k.cpos);
    free(k.rd);
    free(k.hdr);
    free(k.snip);
    free(spread);
    free(tail);
    free(k.sess_open);
    free(k.order);
    for (int i = 0; i < k.nexcl; i++)
        free(k.excl[i]);
    free(k.excl);
    buf_release(&b);
    return rc;
}
