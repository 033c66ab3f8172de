/*
 * bench_vecload.c: where a fresh process's hybrid recall spends its time
 * on a big store, phase by phase, each phase in a forked child so it is
 * the first of its kind in that process (as in a hook):
 *
 *   sqlite_scan  the baseline: one prepared SELECT of the model's rows
 *                (msg, session, scale, v) copied into one preallocated
 *                contiguous matrix; the floor of any load out of SQLite;
 *   load_sqlite  vec_set_get on a fresh handle with CAIRN_VEC_CACHE=0:
 *                cairn's own load out of SQLite (norms, counts, checks);
 *   load         vec_set_get on a fresh handle: what recall pays to have
 *                the vectors (the cache file when there is a valid one);
 *   model        loading the embedding model (vec_model_current);
 *   encode       the question's vector (the model loaded);
 *   topk         dense_topk over the loaded set (AVX2, 2 threads).
 *
 * The store must have vectors of the current model (CAIRN_EMBED_MODEL)
 * and schema version 5 (open it writable once).
 * Phases take turns for N rounds (default 15) after one untimed warm-up
 * round, so noise hits them alike. The store is only read; the load phase
 * may write the derived cache file beside it (store/veccache.c) unless
 * CAIRN_VEC_CACHE=0.
 *
 * Output: `bench vecload.<phase> p50_ms=... p95_ms=...` lines.
 *
 * usage: bench_vecload STORE [--runs N] [--query TEXT]
 */
#include <cairn.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "bench.h"
#include "../cli/cli.h"

#define MAX_RUNS 200

enum { P_SCAN, P_LOAD_DB, P_LOAD, P_MODEL, P_ENCODE, P_TOPK, N_PHASES };
static const char *const names[N_PHASES] = { "sqlite_scan", "load_sqlite", "load", "model",
                                              "encode", "topk" };

/* The baseline: the rows read by one SELECT into one matrix sized first
 * by a count, nothing else (no norms, no checks beyond the blob size). */
static double sqlite_scan(struct cairn *db, const char *model, int dim, size_t *n_out)
{
    sqlite3_stmt *st = NULL;
    int64_t n = 0;
    double t0 = os_now_ms();
    sqlite3_prepare_v2(db->db, "SELECT count(*) FROM vectors WHERE model = ? AND dim = ?", -1,
                       &st, NULL);
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, dim);
    if (sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    int8_t *v = malloc((size_t)n * (size_t)dim + 1);
    int64_t *msg = malloc((size_t)n * sizeof *msg + 1), *sess = malloc((size_t)n * sizeof *sess + 1);
    float *scale = malloc((size_t)n * sizeof *scale + 1);
    size_t k = 0;
    sqlite3_prepare_v2(db->db, "SELECT msg, session, scale, v FROM vectors WHERE model = ? "
                       "AND dim = ? ORDER BY msg, piece", -1, &st, NULL);
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, dim);
    while (v && msg && sess && scale && sqlite3_step(st) == SQLITE_ROW && k < (size_t)n) {
        if (sqlite3_column_bytes(st, 3) != dim)
            continue;
        msg[k] = sqlite3_column_int64(st, 0);
        sess[k] = sqlite3_column_int64(st, 1);
        scale[k] = (float)sqlite3_column_double(st, 2);
        memcpy(v + k * (size_t)dim, sqlite3_column_blob(st, 3), (size_t)dim);
        k++;
    }
    sqlite3_finalize(st);
    double ms = os_now_ms() - t0;
    free(v);
    free(msg);
    free(sess);
    free(scale);
    *n_out = k;
    return ms;
}

