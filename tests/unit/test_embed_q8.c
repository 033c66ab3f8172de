/*
 * test_embed_q8.c: the encoder's int8 product (src/embed/qgemm.c) at
 * every level the CPU has, against
 *   - the exact integer sums, computed here from embed_k_q8_quant's bytes
 *     (every level must give them exactly: no i16 saturation, the
 *     unsigned-x correction right, edges of tiles and k groups);
 *   - embed_k_linear_q8_ref, bit for bit (the same sums, scaled the same);
 *   - the f32 product, within the error int8 allows;
 * on random shapes with odd sizes, column ranges (as the threads of a
 * query split them), rows ldx/ldy apart, and extreme rows (all zero, one
 * huge value, NaN). Plus the quantiser's own properties.
 */
#include "t.h"
#include "embed/kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state = 0x2545F4914F6CDD1Dull;

static float frand(void)
{
    return t_frand(&rng_state);
}

static float *rand_array(size_t n, float scale)
{
    return t_rand_array(&rng_state, n, scale);
}

/* The levels this CPU can run: 0 always, then 1..3 as it has them. */
static int max_level(void)
{
    return embed_k_q8_level_at(embed_k_simd_cpu());
}

static void test_quant(void)
{
    float x[37], big[8] = { 0, 0, 0, 1e30f, 0, 0, 0, -1e30f }, zero[5] = { 0 };
    int8_t q[37];
    float s;
    int t, ok = 1, hit = 0;

    for (t = 0; t < 37; t++)
        x[t] = frand() * 3.0f;
    x[11] = -4.0f;   /* the maximum |x|: maps to -127 exactly */
    s = embed_k_q8_quant(x, 37, q);
    T_CHECK(fabsf(s - 4.0f / 127.0f) < 1e-9f);
    T_EQ_INT(q[11], -127);
    for (t = 0; t < 37; t++) {
        ok &= q[t] != -128;
        ok &= fabsf(q[t] * s - x[t]) <= s * 0.5f + 1e-6f;   /* rounded to nearest */
        hit |= q[t] == 127 || q[t] == -127;
    }
    T_CHECK(ok);
    T_CHECK(hit);
    s = embed_k_q8_quant(zero, 5, q);
    T_CHECK(s == 0.0f);
    T_CHECK(q[0] == 0 && q[4] == 0);
    s = embed_k_q8_quant(big, 8, q);
    T_EQ_INT(q[3], 127);
    T_EQ_INT(q[7], -127);
    x[5] = NAN;   /* a row with a NaN is all zeros, scale 0 */
    s = embed_k_q8_quant(x, 37, q);
    T_CHECK(s == 0.0f);
    ok = 1;
    for (t = 0; t < 37; t++)
        ok &= q[t] == 0;
    T_CHECK(ok);
}

/* Sums from the quantiser's bytes, in 64 bits (so an overflow of the
 * kernels' 32 would show). */
static void want_sums(const float *x, const float *w, int m, int n, int k, long long *want)
{
    int8_t *qx = malloc((size_t)k), *qw = malloc((size_t)k);
    int i, j, t;

    for (j = 0; j < n; j++) {
        embed_k_q8_quant(w + (size_t)j * k, k, qw);
        for (i = 0; i < m; i++) {
            long long acc = 0;

            embed_k_q8_quant(x + (size_t)i * k, k, qx);
            for (t = 0; t < k; t++)
                acc += qx[t] * qw[t];
            want[(size_t)i * n + j] = acc;
        }
    }
    free(qx);
    free(qw);
}

