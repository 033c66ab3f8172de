/*
 * api.c: the JSON API of `cairn web` under /TOKEN/api (docs/WEB.md):
 * the dispatch table and the reading endpoints (sessions, one session,
 * one message, stats, export). Everything goes through include/cairn.h
 * on the server's read-only handle; recall and search are api_recall.c,
 * the actions (forget, memories) and the injection log api_act.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "web.h"
#include "../cli.h"
#include "util/utf8.h"

/* A count per name (project, source), in first-seen order. */
struct tally { char **name; size_t *n, len, cap; int err; };

static void tally_add(struct tally *t, const char *name, size_t n)
{
    for (size_t i = 0; i < t->len; i++)
        if (!strcmp(t->name[i], name)) {
            t->n[i] += n;
            return;
        }
    if (t->len == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        char **nn = realloc(t->name, cap * sizeof *nn);
        size_t *nc = nn ? realloc(t->n, cap * sizeof *nc) : NULL;
        if (nn)
            t->name = nn;
        if (!nc) {
            t->err = 1;
            return;
        }
        t->n = nc;
        t->cap = cap;
    }
    if (!(t->name[t->len] = strdup(name))) {
        t->err = 1;
        return;
    }
    t->n[t->len++] = n;
}

static void tally_json(struct buf *b, const char *key, const struct tally *t)
{
    buf_printf(b, ",\"%s\":[", key);
    for (size_t i = 0; i < t->len; i++) {
        buf_adds(b, i ? ",[" : "[");
        buf_add_json_str(b, t->name[i], strlen(t->name[i]));
        buf_printf(b, ",%zu]", t->n[i]);
    }
    buf_addc(b, ']');
}

static void tally_free(struct tally *t)
{
    for (size_t i = 0; i < t->len; i++)
        free(t->name[i]);
    free(t->name);
    free(t->n);
}

/* One session as JSON (the listing's and the session page's header). */
static void session_json(struct buf *b, const struct cairn_session_info *s)
{
    int first = 1;
    buf_addc(b, '{');
    cli_json_session_fields(b, s, &first);
    buf_printf(b, "%s\"messages\":%zu}", first ? "" : ",", s->n_messages);
}

/* ---- the session list, kept between requests ---- */

/* Listing all sessions counts each one's messages: ~30 ms on 5,000
 * sessions and 100,000 messages, paid by every page of the list and by
 * the stats. The server keeps the list and reads it again only when the
 * store's files changed (a hook or an import writes the WAL; a forget
 * rewrites both), which two stat() calls tell. */
struct web_cache {
    struct cairn_session_info *s;    /* newest first; strings owned */
    size_t n, cap;
    char fp[256];                    /* the files' identity when read */
    int err;
};

static void file_id(const char *path, char *out, size_t n)
{
    struct stat st;
    if (stat(path, &st)) {
        snprintf(out, n, "-");
        return;
    }
    snprintf(out, n, "%llu:%lld.%09ld:%lld", (unsigned long long)st.st_ino,
             (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size);
}

static void store_fingerprint(struct cairn *db, char *out, size_t n)
{
    char a[96], b[96], wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", cairn_path(db));
    file_id(cairn_path(db), a, sizeof a);
    file_id(wal, b, sizeof b);
    snprintf(out, n, "%s|%s", a, b);
}

static void cache_clear(struct web_cache *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free((char *)c->s[i].id);
        free((char *)c->s[i].source);
        free((char *)c->s[i].project);
        free((char *)c->s[i].title);
    }
    c->n = 0;
    c->err = 0;
    c->fp[0] = '\0';
}

static int cache_one(void *arg, const struct cairn_session_info *s)
{
    struct web_cache *c = arg;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        struct cairn_session_info *v = realloc(c->s, cap * sizeof *v);
        if (!v)
            return CAIRN_NOMEM;
        c->s = v;
        c->cap = cap;
    }
    struct cairn_session_info *d = &c->s[c->n++];
    *d = *s;
    d->meta = NULL;
    d->id = strdup(s->id);
    d->source = strdup(s->source);
    d->project = strdup(s->project);
    d->title = strdup(s->title);
    return d->id && d->source && d->project && d->title ? 0 : CAIRN_NOMEM;
}

