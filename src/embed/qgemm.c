/*
 * qgemm.c: the encoder's int8 matrix product, y = x w^T + b with w
 * quantised once per output channel and x per row at each call, summed
 * in 32-bit integers (the opt-in int8 path, CAIRN_EMBED_INT8=1; see
 * kernels.h and docs/HYBRID.md for when it is used).
 *
 * Why: a batch pass is compute-bound on the f32 microkernels (64% of its
 * samples on AVX2). One vpdpbusd does 64 multiply-adds (AVX-512) where
 * an FMA does 16, and int8 weights are a quarter of the bytes to stream.
 *
 * Quantisation (q8_quant, for weights and activations alike): a row r of
 * k floats becomes q[t] = round(r[t] * 127 / max|r|), in -127..127 (never
 * -128, which the AVX2 sign trick needs), with scale max|r| / 127; an
 * all-zero row is all zeros with scale 0. Then
 *     y[i][c] = fma((float)sum_t qx[i][t] qw[c][t], sx[i] * sw[c], b[c])
 * and every level below computes the integer sum exactly, so every level
 * gives the same bits as embed_k_linear_q8_ref.
 *
 * Layout of the quantised weights: pairs of 16-column panels (32 output
 * columns, zero past n); for each group of 4 k steps (k padded with zeros
 * to a multiple of 4) a pair holds 128 bytes: columns 0..15 then 16..31,
 * each column's 4 consecutive k values, which is what vpdpbusd and
 * vpmaddubsw multiply against one broadcast 32-bit word of x.
 * x is quantised per block of rows into [k / 4][MR][4] bytes (level 1:
 * [k / 4][MR][2][4], |x| beside x).
 *
 * Levels (embed_k_q8_level):
 *   3 AVX-512 VNNI  12 x 32 or 10 x 32 tiles, vpdpbusd on zmm
 *   2 AVX-VNNI      6 x 16, 5 x 16 or 4 x 16 on each half of a pair
 *   1 AVX2          2 x 32: vpmaddubsw(|x|, w * sign(x)) then vpmaddwd
 *                   by ones (the sign trick: |x| <= 127, |w| <= 127, so a
 *                   pair of products, at most 2 * 127 * 127 = 32258,
 *                   never saturates the 16-bit sums)
 *   0 plain C       the same sums over the same layout
 * vpdpbusd multiplies unsigned by signed bytes, so levels 2 and 3 feed x
 * as qx + 128 and take 128 * sum_t qw[c][t] (kept per column) back off.
 */
#include "embed/kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define Q_X86 1
#endif
/* The highest level this build has kernels for: a level above it is a bad
 * level (-1, as kernels.h says). Without Q_X86, levels 1-3 passed the old
 * check (level > 3) and q_pick_mr, finding no tile, read k[-1] and called
 * what it held (cppcheck, negativeIndex; it still flags q_pick_mr alone,
 * not seeing that q_cols now refuses such a level first). */
#ifdef Q_X86
#define Q_LEVEL_MAX 3
#else
#define Q_LEVEL_MAX 0
#endif

#define Q_NP  32      /* columns per pair of panels */
#define Q_MC  120     /* the tile height is picked for this many rows at most */
/* Bytes of quantised x a row block may hold: each pair of panels is read
 * once a block (from L3: an L12 layer's 1.8 MB of int8 weights do not stay
 * in L2), and the block's quantised x once a pair (from L2), so a block
 * is as tall as keeps it, with one 48 KB pair (k = 1536), within a core's
 * 512 KB L2 (Zen 3): 133 rows at k = 1536, 533 at k = 384 (level 1's
 * (|x|, x) pairs, 2 bytes a k step). See q_block_rows. */
#define Q_XQ_BYTES (400 * 1024)

struct embed_k_q8 {
    int8_t *p;        /* ceil(n / 32) pairs of kq / 4 groups of 128 bytes */
    float *s;         /* [npad] per-column scales, 0 past n */
    int32_t *corr;    /* [npad] 128 * sum_t qw[c][t], for the unsigned x */
    int n, k, kq;     /* kq: k rounded up to 4 */
    int view;         /* 1: p, s, corr lie in someone else's image (a mapped file) */
};

static size_t q_pairs(int n)
{
    return ((size_t)n + Q_NP - 1) / Q_NP;
}

/* The quantiser of the header comment; q gets kq bytes (zeros past k).
 * A NaN or infinity gives an all-zero row (scale 0): the f32 path would
 * carry it through, but nothing finite comes of it either way. */
