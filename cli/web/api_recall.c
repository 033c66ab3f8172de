/*
 * api_recall.c: the recall preview and the search of `cairn web`
 * (docs/WEB.md). The preview is cairn_recall with explain on: the exact
 * text a model would get, its token count, and why each item is there.
 * Search is the same recall, only what matched, shown message by message
 * with the session it belongs to; the page highlights the terms.
 */
#include <stdlib.h>
#include <string.h>

#include "web.h"
#include "../cli.h"

/* Bytes of a message shown in a search result. */
#define SEARCH_CUT 4096

static const struct { const char *name; int method; } methods[] = {
    { "cairn", CAIRN_METHOD_DEFAULT }, { "hybrid", CAIRN_METHOD_DEFAULT },
    { "keyword", CAIRN_METHOD_KEYWORD }, { "raw-bm25", CAIRN_METHOD_RAW_BM25 },
    { "no-time", CAIRN_METHOD_NO_TIME },
};

/* The question and the options shared by preview and search; 0, or the
 * answer is set. */
static int recall_args(const struct web_req *q, struct web_reply *r, const char **question,
                       struct cairn_recall_opts *o)
{
    const char *now = web_arg(q, r, "now", 64), *project = web_arg(q, r, "project", WEB_ARG_MAX);
    const char *method = web_arg(q, r, "method", 32);
    const char *exclude = web_arg(q, r, "exclude", WEB_ARG_MAX);
    *question = web_arg(q, r, "q", WEB_QUERY_MAX);
    if (r->status)
        return -1;
    if (!*question || !**question) {
        web_fail(r, 400, "q: the question is empty");
        return -1;
    }
    if (now && *now && cairn_parse_time(now, &o->now)) {
        web_fail(r, 400, "now is not a date (2024-03-01 or 2024-03-01T12:00)");
        return -1;
    }
    o->project = project && *project ? project : NULL;
    /* the session the question was asked in, as the prompt hook leaves it out */
    o->exclude_session = exclude && *exclude ? exclude : NULL;
    if (method && *method) {
        size_t i;
        for (i = 0; i < sizeof methods / sizeof methods[0]; i++)
            if (!strcmp(method, methods[i].name))
                break;
        if (i == sizeof methods / sizeof methods[0]) {
            web_fail(r, 400, "method is cairn, keyword, raw-bm25 or no-time");
            return -1;
        }
        o->method = methods[i].method;
    }
    return 0;
}

static const char *dense_name(int d)
{
    static const char *const names[] = { "off", "on", "partial", "none" };
    return (unsigned)d < 4 ? names[d] : "?";
}

static void item_json(struct buf *b, const struct cairn_recall_item *it)
{
    int first = 0;
    buf_adds(b, "{\"session\":");
    buf_add_json_str(b, it->session, strlen(it->session));
    cli_json_str_field(b, "message", it->message, &first);
    cli_json_str_field(b, "role", it->role, &first);
    cli_json_str_field(b, "speaker", it->speaker, &first);
    cli_json_time_field(b, "at", it->at, &first);
    buf_printf(b, ",\"position\":%d,\"excerpt\":%s,\"rank\":%d,\"score\":%.6f", it->position,
               it->excerpt ? "true" : "false", it->rank + 1, it->score);
    cli_json_str_field(b, "why", it->why, &first);
    buf_addc(b, '}');
}

void web_api_recall(const struct web_req *q, struct web_reply *r)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *res = NULL;
    const char *question, *why = "";
    o.budget = (int)web_arg_long(q, r, "budget", 4000, 50, 1000000);
    o.explain = 1;
    /* hook=1: the prompt hook's flags (only what matched; latency first on
     * a big store), so the gate below is the hook's verdict on this
     * question (its skip rules and never-twice list aside). */
    if (web_arg_long(q, r, "hook", 0, 0, 1))
        o.flags = CAIRN_RECALL_MATCHED_ONLY | CAIRN_RECALL_FAST;
    if (recall_args(q, r, &question, &o))
        return;
    int rc = cairn_recall(q->w->db, question, &o, &res);
    if (rc) {
        web_fail_rc(r, q->w->db, "recall", rc);
        return;
    }
    int gate = cairn_inject_gate(res, &why);
    struct buf *b = &r->body;
    int first = 0;
    buf_printf(b, "{\"budget\":%d,\"tokens\":%d,\"match\":%.3f,\"match_weight\":%.2f,"
               "\"cosine\":%.3f,\"dense\":\"%s\",\"only_time\":%s,\"gate\":%s,\"gate_why\":",
               res->budget, res->tokens, res->match, res->match_weight, res->cosine,
               dense_name(res->dense), res->only_time ? "true" : "false",
               gate ? "true" : "false");
    buf_add_json_str(b, why ? why : "", why ? strlen(why) : 0);
    cli_json_time_field(b, "range_from", res->range_from, &first);
    cli_json_time_field(b, "range_to", res->range_to, &first);
    cli_json_str_field(b, "note", res->note, &first);
    buf_adds(b, ",\"text\":");
    buf_add_json_str(b, res->text, strlen(res->text));
    buf_adds(b, ",\"items\":[");
    for (size_t i = 0; i < res->n_items; i++) {
        if (i)
            buf_addc(b, ',');
        item_json(b, &res->items[i]);
    }
    buf_adds(b, "]}\n");
    r->status = b->err ? 500 : 200;
    cairn_recall_free(res);
}

