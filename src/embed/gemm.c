/*
 * gemm.c: the encoder's own matrix product, y = x w^T + b on weights
 * packed once (the linear layers; see embed_k_linear_packed in kernels.c
 * for where it runs), and attention heads on the same kernels.
 *
 * Why: OpenBLAS's sgemm packs the weights again on every call, and with
 * OPENBLAS_CORETYPE=Haswell (or an OpenBLAS that does not know the CPU)
 * it runs AVX2 kernels on an AVX-512 CPU, at about half the speed the
 * CPU has. The weights of a model never change, so they are laid out
 * once (embed_k_pack) in the order the microkernel reads them, and only
 * the activations are packed per call.
 *
 * Layout of packed weights w[n][k]: panels of nr = 32 output columns
 * (16 when packed at the AVX2 level, g_nr); panel p holds, for t = 0..k-1,
 * the nr floats w[nr p + j][t] (zero past n), so one step of k is one or
 * two 64-byte aligned loads. A block of k steps [t0, t1) of a panel is a
 * contiguous run, which is all K-blocking needs.
 *
 * The loops (the usual GotoBLAS / BLIS order, on a pre-packed B):
 *   for each block of G_KC k steps
 *     for each block of MC rows of x: pack it, [MR rows][kc] -> [kc][MR]
 *       for each panel of nr columns (kc x nr floats, from L1 or L2)
 *         for each MR rows of the packed block (MC x kc: stays in L2)
 *           microkernel: an MR x nr tile of y in registers over kc steps
 * The first k block writes y (plus the bias), later ones add to it.
 *
 * Microkernels: AVX-512 12 x 32 (24 accumulators, 2 weight vectors and a
 * broadcast: 27 of 32 zmm registers; 24 FMAs per 14 loads) and AVX2+FMA
 * 6 x 16 (12 + 2 + 1 of 16 ymm), once per 16-column panel (twice on 32
 * columns packed at the AVX-512 level); and
 * shorter ones (10 x 32; 5 x 16 and 4 x 16) for a product of few rows
 * that they fit better (g_pick_mr: a query's 20 rows).
 * Edges: rows past m are zero in the packed block and never stored;
 * columns past n are zero in the panel and masked (AVX-512) or cut off
 * (AVX2) on store. The reference is embed_k_linear_ref (kernels.c).
 */
#include "embed/kernels.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define G_X86 1
#endif

#define G_NR  32      /* columns per panel */
#define G_MB  12      /* packed-x blocks are a multiple of this many rows: of 12, 6 and 4 */
/* k steps per block. Measured at the L12 shapes on a Zen 5 (1 MB L2,
 * bench/bench_gemm, best of 7 at m = 2048, with the block size made a
 * run-time knob for the sweep): the whole k = 1536 in one
 * block ran 214 GFLOP/s against 172-186 with 512 or 768 and ~100-160 with
 * 256 or 384, as every further block reads and writes y again; a panel's
 * 1536 x 32 floats (192 KB) then sits in L2 rather than L1, which cost
 * less. */
#define G_KC  1536
/* Bytes of packed x per block (MC rows x kc), kept in L2 beside a panel:
 * 168 rows at k = 384, 36 at k = 1536 (the row count barely mattered
 * between 48 and 192 rows at k = 1536). */
#define G_XBLOCK (256 * 1024)

struct embed_k_packed {
    const float *w;   /* the original, for the other paths */
    float *p;         /* ceil(n / 32) panels of k x 32 floats */
    int n, k;
    int ldw;          /* 0: w is [n][k]; else w is [k][n] with rows ldw apart */
    int nr;           /* panel width: g_nr of the level when packed */
    int view;         /* 1: p belongs to someone else (a mapped cache file) */
    struct embed_k_q8 *q8;   /* the int8 form (qgemm.c) instead of p, or NULL */
};

/* Panels of nr columns for n columns. */
static size_t g_panels(int n, int nr)
{
    return ((size_t)n + nr - 1) / nr;
}

/* The panel width for a SIMD level: 32 for AVX-512's 12 x 32 tiles, 16
 * for AVX2's 6 x 16. On 32-wide panels an AVX2 tile read 64 of every 128
 * bytes of each k step, and a query's products stalled on those loads
 * (45% of the kernel's samples in perf on a single load, 16 ms a query
 * against 8 on AVX-512): 16-wide panels are read straight through. */
