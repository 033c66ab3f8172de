/*
 * compare.c: `cairn eval compare A.jsonl B.jsonl [--budget N]
 * [--method M | --method MA,MB] [--strict | --spans]`. Pairs the questions of two
 * per-question runs by (dataset, conversation, question id) and, per
 * category and over all categories not reported apart, counts where B
 * recalls all evidence and A does not (better), the reverse (worse) and
 * the rest (unchanged), with the exact two-sided sign test over better +
 * worse. --strict counts a question recalled only when all its evidence
 * came back whole (the "strict" field), not as excerpts; --spans when all
 * its answer spans are in the packed text (the "spans" field), over the
 * questions that have spans (the others are left out of the pairing).
 *
 * By default the method is each file's first one and the budget the
 * largest of A's first line; "--method raw-bm25,cairn" compares two
 * methods (A's, B's), which also works on one file given twice.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"
#include "util/buf.h"

struct rec {
    char *key;                  /* dataset \x1f conversation \x1f question id */
    char *category;
    int apart, hit;
};

struct recs {
    struct rec *v;
    size_t n;
};

struct tally {
    const char *name;
    int apart;
    size_t n, a, b, better, worse;
};

double eval_sign_test(size_t better, size_t worse)
{
    size_t n = better + worse, k = better < worse ? better : worse;
    double s = 0;
    if (n == 0)
        return 1.0;
    if (n <= 1000) {
        /* C(n,0) / 2^n is exact (ldexp) and each step multiplies by a
         * ratio, so small cases come out exact to print precision:
         * 9 better, 1 worse gives 2 * 11 / 1024 = 0.021484375 */
        double t = ldexp(1.0, -(int)n);
        for (size_t i = 0; i <= k; i++) {
            s += t;
            t = t * (double)(n - i) / (double)(i + 1);
        }
        s *= 2.0;
    } else {
        /* log P(X = i) = lgamma(n+1) - lgamma(i+1) - lgamma(n-i+1) - n log 2,
         * summed in the log domain so large n does not underflow */
        double ln = lgamma((double)n + 1.0) - (double)n * log(2.0), mx = -INFINITY;
        for (size_t i = 0; i <= k; i++) {
            double lt = ln - lgamma((double)i + 1.0) - lgamma((double)(n - i) + 1.0);
            if (lt > mx) {
                s = s * exp(mx - lt) + 1.0;
                mx = lt;
            } else {
                s += exp(lt - mx);
            }
        }
        s = 2.0 * exp(mx + log(s));
    }
    return s > 1.0 ? 1.0 : s;
}

static void recs_free(struct recs *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->v[i].key);
        free(r->v[i].category);
    }
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

static int cmp_rec(const void *a, const void *b)
{
    return strcmp(((const struct rec *)a)->key, ((const struct rec *)b)->key);
}

/* The largest budget key of a method's runs object, or -1. */
static long max_budget(const cJSON *m)
{
    const cJSON *b;
    long best = -1;
    cJSON_ArrayForEach(b, m) {
        char *end;
        long v = strtol(b->string, &end, 10);
        if (!*end && v > best)
            best = v;
    }
    return best;
}

