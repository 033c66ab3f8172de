/*
 * dense.c: the dense side of hybrid recall: exact top-k by cosine over
 * every vector of the current model in scope.
 *
 * The question is embedded (is_query), quantised like the stored vectors
 * (int8 and a scale), and dotted with each stored piece; the cosine is
 * that dot times both inverse norms (the stored ones are computed once,
 * when the set is read out of SQLite, and kept in the cache file:
 * store/vectors.c, store/veccache.c). A message's score is its best
 * piece's. The scan is exact, not approximate: at a
 * million 512-d int8 vectors it reads 512 MB, which the SIMD kernels do
 * at memory speed, split over threads when the set is large
 * (bench/bench_dense.c).
 *
 * Kernels: the scan's int8 dot at four levels (scalar reference, AVX2,
 * AVX-VNNI, AVX-512 VNNI), the f32 one and the general int8 one at two
 * (scalar, AVX2), chosen once at run time from the CPU and CAIRN_SIMD;
 * the int8 sums are exact at every level, so every level ranks the same
 * (tests/unit/test_dense_levels.c, test_hybrid.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <immintrin.h>

#include "embed/kernels.h"
#include "recall/recall.h"
#include "recall/policy.h"
#include "store/post.h"
#include "store/recall_read.h"
#include "util/utf8.h"

#define DENSE_THREADS     2
/* Vectors scored a kernel call: 256 int32 on the stack, and the
 * question's bias share (VNNI) summed once for them. */
#define DENSE_BLOCK       256

/* ---- kernels -------------------------------------------------------- */

int32_t dense_dot_i8_ref(const int8_t *a, const int8_t *b, int n)
{
    int32_t s = 0;
    for (int i = 0; i < n; i++)
        s += (int32_t)a[i] * (int32_t)b[i];
    return s;
}

float dense_dot_f32_ref(const float *a, const float *b, int n)
{
    float s = 0;
    for (int i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The scan's kernels score count vectors of dim bytes, one after the
 * other at v, against the question q: out[j] = q . v[j], exactly, so
 * every level ranks the same. */
static void dots_i8q_ref(const int8_t *q, const int8_t *v, int dim, size_t count, int32_t *out)
{
    for (size_t j = 0; j < count; j++)
        out[j] = dense_dot_i8_ref(q, v + j * (size_t)dim, dim);
}

/* The sum of x's eight int32 lanes. */
__attribute__((target("avx2"))) static inline int32_t hsum_i32_avx2(__m256i x)
{
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

__attribute__((target("avx2"))) static int32_t dot_i8_avx2(const int8_t *a, const int8_t *b,
                                                           int n)
{
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    int i = 0;
    /* sign-extend 16 bytes to 16 int16 lanes, multiply pairs and add them
     * into int32 (vpmaddwd): |sum of 2 products| <= 32258, no overflow */
    for (; i + 32 <= n; i += 32) {
        __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        __m256i x1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i + 16)));
        __m256i y1 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i + 16)));
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x0, y0));
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(x1, y1));
    }
    for (; i + 16 <= n; i += 16) {
        __m256i x0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(a + i)));
        __m256i y0 = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(b + i)));
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(x0, y0));
    }
    int32_t r = hsum_i32_avx2(_mm256_add_epi32(acc0, acc1));
    for (; i < n; i++)
        r += (int32_t)a[i] * (int32_t)b[i];
    return r;
}

/* The AVX2 scan (dense_dot_i8q): q, the question as vec_quantize makes
 * it, never holds -128, so vpmaddubsw can multiply |v| (unsigned, up to
 * 128 for a stored -128) by q * sign(v) (signed, -127..127) and add
 * pairs into int16: |a pair| <= 2 * 128 * 127 = 32512, never saturated.
 * Five instructions a 32 bytes against dot_i8_avx2's twelve (it widens
 * both sides to int16 first); the same exact integer sum. */
