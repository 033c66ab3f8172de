/*
 * turns.c: a session's packed turns (session_turns, schema 21), the text
 * TURNS_ROW_SQL (internal.h) makes in SQL, written here by ingest.c as it
 * appends and read by recall_read.c. The reader never trusts the text: a
 * damaged store could hold anything there (tests/fuzz/fuzz_turns.c), and
 * what it cannot read makes the caller read the session's rows instead.
 */
#include <string.h>

#include "store/recall_read.h"
#include "util/buf.h"

void store_turn_write(struct buf *b, struct turns_cur *prev, int64_t id, int64_t pos, int user,
                      int64_t at, int ntok, const char *speaker)
{
    /* differences wrap as the reader's sums do: never undefined */
    buf_printf(b, "%lld,%lld,%d,", (long long)(uint64_t)((uint64_t)id - (uint64_t)prev->id),
               (long long)(uint64_t)((uint64_t)pos - (uint64_t)prev->pos), user ? 1 : 0);
    if (at != CAIRN_NO_TIME)
        buf_printf(b, "%lld", (long long)(uint64_t)((uint64_t)at - (uint64_t)prev->at));
    buf_printf(b, ",%d,", ntok);
    if (speaker) {
        size_t n = strlen(speaker);
        buf_printf(b, "%zu:", n);
        buf_add(b, speaker, n);
    }
    buf_addc(b, ';');
    prev->id = id;
    prev->pos = pos;
    prev->at = at != CAIRN_NO_TIME ? at : 0;
}

/* A decimal integer at *p ending at stop, optionally signed: 0 and *v, or
 * -1 (empty, not digits, out of int64's range). */
static inline int num(const char **p, const char *end, char stop, int sign, int64_t *v)
{
    const char *c = *p;
    int neg = 0;
    uint64_t x = 0;
    if (sign && c < end && *c == '-')
        neg = 1, c++;
    const char *d = c;
    while (c < end && *c >= '0' && *c <= '9') {
        if (x > (UINT64_MAX - 9) / 10)
            return -1;
        x = x * 10 + (uint64_t)(*c++ - '0');
    }
    if (c == d || c >= end || *c != stop || x > (uint64_t)INT64_MAX + neg)
        return -1;
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    *p = c + 1;
    return 0;
}

int store_turns_next(struct turns_cur *c, struct store_msg_row *r, const char **sp,
                     size_t *splen)
{
    const char *p = c->p;
    int64_t did, dpos, dat = 0, ntok, slen = 0;
    if (p >= c->end)
        return 0;
    if (num(&p, c->end, ',', 1, &did) || num(&p, c->end, ',', 1, &dpos) || p + 2 > c->end ||
        (p[0] != '0' && p[0] != '1') || p[1] != ',')
        return -1;
    int user = p[0] == '1';
    p += 2;
    int no_at = p < c->end && *p == ',';
    if (no_at)
        p++;
    else if (num(&p, c->end, ',', 1, &dat))
        return -1;
    if (num(&p, c->end, ',', 0, &ntok) || ntok > INT32_MAX)
        return -1;
    *sp = NULL;
    *splen = 0;
    if (p < c->end && *p != ';') {
        if (num(&p, c->end, ':', 0, &slen) || slen >= c->end - p)
            return -1;
        *sp = p;
        *splen = (size_t)slen;
        p += slen;
    }
    if (p >= c->end || *p != ';')
        return -1;
    int64_t id = (int64_t)((uint64_t)c->id + (uint64_t)did);
    int64_t pos = (int64_t)((uint64_t)c->pos + (uint64_t)dpos);
    int64_t at = (int64_t)((uint64_t)c->at + (uint64_t)dat);
    if (pos < INT32_MIN || pos > INT32_MAX || (!no_at && at == CAIRN_NO_TIME))
        return -1;
    r->row = id;
    r->position = (int)pos;
    r->user = user;
    r->at = no_at ? CAIRN_NO_TIME : at;
    r->ntok = (int)ntok;
    c->id = id;
    c->pos = pos;
    c->at = no_at ? 0 : at;
    c->p = p + 1;
    return 1;
}
