/*
 * pg_msgmap.c: every visible message's metadata, once a handle
 * (store/pg_msgmap.h, docs/POSTGRES.md "Reading the server").
 *
 * Version 6 read, for each question, the postings joined to each
 * candidate's message for its session and length, and the metadata of the
 * pool's sessions' messages (a few thousand sessions' rows, sorted on
 * disk): at 100,000 messages ~1.9 s of server time over 8 questions, for
 * rows that change only when someone pushes. Here they are read once
 * (one statement, 100,000 rows) and checked per question against a digest
 * of the sessions' row versions, which every change of a message moves.
 */
#include <stdlib.h>
#include <string.h>

#include "store/pg_msgmap.h"

static int cmp_pos(const void *a, const void *b)
{
    const struct pg_msg *x = a, *y = b;
    if (x->sess != y->sess)
        return (x->sess > y->sess) - (x->sess < y->sess);
    if (x->position != y->position)
        return (x->position > y->position) - (x->position < y->position);
    return (x->seq > y->seq) - (x->seq < y->seq);
}

static int cmp_seq(const void *a, const void *b)
{
    const struct pg_seq *x = a, *y = b;
    return (x->seq > y->seq) - (x->seq < y->seq);
}

void pg_msgmap_free(struct pg_msgmap *mm)
{
    for (int i = 0; i < mm->n; i++)
        free(mm->msg[i].speaker);
    free(mm->msg);
    free(mm->by_seq);
    free(mm->first);
    memset(mm, 0, sizeof *mm);
}

const struct pg_msg *pg_msgmap_find(const struct pg_msgmap *mm, int64_t seq)
{
    struct pg_seq k = { seq, 0 };
    const struct pg_seq *f = mm->n ? bsearch(&k, mm->by_seq, (size_t)mm->n, sizeof k, cmp_seq)
                                   : NULL;
    return f ? &mm->msg[f->at] : NULL;
}

/* The digest of the visible sessions' row versions: their count and an
 * md5 of their xmins (a row the counters rewrote has a new one; a
 * forgotten session's row is gone). In the heap's order, not sorted (at
 * 5,000 sessions 12 -> 5-9 ms): an order that moves without a change only
 * reads the map again. */
