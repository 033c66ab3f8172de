/*
 * aider.c: aider's chat log (.aider.chat.history.md in the project
 * folder) into sessions, the way the devmem-dev set was extracted:
 *
 *   - a session starts at each "# aider chat started at YYYY-MM-DD HH:MM:SS";
 *   - "#### " lines are the user's; consecutive ones form one turn (old
 *     logs' "<blank>" markers become empty lines, and a prompt logged twice
 *     with nothing between is kept once); a turn that is only a
 *     slash command (/add, /drop, /model, ...) is dropped, but /ask, /code,
 *     /architect and /run prompts are kept as written;
 *   - lines starting with "> " (or a bare ">") are aider's own output (file adds, commits,
 *     token reports, /run output) and are left out, and so are its
 *     unprefixed boilerplate lines (Tokens: ... sent, Cost: $..., (Y)es/(N)o
 *     questions, Applied edit to ..., Commit <hash> ...);
 *   - everything else is the assistant's reply, verbatim.
 *
 * A session with no user turn is dropped, and so is reply text before a
 * session's first prompt. The log has one time per session, which every
 * message of it gets. Messages carry no id (the store dedupes by content).
 * Only complete ('\n'-terminated) lines are read: a half-written last line
 * waits for the next import.
 */
#include "capture/capture.h"
#include "util/buf.h"

#include <stdio.h>
#include <string.h>

#define AIDER_START "# aider chat started at "

struct aider_ctx {
    struct capture_batch *b;
    const char *id_prefix;
    size_t sess;                 /* our current session in b->v, or -1 */
    int64_t at;
    char when[20];               /* the header's time, for the session id */
    int nth;                     /* sessions with the same header time */
    int turns;                   /* user turns kept in the session */
    uint64_t start;              /* byte offset of the session's header */
    struct buf user, reply;
};

static int has_prefix(const char *p, size_t n, const char *s)
{
    size_t l = strlen(s);
    return n >= l && memcmp(p, s, l) == 0;
}

/* "Commit 1a2b3c4 ..." with at least 7 hex digits. */
static int is_commit(const char *p, size_t n)
{
    size_t i = 7;
    if (!has_prefix(p, n, "Commit "))
        return 0;
    while (i < n && strchr("0123456789abcdef", p[i]) && p[i])
        i++;
    return i - 7 >= 7 && (i == n || p[i] == ' ');
}

static int boilerplate(const char *p, size_t n)
{
    if (has_prefix(p, n, "Tokens: ") && memmem(p, n, " sent", 5))
        return 1;
    return has_prefix(p, n, "Cost: $") || has_prefix(p, n, "Applied edit to ") ||
           memmem(p, n, "(Y)es/(N)o", 10) != NULL || is_commit(p, n);
}

/* A user turn that only drives aider ("/add f.c", "/undo"). */
static int slash_only(const char *p, size_t n)
{
    static const char *const kept[] = { "/ask", "/code", "/architect", "/run" };
    while (n && capture_is_ws(*p)) {
        p++;
        n--;
    }
    if (!n || *p != '/')
        return 0;
    for (size_t i = 0; i < sizeof kept / sizeof kept[0]; i++) {
        size_t l = strlen(kept[i]);
        if (n >= l && !memcmp(p, kept[i], l) && (n == l || capture_is_ws(p[l])))
            return 0;
    }
    return 1;
}

/* A prompt aider logged twice (the same text again with no reply in
 * between) is kept once. */
static int repeated(const struct capture_session *s, const char *text, size_t n)
{
    const struct cairn_message *m = s->n_msgs ? &s->msgs[s->n_msgs - 1] : NULL;
    return m && m->role[0] == 'u' && m->content_len == n && !memcmp(m->content, text, n);
}

/* Hands the pending turn text (user or reply) to the session. */
static int flush(struct aider_ctx *c, struct buf *t, const char *role)
{
    struct capture_batch *b = c->b;
    int rc = CAIRN_OK;
    if (!t->n && !t->err)
        return CAIRN_OK;
    if (t->err) {
        int nomem = t->err == BUF_NOMEM;
        b->counts.skipped_too_long += !nomem;
        rc = nomem ? CAIRN_NOMEM : CAIRN_OK;
        goto out;
    }
    if (c->sess == (size_t)-1 || (role[0] == 'a' && !c->turns) ||
        (role[0] == 'u' && slash_only(t->p, t->n))) {
        b->counts.messages_dropped++;
        goto out;
    }
    size_t cl = 0;
    char *text = capture_text(b, t->p, t->n, 1, &cl);
    if (!text) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    if (!cl || (role[0] == 'u' && repeated(&b->v[c->sess], text, cl))) {
        b->counts.messages_dropped++;
        goto out;
    }
    c->turns += role[0] == 'u';
    /* The message's place in its session is its id: an import that ran
     * while aider was still writing a reply stored the lines written so
     * far, and the next import, which parses the session again from its
     * header, offers the whole reply under the same id, so the store
     * replaces the shorter text it extends instead of keeping both. */
    char mid[24];
    int k = snprintf(mid, sizeof mid, "%zu", b->v[c->sess].n_msgs + 1);
    const char *id = capture_str(b, mid, (size_t)k);
    if (!id) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    rc = capture_session_add(b, &b->v[c->sess], id, role, text, cl, c->at);
out:
    buf_reset(t);
    return rc;
}

