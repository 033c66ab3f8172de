/*
 * bench_gemm.c: GFLOP/s of the encoder's linear layer, y = x w^T + b, at
 * the L12 shapes (n x k = 384 x 384, 1536 x 384, 384 x 1536) and a few
 * row counts, on each path: OpenBLAS sgemm as loaded (the baseline, with
 * whatever OPENBLAS_CORETYPE says), embed_k_linear (what runs without
 * packed weights), and the packed product (gemm.c) at AVX-512 and AVX2.
 * One thread. First the time to pack a whole L12 encoder (bench=gemm_pack),
 * then one key=value line per path and shape: the median
 * of 7 timed runs of >= 20 ms each, and the best of them (for a busy
 * machine, where the best is the least disturbed).
 *
 * usage: bench_gemm [--rows M] [--level L] [--q8-query | --f32-query]
 *   --rows M    only m = M rows (default 20, 64, 512 and 2048)
 *   --level L   cap the SIMD level (embed_k_simd_enable), e.g. 1 to see
 *               embed_k_linear as on a CPU without AVX-512
 *   --q8-query  instead: the int8 products of one L12 query (72 distinct
 *               weights, as cold as in a pass; m = 20 or --rows) at each
 *               int8 level from AVX2 up that the CPU has, CPU ms per
 *               query, median and p10 of 60 (issue 22)
 *   --f32-query the same for the f32 products: on the weights in place
 *               (embed_k_linear, level=in_place: a process's first query)
 *               and packed (embed_k_gemm_packed_cols) at each SIMD level
 *               from AVX2 up
 */
#include "embed/kernels.h"
#include "bench.h"

#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { P_BLAS, P_LINEAR, P_PACKED512, P_PACKED2, P_N };
static const char *const pname[P_N] = { "openblas", "linear", "packed_avx512", "packed_avx2" };

static void call(int path, const float *x, const float *w, const struct embed_k_packed *pk,
                 const float *b, float *y, int m, int n, int k)
{
    switch (path) {
    case P_BLAS:
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, w, k,
                    0.0f, y, n);
        break;
    case P_LINEAR:
        embed_k_linear(x, w, b, y, m, n, k);
        break;
    default:
        embed_k_gemm_packed(path == P_PACKED512 ? 2 : 1, x, pk, b, y, m);
    }
}

/* --q8-query and --f32-query: the products of one L12 query over 72
 * distinct weights (as cold as in a pass), int8 (embed_k_q8_cols, each
 * int8 level) or f32 packed (embed_k_gemm_packed_cols, each SIMD level). */
static void query_products(int m, int q8)
{
    static const int shape[6][2] = { { 384, 384 }, { 384, 384 }, { 384, 384 },
                                     { 384, 384 }, { 1536, 384 }, { 384, 1536 } };
    struct embed_k_q8 *q[72] = { 0 };
    struct embed_k_packed *pk[72] = { 0 };
    float *x = malloc((size_t)m * 1536 * sizeof(float)), *y = malloc((size_t)m * 1536 * sizeof(float));
    float *b = calloc(1536, sizeof(float)), *w[72];
    size_t wsz = q8 ? embed_k_q8_work(m, 1536) : embed_k_gemm_work(m, 1536) * sizeof(float);
    void *work = malloc(wsz);
    double t[60];
    int i, l, lv, r, top = q8 ? embed_k_q8_level_at(embed_k_simd()) : embed_k_simd();

    for (i = 0; x && i < m * 1536; i++)
        x[i] = (float)(i % 17) * 0.01f - 0.08f;
    for (l = 0; l < 72; l++) {   /* f32 packing keeps w: its panels point at it */
        w[l] = malloc((size_t)1536 * 384 * sizeof(float));
        for (i = 0; w[l] && i < shape[l % 6][0] * shape[l % 6][1]; i++)
            w[l][i] = (float)((i + l) % 13) * 0.01f - 0.06f;
        if (w[l] && q8)
            q[l] = embed_k_q8_new(w[l], shape[l % 6][0], shape[l % 6][1]);
        else if (w[l])
            pk[l] = embed_k_pack(w[l], shape[l % 6][0], shape[l % 6][1]);
    }
    /* level 0 of f32: embed_k_linear on the weights in place (a process's
     * first query, before packing), at the CPU's own level */
    for (lv = q8; lv <= top; lv++) {
        for (r = 0; r < 60 && x && y && b && work; r++) {
            double t0 = bench_cpu_ms();

            for (l = 0; l < 72 && (q8 ? (void *)q[l] : (void *)pk[l]); l++) {
                if (!q8 && lv == 0)
                    embed_k_linear(x, w[l], b, y, m, shape[l % 6][0], shape[l % 6][1]);
                else if (q8)
                    embed_k_q8_cols(lv, x, shape[l % 6][1], q[l], 0, shape[l % 6][0], b, y,
                                    shape[l % 6][0], m, work);
                else
                    embed_k_gemm_packed_cols(lv, x, shape[l % 6][1], pk[l], 0, shape[l % 6][0],
                                             b, y, shape[l % 6][0], m, work);
            }
            t[r] = bench_cpu_ms() - t0;
        }
        if (r == 60) {
            qsort(t, 60, sizeof(t[0]), cmp_double);
            printf("bench=gemm_%s_query level=%s m=%d cpu_ms_p50=%.3f cpu_ms_p10=%.3f\n",
                   q8 ? "q8" : "f32",
                   q8 ? embed_k_q8_level_name(lv) : lv >= 2 ? "avx512" : lv ? "avx2" : "in_place",
                   m, t[30], t[6]);
        }
    }
    for (l = 0; l < 72; l++) {
        embed_k_q8_free(q[l]);
        if (pk[l])
            embed_k_packed_free(pk[l]);
        free(w[l]);
    }
    free(x); free(y); free(b); free(work);
}

