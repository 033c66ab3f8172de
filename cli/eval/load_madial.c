/*
 * load_madial.c: MADial-Bench (NAACL 2025): a memory archive file and a
 * dialogue file, both JSON Lines despite the .json suffix. The whole
 * archive is one store; every dialogue is one question.
 *
 * Choices:
 *  - Each memory item {"<id>": {time, scene, emotion, event, user-id?}} is
 *    a session "madial/<id>" with one user message, id "<id>", content
 *    "EVENT (SCENE, EMOTION)", dated by its time, project "user-<user-id>"
 *    when the archive gives one (the Chinese one does, the English one
 *    does not, so recall runs over the whole archive either way).
 *  - The query is the user's utterances before the first test-turn, each
 *    written "Name: text" (the <Name> tag without brackets, the quotes
 *    taken off), joined by newlines: what the assistant has heard when it
 *    should bring a memory up.
 *  - Evidence = relevant-id; ids not in the archive are dropped and
 *    counted. "now" = the latest memory date (the dialogues carry none).
 *  - One category, "dialogue"; question id = the dialogue's line number.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"
#include "util/buf.h"

struct madial_ctx {
    const char *mem_path, *dlg_path;
    struct eval_conv *c;
    struct eval_counts *k;
    int64_t now;
    size_t n_dialogues;
};

static int on_memory(void *arg, char *line, size_t len, size_t lineno)
{
    struct madial_ctx *x = arg;
    struct eval_conv *c = x->c;
    cJSON *root = cJSON_ParseWithLength(line, len);
    const cJSON *item = root ? root->child : NULL;
    int rc = 1;
    if (!cJSON_IsObject(root) || !cJSON_IsObject(item) || item->next) {
        cli_error("madial: %s:%zu: not a memory line {\"<id>\": {time, scene, emotion, event}} "
                  "(is this the memory archive?)", x->mem_path, lineno);
        goto out;
    }
    const cJSON *tm = cJSON_GetObjectItemCaseSensitive(item, "time");
    const cJSON *scene = cJSON_GetObjectItemCaseSensitive(item, "scene");
    const cJSON *emo = cJSON_GetObjectItemCaseSensitive(item, "emotion");
    const cJSON *ev = cJSON_GetObjectItemCaseSensitive(item, "event");
    const cJSON *uid = cJSON_GetObjectItemCaseSensitive(item, "user-id");
    int64_t at;
    if (!cJSON_IsString(ev) || !cJSON_IsString(tm)) {
        cli_error("madial: %s:%zu: memory %s needs event and time", x->mem_path, lineno,
                  item->string);
        goto out;
    }
    if (eval_parse_date(tm->valuestring, &at)) {
        cli_error("madial: %s:%zu: memory %s: time \"%s\" is not a date", x->mem_path, lineno,
                  item->string, tm->valuestring);
        goto out;
    }
    for (size_t i = 0; i < c->n_sess; i++) {
        if (!strcmp(c->sess[i].messages[0].id, item->string)) {
            cli_error("madial: %s:%zu: memory id %s appears twice", x->mem_path, lineno,
                      item->string);
            goto out;
        }
    }
    struct cairn_session *s = eval_add_session(c);
    struct cairn_message *m = eval_calloc(c, 1, sizeof *m);
    if (!s || !m) {
        cli_error("madial: out of memory");
        goto out;
    }
    struct buf b = BUF_INIT;
    buf_adds(&b, ev->valuestring);
    if (cJSON_IsString(scene) || cJSON_IsString(emo)) {
        buf_adds(&b, " (");
        if (cJSON_IsString(scene))
            buf_adds(&b, scene->valuestring);
        if (cJSON_IsString(scene) && cJSON_IsString(emo))
            buf_adds(&b, ", ");
        if (cJSON_IsString(emo))
            buf_adds(&b, emo->valuestring);
        buf_adds(&b, ")");
    }
    m->content = b.err ? NULL : eval_strdup(c, b.p);
    buf_release(&b);
    m->id = eval_strdup(c, item->string);
    m->role = "user";
    m->at = at;
    s->id = eval_printf(c, "madial/%s", item->string);
    s->source = "madial";
    if (cJSON_IsNumber(uid))
        s->project = eval_printf(c, "user-%d", uid->valueint);
    else if (cJSON_IsString(uid))
        s->project = eval_printf(c, "user-%s", uid->valuestring);
    s->started_at = at;
    s->messages = m;
    s->n_messages = 1;
    if (c->oom || !m->content) {
        cli_error("madial: out of memory");
        goto out;
    }
    if (x->now == CAIRN_NO_TIME || at > x->now)
        x->now = at;
    x->k->sessions++;
    x->k->messages++;
    rc = 0;
out:
    cJSON_Delete(root);
    return rc;
}

/* Appends one user utterance "<Name>: "text"" as "Name: text". */
static void add_utterance(struct buf *q, const char *line)
{
    const char *p = line, *name = NULL, *e;
    size_t name_len = 0;
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '<' && (e = strchr(p, '>'))) {
        name = p + 1;
        name_len = (size_t)(e - name);
        p = e + 1;
        if (*p == ':')
            p++;
    }
    while (isspace((unsigned char)*p))
        p++;
    e = p + strlen(p);
    while (e > p && isspace((unsigned char)e[-1]))
        e--;
    /* take off one pair of quotes: "..." or the curly “...” */
    if (e - p >= 2 && *p == '"' && e[-1] == '"') {
        p++;
        e--;
    } else if (e - p >= 6 && !strncmp(p, "\xe2\x80\x9c", 3) && !strncmp(e - 3, "\xe2\x80\x9d", 3)) {
        p += 3;
        e -= 3;
    }
    if (q->n)
        buf_addc(q, '\n');
    if (name) {
        buf_add(q, name, name_len);
        buf_adds(q, ": ");
    }
    buf_add(q, p, (size_t)(e - p));
}

