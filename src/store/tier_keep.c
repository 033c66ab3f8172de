/*
 * tier_keep.c: the term tiers kept by the write paths (schema 23; the
 * build is recall/tier.c's, the reader gather.c's tiered_matches).
 *
 * A built tier holds every match of a common word in the sessions whose
 * best message scores highest on the word alone, s = tf (k1 + 1) /
 * (tf + k1 (1 - b + b len / avg)), a score that needs nothing but the
 * message itself once the build's avg, k1 and b are kept (tier_state)
 * with each word's cut, the score of its tier's last session. So an
 * insert decides alone: a new message's match enters the tier when it
 * scores at least the cut (its session would now be among the best) or
 * its session is in the tier already (a kept session keeps all its
 * matches). The word's df counts it either way, and upto moves past it,
 * so the reader's tail (the messages it walks with every word) stays
 * empty instead of growing with every add.
 *
 * Every match of a session written waits until the session's messages in
 * this write are read (settle), so a session added whole gets all its
 * matches of a word in when any of its messages reaches the cut, as a
 * build gives it. What stays approximate until the next build: the
 * average length moves while the cuts and the kept sessions were scored
 * against the build's; a session that enters through a message added
 * later has only the matches written since in the tier (its older ones
 * scored below the cut; the reader counts them 0); a tier keeps the
 * sessions it has, so it grows past TIER_SESS by those that enter; a
 * rewritten message (a reply extended in place) gets its rows back but
 * df stays as it was, as it does for a forgotten message (df only grows
 * between builds); a word that becomes common after the build gets no
 * tier until the next build (cairn_tier_due: when the store doubled).
 *
 * The rows wait in memory (up to KEEP_ROWS_MAX) and go in sorted by word
 * and message at the commit: ~18 rows a message on the 100k bench store,
 * each an insert into a B-tree of millions of rows and its index by
 * message, which in the words' order touch each leaf once rather than
 * jumping between ~700 words' ranges for every message.
 *
 * It keeps nothing unless every message above upto went through here:
 * messages added while keeping was off, or by a build before schema 23,
 * stay the tail, and upto stays where it is.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "store/tier.h"
#include "util/wordset.h"

/* Rows held before they are written (a group of sessions rarely holds
 * more): 32 bytes each. */
#define KEEP_ROWS_MAX 65536

struct krow {
    int64_t term, msg, sess;
    int32_t tf, ntok;
};

/* A tiered word: its id, cut (has_cut 0: df only) and the df the
 * transaction added (its count in the message being read is the set's
 * tally, ws.tf). */
struct kword {
    int64_t id, ddf;
    double  cut;
    int     has_cut;
};

struct store_tier_live {
    int      on;
    double   avg, k1, b;
    int64_t  upto;               /* the newest message kept */
    struct wordset ws;           /* the words, and their counts in the message
                                    being read; word i's state is w[i] */
    struct kword *w;
    int      nw;
    int64_t  sess;               /* the session in_sess is of (0: none) */
    int64_t *in_sess;            /* the words whose tier holds it */
    int      nin, capin;
    struct krow *rows;           /* not written yet */
    size_t   nrows, pend;        /* rows[pend..nrows): the session's, undecided */
    sqlite3_stmt *ins, *holds;
};

void store_tier_keep_drop(struct cairn *h)
{
    struct store_tier_live *k = h->tier_live;
    if (!k)
        return;
    sqlite3_finalize(k->ins);
    sqlite3_finalize(k->holds);
    wordset_free(&k->ws);
    free(k->w);
    free(k->in_sess);
    free(k->rows);
    free(k);
    h->tier_live = NULL;
}

/* The state and the words, once a transaction; k->on 0 when the tiers
 * are not kept. */
