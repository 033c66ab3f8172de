/*
 * chat_export.c: claude.ai and ChatGPT data exports (conversations.json)
 * into sessions, one per conversation.
 *
 * Both exports are one JSON array, often hundreds of MB on one line. The
 * array is split into its elements by the capture JSON scanner and each
 * conversation is parsed with cJSON on its own, so memory stays bounded by
 * the largest conversation and one damaged conversation (or a truncated
 * download) costs only itself. Each conversation counts as one "line" in
 * the batch counters.
 *
 * Linearisation follows shared/docs/protocols.md §6 and the reference
 * linearize.py:
 *  - claude.ai: if any message has parent_message_uuid, the branch is the
 *    leaf (a message no one points to) with the newest created_at (then
 *    highest index) walked back to the root; otherwise the array order.
 *    Text is the non-empty content[] text blocks joined by "\n", else the
 *    flat `text`; senders human/assistant only.
 *  - ChatGPT: current_node walked back by `parent` to the root (newest
 *    leaf when current_node is missing); user/assistant only, not hidden
 *    (weight 0, is_visually_hidden_from_conversation), not assistant tool
 *    calls (recipient != "all"), content_type text/multimodal_text, string
 *    parts joined by "\n" with images as "[image]".
 */
#include "capture/capture.h"
#include "util/buf.h"
#include "util/json.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *jstr(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* For cJSON_ArrayForEach: a value that is not an array walks nothing. */
static const cJSON *only_array(const cJSON *a)
{
    return cJSON_IsArray(a) ? a : NULL;
}

static int64_t iso_time(const char *s)
{
    int64_t t;
    if (s && capture_parse_time(s, strlen(s), &t) == CAIRN_OK)
        return t;
    return CAIRN_NO_TIME;
}

static char *arena_str(struct capture_batch *b, const char *s, int *nomem)
{
    if (!s || !*s)
        return NULL;
    char *r = capture_str(b, s, strlen(s));
    if (!r)
        *nomem = 1;
    return r;
}

/* Adds one message after the shared clean-up; drops it when empty. */
static int add_msg(struct capture_batch *b, struct capture_session *s,
                   const char *id, const char *role, const char *text,
                   size_t n, int64_t at)
{
    size_t cl = 0;
    char *content = capture_text(b, text, n, 1, &cl);
    if (!content)
        return CAIRN_NOMEM;
    if (!cl) {
        b->counts.messages_dropped++;
        return CAIRN_OK;
    }
    char *cid = NULL;
    if (id && *id && !(cid = capture_str(b, id, strlen(id))))
        return CAIRN_NOMEM;
    return capture_session_add(b, s, cid, role, content, cl, at);
}

/* ---- claude.ai -------------------------------------------------------- */

static void claude_text(const cJSON *m, unsigned flags, struct buf *out)
{
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(m, "content"), *bl;
    int n = 0;
    cJSON_ArrayForEach(bl, only_array(content)) {
        const char *t = jstr(bl, "type");
        const char *x = jstr(bl, "text");
        if (!t || strcmp(t, "text") != 0 || !x || !*x)
            continue;
        if (n++)
            buf_addc(out, '\n');
        buf_adds(out, x);
    }
    /* Only whitespace from the blocks: fall back to the flat text. */
    size_t i = 0;
    while (i < out->n && strchr(" \t\r\n\v\f", out->p[i]))
        i++;
    if (i == out->n) {
        buf_reset(out);
        const char *x = jstr(m, "text");
        if (x)
            buf_adds(out, x);
    }
    if (flags & CAPTURE_OPT_ATTACHMENTS) {
        const cJSON *atts = cJSON_GetObjectItemCaseSensitive(m, "attachments"), *a;
        cJSON_ArrayForEach(a, only_array(atts)) {
            const char *name = jstr(a, "file_name"), *ext = jstr(a, "extracted_content");
            buf_printf(out, "\n\n[attachment: %s]", name ? name : "");
            if (ext && *ext) {
                buf_addc(out, '\n');
                buf_adds(out, ext);
            }
        }
    }
}

