/*
 * data.c: what the dataset loaders share: an owning container for one
 * conversation's sessions and questions, the date formats the benchmarks
 * use, and a streaming reader for files that are one big JSON array.
 *
 * The container keeps every allocation in one list so a loader can build
 * freely and the runner frees it all at once; an allocation failure is
 * sticky (c->oom) and checked once when the conversation is complete.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "eval.h"
#include "../cli.h"
#include "util/buf.h"

void eval_conv_init(struct eval_conv *c)
{
    memset(c, 0, sizeof *c);
}

void eval_conv_free(struct eval_conv *c)
{
    for (size_t i = 0; i < c->n_keep; i++)
        free(c->keep[i]);
    free(c->keep);
    free(c->sess);
    free(c->jsess);
    free(c->qs);
    memset(c, 0, sizeof *c);
}

void *eval_keep(struct eval_conv *c, void *p)
{
    if (!p) {
        c->oom = 1;
        return NULL;
    }
    if (c->n_keep == c->a_keep) {
        size_t na = c->a_keep ? c->a_keep * 2 : 64;
        void **nk = realloc(c->keep, na * sizeof *nk);
        if (!nk) {
            free(p);
            c->oom = 1;
            return NULL;
        }
        c->keep = nk;
        c->a_keep = na;
    }
    c->keep[c->n_keep++] = p;
    return p;
}

void *eval_calloc(struct eval_conv *c, size_t n, size_t size)
{
    return eval_keep(c, calloc(n ? n : 1, size));
}

char *eval_strdup(struct eval_conv *c, const char *s)
{
    return eval_keep(c, strdup(s ? s : ""));
}

char *eval_printf(struct eval_conv *c, const char *fmt, ...)
{
    struct buf b = BUF_INIT;
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (b.err) {
        buf_release(&b);
        c->oom = 1;
        return NULL;
    }
    if (!b.alloc)          /* empty: p is the shared static "" */
        return eval_strdup(c, "");
    return eval_keep(c, buf_detach(&b, NULL));
}

/* Grows an array of `size`-byte slots by one zeroed slot; NULL on OOM. */
static void *grow(struct eval_conv *c, void **arr, size_t *n, size_t *a, size_t size)
{
    if (*n == *a) {
        size_t na = *a ? *a * 2 : 16;
        void *p = realloc(*arr, na * size);
        if (!p) {
            c->oom = 1;
            return NULL;
        }
        *arr = p;
        *a = na;
    }
    void *slot = (char *)*arr + (*n)++ * size;
    memset(slot, 0, size);
    return slot;
}

size_t eval_conv_name_dir(struct eval_conv *c, const char *dir)
{
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/')
        dl--;
    const char *base = dir + dl;
    while (base > dir && base[-1] != '/')
        base--;
    c->name = eval_printf(c, "%.*s", (int)(dir + dl - base), base);
    return dl;
}

struct cairn_session *eval_add_session(struct eval_conv *c)
{
    struct cairn_session *s = grow(c, (void **)&c->sess, &c->n_sess, &c->a_sess, sizeof *s);
    if (s) {
        s->started_at = CAIRN_NO_TIME;
        s->ended_at = CAIRN_NO_TIME;
    }
    return s;
}

struct eval_q *eval_add_question(struct eval_conv *c)
{
    return grow(c, (void **)&c->qs, &c->n_qs, &c->a_qs, sizeof(struct eval_q));
}

struct eval_json_sess *eval_add_json_session(struct eval_conv *c)
{
    return grow(c, (void **)&c->jsess, &c->n_jsess, &c->a_jsess, sizeof(struct eval_json_sess));
}

int eval_conv_add(struct cairn *db, const struct eval_conv *c, const char *only,
                  const char *who, size_t *msgs)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n_sess; i++) {
        const struct cairn_session *s = &c->sess[i];
        if (only && (!s->id || strcmp(s->id, only)))
            continue;
        if (cairn_add_session(db, s, NULL)) {
            cli_error("%s: %s: session %s: %s", who, c->name, s->id ? s->id : "(no id)",
                      cairn_errmsg(db));
            return 1;
        }
        n += s->n_messages;
    }
    /* the text `cairn add` would read, through the same call */
    for (size_t i = 0; i < c->n_jsess; i++) {
        const struct eval_json_sess *s = &c->jsess[i];
        if (only && (!s->id || strcmp(s->id, only)))
            continue;
        if (cairn_add_json(db, s->json, s->len, NULL)) {
            cli_error("%s: %s: sessions.jsonl:%zu: %s", who, c->name, s->line,
                      cairn_errmsg(db));
            return 1;
        }
        n += s->n_messages;
    }
    if (msgs)
        *msgs = n;
    return 0;
}

void eval_q_add_ev(struct eval_q *q, const char *session, const char *message)
{
    if (!session || !message)
        return;
    for (size_t i = 0; i < q->n_ev; i++)
        if (!strcmp(q->ev[i].session, session) && !strcmp(q->ev[i].message, message))
            return;
    q->ev[q->n_ev].session = session;
    q->ev[q->n_ev].message = message;
    q->n_ev++;
}

