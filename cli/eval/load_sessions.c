/*
 * load_sessions.c: the sessions+questions format (`cairn eval sessions
 * DIR...`), one folder = one store, which anyone can write for their own
 * history (docs/EVAL.md):
 *
 *   DIR/sessions.jsonl    one session per line, the JSON `cairn add` reads
 *                         (docs/FORMAT.md)
 *   DIR/questions.jsonl   one question per line: {"id", "query", "now"?,
 *                         "cat"?, "ev": [message ids], "spans"?: [text]}
 *
 * Choices:
 *  - Sessions are kept as their JSON text and stored by cairn_add_json,
 *    the call `cairn add` makes, so the store is what `cairn add` builds.
 *    Here only the shape is checked (an object per line, a messages list,
 *    ids and dates of the right type), so errors name the line before the
 *    run starts; whatever else `cairn add` would refuse stops the run when
 *    the store is loaded, again with the line.
 *  - "ev" names message ids ("id" of a message in sessions.jsonl). The user
 *    wrote them, so an id that names no message, or messages in two
 *    sessions, is an error with its line, not a silent drop (the published
 *    benchmarks' unresolved ids are dropped and counted instead).
 *  - "now" defaults to the latest time in sessions.jsonl (started_at,
 *    ended_at, a message's at): the questions are asked after the history.
 *  - "cat" defaults to "uncategorised"; "spans" are optional (the answer
 *    text metric, spans.c); other fields ("answer"...) are ignored.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"
#include "util/json.h"

#define SQ_NO_CATEGORY "uncategorised"

struct sq_ref {
    const char *message, *session;
    size_t line;                /* of the session in sessions.jsonl */
};

struct sq_ctx {
    struct eval_conv *c;
    struct eval_counts *k;
    const char *name;
    struct sq_ref *refs;
    size_t n_refs, a_refs;
    int64_t latest;
    int oom;
};

static int cmp_ref(const void *a, const void *b)
{
    const struct sq_ref *x = a, *y = b;
    int d = strcmp(x->message, y->message);
    return d ? d : strcmp(x->session, y->session);
}

/* An id field (string or number, as cairn stores it): 1 set, 0 absent or
 * null, -1 another type. Numbers keep their exact digits (json.h). */
static int id_field(struct eval_conv *c, const cJSON *o, const char *key, const char **out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    char nb[32];
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsString(v))
        *out = eval_strdup(c, v->valuestring);
    else if (cJSON_IsNumber(v))
        *out = eval_strdup(c, json_number_text(v, nb, sizeof nb));
    else
        return -1;
    return 1;
}

/* A date field (ISO 8601 or Unix seconds) into *t: 0 (CAIRN_NO_TIME when
 * absent), -1 when it is not a date. */
static int time_field(const cJSON *o, const char *key, int64_t *t)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    *t = CAIRN_NO_TIME;
    if (!v || cJSON_IsNull(v) || (cJSON_IsString(v) && !*v->valuestring))
        return 0;
    if (cJSON_IsNumber(v)) {
        *t = (int64_t)v->valuedouble;
        return 0;
    }
    return cJSON_IsString(v) && !cairn_parse_time(v->valuestring, t) ? 0 : -1;
}

static int later(struct sq_ctx *x, const cJSON *o, const char *key)
{
    int64_t t;
    if (time_field(o, key, &t))
        return -1;
    if (t != CAIRN_NO_TIME && (x->latest == CAIRN_NO_TIME || t > x->latest))
        x->latest = t;
    return 0;
}

/* Parses one line as a single JSON object: NULL after printing why. */
static cJSON *line_object(const char *name, const char *file, char *line, size_t len,
                          size_t lineno)
{
    const char *end = NULL;
    cJSON *v = json_parse(line, len, &end);
    if (!v) {
        cli_error("sessions: %s/%s:%zu: malformed JSON at column %zu", name, file, lineno,
                  end && end >= line ? (size_t)(end - line) + 1 : 1);
        return NULL;
    }
    while (end < line + len && (*end == ' ' || *end == '\t' || *end == '\r'))
        end++;
    if (!cJSON_IsObject(v) || end != line + len) {
        cli_error("sessions: %s/%s:%zu: one JSON object per line expected", name, file, lineno);
        cJSON_Delete(v);
        return NULL;
    }
    return v;
}

