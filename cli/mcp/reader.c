/*
 * reader.c: the stdin side of `cairn mcp`.
 *
 * A thread reads stdin with read(2), cuts it into lines (a message may come
 * in many reads, and one read may hold many messages), parses each line and
 * queues it for the main thread. Reading in its own thread is what makes
 * cancellation work: a `notifications/cancelled` for a request that is
 * queued or running is seen at once and marks the request, and the main
 * thread then drops its answer instead of sending it.
 *
 * A line is capped at MCP_MAX_LINE bytes. A longer one is skipped to its
 * newline without keeping it (only its first and last bytes, to find the
 * request id so the client gets an error for the right request instead of
 * waiting forever). The queue is bounded too, so a client that floods us
 * waits on its pipe rather than growing our memory.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp.h"
#include "util/json.h"
#include "util/utf8.h"

#define QUEUE_MAX_ITEMS 64
#define QUEUE_MAX_BYTES ((size_t)128 << 20)
#define HINT_BYTES      4096   /* head and tail of a refused line kept for its id */

struct pending {
    char *key;
    int   cancelled;
};

struct mcp_reader {
    int             fd;
    pthread_t       thread;
    pthread_mutex_t mu;
    pthread_cond_t  not_empty, not_full;
    struct mcp_item *head, *tail;
    size_t          n_items, n_bytes;
    int             eof;
    struct pending *pend;       /* requests queued or running */
    size_t          n_pend, cap_pend;
};

char *mcp_id_key(const cJSON *id)
{
    struct buf b = BUF_INIT;
    if (cJSON_IsString(id)) {
        buf_adds(&b, "s:");
        buf_adds(&b, id->valuestring);
    } else if (cJSON_IsNumber(id)) {
        double d = id->valuedouble;
        if (d != d || d < -9007199254740992.0 || d > 9007199254740992.0 || d != (double)(int64_t)d)
            return NULL;
        buf_printf(&b, "i:%lld", (long long)(int64_t)d);
    } else {
        return NULL;
    }
    return buf_detach(&b, NULL);
}

void mcp_item_free(struct mcp_item *it)
{
    if (!it)
        return;
    cJSON_Delete(it->msg);
    cJSON_Delete(it->id_hint);
    free(it);
}

/* ---- pending requests and cancellation (callers hold r->mu) ---- */

static void pend_add(struct mcp_reader *r, const cJSON *id)
{
    char *key = mcp_id_key(id);
    if (!key)
        return;
    if (r->n_pend == r->cap_pend) {
        size_t nc = r->cap_pend ? r->cap_pend * 2 : 16;
        struct pending *np = realloc(r->pend, nc * sizeof *np);
        if (!np) {
            free(key);
            return;
        }
        r->pend = np;
        r->cap_pend = nc;
    }
    r->pend[r->n_pend].key = key;
    r->pend[r->n_pend].cancelled = 0;
    r->n_pend++;
}

static struct pending *pend_find(struct mcp_reader *r, const cJSON *id)
{
    char *key = mcp_id_key(id);
    struct pending *p = NULL;
    if (!key)
        return NULL;
    for (size_t i = 0; i < r->n_pend; i++) {
        if (!strcmp(r->pend[i].key, key)) {
            p = &r->pend[i];
            break;
        }
    }
    free(key);
    return p;
}

int mcp_reader_cancelled(struct mcp_reader *r, const cJSON *id)
{
    int c = 0;
    if (!r)
        return 0;
    pthread_mutex_lock(&r->mu);
    struct pending *p = pend_find(r, id);
    if (p)
        c = p->cancelled;
    pthread_mutex_unlock(&r->mu);
    return c;
}

void mcp_reader_done(struct mcp_reader *r, const cJSON *id)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->mu);
    struct pending *p = pend_find(r, id);
    if (p) {
        free(p->key);
        *p = r->pend[--r->n_pend];
    }
    pthread_mutex_unlock(&r->mu);
}

/* A request is registered when it is read, so a cancel that follows it
 * finds it; a cancel for an id we never saw (or already answered) is
 * ignored, as the spec asks. */
static void note_message(struct mcp_reader *r, const cJSON *m)
{
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
    if (!cJSON_IsObject(m) || !cJSON_IsString(method))
        return;
    if (id) {
        pend_add(r, id);
        return;
    }
    if (strcmp(method->valuestring, "notifications/cancelled"))
        return;
    const cJSON *params = cJSON_GetObjectItemCaseSensitive(m, "params");
    const cJSON *rid = cJSON_GetObjectItemCaseSensitive(params, "requestId");
    struct pending *p = rid ? pend_find(r, rid) : NULL;
    if (p)
        p->cancelled = 1;
}

