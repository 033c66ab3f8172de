/*
 * load_locomo.c: LoCoMo (locomo10.json: a JSON list of samples), one
 * sample = one conversation = one store.
 *
 * Choices, after /work/shared/data/README.md:
 *  - Sessions are driven by the `session_<N>` keys, in numeric order (some
 *    samples carry date keys for sessions that have no turns). A session
 *    with turns but no parseable `session_<N>_date_time` is refused.
 *  - Each turn is a "user" message with speaker = the speaker's name,
 *    message id = dia_id, session id "<sample_id>/S<N>", source "locomo",
 *    project = sample_id, stamped with the session's date.
 *  - A photo turn's content is `text + " [shares a photo: CAPTION]"` (the
 *    blip_caption), so the caption is indexed with the text.
 *  - Evidence strings are split on ';' and whitespace; each piece is
 *    mapped by the regex `D:?(\d+):0*(\d+)` -> `D\1:\2` (counted as
 *    repaired when that changed it); pieces that do not match or name no
 *    turn are dropped and counted; questions left with no evidence are not
 *    scored and counted.
 *  - "now" is the last session's date (LoCoMo has no question dates).
 *  - Category 5 (adversarial) is scored but reported apart from "all".
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "eval.h"
#include "../cli.h"

struct locomo_ctx {
    const char *path;
    struct eval_counts *k;
    eval_conv_fn fn;
    void *arg;
};

/* One resolvable turn: its dia_id and the session holding it. */
struct turn_ref {
    const char *dia_id, *session;
};

static const char *category_name(int cat)
{
    switch (cat) {
    case 1: return "1 multi-hop";
    case 2: return "2 temporal";
    case 3: return "3 open-domain";
    case 4: return "4 single-hop";
    case 5: return "5 adversarial";
    default: return NULL;
    }
}

