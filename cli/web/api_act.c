/*
 * api_act.c: what `cairn web` changes or reads beside the store
 * (docs/WEB.md): forget a session and edit or delete a memory, each on a
 * writable handle opened for that one action and closed after it (the
 * server's own handle is read-only); export a session; the prompt hook's
 * injection log. An action names its target twice, in the field and in
 * `confirm`, so a stray request cannot delete by accident: the page asks
 * the user first, then sends both.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "web.h"
#include "../cli.h"

/* Bytes of the injection log read, from its end. */
#define INJECT_TAIL (2 << 20)

/* The POST body as a JSON object; NULL after a 400. */
static cJSON *body_json(const struct web_req *q, struct web_reply *r)
{
    cJSON *j = cJSON_ParseWithLength(q->body, q->body_len);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        web_fail(r, 400, "the body must be a JSON object");
        return NULL;
    }
    return j;
}

static const char *str_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* A writable handle for one action; NULL after a 500. */
static struct cairn *open_rw(const struct web_req *q, struct web_reply *r)
{
    struct cairn *db = NULL;
    int rc = cli_db_open(q->w->db_path, CAIRN_OPEN_NOCREATE, &db);
    if (rc) {
        web_fail_rc(r, db, "open the store for writing", rc);
        cairn_close(db);
        return NULL;
    }
    return db;
}

void web_api_forget(const struct web_req *q, struct web_reply *r)
{
    cJSON *j = body_json(q, r);
    struct cairn *db = NULL;
    if (!j)
        return;
    const char *id = str_field(j, "session"), *confirm = str_field(j, "confirm");
    if (!id || !confirm || strcmp(id, confirm)) {
        web_fail(r, 400, "forget: give the session in both \"session\" and \"confirm\"");
        goto out;
    }
    if (!(db = open_rw(q, r)))
        goto out;
    int rc = cairn_forget(db, id);
    if (rc && rc != CAIRN_SCRUB_PENDING) {
        web_fail_rc(r, db, "forget", rc);
        goto out;
    }
    buf_printf(&r->body, "{\"forgotten\":true,\"scrub_pending\":%s}\n",
               rc == CAIRN_SCRUB_PENDING ? "true" : "false");
    r->status = 200;
out:
    cairn_close(db);
    cJSON_Delete(j);
}

/* ---- memories ---- */

static void memory_json(struct buf *b, const struct cairn_memory *m)
{
    int first = 0;
    buf_printf(b, "{\"id\":%lld", (long long)m->id);
    cli_json_str_field(b, "type", m->type, &first);
    cli_json_str_field(b, "text", m->text, &first);
    cli_json_str_field(b, "scope", m->scope, &first);
    cli_json_str_field(b, "tags", m->tags, &first);
    cli_json_time_field(b, "created", m->created, &first);
    cli_json_time_field(b, "updated", m->updated, &first);
    cli_json_time_field(b, "expires", m->expires, &first);
    cli_json_str_field(b, "session", m->session, &first);
    cli_json_str_field(b, "message", m->message, &first);
    cli_json_str_field(b, "links", m->links, &first);
    buf_addc(b, '}');
}

void web_api_memories(const struct web_req *q, struct web_reply *r)
{
    const char *scope = web_arg(q, r, "scope", WEB_ARG_MAX), *type = web_arg(q, r, "type", 64);
    struct cairn_memories *l = NULL;
    if (r->status)
        return;
    int rc = cairn_memory_list(q->w->db, scope && *scope ? scope : NULL,
                               type && *type ? type : NULL, 0, &l);
    if (rc) {
        web_fail_rc(r, q->w->db, "memories", rc);
        return;
    }
    buf_adds(&r->body, "{\"memories\":[");
    for (size_t i = 0; i < cairn_memories_count(l); i++) {
        if (i)
            buf_addc(&r->body, ',');
        memory_json(&r->body, cairn_memories_at(l, i));
    }
    buf_adds(&r->body, "]}\n");
    cairn_memories_free(l);
    r->status = r->body.err ? 500 : 200;
}

/* The memory id of the body's "id" (a number); 0 after a 400. */
static int64_t memory_id(const cJSON *j, struct web_reply *r)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, "id");
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > 9e15) {
        web_fail(r, 400, "id: a memory id");
        return 0;
    }
    return (int64_t)v->valuedouble;
}

/* The body of an edit or a supersede: {"id": N, "text": T}, and a
 * writable handle. The parsed body (its strings are *text), or NULL after
 * an answer is set. */
static cJSON *memory_text_args(const struct web_req *q, struct web_reply *r, int64_t *id,
                               const char **text, struct cairn **db)
{
    cJSON *j = body_json(q, r);
    *db = NULL;
    if (!j)
        return NULL;
    if (!(*id = memory_id(j, r)))
        goto fail;
    if (!(*text = str_field(j, "text")) || !**text) {
        web_fail(r, 400, "text: the memory's new text");
        goto fail;
    }
    if ((*db = open_rw(q, r)))
        return j;
fail:
    cJSON_Delete(j);
    return NULL;
}

