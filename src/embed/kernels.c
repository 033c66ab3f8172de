/*
 * kernels.c: the encoder's numeric kernels (see kernels.h).
 *
 * The matrix products are >95% of the FLOPs. On CPUs with AVX2 or AVX-512
 * they run on cairn's own product over weights packed once (gemm.c; see
 * embed_k_linear_packed for why and where), else on OpenBLAS's
 * cblas_sgemm: ~120 GFLOP/s per core with its AVX2 kernels, ~210 with
 * its AVX-512 ones (Zen 5, L12 shapes). A product with few rows (a
 * query) on weights not yet packed, where OpenBLAS spends more time
 * packing them than multiplying, runs on k_linear_small_*, which read
 * them in place. The
 * element-wise work (layer norm, GELU, softmax) has AVX2+FMA forms chosen
 * at run time, with portable loops as the fallback. Each fast kernel has
 * a scalar reference `*_ref` (double accumulators, no BLAS) used only by
 * the tests, which run every form the CPU has against it.
 *
 * OpenBLAS is not linked: it is dlopen'ed at the first product it runs,
 * because its constructor (thread pool, buffers)
 * costs ~5 ms at every process start, and most cairn processes (hooks,
 * recall without a model) never encode. If it cannot be loaded, or
 * CAIRN_BLAS=none is set, the products it would run go to k_sgemm_scalar
 * (the same results, far slower); embed_k_note() says so, for the caller
 * to show.
 */
#include "embed/kernels.h"

#include "util/dl.h"

#include <cblas.h>          /* enums and blasint only: no symbol is linked */
#include <math.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define K_X86 1
#endif
#include <pthread.h>
#include <stdatomic.h>
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

/* The count this thread last gave embed_k_set_threads: it picks the
 * path of this thread's products (embed_k_linear_packed). Per thread,
 * because two models may run in two threads at once (embed.h); one
 * shared int let a pass switch paths (and bits) half-way through when the
 * other thread set its own count (test_embed_prop, test_two_models).
 * OpenBLAS's own count stays process-wide. */
static _Thread_local int k_threads = 1;
/* OpenBLAS's count, kept until it loads (embed_k_set_threads): a process
 * whose products all run packed (a query with the int8 file) never loads
 * it, which was ~19% of a one-shot query's CPU (dlopen's relocations,
 * OpenBLAS's thread pool). 0: never set, OpenBLAS's own default. */
static _Atomic int k_blas_want, k_blas_ready, k_blas_tried;

static void k_init(void)
{
    static const char *const names[] = {"cblas_sgemm", "openblas_set_num_threads"};
    void *syms[2];
    /* One of the few variables the library reads itself (docs/
     * ARCHITECTURE.md, "Settings"): OpenBLAS is loaded once per process,
     * on the first product, wherever it comes from (a handle's ingest, a
     * model loaded without any handle), so no handle could carry it. */
    const char *env = getenv("CAIRN_BLAS");
    char why[400];

    atomic_store(&k_blas_tried, 1);
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
    /* ready before want is read, as embed_k_set_threads stores want before
     * it reads ready: one of the two gives OpenBLAS the latest count */
    atomic_store(&k_blas_ready, 1);
    if (atomic_load(&k_blas_want) > 0)
        k_blas.set_threads(atomic_load(&k_blas_want));
}

int embed_k_blas_tried(void)
{
    return atomic_load(&k_blas_tried);
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
    k_threads = n < 1 ? 1 : n;
    atomic_store(&k_blas_want, k_threads);
    if (atomic_load(&k_blas_ready))
        k_blas.set_threads(k_threads);
}

/* ---- AVX2 + FMA forms of the element-wise kernels ---------------------- */

/*
 * gcc -O2 vectorises none of the element-wise loops below (their
 * reductions are in float, which it may not reorder, and erff / expf are
 * library calls), and at a 32 x 128 batch they were ~30% of the time once
 * the matrix products ran on AVX-512. These forms do the same arithmetic
 * 8 floats at a time, with exp and erfc as polynomials; each agrees with
 * the `*_ref` reference to float rounding (tests/unit/
 * test_embed_kernels.c runs every form). They are chosen at run time:
 * the CPU must have AVX2 and FMA (and AVX-512 F for the one AVX-512
 * kernel), and embed_k_simd_enable (tests) can cap the choice.
 */
const char *embed_k_simd_name(int level)
{
    return level >= 2 ? "avx512" : level == 1 ? "avx2" : "portable";
}

static int k_simd_max = 2;
static int k_simd_env = 2;          /* CAIRN_SIMD's cap, read once */
static int k_vnni_env = 3;          /* CAIRN_SIMD's cap on the VNNI kinds (bits) */
static int k_cpu_vnni;              /* the CPU's AVX-VNNI (1), read once: see k_cpu_avxvnni */
static pthread_once_t k_simd_once = PTHREAD_ONCE_INIT;

#ifdef K_X86
/* AVX-VNNI from CPUID (leaf 7, subleaf 1, EAX bit 4), not
 * __builtin_cpu_supports("avxvnni"): clang 14 rejects that name, and
 * `make fuzz` builds the library with clang. Read once (k_simd_init):
 * CPUID traps to the hypervisor in a VM, and the int8 product asks for the
 * level at every call (6% of a query's samples when it ran each time).
 * embed_k_simd_vnni checks AVX2 first, so the OS saves the ymm registers
 * this needs. */
static int k_cpu_avxvnni(void)
{
    unsigned a = 0, b = 0, c = 0, d = 0;

    if (!__get_cpuid_count(7, 1, &a, &b, &c, &d))
        return 0;
    return (a >> 4) & 1;
}
#endif

