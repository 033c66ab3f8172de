/*
 * runtime.c: what the capture parsers (claude_code.c, chat_export.c,
 * codex.c) share, declared in capture.h: the batch and the arena that owns
 * every string it hands out, the text clean-up every kept message goes
 * through (<private> spans, trimming, UTF-8 repair), ISO 8601 times, a
 * validating JSON scanner that skips values without building a tree, a
 * string map for uuid lookups, and the file reader.
 */
#include "capture/capture.h"
#include "mask/private.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/timeutil.h"
#include "util/utf8.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ======================================================================
 * Arena and batch
 * ==================================================================== */

struct capture_chunk {
    struct capture_chunk *next;
    size_t used, size;
    char data[];
};

#define CHUNK_SIZE ((size_t)256 << 10)

static char *arena_alloc(struct capture_batch *b, size_t n)
{
    struct capture_chunk *c = b->arena;
    if (c && c->size - c->used >= n) {
        char *p = c->data + c->used;
        c->used += n;
        return p;
    }
    /* Big requests get a block of their own behind the current one, so
     * the space left in the current block is not thrown away. */
    size_t sz = n > CHUNK_SIZE / 4 ? n : CHUNK_SIZE;
    struct capture_chunk *nc = malloc(sizeof(*nc) + sz);
    if (!nc)
        return NULL;
    nc->size = sz;
    nc->used = n;
    if (c && sz != CHUNK_SIZE) {
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        b->arena = nc;
    }
    return nc->data;
}

char *capture_strndup(struct capture_batch *b, const char *s, size_t n)
{
    if (n == (size_t)-1)
        return NULL;
    char *p = arena_alloc(b, n + 1);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void capture_batch_init(struct capture_batch *b)
{
    memset(b, 0, sizeof(*b));
}

void capture_batch_free(struct capture_batch *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].msgs);
    free(b->v);
    struct capture_chunk *c = b->arena;
    while (c) {
        struct capture_chunk *next = c->next;
        free(c);
        c = next;
    }
    memset(b, 0, sizeof(*b));
}

struct capture_session *capture_session_new(struct capture_batch *b)
{
    if (b->n == b->alloc) {
        size_t na = b->alloc ? b->alloc * 2 : 8;
        struct capture_session *nv = realloc(b->v, na * sizeof(*nv));
        if (!nv)
            return NULL;
        b->v = nv;
        b->alloc = na;
    }
    struct capture_session *s = &b->v[b->n++];
    memset(s, 0, sizeof(*s));
    s->s.started_at = CAIRN_NO_TIME;
    s->s.ended_at = CAIRN_NO_TIME;
    return s;
}

void capture_session_drop_last(struct capture_batch *b)
{
    if (!b->n)
        return;
    b->n--;
    b->counts.messages_kept -= b->v[b->n].n_msgs;
    free(b->v[b->n].msgs);
    memset(&b->v[b->n], 0, sizeof(b->v[b->n]));
}

int capture_session_add(struct capture_batch *b, struct capture_session *s,
                        const char *id, const char *role, const char *content,
                        size_t content_len, int64_t at)
{
    if (s->n_msgs == s->alloc_msgs) {
        size_t na = s->alloc_msgs ? s->alloc_msgs * 2 : 16;
        struct cairn_message *nm = realloc(s->msgs, na * sizeof(*nm));
        if (!nm)
            return CAIRN_NOMEM;
        s->msgs = nm;
        s->alloc_msgs = na;
    }
    struct cairn_message *m = &s->msgs[s->n_msgs++];
    memset(m, 0, sizeof(*m));
    m->id = id;
    m->role = role;
    m->content = content;
    m->content_len = content_len;
    m->at = at;
    s->s.messages = s->msgs;
    s->s.n_messages = s->n_msgs;
    b->counts.messages_kept++;
    return CAIRN_OK;
}

/* ======================================================================
 * Text clean-up
 * ==================================================================== */

static char *finish_text(struct capture_batch *b, const char *s, size_t n,
                         int trim, size_t *out_len)
{
    if (trim) {
        while (n && capture_is_ws(*s)) {
            s++;
            n--;
        }
        while (n && capture_is_ws(s[n - 1]))
            n--;
    }
    if (utf8_valid(s, n)) {
        if (out_len)
            *out_len = n;
        return capture_strndup(b, s, n);
    }
    struct buf r;
    buf_init(&r, 0);
    utf8_repair(s, n, &r);
    char *p = NULL;
    if (!r.err) {
        p = capture_strndup(b, r.p, r.n);
        if (out_len)
            *out_len = r.n;
        b->counts.utf8_repaired++;
    }
    buf_release(&r);
    return p;
}

