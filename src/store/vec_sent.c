/*
 * vec_sent.c: a message's sentences as pieces of their own (issue 16,
 * multi-hop; branch piece55; the setting embed.sentences, off unless set).
 *
 * A message's one vector is of its opening ~128 tokens: a turn that says
 * three things ("Yeah! I adopted two Lab mixes last year. They're great
 * with the kids.") gets one averaged vector that matches no question well.
 * Here its sentences (or groups of them) are cut as more pieces of the
 * same message; recall takes a message's best piece (recall/dense.c,
 * merge_hits), so a question about one of them meets that one. Only the
 * vectors change: the stored text, keywords and what recall shows are the
 * message's own. docs/ARCHITECTURE.md, "Multi-hop: a vector per sentence".
 */
#include <stdlib.h>
#include <string.h>

#include "store/vectors.h"

/* Sentences looked at per message: a text of more is cut no further (its
 * tail joins the last one), so the cost is bounded whatever the input. */
#define SENT_MAX 64

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

int vec_sent_parse(const char *spec, struct vec_sent *c)
{
    memset(c, 0, sizeof *c);
    c->group = 1;
    if (!spec || !*spec || !strcmp(spec, "0") || !strcmp(spec, "off"))
        return 0;
    c->on = 1;
    const char *p = spec;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char tok[32];
        long v = 0;
        if (n >= sizeof tok)
            goto bad;
        memcpy(tok, p, n);
        tok[n] = '\0';
        char *eq = strchr(tok, '=');
        if (eq) {
            char *end;
            *eq = '\0';
            v = strtol(eq + 1, &end, 10);
            if (end == eq + 1 || *end || v < 0 || v > 1000)
                goto bad;
        }
        if (!strcmp(tok, "on") || !strcmp(tok, "1"))
            ;
        else if (!strcmp(tok, "only") && !eq)
            c->only = 1;
        else if (!strcmp(tok, "overlap") && !eq)
            c->overlap = 1;
        else if (!strcmp(tok, "min") && eq)
            c->min_words = (int)v;
        else if (!strcmp(tok, "group") && eq && v >= 1)
            c->group = (int)v;
        else if (!strcmp(tok, "words") && eq)
            c->words = (int)v;
        else if (!strcmp(tok, "long") && eq)
            c->long_words = (int)v;
        else
            goto bad;
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
bad:
    memset(c, 0, sizeof *c);
    c->group = 1;
    return -1;
}

static int count_words(const char *s, size_t a, size_t b)
{
    int w = 0, in = 0;
    for (size_t i = a; i < b; i++) {
        if (is_space(s[i]))
            in = 0;
        else if (!in) {
            in = 1;
            w++;
        }
    }
    return w;
}

struct span { size_t a, b; int words; };

/* The sentences of s[0, len): a run of . ! ? (with the quotes or brackets
 * that close it) before white space or the end, or a line break, ends one.
 * Leading and trailing white space trimmed; empty ones dropped. */
static int sentences(const char *s, size_t len, struct span *sp)
{
    int n = 0;
    size_t i = 0;
    while (i < len) {
        while (i < len && is_space(s[i]))
            i++;
        if (i >= len)
            break;
        size_t a = i, b = len;
        if (n < SENT_MAX - 1) {
            for (; i < len; i++) {
                if (s[i] == '\n') {
                    b = i;
                    break;
                }
                if (s[i] == '.' || s[i] == '!' || s[i] == '?') {
                    size_t j = i;
                    while (j < len && (s[j] == '.' || s[j] == '!' || s[j] == '?' ||
                                       s[j] == '"' || s[j] == '\'' || s[j] == ')'))
                        j++;
                    if (j >= len || is_space(s[j])) {
                        b = j;
                        break;
                    }
                    i = j - 1;
                }
            }
        }
        i = b;
        while (b > a && is_space(s[b - 1]))
            b--;
        sp[n].a = a;
        sp[n].b = b;
        sp[n].words = count_words(s, a, b);
        n++;
    }
    return n;
}

/* Joins a sentence of fewer than min words into the next one (the last
 * into the one before): "Yeah!" says nothing of its own. */
static int merge_short(struct span *sp, int n, int min)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        if (m && sp[m - 1].words < min) {
            sp[m - 1].b = sp[i].b;
            sp[m - 1].words += sp[i].words;
        } else {
            sp[m++] = sp[i];
        }
    }
    if (m > 1 && sp[m - 1].words < min) {
        sp[m - 2].b = sp[m - 1].b;
        sp[m - 2].words += sp[m - 1].words;
        m--;
    }
    return m;
}

/* The last sentence of a piece that starts at sentence i: `group`
 * sentences, or (words > 0) as many as reach that many words. */
static int piece_end(const struct span *sp, int n, int i, const struct vec_sent *c)
{
    int j = i, w = sp[i].words;
    if (c->words > 0) {
        while (j + 1 < n && w < c->words)
            w += sp[++j].words;
    } else {
        j = i + c->group - 1 < n - 1 ? i + c->group - 1 : n - 1;
    }
    return j;
}

int vec_sent_cut(const char *s, size_t len, size_t piece_bytes, const struct vec_sent *c,
                 size_t *off, size_t *plen, int max)
{
    struct span sp[SENT_MAX];
    int n, k = 0;
    if (!c->on || max <= 0 || !len)
        return 0;
    if (c->long_words > 0 && count_words(s, 0, len) < c->long_words)
        return 0;
    n = sentences(s, len, sp);
    if (c->min_words > 0)
        n = merge_short(sp, n, c->min_words);
    if (n < 2)
        return 0;                /* one sentence: the whole piece says it */
    for (int i = 0; i < n && k < max;) {
        int j = piece_end(sp, n, i, c);
        size_t a = sp[i].a, b = sp[j].b;
        if (b - a > piece_bytes) {
            /* the model reads no further: its first piece as vec_pieces
             * cuts it (at a line, a word, never inside a UTF-8 sequence) */
            size_t o1, l1;
            vec_pieces(s + a, b - a, piece_bytes, &o1, &l1, 1);
            b = a + o1 + l1;
            while (b > a && is_space(s[b - 1]))
                b--;
        }
        off[k] = a;
        plen[k] = b - a;
        k++;
        if (j == n - 1)
            break;
        i = c->overlap ? i + 1 : j + 1;
    }
    /* a group that is the whole message again says nothing new */
    if (k == 1 && off[0] == sp[0].a && plen[0] == sp[n - 1].b - sp[0].a)
        k = 0;
    return k;
}