int eval_load(const char *dataset, const char *const *files, size_t n_files,
              struct eval_counts *k, eval_conv_fn fn, void *arg)
{
    int rc = 0;
    if (!strcmp(dataset, "madial"))
        return n_files == 2 ? eval_load_madial(files[0], files[1], k, fn, arg) : 2;
    for (size_t i = 0; i < n_files && !rc; i++) {
        if (!strcmp(dataset, "locomo"))
            rc = eval_load_locomo(files[i], k, fn, arg);
        else if (!strcmp(dataset, "beam"))
            rc = eval_load_beam(files[i], k, fn, arg);
        else if (!strcmp(dataset, "longmemeval"))
            rc = eval_load_longmemeval(files[i], k, fn, arg);
        else if (!strcmp(dataset, "sessions"))
            rc = eval_load_sessions(files[i], k, fn, arg);
        else
            return 2;
    }
    return rc;
}

/* ---- JSON Lines ---------------------------------------------------- */

int eval_each_line(char *text, size_t len, eval_line_fn fn, void *arg)
{
    size_t lineno = 0;
    char *p = text, *end = text + len;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        lineno++;
        *e = '\0';
        char *s = p;
        while (s < e && isspace((unsigned char)*s))
            s++;
        if (s < e) {
            int rc = fn(arg, s, (size_t)(e - s), lineno);
            if (rc)
                return rc;
        }
        p = e + 1;
    }
    return 0;
}

/* ---- dates ---------------------------------------------------------- */

static int month_of(const char *s, size_t len)
{
    static const char *const names[] = { "january", "february", "march", "april", "may",
        "june", "july", "august", "september", "october", "november", "december" };
    if (len < 3)
        return 0;
    for (int m = 0; m < 12; m++) {
        size_t nl = strlen(names[m]);
        if (len > nl)
            continue;
        if (!strncasecmp(s, names[m], len) && (len == nl || len == 3 || (m == 8 && len == 4)))
            return m + 1;
    }
    return 0;
}

/* Reads 1..4 digits at *p; -1 if none. */
static int num(const char **p)
{
    int v = 0, n = 0;
    while (isdigit((unsigned char)**p) && n < 4) {
        v = v * 10 + (**p - '0');
        (*p)++;
        n++;
    }
    return n ? v : -1;
}

static void skip_sp(const char **p)
{
    while (**p == ' ' || **p == '\t' || **p == ',')
        (*p)++;
}

static int word(const char **p, size_t *len)
{
    const char *s = *p;
    while (isalpha((unsigned char)**p))
        (*p)++;
    *len = (size_t)(*p - s);
    return *len > 0;
}

static int to_time(int y, int mo, int d, int h, int mi, int64_t *out)
{
    char iso[40];
    if (y < 1000 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59)
        return -1;
    snprintf(iso, sizeof iso, "%04d-%02d-%02dT%02d:%02d:00", y, mo, d, h, mi);
    return cairn_parse_time(iso, out) ? -1 : 0;
}

/* "1:56 pm on 8 May, 2023" */
static int parse_locomo(const char *s, int64_t *out)
{
    const char *p = s, *w;
    size_t wl;
    int h = num(&p), mi, d, mo, y;
    if (h < 0 || *p++ != ':' || (mi = num(&p)) < 0)
        return -1;
    skip_sp(&p);
    w = p;
    if (!word(&p, &wl) || wl != 2 || tolower((unsigned char)w[1]) != 'm')
        return -1;
    if (h < 1 || h > 12)
        return -1;
    if (tolower((unsigned char)w[0]) == 'a')
        h = h == 12 ? 0 : h;
    else if (tolower((unsigned char)w[0]) == 'p')
        h = h == 12 ? 12 : h + 12;
    else
        return -1;
    skip_sp(&p);
    if (strncasecmp(p, "on", 2))
        return -1;
    p += 2;
    skip_sp(&p);
    if ((d = num(&p)) < 0)
        return -1;
    skip_sp(&p);
    w = p;
    if (!word(&p, &wl) || !(mo = month_of(w, wl)))
        return -1;
    skip_sp(&p);
    if ((y = num(&p)) < 0)
        return -1;
    skip_sp(&p);
    return *p ? -1 : to_time(y, mo, d, h, mi, out);
}

/* "March-15-2024" */
static int parse_beam(const char *s, int64_t *out)
{
    const char *p = s;
    size_t wl;
    int mo, d, y;
    if (!word(&p, &wl) || !(mo = month_of(s, wl)) || *p++ != '-' || (d = num(&p)) < 0 ||
        *p++ != '-' || (y = num(&p)) < 0 || *p)
        return -1;
    return to_time(y, mo, d, 0, 0, out);
}

