/*
 * claude_code.c: Claude Code transcripts (JSONL) into sessions. The
 * helpers every capture parser shares (arena, JSON scanner, string map,
 * text clean-up, ISO 8601 times, file reader) are in runtime.c.
 *
 * The transcript format is internal to Claude Code and changes between
 * versions (shared/docs/protocols.md §3), so the parser follows the
 * reference extractor (extract_turns.py) and is defensive everywhere:
 *
 *  1. Each line is scanned once by a small validating JSON scanner that
 *     pulls out only the top-level fields needed for branch links (type,
 *     uuid, parentUuid, logicalParentUuid, isSidechain). Most of a real
 *     transcript's bytes are records that never hold conversation text
 *     (progress, tool results, tool calls, snapshots); they are never
 *     given to cJSON, but they stay in the parent graph because the chain
 *     of parentUuid runs through them.
 *  2. The active branch is the last non-sidechain user/assistant record
 *     walked back by parentUuid (logicalParentUuid across compaction
 *     boundaries) to the root.
 *  3. Only the records on that branch that can hold text (human prompts,
 *     assistant records with a text block, queued_command attachments) are
 *     parsed with cJSON and filtered: meta, compaction summaries, harness
 *     wrappers, tool results, thinking and synthetic replies are dropped;
 *     consecutive records of one API message (same message.id) are merged.
 */
#include "capture/capture.h"
#include "util/buf.h"
#include "util/json.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

/* ======================================================================
 * Claude Code
 * ==================================================================== */

enum cc_kind { CC_OTHER = 0, CC_USER, CC_ASSISTANT, CC_QUEUED };

/* One record with a uuid (or a user/assistant record), for the graph. */
struct cc_node {
    size_t off, len;          /* the line in data */
    const char *uuid, *parent;
    size_t uuid_n, parent_n;  /* parent: parentUuid, else logicalParentUuid */
    unsigned char kind, sidechain, candidate, visited;
};

struct cc_nodes {
    struct cc_node *v;
    size_t n, alloc;
};

static const char *const cc_known_types[] = {
    "user", "assistant", "attachment", "system", "summary", "progress",
    "file-history-snapshot", "queue-operation", "mode", "permission-mode",
    "custom-title", "ai-title", "last-prompt", "atis-latch", "tools-used",
    "cost-state", "api-request", "api-request-shape", "api-request-blob",
    "worktree-state", "pr-link", "agent-name", "tag",
};

/* User-role text the harness wrote, not the human (matched at the start). */
static const char *const cc_harness_prefixes[] = {
    "<command-name>", "<command-message>", "<command-args>",
    "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>",
    "Caveat: The messages below were generated",
    "<bash-input>", "<bash-stdout>", "<bash-stderr>",
    "<task-notification>", "<user-memory-input>",
    "[Request interrupted by user", "Stop hook feedback:",
    "This session is being continued from a previous conversation",
};

static int known_type(const struct capture_jval *t)
{
    for (size_t i = 0; i < sizeof(cc_known_types) / sizeof(cc_known_types[0]); i++)
        if (capture_jval_is(t, cc_known_types[i]))
            return 1;
    return 0;
}

/* Finds the value of `key` in object value obj; 1 if found. */
static int jobj_get(const struct capture_jval *obj, const char *key, struct capture_jval *out)
{
    struct capture_jiter it;
    struct capture_jval k, v;
    if (obj->kind != '{')
        return 0;
    capture_jiter_init(&it, obj->p, obj->p + obj->n);
    while (capture_jiter_next(&it, &k, &v) == 1) {
        if (capture_jval_is(&k, key)) {
            *out = v;
            return 1;
        }
    }
    return 0;
}

/*
 * Whether a user/assistant record may hold text we keep, judged from its
 * message.content without a full parse: user records with a tool_result
 * block never do; assistant records need a text block (or string content).
 */