/* CAIRN_SIMD=avx2 (or portable) caps the level for the whole process, so
 * the AVX2 path can be measured and used on an AVX-512 CPU (bench/
 * bench_encoder_ort.sh runs each level). Like CAIRN_BLAS it is read by
 * the library itself: the kernels run under models that may have no
 * store handle to carry a setting. avx2 means the instructions of an
 * AVX2 CPU without VNNI (the int8 product's sign-trick kernel, qgemm.c);
 * avxvnni the AVX2 level with AVX-VNNI, where the CPU has it. Any other
 * value (avx512 too) leaves the CPU's level. */
static void k_simd_init(void)
{
    const char *env = getenv("CAIRN_SIMD");
    int level;

#ifdef K_X86
    k_cpu_vnni = k_cpu_avxvnni();
#endif
    for (level = 0; env && level < 2; level++)
        if (strcmp(env, embed_k_simd_name(level)) == 0) {
            k_simd_env = level;
            k_vnni_env = 0;
        }
    if (env && strcmp(env, "avxvnni") == 0) {
        k_simd_env = 1;
        k_vnni_env = 1;
    }
}

void embed_k_simd_enable(int level)
{
    k_simd_max = level < 0 ? 0 : level > 2 ? 2 : level;
}

int embed_k_simd_cpu(void)
{
#ifdef K_X86
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return 0;
    return __builtin_cpu_supports("avx512f") ? 2 : 1;
#else
    return 0;
#endif
}

int embed_k_simd_vnni(void)
{
    int v = 0;

    pthread_once(&k_simd_once, k_simd_init);
#ifdef K_X86
    if (embed_k_simd_cpu() >= 1 && k_cpu_vnni)
        v |= 1;
    if (embed_k_simd_cpu() >= 2 && __builtin_cpu_supports("avx512vnni"))
        v |= 2;
#endif
    return v & k_vnni_env;
}

int embed_k_simd(void)
{
    int level = embed_k_simd_cpu();

    pthread_once(&k_simd_once, k_simd_init);
    if (level > k_simd_env)
        level = k_simd_env;
    return level > k_simd_max ? k_simd_max : level;
}


#ifdef K_X86
#define K_AVX2 __attribute__((target("avx2,fma")))

/* The element-wise kernels below run on w vectors at a time (w = 1 or
 * 2, a constant where they are inlined), each step written for all w
 * before the next: the steps of one vector are a chain of ~50 dependent
 * operations (GELU: a division, 9 FMAs, e^x's 8), and the CPU's
 * scheduler holds too few of them to overlap one vector's chain with the
 * next one's; two chains side by side in the code run GELU ~9% faster
 * (Zen 3: 15.7 -> 14.3 ns per 8 floats, best of 2,000 rows of 1,536; 4
 * chains spill registers and ran 17.4) and softmax's e^x ~7%. Each lane
 * gets the same operations, so the same bits (docs/EMBED.md, "The int8
 * batch's activation side"). */
#define K_EACH(w, stmt)                                                      \
    do {                                                                     \
        int j_;                                                              \
        _Pragma("GCC unroll 2")                                              \
        for (j_ = 0; j_ < (w); j_++) {                                       \
            stmt;                                                            \
        }                                                                    \
    } while (0)
#define K_INLINE K_AVX2 static inline __attribute__((always_inline))

/* e^x of x[0..w-1], 8 lanes each, in place: Cephes expf (2^n times a
 * degree-7 polynomial on |r| <= ln2/2, ln 2 split in two so r is exact);
 * ~1 ulp. Below -87.3 the result is 0 (where expf would give a denormal
 * or 0), above 88.3 it stays at e^88.3 ~ 2e38 (inputs here never get
 * there). */
/* e^x's steps shared by the 8- and 16-lane forms (W = 256 or 512, the
 * same operations per lane): x clamped, n = round(x log2 e), r = x - n ln 2,
 * the polynomial in p, 2^n in e; the caller zeroes the lanes that were
 * below -87.3. */