int main(int argc, char **argv)
{
    static const int nk[3][2] = { { 384, 384 }, { 1536, 384 }, { 384, 1536 } };
    int rows[4] = { 20, 64, 512, 2048 }, nrows = 4, s, r, p, i;

    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--q8-query") == 0 || strcmp(argv[i], "--f32-query") == 0) {
            int q8 = argv[i][2] == 'q';

            for (i = 1; i + 1 < argc; i++)
                if (strcmp(argv[i], "--rows") == 0)
                    rows[0] = atoi(argv[i + 1]);
            query_products(rows[0] > 0 ? rows[0] : 20, q8);
            return 0;
        }
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--rows") == 0) {
            rows[0] = atoi(argv[i + 1]);
            nrows = 1;
        } else if (strcmp(argv[i], "--level") == 0) {
            embed_k_simd_enable(atoi(argv[i + 1]));
        }
    }
    openblas_set_num_threads(1);
    embed_k_set_threads(1);
    {
        /* packing a whole L12 encoder once: 12 layers of 4 x (384 x 384),
         * 1536 x 384 and 384 x 1536 (what bert.c does at the first batch) */
        static const int shape[6][2] = { { 384, 384 }, { 384, 384 }, { 384, 384 },
                                         { 384, 384 }, { 1536, 384 }, { 384, 1536 } };
        float *w[72];
        struct embed_k_packed *pk[72];
        size_t bytes = 0, j;
        double t0, t1;

        for (i = 0; i < 72; i++) {   /* written, so the pages are real */
            size_t n = (size_t)shape[i % 6][0] * shape[i % 6][1];

            w[i] = malloc(n * sizeof(float));
            for (j = 0; w[i] && j < n; j++)
                w[i][j] = (float)(j % 7) * 0.01f;
        }
        t0 = os_now_ms();
        for (i = 0; i < 72; i++) {
            pk[i] = w[i] ? embed_k_pack(w[i], shape[i % 6][0], shape[i % 6][1]) : NULL;
            bytes += pk[i] ? embed_k_packed_bytes(pk[i]) : 0;
        }
        t1 = os_now_ms();
        printf("bench=gemm_pack model=L12 ms=%.1f mb=%.1f\n", t1 - t0, bytes / 1e6);
        for (i = 0; i < 72; i++) {
            embed_k_packed_free(pk[i]);
            free(w[i]);
        }
    }
    for (r = 0; r < nrows; r++) {
        for (s = 0; s < 3; s++) {
            int m = rows[r], n = nk[s][0], k = nk[s][1];
            float *x = malloc((size_t)m * k * sizeof(float));
            float *w = malloc((size_t)n * k * sizeof(float));
            float *b = calloc((size_t)n, sizeof(float));
            float *y = malloc((size_t)m * n * sizeof(float));
            struct embed_k_packed *pk;

            for (i = 0; i < m * k; i++)
                x[i] = (float)(i % 17) * 0.01f;
            for (i = 0; i < n * k; i++)
                w[i] = (float)(i % 13) * 0.01f;
            pk = embed_k_pack(w, n, k);
            for (p = 0; p < P_N && pk; p++) {
                double t[7], t0, flop = 2.0 * m * n * k;
                int reps, j;

                if ((p == P_PACKED512 && embed_k_simd() < 2) ||
                    (p == P_PACKED2 && embed_k_simd() < 1))
                    continue;
                call(p, x, w, pk, b, y, m, n, k);
                for (j = 0; j < 7; j++) {
                    reps = 0;
                    t0 = os_now_ms();
                    do {
                        call(p, x, w, pk, b, y, m, n, k);
                        reps++;
                    } while (os_now_ms() - t0 < 20.0);
                    t[j] = (os_now_ms() - t0) / reps;
                }
                qsort(t, 7, sizeof(t[0]), cmp_double);
                printf("bench=gemm path=%s m=%d n=%d k=%d us=%.1f gflops=%.1f best=%.1f\n",
                       pname[p], m, n, k, t[3] * 1e3, flop / (t[3] * 1e6), flop / (t[0] * 1e6));
            }
            embed_k_packed_free(pk);
            free(x); free(w); free(b); free(y);
        }
    }
    return 0;
}
