/*
 * test_embed_kernels.c: every fast encoder kernel against its scalar
 * reference on random data (shapes include odd sizes and padded batches),
 * plus a few hand-computed values so the references themselves are
 * checked. The element-wise kernels are run twice: on their AVX2+FMA
 * forms (when the CPU has them) and on their portable loops.
 */
#include "t.h"
#include "embed/kernels.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state = 0x9E3779B97F4A7C15ull;

static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static float *rand_array(size_t n, float scale)
{
    float *a = malloc(n * sizeof(float));
    size_t i;

    for (i = 0; a && i < n; i++)
        a[i] = frand() * scale;
    return a;
}

static float max_abs_diff(const float *a, const float *b, size_t n)
{
    float m = 0.0f;
    size_t i;

    for (i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= m))
            m = d;   /* also catches NaN */
    }
    return m;
}

static void test_linear(void)
{
    /* m <= 32 goes to the small-m kernels when they are on: edges of
     * their 3 x 4 / 4 x 4 blocks and of their 8- / 16-wide k loops;
     * larger m to sgemm (weights not packed) */
    int shapes[][3] = { {1, 1, 1}, {3, 5, 7}, {20, 96, 64}, {33, 17, 129},
                        {2, 6, 384}, {24, 10, 1537}, {31, 9, 15}, {32, 13, 40},
                        {64, 40, 384}, {300, 20, 384}, {130, 7, 1537} };
    size_t s;

    embed_k_set_threads(1);
    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *x = rand_array((size_t)m * k, 1.0f);
        float *w = rand_array((size_t)n * k, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *y1 = calloc((size_t)m * n, sizeof(float));
        float *y2 = calloc((size_t)m * n, sizeof(float));

        embed_k_linear(x, w, b, y1, m, n, k);
        embed_k_linear_ref(x, w, b, y2, m, n, k);
        T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < 1e-4f);
        embed_k_linear(x, w, NULL, y1, m, n, k);
        embed_k_linear_ref(x, w, NULL, y2, m, n, k);
        T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < 1e-4f);
        free(x); free(w); free(b); free(y1); free(y2);
    }
    {
        /* Hand check: [1 2] . [[1 0] [0 1] [1 1]]^T + [0 0 10] = [1 2 13] */
        float x[2] = { 1, 2 }, w[6] = { 1, 0, 0, 1, 1, 1 }, b[3] = { 0, 0, 10 };
        float y[3];
        embed_k_linear_ref(x, w, b, y, 1, 3, 2);
        T_CHECK(y[0] == 1.0f && y[1] == 2.0f && y[2] == 13.0f);
        embed_k_linear(x, w, b, y, 1, 3, 2);
        T_CHECK(y[0] == 1.0f && y[1] == 2.0f && y[2] == 13.0f);
    }
}

/*
 * The packed product (gemm.c) against the reference, at the SIMD level in
 * force: shapes off the 12- / 6-row and 32-column tiles and off the 1536
 * k block (k = 1537 and 3100 take two and three blocks, so later blocks
 * add onto y), k = 1, m = 1, and n < 16 / between 16 and 32 (the masked
 * and cut-off stores). y starts as NaN where there is no bias, so a read
 * of y before the first write shows. Also embed_k_linear_packed, which
 * picks its path itself, at 1 and 2 threads.
 */
static void test_linear_packed(void)
{
    int shapes[][3] = { {1, 1, 1}, {1, 384, 384}, {5, 7, 3}, {12, 32, 16},
                        {13, 33, 1}, {20, 384, 384}, {37, 17, 129}, {6, 50, 1537},
                        {131, 45, 64}, {300, 96, 1540}, {25, 20, 3100}, {400, 31, 7} };
    int level = embed_k_simd();
    size_t s, i;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2];
        float *x = rand_array((size_t)m * k, 1.0f);
        float *w = rand_array((size_t)n * k, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *y1 = malloc((size_t)m * n * sizeof(float));
        float *y2 = malloc((size_t)m * n * sizeof(float));
        struct embed_k_packed *pk = embed_k_pack(w, n, k);
        float tol = 1e-5f * sqrtf((float)k) + 1e-5f;   /* sums of k products */
        int t;

        T_CHECK(pk != NULL);
        if (!pk)
            continue;
        T_CHECK(embed_k_packed_bytes(pk) >= (size_t)n * k * sizeof(float));
        for (t = 0; t < 2; t++) {
            const float *bias = t ? NULL : b;

            for (i = 0; i < (size_t)m * n; i++)
                y1[i] = NAN;
            embed_k_linear_ref(x, w, bias, y2, m, n, k);
            T_EQ_INT(embed_k_gemm_packed(level, x, pk, bias, y1, m), level ? 0 : -1);
            if (level)
                T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < tol);
            embed_k_set_threads(1 + t);
            embed_k_linear_packed(x, pk, bias, y1, m);
            T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < tol);
        }
        embed_k_set_threads(1);
        embed_k_packed_free(pk);
        free(x); free(w); free(b); free(y1); free(y2);
    }
    T_CHECK(embed_k_pack(NULL, 0, 4) == NULL);
}