static int load(struct cairn *h, int64_t first, struct store_tier_live *k)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    const char *v = cairn__setting(h, CAIRN__SET_TIER_KEEP);
    if ((v && !strcmp(v, "0")) || h->pg)
        return CAIRN_OK;
    /* built (a word with a row), scored (schema 23), and no message above
     * upto but this transaction's (from the first it inserted) */
    if ((rc = store_prepare(h, "SELECT upto, avg, k1, b FROM tier_state WHERE upto > 0 AND "
                            "avg > 0 AND EXISTS (SELECT 1 FROM tier_terms) AND NOT EXISTS "
                            "(SELECT 1 FROM messages WHERE id > upto AND id < ?1)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, first);
    if ((src = sqlite3_step(st)) == SQLITE_ROW) {
        k->upto = sqlite3_column_int64(st, 0);
        k->avg = sqlite3_column_double(st, 1);
        k->k1 = sqlite3_column_double(st, 2);
        k->b = sqlite3_column_double(st, 3);
        k->on = 1;
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "term tiers");
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc || !k->on)
        return rc;
    int64_t nw = 0;
    if ((rc = store_prepare(h, "SELECT count(*), coalesce(sum(length(CAST(term AS BLOB))), 0) "
                            "FROM tier_terms",
                            &st)))
        return rc;
    size_t bytes = 0;
    if (sqlite3_step(st) == SQLITE_ROW) {
        nw = sqlite3_column_int64(st, 0);
        bytes = (size_t)sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (wordset_init(&k->ws, nw, bytes) || !(k->w = calloc((size_t)nw + 1, sizeof *k->w)) ||
        !(k->rows = malloc(KEEP_ROWS_MAX * sizeof *k->rows)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if ((rc = store_prepare(h, "SELECT id, term, cut FROM tier_terms", &st)))
        return rc;
    while ((src = sqlite3_step(st)) == SQLITE_ROW && k->nw < nw) {
        const char *t = (const char *)sqlite3_column_text(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1);
        int i = t ? wordset_add(&k->ws, t, n) : -1;
        if (i < 0)
            continue;
        struct kword *w = &k->w[i];
        w->id = sqlite3_column_int64(st, 0);
        w->has_cut = sqlite3_column_type(st, 2) != SQLITE_NULL;
        w->cut = sqlite3_column_double(st, 2);
        k->nw = k->ws.n;
    }
    if (src != SQLITE_ROW && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "term tiers");
    sqlite3_finalize(st);
    if (!rc && !(rc = store_prepare(h, "INSERT OR IGNORE INTO tier_post(term, msg, sess, tf, ntok)"
                                    " VALUES (?, ?, ?, ?, ?)", &k->ins)))
        rc = store_prepare(h, "SELECT DISTINCT p.term FROM messages m JOIN tier_post p "
                           "ON p.msg = m.id WHERE m.session = ?1", &k->holds);
    return rc;
}

static int add_held(struct cairn *h, struct store_tier_live *k, int64_t id)
{
    if (k->nin == k->capin) {
        int nc = k->capin ? 2 * k->capin : 64;
        int64_t *ni = realloc(k->in_sess, (size_t)nc * sizeof *ni);
        if (!ni)
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        k->in_sess = ni;
        k->capin = nc;
    }
    k->in_sess[k->nin++] = id;
    return CAIRN_OK;
}

static int sess_holds(const struct store_tier_live *k, int64_t id)
{
    for (int i = 0; i < k->nin; i++)
        if (k->in_sess[i] == id)
            return 1;
    return 0;
}

/* The words whose tier holds session sess (its rows so far). */
static int load_session(struct cairn *h, struct store_tier_live *k, int64_t sess)
{
    int src, rc = CAIRN_OK;
    k->sess = sess;
    k->nin = 0;
    sqlite3_reset(k->holds);
    sqlite3_bind_int64(k->holds, 1, sess);
    while (!rc && (src = sqlite3_step(k->holds)) == SQLITE_ROW)
        rc = add_held(h, k, sqlite3_column_int64(k->holds, 0));
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "term tier rows");
    sqlite3_reset(k->holds);
    /* and the rows this transaction holds for it, not written yet (a
     * group that comes back to a session) */
    for (size_t i = 0; !rc && i < k->nrows; i++)
        if (k->rows[i].sess == sess && !sess_holds(k, k->rows[i].term))
            rc = add_held(h, k, k->rows[i].term);
    return rc;
}

static int cmp_krow(const void *a, const void *b)
{
    const struct krow *x = a, *y = b;
    if (x->term != y->term)
        return x->term < y->term ? -1 : 1;
    return x->msg < y->msg ? -1 : x->msg > y->msg;
}

/* The session's undecided rows: those of the words that enter its tier
 * (one message of it scored at least the cut, or it was there) stay. So a
 * session written whole in one go gets all its matches of a word in, as
 * the build gives it, not only those from the message that entered. */
static void settle(struct store_tier_live *k)
{
    size_t kept = k->pend;
    for (size_t i = k->pend; i < k->nrows; i++)
        if (sess_holds(k, k->rows[i].term))
            k->rows[kept++] = k->rows[i];
    k->nrows = k->pend = kept;
}

/* The rows held, written in the words' order. */
static int write_rows(struct cairn *h, struct store_tier_live *k)
{
    int src;
    settle(k);
    qsort(k->rows, k->nrows, sizeof *k->rows, cmp_krow);
    for (size_t i = 0; i < k->nrows; i++) {
        const struct krow *r = &k->rows[i];
        sqlite3_reset(k->ins);
        sqlite3_bind_int64(k->ins, 1, r->term);
        sqlite3_bind_int64(k->ins, 2, r->msg);
        sqlite3_bind_int64(k->ins, 3, r->sess);
        sqlite3_bind_int(k->ins, 4, r->tf);
        sqlite3_bind_int(k->ins, 5, r->ntok);
        if ((src = sqlite3_step(k->ins)) != SQLITE_DONE)
            return cairn__sqlerr(h, src, "term tier row");
    }
    k->nrows = k->pend = 0;
    return CAIRN_OK;
}

int store_tier_keep_begin(struct cairn *h, int64_t sess, int64_t msg, int fresh,
                          struct wordset **ws)
{
    struct store_tier_live *k = h->tier_live;
    int rc = CAIRN_OK;
    *ws = NULL;
    if (!k) {
        if (!(k = calloc(1, sizeof *k)))
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        h->tier_live = k;
        /* a rewrite first: no message may be above upto at all */
        if ((rc = load(h, fresh ? msg : INT64_MAX, k)))
            return rc;
    }
    /* a rewrite of a message in the tail: the reader walks it anyway */
    if (!k->on || (!fresh && msg > k->upto))
        return CAIRN_OK;
    if (sess != k->sess) {
        settle(k);
        if ((rc = load_session(h, k, sess)))
            return rc;
    }
    /* a rewrite: the trigger dropped its written rows, these its held ones */
    size_t kept = 0, pend = 0;
    for (size_t i = 0; !fresh && i < k->nrows; i++) {
        pend += i < k->pend && k->rows[i].msg != msg;
        if (k->rows[i].msg != msg)
            k->rows[kept++] = k->rows[i];
    }
    if (!fresh) {
        k->nrows = kept;
        k->pend = pend;
    }
    wordset_count_clear(&k->ws);     /* (empty, unless a read failed midway) */
    *ws = &k->ws;
    return CAIRN_OK;
}

int store_tier_keep_end(struct cairn *h, int64_t sess, int64_t msg, int ntok, int fresh)
{
    struct store_tier_live *k = h->tier_live;
    struct wordset *ws = &k->ws;
    int rc;
    double norm = k->k1 * (1 - k->b + k->b * ntok / k->avg);
    for (int j = 0; j < ws->nin; j++) {
        struct kword *w = &k->w[ws->in[j]];
        int tf = ws->tf[ws->in[j]];
        w->ddf += fresh;
        if (!w->has_cut)
            continue;
        /* every match waits for the session's decision (settle); a
         * session bigger than the buffer is decided in parts */
        if (k->nrows == KEEP_ROWS_MAX && (rc = write_rows(h, k)))
            return rc;
        k->rows[k->nrows++] = (struct krow){ w->id, msg, sess, tf, ntok };
        double s = tf * (k->k1 + 1) / (tf + norm);
        if (s >= w->cut && !sess_holds(k, w->id) && (rc = add_held(h, k, w->id)))
            return rc;
    }
    wordset_count_clear(ws);         /* the next message counts afresh */
    if (fresh && msg > k->upto)
        k->upto = msg;
    return CAIRN_OK;
}

int store_tier_keep_flush(struct cairn *h)
{
    struct store_tier_live *k = h->tier_live;
    sqlite3_stmt *st = NULL;
    int rc = CAIRN_OK, src = SQLITE_DONE;
    if (!k || !k->on)
        return CAIRN_OK;
    if ((rc = write_rows(h, k)) ||
        (rc = store_prepare(h, "UPDATE tier_terms SET df = df + ?2 WHERE id = ?1", &st)))
        return rc;
    for (int i = 0; i < k->nw && src == SQLITE_DONE; i++) {
        if (!k->w[i].ddf)
            continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, k->w[i].id);
        sqlite3_bind_int64(st, 2, k->w[i].ddf);
        src = sqlite3_step(st);
        k->w[i].ddf = 0;
    }
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "term tiers");
    if ((rc = store_prepare(h, "UPDATE tier_state SET upto = max(upto, ?1)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, k->upto);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "term tiers");
}
