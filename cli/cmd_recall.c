/*
 * cmd_recall.c: `cairn recall QUESTION [--budget N] [--now DATE]
 * [--project P] [--session-exclude ID] [--json] [--explain] [--fast]`.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "util/buf.h"

/* A batch line longer than this is refused (a question is short). */
#define BATCH_MAX_LINE (1 << 20)
/* Budgets accepted, by --budget and by --batch's "budgets" alike. */
#define BUDGET_MIN 50
#define BUDGET_MAX 1000000
#define BUDGET_RULE "a number of tokens from 50 to 1000000"

static void print_json(const struct cairn_recall *r, const char *id)
{
    struct buf b = BUF_INIT;
    char ts[40];
    buf_addc(&b, '{');
    if (id) {
        buf_adds(&b, "\"id\":");
        buf_add_json_str(&b, id, strlen(id));
        buf_addc(&b, ',');
    }
    buf_adds(&b, "\"query\":");
    buf_add_json_str(&b, r->query, strlen(r->query));
    buf_printf(&b, ",\"budget\":%d,\"tokens\":%d,\"items\":[", r->budget, r->tokens);
    for (size_t i = 0; i < r->n_items; i++) {
        const struct cairn_recall_item *it = &r->items[i];
        buf_adds(&b, i ? ",{\"session\":" : "{\"session\":");
        buf_add_json_str(&b, it->session, strlen(it->session));
        buf_adds(&b, ",\"message\":");
        buf_add_json_str(&b, it->message, strlen(it->message));
        buf_printf(&b, ",\"role\":\"%s\",\"speaker\":", it->role);
        if (it->speaker)
            buf_add_json_str(&b, it->speaker, strlen(it->speaker));
        else
            buf_adds(&b, "null");
        cairn_format_time(it->at, 0, ts, sizeof ts);
        buf_printf(&b, ",\"at\":\"%s\",\"position\":%d,\"excerpt\":%s", ts, it->position,
                   it->excerpt ? "true" : "false");
        if (it->memory)     /* only then: output without memories stays as it was */
            buf_printf(&b, ",\"memory\":%lld,\"memory_type\":\"%s\",\"contradicts\":%s",
                       (long long)it->memory, it->memory_type, it->contradicts ? "true" : "false");
        if (it->note_path) {    /* only then, as memories */
            buf_adds(&b, ",\"vault\":");
            buf_add_json_str(&b, it->note_vault, strlen(it->note_vault));
            buf_adds(&b, ",\"path\":");
            buf_add_json_str(&b, it->note_path, strlen(it->note_path));
            buf_printf(&b, ",\"line\":%d,\"named\":%s", it->note_line,
                       it->note_named ? "true" : "false");
        }
        if (it->why) {
            buf_printf(&b, ",\"rank\":%d,\"score\":%.6f,\"why\":", it->rank + 1, it->score);
            buf_add_json_str(&b, it->why, strlen(it->why));
        }
        buf_addc(&b, '}');
    }
    buf_adds(&b, "],\"text\":");
    buf_add_json_str(&b, r->text, strlen(r->text));
    buf_adds(&b, "}\n");
    fwrite(b.p, 1, b.n, stdout);
    buf_release(&b);
}

/* How dense retrieval took part (enum cairn_dense), in words. */
static const char *dense_name(int dense)
{
    switch (dense) {
    case CAIRN_DENSE_ON:      return "keywords and vectors";
    case CAIRN_DENSE_PARTIAL: return "keywords, vectors for part of the store";
    default:                  return "keywords only";
    }
}

/* --explain in text output: after the text, why these items, one line
 * each, and what the question was read as. */
