/*
 * bench_dense.c: exact dense search at scale, with random vectors.
 *
 *   1. top-50 by cosine over N int8 vectors of DIM dimensions (default
 *      1,000,000 x 512, use-lite-en's width), the way recall runs it
 *      (dense_topk asked for two threads, which it takes from
 *      DENSE_MT_MIN vectors on), at every kernel level the CPU allows
 *      (scalar, avx2, avxvnni, avx512vnni: recall/dense.c), the levels
 *      taking turns query by query in the same run; each level on one
 *      thread too; CPU time per search (the process's at two threads, the
 *      calling thread's at one). Every level's hits must be the same, bit
 *      for bit. The goal is p50 under 50 ms at 1M at the default level;
 *   2. hot: the scan's kernel alone (dense_dots_i8q) over the first
 *      2,048 vectors (1 MB at 512-d, held in L2), repeated: each level's
 *      own speed, ns a vector, best of 5 rounds of CPU time, one thread,
 *      without the memory's nor the top-k's;
 *   3. loading: a store of M messages (default 100,000) with one vector
 *      each is written, then read into the per-connection cache in one
 *      scan (vec_set_get), timed cold (first call) and warm (cached).
 *
 * Output: `bench dense key=value ...` lines. Exit status 1 if the p50 goal
 * is missed or a check fails.
 *
 * usage: bench_dense [--n N] [--dim D] [--store M] [--queries Q]
 *                    [--scalar 0]   (leave the scalar level out: slow at 1M)
 */
#include <cairn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "bench.h"
#include "../cli/cli.h"

#define TARGET_P50_MS 50.0
#define TOPK 50

static const char *const levels[] = { "scalar", "avx2", "avxvnni", "avx512vnni" };
#define NLEVELS 4

/* The process's CPU time (every thread's) in milliseconds. */
static double proc_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static float gauss(void)
{
    double u = (rnd() + 1.0) / 4294967297.0, v = (rnd() + 1.0) / 4294967297.0;
    return (float)(sqrt(-2 * log(u)) * cos(6.283185307179586 * v));
}

static void random_unit(float *v, int dim)
{
    double n = 0;
    for (int i = 0; i < dim; i++) {
        v[i] = gauss();
        n += (double)v[i] * v[i];
    }
    for (int i = 0; i < dim; i++)
        v[i] = (float)(v[i] / sqrt(n));
}