/* Ends the current session: dropped when it has no prompt, or when it
 * ended before `from` (an earlier import has it whole). */
static void end_session(struct aider_ctx *c, uint64_t end, uint64_t from)
{
    if (c->sess == (size_t)-1)
        return;
    if (!c->turns || (from && end <= from))
        capture_session_drop_last(c->b);
    c->sess = (size_t)-1;
}

static int start_session(struct aider_ctx *c, const char *p, size_t n, uint64_t off)
{
    struct capture_batch *b = c->b;
    const char *t = p + strlen(AIDER_START);
    size_t tn = n - strlen(AIDER_START);
    char id[4096];
    while (tn && capture_is_ws(t[tn - 1]))
        tn--;
    if (tn >= sizeof c->when)
        tn = sizeof c->when - 1;
    if (strlen(c->when) == tn && !memcmp(c->when, t, tn))
        c->nth++;
    else
        c->nth = 0;
    memcpy(c->when, t, tn);
    c->when[tn] = '\0';
    c->at = CAIRN_NO_TIME;
    if (capture_parse_time(c->when, tn, &c->at) != CAIRN_OK)
        c->at = CAIRN_NO_TIME;
    struct capture_session *s = capture_session_new(b);
    if (!s)
        return CAIRN_NOMEM;
    c->sess = b->n - 1;
    c->turns = 0;
    c->start = off;
    /* stable across imports: the file and the header's time (and which of
     * several headers with that time) */
    int k = c->nth ? snprintf(id, sizeof id, "aider:%s@%s#%d", c->id_prefix, c->when, c->nth + 1)
                   : snprintf(id, sizeof id, "aider:%s@%s", c->id_prefix, c->when);
    s->s.id = capture_str(b, id, k < 0 ? 0 : (size_t)k >= sizeof id ? sizeof id - 1 : (size_t)k);
    s->s.source = "aider";
    s->s.started_at = c->at;
    return s->s.id ? CAIRN_OK : CAIRN_NOMEM;
}

/* One complete line, without its '\n'. */
static int aider_line(struct aider_ctx *c, const char *p, size_t n, uint64_t off,
                      uint64_t from)
{
    struct capture_counts *cn = &c->b->counts;
    int rc;
    if (n && p[n - 1] == '\r')
        n--;
    if (has_prefix(p, n, AIDER_START)) {
        if ((rc = flush(c, &c->user, "user")) || (rc = flush(c, &c->reply, "assistant")))
            return rc;
        end_session(c, off, from);
        return start_session(c, p, n, off);
    }
    if (has_prefix(p, n, "####")) {
        if ((rc = flush(c, &c->reply, "assistant")))
            return rc;
        p += 4;
        n -= 4;
        if (n && *p == ' ') {
            p++;
            n--;
        }
        if (n == 7 && !memcmp(p, "<blank>", 7))
            n = 0;
        if (c->user.n)
            buf_addc(&c->user, '\n');
        buf_add(&c->user, p, n);
        return CAIRN_OK;
    }
    if ((rc = flush(c, &c->user, "user")))
        return rc;
    /* "> text" and a bare ">" are aider's; ">>>>>>> REPLACE" is the reply's */
    if ((n && *p == '>' && (n == 1 || p[1] == ' ')) || boilerplate(p, n)) {
        cn->lines_ignored++;
        return CAIRN_OK;
    }
    if (c->reply.n)
        buf_addc(&c->reply, '\n');
    buf_add(&c->reply, p, n);
    return CAIRN_OK;
}

int capture_aider(const char *data, size_t len, uint64_t from, const char *id_prefix,
                  struct capture_batch *out, uint64_t *next_off)
{
    struct aider_ctx c;
    size_t pos = 0;
    int rc = CAIRN_OK;
    memset(&c, 0, sizeof c);
    c.b = out;
    c.id_prefix = id_prefix ? id_prefix : "";
    c.sess = (size_t)-1;
    buf_init(&c.user, CAPTURE_MAX_LINE);
    buf_init(&c.reply, CAPTURE_MAX_LINE);
    while (pos < len && rc == CAIRN_OK) {
        const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
        if (!nl)
            break;                   /* half-written: the next import reads it */
        size_t ll = (size_t)(nl - line);
        out->counts.lines_total++;
        if (ll > CAPTURE_MAX_LINE)
            out->counts.skipped_too_long++;
        else
            rc = aider_line(&c, line, ll, pos, from);
        pos += ll + 1;
    }
    if (!rc)
        rc = flush(&c, &c.user, "user");
    if (!rc)
        rc = flush(&c, &c.reply, "assistant");
    if (!rc)
        end_session(&c, pos, from);
    if (next_off)
        *next_off = pos;
    buf_release(&c.user);
    buf_release(&c.reply);
    return rc;
}