/* The claude.ai active branch as an array of message pointers. */
static const cJSON **claude_branch(const cJSON *msgs, size_t *out_n, int *nomem)
{
    size_t n = (size_t)cJSON_GetArraySize(msgs), k = 0;
    const cJSON **v = NULL, **all = NULL, *m;
    struct capture_map by_id = { NULL, 0, 0 }, parents = { NULL, 0, 0 };
    int linked = 0;
    *out_n = 0;
    if (!n)
        return NULL;
    v = malloc(n * sizeof(*v));
    all = malloc(n * sizeof(*all));
    if (!v || !all)
        goto oom;
    cJSON_ArrayForEach(m, msgs) {
        if (cJSON_GetObjectItemCaseSensitive(m, "parent_message_uuid"))
            linked = 1;
    }
    if (!linked) {
        cJSON_ArrayForEach(m, msgs)
            v[k++] = m;
        free(all);
        *out_n = k;
        return v;
    }
    size_t i = 0;
    cJSON_ArrayForEach(m, msgs) {
        const char *id = jstr(m, "uuid"), *pid = jstr(m, "parent_message_uuid");
        if (id && capture_map_put(&by_id, id, strlen(id), i))
            goto oom;
        if (pid && capture_map_put(&parents, pid, strlen(pid), 1))
            goto oom;
        all[i++] = m;
    }
    /* The newest leaf: max (created_at, index), first one on ties. */
    const cJSON *leaf = NULL;
    const char *best_at = NULL;
    double best_idx = -1;
    for (i = 0; i < n; i++) {
        const char *id = jstr(all[i], "uuid");
        size_t dummy;
        if (id && capture_map_get(&parents, id, strlen(id), &dummy))
            continue;
        const char *at = jstr(all[i], "created_at");
        if (!at)
            at = "";
        const cJSON *ix = cJSON_GetObjectItemCaseSensitive(all[i], "index");
        double idx = cJSON_IsNumber(ix) ? ix->valuedouble : -1;
        int c = best_at ? strcmp(at, best_at) : 1;
        if (!leaf || c > 0 || (c == 0 && idx > best_idx)) {
            leaf = all[i];
            best_at = at;
            best_idx = idx;
        }
    }
    /* Walk to the root (path written backwards into v, then reversed). */
    unsigned char *seen = calloc(n, 1);
    if (!seen)
        goto oom;
    k = 0;
    while (leaf && k < n) {
        const char *id = jstr(leaf, "uuid");
        size_t at_i;
        if (!id || !capture_map_get(&by_id, id, strlen(id), &at_i)) {
            v[k++] = leaf;     /* no uuid: cannot have a parent walk */
            break;
        }
        if (seen[at_i])
            break;
        seen[at_i] = 1;
        v[k++] = leaf;
        const char *pid = jstr(leaf, "parent_message_uuid");
        size_t pi;
        leaf = pid && capture_map_get(&by_id, pid, strlen(pid), &pi)
               ? all[pi] : NULL;
    }
    free(seen);
    free(all);
    for (i = 0; i < k / 2; i++) {
        const cJSON *t = v[i];
        v[i] = v[k - 1 - i];
        v[k - 1 - i] = t;
    }
    capture_map_free(&by_id);
    capture_map_free(&parents);
    *out_n = k;
    return v;
oom:
    *nomem = 1;
    free(v);
    free(all);
    capture_map_free(&by_id);
    capture_map_free(&parents);
    return NULL;
}

static int claude_conv(struct capture_batch *b, const cJSON *c, unsigned flags)
{
    const cJSON *msgs = cJSON_GetObjectItemCaseSensitive(c, "chat_messages");
    int nomem = 0, rc = CAIRN_OK;
    size_t n = 0;
    const cJSON **path = NULL;
    struct buf text;
    buf_init(&text, CAPTURE_MAX_LINE);
    if (!cJSON_IsArray(msgs)) {
        b->counts.skipped_wrong_type++;
        goto out;
    }
    path = claude_branch(msgs, &n, &nomem);
    if (nomem) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    struct capture_session *s = capture_session_new(b);
    if (!s) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    s->s.source = "claude.ai";
    s->s.id = arena_str(b, jstr(c, "uuid"), &nomem);
    s->s.title = arena_str(b, jstr(c, "name"), &nomem);
    b->counts.messages_dropped += (size_t)cJSON_GetArraySize(msgs) - n;
    for (size_t i = 0; i < n && rc == CAIRN_OK; i++) {
        const cJSON *m = path[i];
        const char *sender = jstr(m, "sender"), *role = NULL;
        if (sender && strcmp(sender, "human") == 0)
            role = "user";
        else if (sender && strcmp(sender, "assistant") == 0)
            role = "assistant";
        if (!role) {
            b->counts.messages_dropped++;
            continue;
        }
        buf_reset(&text);
        claude_text(m, flags, &text);
        if (text.err) {
            rc = text.err == BUF_NOMEM ? CAIRN_NOMEM : CAIRN_OK;
            b->counts.skipped_too_long += text.err == BUF_TOOBIG;
            buf_release(&text);
            continue;
        }
        rc = add_msg(b, s, jstr(m, "uuid"), role, text.p, text.n,
                     iso_time(jstr(m, "created_at")));
    }
    if (nomem)
        rc = CAIRN_NOMEM;
    if (rc == CAIRN_OK && !b->v[b->n - 1].n_msgs)
        capture_session_drop_last(b);
out:
    free(path);
    buf_release(&text);
    return rc;
}

