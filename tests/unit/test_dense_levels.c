/*
 * test_dense_levels.c: the dense scan's kernels at every level this CPU
 * allows (recall/dense.c: scalar, AVX2, AVX-VNNI, AVX-512 VNNI).
 *
 *  - each level's dense_dot_i8q equals the scalar reference exactly, on
 *    random and extreme bytes, every tail length of its blocks, unaligned
 *    pointers, up to the scan's widest question (4096);
 *  - dense_topk at each level returns the scalar level's hits: the same
 *    messages, sessions and bit-identical cosines, on one thread and on
 *    two, with and without a session scope: integer dots are exact, so
 *    the ranking is the same at every level;
 *  - dense_topk_except (the hook's scope: every session but one) returns
 *    dense_topk's hits with every other session listed;
 *  - CAIRN_SIMD caps the level as it caps the encoder's (avx2: no VNNI,
 *    portable: scalar), each setting in a fresh process.
 * A level the CPU (or CAIRN_SIMD) does not have is a SKIP with its reason.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "t.h"
#include "embed/kernels.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "t_vec.h"

static const char *const levels[] = { "scalar", "avx2", "avxvnni", "avx512vnni" };
#define NLEVELS (int)(sizeof levels / sizeof levels[0])

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* 1 when the level can be set here; else a SKIP that says why. */
static int use_level(const char *name)
{
    if (dense_kernel_set(name) == 0)
        return 1;
    const char *env = getenv("CAIRN_SIMD");
    T_SKIP("the %s scan: this CPU has no such instructions%s%s", name,
           env ? " or CAIRN_SIMD caps them: CAIRN_SIMD=" : "", env ? env : "");
    return 0;
}

static void test_dots(void)
{
    enum { N = 4096 + 64 };
    static int8_t q[N], v[N];
    static const int lens[] = { 0, 1, 7, 31, 32, 33, 63, 64, 65, 95, 96, 127, 128, 129, 191,
                                192, 193, 255, 256, 384, 511, 512, 513, 768, 1100, 4096 };
    for (int i = 0; i < N; i++) {
        q[i] = (int8_t)(rnd() % 255 - 127);     /* a question never holds -128 */
        v[i] = (int8_t)(rnd() % 256 - 128);
    }
    v[0] = v[1] = -128;
    q[0] = -127;
    q[1] = 127;
    T_EQ_INT(dense_kernel_set("no-such-level"), -1);
    for (int l = 0; l < NLEVELS; l++) {
        if (!use_level(levels[l]))
            continue;
        T_EQ_STR(dense_kernel_name(), levels[l]);
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            int n = lens[k];
            T_EQ_INT(dense_dot_i8q(q, v, n), dense_dot_i8_ref(q, v, n));
            T_EQ_INT(dense_dot_i8q(q + 3, v + 5, n), dense_dot_i8_ref(q + 3, v + 5, n));
            T_EQ_INT(dense_dot_i8q(q + 1, v + 63, n), dense_dot_i8_ref(q + 1, v + 63, n));
        }
        /* the extremes at the widest question: every product 127 * -128
         * (the most negative sum, -66,584,576), then mixed signs */
        static int8_t qx[4096], vx[4096];
        for (int i = 0; i < 4096; i++)
            qx[i] = 127, vx[i] = -128;
        T_EQ_INT(dense_dot_i8q(qx, vx, 4096), -127 * 128 * 4096);
        for (int i = 0; i < 4096; i++)
            qx[i] = (int8_t)(i % 3 ? -127 : 127), vx[i] = (int8_t)(i % 2 ? -128 : 127);
        T_EQ_INT(dense_dot_i8q(qx, vx, 4096), dense_dot_i8_ref(qx, vx, 4096));
        T_EQ_INT(dense_dot_i8q(qx, vx, 4095), dense_dot_i8_ref(qx, vx, 4095));
        /* the scan's entry over 1..9 vectors one after the other (the
         * AVX2 level takes four at a time, the rest one by one), at
         * every length, each sum against the reference's */
        static int32_t out[9];
        int bad = 0;
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            int n = lens[k];
            if (9 * n > N)
                continue;
            for (size_t count = 1; count <= 9; count++) {
                dense_dots_i8q(q + 2, v + 7, n, count, out);
                for (size_t j = 0; j < count; j++)
                    bad += out[j] != dense_dot_i8_ref(q + 2, v + 7 + j * (size_t)n, n);
            }
        }
        T_EQ_INT(bad, 0);
    }
    T_EQ_INT(dense_kernel_set(NULL), 0);
}