/*
 * Column ranges of the packed product (embed_k_gemm_packed_cols, what
 * bert.c's threads split a query's products with), at every row count
 * 1..40, so every tile height g_pick_mr picks (12 / 10 on AVX-512, 6 / 5 /
 * 4 on AVX2) and its edges run: each range of whole panels, x and y with
 * rows wider than the product, against the reference; the pieces together
 * have the same bits as the whole product, and as each row computed
 * alone (a row's result does not depend on the tile it was in); columns
 * outside the range and the padding of y's rows are not written; a range
 * that does not start on a panel is refused.
 */
static void test_linear_packed_cols(void)
{
    int shapes[][2] = { {96, 64}, {45, 129}, {384, 384} };
    int level = embed_k_simd();
    size_t s;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int n = shapes[s][0], k = shapes[s][1], ldx = k + 3, ldy = n + 5, m, i, c;
        float *x = rand_array((size_t)40 * ldx, 1.0f);
        float *w = rand_array((size_t)n * k, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *xd = malloc((size_t)40 * k * sizeof(float));
        float *whole = malloc((size_t)40 * n * sizeof(float));
        float *one = malloc((size_t)n * sizeof(float));
        float *ref = malloc((size_t)40 * n * sizeof(float));
        float *y = malloc((size_t)40 * ldy * sizeof(float));
        float *work = malloc(embed_k_gemm_work(40, k) * sizeof(float));
        struct embed_k_packed *pk = embed_k_pack(w, n, k);
        float tol = 1e-5f * sqrtf((float)k) + 1e-5f;
        int ok_ref = 1, ok_bits = 1, ok_row = 1, ok_out = 1;

        T_CHECK(pk != NULL);
        if (!pk)
            continue;
        for (i = 0; i < 40; i++)    /* x without the wider rows, for the others */
            memcpy(xd + (size_t)i * k, x + (size_t)i * ldx, (size_t)k * sizeof(float));
        embed_k_linear_ref(xd, w, b, ref, 40, n, k);
        T_EQ_INT(embed_k_gemm_packed_cols(level, x, ldx, pk, 16, n, b, y, ldy, 1, work), -1);
        T_EQ_INT(embed_k_gemm_packed_cols(level, x, ldx, pk, 0, n + 1, b, y, ldy, 1, work), -1);
        for (m = 1; m <= 40 && level; m++) {
            T_EQ_INT(embed_k_gemm_packed(level, xd, pk, b, whole, m), 0);
            for (c = 0; c < n; c += 32) {
                int c1 = c + 64 < n ? c + 64 : n;   /* two panels, or to the end */

                for (i = 0; i < m * ldy; i++)
                    y[i] = NAN;
                T_EQ_INT(embed_k_gemm_packed_cols(level, x, ldx, pk, c, c1, b, y, ldy, m, work),
                         0);
                for (i = 0; i < m; i++) {
                    int j;

                    for (j = 0; j < ldy; j++) {
                        float v = y[(size_t)i * ldy + j];

                        if (j < c || j >= c1) {
                            ok_out &= v != v;
                            continue;
                        }
                        ok_ref &= fabsf(v - ref[(size_t)i * n + j]) < tol;
                        ok_bits &= memcmp(&v, &whole[(size_t)i * n + j], sizeof(v)) == 0;
                    }
                }
            }
            /* the last row alone, on a tile of height 1's choice */
            embed_k_gemm_packed(level, xd + (size_t)(m - 1) * k, pk, b, one, 1);
            ok_row &= memcmp(one, whole + (size_t)(m - 1) * n, (size_t)n * sizeof(float)) == 0;
        }
        T_CHECK(ok_ref);
        T_CHECK(ok_bits);
        T_CHECK(ok_row);
        T_CHECK(ok_out);
        if (!level)
            T_EQ_INT(embed_k_gemm_packed_cols(0, x, ldx, pk, 0, n, b, y, ldy, 1, work), -1);
        embed_k_packed_free(pk);
        free(x); free(w); free(b); free(xd); free(whole); free(one); free(ref); free(y);
        free(work);
    }
}

/* Weights packed at one level and used at the other (the panel width
 * follows the level at packing: 16 columns for AVX2, 32 for AVX-512; a
 * test or CAIRN_SIMD may change the level later): right all the same.
 * Runs where the CPU has AVX-512. */