static int cc_maybe_text(const struct capture_jval *msg, int assistant)
{
    struct capture_jval content, el, k, v;
    if (!jobj_get(msg, "content", &content))
        return 0;
    if (content.kind == '"')
        return 1;
    if (content.kind != '[')
        return 0;
    struct capture_jiter it;
    int has_text = 0;
    capture_jiter_init(&it, content.p, content.p + content.n);
    while (capture_jiter_next(&it, NULL, &el) == 1) {
        if (el.kind == '"') {
            has_text = 1;
            continue;
        }
        if (el.kind != '{')
            continue;
        struct capture_jiter bt;
        capture_jiter_init(&bt, el.p, el.p + el.n);
        while (capture_jiter_next(&bt, &k, &v) == 1) {
            if (!capture_jval_is(&k, "type"))
                continue;
            if (capture_jval_is(&v, "tool_result") && !assistant)
                return 0;
            if (capture_jval_is(&v, "text"))
                has_text = 1;
            break;
        }
    }
    return assistant ? has_text : 1;
}

static int cc_truthy(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        return 0;
    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    if (cJSON_IsNumber(v))
        return v->valuedouble != 0;
    if (cJSON_IsString(v))
        return v->valuestring[0] != '\0';
    if (cJSON_IsArray(v) || cJSON_IsObject(v))
        return v->child != NULL;
    return 0;
}

static const char *cc_str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Appends the text blocks of content (string, or array of blocks) joined
 * by "\n", Python-style: a non-object element counts as a text block.
 * Returns -1 if a tool_result block is present (when refuse_tool_result),
 * else the number of text blocks. */
static int cc_join_text(const cJSON *content, struct buf *out, int refuse_tool_result,
                        size_t *wrong_type)
{
    int n = 0;
    if (cJSON_IsString(content)) {
        buf_adds(out, content->valuestring);
        return 1;
    }
    if (!cJSON_IsArray(content))
        return 0;
    const cJSON *b;
    if (refuse_tool_result) {
        cJSON_ArrayForEach(b, content) {
            if (cJSON_IsObject(b)) {
                const char *t = cc_str(b, "type");
                if (t && strcmp(t, "tool_result") == 0)
                    return -1;
            }
        }
    }
    cJSON_ArrayForEach(b, content) {
        const char *text = NULL;
        if (cJSON_IsString(b)) {
            text = b->valuestring;
        } else if (cJSON_IsObject(b)) {
            const char *t = cc_str(b, "type");
            if (!t || strcmp(t, "text") != 0)
                continue;
            const cJSON *tv = cJSON_GetObjectItemCaseSensitive(b, "text");
            if (cJSON_IsString(tv))
                text = tv->valuestring;
            else if (tv)
                (*wrong_type)++;
            if (!text)
                text = "";
        } else {
            continue;
        }
        if (n)
            buf_addc(out, '\n');
        buf_adds(out, text);
        n++;
    }
    return n;
}

/* Removes <system-reminder>...</system-reminder> blocks (an unclosed one
 * drops the rest), then trims. Result in out. */
static void cc_strip_reminders(const char *s, size_t n, struct buf *out)
{
    static const char open_tag[] = "<system-reminder>", close_tag[] = "</system-reminder>";
    const char *p = s, *end = s + n;
    for (;;) {
        const char *j = memmem(p, (size_t)(end - p), open_tag, sizeof(open_tag) - 1);
        if (!j) {
            buf_add(out, p, (size_t)(end - p));
            break;
        }
        buf_add(out, p, (size_t)(j - p));
        const char *k = memmem(j, (size_t)(end - j), close_tag, sizeof(close_tag) - 1);
        if (!k)
            break;
        p = k + sizeof(close_tag) - 1;
    }
}

static int cc_harness(const char *s, size_t n)
{
    while (n && capture_is_ws(*s)) {
        s++;
        n--;
    }
    for (size_t i = 0; i < sizeof(cc_harness_prefixes) / sizeof(cc_harness_prefixes[0]); i++) {
        size_t pl = strlen(cc_harness_prefixes[i]);
        if (n >= pl && memcmp(s, cc_harness_prefixes[i], pl) == 0)
            return 1;
    }
    return 0;
}

