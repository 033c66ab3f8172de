/*
 * units.h: a session's units kept at write time (session_units, schema 30;
 * issue 23, branch units49; the format is in units.c).
 *
 * A unit is what recall ranks (recall/rank.c, build_units): a user turn and
 * the replies that follow it, each reply after the first of a run longer
 * than the rule's count a unit of its own, or each turn of a session
 * without replies (a dialog between people). The row holds, for each unit
 * in order, what the keyword ranking reads of it without its turns: its
 * turns' count, its first turn's id and position, its head's role, time and
 * token count, and the round's token count. It is derived data: a row is
 * used only when its rule is the reader's and its turn count is the
 * session's packed turns' (session_turns.n); a delete or rewrite of one of
 * the session's messages drops it with the packed turns (their triggers),
 * every writer of session_turns writes it after its own row, and a session
 * without a valid row is ranked from its turns.
 */
#ifndef CAIRN_STORE_UNITS_H
#define CAIRN_STORE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* The units' rule the writers use: a run of more replies than this makes
 * each reply after its first a unit (recall/policy.h's UNIT_MAX_REPLIES;
 * test_session_units checks that they agree), with the rule's version above
 * it. A reader whose rule differs reads the turns instead. */
#define STORE_UNIT_MAX_REPLIES 4
#define STORE_UNITS_RULE (0x100 | STORE_UNIT_MAX_REPLIES)
#define STORE_UNITS_MARK 0xD5

/* The row's flags. */
enum {
    STORE_UNITS_DIALOG = 1,    /* no reply: every turn a unit */
    STORE_UNITS_IDS_RISE = 2,  /* message ids rise with position (a match's
                                * unit is found by its id among the units'
                                * first ids) */
};

struct store_unit {
    int64_t first_id, first_pos;  /* its first turn's message id and position */
    int64_t head_at;              /* its head's time, CAIRN_NO_TIME when none */
    int64_t round_ntok;           /* its turns' index tokens, summed */
    int     n_turns;
    int     head_user;            /* the head's role is "user" */
    int     head_ntok;
};

/* A row being read: p past the header, the previous unit's values. */
struct units_cur {
    const char *p, *end;
    int64_t     id, pos, at;
    int         left;             /* units not yet read */
};

/* The row's header: 0 and c set to its first unit, *n_units and *flags;
 * -1 when it is not a row of this format. */
int store_units_open(struct units_cur *c, const char *row, size_t len, int *n_units, int *flags);
/* The next unit: 1, 0 at the row's end (exactly its n_units read), -1 when
 * the bytes there are not a unit (or not as many as the header says).
 * Never reads outside the row (tests/fuzz/fuzz_units.c). */
int store_units_next(struct units_cur *c, struct store_unit *u);
/* Up to n units into u[] as store_units_next reads them one by one: how
 * many were read before the end, a bad unit or n; c is past them. */
size_t store_units_read(struct units_cur *c, struct store_unit *u, size_t n);

/* A match's unit (issue 23, step (a)): the ordinal among the session's
 * units u[n] (as store_units_read gives them) of the unit holding the turn
 * whose message id is id, by a binary search of the units' first ids; -1
 * when id precedes the first unit's. Only for a row flagged
 * STORE_UNITS_IDS_RISE and an id of one of its session's turns (a unit's
 * turns are the ids from its first up to the next unit's first): a row
 * without the flag is ranked from its turns, no varint is added to the
 * packed postings for it. */
int store_unit_of(const struct store_unit *u, int n, int64_t id);
/* The search of both: the last unit whose first id is at most id, given
 * that lo's is (or lo is -1) and hi's is not (or hi is n). */
static inline int store_unit_between(const struct store_unit *u, int lo, int hi, int64_t id)
{
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (u[mid].first_id <= id)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
/* store_unit_of's answer, searched forward from unit `from` when id is at
 * or after its first id (else the whole search): for the matches of a
 * session taken by rising id, each found from the one before. Inline:
 * most matches are in the unit before's or the next (gather's loop,
 * ~250,000 matches at a million messages). */
static inline int store_unit_from(const struct store_unit *u, int n, int from, int64_t id)
{
    if (from < 0 || from >= n || u[from].first_id > id)
        return store_unit_of(u, n, id);
    /* galloping from `from`: lo's first id is at most id, hi's is past it
     * (or hi is n), then store_unit_of's search between them; so log of
     * the gap, not of n */
    int lo = from, hi = from + 1;
    for (int step = 1; hi < n && u[hi].first_id <= id; step *= 2) {
        lo = hi;
        hi = n - lo > 2 * step ? lo + 2 * step : n;
    }
    return store_unit_between(u, lo, hi, id);
}

struct buf;
/* The row of a session's packed turns (turns, len: a session_turns row
 * past its mark, n turns) into b under the writers' rule: 0, or -1 when
 * the turns do not read as n turns (no row is kept then) or on no memory
 * (b->err). */
int store_units_pack(struct buf *b, const char *turns, size_t len, int64_t n);
/* Appends one unit after prev's (the packer's, and tests' rows). */
void store_unit_write(struct buf *b, struct units_cur *prev, const struct store_unit *u);

struct cairn;
struct sqlite3_stmt;
/* The row's statement (?1 session, ?2 n, ?3 rule, ?4 units). */
#define STORE_UNITS_INS_SQL "INSERT OR REPLACE INTO session_units(session, n, rule, units) " \
                            "VALUES (?1, ?2, ?3, ?4)"
/* Writes sess's row by ins (STORE_UNITS_INS_SQL) from its packed turns
 * (store_units_pack's arguments; b scratch); turns that do not read leave
 * it without one. */
int store_units_write(struct cairn *h, struct sqlite3_stmt *ins, int64_t sess, const char *turns,
                      size_t len, int64_t n, struct buf *b);
/* Writes the rows of sess (sess < 0: every session with packed turns and
 * without a row of the writers' rule and their count) from session_turns. */
int store_units_fill(struct cairn *h, int64_t sess);

#endif