static int g_nr(int level)
{
    return level >= 2 ? G_NR : G_NR / 2;
}

/* Rows [i0, i0 + mc) and k steps [t0, t0 + kc) of x (rows ldx apart),
 * times scale, into dst as ceil(mc / mr) blocks of [kc][mr], rows past m
 * as zeros (mr a multiple of 4). Groups of 4 rows go through 4 x 4 SSE
 * transposes: a plain strided copy took ~8% of a batch's time, as much
 * as a tenth of the products. */
static void g_pack_x(const float *x, int ldx, int m, int i0, int mc, int t0, int kc,
                     int mr, float scale, float *dst)
{
    int ib, r, t;

    for (ib = 0; ib < mc; ib += mr, dst += (size_t)kc * mr) {
        for (r = 0; r < mr; r++) {
            int row = i0 + ib + r;
            const float *src = x + (size_t)row * ldx + t0;
            size_t k = (size_t)ldx;

            t = 0;
            if (row + 3 < m && r % 4 == 0 && r + 3 < mr) {
#ifdef G_X86
                __m128 sc = _mm_set1_ps(scale);

                for (; t + 4 <= kc; t += 4) {
                    __m128 s0 = _mm_loadu_ps(src + t), s1 = _mm_loadu_ps(src + k + t);
                    __m128 s2 = _mm_loadu_ps(src + 2 * k + t), s3 = _mm_loadu_ps(src + 3 * k + t);

                    _MM_TRANSPOSE4_PS(s0, s1, s2, s3);
                    _mm_storeu_ps(dst + (size_t)t * mr + r, _mm_mul_ps(s0, sc));
                    _mm_storeu_ps(dst + (size_t)(t + 1) * mr + r, _mm_mul_ps(s1, sc));
                    _mm_storeu_ps(dst + (size_t)(t + 2) * mr + r, _mm_mul_ps(s2, sc));
                    _mm_storeu_ps(dst + (size_t)(t + 3) * mr + r, _mm_mul_ps(s3, sc));
                }
#endif
                for (; t < kc; t++) {   /* the k tail of all 4 rows */
                    dst[(size_t)t * mr + r] = scale * src[t];
                    dst[(size_t)t * mr + r + 1] = scale * src[k + t];
                    dst[(size_t)t * mr + r + 2] = scale * src[2 * k + t];
                    dst[(size_t)t * mr + r + 3] = scale * src[3 * k + t];
                }
                r += 3;
                continue;
            }
            for (; t < kc; t++)
                dst[(size_t)t * mr + r] = row < m ? scale * src[t] : 0.0f;
        }
    }
}

/* b[k][n] (the product's right side) into panels of nr columns at dst,
 * times scale: from w[n][k] (trans 0: the weight layout, b = w^T; a panel
 * is then the packed form of nr rows of w) or w[k][n] (trans 1), rows ldw
 * apart. */
static void g_pack_w(const float *w, int ldw, int trans, int n, int k, float scale,
                     int nr, float *dst)
{
    size_t jp;
    int j, t;

    if (!trans) {
        g_pack_x(w, ldw, n, 0, (int)g_panels(n, nr) * nr, 0, k, nr, scale, dst);
        return;
    }
    for (jp = 0; jp < g_panels(n, nr); jp++, dst += (size_t)k * nr) {
        int cols = n - (int)jp * nr < nr ? n - (int)jp * nr : nr;

        for (t = 0; t < k; t++) {
            const float *src = w + (size_t)t * ldw + jp * nr;
            float *d = dst + (size_t)t * nr;

            for (j = 0; j < cols; j++)
                d[j] = scale * src[j];
            for (; j < nr; j++)
                d[j] = 0.0f;
        }
    }
}

/* w[n][k] (trans 0) or w[k][n] with rows ldw apart (trans 1) into panels. */
static struct embed_k_packed *g_pack(const float *w, int trans, int ldw, int n, int k)
{
    struct embed_k_packed *pk = calloc(1, sizeof(*pk));

    if (!pk || n < 1 || k < 1)
        goto fail;
    /* 64-byte aligned: each k step of a panel is one or two aligned cache
     * lines */
    pk->nr = g_nr(embed_k_simd());
    pk->p = aligned_alloc(64, g_panels(n, pk->nr) * (size_t)k * pk->nr * sizeof(float));
    if (!pk->p)
        goto fail;
    pk->w = w;
    pk->n = n;
    pk->k = k;
    pk->ldw = trans ? ldw : 0;
    g_pack_w(w, trans ? ldw : k, trans, n, k, 1.0f, pk->nr, pk->p);
    return pk;
fail:
    if (pk)
        free(pk->p);
    free(pk);
    return NULL;
}