#define K_RNE256(v) _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define K_RNE512(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#define K_EXP_STEPS(W, w, x, n, r, r2, p, e)                                              \
    do {                                                                                  \
        K_EACH(w, x[j_] = _mm##W##_min_ps(_mm##W##_max_ps(x[j_], _mm##W##_set1_ps(-87.3f)), \
                                          _mm##W##_set1_ps(88.3f)));                      \
        K_EACH(w, n[j_] = K_RNE##W(_mm##W##_mul_ps(x[j_],                                 \
                                                   _mm##W##_set1_ps(1.44269504088896341f)))); \
        K_EACH(w, r[j_] = _mm##W##_fnmadd_ps(n[j_], _mm##W##_set1_ps(0.693359375f), x[j_])); \
        K_EACH(w, r[j_] = _mm##W##_fnmadd_ps(n[j_], _mm##W##_set1_ps(-2.12194440e-4f), r[j_])); \
        K_EACH(w, r2[j_] = _mm##W##_mul_ps(r[j_], r[j_]));                                \
        K_EACH(w, p[j_] = _mm##W##_fmadd_ps(_mm##W##_set1_ps(1.9875691500e-4f), r[j_],    \
                                            _mm##W##_set1_ps(1.3981999507e-3f)));         \
        K_EACH(w, p[j_] = _mm##W##_fmadd_ps(p[j_], r[j_], _mm##W##_set1_ps(8.3334519073e-3f))); \
        K_EACH(w, p[j_] = _mm##W##_fmadd_ps(p[j_], r[j_], _mm##W##_set1_ps(4.1665795894e-2f))); \
        K_EACH(w, p[j_] = _mm##W##_fmadd_ps(p[j_], r[j_], _mm##W##_set1_ps(1.6666665459e-1f))); \
        K_EACH(w, p[j_] = _mm##W##_fmadd_ps(p[j_], r[j_], _mm##W##_set1_ps(5.0000001201e-1f))); \
        K_EACH(w, p[j_] = _mm##W##_fmadd_ps(p[j_], r2[j_],                                \
                                            _mm##W##_add_ps(r[j_], _mm##W##_set1_ps(1.0f)))); \
        K_EACH(w, e[j_] = _mm##W##_slli_epi32(_mm##W##_add_epi32(_mm##W##_cvtps_epi32(n[j_]), \
                                                                 _mm##W##_set1_epi32(127)), 23)); \
    } while (0)

K_INLINE void k_exp8w(__m256 *x, int w)
{
    __m256 n[2], r[2], r2[2], p[2], under[2];
    __m256i e[2];

    K_EACH(w, under[j_] = _mm256_cmp_ps(x[j_], _mm256_set1_ps(-87.3f), _CMP_LT_OQ));
    K_EXP_STEPS(256, w, x, n, r, r2, p, e);
    K_EACH(w, x[j_] = _mm256_andnot_ps(under[j_],
                                       _mm256_mul_ps(p[j_], _mm256_castsi256_ps(e[j_]))));
}

K_AVX2 static inline __m256 k_exp8(__m256 x)
{
    k_exp8w(&x, 1);
    return x;
}

/* Exact GELU of x[0..w-1], 8 lanes each, in place. With z = |x|/sqrt 2,
 * 1 + erf(x/sqrt 2) is erfc(z) for x < 0 and 2 - erfc(z) for x >= 0, and
 * erfc(z) (z >= 0) is the Chebyshev fit of Numerical Recipes' erfcc,
 * t exp(-z^2 + P(t)) with t = 1/(1 + z/2), relative error < 1.2e-7 over
 * all z >= 0. Going through erfc keeps the relative error small where
 * GELU is tiny (x << 0), which a polynomial for erf would not. */
K_INLINE void k_gelu8w(__m256 *x, int w)
{
    static const float c[9] = { -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                 -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f,
                                 -1.26551223f };
    const __m256 sign = _mm256_set1_ps(-0.0f), one = _mm256_set1_ps(1.0f);
    __m256 t[2], p[2], a[2];
    int i;

    K_EACH(w, t[j_] = _mm256_mul_ps(_mm256_andnot_ps(sign, x[j_]),
                                    _mm256_set1_ps(0.70710678118654752f)));
    K_EACH(w, t[j_] = _mm256_div_ps(one, _mm256_fmadd_ps(t[j_], _mm256_set1_ps(0.5f), one)));
    K_EACH(w, p[j_] = _mm256_set1_ps(0.17087277f));
    _Pragma("GCC unroll 9")
    for (i = 0; i < 9; i++)
        K_EACH(w, p[j_] = _mm256_fmadd_ps(p[j_], t[j_], _mm256_set1_ps(c[i])));
    /* -z^2 + P as -x/2 * x + P in one fused rounding: z itself is
     * rounded, and e^(-z^2) magnifies that by 2 z^2 */
    K_EACH(w, a[j_] = _mm256_fmadd_ps(_mm256_mul_ps(x[j_], _mm256_set1_ps(-0.5f)), x[j_], p[j_]));
    k_exp8w(a, w);
    K_EACH(w, a[j_] = _mm256_mul_ps(t[j_], a[j_]));   /* erfc(z) */
    K_EACH(w, a[j_] = _mm256_blendv_ps(_mm256_sub_ps(_mm256_set1_ps(2.0f), a[j_]), a[j_],
                                       _mm256_cmp_ps(x[j_], _mm256_setzero_ps(), _CMP_LT_OQ)));
    K_EACH(w, x[j_] = _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x[j_]), a[j_]));
}

K_AVX2 static inline __m256 k_gelu8(__m256 x)
{
    k_gelu8w(&x, 1);
    return x;
}

K_AVX2 static float k_hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

K_AVX2 static float k_hmax8(__m256 v)
{
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));

    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* A tail of n < 8 floats as a vector, missing lanes filled with fill. */
K_AVX2 static __m256 k_load_tail(const float *p, int n, float fill)
{
    float tmp[8];
    int i;

    for (i = 0; i < 8; i++)
        tmp[i] = i < n ? p[i] : fill;
    return _mm256_loadu_ps(tmp);
}

K_AVX2 static void k_store_tail(float *p, __m256 v, int n)
{
    float tmp[8];
    int i;

    _mm256_storeu_ps(tmp, v);
    for (i = 0; i < n; i++)
        p[i] = tmp[i];
}

K_AVX2 static void k_gelu_avx2(float *x, size_t n)
{
    size_t i;

    for (i = 0; i + 16 <= n; i += 16) {
        __m256 v[2] = { _mm256_loadu_ps(x + i), _mm256_loadu_ps(x + i + 8) };

        k_gelu8w(v, 2);
        _mm256_storeu_ps(x + i, v[0]);
        _mm256_storeu_ps(x + i + 8, v[1]);
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, k_gelu8(_mm256_loadu_ps(x + i)));
    if (i < n)
        k_store_tail(x + i, k_gelu8(k_load_tail(x + i, (int)(n - i), 0.0f)), (int)(n - i));
}

/* ReLU, 32 floats a step. vmaxps(x, 0) returns x where x > 0 and its
 * second operand, +0, everywhere else (NaN and -0 included): the rule of
 * the portable loop (embed_k_relu_ref), so the same bits. That loop is a
 * compare and a branch a float in gcc 12's -O2 code, mispredicted on
 * about half the signs of a product's outputs: 3.9% of a USE-lite batch
 * on a Zen 3 (perf), for a pass that reads and writes T x inner floats. */
K_AVX2 static void k_relu_avx2(float *x, size_t n)
{
    const __m256 z = _mm256_setzero_ps();
    size_t i;

    for (i = 0; i + 32 <= n; i += 32) {
        __m256 a = _mm256_max_ps(_mm256_loadu_ps(x + i), z);
        __m256 b = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), z);
        __m256 c = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), z);
        __m256 d = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), z);

        _mm256_storeu_ps(x + i, a);
        _mm256_storeu_ps(x + i + 8, b);
        _mm256_storeu_ps(x + i + 16, c);
        _mm256_storeu_ps(x + i + 24, d);
    }
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(x + i, _mm256_max_ps(_mm256_loadu_ps(x + i), z));
    if (i < n)
        k_store_tail(x + i, _mm256_max_ps(k_load_tail(x + i, (int)(n - i), 0.0f), z),
                     (int)(n - i));
}

/* Softmax's last steps of 8 from x + i up to body, then the tail of n %
 * 8: e^(x - m) stored, and added to sum in order (both widths' forms end
 * here). */
K_AVX2 static __m256 k_softmax_rest8(float *x, int i, int body, int tail, __m256 m, __m256 sum)
{
    for (; i < body; i += 8) {
        __m256 e = k_exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), m));
        _mm256_storeu_ps(x + i, e);
        sum = _mm256_add_ps(sum, e);
    }
    if (tail) {
        /* only the stored lanes count: the sum re-reads them */
        __m256 e = k_exp8(_mm256_sub_ps(k_load_tail(x + body, tail, 0.0f), m));
        k_store_tail(x + body, e, tail);
        sum = _mm256_add_ps(sum, k_load_tail(x + body, tail, 0.0f));
    }
    return sum;
}