static void test_sums(void)
{
    /* m: 1, a query's 20, tile edges (4, 5, 6, 10, 12) and past one block
     * of rows (qgemm.c's q_block_rows: 300 x 1536 is 3 blocks of 100 at
     * AVX2, 2 of 152 in C; 600 x 384, 2 of 300 at AVX2); n: within one
     * pair of 32 and across; k: off 4 and 8, and 1536 (the FFN's; sums
     * up to 127^2 * 1536 = 2.5e7) */
    int shapes[][3] = { {1, 1, 1}, {3, 5, 7}, {20, 384, 384}, {4, 33, 13}, {5, 64, 100},
                        {6, 31, 1536}, {10, 70, 9}, {12, 32, 32}, {13, 40, 385},
                        {121, 65, 64}, {250, 96, 128}, {7, 3, 2}, {300, 40, 1536},
                        {600, 33, 384} };
    size_t s;
    int lv, top = max_level();

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *x = rand_array((size_t)m * k, 2.0f), *w = rand_array((size_t)n * k, 0.1f);
        long long *want = malloc((size_t)m * n * sizeof(*want));
        int32_t *got = malloc((size_t)m * n * sizeof(*got));
        struct embed_k_q8 *q;
        size_t i;

        /* the saturation case of vpmaddubsw: rows at +-max everywhere */
        for (i = 0; i < (size_t)k && m > 1; i++) {
            x[i] = (i % 2) ? -2.0f : 2.0f;
            w[i] = (i % 2) ? -0.1f : 0.1f;
        }
        if (m > 2)
            memset(x + (size_t)2 * k, 0, (size_t)k * sizeof(float));   /* a zero row */
        q = embed_k_q8_new(w, n, k);
        T_CHECK(q != NULL);
        want_sums(x, w, m, n, k, want);
        for (lv = 0; q && lv <= top; lv++) {
            int ok = 1;

            memset(got, 0x5a, (size_t)m * n * sizeof(*got));
            T_EQ_INT(embed_k_q8_sums(lv, x, q, got, m), 0);
            for (i = 0; i < (size_t)m * n; i++)
                ok &= got[i] == want[i];
            if (!ok)
                fprintf(stderr, "sums differ: level %s, %d x %d x %d\n",
                        embed_k_q8_level_name(lv), m, n, k);
            T_CHECK(ok);
        }
        embed_k_q8_free(q);
        free(x); free(w); free(want); free(got);
    }
}

/* Every level bit for bit with the reference, whole and by column ranges
 * of 32 (the query's thread split), with guard floats around y; and near
 * the f32 product. */
static void test_floats(void)
{
    /* 270 x 1536: 3 row blocks of 90 at AVX2 (whole tiles stored from the
     * registers in each) */
    int shapes[][3] = { {1, 32, 384}, {20, 384, 384}, {20, 1536, 384}, {20, 384, 1536},
                        {9, 70, 33}, {128, 96, 384}, {3, 7, 5}, {270, 64, 1536} };
    size_t s;
    int lv, top = max_level();

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], ldx = k + 3, ldy = n + 5;
        float *x = rand_array((size_t)m * ldx, 1.5f), *w = rand_array((size_t)n * k, 0.08f);
        float *b = rand_array((size_t)n, 0.5f), *xd = malloc((size_t)m * k * sizeof(float));
        float *ref = malloc((size_t)m * n * sizeof(float)), *f32 = malloc((size_t)m * n * sizeof(float));
        float *y = malloc(((size_t)m * ldy + 32) * sizeof(float));
        struct embed_k_q8 *q = embed_k_q8_new(w, n, k);
        void *work = malloc(embed_k_q8_work(m, k));
        int i, j;
        double worst = 1.0;

        for (i = 0; i < m; i++)
            memcpy(xd + (size_t)i * k, x + (size_t)i * ldx, (size_t)k * sizeof(float));
        embed_k_linear_q8_ref(xd, w, b, ref, m, n, k);
        embed_k_linear_ref(xd, w, b, f32, m, n, k);
        for (i = 0; i < m; i++)
            worst = fmin(worst, t_cosine(ref + (size_t)i * n, f32 + (size_t)i * n, n));
        /* random data has no outliers: int8 stays very close to f32 */
        T_CHECK(worst > 0.999);
        for (lv = 0; q && work && lv <= top; lv++) {
            int parts, ok = 1;

            for (parts = 1; parts <= 3; parts++) {
                int p, np = (n + 31) / 32;

                for (i = 0; i < m * ldy + 32; i++)
                    y[i] = -7.0f;
                for (p = 0; p < parts; p++) {
                    int c0 = np * p / parts * 32, c1 = np * (p + 1) / parts * 32;

                    T_EQ_INT(embed_k_q8_cols(lv, x, ldx, q, c0, c1 < n ? c1 : n, b, y, ldy, m,
                                             work), 0);
                }
                for (i = 0; i < m; i++) {
                    for (j = 0; j < n; j++)
                        ok &= memcmp(&y[(size_t)i * ldy + j], &ref[(size_t)i * n + j], 4) == 0;
                    for (j = n; j < ldy && i < m - 1; j++)
                        ok &= y[(size_t)i * ldy + j] == -7.0f;
                }
                for (i = (m - 1) * ldy + n; i < m * ldy + 32; i++)
                    ok &= y[i] == -7.0f;
            }
            if (!ok)
                fprintf(stderr, "floats differ: level %s, %d x %d x %d\n",
                        embed_k_q8_level_name(lv), m, n, k);
            T_CHECK(ok);
        }
        T_EQ_INT(embed_k_q8_cols(4, x, ldx, q, 0, n, b, y, ldy, m, work), -1);
        T_EQ_INT(embed_k_q8_cols(0, x, ldx, q, 16, n, b, y, ldy, m, work), -1);
        embed_k_q8_free(q);
        free(x); free(w); free(b); free(xd); free(ref); free(f32); free(y); free(work);
    }
}

