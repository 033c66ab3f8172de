/*
 * load_beam.c: BEAM (arXiv 2510.27246), one folder = one chat = one store.
 *
 * A folder holds chat.json (a list of batches {batch_number, time_anchor,
 * turns: [[msg...]...]}) and probing_questions.json (ability -> list of
 * questions, evidence in `source_chat_ids`).
 *
 * Choices:
 *  - One session per batch, id "<folder>/B<batch_number>", source "beam",
 *    project "beam/<folder>". Messages keep their role; message id = the
 *    msg id as text; content verbatim (the "->-> 1,1" markers included).
 *  - Dates: in the published files the batch-level time_anchor is null and
 *    the anchor ("March-15-2024") sits on the batch's first user message,
 *    so a batch is dated by its own time_anchor when set, else by the
 *    first time_anchor among its messages, else by the previous batch's
 *    date (counted as undated when there is none). Every message of a
 *    batch gets that date.
 *  - "now" is the latest batch date: the probing questions are asked after
 *    the whole chat.
 *  - Evidence: every integer in source_chat_ids (a list, nested lists, or a
 *    dict of lists for knowledge_update / contradiction_resolution /
 *    temporal_reasoning), duplicates merged; ids not in the chat are
 *    dropped and counted. Abstention questions have none: counted, not
 *    scored ("abstention" is also reported apart should a file carry
 *    evidence for one).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"

struct msg_ref {
    long id;
    const char *session, *message;
};

struct beam_refs {
    struct msg_ref *v;
    size_t n;
};

static void count_ids(const cJSON *x, size_t *n)
{
    const cJSON *e;
    if (cJSON_IsArray(x) || cJSON_IsObject(x)) {
        cJSON_ArrayForEach(e, x)
            count_ids(e, n);
    } else if (x && !cJSON_IsNull(x)) {
        (*n)++;
    }
}

static void add_ids(const cJSON *x, struct eval_q *q, const struct beam_refs *refs,
                    struct eval_counts *k)
{
    const cJSON *e;
    if (cJSON_IsArray(x) || cJSON_IsObject(x)) {
        cJSON_ArrayForEach(e, x)
            add_ids(e, q, refs, k);
        return;
    }
    if (!x || cJSON_IsNull(x))
        return;
    k->ev_ids++;
    if (!cJSON_IsNumber(x) || x->valuedouble != (double)(long)x->valuedouble) {
        k->ev_unresolved++;
        return;
    }
    long id = (long)x->valuedouble;
    for (size_t i = 0; i < refs->n; i++) {
        if (refs->v[i].id == id) {
            eval_q_add_ev(q, refs->v[i].session, refs->v[i].message);
            return;
        }
    }
    k->ev_unresolved++;
}

static int load_chat(struct eval_conv *c, const char *dir, const char *name, const cJSON *chat,
                     struct beam_refs *refs, struct eval_counts *k, int64_t *now)
{
    const cJSON *b, *t, *m;
    size_t total = 0;
    int64_t prev = CAIRN_NO_TIME;
    if (!cJSON_IsArray(chat)) {
        cli_error("beam: %s/chat.json is not a list of batches", dir);
        return 1;
    }
    cJSON_ArrayForEach(b, chat) {
        cJSON_ArrayForEach(t, cJSON_GetObjectItemCaseSensitive(b, "turns"))
            total += cJSON_IsArray(t) ? (size_t)cJSON_GetArraySize(t) : 1;
    }
    refs->v = eval_calloc(c, total, sizeof *refs->v);
    if (!refs->v)
        return -1;
    size_t bi = 0;
    cJSON_ArrayForEach(b, chat) {
        const cJSON *turns = cJSON_GetObjectItemCaseSensitive(b, "turns");
        const cJSON *bn = cJSON_GetObjectItemCaseSensitive(b, "batch_number");
        const cJSON *ta = cJSON_GetObjectItemCaseSensitive(b, "time_anchor");
        const char *anchor = cJSON_IsString(ta) ? ta->valuestring : NULL;
        size_t nm = 0;
        bi++;
        if (!cJSON_IsObject(b) || !cJSON_IsArray(turns)) {
            cli_error("beam: %s/chat.json: batch %zu has no turns list", dir, bi);
            return 1;
        }
        cJSON_ArrayForEach(t, turns) {
            const cJSON *first = cJSON_IsArray(t) ? t->child : t;
            for (m = first; m; m = cJSON_IsArray(t) ? m->next : NULL) {
                const cJSON *mta = cJSON_GetObjectItemCaseSensitive(m, "time_anchor");
                if (!anchor && cJSON_IsString(mta))
                    anchor = mta->valuestring;
                nm++;
            }
        }
        int64_t at = prev;
        if (anchor && eval_parse_date(anchor, &at)) {
            cli_error("beam: %s/chat.json: batch %zu: time_anchor \"%s\" is not a date like "
                      "March-15-2024", dir, bi, anchor);
            return 1;
        }
        if (at == CAIRN_NO_TIME)
            k->undated++;
        prev = at;
        if (at != CAIRN_NO_TIME && (*now == CAIRN_NO_TIME || at > *now))
            *now = at;
        struct cairn_session *s = eval_add_session(c);
        struct cairn_message *msgs = eval_calloc(c, nm, sizeof *msgs);
        if (!s || !msgs)
            return -1;
        s->id = cJSON_IsNumber(bn) ? eval_printf(c, "%s/B%d", name, bn->valueint)
                                   : eval_printf(c, "%s/B%zu", name, bi);
        s->source = "beam";
        s->project = eval_printf(c, "beam/%s", name);
        s->started_at = at;
        s->messages = msgs;
        s->n_messages = nm;
        size_t mi = 0;
        cJSON_ArrayForEach(t, turns) {
            const cJSON *first = cJSON_IsArray(t) ? t->child : t;
            for (m = first; m; m = cJSON_IsArray(t) ? m->next : NULL) {
                const cJSON *role = cJSON_GetObjectItemCaseSensitive(m, "role");
                const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
                const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content");
                if (!cJSON_IsString(role) || !cJSON_IsNumber(id) || !cJSON_IsString(content)) {
                    cli_error("beam: %s/chat.json: batch %zu message %zu needs role, id and "
                              "content", dir, bi, mi + 1);
                    return 1;
                }
                if (strcmp(role->valuestring, "user") && strcmp(role->valuestring, "assistant")) {
                    cli_error("beam: %s/chat.json: message %d has role \"%s\" (user or "
                              "assistant expected)", dir, id->valueint, role->valuestring);
                    return 1;
                }
                struct cairn_message *msg = &msgs[mi++];
                msg->id = eval_printf(c, "%ld", (long)id->valuedouble);
                msg->role = eval_strdup(c, role->valuestring);
                msg->content = eval_strdup(c, content->valuestring);
                msg->at = at;
                refs->v[refs->n].id = (long)id->valuedouble;
                refs->v[refs->n].session = s->id;
                refs->v[refs->n].message = msg->id;
                refs->n++;
            }
        }
        k->sessions++;
        k->messages += nm;
    }
    return c->oom ? -1 : 0;
}

static int load_questions(struct eval_conv *c, const char *dir, const char *name,
                          const cJSON *probe, const struct beam_refs *refs,
                          struct eval_counts *k, int64_t now)
{
    const cJSON *ab, *qj;
    if (!cJSON_IsObject(probe)) {
        cli_error("beam: %s/probing_questions.json is not an object of ability -> questions",
                  dir);
        return 1;
    }
    cJSON_ArrayForEach(ab, probe) {
        size_t qi = 0;
        int apart = !strcmp(ab->string, "abstention");
        if (!cJSON_IsArray(ab)) {
            cli_error("beam: %s/probing_questions.json: \"%s\" is not a list of questions", dir,
                      ab->string);
            return 1;
        }
        cJSON_ArrayForEach(qj, ab) {
            const cJSON *qt = cJSON_GetObjectItemCaseSensitive(qj, "question");
            const cJSON *src = cJSON_GetObjectItemCaseSensitive(qj, "source_chat_ids");
            size_t n = 0;
            if (!cJSON_IsString(qt)) {
                cli_error("beam: %s/probing_questions.json: %s question %zu has no question "
                          "text", dir, ab->string, qi + 1);
                return 1;
            }
            k->questions++;
            struct eval_q *q = eval_add_question(c);
            if (!q)
                return -1;
            q->id = eval_printf(c, "%s/%s/%zu", name, ab->string, qi);
            q->category = eval_strdup(c, ab->string);
            q->question = eval_strdup(c, qt->valuestring);
            q->apart = apart;
            q->now = now;
            count_ids(src, &n);
            q->ev = eval_calloc(c, n, sizeof *q->ev);
            if (!q->ev)
                return -1;
            add_ids(src, q, refs, k);
            if (!q->n_ev) {
                k->q_no_evidence++;
                if (apart)
                    k->q_no_evidence_apart++;
                c->n_qs--;
            }
            qi++;
        }
    }
    return c->oom ? -1 : 0;
}

int eval_load_beam(const char *dir, struct eval_counts *k, eval_conv_fn fn, void *arg)
{
    struct eval_conv c;
    struct beam_refs refs = { NULL, 0 };
    char *chat_txt = NULL, *probe_txt = NULL, *path = NULL;
    cJSON *chat = NULL, *probe = NULL;
    size_t len;
    int64_t now = CAIRN_NO_TIME;
    int rc = 1;
    eval_conv_init(&c);
    size_t dl = eval_conv_name_dir(&c, dir);
    c.msg_ids_unique = 1;
    path = eval_printf(&c, "%.*s/chat.json", (int)dl, dir);
    char *ppath = eval_printf(&c, "%.*s/probing_questions.json", (int)dl, dir);
    if (c.oom)
        goto oom;
    if (access(path, R_OK) || access(ppath, R_OK)) {
        cli_error("beam: %s is not a BEAM chat folder (needs chat.json and "
                  "probing_questions.json): %s", dir, strerror(errno));
        goto out;
    }
    if (!(chat_txt = cli_read_file(path, EVAL_FILE_CAP, &len)))
        goto out;
    if (!(chat = cJSON_ParseWithLength(chat_txt, len))) {
        cli_error("beam: %s is not valid JSON", path);
        goto out;
    }
    free(chat_txt);
    chat_txt = NULL;
    if (!(probe_txt = cli_read_file(ppath, EVAL_FILE_CAP, &len)))
        goto out;
    if (!(probe = cJSON_ParseWithLength(probe_txt, len))) {
        cli_error("beam: %s is not valid JSON", ppath);
        goto out;
    }
    rc = load_chat(&c, dir, c.name, chat, &refs, k, &now);
    if (!rc)
        rc = load_questions(&c, dir, c.name, probe, &refs, k, now);
    if (rc < 0)
        goto oom;
    if (rc)
        goto out;
    k->convs++;
    rc = fn(arg, &c);
    goto out;
oom:
    cli_error("beam: out of memory");
    rc = 1;
out:
    free(chat_txt);
    free(probe_txt);
    cJSON_Delete(chat);
    cJSON_Delete(probe);
    eval_conv_free(&c);
    return rc;
}