K_AVX2 static void k_softmax_avx2(float *x, int n)
{
    __m256 mx = _mm256_set1_ps(-INFINITY), sum = _mm256_setzero_ps(), m, inv;
    int i, tail = n % 8, body = n - tail;
    float s;

    for (i = 0; i < body; i += 8)
        mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + i));
    if (tail)
        mx = _mm256_max_ps(mx, k_load_tail(x + body, tail, -INFINITY));
    m = _mm256_set1_ps(k_hmax8(mx));
    for (i = 0; i + 16 <= body; i += 16) {   /* two chains (k_exp8w); the sum in order */
        __m256 e[2] = { _mm256_sub_ps(_mm256_loadu_ps(x + i), m),
                        _mm256_sub_ps(_mm256_loadu_ps(x + i + 8), m) };

        k_exp8w(e, 2);
        _mm256_storeu_ps(x + i, e[0]);
        _mm256_storeu_ps(x + i + 8, e[1]);
        sum = _mm256_add_ps(_mm256_add_ps(sum, e[0]), e[1]);
    }
    sum = k_softmax_rest8(x, i, body, tail, m, sum);
    s = k_hsum8(sum);
    inv = _mm256_set1_ps(1.0f / s);
    for (i = 0; i < body; i += 8)
        _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), inv));
    for (i = body; i < n; i++)
        x[i] *= 1.0f / s;
}

/* Residual add and layer norm of w rows (w = 1 or 2) at row, dim apart:
 * each pass written for all w rows (K_EACH), as the mean's and the
 * variance's sums are each one chain of dim / 8 dependent adds per row;
 * every row's own operations and order are unchanged, so the same bits. */
K_INLINE void k_layernorm_rows(float *row, const float *rr, const float *g, const float *b,
                               int dim, float eps, int w)
{
    int i, tail = dim % 8, body = dim - tail;
    __m256 acc[2], vm[2], vi[2];
    float mean[2], var[2], inv[2];

    if (rr) {
        K_EACH(w, for (i = 0; i < body; i += 8)
                      _mm256_storeu_ps(row + (size_t)j_ * dim + i,
                                       _mm256_add_ps(_mm256_loadu_ps(row + (size_t)j_ * dim + i),
                                                     _mm256_loadu_ps(rr + (size_t)j_ * dim + i)));
                  for (; i < dim; i++)
                      row[(size_t)j_ * dim + i] += rr[(size_t)j_ * dim + i]);
    }
    K_EACH(w, acc[j_] = _mm256_setzero_ps());
    for (i = 0; i < body; i += 8)
        K_EACH(w, acc[j_] = _mm256_add_ps(acc[j_], _mm256_loadu_ps(row + (size_t)j_ * dim + i)));
    K_EACH(w, mean[j_] = k_hsum8(acc[j_]));
    K_EACH(w, for (i = body; i < dim; i++) mean[j_] += row[(size_t)j_ * dim + i]);
    K_EACH(w, mean[j_] /= (float)dim; vm[j_] = _mm256_set1_ps(mean[j_]);
              acc[j_] = _mm256_setzero_ps());
    for (i = 0; i < body; i += 8)
        K_EACH(w, __m256 d = _mm256_sub_ps(_mm256_loadu_ps(row + (size_t)j_ * dim + i), vm[j_]);
                  acc[j_] = _mm256_fmadd_ps(d, d, acc[j_]));
    K_EACH(w, var[j_] = k_hsum8(acc[j_]));
    K_EACH(w, for (i = body; i < dim; i++)
                  var[j_] += (row[(size_t)j_ * dim + i] - mean[j_]) *
                             (row[(size_t)j_ * dim + i] - mean[j_]));
    K_EACH(w, var[j_] /= (float)dim; inv[j_] = 1.0f / sqrtf(var[j_] + eps);
              vi[j_] = _mm256_set1_ps(inv[j_]));
    K_EACH(w, float *o = row + (size_t)j_ * dim;
              for (i = 0; i < body; i += 8) {
                  __m256 d = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(o + i), vm[j_]), vi[j_]);
                  _mm256_storeu_ps(o + i, _mm256_fmadd_ps(d, _mm256_loadu_ps(g + i),
                                                          _mm256_loadu_ps(b + i)));
              }
              for (; i < dim; i++)
                  o[i] = (o[i] - mean[j_]) * inv[j_] * g[i] + b[i]);
}