static int read_stamp(struct pgc *pc, char *out, size_t n)
{
    PGresult *r = PQexec(pc->c, "SELECT count(*)::text || ':' || md5(coalesce(string_agg("
                                "xmin::text, ','), '')) FROM cairn.sessions");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return pg_fail(pc, r, "read sessions' state");
    snprintf(out, n, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    return CAIRN_OK;
}

/* Reads the rows into mm (empty): messages of loaded sessions only. */
static int load(struct pgc *pc, struct pg_msgmap *mm, int nsess, pg_sess_fn sess_of, void *arg)
{
    /* from messages_meta alone where the planner can; no order asked: the
     * client sorts (a server sort of 100,000 rows spills to disk) */
    PGresult *r = PQexec(pc->c, "SELECT seq, owner, sid, position, role = 'user', created_at, ntok"
                                " FROM cairn.messages");
    PGresult *rs = NULL;
    const char *po = NULL, *ps = NULL;
    int64_t sess = 0;
    int rc = CAIRN_OK, rows;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(pc, r, "read messages' metadata");
    rows = PQntuples(r);
    mm->msg = malloc((size_t)(rows ? rows : 1) * sizeof *mm->msg);
    mm->by_seq = malloc((size_t)(rows ? rows : 1) * sizeof *mm->by_seq);
    mm->first = calloc((size_t)nsess + 1, sizeof *mm->first);
    if (!mm->msg || !mm->by_seq || !mm->first) {
        rc = cairn__err(pc->h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < rows; i++) {
        const char *o = PQgetvalue(r, i, 1), *s = PQgetvalue(r, i, 2);
        /* rows of one session mostly come together (the index's order) */
        if (!po || strcmp(o, po) || strcmp(s, ps))
            sess = sess_of(arg, o, s), po = o, ps = s;
        if (sess < 1 || sess > nsess)
            continue;
        mm->msg[mm->n++] = (struct pg_msg){
            .seq = strtoll(PQgetvalue(r, i, 0), NULL, 10),
            .sess = sess,
            .position = atoi(PQgetvalue(r, i, 3)),
            .user = PQgetvalue(r, i, 4)[0] == 't',
            .at = PQgetisnull(r, i, 5) ? CAIRN_NO_TIME : strtoll(PQgetvalue(r, i, 5), NULL, 10),
            .ntok = atoi(PQgetvalue(r, i, 6)),
        };
    }
    qsort(mm->msg, (size_t)mm->n, sizeof *mm->msg, cmp_pos);
    for (int i = 0; i < mm->n; i++) {
        mm->by_seq[i] = (struct pg_seq){ mm->msg[i].seq, i };
        mm->first[mm->msg[i].sess]++;
    }
    for (int s = 1; s <= nsess; s++)
        mm->first[s] += mm->first[s - 1];
    qsort(mm->by_seq, (size_t)mm->n, sizeof *mm->by_seq, cmp_seq);
    mm->nsess = nsess;
    /* the few messages that have a speaker (not in messages_meta: a long
     * one would not fit an index row) */
    rs = PQexec(pc->c, "SELECT seq, speaker FROM cairn.messages WHERE speaker IS NOT NULL");
    if (PQresultStatus(rs) != PGRES_TUPLES_OK) {
        rc = pg_fail(pc, rs, "read speakers");
        rs = NULL;
        goto out;
    }
    for (int i = 0; i < PQntuples(rs); i++) {
        const struct pg_msg *f = pg_msgmap_find(mm, strtoll(PQgetvalue(rs, i, 0), NULL, 10));
        if (f && !(mm->msg[f - mm->msg].speaker = strdup(PQgetvalue(rs, i, 1)))) {
            rc = cairn__err(pc->h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
    }
out:
    PQclear(r);
    PQclear(rs);
    return rc;
}

/* A loaded session's row of the packed read: its local id, its row. */
struct packed_row {
    int64_t sess;
    int     row;
};

static int cmp_packed(const void *a, const void *b)
{
    const struct packed_row *x = a, *y = b;
    if (x->sess != y->sess)
        return (x->sess > y->sess) - (x->sess < y->sess);
    return (x->row > y->row) - (x->row < y->row);
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

int pg_msgmap_unpack(struct pg_msgmap *mm, int cap, int64_t sess, const unsigned char *p,
                     size_t n)
{
    /* the server's bytes are not trusted: every length is checked
     * against what is left */
    enum { FIXED = 8 + 4 + 4 + 8 + 1 };
    size_t i = 0;
    while (i < n) {
        if (n - i < FIXED || mm->n >= cap)
            return -1;
        const unsigned char *q = p + i;
        struct pg_msg *m = &mm->msg[mm->n];
        int flags = q[24];
        *m = (struct pg_msg){
            .seq = (int64_t)be(q, 8),
            .sess = sess,
            .position = (int)(int32_t)be(q + 8, 4),
            .ntok = (int)(int32_t)be(q + 12, 4),
            .at = flags & 2 ? (int64_t)be(q + 16, 8) : CAIRN_NO_TIME,
            .user = flags & 1,
        };
        i += FIXED;
        mm->n++;
        if (flags & 4) {
            if (n - i < 4)
                return -1;
            uint64_t len = be(p + i, 4);
            i += 4;
            if (len > n - i || !(m->speaker = strndup((const char *)p + i, (size_t)len)))
                return -1;
            i += (size_t)len;
        }
    }
    return 0;
}

/* Version 7: the digest and every loaded session's pack in one statement
 * (one snapshot), binary: at 100,000 messages ~2.5 MB where the rows of
 * messages were ~100,000 tuples of text. */
static int load_packed(struct pgc *pc, struct pg_msgmap *mm, int nsess, pg_sess_fn sess_of,
                       void *arg)
{
    PGresult *r = PQexecParams(pc->c, "SELECT st.v, s.owner, s.sid, s.mpack FROM (SELECT"
                               " count(*)::text || ':' || md5(coalesce(string_agg(xmin::text,"
                               " ','), '')) v FROM cairn.sessions) st LEFT JOIN cairn.sessions s"
                               " ON true", 0, NULL, NULL, NULL, NULL, 1);
    struct packed_row *pr = NULL;
    size_t bytes = 0;
    int rc = CAIRN_OK, rows, np = 0, cap;
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) < 1)
        return pg_fail(pc, r, "read the map of messages");
    rows = PQntuples(r);
    snprintf(mm->stamp, sizeof mm->stamp, "%.*s", PQgetlength(r, 0, 0), PQgetvalue(r, 0, 0));
    if (!(pr = malloc((size_t)rows * sizeof *pr))) {
        rc = cairn__err(pc->h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < rows; i++) {
        if (PQgetisnull(r, i, 1))
            continue;                   /* no session at all */
        int64_t sess = sess_of(arg, PQgetvalue(r, i, 1), PQgetvalue(r, i, 2));
        if (sess < 1 || sess > nsess)
            continue;
        pr[np++] = (struct packed_row){ sess, i };
        bytes += (size_t)PQgetlength(r, i, 3);
    }
    /* sessions in local id order, each pack in position order: the map's
     * (sess, position) order without sorting the messages */
    qsort(pr, (size_t)np, sizeof *pr, cmp_packed);
    cap = (int)(bytes / 25 + 1);
    mm->msg = calloc((size_t)cap, sizeof *mm->msg);
    mm->by_seq = malloc((size_t)cap * sizeof *mm->by_seq);
    mm->first = calloc((size_t)nsess + 1, sizeof *mm->first);
    if (!mm->msg || !mm->by_seq || !mm->first) {
        rc = cairn__err(pc->h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    for (int k = 0; k < np; k++) {
        int i = pr[k].row, from = mm->n;
        if (pg_msgmap_unpack(mm, cap, pr[k].sess, (const unsigned char *)PQgetvalue(r, i, 3),
                   (size_t)PQgetlength(r, i, 3))) {
            rc = cairn__err(pc->h, CAIRN_ERROR, "server %s: a malformed map of messages (session"
                            " %s)", pc->who, PQgetvalue(r, i, 2));
            goto out;
        }
        mm->first[pr[k].sess] += mm->n - from;
    }
    for (int s = 1; s <= nsess; s++)
        mm->first[s] += mm->first[s - 1];
    int sorted = 1;
    for (int i = 0; i < mm->n; i++) {
        mm->by_seq[i] = (struct pg_seq){ mm->msg[i].seq, i };
        sorted = sorted && (!i || mm->by_seq[i - 1].seq < mm->msg[i].seq);
    }
    /* push order is mostly seq order already */
    if (!sorted)
        qsort(mm->by_seq, (size_t)mm->n, sizeof *mm->by_seq, cmp_seq);
    mm->nsess = nsess;
out:
    free(pr);
    PQclear(r);
    return rc;
}

static int exec_ok(struct pgc *pc, const char *sql)
{
    PGresult *r = PQexec(pc->c, sql);
    if (PQresultStatus(r) != PGRES_COMMAND_OK)
        return pg_fail(pc, r, sql);
    PQclear(r);
    return CAIRN_OK;
}

int pg_msgmap_fresh(struct pgc *pc, struct pg_msgmap *mm, int nsess, pg_sess_fn sess_of,
                    void *arg)
{
    char now[sizeof mm->stamp];
    int rc = mm->loaded || pc->schema < 7 ? read_stamp(pc, now, sizeof now) : CAIRN_OK;
    if (rc || (mm->loaded && !strcmp(now, mm->stamp)))
        return rc;
    pg_msgmap_free(mm);
    if (pc->schema >= 7) {
        if ((rc = load_packed(pc, mm, nsess, sess_of, arg))) {
            pg_msgmap_free(mm);
            return rc;
        }
        mm->loaded = 1;
        return CAIRN_OK;
    }
    /* the digest and the rows from one snapshot: a push committed between
     * them moves the digest again, and the next question reads again */
    if ((rc = exec_ok(pc, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")))
        return rc;
    if (!(rc = read_stamp(pc, mm->stamp, sizeof mm->stamp)) &&
        !(rc = load(pc, mm, nsess, sess_of, arg)))
        rc = exec_ok(pc, "COMMIT");
    if (rc) {
        PQclear(PQexec(pc->c, "ROLLBACK"));
        pg_msgmap_free(mm);
        return rc;
    }
    mm->loaded = 1;
    return CAIRN_OK;
}
