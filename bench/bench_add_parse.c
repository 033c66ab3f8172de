/*
 * bench_add_parse.c: what `cairn add` spends finding its sessions, before
 * and after it stopped building trees for that (json_scan).
 *
 *   bench_add_parse FILE.jsonl [ROUNDS]
 *
 * FILE is a `cairn add` JSONL (bench/gen_data.py ingest). Two shapes: the
 * lines as they are, and the same sessions as one JSON array. Per session,
 * cairn_add_json parses it once either way; what changed is the CLI's
 * work around that:
 *   before: JSONL: json_parse of the line (a tree, thrown away);
 *           array: json_parse of the whole array, then json_parse of each
 *           element again for its end;
 *   after:  the same with json_scan (no tree).
 * Both ways also run the parse cairn_add_json does (json_parse of each
 * session), so the figures are the whole JSON cost of an add. Each round
 * runs both, in alternating order; medians of ROUNDS (default 9) of the
 * process's CPU time and their ratio are printed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "util/buf.h"
#include "util/json.h"

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One session's text: the parse cairn_add_json does, whichever way. */
static size_t add_parse(const char *p, size_t n)
{
    cJSON *v = json_parse(p, n, NULL);
    size_t ok = v != NULL;
    cJSON_Delete(v);
    return ok;
}

/* The end of the value at p, the old way (a tree) or the new (a scan);
 * 0 if it is not JSON. */
static int value_end(int scan, const char *p, size_t n, const char **end)
{
    if (scan)
        return json_scan(p, n, end) != 0;
    cJSON *v = json_parse(p, n, end);
    cJSON_Delete(v);
    return v != NULL;
}

static size_t run_jsonl(int scan, const struct buf *in)
{
    size_t ok = 0;
    for (const char *p = in->p, *end = in->p + in->n; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        const char *e = NULL;
        if (value_end(scan, p, len, &e))
            ok += add_parse(p, (size_t)(e - p));
        p += len + 1;
    }
    return ok;
}

static size_t run_array(int scan, const struct buf *arr)
{
    size_t ok = 0;
    const char *qe = NULL, *q = arr->p + 1;
    if (!value_end(scan, arr->p, arr->n, &qe))
        return 0;
    while (q && q < qe) {
        const char *e = NULL;
        if (!value_end(scan, q, (size_t)(qe - q), &e))
            break;
        ok += add_parse(q, (size_t)(e - q));
        q = memchr(e, ',', (size_t)(qe - e));
        if (q)
            q++;
    }
    return ok;
}

int main(int argc, char **argv)
{
    struct buf in = BUF_INIT, arr = BUF_INIT;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
    char chunk[65536];
    size_t k;
    if (!f) {
        fprintf(stderr, "usage: bench_add_parse FILE.jsonl [ROUNDS]\n");
        return 1;
    }
    while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
        buf_add(&in, chunk, k);
    fclose(f);
    buf_addc(&arr, '[');
    for (size_t i = 0; i < in.n; i++)   /* the lines joined: one array of the sessions */
        buf_addc(&arr, in.p[i] == '\n' && i + 1 < in.n ? ',' : in.p[i]);
    buf_addc(&arr, ']');
    if (in.err || arr.err || rounds < 1 || rounds > 99) {
        fprintf(stderr, "bench_add_parse: no input\n");
        return 1;
    }
    static const char *const shape[] = { "jsonl", "array" };
    double t[2][2][99];                  /* [shape][scan][round] */
    size_t sessions[2][2] = { { 0 } };
    for (int r = 0; r < rounds; r++) {
        for (int s = 0; s < 2; s++) {
            for (int pass = 0; pass < 2; pass++) {
                int scan = (pass + r) % 2;          /* alternate which goes first */
                double c0 = cpu_ms();
                sessions[s][scan] = s ? run_array(scan, &arr) : run_jsonl(scan, &in);
                t[s][scan][r] = cpu_ms() - c0;
            }
        }
    }
    for (int s = 0; s < 2; s++) {
        qsort(t[s][0], (size_t)rounds, sizeof(double), cmp_double);
        qsort(t[s][1], (size_t)rounds, sizeof(double), cmp_double);
        double before = t[s][0][rounds / 2], after = t[s][1][rounds / 2];
        printf("bench add_parse shape=%s bytes=%zu sessions=%zu/%zu rounds=%d before_cpu_ms=%.1f "
               "after_cpu_ms=%.1f ratio=%.2f\n", shape[s], in.n, sessions[s][0], sessions[s][1],
               rounds, before, after, after / before);
    }
    buf_release(&in);
    buf_release(&arr);
    return 0;
}