struct embed_k_packed *embed_k_pack(const float *w, int n, int k)
{
    return g_pack(w, 0, 0, n, k);
}

struct embed_k_packed *embed_k_pack_kn(const float *w, int ldw, int n, int k)
{
    return ldw < n ? NULL : g_pack(w, 1, ldw, n, k);
}

/* The int8 form of w, quantised now (img NULL) or over img. */
static struct embed_k_packed *g_pack_q8(const float *w, int ldw, int n, int k, const void *img)
{
    struct embed_k_packed *pk = calloc(1, sizeof(*pk));

    if (!pk || !(pk->q8 = img ? embed_k_q8_view(n, k, img)
                              : ldw ? embed_k_q8_new_kn(w, ldw, n, k) : embed_k_q8_new(w, n, k))) {
        free(pk);
        return NULL;
    }
    pk->w = w;
    pk->n = n;
    pk->k = k;
    pk->ldw = ldw;
    pk->nr = G_NR;
    return pk;
}

struct embed_k_packed *embed_k_pack_q8(const float *w, int n, int k)
{
    return g_pack_q8(w, 0, n, k, NULL);
}

struct embed_k_packed *embed_k_pack_q8_kn(const float *w, int ldw, int n, int k)
{
    return ldw < n ? NULL : g_pack_q8(w, ldw, n, k, NULL);
}

struct embed_k_packed *embed_k_packed_q8_view(const float *w, int ldw, int n, int k,
                                              const void *img)
{
    return (ldw && ldw < n) || !img ? NULL : g_pack_q8(w, ldw, n, k, img);
}

const struct embed_k_q8 *embed_k_packed_q8(const struct embed_k_packed *pk)
{
    return pk->q8;
}

int embed_k_packed_is_q8(const struct embed_k_packed *pk)
{
    return pk->q8 != NULL;
}

struct embed_k_packed *embed_k_packed_view(const float *w, int n, int k, int nr,
                                           const float *p)
{
    struct embed_k_packed *pk;

    if (n < 1 || k < 1 || (nr != G_NR && nr != G_NR / 2) || ((uintptr_t)p & 63))
        return NULL;
    if (!(pk = calloc(1, sizeof(*pk))))
        return NULL;
    pk->w = w;
    pk->p = (float *)p;   /* never written: the products only read panels */
    pk->n = n;
    pk->k = k;
    pk->nr = nr;
    pk->view = 1;
    return pk;
}

struct embed_k_packed *embed_k_packed_view_kn(const float *w, int ldw, int n, int k, int nr,
                                              const float *p)
{
    struct embed_k_packed *pk = ldw < n ? NULL : embed_k_packed_view(w, n, k, nr, p);

    if (pk)
        pk->ldw = ldw;   /* the other paths read w as [k][n] */
    return pk;
}

int embed_k_pack_width(void)
{
    return g_nr(embed_k_simd());
}

void embed_k_packed_free(struct embed_k_packed *pk)
{
    if (pk && !pk->view)
        free(pk->p);
    if (pk)
        embed_k_q8_free(pk->q8);
    free(pk);
}

const float *embed_k_packed_panels(const struct embed_k_packed *pk) { return pk->p; }
int embed_k_packed_nr(const struct embed_k_packed *pk) { return pk->nr; }

const float *embed_k_packed_w(const struct embed_k_packed *pk) { return pk->w; }
int embed_k_packed_n(const struct embed_k_packed *pk) { return pk->n; }
int embed_k_packed_k(const struct embed_k_packed *pk) { return pk->k; }
int embed_k_packed_ldw(const struct embed_k_packed *pk) { return pk->ldw; }

size_t embed_k_packed_bytes(const struct embed_k_packed *pk)
{
    if (pk->q8)
        return embed_k_q8_bytes(pk->q8);
    return g_panels(pk->n, pk->nr) * (size_t)pk->k * pk->nr * sizeof(float);
}

#ifdef G_X86
#define G_AVX512 __attribute__((target("avx512f,avx2,fma")))
#define G_AVX2   __attribute__((target("avx2,fma")))