static float q8_quant(const float *r, int k, int kq, int8_t *q)
{
    float mx = 0.0f, inv;
    int t, nan = 0;

    for (t = 0; t < k; t++) {
        mx = fabsf(r[t]) > mx ? fabsf(r[t]) : mx;
        nan |= r[t] != r[t];
    }
    if (!(mx > 0.0f) || !isfinite(mx) || nan) {
        memset(q, 0, (size_t)kq);
        return 0.0f;
    }
    inv = 127.0f / mx;
    for (t = 0; t < k; t++) {
        long v = lrintf(r[t] * inv);

        q[t] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    memset(q + k, 0, (size_t)(kq - k));
    return mx / 127.0f;
}

float embed_k_q8_quant(const float *x, int k, int8_t *q)
{
    return q8_quant(x, k, k, q);
}

/* Column c's kq quantised bytes into its place in q's pair of panels;
 * returns their sum. */
static int32_t q_put_column(struct embed_k_q8 *q, int c, const int8_t *row)
{
    int8_t *pair = q->p + (size_t)(c / Q_NP) * Q_NP * q->kq;
    int32_t sum = 0;
    int t;

    for (t = 0; t < q->kq; t++) {
        pair[(size_t)(t / 4) * 128 + (c % Q_NP) * 4 + t % 4] = row[t];
        sum += row[t];
    }
    return sum;
}

/* Column c of w[k][n] quantised by q8_quant into q, its byte sum in *sum:
 * for the rare column q_fill_kn leaves (see there). -1 if out of memory. */
static int q_column_kn(struct embed_k_q8 *q, const float *w, int ldw, int c, int32_t *sum)
{
    int8_t *row = malloc((size_t)q->kq);
    float *col = malloc((size_t)q->k * sizeof(float));
    int t;

    if (!row || !col) {
        free(row);
        free(col);
        return -1;
    }
    for (t = 0; t < q->k; t++)
        col[t] = w[(size_t)t * ldw + c];
    q->s[c] = q8_quant(col, q->k, q->kq, row);
    *sum = q_put_column(q, c, row);
    free(row);
    free(col);
    return 0;
}

/* The weights of q_new from w[k][n] (TensorFlow's layout, USE-lite's),
 * row by row: the same bytes and scales as q8_quant on each gathered
 * column (test_embed_q8, test_kn), without reading the matrix a column at
 * a time, ldw floats apart, which made a process's first int8 query pay
 * a cache miss per weight. mx, sum: scratch of n floats, then n ints
 * and n floats. */
static int q_fill_kn(struct embed_k_q8 *q, const float *w, int ldw, float *mx, int32_t *sum)
{
    int n = q->n, k = q->k, c, t;
    float *bad = (float *)(sum + n);   /* NaN once a column met a NaN or an infinity */

    for (c = 0; c < n; c++) {
        mx[c] = 0.0f;
        bad[c] = 0.0f;
        sum[c] = 0;
    }
    /* branch-free: a NaN is not > mx, and 0 * NaN or 0 * infinity is NaN,
     * which bad then keeps */
    for (t = 0; t < k; t++) {
        const float *r = w + (size_t)t * ldw;

        for (c = 0; c < n; c++) {
            float a = fabsf(r[c]);

            mx[c] = a > mx[c] ? a : mx[c];
            bad[c] += 0.0f * r[c];
        }
    }
    for (c = 0; c < n; c++) {
        int ok = mx[c] > 0.0f && isfinite(mx[c]) && bad[c] == 0.0f;

        q->s[c] = ok ? mx[c] / 127.0f : 0.0f;
        mx[c] = ok ? 127.0f / mx[c] : 0.0f;   /* now q8_quant's inverse; 0: all zero */
    }
    /* The rounding as lrintf's (to nearest, ties to even) but inline, not
     * a call per weight: clamped first, |v| <= 127, adding and taking
     * back 1.5 * 2^23 leaves v rounded (in float arithmetic, FLT_EVAL_METHOD
     * 0, as on x86-64 and ARM). A column whose inverse is not finite (its
     * maximum below 127 / FLT_MAX) is redone by q8_quant below. */
    for (t = 0; t < k; t++) {
        const float *r = w + (size_t)t * ldw;
        size_t at = (size_t)(t / 4) * 128 + t % 4;

        for (c = 0; c < n; c++) {
            int8_t *pair = q->p + (size_t)(c / Q_NP) * Q_NP * q->kq;
            float v = mx[c] > 0.0f && isfinite(mx[c]) ? r[c] * mx[c] : 0.0f;
            int8_t b;

            v = v > 127.0f ? 127.0f : v < -127.0f ? -127.0f : v;
            b = (int8_t)(int)((v + 12582912.0f) - 12582912.0f);
            pair[at + (size_t)(c % Q_NP) * 4] = b;
            sum[c] += b;
        }
    }
    for (c = 0; c < n; c++) {
        if (!isfinite(mx[c]) && q_column_kn(q, w, ldw, c, &sum[c]) != 0)
            return -1;
        q->corr[c] = 128 * sum[c];
    }
    return 0;
}

/* w[n][k] (ldw 0) or w[k][n] with rows ldw apart (q_fill_kn). */
static struct embed_k_q8 *q_new(const float *w, int ldw, int n, int k)
{
    struct embed_k_q8 *q = calloc(1, sizeof(*q));
    int8_t *row = NULL;
    float *scratch = NULL;
    size_t npad;
    int c;

    if (!q || n < 1 || k < 1)
        goto fail;
    q->n = n;
    q->k = k;
    q->kq = (k + 3) & ~3;
    npad = q_pairs(n) * Q_NP;
    q->p = aligned_alloc(64, npad * (size_t)q->kq);
    q->s = calloc(npad, sizeof(float));
    q->corr = calloc(npad, sizeof(int32_t));
    row = malloc((size_t)q->kq);
    scratch = ldw ? malloc((size_t)n * (2 * sizeof(float) + sizeof(int32_t))) : NULL;
    if (!q->p || !q->s || !q->corr || !row || (ldw && !scratch))
        goto fail;
    memset(q->p, 0, npad * (size_t)q->kq);
    if (ldw && q_fill_kn(q, w, ldw, scratch, (int32_t *)(scratch + n)) != 0)
        goto fail;
    for (c = 0; !ldw && c < n; c++) {
        q->s[c] = q8_quant(w + (size_t)c * k, k, q->kq, row);
        q->corr[c] = 128 * q_put_column(q, c, row);
    }
    free(row);
    free(scratch);
    return q;
fail:
    free(row);
    free(scratch);
    embed_k_q8_free(q);
    return NULL;
}

struct embed_k_q8 *embed_k_q8_new(const float *w, int n, int k)
{
    return q_new(w, 0, n, k);
}

struct embed_k_q8 *embed_k_q8_new_kn(const float *w, int ldw, int n, int k)
{
    return ldw < n ? NULL : q_new(w, ldw, n, k);
}

void embed_k_q8_free(struct embed_k_q8 *q)
{
    if (!q)
        return;
    if (q->view) {
        free(q);
        return;
    }
    free(q->p);
    free(q->s);
    free(q->corr);
    free(q);
}

size_t embed_k_q8_bytes(const struct embed_k_q8 *q)
{
    return q_pairs(q->n) * Q_NP * ((size_t)q->kq + 2 * sizeof(float));
}

/* The image: the panels, then the scales, then the corrections, each a
 * multiple of 128 bytes long (npad is a multiple of 32), so each part of
 * an image at a 64-byte boundary is at one too. */
size_t embed_k_q8_image_bytes(int n, int k)
{
    if (n < 1 || k < 1)
        return 0;
    return q_pairs(n) * Q_NP * ((size_t)((k + 3) & ~3) + sizeof(float) + sizeof(int32_t));
}

int embed_k_q8_parts(const struct embed_k_q8 *q, const void *part[3], size_t len[3])
{
    size_t npad = q_pairs(q->n) * Q_NP;

    part[0] = q->p;
    len[0] = npad * (size_t)q->kq;
    part[1] = q->s;
    len[1] = npad * sizeof(float);
    part[2] = q->corr;
    len[2] = npad * sizeof(int32_t);
    return 3;
}

struct embed_k_q8 *embed_k_q8_view(int n, int k, const void *img)
{
    struct embed_k_q8 *q;
    size_t npad;

    if (n < 1 || k < 1 || ((uintptr_t)img & 63) || !(q = calloc(1, sizeof(*q))))
        return NULL;
    q->n = n;
    q->k = k;
    q->kq = (k + 3) & ~3;
    npad = q_pairs(n) * Q_NP;
    /* never written: the products only read them */
    q->p = (int8_t *)img;
    q->s = (float *)(q->p + npad * (size_t)q->kq);
    q->corr = (int32_t *)(q->s + npad);
    q->view = 1;
    return q;
}

/* The rows of each block of x for m rows of kq bytes, xw words a k group,
 * tiles of mr rows: as few blocks as keep a block's quantised x within
 * Q_XQ_BYTES, of even heights (a multiple of mr). A group of 256 rows at
 * k = 1536 is 2 blocks of 128; at 120 rows a block it was 120 + 120 + 16,
 * which read every pair of panels a third time for 16 rows. */
static int q_block_rows(int m, int kq, int xw, int mr)
{
    int cap = Q_XQ_BYTES / (kq * xw) / mr * mr, nb;

    if (cap < mr)
        cap = mr;
    nb = (m + cap - 1) / cap;
    return ((m + nb - 1) / nb + mr - 1) / mr * mr;
}

/* At most the rows q_block_rows gives at xw words a group, any tile. */
static size_t q_block_max(int m, size_t kq, int xw)
{
    size_t cap = Q_XQ_BYTES / (kq * (size_t)xw), rows = (size_t)m + 11;

    if (cap < 12)
        cap = 12;
    return rows < cap ? rows : cap;
}

/* Bytes of work for m rows of inner size k: a block's row scales, its
 * quantised rows padded to a whole tile (twice the bytes at level 1,
 * which keeps |x| beside x), and one row of quantiser output. */
size_t embed_k_q8_work(int m, int k)
{
    size_t kq = ((size_t)k + 3) & ~(size_t)3;
    size_t r1 = q_block_max(m, kq, 1), r2 = q_block_max(m, kq, 2);
    size_t rows = r1 > r2 ? r1 : r2, xq = r1 * kq > 2 * r2 * kq ? r1 * kq : 2 * r2 * kq;

    return 64 + rows * sizeof(float) + 64 + xq + kq + 64;
}

/* ---- the levels -------------------------------------------------------- */

int embed_k_q8_level_at(int simd)
{
#ifdef Q_X86
    if (simd >= 2 && (embed_k_simd_vnni() & 2))
        return 3;
    if (simd >= 1 && (embed_k_simd_vnni() & 1))
        return 2;
    return simd >= 1 ? 1 : 0;
#else
    (void)simd;
    return 0;
#endif
}

int embed_k_q8_level(void)
{
    return embed_k_q8_level_at(embed_k_simd());
}

const char *embed_k_q8_level_name(int level)
{
    static const char *const names[] = { "portable", "avx2", "avxvnni", "avx512vnni" };

    return names[level < 0 ? 0 : level > 3 ? 3 : level];
}

/* One MR x 32 tile of integer sums over kg groups: a is the block's
 * [kg][MR] words of x, b the pair at its first group; out[MR][32]. */
typedef void q_micro_fn(int kg, const int32_t *a, const int8_t *b, int32_t *out);

/* Where a whole tile of floats goes (level 1's stored form): y[r][c] =
 * fma(sum, sx[r] * s[c], bias[c]) for the tile's rows r and 32 columns c,
 * y at the tile's first row and column, rows ldy apart. */
struct q_dst {
    const float *s, *sx, *bias;
    const int32_t *corr;    /* subtracted from the sums first (levels 2, 3) */
    float *y;
    size_t ldy;
};
typedef void q_micro_y_fn(int kg, const int32_t *a, const int8_t *b, const struct q_dst *d);

static int32_t q_word(const int8_t *p)
{
    int32_t v;

    memcpy(&v, p, 4);
    return v;
}

/* Level 0: the same sums in plain C (x signed, no correction). */
static void q_micro_c(int kg, const int32_t *a, const int8_t *b, int32_t *out)
{
    int g, r, c, j;

    memset(out, 0, 4 * Q_NP * sizeof(*out));
    for (g = 0; g < kg; g++, a += 4, b += 128)
        for (r = 0; r < 4; r++) {
            int8_t xv[4];

            memcpy(xv, &a[r], 4);
            for (c = 0; c < Q_NP; c++)
                for (j = 0; j < 4; j++)
                    out[r * Q_NP + c] += xv[j] * b[c * 4 + j];
        }
}

#ifdef Q_X86
#define Q_AVX512 __attribute__((target("avx512f,avx512vnni,avx2,fma")))
#define Q_VNNI   __attribute__((target("avx2,fma,avxvnni")))
#define Q_AVX2   __attribute__((target("avx2,fma")))

static const float q_zero_f[16];

/* Level 3: the MR x 32 sums of one tile, stored as integers (q_micro512)
 * or, through them, as floats (q_micro512_y). */
#define Q_MICRO_AVX512(MR)                                                              \
Q_AVX512 static void q_micro512_##MR(int kg, const int32_t *a, const int8_t *b,          \
                                     int32_t *out)                                      \
{                                                                                       \
    __m512i acc[MR][2];                                                                 \
    int g, r;                                                                           \
                                                                                        \
    _Pragma("GCC unroll 16")                                                            \
    for (r = 0; r < MR; r++)                                                            \
        acc[r][0] = acc[r][1] = _mm512_setzero_si512();                                 \
    for (g = 0; g < kg; g++, a += MR, b += 128) {                                       \
        __m512i b0 = _mm512_load_si512(b), b1 = _mm512_load_si512(b + 64);              \
                                                                                        \
        _Pragma("GCC unroll 16")                                                        \
        for (r = 0; r < MR; r++) {                                                      \
            __m512i av = _mm512_set1_epi32(a[r]);                                       \
                                                                                        \
            acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], av, b0);                         \
            acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], av, b1);                         \
        }                                                                               \
    }                                                                                   \
    _Pragma("GCC unroll 16")                                                            \
    for (r = 0; r < MR; r++) {                                                          \
        _mm512_storeu_si512(out + r * Q_NP, acc[r][0]);                                 \
        _mm512_storeu_si512(out + r * Q_NP + 16, acc[r][1]);                            \
    }                                                                                   \
}                                                                                       \
                                                                                        \
