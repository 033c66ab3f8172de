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
 * (bench/bench_dense.c). In a recall that embeds the question on a thread
 * of its own (dense_pre: the prompt hook) that thread makes every piece's
 * cosine too, from the cache file read by pread, the main thread sharing
 * the blocks once it waits; the selection is the same (issue 16, hyb53).
 *
 * Kernels: the scan's int8 dot at four levels (scalar reference, AVX2,
 * AVX-VNNI, AVX-512 VNNI), the f32 one and the general int8 one at two
 * (scalar, AVX2), chosen once at run time from the CPU and CAIRN_SIMD;
 * the int8 sums are exact at every level, so every level ranks the same
 * (tests/unit/test_dense_levels.c, test_hybrid.c).
 */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
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
/* The selection's step: a group the full heap refuses whole is passed
 * over at once (select_run). */
#define SEL_GROUP         16
/* The pieces' rows read a pread (cos_share): 128 KB, as a block of 512-d
 * vectors. */
#define ID_RUN            16384
/* How far ahead of its reads the AVX2 scan prefetches (dot_i8q_lanes_avx2). */
#define DOT_PREFETCH      1024

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
 * both sides to int16 first); the same exact integer sum. Here q . x's
 * eight int32 lanes over body (a multiple of 32) bytes, not yet summed
 * (dot_i8q_avx2 sums them, dots4_i8q_avx2 four vectors' at once). The
 * line DOT_PREFETCH bytes ahead of x is prefetched: a scan from memory (a
 * set larger than the caches) ran faster with it on a Zen 3 (docs/EMBED.md,
 * "AVX2 without VNNI (Zen 3)"); a prefetch past the end of the vectors
 * does not fault. */
__attribute__((target("avx2"))) static inline __m256i dot_i8q_lanes_avx2(const int8_t *q,
                                                                         const int8_t *x,
                                                                         int body)
{
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i a0 = _mm256_setzero_si256(), a1 = _mm256_setzero_si256();
    int i = 0;

    for (; i + 64 <= body; i += 64) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(x + i + 32));
        __m256i q0 = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i q1 = _mm256_loadu_si256((const __m256i *)(q + i + 32));
        __m256i p0 = _mm256_maddubs_epi16(_mm256_abs_epi8(v0), _mm256_sign_epi8(q0, v0));
        __m256i p1 = _mm256_maddubs_epi16(_mm256_abs_epi8(v1), _mm256_sign_epi8(q1, v1));

        _mm_prefetch((const char *)x + i + DOT_PREFETCH, _MM_HINT_T0);
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(p0, ones));
        a1 = _mm256_add_epi32(a1, _mm256_madd_epi16(p1, ones));
    }
    if (i < body) {
        __m256i v0 = _mm256_loadu_si256((const __m256i *)(x + i));
        __m256i q0 = _mm256_loadu_si256((const __m256i *)(q + i));
        __m256i p0 = _mm256_maddubs_epi16(_mm256_abs_epi8(v0), _mm256_sign_epi8(q0, v0));
        a0 = _mm256_add_epi32(a0, _mm256_madd_epi16(p0, ones));
    }
    return _mm256_add_epi32(a0, a1);
}

__attribute__((target("avx2"))) static inline int32_t dot_i8q_avx2(const int8_t *q,
                                                                   const int8_t *v, int n)
{
    int i = n & ~31;
    int32_t r = hsum_i32_avx2(dot_i8q_lanes_avx2(q, v, i));

    for (; i < n; i++)
        r += (int32_t)q[i] * (int32_t)v[i];
    return r;
}

/* The scan, four vectors at a time (dots_i8q_avx2): each vector's lanes
 * one vector after the other (the order memory is read in: the four read
 * side by side, q loaded once for them, ran 10% faster from L1/L2 but 20%
 * slower from L3 and 70% slower from memory on a Zen 3, the prefetchers
 * seeing four short streams), and the four eight-lane sums reduced
 * together by three vphaddd and one add instead of seven operations
 * each. The integer sums are the same, so the same ranks. */
__attribute__((target("avx2"))) static void dots4_i8q_avx2(const int8_t *q, const int8_t *v,
                                                           int dim, int32_t *out)
{
    const int body = dim & ~31;
    const int8_t *x[4] = { v, v + dim, v + 2 * (size_t)dim, v + 3 * (size_t)dim };
    __m256i a0 = dot_i8q_lanes_avx2(q, x[0], body), a1 = dot_i8q_lanes_avx2(q, x[1], body);
    __m256i a2 = dot_i8q_lanes_avx2(q, x[2], body), a3 = dot_i8q_lanes_avx2(q, x[3], body);
    /* lanes: [a0 0+1, a0 2+3, a1 0+1, a1 2+3 | the same for lanes 4..7],
     * then [a0..a3 0..3 | a0..a3 4..7], then the halves added */
    __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(a0, a1), _mm256_hadd_epi32(a2, a3));

    _mm_storeu_si128((__m128i *)out,
                     _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1)));
    for (int j = 0; j < 4; j++)
        for (int i = body; i < dim; i++)
            out[j] += (int32_t)q[i] * (int32_t)x[j][i];
}