/* ---- ChatGPT ---------------------------------------------------------- */

static double num_or(const cJSON *o, const char *k, double dflt)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

/* 1 and text in out when the message is a visible user/assistant reply. */
static int chatgpt_keep(const cJSON *msg, const char **role, struct buf *out)
{
    const cJSON *author = cJSON_GetObjectItemCaseSensitive(msg, "author");
    const char *r = jstr(author, "role");
    if (!r || (strcmp(r, "user") != 0 && strcmp(r, "assistant") != 0))
        return 0;
    const cJSON *meta = cJSON_GetObjectItemCaseSensitive(msg, "metadata");
    const cJSON *hid = cJSON_GetObjectItemCaseSensitive(meta,
                                                        "is_visually_hidden_from_conversation");
    if (cJSON_IsTrue(hid) || num_or(msg, "weight", 1.0) == 0)
        return 0;
    const char *rcp = jstr(msg, "recipient");
    if (strcmp(r, "assistant") == 0 && rcp && strcmp(rcp, "all") != 0)
        return 0;
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    const char *ct = jstr(content, "content_type");
    if (!ct || (strcmp(ct, "text") != 0 && strcmp(ct, "multimodal_text") != 0))
        return 0;
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(content, "parts"), *p;
    int n = 0;
    cJSON_ArrayForEach(p, only_array(parts)) {
        const char *piece = NULL;
        if (cJSON_IsString(p)) {
            piece = p->valuestring;
        } else if (cJSON_IsObject(p)) {
            const char *pt = jstr(p, "content_type");
            if (pt && strcmp(pt, "image_asset_pointer") == 0)
                piece = "[image]";
        }
        if (!piece)
            continue;
        if (n++)
            buf_addc(out, '\n');
        buf_adds(out, piece);
    }
    *role = strcmp(r, "user") == 0 ? "user" : "assistant";
    return 1;
}

static int chatgpt_conv(struct capture_batch *b, const cJSON *c)
{
    const cJSON *mapping = cJSON_GetObjectItemCaseSensitive(c, "mapping"), *node;
    const cJSON **path = NULL, **all = NULL;
    unsigned char *seen = NULL;
    struct capture_map by_id = { NULL, 0, 0 };
    int nomem = 0, rc = CAIRN_OK;
    size_t k = 0, n = 0, i;
    struct buf text;
    buf_init(&text, CAPTURE_MAX_LINE);
    if (!cJSON_IsObject(mapping)) {
        b->counts.skipped_wrong_type++;
        goto out;
    }
    /* cJSON objects are lists: index the nodes once so the walk is linear. */
    cJSON_ArrayForEach(node, mapping)
        n++;
    if (n) {
        path = malloc(n * sizeof(*path));
        all = malloc(n * sizeof(*all));
        seen = calloc(n, 1);
        if (!path || !all || !seen) {
            rc = CAIRN_NOMEM;
            goto out;
        }
    }
    i = 0;
    cJSON_ArrayForEach(node, mapping) {
        all[i] = node;
        if (node->string && capture_map_put(&by_id, node->string, strlen(node->string), i)) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        i++;
    }
    const char *cur = jstr(c, "current_node");
    size_t at_i;
    if (!cur || !capture_map_get(&by_id, cur, strlen(cur), &at_i)) {
        /* no usable current_node: the newest leaf */
        const cJSON *best = NULL;
        double best_t = 0;
        for (i = 0; i < n; i++) {
            const cJSON *ch = cJSON_GetObjectItemCaseSensitive(all[i], "children");
            if (cJSON_GetArraySize(ch) > 0)
                continue;
            double t = num_or(cJSON_GetObjectItemCaseSensitive(all[i], "message"),
                              "create_time", 0);
            if (!best || t > best_t) {
                best = all[i];
                best_t = t;
            }
        }
        cur = best ? best->string : NULL;
    }
    while (cur && capture_map_get(&by_id, cur, strlen(cur), &at_i) && !seen[at_i]) {
        seen[at_i] = 1;
        path[k++] = all[at_i];
        cur = jstr(all[at_i], "parent");
    }
    struct capture_session *s = capture_session_new(b);
    if (!s) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    s->s.source = "chatgpt";
    const char *cid = jstr(c, "conversation_id");
    s->s.id = arena_str(b, cid ? cid : jstr(c, "id"), &nomem);
    s->s.title = arena_str(b, jstr(c, "title"), &nomem);
    const char *model = jstr(c, "default_model_slug");
    if (model) {
        struct buf meta;
        buf_init(&meta, 0);
        buf_adds(&meta, "{\"model\":");
        buf_add_json_str(&meta, model, strlen(model));
        buf_addc(&meta, '}');
        s->s.meta = meta.err ? NULL : capture_strndup(b, meta.p, meta.n);
        if (!s->s.meta)
            nomem = 1;
        buf_release(&meta);
    }
    for (i = k; i-- > 0 && rc == CAIRN_OK;) {
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(path[i], "message");
        const char *role = NULL;
        if (!cJSON_IsObject(msg))
            continue;
        buf_reset(&text);
        if (!chatgpt_keep(msg, &role, &text)) {
            b->counts.messages_dropped++;
            continue;
        }
        if (text.err) {
            rc = text.err == BUF_NOMEM ? CAIRN_NOMEM : CAIRN_OK;
            b->counts.skipped_too_long += text.err == BUF_TOOBIG;
            buf_release(&text);
            continue;
        }
        double ct = num_or(msg, "create_time", NAN);
        int64_t at = isfinite(ct) && ct > -1e15 && ct < 1e15 ? (int64_t)floor(ct)
                                                             : CAIRN_NO_TIME;
        const char *mid = jstr(msg, "id");
        rc = add_msg(b, s, mid ? mid : jstr(path[i], "id"), role, text.p, text.n, at);
    }
    if (nomem)
        rc = CAIRN_NOMEM;
    if (rc == CAIRN_OK && !b->v[b->n - 1].n_msgs)
        capture_session_drop_last(b);
out:
    free(path);
    free(all);
    free(seen);
    capture_map_free(&by_id);
    buf_release(&text);
    return rc;
}

