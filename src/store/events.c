/*
 * events.c: the dates a message speaks of (schema v15, message_events).
 *
 * A turn of 5 Dec that says "yesterday I went to the fair" is about
 * 4 Dec; one of 2 Nov that says "last week I threw a party" is about the
 * last week of October. A question that names the date ("what did Sam do
 * on December 4?") should meet that turn, but the turn's own time is the
 * day after, so the session-date boost alone ranked it down (issue 16:
 * rank 12 -> 326). So the write path reads every time expression of a
 * message against the message's own time (text/timeexpr.c: timeexpr_scan;
 * its session's start when the message has none) and stores one row per
 * date range it names; recall reads the rows whose range meets the
 * question's (recall_read.c, store_event_msgs).
 *
 * What is kept follows from what a mention says, not from a fitted
 * constant:
 *  - vague words ("lately", "recently", "these days") name no period;
 *  - a range that holds the message's own time ("today", "this week")
 *    adds nothing to the message's time, which recall matches already;
 *  - a range longer than EVENT_MAX_SPAN ("in 2022", "last year") names no
 *    event that a date in a question could pick out;
 *  - at most EVENTS_PER_MSG ranges a message, read from its first
 *    TIMEEXPR_SCAN_BYTES bytes, so a pasted log costs a bounded scan.
 *
 * The rows follow the message: triggers drop them when the message is
 * deleted (cairn_forget) or its text rewritten (a redaction, a message
 * extended by a later read of its transcript); the code that rewrites a
 * text then calls store_events_refresh in the same transaction. They hold
 * only numbers (message, session, two times), never text.
 */
#include <string.h>

#include "internal.h"
#include "text/timeexpr.h"

/* Events kept per message (EVENT_MAX_SPAN, the longest range kept, is in
 * internal.h: recall's lookup relies on it). */
#define EVENTS_PER_MSG STORE_EVENTS_MAX

static int event_keep(const struct time_range *r, int64_t at)
{
    if (r->vague || r->to <= r->from || r->to - r->from > EVENT_MAX_SPAN)
        return 0;
    return !(at >= r->from && at < r->to);
}

int store_events_scan(const char *text, size_t n, int64_t at, int64_t *ft)
{
    struct time_range r[EVENTS_PER_MSG];
    int k, kept = 0;
    if (at == CAIRN_NO_TIME || !text)
        return 0;          /* nothing to read "yesterday" against */
    k = timeexpr_scan(text, n, at, r, EVENTS_PER_MSG);
    for (int i = 0; i < k; i++) {
        int dup = 0;
        if (!event_keep(&r[i], at))
            continue;
        for (int j = 0; j < i && !dup; j++)
            dup = event_keep(&r[j], at) && r[j].from == r[i].from && r[j].to == r[i].to;
        if (dup)
            continue;
        ft[2 * kept] = r[i].from;
        ft[2 * kept + 1] = r[i].to;
        kept++;
    }
    return kept;
}

int store_events_put(struct cairn *h, sqlite3_stmt **st, int64_t msg, int64_t sess,
                     const int64_t *ft, int k)
{
    int rc, src;
    for (int i = 0; i < k; i++) {
        if (!*st && (rc = store_prepare(h, "INSERT INTO message_events(msg, session, t_from, "
                                        "t_to) VALUES (?,?,?,?)", st)))
            return rc;
        sqlite3_reset(*st);
        sqlite3_bind_int64(*st, 1, msg);
        sqlite3_bind_int64(*st, 2, sess);
        sqlite3_bind_int64(*st, 3, ft[2 * i]);
        sqlite3_bind_int64(*st, 4, ft[2 * i + 1]);
        if ((src = sqlite3_step(*st)) != SQLITE_DONE)
            return cairn__sqlerr(h, src, "store event date");
    }
    return CAIRN_OK;
}

int store_events_add(struct cairn *h, sqlite3_stmt **st, int64_t msg, int64_t sess, int64_t at,
                     const char *text, size_t n)
{
    int64_t ft[2 * STORE_EVENTS_MAX];
    return store_events_put(h, st, msg, sess, ft, store_events_scan(text, n, at, ft));
}

/* Reads messages from `sel` (id, session, time, text) and adds their
 * events. */
static int events_from(struct cairn *h, sqlite3_stmt *sel)
{
    sqlite3_stmt *ins = NULL;
    int rc = CAIRN_OK, src;
    while ((src = sqlite3_step(sel)) == SQLITE_ROW) {
        int64_t at = sqlite3_column_type(sel, 2) == SQLITE_NULL ? CAIRN_NO_TIME
                                                                 : sqlite3_column_int64(sel, 2);
        const char *t = (const char *)sqlite3_column_blob(sel, 3);
        size_t n = (size_t)sqlite3_column_bytes(sel, 3);
        if ((rc = store_events_add(h, &ins, sqlite3_column_int64(sel, 0),
                                   sqlite3_column_int64(sel, 1), at, t, n)))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "read messages for event dates");
out:
    sqlite3_finalize(ins);
    return rc;
}

/* The message's time, else its session's start; only the bytes the scan
 * reads (substr of the blob: a 50 MB paste is not loaded). */
#define EVENTS_SELECT \
    "SELECT m.id, m.session, coalesce(m.created_at, s.started_at), " \
    "substr(CAST(m.content AS BLOB), 1, " EVENTS_SCAN_BYTES_SQL ") " \
    "FROM messages m JOIN sessions s ON s.id = m.session "
#define EVENTS_SCAN_BYTES_SQL "65536"
_Static_assert(TIMEEXPR_SCAN_BYTES == 65536, "EVENTS_SCAN_BYTES_SQL follows TIMEEXPR_SCAN_BYTES");

