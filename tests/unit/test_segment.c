/*
 * test_segment.c: topical segments (issue 16, multi-hop; recall/segment.c,
 * rank.c rank_segments).
 *
 *  - segment_cuts cuts turns on two or three clear topics where the topic
 *    changes, one segment for one topic, for too few turns and at depth 0;
 *  - on random vectors its segments are runs in order, numbered from 0 by
 *    one, none shorter than the minimum, their count returned;
 *  - segment_pool cuts a session of the store from its stored vectors and
 *    scores each segment by the question's cosine to its mean vector;
 *    without a question vector it cuts nothing;
 *  - rank_segments gives every unit of a segment that segment's place:
 *    ties share it, whatever their order;
 *  - segments are off at the shipped policy below SEG_MIN_BUDGET.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "recall/policy.h"
#include "store/vectors.h"
#include "t_store.h"
#include "t_open.h"
#include "t_vec.h"

enum { D = 16 };

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
    return t_xorshift(&rng);
}

/* turn i of n about topic topic[i]: that axis, plus a little noise */
static void topics(float *v, int n, const int *topic, float noise)
{
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < D; d++)
            v[i * D + d] = noise * ((float)(rnd() % 1000) / 1000.0f - 0.5f);
        v[i * D + topic[i]] += 1;
    }
}

static void test_cuts_clear(void)
{
    float v[12 * D];
    int seg[12];
    int two[12] = { 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1 };
    topics(v, 12, two, 0.1f);
    T_EQ_INT(segment_cuts(v, 12, D, 3, 0.1, 3, seg), 2);
    for (int i = 0; i < 12; i++)
        T_EQ_INT(seg[i], i >= 6);
    int three[12] = { 2, 2, 2, 2, 5, 5, 5, 5, 7, 7, 7, 7 };
    topics(v, 12, three, 0.1f);
    T_EQ_INT(segment_cuts(v, 12, D, 2, 0.1, 3, seg), 3);
    for (int i = 0; i < 12; i++)
        T_EQ_INT(seg[i], i / 4);
    /* one topic: one segment */
    int one[12] = { 0 };
    topics(v, 12, one, 0.1f);
    T_EQ_INT(segment_cuts(v, 12, D, 3, 0.1, 3, seg), 1);
    for (int i = 0; i < 12; i++)
        T_EQ_INT(seg[i], 0);
    /* two topics, but a minimum of 7 turns a segment: no room to cut */
    topics(v, 12, two, 0.1f);
    T_EQ_INT(segment_cuts(v, 12, D, 3, 0.1, 7, seg), 1);
    /* depth 0: off */
    T_EQ_INT(segment_cuts(v, 12, D, 3, 0, 3, seg), 1);
    /* no turns, no segments */
    T_EQ_INT(segment_cuts(v, 0, D, 3, 0.1, 3, seg), 0);
    /* a turn with no vector (zeros) joins a segment, no cut for it alone */
    topics(v, 12, two, 0.1f);
    memset(v + 3 * D, 0, D * sizeof *v);
    T_EQ_INT(segment_cuts(v, 12, D, 3, 0.1, 3, seg), 2);
    T_EQ_INT(seg[3], 0);
    T_EQ_INT(seg[6], 1);
}

static void test_cuts_random(void)
{
    float v[60 * D];
    int seg[60], topic[60];
    for (int round = 0; round < 300; round++) {
        int n = 1 + (int)(rnd() % 60), block = 1 + (int)(rnd() % 6);
        int min_len = 1 + (int)(rnd() % 5);
        double depth = (double)(rnd() % 40) / 100.0;
        for (int i = 0, t = 0; i < n; i++) {
            if (rnd() % 5 == 0)
                t = (int)(rnd() % D);
            topic[i] = t;
        }
        topics(v, n, topic, (float)(rnd() % 100) / 50.0f);
        int k = segment_cuts(v, n, D, block, depth, min_len, seg);
        T_CHECK(k >= 1);
        T_EQ_INT(seg[0], 0);
        T_EQ_INT(seg[n - 1], k - 1);
        int run = 1;
        for (int i = 1; i < n; i++) {
            T_CHECK(seg[i] == seg[i - 1] || seg[i] == seg[i - 1] + 1);
            if (seg[i] != seg[i - 1]) {
                T_CHECK(run >= min_len);
                run = 0;
            }
            run++;
        }
        T_CHECK(k == 1 || run >= min_len);
    }
}