__attribute__((target("avx2"))) static inline int32_t dot_i8q_avx2(const int8_t *q,
                                                                   const int8_t *v, int n)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
    int i = 0;
    for (; i + 64 <= n; i += 64) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(v + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(v + i + 32));
        __m256i q0 = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i q1 = _mm256_loadu_si256((const __m256i *)(q + i + 32));
        __m256i p0 = _mm256_maddubs_epi16(_mm256_abs_epi8(v0), _mm256_sign_epi8(q0, v0));
        __m256i p1 = _mm256_maddubs_epi16(_mm256_abs_epi8(v1), _mm256_sign_epi8(q1, v1));
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(p0, ones));
        acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(p1, ones));
    }
    for (; i + 32 <= n; i += 32) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(v + i));
        __m256i q0 = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i p0 = _mm256_maddubs_epi16(_mm256_abs_epi8(v0), _mm256_sign_epi8(q0, v0));
        acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(p0, ones));
    }
    int32_t r = hsum_i32_avx2(_mm256_add_epi32(acc0, acc1));
    for (; i < n; i++)
        r += (int32_t)q[i] * (int32_t)v[i];
    return r;
}

__attribute__((target("avx2"))) static void dots_i8q_avx2(const int8_t *q, const int8_t *v,
                                                          int dim, size_t count, int32_t *out)
{
    for (size_t j = 0; j < count; j++)
        out[j] = dot_i8q_avx2(q, v + j * (size_t)dim, dim);
}

/* The VNNI scans: vpdpbusd multiplies unsigned bytes by signed ones and
 * adds each four products into an int32 lane, without saturating. The
 * stored byte v is made unsigned by flipping its top bit (v ^ 0x80 =
 * v + 128, 0..255), so each lane sums (v + 128) * q, and 128 * sum(q),
 * the same for every vector, comes off at the end: two instructions a
 * register (AVX2's sign trick needs five), any int8 on either side
 * (|4 * 255 * 128| fits an int32 lane easily), and the exact sum. */
static int32_t bias_share(const int8_t *q, int dim)
{
    int32_t s = 0;
    for (int i = 0; i < dim; i++)
        s += q[i];
    return 128 * s;
}

#define DK_VNNI __attribute__((target("avx2,avxvnni")))
DK_VNNI static void dots_i8q_avxvnni(const int8_t *q, const int8_t *v, int dim, size_t count,
                                     int32_t *out)
{
    const __m256i bias = _mm256_set1_epi8((char)0x80);
    const int body = dim & ~31;
    const int32_t share = bias_share(q, body);
    for (size_t j = 0; j < count; j++) {
        const int8_t *x = v + j * (size_t)dim;
        __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
        int i = 0;
        for (; i + 64 <= body; i += 64) {
            __m256i x0 = _mm256_loadu_si256((const __m256i *)(x + i));
            __m256i x1 = _mm256_loadu_si256((const __m256i *)(x + i + 32));
            a0 = _mm256_dpbusd_avx_epi32(a0, _mm256_xor_si256(x0, bias),
                                         _mm256_loadu_si256((const __m256i *)(q + i)));
            a1 = _mm256_dpbusd_avx_epi32(a1, _mm256_xor_si256(x1, bias),
                                         _mm256_loadu_si256((const __m256i *)(q + i + 32)));
        }
        if (i < body)
            a0 = _mm256_dpbusd_avx_epi32(
                a0, _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + i)), bias),
                _mm256_loadu_si256((const __m256i *)(q + i)));
        int32_t r = hsum_i32_avx2(_mm256_add_epi32(a0, a1)) - share;
        for (i = body; i < dim; i++)
            r += (int32_t)q[i] * (int32_t)x[i];
        out[j] = r;
    }
}