static int load(const char *path, const char *method, const char *field, long *budget,
                struct recs *out)
{
    size_t len, lineno = 0, cap = 0;
    char *text = cli_read_file(path, EVAL_FILE_CAP, &len);
    char *p, *end;
    int rc = 1;
    if (!text)
        return 1;
    for (size_t i = 0; i < len; i++)
        cap += text[i] == '\n';
    out->v = calloc(cap + 1, sizeof *out->v);
    if (!out->v) {
        cli_error("eval compare: out of memory");
        goto out;
    }
    for (p = text, end = text + len; p < end;) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        lineno++;
        *e = '\0';
        char *s = p;
        p = e + 1;
        while (*s == ' ' || *s == '\t' || *s == '\r')
            s++;
        if (!*s)
            continue;
        cJSON *o = cJSON_Parse(s);
        const cJSON *ds = cJSON_GetObjectItemCaseSensitive(o, "dataset");
        const cJSON *cv = cJSON_GetObjectItemCaseSensitive(o, "conversation");
        const cJSON *qi = cJSON_GetObjectItemCaseSensitive(o, "question_id");
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(o, "category");
        const cJSON *ap = cJSON_GetObjectItemCaseSensitive(o, "apart");
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(o, "runs");
        if (!cJSON_IsString(ds) || !cJSON_IsString(cv) || !cJSON_IsString(qi) ||
            !cJSON_IsString(ct) || !cJSON_IsObject(runs) || !runs->child) {
            cli_error("eval compare: %s:%zu: not a line of `cairn eval --out` (needs dataset, "
                      "conversation, question_id, category and runs)", path, lineno);
            cJSON_Delete(o);
            goto out;
        }
        const cJSON *m = method ? cJSON_GetObjectItemCaseSensitive(runs, method) : runs->child;
        if (!cJSON_IsObject(m)) {
            cli_error("eval compare: %s:%zu: has no runs for method %s", path, lineno,
                      method ? method : "(first)");
            cJSON_Delete(o);
            goto out;
        }
        if (*budget < 0)
            *budget = max_budget(m);
        char bkey[32];
        snprintf(bkey, sizeof bkey, "%ld", *budget);
        const cJSON *cell = cJSON_GetObjectItemCaseSensitive(m, bkey);
        const cJSON *all = cJSON_GetObjectItemCaseSensitive(cell, field);
        if (!cJSON_IsBool(all) && !strcmp(field, "spans") && cJSON_IsObject(cell)) {
            cJSON_Delete(o);            /* a question without spans */
            continue;
        }
        if (!cJSON_IsBool(all)) {
            if (strcmp(field, "all"))
                cli_error("eval compare: %s:%zu: no \"%s\" result for method %s at budget "
                          "%ld (a run from before --strict?)", path, lineno, field,
                          method ? method : "(first)", *budget);
            else
                cli_error("eval compare: %s:%zu: no result for method %s at budget %ld", path,
                          lineno, method ? method : "(first)", *budget);
            cJSON_Delete(o);
            goto out;
        }
        struct buf k = BUF_INIT;
        buf_printf(&k, "%s\x1f%s\x1f%s", ds->valuestring, cv->valuestring, qi->valuestring);
        struct rec *r = &out->v[out->n];
        r->key = buf_detach(&k, NULL);
        r->category = strdup(ct->valuestring);
        r->apart = cJSON_IsTrue(ap);
        r->hit = cJSON_IsTrue(all);
        cJSON_Delete(o);
        out->n++;
        if (!r->key || !r->category) {
            cli_error("eval compare: out of memory");
            goto out;
        }
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_rec);
    for (size_t i = 1; i < out->n; i++) {
        if (!strcmp(out->v[i].key, out->v[i - 1].key)) {
            char *q = strrchr(out->v[i].key, '\x1f');
            cli_error("eval compare: %s: question %s appears twice", path, q ? q + 1 : "?");
            goto out;
        }
    }
    if (!out->n) {
        cli_error("eval compare: %s holds no results", path);
        goto out;
    }
    rc = 0;
out:
    free(text);
    return rc;
}

static void tally_add(struct tally *t, int a, int b)
{
    t->n++;
    t->a += a;
    t->b += b;
    t->better += !a && b;
    t->worse += a && !b;
}

static void row(const struct tally *t, const char *label)
{
    double n = t->n ? (double)t->n : 1.0;
    printf("| %s | %zu | %.1f%% | %.1f%% | %zu | %zu | %zu | %.9g |\n", label, t->n,
           100.0 * (double)t->a / n, 100.0 * (double)t->b / n, t->better, t->worse,
           t->n - t->better - t->worse, eval_sign_test(t->better, t->worse));
}

static int cmp_tally(const void *a, const void *b)
{
    const struct tally *x = a, *y = b;
    if (x->apart != y->apart)
        return x->apart - y->apart;
    return strcmp(x->name, y->name);
}