/* The sessions as the store holds them now: 0, or a CAIRN_* code. */
static int sessions_now(struct web *w, const struct web_cache **out)
{
    char fp[sizeof w->cache->fp];
    if (!w->cache && !(w->cache = calloc(1, sizeof *w->cache)))
        return CAIRN_NOMEM;
    store_fingerprint(w->db, fp, sizeof fp);
    if (!w->cache->fp[0] || strcmp(fp, w->cache->fp)) {
        cache_clear(w->cache);
        int rc = cairn_sessions(w->db, NULL, 0, 0, cache_one, w->cache);
        if (rc) {
            cache_clear(w->cache);
            return rc;
        }
        snprintf(w->cache->fp, sizeof w->cache->fp, "%s", fp);
    }
    *out = w->cache;
    return 0;
}

void web_api_free(struct web *w)
{
    if (w->cache) {
        cache_clear(w->cache);
        free(w->cache->s);
        free(w->cache);
        w->cache = NULL;
    }
}

/* ---- sessions ---- */

struct listing {
    const char *project, *source, *text;
    int64_t from, to;
    size_t offset, limit, total, messages;
    struct tally projects, sources;
    struct buf *out;
};

/* 1 when needle is in hay, ASCII case folded (ids, titles, projects). */
static int has_text(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; hay && *hay; hay++)
        if (!strncasecmp(hay, needle, n))
            return 1;
    return 0;
}

static void list_one(struct listing *l, const struct cairn_session_info *s)
{
    if (l->project && *l->project && strcmp(s->project, l->project))
        return;
    if (l->source && *l->source && strcmp(s->source, l->source))
        return;
    if ((l->from != CAIRN_NO_TIME && s->started_at < l->from) ||
        (l->to != CAIRN_NO_TIME && s->started_at >= l->to))
        return;
    if (l->text && *l->text && !has_text(s->title, l->text) && !has_text(s->id, l->text) &&
        !has_text(s->project, l->text))
        return;
    tally_add(&l->projects, s->project, 1);
    tally_add(&l->sources, s->source, 1);
    if (l->total >= l->offset && l->total < l->offset + l->limit) {
        if (l->total > l->offset)
            buf_addc(l->out, ',');
        session_json(l->out, s);
    }
    l->total++;
    l->messages += s->n_messages;
}

/* A date argument ("2024-03-01"); `end` adds a day, so "to" includes it. */
static int64_t date_arg(const struct web_req *q, struct web_reply *r, const char *name, int end)
{
    const char *v = web_arg(q, r, name, 64);
    int64_t t;
    if (!v || !*v)
        return CAIRN_NO_TIME;
    if (cairn_parse_time(v, &t)) {
        if (!r->status)
            web_fail(r, 400, "%s is not a date (2024-03-01)", name);
        return CAIRN_NO_TIME;
    }
    return end && strlen(v) == 10 ? t + 86400 : t;
}

static void api_sessions(const struct web_req *q, struct web_reply *r)
{
    struct listing l = { 0 };
    const struct web_cache *c;
    l.project = web_arg(q, r, "project", WEB_ARG_MAX);
    l.source = web_arg(q, r, "source", WEB_ARG_MAX);
    l.text = web_arg(q, r, "text", WEB_ARG_MAX);
    l.from = date_arg(q, r, "from", 0);
    l.to = date_arg(q, r, "to", 1);
    l.offset = (size_t)web_arg_long(q, r, "offset", 0, 0, 10000000);
    l.limit = (size_t)web_arg_long(q, r, "limit", 50, 1, WEB_PAGE_MAX);
    l.out = &r->body;
    if (r->status)
        return;
    buf_adds(&r->body, "{\"sessions\":[");
    int rc = sessions_now(q->w, &c);
    for (size_t i = 0; !rc && i < c->n; i++)
        list_one(&l, &c->s[i]);
    if (rc)
        web_fail_rc(r, q->w->db, "sessions", rc);
    else if (l.projects.err || l.sources.err)
        web_fail(r, 500, "out of memory");
    else {
        buf_printf(&r->body, "],\"total\":%zu,\"messages\":%zu,\"offset\":%zu,\"limit\":%zu",
                   l.total, l.messages, l.offset, l.limit);
        tally_json(&r->body, "projects", &l.projects);
        tally_json(&r->body, "sources", &l.sources);
        buf_adds(&r->body, "}\n");
        r->status = 200;
    }
    tally_free(&l.projects);
    tally_free(&l.sources);
}