static void print_explain(const struct cairn_recall *r)
{
    char a[40], b[40];
    const char *gate = NULL;
    int inject = cairn_inject_gate(r, &gate);
    printf("\n--- explain: %zu item%s, %d of %d tokens; %s\n", r->n_items,
           cli_s((long long)r->n_items), r->tokens, r->budget, dense_name(r->dense));
    printf("match: the best turn holds %.0f%% of the question's weight (%.1f rare words)",
           r->match * 100, r->match_weight);
    if (r->dense != CAIRN_DENSE_OFF && r->dense != CAIRN_DENSE_NONE)
        printf(", best cosine %.3f", r->cosine);
    printf("\n");
    if (r->range_from != CAIRN_NO_TIME || r->range_to != CAIRN_NO_TIME) {
        cairn_format_time(r->range_from, 0, a, sizeof a);
        cairn_format_time(r->range_to, 0, b, sizeof b);
        printf("time: the question asks about %s .. %s%s\n", *a ? a : "-", *b ? b : "-",
               r->only_time ? " (only about that period)" : "");
    }
    printf("prompt hook: %s (%s)\n", inject ? "would add this" : "would add nothing", gate);
    for (size_t i = 0; i < r->n_items; i++) {
        const struct cairn_recall_item *it = &r->items[i];
        if (it->memory) {
            printf("memory #%lld %s: %s\n", (long long)it->memory, it->memory_type,
                   it->why ? it->why : "");
            continue;
        }
        if (it->note_path) {
            printf("note ");
            cli_print_line(it->note_path);
            printf(":%d: %s\n", it->note_line, it->why ? it->why : "");
            continue;
        }
        cli_print_line(it->session);
        printf(" #");
        cli_print_line(it->message);
        printf(" %s: %s\n", it->role, it->why ? it->why : "");
    }
}

/* 1 when no item matched the question: a store that fits the budget is
 * returned whole even then, every unit with a fused score of 0. */
static int only_filler(const struct cairn_recall *r)
{
    if (r->range_from != CAIRN_NO_TIME || r->range_to != CAIRN_NO_TIME)
        return 0;
    for (size_t i = 0; i < r->n_items; i++)
        if (r->items[i].score > 0)
            return 0;
    return 1;
}

/* No item: say so on stderr, with the likely reason (an empty store, a
 * --project that names no project, no vault for --source notes); exit 3. */
static int nothing_recalled(struct cairn *db, const char *project, int source)
{
    size_t all = 0, in_project = 0, vaults = 0;
    struct cairn_vault_info *v = NULL;
    if (!cairn_vault_list(db, &v, &vaults))
        cairn_vault_list_free(v, vaults);
    if (source == CAIRN_SOURCE_NOTES) {
        cli_error(vaults ? "recall: no note matches the question"
                         : "recall: no Markdown vault in this store (cairn vault add PATH)");
        return CLI_EMPTY;
    }
    cairn_sessions(db, NULL, 0, 1, cli_count_session, &all);
    if (project)
        cairn_sessions(db, project, 0, 1, cli_count_session, &in_project);
    if (!all && !vaults)
        cli_error("recall: the store holds no session yet (cairn add, cairn import)");
    else if (project && !in_project)
        cli_error("recall: no session in project \"%s\" (cairn sessions lists the projects)",
                  project);
    else
        cli_error("recall: nothing %smatches the question", project ? "in that project " : "");
    return CLI_EMPTY;
}

/* {"line", "id", "error"} for a request that gets no answer. */
static void batch_error(long lineno, const char *id, const char *err)
{
    struct buf e = BUF_INIT;
    buf_printf(&e, "{\"line\":%ld,\"id\":", lineno);
    buf_add_json_str(&e, id, strlen(id));
    buf_adds(&e, ",\"error\":");
    buf_add_json_str(&e, err, strlen(err));
    buf_adds(&e, "}\n");
    fwrite(e.p, 1, e.n, stdout);
    buf_release(&e);
}

/* One of "budgets": a whole number in the --budget range, checked before
 * any conversion to int (1e12 does not fit one). */
static int batch_budget(const cJSON *v, int *out)
{
    if (!cJSON_IsNumber(v))
        return -1;
    double d = v->valuedouble;
    if (!(d >= BUDGET_MIN && d <= BUDGET_MAX) || d != (double)(long)d)
        return -1;
    *out = (int)d;
    return 0;
}