static int is_assistant(const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    return !strncmp(line, "<Assistant>", 11);
}

static int is_marker(const char *line)
{
    while (isspace((unsigned char)*line))
        line++;
    return !strncmp(line, "<BOD>", 5) || !strncmp(line, "<EOD>", 5);
}

static int on_dialogue(void *arg, char *line, size_t len, size_t lineno)
{
    struct madial_ctx *x = arg;
    struct eval_conv *c = x->c;
    cJSON *root = cJSON_ParseWithLength(line, len);
    const cJSON *dlg = cJSON_GetObjectItemCaseSensitive(root, "dialogue");
    const cJSON *tt = cJSON_GetObjectItemCaseSensitive(root, "test-turn");
    const cJSON *rel = cJSON_GetObjectItemCaseSensitive(root, "relevant-id");
    const cJSON *e;
    struct buf qb = BUF_INIT;
    int rc = 1;
    long turn = -1;
    if (!cJSON_IsArray(dlg) || !cJSON_IsArray(tt) || !cJSON_IsArray(rel)) {
        cli_error("madial: %s:%zu: not a dialogue line {dialogue, test-turn, relevant-id} "
                  "(is this the dialogue file?)", x->dlg_path, lineno);
        goto out;
    }
    cJSON_ArrayForEach(e, tt) {
        if (cJSON_IsNumber(e) && (turn < 0 || e->valueint < turn))
            turn = e->valueint;
    }
    if (turn < 1 || turn >= cJSON_GetArraySize(dlg)) {
        cli_error("madial: %s:%zu: test-turn is not a position in the dialogue", x->dlg_path,
                  lineno);
        goto out;
    }
    x->n_dialogues++;
    x->k->questions++;
    long i = 0;
    cJSON_ArrayForEach(e, dlg) {
        if (i++ >= turn)
            break;
        if (cJSON_IsString(e) && !is_marker(e->valuestring) && !is_assistant(e->valuestring))
            add_utterance(&qb, e->valuestring);
    }
    if (qb.err) {
        cli_error("madial: %s:%zu: dialogue too large", x->dlg_path, lineno);
        goto out;
    }
    struct eval_q *q = eval_add_question(c);
    if (!q || !(q->ev = eval_calloc(c, (size_t)cJSON_GetArraySize(rel), sizeof *q->ev)))
        goto oom;
    q->id = eval_printf(c, "%zu", lineno);
    q->category = "dialogue";
    q->question = eval_strdup(c, qb.p);
    q->now = CAIRN_NO_TIME;     /* set when the archive is complete */
    cJSON_ArrayForEach(e, rel) {
        char id[64];
        x->k->ev_ids++;
        if (cJSON_IsNumber(e))
            snprintf(id, sizeof id, "%d", e->valueint);
        else if (cJSON_IsString(e))
            snprintf(id, sizeof id, "%s", e->valuestring);
        else
            id[0] = '\0';
        size_t s = 0;
        while (s < c->n_sess && strcmp(c->sess[s].messages[0].id, id))
            s++;
        if (s == c->n_sess) {
            x->k->ev_unresolved++;
            continue;
        }
        eval_q_add_ev(q, c->sess[s].id, c->sess[s].messages[0].id);
    }
    if (!q->n_ev) {
        x->k->q_no_evidence++;
        c->n_qs--;
    }
    if (c->oom)
        goto oom;
    rc = 0;
    goto out;
oom:
    cli_error("madial: out of memory");
out:
    buf_release(&qb);
    cJSON_Delete(root);
    return rc;
}

int eval_load_madial(const char *memory, const char *dialogue, struct eval_counts *k,
                     eval_conv_fn fn, void *arg)
{
    struct eval_conv c;
    struct madial_ctx x = { memory, dialogue, &c, k, CAIRN_NO_TIME, 0 };
    char *mem = NULL, *dlg = NULL;
    size_t len;
    int rc = 1;
    eval_conv_init(&c);
    const char *base = strrchr(memory, '/');
    base = base ? base + 1 : memory;
    const char *dot = strrchr(base, '.');
    c.name = eval_printf(&c, "%.*s", (int)(dot && dot > base ? dot - base : (long)strlen(base)),
                         base);
    c.msg_ids_unique = 1;
    if (!(mem = cli_read_file(memory, EVAL_FILE_CAP, &len)))
        goto out;
    if ((rc = eval_each_line(mem, len, on_memory, &x)))
        goto out;
    rc = 1;
    if (!c.n_sess) {
        cli_error("madial: %s holds no memory items", memory);
        goto out;
    }
    if (!(dlg = cli_read_file(dialogue, EVAL_FILE_CAP, &len)))
        goto out;
    if ((rc = eval_each_line(dlg, len, on_dialogue, &x)))
        goto out;
    rc = 1;
    if (!x.n_dialogues) {
        cli_error("madial: %s holds no dialogues", dialogue);
        goto out;
    }
    for (size_t i = 0; i < c.n_qs; i++)
        c.qs[i].now = x.now;
    k->convs++;
    rc = fn(arg, &c);
out:
    free(mem);
    free(dlg);
    eval_conv_free(&c);
    return rc;
}
