/*
 * kernels.c: the encoder's numeric kernels (see kernels.h).
 *
 * The matrix products go to OpenBLAS's cblas_sgemm: on this machine it
 * reaches ~100 GFLOP/s per core at encoder shapes (docs perf-anchors §1),
 * far beyond anything a hand loop does, and they are >95% of the FLOPs.
 * Everything else is memory-bound element-wise work written as plain loops
 * over contiguous rows. Each fast kernel has a scalar reference `*_ref`
 * (double accumulators, no BLAS) used only by the tests.
 */
#include "embed/kernels.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

void embed_k_set_threads(int n)
{
    openblas_set_num_threads(n < 1 ? 1 : n);
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
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k,
                1.0f, x, k, w, k, b ? 1.0f : 0.0f, y, n);
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
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k,
                1.0f, x, k, w, ldw, b ? 1.0f : 0.0f, y, n);
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

            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n,
                        head_dim, scale, qb, hidden, kb, hidden, 0.0f,
                        scratch, n);
            for (i = 0; i < n; i++)
                embed_k_softmax(scratch + (size_t)i * n, n);
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n,
                        head_dim, n, 1.0f, scratch, n, vb, hidden, 0.0f,
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