/* ---- one session, one message ---- */

struct page { struct buf *out; size_t n, cut; };

/* The first `cut` bytes of text, ending on a UTF-8 boundary. */
static size_t utf8_cut(const char *s, size_t len, size_t cut)
{
    if (len <= cut)
        return len;
    while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
        cut--;
    return cut;
}

static int page_msg(void *arg, const struct cairn_message_info *m)
{
    struct page *p = arg;
    int first = 0;
    size_t n = utf8_cut(m->content, m->content_len, p->cut);
    buf_printf(p->out, "%s{\"position\":%d", p->n++ ? "," : "", m->position);
    cli_json_str_field(p->out, "id", m->id, &first);
    cli_json_str_field(p->out, "role", m->role, &first);
    cli_json_str_field(p->out, "speaker", m->speaker, &first);
    cli_json_time_field(p->out, "at", m->at, &first);
    buf_printf(p->out, ",\"content_len\":%zu,\"truncated\":%s,\"content\":", m->content_len,
               n < m->content_len ? "true" : "false");
    buf_add_json_str(p->out, m->content, n);
    buf_addc(p->out, '}');
    return p->out->err ? CAIRN_NOMEM : 0;
}

static int head_one(void *arg, const struct cairn_session_info *s)
{
    session_json(arg, s);
    return 0;
}

static void api_session(const struct web_req *q, struct web_reply *r)
{
    const char *id = web_arg(q, r, "id", WEB_ARG_MAX);
    long from = web_arg_long(q, r, "from", 0, 0, 100000000);
    long count = web_arg_long(q, r, "count", 100, 1, WEB_PAGE_MAX);
    struct page p = { &r->body, 0, WEB_MSG_CUT };
    int rc;
    if (r->status)
        return;
    if (!id || !*id) {
        web_fail(r, 400, "id: which session");
        return;
    }
    buf_adds(&r->body, "{\"session\":");
    if ((rc = cairn_session_get(q->w->db, id, head_one, &r->body))) {
        web_fail_rc(r, q->w->db, "session", rc);
        return;
    }
    buf_printf(&r->body, ",\"from\":%ld,\"messages\":[", from);
    rc = cairn_messages(q->w->db, id, (int)from, (int)(from + count - 1), page_msg, &p);
    if (rc) {
        web_fail_rc(r, q->w->db, "messages", rc);
        return;
    }
    buf_adds(&r->body, "]}\n");
    r->status = 200;
}

static void api_message(const struct web_req *q, struct web_reply *r)
{
    const char *id = web_arg(q, r, "session", WEB_ARG_MAX);
    long pos = web_arg_long(q, r, "position", -1, 0, 100000000);
    struct page p = { &r->body, 0, WEB_MSG_MAX };
    if (r->status)
        return;
    if (!id || pos < 0) {
        web_fail(r, 400, "session and position: which message");
        return;
    }
    buf_adds(&r->body, "{\"messages\":[");
    int rc = cairn_messages(q->w->db, id, (int)pos, (int)pos, page_msg, &p);
    if (rc)
        web_fail_rc(r, q->w->db, "message", rc);
    else if (!p.n)
        web_fail(r, 404, "no message at position %ld of that session", pos);
    else {
        buf_adds(&r->body, "]}\n");
        r->status = 200;
    }
}