K_AVX2 static void k_add_layernorm_avx2(float *x, const float *res, const float *g,
                                        const float *b, int rows, int dim, float eps)
{
    int r;

    for (r = 0; r + 2 <= rows; r += 2)
        k_layernorm_rows(x + (size_t)r * dim, res ? res + (size_t)r * dim : NULL, g, b, dim,
                         eps, 2);
    if (r < rows)
        k_layernorm_rows(x + (size_t)r * dim, res ? res + (size_t)r * dim : NULL, g, b, dim,
                         eps, 1);
}
/* Four 8-lane sums as one 4-vector: [sum p, sum q, sum s, sum v]. */
K_AVX2 static inline __m128 k_sum4(__m256 p, __m256 q, __m256 s, __m256 v)
{
    __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(p, q), _mm256_hadd_ps(s, v));

    return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

/*
 * y[m][n] = x[m][k] . w[n][k]^T + b for few rows (a query's 20 tokens).
 * OpenBLAS packs the whole weight matrix into its panel layout on every
 * call, which at m = 20 costs more than the products (48% of a query's
 * time went to sgemm_incopy); this reads w in place instead. Blocks of
 * 3 rows of x by 4 rows of w are 12 dot products in 12 registers; a
 * 4-row block of w (6 KB at k = 384) stays in L1 while all of x passes
 * it, so w is read from memory once. Short blocks at the edges repeat a
 * row and store only the real ones; k % 8 trailing terms are added in
 * scalar code.
 */
K_AVX2 static void k_linear_small_avx2(const float *x, const float *w, const float *b,
                                       float *y, int m, int n, int k)
{
    int kb = k - k % 8, nib = (m + 2) / 3, i, j, t, u, r;

    for (j = 0; j < n; j += 4) {
        int nj = n - j < 4 ? n - j : 4;
        /* the next 4 rows of w, as cache lines: each block of x rows
         * prefetches its share, so that their first read from memory
         * overlaps this block's FMAs (see g_gemm in gemm.c) */
        size_t nrows = n - j - nj < 4 ? (size_t)(n - j - nj) : 4;
        const char *next = (const char *)(w + (size_t)(j + nj) * k);
        long lines = (long)(nrows * k * sizeof(float) / 64);
        const float *w0 = w + (size_t)j * k;
        const float *w1 = w + (size_t)(j + (nj > 1)) * k;
        const float *w2 = w + (size_t)(j + (nj > 2) * 2) * k;
        const float *w3 = w + (size_t)(j + (nj > 3) * 3) * k;

        for (i = 0; i < m; i += 3) {
            int ni = m - i < 3 ? m - i : 3;
            const float *xr[3];
            __m256 a00 = _mm256_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
            __m256 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
            __m256 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
            __m128 row[3];

            long l0 = lines * (i / 3) / nib, pfn = lines * (i / 3 + 1) / nib - l0;
            const char *pf = next + l0 * 64;
            int every = pfn > 0 ? (int)((kb / 8 + pfn - 1) / pfn) : 0, cd = every;

            for (r = 0; r < 3; r++)
                xr[r] = x + (size_t)(i + (r < ni ? r : 0)) * k;
            for (t = 0; t < kb; t += 8) {
                __m256 x0 = _mm256_loadu_ps(xr[0] + t), x1 = _mm256_loadu_ps(xr[1] + t);
                __m256 x2 = _mm256_loadu_ps(xr[2] + t), wv;

                if (pfn > 0 && --cd == 0) {
                    _mm_prefetch(pf, _MM_HINT_T0);
                    pf += 64;
                    pfn--;
                    cd = every;
                }

                wv = _mm256_loadu_ps(w0 + t);
                a00 = _mm256_fmadd_ps(x0, wv, a00);
                a10 = _mm256_fmadd_ps(x1, wv, a10);
                a20 = _mm256_fmadd_ps(x2, wv, a20);
                wv = _mm256_loadu_ps(w1 + t);
                a01 = _mm256_fmadd_ps(x0, wv, a01);
                a11 = _mm256_fmadd_ps(x1, wv, a11);
                a21 = _mm256_fmadd_ps(x2, wv, a21);
                wv = _mm256_loadu_ps(w2 + t);
                a02 = _mm256_fmadd_ps(x0, wv, a02);
                a12 = _mm256_fmadd_ps(x1, wv, a12);
                a22 = _mm256_fmadd_ps(x2, wv, a22);
                wv = _mm256_loadu_ps(w3 + t);
                a03 = _mm256_fmadd_ps(x0, wv, a03);
                a13 = _mm256_fmadd_ps(x1, wv, a13);
                a23 = _mm256_fmadd_ps(x2, wv, a23);
            }
            row[0] = k_sum4(a00, a01, a02, a03);
            row[1] = k_sum4(a10, a11, a12, a13);
            row[2] = k_sum4(a20, a21, a22, a23);
            for (r = 0; r < ni; r++) {
                float out[4];
                const float *wr[4] = { w0, w1, w2, w3 };

                _mm_storeu_ps(out, row[r]);
                for (u = 0; u < nj; u++) {
                    float acc = out[u];
                    for (t = kb; t < k; t++)
                        acc += xr[r][t] * wr[u][t];
                    y[(size_t)(i + r) * n + j + u] = acc + (b ? b[j + u] : 0.0f);
                }
            }
        }
    }
}
/* The same for CPUs with AVX-512 (twice the width; a Zen 5 or a Xeon does
 * twice the FLOPs per cycle with it): blocks of 4 rows of x by 4 of w,
 * k in steps of 16, the 512-bit sums folded to 256 bits for k_sum4. */
#define K_AVX512 __attribute__((target("avx512f,avx2,fma")))