/*
 * One MR x cols tile (cols <= 32) of y at c (rows ldc apart) over kc k
 * steps: a is the packed block's [kc][MR], b the panel at the block's
 * first k step. first: y = acc + bias (bias may be NULL), else y += acc.
 */
typedef void g_micro_fn(int kc, const float *a, const float *b, int ldb, float *c, int ldc,
                        int rows, int cols, const float *bias, int first, const char *pf,
                        int pfn);

/*
 * The microkernels are written once per tile height MR (a macro: MR must
 * be a constant, so the accumulators are indexed by constants only and
 * stay in registers). A product picks the height that wastes fewest
 * padded rows (g_pick_mr): a query's 20 rows are 2 x 10 on AVX-512 and
 * 4 x 5 on AVX2, where 12 and 6 padded them to 24 (a sixth of the FMAs
 * spent on zeros).
 */
#define G_MICRO_AVX512(MR)                                                                 \
G_AVX512 static void g_micro_avx512_##MR(int kc, const float *a, const float *b, int ldb,   \
                                         float *c, int ldc, int rows, int cols,            \
                                         const float *bias, int first, const char *pf,     \
                                         int pfn)                                          \
{                                                                                          \
    __m512 acc[MR][2];                                                                     \
    __mmask16 m0 = cols >= 16 ? 0xffff : (__mmask16)((1u << cols) - 1);                    \
    __mmask16 m1 = cols >= 32 ? 0xffff : cols <= 16 ? 0 : (__mmask16)((1u << (cols - 16)) - 1); \
    int t, r;                                                                              \
                                                                                           \
    (void)pf; (void)pfn;    /* not measured on AVX-512: no prefetch */                     \
    _Pragma("GCC unroll 16")                                                               \
    for (r = 0; r < MR; r++)                                                               \
        acc[r][0] = acc[r][1] = _mm512_setzero_ps();                                       \
    for (t = 0; t < kc; t++, a += MR, b += G_NR) {    /* ldb is G_NR */                   \
        __m512 b0 = _mm512_load_ps(b), b1 = _mm512_load_ps(b + 16);                        \
                                                                                           \
        _Pragma("GCC unroll 16")                                                           \
        for (r = 0; r < MR; r++) {                                                         \
            __m512 av = _mm512_set1_ps(a[r]);                                              \
                                                                                           \
            acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);                                \
            acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);                                \
        }                                                                                  \
    }                                                                                      \
    _Pragma("GCC unroll 16")                                                               \
    for (r = 0; r < MR; r++) {                                                             \
        float *cr = c + (size_t)r * ldc;                                                   \
        const float *add = first ? bias : cr;                                              \
                                                                                           \
        if (r >= rows)                                                                     \
            break;                                                                         \
        if (add) {                                                                         \
            acc[r][0] = _mm512_add_ps(acc[r][0], _mm512_maskz_loadu_ps(m0, add));          \
            acc[r][1] = _mm512_add_ps(acc[r][1], _mm512_maskz_loadu_ps(m1, add + 16));     \
        }                                                                                  \
        _mm512_mask_storeu_ps(cr, m0, acc[r][0]);                                          \
        _mm512_mask_storeu_ps(cr + 16, m1, acc[r][1]);                                     \
    }                                                                                      \
}

/* MR x 16 on one half of a panel (b's k steps ldb floats apart: 32 or
 * 16 in panels; attention's v read in place, not 32-byte aligned). A
 * whole half (16 columns) is stored from the registers, each value
 * acc + bias (or + y, or + 0: the same single add as the scalar edge, so
 * the same bits, -0 included); a narrower one goes out through a buffer,
 * so acc is indexed by constants only. The scalar store had been ~9% of
 * the 6 x 16 kernel's samples in a batch (perf, Zen 3): with k = 384 a
 * tile is ~2,300 cycles of FMAs and its 96 scalar adds and stores ~200. */
