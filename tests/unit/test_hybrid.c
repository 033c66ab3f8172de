/*
 * test_hybrid.c: dense vectors in the store and their search
 * (store/vectors.c, recall/dense.c).
 *
 *  - the dot products in use agree with the scalar references (every
 *    level: test_dense_levels.c);
 *  - pieces cover the text, never split a UTF-8 sequence, stop at max;
 *  - int8 quantisation keeps the cosine;
 *  - a store holding vectors of two models never mixes them: each
 *    model's set holds only its rows, and a search with a query that
 *    matches the other model's vectors exactly returns none of them;
 *  - cairn_forget and message deletion drop their vectors; the cache
 *    reloads after a change;
 *  - the second dense pass (dense_feedback, issue 16) finds a turn that
 *    shares nothing with the question but is like the best turn found;
 *  - with use-lite-en installed (CAIRN_MODEL_DIR), ingest embeds, recall
 *    is hybrid, and switching the model makes it keyword-only with a note.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "t_store.h"
#include "t_open.h"
#include "t_vec.h"
#include "embed/registry.h"

static uint64_t rng = 88172645463325252ULL;
static uint32_t rnd(void)
{
    return t_xorshift(&rng);
}

static void test_kernels(void)
{
    int8_t a[1100], b[1100];
    float fa[1100], fb[1100];
    for (int i = 0; i < 1100; i++) {
        a[i] = (int8_t)(rnd() % 255 - 127);
        b[i] = (int8_t)(rnd() % 255 - 127);
        fa[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
        fb[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
    }
    a[0] = b[0] = -127;                       /* extremes */
    static const int lens[] = { 0, 1, 7, 15, 16, 17, 31, 32, 33, 384, 512, 1100 };
    for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        int n = lens[k];
        T_EQ_INT(dense_dot_i8(a, b, n), dense_dot_i8_ref(a, b, n));
        float x = dense_dot_f32(fa, fb, n), y = dense_dot_f32_ref(fa, fb, n);
        T_CHECK(fabsf(x - y) <= 1e-3f * (1 + fabsf(y)));
    }
    /* the scan's kernel: the question in -127..127, a stored vector any
     * int8, -128 (a damaged cache file's) included, on every tail length */
    int8_t v[1100];
    for (int i = 0; i < 1100; i++)
        v[i] = (int8_t)(rnd() % 256 - 128);
    v[0] = v[1] = -128;
    a[1] = 127;
    static const int lens2[] = { 0, 1, 31, 32, 33, 63, 64, 65, 95, 96, 127, 512, 1099, 1100 };
    for (size_t k = 0; k < sizeof lens2 / sizeof lens2[0]; k++) {
        int n = lens2[k];
        T_EQ_INT(dense_dot_i8q(a, v, n), dense_dot_i8_ref(a, v, n));
        T_EQ_INT(dense_dot_i8q(a + 3, v + 5, n - (n > 5 ? 5 : n)),
                 dense_dot_i8_ref(a + 3, v + 5, n - (n > 5 ? 5 : n)));   /* unaligned */
    }
    /* the extremes: every product 128 * 127 or 127 * 127, pairs summed */
    int8_t qmax[512], vmin[512];
    for (int i = 0; i < 512; i++)
        qmax[i] = (int8_t)(i % 3 ? -127 : 127), vmin[i] = (int8_t)(i % 2 ? -128 : 127);
    T_EQ_INT(dense_dot_i8q(qmax, vmin, 512), dense_dot_i8_ref(qmax, vmin, 512));
    /* every level of the scan: test_dense_levels.c */
    const char *name = dense_kernel_name();
    T_EQ_INT(dense_kernel_set("scalar"), 0);
    T_EQ_STR(dense_kernel_name(), "scalar");
    T_EQ_INT(dense_dot_i8(a, b, 512), dense_dot_i8_ref(a, b, 512));
    T_EQ_INT(dense_kernel_set(NULL), 0);
    T_EQ_STR(dense_kernel_name(), name);
}