int eval_compare(int argc, char **argv)
{
    const char *files[2] = { NULL, NULL }, *budget_s = NULL, *method_s = NULL;
    char *ma = NULL, *mb = NULL;
    long budget_a = -1, budget_b;
    struct recs A = { NULL, 0 }, B = { NULL, 0 };
    struct tally *cats = NULL, total = { "all", 0, 0, 0, 0, 0, 0 };
    size_t n_cats = 0, n_files = 0, paired = 0, only_a = 0, only_b;
    int rc = 2;
    const char *field = "all";
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--budget", &budget_s) ||
            cli_opt(argc, argv, &i, "--method", &method_s))
            continue;
        if (!strcmp(argv[i], "--strict") || !strcmp(argv[i], "--spans")) {
            field = argv[i] + 2;
            i++;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("eval compare: unknown option %s", argv[i]);
            return 2;
        }
        if (n_files == 2) {
            cli_error("eval compare: two files, A and B");
            return 2;
        }
        files[n_files++] = argv[i++];
    }
    if (n_files != 2) {
        cli_error("usage: cairn eval compare A.jsonl B.jsonl [--budget N] [--method M|MA,MB] "
                  "[--strict | --spans]");
        return 2;
    }
    if (budget_s) {
        char *end;
        budget_a = strtol(budget_s, &end, 10);
        if (*end || budget_a < 1) {
            cli_error("eval compare: --budget takes a number of tokens");
            return 2;
        }
    }
    if (method_s) {
        const char *comma = strchr(method_s, ',');
        ma = comma ? strndup(method_s, (size_t)(comma - method_s)) : strdup(method_s);
        mb = strdup(comma ? comma + 1 : method_s);
        if (!ma || !mb || !*ma || !*mb || strchr(mb, ',')) {
            cli_error("eval compare: --method takes M or MA,MB");
            goto out;
        }
    }
    rc = 1;
    if (load(files[0], ma, field, &budget_a, &A))
        goto out;
    budget_b = budget_a;
    if (load(files[1], mb, field, &budget_b, &B))
        goto out;
    cats = calloc(A.n, sizeof *cats);
    if (!cats) {
        cli_error("eval compare: out of memory");
        goto out;
    }
    for (size_t i = 0; i < A.n; i++) {
        struct rec key = { A.v[i].key, NULL, 0, 0 };
        struct rec *b = bsearch(&key, B.v, B.n, sizeof *B.v, cmp_rec);
        if (!b) {
            only_a++;
            continue;
        }
        paired++;
        size_t c = 0;
        while (c < n_cats && (strcmp(cats[c].name, A.v[i].category) ||
                              cats[c].apart != A.v[i].apart))
            c++;
        if (c == n_cats) {
            cats[c].name = A.v[i].category;
            cats[c].apart = A.v[i].apart;
            n_cats++;
        }
        tally_add(&cats[c], A.v[i].hit, b->hit);
        if (!A.v[i].apart)
            tally_add(&total, A.v[i].hit, b->hit);
    }
    only_b = B.n - paired;
    if (!paired) {
        cli_error("eval compare: no question is in both files");
        goto out;
    }
    qsort(cats, n_cats, sizeof *cats, cmp_tally);
    printf("A: %s (method %s), B: %s (method %s), budget %ld. %zu questions paired, %zu only "
           "in A, %zu only in B.\nbetter: B has %s and A not; worse: the reverse; "
           "p: exact two-sided sign test over better + worse.\n\n", files[0], ma ? ma : "first",
           files[1], mb ? mb : "first", budget_a, paired, only_a, only_b,
           !strcmp(field, "strict") ? "all evidence packed whole (strict: no evidence turn only "
           "as an excerpt)" : !strcmp(field, "spans") ? "every answer span in the packed text "
           "(questions without spans left out)" : "all evidence");
    printf("| category | n | A | B | better | worse | unchanged | p |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    int total_done = 0;
    for (size_t c = 0; c < n_cats; c++) {
        if (cats[c].apart && !total_done) {
            row(&total, "**all**");
            total_done = 1;
        }
        if (cats[c].apart) {
            struct buf l = BUF_INIT;
            buf_printf(&l, "%s (apart)", cats[c].name);
            row(&cats[c], l.p);
            buf_release(&l);
        } else {
            row(&cats[c], cats[c].name);
        }
    }
    if (!total_done)
        row(&total, "**all**");
    rc = 0;
out:
    free(ma);
    free(mb);
    free(cats);
    recs_free(&A);
    recs_free(&B);
    return rc;
}