static void trim_span(const char **s, size_t *n)
{
    while (*n && capture_is_ws(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n && capture_is_ws((*s)[*n - 1]))
        (*n)--;
}

/* The message being built on the active branch. */
struct cc_item {
    int active;
    int assistant;
    size_t last_off;          /* largest line offset merged into it */
    struct buf text, id, mid; /* mid: message.id for merging */
    int64_t at;
};

struct cc_ctx {
    struct capture_batch *b;
    struct capture_session *s;
    size_t sess_index;
    uint64_t from;
    struct capture_map ids;   /* ids used in this session */
    struct buf sid, cwd, branch, version;
    int rc;
};

static void cc_keep_meta(struct cc_ctx *c, const cJSON *e)
{
    static const struct { const char *k; size_t off; } fields[] = {
        { "sessionId", offsetof(struct cc_ctx, sid) },
        { "cwd", offsetof(struct cc_ctx, cwd) },
        { "gitBranch", offsetof(struct cc_ctx, branch) },
        { "version", offsetof(struct cc_ctx, version) },
    };
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        const char *v = cc_str(e, fields[i].k);
        if (!v || !*v)
            continue;
        struct buf *bf = (struct buf *)((char *)c + fields[i].off);
        buf_reset(bf);
        buf_adds(bf, v);
    }
}

/* Emits the finished item into the session. */
static void cc_flush(struct cc_ctx *c, struct cc_item *it)
{
    if (!it->active || c->rc)
        goto done;
    if (it->last_off < c->from || it->text.err || it->id.err)
        goto done;
    struct capture_batch *b = c->b;
    size_t n = 0;
    char *text = capture_text(b, it->text.p, it->text.n, 1, &n);
    if (!text) {
        c->rc = CAIRN_NOMEM;
        goto done;
    }
    if (!n) {
        b->counts.messages_dropped++;
        goto done;
    }
    if (!c->s) {
        c->s = capture_session_new(b);
        if (!c->s) {
            c->rc = CAIRN_NOMEM;
            goto done;
        }
        c->sess_index = b->n - 1;
    }
    char *id = NULL;
    if (it->id.n) {
        /* An id repeated inside one session (a reply split around a
         * queued prompt) gets a "#2", "#3" suffix so both parts land. */
        size_t dummy, k = 1;
        size_t base = it->id.n;
        while (capture_map_get(&c->ids, it->id.p, it->id.n, &dummy)) {
            buf_truncate(&it->id, base);
            buf_printf(&it->id, "#%zu", ++k);
        }
        id = capture_str(b, it->id.p, it->id.n);
        if (!id || capture_map_put(&c->ids, id, strlen(id), 1)) {
            c->rc = CAIRN_NOMEM;
            goto done;
        }
    }
    if (capture_session_add(b, c->s, id, it->assistant ? "assistant" : "user",
                            text, n, it->at))
        c->rc = CAIRN_NOMEM;
done:
    it->active = 0;
    buf_reset(&it->text);
    buf_reset(&it->id);
    buf_reset(&it->mid);
}

static void cc_start(struct cc_item *it, int assistant, const char *id,
                     const char *mid, const char *ts, size_t off)
{
    it->active = 1;
    it->assistant = assistant;
    it->last_off = off;
    if (id)
        buf_adds(&it->id, id);
    if (mid)
        buf_adds(&it->mid, mid);
    it->at = CAIRN_NO_TIME;
    if (ts) {
        int64_t t;
        if (capture_parse_time(ts, strlen(ts), &t) == CAIRN_OK)
            it->at = t;
    }
}