#define DK_512 __attribute__((target("avx512f,avx512bw,avx512vnni")))
DK_512 static void dots_i8q_avx512(const int8_t *q, const int8_t *v, int dim, size_t count,
                                   int32_t *out)
{
    const __m512i bias = _mm512_set1_epi8((char)0x80);
    const int32_t share = bias_share(q, dim);
    const int body = dim & ~63;
    /* the last dim % 64 bytes by a masked load: its other lanes read as
     * 0 in q, so they add nothing */
    const __mmask64 tail = (dim & 63) ? (1ULL << (dim & 63)) - 1 : 0;
    for (size_t j = 0; j < count; j++) {
        const int8_t *x = v + j * (size_t)dim;
        __m512i a0 = _mm512_setzero_si512(), a1 = _mm512_setzero_si512();
        int i = 0;
        for (; i + 128 <= body; i += 128) {
            a0 = _mm512_dpbusd_epi32(a0, _mm512_xor_si512(_mm512_loadu_si512(x + i), bias),
                                     _mm512_loadu_si512(q + i));
            a1 = _mm512_dpbusd_epi32(a1, _mm512_xor_si512(_mm512_loadu_si512(x + i + 64), bias),
                                     _mm512_loadu_si512(q + i + 64));
        }
        if (i < body)
            a0 = _mm512_dpbusd_epi32(a0, _mm512_xor_si512(_mm512_loadu_si512(x + i), bias),
                                     _mm512_loadu_si512(q + i));
        if (tail)
            a1 = _mm512_dpbusd_epi32(
                a1, _mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, x + body), bias),
                _mm512_maskz_loadu_epi8(tail, q + body));
        out[j] = _mm512_reduce_add_epi32(_mm512_add_epi32(a0, a1)) - share;
    }
}

__attribute__((target("avx2,fma"))) static float dot_f32_avx2(const float *a, const float *b,
                                                              int n)
{
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
    }
    for (; i + 8 <= n; i += 8)
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc0 = _mm256_add_ps(acc0, acc1);
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(acc0), _mm256_extractf128_ps(acc0, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 0x55));
    float r = _mm_cvtss_f32(s);
    for (; i < n; i++)
        r += a[i] * b[i];
    return r;
}

/* The levels, each with its scan kernel. Which ones may run is what the
 * CPU has capped by CAIRN_SIMD, read by the encoder's kernels
 * (embed/kernels.h) so that one variable caps both: avx2 or portable
 * allow no VNNI, avxvnni no AVX-512. The f32 scan (the setting vec.f32,
 * for measuring) and dense_dot_i8 stay at AVX2 above it. */
enum { DK_SCALAR, DK_AVX2, DK_AVXVNNI, DK_AVX512, DK_LEVELS };
typedef void (*dots_fn)(const int8_t *, const int8_t *, int, size_t, int32_t *);
static const struct dk {
    const char *name;
    dots_fn dots;
} dk[DK_LEVELS] = {
    { "scalar", dots_i8q_ref },
    { "avx2", dots_i8q_avx2 },
    { "avxvnni", dots_i8q_avxvnni },
    { "avx512vnni", dots_i8q_avx512 },
};
static int dk_allowed;              /* bit per level */
static int dk_level;                /* in use */
static pthread_once_t kernels_once = PTHREAD_ONCE_INIT;

static void pick_kernels(void)
{
    int simd = embed_k_simd(), vnni = embed_k_simd_vnni();

    __builtin_cpu_init();
    dk_allowed = 1 << DK_SCALAR;
    if (simd >= 1) {
        dk_allowed |= 1 << DK_AVX2;
        if (vnni & 1)
            dk_allowed |= 1 << DK_AVXVNNI;
        if ((vnni & 2) && __builtin_cpu_supports("avx512bw"))
            dk_allowed |= 1 << DK_AVX512;
    }
    for (int l = 0; l < DK_LEVELS; l++)
        if (dk_allowed >> l & 1)
            dk_level = l;
}

static void kernels(void)
{
    pthread_once(&kernels_once, pick_kernels);
}

int32_t dense_dot_i8(const int8_t *a, const int8_t *b, int n)
{
    kernels();
    return dk_level >= DK_AVX2 ? dot_i8_avx2(a, b, n) : dense_dot_i8_ref(a, b, n);
}

int32_t dense_dot_i8q(const int8_t *q, const int8_t *v, int n)
{
    int32_t r;
    kernels();
    dk[dk_level].dots(q, v, n, 1, &r);
    return r;
}

void dense_dots_i8q(const int8_t *q, const int8_t *v, int dim, size_t count, int32_t *out)
{
    kernels();
    dk[dk_level].dots(q, v, dim, count, out);
}

float dense_dot_f32(const float *a, const float *b, int n)
{
    kernels();
    return dk_level >= DK_AVX2 ? dot_f32_avx2(a, b, n) : dense_dot_f32_ref(a, b, n);
}

const char *dense_kernel_name(void)
{
    kernels();
    return dk[dk_level].name;
}

