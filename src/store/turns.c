/*
 * turns.c: a session's packed turns (session_turns, schema 21; binary
 * since schema 27), written here by ingest.c as it appends and by
 * store_turns_fill (schema.c) as it packs a session again, and read by
 * recall_read.c. The reader never trusts the row: a damaged store could
 * hold anything there (tests/fuzz/fuzz_turns.c), and what it cannot read
 * makes the caller read the session's rows instead.
 *
 * A turn: a head byte (bit 0 role user, bit 1 a time follows, bit 2 a
 * speaker follows; no other bit), then varints (7 bits a byte, low group
 * first, the high bit set on all but the last): the id and the position
 * less the previous turn's, zigzagged (0, -1, 1, -2, ... as 0, 1, 2, 3,
 * ...), the time less the previous turn's (zigzagged, if any), the token
 * count, and the speaker's byte length and bytes (if any). The text format
 * of schemas 21-26 ("did,dpos,user,dat,ntok,speaker;") cost ~270
 * instructions a turn to read, 249 M of a million-message exact recall's
 * 1,311 M; a turn here is ~5 bytes, nearly every field one byte.
 *
 * A session's units (session_units, schema 30; store/units.h) share the
 * varints: a row is STORE_UNITS_MARK, the units' count and the flags, then
 * for each unit a head byte (bit 0 the head's role user, bit 1 a time
 * follows; no other bit) and varints: the turns' count, the first turn's
 * id and position less the previous unit's (zigzagged), the head's time
 * less the previous unit's head time (zigzagged, if any; 0 before the
 * first and after a head without one), the head's token count and the
 * round's. ~9.4 bytes a unit at a million messages.
 */
#include <string.h>

#include "store/recall_read.h"
#include "store/units.h"
#include "util/buf.h"

static uint64_t zigzag(int64_t v)
{
    return ((uint64_t)v << 1) ^ (v < 0 ? UINT64_MAX : 0);
}

static int64_t unzigzag(uint64_t u)
{
    return (int64_t)((u >> 1) ^ (0 - (u & 1)));
}

static void put_varint(struct buf *b, uint64_t v)
{
    unsigned char t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (unsigned char)v;
    buf_add(b, t, n);
}

void store_turn_write(struct buf *b, struct turns_cur *prev, int64_t id, int64_t pos, int user,
                      int64_t at, int ntok, const char *speaker, size_t splen)
{
    int has_at = at != CAIRN_NO_TIME;
    buf_addc(b, (char)((user ? 1 : 0) | (has_at ? 2 : 0) | (speaker ? 4 : 0)));
    /* differences wrap as the reader's sums do: never undefined */
    put_varint(b, zigzag((int64_t)((uint64_t)id - (uint64_t)prev->id)));
    put_varint(b, zigzag((int64_t)((uint64_t)pos - (uint64_t)prev->pos)));
    if (has_at)
        put_varint(b, zigzag((int64_t)((uint64_t)at - (uint64_t)prev->at)));
    put_varint(b, (uint64_t)(int64_t)ntok);       /* a negative count is refused */
    if (speaker) {
        put_varint(b, splen);
        buf_add(b, speaker, splen);
    }
    prev->id = id;
    prev->pos = pos;
    prev->at = has_at ? at : 0;
}

/* A varint at *p before end: 0 and *v, or -1 (cut short, or past 64
 * bits). One byte, the common case, first. */
static inline int varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *c = *p;
    if (c < end && *c < 0x80) {
        *v = *c;
        *p = c + 1;
        return 0;
    }
    /* two bytes: a token count of 128-16,383, most rounds' (issue 23, units49) */
    if (end - c >= 2 && c[1] < 0x80) {
        *v = (uint64_t)(c[0] & 0x7f) | (uint64_t)c[1] << 7;
        *p = c + 2;
        return 0;
    }
    uint64_t x = 0;
    for (int s = 0; s < 64; s += 7) {
        if (c >= end)
            return -1;
        unsigned b = *c++;
        if (s == 63 && b > 1)
            return -1;
        x |= (uint64_t)(b & 0x7f) << s;
        if (!(b & 0x80)) {
            *v = x;
            *p = c;
            return 0;
        }
    }
    return -1;
}

/* A turn's or unit's id, position and time from the previous one's and
 * the zigzagged differences (sums wrap, never undefined): 0, or -1 for a
 * position outside int or a time that reads as none. */