#define G_MICRO_AVX2(MR)                                                                   \
G_AVX2 static void g_micro_avx2_half_##MR(int kc, const float *a, const float *b, int ldb,  \
                                          float *c, int ldc, int rows, int cols,           \
                                          const float *bias, int first, const char *pf,    \
                                          int pfn)                                         \
{                                                                                          \
    __m256 acc[MR][2];                                                                     \
    float tile[MR][16];                                                                    \
    int t, r, j, every = pfn > 0 ? (kc + pfn - 1) / pfn : 0, cd = every;                   \
                                                                                           \
    _Pragma("GCC unroll 6")                                                                \
    for (r = 0; r < MR; r++)                                                               \
        acc[r][0] = acc[r][1] = _mm256_setzero_ps();                                       \
    for (t = 0; t < kc; t++, a += MR, b += ldb) {                                          \
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);                       \
                                                                                           \
        if (pfn > 0 && --cd == 0) {    /* one line of the next panel: see g_gemm */        \
            _mm_prefetch(pf, _MM_HINT_T0);                                                 \
            pf += 64;                                                                      \
            pfn--;                                                                         \
            cd = every;                                                                    \
        }                                                                                  \
        _Pragma("GCC unroll 6")                                                            \
        for (r = 0; r < MR; r++) {                                                         \
            __m256 av = _mm256_broadcast_ss(a + r);                                        \
                                                                                           \
            acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);                                \
            acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);                                \
        }                                                                                  \
    }                                                                                      \
    if (cols == 16) {    /* a whole half: stored from the registers */                    \
        _Pragma("GCC unroll 6")                                                            \
        for (r = 0; r < MR; r++) {                                                         \
            float *cr = c + (size_t)r * ldc;                                               \
            const float *add = first ? bias : cr;                                          \
            __m256 z = _mm256_setzero_ps();                                                \
                                                                                           \
            if (r >= rows)                                                                 \
                break;                                                                     \
            _mm256_storeu_ps(cr, _mm256_add_ps(acc[r][0], add ? _mm256_loadu_ps(add) : z)); \
            _mm256_storeu_ps(cr + 8, _mm256_add_ps(acc[r][1],                              \
                                                   add ? _mm256_loadu_ps(add + 8) : z));   \
        }                                                                                  \
        return;                                                                            \
    }                                                                                      \
    _Pragma("GCC unroll 6")                                                                \
    for (r = 0; r < MR; r++) {                                                             \
        _mm256_storeu_ps(tile[r], acc[r][0]);                                              \
        _mm256_storeu_ps(tile[r] + 8, acc[r][1]);                                          \
    }                                                                                      \
    for (r = 0; r < rows; r++) {                                                           \
        float *cr = c + (size_t)r * ldc;                                                   \
        const float *add = first ? bias : cr;                                              \
                                                                                           \
        for (j = 0; j < cols; j++)                                                         \
            cr[j] = tile[r][j] + (add ? add[j] : 0.0f);                                    \
    }                                                                                      \
}                                                                                          \
                                                                                           \
G_AVX2 static void g_micro_avx2_##MR(int kc, const float *a, const float *b, int ldb,       \
                                     float *c, int ldc, int rows, int cols,                \
                                     const float *bias, int first, const char *pf,         \
                                     int pfn)                                              \
{                                                                                          \
    g_micro_avx2_half_##MR(kc, a, b, ldb, c, ldc, rows, cols < 16 ? cols : 16, bias,       \
                           first, pf, cols > 16 ? pfn / 2 : pfn);                          \
    if (cols > 16)    /* a 32-wide panel (packed at the AVX-512 level) */                  \
        g_micro_avx2_half_##MR(kc, a, b + 16, ldb, c + 16, ldc, rows, cols - 16,           \
                               bias ? bias + 16 : NULL, first, pf + 64 * (pfn / 2),        \
                               pfn - pfn / 2);                                             \
}

G_MICRO_AVX512(12)
G_MICRO_AVX512(10)
G_MICRO_AVX2(6)
G_MICRO_AVX2(5)
G_MICRO_AVX2(4)

/* The tile height for m rows at a level (its microkernel in *micro): of
 * the heights the level has, the one that pads m least, the tallest on a
 * tie (fewer passes over each panel). */
static int g_pick_mr(int level, int m, g_micro_fn **micro)
{
    static const struct { int level, mr; g_micro_fn *fn; } k[] = {
        { 2, 12, g_micro_avx512_12 }, { 2, 10, g_micro_avx512_10 },
        { 1, 6, g_micro_avx2_6 }, { 1, 5, g_micro_avx2_5 }, { 1, 4, g_micro_avx2_4 } };
    int i, best = -1;
    long pad = 0;

    for (i = 0; i < (int)(sizeof(k) / sizeof(k[0])); i++) {
        long p = ((long)m + k[i].mr - 1) / k[i].mr * k[i].mr - m;

        if (k[i].level == (level >= 2 ? 2 : 1) && (best < 0 || p < pad)) {
            best = i;
            pad = p;
        }
    }
    *micro = k[best].fn;
    return k[best].mr;
}

