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
 * -1 (empty, not digits, out of int64's range). The reference reader: the
 * checked loop, a bound and an overflow test a digit. */
static inline int num_checked(const char **p, const char *end, char stop, int sign, int64_t *v)
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

/* num_checked where the text's last byte is not a digit (the caller
 * looked): a run of digits begun inside the text ends inside it, so the
 * loop needs no bound, and 19 digits or fewer cannot pass UINT64_MAX, so no overflow
 * test either; a longer run (leading zeros, or damage) goes to the checked
 * loop. A turn's ~7 digits were ~15 instructions each with both tests
 * (exact28: 249 M of a million-message recall's 1,311 M). Same result as
 * num_checked on every input (tests/unit/test_session_turns.c). */
static inline int num_unbounded(const char **p, const char *end, char stop, int sign, int64_t *v)
{
    const char *c = *p;
    int neg = 0;
    uint64_t x = 0;
    if (sign && c < end && *c == '-')
        neg = 1, c++;
    if (c >= end)
        return -1;
    const char *d = c;
    unsigned dg;
    while ((dg = (unsigned)(unsigned char)*c - '0') < 10) {
        x = x * 10 + dg;
        c++;
    }
    if (c - d > 19)
        return num_checked(p, end, stop, sign, v);
    if (c == d || *c != stop || x > (uint64_t)INT64_MAX + neg)
        return -1;
    *v = neg ? (int64_t)(0 - x) : (int64_t)x;
    *p = c + 1;
    return 0;
}

/* One turn, num_unbounded's digits when fast (compiled twice, once each). */
static inline __attribute__((always_inline)) int
turns_next(struct turns_cur *c, struct store_msg_row *r, const char **sp, size_t *splen, int fast)
{
    const char *p = c->p;
    int64_t did, dpos, dat = 0, ntok, slen = 0;
    if (p >= c->end)
        return 0;
#define num(p_, end_, stop_, sign_, v_) \
    (fast ? num_unbounded(p_, end_, stop_, sign_, v_) : num_checked(p_, end_, stop_, sign_, v_))
    /* the next message of the session at the next position, the common
     * turn (a session added in one go): "1,1," read as num would read it */
    if (fast && c->end - p >= 4 && !memcmp(p, "1,1,", 4)) {
        did = dpos = 1;
        p += 4;
    } else if (num(&p, c->end, ',', 1, &did) || num(&p, c->end, ',', 1, &dpos)) {
        return -1;
    }
    if (p + 2 > c->end || (p[0] != '0' && p[0] != '1') || p[1] != ',')
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
#undef num

/* Whether a run of digits begun inside c's text ends inside it (its last
 * byte is not a digit: a whole row ends in ';'). */
static int bounded(const struct turns_cur *c)
{
    return c->p < c->end && (unsigned)(unsigned char)c->end[-1] - '0' >= 10;
}

int store_turns_next(struct turns_cur *c, struct store_msg_row *r, const char **sp,
                     size_t *splen)
{
    return bounded(c) ? turns_next(c, r, sp, splen, 1) : turns_next(c, r, sp, splen, 0);
}

int store_turns_next_checked(struct turns_cur *c, struct store_msg_row *r, const char **sp,
                             size_t *splen)
{
    return turns_next(c, r, sp, splen, 0);
}

size_t store_turns_read(struct turns_cur *c, struct store_msg_row *r, size_t *splen, size_t n)
{
    /* the cursor in locals and the loop around the inlined reader: a call
     * a turn and the cursor through memory were ~40% of the reading */
    struct turns_cur k = *c;
    size_t i = 0;
    if (bounded(&k))
        while (i < n && turns_next(&k, &r[i], &r[i].speaker, &splen[i], 1) == 1)
            i++;
    else
        while (i < n && turns_next(&k, &r[i], &r[i].speaker, &splen[i], 0) == 1)
            i++;
    *c = k;
    return i;
}