/* Handles one record of the active branch (fully parsed). */
static void cc_record(struct cc_ctx *c, struct cc_item *it, const struct cc_node *nd,
                      const cJSON *e, struct buf *tmp, struct buf *tmp2)
{
    struct capture_batch *b = c->b;
    const char *uuid = cc_str(e, "uuid");
    const char *ts = cc_str(e, "timestamp");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(e, "message");
    buf_reset(tmp);
    buf_reset(tmp2);
    cc_keep_meta(c, e);

    if (nd->kind == CC_USER) {
        if (cc_truthy(e, "isMeta") || cc_truthy(e, "isCompactSummary") ||
            cc_truthy(e, "isVisibleInTranscriptOnly"))
            goto dropped;
        if (msg && !cJSON_IsObject(msg)) {
            b->counts.skipped_wrong_type++;
            return;
        }
        const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
        if (cc_join_text(content, tmp, 1, &b->counts.skipped_wrong_type) <= 0)
            goto dropped;
        cc_strip_reminders(tmp->p, tmp->n, tmp2);
        const char *s = tmp2->p;
        size_t n = tmp2->n;
        trim_span(&s, &n);
        if (!n || cc_harness(s, n))
            goto dropped;
        cc_flush(c, it);
        cc_start(it, 0, uuid, NULL, ts, nd->off);
        buf_add(&it->text, s, n);
        return;
    }
    if (nd->kind == CC_QUEUED) {
        const cJSON *att = cJSON_GetObjectItemCaseSensitive(e, "attachment");
        const cJSON *prompt = cJSON_GetObjectItemCaseSensitive(att, "prompt");
        if (cc_join_text(prompt, tmp, 0, &b->counts.skipped_wrong_type) <= 0 || !tmp->n)
            goto dropped;
        cc_flush(c, it);
        cc_start(it, 0, uuid, NULL, ts, nd->off);
        buf_add(&it->text, tmp->p, tmp->n);
        return;
    }
    /* assistant */
    if (!cJSON_IsObject(msg)) {
        b->counts.skipped_wrong_type++;
        return;
    }
    const char *model = cc_str(msg, "model");
    if ((model && strcmp(model, "<synthetic>") == 0) || cc_truthy(e, "isApiErrorMessage"))
        goto dropped;
    const cJSON *content = cJSON_GetObjectItemCaseSensitive(msg, "content");
    if (cc_join_text(content, tmp, 0, &b->counts.skipped_wrong_type) <= 0)
        goto dropped;
    const char *s = tmp->p;
    size_t n = tmp->n;
    trim_span(&s, &n);
    if (!n)
        goto dropped;
    const char *mid = cc_str(msg, "id");
    if (it->active && it->assistant && mid && *mid && it->mid.n == strlen(mid) &&
        memcmp(it->mid.p, mid, it->mid.n) == 0) {
        /* the same API message written over several records */
        buf_addc(&it->text, '\n');
        buf_add(&it->text, s, n);
        if (nd->off > it->last_off)
            it->last_off = nd->off;
        return;
    }
    cc_flush(c, it);
    cc_start(it, 1, mid && *mid ? mid : uuid, mid, ts, nd->off);
    buf_add(&it->text, s, n);
    return;
dropped:
    b->counts.messages_dropped++;
}

/* Title from the last custom-title (else ai-title) record. */
static const char *cc_title(struct capture_batch *b, const char *data,
                            const struct cc_node *custom, const struct cc_node *ai)
{
    const struct cc_node *nd = custom ? custom : ai;
    if (!nd)
        return NULL;
    cJSON *e = json_parse(data + nd->off, nd->len, NULL);
    const char *r = NULL;
    const char *t = e ? cc_str(e, custom ? "customTitle" : "aiTitle") : NULL;
    if (t && *t)
        r = capture_text(b, t, strlen(t), 1, NULL);
    cJSON_Delete(e);
    return r;
}

int capture_claude_code(const char *data, size_t len, uint64_t from,
                        const char *default_id, unsigned flags,
                        struct capture_batch *out, uint64_t *next_off)
{
    struct capture_counts *cn = &out->counts;
    struct cc_nodes nodes = { NULL, 0, 0 };
    struct capture_map by_uuid = { NULL, 0, 0 };
    struct cc_node title_custom, title_ai;
    int have_custom = 0, have_ai = 0;
    memset(&title_custom, 0, sizeof(title_custom));
    memset(&title_ai, 0, sizeof(title_ai));
    size_t *chain = NULL, n_chain = 0;
    struct cc_item item;
    struct cc_ctx c;
    struct buf tmp, tmp2;
    int rc = CAIRN_OK;
    size_t pos = 0, complete_end = 0;

    memset(&item, 0, sizeof(item));
    memset(&c, 0, sizeof(c));
    buf_init(&item.text, CAPTURE_MAX_LINE);
    buf_init(&item.id, 4096);
    buf_init(&item.mid, 4096);
    buf_init(&c.sid, 4096);
    buf_init(&c.cwd, 65536);
    buf_init(&c.branch, 4096);
    buf_init(&c.version, 4096);
    buf_init(&tmp, CAPTURE_MAX_LINE);
    buf_init(&tmp2, CAPTURE_MAX_LINE);