/* "session_<digits>" exactly: returns N, else -1. */
static long session_number(const char *key)
{
    if (strncmp(key, "session_", 8) || !isdigit((unsigned char)key[8]))
        return -1;
    char *end;
    long v = strtol(key + 8, &end, 10);
    return *end || v < 0 || v > 100000 ? -1 : v;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

/* Maps one evidence piece with `D:?(\d+):0*(\d+)` (whole piece) into out;
 * returns 0 on a match. */
static int canon_dia_id(const char *s, size_t len, char *out, size_t n)
{
    size_t i = 0, a, b, c;
    if (i >= len || s[i++] != 'D')
        return -1;
    if (i < len && s[i] == ':')
        i++;
    a = i;
    while (i < len && isdigit((unsigned char)s[i]))
        i++;
    if (i == a || i >= len || s[i] != ':')
        return -1;
    b = i++;
    while (i + 1 < len && s[i] == '0' && isdigit((unsigned char)s[i + 1]))
        i++;
    c = i;
    while (i < len && isdigit((unsigned char)s[i]))
        i++;
    if (i == c || i != len)
        return -1;
    int w = snprintf(out, n, "D%.*s:%.*s", (int)(b - a), s + a, (int)(len - c), s + c);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

static int add_evidence(struct eval_conv *c, struct eval_counts *k, struct eval_q *q,
                        const cJSON *evs, const struct turn_ref *refs, size_t n_refs)
{
    size_t cap = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, evs) {
        if (cJSON_IsString(e))
            cap += strlen(e->valuestring) / 2 + 1;   /* pieces are >= 2 bytes apart */
    }
    q->ev = eval_calloc(c, cap, sizeof *q->ev);
    if (!q->ev)
        return -1;
    cJSON_ArrayForEach(e, evs) {
        if (!cJSON_IsString(e)) {
            k->ev_ids++;
            k->ev_unresolved++;
            continue;
        }
        const char *p = e->valuestring;
        while (*p) {
            while (*p == ';' || isspace((unsigned char)*p))
                p++;
            if (!*p)
                break;
            const char *s = p;
            while (*p && *p != ';' && !isspace((unsigned char)*p))
                p++;
            size_t len = (size_t)(p - s);
            char id[64];
            k->ev_ids++;
            if (canon_dia_id(s, len, id, sizeof id)) {
                k->ev_unresolved++;
                continue;
            }
            if (strlen(id) != len || memcmp(id, s, len))
                k->ev_repaired++;
            size_t r = 0;
            while (r < n_refs && strcmp(refs[r].dia_id, id))
                r++;
            if (r == n_refs) {
                k->ev_unresolved++;
                continue;
            }
            eval_q_add_ev(q, refs[r].session, refs[r].dia_id);
        }
    }
    return 0;
}

static int load_sample(struct locomo_ctx *x, const cJSON *root, size_t index, struct eval_conv *c)
{
    const cJSON *sid = cJSON_GetObjectItemCaseSensitive(root, "sample_id");
    const cJSON *conv = cJSON_GetObjectItemCaseSensitive(root, "conversation");
    const cJSON *qa = cJSON_GetObjectItemCaseSensitive(root, "qa");
    const cJSON *it;
    long *nums = NULL;
    size_t n_nums = 0, n_refs = 0, n_turns = 0;
    struct turn_ref *refs = NULL;
    int64_t last = CAIRN_NO_TIME;
    if (!cJSON_IsObject(root) || !cJSON_IsString(sid) || !cJSON_IsObject(conv) ||
        !cJSON_IsArray(qa)) {
        cli_error("locomo: %s: element %zu is not a LoCoMo sample (needs sample_id, "
                  "conversation and qa)", x->path, index);
        return 1;
    }
    const char *name = sid->valuestring;
    c->name = eval_strdup(c, name);
    c->msg_ids_unique = 1;
    cJSON_ArrayForEach(it, conv)
        n_nums++;
    nums = eval_calloc(c, n_nums, sizeof *nums);
    if (!nums)
        goto oom;
    n_nums = 0;
    cJSON_ArrayForEach(it, conv) {
        long v = session_number(it->string);
        if (v < 0)
            continue;
        if (!cJSON_IsArray(it)) {
            cli_error("locomo: %s: %s: %s is not a list of turns", x->path, name, it->string);
            return 1;
        }
        nums[n_nums++] = v;
        n_turns += (size_t)cJSON_GetArraySize(it);
    }
    if (!n_nums) {
        cli_error("locomo: %s: %s has no session_<N> lists", x->path, name);
        return 1;
    }
    qsort(nums, n_nums, sizeof *nums, cmp_long);
    refs = eval_calloc(c, n_turns, sizeof *refs);
    if (!refs)
        goto oom;
    for (size_t si = 0; si < n_nums; si++) {
        char key[64];
        snprintf(key, sizeof key, "session_%ld", nums[si]);
        const cJSON *turns = cJSON_GetObjectItemCaseSensitive(conv, key);
        size_t nt = (size_t)cJSON_GetArraySize(turns);
        if (!nt)
            continue;
        snprintf(key, sizeof key, "session_%ld_date_time", nums[si]);
        const cJSON *dt = cJSON_GetObjectItemCaseSensitive(conv, key);
        int64_t at;
        if (!cJSON_IsString(dt) || eval_parse_date(dt->valuestring, &at)) {
            cli_error("locomo: %s: %s: %s is missing or not a date like \"1:56 pm on 8 May, "
                      "2023\"", x->path, name, key);
            return 1;
        }
        struct cairn_session *s = eval_add_session(c);
        struct cairn_message *msgs = eval_calloc(c, nt, sizeof *msgs);
        if (!s || !msgs)
            goto oom;
        s->id = eval_printf(c, "%s/S%ld", name, nums[si]);
        s->source = "locomo";
        s->project = c->name;
        s->started_at = at;
        s->messages = msgs;
        s->n_messages = nt;
        if (last == CAIRN_NO_TIME || at > last)
            last = at;
        size_t ti = 0;
        cJSON_ArrayForEach(it, turns) {
            const cJSON *sp = cJSON_GetObjectItemCaseSensitive(it, "speaker");
            const cJSON *dia = cJSON_GetObjectItemCaseSensitive(it, "dia_id");
            const cJSON *text = cJSON_GetObjectItemCaseSensitive(it, "text");
            const cJSON *cap = cJSON_GetObjectItemCaseSensitive(it, "blip_caption");
            if (!cJSON_IsString(dia) || !cJSON_IsString(sp)) {
                cli_error("locomo: %s: %s: session_%ld turn %zu has no dia_id or speaker",
                          x->path, name, nums[si], ti + 1);
                return 1;
            }
            const char *t = cJSON_IsString(text) ? text->valuestring : "";
            struct cairn_message *m = &msgs[ti++];
            m->id = eval_strdup(c, dia->valuestring);
            m->role = "user";
            m->speaker = eval_strdup(c, sp->valuestring);
            m->at = at;
            if (cJSON_IsString(cap) && *cap->valuestring) {
                x->k->photo_turns++;
                m->content = *t ? eval_printf(c, "%s [shares a photo: %s]", t, cap->valuestring)
                                : eval_printf(c, "[shares a photo: %s]", cap->valuestring);
            } else {
                m->content = eval_strdup(c, t);
            }
            if (c->oom)
                goto oom;
            refs[n_refs].dia_id = m->id;
            refs[n_refs].session = s->id;
            n_refs++;
        }
        x->k->messages += nt;
        x->k->sessions++;
    }
    size_t qi = 0;
    cJSON_ArrayForEach(it, qa) {
        const cJSON *qtext = cJSON_GetObjectItemCaseSensitive(it, "question");
        const cJSON *cat = cJSON_GetObjectItemCaseSensitive(it, "category");
        const cJSON *evs = cJSON_GetObjectItemCaseSensitive(it, "evidence");
        const char *cname = cJSON_IsNumber(cat) ? category_name(cat->valueint) : NULL;
        if (!cJSON_IsString(qtext) || !cname) {
            cli_error("locomo: %s: %s: qa %zu needs a question and a category 1-5", x->path,
                      name, qi + 1);
            return 1;
        }
        x->k->questions++;
        struct eval_q *q = eval_add_question(c);
        if (!q)
            goto oom;
        q->id = eval_printf(c, "%s/q%zu", name, qi);
        q->category = cname;
        q->question = eval_strdup(c, qtext->valuestring);
        q->apart = cat->valueint == 5;
        q->now = last;
        if (add_evidence(c, x->k, q, evs, refs, n_refs))
            goto oom;
        if (!q->n_ev) {
            x->k->q_no_evidence++;
            c->n_qs--;          /* not scored */
        }
        qi++;
    }
    if (c->oom)
        goto oom;
    x->k->convs++;
    return 0;
oom:
    cli_error("locomo: out of memory");
    return 1;
}

static int on_elem(void *arg, const char *json, size_t len, size_t index)
{
    struct locomo_ctx *x = arg;
    struct eval_conv c;
    int rc;
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!root) {
        cli_error("locomo: %s: element %zu is not valid JSON", x->path, index);
        return 1;
    }
    eval_conv_init(&c);
    rc = load_sample(x, root, index, &c);
    cJSON_Delete(root);
    if (!rc)
        rc = x->fn(x->arg, &c);
    eval_conv_free(&c);
    return rc;
}

int eval_load_locomo(const char *path, struct eval_counts *k, eval_conv_fn fn, void *arg)
{
    struct locomo_ctx x = { path, k, fn, arg };
    return eval_json_array_stream("locomo", path, on_elem, &x);
}