/* One phase in this (forked) process: its time in ms, or -1. */
static double phase(int p, const char *store, const char *query, size_t *n_out)
{
    struct cairn *db = NULL;
    const struct vec_set *set = NULL;
    char why[600];
    double ms = -1, t0;
    *n_out = 0;
    if (p == P_LOAD_DB)
        setenv("CAIRN_VEC_CACHE", "0", 1);
    /* the settings come from the environment as for the CLI (cli/env.c) */
    if (cli_db_open(store, CAIRN_OPEN_READONLY, &db) != CAIRN_OK)
        return -1;
    t0 = os_now_ms();
    struct vec_model *vm = vec_model_current(db, why, sizeof why);
    double model_ms = os_now_ms() - t0;
    if (!vm) {
        fprintf(stderr, "bench_vecload: %s\n", why);
        goto out;
    }
    if (p == P_MODEL) {
        ms = model_ms;
        goto out;
    }
    if (p == P_SCAN) {
        ms = sqlite_scan(db, vec_model_id(vm), vec_model_dim(vm), n_out);
        goto out;
    }
    float *qv = malloc((size_t)vec_model_dim(vm) * sizeof *qv);
    size_t qlen = strlen(query);
    struct dense_hit hits[50];
    if (!qv)
        goto out;
    t0 = os_now_ms();
    if (p == P_ENCODE) {
        if (vec_encode(db, vm, &query, &qlen, 1, 1, qv) == 0)
            ms = os_now_ms() - t0;
        free(qv);
        goto out;
    }
    if (vec_set_get(db, vec_model_id(vm), vec_model_dim(vm), &set) != CAIRN_OK || !set) {
        fprintf(stderr, "bench_vecload: %s\n", cairn_errmsg(db));
        free(qv);
        goto out;
    }
    ms = os_now_ms() - t0;
    *n_out = set->n;
    if (p == P_TOPK && vec_encode(db, vm, &query, &qlen, 1, 1, qv) == 0) {
        t0 = os_now_ms();
        ms = dense_topk(set, qv, NULL, 0, 50, 2, hits) > 0 ? os_now_ms() - t0 : -1;
    }
    free(qv);
out:
    cairn_close(db);
    return ms;
}

/* Runs a phase in a child; the child writes its figures to a pipe. */
static double run_child(int p, const char *store, const char *query, size_t *n_out)
{
    int fd[2];
    double r[2] = { -1, 0 };
    if (pipe(fd) != 0)
        return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        size_t n;
        r[0] = phase(p, store, query, &n);
        r[1] = (double)n;
        ssize_t w = write(fd[1], r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    if (pid < 0 || read(fd[0], r, sizeof r) != (ssize_t)sizeof r)
        r[0] = -1;
    close(fd[0]);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    *n_out = (size_t)r[1];
    return r[0];
}

int main(int argc, char **argv)
{
    const char *store = NULL, *query = "how did I fix the segfault in the parser last week";
    int runs = 15, fail = 0;
    static double t[N_PHASES][MAX_RUNS];
    size_t n[N_PHASES] = { 0 };
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--query") && i + 1 < argc)
            query = argv[++i];
        else
            store = argv[i];
    }
    if (!store || runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "usage: bench_vecload STORE [--runs N] [--query TEXT]\n");
        return 2;
    }
    for (int r = -1; r < runs; r++) {
        for (int p = 0; p < N_PHASES; p++) {
            double ms = run_child(p, store, query, &n[p]);
            if (ms < 0) {
                fprintf(stderr, "bench_vecload: phase %s failed\n", names[p]);
                return 1;
            }
            if (r >= 0)
                t[p][r] = ms;
        }
    }
    if (n[P_SCAN] != n[P_LOAD] || n[P_SCAN] != n[P_LOAD_DB]) {
        fprintf(stderr, "bench_vecload: the baseline read %zu vectors, the loads %zu and %zu\n",
                n[P_SCAN], n[P_LOAD_DB], n[P_LOAD]);
        fail = 1;
    }
    double p50[N_PHASES];
    for (int p = 0; p < N_PHASES; p++) {
        qsort(t[p], (size_t)runs, sizeof t[p][0], cmp_double);
        int k95 = (runs * 95 + 99) / 100 - 1;
        p50[p] = t[p][runs / 2];
        printf("bench vecload.%s runs=%d p50_ms=%.1f p95_ms=%.1f", names[p], runs, p50[p],
               t[p][k95 < 0 ? 0 : k95]);
        if (p == P_SCAN || p == P_LOAD || p == P_LOAD_DB)
            printf(" vectors=%zu", n[p]);
        printf("\n");
    }
    printf("# vectors: load p50 %.1f ms; out of SQLite %.1f ms (%.0fx), a plain SQLite scan "
           "%.1f ms; model load %.1f ms, question %.1f ms, top-k %.1f ms\n", p50[P_LOAD],
           p50[P_LOAD_DB], p50[P_LOAD_DB] / p50[P_LOAD], p50[P_SCAN], p50[P_MODEL],
           p50[P_ENCODE], p50[P_TOPK]);
    return fail;
}