/* q_store_avx2's operations on a whole tile (sum - corr, scale, bias),     \
 * 16 lanes at a time, so the same bits, in the kernel instead of q_cols'   \
 * row loop and q_store_avx2's 8 lanes (together ~40% of this kernel's     \
 * samples in an AVX-512 int8 batch, perf, `bench_embed --only batch        \
 * --layers 4`). The sums come through the tile on the stack (in L1):       \
 * with the sums' loop inlined here, gcc kept a copy of every accumulator   \
 * on the stack inside it, and the int8 batch ran ~40% slower. */           \
Q_AVX512 static void q_micro512_y_##MR(int kg, const int32_t *a, const int8_t *b,        \
                                       const struct q_dst *d)                           \
{                                                                                       \
    int32_t tile[MR * Q_NP] __attribute__((aligned(64)));                               \
    __m512i c0 = _mm512_loadu_si512(d->corr), c1 = _mm512_loadu_si512(d->corr + 16);    \
    __m512 s0 = _mm512_loadu_ps(d->s), s1 = _mm512_loadu_ps(d->s + 16);                 \
    __m512 b0 = _mm512_loadu_ps(d->bias ? d->bias : q_zero_f);                          \
    __m512 b1 = _mm512_loadu_ps(d->bias ? d->bias + 16 : q_zero_f);                     \
    int r;                                                                              \
                                                                                        \
    q_micro512_##MR(kg, a, b, tile);                                                    \
    for (r = 0; r < MR; r++) {                                                          \
        __m512 vx = _mm512_set1_ps(d->sx[r]);                                           \
        float *y = d->y + (size_t)r * d->ldy;                                           \
        __m512i t0 = _mm512_load_si512(tile + r * Q_NP);                                \
        __m512i t1 = _mm512_load_si512(tile + r * Q_NP + 16);                           \
                                                                                        \
        _mm512_storeu_ps(y, _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(t0, c0)), \
                                            _mm512_mul_ps(vx, s0), b0));                \
        _mm512_storeu_ps(y + 16, _mm512_fmadd_ps(_mm512_cvtepi32_ps(                    \
                                                     _mm512_sub_epi32(t1, c1)),         \
                                                 _mm512_mul_ps(vx, s1), b1));           \
    }                                                                                   \
}