static void test_packed_cross_level(void)
{
    int m = 20, n = 70, k = 129, from, i;
    float *x = rand_array((size_t)m * k, 1.0f), *w = rand_array((size_t)n * k, 0.5f);
    float *b = rand_array((size_t)n, 1.0f), *y = malloc((size_t)m * n * sizeof(float));
    float *ref = malloc((size_t)m * n * sizeof(float));

    embed_k_simd_enable(2);
    if (embed_k_simd() < 2) {
        T_SKIP("the CPU has no AVX-512: one level only");
        goto out;
    }
    embed_k_linear_ref(x, w, b, ref, m, n, k);
    for (from = 1; from <= 2; from++) {
        struct embed_k_packed *pk;

        embed_k_simd_enable(from);
        pk = embed_k_pack(w, n, k);
        T_CHECK(pk && embed_k_packed_bytes(pk) >= (size_t)n * k * sizeof(float));
        for (i = 0; pk && i < m * n; i++)
            y[i] = NAN;
        if (pk)
            T_EQ_INT(embed_k_gemm_packed(3 - from, x, pk, b, y, m), 0);
        T_CHECK(pk && max_abs_diff(y, ref, (size_t)m * n) < 1e-4f);
        embed_k_packed_free(pk);
    }
out:
    embed_k_simd_enable(2);
    free(x); free(w); free(b); free(y); free(ref);
}

/* embed_k_pack_kn: weights in the [in][out] layout, with a row stride
 * wider than n (USE-lite's q, k, v out of its fused qkv matrix), against
 * the kn reference, on the packed product and on the fallback (2
 * threads: OpenBLAS, or the packed product again without it). */
static void test_linear_packed_kn(void)
{
    int shapes[][4] = { {1, 1, 1, 1}, {5, 7, 3, 21}, {13, 33, 17, 33}, {37, 64, 256, 192},
                        {131, 45, 64, 50}, {40, 512, 1536, 512}, {7, 20, 1537, 60} };
    int level = embed_k_simd();
    size_t s;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], ld = shapes[s][3];
        float *x = rand_array((size_t)m * k, 1.0f);
        float *w = rand_array((size_t)k * ld, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *y1 = malloc((size_t)m * n * sizeof(float));
        float *y2 = malloc((size_t)m * n * sizeof(float));
        const float *wc = w + (ld - n);       /* the last n columns */
        struct embed_k_packed *pk = embed_k_pack_kn(wc, ld, n, k);
        float tol = 1e-5f * sqrtf((float)k) + 1e-5f;
        size_t i;
        int t;

        T_CHECK(pk != NULL);
        if (!pk)
            continue;
        T_EQ_INT(embed_k_packed_ldw(pk), ld);
        for (t = 0; t < 2; t++) {
            const float *bias = t ? NULL : b;

            for (i = 0; i < (size_t)m * n; i++)
                y1[i] = NAN;
            embed_k_linear_kn_ref(x, wc, ld, bias, y2, m, n, k);
            T_EQ_INT(embed_k_gemm_packed(level, x, pk, bias, y1, m), level ? 0 : -1);
            if (level)
                T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < tol);
            embed_k_set_threads(1 + t);
            for (i = 0; i < (size_t)m * n; i++)
                y1[i] = NAN;
            embed_k_linear_packed(x, pk, bias, y1, m);
            T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < tol);
        }
        embed_k_set_threads(1);
        embed_k_packed_free(pk);
        free(x); free(w); free(b); free(y1); free(y2);
    }
    {
        float w[6] = { 0 };

        T_CHECK(embed_k_pack_kn(w, 2, 3, 2) == NULL);   /* rows narrower than n */
        T_CHECK(embed_k_pack_kn(w, 3, 0, 2) == NULL);
    }
}

/* The [in][out] layout, also with a row stride wider than n (columns
 * picked out of a fused matrix). */
static void test_linear_kn(void)
{
    int shapes[][4] = { {1, 1, 1, 1}, {3, 5, 7, 5}, {20, 64, 96, 192}, {33, 17, 129, 51} };
    size_t s;

    embed_k_set_threads(1);
    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], ld = shapes[s][3];
        float *x = rand_array((size_t)m * k, 1.0f);
        float *w = rand_array((size_t)k * ld, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *y1 = calloc((size_t)m * n, sizeof(float));
        float *y2 = calloc((size_t)m * n, sizeof(float));

        embed_k_linear_kn(x, w + (ld - n), ld, b, y1, m, n, k);
        embed_k_linear_kn_ref(x, w + (ld - n), ld, b, y2, m, n, k);
        T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < 1e-4f);
        embed_k_linear_kn(x, w, ld, NULL, y1, m, n, k);
        embed_k_linear_kn_ref(x, w, ld, NULL, y2, m, n, k);
        T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < 1e-4f);
        free(x); free(w); free(b); free(y1); free(y2);
    }
    {
        /* [1 2] . [[1 0 5] [0 1 5]] (columns 0..1 of a 3-wide matrix) + [0 10] */
        float x[2] = { 1, 2 }, w[6] = { 1, 0, 5, 0, 1, 5 }, b[2] = { 0, 10 };
        float y[2];
        embed_k_linear_kn_ref(x, w, 3, b, y, 1, 2, 2);
        T_CHECK(y[0] == 1.0f && y[1] == 12.0f);
        embed_k_linear_kn(x, w, 3, b, y, 1, 2, 2);
        T_CHECK(y[0] == 1.0f && y[1] == 12.0f);
    }
}