/* ---- the array walk shared by both --------------------------------------- */

typedef int (*conv_fn)(struct capture_batch *, const cJSON *, unsigned);

static int claude_conv_cb(struct capture_batch *b, const cJSON *c, unsigned flags)
{
    return claude_conv(b, c, flags);
}

static int chatgpt_conv_cb(struct capture_batch *b, const cJSON *c, unsigned flags)
{
    return chatgpt_conv(b, c);
}

static int one_conv(struct capture_batch *b, const char *p, size_t n,
                    conv_fn fn, unsigned flags)
{
    b->counts.lines_total++;
    if (n > CAPTURE_MAX_LINE) {
        b->counts.skipped_too_long++;
        return CAIRN_OK;
    }
    cJSON *c = json_parse(p, n, NULL);
    if (!c) {
        b->counts.skipped_bad_json++;
        return CAIRN_OK;
    }
    int rc = CAIRN_OK;
    if (cJSON_IsObject(c))
        rc = fn(b, c, flags);
    else
        b->counts.skipped_wrong_type++;
    cJSON_Delete(c);
    return rc;
}

static int walk_export(const char *json, size_t len, unsigned flags,
                       struct capture_batch *b, conv_fn fn)
{
    const char *p = json, *end = json + len;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    while (p < end && strchr(" \t\r\n", *p) && *p)
        p++;
    if (p == end)
        return CAIRN_INVALID;
    if (*p == '{') {
        struct capture_jval v;
        const char *q = capture_json_skip(p, end, &v);
        if (!q) {
            b->counts.lines_total++;
            b->counts.skipped_bad_json++;
            return CAIRN_INVALID;
        }
        return one_conv(b, v.p, v.n, fn, flags);
    }
    if (*p != '[')
        return CAIRN_INVALID;
    struct capture_jiter it;
    struct capture_jval v;
    int r, rc = CAIRN_OK;
    capture_jiter_init(&it, p, end);
    while (rc == CAIRN_OK && (r = capture_jiter_next(&it, NULL, &v)) == 1) {
        if (v.kind != '{') {
            b->counts.lines_total++;
            b->counts.skipped_wrong_type++;
            continue;
        }
        rc = one_conv(b, v.p, v.n, fn, flags);
    }
    if (rc == CAIRN_OK && r < 0) {
        /* A truncated or damaged tail: what came before is kept. */
        b->counts.lines_total++;
        b->counts.skipped_bad_json++;
    }
    return rc;
}

int capture_claude_ai(const char *json, size_t len, unsigned flags,
                      struct capture_batch *out)
{
    return walk_export(json, len, flags, out, claude_conv_cb);
}

int capture_chatgpt(const char *json, size_t len, unsigned flags,
                    struct capture_batch *out)
{
    return walk_export(json, len, flags, out, chatgpt_conv_cb);
}
