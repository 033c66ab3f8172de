/*
 * query.c: a question becomes content terms and maybe a time range.
 *
 * Terms come from the same tokenizer as the index, so "running" meets
 * "runs" and 北京 meets 我上周去了北京开会. A whole question must be able
 * to match (OR semantics, weighted by IDF later): several peers AND every
 * term and find nothing for a natural question. Stop words are dropped,
 * unless nothing else is left. The MATCH expression quotes each term's
 * surface words, not the stemmed form, because FTS5 tokenizes the query
 * again and stemming a stem is not always the identity.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "recall/recall.h"
#include "text/tokenize.h"
#include "text/timeexpr.h"

struct collect {
    struct query *q;
    const char   *text;
    size_t        skip_from, skip_to;   /* the time expression's span */
};

static int add_term(void *arg, const char *tok, size_t n, size_t start, size_t end,
                    int colocated)
{
    struct collect *c = arg;
    struct query *q = c->q;
    if (colocated || n == 0)
        return 0;
    if (start >= c->skip_from && end <= c->skip_to)
        return 0;                               /* part of "last week" etc. */
    for (int i = 0; i < q->nt; i++) {
        if (strlen(q->t[i].norm) == n && !memcmp(q->t[i].norm, tok, n))
            return 0;
    }
    if (q->nt >= RECALL_MAX_TERMS)
        return 0;
    struct qterm *t = &q->t[q->nt];
    memset(t, 0, sizeof *t);
    t->norm = strndup(tok, n);
    t->surface = strndup(c->text + start, end - start);
    if (!t->norm || !t->surface) {
        free(t->norm);
        free(t->surface);
        return 1;
    }
    t->stop = text_is_stopword(tok, n);
    q->nt++;
    return 0;
}

int query_parse(struct query *q, const char *text, int64_t now, int use_time)
{
    struct collect c = { q, text, 0, 0 };
    size_t n = strlen(text);
    memset(q, 0, sizeof *q);
    q->text = text;
    q->now = now;
    if (use_time) {
        struct time_range tr;
        if (timeexpr_parse(text, n, now, &tr)) {
            q->has_range = 1;
            q->only_time = tr.only_time;
            q->from = tr.from;
            q->to = tr.to;
            c.skip_from = tr.start;
            c.skip_to = tr.end;
        }
    }
    if (text_tokenize(text, n, 1, add_term, &c))
        return CAIRN_NOMEM;
    /* Keep stop words only when the question has nothing else. */
    int content = 0;
    for (int i = 0; i < q->nt; i++)
        content += !q->t[i].stop;
    if (content || q->has_range) {
        /* a period with only stop words around it ("what did I do last
         * week?") is a question about the period, not about "I" and "do" */
        int k = 0;
        for (int i = 0; i < q->nt; i++) {
            if (q->t[i].stop) {
                free(q->t[i].norm);
                free(q->t[i].surface);
            } else {
                q->t[k++] = q->t[i];
            }
        }
        q->nt = k;
    }
    return CAIRN_OK;
}

void query_free(struct query *q)
{
    for (int i = 0; i < q->nt; i++) {
        free(q->t[i].norm);
        free(q->t[i].surface);
    }
    q->nt = 0;
}

void query_match_expr(const struct query *q, struct buf *b)
{
    for (int i = 0; i < q->nt; i++) {
        if (i)
            buf_adds(b, " OR ");
        buf_addc(b, '"');
        for (const char *s = q->t[i].surface; *s; s++) {
            if (*s == '"')
                buf_addc(b, '"');
            buf_addc(b, *s);
        }
        buf_addc(b, '"');
    }
}
