/*
 * bench_recall.c: latency of cairn_recall in-process, against a plain
 * FTS5 bm25() query over the same text, in the same run.
 *
 * The store is built beforehand by `cairn add` of the dev data
 * (bench/gen_data.py dev: LoCoMo and BEAM, about 240k tokens); the
 * questions are the datasets' own, one a line. This program:
 *   1. copies every stored message (read back through the public API,
 *      cairn_sessions + cairn_messages) into a baseline database on disk
 *      with a plain `fts5(content, tokenize='unicode61')` table, one
 *      transaction per session, as cairn stores them;
 *   2. runs every question once through both, untimed, to warm the page
 *      cache and SQLite's caches;
 *   3. times each question, in turn: cairn_recall at budget 1000, at
 *      budget 4000, and the baseline: the question's words OR'ed
 *      ("w1" OR "w2" ...), `WHERE t MATCH ? ORDER BY bm25(t) LIMIT 50`,
 *      every row stepped. Interleaving keeps noise on this shared machine
 *      from favouring one side.
 * Reported: p50/p95/p99/mean/max in ms, and the p50 ratio against the
 * baseline. It also checks that no result exceeds its budget.
 *
 * Output: `bench <name> key=value ...` lines, then a short human summary.
 * Exit status 1 if a check failed.
 *
 * usage: bench_recall STORE QUESTIONS WORKDIR [--now DATE] [--reps N]
 */
#include <cairn.h>

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"
#include "../cli/cli.h"

/* The project's goal for this store (bench/README.md). */
#define TARGET_P50_MS 20.0
#define MAX_QUESTIONS 5000

struct stats {
    double p50, p95, p99, mean, max;
};

/* Nearest-rank percentiles; sorts v. */
static struct stats summarize(double *v, size_t n)
{
    struct stats s = { 0, 0, 0, 0, 0 };
    double sum = 0;

    if (!n)
        return s;
    qsort(v, n, sizeof *v, cmp_double);
    for (size_t i = 0; i < n; i++)
        sum += v[i];
#define RANK(p) v[(size_t)((p) / 100.0 * (double)n + 0.999999) - 1]
    s.p50 = RANK(50);
    s.p95 = RANK(95);
    s.p99 = RANK(99);
#undef RANK
    s.mean = sum / (double)n;
    s.max = v[n - 1];
    return s;
}

/* ---- copying the store into the baseline ------------------------------ */

struct copy_ctx {
    sqlite3 *db;
    sqlite3_stmt *ins;
    char **ids;
    size_t n_ids, cap_ids;
    long long messages, bytes, tokens;
    int failed;
};

static int collect_session(void *arg, const struct cairn_session_info *s)
{
    struct copy_ctx *c = arg;

    if (c->n_ids == c->cap_ids) {
        size_t cap = c->cap_ids ? c->cap_ids * 2 : 256;
        char **p = realloc(c->ids, cap * sizeof *p);
        if (!p)
            return 1;
        c->ids = p;
        c->cap_ids = cap;
    }
    if (!(c->ids[c->n_ids] = strdup(s->id)))
        return 1;
    c->n_ids++;
    return 0;
}

static int copy_message(void *arg, const struct cairn_message_info *m)
{
    struct copy_ctx *c = arg;

    sqlite3_bind_text(c->ins, 1, m->content, (int)m->content_len, SQLITE_STATIC);
    if (sqlite3_step(c->ins) != SQLITE_DONE) {
        c->failed = 1;
        return 1;
    }
    sqlite3_reset(c->ins);
    c->messages++;
    c->bytes += (long long)m->content_len;
    c->tokens += cairn_count_tokens(m->content, m->content_len);
    return 0;
}

