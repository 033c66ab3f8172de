/*
 * load_vault.c: `cairn eval vault VAULT_DIR QUERIES.jsonl [--budgets 1000]
 * [--out RUN.jsonl] [--dev]`: notes of a Markdown vault put to the prompt
 * hook (docs/VAULTS.md, docs/EVAL.md).
 *
 * The folder is indexed into an in-memory store (cairn_vault_add, the
 * settings `cairn add` ships). QUERIES.jsonl holds one JSON object a line:
 *   {"id":"q001","question":"...","pages":["rel/path.md",...],"fire":true}
 *   {"id":"n001","question":"...","fire":false}
 * A graded query (fire true) names the pages that answer it, relative to
 * the vault's root; any one of them in the injected text counts (a note's
 * header "[note PATH:LINE ...]" names its file). A query with fire false
 * must not fire.
 *
 * --store FILE keeps the store in FILE (its vault "eval" re-indexed on the
 * next run: unchanged files keep their sections and vectors), instead of
 * one in memory.
 *
 * Two methods, each budget:
 *   cairn       the prompt hook's own decision (inject_prompt: its skip
 *               rules, the budget less the fence, the gate);
 *   files-bm25  the baseline: plain BM25 over whole files, packed best
 *               first (cairn_recall with the raw method on notes), which
 *               fires whenever a file matches a word (no gate).
 * Reported, precision of fires first: fires on graded queries, false fires
 * (on fire:false), precision (graded fires over all fires), and recall of
 * the right page in the injected text over the graded queries; recall
 * time in process (p50, p95). Public API only (and the hook's function).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/os.h"

#define VQ_MAX      100000          /* queries in a file */
#define VQ_PAGES    64              /* pages of one query */
#define VQ_FILE_CAP ((size_t)64 << 20)

struct vq {
    char *id, *question;
    char *pages[VQ_PAGES];
    int   npages, fire;
};

struct vstat {
    size_t graded, negatives, fired_graded, fired_neg, hit;
    double *ms;
    size_t nms;
};

static void vq_free(struct vq *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(v[i].id);
        free(v[i].question);
        for (int k = 0; k < v[i].npages; k++)
            free(v[i].pages[k]);
    }
    free(v);
}

/* QUERIES.jsonl into *out; 0, or 1 after the reason (file and line). */
static int read_queries(const char *path, struct vq **out, size_t *n)
{
    size_t len, cap = 0, k = 0, line = 0;
    struct vq *v = NULL;
    char *text = cli_read_file(path, VQ_FILE_CAP, &len);
    if (!text)
        return 1;
    int rc = 1;
    for (char *p = text, *nl; p < text + len; p = nl + 1) {
        nl = memchr(p, '\n', (size_t)(text + len - p));
        if (!nl)
            nl = text + len;
        line++;
        size_t ln = (size_t)(nl - p);
        while (ln && (p[ln - 1] == '\r' || p[ln - 1] == ' '))
            ln--;
        if (!ln)
            continue;
        cJSON *j = json_parse(p, ln, NULL);
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(j, "id");
        const cJSON *qq = cJSON_GetObjectItemCaseSensitive(j, "question");
        const cJSON *fire = cJSON_GetObjectItemCaseSensitive(j, "fire");
        const cJSON *pages = cJSON_GetObjectItemCaseSensitive(j, "pages");
        if (!cJSON_IsObject(j) || !cJSON_IsString(id) || !cJSON_IsString(qq) ||
            !cJSON_IsBool(fire) || (pages && !cJSON_IsArray(pages)) ||
            (cJSON_IsTrue(fire) && cJSON_GetArraySize(pages) < 1)) {
            cli_error("eval vault: %s:%zu: want {\"id\":..., \"question\":..., \"fire\":true|false"
                      ", \"pages\":[...] (graded)}", path, line);
            cJSON_Delete(j);
            goto out;
        }
        if (k == cap) {
            size_t nc = cap ? cap * 2 : 64;
            struct vq *nv = nc <= VQ_MAX ? realloc(v, nc * sizeof *nv) : NULL;
            if (!nv) {
                cli_error("eval vault: %s: too many queries (at most %d)", path, VQ_MAX);
                cJSON_Delete(j);
                goto out;
            }
            v = nv;
            cap = nc;
        }
        struct vq *q = &v[k++];
        memset(q, 0, sizeof *q);
        q->id = strdup(id->valuestring);
        q->question = strdup(qq->valuestring);
        q->fire = cJSON_IsTrue(fire);
        const cJSON *pg;
        cJSON_ArrayForEach(pg, pages) {
            if (cJSON_IsString(pg) && q->npages < VQ_PAGES)
                q->pages[q->npages++] = strdup(pg->valuestring);
        }
        cJSON_Delete(j);
        if (!q->id || !q->question) {
            cli_error("eval vault: out of memory");
            goto out;
        }
    }
    rc = 0;
out:
    free(text);
    if (rc) {
        vq_free(v, k);
        return rc;
    }
    *out = v;
    *n = k;
    return 0;
}

