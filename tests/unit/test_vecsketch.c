/*
 * test_vecsketch.c: the sign sketch beside the vector cache (STORE-vsk,
 * store/veccache.c, vec_sketch_get in store/vectors.c) and the two-stage
 * dense scan over it (recall/dense.c, dense_topk_sketch; issue 16, hyb52).
 *
 *  - the sketch kernel at every level the CPU allows equals its scalar
 *    reference on random sketches of 1..17 words, and the reference a
 *    sum worked out by hand;
 *  - the sketch holds what it says: each dimension's mean and mean
 *    absolute deviation of the unit vectors, and bit d set exactly where
 *    the value is above the mean;
 *  - the file is written beside a cache file (0600), mapped by the next
 *    connection with the same bytes; it is never used for another stamp
 *    (vectors appended, an old file put back), and goes with forget;
 *    a truncated or damaged header is ignored and the file rebuilt;
 *  - the two-stage scan with K = all gives exactly the one-thread full
 *    scan's hits (with a scope, with a session left out), also from a
 *    sketch whose body is garbage (bits all set, sigma NaN): candidates
 *    get worse, scores never wrong; with a small K its hits are exact
 *    cosines, best first.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "t_store.h"
#include "t_open.h"
#include "t_vec.h"

enum { D = 70, MSGS = 128, PIECES = 80 };     /* 10,240 vectors: over VEC_CACHE_MIN;
                                                  70 dims: two words, the second partial */
#define MODEL "test-model:1"

static char dir[256], store[300], cache[320], sketch[320];

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- the kernel --------------------------------------------------------- */

static void test_kernel(void)
{
    /* by hand: bits 0, 1, 3 set; u_0 = 3 (planes 0, 1), u_1 = 5 (planes
     * 0, 2), u_2 = 1 (not set), u_3 = 15 (all planes) */
    uint64_t planes[4] = { 0x1 | 0x2 | 0x4 | 0x8, 0x1 | 0x8, 0x2 | 0x8, 0x8 };
    uint64_t b = 0xB;
    int32_t s = -1, c = -1;
    dense_sketch_dots_ref(planes, &b, 1, 1, &s, &c);
    T_EQ_INT(s, 3 + 5 + 15);
    T_EQ_INT(c, 3);

    static const char *const levels[] = { "scalar", "avx2", "avxvnni", "avx512vnni" };
    int vpop = 0, avx2 = 0;
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        if (dense_kernel_set(levels[l]) != 0)
            continue;
        vpop |= !strcmp(dense_sketch_kernel_name(), "avx512vpopcntdq");
        avx2 |= !strcmp(dense_sketch_kernel_name(), "avx2");
        for (int words = 1; words <= 17; words++) {
            enum { N = 37 };
            uint64_t pl[4 * 17], bits[N * 17];
            int32_t rs[N], rc[N], ks[N], kc[N];
            for (int i = 0; i < 4 * words; i++)
                pl[i] = next();
            for (int i = 0; i < N * words; i++)
                bits[i] = i % 5 == 0 ? ~0ULL : i % 7 == 0 ? 0 : next();
            dense_sketch_dots_ref(pl, bits, words, N, rs, rc);
            dense_sketch_dots(pl, bits, words, N, ks, kc);
            T_CHECK(!memcmp(rs, ks, sizeof rs));
            T_CHECK(!memcmp(rc, kc, sizeof rc));
        }
    }
    dense_kernel_set(NULL);                      /* back to the best */
    if (!avx2)
        T_SKIP("no AVX2 here (the CPU's, or CAIRN_SIMD's cap): that kernel was not compared");
    if (!vpop)
        T_SKIP("this CPU has no AVX-512 VPOPCNTDQ: that kernel was not compared");
}

/* ---- the file ------------------------------------------------------------ */

static void fresh_store(void)
{
    unlink(cache);
    unlink(sketch);
    t_vec_store(store, MODEL, D, MSGS, PIECES);
}

/* A new connection's set and sketch: the piece count (-1: none), and
 * whether the sketch came from the file (*mapped). */
