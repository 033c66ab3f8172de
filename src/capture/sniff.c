/*
 * sniff.c: which kind of file is this? (capture_sniff)
 *
 * Asked only when a file gave no session as the kind the user named: a
 * ChatGPT export read as claude.ai (or a Claude Code transcript as an
 * export) used to be "imported" with nothing in it, which told the user
 * nothing. The answer lets the importer say what the file looks like and
 * which import reads it.
 *
 * Each kind is known by a field only it has: ChatGPT's conversations
 * carry `mapping`/`current_node`, claude.ai's `chat_messages`, Claude
 * Code's records `sessionId`/`parentUuid`/`leafUuid`, Codex rollouts a
 * `payload` under one of their record types (or, in the legacy shape, a
 * first line with `instructions`, a `record_type`, bare Responses items),
 * cairn's own sessions `messages`, aider's log its header line. Only the
 * first values are looked at (SNIFF_VALUES objects): a file whose first
 * ones say nothing is not worth naming.
 */
#include <string.h>

#include "capture/capture.h"

#define SNIFF_VALUES 64

/* What one object's top-level members say. */
struct obj_keys {
    int mapping, chat_messages, cc_link, payload, codex_legacy, messages, uuid;
    struct capture_jval type;
};

static int type_is_any(const struct capture_jval *t, const char *const *names, size_t n)
{
    for (size_t i = 0; t->p && i < n; i++)
        if (capture_jval_is(t, names[i]))
            return 1;
    return 0;
}

static int classify(const struct obj_keys *k)
{
    static const char *const codex_types[] = {
        "session_meta", "response_item", "event_msg", "turn_context", "compacted",
    };
    static const char *const codex_items[] = {
        "message", "reasoning", "function_call", "function_call_output",
        "local_shell_call", "custom_tool_call", "custom_tool_call_output",
    };
    if (k->mapping)
        return CAIRN_IMPORT_CHATGPT;
    if (k->chat_messages)
        return CAIRN_IMPORT_CLAUDE_AI;
    if (k->cc_link)
        return CAIRN_IMPORT_CLAUDE_CODE;
    if (k->payload && type_is_any(&k->type, codex_types, sizeof codex_types / sizeof *codex_types))
        return CAIRN_IMPORT_CODEX;
    if (k->codex_legacy ||
        (!k->uuid && type_is_any(&k->type, codex_items, sizeof codex_items / sizeof *codex_items)))
        return CAIRN_IMPORT_CODEX;
    if (k->messages)
        return CAIRN_IMPORT_JSONL;
    return 0;
}

/* The kind the object at p (its '{') looks like, or 0, from the members
 * read before the end or the first malformed byte. *next gets the byte
 * past the object, NULL when it is malformed. */
static int sniff_object(const char *p, const char *end, const char **next)
{
    struct capture_jiter it;
    struct capture_jval key, val;
    struct obj_keys k;
    int r;
    memset(&k, 0, sizeof k);
    capture_jiter_init(&it, p, end);
    while ((r = capture_jiter_next(&it, &key, &val)) == 1) {
        if (capture_jval_is(&key, "mapping") || capture_jval_is(&key, "current_node"))
            k.mapping = 1;
        else if (capture_jval_is(&key, "chat_messages"))
            k.chat_messages = 1;
        else if (capture_jval_is(&key, "sessionId") || capture_jval_is(&key, "parentUuid") ||
                 capture_jval_is(&key, "leafUuid"))
            k.cc_link = 1;
        else if (capture_jval_is(&key, "payload"))
            k.payload = 1;
        else if (capture_jval_is(&key, "instructions") || capture_jval_is(&key, "record_type"))
            k.codex_legacy = 1;
        else if (capture_jval_is(&key, "messages") && val.kind == '[')
            k.messages = 1;
        else if (capture_jval_is(&key, "uuid"))
            k.uuid = 1;
        else if (capture_jval_is(&key, "type") && val.kind == '"')
            k.type = val;
    }
    if (next)
        *next = r == 0 ? it.p : NULL;
    return classify(&k);
}

/* The kind the first elements of the array at p look like. An export is
 * one array: its elements are read in place, and a first conversation cut
 * short (a truncated download) still counts for what was read of it. */
static int sniff_array(const char *p, const char *end)
{
    int kind = 0;
    p++;                                    /* the '[' */
    for (int i = 0; !kind && i < SNIFF_VALUES; i++) {
        const char *next;
        p = capture_skip_ws(p, end);
        if (p >= end || *p == ']')
            break;
        if (*p == '{')
            kind = sniff_object(p, end, &next);
        else
            next = capture_json_skip(p, end, NULL);
        if (!next)
            break;
        p = capture_skip_ws(next, end);
        if (p >= end || *p != ',')
            break;
        p++;
    }
    return kind;
}

static int is_aider(const char *p, const char *end)
{
    static const char head[] = "# aider chat started at";
    return (size_t)(end - p) >= sizeof head - 1 && !memcmp(p, head, sizeof head - 1);
}

int capture_sniff(const char *data, size_t len)
{
    if (!data)
        return 0;
    const char *p = data, *end = data + len;
    int kind = 0;
    if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))   /* a byte order mark */
        p += 3;
    p = capture_skip_ws(p, end);
    if (is_aider(p, end))
        return CAIRN_IMPORT_AIDER;
    if (p < end && *p == '[')
        return sniff_array(p, end);
    /* One object (a single conversation) or one a line (JSONL): the
     * objects in order, a malformed line skipped to the next. */
    for (int i = 0; !kind && i < SNIFF_VALUES && (p = capture_skip_ws(p, end)) < end; i++) {
        const char *next = NULL;
        if (*p == '{')
            kind = sniff_object(p, end, &next);
        if (!next) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            if (!nl)
                break;
            next = nl + 1;
        }
        p = next;
    }
    return kind;
}