char *capture_text(struct capture_batch *b, const char *s, size_t n,
                   int trim, size_t *out_len)
{
    if (!private_has_tag(s, n))
        return finish_text(b, s, n, trim, out_len);
    /* Private spans never reach the store, not even as a marker; the
     * store removes them too (cairn_add_session), this counts them. */
    struct buf t;
    buf_init(&t, 0);
    int k = private_strip(s, n, &t);
    char *r = NULL;
    if (k >= 0) {
        b->counts.private_removed += (size_t)k;
        r = finish_text(b, t.p ? t.p : "", t.n, trim, out_len);
    }
    buf_release(&t);
    return r;
}

char *capture_str(struct capture_batch *b, const char *s, size_t n)
{
    return finish_text(b, s, n, 0, NULL);
}

/* ======================================================================
 * ISO 8601 times
 * ==================================================================== */

int capture_parse_time(const char *s, size_t n, int64_t *out)
{
    /* iso8601_parse reads a C string; these come bounded from JSON */
    char tmp[64];
    if (n >= sizeof tmp)
        return CAIRN_INVALID;
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    return iso8601_parse(tmp, out) == 0 ? CAIRN_OK : CAIRN_INVALID;
}

/* ======================================================================
 * JSON scanner: validates and skips values without building a tree.
 * ==================================================================== */

#define JSON_MAX_DEPTH 512

/* p is just after the opening quote; returns just after the closing one.
 * memchr does the heavy lifting: strings are most of a transcript. */
static const char *skip_str(const char *p, const char *end)
{
    const char *s = p;
    for (;;) {
        const char *q = memchr(p, '"', (size_t)(end - p));
        if (!q)
            return NULL;
        const char *b = q;
        while (b > s && b[-1] == '\\')
            b--;
        if (((q - b) & 1) == 0)
            return q + 1;
        p = q + 1;
    }
}

static const char *skip_val(const char *p, const char *end,
                            struct capture_jval *v, int depth);

static const char *skip_container(const char *p, const char *end, int depth)
{
    if (depth >= JSON_MAX_DEPTH)
        return NULL;
    int obj = *p == '{';
    char close = obj ? '}' : ']';
    p = capture_skip_ws(p + 1, end);
    if (p < end && *p == close)
        return p + 1;
    for (;;) {
        if (obj) {
            p = capture_skip_ws(p, end);
            if (p >= end || *p != '"')
                return NULL;
            p = skip_str(p + 1, end);
            if (!p)
                return NULL;
            p = capture_skip_ws(p, end);
            if (p >= end || *p != ':')
                return NULL;
            p++;
        }
        p = skip_val(p, end, NULL, depth + 1);
        if (!p)
            return NULL;
        p = capture_skip_ws(p, end);
        if (p >= end)
            return NULL;
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == close)
            return p + 1;
        return NULL;
    }
}

static const char *skip_val(const char *p, const char *end,
                            struct capture_jval *v, int depth)
{
    p = capture_skip_ws(p, end);
    if (p >= end)
        return NULL;
    const char *start = p, *q;
    char kind;
    switch (*p) {
    case '"':
        q = skip_str(p + 1, end);
        if (!q)
            return NULL;
        if (v) {
            v->p = p + 1;
            v->n = (size_t)(q - 1 - (p + 1));
            v->kind = '"';
        }
        return q;
    case '{':
    case '[':
        kind = *p;
        q = skip_container(p, end, depth);
        break;
    case 't':
        kind = 't';
        q = end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
        break;
    case 'f':
        kind = 'f';
        q = end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
        break;
    case 'n':
        kind = 'n';
        q = end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
        break;
    default: {
        kind = '0';
        int nd = 0;
        q = p;
        if (q < end && *q == '-')
            q++;
        while (q < end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
                           *q == 'E' || *q == '+' || *q == '-')) {
            nd += *q >= '0' && *q <= '9';
            q++;
        }
        if (!nd)
            q = NULL;
        break;
    }
    }
    if (!q)
        return NULL;
    if (v) {
        v->p = start;
        v->n = (size_t)(q - start);
        v->kind = kind;
    }
    return q;
}

const char *capture_json_skip(const char *p, const char *end, struct capture_jval *v)
{
    return skip_val(p, end, v, 0);
}

void capture_jiter_init(struct capture_jiter *it, const char *p, const char *end)
{
    it->p = p;
    it->end = end;
    it->first = 1;
    it->done = 0;
    it->close = 0;
    if (p < end && (*p == '{' || *p == '[')) {
        it->close = *p == '{' ? '}' : ']';
        it->p = p + 1;
    } else {
        it->done = -1;
    }
}