static void enqueue(struct mcp_reader *r, struct mcp_item *it)
{
    pthread_mutex_lock(&r->mu);
    while (r->n_items &&
           (r->n_items >= QUEUE_MAX_ITEMS || r->n_bytes + it->bytes > QUEUE_MAX_BYTES))
        pthread_cond_wait(&r->not_full, &r->mu);
    if (it->msg) {
        if (cJSON_IsArray(it->msg)) {
            const cJSON *e;
            cJSON_ArrayForEach(e, it->msg)
                note_message(r, e);
        } else {
            note_message(r, it->msg);
        }
    }
    it->next = NULL;
    if (r->tail)
        r->tail->next = it;
    else
        r->head = it;
    r->tail = it;
    r->n_items++;
    r->n_bytes += it->bytes;
    pthread_cond_signal(&r->not_empty);
    pthread_mutex_unlock(&r->mu);
}

struct mcp_item *mcp_reader_next(struct mcp_reader *r)
{
    struct mcp_item *it;
    pthread_mutex_lock(&r->mu);
    while (!r->head && !r->eof)
        pthread_cond_wait(&r->not_empty, &r->mu);
    it = r->head;
    if (it) {
        r->head = it->next;
        if (!r->head)
            r->tail = NULL;
        r->n_items--;
        r->n_bytes -= it->bytes;
        pthread_cond_signal(&r->not_full);
    }
    pthread_mutex_unlock(&r->mu);
    return it;
}

/* ---- the id of a refused line ---- */

/* An id value at s (an integer or a short string without escapes). */
static cJSON *id_value(const char *s, const char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (s < end && *s == '"') {
        const char *q = s + 1;
        while (q < end && *q != '"' && *q != '\\' && q - s < 200)
            q++;
        if (q >= end || *q != '"')
            return NULL;
        char tmp[201];
        memcpy(tmp, s + 1, (size_t)(q - s - 1));
        tmp[q - s - 1] = 0;
        return cJSON_CreateString(tmp);
    }
    const char *q = s;
    if (q < end && *q == '-')
        q++;
    const char *digits = q;
    while (q < end && *q >= '0' && *q <= '9' && q - digits < 16)
        q++;
    if (q == digits ||
        (q < end && (*q == '.' || *q == 'e' || *q == 'E' || (*q >= '0' && *q <= '9'))))
        return NULL;
    char tmp[20];
    memcpy(tmp, s, (size_t)(q - s));
    tmp[q - s] = 0;
    return cJSON_CreateNumber((double)strtoll(tmp, NULL, 10));
}

/* Scans the head of a line as JSON, tracking strings and depth, for a
 * top-level "id" member. */
static cJSON *id_from_head(const char *s, size_t n)
{
    int depth = 0, in_str = 0, esc = 0;
    const char *key = NULL, *end = s + n;
    for (const char *p = s; p < end; p++) {
        char c = *p;
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"') {
                in_str = 0;
                if (depth == 1 && key && p - key == 3 && !memcmp(key, "\"id", 3)) {
                    const char *q = p + 1;
                    while (q < end && (*q == ' ' || *q == '\t'))
                        q++;
                    if (q < end && *q == ':')
                        return id_value(q + 1, end);
                }
            }
            continue;
        }
        if (c == '"') {
            in_str = 1;
            key = p;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            depth--;
        }
    }
    return NULL;
}

/* The SDKs write the id last: `...,"id":12}`. Only a line that ends in
 * exactly one closing brace after the id is trusted. */
static cJSON *id_from_tail(const char *s, size_t n)
{
    const char *end = s + n;
    while (end > s && (end[-1] == ' ' || end[-1] == '\r' || end[-1] == '\t'))
        end--;
    if (end == s || end[-1] != '}')
        return NULL;
    end--;
    for (const char *p = end; p-- > s;) {
        if (*p == '}' || *p == ']' || *p == '{')
            return NULL;
        if (p + 4 < end && !memcmp(p, "\"id\"", 4) && p > s && (p[-1] == ',' || p[-1] == '{')) {
            const char *q = p + 4;
            while (q < end && (*q == ' ' || *q == '\t'))
                q++;
            if (q >= end || *q != ':')
                return NULL;
            cJSON *v = id_value(q + 1, end);
            return v;
        }
    }
    return NULL;
}

/* ---- the thread ---- */

struct line_state {
    struct buf line;
    int        skipping;
    size_t     skipped;
    char       head[HINT_BYTES], tail[HINT_BYTES];
    size_t     head_n, tail_n;
};

static void tail_push(struct line_state *ls, const char *s, size_t n)
{
    if (n >= HINT_BYTES) {
        memcpy(ls->tail, s + n - HINT_BYTES, HINT_BYTES);
        ls->tail_n = HINT_BYTES;
        return;
    }
    if (ls->tail_n + n > HINT_BYTES) {
        size_t drop = ls->tail_n + n - HINT_BYTES;
        memmove(ls->tail, ls->tail + drop, ls->tail_n - drop);
        ls->tail_n -= drop;
    }
    memcpy(ls->tail + ls->tail_n, s, n);
    ls->tail_n += n;
}

