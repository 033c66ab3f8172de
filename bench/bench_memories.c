/*
 * bench_memories.c: what explicit memories cost a recall (docs/MEMORIES.md:
 * recall reads at most MEM_SCAN_MAX live memories and tokenizes them on
 * every question).
 *
 * One made-up store (200 sessions of 10 short turns, keyword only), copied
 * three times: with no memory (the baseline: what recall cost before
 * memories), with 200 and with 2,000 made-up memories (2,000 is the most a
 * recall reads). Each question is recalled on the three stores in turn,
 * interleaved so that noise on a shared machine favours none of them, at
 * budget 2000, after one untimed pass. Reported: the median thread CPU
 * time per recall in ms and the ratio to the baseline, and the median
 * number of memories shown.
 *
 * usage: bench_memories WORKDIR [--reps N]
 */
#include <cairn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define NSESS 200
#define NTURN 10
#define NQ 40

static const char *const words[] = {
    "deploy", "kestrel", "invoice", "backup", "compressor", "garden", "basil", "python",
    "tabs", "spaces", "staging", "database", "migration", "lisbon", "climbing", "gym",
    "budget", "token", "release", "branch", "review", "docker", "kernel", "printer",
    "coffee", "meeting", "deadline", "schema", "vector", "fence", "cursor", "trellis",
};
#define NW (int)(sizeof words / sizeof words[0])

static unsigned rnd_state = 12345;
static unsigned rnd(void)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return rnd_state >> 8;
}

/* n made-up words into buf. */
static void sentence(char *buf, size_t cap, int n)
{
    size_t k = 0;
    for (int i = 0; i < n && k + 16 < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s%u", i ? " " : "", words[rnd() % NW],
                              rnd() % 50);
}

static struct cairn *open_store(const char *path)
{
    struct cairn *h = NULL;
    if (cairn_open(path, 0, &h) || cairn_set(h, "embed.model", "none")) {
        fprintf(stderr, "bench_memories: cannot open %s: %s\n", path, h ? cairn_errmsg(h) : "");
        exit(2);
    }
    return h;
}

static void fill_sessions(struct cairn *h)
{
    char text[NTURN][200], id[32];
    struct cairn_message m[NTURN];
    for (int s = 0; s < NSESS; s++) {
        for (int i = 0; i < NTURN; i++) {
            sentence(text[i], sizeof text[i], 12);
            memset(&m[i], 0, sizeof m[i]);
            m[i].role = i % 2 ? "assistant" : "user";
            m[i].content = text[i];
            m[i].at = 1760000000 + s * 3600 + i * 60;
        }
        struct cairn_session se = { 0 };
        snprintf(id, sizeof id, "s%d", s);
        se.id = id;
        se.started_at = se.ended_at = CAIRN_NO_TIME;
        se.messages = m;
        se.n_messages = NTURN;
        if (cairn_add_session(h, &se, NULL)) {
            fprintf(stderr, "bench_memories: add: %s\n", cairn_errmsg(h));
            exit(2);
        }
    }
}

static void fill_memories(struct cairn *h, int n)
{
    char text[200];
    for (int i = 0; i < n; i++) {
        struct cairn_memory_new m = { 0 };
        sentence(text, sizeof text, 8);
        m.text = text;
        if (cairn_memory_add(h, &m, NULL)) {
            fprintf(stderr, "bench_memories: remember: %s\n", cairn_errmsg(h));
            exit(2);
        }
    }
}

/* One recall: its thread CPU ms; *shown gets the memories in it. */
static double one(struct cairn *h, const char *q, int *shown)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = 2000;
    o.now = 1770000000;
    double t0 = bench_cpu_ms();
    if (cairn_recall(h, q, &o, &r)) {
        fprintf(stderr, "bench_memories: recall: %s\n", cairn_errmsg(h));
        exit(2);
    }
    double t = bench_cpu_ms() - t0;
    *shown = 0;
    for (size_t i = 0; i < r->n_items; i++)
        *shown += r->items[i].memory != 0;
    cairn_recall_free(r);
    return t;
}

int main(int argc, char **argv)
{
    static const int nmem[3] = { 0, 200, 2000 };
    char path[3][512], q[NQ][120];
    struct cairn *h[3];
    int reps = 5;
    if (argc < 2) {
        fprintf(stderr, "usage: bench_memories WORKDIR [--reps N]\n");
        return 2;
    }
    if (argc == 4 && !strcmp(argv[2], "--reps"))
        reps = atoi(argv[3]) > 0 ? atoi(argv[3]) : 5;
    for (int k = 0; k < 3; k++) {
        snprintf(path[k], sizeof path[k], "%s/bench-memories-%d.db", argv[1], nmem[k]);
        remove(path[k]);
        rnd_state = 12345;          /* the same sessions in each store */
        h[k] = open_store(path[k]);
        fill_sessions(h[k]);
        fill_memories(h[k], nmem[k]);
    }
    for (int i = 0; i < NQ; i++)
        sentence(q[i], sizeof q[i], 3);
    double *t[3];
    int *shown[3], n = NQ * reps;
    for (int k = 0; k < 3; k++) {
        t[k] = calloc((size_t)n, sizeof *t[k]);
        shown[k] = calloc((size_t)n, sizeof *shown[k]);
        if (!t[k] || !shown[k])
            return 2;
        for (int i = 0; i < NQ; i++)        /* warm the caches, untimed */
            one(h[k], q[i], &shown[k][0]);
    }
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < NQ; i++)
            for (int k = 0; k < 3; k++)
                t[k][r * NQ + i] = one(h[k], q[i], &shown[k][r * NQ + i]);
    double base = 0;
    for (int k = 0; k < 3; k++) {
        double shown_d[NQ * 64];
        int m = n < NQ * 64 ? n : NQ * 64;
        for (int i = 0; i < m; i++)
            shown_d[i] = shown[k][i];
        double med = bench_median(t[k], n), ms = bench_median(shown_d, m);
        if (k == 0)
            base = med;
        printf("bench memories.%d p50_cpu_ms=%.3f ratio=%.2f shown_p50=%.0f recalls=%d\n",
               nmem[k], med, base > 0 ? med / base : 0, ms, n);
        cairn_close(h[k]);
        remove(path[k]);
        free(t[k]);
        free(shown[k]);
    }
    printf("# memories: %d questions x %d on %d sessions of %d turns, budget 2000, keyword only\n",
           NQ, reps, NSESS, NTURN);
    return 0;
}