K_AVX512 static inline __m256 k_fold512(__m512 v)
{
    return _mm256_add_ps(_mm512_castps512_ps256(v),
                         _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

K_AVX512 static void k_linear_small_avx512(const float *x, const float *w, const float *b,
                                           float *y, int m, int n, int k)
{
    int kb = k - k % 16, i, j, t, u, r;

    for (j = 0; j < n; j += 4) {
        int nj = n - j < 4 ? n - j : 4;
        const float *wr[4];

        for (u = 0; u < 4; u++)
            wr[u] = w + (size_t)(j + (u < nj ? u : 0)) * k;
        for (i = 0; i < m; i += 4) {
            int ni = m - i < 4 ? m - i : 4;
            const float *xr[4];
            const float *w0 = wr[0], *w1 = wr[1], *w2 = wr[2], *w3 = wr[3];
            __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00;
            __m512 a10 = a00, a11 = a00, a12 = a00, a13 = a00;
            __m512 a20 = a00, a21 = a00, a22 = a00, a23 = a00;
            __m512 a30 = a00, a31 = a00, a32 = a00, a33 = a00;
            __m128 row[4];

            for (r = 0; r < 4; r++)
                xr[r] = x + (size_t)(i + (r < ni ? r : 0)) * k;
            for (t = 0; t < kb; t += 16) {
                __m512 x0 = _mm512_loadu_ps(xr[0] + t), x1 = _mm512_loadu_ps(xr[1] + t);
                __m512 x2 = _mm512_loadu_ps(xr[2] + t), x3 = _mm512_loadu_ps(xr[3] + t);
                __m512 wv;

#define K_COL(wp, c0, c1, c2, c3) \
                wv = _mm512_loadu_ps((wp) + t); \
                c0 = _mm512_fmadd_ps(x0, wv, c0); c1 = _mm512_fmadd_ps(x1, wv, c1); \
                c2 = _mm512_fmadd_ps(x2, wv, c2); c3 = _mm512_fmadd_ps(x3, wv, c3)
                K_COL(w0, a00, a10, a20, a30);
                K_COL(w1, a01, a11, a21, a31);
                K_COL(w2, a02, a12, a22, a32);
                K_COL(w3, a03, a13, a23, a33);
#undef K_COL
            }
            row[0] = k_sum4(k_fold512(a00), k_fold512(a01), k_fold512(a02), k_fold512(a03));
            row[1] = k_sum4(k_fold512(a10), k_fold512(a11), k_fold512(a12), k_fold512(a13));
            row[2] = k_sum4(k_fold512(a20), k_fold512(a21), k_fold512(a22), k_fold512(a23));
            row[3] = k_sum4(k_fold512(a30), k_fold512(a31), k_fold512(a32), k_fold512(a33));
            for (r = 0; r < ni; r++) {
                float out[4];

                _mm_storeu_ps(out, row[r]);
                for (u = 0; u < nj; u++) {
                    float sum = out[u];
                    for (t = kb; t < k; t++)
                        sum += xr[r][t] * wr[u][t];
                    y[(size_t)(i + r) * n + j + u] = sum + (b ? b[j + u] : 0.0f);
                }
            }
        }
    }
}

/* GELU 16 lanes at a time: k_exp8w and k_gelu8w's operations, in the
 * same order, on 512-bit vectors (andnot and blendv become integer and
 * mask forms, which give the same values), so each value keeps the bits
 * the AVX2 form gives it and the vectors do not move with the level.
 * GELU was ~13% of an int8 AVX-512 batch's forward pass in perf (8.6% of
 * the samples of `bench_embed --only batch --layers 4`), at 8 lanes. */
#define K_INLINE512 K_AVX512 static inline __attribute__((always_inline))

K_INLINE512 __m512 k_abs16(__m512 v)
{
    return _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v),
                                                 _mm512_set1_epi32(0x7fffffff)));
}

K_INLINE512 void k_exp16w(__m512 *x, int w)
{
    __m512 n[2], r[2], r2[2], p[2];
    __mmask16 under[2];
    __m512i e[2];

    K_EACH(w, under[j_] = _mm512_cmp_ps_mask(x[j_], _mm512_set1_ps(-87.3f), _CMP_LT_OQ));
    K_EXP_STEPS(512, w, x, n, r, r2, p, e);
    /* andnot(under, v) of the AVX2 form: +0.0 where under */
    K_EACH(w, x[j_] = _mm512_maskz_mov_ps((__mmask16)~under[j_],
                                          _mm512_mul_ps(p[j_], _mm512_castsi512_ps(e[j_]))));
}

K_INLINE512 void k_gelu16w(__m512 *x, int w)
{
    static const float c[9] = { -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                 -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f,
                                 -1.26551223f };
    const __m512 one = _mm512_set1_ps(1.0f);
    __m512 t[2], p[2], a[2];
    int i;

    K_EACH(w, t[j_] = _mm512_mul_ps(k_abs16(x[j_]), _mm512_set1_ps(0.70710678118654752f)));
    K_EACH(w, t[j_] = _mm512_div_ps(one, _mm512_fmadd_ps(t[j_], _mm512_set1_ps(0.5f), one)));
    K_EACH(w, p[j_] = _mm512_set1_ps(0.17087277f));
    _Pragma("GCC unroll 9")
    for (i = 0; i < 9; i++)
        K_EACH(w, p[j_] = _mm512_fmadd_ps(p[j_], t[j_], _mm512_set1_ps(c[i])));
    K_EACH(w, a[j_] = _mm512_fmadd_ps(_mm512_mul_ps(x[j_], _mm512_set1_ps(-0.5f)), x[j_], p[j_]));
    k_exp16w(a, w);
    K_EACH(w, a[j_] = _mm512_mul_ps(t[j_], a[j_]));   /* erfc(z) */
    K_EACH(w, a[j_] = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(x[j_], _mm512_setzero_ps(),
                                                              _CMP_LT_OQ),
                                           _mm512_sub_ps(_mm512_set1_ps(2.0f), a[j_]), a[j_]));
    K_EACH(w, x[j_] = _mm512_mul_ps(_mm512_mul_ps(_mm512_set1_ps(0.5f), x[j_]), a[j_]));
}