static int64_t load(struct cairn **hp, const struct vec_set **sp, const struct vec_sketch **kp,
                    int *mapped)
{
    int64_t n = -1;
    *sp = NULL;
    *kp = NULL;
    *mapped = -1;
    if (t_open(store, CAIRN_OPEN_READONLY, hp) == CAIRN_OK &&
        vec_set_get(*hp, MODEL, D, sp) == CAIRN_OK && *sp &&
        vec_sketch_get(*hp, *sp, kp) == CAIRN_OK && *kp) {
        n = (int64_t)(*kp)->n;
        *mapped = (*kp)->map != NULL;
    }
    return n;
}

static int64_t load_close(int *mapped)
{
    struct cairn *h = NULL;
    const struct vec_set *s;
    const struct vec_sketch *k;
    int64_t n = load(&h, &s, &k, mapped);
    cairn_close(h);
    return n;
}

/* What the sketch must hold, worked out again from the set. */
static void check_content(const struct vec_set *s, const struct vec_sketch *k)
{
    int bad_mu = 0, bad_sigma = 0, bad_bit = 0;
    T_EQ_INT(k->dim, D);
    T_EQ_INT(k->words, (D + 63) / 64);
    T_EQ_INT(k->n, s->n);
    for (int d = 0; d < D; d++) {
        double sum = 0, dev = 0;
        for (size_t i = 0; i < s->n; i++)
            sum += s->v8[i * D + d] * s->inv_norm[i];
        double mu = sum / (double)s->n;
        for (size_t i = 0; i < s->n; i++)
            dev += fabs(s->v8[i * D + d] * s->inv_norm[i] - mu);
        bad_mu += fabs(mu - k->mu[d]) > 1e-5;
        bad_sigma += fabs(dev / (double)s->n - k->sigma[d]) > 1e-5;
    }
    for (size_t i = 0; i < s->n; i += 7)
        for (int d = 0; d < 64 * k->words; d++) {
            int bit = (int)(k->bits[i * k->words + d / 64] >> (d % 64) & 1);
            int want = d < D && s->v8[i * D + d] * s->inv_norm[i] - k->mu[d] > 0;
            bad_bit += bit != want;
        }
    T_EQ_INT(bad_mu, 0);
    T_EQ_INT(bad_sigma, 0);
    T_EQ_INT(bad_bit, 0);
}

static void copy_file(const char *from, const char *to)
{
    char b[65536];
    ssize_t n;
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    T_CHECK(in >= 0 && out >= 0);
    while (in >= 0 && out >= 0 && (n = read(in, b, sizeof b)) > 0)
        T_EQ_INT(write(out, b, (size_t)n), n);
    if (in >= 0)
        close(in);
    if (out >= 0)
        close(out);
}

/* The next connection's sketch: n pieces, built (not mapped), right. */
static void expect_rebuilt(int64_t n)
{
    struct cairn *h = NULL;
    const struct vec_set *s;
    const struct vec_sketch *k;
    int mapped;
    T_EQ_INT(load(&h, &s, &k, &mapped), n);
    T_EQ_INT(mapped, 0);
    if (k)
        check_content(s, k);
    cairn_close(h);
}