/* MR x 16 on one half of a pair, then the other half: acc is indexed by
 * constants only, so it stays in the 16 ymm registers. */
#define Q_MICRO_VNNI(MR)                                                                \
Q_VNNI static void q_half_vnni_##MR(int kg, const int32_t *a, const int8_t *b,           \
                                    int32_t *out)                                       \
{                                                                                       \
    __m256i acc[MR][2];                                                                 \
    int g, r;                                                                           \
                                                                                        \
    _Pragma("GCC unroll 6")                                                             \
    for (r = 0; r < MR; r++)                                                            \
        acc[r][0] = acc[r][1] = _mm256_setzero_si256();                                 \
    for (g = 0; g < kg; g++, a += MR, b += 128) {                                       \
        __m256i b0 = _mm256_load_si256((const __m256i *)b);                             \
        __m256i b1 = _mm256_load_si256((const __m256i *)(b + 32));                      \
                                                                                        \
        _Pragma("GCC unroll 6")                                                         \
        for (r = 0; r < MR; r++) {                                                      \
            __m256i av = _mm256_set1_epi32(a[r]);                                       \
                                                                                        \
            acc[r][0] = _mm256_dpbusd_avx_epi32(acc[r][0], av, b0);                     \
            acc[r][1] = _mm256_dpbusd_avx_epi32(acc[r][1], av, b1);                     \
        }                                                                               \
    }                                                                                   \
    _Pragma("GCC unroll 6")                                                             \
    for (r = 0; r < MR; r++) {                                                          \
        _mm256_storeu_si256((__m256i *)(out + r * Q_NP), acc[r][0]);                    \
        _mm256_storeu_si256((__m256i *)(out + r * Q_NP + 8), acc[r][1]);                \
    }                                                                                   \
}                                                                                       \
                                                                                        \
Q_VNNI static void q_micro_vnni_##MR(int kg, const int32_t *a, const int8_t *b,          \
                                     int32_t *out)                                      \
{                                                                                       \
    q_half_vnni_##MR(kg, a, b, out);                                                    \
    q_half_vnni_##MR(kg, a, b + 64, out + 16);                                          \
}

