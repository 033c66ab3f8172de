/*
 * codex.c: Codex CLI rollout files (~/.codex/sessions/YYYY/MM/DD/
 * rollout-<time>-<uuid>.jsonl) into one session.
 *
 * The format is not in protocols.md; it is read from the public codex-rs
 * sources and notes (RolloutLine): every line is
 *   {"timestamp": ISO, "type": T, "payload": {...}}
 * with T one of session_meta (id, cwd, git{branch}, cli_version,
 * originator), response_item (Responses API items: message, reasoning,
 * function_call, function_call_output, local_shell_call, ...), event_msg
 * (UI events; user_message/agent_message repeat the response items, so
 * they are not used), turn_context and compacted. Older rollouts wrote
 * the items bare ({"type":"message","role":...}) after a first line
 * {"id","timestamp","instructions"}; both shapes are read.
 *
 * Kept: response_item messages with role user or assistant; their
 * input_text / output_text / text blocks joined by "\n". Dropped: role
 * developer/system, reasoning, tool calls and outputs, and the user-role
 * messages Codex injects itself (<environment_context>, <user_instructions>,
 * "# AGENTS.md instructions", <INSTRUCTIONS>, <user_shell_command>,
 * <turn_aborted>). Messages have no id: the store dedupes re-imports by
 * role, time and content.
 */
#include "capture/capture.h"
#include "util/buf.h"
#include "util/json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static const char *const codex_injected[] = {
    "<environment_context>", "<user_instructions>", "# AGENTS.md instructions",
    "<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>",
};

static const char *const codex_known[] = {
    "session_meta", "response_item", "event_msg", "turn_context", "compacted",
    /* bare (legacy) item types */
    "message", "reasoning", "function_call", "function_call_output",
    "local_shell_call", "custom_tool_call", "custom_tool_call_output",
    "web_search_call",
};

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int injected(const char *s, size_t n)
{
    while (n && strchr(" \t\r\n", *s)) {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof(codex_injected) / sizeof(codex_injected[0]); i++) {
        size_t l = strlen(codex_injected[i]);
        if (n >= l && memcmp(s, codex_injected[i], l) == 0)
            return 1;
    }
    return 0;
}

struct codex_ctx {
    struct capture_batch *b;
    size_t sess;              /* index of our session in b->v, or -1 */
    struct buf id, cwd, branch, version, originator;
    int have_meta;
    struct buf text;
};

static void keep_str(struct buf *dst, const char *v)
{
    if (v && *v && !dst->n)
        buf_adds(dst, v);
}

static void codex_meta(struct codex_ctx *c, const cJSON *p)
{
    if (c->have_meta || !cJSON_IsObject(p))
        return;
    c->have_meta = 1;
    keep_str(&c->id, jstr(p, "id"));
    keep_str(&c->cwd, jstr(p, "cwd"));
    keep_str(&c->version, jstr(p, "cli_version"));
    keep_str(&c->originator, jstr(p, "originator"));
    keep_str(&c->branch, jstr(cJSON_GetObjectItemCaseSensitive(p, "git"), "branch"));
}

static int codex_message(struct codex_ctx *c, const cJSON *item, const char *ts)
{
    struct capture_batch *b = c->b;
    const char *role = jstr(item, "role");
    if (!role || (strcmp(role, "user") != 0 && strcmp(role, "assistant") != 0)) {
        b->counts.messages_dropped++;
        return CAIRN_OK;
    }
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(item, "content"), *bl;
    buf_reset(&c->text);
    int n = 0;
    if (cJSON_IsString(content)) {
        buf_adds(&c->text, content->valuestring);
    } else if (cJSON_IsArray(content)) {
        cJSON_ArrayForEach(bl, content) {
            const char *t = jstr(bl, "type"), *x = jstr(bl, "text");
            if (!t || !x || (strcmp(t, "input_text") != 0 && strcmp(t, "output_text") != 0 &&
                             strcmp(t, "text") != 0))
                continue;
            if (n++)
                buf_addc(&c->text, '\n');
            buf_adds(&c->text, x);
        }
    } else {
        b->counts.skipped_wrong_type++;
        return CAIRN_OK;
    }
    if (c->text.err) {
        int nomem = c->text.err == BUF_NOMEM;
        b->counts.skipped_too_long += !nomem;
        buf_release(&c->text);
        return nomem ? CAIRN_NOMEM : CAIRN_OK;
    }
    if (strcmp(role, "user") == 0 && injected(c->text.p, c->text.n)) {
        b->counts.messages_dropped++;
        return CAIRN_OK;
    }
    size_t cl = 0;
    char *text = capture_text(b, c->text.p, c->text.n, 1, &cl);
    if (!text)
        return CAIRN_NOMEM;
    if (!cl) {
        b->counts.messages_dropped++;
        return CAIRN_OK;
    }
    if (c->sess == (size_t)-1) {
        if (!capture_session_new(b))
            return CAIRN_NOMEM;
        c->sess = b->n - 1;
    }
    int64_t at = CAIRN_NO_TIME, t;
    if (ts && capture_parse_time(ts, strlen(ts), &t) == CAIRN_OK)
        at = t;
    return capture_session_add(b, &b->v[c->sess], NULL,
                               role[0] == 'u' ? "user" : "assistant", text, cl, at);
}

/* payload.type == "message", read by the scanner (tool outputs, often
 * the biggest lines, never reach cJSON). */