/* "2023/05/20 (Sat) 02:21" */
static int parse_lme(const char *s, int64_t *out)
{
    const char *p = s;
    int y, mo, d, h = 0, mi = 0;
    if ((y = num(&p)) < 0 || *p++ != '/' || (mo = num(&p)) < 0 || *p++ != '/' ||
        (d = num(&p)) < 0)
        return -1;
    skip_sp(&p);
    if (*p == '(') {
        while (*p && *p != ')')
            p++;
        if (*p++ != ')')
            return -1;
        skip_sp(&p);
    }
    if (*p) {
        if ((h = num(&p)) < 0 || *p++ != ':' || (mi = num(&p)) < 0)
            return -1;
        if (*p == ':') {        /* seconds, ignored */
            p++;
            if (num(&p) < 0)
                return -1;
        }
        skip_sp(&p);
        if (*p)
            return -1;
    }
    return to_time(y, mo, d, h, mi, out);
}

int eval_parse_date(const char *s, int64_t *out)
{
    if (!s || !*s)
        return -1;
    if (!parse_locomo(s, out) || !parse_beam(s, out) || !parse_lme(s, out))
        return 0;
    return cairn_parse_time(s, out) ? -1 : 0;
}

/* ---- streaming a top-level JSON array ------------------------------- */

#define ELEM_CAP ((size_t)512 << 20)

struct stream {
    const char *dataset, *path;
    eval_elem_fn fn;
    void *arg;
    struct buf elem;
    size_t index;
    int state;                  /* 0 before '[', 1 inside, 2 after ']' */
    int depth, in_str, esc;
};

static int emit(struct stream *st, int closing)
{
    size_t a = 0, b = st->elem.n;
    while (a < b && isspace((unsigned char)st->elem.p[a]))
        a++;
    while (b > a && isspace((unsigned char)st->elem.p[b - 1]))
        b--;
    if (a == b) {
        buf_reset(&st->elem);
        if (closing && st->index == 0)
            return 0;           /* "[]" */
        cli_error("%s: %s: empty element after element %zu", st->dataset, st->path, st->index);
        return 1;
    }
    st->elem.p[b] = '\0';
    int rc = st->fn(st->arg, st->elem.p + a, b - a, ++st->index);
    buf_reset(&st->elem);
    return rc;
}

static int feed(struct stream *st, const char *p, size_t n)
{
    size_t start = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (st->state == 0) {
            if (isspace(ch) || (st->index == 0 && (ch == 0xEF || ch == 0xBB || ch == 0xBF)))
                continue;
            if (ch != '[') {
                cli_error("%s: %s: not a JSON array (is it a %s file?)", st->dataset, st->path,
                          st->dataset);
                return 1;
            }
            st->state = 1;
            start = i + 1;
            continue;
        }
        if (st->state == 2) {
            if (!isspace(ch)) {
                cli_error("%s: %s: data after the closing ]", st->dataset, st->path);
                return 1;
            }
            continue;
        }
        if (st->in_str) {
            if (st->esc)
                st->esc = 0;
            else if (ch == '\\')
                st->esc = 1;
            else if (ch == '"')
                st->in_str = 0;
            continue;
        }
        int end = 0, closing = 0;
        if (ch == '"')
            st->in_str = 1;
        else if (ch == '{' || ch == '[')
            st->depth++;
        else if (ch == '}' || ch == ']') {
            if (st->depth == 0)
                end = closing = 1;
            else
                st->depth--;
        } else if (ch == ',' && st->depth == 0)
            end = 1;
        if (end) {
            buf_add(&st->elem, p + start, i - start);
            if (st->elem.err) {
                cli_error("%s: %s: element %zu is larger than %zu bytes", st->dataset, st->path,
                          st->index + 1, ELEM_CAP);
                return 1;
            }
            int rc = emit(st, closing);
            if (rc)
                return rc;
            start = i + 1;
            if (closing)
                st->state = 2;
        }
    }
    if (st->state == 1 && start < n) {
        buf_add(&st->elem, p + start, n - start);
        if (st->elem.err) {
            cli_error("%s: %s: element %zu is larger than %zu bytes", st->dataset, st->path,
                      st->index + 1, ELEM_CAP);
            return 1;
        }
    }
    return 0;
}

int eval_json_array_stream(const char *dataset, const char *path, eval_elem_fn fn, void *arg)
{
    struct stream st = { dataset, path, fn, arg, BUF_INIT, 0, 0, 0, 0, 0 };
    static char chunk[1 << 16];
    size_t n;
    int rc = 0;
    FILE *f = fopen(path, "rb");
    buf_init(&st.elem, ELEM_CAP);
    if (!f) {
        cli_error("%s: cannot open %s: %s", dataset, path, strerror(errno));
        return 1;
    }
    while (!rc && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
        rc = feed(&st, chunk, n);
    if (!rc && ferror(f)) {
        cli_error("%s: cannot read %s: %s", dataset, path, strerror(errno));
        rc = 1;
    }
    if (!rc && st.state == 0) {
        cli_error("%s: %s: empty file, expected a JSON array", dataset, path);
        rc = 1;
    }
    if (!rc && st.state == 1) {
        cli_error("%s: %s: truncated (the JSON array does not end)", dataset, path);
        rc = 1;
    }
    fclose(f);
    buf_release(&st.elem);
    return rc;
}