void web_api_memory_edit(const struct web_req *q, struct web_reply *r)
{
    struct cairn *db;
    int64_t id;
    const char *text;
    cJSON *j = memory_text_args(q, r, &id, &text, &db);
    if (!j)
        return;
    int rc = cairn_memory_update(db, id, text);
    if (rc) {
        web_fail_rc(r, db, "edit", rc);
        goto out;
    }
    buf_printf(&r->body, "{\"edited\":%lld}\n", (long long)id);
    r->status = 200;
out:
    cairn_close(db);
    cJSON_Delete(j);
}

/* A new memory that replaces id: same type, scope and tags, the new text;
 * the old one stays in the history, never listed alone. */
void web_api_memory_supersede(const struct web_req *q, struct web_reply *r)
{
    struct cairn *db;
    struct cairn_memories *old = NULL;
    int64_t id, added = 0;
    const char *text;
    int rc;
    cJSON *j = memory_text_args(q, r, &id, &text, &db);
    if (!j)
        return;
    if ((rc = cairn_memory_get(db, id, &old))) {
        web_fail_rc(r, db, "supersede", rc);
        goto out;
    }
    const struct cairn_memory *m = cairn_memories_at(old, 0);
    struct cairn_memory_new n = { m->type, text, m->scope, m->tags, 0, NULL, NULL, id };
    if ((rc = cairn_memory_add(db, &n, &added))) {
        web_fail_rc(r, db, "supersede", rc);
        goto out;
    }
    buf_printf(&r->body, "{\"added\":%lld,\"superseded\":%lld}\n", (long long)added, (long long)id);
    r->status = 200;
out:
    cairn_memories_free(old);
    cairn_close(db);
    cJSON_Delete(j);
}

void web_api_memory_rm(const struct web_req *q, struct web_reply *r)
{
    cJSON *j = body_json(q, r);
    struct cairn *db = NULL;
    int64_t id;
    if (!j)
        return;
    if (!(id = memory_id(j, r)))
        goto out;
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "confirm");
    if (!cJSON_IsNumber(c) || (int64_t)c->valuedouble != id) {
        web_fail(r, 400, "delete: give the memory in both \"id\" and \"confirm\"");
        goto out;
    }
    if (!(db = open_rw(q, r)))
        goto out;
    int rc = cairn_memory_remove(db, id);
    if (rc && rc != CAIRN_SCRUB_PENDING) {
        web_fail_rc(r, db, "delete", rc);
        goto out;
    }
    buf_printf(&r->body, "{\"deleted\":%lld}\n", (long long)id);
    r->status = 200;
out:
    cairn_close(db);
    cJSON_Delete(j);
}

/* ---- export ---- */

struct exporting { struct cairn *db; struct buf *out; };

static int export_one(void *arg, const struct cairn_session_info *s)
{
    struct exporting *e = arg;
    return cli_session_jsonl(e->db, s, e->out);
}

void web_api_export(const struct web_req *q, struct web_reply *r)
{
    const char *id = web_arg(q, r, "session", WEB_ARG_MAX);
    if (r->status)
        return;
    if (!id || !*id) {
        web_fail(r, 400, "session: which session to export");
        return;
    }
    struct exporting e = { q->w->db, &r->body };
    int rc = cairn_session_get(q->w->db, id, export_one, &e);
    if (rc) {
        web_fail_rc(r, q->w->db, "export", rc);
        return;
    }
    r->type = "application/x-ndjson; charset=utf-8";
    snprintf(r->filename, sizeof r->filename, "cairn-session.jsonl");
    r->status = r->body.err ? 500 : 200;
}

/* ---- the injection log ---- */

/* The last INJECT_TAIL bytes of the log, from a line start; NULL when
 * there is no log (or it cannot be read: errno). */
static char *read_tail(const char *path, size_t *len)
{
    int fd = cli_open_regular(path, O_RDONLY | O_NOFOLLOW);
    struct stat st;
    char *p = NULL;
    if (fd < 0)
        return NULL;
    if (fstat(fd, &st))
        goto out;
    off_t from = st.st_size > INJECT_TAIL ? st.st_size - INJECT_TAIL : 0;
    size_t n = (size_t)(st.st_size - from), got = 0;
    if (!(p = malloc(n + 1)))
        goto out;
    while (got < n) {
        ssize_t k = pread(fd, p + got, n - got, from + (off_t)got);
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    p[got] = '\0';
    *len = got;
    if (from > 0) {                      /* drop the partial first line */
        char *nl = memchr(p, '\n', got);
        size_t skip = nl ? (size_t)(nl + 1 - p) : got;
        memmove(p, p + skip, got - skip + 1);
        *len = got - skip;
    }
out:
    close(fd);
    return p;
}

/* The prompt a log line was about. The log keeps no prompt text (the
 * hook writes it before the prompt is stored, and a log is often pasted
 * to others); the store has it once the session was saved: the user
 * message of that session closest to the line's time, within
 * PROMPT_WINDOW seconds, one of the prompt's length first. One
 * session's user turns are read once per request (the log's lines come
 * in runs of one session). */
#define PROMPT_WINDOW 120

struct prompt_turn {
    int64_t at;
    int position;
    size_t len;
    char *text;               /* NULL when over WEB_QUERY_MAX: no preview */
};

struct prompt_cache {
    char session[256];
    struct prompt_turn *t;
    size_t n, cap;
    int read;                 /* 0: session not read yet */
};

static void prompt_cache_clear(struct prompt_cache *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->t[i].text);
    free(c->t);
    memset(c, 0, sizeof *c);
}