static int add_ref(struct sq_ctx *x, const char *message, const char *session, size_t line)
{
    if (x->n_refs == x->a_refs) {
        size_t na = x->a_refs ? x->a_refs * 2 : 256;
        struct sq_ref *nr = realloc(x->refs, na * sizeof *nr);
        if (!nr)
            return -1;
        x->refs = nr;
        x->a_refs = na;
    }
    x->refs[x->n_refs++] = (struct sq_ref){ message, session, line };
    return 0;
}

static int on_session(void *arg, char *line, size_t len, size_t lineno)
{
    struct sq_ctx *x = arg;
    struct eval_conv *c = x->c;
    const char *sid;
    int rc = 1;
    cJSON *v = line_object(x->name, "sessions.jsonl", line, len, lineno);
    if (!v)
        return 1;
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(v, "messages"), *m;
    if (id_field(c, v, "id", &sid) < 0) {
        cli_error("sessions: %s/sessions.jsonl:%zu: \"id\" must be a string or a number",
                  x->name, lineno);
        goto out;
    }
    if (!cJSON_IsArray(msgs)) {
        cli_error("sessions: %s/sessions.jsonl:%zu: a session needs a \"messages\" list "
                  "(docs/FORMAT.md)", x->name, lineno);
        goto out;
    }
    if (later(x, v, "started_at") || later(x, v, "ended_at")) {
        cli_error("sessions: %s/sessions.jsonl:%zu: started_at and ended_at must be ISO 8601 "
                  "dates or Unix seconds", x->name, lineno);
        goto out;
    }
    size_t mi = 0;
    cJSON_ArrayForEach(m, msgs) {
        const char *mid;
        mi++;
        if (!cJSON_IsObject(m) || id_field(c, m, "id", &mid) < 0 || later(x, m, "at")) {
            cli_error("sessions: %s/sessions.jsonl:%zu: message %zu must be an object whose "
                      "\"id\" is a string or a number and \"at\" a date", x->name, lineno, mi);
            goto out;
        }
        /* an id-less session gets one from cairn that no question can
         * name: its messages cannot be evidence */
        if (mid && sid && add_ref(x, mid, sid, lineno)) {
            rc = -1;
            goto out;
        }
    }
    struct eval_json_sess *s = eval_add_json_session(c);
    if (!s) {
        rc = -1;
        goto out;
    }
    s->id = sid;
    s->json = line;
    s->len = len;
    s->line = lineno;
    s->n_messages = mi;
    x->k->sessions++;
    x->k->messages += mi;
    rc = c->oom ? -1 : 0;
out:
    cJSON_Delete(v);
    return rc;
}

/* The session of message id `mid`: 0 and *out, or 1 after printing why. */
static int resolve(struct sq_ctx *x, const char *mid, size_t lineno, const struct sq_ref **out)
{
    size_t lo = 0, hi = x->n_refs;
    while (lo < hi) {                 /* the first ref with this message id */
        size_t mid_i = lo + (hi - lo) / 2;
        if (strcmp(x->refs[mid_i].message, mid) < 0)
            lo = mid_i + 1;
        else
            hi = mid_i;
    }
    if (lo == x->n_refs || strcmp(x->refs[lo].message, mid)) {
        cli_error("sessions: %s/questions.jsonl:%zu: ev \"%s\" is not the id of a message in "
                  "a session with an id in sessions.jsonl", x->name, lineno, mid);
        return 1;
    }
    for (size_t i = lo + 1; i < x->n_refs && !strcmp(x->refs[i].message, mid); i++) {
        if (strcmp(x->refs[i].session, x->refs[lo].session)) {
            cli_error("sessions: %s/questions.jsonl:%zu: ev \"%s\" names messages in two "
                      "sessions (sessions.jsonl lines %zu and %zu); give evidence messages "
                      "ids unique in the folder", x->name, lineno, mid, x->refs[lo].line,
                      x->refs[i].line);
            return 1;
        }
    }
    *out = &x->refs[lo];
    return 0;
}