/* The first of q's pages named by a note header in text ("[note PATH:"),
 * or NULL. */
static const char *page_in(const struct vq *q, const char *text)
{
    char key[4200];
    for (int k = 0; k < q->npages; k++) {
        snprintf(key, sizeof key, "[note %s:", q->pages[k]);
        if (strstr(text, key))
            return q->pages[k];
    }
    return NULL;
}

static int cmp_ms(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One query by one method at one budget: fired, the page found, why. */
static int ask(struct cairn *db, const struct vq *q, int files, int budget, int *fired,
               const char **page, const char **why, double *ms)
{
    struct cairn_recall *r = NULL;
    struct buf ctxt = BUF_INIT;
    double t0 = os_now_ms();
    int d;
    *page = NULL;
    if (files) {
        struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
        o.budget = budget;
        o.method = CAIRN_METHOD_RAW_BM25;
        o.source = CAIRN_SOURCE_NOTES;
        d = cairn_recall(db, q->question, &o, &r) ? -1 : r->n_items > 0;
        *why = d > 0 ? "a file matches a word" : d ? "recall failed" : "no file matches";
        if (d > 0)
            *page = page_in(q, r->text);
    } else {
        struct inject_req req = { budget, CAIRN_NO_TIME, NULL, NULL, NULL };
        d = inject_prompt(db, q->question, &req, &r, &ctxt, why);
        if (d > 0)
            *page = page_in(q, ctxt.p);
    }
    *ms = os_now_ms() - t0;
    *fired = d > 0;
    buf_release(&ctxt);
    cairn_recall_free(r);
    return d < 0 ? -1 : 0;
}

static void json_field(struct buf *b, const char *k, const char *v)
{
    buf_printf(b, ",\"%s\":", k);
    if (v)
        buf_add_json_str(b, v, strlen(v));
    else
        buf_adds(b, "null");
}

int eval_vault(int argc, char **argv)
{
    const char *budgets = "1000", *out = NULL, *dir = NULL, *qfile = NULL, *store = NULL;
    static const char *const methods[] = { "cairn", "files-bm25" };
    int budget[EVAL_MAX_BUDGETS], nb = 0, dev = 0, rc = 2;
    struct cairn *db = NULL;
    struct vq *qs = NULL;
    size_t nq = 0;
    FILE *fo = NULL;
    struct vstat st[2][EVAL_MAX_BUDGETS];
    memset(st, 0, sizeof st);
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--budgets", &budgets) ||
            cli_opt(argc, argv, &i, "--out", &out) ||
            cli_opt(argc, argv, &i, "--store", &store))
            continue;
        if (!strcmp(argv[i], "--dev")) {
            dev = 1;
        } else if (argv[i][0] == '-' || (dir && qfile)) {
            cli_error("usage: cairn eval vault VAULT_DIR QUERIES.jsonl [--budgets 1000] "
                      "[--out RUN.jsonl] [--store FILE] [--dev]");
            return 2;
        } else if (!dir) {
            dir = argv[i];
        } else {
            qfile = argv[i];
        }
        i++;
    }
    for (const char *p = budgets; p && *p && nb < EVAL_MAX_BUDGETS;) {
        char *e;
        long v = strtol(p, &e, 10);
        if (e == p || v < 100 || v > 1000000 || (*e && *e != ',')) {
            nb = 0;
            break;
        }
        budget[nb++] = (int)v;
        p = *e ? e + 1 : e;
    }
    if (!dir || !qfile || !nb) {
        cli_error("usage: cairn eval vault VAULT_DIR QUERIES.jsonl [--budgets 1000,...(>= 100)] "
                  "[--out RUN.jsonl] [--store FILE] [--dev]");
        return 2;
    }
    rc = 1;
    if (read_queries(qfile, &qs, &nq))
        goto out;
    if (cli_db_open(store ? store : ":memory:", 0, &db)) {
        cli_error("eval vault: cannot open a store: %s", cairn_errmsg(db));
        goto out;
    }
    struct cairn_vault_report rep;
    double t0 = os_now_ms();
    /* --store: a store kept between runs, where the vault "eval" is
     * re-indexed (its unchanged files and their vectors kept) */
    int again = store && cairn_vault_reindex(db, "eval", &rep) == CAIRN_OK;
    if (!again && cairn_vault_add(db, dir, "eval", NULL, &rep)) {
        cli_error("eval vault: %s: %s", dir, cairn_errmsg(db));
        goto out;
    }
    double index_ms = os_now_ms() - t0;
    if (out && !(fo = fopen(out, "w"))) {
        cli_error("eval vault: cannot write %s", out);
        goto out;
    }
    for (int m = 0; m < 2; m++)
        for (int b = 0; b < nb; b++)
            if (!(st[m][b].ms = calloc(nq ? nq : 1, sizeof(double)))) {
                cli_error("eval vault: out of memory");
                goto out;
            }
    struct buf line = BUF_INIT;
    for (size_t i = 0; i < nq; i++) {
        const struct vq *q = &qs[i];
        for (int m = 0; m < 2; m++) {
            for (int b = 0; b < nb; b++) {
                struct vstat *s = &st[m][b];
                int fired;
                const char *page, *why;
                double ms;
                if (ask(db, q, m, budget[b], &fired, &page, &why, &ms)) {
                    cli_error("eval vault: %s: recall failed: %s", q->id, cairn_errmsg(db));
                    buf_release(&line);
                    goto out;
                }
                s->ms[s->nms++] = ms;
                if (q->fire) {
                    s->graded++;
                    s->fired_graded += fired;
                    s->hit += page != NULL;
                } else {
                    s->negatives++;
                    s->fired_neg += fired;
                }
                if (!fo)
                    continue;
                buf_reset(&line);
                buf_adds(&line, "{\"id\":");
                buf_add_json_str(&line, q->id, strlen(q->id));
                buf_printf(&line, ",\"method\":\"%s\",\"budget\":%d,\"fire\":%s,\"fired\":%s,"
                           "\"hit\":%s", methods[m], budget[b], q->fire ? "true" : "false",
                           fired ? "true" : "false", page ? "true" : "false");
                json_field(&line, "page", page);
                json_field(&line, "why", why);
                json_field(&line, "question", q->question);
                buf_printf(&line, ",\"ms\":%.2f}\n", ms);
                fwrite(line.p, 1, line.n, fo);
            }
        }
    }
    buf_release(&line);

    printf("## vault: notes put to the prompt hook\n\n");
    printf("Ranking policy %s. Data: %s\n\n", cairn_policy_hash(), dev ?
           "a **development set** (the ranking and the gate were tuned on it)." :
           "not marked as a development set (`--dev`).");
    printf("%s: %lld notes indexed (%lld sections, %lld embedded%s) in %.0f ms; %lld binary, "
           "%lld over 4 MB, %lld excluded. %zu queries: %zu graded, %zu that must not fire.\n\n",
           dir, (long long)rep.added, (long long)rep.sections, (long long)rep.vectors,
           again ? "; the store's vault re-indexed" : "", index_ms, (long long)rep.binary,
           (long long)rep.too_big, (long long)rep.excluded, nq, st[0][0].graded,
           st[0][0].negatives);
    printf("| method | budget | precision of fires | false fires | fires on graded | right page "
           "injected | p50 ms | p95 ms |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int m = 0; m < 2; m++) {
        for (int b = 0; b < nb; b++) {
            struct vstat *s = &st[m][b];
            size_t fires = s->fired_graded + s->fired_neg;
            qsort(s->ms, s->nms, sizeof *s->ms, cmp_ms);
            double p50 = s->nms ? s->ms[s->nms / 2] : 0;
            double p95 = s->nms ? s->ms[(s->nms * 95 + 99) / 100 - 1] : 0;
            printf("| %s | %d | %.1f%% (%zu of %zu) | %zu of %zu | %zu of %zu | %.1f%% (%zu of "
                   "%zu) | %.1f | %.1f |\n", methods[m], budget[b],
                   fires ? 100.0 * (double)s->fired_graded / (double)fires : 0.0,
                   s->fired_graded, fires, s->fired_neg, s->negatives, s->fired_graded,
                   s->graded, s->graded ? 100.0 * (double)s->hit / (double)s->graded : 0.0,
                   s->hit, s->graded, p50, p95);
        }
    }
    printf("\n`cairn` is the prompt hook's own decision (its gate; the budget less the fence). "
           "`files-bm25` is plain BM25 over whole files packed best first, firing whenever a "
           "file matches. Precision: graded fires over all fires; right page: a graded query "
           "whose pages one stands in the injected text as a note's file. Times are recall "
           "in process, not a hook's whole process.\n");
    rc = 0;
out:
    if (fo && fclose(fo) && !rc) {
        cli_error("eval vault: cannot write %s", out);
        rc = 1;
    }
    for (int m = 0; m < 2; m++)
        for (int b = 0; b < nb; b++)
            free(st[m][b].ms);
    cairn_close(db);
    vq_free(qs, nq);
    return rc;
}