static void test_file(void)
{
    struct cairn *a = NULL, *b = NULL, *w = NULL;
    const struct vec_set *sa, *sb;
    const struct vec_sketch *ka, *kb;
    struct stat st;
    int mapped;
    const int64_t N = MSGS * PIECES;
    char old[340];
    snprintf(old, sizeof old, "%s.old", sketch);

    fresh_store();
    /* the first: built (the set from SQLite, the cache file written with
     * it), and written beside it */
    T_EQ_INT(load(&a, &sa, &ka, &mapped), N);
    T_EQ_INT(mapped, 0);
    T_CHECK(stat(sketch, &st) == 0);
    T_EQ_INT(st.st_mode & 0777, 0600);
    if (ka)
        check_content(sa, ka);
    /* the next: mapped, the same bytes */
    T_EQ_INT(load(&b, &sb, &kb, &mapped), N);
    T_EQ_INT(mapped, 1);
    if (ka && kb) {
        T_CHECK(!memcmp(ka->mu, kb->mu, D * sizeof *ka->mu));
        T_CHECK(!memcmp(ka->sigma, kb->sigma, D * sizeof *ka->sigma));
        T_CHECK(!memcmp(ka->bits, kb->bits, ka->n * ka->words * 8));
        check_content(sb, kb);
    }
    cairn_close(a);
    cairn_close(b);
    copy_file(sketch, old);

    /* vectors appended (by SQL: no commit hook removes the files, the
     * stamp alone makes them stale): the next sketch has every piece */
    T_EQ_INT(t_open(store, 0, &w), CAIRN_OK);
    t_put_vectors(w, MODEL, D, PIECES, 1);
    cairn_close(w);
    T_CHECK(t_exists(sketch));
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 0);
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 1);
    /* the old file put back (another stamp and count): never used,
     * rebuilt */
    copy_file(old, sketch);
    expect_rebuilt(N + MSGS);
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 1);
    /* the same count, other vectors (only the stamp tells): never used */
    copy_file(sketch, old);
    T_EQ_INT(t_open(store, 0, &w), CAIRN_OK);
    T_EQ_INT(sqlite3_exec(w->db, "UPDATE vectors SET v = randomblob(70)", NULL, NULL, NULL),
             SQLITE_OK);
    T_EQ_INT(sqlite3_exec(w->db, "UPDATE vec_stamp SET changed_at = changed_at - 60", NULL,
                          NULL, NULL), SQLITE_OK);
    cairn_close(w);
    copy_file(old, sketch);
    expect_rebuilt(N + MSGS);
    unlink(old);

    /* truncated, or a header byte changed (its hash fails): ignored */
    off_t full = t_file_size(sketch);
    T_EQ_INT(truncate(sketch, full - 1), 0);
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 0);
    T_EQ_INT(t_file_size(sketch), full);
    t_spoil(sketch, 24, 25, 0x01);
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 0);
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 1);
    T_EQ_INT(truncate(sketch, 100), 0);          /* shorter than a header */
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 0);

    /* vec.cache "0": neither read nor written */
    unlink(sketch);
    t_vec_cache = "0";
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_EQ_INT(mapped, 0);
    T_CHECK(!t_exists(sketch));
    t_vec_cache = NULL;
    T_EQ_INT(load_close(&mapped), N + MSGS);
    T_CHECK(t_exists(sketch));

    /* forget: the file goes with the commit */
    T_EQ_INT(t_open(store, 0, &w), CAIRN_OK);
    T_EQ_INT(cairn_forget(w, "s0"), CAIRN_OK);
    cairn_close(w);
    T_CHECK(!t_exists(sketch));
}

/* ---- the two-stage scan ------------------------------------------------- */

/* Every K = all query of qn equals the full scan; a small K gives exact
 * cosines, best first (and, from a sound sketch, k messages). */
static void compare_scans(const struct vec_set *s, const struct vec_sketch *k, int qn,
                          int sound)
{
    struct dense_hit ex[DENSE_TOPK], tw[DENSE_TOPK];
    float q[D];
    int diff = 0, unsorted = 0, inexact = 0, small = 0;
    for (int t = 0; t < qn; t++) {
        for (int d = 0; d < D; d++)
            q[d] = (float)((int64_t)(next() % 2001) - 1000) / 1000.0f;
        if (t % 3 == 0) {                        /* a stored piece, a near one */
            size_t i = next() % s->n;
            for (int d = 0; d < D; d++)
                q[d] = (float)s->v8[i * D + d];
        }
        int64_t except = t % 4 == 1 ? s->sess[next() % s->n] : 0;
        int64_t allowed[3] = { 1, 3, 6 };
        int use_allowed = t % 4 == 2;
        int ne = use_allowed ? dense_topk(s, q, allowed, 3, DENSE_TOPK, 1, ex)
                             : dense_topk_except(s, q, except, DENSE_TOPK, 1, ex);
        int nt = dense_topk_sketch(s, k, q, use_allowed ? allowed : NULL, use_allowed ? 3 : 0,
                                   except, DENSE_TOPK, (int)s->n, tw);
        diff += !t_same_hits(ex, ne, tw, nt);
        /* K small: fewer candidates, but each hit's cosine is exact (its
         * message's best piece among them can only be below the best) */
        int ns = dense_topk_sketch(s, k, q, NULL, 0, except, DENSE_TOPK, 1, tw);
        small += ns == DENSE_TOPK;
        for (int i = 0; i < ns; i++) {
            unsorted += i > 0 && tw[i].cos > tw[i - 1].cos;
            float best = -2;
            for (size_t p = 0; p < s->n; p++)
                if (s->msg[p] == tw[i].msg) {
                    int32_t dot = 0;
                    int8_t q8[D];
                    float sc;
                    vec_quantize(q, D, q8, &sc);
                    double qn2 = 0;
                    for (int d = 0; d < D; d++) {
                        dot += q8[d] * s->v8[p * D + d];
                        qn2 += (double)q8[d] * q8[d];
                    }
                    float c = (float)dot * s->inv_norm[p] * (float)(1.0 / sqrt(qn2));
                    best = c > best ? c : best;
                }
            inexact += tw[i].cos > best + 1e-6f;
        }
    }
    T_EQ_INT(diff, 0);
    T_EQ_INT(unsorted, 0);
    T_EQ_INT(inexact, 0);
    if (sound)
        T_EQ_INT(small, qn);                     /* kc is at least k * DENSE_PIECES_MULT */
}