/* "spans": absent, or a list of non-empty strings. */
static int read_spans(struct sq_ctx *x, struct eval_q *q, const cJSON *v, size_t lineno)
{
    const cJSON *sp = cJSON_GetObjectItemCaseSensitive(v, "spans"), *e;
    if (!sp || cJSON_IsNull(sp))
        return 0;
    if (!cJSON_IsArray(sp))
        goto bad;
    q->spans = eval_calloc(x->c, (size_t)cJSON_GetArraySize(sp), sizeof *q->spans);
    if (!q->spans)
        return -1;
    cJSON_ArrayForEach(e, sp) {
        if (!cJSON_IsString(e) || !*e->valuestring)
            goto bad;
        if (!(q->spans[q->n_spans++] = eval_strdup(x->c, e->valuestring)))
            return -1;
    }
    x->k->spans += q->n_spans;
    x->k->q_spans += q->n_spans > 0;
    return 0;
bad:
    cli_error("sessions: %s/questions.jsonl:%zu: \"spans\" must be a list of non-empty "
              "strings", x->name, lineno);
    return 1;
}

static int read_ev(struct sq_ctx *x, struct eval_q *q, const cJSON *v, size_t lineno)
{
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(v, "ev"), *e;
    char nb[32];
    if (!cJSON_IsArray(ev) || !cJSON_GetArraySize(ev)) {
        cli_error("sessions: %s/questions.jsonl:%zu: \"ev\" must be a non-empty list of "
                  "message ids", x->name, lineno);
        return 1;
    }
    q->ev = eval_calloc(x->c, (size_t)cJSON_GetArraySize(ev), sizeof *q->ev);
    if (!q->ev)
        return -1;
    cJSON_ArrayForEach(e, ev) {
        const struct sq_ref *r;
        const char *mid = cJSON_IsString(e) ? e->valuestring
                        : cJSON_IsNumber(e) ? json_number_text(e, nb, sizeof nb) : NULL;
        if (!mid) {
            cli_error("sessions: %s/questions.jsonl:%zu: \"ev\" holds something that is not "
                      "a message id (a string or a number)", x->name, lineno);
            return 1;
        }
        x->k->ev_ids++;
        if (resolve(x, mid, lineno, &r))
            return 1;
        eval_q_add_ev(q, r->session, r->message);
    }
    return 0;
}

static int on_question(void *arg, char *line, size_t len, size_t lineno)
{
    struct sq_ctx *x = arg;
    struct eval_conv *c = x->c;
    const char *id;
    int rc = 1;
    cJSON *v = line_object(x->name, "questions.jsonl", line, len, lineno);
    if (!v)
        return 1;
    const cJSON *query = cJSON_GetObjectItemCaseSensitive(v, "query");
    const cJSON *cat = cJSON_GetObjectItemCaseSensitive(v, "cat");
    x->k->questions++;
    if (id_field(c, v, "id", &id) <= 0) {
        cli_error("sessions: %s/questions.jsonl:%zu: a question needs an \"id\" (a string or "
                  "a number)", x->name, lineno);
        goto out;
    }
    for (size_t i = 0; i < c->n_qs; i++) {
        if (!strcmp(c->qs[i].id, id)) {
            cli_error("sessions: %s/questions.jsonl:%zu: question id \"%s\" appears twice",
                      x->name, lineno, id);
            goto out;
        }
    }
    if (!cJSON_IsString(query) || !*query->valuestring) {
        cli_error("sessions: %s/questions.jsonl:%zu: a question needs a \"query\" (a non-empty "
                  "string)", x->name, lineno);
        goto out;
    }
    if (cat && !cJSON_IsNull(cat) && (!cJSON_IsString(cat) || !*cat->valuestring)) {
        cli_error("sessions: %s/questions.jsonl:%zu: \"cat\" must be a non-empty string",
                  x->name, lineno);
        goto out;
    }
    struct eval_q *q = eval_add_question(c);
    if (!q) {
        rc = -1;
        goto out;
    }
    q->id = id;
    q->question = eval_strdup(c, query->valuestring);
    q->category = eval_strdup(c, cJSON_IsString(cat) ? cat->valuestring : SQ_NO_CATEGORY);
    if (time_field(v, "now", &q->now)) {
        cli_error("sessions: %s/questions.jsonl:%zu: \"now\" must be an ISO 8601 date or Unix "
                  "seconds", x->name, lineno);
        goto out;
    }
    if (q->now == CAIRN_NO_TIME)
        q->now = x->latest;
    if ((rc = read_ev(x, q, v, lineno)) || (rc = read_spans(x, q, v, lineno)))
        goto out;
    rc = c->oom ? -1 : 0;
out:
    cJSON_Delete(v);
    return rc;
}