static inline int undelta(int64_t id0, int64_t pos0, int64_t at0, uint64_t did, uint64_t dpos,
                          uint64_t dat, int no_at, int64_t *id, int64_t *pos, int64_t *at)
{
    *id = (int64_t)((uint64_t)id0 + (uint64_t)unzigzag(did));
    *pos = (int64_t)((uint64_t)pos0 + (uint64_t)unzigzag(dpos));
    *at = (int64_t)((uint64_t)at0 + (uint64_t)unzigzag(dat));
    return *pos < INT32_MIN || *pos > INT32_MAX || (!no_at && *at == CAIRN_NO_TIME) ? -1 : 0;
}

/* One turn (store_turns_next's contract). */
static inline int turn_next(struct turns_cur *c, struct store_msg_row *r, const char **sp,
                            size_t *splen)
{
    const unsigned char *p = (const unsigned char *)c->p, *end = (const unsigned char *)c->end;
    uint64_t did, dpos, dat = 0, ntok, slen = 0;
    if (p >= end)
        return 0;
    unsigned head = *p++;
    if (head > 7 || varint(&p, end, &did) || varint(&p, end, &dpos) ||
        ((head & 2) && varint(&p, end, &dat)) || varint(&p, end, &ntok) || ntok > INT32_MAX)
        return -1;
    *sp = NULL;
    *splen = 0;
    if (head & 4) {
        if (varint(&p, end, &slen) || slen > (uint64_t)(end - p))
            return -1;
        *sp = (const char *)p;
        *splen = (size_t)slen;
        p += slen;
    }
    int64_t id, pos, at;
    int no_at = !(head & 2);
    if (undelta(c->id, c->pos, c->at, did, dpos, dat, no_at, &id, &pos, &at))
        return -1;
    r->row = id;
    r->position = (int)pos;
    r->user = head & 1;
    r->at = no_at ? CAIRN_NO_TIME : at;
    r->ntok = (int)ntok;
    c->id = id;
    c->pos = pos;
    c->at = no_at ? 0 : at;
    c->p = (const char *)p;
    return 1;
}

int store_turns_next(struct turns_cur *c, struct store_msg_row *r, const char **sp,
                     size_t *splen)
{
    return turn_next(c, r, sp, splen);
}

size_t store_turns_read(struct turns_cur *c, struct store_msg_row *r, size_t *splen, size_t n)
{
    /* the cursor in locals and the loop around the inlined reader, not a
     * call a turn with the cursor through memory */
    struct turns_cur k = *c;
    size_t i = 0;
    while (i < n && turn_next(&k, &r[i], &r[i].speaker, &splen[i]) == 1)
        i++;
    *c = k;
    return i;
}

void store_unit_write(struct buf *b, struct units_cur *prev, const struct store_unit *u)
{
    int has_at = u->head_at != CAIRN_NO_TIME;
    buf_addc(b, (char)((u->head_user ? 1 : 0) | (has_at ? 2 : 0)));
    put_varint(b, (uint64_t)(int64_t)u->n_turns);
    put_varint(b, zigzag((int64_t)((uint64_t)u->first_id - (uint64_t)prev->id)));
    put_varint(b, zigzag((int64_t)((uint64_t)u->first_pos - (uint64_t)prev->pos)));
    if (has_at)
        put_varint(b, zigzag((int64_t)((uint64_t)u->head_at - (uint64_t)prev->at)));
    put_varint(b, (uint64_t)(int64_t)u->head_ntok);
    put_varint(b, (uint64_t)u->round_ntok);
    prev->id = u->first_id;
    prev->pos = u->first_pos;
    prev->at = has_at ? u->head_at : 0;
}

int store_units_open(struct units_cur *c, const char *row, size_t len, int *n_units, int *flags)
{
    const unsigned char *p = (const unsigned char *)row, *end = p + len;
    uint64_t n, f;
    if (!len || *p++ != STORE_UNITS_MARK || varint(&p, end, &n) || n > INT32_MAX ||
        varint(&p, end, &f) || f > (STORE_UNITS_DIALOG | STORE_UNITS_IDS_RISE))
        return -1;
    *c = (struct units_cur){ (const char *)p, row + len, 0, 0, 0, (int)n };
    *n_units = (int)n;
    *flags = (int)f;
    return 0;
}

