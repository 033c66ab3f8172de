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
    int rc = read_stamp(pc, now, sizeof now);
    if (rc || (mm->loaded && !strcmp(now, mm->stamp)))
        return rc;
    pg_msgmap_free(mm);
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
