/*
 * load_lme.c: LongMemEval (S, M and oracle files as published: a JSON
 * array of questions, each with its own haystack). One question = one
 * store. The file is streamed element by element (eval_json_array_stream)
 * because LongMemEval-M is gigabytes.
 *
 * Choices:
 *  - Sessions: id = haystack_session_ids[i] (a repeat within one haystack
 *    gets "~2", "~3"... so its turns are not merged away), dated by
 *    haystack_dates[i] ("2023/05/20 (Sat) 02:21"), source "longmemeval",
 *    project = question_id; message id = the turn's 0-based position.
 *  - "now" = question_date.
 *  - Evidence = the turns with has_answer=true inside the answer sessions
 *    (answer_session_ids). An answer session with no flagged turn falls
 *    back to all of its user turns (counted per session and per question).
 *    Answer session ids that name no haystack session are dropped and
 *    counted.
 *  - Abstention questions (ids ending "_abs") get category "abstention"
 *    and are reported apart.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"

struct lme_ctx {
    const char *path;
    struct eval_counts *k;
    eval_conv_fn fn;
    void *arg;
};

static const char *field_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int load_question(struct lme_ctx *x, const cJSON *root, size_t index, struct eval_conv *c)
{
    const char *qid = field_str(root, "question_id"), *qtype = field_str(root, "question_type");
    const char *qtext = field_str(root, "question"), *qdate = field_str(root, "question_date");
    const cJSON *hids = cJSON_GetObjectItemCaseSensitive(root, "haystack_session_ids");
    const cJSON *hdates = cJSON_GetObjectItemCaseSensitive(root, "haystack_dates");
    const cJSON *hsess = cJSON_GetObjectItemCaseSensitive(root, "haystack_sessions");
    const cJSON *ans = cJSON_GetObjectItemCaseSensitive(root, "answer_session_ids");
    const char *missing = !cJSON_IsObject(root) ? "an object" : !qid ? "question_id"
        : !qtype ? "question_type" : !qtext ? "question" : !qdate ? "question_date"
        : !cJSON_IsArray(hids) ? "haystack_session_ids" : !cJSON_IsArray(hdates) ? "haystack_dates"
        : !cJSON_IsArray(hsess) ? "haystack_sessions" : !cJSON_IsArray(ans) ? "answer_session_ids"
        : NULL;
    int64_t now;
    if (missing) {
        cli_error("longmemeval: %s: element %zu has no %s (is this a LongMemEval file?)",
                  x->path, index, missing);
        return 1;
    }
    size_t n = (size_t)cJSON_GetArraySize(hsess);
    if ((size_t)cJSON_GetArraySize(hids) != n || (size_t)cJSON_GetArraySize(hdates) != n) {
        cli_error("longmemeval: %s: %s: haystack_session_ids, haystack_dates and "
                  "haystack_sessions differ in length", x->path, qid);
        return 1;
    }
    if (eval_parse_date(qdate, &now)) {
        cli_error("longmemeval: %s: %s: question_date \"%s\" is not a date", x->path, qid, qdate);
        return 1;
    }
    c->name = eval_strdup(c, qid);
    c->msg_ids_unique = 0;
    const char **orig = eval_calloc(c, n, sizeof *orig);   /* id as written, per session */
    if (!orig)
        goto oom;
    size_t total_turns = 0;
    for (size_t i = 0; i < n; i++) {
        const cJSON *sid = cJSON_GetArrayItem(hids, (int)i);
        const cJSON *sd = cJSON_GetArrayItem(hdates, (int)i);
        const cJSON *turns = cJSON_GetArrayItem(hsess, (int)i);
        const cJSON *t;
        int64_t at;
        if (!cJSON_IsString(sid) || !cJSON_IsArray(turns)) {
            cli_error("longmemeval: %s: %s: haystack session %zu has no id or no turns list",
                      x->path, qid, i + 1);
            return 1;
        }
        if (!cJSON_IsString(sd) || eval_parse_date(sd->valuestring, &at)) {
            cli_error("longmemeval: %s: %s: haystack date %zu is not a date like "
                      "\"2023/05/20 (Sat) 02:21\"", x->path, qid, i + 1);
            return 1;
        }
        size_t nt = (size_t)cJSON_GetArraySize(turns), dup = 1;
        for (size_t j = 0; j < i; j++)
            dup += !strcmp(orig[j], sid->valuestring);
        orig[i] = sid->valuestring;
        struct cairn_session *s = eval_add_session(c);
        struct cairn_message *msgs = eval_calloc(c, nt, sizeof *msgs);
        if (!s || !msgs)
            goto oom;
        s->id = dup > 1 ? eval_printf(c, "%s~%zu", sid->valuestring, dup)
                        : eval_strdup(c, sid->valuestring);
        s->source = "longmemeval";
        s->project = c->name;
        s->started_at = at;
        s->messages = msgs;
        s->n_messages = nt;
        size_t ti = 0;
        cJSON_ArrayForEach(t, turns) {
            const char *role = field_str(t, "role"), *content = field_str(t, "content");
            if (!role || !content || (strcmp(role, "user") && strcmp(role, "assistant"))) {
                cli_error("longmemeval: %s: %s: session %s turn %zu needs role user|assistant "
                          "and content", x->path, qid, sid->valuestring, ti + 1);
                return 1;
            }
            msgs[ti].id = eval_printf(c, "%zu", ti);
            msgs[ti].role = !strcmp(role, "user") ? "user" : "assistant";
            msgs[ti].content = eval_strdup(c, content);
            msgs[ti].at = at;
            ti++;
        }
        total_turns += nt;
        x->k->sessions++;
        x->k->messages += nt;
    }
    x->k->questions++;
    struct eval_q *q = eval_add_question(c);
    if (!q || !(q->ev = eval_calloc(c, total_turns, sizeof *q->ev)))
        goto oom;
    size_t qlen = strlen(qid);
    q->apart = qlen >= 4 && !strcmp(qid + qlen - 4, "_abs");
    q->id = c->name;
    q->category = q->apart ? "abstention" : eval_strdup(c, qtype);
    q->question = eval_strdup(c, qtext);
    q->now = now;
    int fell_back = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, ans) {
        int found = 0;
        x->k->ev_ids++;
        for (size_t i = 0; cJSON_IsString(a) && i < n; i++) {
            if (strcmp(orig[i], a->valuestring))
                continue;
            const struct cairn_session *s = &c->sess[i];
            const cJSON *turns = cJSON_GetArrayItem(hsess, (int)i);
            size_t before = q->n_ev;
            found = 1;
            for (size_t ti = 0; ti < s->n_messages; ti++) {
                const cJSON *turn = cJSON_GetArrayItem(turns, (int)ti);
                const cJSON *ha = cJSON_GetObjectItemCaseSensitive(turn, "has_answer");
                if (cJSON_IsTrue(ha))
                    eval_q_add_ev(q, s->id, s->messages[ti].id);
            }
            if (q->n_ev == before) {
                x->k->fallback_sessions++;
                fell_back = 1;
                for (size_t ti = 0; ti < s->n_messages; ti++)
                    if (!strcmp(s->messages[ti].role, "user"))
                        eval_q_add_ev(q, s->id, s->messages[ti].id);
            }
        }
        if (!found)
            x->k->ev_unresolved++;
    }
    x->k->fallback_questions += fell_back;
    if (!q->n_ev) {
        x->k->q_no_evidence++;
        if (q->apart)
            x->k->q_no_evidence_apart++;
        c->n_qs--;
    }
    if (c->oom)
        goto oom;
    x->k->convs++;
    return 0;
oom:
    cli_error("longmemeval: out of memory");
    return 1;
}

static int on_elem(void *arg, const char *json, size_t len, size_t index)
{
    struct lme_ctx *x = arg;
    struct eval_conv c;
    int rc;
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) {
        cli_error("longmemeval: %s: element %zu is not valid JSON", x->path, index);
        return 1;
    }
    eval_conv_init(&c);
    rc = load_question(x, root, index, &c);
    cJSON_Delete(root);
    if (!rc && c.n_qs)
        rc = x->fn(x->arg, &c);
    eval_conv_free(&c);
    return rc;
}

int eval_load_longmemeval(const char *path, struct eval_counts *k, eval_conv_fn fn, void *arg)
{
    struct lme_ctx x = { path, k, fn, arg };
    return eval_json_array_stream("longmemeval", path, on_elem, &x);
}