static void test_pieces(void)
{
    size_t off[VEC_MAX_PIECES], len[VEC_MAX_PIECES];
    T_EQ_INT(vec_pieces("", 0, 100, off, len, 4), 0);
    T_EQ_INT(vec_pieces("   \n ", 5, 100, off, len, 4), 0);
    T_EQ_INT(vec_pieces("hello", 5, 100, off, len, 4), 1);
    T_EQ_INT(len[0], 5);
    /* 1000 bytes of "word " -> pieces of at most 100 bytes, cut after a space */
    char s[1001];
    for (int i = 0; i < 1000; i++)
        s[i] = "word "[i % 5];
    s[1000] = '\0';
    int n = vec_pieces(s, 1000, 100, off, len, VEC_MAX_PIECES);
    T_EQ_INT(n, 10);
    for (int i = 0; i < n; i++) {
        T_CHECK(len[i] <= 100);
        T_CHECK(off[i] == 0 || s[off[i] - 1] == ' ');
    }
    T_EQ_INT(vec_pieces(s, 1000, 100, off, len, 3), 3);
    /* no spaces, multibyte: cuts land on sequence starts */
    char u[900];
    for (int i = 0; i < 300; i++)
        memcpy(u + 3 * i, "\xe4\xb8\xad", 3);
    n = vec_pieces(u, 900, 100, off, len, VEC_MAX_PIECES);
    T_CHECK(n >= 9);
    size_t covered = 0;
    for (int i = 0; i < n; i++) {
        T_EQ_INT(((unsigned char)u[off[i]] & 0xC0) != 0x80, 1);
        covered += len[i];
    }
    T_EQ_INT(covered, 900);
}

static void test_quantize(void)
{
    float x[512], y[512], dq[512];
    int8_t q[512];
    float sc;
    double nx = 0, ny = 0, dot = 0, ddot = 0, nd = 0;
    for (int i = 0; i < 512; i++) {
        x[i] = (float)((int)(rnd() % 2001) - 1000) / 1000.0f;
        y[i] = x[i] + (float)((int)(rnd() % 201) - 100) / 400.0f;
    }
    vec_quantize(x, 512, q, &sc);
    T_CHECK(sc > 0);
    for (int i = 0; i < 512; i++) {
        dq[i] = sc * q[i];
        T_CHECK(fabsf(dq[i] - x[i]) <= sc * 0.5f + 1e-6f);
        nx += (double)x[i] * x[i];
        ny += (double)y[i] * y[i];
        nd += (double)dq[i] * dq[i];
        dot += (double)x[i] * y[i];
        ddot += (double)dq[i] * y[i];
    }
    double c1 = dot / sqrt(nx * ny), c2 = ddot / sqrt(nd * ny);
    T_CHECK(fabs(c1 - c2) < 0.002);
    float z[8] = { 0 };
    vec_quantize(z, 8, q, &sc);
    T_CHECK(sc == 0 && q[0] == 0);
}