/* Softmax with e^x 16 lanes at a time, and everything else as
 * k_softmax_avx2 does it, so the same bits (for rows without NaN): the
 * maximum is the same value in any order, and the sum is still kept in 8
 * lanes, each 16 values' two halves added in order as the AVX2 form adds
 * its two chains, then its tail and k_hsum8. (Softmax was 4.4% of the
 * samples of an int8 AVX-512 batch, perf, `bench_embed --only batch
 * --layers 4`; e^x is most of it.) */
K_AVX512 static void k_softmax_avx512(float *x, int n)
{
    __m512 mx16 = _mm512_set1_ps(-INFINITY), m16, inv16;
    __m256 mx, sum = _mm256_setzero_ps(), m;
    int i, tail = n % 8, body = n - tail;
    float s;

    for (i = 0; i + 16 <= body; i += 16)
        mx16 = _mm512_max_ps(mx16, _mm512_loadu_ps(x + i));
    mx = _mm256_max_ps(_mm512_castps512_ps256(mx16),
                       _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(mx16), 1)));
    if (i < body)
        mx = _mm256_max_ps(mx, _mm256_loadu_ps(x + i));
    if (tail)
        mx = _mm256_max_ps(mx, k_load_tail(x + body, tail, -INFINITY));
    m = _mm256_set1_ps(k_hmax8(mx));
    m16 = _mm512_set1_ps(k_hmax8(mx));
    for (i = 0; i + 32 <= body; i += 32) {
        __m512 e[2] = { _mm512_sub_ps(_mm512_loadu_ps(x + i), m16),
                        _mm512_sub_ps(_mm512_loadu_ps(x + i + 16), m16) };

        k_exp16w(e, 2);
        _mm512_storeu_ps(x + i, e[0]);
        _mm512_storeu_ps(x + i + 16, e[1]);
        sum = _mm256_add_ps(_mm256_add_ps(sum, _mm512_castps512_ps256(e[0])),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e[0]), 1)));
        sum = _mm256_add_ps(_mm256_add_ps(sum, _mm512_castps512_ps256(e[1])),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e[1]), 1)));
    }
    for (; i + 16 <= body; i += 16) {
        __m512 e = _mm512_sub_ps(_mm512_loadu_ps(x + i), m16);

        k_exp16w(&e, 1);
        _mm512_storeu_ps(x + i, e);
        sum = _mm256_add_ps(_mm256_add_ps(sum, _mm512_castps512_ps256(e)),
                            _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1)));
    }
    sum = k_softmax_rest8(x, i, body, tail, m, sum);
    s = k_hsum8(sum);
    inv16 = _mm512_set1_ps(1.0f / s);
    for (i = 0; i + 16 <= body; i += 16)
        _mm512_storeu_ps(x + i, _mm512_mul_ps(_mm512_loadu_ps(x + i), inv16));
    for (; i < n; i++)
        x[i] *= 1.0f / s;
}

K_AVX512 static void k_gelu_avx512(float *x, size_t n)
{
    size_t i;

    for (i = 0; i + 32 <= n; i += 32) {
        __m512 v[2] = { _mm512_loadu_ps(x + i), _mm512_loadu_ps(x + i + 16) };

        k_gelu16w(v, 2);
        _mm512_storeu_ps(x + i, v[0]);
        _mm512_storeu_ps(x + i + 16, v[1]);
    }
    for (; i < n; i += 16) {
        __mmask16 m = n - i >= 16 ? 0xffff : (__mmask16)((1u << (n - i)) - 1);
        __m512 v = _mm512_maskz_loadu_ps(m, x + i);

        k_gelu16w(&v, 1);
        _mm512_mask_storeu_ps(x + i, m, v);
    }
}
#endif

/* ---- linear ---------------------------------------------------------- */

/* Up to this many rows embed_k_linear uses k_linear_small_* rather than
 * OpenBLAS, which packs all of w first. Measured on a Zen 5 at the L12
 * shapes (n x k = 384 x 384, 1536 x 384, 384 x 1536), GFLOP/s at m = 20:
 * AVX-512 kernel 160-170, AVX2 kernel ~110, OpenBLAS 87 (Haswell
 * kernels) or 102-115 (its AVX-512 kernels); at m = 48 OpenBLAS's
 * AVX-512 kernels win (~170 vs ~155). */
#define K_SMALL_M_AVX512 32
#define K_SMALL_M_AVX2   24

void embed_k_linear(const float *x, const float *w, const float *b,
                    float *y, int m, int n, int k)
{
    int i;

#ifdef K_X86
    {
        int level = embed_k_simd();

        pthread_once(&k_once, k_init);
        if (level == 2 && m <= K_SMALL_M_AVX512) {
            k_linear_small_avx512(x, w, b, y, m, n, k);
            return;
        }
        if (level == 1 && m <= K_SMALL_M_AVX2) {
            k_linear_small_avx2(x, w, b, y, m, n, k);
            return;
        }
    }
#endif
    /* Seed y with the bias so sgemm can accumulate onto it (beta = 1). */
    if (b) {
        for (i = 0; i < m; i++)
            memcpy(y + (size_t)i * n, b, (size_t)n * sizeof(float));
    }
    k_sgemm(1, m, n, k, 1.0f, x, k, w, k, b ? 1.0f : 0.0f, y, n);
}

/*
 * Which product runs on packed weights (bench/bench_gemm, 1 thread, Zen 5,
 * L12 shapes, medians of one run, GFLOP/s): the packed product at either
 * level, at every row count.
 *  - AVX-512: at m = 2048 the 12 x 32 kernel ran 136-152 against 72-76 for
 *    OpenBLAS's AVX2 kernels (1.8-2.0x); against its AVX-512 kernels,
 *    141-147 to 134-142. At m = 20 it ran 127-134 against 92-122 for
 *    k_linear_small_avx512, which reads the weights in place.
 *  - AVX2: the 6 x 16 kernel tied with OpenBLAS's Haswell kernels on
 *    batches (73-74 against 72-76), and a query on it (5 x 16 tiles,
 *    packed attention, both threads: bert.c) is what beats ONNX Runtime
 *    (docs/EMBED.md, "Speed"); one path for batches and queries also
 *    keeps a text's bits the same alone and in a batch.
 *  - OpenBLAS with several threads (one long sequence of USE-lite; bert.c
 *    splits its own): OpenBLAS, which splits each product between them.
 */