static inline int unit_next(struct units_cur *c, struct store_unit *u)
{
    const unsigned char *p = (const unsigned char *)c->p, *end = (const unsigned char *)c->end;
    uint64_t nt, did, dpos, dat = 0, hntok, rntok;
    if (!c->left)
        return p == end ? 0 : -1;
    if (p >= end)
        return -1;
    unsigned head = *p++;
    if (head > 3 || varint(&p, end, &nt) || !nt || nt > INT32_MAX ||
        varint(&p, end, &did) || varint(&p, end, &dpos) ||
        ((head & 2) && varint(&p, end, &dat)) || varint(&p, end, &hntok) ||
        hntok > INT32_MAX || varint(&p, end, &rntok) || rntok > INT64_MAX || rntok < hntok)
        return -1;
    int64_t id, pos, at;
    int no_at = !(head & 2);
    if (undelta(c->id, c->pos, c->at, did, dpos, dat, no_at, &id, &pos, &at))
        return -1;
    *u = (struct store_unit){
        .first_id = id, .first_pos = pos, .head_at = no_at ? CAIRN_NO_TIME : at,
        .round_ntok = (int64_t)rntok, .n_turns = (int)nt, .head_user = (int)(head & 1),
        .head_ntok = (int)hntok,
    };
    c->id = id;
    c->pos = pos;
    c->at = no_at ? 0 : at;
    c->p = (const char *)p;
    c->left--;
    return 1;
}

int store_units_next(struct units_cur *c, struct store_unit *u)
{
    return unit_next(c, u);
}

/* The most bytes unit_next reads of one unit, accepted or not: its head
 * and six varints of at most ten bytes (a longer one is refused at its
 * tenth). */
#define UNIT_MAX_BYTES 61

/* varint's answer for a varint with ten bytes readable at *p: no end
 * checked (the unit's end is, once: unit_at). */
static inline int varint10(const unsigned char **p, uint64_t *v)
{
    const unsigned char *c = *p;
    unsigned b = c[0];
    if (b < 0x80) {
        *v = b;
        *p = c + 1;
        return 0;
    }
    /* two and three bytes unrolled: a time's or a round's tokens */
    unsigned b1 = c[1];
    if (b1 < 0x80) {
        *v = (b & 0x7f) | (uint64_t)b1 << 7;
        *p = c + 2;
        return 0;
    }
    unsigned b2 = c[2];
    if (b2 < 0x80) {
        *v = (b & 0x7f) | (uint64_t)(b1 & 0x7f) << 7 | (uint64_t)b2 << 14;
        *p = c + 3;
        return 0;
    }
    uint64_t x = (b & 0x7f) | (uint64_t)(b1 & 0x7f) << 7 | (uint64_t)(b2 & 0x7f) << 14;
    for (int i = 3; i < 10; i++) {
        b = c[i];
        if (i == 9 && b > 1)
            return -1;
        x |= (uint64_t)(b & 0x7f) << (7 * i);
        if (b < 0x80) {
            *v = x;
            *p = c + i + 1;
            return 0;
        }
    }
    return -1;
}

/* unit_next's unit at *p, with UNIT_MAX_BYTES readable there: 1 with u
 * and the previous values (*id, *pos, *at) moved on, or -1 (nothing
 * changed) when unit_next refuses it, a unit reaching past end too. */
static inline int unit_at(const unsigned char **pp, const unsigned char *end, int64_t *id0,
                          int64_t *pos0, int64_t *at0, struct store_unit *u)
{
    const unsigned char *p = *pp;
    uint64_t nt, did, dpos, dat = 0, hntok, rntok;
    unsigned head = *p++;
    if (head > 3 || varint10(&p, &nt) || !nt || nt > INT32_MAX || varint10(&p, &did) ||
        varint10(&p, &dpos) || ((head & 2) && varint10(&p, &dat)) || varint10(&p, &hntok) ||
        hntok > INT32_MAX || varint10(&p, &rntok) || rntok > INT64_MAX || rntok < hntok || p > end)
        return -1;
    int64_t id, pos, at;
    int no_at = !(head & 2);
    if (undelta(*id0, *pos0, *at0, did, dpos, dat, no_at, &id, &pos, &at))
        return -1;
    *u = (struct store_unit){
        .first_id = id, .first_pos = pos, .head_at = no_at ? CAIRN_NO_TIME : at,
        .round_ntok = (int64_t)rntok, .n_turns = (int)nt, .head_user = (int)(head & 1),
        .head_ntok = (int)hntok,
    };
    *id0 = id;
    *pos0 = pos;
    *at0 = no_at ? 0 : at;
    *pp = p;
    return 1;
}