/* The largest block of packed x for a product of inner size k: rows (a
 * multiple of 12, so of 6 and 4 too) and k steps. */
static void g_xblock(int k, int *mcmax, int *kcmax)
{
    *kcmax = k < G_KC ? k : G_KC;
    *mcmax = (int)(G_XBLOCK / ((size_t)*kcmax * sizeof(float))) / G_MB * G_MB;
    if (*mcmax < G_MB)
        *mcmax = G_MB;
}

/* y[m][n] (rows ldy apart) = x[m][k] (rows ldx apart) . b + bias, b in
 * panels of nr columns at bp, ldp k steps apart (ldp >= k: the first k
 * steps of longer panels), or with ldb > 0 (the AVX2 tiles only: level 1,
 * nr 16, n a multiple of it) b as it is, [k][n] rows ldb apart, each run
 * of nr columns a panel already; xp holds a block of packed x (g_xblock). */
static void g_gemm(int level, const float *x, int ldx, int m, int k, const float *bp, int ldp,
                   int ldb, int nr, int n, const float *bias, float *y, int ldy, float *xp)
{
    g_micro_fn *micro;
    int mr, mcmax, kcmax, t0, i0, jp, ir;

    g_xblock(k, &mcmax, &kcmax);
    /* a height off the block's multiple of 12 only where m is one block;
     * 16-wide panels only on the AVX2 tiles */
    mr = g_pick_mr(nr < G_NR ? 1 : level, m <= mcmax ? m : mcmax, &micro);
    for (t0 = 0; t0 < k; t0 += kcmax) {
        int kc = k - t0 < kcmax ? k - t0 : kcmax;

        for (i0 = 0; i0 < m; i0 += mcmax) {
            int mc = m - i0 < mcmax ? m - i0 : mcmax;

            int tiles = (mc + mr - 1) / mr, lines = (int)((size_t)kc * nr * sizeof(float) / 64);

            g_pack_x(x, ldx, m, i0, mc, t0, kc, mr, 1.0f, xp);
            for (jp = 0; jp * nr < n; jp++) {
                const float *b = ldb ? bp + (size_t)jp * nr + (size_t)t0 * ldb
                                     : bp + ((size_t)jp * ldp + t0) * nr;
                const char *next = !ldb && (jp + 1) * nr < n
                                   ? (const char *)(b + (size_t)ldp * nr) : NULL;
                int cols = n - jp * nr < nr ? n - jp * nr : nr, it;

                /* The panel's first pass comes from memory (a query's 85 MB
                 * of weights are read once), the others from cache; each
                 * tile prefetches its share of the next panel's lines, so
                 * that stream overlaps the FMAs instead of stalling them. */
                for (ir = 0, it = 0; ir < mc; ir += mr, it++) {
                    int l0 = (int)((long)lines * it / tiles);
                    int l1 = (int)((long)lines * (it + 1) / tiles);

                    micro(kc, xp + (size_t)ir * kc, b, ldb ? ldb : nr,
                          y + (size_t)(i0 + ir) * ldy + jp * nr, ldy,
                          mc - ir < mr ? mc - ir : mr, cols, bias ? bias + jp * nr : NULL, t0 == 0,
                          next ? next + (size_t)l0 * 64 : NULL, next ? l1 - l0 : 0);
                }
            }
        }
    }
}
#endif

/* Floats of packed x for a product of m rows and inner size k. */
static size_t g_xwork(int m, int k)
{
    int mcmax = G_MB, kcmax = 1;

#ifdef G_X86
    g_xblock(k, &mcmax, &kcmax);
#endif
    if (m < mcmax)
        mcmax = (m + G_MB - 1) / G_MB * G_MB;
    return (size_t)mcmax * kcmax;
}

size_t embed_k_gemm_work(int m, int k)
{
    /* the int8 product's, in floats, if it needs more */
    size_t q = (embed_k_q8_work(m, k) + sizeof(float) - 1) / sizeof(float);

    return g_xwork(m, k) > q ? g_xwork(m, k) : q;
}