static int prompt_turn_cb(void *arg, const struct cairn_message_info *m)
{
    struct prompt_cache *c = arg;
    if (strcmp(m->role, "user") || m->at == CAIRN_NO_TIME)
        return 0;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        struct prompt_turn *t = realloc(c->t, cap * sizeof *t);
        if (!t)
            return CAIRN_NOMEM;
        c->t = t;
        c->cap = cap;
    }
    struct prompt_turn *t = &c->t[c->n++];
    t->at = m->at;
    t->position = m->position;
    t->len = m->content_len;
    t->text = m->content_len <= WEB_QUERY_MAX ? strndup(m->content, m->content_len) : NULL;
    return 0;
}

/* Adds "prompt" (when short enough to preview) and "position" to line j. */
static void add_prompt(struct cairn *db, struct prompt_cache *c, cJSON *j)
{
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(j, "session");
    const cJSON *at = cJSON_GetObjectItemCaseSensitive(j, "at");
    const cJSON *len = cJSON_GetObjectItemCaseSensitive(j, "prompt_chars");
    int64_t when;
    if (!cJSON_IsString(sid) || !*sid->valuestring ||
        strlen(sid->valuestring) >= sizeof c->session ||
        !cJSON_IsString(at) || cairn_parse_time(at->valuestring, &when))
        return;
    if (!c->read || strcmp(c->session, sid->valuestring)) {
        prompt_cache_clear(c);
        snprintf(c->session, sizeof c->session, "%s", sid->valuestring);
        c->read = 1;
        /* a session not stored (yet) leaves no turn: no link */
        (void)cairn_messages(db, c->session, 0, -1, prompt_turn_cb, c);
    }
    const struct prompt_turn *best = NULL;
    int64_t best_d = 0;
    int best_same = 0; /* 1 when the best turn has the logged length */
    for (size_t i = 0; i < c->n; i++) {
        int64_t d = c->t[i].at > when ? c->t[i].at - when : when - c->t[i].at;
        int same = cJSON_IsNumber(len) && (double)c->t[i].len == len->valuedouble;
        if (d > PROMPT_WINDOW)
            continue;
        if (!best || same > best_same || (same == best_same && d < best_d))
            best = &c->t[i], best_d = d, best_same = same;
    }
    if (!best)
        return;
    cJSON_AddNumberToObject(j, "position", best->position);
    if (best->text)
        cJSON_AddStringToObject(j, "prompt", best->text);
}

void web_api_injections(const struct web_req *q, struct web_reply *r)
{
    char path[4096];
    size_t len = 0, n = 0;
    long limit = web_arg_long(q, r, "limit", 200, 1, 2000);
    struct prompt_cache cache = { 0 };
    char *log;
    if (r->status)
        return;
    if (inject_log_path(path, sizeof path)) {
        web_fail(r, 500, "no HOME: cannot find the injection log");
        return;
    }
    log = read_tail(path, &len);
    buf_adds(&r->body, "{\"log\":");
    buf_add_json_str(&r->body, path, strlen(path));
    buf_adds(&r->body, ",\"entries\":[");
    /* Newest first: lines from the end. Each line is parsed and printed
     * again, so what reaches the page is JSON whatever the file holds. */
    for (char *end = log ? log + len : NULL; end && end > log && n < (size_t)limit;) {
        char *start = end;
        while (start > log && start[-1] != '\n')
            start--;
        cJSON *j = cJSON_ParseWithLength(start, (size_t)(end - start));
        if (cJSON_IsObject(j))
            add_prompt(q->w->db, &cache, j);
        char *s = cJSON_IsObject(j) ? cJSON_PrintUnformatted(j) : NULL;
        if (s) {
            buf_adds(&r->body, n++ ? "," : "");
            buf_adds(&r->body, s);
            cJSON_free(s);
        }
        cJSON_Delete(j);
        end = start > log ? start - 1 : log;
    }
    buf_adds(&r->body, "]}\n");
    prompt_cache_clear(&cache);
    free(log);
    r->status = r->body.err ? 500 : 200;
}