static void line_add(struct line_state *ls, const char *s, size_t n)
{
    if (!ls->skipping && (ls->line.n + n > MCP_MAX_LINE || buf_add(&ls->line, s, n))) {
        /* Over the cap (or out of memory): keep only the ends from here on. */
        ls->head_n = ls->line.n < HINT_BYTES ? ls->line.n : HINT_BYTES;
        memcpy(ls->head, ls->line.p, ls->head_n);
        if (ls->head_n < HINT_BYTES) {
            size_t more = HINT_BYTES - ls->head_n < n ? HINT_BYTES - ls->head_n : n;
            memcpy(ls->head + ls->head_n, s, more);
            ls->head_n += more;
        }
        ls->tail_n = 0;
        tail_push(ls, ls->line.p, ls->line.n);
        ls->skipped = ls->line.n;
        buf_release(&ls->line);
        buf_init(&ls->line, MCP_MAX_LINE);
        ls->skipping = 1;
    } else if (!ls->skipping) {
        return;
    }
    ls->skipped += n;
    tail_push(ls, s, n);
}

static void line_end(struct mcp_reader *r, struct line_state *ls)
{
    struct mcp_item *it = calloc(1, sizeof *it);
    if (!it)
        goto out;
    if (ls->skipping) {
        it->kind = MCP_ITEM_TOO_LONG;
        it->bytes = 0;
        it->id_hint = id_from_head(ls->head, ls->head_n);
        if (!it->id_hint)
            it->id_hint = id_from_tail(ls->tail, ls->tail_n);
        fprintf(stderr, "cairn mcp: refused a message of %zu bytes (limit %zu)\n",
                ls->skipped, (size_t)MCP_MAX_LINE);
        enqueue(r, it);
        goto out;
    }
    /* Lenient framing: \r\n line ends and blank lines are fine. */
    size_t n = ls->line.n;
    const char *p = ls->line.p;
    while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
        n--;
    while (n && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    if (!n) {
        free(it);
        goto out;
    }
    it->bytes = n;
    /* JSON text is UTF-8; a line that is not would make us echo bad bytes
     * (in an error message) and break the client's parser in turn. */
    if (utf8_valid(p, n))
        it->msg = json_parse(p, n, NULL);
    it->kind = it->msg ? MCP_ITEM_MESSAGE : MCP_ITEM_PARSE_ERROR;
    enqueue(r, it);
out:
    buf_reset(&ls->line);
    ls->skipping = 0;
    ls->skipped = 0;
    ls->head_n = ls->tail_n = 0;
}

static void *reader_main(void *arg)
{
    struct mcp_reader *r = arg;
    struct line_state *ls = calloc(1, sizeof *ls);
    char *chunk = malloc(65536);
    if (!ls || !chunk) {
        fprintf(stderr, "cairn mcp: out of memory\n");
        goto out;
    }
    buf_init(&ls->line, MCP_MAX_LINE);
    for (;;) {
        ssize_t got = read(r->fd, chunk, 65536);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        size_t i = 0, n = (size_t)got;
        while (i < n) {
            char *nl = memchr(chunk + i, '\n', n - i);
            size_t len = nl ? (size_t)(nl - (chunk + i)) : n - i;
            line_add(ls, chunk + i, len);
            i += len;
            if (nl) {
                line_end(r, ls);
                i++;
            }
        }
    }
    if (ls->line.n || ls->skipping)     /* a last line without its newline */
        line_end(r, ls);
    buf_release(&ls->line);
out:
    free(ls);
    free(chunk);
    pthread_mutex_lock(&r->mu);
    r->eof = 1;
    pthread_cond_broadcast(&r->not_empty);
    pthread_mutex_unlock(&r->mu);
    return NULL;
}

struct mcp_reader *mcp_reader_start(int fd)
{
    struct mcp_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->fd = fd;
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->not_empty, NULL);
    pthread_cond_init(&r->not_full, NULL);
    if (pthread_create(&r->thread, NULL, reader_main, r)) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->not_empty);
        pthread_cond_destroy(&r->not_full);
        free(r);
        return NULL;
    }
    return r;
}

void mcp_reader_stop(struct mcp_reader *r)
{
    struct mcp_item *it;
    if (!r)
        return;
    pthread_join(r->thread, NULL);
    while ((it = r->head)) {
        r->head = it->next;
        mcp_item_free(it);
    }
    for (size_t i = 0; i < r->n_pend; i++)
        free(r->pend[i].key);
    free(r->pend);
    pthread_mutex_destroy(&r->mu);
    pthread_cond_destroy(&r->not_empty);
    pthread_cond_destroy(&r->not_full);
    free(r);
}