static void test_layernorm(void)
{
    int rows = 7, dim = 65;
    float *x1 = rand_array((size_t)rows * dim, 3.0f);
    float *x2 = malloc((size_t)rows * dim * sizeof(float));
    float *res = rand_array((size_t)rows * dim, 1.0f);
    float *g = rand_array((size_t)dim, 1.0f);
    float *b = rand_array((size_t)dim, 1.0f);
    float h[4] = { 1, 2, 3, 4 }, one[4] = { 1, 1, 1, 1 }, zero[4] = { 0 };

    memcpy(x2, x1, (size_t)rows * dim * sizeof(float));
    embed_k_add_layernorm(x1, res, g, b, rows, dim, 1e-12f);
    embed_k_add_layernorm_ref(x2, res, g, b, rows, dim, 1e-12f);
    T_CHECK(max_abs_diff(x1, x2, (size_t)rows * dim) < 1e-5f);
    embed_k_add_layernorm(x1, NULL, g, b, rows, dim, 1e-5f);
    embed_k_add_layernorm_ref(x2, NULL, g, b, rows, dim, 1e-5f);
    T_CHECK(max_abs_diff(x1, x2, (size_t)rows * dim) < 1e-5f);
    /* [1 2 3 4]: mean 2.5, var 1.25 -> (x-2.5)/1.118034 */
    embed_k_add_layernorm(h, NULL, one, zero, 1, 4, 0.0f);
    T_CHECK(fabsf(h[0] + 1.3416408f) < 1e-5f && fabsf(h[3] - 1.3416408f) < 1e-5f);
    free(x1); free(x2); free(res); free(g); free(b);
}

/* ReLU at the level in force has the reference loop's bits: x where
 * x > 0, +0 for everything else (-0, NaN, -inf, the denormals below 0),
 * in arrays of every length 1..70 (the 32- and 8-wide steps and the
 * tail) at every offset of the special values, and one of 100,003. Fails
 * if the vector form keeps a NaN or a -0 (vmaxps with its operands
 * swapped) or drops the tail. */
static void test_relu(void)
{
    const float special[9] = { NAN, -0.0f, 0.0f, INFINITY, -INFINITY, 1e-40f, -1e-40f,
                               FLT_MAX, -FLT_MAX };
    size_t n = 100003, i, len;
    float *a = rand_array(n, 4.0f), *c = malloc(n * sizeof(float));
    int same = 1;

    for (len = 1; len <= 71; len++) {
        size_t m = len <= 70 ? len : n;

        for (i = 0; i < m; i += 3)
            a[i] = special[(i / 3 + len) % 9];
        memcpy(c, a, m * sizeof(float));
        embed_k_relu(a, m);
        embed_k_relu_ref(c, m);
        for (i = 0; i < m; i++)
            same &= memcmp(a + i, c + i, sizeof(float)) == 0;
        /* the next round's values are relu's outputs: put negatives back */
        for (i = 1; i < m; i += 2)
            a[i] = -a[i] - 0.5f;
    }
    T_CHECK(same);
    c[0] = NAN; c[1] = -0.0f; c[2] = -3.0f; c[3] = 2.5f;
    embed_k_relu(c, 4);
    T_CHECK(!signbit(c[0]) && c[0] == 0.0f && !signbit(c[1]) && c[1] == 0.0f &&
            c[2] == 0.0f && c[3] == 2.5f);
    free(a); free(c);
}

static void test_activations(void)
{
    size_t n = 1001;
    float *a = rand_array(n, 6.0f), *c = malloc(n * sizeof(float));
    float v[3] = { -1.0f, 0.0f, 1.0f };

    memcpy(c, a, n * sizeof(float));
    embed_k_gelu(a, n);
    embed_k_gelu_ref(c, n);
    T_CHECK(max_abs_diff(a, c, n) < 1e-5f);
    /* gelu(1) = 0.8413447, gelu(-1) = -0.1586553 (exact erf form) */
    embed_k_gelu(v, 3);
    T_CHECK(fabsf(v[0] + 0.1586553f) < 1e-6f && v[1] == 0.0f &&
            fabsf(v[2] - 0.8413447f) < 1e-6f);
    v[0] = 1.0f;
    embed_k_gelu_tanh(v, 1);
    T_CHECK(fabsf(v[0] - 0.8411920f) < 1e-5f);
    v[0] = -2.0f; v[1] = 3.0f;
    embed_k_relu(v, 2);
    T_CHECK(v[0] == 0.0f && v[1] == 3.0f);
    v[0] = 0.5f;
    embed_k_tanh(v, 1);
    T_CHECK(fabsf(v[0] - 0.46211716f) < 1e-6f);
    free(a); free(c);
}

