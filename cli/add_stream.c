/*
 * add_stream.c: cuts `cairn add`'s input into documents as it reads.
 *
 * JSONL (one session a line; the first document decides: it ends on its
 * first line) is cut at each newline, so a broken line cannot swallow the
 * next. Anything else (pretty-printed sessions, an array) is read until
 * it parses or the input ends, with one more rule that keeps the cut the
 * same whatever the window holds: a document ends before the next line
 * that is a session alone (an object with a "messages" key, in column 1,
 * nothing after it). Without it, a broken pretty document would make the
 * reader wait for the end of the input to say so.
 *
 * A malformed document is skipped up to the next line that opens an
 * object or array in column 1, letting go of what it passes.
 */
#include <errno.h>
#include <string.h>
#include <stdlib.h>

#include "add_stream.h"
#include "util/json.h"
#include "util/utf8.h"

void add_stream_init(struct add_stream *s, FILE *f, size_t chunk, size_t max_doc)
{
    memset(s, 0, sizeof s[0]);
    s->f = f;
    s->chunk = chunk ? chunk : 1;
    s->max_doc = max_doc;
    s->jsonl = -1;
    s->lc_line = 1;
}

void add_stream_free(struct add_stream *s)
{
    free(s->b);
    s->b = NULL;
}

/* The 1-based line of byte off of the window, counting on from the last
 * call (offsets only grow: recounting from the start made a 100k-message
 * add quadratic). */
static size_t line_at(struct add_stream *s, size_t off)
{
    for (size_t i = s->lc_off; i < off; i++)
        s->lc_line += s->b[i] == '\n';
    if (off > s->lc_off)
        s->lc_off = off;
    return s->lc_line;
}

/* The 1-based column (in code points) of byte off within its line, whose
 * start the window holds (let_go keeps it). */
static size_t column_at(const char *b, size_t off)
{
    size_t st = off, l, c;
    while (st > 0 && b[st - 1] != '\n')
        st--;
    utf8_line_col(b + st, off - st, &l, &c);
    return c;
}

/* Drops b[0..k), counting its lines first. */
static void let_go(struct add_stream *s, size_t k)
{
    line_at(s, k);
    memmove(s->b, s->b + k, s->len - k);
    s->len -= k;
    s->lc_off -= k;
    s->p -= k;
}

static int fail(struct add_stream *s, const char *msg)
{
    snprintf(s->msg, sizeof s->msg, "%s", msg);
    s->err = 1;
    return -1;
}

/* Reads more, keeping b[p..) and the start of p's line (for columns). 1 if
 * bytes came, 0 at the end, -1 on failure. */
static int more(struct add_stream *s)
{
    if (s->eof)
        return 0;
    if (s->len == s->cap) {
        size_t k = s->p;
        while (k > 0 && s->b[k - 1] != '\n')
            k--;
        if (k > 0)
            let_go(s, k);
    }
    if (s->len == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : s->chunk;
        char *nb;
        if (s->len - s->p > s->max_doc) {
            char m[96];
            snprintf(m, sizeof m, "line %zu: a document larger than %zu bytes",
                     line_at(s, s->p), s->max_doc);
            return fail(s, m);
        }
        if (!(nb = realloc(s->b, ncap)))
            return fail(s, "out of memory");
        s->b = nb;
        s->cap = ncap;
    }
    size_t n = fread(s->b + s->len, 1, s->cap - s->len, s->f);
    s->len += n;
    if (n == 0) {
        s->eof = 1;
        if (ferror(s->f))
            return fail(s, strerror(errno));
    }
    return n > 0;
}

/* 1 if the line at b[q..) is a session alone: one JSON object with a
 * "messages" key, only spaces after it, and its newline in the window. */
static int line_is_session(const struct add_stream *s, size_t q)
{
    const char *nl = memchr(s->b + q, '\n', s->len - q), *end = NULL;
    if (!nl || s->b[q] != '{' || json_scan(s->b + q, (size_t)(nl - s->b) - q, &end) != cJSON_Object)
        return 0;
    if (!memmem(s->b + q, (size_t)(end - s->b) - q, "\"messages\"", 10))
        return 0;
    while (end < nl && (*end == ' ' || *end == '\t' || *end == '\r'))
        end++;
    return end == nl;
}

/* The first line in (q, lim) that is a session alone; 0 if none. */
static size_t next_session_line(const struct add_stream *s, size_t q, size_t lim)
{
    for (;;) {
        const char *nl = memchr(s->b + q, '\n', lim - q);
        if (!nl)
            return 0;
        q = (size_t)(nl - s->b) + 1;
        if (q < lim && s->b[q] == '{' && line_is_session(s, q))
            return q;
    }
}

/* The document at p: its type (0: malformed) and *end; -1 on failure. */
static int cut(struct add_stream *s, const char **end)
{
    for (;;) {
        const char *b = s->b + s->p, *eol = memchr(b, '\n', s->len - s->p);
        int type;
        if (s->jsonl == 1 && (eol || s->eof))
            return json_scan(b, eol ? (size_t)(eol - b) : s->len - s->p, end);
        if (s->jsonl != 1) {
            type = json_scan(b, s->len - s->p, end);
            /* a session line inside what parsed, or (on failure) anywhere
             * in the window, ends this document */
            size_t q = next_session_line(s, s->p, type ? (size_t)(*end - s->b) : s->len);
            if (q) {
                type = json_scan(b, q - s->p, end);
                if (type && s->jsonl < 0)
                    s->jsonl = !memchr(b, '\n', (size_t)(*end - b));
                return type;
            }
            /* a value that ends where the window does may go on (a
             * number at the top level): read on to see */
            if (type && *end == s->b + s->len && !s->eof)
                type = 0;
            if (type && s->jsonl < 0)
                s->jsonl = !memchr(b, '\n', (size_t)(*end - b));
            if (type || s->eof)
                return type;
        }
        if (more(s) < 0)
            return -1;
    }
}

/* Past a broken document at p: the next line that opens an object or
 * array in column 1. What it passes is let go as it reads. */
static void skip_broken(struct add_stream *s)
{
    for (;;) {
        const char *nl = memchr(s->b + s->p, '\n', s->len - s->p);
        if (nl && (size_t)(nl - s->b) + 1 < s->len) {
            s->p = (size_t)(nl - s->b) + 1;
            if (s->b[s->p] == '{' || s->b[s->p] == '[')
                return;
            continue;
        }
        if (s->eof) {
            s->p = s->len;
            return;
        }
        /* keep only a newline that ends the window: the next read may
         * open a line after it */
        let_go(s, nl ? (size_t)(nl - s->b) : s->len);
        s->p = 0;
        if (more(s) < 0)
            return;
    }
}

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

int add_stream_next(struct add_stream *s, const char **doc, size_t *n, int *type, size_t *line,
                    size_t *col)
{
    const char *end = NULL;
    if (s->err)
        return -1;
    for (;;) {
        while (s->p < s->len && is_space(s->b[s->p]))
            s->p++;
        if (s->p < s->len)
            break;
        if (more(s) <= 0)
            return -1;
    }
    int t = cut(s, &end);
    if (t < 0)
        return -1;
    if (!t) {
        size_t off = end && end >= s->b + s->p ? (size_t)(end - s->b) : s->p;
        *line = line_at(s, off);
        *col = column_at(s->b, off);
        skip_broken(s);
        return s->err ? -1 : 0;
    }
    *line = line_at(s, s->p);
    *doc = s->b + s->p;
    *n = (size_t)(end - *doc);
    *type = t;
    s->p += *n;
    return 1;
}