static int payload_is_message(const struct capture_jval *payload)
{
    struct capture_jiter it;
    struct capture_jval k, v;
    if (payload->kind != '{')
        return 0;
    capture_jiter_init(&it, payload->p, payload->p + payload->n);
    while (capture_jiter_next(&it, &k, &v) == 1)
        if (capture_jval_is(&k, "type"))
            return capture_jval_is(&v, "message");
    return 0;
}

static int is_known(const struct capture_jval *t)
{
    for (size_t i = 0; i < sizeof(codex_known) / sizeof(codex_known[0]); i++)
        if (capture_jval_is(t, codex_known[i]))
            return 1;
    return 0;
}

int capture_codex(const char *data, size_t len, const char *default_id,
                  unsigned flags, struct capture_batch *out)
{
    struct capture_counts *cn = &out->counts;
    struct codex_ctx c;
    int rc = CAIRN_OK;
    size_t pos = 0;
    memset(&c, 0, sizeof(c));
    c.b = out;
    c.sess = (size_t)-1;
    buf_init(&c.id, 4096);
    buf_init(&c.cwd, 65536);
    buf_init(&c.branch, 4096);
    buf_init(&c.version, 4096);
    buf_init(&c.originator, 4096);
    buf_init(&c.text, CAPTURE_MAX_LINE);

    while (pos < len && rc == CAIRN_OK) {
        const char *line = data + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        pos += ll + (nl ? 1 : 0);
        cn->lines_total++;
        if (ll > CAPTURE_MAX_LINE) {
            cn->skipped_too_long++;
            continue;
        }
        const char *end = line + ll, *p = line;
        while (p < end && strchr(" \t\r", *p) && *p)
            p++;
        while (end > p && strchr(" \t\r", end[-1]) && end[-1])
            end--;
        if (p == end) {
            cn->lines_blank++;
            continue;
        }
        /* Scan first; only message items and session_meta go to cJSON. */
        struct capture_jiter it;
        struct capture_jval k, v, type = { NULL, 0, 0 }, payload = { NULL, 0, 0 };
        int r, has_id = 0;
        if (*p != '{') {
            const char *q = capture_json_skip(p, end, &v);
            if (q && q == end)
                cn->skipped_wrong_type++;
            else
                cn->skipped_bad_json++;
            continue;
        }
        capture_jiter_init(&it, p, end);
        while ((r = capture_jiter_next(&it, &k, &v)) == 1) {
            if (capture_jval_is(&k, "type"))
                type = v;
            else if (capture_jval_is(&k, "payload"))
                payload = v;
            else if (capture_jval_is(&k, "id"))
                has_id = 1;
        }
        if (r < 0 || it.p != end) {
            cn->skipped_bad_json++;
            continue;
        }
        int want = 0, bare = 0;
        if (type.kind == '"') {
            if (capture_jval_is(&type, "session_meta")) {
                want = 1;
            } else if (capture_jval_is(&type, "response_item")) {
                want = payload_is_message(&payload);
            } else if (capture_jval_is(&type, "message")) {
                want = bare = 1;
            } else if (!is_known(&type)) {
                cn->skipped_unknown_type++;
                continue;
            }
        } else if (!type.p && has_id) {
            want = bare = 2;  /* legacy first line: session meta */
        } else if (type.p) {
            cn->skipped_wrong_type++;
            continue;
        } else {
            cn->skipped_unknown_type++;
            continue;
        }
        if (!want) {
            cn->lines_ignored++;
            continue;
        }
        cJSON *e = json_parse(p, (size_t)(end - p), NULL);
        if (!e) {
            cn->skipped_bad_json++;
            continue;
        }
        const char *ts = jstr(e, "timestamp");
        if (bare == 2)
            codex_meta(&c, e);
        else if (bare == 1)
            rc = codex_message(&c, e, ts);
        else if (capture_jval_is(&type, "session_meta"))
            codex_meta(&c, cJSON_GetObjectItemCaseSensitive(e, "payload"));
        else
            rc = codex_message(&c, cJSON_GetObjectItemCaseSensitive(e, "payload"), ts);
        cJSON_Delete(e);
    }
    if (rc || c.sess == (size_t)-1)
        goto out;
    struct capture_session *s = &out->v[c.sess];
    s->s.source = "codex";
    if (c.id.n)
        s->s.id = capture_str(out, c.id.p, c.id.n);
    else if (default_id)
        s->s.id = capture_str(out, default_id, strlen(default_id));
    if (c.cwd.n)
        s->s.project = capture_str(out, c.cwd.p, c.cwd.n);
    struct buf meta;
    buf_init(&meta, 0);
    buf_addc(&meta, '{');
    const struct { const char *k; struct buf *v; } f[] = {
        { "cwd", &c.cwd }, { "gitBranch", &c.branch }, { "version", &c.version },
        { "originator", &c.originator },
    };
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        if (!f[i].v->n)
            continue;
        if (meta.n > 1)
            buf_addc(&meta, ',');
        buf_add_json_str(&meta, f[i].k, strlen(f[i].k));
        buf_addc(&meta, ':');
        buf_add_json_str(&meta, f[i].v->p, f[i].v->n);
    }
    buf_addc(&meta, '}');
    s->s.meta = meta.err ? NULL : capture_strndup(out, meta.p, meta.n);
    buf_release(&meta);
    if (!s->s.meta || (c.id.n && !s->s.id) || (c.cwd.n && !s->s.project))
        rc = CAIRN_NOMEM;
out:
    buf_release(&c.id);
    buf_release(&c.cwd);
    buf_release(&c.branch);
    buf_release(&c.version);
    buf_release(&c.originator);
    buf_release(&c.text);
    (void)flags;
    return rc;
}