static void test_softmax(void)
{
    float a[50], c[50], big[3] = { 1000.0f, 1000.0f, -1000.0f };
    float s = 0.0f;
    int i;

    for (i = 0; i < 50; i++)
        a[i] = c[i] = frand() * 20.0f;
    embed_k_softmax(a, 50);
    embed_k_softmax_ref(c, 50);
    T_CHECK(max_abs_diff(a, c, 50) < 1e-6f);
    for (i = 0; i < 50; i++)
        s += a[i];
    T_CHECK(fabsf(s - 1.0f) < 1e-5f);
    embed_k_softmax(big, 3);   /* no overflow thanks to max subtraction */
    T_CHECK(fabsf(big[0] - 0.5f) < 1e-6f && big[2] == 0.0f);
}

/* The products and attention with their work space given (one block
 * reused, holding the last call's leftovers: use.c's arena) give the bits
 * of the calls that allocate their own, f32 and int8 (enc55). */
static void test_given_work(void)
{
    int shapes[][3] = { {1, 7, 3}, {5, 33, 17}, {20, 512, 256}, {20, 256, 1024}, {37, 64, 1537} };
    size_t s, i;
    float *work = NULL, *aw = NULL;
    int same = 1;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], q8;
        float *x = rand_array((size_t)m * k, 1.0f), *w = rand_array((size_t)k * n, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *y1 = malloc((size_t)m * n * sizeof(float)), *y2 = malloc((size_t)m * n * sizeof(float));
        size_t nw = embed_k_gemm_work(m, k);

        free(work);
        work = malloc(nw * sizeof(float));
        T_CHECK(work && y1 && y2);
        if (!work || !y1 || !y2)
            break;
        for (i = 0; i < nw; i++)
            work[i] = NAN;
        for (q8 = 0; q8 < 2; q8++) {
            struct embed_k_packed *pk = q8 ? embed_k_pack_q8_kn(w, n, n, k)
                                           : embed_k_pack_kn(w, n, n, k);

            T_CHECK(pk != NULL);
            if (!pk)
                continue;
            embed_k_linear_packed(x, pk, b, y1, m);
            embed_k_linear_packed_w(x, pk, b, y2, m, work);
            same &= memcmp(y1, y2, (size_t)m * n * sizeof(float)) == 0;
            embed_k_linear_packed_w(x, pk, b, y2, m, work);     /* the block used again */
            same &= memcmp(y1, y2, (size_t)m * n * sizeof(float)) == 0;
            embed_k_packed_free(pk);
        }
        free(x); free(w); free(b); free(y1); free(y2);
    }
    {
        int batch = 2, seq = 37, heads = 4, hd = 16, hidden = 64, lens[2] = { 37, 9 };
        size_t n = (size_t)batch * seq * hidden, na = embed_k_attention_work(seq, hd);
        float *q = rand_array(n, 1.0f), *k = rand_array(n, 1.0f), *v = rand_array(n, 1.0f);
        float *c1 = malloc(n * sizeof(float)), *c2 = malloc(n * sizeof(float));
        float *scratch = malloc((size_t)seq * seq * sizeof(float));

        aw = aligned_alloc(64, (na * sizeof(float) + 63) & ~(size_t)63);
        T_CHECK(aw && c1 && c2 && scratch);
        if (aw && c1 && c2 && scratch) {
            for (i = 0; i < na; i++)
                aw[i] = NAN;
            embed_k_attention(q, k, v, c1, lens, batch, seq, heads, hd, scratch);
            embed_k_attention_w(q, k, v, c2, lens, batch, seq, heads, hd, scratch, aw);
            same &= memcmp(c1, c2, n * sizeof(float)) == 0;
        }
        free(q); free(k); free(v); free(c1); free(c2); free(scratch);
    }
    T_CHECK(same);
    free(work);
    free(aw);
}

static void test_attention(void)
{
    int batch = 3, seq = 11, heads = 4, hd = 16, hidden = 64;
    int lens[3] = { 11, 1, 6 };
    size_t n = (size_t)batch * seq * hidden;
    float *q = rand_array(n, 1.0f), *k = rand_array(n, 1.0f);
    float *v = rand_array(n, 1.0f);
    float *c1 = rand_array(n, 1.0f), *c2 = rand_array(n, 1.0f);
    float *scratch = malloc((size_t)seq * seq * sizeof(float));
    int i, zero_pad = 1;

    embed_k_attention(q, k, v, c1, lens, batch, seq, heads, hd, scratch);
    embed_k_attention_ref(q, k, v, c2, lens, batch, seq, heads, hd);
    T_CHECK(max_abs_diff(c1, c2, n) < 1e-5f);
    /* padding rows are zero */
    for (i = lens[1] * hidden; i < seq * hidden; i++)
        if (c1[(size_t)seq * hidden + i] != 0.0f)
            zero_pad = 0;
    T_CHECK(zero_pad);
    /* A 1-token sequence attends only to itself: ctx row == v row. */
    T_CHECK(max_abs_diff(c1 + (size_t)seq * hidden, v + (size_t)seq * hidden,
                         (size_t)hidden) < 1e-6f);
    /* Changing a padding key must not change anything. */
    k[(size_t)(2 * seq + 8) * hidden + 3] += 100.0f;
    v[(size_t)(2 * seq + 9) * hidden + 5] += 100.0f;
    embed_k_attention(q, k, v, c2, lens, batch, seq, heads, hd, scratch);
    T_CHECK(max_abs_diff(c1, c2, n) == 0.0f);
    free(q); free(k); free(v); free(c1); free(c2); free(scratch);
}