    /* Pass 1: scan every line; build the parent graph. */
    while (pos < len) {
        const char *line = data + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t ll = nl ? (size_t)(nl - line) : len - pos;
        size_t off = pos;
        pos += ll + (nl ? 1 : 0);
        if (nl)
            complete_end = pos;
        cn->lines_total++;
        if (ll > CAPTURE_MAX_LINE) {
            cn->skipped_too_long++;
            continue;
        }
        const char *p = capture_skip_ws(line, line + ll), *end = line + ll;
        while (end > p && capture_is_ws(end[-1]))
            end--;
        if (p == end) {
            cn->lines_blank++;
            continue;
        }
        if (*p != '{') {
            struct capture_jval v;
            const char *q = capture_json_skip(p, end, &v);
            if (q && capture_skip_ws(q, end) == end)
                cn->skipped_wrong_type++;
            else
                cn->skipped_bad_json++;
            continue;
        }
        struct capture_jiter it;
        struct capture_jval k, v, type = { NULL, 0, 0 }, msg = { NULL, 0, 0 },
                                  att = { NULL, 0, 0 };
        struct cc_node nd;
        memset(&nd, 0, sizeof(nd));
        const char *lparent = NULL;
        size_t lparent_n = 0;
        int r;
        capture_jiter_init(&it, p, end);
        while ((r = capture_jiter_next(&it, &k, &v)) == 1) {
            if (k.n < 4 || k.n > 17)
                continue;     /* none of the keys below: skip fast */
            if (capture_jval_is(&k, "type"))
                type = v;
            else if (capture_jval_is(&k, "uuid") && v.kind == '"') {
                nd.uuid = v.p;
                nd.uuid_n = v.n;
            } else if (capture_jval_is(&k, "parentUuid") && v.kind == '"') {
                nd.parent = v.p;
                nd.parent_n = v.n;
            } else if (capture_jval_is(&k, "logicalParentUuid") && v.kind == '"') {
                lparent = v.p;
                lparent_n = v.n;
            } else if (capture_jval_is(&k, "isSidechain"))
                nd.sidechain = v.kind == 't';
            else if (capture_jval_is(&k, "message"))
                msg = v;
            else if (capture_jval_is(&k, "attachment"))
                att = v;
        }
        if (r < 0 || capture_skip_ws(it.p, end) != end) {
            cn->skipped_bad_json++;
            continue;
        }
        if (!nd.parent_n && lparent_n) {
            nd.parent = lparent;
            nd.parent_n = lparent_n;
        }
        if (!nd.parent_n)
            nd.parent = NULL;
        if (nd.uuid && !nd.uuid_n)
            nd.uuid = NULL;   /* "" is no uuid (Python's falsy lookup) */
        nd.off = off;
        nd.len = (size_t)(end - line);
        if (type.kind != '"') {
            if (type.p)
                cn->skipped_wrong_type++;
            else
                cn->skipped_unknown_type++;
        } else if (capture_jval_is(&type, "user") || capture_jval_is(&type, "assistant")) {
            int a = type.n == 9;
            nd.kind = a ? CC_ASSISTANT : CC_USER;
            if (msg.p && msg.kind != '{')
                cn->skipped_wrong_type++;
            else
                nd.candidate = msg.p && cc_maybe_text(&msg, a);
        } else if (capture_jval_is(&type, "attachment")) {
            struct capture_jval at;
            if (att.kind == '{' && jobj_get(&att, "type", &at) &&
                capture_jval_is(&at, "queued_command")) {
                nd.kind = CC_QUEUED;
                nd.candidate = 1;
            } else {
                cn->lines_ignored++;
            }
        } else if (known_type(&type)) {
            cn->lines_ignored++;
            if (capture_jval_is(&type, "custom-title")) {
                title_custom = nd;
                have_custom = 1;
            } else if (capture_jval_is(&type, "ai-title")) {
                title_ai = nd;
                have_ai = 1;
            }
        } else {
            cn->skipped_unknown_type++;
        }
        if (!nd.uuid && nd.kind != CC_USER && nd.kind != CC_ASSISTANT)
            continue;
        if (nodes.n == nodes.alloc) {
            size_t na = nodes.alloc ? nodes.alloc * 2 : 256;
            struct cc_node *nv = realloc(nodes.v, na * sizeof(*nv));
            if (!nv) {
                rc = CAIRN_NOMEM;
                goto out;
            }
            nodes.v = nv;
            nodes.alloc = na;
        }
        nodes.v[nodes.n] = nd;
        if (nd.uuid && capture_map_put(&by_uuid, nd.uuid, nd.uuid_n, nodes.n)) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        nodes.n++;
    }
    if (next_off)
        *next_off = complete_end;