int capture_jiter_next(struct capture_jiter *it, struct capture_jval *key,
                       struct capture_jval *val)
{
    if (it->done)
        return it->done > 0 ? 0 : -1;
    const char *p = capture_skip_ws(it->p, it->end);
    if (p >= it->end)
        goto bad;
    if (*p == it->close) {
        it->p = p + 1;
        it->done = 1;
        return 0;
    }
    if (!it->first) {
        if (*p != ',')
            goto bad;
        p = capture_skip_ws(p + 1, it->end);
    }
    it->first = 0;
    if (it->close == '}') {
        struct capture_jval k;
        if (p >= it->end || *p != '"')
            goto bad;
        p = skip_val(p, it->end, &k, 1);
        if (!p)
            goto bad;
        if (key)
            *key = k;
        p = capture_skip_ws(p, it->end);
        if (p >= it->end || *p != ':')
            goto bad;
        p++;
    }
    struct capture_jval tmp;
    p = skip_val(p, it->end, val ? val : &tmp, 1);
    if (!p)
        goto bad;
    it->p = p;
    return 1;
bad:
    it->done = -1;
    return -1;
}

int capture_jval_is(const struct capture_jval *v, const char *s)
{
    size_t n = strlen(s);
    return v->kind == '"' && v->n == n && memcmp(v->p, s, n) == 0;
}

/* ======================================================================
 * String map (open addressing, FNV-1a)
 * ==================================================================== */

static uint64_t hash_bytes(const char *k, size_t n)
{
    return fnv1a64(k, n, FNV1A64_BASIS);
}

int capture_map_put(struct capture_map *m, const char *k, size_t kn, size_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t nc = m->cap ? m->cap * 2 : 64;
        struct capture_map_slot *ns = calloc(nc, sizeof(*ns));
        if (!ns)
            return CAIRN_NOMEM;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slots[i].k)
                continue;
            size_t j = hash_bytes(m->slots[i].k, m->slots[i].kn) & (nc - 1);
            while (ns[j].k)
                j = (j + 1) & (nc - 1);
            ns[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = ns;
        m->cap = nc;
    }
    size_t j = hash_bytes(k, kn) & (m->cap - 1);
    while (m->slots[j].k) {
        if (m->slots[j].kn == kn && memcmp(m->slots[j].k, k, kn) == 0) {
            m->slots[j].v = v;
            return CAIRN_OK;
        }
        j = (j + 1) & (m->cap - 1);
    }
    m->slots[j].k = k;
    m->slots[j].kn = kn;
    m->slots[j].v = v;
    m->n++;
    return CAIRN_OK;
}

int capture_map_get(const struct capture_map *m, const char *k, size_t kn, size_t *v)
{
    if (!m->cap)
        return 0;
    size_t j = hash_bytes(k, kn) & (m->cap - 1);
    while (m->slots[j].k) {
        if (m->slots[j].kn == kn && memcmp(m->slots[j].k, k, kn) == 0) {
            *v = m->slots[j].v;
            return 1;
        }
        j = (j + 1) & (m->cap - 1);
    }
    return 0;
}

void capture_map_free(struct capture_map *m)
{
    free(m->slots);
    m->slots = NULL;
    m->n = m->cap = 0;
}

/* ======================================================================
 * Reading files
 * ==================================================================== */

int capture_read_file(const char *path, uint64_t from, char **data, size_t *len)
{
    int rc = CAIRN_IO;
    char *p = NULL;
    size_t n = 0, alloc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    *data = NULL;
    *len = 0;
    if (fd < 0)
        return CAIRN_IO;
    struct stat st;
    if (fstat(fd, &st) != 0)
        goto out;
    if (from && lseek(fd, (off_t)from, SEEK_SET) == (off_t)-1)
        goto out;
    /* The file may grow while we read it (a live transcript): read until
     * EOF rather than trusting st_size. */
    alloc = S_ISREG(st.st_mode) && (uint64_t)st.st_size > from
            ? (size_t)((uint64_t)st.st_size - from) + 1 : 65536;
    if (alloc > CAPTURE_MAX_FILE) {
        rc = CAIRN_TOOBIG;
        goto out;
    }
    p = malloc(alloc + 1);
    if (!p) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    for (;;) {
        if (n == alloc) {
            if (alloc >= CAPTURE_MAX_FILE) {
                rc = CAIRN_TOOBIG;
                goto out;
            }
            size_t na = alloc * 2;
            char *np = realloc(p, na + 1);
            if (!np) {
                rc = CAIRN_NOMEM;
                goto out;
            }
            p = np;
            alloc = na;
        }
        ssize_t r = read(fd, p + n, alloc - n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            goto out;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    p[n] = '\0';
    *data = p;
    *len = n;
    p = NULL;
    rc = CAIRN_OK;
out:
    free(p);
    close(fd);
    return rc;
}