/* store_units_next's units one after another (recall's rows, ~250,000
 * units a thread at a million messages; issue 23, rank52): while a whole
 * unit's most bytes are left in the row, no end checked a varint; the
 * row's last bytes copied beside zeros and read the same way, a unit
 * reaching past them refused (a zero ends a varint, so one cut short
 * ends inside the zeros). The same units and refusals as unit_next's
 * (test_session_units checks them against it on random and hostile
 * rows); the copy is on the stack, under UNIT_MAX_BYTES a row. */
size_t store_units_read(struct units_cur *c, struct store_unit *u, size_t n)
{
    const unsigned char *p = (const unsigned char *)c->p, *end = (const unsigned char *)c->end;
    int64_t id = c->id, pos = c->pos, at = c->at;
    int left = c->left;
    size_t i = 0;
    while (i < n && left && end - p >= UNIT_MAX_BYTES &&
           unit_at(&p, end, &id, &pos, &at, &u[i]) == 1) {
        i++;
        left--;
    }
    if (i < n && left && p < end && end - p < UNIT_MAX_BYTES) {
        unsigned char tail[2 * UNIT_MAX_BYTES] = { 0 };
        size_t len = (size_t)(end - p);
        memcpy(tail, p, len);
        const unsigned char *q = tail;
        while (i < n && left && q < tail + len &&
               unit_at(&q, tail + len, &id, &pos, &at, &u[i]) == 1) {
            i++;
            left--;
        }
        p += q - tail;
    }
    c->p = (const char *)p;
    c->id = id;
    c->pos = pos;
    c->at = at;
    c->left = left;
    return i;
}

int store_unit_of(const struct store_unit *u, int n, int64_t id)
{
    return store_unit_between(u, -1, n, id);
}

/* The units as recall/rank.c's units_run makes them of a session's whole
 * turns (raw_rounds 0): the first turn leads one; without a reply in the
 * session each turn does; else a user turn does, and in a run of more
 * than STORE_UNIT_MAX_REPLIES replies each reply after the run's first.
 * The turns are read once for the count, the dialog flag and rising ids,
 * then again to write (a run's length read ahead where it begins). */
int store_units_pack(struct buf *b, const char *turns, size_t len, int64_t n)
{
    struct turns_cur c = { turns, turns + len, 0, 0, 0 };
    struct store_msg_row r;
    const char *sp;
    size_t spn;
    int64_t k = 0, prev_id = 0;
    int got, dialog = 1, rise = 1, nu = 0;
    while ((got = turn_next(&c, &r, &sp, &spn)) == 1) {
        if (k && r.row <= prev_id)
            rise = 0;
        prev_id = r.row;
        dialog &= r.user;
        k++;
    }
    if (got != 0 || k != n || n > INT32_MAX)
        return -1;
    struct buf body = BUF_INIT;
    struct units_cur w = { NULL, NULL, 0, 0, 0, 0 };
    struct store_unit u = { 0 };
    int prev_user = 1, run_long = 0;
    c = (struct turns_cur){ turns, turns + len, 0, 0, 0 };
    for (int64_t i = 0; i < n && turn_next(&c, &r, &sp, &spn) == 1; i++) {
        int run_first = 0;
        if (!dialog && !r.user && (i == 0 || prev_user)) {
            /* a run of replies begins: its length, read ahead */
            struct turns_cur look = c;
            struct store_msg_row x;
            int64_t run = 1;
            while (turn_next(&look, &x, &sp, &spn) == 1 && !x.user)
                run++;
            run_long = run > STORE_UNIT_MAX_REPLIES;
            run_first = 1;
        }
        prev_user = r.user;
        if (i == 0 || dialog || r.user || (run_long && !run_first)) {
            if (nu++)
                store_unit_write(&body, &w, &u);
            u = (struct store_unit){ .first_id = r.row, .first_pos = r.position,
                                     .head_at = r.at, .head_user = r.user,
                                     .head_ntok = r.ntok };
        }
        u.n_turns++;
        u.round_ntok += r.ntok;
    }
    if (nu)
        store_unit_write(&body, &w, &u);
    buf_addc(b, (char)STORE_UNITS_MARK);
    put_varint(b, (uint64_t)nu);
    put_varint(b, (uint64_t)((dialog ? STORE_UNITS_DIALOG : 0) |
                             (rise ? STORE_UNITS_IDS_RISE : 0)));
    if (body.n)
        buf_add(b, body.p, body.n);
    int bad = body.err || b->err;
    buf_release(&body);
    return bad ? -1 : 0;
}