/* The packed-weights entry points the encoder calls (gemm.c, kernels.c)
 * run the int8 form at the level in force, whatever the thread count. */
static void test_packed(void)
{
    int m = 20, n = 96, k = 64, lv;
    float *x = rand_array((size_t)m * k, 1.0f), *w = rand_array((size_t)n * k, 0.1f);
    float *ref = malloc((size_t)m * n * sizeof(float)), *y = malloc((size_t)m * n * sizeof(float));
    struct embed_k_packed *pk = embed_k_pack_q8(w, n, k);

    T_CHECK(pk != NULL);
    if (!pk)
        goto out;
    T_CHECK(embed_k_packed_is_q8(pk));
    T_CHECK(embed_k_packed_bytes(pk) >= (size_t)n * k);
    embed_k_linear_q8_ref(x, w, NULL, ref, m, n, k);
    for (lv = 0; lv <= embed_k_simd_cpu(); lv++) {
        embed_k_simd_enable(lv);
        memset(y, 0, (size_t)m * n * sizeof(float));
        embed_k_linear_packed(x, pk, NULL, y, m);
        T_CHECK(memcmp(y, ref, (size_t)m * n * sizeof(float)) == 0);
        embed_k_set_threads(2);
        memset(y, 0, (size_t)m * n * sizeof(float));
        embed_k_linear_packed(x, pk, NULL, y, m);
        T_CHECK(memcmp(y, ref, (size_t)m * n * sizeof(float)) == 0);
        embed_k_set_threads(1);
    }
    embed_k_simd_enable(2);
out:
    embed_k_packed_free(pk);
    free(x); free(w); free(ref); free(y);
}

/* USE-lite's layout: w[k][n] with rows ldw apart gives the same int8
 * weights, so the same sums and floats, as its transpose w[n][k] (the kn
 * form is quantised row by row, the other column by column), the columns
 * that quantise to nothing included: all zero, a NaN, an infinity, and
 * one whose maximum is subnormal. */