/*
 * --batch: JSONL questions on stdin, {"id", "query", "now", "budgets":[..]
 * or "budget": N, "exclude_session", "project"}, one JSON line out per
 * question and budget, so an evaluation pays process start once. Other
 * fields are ignored, so a question file (with its evidence, spans...) can
 * be piped as it is. A bad line, or a
 * bad budget in it (the same rule as --budget), gets {"line", "id",
 * "error"} and the batch goes on; the exit status is then 1.
 */
static int run_batch(struct cairn *db, const struct cairn_recall_opts *base)
{
    struct buf line;
    int c, bad = 0;
    long lineno = 0;
    buf_init(&line, BATCH_MAX_LINE);
    for (;;) {
        buf_reset(&line);
        while ((c = getchar()) != EOF && c != '\n')
            buf_addc(&line, (char)c);
        if (c == EOF && line.n == 0 && !line.err)
            break;
        lineno++;
        if (line.err) {
            printf("{\"line\":%ld,\"error\":\"line too long\"}\n", lineno);
            bad++;
            while (c != EOF && c != '\n')
                c = getchar();
            if (c == EOF)
                break;
            continue;
        }
        if (line.n == 0)
            continue;
        cJSON *q = cJSON_ParseWithLength(line.p, line.n);
        const cJSON *id = q ? cJSON_GetObjectItemCaseSensitive(q, "id") : NULL;
        const cJSON *text = q ? cJSON_GetObjectItemCaseSensitive(q, "query") : NULL;
        const cJSON *now = q ? cJSON_GetObjectItemCaseSensitive(q, "now") : NULL;
        const cJSON *budgets = q ? cJSON_GetObjectItemCaseSensitive(q, "budgets") : NULL;
        /* "budget": N, as the output names it, is one budget */
        const cJSON *budget1 = q ? cJSON_GetObjectItemCaseSensitive(q, "budget") : NULL;
        const cJSON *ex = q ? cJSON_GetObjectItemCaseSensitive(q, "exclude_session") : NULL;
        const cJSON *proj = q ? cJSON_GetObjectItemCaseSensitive(q, "project") : NULL;
        char idbuf[64] = "";
        const char *ids = idbuf;
        if (cJSON_IsString(id))
            ids = id->valuestring;
        else if (cJSON_IsNumber(id))
            snprintf(idbuf, sizeof idbuf, "%.0f", id->valuedouble);
        struct cairn_recall_opts o = *base;
        const char *err = NULL;
        if (!q)
            err = "malformed JSON";
        else if (!cJSON_IsString(text))
            err = "\"query\" must be a string";
        else if (now && cJSON_IsString(now) && cairn_parse_time(now->valuestring, &o.now))
            err = "\"now\" is not an ISO 8601 date";
        else if (budgets && !cJSON_IsArray(budgets))
            err = "\"budgets\" must be a list of " BUDGET_RULE;
        else if (budget1 && budgets)
            err = "give \"budget\" or \"budgets\", not both";
        else if (budget1 && batch_budget(budget1, &o.budget))
            err = "\"budget\" is not " BUDGET_RULE;
        if (!err && cJSON_IsString(ex))
            o.exclude_session = ex->valuestring;
        if (!err && cJSON_IsString(proj))
            o.project = proj->valuestring;
        if (err) {
            batch_error(lineno, ids, err);
            bad++;
            cJSON_Delete(q);
            continue;
        }
        int nb = cJSON_IsArray(budgets) ? cJSON_GetArraySize(budgets) : 0;
        for (int k = 0; k < (nb ? nb : 1); k++) {
            struct cairn_recall *r = NULL;
            if (nb && batch_budget(cJSON_GetArrayItem(budgets, k), &o.budget)) {
                char msg[96];
                snprintf(msg, sizeof msg, "budget %d of the list is not " BUDGET_RULE, k + 1);
                batch_error(lineno, ids, msg);
                bad++;
                continue;
            }
            if (cairn_recall(db, text->valuestring, &o, &r) == CAIRN_OK) {
                print_json(r, ids);
            } else {
                batch_error(lineno, ids, cairn_errmsg(db));
                bad++;
            }
            cairn_recall_free(r);
        }
        cJSON_Delete(q);
        fflush(stdout);
    }
    buf_release(&line);
    return bad ? 1 : 0;
}