/* Level 1: MR x 32, the whole pair, so a tile reads its 128 bytes a
 * group in order (16-column halves read one cache line of every two, the
 * pattern that stalled the f32 AVX2 tiles, gemm.c). x comes as (|x|, x)
 * word pairs (q_pack_x), so the sign trick costs one vpsignb per product
 * and no vpabsb: 4 vpsignb, 4 vpmaddubsw, 4 vpmaddwd and 4 vpaddd per row
 * and group, where the 4 x 16 halves took 9 ops per 16 columns. A query's
 * 72 products (m = 20, L12 shapes, cold weights) took 6.1-6.5 ms of CPU
 * against 7.0-8.1 on the halves (same run, Zen 5 with CAIRN_SIMD=avx2).
 * 2 rows: with 3, gcc spilled accumulators in the loop and the batch shape
 * ran 4% slower (Zen 5); on Zen 3, 3 and 4 rows (spilling too) ran 3-7%
 * slower than 2 in a batch (issue 22, 2026-12-04).
 *
 * One row of a group: its (|x|, x) words at o(a) broadcast, then per 32
 * columns vpsignb, vpmaddubsw, vpmaddwd by ones, vpaddd (AT&T order:
 * sources first, the destination last). */
#define Q_AVX2_ROW(o, A0, A1, A2, A3)                                                      \
    "vpbroadcastd " #o "(%[a]), %[ax]\n\t"                                              \
    "vpbroadcastd " #o "+4(%[a]), %[av]\n\t"                                            \
    "vpsignb %[av], %[w0], %[t]\n\tvpmaddubsw %[t], %[ax], %[t]\n\t"                     \
    "vpmaddwd %[ones], %[t], %[t]\n\tvpaddd %[t], %[" #A0 "], %[" #A0 "]\n\t"            \
    "vpsignb %[av], %[w1], %[t]\n\tvpmaddubsw %[t], %[ax], %[t]\n\t"                     \
    "vpmaddwd %[ones], %[t], %[t]\n\tvpaddd %[t], %[" #A1 "], %[" #A1 "]\n\t"            \
    "vpsignb %[av], %[w2], %[t]\n\tvpmaddubsw %[t], %[ax], %[t]\n\t"                     \
    "vpmaddwd %[ones], %[t], %[t]\n\tvpaddd %[t], %[" #A2 "], %[" #A2 "]\n\t"            \
    "vpsignb %[av], %[w3], %[t]\n\tvpmaddubsw %[t], %[ax], %[t]\n\t"                     \
    "vpmaddwd %[ones], %[t], %[t]\n\tvpaddd %[t], %[" #A3 "], %[" #A3 "]\n\t"

/* The 2 x 32 sums of level 1 (the layout and operations above), each
 * group in one asm block: the pair's 4 vectors loaded once for both rows,
 * the 8 accumulators, ones, |x|, x and a product in the 16 ymm registers.
 * gcc 12, from the same operations in intrinsics, reloaded the pair per
 * row and added register moves (and in the fused-store form below spilled
 * an accumulator to the stack, which ran slower than storing through a
 * buffer). Only the instructions' order and registers differ, so the
 * sums are the same. */
Q_AVX2 static inline __attribute__((always_inline)) void
q_sums_avx2_2(int kg, const int32_t *a, const int8_t *b, __m256i acc[2][4])
{
    __m256i c00 = _mm256_setzero_si256(), c01 = c00, c02 = c00, c03 = c00;
    __m256i c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    __m256i ones = _mm256_set1_epi16(1), w0, w1, w2, w3, ax, av, t;
    int g;

    for (g = 0; g < kg; g++, a += 4, b += 128)
        __asm__("vmovdqa (%[b]), %[w0]\n\tvmovdqa 32(%[b]), %[w1]\n\t"
                "vmovdqa 64(%[b]), %[w2]\n\tvmovdqa 96(%[b]), %[w3]\n\t"
                Q_AVX2_ROW(0, c00, c01, c02, c03)
                Q_AVX2_ROW(8, c10, c11, c12, c13)
                : [c00] "+x"(c00), [c01] "+x"(c01), [c02] "+x"(c02), [c03] "+x"(c03),
                  [c10] "+x"(c10), [c11] "+x"(c11), [c12] "+x"(c12), [c13] "+x"(c13),
                  [w0] "=&x"(w0), [w1] "=&x"(w1), [w2] "=&x"(w2), [w3] "=&x"(w3),
                  [ax] "=&x"(ax), [av] "=&x"(av), [t] "=&x"(t)
                : [a] "r"(a), [b] "r"(b), [ones] "x"(ones), "m"(*(const char(*)[128])b),
                  "m"(*(const int32_t(*)[4])a));
    acc[0][0] = c00; acc[0][1] = c01; acc[0][2] = c02; acc[0][3] = c03;
    acc[1][0] = c10; acc[1][1] = c11; acc[1][2] = c12; acc[1][3] = c13;
}

Q_AVX2 static void q_micro_avx2_2(int kg, const int32_t *a, const int8_t *b, int32_t *out)
{
    __m256i acc[2][4];
    int r, j;

    q_sums_avx2_2(kg, a, b, acc);
    /* the pair's bytes are columns 0..15 then 16..31, 8 a vector */
    _Pragma("GCC unroll 4")
    for (r = 0; r < 2; r++)
        for (j = 0; j < 4; j++)
            _mm256_storeu_si256((__m256i *)(out + r * Q_NP + 8 * j), acc[r][j]);
}

Q_AVX2 static void q_micro_avx2_y_2(int kg, const int32_t *a, const int8_t *b,
                                    const struct q_dst *d)
{
    __m256i acc[2][4];
    int r, j;

    q_sums_avx2_2(kg, a, b, acc);
    /* q_store_avx2's operations on a whole tile, from the registers */
    _Pragma("GCC unroll 4")
    for (r = 0; r < 2; r++) {
        __m256 vx = _mm256_set1_ps(d->sx[r]);
        float *y = d->y + (size_t)r * d->ldy;

        _Pragma("GCC unroll 4")
        for (j = 0; j < 4; j++) {
            __m256 sc = _mm256_mul_ps(vx, _mm256_loadu_ps(d->s + 8 * j));
            __m256 bv = d->bias ? _mm256_loadu_ps(d->bias + 8 * j) : _mm256_setzero_ps();

            _mm256_storeu_ps(y + 8 * j,
                             _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][j]), sc, bv));
        }
    }
}