/* ---- search ---- */

struct hit { struct buf *b; size_t cut; };

static int hit_message(void *arg, const struct cairn_message_info *m)
{
    struct hit *h = arg;
    size_t n = m->content_len;
    if (n > h->cut) {
        n = h->cut;
        while (n > 0 && ((unsigned char)m->content[n] & 0xC0) == 0x80)
            n--;
    }
    buf_printf(h->b, ",\"content_len\":%zu,\"content\":", m->content_len);
    buf_add_json_str(h->b, m->content, n);
    return 0;
}

static int hit_session(void *arg, const struct cairn_session_info *s)
{
    struct hit *h = arg;
    int first = 0;
    cli_json_str_field(h->b, "title", s->title, &first);
    cli_json_str_field(h->b, "project", s->project, &first);
    cli_json_str_field(h->b, "source", s->source, &first);
    return 0;
}

/* Items best first: recall lists them in the text's order. */
static const struct cairn_recall *sorting;
static int by_rank(const void *a, const void *b)
{
    const struct cairn_recall_item *x = &sorting->items[*(const size_t *)a];
    const struct cairn_recall_item *y = &sorting->items[*(const size_t *)b];
    return x->rank != y->rank ? (x->rank > y->rank) - (x->rank < y->rank)
                              : (x->position > y->position) - (x->position < y->position);
}

/* 1 when the items before k in ord hold the same message (excerpts). */
static int seen(const struct cairn_recall *res, const size_t *ord, size_t k)
{
    const struct cairn_recall_item *it = &res->items[ord[k]];
    for (size_t j = 0; j < k; j++)
        if (res->items[ord[j]].position == it->position &&
            !strcmp(res->items[ord[j]].session, it->session))
            return 1;
    return 0;
}

void web_api_search(const struct web_req *q, struct web_reply *r)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *res = NULL;
    const char *question, *dl;
    long limit = web_arg_long(q, r, "limit", 30, 1, 100);
    dl = web_arg(q, r, "download", 8);
    /* Enough budget for `limit` messages of a few hundred tokens; only
     * what matched, never the rest of a small store. */
    o.budget = (int)(limit * 400);
    o.flags = CAIRN_RECALL_MATCHED_ONLY;
    if (recall_args(q, r, &question, &o))
        return;
    int rc = cairn_recall(q->w->db, question, &o, &res);
    if (rc) {
        web_fail_rc(r, q->w->db, "search", rc);
        return;
    }
    struct buf *b = &r->body;
    struct hit h = { b, SEARCH_CUT };
    size_t n = 0, *ord = calloc(res->n_items + 1, sizeof *ord);
    if (!ord) {
        cairn_recall_free(res);
        web_fail(r, 500, "out of memory");
        return;
    }
    for (size_t i = 0; i < res->n_items; i++)
        ord[i] = i;
    sorting = res;                          /* under the server's lock */
    qsort(ord, res->n_items, sizeof *ord, by_rank);
    buf_adds(b, "{\"q\":");
    buf_add_json_str(b, question, strlen(question));
    buf_adds(b, ",\"results\":[");
    for (size_t i = 0; i < res->n_items && n < (size_t)limit && !rc; i++) {
        const struct cairn_recall_item *it = &res->items[ord[i]];
        if (seen(res, ord, i))
            continue;
        buf_adds(b, n++ ? "," : "");
        item_json(b, it);
        buf_truncate(b, b->n - 1);         /* reopen the item for its text */
        rc = cairn_session_get(q->w->db, it->session, hit_session, &h);
        if (!rc)
            rc = cairn_messages(q->w->db, it->session, it->position, it->position,
                                hit_message, &h);
        buf_addc(b, '}');
    }
    cairn_recall_free(res);
    free(ord);
    if (rc) {
        web_fail_rc(r, q->w->db, "search", rc);
        return;
    }
    buf_adds(b, "]}\n");
    if (dl && !strcmp(dl, "1"))
        snprintf(r->filename, sizeof r->filename, "cairn-search.json");
    r->status = b->err ? 500 : 200;
}