static void test_kn(void)
{
    int m = 7, n = 45, k = 70, ldw = 50, i, j, lv;
    float *w = rand_array((size_t)n * k, 0.2f), *wt = malloc((size_t)k * ldw * sizeof(float));
    float *x = rand_array((size_t)m * k, 1.0f);
    float *ya = malloc((size_t)m * n * sizeof(float)), *yb = malloc((size_t)m * n * sizeof(float));
    int32_t *a = malloc((size_t)m * n * sizeof(int32_t)), *b = malloc((size_t)m * n * sizeof(int32_t));
    void *work = malloc(embed_k_q8_work(m, k));
    struct embed_k_q8 *q, *qt;

    memset(w + 3 * k, 0, (size_t)k * sizeof(float));
    w[5 * k + 9] = NAN;
    w[7 * k + 69] = INFINITY;
    memset(w + 9 * k, 0, (size_t)k * sizeof(float));
    w[9 * k + 1] = 1e-40f;   /* 127 / max is infinite: the kn form's slow column */
    q = embed_k_q8_new(w, n, k);
    for (i = 0; i < n; i++)
        for (j = 0; j < k; j++)
            wt[(size_t)j * ldw + i] = w[(size_t)i * k + j];
    qt = embed_k_q8_new_kn(wt, ldw, n, k);
    T_CHECK(q && qt);
    T_CHECK(embed_k_q8_new_kn(wt, n - 1, n, k) == NULL);   /* ldw < n */
    for (lv = 0; q && qt && lv <= max_level(); lv++) {
        T_EQ_INT(embed_k_q8_sums(lv, x, q, a, m), 0);
        T_EQ_INT(embed_k_q8_sums(lv, x, qt, b, m), 0);
        T_CHECK(memcmp(a, b, (size_t)m * n * sizeof(int32_t)) == 0);
        T_EQ_INT(embed_k_q8_cols(lv, x, k, q, 0, n, NULL, ya, n, m, work), 0);
        T_EQ_INT(embed_k_q8_cols(lv, x, k, qt, 0, n, NULL, yb, n, m, work), 0);
        T_CHECK(memcmp(ya, yb, (size_t)m * n * sizeof(float)) == 0);
        T_CHECK(ya[3] == 0.0f && ya[5] == 0.0f && ya[7] == 0.0f);
    }
    embed_k_q8_free(q);
    embed_k_q8_free(qt);
    free(w); free(wt); free(x); free(a); free(b); free(ya); free(yb); free(work);
}

/* A NaN in a row of x makes that row all zeros at every level, wherever
 * it sits: AVX2's quantiser finds the maximum with max_ps, which drops a
 * NaN met before the last 8 values, so it tests for NaN on its own (k a
 * multiple of 8 here, its vector path). */
static void test_x_nan(void)
{
    int m = 4, n = 40, k = 64, lv, i;
    float *w = rand_array((size_t)n * k, 0.2f), *x = rand_array((size_t)m * k, 1.0f);
    int32_t *a = malloc((size_t)m * n * sizeof(int32_t)), *b = malloc((size_t)m * n * sizeof(int32_t));
    struct embed_k_q8 *q = embed_k_q8_new(w, n, k);

    x[1 * k + 3] = NAN;        /* met first: max_ps keeps the later values */
    x[2 * k + k - 1] = NAN;    /* in the last 8 */
    T_CHECK(q != NULL);
    T_EQ_INT(q ? embed_k_q8_sums(0, x, q, a, m) : -1, 0);
    for (lv = 1; q && lv <= max_level(); lv++) {
        T_EQ_INT(embed_k_q8_sums(lv, x, q, b, m), 0);
        T_CHECK(memcmp(a, b, (size_t)m * n * sizeof(int32_t)) == 0);
        for (i = 0; i < n; i++) {
            T_CHECK(b[1 * n + i] == 0);
            T_CHECK(b[2 * n + i] == 0);
        }
    }
    embed_k_q8_free(q);
    free(w); free(x); free(a); free(b);
}

/* Several products of one x (embed_k_q8_cols_n, BERT's q, k and v with x
 * quantised once): each bit for bit as embed_k_q8_cols alone, at every
 * level, nothing written past its y; refused (-1, nothing written) for
 * n = 0, n past EMBED_K_Q8_MAXN and inner sizes that differ. The packed
 * entry (embed_k_linear_packed_n) the same as embed_k_linear_packed on
 * each, and -1 when one pack is f32. */