int cmd_recall(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    const char *budget = NULL, *now = NULL, *query = NULL, *method = NULL, *source = NULL;
    int json = 0, batch = 0, rc;
    struct cairn *db;
    struct cairn_recall *r = NULL;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--budget", &budget) ||
            cli_opt(argc, argv, &i, "--now", &now) ||
            cli_opt(argc, argv, &i, "--project", &o.project) ||
            cli_opt(argc, argv, &i, "--session-exclude", &o.exclude_session) ||
            cli_opt(argc, argv, &i, "--method", &method) ||
            cli_opt(argc, argv, &i, "--source", &source))
            continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
        } else if (!strcmp(argv[i], "--batch")) {
            batch = 1;
        } else if (!strcmp(argv[i], "--explain")) {
            o.explain = 1;
        } else if (!strcmp(argv[i], "--fast")) {
            o.flags |= CAIRN_RECALL_FAST;   /* as the prompt hook asks */
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("recall: unknown option %s", argv[i]);
            return 2;
        } else if (query) {
            cli_error("recall: one question at a time (quote it)");
            return 2;
        } else {
            query = argv[i];
        }
        i++;
    }
    if (!query && !batch) {
        cli_error("usage: cairn recall QUESTION [--budget N] [--now DATE] [--project P] "
                  "[--session-exclude ID] [--method M] [--source S] [--json] [--explain] [--fast] "
                  "| --batch");
        return 2;
    }
    if (budget) {
        char *end;
        long v = strtol(budget, &end, 10);
        if (end == budget || *end || v < BUDGET_MIN || v > BUDGET_MAX) {
            cli_error("recall: --budget takes " BUDGET_RULE);
            return 2;
        }
        o.budget = (int)v;
    }
    if (now && cairn_parse_time(now, &o.now)) {
        cli_error("recall: --now takes an ISO 8601 date, not %s", now);
        return 2;
    }
    if (method) {
        if (!strcmp(method, "cairn") || !strcmp(method, "default"))
            o.method = CAIRN_METHOD_DEFAULT;
        else if (!strcmp(method, "raw-bm25"))
            o.method = CAIRN_METHOD_RAW_BM25;
        else if (!strcmp(method, "keyword"))
            o.method = CAIRN_METHOD_KEYWORD;
        else if (!strcmp(method, "no-time"))
            o.method = CAIRN_METHOD_NO_TIME;
        else {
            cli_error("recall: unknown method %s (cairn, raw-bm25, keyword, no-time)", method);
            return 2;
        }
    }
    if (source) {
        if (!strcmp(source, "all"))
            o.source = CAIRN_SOURCE_ALL;
        else if (!strcmp(source, "conversations"))
            o.source = CAIRN_SOURCE_CONVERSATIONS;
        else if (!strcmp(source, "notes"))
            o.source = CAIRN_SOURCE_NOTES;
        else {
            cli_error("recall: unknown source %s (all, conversations, notes)", source);
            return 2;
        }
    }
    cli_one_shot_heap();    /* one process, one question or a batch */
    cli_heap_reserve(cli_db_path(ctx), !(o.flags & CAIRN_RECALL_FAST), 0);
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    if (batch) {
        rc = run_batch(db, &o);
        cairn_close(db);
        return rc;
    }
    rc = cairn_recall(db, query, &o, &r);
    if (!rc && r->note)
        fprintf(stderr, "cairn: note: %s\n", r->note);
    if (rc) {
        rc = cli_fail(db, "recall", rc);
        goto out;
    }
    if (json) {
        print_json(r, NULL);
    } else {
        fputs(r->text, stdout);
        if (*r->text && r->text[strlen(r->text) - 1] != '\n')
            fputc('\n', stdout);
        if (o.explain)
            print_explain(r);
    }
    if (r->n_items == 0)
        rc = nothing_recalled(db, o.project, o.source);
    else if (only_filler(r))
        cli_error("note: nothing matches the question; the whole store fits the budget, "
                  "so all of it is given");
out:
    cairn_recall_free(r);
    cairn_close(db);
    return rc;
}