/* n random unit vectors of dim, quantised as the store keeps them, in
 * sessions of 10. */
static int make_set(struct vec_set *s, size_t n, int dim)
{
    float *x = malloc((size_t)dim * sizeof *x);
    memset(s, 0, sizeof *s);
    s->dim = dim;
    s->n = n;
    s->msg = malloc(n * sizeof *s->msg);
    s->sess = malloc(n * sizeof *s->sess);
    s->v8 = malloc(n * (size_t)dim);
    s->inv_norm = malloc(n * sizeof *s->inv_norm);
    if (!x || !s->msg || !s->sess || !s->v8 || !s->inv_norm) {
        free(x);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        float sc;
        double nn = 0;
        for (int d = 0; d < dim; d++)
            x[d] = (float)((int)(rnd() % 20001) - 10000) / 10000.0f;
        vec_quantize(x, dim, s->v8 + i * (size_t)dim, &sc);
        for (int d = 0; d < dim; d++)
            nn += (double)s->v8[i * (size_t)dim + (size_t)d] * s->v8[i * (size_t)dim + (size_t)d];
        s->inv_norm[i] = nn > 0 ? (float)(1 / sqrt(nn)) : 0;
        s->msg[i] = (int64_t)i + 1;
        s->sess[i] = (int64_t)(i / 10) + 1;
    }
    free(x);
    return 0;
}

static void test_topk_same(void)
{
    /* block edges (256 vectors a call), odd widths, and a set large
     * enough for two threads */
    static const struct { size_t n; int dim; } sets[] = {
        { 1, 512 }, { 255, 512 }, { 257, 100 }, { 1000, 8 }, { 3000, 512 },
        { DENSE_MT_MIN + 3, 24 },
    };
    enum { K = 50 };
    struct dense_hit ref[K], got[K];
    for (size_t t = 0; t < sizeof sets / sizeof sets[0]; t++) {
        struct vec_set s;
        if (make_set(&s, sets[t].n, sets[t].dim)) {
            T_CHECK(!"out of memory");
            t_free_set(&s);
            return;
        }
        float *qv = malloc((size_t)s.dim * sizeof *qv);
        int64_t allowed[3] = { 1, 7, 9 };
        for (int round = 0; round < 3 && qv; round++) {
            for (int d = 0; d < s.dim; d++)
                qv[d] = (float)((int)(rnd() % 20001) - 10000) / 10000.0f;
            for (int scoped = 0; scoped < 2; scoped++) {
                const int64_t *al = scoped ? allowed : NULL;
                int nal = scoped ? 3 : 0;
                int want = 0;           /* every message in scope, at most K */
                for (size_t i = 0; i < s.n; i++)
                    want += !scoped || s.sess[i] == 1 || s.sess[i] == 7 || s.sess[i] == 9;
                T_EQ_INT(dense_kernel_set("scalar"), 0);
                int nref = dense_topk(&s, qv, al, nal, K, 1, ref);
                T_EQ_INT(nref, want < K ? want : K);
                for (int l = 1; l < NLEVELS; l++) {
                    if (dense_kernel_set(levels[l]) != 0)
                        continue;               /* test_dots said why */
                    for (int threads = 1; threads <= 2; threads++) {
                        int n = dense_topk(&s, qv, al, nal, K, threads, got);
                        T_CHECK(t_same_hits(ref, nref, got, n));
                    }
                }
            }
        }
        /* every session but one: dense_topk_except is dense_topk with
         * the others listed (the hook's scope) */
        int64_t ns = (int64_t)(s.n - 1) / 10 + 1, ex = ns > 1 ? 2 : 1;
        int64_t *others = malloc((size_t)ns * sizeof *others);
        int no = 0;
        for (int64_t id = 1; id <= ns && others; id++)
            if (id != ex)
                others[no++] = id;
        for (int l = 0; l < NLEVELS && qv && others; l++) {
            if (dense_kernel_set(levels[l]) != 0)
                continue;
            for (int threads = 1; threads <= 2; threads++) {
                int nref = no ? dense_topk(&s, qv, others, no, K, threads, ref) : 0;
                int n = dense_topk_except(&s, qv, ex, K, threads, got);
                T_CHECK(t_same_hits(ref, nref, got, n));
                for (int i = 0; i < n; i++)
                    T_CHECK(got[i].sess != ex);
                /* 0: every session */
                nref = dense_topk(&s, qv, NULL, 0, K, threads, ref);
                n = dense_topk_except(&s, qv, 0, K, threads, got);
                T_CHECK(t_same_hits(ref, nref, got, n));
            }
        }
        free(others);
        free(qv);
        t_free_set(&s);
    }
    T_EQ_INT(dense_kernel_set(NULL), 0);
}

