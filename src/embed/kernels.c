/*
 * kernels.c: the encoder's numeric kernels (see kernels.h).
 *
 * The matrix products go to OpenBLAS's cblas_sgemm: on this machine it
 * reaches ~100 GFLOP/s per core at encoder shapes (docs perf-anchors §1),
 * far beyond anything a hand loop does, and they are >95% of the FLOPs.
 * Everything else is memory-bound element-wise work written as plain loops
 * over contiguous rows. Each fast kernel has a scalar reference `*_ref`
 * (double accumulators, no BLAS) used only by the tests.
 *
 * OpenBLAS is not linked: it is dlopen'ed at the first matrix product (or
 * embed_k_set_threads), because its constructor (thread pool, buffers)
 * costs ~5 ms at every process start, and most cairn processes (hooks,
 * recall without a model) never encode. If it cannot be loaded, or
 * CAIRN_BLAS=none is set, the products run on k_sgemm_scalar: the same
 * results, far slower; embed_k_note() says so, for the caller to show.
 */
#include "embed/kernels.h"

#include "util/dl.h"

#include <cblas.h>          /* enums and blasint only: no symbol is linked */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- BLAS, loaded on first use ---------------------------------------- */

static struct {
    void (*sgemm)(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE,
                  blasint, blasint, blasint, float, const float *, blasint,
                  const float *, blasint, float, float *, blasint);
    void (*set_threads)(int);
} k_blas;                   /* all NULL: the scalar path */
static char k_note[512];
static pthread_once_t k_once = PTHREAD_ONCE_INIT;

static void k_init(void)
{
    static const char *const names[] = {"cblas_sgemm", "openblas_set_num_threads"};
    void *syms[2];
    const char *env = getenv("CAIRN_BLAS");
    char why[400];

    if (env && strcmp(env, "none") == 0) {
        snprintf(k_note, sizeof(k_note), "CAIRN_BLAS=none: matrix products "
                 "on the scalar fallback (slow)");
        return;
    }
    if (!dl_load("libopenblas.so.0", "libopenblas0", names, syms, 2, why, sizeof(why))) {
        snprintf(k_note, sizeof(k_note), "%s; matrix products on the scalar "
                 "fallback (slow)", why);
        return;
    }
    /* dlsym gives object pointers; POSIX guarantees they convert. */
    k_blas.sgemm = (__typeof__(k_blas.sgemm))syms[0];
    k_blas.set_threads = (__typeof__(k_blas.set_threads))syms[1];
}

int embed_k_blas(void)
{
    pthread_once(&k_once, k_init);
    return k_blas.sgemm != NULL;
}

const char *embed_k_note(void)
{
    pthread_once(&k_once, k_init);
    return k_note;
}

/*
 * C[m][n] = alpha * A[m][k] . op(B) + beta * C, row-major, A not
 * transposed; op(B) is B[k][n] (trans 0) or B[n][k]^T (trans 1). As BLAS
 * does, C is not read when beta is 0. Loops are ordered so the inner one
 * runs over contiguous memory and vectorises: a row update for B[k][n], a
 * dot product with eight partial sums for B[n][k].
 */
static void k_sgemm_scalar(int trans, int m, int n, int k, float alpha,
                           const float *a, int lda, const float *b, int ldb,
                           float beta, float *c, int ldc)
{
    int i, j, t, u;

    for (i = 0; i < m; i++) {
        const float *ar = a + (size_t)i * lda;
        float *cr = c + (size_t)i * ldc;

        if (!trans) {
            for (j = 0; j < n; j++)
                cr[j] = beta == 0.0f ? 0.0f : beta * cr[j];
            for (t = 0; t < k; t++) {
                const float *br = b + (size_t)t * ldb;
                float av = alpha * ar[t];
                for (j = 0; j < n; j++)
                    cr[j] += av * br[j];
            }
            continue;
        }
        for (j = 0; j < n; j++) {
            const float *br = b + (size_t)j * ldb;
            float s[8] = {0}, sum;

            for (t = 0; t + 8 <= k; t += 8)
                for (u = 0; u < 8; u++)
                    s[u] += ar[t + u] * br[t + u];
            sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
            for (; t < k; t++)
                sum += ar[t] * br[t];
            cr[j] = alpha * sum + (beta == 0.0f ? 0.0f : beta * cr[j]);
        }
    }
}