Q_MICRO_AVX512(12)
Q_MICRO_AVX512(10)
Q_MICRO_VNNI(6)
Q_MICRO_VNNI(5)
Q_MICRO_VNNI(4)

/* Row r's outputs at level >= 1: y[c] = fma(sum - corr[c], sx * s[c],
 * bias[c]) for cols columns, 8 at a time, then the tail in C (the same
 * fused operation, so the same bits). */
Q_AVX2 static void q_store_avx2(const int32_t *sum, const int32_t *corr, const float *s,
                                float sx, const float *bias, float *y, int cols)
{
    __m256 vx = _mm256_set1_ps(sx);
    int c = 0;

    for (; c + 8 <= cols; c += 8) {
        __m256i v = _mm256_sub_epi32(_mm256_loadu_si256((const __m256i *)(sum + c)),
                                     _mm256_loadu_si256((const __m256i *)(corr + c)));
        __m256 sc = _mm256_mul_ps(vx, _mm256_loadu_ps(s + c));
        __m256 b = bias ? _mm256_loadu_ps(bias + c) : _mm256_setzero_ps();

        _mm256_storeu_ps(y + c, _mm256_fmadd_ps(_mm256_cvtepi32_ps(v), sc, b));
    }
    for (; c < cols; c++)
        y[c] = fmaf((float)(sum[c] - corr[c]), sx * s[c], bias ? bias[c] : 0.0f);
}

Q_AVX2 static void q_pack_abs_avx2(const int8_t *row, int kg, int mr, int32_t *dst);

/* x's block quantised at level >= 1: 8 floats at a time for the maximum
 * and the rounding (cvtps rounds to nearest even, as lrintf does in the
 * default mode), so the bytes are q8_quant's. With pk (level 1), the
 * bytes go straight into the tile layout instead of q: each group's
 * (|x|, x) words as one 8-byte pair, mr pairs apart in pk (what
 * q_pack_abs_avx2 makes of q). q_pack_abs_avx2 read back and scattered a
 * word at a time what this had just stored: ~2% of an int8 batch. A k
 * off 32, or a row q8_quant decides, still goes through q. */
Q_AVX2 static float q_quant_avx2(const float *r, int k, int kq, int8_t *q, int mr, int32_t *pk)
{
    __m256 mx8 = _mm256_setzero_ps(), nan8 = _mm256_setzero_ps(), sign = _mm256_set1_ps(-0.0f);
    __m256 inv8;
    float lanes[8], mx = 0.0f, inv;
    int t, i;

    /* the NaN test rides along (unordered compares, or-ed): as a loop of
     * its own, in C, it had been about half of this function's time */
    for (t = 0; t + 8 <= k; t += 8) {
        __m256 v = _mm256_loadu_ps(r + t);

        mx8 = _mm256_max_ps(mx8, _mm256_andnot_ps(sign, v));
        nan8 = _mm256_or_ps(nan8, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    }
    _mm256_storeu_ps(lanes, mx8);
    for (i = 0; i < 8; i++)
        mx = lanes[i] > mx ? lanes[i] : mx;
    for (; t < k; t++)
        mx = fabsf(r[t]) > mx ? fabsf(r[t]) : mx;
    /* a row with a NaN (max_ps may drop it), an infinity or no non-zero
     * value, or a k off the vector width: q8_quant decides */
    if (!(mx > 0.0f) || !isfinite(mx) || k % 8 || _mm256_movemask_ps(nan8) ||
        (pk && k % 32)) {
        inv = q8_quant(r, k, kq, q);
        if (pk)
            q_pack_abs_avx2(q, kq / 4, mr, pk);
        return inv;
    }
    inv = 127.0f / mx;
    inv8 = _mm256_set1_ps(inv);
    for (t = 0; t + 32 <= k; t += 32) {
        __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(r + t), inv8));
        __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(r + t + 8), inv8));
        __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(r + t + 16), inv8));
        __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(r + t + 24), inv8));
        /* packs work per 128-bit lane: the permute puts the bytes back in order */
        __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
        __m256i v = _mm256_packs_epi16(ab, cd);

        v = _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        v = _mm256_max_epi8(v, _mm256_set1_epi8(-127));
        if (pk) {
            /* groups t/4 .. t/4 + 7: words (|x|, x) interleaved, pairs for
             * groups 0 1 4 5 in lo, 2 3 6 7 in hi (unpack works per lane) */
            __m256i av = _mm256_abs_epi8(v);
            __m128i lo0, lo1, hi0, hi1;
            __m256i lo = _mm256_unpacklo_epi32(av, v), hi = _mm256_unpackhi_epi32(av, v);
            int32_t *o = pk + (size_t)(t / 4) * mr * 2;
            size_t st = (size_t)mr * 2;

            lo0 = _mm256_castsi256_si128(lo);
            lo1 = _mm256_extracti128_si256(lo, 1);
            hi0 = _mm256_castsi256_si128(hi);
            hi1 = _mm256_extracti128_si256(hi, 1);
            _mm_storel_epi64((__m128i *)o, lo0);
            _mm_storeh_pd((double *)(o + st), _mm_castsi128_pd(lo0));
            _mm_storel_epi64((__m128i *)(o + 2 * st), hi0);
            _mm_storeh_pd((double *)(o + 3 * st), _mm_castsi128_pd(hi0));
            _mm_storel_epi64((__m128i *)(o + 4 * st), lo1);
            _mm_storeh_pd((double *)(o + 5 * st), _mm_castsi128_pd(lo1));
            _mm_storel_epi64((__m128i *)(o + 6 * st), hi1);
            _mm_storeh_pd((double *)(o + 7 * st), _mm_castsi128_pd(hi1));
            continue;
        }
        _mm256_storeu_si256((__m256i *)(q + t), v);
    }
    for (; t < k; t++) {
        long v = lrintf(r[t] * inv);

        q[t] = (int8_t)(v > 127 ? 127 : v < -127 ? -127 : v);
    }
    memset(q + k, 0, (size_t)(kq - k));
    return mx / 127.0f;
}
#endif