/* In a fresh process: CAIRN_SIMD=value (NULL: unset); exits with the
 * scan's level (its index in levels[]), 8 if a level above it could be
 * set anyway, 9 if its dot is wrong. */
static int level_under(const char *value)
{
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        int8_t q[300], v[300];
        int l = 0;
        if (value)
            setenv("CAIRN_SIMD", value, 1);
        else
            unsetenv("CAIRN_SIMD");
        for (int i = 0; i < 300; i++)
            q[i] = (int8_t)(i % 255 - 127), v[i] = (int8_t)(i * 7 % 256 - 128);
        while (l < NLEVELS && strcmp(levels[l], dense_kernel_name()))
            l++;
        if (dense_dot_i8q(q, v, 300) != dense_dot_i8_ref(q, v, 300))
            _exit(9);
        for (int above = l + 1; above < NLEVELS; above++)
            if (dense_kernel_set(levels[above]) == 0)
                _exit(8);
        _exit(l);
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

/* In a fresh process without CAIRN_SIMD: the encoder's CPU level and VNNI
 * bits (embed/kernels.h), cpu * 4 + vnni. */
static int cpu_caps(void)
{
    pid_t pid = fork();
    int st;

    if (pid == 0) {
        unsetenv("CAIRN_SIMD");
        _exit(embed_k_simd_cpu() * 4 + embed_k_simd_vnni());
    }
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}

static void test_simd_env(void)
{
    int caps = cpu_caps();
    T_CHECK(caps >= 0);
    if (caps < 0)
        return;
    int cpu = caps / 4, vnni = caps % 4;
    int best = cpu < 1 ? 0 : (vnni & 2) && __builtin_cpu_supports("avx512bw") ? 3 :
               (vnni & 1) ? 2 : 1;
    T_EQ_INT(level_under(NULL), best);
    T_EQ_INT(level_under("avx512"), best);
    T_EQ_INT(level_under("bogus"), best);
    T_EQ_INT(level_under("avxvnni"), cpu < 1 ? 0 : (vnni & 1) ? 2 : 1);
    T_EQ_INT(level_under("avx2"), cpu < 1 ? 0 : 1);
    T_EQ_INT(level_under("portable"), 0);
    if (best < 3)
        T_SKIP("CAIRN_SIMD=avx2 below AVX-512 VNNI: this CPU has no AVX-512 VNNI");
}

int main(void)
{
    /* first: the children it forks must read CAIRN_SIMD themselves, which
     * they do only if this process has not picked its kernels yet */
    T_RUN(test_simd_env);
    T_RUN(test_dots);
    T_RUN(test_topk_same);
    return T_DONE();
}