/* embed_k_attention_packed head by head, at the level in force (test_attention
 * reaches it only where the packed product is the policy): one to a few
 * hundred tokens (several row blocks and score panels), head sizes under,
 * at and over the 32-column panel. */
static void test_attention_packed(void)
{
    int shapes[][2] = { {1, 16}, {7, 32}, {40, 40}, {130, 32}, {300, 8} };
    int level = embed_k_simd(), heads = 2;
    size_t s;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int n = shapes[s][0], hd = shapes[s][1], hidden = heads * hd, h;
        size_t sz = (size_t)n * hidden;
        float *q = rand_array(sz, 1.0f), *k = rand_array(sz, 1.0f), *v = rand_array(sz, 1.0f);
        float *c1 = rand_array(sz, 1.0f), *c2 = rand_array(sz, 1.0f);
        float *scores = malloc((size_t)n * n * sizeof(float));
        float *work = aligned_alloc(64, (embed_k_attention_work(n, hd) * sizeof(float) + 63) &
                                        ~(size_t)63);

        for (h = 0; h < heads; h++)
            T_EQ_INT(embed_k_attention_packed(level, q + h * hd, k + h * hd, v + h * hd,
                                              c1 + h * hd, hidden, n, hd,
                                              1.0f / sqrtf((float)hd), scores, work),
                     level ? 0 : -1);
        embed_k_attention_ref(q, k, v, c2, &n, 1, n, heads, hd);
        if (level)
            T_CHECK(max_abs_diff(c1, c2, sz) < 1e-5f);
        free(q); free(k); free(v); free(c1); free(c2); free(scores); free(work);
    }
}

/* embed_k_attention sizes the packed work area once for the padded length
 * and runs every shorter sequence of the batch in it: a 300-token text in
 * a batch padded to 512 once wrote past it (the row block of packed scores
 * grows as the inner size shrinks). Guard floats after the area must stay
 * untouched for every length up to the padded one. */
static void test_attention_work_bound(void)
{
    int level = embed_k_simd(), seqs[] = { 140, 512 }, hd = 32;
    size_t s;

    if (!level)
        return;
    for (s = 0; s < sizeof(seqs) / sizeof(seqs[0]); s++) {
        int seq = seqs[s], n, g, intact = 1;
        size_t sz = (size_t)seq * hd, need = embed_k_attention_work(seq, hd);
        float *q = rand_array(sz, 1.0f), *k = rand_array(sz, 1.0f), *v = rand_array(sz, 1.0f);
        float *c = rand_array(sz, 1.0f), *scores = malloc((size_t)seq * seq * sizeof(float));
        /* 64-byte aligned, as the packed panels are read with aligned loads */
        float *work = aligned_alloc(64, ((need + 256) * sizeof(float) + 63) & ~(size_t)63);

        for (n = 1; n <= seq; n += (n < 200 ? 37 : 23)) {
            for (g = 0; g < 256; g++)
                work[need + (size_t)g] = -7.25f;
            T_EQ_INT(embed_k_attention_packed(level, q, k, v, c, hd, n, hd, 0.125f, scores,
                                              work), 0);
            for (g = 0; g < 256; g++)
                if (work[need + (size_t)g] != -7.25f)
                    intact = 0;
        }
        T_CHECK(intact);
        free(q); free(k); free(v); free(c); free(scores); free(work);
    }
}

/* The fast GELU over a dense grid of [-9, 9] against erfc in double
 * (1 + erf loses everything below x ~ -5.5 in double, erfc does not):
 * relative error < 1e-6 where |x| <= 5 and absolute < 1e-6 everywhere
 * for the AVX2 form; the portable form (glibc erff) only promises the
 * absolute bound. */
static void test_gelu_accuracy(void)
{
    size_t n = 180001, i;
    float *a = malloc(n * sizeof(float));
    double worst_rel = 0.0, worst_abs = 0.0;

    for (i = 0; i < n; i++)
        a[i] = -9.0f + 18.0f * (float)i / (float)(n - 1);
    embed_k_gelu(a, n);
    for (i = 0; i < n; i++) {
        double x = -9.0f + 18.0f * (float)i / (float)(n - 1);
        double r = 0.5 * x * erfc(-x / sqrt(2.0)), d = fabs(a[i] - r);
        if (!(d <= worst_abs))
            worst_abs = d;
        if (fabs(x) <= 5.0 && r != 0.0 && !(d / fabs(r) <= worst_rel))
            worst_rel = d / fabs(r);
    }
    printf("# gelu (%s): max abs error %.3g, max rel error %.3g (|x| <= 5)\n",
           embed_k_simd_name(embed_k_simd()), worst_abs, worst_rel);
    T_CHECK(worst_abs < 1e-6);
    if (embed_k_simd())
        T_CHECK(worst_rel < 1e-6);
    /* odd lengths: the tail is handled like the body */
    for (i = 0; i < 13; i++)
        a[i] = (float)i - 6.0f;
    embed_k_gelu(a, 13);
    T_CHECK(fabsf(a[5] + 0.1586553f) < 1e-6f && a[6] == 0.0f &&
            fabsf(a[12] - 6.0f) < 1e-6f);
    free(a);
}

