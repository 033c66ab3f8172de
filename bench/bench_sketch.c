/*
 * bench_sketch.c: the two-stage dense scan (sign sketches, then the best
 * K rescored exactly: recall/dense.c, dense_topk_sketch) against the
 * exact scan, on a real store and real questions (issue 16, hyb52).
 *
 * For each question (a line of QUESTIONS.txt) embedded with the store's
 * model (CAIRN_EMBED_MODEL), the exact top-50 messages (dense_topk, one
 * thread, as the hook's scan at 100,000) and the two-stage top-50 at each
 * K: how many questions get a different top-50 (as a set and in order),
 * the mean overlap of the top 10 and top 50, and the CPU time of each
 * search in the same process, the methods taking turns question by
 * question (warm pages: what the scan itself costs, not the faults).
 *
 * Output: `bench sketch k=K ...` lines; exit 1 when K = all (the set's
 * size) differs from the exact scan anywhere (it must not).
 *
 * usage: CAIRN_EMBED_MODEL=use-lite-en bench_sketch STORE QUESTIONS.txt [K ...]
 */
#include <cairn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "bench.h"
#include "../cli/cli.h"

#define TOP    DENSE_TOPK
#define MAXK   16

static int overlap(const struct dense_hit *a, int na, const struct dense_hit *b, int nb, int top)
{
    int n = 0;
    for (int i = 0; i < na && i < top; i++)
        for (int j = 0; j < nb && j < top; j++)
            if (a[i].msg == b[j].msg) {
                n++;
                break;
            }
    return n;
}

int main(int argc, char **argv)
{
    struct cairn *h = NULL;
    const struct vec_set *set;
    const struct vec_sketch *sk;
    int ks[MAXK], nk = 0, bad = 0;
    char why[600], line[8192];

    if (argc < 3) {
        fprintf(stderr, "usage: bench_sketch STORE QUESTIONS.txt [K ...]\n");
        return 2;
    }
    for (int i = 3; i < argc && nk < MAXK - 1; i++)
        ks[nk++] = atoi(argv[i]);
    if (!nk) {
        static const int def[] = { 200, 500, 1000, 2000, 4000, 8000 };
        for (size_t i = 0; i < sizeof def / sizeof def[0]; i++)
            ks[nk++] = def[i];
    }
    if (cli_db_open(argv[1], CAIRN_OPEN_READONLY, &h) != CAIRN_OK) {
        fprintf(stderr, "bench_sketch: cannot open %s\n", argv[1]);
        return 2;
    }
    if (cli_embed_model())
        cairn_set(h, "embed.model", cli_embed_model());
    struct vec_model *vm = vec_model_current(h, why, sizeof why);
    if (!vm || vec_set_get(h, vec_model_id(vm), vec_model_dim(vm), &set) || !set->n ||
        vec_sketch_get(h, set, &sk) || !sk) {
        fprintf(stderr, "bench_sketch: no vectors or model (%s)\n", vm ? "" : why);
        return 2;
    }
    ks[nk++] = (int)set->n;                      /* all: must equal the exact scan */
    FILE *f = fopen(argv[2], "r");
    if (!f)
        return 2;
    int dim = vec_model_dim(vm), nq = 0;
    float *q = malloc((size_t)dim * sizeof *q);
    struct dense_hit ex[TOP], hs[TOP];
    int diff_set[MAXK] = { 0 }, diff_ord[MAXK] = { 0 };
    double ov10[MAXK] = { 0 }, ov50[MAXK] = { 0 };
    static double cpu[MAXK + 1][4096];
    while (fgets(line, sizeof line, f) && nq < 4096) {
        size_t len = strcspn(line, "\n");
        line[len] = '\0';
        if (!len)
            continue;
        const char *t = line;
        if (vec_encode(h, vm, &t, &len, 1, 1, q) != 0)
            continue;
        double c0 = bench_cpu_ms();
        int ne = dense_topk(set, q, NULL, 0, TOP, 1, ex);
        cpu[MAXK][nq] = bench_cpu_ms() - c0;
        for (int k = 0; k < nk; k++) {
            c0 = bench_cpu_ms();
            int n = dense_topk_sketch(set, sk, q, NULL, 0, 0, TOP, ks[k], hs);
            cpu[k][nq] = bench_cpu_ms() - c0;
            int same_ord = n == ne;
            for (int i = 0; same_ord && i < n; i++)
                same_ord = hs[i].msg == ex[i].msg && hs[i].cos == ex[i].cos;
            int o50 = overlap(ex, ne, hs, n, TOP);
            diff_ord[k] += !same_ord;
            diff_set[k] += !(o50 == ne && n == ne);
            ov10[k] += (double)overlap(ex, ne, hs, n, 10) / (ne < 10 ? (ne ? ne : 1) : 10);
            ov50[k] += (double)o50 / (ne ? ne : 1);
            if (k == nk - 1 && !same_ord)
                bad = 1;
        }
        nq++;
    }
    fclose(f);
    printf("bench sketch questions=%d vectors=%zu kernel=%s sketch_kernel=%s exact_cpu_p50_ms=%.3f\n",
           nq, set->n, dense_kernel_name(), dense_sketch_kernel_name(),
           nq ? bench_median(cpu[MAXK], nq) : 0);
    for (int k = 0; k < nk; k++)
        printf("bench sketch k=%d top50_set_differs=%d top50_order_differs=%d of=%d "
               "overlap10=%.4f overlap50=%.4f cpu_p50_ms=%.3f\n",
               ks[k], diff_set[k], diff_ord[k], nq, nq ? ov10[k] / nq : 0,
               nq ? ov50[k] / nq : 0, nq ? bench_median(cpu[k], nq) : 0);
    free(q);
    cairn_close(h);
    if (bad)
        fprintf(stderr, "bench_sketch: K = all differs from the exact scan\n");
    return bad;
}