#ifdef Q_X86
/* Level 1's x: one row's kg words as (|x|, x) pairs, mr pairs apart in
 * dst. |-127| fits a byte: q8_quant never gives -128. (Byte by byte in
 * C this was 10% of a query's samples.) */
Q_AVX2 static void q_pack_abs_avx2(const int8_t *row, int kg, int mr, int32_t *dst)
{
    int32_t ab[8];
    int g = 0, j;

    for (; g + 8 <= kg; g += 8) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(row + 4 * g));

        _mm256_storeu_si256((__m256i *)ab, _mm256_abs_epi8(v));
        for (j = 0; j < 8; j++) {
            dst[(size_t)(g + j) * mr * 2] = ab[j];
            dst[(size_t)(g + j) * mr * 2 + 1] = q_word(row + 4 * (g + j));
        }
    }
    for (; g < kg; g++) {
        int8_t b[4];

        for (j = 0; j < 4; j++)
            b[j] = (int8_t)(row[4 * g + j] < 0 ? -row[4 * g + j] : row[4 * g + j]);
        dst[(size_t)g * mr * 2] = q_word(b);
        dst[(size_t)g * mr * 2 + 1] = q_word(row + 4 * g);
    }
}
#endif

/* The tile height for m rows at a level (its microkernel in *micro): the
 * one that pads m least, the tallest on a tie. */
static int q_pick_mr(int level, int m, q_micro_fn **micro, q_micro_y_fn **micro_y)
{
    static const struct { int level, mr; q_micro_fn *fn; q_micro_y_fn *fy; } k[] = {
#ifdef Q_X86
        { 3, 12, q_micro512_12, q_micro512_y_12 }, { 3, 10, q_micro512_10, q_micro512_y_10 },
        { 2, 6, q_micro_vnni_6, NULL }, { 2, 5, q_micro_vnni_5, NULL },
        { 2, 4, q_micro_vnni_4, NULL },
        { 1, 2, q_micro_avx2_2, q_micro_avx2_y_2 },
#endif
        { 0, 4, q_micro_c, NULL } };
    int i, best = -1;
    long pad = 0;

    for (i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
        long p = ((long)m + k[i].mr - 1) / k[i].mr * k[i].mr - m;

        if (k[i].level == level && (best < 0 || p < pad)) {
            best = i;
            pad = p;
        }
    }
    *micro = k[best].fn;
    *micro_y = k[best].fy;
    return k[best].mr;
}

/* Words of packed x per row and group: level 1 takes (|x|, x) pairs. */
static int q_xw(int level)
{
    return level == 1 ? 2 : 1;
}

/* Rows [i0, i0 + mc) of x quantised into tiles of mr rows ([kg][mr]
 * words each, [kg][mr][2] at level 1; rows past m are zero) and their
 * scales into sx; levels 2 and 3 add 128 to every byte (unsigned x for
 * vpdpbusd). row: kq bytes. */
static void q_pack_x(int level, const float *x, int ldx, int m, int k, int kq, int i0, int mc,
                     int mr, int32_t *dst, float *sx, int8_t *row)
{
    int kg = kq / 4, ib, r, g;
    uint32_t flip = level >= 2 ? 0x80808080u : 0;

    for (ib = 0; ib < mc; ib += mr, dst += (size_t)kg * mr * q_xw(level))
        for (r = 0; r < mr; r++) {
            int i = i0 + ib + r;

            if (i >= m) {
                memset(row, 0, (size_t)kq);
                sx[ib + r] = 0.0f;
            } else {
#ifdef Q_X86
                if (level == 1) {
                    sx[ib + r] = q_quant_avx2(x + (size_t)i * ldx, k, kq, row, mr,
                                              dst + (size_t)r * 2);
                    continue;
                } else if (level >= 1)
                    sx[ib + r] = q_quant_avx2(x + (size_t)i * ldx, k, kq, row, 0, NULL);
                else
#endif
                    sx[ib + r] = q8_quant(x + (size_t)i * ldx, k, kq, row);
            }
#ifdef Q_X86
            if (level == 1) {
                q_pack_abs_avx2(row, kg, mr, dst + (size_t)r * 2);
                continue;
            }
#endif
            for (g = 0; g < kg; g++)
                dst[(size_t)g * mr + r] = (int32_t)((uint32_t)q_word(row + 4 * g) ^ flip);
        }
}

/* One product of q_cols: columns [c0, c1) of x . q^T + bias into y (rows
 * ldy apart) or, raw, as the exact integer sums into out (the tests). */
struct q_prod {
    const struct embed_k_q8 *q;
    int c0, c1;
    const float *bias;
    float *y;
    int ldy;
    int32_t *out;
};

/* The products pr[0..np) of the same x at level (every q of the same k):
 * each block of x's rows is quantised once for all of them. */