/* Row-major sgemm with A as is and B transposed or not: OpenBLAS when it
 * loaded, the scalar loops otherwise. */
static void k_sgemm(int trans, int m, int n, int k, float alpha,
                    const float *a, int lda, const float *b, int ldb,
                    float beta, float *c, int ldc)
{
    pthread_once(&k_once, k_init);
    if (k_blas.sgemm)
        k_blas.sgemm(CblasRowMajor, CblasNoTrans, trans ? CblasTrans : CblasNoTrans,
                     m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    else
        k_sgemm_scalar(trans, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void embed_k_set_threads(int n)
{
    pthread_once(&k_once, k_init);
    if (k_blas.set_threads)
        k_blas.set_threads(n < 1 ? 1 : n);
}

/* ---- linear ---------------------------------------------------------- */

void embed_k_linear(const float *x, const float *w, const float *b,
                    float *y, int m, int n, int k)
{
    int i;

    /* Seed y with the bias so sgemm can accumulate onto it (beta = 1). */
    if (b) {
        for (i = 0; i < m; i++)
            memcpy(y + (size_t)i * n, b, (size_t)n * sizeof(float));
    }
    k_sgemm(1, m, n, k, 1.0f, x, k, w, k, b ? 1.0f : 0.0f, y, n);
}

void embed_k_linear_ref(const float *x, const float *w, const float *b,
                        float *y, int m, int n, int k)
{
    int i, j, t;

    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) {
            double acc = b ? b[j] : 0.0;
            for (t = 0; t < k; t++)
                acc += (double)x[(size_t)i * k + t] * w[(size_t)j * k + t];
            y[(size_t)i * n + j] = (float)acc;
        }
    }
}

void embed_k_linear_kn(const float *x, const float *w, int ldw, const float *b,
                       float *y, int m, int n, int k)
{
    int i;

    if (b) {
        for (i = 0; i < m; i++)
            memcpy(y + (size_t)i * n, b, (size_t)n * sizeof(float));
    }
    k_sgemm(0, m, n, k, 1.0f, x, k, w, ldw, b ? 1.0f : 0.0f, y, n);
}

void embed_k_linear_kn_ref(const float *x, const float *w, int ldw,
                           const float *b, float *y, int m, int n, int k)
{
    int i, j, t;

    for (i = 0; i < m; i++) {
        for (j = 0; j < n; j++) {
            double acc = b ? b[j] : 0.0;
            for (t = 0; t < k; t++)
                acc += (double)x[(size_t)i * k + t] * w[(size_t)t * ldw + j];
            y[(size_t)i * n + j] = (float)acc;
        }
    }
}

/* ---- layer norm ------------------------------------------------------ */

void embed_k_add_layernorm(float *x, const float *res, const float *g,
                           const float *b, int rows, int dim, float eps)
{
    int r, i;

    for (r = 0; r < rows; r++) {
        float *row = x + (size_t)r * dim;
        float mean = 0.0f, var = 0.0f, inv;

        if (res) {
            const float *rr = res + (size_t)r * dim;
            for (i = 0; i < dim; i++)
                row[i] += rr[i];
        }
        for (i = 0; i < dim; i++)
            mean += row[i];
        mean /= (float)dim;
        for (i = 0; i < dim; i++) {
            float d = row[i] - mean;
            var += d * d;
        }
        var /= (float)dim;
        inv = 1.0f / sqrtf(var + eps);
        for (i = 0; i < dim; i++)
            row[i] = (row[i] - mean) * inv * g[i] + b[i];
    }
}

void embed_k_add_layernorm_ref(float *x, const float *res, const float *g,
                               const float *b, int rows, int dim, float eps)
{
    int r, i;

    for (r = 0; r < rows; r++) {
        float *row = x + (size_t)r * dim;
        double mean = 0.0, var = 0.0;

        for (i = 0; i < dim; i++) {
            if (res)
                row[i] += res[(size_t)r * dim + i];
            mean += row[i];
        }
        mean /= dim;
        for (i = 0; i < dim; i++)
            var += (row[i] - mean) * (row[i] - mean);
        var /= dim;
        for (i = 0; i < dim; i++)
            row[i] = (float)((row[i] - mean) / sqrt(var + eps) * g[i] + b[i]);
    }
}

/* ---- activations ----------------------------------------------------- */

/* Exact GELU with glibc's erff: about 4 ns/element here, ~15% of a 32x128
 * L12 batch. A branch-free erfc/exp polynomial version was tried and was
 * slower (11.5 ns/element: gcc does not vectorise it at -O2 or -O3). */
void embed_k_gelu(float *x, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        x[i] = 0.5f * x[i] * (1.0f + erff(x[i] * 0.70710678118654752f));
}

void embed_k_gelu_ref(float *x, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        x[i] = (float)(0.5 * x[i] * (1.0 + erf(x[i] / sqrt(2.0))));
}

void embed_k_gelu_tanh(float *x, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        float v = x[i];
        x[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f *
                                        (v + 0.044715f * v * v * v)));
    }
}