    /* Pass 2: the active branch, leaf to root. */
    size_t leaf = (size_t)-1;
    for (size_t i = nodes.n; i-- > 0;) {
        if ((nodes.v[i].kind == CC_USER || nodes.v[i].kind == CC_ASSISTANT) &&
            !nodes.v[i].sidechain) {
            leaf = i;
            break;
        }
    }
    if (leaf == (size_t)-1)
        goto out;
    chain = malloc(nodes.n * sizeof(*chain));
    if (!chain) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    for (size_t cur = leaf; cur != (size_t)-1 && !nodes.v[cur].visited;) {
        struct cc_node *nd = &nodes.v[cur];
        nd->visited = 1;
        chain[n_chain++] = cur;
        size_t next;
        if (nd->parent && capture_map_get(&by_uuid, nd->parent, nd->parent_n, &next))
            cur = next;
        else
            cur = (size_t)-1;
    }

    /* Pass 3: root to leaf, parse the records that may hold text. */
    c.b = out;
    c.from = from;
    for (size_t i = n_chain; i-- > 0 && !c.rc;) {
        const struct cc_node *nd = &nodes.v[chain[i]];
        if (nd->sidechain || !nd->candidate)
            continue;
        cJSON *e = json_parse(data + nd->off, nd->len, NULL);
        if (!e) {
            /* the scanner accepted what cJSON refuses (deep nesting...) */
            cn->skipped_bad_json++;
            continue;
        }
        cc_record(&c, &item, nd, e, &tmp, &tmp2);
        cJSON_Delete(e);
    }
    cc_flush(&c, &item);
    if (c.rc) {
        rc = c.rc;
        goto out;
    }
    if (!c.s)
        goto out;
    /* Fill in the session (c.s may have moved: use the index). */
    struct capture_session *s = &out->v[c.sess_index];
    s->s.source = "claude-code";
    if (c.sid.n)
        s->s.id = capture_str(out, c.sid.p, c.sid.n);
    else if (default_id)
        s->s.id = capture_str(out, default_id, strlen(default_id));
    if (c.cwd.n)
        s->s.project = capture_str(out, c.cwd.p, c.cwd.n);
    s->s.title = cc_title(out, data, have_custom ? &title_custom : NULL,
                          have_ai ? &title_ai : NULL);
    struct buf meta;
    buf_init(&meta, 0);
    buf_addc(&meta, '{');
    if (c.cwd.n) {
        buf_adds(&meta, "\"cwd\":");
        buf_add_json_str(&meta, c.cwd.p, c.cwd.n);
    }
    if (c.branch.n) {
        buf_adds(&meta, meta.n > 1 ? ",\"gitBranch\":" : "\"gitBranch\":");
        buf_add_json_str(&meta, c.branch.p, c.branch.n);
    }
    if (c.version.n) {
        buf_adds(&meta, meta.n > 1 ? ",\"version\":" : "\"version\":");
        buf_add_json_str(&meta, c.version.p, c.version.n);
    }
    buf_addc(&meta, '}');
    if (!meta.err)
        s->s.meta = capture_strndup(out, meta.p, meta.n);
    buf_release(&meta);
    if (!s->s.meta || (c.sid.n && !s->s.id))
        rc = CAIRN_NOMEM;
out:
    free(chain);
    free(nodes.v);
    capture_map_free(&by_uuid);
    capture_map_free(&c.ids);
    buf_release(&item.text);
    buf_release(&item.id);
    buf_release(&item.mid);
    buf_release(&c.sid);
    buf_release(&c.cwd);
    buf_release(&c.branch);
    buf_release(&c.version);
    buf_release(&tmp);
    buf_release(&tmp2);
    (void)flags;
    return rc;
}