/* GELU over an array (the AVX2 form runs 16 floats at a time in two
 * chains, then 8, then a tail) gives each value the bits GELU of it alone
 * gives (a tail of one): the widths are the same operations per lane.
 * Fails if the two chains' values are crossed or one step differs. */
static void test_gelu_lanes(void)
{
    size_t n = 1000, i;
    float *a = rand_array(n, 6.0f), *c = malloc(n * sizeof(float));
    int same = 1;

    memcpy(c, a, n * sizeof(float));
    embed_k_gelu(a, n);
    for (i = 0; i < n; i++) {
        embed_k_gelu(c + i, 1);
        same &= memcmp(a + i, c + i, sizeof(float)) == 0;
    }
    T_CHECK(same);
    free(a); free(c);
}

/* The AVX-512 GELU (16 lanes) gives every value the AVX2 form's bits
 * (kernels.c: the same operations per lane), so a model's vectors do not
 * move with the level: a dense grid over [-100, 100] (e^x's clamps at
 * -87.3 and 88.3 included), the values around 0, the infinities and NaN,
 * in arrays of every length 1..40 (the masked tails) and one of 100,001.
 * Fails if one step of the 16-lane form differs from the 8-lane one. */
static void test_gelu_levels(void)
{
    size_t n = 100001, i, len;
    float *a = malloc(n * sizeof(float)), *c = malloc(n * sizeof(float));
    const float special[10] = { INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e-40f, -1e-40f,
                                FLT_MAX, -FLT_MAX, -87.3f };
    int same = 1;

    embed_k_simd_enable(2);
    if (embed_k_simd() < 2) {
        T_SKIP("GELU at AVX-512 against AVX2: no AVX-512 here (the CPU's, or CAIRN_SIMD's cap)");
        free(a); free(c);
        return;
    }
    /* every fifth value a special one, at a lane that moves with len */
    for (len = 1; len <= 41; len++) {
        size_t m = len <= 40 ? len : n;

        for (i = 0; i < m; i++)
            a[i] = i % 5 == 0 ? special[(i / 5 + len) % 10]
                              : -100.0f + 200.0f * (float)((i * 7919 + len) % n) / (float)(n - 1);
        memcpy(c, a, m * sizeof(float));
        embed_k_simd_enable(2);
        embed_k_gelu(a, m);
        embed_k_simd_enable(1);
        embed_k_gelu(c, m);
        for (i = 0; i < m; i++)
            same &= memcmp(a + i, c + i, sizeof(float)) == 0;
    }
    embed_k_simd_enable(2);
    T_CHECK(same);
    free(a); free(c);
}

/* The AVX-512 softmax (e^x on 16 lanes, the sum kept in AVX2's order)
 * gives each row the AVX2 form's bits: rows of every length 1..300 (the
 * 32-, 16- and 8-wide steps and the tail), with large and tiny spreads
 * and -inf (a masked score). Fails if the sum's order or one step of
 * e^x differs. */
static void test_softmax_levels(void)
{
    float a[300], c[300];
    int n, i, same = 1;

    embed_k_simd_enable(2);
    if (embed_k_simd() < 2) {
        T_SKIP("softmax at AVX-512 against AVX2: no AVX-512 here (the CPU's, or CAIRN_SIMD's cap)");
        return;
    }
    for (n = 1; n <= 300; n++) {
        float spread = n % 3 == 0 ? 200.0f : n % 3 == 1 ? 5.0f : 0.01f;

        for (i = 0; i < n; i++)
            a[i] = spread * frand();
        if (n % 7 == 0)
            a[n / 2] = -INFINITY;
        memcpy(c, a, (size_t)n * sizeof(float));
        embed_k_simd_enable(2);
        embed_k_softmax(a, n);
        embed_k_simd_enable(1);
        embed_k_softmax(c, n);
        same &= memcmp(a, c, (size_t)n * sizeof(float)) == 0;
    }
    embed_k_simd_enable(2);
    T_CHECK(same);
}

/* Softmax rows of every length 1..40 (tails of the 8-wide form), with
 * large and tiny spreads. */
static void test_softmax_lengths(void)
{
    float a[40], c[40];
    int n, i, ok = 1;

    for (n = 1; n <= 40; n++) {
        float spread = n % 3 == 0 ? 200.0f : n % 3 == 1 ? 5.0f : 0.01f;
        for (i = 0; i < n; i++)
            a[i] = c[i] = frand() * spread;
        embed_k_softmax(a, n);
        embed_k_softmax_ref(c, n);
        if (max_abs_diff(a, c, (size_t)n) > 1e-6f)
            ok = 0;
    }
    T_CHECK(ok);
}