static void test_cols_n(void)
{
    int shapes[][2] = { {20, 384}, {128, 64}, {250, 33}, {1, 8}, {300, 1536} };
    int ns[3] = { 96, 70, 32 };
    size_t s;
    int lv, top = max_level(), p;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], k = shapes[s][1];
        float *x = rand_array((size_t)m * k, 1.5f), *w[3], *b[3], *want[3], *got[3];
        struct embed_k_q8 *q[3], *odd = NULL;
        const struct embed_k_q8 *cq[4];
        const float *cb[4];
        float *wodd = rand_array((size_t)32 * (k + 1), 0.1f);
        void *work = malloc(embed_k_q8_work(m, k));

        for (p = 0; p < 3; p++) {
            w[p] = rand_array((size_t)ns[p] * k, 0.08f);
            b[p] = p == 1 ? NULL : rand_array((size_t)ns[p], 0.5f);
            want[p] = malloc((size_t)m * ns[p] * sizeof(float));
            got[p] = malloc(((size_t)m * ns[p] + 8) * sizeof(float));
            q[p] = embed_k_q8_new(w[p], ns[p], k);
            T_CHECK(q[p] != NULL);
            cq[p] = q[p];
            cb[p] = b[p];
        }
        odd = embed_k_q8_new(wodd, 32, k + 1);
        for (lv = 0; work && q[0] && q[1] && q[2] && lv <= top; lv++) {
            int ok = 1;
            size_t i;

            for (p = 0; p < 3; p++) {
                T_EQ_INT(embed_k_q8_cols(lv, x, k, q[p], 0, ns[p], b[p], want[p], ns[p], m,
                                         work), 0);
                for (i = 0; i < (size_t)m * ns[p] + 8; i++)
                    got[p][i] = -7.0f;
            }
            T_EQ_INT(embed_k_q8_cols_n(lv, x, cq, cb, got, 3, m, work), 0);
            for (p = 0; p < 3; p++) {
                ok &= memcmp(got[p], want[p], (size_t)m * ns[p] * sizeof(float)) == 0;
                for (i = (size_t)m * ns[p]; i < (size_t)m * ns[p] + 8; i++)
                    ok &= got[p][i] == -7.0f;
            }
            if (!ok)
                fprintf(stderr, "cols_n differs: level %s, m %d, k %d\n",
                        embed_k_q8_level_name(lv), m, k);
            T_CHECK(ok);
            /* refused: nothing written */
            got[0][0] = -7.0f;
            T_EQ_INT(embed_k_q8_cols_n(lv, x, cq, cb, got, 0, m, work), -1);
            cq[3] = q[0];
            cb[3] = NULL;
            T_EQ_INT(embed_k_q8_cols_n(lv, x, cq, cb, got, EMBED_K_Q8_MAXN + 1, m, work), -1);
            cq[1] = odd;
            T_CHECK(odd != NULL);
            T_EQ_INT(embed_k_q8_cols_n(lv, x, cq, cb, got, 3, m, work), -1);
            cq[1] = q[1];
            T_CHECK(got[0][0] == -7.0f);
        }
        /* the packed entry, at the level in force */
        {
            struct embed_k_packed *pk[3], *f32 = embed_k_pack(w[2], ns[2], k);
            const struct embed_k_packed *cpk[3];
            int ok = 1;

            for (p = 0; p < 3; p++) {
                pk[p] = embed_k_pack_q8(w[p], ns[p], k);
                cpk[p] = pk[p];
                T_CHECK(pk[p] != NULL);
            }
            if (pk[0] && pk[1] && pk[2]) {
                for (p = 0; p < 3; p++)
                    embed_k_linear_packed(x, pk[p], b[p], want[p], m);
                T_EQ_INT(embed_k_linear_packed_n(x, cpk, cb, got, 3, m), 0);
                for (p = 0; p < 3; p++)
                    ok &= memcmp(got[p], want[p], (size_t)m * ns[p] * sizeof(float)) == 0;
                T_CHECK(ok);
                if (f32) {
                    cpk[2] = f32;
                    got[0][0] = -7.0f;
                    T_EQ_INT(embed_k_linear_packed_n(x, cpk, cb, got, 3, m), -1);
                    T_CHECK(got[0][0] == -7.0f);
                }
            }
            for (p = 0; p < 3; p++)
                embed_k_packed_free(pk[p]);
            embed_k_packed_free(f32);
        }
        for (p = 0; p < 3; p++) {
            embed_k_q8_free(q[p]);
            free(w[p]); free(b[p]); free(want[p]); free(got[p]);
        }
        embed_k_q8_free(odd);
        free(x); free(wodd); free(work);
    }
}

int main(void)
{
    printf("# int8 levels here: up to %s\n", embed_k_q8_level_name(max_level()));
    if (max_level() < 3)
        T_SKIP("the AVX-512 VNNI kernels: this CPU (or CAIRN_SIMD) has no AVX-512 VNNI");
    T_RUN(test_quant);
    T_RUN(test_sums);
    T_RUN(test_floats);
    T_RUN(test_packed);
    T_RUN(test_kn);
    T_RUN(test_x_nan);
    T_RUN(test_cols_n);
    return T_DONE();
}