/* ---- stats ---- */

/* Messages per month of a session's start, per project, per source;
 * messages with a vector, per model. */
struct monthly { struct tally months, projects, sources, models; };

static int vector_one(void *arg, const char *model, int64_t messages)
{
    struct monthly *m = arg;
    tally_add(&m->models, model, (size_t)messages);
    return 0;
}

static void stats_one(struct monthly *m, const struct cairn_session_info *s)
{
    char ts[40];
    cairn_format_time(s->started_at, 1, ts, sizeof ts);
    ts[7] = '\0';                       /* "2024-03" */
    if (*ts)
        tally_add(&m->months, ts, s->n_messages);
    tally_add(&m->projects, s->project, s->n_messages);
    tally_add(&m->sources, s->source, s->n_messages);
}

static void api_stats(const struct web_req *q, struct web_reply *r)
{
    struct cairn_stats s;
    struct monthly m = { { 0 }, { 0 }, { 0 }, { 0 } };
    const struct web_cache *c;
    int rc = cairn_get_stats(q->w->db, &s);
    if (!rc)
        rc = sessions_now(q->w, &c);
    for (size_t i = 0; !rc && i < c->n; i++)     /* oldest first: months in order */
        stats_one(&m, &c->s[c->n - 1 - i]);
    if (!rc)
        rc = cairn_vector_models(q->w->db, vector_one, &m);
    if (rc) {
        web_fail_rc(r, q->w->db, "stats", rc);
        goto out;
    }
    buf_adds(&r->body, "{\"store\":");
    buf_add_json_str(&r->body, cairn_path(q->w->db), strlen(cairn_path(q->w->db)));
    buf_printf(&r->body, ",\"schema_version\":%d,\"sessions\":%lld,\"messages\":%lld,"
               "\"user_messages\":%lld,\"assistant_messages\":%lld,\"content_bytes\":%lld,"
               "\"file_bytes\":%lld", s.schema_version, (long long)s.sessions,
               (long long)s.messages, (long long)s.user_messages,
               (long long)s.assistant_messages, (long long)s.content_bytes,
               (long long)s.file_bytes);
    int first = 0;
    cli_json_time_field(&r->body, "first", s.first_at, &first);
    cli_json_time_field(&r->body, "last", s.last_at, &first);
    tally_json(&r->body, "months", &m.months);
    tally_json(&r->body, "projects", &m.projects);
    tally_json(&r->body, "sources", &m.sources);
    tally_json(&r->body, "vectors", &m.models);
    buf_adds(&r->body, "}\n");
    r->status = m.months.err || m.projects.err || m.sources.err || m.models.err ? 500 : 200;
out:
    tally_free(&m.months);
    tally_free(&m.projects);
    tally_free(&m.sources);
    tally_free(&m.models);
}

/* ---- dispatch ---- */

static const struct route {
    const char *path;
    int post;
    void (*fn)(const struct web_req *, struct web_reply *);
} routes[] = {
    { "/sessions", 0, api_sessions },
    { "/session", 0, api_session },
    { "/message", 0, api_message },
    { "/stats", 0, api_stats },
    { "/export", 0, web_api_export },
    { "/recall", 0, web_api_recall },
    { "/search", 0, web_api_search },
    { "/injections", 0, web_api_injections },
    { "/memories", 0, web_api_memories },
    { "/memory/edit", 1, web_api_memory_edit },
    { "/memory/rm", 1, web_api_memory_rm },
    { "/memory/supersede", 1, web_api_memory_supersede },
    { "/forget", 1, web_api_forget },
};

void web_api(const struct web_req *q, struct web_reply *r)
{
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(q->path, routes[i].path))
            continue;
        if (q->post != routes[i].post)
            web_fail(r, 405, "%s takes %s", routes[i].path, routes[i].post ? "POST" : "GET");
        else
            routes[i].fn(q, r);
        if (!r->status)
            web_fail(r, 500, "no answer");
        return;
    }
    web_fail(r, 404, "no such API: %s", q->path);
}
