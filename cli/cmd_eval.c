/*
 * cmd_eval.c: `cairn eval`, the evidence-recall harness (docs/EVAL.md).
 *
 *   cairn eval DATASET FILE... [--budgets 1000,2000,4000,8000]
 *       [--method cairn,raw-bm25] [--out RUN.jsonl] [--md TABLE.md]
 *       [--svg CHART.svg] [--limit N] [--lean] [--quiet] [--label NAME] [--dev]
 *       [--min-rel-score X] [--explain]
 *   cairn eval compare A.jsonl B.jsonl [--budget N] [--method M|MA,MB] [--strict|--spans]
 *   cairn eval vault VAULT_DIR QUERIES.jsonl [--budgets 1000] [--out RUN.jsonl] [--dev]
 *
 * DATASET is locomo (locomo10.json files), beam (chat folders),
 * longmemeval (S, M or oracle files), madial (MEMORY DIALOGUE) or
 * sessions (folders of sessions.jsonl + questions.jsonl, docs/EVAL.md). Each
 * conversation or haystack goes into its own in-memory store; the work is
 * in cli/eval/. The Markdown report goes to stdout, progress to stderr.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval/eval.h"

static const char usage_text[] =
    "usage: cairn eval DATASET FILE... [--budgets 1000,2000,4000,8000]\n"
    "           [--method cairn,raw-bm25] [--out RUN.jsonl] [--md TABLE.md]\n"
    "           [--svg CHART.svg] [--limit N] [--lean] [--quiet] [--label NAME] [--dev]\n"
    "           [--min-rel-score X] [--explain]\n"
    "       cairn eval compare A.jsonl B.jsonl [--budget N] [--method M|MA,MB] [--strict|--spans]\n"
    "       cairn eval inject DATASET FILE... [--budget N] [--dev] [--out Q.jsonl]\n"
    "                                 the prompt hook (Q.jsonl: one line a question)\n"
    "       cairn eval vault VAULT_DIR QUERIES.jsonl [--budgets 1000] [--out RUN.jsonl] [--dev]\n"
    "                                 notes of a Markdown vault put to the prompt hook\n"
    "\n"
    "DATASET and FILE...:\n"
    "  locomo FILE...            locomo10.json (a list of samples)\n"
    "  beam DIR...               BEAM chat folders (chat.json + probing_questions.json)\n"
    "  longmemeval FILE...       LongMemEval S, M or oracle JSON\n"
    "  madial MEMORY DIALOGUE    MADial-Bench memory archive and dialogue file (JSONL)\n"
    "  sessions DIR...           your own: sessions.jsonl + questions.jsonl per folder\n"
    "methods: cairn, raw-bm25, keyword, no-time\n"
    "--limit N scores at most N questions. --lean leaves question text and retrieved\n"
    "ids out of --out. --label names the run in the report (default: DATASET).\n"
    "--dev says in the report that the data is a development set (the ranking was\n"
    "tuned on it). --min-rel-score X gives recall the relative score cut the MCP\n"
    "server uses (units under X times the best unit's score get no budget).\n"
    "--explain: where each evidence turn's unit ranks in the whole ranking, per\n"
    "question and method (\"ranks\" in --out) and, in the report, the missed\n"
    "evidence by rank: packing (ranked near the top) or ranking (deep or unmatched).\n";

static const struct eval_method known_methods[] = {
    { "cairn", CAIRN_METHOD_DEFAULT },
    { "raw-bm25", CAIRN_METHOD_RAW_BM25 },
    { "keyword", CAIRN_METHOD_KEYWORD },
    { "no-time", CAIRN_METHOD_NO_TIME },
};

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int parse_budgets(const char *s, struct eval_run *r)
{
    r->n_budgets = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || (*end && *end != ',') || v < 50 || v > 1000000) {
            cli_error("eval: --budgets takes numbers of tokens from 50 to 1000000, "
                      "comma-separated");
            return -1;
        }
        int dup = 0;
        for (size_t i = 0; i < r->n_budgets; i++)
            dup |= r->budgets[i] == (int)v;
        if (!dup) {
            if (r->n_budgets == EVAL_MAX_BUDGETS) {
                cli_error("eval: at most %d budgets", EVAL_MAX_BUDGETS);
                return -1;
            }
            r->budgets[r->n_budgets++] = (int)v;
        }
        s = *end ? end + 1 : end;
    }
    if (!r->n_budgets) {
        cli_error("eval: --budgets is empty");
        return -1;
    }
    qsort(r->budgets, r->n_budgets, sizeof r->budgets[0], cmp_int);
    return 0;
}

static int parse_methods(const char *s, struct eval_run *r)
{
    r->n_methods = 0;
    while (*s) {
        const char *e = strchr(s, ',');
        size_t len = e ? (size_t)(e - s) : strlen(s), k;
        for (k = 0; k < sizeof known_methods / sizeof known_methods[0]; k++)
            if (strlen(known_methods[k].name) == len && !strncmp(known_methods[k].name, s, len))
                break;
        if (k == sizeof known_methods / sizeof known_methods[0]) {
            cli_error("eval: unknown method %.*s (cairn, raw-bm25, keyword, no-time)", (int)len, s);
            return -1;
        }
        int dup = 0;
        for (size_t i = 0; i < r->n_methods; i++)
            dup |= r->methods[i].method == known_methods[k].method;
        if (!dup)
            r->methods[r->n_methods++] = known_methods[k];
        s = e ? e + 1 : s + len;
    }
    if (!r->n_methods) {
        cli_error("eval: --method is empty");
        return -1;
    }
    return 0;
}

static int write_md(const struct eval_run *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("eval: cannot write %s", path);
        return 1;
    }
    eval_report_md(r, f);
    if (fclose(f)) {
        cli_error("eval: cannot write %s", path);
        return 1;
    }
    return 0;
}

int cmd_eval(int argc, char **argv, struct cli_ctx *ctx)
{
    struct eval_run r;
    const char *budgets = "1000,2000,4000,8000", *methods = "cairn,raw-bm25";
    const char *out = NULL, *md = NULL, *svg = NULL, *limit = NULL, *dataset = NULL;
    const char *label = NULL, *min_rel = NULL;
    const char **files = NULL;
    size_t n_files = 0;
    int rc = 2;
    (void)ctx;
    if (argc >= 2 && !strcmp(argv[1], "compare"))
        return eval_compare(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "inject"))
        return eval_inject(argc - 1, argv + 1);
    if (argc >= 2 && !strcmp(argv[1], "vault"))
        return eval_vault(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage_text, stdout);
        return 0;
    }
    memset(&r, 0, sizeof r);
    files = calloc((size_t)argc, sizeof *files);
    if (!files) {
        cli_error("eval: out of memory");
        return 1;
    }
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--budgets", &budgets) ||
            cli_opt(argc, argv, &i, "--method", &methods) ||
            cli_opt(argc, argv, &i, "--out", &out) ||
            cli_opt(argc, argv, &i, "--md", &md) ||
            cli_opt(argc, argv, &i, "--svg", &svg) ||
            cli_opt(argc, argv, &i, "--limit", &limit) ||
            cli_opt(argc, argv, &i, "--label", &label) ||
            cli_opt(argc, argv, &i, "--min-rel-score", &min_rel))
            continue;
        if (!strcmp(argv[i], "--quiet")) {
            r.quiet = 1;
        } else if (!strcmp(argv[i], "--lean")) {
            r.lean = 1;
        } else if (!strcmp(argv[i], "--dev")) {
            r.dev = 1;
        } else if (!strcmp(argv[i], "--explain")) {
            r.explain = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("eval: unknown option %s", argv[i]);
            goto out;
        } else if (!dataset) {
            dataset = argv[i];
        } else {
            files[n_files++] = argv[i];
        }
        i++;
    }
    if (!dataset || !n_files) {
        fputs(usage_text, stderr);
        goto out;
    }
    if (strcmp(dataset, "locomo") && strcmp(dataset, "beam") && strcmp(dataset, "longmemeval") &&
        strcmp(dataset, "madial") && strcmp(dataset, "sessions")) {
        cli_error("eval: unknown dataset %s (locomo, beam, longmemeval, madial, sessions)",
                  dataset);
        goto out;
    }
    if (!strcmp(dataset, "madial") && n_files != 2) {
        cli_error("eval: madial takes two files: the memory archive, then the dialogues");
        goto out;
    }
    if (parse_budgets(budgets, &r) || parse_methods(methods, &r))
        goto out;
    if (limit) {
        char *end;
        r.limit = strtol(limit, &end, 10);
        if (*end || r.limit < 1) {
            cli_error("eval: --limit takes a number of questions");
            goto out;
        }
    }
    if (min_rel) {
        char *end;
        r.min_rel_score = strtod(min_rel, &end);
        if (*end || !(r.min_rel_score >= 0 && r.min_rel_score <= 1)) {
            cli_error("eval: --min-rel-score takes a fraction from 0 to 1");
            goto out;
        }
    }
    r.dataset = dataset;
    r.label = label ? label : dataset;
    rc = 1;
    if (r.explain &&
        !(r.missed_by_rank = calloc(r.n_methods * r.n_budgets * 2, sizeof *r.missed_by_rank))) {
        cli_error("eval: out of memory");
        goto out;
    }
    if (out && !(r.out = fopen(out, "w"))) {
        cli_error("eval: cannot write %s", out);
        goto out;
    }
    int lrc = eval_load(dataset, files, n_files, &r.counts, eval_run_conv, &r);
    if (lrc && lrc != EVAL_STOP)
        goto out;
    if (r.out) {
        int bad = fclose(r.out);
        r.out = NULL;
        if (bad) {
            cli_error("eval: cannot write %s", out);
            goto out;
        }
    }
    if (!r.scored) {
        cli_error("eval: %s: no question with evidence to score", dataset);
        goto out;
    }
    eval_report_md(&r, stdout);
    if ((md && write_md(&r, md)) || (svg && eval_report_svg(&r, svg)))
        goto out;
    rc = 0;
out:
    if (r.out)
        fclose(r.out);
    eval_run_free(&r);
    free(files);
    return rc;
}