int store_events_refresh(struct cairn *h, int64_t msg)
{
    sqlite3_stmt *del = NULL, *sel = NULL;
    int rc, src;
    /* the content triggers dropped them already; a caller that changed
     * only other columns still gets a clean slate */
    if ((rc = store_prepare(h, "DELETE FROM message_events WHERE msg = ?", &del)))
        goto out;
    sqlite3_bind_int64(del, 1, msg);
    if ((src = sqlite3_step(del)) != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "drop event dates");
        goto out;
    }
    if ((rc = store_prepare(h, EVENTS_SELECT "WHERE m.id = ?", &sel)))
        goto out;
    sqlite3_bind_int64(sel, 1, msg);
    rc = events_from(h, sel);
out:
    sqlite3_finalize(del);
    sqlite3_finalize(sel);
    return rc;
}

int store_events_fill(struct cairn *h)
{
    sqlite3_stmt *sel = NULL;
    int rc;
    /* The migration runs in whatever process opens the store first, often
     * a prompt hook with a 10 s timeout: reading every message of a big
     * store (about 35 s of CPU at a million) would be killed and rolled
     * back on every prompt. So the newest EVENTS_FILL_MAX messages only
     * (ids grow with time), about a second; older ones keep recall's
     * session-date behaviour of before v15. */
    if ((rc = store_prepare(h, EVENTS_SELECT "WHERE m.id > (SELECT coalesce(max(id), 0) "
                            "FROM messages) - ? ORDER BY m.id", &sel)))
        return rc;
    sqlite3_bind_int64(sel, 1, EVENTS_FILL_MAX);
    rc = events_from(h, sel);
    sqlite3_finalize(sel);
    return rc;
}

/* How many messages under `below` are left to read (0 when below <= 0). */
static int events_left(struct cairn *h, int64_t below, int64_t *left)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    *left = 0;
    if (below <= 0)
        return CAIRN_OK;
    if ((rc = store_prepare(h, "SELECT count(*) FROM messages WHERE id < ?", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, below);
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *left = sqlite3_column_int64(st, 0);
    else
        rc = cairn__sqlerr(h, src, "count unread messages");
    sqlite3_finalize(st);
    return rc;
}

/* One int64 from a one-row query with one bound int64 (and a second when
 * b2 >= 0); *out keeps `none` when the row is NULL or missing. */
static int events_one(struct cairn *h, const char *sql, int64_t b1, int64_t b2, int64_t none,
                      int64_t *out)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    *out = none;
    if ((rc = store_prepare(h, sql, &st)))
        return rc;
    if (b1 >= 0)
        sqlite3_bind_int64(st, 1, b1);
    if (b2 >= 0)
        sqlite3_bind_int64(st, 2, b2);
    src = sqlite3_step(st);
    if (src == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        *out = sqlite3_column_int64(st, 0);
    else if (src != SQLITE_ROW && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "read the event fill");
    sqlite3_finalize(st);
    return rc;
}

/* Reads the next chunk downwards from `below`: at most `max` messages,
 * their old rows dropped first (a message above the v15 migration's
 * line may be read again: same rows), `below` lowered to the chunk's
 * first id, all in the caller's transaction. */
static int events_chunk(struct cairn *h, int64_t below, int64_t max, int64_t *lo, int64_t *done)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    *done = 0;
    if ((rc = events_one(h, "SELECT min(id) FROM (SELECT id FROM messages WHERE id < ? "
                         "ORDER BY id DESC LIMIT ?)", below, max, 0, lo)))
        return rc;
    if (*lo > 0) {
        if ((rc = events_one(h, "SELECT count(*) FROM messages WHERE id >= ? AND id < ?", *lo,
                             below, 0, done)) ||
            (rc = store_prepare(h, "DELETE FROM message_events WHERE msg >= ? AND msg < ?", &st)))
            return rc;
        sqlite3_bind_int64(st, 1, *lo);
        sqlite3_bind_int64(st, 2, below);
        src = sqlite3_step(st);
        sqlite3_finalize(st);
        st = NULL;
        if (src != SQLITE_DONE)
            return cairn__sqlerr(h, src, "drop event dates");
        if ((rc = store_prepare(h, EVENTS_SELECT "WHERE m.id >= ? AND m.id < ?", &st)))
            return rc;
        sqlite3_bind_int64(st, 1, *lo);
        sqlite3_bind_int64(st, 2, below);
        rc = events_from(h, st);
        sqlite3_finalize(st);
        st = NULL;
        if (rc)
            return rc;
    }
    if ((rc = store_prepare(h, "UPDATE events_fill SET below = ?", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, *lo);   /* 0 when nothing was left under it */
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "record the event fill");
}

int cairn_events_fill(struct cairn *h, int64_t max, int64_t *done, int64_t *left)
{
    int64_t below = 0, lo = 0, n = 0;
    int rc;
    if (!h || !left || max < 0)
        return h ? cairn__err(h, CAIRN_INVALID, "events fill: bad arguments") : CAIRN_INVALID;
    *left = 0;
    if (done)
        *done = 0;
    if ((rc = events_one(h, "SELECT below FROM events_fill", -1, -1, 0, &below)))
        return rc;
    if (max == 0 || below <= 0)
        return events_left(h, below, left);
    if ((rc = store_begin(h)))
        return rc;
    /* again inside the write lock: another process may have read on */
    if ((rc = events_one(h, "SELECT below FROM events_fill", -1, -1, 0, &below)))
        goto fail;
    if (below > 0 && (rc = events_chunk(h, below, max, &lo, &n)))
        goto fail;
    if ((rc = store_commit(h)))
        return rc;
    if (done)
        *done = n;
    return events_left(h, lo, left);
fail:
    store_rollback(h);
    return rc;
}