int eval_sessions_parse(struct eval_conv *c, const char *name, const char *sessions,
                        size_t slen, const char *questions, size_t qlen, struct eval_counts *k)
{
    struct sq_ctx x = { .c = c, .k = k, .name = name, .latest = CAIRN_NO_TIME };
    /* the conv keeps the sessions' text: each line is one session's JSON */
    char *st = eval_calloc(c, slen + 1, 1), *qt = eval_calloc(c, qlen + 1, 1);
    int rc = -1;
    if (!st || !qt)
        goto out;
    memcpy(st, sessions, slen);
    memcpy(qt, questions, qlen);
    if ((rc = eval_each_line(st, slen, on_session, &x)))
        goto out;
    if (!c->n_jsess) {
        cli_error("sessions: %s/sessions.jsonl: no session", name);
        rc = 1;
        goto out;
    }
    if (x.n_refs)
        qsort(x.refs, x.n_refs, sizeof *x.refs, cmp_ref);
    c->msg_ids_unique = 1;
    for (size_t i = 1; i < x.n_refs; i++)
        if (!strcmp(x.refs[i].message, x.refs[i - 1].message))
            c->msg_ids_unique = 0;
    if ((rc = eval_each_line(qt, qlen, on_question, &x)))
        goto out;
    k->convs++;
    rc = c->oom ? -1 : 0;
out:
    free(x.refs);
    return rc;
}

int eval_load_sessions(const char *dir, struct eval_counts *k, eval_conv_fn fn, void *arg)
{
    struct eval_conv c;
    char *st = NULL, *qt = NULL;
    size_t sl, ql;
    int rc = 1;
    eval_conv_init(&c);
    size_t dl = eval_conv_name_dir(&c, dir);
    char *dname = eval_printf(&c, "%.*s", (int)dl, dir);
    char *sp = eval_printf(&c, "%.*s/sessions.jsonl", (int)dl, dir);
    char *qp = eval_printf(&c, "%.*s/questions.jsonl", (int)dl, dir);
    if (c.oom)
        goto oom;
    if (access(sp, R_OK) || access(qp, R_OK)) {
        cli_error("sessions: %s is not a sessions+questions folder (needs sessions.jsonl and "
                  "questions.jsonl): %s", dir, strerror(errno));
        goto out;
    }
    if (!(st = cli_read_file(sp, EVAL_FILE_CAP, &sl)) ||
        !(qt = cli_read_file(qp, EVAL_FILE_CAP, &ql)))
        goto out;
    rc = eval_sessions_parse(&c, dname, st, sl, qt, ql, k);
    free(st);
    free(qt);
    st = qt = NULL;
    if (rc < 0)
        goto oom;
    if (!rc)
        rc = fn(arg, &c);
    goto out;
oom:
    cli_error("sessions: out of memory");
    rc = 1;
out:
    free(st);
    free(qt);
    eval_conv_free(&c);
    return rc;
}