static void test_two_models(void)
{
    struct cairn *h = NULL;
    enum { D = 16 };
    float va[D], vb[D];
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    add_chat(h, "s1", 6);
    add_chat(h, "s2", 6);
    /* messages 1..12; model A on the odd ones, model B on the even ones.
     * B's vectors all point along axis 0; A's never do. */
    for (int64_t m = 1; m <= 12; m++) {
        memset(va, 0, sizeof va);
        memset(vb, 0, sizeof vb);
        va[1 + m % (D - 1)] = 1;
        vb[0] = 1;
        vb[1] = (float)m / 100;
        if (m % 2)
            put_vec(h, "model-a:1", m, 0, va, D);
        else
            put_vec(h, "model-b:2", m, 0, vb, D);
    }
    put_vec(h, "model-a:1", 3, 1, vb, D);   /* a second piece of message 3 */
    const struct vec_set *s = NULL;
    T_EQ_INT(vec_set_get(h, "model-a:1", D, &s), CAIRN_OK);
    T_CHECK(s != NULL);
    if (!s)
        goto out;
    T_EQ_INT(s->n, 7);
    T_EQ_INT(s->msgs_with, 6);
    T_EQ_INT(s->msgs_total, 12);
    T_EQ_STR(s->other, "model-b:2");
    for (size_t i = 0; i < s->n; i++)
        T_EQ_INT(s->msg[i] % 2, 1);
    /* A query equal to B's vectors: only A's rows can answer. */
    float q[D] = { 1, 0.05f };
    struct dense_hit hits[10];
    int n = dense_topk(s, q, NULL, 0, 10, 1, hits);
    T_EQ_INT(n, 6);
    for (int i = 0; i < n; i++)
        T_EQ_INT(hits[i].msg % 2, 1);
    T_EQ_INT(hits[0].msg, 3);               /* its second piece matches */
    T_CHECK(hits[0].cos > 0.99f);
    /* scope: only session s2's messages (7..12) */
    int64_t allowed[1] = { 2 };
    n = dense_topk(s, q, allowed, 1, 10, 1, hits);
    T_EQ_INT(n, 3);
    for (int i = 0; i < n; i++)
        T_CHECK(hits[i].msg >= 7);
    /* A wrong dimension reads nothing. */
    T_EQ_INT(vec_set_get(h, "model-a:1", D * 2, &s), CAIRN_OK);
    T_EQ_INT(s->n, 0);
    /* B's set: B's rows only. */
    T_EQ_INT(vec_set_get(h, "model-b:2", D, &s), CAIRN_OK);
    T_EQ_INT(s->n, 6);
    for (size_t i = 0; i < s->n; i++)
        T_EQ_INT(s->msg[i] % 2, 0);
    /* the cache reloads after a change */
    put_vec(h, "model-b:2", 1, 0, vb, D);
    T_EQ_INT(vec_set_get(h, "model-b:2", D, &s), CAIRN_OK);
    T_EQ_INT(s->n, 7);
    /* forget drops the session's vectors, of every model */
    T_EQ_INT(count(h, "SELECT count(*) FROM vectors"), 14);
    T_EQ_INT(cairn_forget(h, "s1"), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM vectors WHERE msg <= 6"), 0);
    T_EQ_INT(count(h, "SELECT count(*) FROM vectors"), 6);
    T_EQ_INT(vec_set_get(h, "model-b:2", D, &s), CAIRN_OK);
    T_EQ_INT(s->n, 3);
    T_EQ_INT(s->msgs_total, 6);
out:
    cairn_close(h);
}

/* The second dense pass: the question (axis 0) is half like the best
 * unit's turn (axes 0 and 1) and nothing like a turn about axis 1 alone;
 * moved towards the best turn, the search finds that turn, and still not
 * one about axis 2. Only the units that scored lead; no vector, nothing. */
static void test_feedback(void)
{
    struct cairn *h = NULL;
    enum { D = 16 };
    float v[3][D], q[D] = { 1 };
    memset(v, 0, sizeof v);
    v[0][0] = v[0][1] = 1;              /* the best turn */
    v[1][1] = 1;                        /* like it, not like the question */
    v[2][2] = 1;                        /* like neither */
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    add_chat(h, "s1", 3);
    for (int i = 0; i < 3; i++)
        put_vec(h, "model-a:1", i + 1, 0, v[i], D);
    struct pool p;
    memset(&p, 0, sizeof p);
    p.ns = 1;
    p.nm = p.nu = 3;
    p.s = calloc(1, sizeof *p.s);
    p.m = calloc(3, sizeof *p.m);
    p.u = calloc(3, sizeof *p.u);
    T_CHECK(p.s && p.m && p.u);
    if (!p.s || !p.m || !p.u)
        goto out;
    p.s[0].row = 1;
    p.s[0].dialog = 1;
    p.s[0].n_msgs = 3;
    for (int i = 0; i < 3; i++) {
        p.m[i].row = i + 1;
        p.u[i].first = p.u[i].last = p.u[i].head = i;
    }
    p.u[0].score = 1;                   /* the first ranking's only match */
    struct dense_result r;
    memset(&r, 0, sizeof r);
    r.qv = q;
    r.qdim = D;
    r.n = 1;
    snprintf(r.model, sizeof r.model, "model-a:1");
    T_EQ_INT(dense_feedback(h, &p, &r), CAIRN_OK);
    /* q' = q + (v0 / |v0|): cos(q', v1) = 0.38, cos(q', v2) = 0 */
    T_CHECK(p.m[0].prf > 1.9f);
    T_CHECK(p.m[1].prf > 1.3f && p.m[1].prf < 1.45f);
    T_CHECK(p.m[2].prf < 1.05f);
    /* nothing scored: no pass, nothing written */
    for (int i = 0; i < 3; i++)
        p.m[i].prf = 0;
    free(p.ord);
    p.ord = NULL;
    p.u[0].score = 0;
    T_EQ_INT(dense_feedback(h, &p, &r), CAIRN_OK);
    T_CHECK(p.m[1].prf == 0);
    /* no question vector: nothing either */
    p.u[0].score = 1;
    free(p.ord);
    p.ord = NULL;
    r.qv = NULL;
    T_EQ_INT(dense_feedback(h, &p, &r), CAIRN_OK);
    T_CHECK(p.m[1].prf == 0);
out:
    free(p.s);
    free(p.m);
    free(p.u);
    free(p.ord);
    cairn_close(h);
}


/* gather's late call (recall.c runs the dense search there, while the
 * question's vector was made on another thread): called once, after the
 * keyword matches and before the sessions are loaded, and the sessions of
 * the extra hits it gives are loaded with their dense score; its error
 * is gather's. */
struct late { int calls, fail; struct dense_result dr; };

static int late_cb(void *arg, const struct dense_result **extra)
{
    struct late *l = arg;
    l->calls++;
    if (l->fail)
        return CAIRN_NOMEM;
    *extra = l->dr.n ? &l->dr : NULL;
    return CAIRN_OK;
}

static void test_gather_late(void)
{
    struct cairn *h = NULL;
    struct query q;
    struct pool p;
    struct dense_hit hit = { 0, 0, 0.5f };
    struct late l = { 0, 0, { 0 } };
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    add_chat(h, "alpha", 3);
    add_chat(h, "bravo", 3);
    hit.msg = count(h, "SELECT min(m.id) FROM messages m JOIN sessions s ON s.id = m.session "
                       "WHERE s.ext_id = 'bravo'");
    hit.sess = count(h, "SELECT id FROM sessions WHERE ext_id = 'bravo'");
    o.flags = CAIRN_RECALL_MATCHED_ONLY;       /* not the whole store */
    o.budget = 1000;
    memset(&q, 0, sizeof q);
    T_EQ_INT(query_parse(&q, "alpha", 0, 0), CAIRN_OK);
    /* no extra hit: the keyword's session alone */
    T_EQ_INT(gather(h, &q, &o, NULL, late_cb, &l, &p), CAIRN_OK);
    T_EQ_INT(l.calls, 1);
    T_EQ_INT(p.ns, 1);
    pool_free(&p);
    /* the late hit's session is loaded, its message scored */
    l.dr.hits = &hit;
    l.dr.n = 1;
    T_EQ_INT(gather(h, &q, &o, NULL, late_cb, &l, &p), CAIRN_OK);
    T_EQ_INT(l.calls, 2);
    T_EQ_INT(p.ns, 2);
    int scored = 0;
    for (int j = 0; j < p.nm; j++)
        scored += p.m[j].row == hit.msg && p.m[j].dense == 1.5f;
    T_EQ_INT(scored, 1);
    pool_free(&p);
    /* its error is gather's */
    l.fail = 1;
    T_EQ_INT(gather(h, &q, &o, NULL, late_cb, &l, &p), CAIRN_NOMEM);
    T_EQ_INT(l.calls, 3);
    pool_free(&p);
    query_free(&q);
    cairn_close(h);
}

/* With a real model: ingest embeds, recall is hybrid; another model id
 * in the store is never read. Skipped when use-lite-en is not installed. */
static void test_with_model(void)
{
    const struct embed_reg_model *rm = embed_reg_find("use-lite-en");
    /* scripts/test.sh fetches the model into build/models and names it
     * here, so the README's test command runs this part on a new machine. */
    const char *dir = getenv("CAIRN_TEST_MODEL_DIR");
    if (!dir || !*dir)
        dir = getenv("CAIRN_MODEL_DIR");
    char models[4096];
    if (embed_reg_models_dir(dir, models, sizeof models) != 0)
        models[0] = '\0';
    if (!rm || !embed_reg_installed(models, rm)) {
        T_SKIP("use-lite-en not installed (cairn model pull use-lite-en; scripts/test.sh fetches it into build/models)");
        return;
    }
    struct cairn *h = NULL;
    t_model = "use-lite-en";
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_set(h, "embed.model_dir", dir), CAIRN_OK);
    const char *json = "{\"id\":\"pets\",\"messages\":["
        "{\"role\":\"user\",\"content\":\"My dog Rex loves chasing the ball in the park.\"},"
        "{\"role\":\"assistant\",\"content\":\"That sounds like a happy puppy!\"},"
        "{\"role\":\"user\",\"content\":\"I repaired the carburetor of my motorbike today.\"},"
        "{\"role\":\"assistant\",\"content\":\"Engines can be tricky.\"}]}";
    T_EQ_INT(cairn_add_json(h, json, strlen(json), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(DISTINCT msg) FROM vectors"), 4);
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = 30;
    T_EQ_INT(cairn_recall(h, "which animal do I own?", &o, &r), CAIRN_OK);
    T_EQ_INT(r->dense, CAIRN_DENSE_ON);
    T_CHECK(r->note == NULL);
    T_CHECK(r->n_items > 0 && strstr(r->text, "Rex") != NULL);
    cairn_recall_free(r);
    /* The question's vector made on a thread (dense_pre_start, what
     * recall does) gives the search made without it: the same hits, bit
     * for bit, and the same status. */
    static const char *const qs[] = { "which animal do I own?", "motorbike engine repair",
                                      "a happy puppy in the park" };
    for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
        struct dense_result a, b;
        struct dense_pre pre, *pp = &pre;
        T_EQ_INT(dense_search(h, qs[k], &o, &a), CAIRN_OK);
        T_EQ_INT(dense_pre_start(h, qs[k], 0, NULL, &pp), CAIRN_OK);
        T_CHECK(pp == &pre);
        T_CHECK(pre.started);
        T_EQ_INT(dense_search_pre(h, qs[k], &o, &pre, &b), CAIRN_OK);
        T_CHECK(pre.done && pre.qv != NULL);
        T_EQ_INT(a.status, b.status);
        T_EQ_INT(a.n, b.n);
        T_CHECK(a.n > 0 && a.qv && b.qv);
        for (int i = 0; i < a.n && i < b.n; i++)
            T_CHECK(a.hits[i].msg == b.hits[i].msg && a.hits[i].cos == b.hits[i].cos);
        T_CHECK(a.qv && b.qv && !memcmp(a.qv, b.qv, (size_t)a.qdim * sizeof *a.qv));
        dense_pre_free(&pre);
        dense_result_free(&a);
        dense_result_free(&b);
    }
    o.method = CAIRN_METHOD_KEYWORD;
    T_EQ_INT(cairn_recall(h, "which animal do I own?", &o, &r), CAIRN_OK);
    T_EQ_INT(r->dense, CAIRN_DENSE_OFF);
    cairn_recall_free(r);
    o.method = CAIRN_METHOD_DEFAULT;
    /* The hook path: no embedding at ingest, recall says partial. */
    T_EQ_INT(cairn_embed_at_ingest(h, 0), CAIRN_OK);
    const char *json2 = "{\"id\":\"later\",\"messages\":["
        "{\"role\":\"user\",\"content\":\"Tomorrow I fly to Lisbon.\"}]}";
    T_EQ_INT(cairn_add_json(h, json2, strlen(json2), NULL), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(DISTINCT msg) FROM vectors"), 4);
    T_EQ_INT(cairn_recall(h, "which animal do I own?", &o, &r), CAIRN_OK);
    T_EQ_INT(r->dense, CAIRN_DENSE_PARTIAL);
    T_CHECK(r->note && strstr(r->note, "backfill"));
    cairn_recall_free(r);
    struct cairn_embed_stats es;
    memset(&es, 0, sizeof es);
    T_EQ_INT(cairn_embed_backfill(h, 0, NULL, NULL, &es), CAIRN_OK);
    T_EQ_INT(es.messages, 1);
    T_EQ_INT(count(h, "SELECT count(DISTINCT msg) FROM vectors"), 5);
    /* Vectors of the current model relabelled as another model's: the
     * store now has none of the current one; recall is keyword-only and
     * says so, and never reads the other model's rows. */
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE vectors SET model = 'other-model:1'", NULL, NULL, NULL),
             SQLITE_OK);
    T_EQ_INT(cairn_recall(h, "which animal do I own?", &o, &r), CAIRN_OK);
    T_EQ_INT(r->dense, CAIRN_DENSE_NONE);
    T_CHECK(r->note && strstr(r->note, "reindex"));
    cairn_recall_free(r);
    memset(&es, 0, sizeof es);
    T_EQ_INT(cairn_embed_backfill(h, 1, NULL, NULL, &es), CAIRN_OK);
    T_EQ_INT(es.messages, 5);
    T_EQ_INT(count(h, "SELECT count(*) FROM vectors WHERE model = 'other-model:1'"), 0);
    T_EQ_INT(cairn_recall(h, "which animal do I own?", &o, &r), CAIRN_OK);
    T_EQ_INT(r->dense, CAIRN_DENSE_ON);
    cairn_recall_free(r);
    /* off */
    T_EQ_INT(cairn_set(h, "embed.model", "none"), CAIRN_OK);
    T_EQ_INT(cairn_recall(h, "which animal do I own?", &o, &r), CAIRN_OK);
    T_EQ_INT(r->dense, CAIRN_DENSE_OFF);
    T_CHECK(r->note == NULL);
    cairn_recall_free(r);
    t_model = "none";
    cairn_close(h);
}

int main(void)
{
    T_RUN(test_kernels);
    T_RUN(test_pieces);
    T_RUN(test_quantize);
    T_RUN(test_two_models);
    T_RUN(test_feedback);
    T_RUN(test_gather_late);
    T_RUN(test_with_model);
    return T_DONE();
}