/* Layer norm with widths that are not multiples of 8. */
static void test_layernorm_widths(void)
{
    int dims[4] = { 1, 7, 13, 385 }, i, ok = 1;

    for (i = 0; i < 4; i++) {
        int rows = 3, dim = dims[i];
        size_t nn = (size_t)rows * dim;
        float *x1 = rand_array(nn, 3.0f), *x2 = malloc(nn * sizeof(float));
        float *res = rand_array(nn, 1.0f), *g = rand_array((size_t)dim, 1.0f);
        float *b = rand_array((size_t)dim, 1.0f);

        memcpy(x2, x1, nn * sizeof(float));
        embed_k_add_layernorm(x1, res, g, b, rows, dim, 1e-12f);
        embed_k_add_layernorm_ref(x2, res, g, b, rows, dim, 1e-12f);
        if (max_abs_diff(x1, x2, nn) > 1e-5f)
            ok = 0;
        free(x1); free(x2); free(res); free(g); free(b);
    }
    T_CHECK(ok);
}

/* Layer norm of many rows (the AVX2 form runs two rows side by side, then
 * a last odd one) gives each row the bits it gets alone, with and without
 * the residual, at widths on and off 8. Fails if the two rows' sums or
 * factors are crossed. */
static void test_layernorm_pairs(void)
{
    int dims[3] = { 384, 13, 389 }, i, r, same = 1;

    for (i = 0; i < 3; i++) {
        int rows = 7, dim = dims[i], with;
        size_t nn = (size_t)rows * dim;
        float *x0 = rand_array(nn, 3.0f), *x1 = malloc(nn * sizeof(float));
        float *x2 = malloc(nn * sizeof(float)), *res = rand_array(nn, 1.0f);
        float *g = rand_array((size_t)dim, 1.0f), *b = rand_array((size_t)dim, 1.0f);

        for (with = 0; with < 2; with++) {
            memcpy(x1, x0, nn * sizeof(float));
            memcpy(x2, x0, nn * sizeof(float));
            embed_k_add_layernorm(x1, with ? res : NULL, g, b, rows, dim, 1e-12f);
            for (r = 0; r < rows; r++)
                embed_k_add_layernorm(x2 + (size_t)r * dim, with ? res + (size_t)r * dim : NULL,
                                      g, b, 1, dim, 1e-12f);
            same &= memcmp(x1, x2, nn * sizeof(float)) == 0;
        }
        free(x0); free(x1); free(x2); free(res); free(g); free(b);
    }
    T_CHECK(same);
}

static void test_pool_norm(void)
{
    /* batch 2, seq 3, dim 2 */
    float x[12] = { 1, 2, 3, 4, 100, 100,   5, 6, 100, 100, 100, 100 };
    int lens[2] = { 2, 1 };
    float out[4];

    embed_k_mean_pool(x, lens, 2, 3, 2, out);
    T_CHECK(out[0] == 2.0f && out[1] == 3.0f && out[2] == 5.0f && out[3] == 6.0f);
    embed_k_cls_pool(x, 2, 3, 2, out);
    T_CHECK(out[0] == 1.0f && out[1] == 2.0f && out[2] == 5.0f && out[3] == 6.0f);
    out[0] = 3; out[1] = 4; out[2] = 0; out[3] = 0;
    embed_k_l2_normalize(out, 2, 2);
    T_CHECK(fabsf(out[0] - 0.6f) < 1e-7f && fabsf(out[1] - 0.8f) < 1e-7f);
    T_CHECK(out[2] == 0.0f && out[3] == 0.0f);
}

int main(void)
{
    int pass;

    printf("# hand-vectorised kernels: level %d (0 none, 1 AVX2+FMA, 2 +AVX-512)\n",
           embed_k_simd());
    T_RUN(test_linear_kn);
    for (pass = 2; pass >= 0; pass--) {
        /* every level the CPU has, down to the portable loops (0) */
        embed_k_simd_enable(pass);
        if (embed_k_simd() != pass)
            continue;
        T_RUN(test_linear);
        T_RUN(test_linear_packed);
        T_RUN(test_linear_packed_cols);
        T_RUN(test_linear_packed_kn);
        T_RUN(test_layernorm);
        T_RUN(test_layernorm_widths);
        T_RUN(test_layernorm_pairs);
        T_RUN(test_activations);
        T_RUN(test_relu);
        T_RUN(test_gelu_accuracy);
        T_RUN(test_gelu_lanes);
        T_RUN(test_softmax);
        T_RUN(test_softmax_lengths);
        T_RUN(test_attention);
        T_RUN(test_given_work);
        T_RUN(test_attention_packed);
        T_RUN(test_attention_work_bound);
    }
    embed_k_simd_enable(2);
    T_RUN(test_gelu_levels);
    T_RUN(test_softmax_levels);
    T_RUN(test_packed_cross_level);
    T_RUN(test_pool_norm);
    return T_DONE();
}