int main(int argc, char **argv)
{
    long n = 1000000, dim = 512, store_n = 100000, queries = 30;
    int fail = 0, with_scalar = 1;
    for (int i = 1; i + 1 < argc; i += 2) {
        long v = strtol(argv[i + 1], NULL, 10);
        if (!strcmp(argv[i], "--n"))
            n = v;
        else if (!strcmp(argv[i], "--dim"))
            dim = v;
        else if (!strcmp(argv[i], "--store"))
            store_n = v;
        else if (!strcmp(argv[i], "--queries"))
            queries = v;
        else if (!strcmp(argv[i], "--scalar"))
            with_scalar = v != 0;
    }
    if (n < 1 || dim < 8 || dim > 4096 || queries < 1) {
        fprintf(stderr, "usage: bench_dense [--n N] [--dim D] [--store M] [--queries Q] "
                        "[--scalar 0]\n");
        return 2;
    }

    /* 1. the scan */
    struct vec_set s;
    memset(&s, 0, sizeof s);
    s.dim = (int)dim;
    s.n = (size_t)n;
    s.msg = malloc((size_t)n * sizeof *s.msg);
    s.sess = malloc((size_t)n * sizeof *s.sess);
    /* 64-byte aligned like the cache file's vectors (veccache.c): malloc's
     * 16 made every 64-byte load of the AVX-512 kernel span two lines */
    s.v8 = aligned_alloc(64, ((size_t)n * (size_t)dim + 63) & ~(size_t)63);
    s.inv_norm = malloc((size_t)n * sizeof *s.inv_norm);
    float *x = malloc((size_t)dim * sizeof *x), *q = malloc((size_t)dim * sizeof *q);
    double *t[NLEVELS][4];          /* wall 2 threads, wall 1 thread, CPU of each */
    int nl = 0, lv[NLEVELS];
    struct dense_hit *h1 = malloc(TOPK * sizeof *h1), *h2 = malloc(TOPK * sizeof *h2);
    const char *def = dense_kernel_name();
    for (int l = 0; l < NLEVELS; l++) {
        if ((l == 0 && !with_scalar) || dense_kernel_set(levels[l]) != 0)
            continue;
        lv[nl++] = l;
        for (int m = 0; m < 4; m++)
            if (!(t[l][m] = malloc((size_t)queries * sizeof(double)))) {
                fprintf(stderr, "bench_dense: out of memory\n");
                return 1;
            }
    }
    dense_kernel_set(NULL);
    if (!s.msg || !s.sess || !s.v8 || !s.inv_norm || !x || !q || !h1 || !h2) {
        fprintf(stderr, "bench_dense: out of memory\n");
        return 1;
    }
    double t0 = os_now_ms();
    for (long i = 0; i < n; i++) {
        float sc;
        random_unit(x, (int)dim);
        vec_quantize(x, (int)dim, s.v8 + (size_t)i * (size_t)dim, &sc);
        double nn = 0;
        for (long d = 0; d < dim; d++) {
            double c = s.v8[(size_t)i * (size_t)dim + (size_t)d];
            nn += c * c;
        }
        s.inv_norm[i] = nn > 0 ? (float)(1 / sqrt(nn)) : 0;
        s.msg[i] = i + 1;
        s.sess[i] = i / 100 + 1;
    }
    printf("bench dense setup n=%ld dim=%ld bytes=%zu gen_ms=%.0f kernel=%s\n", n, dim,
           (size_t)n * (size_t)dim, os_now_ms() - t0, def);
    for (long k = 0; k < queries; k++) {
        random_unit(q, (int)dim);
        int n1 = -1;
        /* the levels in turn, the first one changing query by query */
        for (int j = 0; j < nl; j++) {
            int l = lv[(j + k) % nl];
            dense_kernel_set(levels[l]);
            double c = proc_cpu_ms(), a = os_now_ms();
            int n2 = dense_topk(&s, q, NULL, 0, TOPK, 2, h2);
            t[l][0][k] = os_now_ms() - a;
            t[l][2][k] = proc_cpu_ms() - c;
            c = bench_cpu_ms();
            a = os_now_ms();
            dense_topk(&s, q, NULL, 0, TOPK, 1, h2);
            t[l][1][k] = os_now_ms() - a;
            t[l][3][k] = bench_cpu_ms() - c;
            if (n1 < 0) {
                n1 = n2;
                memcpy(h1, h2, TOPK * sizeof *h1);
            } else if (n1 != n2 || memcmp(h1, h2, (size_t)n2 * sizeof *h1)) {
                fprintf(stderr, "bench_dense: %s and %s disagree (query %ld)\n", levels[l],
                        levels[lv[k % nl]], k);
                fail = 1;
            }
        }
    }
    dense_kernel_set(NULL);
    double base = -1, base_cpu1 = -1;
    for (int j = 0; j < nl; j++) {
        int l = lv[j];
        double p50 = bench_median(t[l][0], (int)queries);
        double p95 = t[l][0][(queries * 95) / 100 < queries ? (queries * 95) / 100 : queries - 1];
        double one = bench_median(t[l][1], (int)queries), cpu = bench_median(t[l][2], (int)queries);
        double cpu1 = bench_median(t[l][3], (int)queries);
        if (l == 1) {
            base = p50;
            base_cpu1 = cpu1;
        }
        printf("bench dense search n=%ld dim=%ld k=%d level=%s p50_ms=%.1f p95_ms=%.1f "
               "p50_1thread_ms=%.1f cpu_p50_ms=%.1f cpu_1thread_p50_ms=%.2f gb_s_1thread=%.1f", n,
               dim, TOPK, levels[l], p50, p95, one, cpu, cpu1, (double)n * (double)dim / one / 1e6);
        if (base > 0 && l > 1)
            printf(" vs_avx2=%.2f cpu_1thread_vs_avx2=%.2f", base / p50, base_cpu1 / cpu1);
        if (!strcmp(levels[l], def)) {
            printf(" goal_p50_ms=%.0f %s", TARGET_P50_MS,
                   n >= 1000000 ? (p50 < TARGET_P50_MS ? "PASS" : "FAIL") : "(goal is for 1M)");
            if (n >= 1000000 && p50 >= TARGET_P50_MS)
                fail = 1;
        }
        printf("\n");
    }

    /* 2. hot: the kernels' own speed, from L2 */
    {
        size_t hn = s.n < 2048 ? s.n : 2048;
        int reps = (int)(400000000 / ((long)hn * dim) + 1);
        int32_t *d = malloc(hn * sizeof *d);
        int8_t *q8 = malloc((size_t)dim);
        float qs;
        if (!d || !q8) {
            fprintf(stderr, "bench_dense: out of memory\n");
            return 1;
        }
        vec_quantize(q, (int)dim, q8, &qs);
        for (int j = 0; j < nl; j++) {
            int l = lv[j];
            double best = 1e30;
            dense_kernel_set(levels[l]);
            for (int round = 0; round < 5; round++) {
                double c = bench_cpu_ms();
                for (int r = 0; r < reps; r++)
                    dense_dots_i8q(q8, s.v8, (int)dim, hn, d);
                c = bench_cpu_ms() - c;
                if (c < best)
                    best = c;
            }
            printf("bench dense hot n=%zu dim=%ld level=%s ns_per_vector=%.2f gb_s=%.1f\n", hn,
                   dim, levels[l], best * 1e6 / ((double)reps * (double)hn),
                   (double)reps * (double)hn * (double)dim / best / 1e6);
        }
        dense_kernel_set(NULL);
        free(d);
        free(q8);
    }
    free(s.msg);
    free(s.sess);
    free(s.v8);
    free(s.inv_norm);

    /* 2. loading from a store */
    if (store_n > 0) {
        struct cairn *db = NULL;
        setenv("CAIRN_EMBED_MODEL", "none", 1);
        if (cli_db_open(":memory:", 0, &db) != CAIRN_OK) {
            fprintf(stderr, "bench_dense: open failed\n");
            return 1;
        }
        sqlite3_exec(db->db, "BEGIN", NULL, NULL, NULL);
        sqlite3_exec(db->db, "INSERT INTO sessions(id, ext_id, stored_at) VALUES (1, 's', 0)",
                     NULL, NULL, NULL);
        sqlite3_stmt *m = NULL, *v = NULL;
        sqlite3_prepare_v2(db->db, "INSERT INTO messages(id, session, position, role, content, "
                           "hash) VALUES (?, 1, ?, 'user', 'x', 0)", -1, &m, NULL);
        sqlite3_prepare_v2(db->db, "INSERT INTO vectors(model, msg, piece, session, dim, scale, v)"
                           " VALUES ('bench:0', ?, 0, 1, ?, ?, ?)", -1, &v, NULL);
        int8_t *qv = malloc((size_t)dim);
        for (long i = 1; i <= store_n && qv; i++) {
            float sc;
            random_unit(x, (int)dim);
            vec_quantize(x, (int)dim, qv, &sc);
            sqlite3_reset(m);
            sqlite3_bind_int64(m, 1, i);
            sqlite3_bind_int64(m, 2, i);
            sqlite3_step(m);
            sqlite3_reset(v);
            sqlite3_bind_int64(v, 1, i);
            sqlite3_bind_int(v, 2, (int)dim);
            sqlite3_bind_double(v, 3, sc);
            sqlite3_bind_blob(v, 4, qv, (int)dim, SQLITE_STATIC);
            sqlite3_step(v);
        }
        sqlite3_finalize(m);
        sqlite3_finalize(v);
        sqlite3_exec(db->db, "COMMIT", NULL, NULL, NULL);
        free(qv);
        const struct vec_set *set = NULL;
        double a = os_now_ms();
        int rc = vec_set_get(db, "bench:0", (int)dim, &set);
        double cold = os_now_ms() - a;
        a = os_now_ms();
        rc |= vec_set_get(db, "bench:0", (int)dim, &set);
        double warm = os_now_ms() - a;
        if (rc || !set || set->n != (size_t)store_n) {
            fprintf(stderr, "bench_dense: load returned %zu vectors\n", set ? set->n : 0);
            fail = 1;
        }
        printf("bench dense load n=%ld dim=%ld cold_ms=%.1f warm_ms=%.3f per_1M_cold_s=%.2f\n",
               store_n, dim, cold, warm, cold / 1e3 * 1e6 / (double)store_n);
        cairn_close(db);
    }
    free(x);
    free(q);
    for (int j = 0; j < nl; j++)
        for (int m = 0; m < 4; m++)
            free(t[lv[j]][m]);
    free(h1);
    free(h2);
    return fail;
}