static void test_two_stage(void)
{
    struct cairn *h = NULL;
    const struct vec_set *s;
    const struct vec_sketch *k;
    int mapped;
    fresh_store();
    T_EQ_INT(load_close(&mapped), MSGS * PIECES);
    T_EQ_INT(load(&h, &s, &k, &mapped), MSGS * PIECES);
    T_EQ_INT(mapped, 1);
    if (s && k)
        compare_scans(s, k, 40, 1);
    cairn_close(h);
    /* a garbage body behind a good header: bits all set, then sigma NaN */
    off_t full = t_file_size(sketch);
    t_spoil(sketch, 512 + 2 * 320, full, 0xFF);    /* past mu and sigma (70 floats, padded) */
    T_EQ_INT(load(&h, &s, &k, &mapped), MSGS * PIECES);
    T_EQ_INT(mapped, 1);
    if (s && k) {
        T_EQ_INT(k->bits[0], ~0ULL);
        compare_scans(s, k, 12, 0);
    }
    cairn_close(h);
    t_spoil(sketch, 512, 512 + 2 * 320, 0xFF);
    T_EQ_INT(load(&h, &s, &k, &mapped), MSGS * PIECES);
    T_EQ_INT(mapped, 1);
    if (s && k) {
        T_CHECK(isnan(k->sigma[0]));
        compare_scans(s, k, 12, 0);
    }
    cairn_close(h);
    /* at every kernel level the same hits (the sketch sums are exact) */
    static const char *const levels[] = { "scalar", "avx2", "avxvnni", "avx512vnni" };
    fresh_store();
    T_EQ_INT(load_close(&mapped), MSGS * PIECES);
    T_EQ_INT(load(&h, &s, &k, &mapped), MSGS * PIECES);
    if (s && k) {
        struct dense_hit ref[DENSE_TOPK], got[DENSE_TOPK];
        float q[D];
        int nr, ng, diff = 0;
        for (int d = 0; d < D; d++)
            q[d] = (float)((int64_t)(next() % 2001) - 1000) / 1000.0f;
        dense_kernel_set("scalar");
        nr = dense_topk_sketch(s, k, q, NULL, 0, 0, DENSE_TOPK, 300, ref);
        for (size_t l = 1; l < sizeof levels / sizeof levels[0]; l++) {
            if (dense_kernel_set(levels[l]) != 0)
                continue;
            ng = dense_topk_sketch(s, k, q, NULL, 0, 0, DENSE_TOPK, 300, got);
            diff += !t_same_hits(ref, nr, got, ng);
        }
        dense_kernel_set(NULL);
        T_EQ_INT(diff, 0);
    }
    cairn_close(h);
}

int main(void)
{
    if (t_vec_dir("cairn-vecsketch", dir, sizeof dir, store, sizeof store))
        return 1;
    snprintf(cache, sizeof cache, "%s-vec", store);
    snprintf(sketch, sizeof sketch, "%s-vsk", store);
    T_RUN(test_kernel);
    T_RUN(test_file);
    T_RUN(test_two_stage);
    t_vec_rmdir("test_vecsketch", dir, store);
    return T_DONE();
}
