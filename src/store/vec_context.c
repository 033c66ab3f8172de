/*
 * vec_context.c: the text a turn's vector is made from when the setting
 * embed.context asks for its neighbours (issue 16: turns that do not name
 * what they are about, "Yes, I adopted them last year"). Only the vector
 * changes: the stored text, its keywords and what recall shows stay the
 * turn's own. Measured and left off by default (docs/ARCHITECTURE.md,
 * "Multi-hop: turns embedded with their context").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "store/vectors.h"
#include "util/buf.h"

static int is_space(char c)
{
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* Back off p[0..n) to a UTF-8 boundary. */
static size_t utf8_floor(const char *p, size_t n, size_t len)
{
    if (n >= len)
        return len;
    while (n > 0 && ((unsigned char)p[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* Words of s, counting at most cap (0: no cap is never asked). */
static int count_words(const char *s, size_t len, int cap)
{
    int w = 0;
    for (size_t i = 0; i < len && w < cap; i++)
        if (!is_space(s[i]) && (i == 0 || is_space(s[i - 1])))
            w++;
    return w;
}

/* The last maxb bytes of s, starting at a word when the cut falls in one
 * (a single word longer than maxb keeps its tail, from a UTF-8 boundary). */
static void tail_bytes(const char *s, size_t len, size_t maxb, size_t *off, size_t *n)
{
    size_t end = len, i;
    while (end > 0 && is_space(s[end - 1]))
        end--;
    i = end > maxb ? end - maxb : 0;
    if (i > 0 && !is_space(s[i - 1])) {
        size_t j = i;
        while (j < end && !is_space(s[j]))
            j++;
        if (j < end)
            i = j;
    }
    while (i < end && (is_space(s[i]) || ((unsigned char)s[i] & 0xC0) == 0x80))
        i++;
    *off = i;
    *n = end - i;
}

/* The first maxb bytes of s (from its first non-blank: *off), ending at a
 * word when the cut falls in one. */
static size_t head_bytes(const char *s, size_t len, size_t maxb, size_t *off)
{
    size_t i = 0;
    while (i < len && is_space(s[i]))
        i++;
    *off = i;
    size_t end = len - i > maxb ? i + maxb : len;
    if (end < len && !is_space(s[end])) {
        size_t j = end;
        while (j > i && !is_space(s[j - 1]))
            j--;
        if (j > i)
            end = j;
    }
    end = i + utf8_floor(s + i, end - i, len - i);
    while (end > i && is_space(s[end - 1]))
        end--;
    return end - i;
}

int vec_ctx_parse(const char *spec, struct vec_ctx *c)
{
    memset(c, 0, sizeof *c);
    if (!spec || !*spec || !strcmp(spec, "0") || !strcmp(spec, "off"))
        return 0;
    const char *p = spec;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        long v = 0;
        char *end;
        if (n == 4 && !strncmp(p, "last", 4)) {
            c->prev_last = 1;
        } else if (n == 3 && !strncmp(p, "ask", 3)) {
            c->ask = 1;
        } else if (n == 4 && !strncmp(p, "both", 4)) {
            c->both = 1;
        } else if (n > 5 && !strncmp(p, "prev=", 5)) {
            v = strtol(p + 5, &end, 10);
            if (end != p + n || v < 0 || v > VEC_CTX_MAX_WORDS)
                return -1;
            c->prev_tok = (int)v;
        } else if (n > 5 && !strncmp(p, "next=", 5)) {
            v = strtol(p + 5, &end, 10);
            if (end != p + n || v < 0 || v > VEC_CTX_MAX_WORDS)
                return -1;
            c->next_tok = (int)v;
        } else if (n > 4 && !strncmp(p, "mix=", 4)) {
            v = strtol(p + 4, &end, 10);
            if (end != p + n || v < 0 || v > 100)
                return -1;
            c->mix_prev = (int)v;
        } else if (n > 5 && !strncmp(p, "mixn=", 5)) {
            v = strtol(p + 5, &end, 10);
            if (end != p + n || v < 0 || v > 100)
                return -1;
            c->mix_next = (int)v;
        } else if (n > 6 && !strncmp(p, "short=", 6)) {
            v = strtol(p + 6, &end, 10);
            if (end != p + n || v < 0 || v > 100000)
                return -1;
            c->short_words = (int)v;
        } else {
            return -1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

void vec_ctx_mix(const struct vec_ctx *c, const struct vec_batch *b, float *v0)
{
    int d = b->dim;
    size_t n = b->n;
    if (!b->v || (!c->mix_prev && !c->mix_next))
        return;
    /* v0: a copy of every message's first vector before mixing */
    for (size_t i = 0; i < n; i++)
        if (b->first[i] < b->first[i + 1])
            memcpy(v0 + i * (size_t)d, b->v + (size_t)b->first[i] * d, (size_t)d * sizeof *v0);
    for (size_t i = 0; i < n; i++) {
        if (b->first[i] == b->first[i + 1])
            continue;
        float *v = b->v + (size_t)b->first[i] * d;
        int any = 0;
        if (c->mix_prev && i > 0 && b->first[i - 1] < b->first[i]) {
            for (int k = 0; k < d; k++)
                v[k] += (float)c->mix_prev / 100.f * v0[(i - 1) * (size_t)d + k];
            any = 1;
        }
        if (c->mix_next && i + 1 < n && b->first[i + 1] < b->first[i + 2]) {
            for (int k = 0; k < d; k++)
                v[k] += (float)c->mix_next / 100.f * v0[(i + 1) * (size_t)d + k];
            any = 1;
        }
        if (any) {
            double s = 0;
            for (int k = 0; k < d; k++)
                s += (double)v[k] * v[k];
            if (s > 0) {
                float r = (float)(1.0 / sqrt(s));
                for (int k = 0; k < d; k++)
                    v[k] *= r;
            }
        }
    }
}

int vec_ctx_on(const struct vec_ctx *c)
{
    return c->prev_tok > 0 || c->next_tok > 0;
}

/* "label: " for a neighbour (its speaker, else its role). */
static void add_label(struct buf *out, const char *label)
{
    if (label && *label) {
        buf_adds(out, label);
        buf_adds(out, ": ");
    }
}

int vec_ctx_text(const struct vec_ctx *c, const char *const *texts, const size_t *lens,
                 const char *const *labels, size_t n, size_t i, size_t piece_bytes,
                 struct buf *out)
{
    const char *own = texts[i];
    size_t olen = lens[i];
    size_t poff = 0, plen = 0, noff = 0, nlen = 0;
    int prev = c->prev_tok > 0 && i > 0 && lens[i - 1] > 0;
    int next = c->next_tok > 0 && i + 1 < n && lens[i + 1] > 0;

    buf_reset(out);
    if (!vec_ctx_on(c) || (!prev && !next))
        return 0;
    if (c->short_words && count_words(own, olen, c->short_words) >= c->short_words)
        return 0;
    /* K tokens at the 3.5 bytes a token vectors.c cuts pieces by; the
     * turn's own opening keeps at least half the piece */
    size_t pcap = (size_t)c->prev_tok * 7 / 2, ncap = (size_t)c->next_tok * 7 / 2;
    if (pcap > piece_bytes / 2)
        pcap = piece_bytes / 2;
    if (ncap > piece_bytes / 2)
        ncap = piece_bytes / 2;
    if (prev)
        tail_bytes(texts[i - 1], lens[i - 1], pcap, &poff, &plen);
    if (next)
        nlen = head_bytes(texts[i + 1], lens[i + 1], ncap, &noff);
    prev = prev && plen > 0 && (!c->ask || memchr(texts[i - 1] + poff, '?', plen));
    next = next && nlen > 0;
    if (!prev && !next)
        return 0;
    size_t lab = 0;
    if (prev && labels && labels[i - 1])
        lab += strlen(labels[i - 1]) + 3;
    if (next && labels && labels[i + 1])
        lab += strlen(labels[i + 1]) + 3;
    size_t used = (prev ? plen + 1 : 0) + (next ? nlen + 1 : 0) + lab;
    size_t room = piece_bytes > used ? piece_bytes - used : 0;
    if (room < piece_bytes / 2)
        room = piece_bytes / 2;
    size_t keep = utf8_floor(own, room, olen);
    if (prev && !c->prev_last) {
        add_label(out, labels ? labels[i - 1] : NULL);
        buf_add(out, texts[i - 1] + poff, plen);
        buf_addc(out, '\n');
    }
    buf_add(out, own, keep);
    if (prev && c->prev_last) {
        buf_addc(out, '\n');
        add_label(out, labels ? labels[i - 1] : NULL);
        buf_add(out, texts[i - 1] + poff, plen);
    }
    if (next) {
        buf_addc(out, '\n');
        add_label(out, labels ? labels[i + 1] : NULL);
        buf_add(out, texts[i + 1] + noff, nlen);
    }
    return out->err ? -1 : 1;
}