static void test_pool(void)
{
    struct cairn *h = NULL;
    enum { N = 16 };
    float v[N * D], q[D] = { 0 };
    int topic[N];
    struct pool p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < N; i++)
        topic[i] = i < 8 ? 1 : 4;
    topics(v, N, topic, 0.05f);
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    add_chat(h, "s1", N);
    for (int i = 0; i < N; i++)
        put_vec(h, "model-a:1", i + 1, 0, v + i * D, D);
    p.ns = 1;
    p.nm = p.nu = N;
    p.any_dialog = 1;
    p.s = calloc(1, sizeof *p.s);
    p.m = calloc(N, sizeof *p.m);
    p.u = calloc(N, sizeof *p.u);
    T_CHECK(p.s && p.m && p.u);
    if (!p.s || !p.m || !p.u)
        goto out;
    p.s[0].row = 1;
    p.s[0].dialog = 1;
    p.s[0].n_msgs = N;
    for (int i = 0; i < N; i++) {
        p.m[i].row = i + 1;
        p.u[i].first = p.u[i].last = p.u[i].head = i;
    }
    struct dense_result r;
    memset(&r, 0, sizeof r);
    q[4] = 1;                           /* the question: the second topic */
    r.qv = q;
    r.qdim = D;
    r.n = 1;
    snprintf(r.model, sizeof r.model, "model-a:1");
    T_EQ_INT(segment_pool(h, &p, &r), CAIRN_OK);
    T_CHECK(p.seg != NULL);
    if (!p.seg)
        goto out;
    T_EQ_INT(p.nseg, 2);
    for (int i = 0; i < N; i++)
        T_EQ_INT(p.seg[i], i >= 8);
    T_CHECK(p.seg_cos[1] > 1.9f);       /* 1 + cosine */
    T_CHECK(p.seg_cos[0] < 1.2f);
    /* ranked: the second segment's units first, all at one place */
    for (int u = 0; u < N; u++)
        p.u[u].score = 0;
    T_EQ_INT(rank_segments(&p, 0, NULL, 1.0, 1.0, 0.0), 0);
    for (int u = 0; u < N; u++)
        T_CHECK(fabs(p.u[u].score - (u >= 8 ? 1.0 / (RRF_K + 1) : 1.0 / (RRF_K + 2))) < 1e-12);
    /* no question vector: no segments */
    r.qv = NULL;
    T_EQ_INT(segment_pool(h, &p, &r), CAIRN_OK);
    T_CHECK(p.seg == NULL && p.nseg == 0);
    /* and then rank_segments adds nothing */
    for (int u = 0; u < N; u++)
        p.u[u].score = 0;
    T_EQ_INT(rank_segments(&p, 0, NULL, 1.0, 1.0, 0.0), 0);
    for (int u = 0; u < N; u++)
        T_CHECK(p.u[u].score == 0);
out:
    free(p.s);
    free(p.m);
    free(p.u);
    free(p.seg);
    free(p.seg_cos);
    cairn_close(h);
}

/* The BM25 side: a segment whose turns hold the term ranks first. */
static void test_rank_bm25(void)
{
    struct pool p;
    uint16_t tf1 = 2;
    double w = 1.0;
    memset(&p, 0, sizeof p);
    p.nm = p.nu = 4;
    p.nseg = 2;
    p.m = calloc(4, sizeof *p.m);
    p.u = calloc(4, sizeof *p.u);
    p.seg = malloc(4 * sizeof *p.seg);
    p.seg_cos = malloc(2 * sizeof *p.seg_cos);
    T_CHECK(p.m && p.u && p.seg && p.seg_cos);
    if (!p.m || !p.u || !p.seg || !p.seg_cos)
        goto out;
    for (int i = 0; i < 4; i++) {
        p.m[i].ntok = 5;
        p.u[i].first = p.u[i].last = p.u[i].head = i;
        p.seg[i] = i / 2;
    }
    p.seg_cos[0] = p.seg_cos[1] = 1.0f;
    p.m[3].tf = &tf1;                   /* only the second segment matches */
    T_EQ_INT(rank_segments(&p, 1, &w, 5.0, 0.0, 1.0), 0);
    T_CHECK(p.u[0].score == 0 && p.u[1].score == 0);
    T_CHECK(fabs(p.u[2].score - 1.0 / (RRF_K + 1)) < 1e-12);
    T_CHECK(p.u[2].score == p.u[3].score);
out:
    free(p.m);
    free(p.u);
    free(p.seg);
    free(p.seg_cos);
}

static void test_policy_gate(void)
{
    /* never below the budget it starts at; at it, on when a weight is */
    T_EQ_INT(segment_on(SEG_MIN_BUDGET - 1), 0);
    double wd = SEG_W_DENSE, wb = SEG_W_BM25, lift = SEG_LIFT;
    T_EQ_INT(segment_on(SEG_MIN_BUDGET), wd > 0 || wb > 0 || lift > 0);
}

int main(void)
{
    T_RUN(test_cuts_clear);
    T_RUN(test_cuts_random);
    T_RUN(test_pool);
    T_RUN(test_rank_bm25);
    T_RUN(test_policy_gate);
    return T_DONE();
}