void embed_k_relu(float *x, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

void embed_k_tanh(float *x, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        x[i] = tanhf(x[i]);
}

/* ---- softmax --------------------------------------------------------- */

void embed_k_softmax(float *x, int n)
{
    float mx = x[0], sum = 0.0f, inv;
    int i;

    for (i = 1; i < n; i++)
        if (x[i] > mx)
            mx = x[i];
    for (i = 0; i < n; i++) {
        x[i] = expf(x[i] - mx);
        sum += x[i];
    }
    inv = 1.0f / sum;
    for (i = 0; i < n; i++)
        x[i] *= inv;
}

void embed_k_softmax_ref(float *x, int n)
{
    double mx = x[0], sum = 0.0;
    int i;

    for (i = 1; i < n; i++)
        if (x[i] > mx)
            mx = x[i];
    for (i = 0; i < n; i++)
        sum += exp(x[i] - mx);
    for (i = 0; i < n; i++)
        x[i] = (float)(exp(x[i] - mx) / sum);
}

#define EMBED_K_REF_MAXSEQ 1024

/* ---- attention ------------------------------------------------------- */

/*
 * Per sequence b and head h, with n = lens[b] valid tokens, the head's
 * slice of q is an n x head_dim matrix whose rows sit `hidden` floats
 * apart, so sgemm reads it in place with lda = hidden:
 *   S[n][n]          = q_bh . k_bh^T / sqrt(head_dim)
 *   S                = row-wise softmax(S)
 *   ctx_bh[n][hd]    = S . v_bh
 * Padding rows and columns are never computed (see kernels.h).
 */
void embed_k_attention(const float *q, const float *k, const float *v,
                       float *ctx, const int *lens, int batch, int seq,
                       int heads, int head_dim, float *scratch)
{
    int hidden = heads * head_dim;
    float scale = 1.0f / sqrtf((float)head_dim);
    int b, h, i;

    for (b = 0; b < batch; b++) {
        int n = lens[b];
        size_t base = (size_t)b * seq * hidden;

        for (h = 0; h < heads; h++) {
            const float *qb = q + base + (size_t)h * head_dim;
            const float *kb = k + base + (size_t)h * head_dim;
            const float *vb = v + base + (size_t)h * head_dim;
            float *cb = ctx + base + (size_t)h * head_dim;

            k_sgemm(1, n, n, head_dim, scale, qb, hidden, kb, hidden, 0.0f,
                    scratch, n);
            for (i = 0; i < n; i++)
                embed_k_softmax(scratch + (size_t)i * n, n);
            k_sgemm(0, n, head_dim, n, 1.0f, scratch, n, vb, hidden, 0.0f,
                    cb, hidden);
        }
        if (n < seq)
            memset(ctx + base + (size_t)n * hidden, 0,
                   (size_t)(seq - n) * hidden * sizeof(float));
    }
}

void embed_k_attention_ref(const float *q, const float *k, const float *v,
                           float *ctx, const int *lens, int batch, int seq,
                           int heads, int head_dim)
{
    int hidden = heads * head_dim;
    double scale = 1.0 / sqrt((double)head_dim);
    int b, h, i, j, d;

    for (b = 0; b < batch; b++) {
        /* The reference is for tests only; it keeps its scores on the
         * stack and so handles at most EMBED_K_REF_MAXSEQ keys. */
        int n = lens[b] < EMBED_K_REF_MAXSEQ ? lens[b] : EMBED_K_REF_MAXSEQ;
        size_t base = (size_t)b * seq * hidden;

        for (h = 0; h < heads; h++) {
            for (i = 0; i < seq; i++) {
                float *out = ctx + base + (size_t)i * hidden + h * head_dim;
                double w[EMBED_K_REF_MAXSEQ];
                double mx = -1e300, sum = 0.0;

                if (i >= n) {
                    for (d = 0; d < head_dim; d++)
                        out[d] = 0.0f;
                    continue;
                }
                for (j = 0; j < n; j++) {
                    double s = 0.0;
                    for (d = 0; d < head_dim; d++)
                        s += (double)q[base + (size_t)i * hidden + h * head_dim + d] *
                             k[base + (size_t)j * hidden + h * head_dim + d];
                    w[j] = s * scale;
                    if (w[j] > mx)
                        mx = w[j];
                }
                for (j = 0; j < n; j++) {
                    w[j] = exp(w[j] - mx);
                    sum += w[j];
                }
                for (d = 0; d < head_dim; d++) {
                    double acc = 0.0;
                    for (j = 0; j < n; j++)
                        acc += w[j] / sum *
                               v[base + (size_t)j * hidden + h * head_dim + d];
                    out[d] = (float)acc;
                }
            }
        }
    }
}

/* ---- pooling and normalisation --------------------------------------- */

void embed_k_mean_pool(const float *x, const int *lens, int batch, int seq,
                       int dim, float *out)
{
    int b, i, d;

    for (b = 0; b < batch; b++) {
        float *o = out + (size_t)b * dim;
        int n = lens[b];

        memset(o, 0, (size_t)dim * sizeof(float));
        for (i = 0; i < n; i++) {
            const float *row = x + ((size_t)b * seq + i) * dim;
            for (d = 0; d < dim; d++)
                o[d] += row[d];
        }
        if (n > 0)
            for (d = 0; d < dim; d++)
                o[d] /= (float)n;
    }
}

void embed_k_cls_pool(const float *x, int batch, int seq, int dim,
                      float *out)
{
    int b;

    for (b = 0; b < batch; b++)
        memcpy(out + (size_t)b * dim, x + (size_t)b * seq * dim,
               (size_t)dim * sizeof(float));
}

void embed_k_l2_normalize(float *x, int rows, int dim)
{
    int r, d;

    for (r = 0; r < rows; r++) {
        float *row = x + (size_t)r * dim;
        double ss = 0.0;

        for (d = 0; d < dim; d++)
            ss += (double)row[d] * row[d];
        if (ss > 0.0) {
            /* torch's F.normalize clamps the norm at 1e-12; so do we. */
            float inv = (float)(1.0 / fmax(sqrt(ss), 1e-12));
            for (d = 0; d < dim; d++)
                row[d] *= inv;
        }
    }
}