int dense_kernel_set(const char *name)
{
    kernels();
    for (int l = 0; l < DK_LEVELS; l++)
        if (name ? !strcmp(name, dk[l].name) && (dk_allowed >> l & 1) : dk_allowed >> l & 1) {
            dk_level = l;
            if (name)
                return 0;
        }
    return name ? -1 : 0;
}

/* ---- top-k ---------------------------------------------------------- */

/* A min-heap of (score, piece index): the k best pieces seen. */
struct heap { float *s; int64_t *i; int n, k; };

static void heap_push(struct heap *h, float s, int64_t idx)
{
    int c;
    if (h->n < h->k) {
        c = h->n++;
        while (c > 0) {
            int p = (c - 1) / 2;
            if (h->s[p] <= s)
                break;
            h->s[c] = h->s[p];
            h->i[c] = h->i[p];
            c = p;
        }
        h->s[c] = s;
        h->i[c] = idx;
        return;
    }
    if (s <= h->s[0])
        return;
    c = 0;
    for (;;) {
        int l = 2 * c + 1, r = l + 1, m = c;
        float ms = s;
        if (l < h->n && h->s[l] < ms) {
            m = l;
            ms = h->s[l];
        }
        if (r < h->n && h->s[r] < ms)
            m = r;
        if (m == c)
            break;
        h->s[c] = h->s[m];
        h->i[c] = h->i[m];
        c = m;
    }
    h->s[c] = s;
    h->i[c] = idx;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

struct scan {
    const struct vec_set *set;
    const int8_t *q8;
    const float *qf;
    float q_inv;                  /* 1 / |query as stored| */
    const int64_t *allowed;       /* sorted session rows, or NULL: all */
    int n_allowed;
    int64_t except;               /* a session row left out (0: none) */
    size_t from, to;
    struct heap h;
};

static void *scan_run(void *arg)
{
    struct scan *sc = arg;
    const struct vec_set *s = sc->set;
    const dots_fn dots = dk[dk_level].dots;
    int dim = s->dim;
    int32_t d[DENSE_BLOCK];
    for (size_t b = sc->from; b < sc->to; b += DENSE_BLOCK) {
        size_t cnt = sc->to - b < DENSE_BLOCK ? sc->to - b : DENSE_BLOCK;
        if (!s->f32)
            dots(sc->q8, s->v8 + b * (size_t)dim, dim, cnt, d);
        for (size_t j = 0; j < cnt; j++) {
            size_t i = b + j;
            float cs = s->f32 ? dense_dot_f32(sc->qf, s->vf + i * (size_t)dim, dim)
                              : (float)d[j];
            cs *= s->inv_norm[i] * sc->q_inv;
            if (sc->h.n == sc->h.k && cs <= sc->h.s[0])
                continue;
            if (sc->allowed && !bsearch(&s->sess[i], sc->allowed, (size_t)sc->n_allowed,
                                        sizeof *sc->allowed, cmp_i64))
                continue;
            if (s->sess[i] == sc->except && sc->except)
                continue;
            heap_push(&sc->h, cs, (int64_t)i);
        }
    }
    return NULL;
}

static int cmp_hit_desc(const void *a, const void *b)
{
    const struct dense_hit *x = a, *y = b;
    if (x->cos != y->cos)
        return x->cos < y->cos ? 1 : -1;
    return x->msg < y->msg ? -1 : x->msg > y->msg;
}

static int topk(const struct vec_set *s, const float *q, const int64_t *allowed, int n_allowed,
                int64_t except, int k, int threads, struct dense_hit *out)
{
    int kp = k * DENSE_PIECES_MULT, nt, got = 0;
    struct scan sc[DENSE_THREADS];
    int8_t q8buf[4096];
    float qscale = 0;
    double qn = 0;
    int rc = -1;

    kernels();
    if (!s || s->n == 0 || k <= 0)
        return 0;
    if (s->dim > (int)sizeof q8buf)
        return -1;
    if (s->f32) {
        for (int i = 0; i < s->dim; i++)
            qn += (double)q[i] * q[i];
    } else {
        vec_quantize(q, s->dim, q8buf, &qscale);
        for (int i = 0; i < s->dim; i++)
            qn += (double)q8buf[i] * q8buf[i];
    }
    if (qn <= 0)
        return 0;
    nt = threads < 1 ? 1 : threads > DENSE_THREADS ? DENSE_THREADS : threads;
    if (s->n < DENSE_MT_MIN)
        nt = 1;
    memset(sc, 0, sizeof sc);
    for (int t = 0; t < nt; t++) {
        sc[t].set = s;
        sc[t].q8 = q8buf;
        sc[t].qf = q;
        sc[t].q_inv = (float)(1.0 / sqrt(qn));
        sc[t].allowed = allowed;
        sc[t].n_allowed = n_allowed;
        sc[t].except = except;
        sc[t].from = s->n * (size_t)t / (size_t)nt;
        sc[t].to = s->n * (size_t)(t + 1) / (size_t)nt;
        sc[t].h.k = kp;
        sc[t].h.s = malloc((size_t)kp * sizeof(float));
        sc[t].h.i = malloc((size_t)kp * sizeof(int64_t));
        if (!sc[t].h.s || !sc[t].h.i)
            goto out;
    }
    {
        pthread_t tid[DENSE_THREADS];
        int started[DENSE_THREADS] = { 0 };
        for (int t = 1; t < nt; t++)
            started[t] = pthread_create(&tid[t], NULL, scan_run, &sc[t]) == 0;
        scan_run(&sc[0]);
        for (int t = 1; t < nt; t++) {
            if (started[t])
                pthread_join(tid[t], NULL);
            else
                scan_run(&sc[t]);        /* no thread: do its share here */
        }
    }
    /* Merge the heaps, best piece per message. */
    {
        int total = 0;
        for (int t = 0; t < nt; t++)
            total += sc[t].h.n;
        struct dense_hit *all = malloc((size_t)(total ? total : 1) * sizeof *all);
        if (!all)
            goto out;
        int n = 0;
        for (int t = 0; t < nt; t++) {
            for (int j = 0; j < sc[t].h.n; j++) {
                size_t i = (size_t)sc[t].h.i[j];
                all[n].msg = s->msg[i];
                all[n].sess = s->sess[i];
                all[n].cos = sc[t].h.s[j];
                n++;
            }
        }
        qsort(all, (size_t)n, sizeof *all, cmp_hit_desc);
        for (int j = 0; j < n && got < k; j++) {
            int dup = 0;
            for (int m = 0; m < got && !dup; m++)
                dup = out[m].msg == all[j].msg;
            if (!dup)
                out[got++] = all[j];
        }
        free(all);
    }
    rc = got;
out:
    for (int t = 0; t < nt; t++) {
        free(sc[t].h.s);
        free(sc[t].h.i);
    }
    return rc;
}

int dense_topk(const struct vec_set *s, const float *q, const int64_t *allowed, int n_allowed,
               int k, int threads, struct dense_hit *out)
{
    return topk(s, q, allowed, n_allowed, 0, k, threads, out);
}

int dense_topk_except(const struct vec_set *s, const float *q, int64_t except, int k,
                      int threads, struct dense_hit *out)
{
    return topk(s, q, NULL, 0, except, k, threads, out);
}

/* ---- recall's use of it ------------------------------------------- */

/* Share of the question's letters that are CJK ideographs or kana. */
static double cjk_share(const char *s)
{
    size_t len = strlen(s), i = 0;
    int letters = 0, cjk = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        uint32_t cp;
        int n;
        if (c < 0x80) {
            cp = c;
            n = 1;
        } else if ((c & 0xE0) == 0xC0 && i + 1 < len) {
            cp = (uint32_t)(c & 0x1F) << 6 | ((unsigned char)s[i + 1] & 0x3F);
            n = 2;
        } else if ((c & 0xF0) == 0xE0 && i + 2 < len) {
            cp = (uint32_t)(c & 0x0F) << 12 | (uint32_t)((unsigned char)s[i + 1] & 0x3F) << 6 |
                 ((unsigned char)s[i + 2] & 0x3F);
            n = 3;
        } else {
            cp = 0;
            n = (c & 0xF8) == 0xF0 ? 4 : 1;
        }
        i += (size_t)n;
        if (cp < 0x80 ? ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') || (cp >= '0' && cp <= '9')
                      : cp != 0) {
            letters++;
            cjk += (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x9FFF) ||
                   (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xAC00 && cp <= 0xD7AF);
        }
    }
    return letters ? (double)cjk / letters : 0;
}

