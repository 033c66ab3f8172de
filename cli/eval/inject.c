/*
 * inject.c: `cairn eval inject DATASET FILE... [--budget N] [--dev]`: how
 * the prompt hook's relevance gate behaves on a benchmark.
 *
 * Each question is put to inject_prompt (hook_inject.c), the very function
 * the prompt hook runs (its skip rules, the budget less the fence, the
 * gate, the size cap), twice:
 *   - with memory: against its own conversation's store;
 *   - without memory: against the same store with the sessions that hold
 *     its evidence forgotten (they are added back afterwards), so the
 *     question is one whose answer is not in memory.
 * Reported: how often the gate fires in each case, and, when it fires
 * with memory, how often all the evidence is in what it injects. A good
 * gate fires often with memory, rarely without, and injects the answer
 * when it fires. Questions reported apart (adversarial, abstention) are
 * left out, as in the recall tables.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "../cli.h"
#include "util/buf.h"
#include "util/os.h"

struct inj {
    int budget, dev;
    size_t n, fired_with, complete, strict, fired_without, any_with;
    size_t failed, dense;        /* recalls that used vectors */
    double *ms;                  /* [n]: each with-memory recall, in process */
    size_t ms_cap;
    FILE *out;                   /* --out: one line a question, or NULL */
};

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 0: evidence e is not in what was injected; 1: packed whole; 2: only as
 * an excerpt. */
static int has_ev(const struct cairn_recall *r, const struct eval_ev *e)
{
    int found = 0;
    for (size_t i = 0; i < r->n_items; i++)
        if (!strcmp(r->items[i].session, e->session) && !strcmp(r->items[i].message, e->message))
            found = found == 1 || !r->items[i].excerpt ? 1 : 2;
    return found;
}

/* The hook's decision: 1 fired, 0 not, -1 recall failed; *why its
 * reason. */
static int ask(struct cairn *db, const struct eval_q *q, int budget, struct cairn_recall **r,
               const char **why)
{
    struct inject_req req = { budget, q->now, NULL, NULL, NULL };
    struct buf ctxt = BUF_INIT;
    int d = inject_prompt(db, q->question, &req, r, &ctxt, why);
    buf_release(&ctxt);
    return d;
}

/* How many of q's evidence turns r holds (*whole: packed whole). */
static size_t ev_found(const struct cairn_recall *r, const struct eval_q *q, size_t *whole)
{
    size_t k = 0;
    *whole = 0;
    for (size_t e = 0; r && e < q->n_ev; e++) {
        int h = has_ev(r, &q->ev[e]);
        k += h != 0;
        *whole += h == 1;
    }
    return k;
}

/* --out: the decision and the gate's figures of one ask, as JSON members
 * named with prefix. */
static void put_ask(struct buf *b, const char *prefix, int fired, const char *why,
                    const struct cairn_recall *r)
{
    buf_printf(b, ",\"%s_fired\":%d,\"%s_why\":", prefix, fired, prefix);
    buf_add_json_str(b, why ? why : "", why ? strlen(why) : 0);
    if (r)
        buf_printf(b, ",\"%s_match\":%.4f,\"%s_weight\":%.4f,\"%s_cos\":%.4f,"
                   "\"%s_cos_z\":%.3f,\"%s_gate_dense\":%d,\"%s_match_dense\":%.4f",
                   prefix, r->match, prefix, r->match_weight, prefix, r->cosine, prefix,
                   r->cosine_z, prefix, r->gate_dense, prefix, r->match_dense);
}

/* The evidence a question the gate held back would have had injected: the
 * hook's recall without CAIRN_RECALL_GATE_ONLY (which stops before packing
 * what the gate will not pass), so --out can tell what another gate would
 * inject. -1: no recall ran (a skip rule) or it failed. */
static int would_have(struct cairn *db, const struct eval_q *q, int budget, size_t *whole)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    int k = -1;
    o.now = q->now;
    o.flags = CAIRN_RECALL_MATCHED_ONLY | CAIRN_RECALL_FAST;
    o.method = inject_method();
    o.budget = inject_budget(budget);
    if (!cairn_recall(db, q->question, &o, &r))
        k = (int)ev_found(r, q, whole);
    cairn_recall_free(r);
    return k;
}