static int q_cols(int level, const float *x, int ldx, const struct q_prod *pr, int np, int m,
                  void *work)
{
    q_micro_fn *micro;
    q_micro_y_fn *micro_y;
    int kg, mr, mcmax, i0, jp, ir, r, p;
    float *sx;
    int32_t *xq, tile[12 * Q_NP];
    int8_t *row;
    static const int32_t zero[Q_NP];

    if (level < 0 || level > Q_LEVEL_MAX || m < 1 || np < 1)
        return -1;
    for (p = 0; p < np; p++)
        if (pr[p].c0 < 0 || pr[p].c0 % Q_NP || pr[p].c1 > pr[p].q->n ||
            pr[p].q->k != pr[0].q->k)
            return -1;
    kg = pr[0].q->kq / 4;
    mr = q_pick_mr(level, m < Q_MC ? m : Q_MC, &micro, &micro_y);
    mcmax = q_block_rows(m, pr[0].q->kq, q_xw(level), mr);
    sx = (float *)(((uintptr_t)work + 63) & ~(uintptr_t)63);
    xq = (int32_t *)(((uintptr_t)(sx + mcmax) + 63) & ~(uintptr_t)63);
    row = (int8_t *)(xq + (size_t)mcmax * kg * q_xw(level));
    for (i0 = 0; i0 < m; i0 += mcmax) {
        int mc = m - i0 < mcmax ? m - i0 : mcmax;

        q_pack_x(level, x, ldx, m, pr[0].q->k, pr[0].q->kq, i0, (mc + mr - 1) / mr * mr, mr, xq,
                 sx, row);
        for (p = 0; p < np; p++) {
            const struct embed_k_q8 *q = pr[p].q;
            const float *bias = pr[p].bias;
            float *y = pr[p].y;
            int32_t *out = pr[p].out;
            int c1 = pr[p].c1, ldy = pr[p].ldy;

            for (jp = pr[p].c0 / Q_NP; jp * Q_NP < c1; jp++) {
                const int8_t *b = q->p + (size_t)jp * Q_NP * q->kq;
                int cols = c1 - jp * Q_NP < Q_NP ? c1 - jp * Q_NP : Q_NP, c = jp * Q_NP;
                const int32_t *corr = level >= 2 ? q->corr + c : zero;
                /* The next pair is fetched (into L2) a share per tile while
                 * this one is computed: a query reads each weight once a pass
                 * (21 MB for L12, past the caches), and its first tile of a
                 * pair waited on memory. AVX2: a query's products 6.1-6.5 ms
                 * of CPU without, 5.7 with (hot weights: 6.6 before this
                 * kernel); AVX-512 VNNI: no change measured. */
                const int8_t *next = (jp + 1) * Q_NP < c1 ? b + (size_t)Q_NP * q->kq : NULL;
                size_t share = ((size_t)Q_NP * q->kq / ((mc + mr - 1) / mr) + 63) & ~(size_t)63;

                for (ir = 0; ir < mc; ir += mr) {
                    size_t at, end = (size_t)(ir / mr + 1) * share;

                    if (end > (size_t)Q_NP * q->kq)
                        end = (size_t)Q_NP * q->kq;
                    for (at = (size_t)(ir / mr) * share; next && at < end; at += 64)
                        __builtin_prefetch(next + at, 0, 2);
                    /* A whole tile of floats goes out from the registers: through
                     * tile and q_store_avx2 it had been ~7% of an int8 batch's
                     * samples (q_store_avx2 2.6%, q_cols' row loop 1.4%, perf,
                     * Zen 3). The same operations, so the same bits. */
                    if (micro_y && !out && cols == Q_NP && ir + mr <= mc) {
                        struct q_dst d = { q->s + c, sx + ir, bias ? bias + c : NULL, corr,
                                           y + (size_t)(i0 + ir) * ldy + c, (size_t)ldy };

                        micro_y(kg, xq + (size_t)ir * kg * q_xw(level), b, &d);
                        continue;
                    }
                    micro(kg, xq + (size_t)ir * kg * q_xw(level), b, tile);
                    for (r = 0; r < mr && ir + r < mc; r++) {
                        const int32_t *sum = tile + r * Q_NP;
                        size_t i = (size_t)(i0 + ir + r);
                        int j;

                        if (out) {
                            for (j = 0; j < cols; j++)
                                out[i * ldy + c + j] = sum[j] - corr[j];
                            continue;
                        }
#ifdef Q_X86
                        if (level >= 1) {
                            q_store_avx2(sum, corr, q->s + c, sx[ir + r],
                                         bias ? bias + c : NULL, y + i * ldy + c, cols);
                            continue;
                        }
#endif
                        for (j = 0; j < cols; j++)
                            y[i * ldy + c + j] = fmaf((float)(sum[j] - corr[j]),
                                                      sx[ir + r] * q->s[c + j],
                                                      bias ? bias[c + j] : 0.0f);
                    }
                }
            }
        }
    }
    return 0;
}

int embed_k_q8_cols(int level, const float *x, int ldx, const struct embed_k_q8 *q, int c0,
                    int c1, const float *bias, float *y, int ldy, int m, void *work)
{
    struct q_prod pr = { q, c0, c1, bias, y, ldy, NULL };

    return q_cols(level, x, ldx, &pr, 1, m, work);
}

/* Several products of one x (BERT's q, k and v): quantising x had been
 * ~4.6% of an int8 batch's samples (q_quant_avx2, q_pack_abs_avx2, perf,
 * Zen 3), a third of it for v and k again. */
int embed_k_q8_cols_n(int level, const float *x, const struct embed_k_q8 *const *q,
                      const float *const *bias, float *const *y, int n, int m, void *work)
{
    struct q_prod pr[EMBED_K_Q8_MAXN];
    int p;

    if (n < 1 || n > EMBED_K_Q8_MAXN)
        return -1;
    for (p = 0; p < n; p++) {
        struct q_prod one = { q[p], 0, q[p]->n, bias[p], y[p], q[p]->n, NULL };

        pr[p] = one;
    }
    return q_cols(level, x, q[0]->k, pr, n, m, work);
}

int embed_k_q8_sums(int level, const float *x, const struct embed_k_q8 *q, int32_t *out,
                    int m)
{
    void *work = malloc(embed_k_q8_work(m, q->k));
    struct q_prod pr = { q, 0, q->n, NULL, NULL, q->n, out };
    int rc;

    if (!work)
        return -1;
    rc = q_cols(level, x, q->k, &pr, 1, m, work);
    free(work);
    return rc;
}

void embed_k_linear_q8_ref(const float *x, const float *w, const float *b, float *y, int m,
                           int n, int k)
{
    int8_t *qx = malloc((size_t)k), *qw = malloc((size_t)k);
    int i, j, t;

    if (!qx || !qw)
        goto out;
    for (j = 0; j < n; j++) {
        float sw = q8_quant(w + (size_t)j * k, k, k, qw);

        for (i = 0; i < m; i++) {
            float sx = q8_quant(x + (size_t)i * k, k, k, qx);
            int32_t acc = 0;

            for (t = 0; t < k; t++)
                acc += qx[t] * qw[t];
            y[(size_t)i * n + j] = fmaf((float)acc, sx * sw, b ? b[j] : 0.0f);
        }
    }
out:
    free(qx);
    free(qw);
}