static int build_baseline(struct cairn *db, const char *path, struct copy_ctx *c)
{
    int rc = -1;

    unlink(path);
    if (sqlite3_open(path, &c->db) != SQLITE_OK ||
        sqlite3_exec(c->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     "CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61');",
                     NULL, NULL, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(c->db, "INSERT INTO t(content) VALUES (?)", -1, &c->ins,
                           NULL) != SQLITE_OK)
        goto out;
    if (cairn_sessions(db, NULL, 1, 0, collect_session, c) != CAIRN_OK)
        goto out;
    for (size_t i = 0; i < c->n_ids; i++) {
        if (sqlite3_exec(c->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ||
            cairn_messages(db, c->ids[i], 0, -1, copy_message, c) != CAIRN_OK || c->failed ||
            sqlite3_exec(c->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
            goto out;
    }
    rc = 0;
out:
    if (rc && c->db)
        fprintf(stderr, "bench_recall: baseline: %s\n", sqlite3_errmsg(c->db));
    sqlite3_finalize(c->ins);
    c->ins = NULL;
    sqlite3_close(c->db);
    c->db = NULL;
    for (size_t i = 0; i < c->n_ids; i++)
        free(c->ids[i]);
    free(c->ids);
    c->ids = NULL;
    return rc;
}

/*
 * The baseline's MATCH expression: each run of letters and digits (any
 * non-ASCII byte counts as a letter, as unicode61 mostly does), lower-cased,
 * quoted, first occurrence only, joined with OR. Returns 0 if there was
 * no word.
 */
static size_t match_expr(const char *q, char *out, size_t cap)
{
    size_t n = 0, words = 0;
    const unsigned char *p = (const unsigned char *)q;

    out[0] = '\0';
    while (*p) {
        while (*p && !(*p >= 0x80 || (*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' &&
                                                                  (*p | 0x20) <= 'z')))
            p++;
        const unsigned char *s = p;
        while (*p >= 0x80 || (*p >= '0' && *p <= '9') || ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'z'))
            p++;
        size_t len = (size_t)(p - s);
        if (!len)
            break;
        char w[256];
        if (len >= sizeof w - 3)
            continue;
        w[0] = '"';
        for (size_t i = 0; i < len; i++)
            w[i + 1] = (char)(s[i] >= 'A' && s[i] <= 'Z' ? s[i] | 0x20 : s[i]);
        w[len + 1] = '"';
        w[len + 2] = '\0';
        if (strstr(out, w))       /* a repeat: the quotes make the match exact */
            continue;
        size_t need = (words ? 4 : 0) + len + 2;
        if (n + need + 1 > cap)
            break;
        n += (size_t)snprintf(out + n, cap - n, "%s%s", words ? " OR " : "", w);
        words++;
    }
    return words;
}

static int baseline_query(sqlite3_stmt *st, const char *q, int *rows)
{
    char expr[8192];
    int src;

    *rows = 0;
    if (!match_expr(q, expr, sizeof expr))
        return 0;
    sqlite3_bind_text(st, 1, expr, -1, SQLITE_TRANSIENT);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        volatile sqlite3_int64 id = sqlite3_column_int64(st, 0);
        volatile double score = sqlite3_column_double(st, 1);
        (void)id;
        (void)score;
        (*rows)++;
    }
    sqlite3_reset(st);
    return src == SQLITE_DONE ? 0 : -1;
}

/* ---- questions --------------------------------------------------------- */

static char **read_lines(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    char **v = NULL;
    char *line = NULL;
    size_t cap = 0;
    ssize_t k;

    *n = 0;
    if (!f)
        return NULL;
    v = calloc(MAX_QUESTIONS, sizeof *v);
    while (v && *n < MAX_QUESTIONS && (k = getline(&line, &cap, f)) >= 0) {
        while (k > 0 && (line[k - 1] == '\n' || line[k - 1] == '\r'))
            line[--k] = '\0';
        if (k > 0 && !(v[*n] = strdup(line)))
            break;
        if (k > 0)
            (*n)++;
    }
    free(line);
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    const char *now = "2024-01-01T00:00:00";
    int reps = 1, bad = 0, rc;
    struct cairn *db = NULL;
    struct copy_ctx cc;
    sqlite3 *bdb = NULL;
    sqlite3_stmt *bq = NULL;
    char bpath[4096];
    static const int budgets[2] = { 1000, 4000 };

    memset(&cc, 0, sizeof cc);
    if (argc < 4) {
        fprintf(stderr, "usage: bench_recall STORE QUESTIONS WORKDIR [--now DATE] [--reps N]\n");
        return 2;
    }
    for (int i = 4; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--now"))
            now = argv[++i];
        else if (!strcmp(argv[i], "--reps"))
            reps = (int)strtol(argv[++i], NULL, 10);
    }
    if (reps < 1 || reps > 20)
        reps = 1;
    struct cairn_recall_opts opts = CAIRN_RECALL_OPTS_INIT;
    if (cairn_parse_time(now, &opts.now) != CAIRN_OK) {
        fprintf(stderr, "bench_recall: bad --now %s\n", now);
        return 2;
    }
    size_t nq;
    char **qs = read_lines(argv[2], &nq);
    if (!qs || !nq) {
        fprintf(stderr, "bench_recall: no questions in %s\n", argv[2]);
        return 2;
    }
    if ((rc = cli_db_open(argv[1], CAIRN_OPEN_READONLY, &db)) != CAIRN_OK) {
        fprintf(stderr, "bench_recall: %s: %s\n", argv[1], db ? cairn_errmsg(db) : "no memory");
        cairn_close(db);
        return 2;
    }
    snprintf(bpath, sizeof bpath, "%s/recall-baseline.db", argv[3]);
    double t0 = os_now_ms();
    if (build_baseline(db, bpath, &cc))
        return 1;
    double t_build = os_now_ms() - t0;
    if (sqlite3_open_v2(bpath, &bdb, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(bdb, "SELECT rowid, bm25(t) FROM t WHERE t MATCH ?"
                           " ORDER BY bm25(t) LIMIT 50", -1, &bq, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_recall: baseline: %s\n", sqlite3_errmsg(bdb));
        return 1;
    }

    size_t n = nq * (size_t)reps;
    double *tc[2], *tb = calloc(n, sizeof *tb);
    long long items[2] = { 0, 0 }, toks[2] = { 0, 0 }, empty[2] = { 0, 0 }, brows = 0;
    tc[0] = calloc(n, sizeof *tc[0]);
    tc[1] = calloc(n, sizeof *tc[1]);
    if (!tb || !tc[0] || !tc[1])
        return 1;

    /* Warm-up: every question once, untimed. */
    for (size_t i = 0; i < nq; i++) {
        struct cairn_recall *r = NULL;
        int rows;
        opts.budget = budgets[0];
        if (cairn_recall(db, qs[i], &opts, &r) != CAIRN_OK) {
            fprintf(stderr, "bench_recall: recall \"%s\": %s\n", qs[i], cairn_errmsg(db));
            return 1;
        }
        cairn_recall_free(r);
        if (baseline_query(bq, qs[i], &rows)) {
            fprintf(stderr, "bench_recall: baseline \"%s\": %s\n", qs[i], sqlite3_errmsg(bdb));
            return 1;
        }
    }

    for (size_t k = 0; k < n; k++) {
        const char *q = qs[k % nq];
        for (int b = 0; b < 2; b++) {
            struct cairn_recall *r = NULL;
            opts.budget = budgets[b];
            double t = os_now_ms();
            rc = cairn_recall(db, q, &opts, &r);
            tc[b][k] = os_now_ms() - t;
            if (rc != CAIRN_OK) {
                fprintf(stderr, "bench_recall: recall \"%s\": %s\n", q, cairn_errmsg(db));
                return 1;
            }
            items[b] += (long long)r->n_items;
            toks[b] += r->tokens;
            empty[b] += r->n_items == 0;
            if (r->tokens > budgets[b] || cairn_count_tokens(r->text, strlen(r->text)) > budgets[b]) {
                fprintf(stderr, "bench_recall: \"%s\" at budget %d used %d tokens\n", q,
                        budgets[b], r->tokens);
                bad = 1;
            }
            cairn_recall_free(r);
        }
        int rows;
        double t = os_now_ms();
        rc = baseline_query(bq, q, &rows);
        tb[k] = os_now_ms() - t;
        brows += rows;
        if (rc) {
            fprintf(stderr, "bench_recall: baseline \"%s\": %s\n", q, sqlite3_errmsg(bdb));
            return 1;
        }
    }

    struct stats sb = summarize(tb, n), sc[2];
    printf("bench recall.store sessions=%zu messages=%lld text_mb=%.2f tokens=%lld "
           "questions=%zu baseline_build_ms=%.0f\n", cc.n_ids, cc.messages,
           (double)cc.bytes / 1e6, cc.tokens, nq, t_build);
    printf("bench recall.baseline query=fts5_bm25_or_top50 n=%zu p50_ms=%.3f p95_ms=%.3f "
           "p99_ms=%.3f mean_ms=%.3f max_ms=%.3f rows_mean=%.1f\n", n, sb.p50, sb.p95, sb.p99,
           sb.mean, sb.max, (double)brows / (double)n);
    for (int b = 0; b < 2; b++) {
        sc[b] = summarize(tc[b], n);
        printf("bench recall.cairn budget=%d n=%zu p50_ms=%.3f p95_ms=%.3f p99_ms=%.3f "
               "mean_ms=%.3f max_ms=%.3f items_mean=%.1f tokens_mean=%.0f empty=%lld "
               "ratio_p50_vs_baseline=%.2f target_p50_ms=%.0f meets_target=%d\n", budgets[b], n,
               sc[b].p50, sc[b].p95, sc[b].p99, sc[b].mean, sc[b].max,
               (double)items[b] / (double)n, (double)toks[b] / (double)n, empty[b],
               sc[b].p50 / sb.p50, TARGET_P50_MS, sc[b].p50 < TARGET_P50_MS);
    }
    printf("# recall: %zu questions over %lld messages (%lld tokens): cairn_recall p50/p95/p99 "
           "%.2f/%.2f/%.2f ms at 1000 tokens, %.2f/%.2f/%.2f ms at 4000; plain FTS5 bm25 top-50 "
           "%.2f/%.2f/%.2f ms: %.1fx / %.1fx at p50; target p50 < %.0f ms: %s%s\n",
           nq, cc.messages, cc.tokens, sc[0].p50, sc[0].p95, sc[0].p99, sc[1].p50, sc[1].p95,
           sc[1].p99, sb.p50, sb.p95, sb.p99, sc[0].p50 / sb.p50, sc[1].p50 / sb.p50,
           TARGET_P50_MS, sc[0].p50 < TARGET_P50_MS && sc[1].p50 < TARGET_P50_MS ? "met" : "MISSED",
           bad ? "; BUDGET CHECK FAILED" : "");

    sqlite3_finalize(bq);
    sqlite3_close(bdb);
    unlink(bpath);
    cairn_close(db);
    for (size_t i = 0; i < nq; i++)
        free(qs[i]);
    free(qs);
    free(tb);
    free(tc[0]);
    free(tc[1]);
    return bad;
}