static int inject_conv(void *arg, struct eval_conv *c)
{
    struct inj *s = arg;
    struct cairn *db = NULL;
    int rc = 0;
    if (cli_db_open(":memory:", 0, &db)) {
        cli_error("eval inject: %s", cairn_errmsg(db));
        cairn_close(db);
        return 1;
    }
    if (eval_conv_add(db, c, NULL, "eval inject", NULL)) {
        rc = 1;
        goto out;
    }
    for (size_t qi = 0; qi < c->n_qs; qi++) {
        const struct eval_q *q = &c->qs[qi];
        struct cairn_recall *r = NULL;
        if (q->apart || !q->n_ev)
            continue;
        s->n++;
        double t0 = os_now_ms();
        const char *why = NULL;
        struct buf line = BUF_INIT;
        int fired = ask(db, q, s->budget, &r, &why);
        if (fired < 0) {
            s->failed++;
            cairn_recall_free(r);
            continue;
        }
        if (s->n > s->ms_cap) {
            size_t nc = s->ms_cap ? s->ms_cap * 2 : 256;
            double *nm = realloc(s->ms, nc * sizeof *nm);
            if (nm) {
                s->ms = nm;
                s->ms_cap = nc;
            }
        }
        if (s->n <= s->ms_cap)
            s->ms[s->n - 1] = os_now_ms() - t0;
        s->dense += r && (r->dense == CAIRN_DENSE_ON || r->dense == CAIRN_DENSE_PARTIAL);
        size_t whole = 0, k = ev_found(r, q, &whole);
        if (fired) {
            s->fired_with++;
            s->complete += k == q->n_ev;
            s->strict += whole == q->n_ev;
            s->any_with += k > 0;
        }
        if (s->out) {
            int kk = fired ? (int)k : r ? would_have(db, q, s->budget, &whole) : -1;
            buf_printf(&line, "{\"conv\":");
            buf_add_json_str(&line, c->name ? c->name : "", c->name ? strlen(c->name) : 0);
            buf_printf(&line, ",\"id\":");
            buf_add_json_str(&line, q->id ? q->id : "", q->id ? strlen(q->id) : 0);
            buf_printf(&line, ",\"category\":");
            buf_add_json_str(&line, q->category ? q->category : "",
                             q->category ? strlen(q->category) : 0);
            /* ev_found, ev_whole: of what it injected, or would have had
             * the gate passed (-1: no recall ran) */
            buf_printf(&line, ",\"n_ev\":%zu,\"ev_found\":%d,\"ev_whole\":%d", q->n_ev, kk,
                       kk < 0 ? -1 : (int)whole);
            put_ask(&line, "with", fired, why, r);
        }
        cairn_recall_free(r);
        r = NULL;
        /* without: forget the evidence's sessions, ask, add them back */
        for (size_t e = 0; e < q->n_ev; e++)
            cairn_forget(db, q->ev[e].session);      /* NOTFOUND for repeats */
        fired = ask(db, q, s->budget, &r, &why);
        if (fired >= 0)
            s->fired_without += (size_t)fired;
        else
            s->failed++;
        if (s->out) {
            put_ask(&line, "without", fired, why, r);
            buf_printf(&line, "}\n");
            if (!line.err)
                fputs(line.p, s->out);
        }
        buf_release(&line);
        cairn_recall_free(r);
        for (size_t e = 0; e < q->n_ev; e++) {
            if (eval_conv_add(db, c, q->ev[e].session, "eval inject: re-add", NULL)) {
                rc = 1;
                goto out;
            }
        }
    }
out:
    cairn_close(db);
    return rc;
}

static double pct(size_t a, size_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0;
}

int eval_inject(int argc, char **argv)
{
    struct inj s;
    struct eval_counts k;
    const char *dataset = NULL, *budget = "1000", *out_path = NULL;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t n_files = 0;
    int rc = 1;
    memset(&s, 0, sizeof s);
    memset(&k, 0, sizeof k);
    if (!files)
        return 1;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--budget", &budget))
            continue;
        if (cli_opt(argc, argv, &i, "--out", &out_path))
            continue;
        if (!strcmp(argv[i], "--dev")) {
            s.dev = 1;
            i++;
            continue;
        }
        if (argv[i][0] == '-') {
            cli_error("eval inject: unknown option %s", argv[i]);
            rc = 2;
            goto out;
        }
        if (!dataset)
            dataset = argv[i];
        else
            files[n_files++] = argv[i];
        i++;
    }
    s.budget = atoi(budget);
    if (!dataset || !n_files || s.budget < 100) {
        cli_error("usage: cairn eval inject DATASET FILE... [--budget N (>= 100)] [--dev] "
                  "[--out FILE.jsonl]");
        rc = 2;
        goto out;
    }
    if (out_path && !(s.out = fopen(out_path, "w"))) {
        cli_error("eval inject: cannot write %s", out_path);
        goto out;
    }
    int lrc = eval_load(dataset, files, n_files, &k, inject_conv, &s);
    if (lrc == 2) {
        cli_error("eval inject: unknown dataset %s, or madial without its two files", dataset);
        rc = 2;
        goto out;
    }
    if (lrc)
        goto out;
    printf("## %s: automatic injection (%d tokens)\n\n", dataset, s.budget);
    printf("Ranking policy %s. Data: %s\n\n", cairn_policy_hash(), s.dev ?
           "a **development set** (the ranking and the gate were tuned on it)." :
           "not marked as a development set (`--dev`).");
    printf("| questions | fires with memory | fires without memory | all evidence when it "
           "fires | strict: all of it whole | any evidence when it fires |\n"
           "|---:|---:|---:|---:|---:|---:|\n");
    printf("| %zu | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.1f%% |\n\n", s.n,
           pct(s.fired_with, s.n), pct(s.fired_without, s.n), pct(s.complete, s.fired_with),
           pct(s.strict, s.fired_with), pct(s.any_with, s.fired_with));
    printf("Each question goes through the prompt hook's own decision (its skip rules, the "
           "budget less the fence, the gate). \"Without memory\" asks each question against "
           "its store with the sessions holding its evidence forgotten.%s\n",
           s.failed ? " Some recalls failed." : "");
    if (s.n && s.n <= s.ms_cap) {
        /* in process, the store and model loaded: what a hook adds to
         * its process start, open and model load */
        qsort(s.ms, s.n, sizeof *s.ms, cmp_ms);
        printf("Recall as the hook asks it (%s, %zu of %zu with vectors): p50 %.1f ms, "
               "p95 %.1f ms in process.\n", inject_method() == CAIRN_METHOD_KEYWORD ? "keyword" :
               "hybrid", s.dense, s.n, s.ms[s.n / 2], s.ms[(s.n * 95 + 99) / 100 - 1]);
    }
    rc = s.failed ? 1 : 0;
out:
    if (s.out && fclose(s.out) && !rc) {
        cli_error("eval inject: cannot write %s", out_path);
        rc = 1;
    }
    free(files);
    free(s.ms);
    return rc;
}