int embed_k_gemm_packed_cols(int level, const float *x, int ldx,
                             const struct embed_k_packed *pk, int c0, int c1,
                             const float *bias, float *y, int ldy, int m, float *work)
{
    if (pk->q8)
        return embed_k_q8_cols(embed_k_q8_level_at(level), x, ldx, pk->q8, c0, c1, bias, y,
                               ldy, m, work);
#ifdef G_X86
    if (level < 1 || c0 < 0 || c0 % G_NR || c1 > pk->n)
        return -1;
    if (c1 > c0)
        g_gemm(level, x, ldx, m, pk->k, pk->p + (size_t)(c0 / pk->nr) * pk->k * pk->nr, pk->k,
               0, pk->nr, c1 - c0, bias ? bias + c0 : NULL, y + c0, ldy, work);
    return 0;
#else
    (void)level; (void)x; (void)ldx; (void)pk; (void)c0; (void)c1; (void)bias; (void)y;
    (void)ldy; (void)m; (void)work;
    return -1;
#endif
}

int embed_k_gemm_packed_w(int level, const float *x, const struct embed_k_packed *pk,
                          const float *bias, float *y, int m, float *work)
{
    float *xp = work;
    int rc;

    if (level < 1 && !pk->q8)
        return -1;
    if (!xp && !(xp = malloc(embed_k_gemm_work(m, pk->k) * sizeof(float))))
        return -1;
    rc = embed_k_gemm_packed_cols(level, x, pk->k, pk, 0, pk->n, bias, y, pk->n, m, xp);
    if (xp != work)
        free(xp);
    return rc;
}

int embed_k_gemm_packed(int level, const float *x, const struct embed_k_packed *pk,
                        const float *bias, float *y, int m)
{
    return embed_k_gemm_packed_w(level, x, pk, bias, y, m, NULL);
}

/* The most g_xwork(m, k') can be for any m and any k' <= k. g_xwork is
 * not monotonic in its sizes (a shorter k allows a taller block of rows:
 * g_xwork(300, 300) > g_xwork(512, 512)), and the attention work area is
 * sized once for the padded length, then used by every shorter sequence
 * of the batch. A row block is at most G_XBLOCK bytes, or G_MB rows when
 * k is too long for that. */
static size_t g_xwork_bound(int k)
{
    size_t kc = (size_t)(k < G_KC ? k : G_KC), a = G_XBLOCK / sizeof(float), b = G_MB * kc;

    return a > b ? a : b;
}

size_t embed_k_attention_work(int n, int hd)
{
    /* panels of 32 columns: as much as any narrower ones */
    return g_panels(n, G_NR) * G_NR * hd + g_panels(hd, G_NR) * G_NR * n +
           g_xwork_bound(n > hd ? n : hd);
}

/*
 * One head of one sequence: scores = softmax(q k^T * scale) row by row,
 * ctx = scores v. k is packed (scaled) as the right side of the first
 * product, v as that of the second; each is n x hd floats, so packing
 * costs ~1/n of the products.
 */
int embed_k_attention_packed(int level, const float *q, const float *k, const float *v,
                             float *ctx, int ld, int n, int hd, float scale,
                             float *scores, float *work)
{
#ifdef G_X86
    int nr = g_nr(level), i;
    float *kp = work, *vp = kp + g_panels(n, nr) * nr * hd, *xp = vp + g_panels(hd, nr) * nr * n;

    if (level < 1)
        return -1;
    g_pack_w(k, ld, 0, n, hd, scale, nr, kp);
    g_gemm(level, q, ld, n, hd, kp, hd, 0, nr, n, NULL, scores, n, xp);
    for (i = 0; i < n; i++)
        embed_k_softmax(scores + (size_t)i * n, n);
    /* On the AVX2 tiles v's rows are the panels' k steps already (packed,
     * they were times 1: the same values, so the same bits): packing v at
     * every head had been ~7% of attention's samples (perf, Zen 3), and
     * reading it in place ran attention ~12% faster. Not with AVX-512's
     * tiles, which read 32-wide panels 64 bytes apart. */
    if (level == 1 && nr == G_NR / 2 && hd % nr == 0) {
        g_gemm(level, scores, n, n, n, v, n, ld, nr, hd, NULL, ctx, ld, xp);
        return 0;
    }
    g_pack_w(v, ld, 1, hd, n, 1.0f, nr, vp);
    g_gemm(level, scores, n, n, n, vp, n, 0, nr, hd, NULL, ctx, ld, xp);
    return 0;
#else
    (void)level; (void)q; (void)k; (void)v; (void)ctx; (void)ld; (void)n; (void)hd;
    (void)scale; (void)scores; (void)work;
    return -1;
#endif
}