__attribute__((target("avx2"))) static void dots_i8q_avx2(const int8_t *q, const int8_t *v,
                                                          int dim, size_t count, int32_t *out)
{
    size_t j = 0;

    for (; j + 4 <= count; j += 4)
        dots4_i8q_avx2(q, v + j * (size_t)dim, dim, out + j);
    for (; j < count; j++)
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
/* The sketch scan's kernels (dense_sketch_dots in recall.h). The
 * reference goes bit by bit, as the sum is defined; the others count the
 * bits of the sketch ANDed with each of the four planes of the
 * question's weights, the plane p's count worth 2^p. */
void dense_sketch_dots_ref(const uint64_t *planes, const uint64_t *b, int words, size_t count,
                           int32_t *out_s, int32_t *out_c)
{
    for (size_t j = 0; j < count; j++) {
        const uint64_t *x = b + j * (size_t)words;
        int32_t sum = 0, cnt = 0;
        for (int d = 0; d < 64 * words; d++) {
            if (!(x[d / 64] >> (d % 64) & 1))
                continue;
            cnt++;
            for (int p = 0; p < 4; p++)
                sum += (int32_t)(planes[p * words + d / 64] >> (d % 64) & 1) << p;
        }
        out_s[j] = sum;
        out_c[j] = cnt;
    }
}

/* Words w0..words-1 of sketch x added into *sum and *cnt, a popcnt each. */
__attribute__((target("popcnt"))) static inline void sketch_words(const uint64_t *planes,
                                                                  const uint64_t *x, int w0,
                                                                  int words, int32_t *sum,
                                                                  int32_t *cnt)
{
    for (int w = w0; w < words; w++) {
        uint64_t v = x[w];
        *cnt += __builtin_popcountll(v);
        *sum += __builtin_popcountll(v & planes[w]) +
                (__builtin_popcountll(v & planes[words + w]) << 1) +
                (__builtin_popcountll(v & planes[2 * words + w]) << 2) +
                (__builtin_popcountll(v & planes[3 * words + w]) << 3);
    }
}

/* The bits set in each byte of t, by two vpshufb lookups of a nibble's
 * count (Mula's method). */
#define DK_SK2 __attribute__((target("avx2,popcnt")))
DK_SK2 static inline __m256i sketch_cnt8(__m256i t, __m256i lut, __m256i low4)
{
    return _mm256_add_epi8(_mm256_shuffle_epi8(lut, _mm256_and_si256(t, low4)),
                           _mm256_shuffle_epi8(lut, _mm256_and_si256(_mm256_srli_epi16(t, 4),
                                                                     low4)));
}

/* The AVX2 sketch kernel, four words a step: each byte's counts of the
 * four planes weighted in the byte by doubling (Horner: at most
 * 8 * (1 + 2 + 4 + 8) = 120, no carry out of the byte), then summed into
 * 64-bit lanes by vpsadbw; the last words % 4 by popcnt. The same exact
 * sums as the reference. CPUs without AVX-512 VPOPCNTDQ had only the
 * scalar popcnt form (5 popcnt a word): on a Zen 3 a 512-d sketch took
 * 12 ns with it, 9 with this (docs/EMBED.md, "AVX2 without VNNI (Zen 3)"). */
DK_SK2 static void sketch_avx2(const uint64_t *planes, const uint64_t *b, int words,
                               size_t count, int32_t *out_s, int32_t *out_c)
{
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4,
                                         0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i low4 = _mm256_set1_epi8(0x0f), zero = _mm256_setzero_si256();
    const int body = words & ~3;

    for (size_t j = 0; j < count; j++) {
        const uint64_t *x = b + j * (size_t)words;
        __m256i as = zero, ac = zero;

        for (int w = 0; w < body; w += 4) {
            __m256i v = _mm256_loadu_si256((const __m256i *)(x + w)), s = zero;

            for (int p = 3; p >= 0; p--) {
                __m256i pl = _mm256_loadu_si256((const __m256i *)(planes + p * words + w));
                s = _mm256_add_epi8(_mm256_add_epi8(s, s),
                                    sketch_cnt8(_mm256_and_si256(v, pl), lut, low4));
            }
            as = _mm256_add_epi64(as, _mm256_sad_epu8(s, zero));
            ac = _mm256_add_epi64(ac, _mm256_sad_epu8(sketch_cnt8(v, lut, low4), zero));
        }
        /* [s, c | s, c] lanes, then the halves added */
        __m256i r = _mm256_add_epi64(_mm256_unpacklo_epi64(as, ac), _mm256_unpackhi_epi64(as, ac));
        __m128i h = _mm_add_epi64(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        int32_t sum = (int32_t)_mm_cvtsi128_si64(h), cnt = (int32_t)_mm_extract_epi64(h, 1);

        sketch_words(planes, x, body, words, &sum, &cnt);
        out_s[j] = sum;
        out_c[j] = cnt;
    }
}

/* Eight words (a 512-d sketch) a register: the four planes' counts
 * weighted by shifts and summed in 64-bit lanes, reduced once a sketch. */
#define DK_SK512 __attribute__((target("avx512f,avx512vpopcntdq")))
DK_SK512 static void sketch_avx512(const uint64_t *planes, const uint64_t *b, int words,
                                   size_t count, int32_t *out_s, int32_t *out_c)
{
    const int chunks = (words + 7) / 8;
    for (size_t j = 0; j < count; j++) {
        const uint64_t *x = b + j * (size_t)words;
        __m512i acc = _mm512_setzero_si512(), cnt = _mm512_setzero_si512();
        for (int c = 0; c < chunks; c++) {
            int left = words - 8 * c;
            __mmask8 m = left >= 8 ? 0xFF : (__mmask8)((1u << left) - 1);
            __m512i v = _mm512_maskz_loadu_epi64(m, x + 8 * c);
            __m512i p0 = _mm512_maskz_loadu_epi64(m, planes + 8 * c);
            __m512i p1 = _mm512_maskz_loadu_epi64(m, planes + words + 8 * c);
            __m512i p2 = _mm512_maskz_loadu_epi64(m, planes + 2 * words + 8 * c);
            __m512i p3 = _mm512_maskz_loadu_epi64(m, planes + 3 * words + 8 * c);
            __m512i s = _mm512_popcnt_epi64(_mm512_and_si512(v, p0));
            s = _mm512_add_epi64(s, _mm512_slli_epi64(
                                        _mm512_popcnt_epi64(_mm512_and_si512(v, p1)), 1));
            s = _mm512_add_epi64(s, _mm512_slli_epi64(
                                        _mm512_popcnt_epi64(_mm512_and_si512(v, p2)), 2));
            s = _mm512_add_epi64(s, _mm512_slli_epi64(
                                        _mm512_popcnt_epi64(_mm512_and_si512(v, p3)), 3));
            acc = _mm512_add_epi64(acc, s);
            cnt = _mm512_add_epi64(cnt, _mm512_popcnt_epi64(v));
        }
        out_s[j] = (int32_t)_mm512_reduce_add_epi64(acc);
        out_c[j] = (int32_t)_mm512_reduce_add_epi64(cnt);
    }
}

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
typedef void (*sketch_fn)(const uint64_t *, const uint64_t *, int, size_t, int32_t *, int32_t *);
static int sk_popcnt, sk_vpopcnt;   /* the CPU has them */
static sketch_fn sk_fn = dense_sketch_dots_ref;
static const char *sk_name = "scalar";

/* The sketch kernel follows the scan's level (CAIRN_SIMD caps both). */
static void pick_sketch(void)
{
    sk_fn = dense_sketch_dots_ref;
    sk_name = "scalar";
    if (dk_level >= DK_AVX2 && sk_popcnt) {
        sk_fn = sketch_avx2;
        sk_name = "avx2";
    }
    if (dk_level == DK_AVX512 && sk_vpopcnt) {
        sk_fn = sketch_avx512;
        sk_name = "avx512vpopcntdq";
    }
}
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
    sk_popcnt = __builtin_cpu_supports("popcnt");
    sk_vpopcnt = __builtin_cpu_supports("avx512vpopcntdq") && (dk_allowed >> DK_AVX512 & 1);
    pick_sketch();
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

void dense_sketch_dots(const uint64_t *planes, const uint64_t *b, int words, size_t count,
                       int32_t *out_s, int32_t *out_c)
{
    kernels();
    sk_fn(planes, b, words, count, out_s, out_c);
}

const char *dense_sketch_kernel_name(void)
{
    kernels();
    return sk_name;
}

int dense_kernel_set(const char *name)
{
    kernels();
    for (int l = 0; l < DK_LEVELS; l++)
        if (name ? !strcmp(name, dk[l].name) && (dk_allowed >> l & 1) : dk_allowed >> l & 1) {
            dk_level = l;
            pick_sketch();
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
    const float *cos;             /* [n]: the cosines already made (dense_pre), or NULL */
    size_t from, to;
    struct heap h;
};

/* 1 when the full heap refuses each of c[0..SEL_GROUP): none is above
 * min, a NaN included (cmpnle is "not <=", true when unordered). SSE2, in
 * every x86-64. */
static int group_refused(const float *c, float min)
{
    const __m128 m = _mm_set1_ps(min);
    __m128 any = _mm_setzero_ps();
    for (int j = 0; j < SEL_GROUP; j += 4)
        any = _mm_or_ps(any, _mm_cmpnle_ps(_mm_loadu_ps(c + j), m));
    return _mm_movemask_ps(any) == 0;
}

/* The heap's share of a block's cosines c[0..cnt), of pieces at..: each
 * piece as it always was (the heap's minimum, then the scope), but a
 * group of SEL_GROUP whose every cosine the full heap refuses (cs <= its
 * minimum, which a refusal never moves) is passed over at once: the same
 * pieces reach heap_push in the same order, so the same heap, ties and
 * all (test_dense_select). A NaN is never "<=": its group is walked. A
 * group is a 64-byte line; the check costs ~1/10 of the piece-by-piece
 * loop's instructions (1.8 M at 98,060 cosines). */
static void select_run(struct scan *sc, const float *c, size_t at, size_t cnt)
{
    const struct vec_set *s = sc->set;
    for (size_t g = 0; g < cnt; g += SEL_GROUP) {
        size_t ge = cnt - g < SEL_GROUP ? cnt : g + SEL_GROUP;
        if (sc->h.n == sc->h.k && ge - g == SEL_GROUP && group_refused(c + g, sc->h.s[0]))
            continue;
        for (size_t j = g; j < ge; j++) {
            size_t i = at + j;
            float cs = c[j];
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
}

static void *scan_run(void *arg)
{
    struct scan *sc = arg;
    const struct vec_set *s = sc->set;
    const dots_fn dots = dk[dk_level].dots;
    int dim = s->dim;
    int32_t d[DENSE_BLOCK];
    float c[DENSE_BLOCK];
    for (size_t b = sc->from; b < sc->to; b += DENSE_BLOCK) {
        size_t cnt = sc->to - b < DENSE_BLOCK ? sc->to - b : DENSE_BLOCK;
        if (sc->cos) {
            select_run(sc, sc->cos + b, b, cnt);
            continue;
        }
        if (!s->f32)
            dots(sc->q8, s->v8 + b * (size_t)dim, dim, cnt, d);
        for (size_t j = 0; j < cnt; j++) {
            size_t i = b + j;
            float cs = s->f32 ? dense_dot_f32(sc->qf, s->vf + i * (size_t)dim, dim)
                              : (float)d[j];
            cs *= s->inv_norm[i] * sc->q_inv;
            c[j] = cs;
        }
        select_run(sc, c, b, cnt);
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

/* The question as the scan scores it: quantised like the stored vectors
 * into q8[dim] (int8 sets), and 1 / its norm as stored. 0, 1 for a zero
 * question (no hits), -1 wider than q8's 4096. */
static int query_prep(const struct vec_set *s, const float *q, int8_t *q8, float *q_inv)
{
    float qscale = 0;
    double qn = 0;
    if (s->dim > 4096)
        return -1;
    if (s->f32) {
        for (int i = 0; i < s->dim; i++)
            qn += (double)q[i] * q[i];
    } else {
        vec_quantize(q, s->dim, q8, &qscale);
        for (int i = 0; i < s->dim; i++)
            qn += (double)q8[i] * q8[i];
    }
    if (qn <= 0)
        return 1;
    *q_inv = (float)(1.0 / sqrt(qn));
    return 0;
}

/* The heaps' pieces into out, best first, the best piece per message:
 * the count, at most k, or -1 on no memory. */
static int merge_hits(const struct vec_set *s, const struct heap *hs, int nh, int k,
                      struct dense_hit *out)
{
    int total = 0, n = 0, got = 0;
    for (int t = 0; t < nh; t++)
        total += hs[t].n;
    struct dense_hit *all = malloc((size_t)(total ? total : 1) * sizeof *all);
    if (!all)
        return -1;
    for (int t = 0; t < nh; t++) {
        for (int j = 0; j < hs[t].n; j++) {
            size_t i = (size_t)hs[t].i[j];
            all[n].msg = s->msg[i];
            all[n].sess = s->sess[i];
            all[n].cos = hs[t].s[j];
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
    return got;
}

/* cos (or NULL): every piece's cosine, made by cos_share on this set's
 * file; the selection is then scan_run's, share by share as the threads
 * would split it, so the same hits. */
static int topk(const struct vec_set *s, const float *q, const int64_t *allowed, int n_allowed,
                int64_t except, const float *cos, int k, int threads, struct dense_hit *out)
{
    int kp = k * DENSE_PIECES_MULT, nt;
    struct scan sc[DENSE_THREADS];
    int8_t q8buf[4096];
    float q_inv = 0;
    int rc = -1;

    kernels();
    if (!s || s->n == 0 || k <= 0)
        return 0;
    if ((rc = query_prep(s, q, q8buf, &q_inv)))
        return rc > 0 ? 0 : -1;
    rc = -1;
    nt = threads < 1 ? 1 : threads > DENSE_THREADS ? DENSE_THREADS : threads;
    if (s->n < DENSE_MT_MIN)
        nt = 1;
    /* every page of a mapped set at once: the scan reads them all */
    if (!cos)
        veccache_populate(s);
    memset(sc, 0, sizeof sc);
    for (int t = 0; t < nt; t++) {
        sc[t].set = s;
        sc[t].q8 = q8buf;
        sc[t].qf = q;
        sc[t].q_inv = q_inv;
        sc[t].allowed = allowed;
        sc[t].n_allowed = n_allowed;
        sc[t].except = except;
        sc[t].cos = cos;
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
        for (int t = 1; t < nt && !cos; t++)
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
        struct heap hs[DENSE_THREADS];
        for (int t = 0; t < nt; t++)
            hs[t] = sc[t].h;
        rc = merge_hits(s, hs, nt, k, out);
    }
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
    return topk(s, q, allowed, n_allowed, 0, NULL, k, threads, out);
}

int dense_topk_except(const struct vec_set *s, const float *q, int64_t except, int k,
                      int threads, struct dense_hit *out)
{
    return topk(s, q, NULL, 0, except, NULL, k, threads, out);
}

/* The question's weights on the sketch's signs, w_d = q_d sigma_d (q .
 * (v - mu) ~ sum w_d s_d, s_d = +-1), as 4-bit u_d = (w_d - wmin) / step
 * in four bit planes: the sum over a sketch's set bits is then wmin *
 * bits + step * the kernel's sum, and sum w_d s_d is twice that less a
 * constant, so the kernel's two counts rank a sketch. */
static void sketch_query(const struct vec_sketch *sk, const float *q, uint64_t *planes,
                         float *wmin, float *step)
{
    float lo = INFINITY, hi = -INFINITY;
    for (int d = 0; d < sk->dim; d++) {
        float w = q[d] * sk->sigma[d];
        lo = w < lo ? w : lo;
        hi = w > hi ? w : hi;
    }
    /* a NaN sigma (a damaged file) leaves lo/hi unordered: rank nothing */
    *wmin = isfinite(lo) ? lo : 0;
    *step = isfinite(hi - lo) && hi > lo ? (hi - lo) / 15 : 0;
    memset(planes, 0, 4 * (size_t)sk->words * sizeof *planes);
    for (int d = 0; *step > 0 && d < sk->dim; d++) {
        float u = (q[d] * sk->sigma[d] - *wmin) / *step;
        int ui = !(u > 0) ? 0 : u >= 15 ? 15 : (int)lrintf(u);
        for (int p = 0; p < 4; p++)
            if (ui >> p & 1)
                planes[p * sk->words + d / 64] |= (uint64_t)1 << (d % 64);
    }
}

int dense_topk_sketch(const struct vec_set *s, const struct vec_sketch *sk, const float *q,
                      const int64_t *allowed, int n_allowed, int64_t except, int k, int kc,
                      struct dense_hit *out)
{
    int kp = k * DENSE_PIECES_MULT, rc;
    int8_t q8[4096];
    float q_inv = 0, wmin, step;
    uint64_t *planes = NULL;
    int8_t *gath = NULL;
    struct heap cand = { 0 }, best = { 0 };

    kernels();
    if (!s || s->n == 0 || k <= 0)
        return 0;
    if (!sk || sk->n != s->n || sk->dim != s->dim || sk->words != (s->dim + 63) / 64)
        return topk(s, q, allowed, n_allowed, except, NULL, k, 1, out);
    if ((rc = query_prep(s, q, q8, &q_inv)))
        return rc > 0 ? 0 : -1;
    rc = -1;
    if (kc < kp)
        kc = kp;
    if ((size_t)kc > s->n)
        kc = (int)s->n;
    const int dim = s->dim, words = sk->words;
    planes = malloc(4 * (size_t)words * sizeof *planes);
    cand.k = kc;
    cand.s = malloc((size_t)kc * sizeof *cand.s);
    cand.i = malloc((size_t)kc * sizeof *cand.i);
    best.k = kp;
    best.s = malloc((size_t)kp * sizeof *best.s);
    best.i = malloc((size_t)kp * sizeof *best.i);
    gath = s->f32 ? NULL : malloc((size_t)DENSE_BLOCK * (size_t)dim);
    if (!planes || !cand.s || !cand.i || !best.s || !best.i || (!s->f32 && !gath))
        goto out;
    sketch_query(sk, q, planes, &wmin, &step);
    /* 1: every sketch in scope; the kc best by the estimate */
    {
        int32_t su[DENSE_BLOCK], bc[DENSE_BLOCK];
        for (size_t b = 0; b < s->n; b += DENSE_BLOCK) {
            size_t cnt = s->n - b < DENSE_BLOCK ? s->n - b : DENSE_BLOCK;
            sk_fn(planes, sk->bits + b * (size_t)words, words, cnt, su, bc);
            for (size_t j = 0; j < cnt; j++) {
                size_t i = b + j;
                float e = wmin * (float)bc[j] + step * (float)su[j];
                if (cand.n == cand.k && e <= cand.s[0])
                    continue;
                if (allowed && !bsearch(&s->sess[i], allowed, (size_t)n_allowed,
                                        sizeof *allowed, cmp_i64))
                    continue;
                if (except && s->sess[i] == except)
                    continue;
                heap_push(&cand, e, (int64_t)i);
            }
        }
    }
    /* 2: the candidates scored exactly, in the set's order (so kc = all
     * keeps what a one-thread scan keeps), DENSE_BLOCK vectors gathered
     * a kernel call */
    qsort(cand.i, (size_t)cand.n, sizeof *cand.i, cmp_i64);
    for (int m0 = 0; m0 < cand.n; m0 += DENSE_BLOCK) {
        int cnt = cand.n - m0 < DENSE_BLOCK ? cand.n - m0 : DENSE_BLOCK;
        int32_t d[DENSE_BLOCK];
        if (!s->f32) {
            veccache_read(s, cand.i + m0, (size_t)cnt, gath);
            dk[dk_level].dots(q8, gath, dim, (size_t)cnt, d);
        }
        for (int j = 0; j < cnt; j++) {
            size_t i = (size_t)cand.i[m0 + j];
            float cs = s->f32 ? dense_dot_f32(q, s->vf + i * (size_t)dim, dim) : (float)d[j];
            cs *= s->inv_norm[i] * q_inv;
            if (best.n == best.k && cs <= best.s[0])
                continue;
            heap_push(&best, cs, (int64_t)i);
        }
    }
    rc = merge_hits(s, &best, 1, k, out);
out:
    free(planes);
    free(gath);
    free(cand.s);
    free(cand.i);
    free(best.s);
    free(best.i);
    return rc;
}

int dense_sketch_k(const struct cairn *h, unsigned flags)
{
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_SKETCH);
    if (v && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        return *end || n < 0 ? 0 : n > INT32_MAX / 2 ? INT32_MAX / 2 : (int)n;
    }
    /* recall.exhaustive asks the fast path to be exact, as gather.c's */
    const char *ex = cairn__setting(h, CAIRN__SET_RECALL_EXHAUSTIVE);
    if (ex && *ex && strcmp(ex, "0"))
        return 0;
    return (flags & CAIRN_RECALL_FAST) ? DENSE_SKETCH_FAST : 0;
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

/* The cosines scan_run would make, each piece's, into pre->cos: blocks of
 * DENSE_BLOCK vectors taken in turn (pre->next) by the question's thread
 * and, once it gets to dense_pre_join, the main thread, each read by pread
 * into this thread's buffer, never through the mapping
 * (veccache_read_run), and scored with scan_run's kernel and float steps:
 * which thread scores a block changes no bit. A failed read or no memory
 * sets pre->bad (the main thread then scans as before). */
static void cos_share(struct dense_pre *pre)
{
    const struct vec_set *s = &pre->vset;
    const size_t nb = (s->n + DENSE_BLOCK - 1) / DENSE_BLOCK;
    const size_t nid = pre->ids ? (2 * s->n + ID_RUN - 1) / ID_RUN : 0;
    const dots_fn dots = dk[dk_level].dots;
    int8_t *buf = malloc((size_t)DENSE_BLOCK * (size_t)s->dim);
    int32_t d[DENSE_BLOCK];
    size_t b;
    if (!buf)
        atomic_store(&pre->bad, 1);
    while (buf && !atomic_load(&pre->bad) && (b = atomic_fetch_add(&pre->next, 1)) < nid + nb) {
        if (b < nid) {               /* first the rows, ID_RUN a read */
            size_t at = b * ID_RUN, cnt = 2 * s->n - at < ID_RUN ? 2 * s->n - at : ID_RUN;
            if (veccache_read_ids(s, at, cnt, pre->ids + at)) {
                atomic_store(&pre->bad, 1);
                break;
            }
            continue;
        }
        b -= nid;
        size_t at = b * DENSE_BLOCK, cnt = s->n - at < DENSE_BLOCK ? s->n - at : DENSE_BLOCK;
        if (veccache_read_run(s, at, cnt, buf)) {
            atomic_store(&pre->bad, 1);
            break;
        }
        dots(pre->q8, buf, s->dim, cnt, d);
        for (size_t j = 0; j < cnt; j++) {
            float cs = (float)d[j];
            cs *= s->inv_norm[at + j] * pre->q_inv;
            pre->cos[at + j] = cs;
        }
    }
    free(buf);
}

static void pre_stage(struct dense_pre *pre, int stage)
{
    pthread_mutex_lock(&pre->mu);
    pre->stage = stage;
    pthread_cond_broadcast(&pre->cv);
    pthread_mutex_unlock(&pre->mu);
}

/* The scan's arithmetic on the question's thread, from the cache file the
 * main thread will map (its own mapping of it: the connection is the main
 * thread's); dense_search_pre uses the cosines only if its set is that
 * file. */
static void pre_scan(struct dense_pre *pre, const char *model, int dim)
{
    kernels();
    if (pre->qv && pre->vpath[0] &&
        veccache_open_at(pre->vpath, model, dim, pre->vstamp, &pre->vset) == 0 &&
        pre->vset.n < DENSE_MT_MIN && !pre->vset.f32 &&
        !query_prep(&pre->vset, pre->qv, pre->q8, &pre->q_inv) &&
        (pre->cos = malloc(pre->vset.n * sizeof *pre->cos))) {
        /* (no memory for the rows: the selection reads the mapping's) */
        pre->ids = malloc(2 * pre->vset.n * sizeof *pre->ids);
        pre_stage(pre, 2);               /* the main thread may share the blocks */
        cos_share(pre);
    }
}

/* An early thread (dense_pre_begin) waits here, its question encoded,
 * for the store's cache file: 1 go on to the cosines, 0 stop. */
static int pre_gate_wait(struct dense_pre *pre)
{
    int go;
    pthread_mutex_lock(&pre->mu);
    while (pre->gate == PRE_GATE_WAIT)
        pthread_cond_wait(&pre->cv, &pre->mu);
    go = pre->gate != PRE_GATE_STOP;    /* (0: no gate) */
    pthread_mutex_unlock(&pre->mu);
    return go;
}

static void pre_gate_set(struct dense_pre *pre, int gate)
{
    pthread_mutex_lock(&pre->mu);
    if (pre->gate == PRE_GATE_WAIT)
        pre->gate = gate;
    pthread_cond_broadcast(&pre->cv);
    pthread_mutex_unlock(&pre->mu);
}

static void *dense_pre_run(void *arg)
{
    struct dense_pre *pre = arg;
    pre->vm = vec_model_current(pre->h, pre->why, sizeof pre->why);
    pre_stage(pre, 1);                   /* the main thread may read the set meanwhile */
    if (pre->vm && (pre->qv = malloc((size_t)vec_model_dim(pre->vm) * sizeof *pre->qv))) {
        size_t qlen = strlen(pre->query);
        if (vec_encode(pre->h, pre->vm, &pre->query, &qlen, 1, 1, pre->qv) != 0) {
            free(pre->qv);
            pre->qv = NULL;
        }
    }
    if (pre->vm && pre_gate_wait(pre))
        pre_scan(pre, vec_model_id(pre->vm), vec_model_dim(pre->vm));
    pre_stage(pre, 3);
    return NULL;
}

static int pre_thread(struct dense_pre *pre)
{
    if (pthread_mutex_init(&pre->mu, NULL))
        return 0;
    if (pthread_cond_init(&pre->cv, NULL)) {
        pthread_mutex_destroy(&pre->mu);
        return 0;
    }
    pre->started = pthread_create(&pre->tid, NULL, dense_pre_run, pre) == 0;
    if (!pre->started) {
        pthread_cond_destroy(&pre->cv);
        pthread_mutex_destroy(&pre->mu);
    }
    return pre->started;
}

int dense_pre_begin(const struct cairn *cfg, const char *query, struct dense_pre *pre)
{
    memset(pre, 0, sizeof *pre);
    pre->h = cfg;
    pre->query = query;
    pre->gate = PRE_GATE_WAIT;
    return pre_thread(pre) ? 0 : -1;
}

int dense_pre_start(struct cairn *h, const char *query, unsigned flags, struct dense_pre *early,
                    struct dense_pre **out)
{
    struct dense_pre *pre = *out;
    int any = 0, rc = CAIRN_OK;
    memset(pre, 0, sizeof *pre);
    pre->h = h;
    pre->query = query;
    /* no vector anywhere: dense_search loads no model, nor will this */
    if (model_off(cairn__setting(h, CAIRN__SET_EMBED_MODEL)) ||
        (rc = store_any_vectors(h, &any)) || !any)
        goto out;
    /* the thread scans too, unless the two-stage scan is asked for */
    if (dense_sketch_k(h, flags) > 0 ||
        vec_cache_where(h, pre->vpath, sizeof pre->vpath, &pre->vstamp) != 0)
        pre->vpath[0] = '\0';
    if (early) {
        /* its question encoded (or encoding) since before the store
         * opened: it goes on to the file this connection names */
        memcpy(early->vpath, pre->vpath, sizeof pre->vpath);
        early->vstamp = pre->vstamp;
        pre_gate_set(early, PRE_GATE_GO);
        *out = early;
        return CAIRN_OK;
    }
    pre_thread(pre);
out:
    if (early)
        pre_gate_set(early, PRE_GATE_STOP);
    return rc;
}

/* Waits for the thread to have the model: pre->vm and why are final after
 * (the question may still be encoding). */
static void dense_pre_model(struct dense_pre *pre)
{
    if (pre->started && !pre->done) {
        pthread_mutex_lock(&pre->mu);
        while (pre->stage == 0)
            pthread_cond_wait(&pre->cv, &pre->mu);
        pthread_mutex_unlock(&pre->mu);
    }
}

/* Waits for the thread: its vm, qv, why and cos are final after. help:
 * score cosine blocks beside it once it shares them (the search wants
 * them; freeing does not). */
static void dense_pre_join(struct dense_pre *pre, int help)
{
    if (pre->started && !pre->done) {
        int share;
        pthread_mutex_lock(&pre->mu);
        while (help && pre->stage < 2)
            pthread_cond_wait(&pre->cv, &pre->mu);
        share = help && pre->stage == 2;
        if (!help && pre->gate == PRE_GATE_WAIT) {
            pre->gate = PRE_GATE_STOP;   /* an early thread never given a store */
            pthread_cond_broadcast(&pre->cv);
        }
        pthread_mutex_unlock(&pre->mu);
        if (share)
            cos_share(pre);
        else if (!help)
            atomic_store(&pre->bad, 1);  /* not wanted: the thread stops early */
        pthread_join(pre->tid, NULL);
        pthread_cond_destroy(&pre->cv);
        pthread_mutex_destroy(&pre->mu);
        if (atomic_load(&pre->bad)) {
            free(pre->cos);
            pre->cos = NULL;
            free(pre->ids);
            pre->ids = NULL;
        }
    }
    pre->done = 1;
}

void dense_pre_free(struct dense_pre *pre)
{
    dense_pre_join(pre, 0);
    free(pre->qv);
    pre->qv = NULL;
    free(pre->cos);
    pre->cos = NULL;
    free(pre->ids);
    pre->ids = NULL;
    veccache_close(&pre->vset);
}

/* s as the selection reads it beside the thread's cosines (of s's very
 * file: veccache_same_file): its pieces' rows from the thread's pread
 * (pre->ids) when they were read, so no page of s's mapping is touched
 * (the selection's pushes and the merge read ~1,600 rows at random: 24
 * faults of 16 pages at 98,060 pieces, hyb55b); else s itself. */
static const struct vec_set *with_ids(const struct vec_set *s, const struct dense_pre *pre,
                                      struct vec_set *view)
{
    if (!pre->ids)
        return s;
    *view = *s;
    view->msg = pre->ids;
    view->sess = pre->ids + s->n;
    return view;
}

/* dense_topk_shared's thread: the question is given, so only the scan. */
static void *pre_scan_run(void *arg)
{
    struct dense_pre *pre = arg;
    pre_scan(pre, pre->vset_model, pre->vset_dim);
    pre_stage(pre, 3);
    return NULL;
}

int dense_topk_shared(struct cairn *h, const struct vec_set *s, const float *q,
                      const int64_t *allowed, int n_allowed, int64_t except, int k,
                      struct dense_hit *out, int *shared)
{
    struct dense_pre pre;
    int n = -1;
    *shared = 0;
    memset(&pre, 0, sizeof pre);
    pre.h = h;
    pre.stage = 1;
    snprintf(pre.vset_model, sizeof pre.vset_model, "%s", s->model);
    pre.vset_dim = s->dim;
    if (vec_cache_where(h, pre.vpath, sizeof pre.vpath, &pre.vstamp) != 0)
        pre.vpath[0] = '\0';
    if (!(pre.qv = malloc((size_t)s->dim * sizeof *pre.qv)))
        return -1;
    memcpy(pre.qv, q, (size_t)s->dim * sizeof *q);
    if (pthread_mutex_init(&pre.mu, NULL))
        goto out;
    if (pthread_cond_init(&pre.cv, NULL)) {
        pthread_mutex_destroy(&pre.mu);
        goto out;
    }
    if (!(pre.started = pthread_create(&pre.tid, NULL, pre_scan_run, &pre) == 0)) {
        pthread_cond_destroy(&pre.cv);
        pthread_mutex_destroy(&pre.mu);
        goto out;
    }
    dense_pre_join(&pre, 1);
    const float *cos = pre.cos && veccache_same_file(s, &pre.vset) ? pre.cos : NULL;
    struct vec_set view;
    *shared = cos != NULL;
    n = topk(cos ? with_ids(s, &pre, &view) : s, q, allowed, n_allowed, allowed ? 0 : except, cos,
             k, DENSE_THREADS, out);
out:
    dense_pre_free(&pre);
    return n;
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
        /* the set and the scope are read while the thread encodes */
        dense_pre_model(pre);
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
    if (pre)
        dense_pre_join(pre, 1);
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
    /* the two-stage scan when asked for (dense_sketch_k) and its sketch
     * is at hand; on a set with a cache file the sketch file beside it
     * (written by the first process that wants it) */
    const struct vec_sketch *sk = NULL;
    int kc = scan == set && (scan->map || cairn__setting(h, CAIRN__SET_RECALL_SKETCH))
                 ? dense_sketch_k(h, o->flags) : 0;
    if (kc > 0 && (rc = vec_sketch_get(h, scan, &sk)))
        goto out;
    /* the thread's cosines when they are of this very file */
    const float *cos = pre && pre->cos && !sk && scan == set &&
                       veccache_same_file(set, &pre->vset) ? pre->cos : NULL;
    struct vec_set view;
    if (cos)
        scan = with_ids(set, pre, &view);
    int n = sk ? dense_topk_sketch(scan, sk, qv, allowed.v, allowed.n, except, DENSE_TOPK, kc,
                                   r->hits)
               : topk(scan, qv, allowed.v, allowed.n, allowed.v ? 0 : except, cos, DENSE_TOPK,
                      DENSE_THREADS, r->hits);
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

/* ---- the question in the speaker's words (issue 16, persp55) -------- */

int dense_persona(struct cairn *h, struct pool *p, const struct dense_result *r,
                  const char *text, const char *name)
{
    const struct vec_set *set = NULL;
    struct vec_model *vm;
    struct dense_hit *hits = NULL;
    int64_t *allowed = NULL;
    float *qv = NULL;
    int k = (int)POLICY_GET(PERSP_TOPK), rc = CAIRN_OK;
    size_t len = strlen(text);

    if (!r->qv || !p->nm || k <= 0 || !(vm = vec_model_current(h, NULL, 0)) ||
        strcmp(vec_model_id(vm), r->model) || vec_model_dim(vm) != r->qdim)
        return CAIRN_OK;
    if ((rc = vec_set_get(h, r->model, r->qdim, &set)))
        return rc;
    if (set->dim != r->qdim || set->n == 0)
        return CAIRN_OK;
    qv = malloc((size_t)r->qdim * sizeof *qv);
    hits = malloc((size_t)k * sizeof *hits);
    allowed = malloc((size_t)p->ns * sizeof *allowed);
    free(p->persp);
    p->persp = NULL;
    if (!qv || !hits || !allowed) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if (vec_encode(h, vm, &text, &len, 1, 1, qv) != 0)
        goto out;                       /* keyword and the question's vector only */
    /* the rewritten question's unit vector (vec_encode's) plus PERSP_MIX of
     * the question's own, made unit */
    double qn = 0, mix = POLICY_GET(PERSP_MIX), n2 = 0;
    for (int d = 0; d < r->qdim; d++)
        qn += (double)r->qv[d] * r->qv[d];
    if (qn <= 0)
        goto out;
    for (int d = 0; d < r->qdim; d++) {
        qv[d] = (float)(qv[d] + mix * r->qv[d] / sqrt(qn));
        n2 += (double)qv[d] * qv[d];
    }
    if (n2 <= 0)
        goto out;
    for (int d = 0; d < r->qdim; d++)
        qv[d] = (float)(qv[d] / sqrt(n2));
    for (int i = 0; i < p->ns; i++)
        allowed[i] = p->s[i].row;
    qsort(allowed, (size_t)p->ns, sizeof *allowed, cmp_i64);
    int n = dense_topk(set, qv, allowed, p->ns, k, DENSE_THREADS, hits);
    if (n < 0 || !(p->persp = calloc((size_t)p->nm, sizeof *p->persp))) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    qsort(hits, (size_t)n, sizeof *hits, cmp_hit_msg);
    int only = POLICY_GET(PERSP_ONLY) != 0;
    for (int j = 0; j < p->nm; j++) {
        const struct rmsg *m = &p->m[j];
        struct dense_hit key = { .msg = m->row };
        if (only && (!m->speaker || strcmp(m->speaker, name)))
            continue;
        const struct dense_hit *f = n ? bsearch(&key, hits, (size_t)n, sizeof *hits,
                                                cmp_hit_msg) : NULL;
        p->persp[j] = f ? 1.0f + f->cos : 0;
    }
out:
    free(qv);
    free(hits);
    free(allowed);
    return rc;
}