static int k_packed_level(void)
{
    return embed_k_simd();
}

int embed_k_packed_pays(void)
{
    return k_packed_level() > 0;
}

void embed_k_linear_packed(const float *x, const struct embed_k_packed *pk,
                           const float *b, float *y, int m)
{
    embed_k_linear_packed_w(x, pk, b, y, m, NULL);
}

void embed_k_linear_packed_w(const float *x, const struct embed_k_packed *pk,
                             const float *b, float *y, int m, float *work)
{
    int level = k_threads > 1 && embed_k_blas() ? 0 : k_packed_level();

    /* the int8 form has no f32 panels, and its products must not depend
     * on the path: it runs at any level (qgemm.c) */
    if (embed_k_packed_is_q8(pk) &&
        embed_k_gemm_packed_w(k_packed_level(), x, pk, b, y, m, work) == 0)
        return;
    if (level > 0 && embed_k_gemm_packed_w(level, x, pk, b, y, m, work) == 0)
        return;
    if (embed_k_packed_ldw(pk))
        embed_k_linear_kn(x, embed_k_packed_w(pk), embed_k_packed_ldw(pk), b, y, m,
                          embed_k_packed_n(pk), embed_k_packed_k(pk));
    else
        embed_k_linear(x, embed_k_packed_w(pk), b, y, m, embed_k_packed_n(pk),
                       embed_k_packed_k(pk));
}

int embed_k_linear_packed_n(const float *x, const struct embed_k_packed *const *pk,
                            const float *const *b, float *const *y, int n, int m)
{
    const struct embed_k_q8 *q[EMBED_K_Q8_MAXN];
    void *work;
    int i, rc;

    if (n < 1 || n > EMBED_K_Q8_MAXN)
        return -1;
    for (i = 0; i < n; i++)
        if (!(q[i] = embed_k_packed_q8(pk[i])) ||
            embed_k_packed_k(pk[i]) != embed_k_packed_k(pk[0]))
            return -1;
    if (!(work = malloc(embed_k_q8_work(m, embed_k_packed_k(pk[0])))))
        return -1;
    /* the level embed_k_linear_packed's int8 product runs at */
    rc = embed_k_q8_cols_n(embed_k_q8_level_at(k_packed_level()), x, q, b, y, n, m, work);
    free(work);
    return rc;
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

#ifdef K_X86
    if (embed_k_simd()) {
        k_add_layernorm_avx2(x, res, g, b, rows, dim, eps);
        return;
    }
#endif
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

/* Exact GELU. The portable form calls glibc's erff (about 4 ns/element,
 * ~15% of a 32x128 L12 batch); the AVX2 form (k_gelu8) is ~10x faster. */
void embed_k_gelu(float *x, size_t n)
{
    size_t i;

#ifdef K_X86
    if (embed_k_simd() >= 2) {
        k_gelu_avx512(x, n);
        return;
    }
    if (embed_k_simd()) {
        k_gelu_avx2(x, n);
        return;
    }
#endif
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
#ifdef K_X86
    if (embed_k_simd()) {
        k_relu_avx2(x, n);
        return;
    }
#endif
    embed_k_relu_ref(x, n);
}

void embed_k_relu_ref(float *x, size_t n)
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

#ifdef K_X86
    if (embed_k_simd() >= 2) {
        k_softmax_avx512(x, n);
        return;
    }
    if (embed_k_simd()) {
        k_softmax_avx2(x, n);
        return;
    }
#endif
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
 * apart, so the products read it in place with lda = hidden:
 *   S[n][n]          = q_bh . k_bh^T / sqrt(head_dim)
 *   S                = row-wise softmax(S)
 *   ctx_bh[n][hd]    = S . v_bh
 * on the packed product (embed_k_attention_packed) where it runs for the
 * linear layers, else on sgemm. Padding rows and columns are never
 * computed (see kernels.h).
 */
void embed_k_attention(const float *q, const float *k, const float *v,
                       float *ctx, const int *lens, int batch, int seq,
                       int heads, int head_dim, float *scratch)
{
    embed_k_attention_w(q, k, v, ctx, lens, batch, seq, heads, head_dim, scratch, NULL);
}

void embed_k_attention_w(const float *q, const float *k, const float *v,
                         float *ctx, const int *lens, int batch, int seq,
                         int heads, int head_dim, float *scratch, float *given)
{
    int hidden = heads * head_dim, level = k_packed_level();
    float scale = 1.0f / sqrtf((float)head_dim), *work = given;
    int b, h, i;

    /* the packed product where it runs for the linear layers (OpenBLAS's
     * AVX2 kernels took ~12% of a 32 x 128 batch here, per-call packing
     * included) */
    if (level > 0 && !work)
        work = aligned_alloc(64, (embed_k_attention_work(seq, head_dim) * sizeof(float) + 63) &
                                 ~(size_t)63);
    for (b = 0; b < batch; b++) {
        int n = lens[b];
        size_t base = (size_t)b * seq * hidden;

        for (h = 0; h < heads; h++) {
            const float *qb = q + base + (size_t)h * head_dim;
            const float *kb = k + base + (size_t)h * head_dim;
            const float *vb = v + base + (size_t)h * head_dim;
            float *cb = ctx + base + (size_t)h * head_dim;

            if (work && embed_k_attention_packed(level, qb, kb, vb, cb, hidden, n, head_dim,
                                                 scale, scratch, work) == 0)
                continue;
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
    if (work != given)
        free(work);
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