void dense_result_free(struct dense_result *r)
{
    free(r->hits);
    free(r->qv);
    memset(r, 0, sizeof *r);
}

int dense_query_vec(struct cairn *h, const char *query, struct dense_result *r)
{
    struct vec_model *vm = r->qv ? NULL : vec_model_current(h, NULL, 0);
    if (!vm)
        return CAIRN_OK;
    size_t qlen = strlen(query);
    if (!(r->qv = malloc((size_t)vec_model_dim(vm) * sizeof *r->qv)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (vec_encode(h, vm, &query, &qlen, 1, 1, r->qv) != 0) {
        free(r->qv);            /* keywords only, as for the turns */
        r->qv = NULL;
        return CAIRN_OK;
    }
    r->qdim = vec_model_dim(vm);
    snprintf(r->model, sizeof r->model, "%s", vec_model_id(vm));
    policy_model(r->model, &r->pol);
    return CAIRN_OK;
}

/* The model named "none", "off" or "0": keyword only, no model loaded. */
static int model_off(const char *named)
{
    return named && (!strcmp(named, "none") || !strcmp(named, "off") || !strcmp(named, "0"));
}

static void *dense_pre_run(void *arg)
{
    struct dense_pre *pre = arg;
    pre->vm = vec_model_current(pre->h, pre->why, sizeof pre->why);
    if (pre->vm && (pre->qv = malloc((size_t)vec_model_dim(pre->vm) * sizeof *pre->qv))) {
        size_t qlen = strlen(pre->query);
        if (vec_encode(pre->h, pre->vm, &pre->query, &qlen, 1, 1, pre->qv) != 0) {
            free(pre->qv);
            pre->qv = NULL;
        }
    }
    return NULL;
}

int dense_pre_start(struct cairn *h, const char *query, struct dense_pre *pre)
{
    int any = 0, rc;
    memset(pre, 0, sizeof *pre);
    pre->h = h;
    pre->query = query;
    if (model_off(cairn__setting(h, CAIRN__SET_EMBED_MODEL)))
        return CAIRN_OK;
    /* no vector anywhere: dense_search loads no model, nor will this */
    if ((rc = store_any_vectors(h, &any)) || !any)
        return rc;
    pre->started = pthread_create(&pre->tid, NULL, dense_pre_run, pre) == 0;
    return CAIRN_OK;
}

/* Waits for the thread: its vm, qv and why are final after. */
static void dense_pre_join(struct dense_pre *pre)
{
    if (pre->started && !pre->done)
        pthread_join(pre->tid, NULL);
    pre->done = 1;
}

void dense_pre_free(struct dense_pre *pre)
{
    dense_pre_join(pre);
    free(pre->qv);
    pre->qv = NULL;
}

int dense_search(struct cairn *h, const char *query, const struct cairn_recall_opts *o,
                 struct dense_result *r)
{
    return dense_search_pre(h, query, o, NULL, r);
}

int dense_search_pre(struct cairn *h, const char *query, const struct cairn_recall_opts *o,
                     struct dense_pre *pre, struct dense_result *r)
{
    char why[600];
    const struct vec_set *set = NULL;
    float *qv = NULL;
    struct store_ids allowed = { 0 };
    int rc = CAIRN_OK;

    memset(r, 0, sizeof *r);
    r->status = CAIRN_DENSE_OFF;
    /* A store without any vector needs no model: loading one costs a
     * process tens of milliseconds (a hook pays that on every prompt). */
    const char *named = cairn__setting(h, CAIRN__SET_EMBED_MODEL);
    if (pre && !pre->started)
        pre = NULL;                 /* dense_search on its own */
    if (!model_off(named)) {
        int any = 0;
        if ((rc = store_any_vectors(h, &any)))
            return rc;
        if (!any) {
            char dir[4096], err[512];
            if (vec_model_resolve(h, dir, sizeof dir, err, sizeof err) == 0) {
                r->status = CAIRN_DENSE_NONE;
                snprintf(r->note, sizeof r->note, "no message has a vector yet: keyword "
                         "recall only; run `cairn embed --backfill`");
            }
            return CAIRN_OK;
        }
    }
    struct vec_model *vm;
    if (pre) {
        dense_pre_join(pre);
        vm = pre->vm;
        snprintf(why, sizeof why, "%s", pre->why);
    } else {
        vm = vec_model_current(h, why, sizeof why);
    }
    if (!vm) {
        /* No model at all is the keyword-only setup, not news; a model
         * that failed to load or was named and is missing is. */
        if (named && !strstr(why, "is off"))
            snprintf(r->note, sizeof r->note, "keyword-only recall: %s", why);
        return CAIRN_OK;
    }
    if ((rc = vec_set_get(h, vec_model_id(vm), vec_model_dim(vm), &set)))
        return rc;
    if (set->msgs_with == 0) {
        r->status = CAIRN_DENSE_NONE;
        if (set->msgs_total > 0 && set->other[0])
            snprintf(r->note, sizeof r->note, "keyword-only recall: no message has a vector of "
                     "%s (the store's vectors are of %s, never compared with it); run "
                     "`cairn reindex`", vec_model_id(vm), set->other);
        else if (set->msgs_total > 0)
            snprintf(r->note, sizeof r->note, "keyword-only recall: no message has a vector of "
                     "%s yet; run `cairn embed --backfill`", vec_model_id(vm));
        return CAIRN_OK;
    }
    r->status = set->msgs_with >= set->msgs_total ? CAIRN_DENSE_ON : CAIRN_DENSE_PARTIAL;
    if (r->status == CAIRN_DENSE_PARTIAL)
        snprintf(r->note, sizeof r->note, "%lld of %lld messages have no vector of %s and were "
                 "matched by keywords only; run `cairn %s`",
                 (long long)(set->msgs_total - set->msgs_with), (long long)set->msgs_total,
                 vec_model_id(vm), set->other[0] ? "reindex" : "embed --backfill");
    /* The hook's scope, every session but the current one, is that one
     * session's row, skipped by the scan: listing the others cost ~1,000
     * instructions a session (1.2 M of the hook's 69 M at 25,000
     * messages). A server's index is asked for the nearest in scope, so
     * it gets the list. */
    int64_t except = 0;
    if (o->project || (o->exclude_session && set->by_index)) {
        const struct store_scope scope = { o->project, o->exclude_session };
        if ((rc = store_scope_sessions_sorted(h, &scope, &allowed)) || !allowed.n)
            goto out;
    } else if (o->exclude_session && (rc = store_session_row(h, o->exclude_session, &except))) {
        goto out;
    }
    qv = malloc((size_t)vec_model_dim(vm) * sizeof *qv);
    r->hits = malloc(DENSE_TOPK * sizeof *r->hits);
    if (!qv || !r->hits) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    size_t qlen = strlen(query);
    if (pre ? !pre->qv : vec_encode(h, vm, &query, &qlen, 1, 1, qv) != 0) {
        /* the encoder failing is not the user's problem: keyword only */
        r->status = CAIRN_DENSE_OFF;
        snprintf(r->note, sizeof r->note, "keyword-only recall: the question could not be "
                 "embedded");
        goto out;
    }
    if (pre)
        memcpy(qv, pre->qv, (size_t)vec_model_dim(vm) * sizeof *qv);
    /* a server store searched by its index: the pieces it finds nearest,
     * twice as many as the scan keeps (the index ranks by the float
     * vectors, the scan by the quantised question), scored exactly */
    const struct vec_set *scan;
    if ((rc = vec_set_near(h, set, qv, 2 * DENSE_TOPK * DENSE_PIECES_MULT,
                           allowed.v, allowed.n, &scan)))
        goto out;
    int n = allowed.v ? dense_topk(scan, qv, allowed.v, allowed.n, DENSE_TOPK, DENSE_THREADS,
                                   r->hits)
                      : dense_topk_except(scan, qv, except, DENSE_TOPK, DENSE_THREADS, r->hits);
    if (n < 0) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    /* Measured: keeping only hits within 0.15 of the best, or above a
     * floor of 0.4-0.5, cost LoCoMo dev 0.5-1.4 points: weak dense hits
     * still find evidence that shares no word with the question. */
    r->n = n;
    r->cjk = cjk_share(query);
    /* kept for the memories' vectors (memories.c) */
    r->qv = qv;
    r->qdim = vec_model_dim(vm);
    snprintf(r->model, sizeof r->model, "%s", vec_model_id(vm));
    policy_model(r->model, &r->pol);
    qv = NULL;
out:
    free(qv);
    free(allowed.v);
    return rc;
}

/* ---- the second pass (issue 16, multi-hop) -------------------------- */

/* Adds the stored vector of piece i, as a unit vector, times w to acc. */
static void add_unit_vec(const struct vec_set *s, size_t i, float w, float *acc)
{
    float scale = s->inv_norm[i] * w;
    if (s->f32)
        for (int d = 0; d < s->dim; d++)
            acc[d] += s->vf[i * (size_t)s->dim + (size_t)d] * scale;
    else
        for (int d = 0; d < s->dim; d++)
            acc[d] += (float)s->v8[i * (size_t)s->dim + (size_t)d] * scale;
}

static int cmp_hit_msg(const void *a, const void *b)
{
    const struct dense_hit *x = a, *y = b;
    return x->msg < y->msg ? -1 : x->msg > y->msg;
}

int dense_feedback(struct cairn *h, struct pool *p, const struct dense_result *r)
{
    const struct vec_set *set = NULL;
    int64_t rows[DENSE_PRF_TOP], *allowed = NULL;
    struct dense_hit *hits = NULL;
    float *qv = NULL;
    int nrows = 0, rc = CAIRN_OK;

    if (!r->qv || r->n <= 0 || DENSE_PRF_W <= 0 || !p->nu)
        return CAIRN_OK;
    const int *ord = units_by_rank(p);
    if (!ord)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    /* the lead turns of the best units that matched something */
    for (int k = 0; k < p->nu && nrows < DENSE_PRF_TOP; k++)
        if (p->u[ord[k]].score > 0)
            rows[nrows++] = p->m[p->u[ord[k]].head].row;
    if (!nrows)
        return CAIRN_OK;
    if ((rc = vec_set_get(h, r->model, r->qdim, &set)))
        return rc;
    if (set->dim != r->qdim || set->n == 0)
        return CAIRN_OK;
    qv = calloc((size_t)r->qdim, sizeof *qv);
    hits = malloc(DENSE_TOPK * sizeof *hits);
    allowed = malloc((size_t)p->ns * sizeof *allowed);
    if (!qv || !hits || !allowed) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    /* the question as a unit vector, plus DENSE_PRF_MIX of the mean of
     * the best turns' unit vectors (every piece of them) */
    double qn = 0;
    for (int d = 0; d < r->qdim; d++)
        qn += (double)r->qv[d] * r->qv[d];
    if (qn <= 0)
        goto out;
    for (int d = 0; d < r->qdim; d++)
        qv[d] = (float)(r->qv[d] / sqrt(qn));
    size_t npieces = 0;
    for (int pass = 0; pass < 2; pass++) {
        float w = npieces ? (float)(DENSE_PRF_MIX / (double)npieces) : 0;
        for (size_t i = 0; i < set->n; i++)
            for (int k = 0; k < nrows; k++)
                if (set->msg[i] == rows[k]) {
                    if (pass)
                        add_unit_vec(set, i, w, qv);
                    else
                        npieces++;
                    break;
                }
        if (!npieces)
            goto out;
    }
    /* within the pool's sessions: it ranks what the first pass loaded */
    for (int i = 0; i < p->ns; i++)
        allowed[i] = p->s[i].row;
    qsort(allowed, (size_t)p->ns, sizeof *allowed, cmp_i64);
    int n = dense_topk(set, qv, allowed, p->ns, DENSE_TOPK, DENSE_THREADS, hits);
    if (n < 0) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    /* onto the pool's messages: hits by message id, one search each (a
     * pool can hold a million turns) */
    qsort(hits, (size_t)n, sizeof *hits, cmp_hit_msg);
    for (int j = 0; j < p->nm; j++) {
        struct dense_hit key = { .msg = p->m[j].row };
        const struct dense_hit *f = n ? bsearch(&key, hits, (size_t)n, sizeof *hits,
                                                cmp_hit_msg) : NULL;
        p->m[j].prf = f ? 1.0f + f->cos : 0;
    }
out:
    free(qv);
    free(hits);
    free(allowed);
    return rc;
}
