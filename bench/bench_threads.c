/*
 * bench_threads.c: the exact recall on one thread and on two, in one
 * process, in turn (issue 23, exact36).
 *
 * For each question, ROUNDS rounds; a round runs cairn_recall (budget
 * 1000) with "recall.threads" "1" and with the default, in alternating
 * order, on the same handle. Each run records its wall time, the calling
 * thread's CPU time (the critical path when the second thread never makes
 * it wait: a measure the host's load barely moves) and the process's CPU
 * time (both threads); the second thread's share is their difference.
 * Both answers' texts must be the same bytes (exit status 1 if not).
 *
 * Output: one `bench threads.<q>.<mode> ...` line a question and mode,
 * medians in ms.
 *
 * usage: bench_threads STORE ROUNDS QUESTION...
 */
#include <cairn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
#include "../cli/cli.h"

static double process_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One recall: its times into wall, own, all; its text into *text. */
static int run_one(struct cairn *db, const char *q, const char *threads, double *wall,
                   double *own, double *all, char **text)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = 1000;
    o.method = CAIRN_METHOD_KEYWORD;
    if (cairn_set(db, "recall.threads", threads) != CAIRN_OK)
        return -1;
    double w0 = os_now_ms(), c0 = bench_cpu_ms(), p0 = process_cpu_ms();
    int rc = cairn_recall(db, q, &o, &r);
    *wall = os_now_ms() - w0;
    *own = bench_cpu_ms() - c0;
    *all = process_cpu_ms() - p0;
    if (rc != CAIRN_OK) {
        fprintf(stderr, "bench_threads: %s\n", cairn_errmsg(db));
        return -1;
    }
    *text = strdup(r->text);
    cairn_recall_free(r);
    return *text ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct cairn *db = NULL;
    int status = 0;
    if (argc < 4) {
        fprintf(stderr, "usage: bench_threads STORE ROUNDS QUESTION...\n");
        return 2;
    }
    int rounds = atoi(argv[2]);
    if (rounds < 1 || cli_db_open(argv[1], CAIRN_OPEN_READONLY, &db) != CAIRN_OK) {
        fprintf(stderr, "bench_threads: cannot open %s: %s\n", argv[1], cairn_errmsg(db));
        cairn_close(db);
        return 2;
    }
    double *v = malloc((size_t)rounds * 8 * sizeof *v);
    if (!v)
        return 2;
    for (int qi = 3; qi < argc && !status; qi++) {
        double *m[8];                 /* wall, own, all, all - own: one thread, two */
        for (int k = 0; k < 8; k++)
            m[k] = v + (size_t)k * (size_t)rounds;
        for (int r = 0; r < rounds && !status; r++) {
            char *t[2] = { NULL, NULL };
            for (int s = 0; s < 2 && !status; s++) {
                int mode = (r + s) % 2;   /* alternate which goes first */
                double *x = &m[mode * 4][r], *own = &m[mode * 4 + 1][r], *all = &m[mode * 4 + 2][r];
                status = run_one(db, argv[qi], mode ? NULL : "1", x, own, all, &t[mode]) ? 1 : 0;
                m[mode * 4 + 3][r] = *all - *own;
            }
            if (!status && strcmp(t[0], t[1])) {
                fprintf(stderr, "bench_threads: the answers differ on \"%s\"\n", argv[qi]);
                status = 1;
            }
            free(t[0]);
            free(t[1]);
        }
        if (status)
            break;
        for (int mode = 0; mode < 2; mode++) {
            double wall = bench_median(m[mode * 4], rounds);
            double own = bench_median(m[mode * 4 + 1], rounds);
            double all = bench_median(m[mode * 4 + 2], rounds);
            double other = bench_median(m[mode * 4 + 3], rounds);
            printf("bench threads.q%d.%s wall_p50=%.1f own_cpu_p50=%.1f all_cpu_p50=%.1f "
                   "other_cpu_p50=%.1f n=%d\n", qi - 3, mode ? "two" : "one", wall, own, all,
                   other, rounds);
        }
    }
    free(v);
    cairn_close(db);
    return status;
}
