/*
 * post.c: packed postings of the common words (schema 26; store/post.h,
 * the reader is gather.c's packed_matches, the build recall/tier.c's).
 *
 * A question of common words walked ~95,000 FTS5 rows and 50,000 runs of
 * msg_runs on a million messages, ~1,500 instructions of SQLite a row
 * whatever the row holds. The tier build walks every common word once
 * anyway; it keeps what the walk gave (row, session, count, length) as
 * blobs of POST_BLOCK matches, so recall decodes ~200 rows of post_blocks
 * instead. The answer never depends on them: a word whose blocks do not
 * read whole (a block missing, damaged, or a count that disagrees) is
 * walked; messages above post_state.upto are walked; a message rewritten
 * or deleted at or below it (post_dirty, by trigger) has its matches
 * dropped from the blocks and walked again.
 *
 * Kept by ingest: a new message's packed words are counted from the
 * tokens the FTS5 tokenizer indexes, handed on as it goes (store/keep.c:
 * the one pass the term tiers count theirs from too), and at the commit
 * each packed word's new matches go on its last block; upto moves past
 * them.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "store/post.h"
#include "util/buf.h"
#include "util/wordset.h"

/* ---- the blob ---- */

static void put_varint(struct buf *b, uint64_t v)
{
    unsigned char t[10];
    int n = 0;
    do {
        t[n] = (unsigned char)(v & 127);
        v >>= 7;
        t[n++] |= v ? 128 : 0;
    } while (v);
    buf_add(b, t, (size_t)n);
}

void post_blob_put(struct buf *b, int64_t *row, int64_t *sess, const struct post_ent *e)
{
    uint64_t ds = (uint64_t)e->sess - (uint64_t)*sess;
    put_varint(b, (uint64_t)e->row - (uint64_t)*row);
    put_varint(b, (ds << 1) ^ (uint64_t)-(int64_t)(ds >> 63));   /* zigzag */
    put_varint(b, (uint64_t)e->tf);
    put_varint(b, (uint64_t)e->ntok);
    *row = e->row;
    *sess = e->sess;
}

/* At most 9 bytes (63 bits): a longer one is damage. A one-byte varint
 * (most of a block's counts, session steps and id steps) takes the
 * inline test alone: the loop cost ~100 instructions a match, a sixth of
 * a hook's at a million messages on a common word (issue 23, hook28).
 * So does a two-byte one: a match's length is 128-16,383 tokens in most
 * of a common word's matches (62% of "cache eviction policy"'s at a
 * million), each a call and the loop before (issue 23, hook50). */
static int get_varint_long(const unsigned char **p, const unsigned char *end, uint64_t *v);

static inline int get_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    const unsigned char *q = *p;
    if (q < end && !(q[0] & 128)) {
        *v = q[0];
        *p = q + 1;
        return 0;
    }
    if (end - q >= 2 && !(q[1] & 128)) {
        *v = (uint64_t)(q[0] & 127) | (uint64_t)q[1] << 7;
        *p = q + 2;
        return 0;
    }
    return get_varint_long(p, end, v);
}

static int get_varint_long(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int i = 0; i < 9 && *p < end; i++) {
        unsigned c = *(*p)++;
        x |= (uint64_t)(c & 127) << (7 * i);
        if (!(c & 128)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

int post_blob_get(const unsigned char *p, size_t n, int64_t lo, struct post_ent *out, int max)
{
    const unsigned char *end = p + n;
    int64_t row = lo, sess = 0;
    int k = 0;
    while (p < end) {
        uint64_t dr, zs, tf, ntok;
        if (k >= max)
            return -1;
        /* The common match first: its step, session step and count one
         * byte each, its length one or two (a length of 128-16,383 tokens
         * is most of a common word's). Then dr and tf are below 128, so
         * only their zeros are out of range, the length always in it, and
         * a session step of -64 to 63 overflows only at the ends: ~59
         * instructions a match instead of ~67 (post_blob_get was 10.9 M
         * instructions of a prompt hook's 65 M at a million messages;
         * issue 23, hook52; one 8-byte load and its top bits cost more).
         * Anything else, and a block's last bytes, as before. */
        if (end - p >= 5 && !((p[0] | p[1] | p[2]) & 128) && (!(p[3] & 128) || !(p[4] & 128))) {
            int two = p[3] >> 7;
            int64_t ds = (int64_t)(p[1] >> 1) ^ -(int64_t)(p[1] & 1), ns;
            dr = p[0];
            tf = p[2];
            ntok = two ? (uint64_t)(p[3] & 127) | (uint64_t)p[4] << 7 : p[3];
            if (dr - 1 >= (uint64_t)(INT64_MAX - row) || !tf ||
                __builtin_add_overflow(sess, ds, &ns) || ns < 1)
                return -1;
            p += 4 + two;
            row += (int64_t)dr;
            sess = ns;
            out[k++] = (struct post_ent){ row, sess, (int32_t)tf, (int32_t)ntok };
            continue;
        }
        if (get_varint(&p, end, &dr) || get_varint(&p, end, &zs) ||
            get_varint(&p, end, &tf) || get_varint(&p, end, &ntok))
            return -1;
        int64_t ds = (int64_t)(zs >> 1) ^ -(int64_t)(zs & 1), ns;
        /* dr in [1, INT64_MAX - row], tf in [1, 65535], the session >= 1
         * without overflow: a subtraction that wraps folds each range's
         * two tests into one (the same rows as two tests each) */
        if (dr - 1 >= (uint64_t)(INT64_MAX - row) || tf - 1 > 65534 || ntok > INT32_MAX ||
            __builtin_add_overflow(sess, ds, &ns) || ns < 1)
            return -1;
        row += (int64_t)dr;
        sess = ns;
        out[k++] = (struct post_ent){ row, sess, (int32_t)tf, (int32_t)ntok };
    }
    return k;
}

/* ---- reading ---- */

int store_post_state(struct cairn *h, int64_t *upto, int64_t **d, int *nd)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    *upto = 0;
    *d = NULL;
    *nd = 0;
    if (h->pg)
        return CAIRN_OK;
    if ((rc = store_prepare(h, "SELECT upto FROM post_state WHERE EXISTS (SELECT 1 FROM "
                            "post_terms)", &st)))
        return rc;
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *upto = sqlite3_column_int64(st, 0);
    else if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "packed postings");
    sqlite3_finalize(st);
    st = NULL;
    if (rc || *upto <= 0)
        return rc;
    if ((rc = store_prepare(h, "SELECT msg FROM post_dirty WHERE msg <= ?1 ORDER BY msg LIMIT ?2",
                            &st)))
        return rc;
    sqlite3_bind_int64(st, 1, *upto);
    sqlite3_bind_int(st, 2, POST_DIRTY_MAX + 1);
    int64_t *v = malloc((POST_DIRTY_MAX + 1) * sizeof *v);
    if (!v) {
        sqlite3_finalize(st);
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    }
    while ((src = sqlite3_step(st)) == SQLITE_ROW && *nd <= POST_DIRTY_MAX)
        v[(*nd)++] = sqlite3_column_int64(st, 0);
    if (src != SQLITE_DONE && src != SQLITE_ROW)
        rc = cairn__sqlerr(h, src, "packed postings");
    sqlite3_finalize(st);
    if (rc || *nd > POST_DIRTY_MAX) {
        free(v);
        return rc;
    }
    *d = v;
    return CAIRN_OK;
}

/* One word's postings by the two statements *terms and *blocks,
 * prepared at the first word and reset for the next (store_post_reads). */
static int post_read1(struct cairn *h, const char *tok, size_t n, sqlite3_stmt **terms,
                      sqlite3_stmt **blocks, struct post_ent **out, int *nout)
{
    sqlite3_stmt *st = *terms;
    struct post_ent *v = NULL;
    int rc = CAIRN_OK, src, k = 0;
    int64_t total = -1, hi = 0, at = 0;
    *out = NULL;
    *nout = 0;
    if (!st && (rc = store_prepare(h, "SELECT n, hi FROM post_terms WHERE term = ?1", terms)))
        return rc;
    st = *terms;
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, tok, (int)n, SQLITE_STATIC);
    if ((src = sqlite3_step(st)) == SQLITE_ROW) {
        total = sqlite3_column_int64(st, 0);
        hi = sqlite3_column_int64(st, 1);
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "packed postings");
    }
    sqlite3_reset(st);
    if (rc || total < 1 || total > INT32_MAX / 2)
        return rc;
    if (!(v = malloc((size_t)total * sizeof *v)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (!*blocks && (rc = store_prepare(h, "SELECT lo, hi, n, data FROM post_blocks "
                                        "WHERE term = ?1 ORDER BY lo", blocks)))
        goto out;
    st = *blocks;
    sqlite3_reset(st);
    sqlite3_bind_text(st, 1, tok, (int)n, SQLITE_STATIC);
    /* the blocks chain: each starts where the one before ended */
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t lo = sqlite3_column_int64(st, 0), bhi = sqlite3_column_int64(st, 1);
        int64_t bn = sqlite3_column_int64(st, 2);
        const unsigned char *p = sqlite3_column_blob(st, 3);
        int bytes = sqlite3_column_bytes(st, 3);
        if (lo != at || bn < 1 || bn > total - k || !p)
            goto bad;
        int got = post_blob_get(p, (size_t)bytes, lo, v + k, (int)bn);
        if (got != bn || v[k + got - 1].row != bhi)
            goto bad;
        k += got;
        at = bhi;
    }
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "packed postings");
        goto out;
    }
    if (k != total || at != hi)
        goto bad;
    *out = v;
    *nout = k;
    v = NULL;
    goto out;
bad:
    rc = CAIRN_OK;                        /* not whole: the caller walks the word */
out:
    if (*blocks)
        sqlite3_reset(*blocks);
    free(v);
    return rc;
}

int store_post_reads(struct cairn *h, const char *const *tok, const size_t *n, int k,
                     struct post_ent **v, int *nv)
{
    /* two statements for the k words, not two a word: a prepare was
     * ~25,000-35,000 instructions (issue 23, hook51) */
    sqlite3_stmt *terms = NULL, *blocks = NULL;
    int rc = CAIRN_OK, i;
    for (i = 0; i < k; i++) {
        v[i] = NULL;
        nv[i] = 0;
    }
    for (i = 0; i < k && !rc; i++)
        if (tok[i])
            rc = post_read1(h, tok[i], n[i], &terms, &blocks, &v[i], &nv[i]);
    sqlite3_finalize(terms);
    sqlite3_finalize(blocks);
    if (rc)
        for (i = 0; i < k; i++) {
            free(v[i]);
            v[i] = NULL;
            nv[i] = 0;
        }
    return rc;
}

int store_post_read(struct cairn *h, const char *tok, size_t n, struct post_ent **v, int *nv)
{
    return store_post_reads(h, &tok, &n, 1, v, nv);
}

int store_session_row(struct cairn *h, const char *ext_id, int64_t *row)
{
    sqlite3_stmt *st;
    int rc, src;
    *row = 0;
    if (!ext_id)
        return CAIRN_OK;
    if ((rc = store_prepare(h, "SELECT id FROM sessions WHERE ext_id = ?1", &st)))
        return rc;
    sqlite3_bind_text(st, 1, ext_id, -1, SQLITE_STATIC);
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *row = sqlite3_column_int64(st, 0);
    else if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "session");
    sqlite3_finalize(st);
    return rc;
}

/* ---- writing ---- */

static int exec1(struct cairn *h, const char *sql, int64_t a)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st), src;
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, a);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "packed postings");
}

int store_post_reset(struct cairn *h, int64_t upto)
{
    int rc;
    if ((rc = exec1(h, "DELETE FROM post_blocks WHERE ?1 IS ?1", 0)) ||
        (rc = exec1(h, "DELETE FROM post_terms WHERE ?1 IS ?1", 0)) ||
        (rc = exec1(h, "DELETE FROM post_dirty WHERE ?1 IS ?1", 0)))
        return rc;
    return exec1(h, "UPDATE post_state SET upto = ?1", upto);
}

/* A block: (term, lo) written whole (a new one, or the last one grown). */
static int put_block(struct cairn *h, sqlite3_stmt **st, const char *tok, size_t n, int64_t lo,
                     int64_t hi, int nb, const struct buf *data)
{
    int rc;
    if (!*st && (rc = store_prepare(h, "INSERT OR REPLACE INTO post_blocks(term, lo, hi, n, data) "
                                    "VALUES (?1, ?2, ?3, ?4, ?5)", st)))
        return rc;
    sqlite3_reset(*st);
    sqlite3_bind_text(*st, 1, tok, (int)n, SQLITE_STATIC);
    sqlite3_bind_int64(*st, 2, lo);
    sqlite3_bind_int64(*st, 3, hi);
    sqlite3_bind_int(*st, 4, nb);
    sqlite3_bind_blob(*st, 5, data->p, (int)data->n, SQLITE_STATIC);
    int src = sqlite3_step(*st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "packed postings");
}

/* Matches v[0..nv) (by row, all above the block's rows) onto the word's
 * blocks: the last one (lo, its bytes, nb matches, the row and session
 * of its last) filled up to POST_BLOCK, then new ones. */
static int append(struct cairn *h, sqlite3_stmt **st, const char *tok, size_t n, int64_t lo,
                  struct buf *data, int nb, int64_t row, int64_t sess, const struct post_ent *v,
                  int nv)
{
    int rc = CAIRN_OK;
    for (int i = 0; i < nv; i++) {
        if (nb == POST_BLOCK) {
            if ((rc = put_block(h, st, tok, n, lo, row, nb, data)))
                return rc;
            lo = row;
            sess = 0;
            nb = 0;
            buf_reset(data);
        }
        post_blob_put(data, &row, &sess, &v[i]);
        nb++;
    }
    if (data->err)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    return nb ? put_block(h, st, tok, n, lo, row, nb, data) : CAIRN_OK;
}

/* The word's count and last row (post_terms), after its blocks (*st
 * prepared once a build or a commit: ~150 words a session added). */
static int set_term(struct cairn *h, sqlite3_stmt **st, const char *tok, size_t n, int64_t add,
                    int64_t hi)
{
    int rc, src;
    if (!*st && (rc = store_prepare(h, "INSERT INTO post_terms(term, n, hi) VALUES (?1, ?2, ?3) "
                                    "ON CONFLICT(term) DO UPDATE SET n = n + excluded.n, "
                                    "hi = excluded.hi", st)))
        return rc;
    sqlite3_reset(*st);
    sqlite3_bind_text(*st, 1, tok, (int)n, SQLITE_STATIC);
    sqlite3_bind_int64(*st, 2, add);
    sqlite3_bind_int64(*st, 3, hi);
    src = sqlite3_step(*st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "packed postings");
}

/* The matches' blocks as append() cuts them from no block: POST_BLOCK
 * matches a block, each block's lo the row before its first (0 for the
 * first), the ids and sessions stepped on from the block before. */
int post_encode(struct post_enc *e, const struct post_ent *v, int nv)
{
    int64_t row = 0, sess = 0, lo = 0;
    int nb = 0;
    size_t off = 0;
    e->nb = e->nv = 0;
    e->hi = 0;
    if (!e->data.cap)
        buf_init(&e->data, SIZE_MAX / 2);
    buf_reset(&e->data);
    if (nv < 1)
        return CAIRN_OK;
    /* a walk's rows only go up; anything else is not kept (never so) */
    for (int i = 1; i < nv; i++)
        if (v[i].row <= v[i - 1].row || v[i].tf < 1 || v[i].ntok < 0)
            return CAIRN_OK;
    if (v[0].row < 1 || v[0].tf < 1 || v[0].ntok < 0)
        return CAIRN_OK;
    for (int i = 0; i <= nv; i++) {
        if (nb == POST_BLOCK || (i == nv && nb)) {
            if (e->nb == e->capb) {
                int nc = e->capb ? e->capb * 2 : 64;
                struct post_enc_block *nbk = realloc(e->b, (size_t)nc * sizeof *nbk);
                if (!nbk)
                    return CAIRN_NOMEM;
                e->b = nbk;
                e->capb = nc;
            }
            e->b[e->nb++] = (struct post_enc_block){ lo, row, nb, off, e->data.n - off };
            off = e->data.n;
            lo = row;
            sess = 0;
            nb = 0;
        }
        if (i == nv)
            break;
        post_blob_put(&e->data, &row, &sess, &v[i]);
        nb++;
    }
    if (e->data.err)
        return CAIRN_NOMEM;
    e->nv = nv;
    e->hi = v[nv - 1].row;
    return CAIRN_OK;
}

void post_enc_free(struct post_enc *e)
{
    if (e->data.cap)                 /* else never set up (post_encode) */
        buf_release(&e->data);
    free(e->b);
    memset(e, 0, sizeof *e);
}

int store_post_put(struct cairn *h, const char *tok, size_t n, const struct post_enc *e)
{
    sqlite3_stmt *st = NULL, *ts = NULL;
    int rc = CAIRN_OK;
    if (!e->nv)
        return CAIRN_OK;
    for (int i = 0; !rc && i < e->nb; i++) {
        const struct post_enc_block *k = &e->b[i];
        struct buf one = { e->data.p + k->off, k->len, 0, k->len, BUF_OK };
        rc = put_block(h, &st, tok, n, k->lo, k->hi, k->n, &one);
    }
    if (!rc)
        rc = set_term(h, &ts, tok, n, e->nv, e->hi);
    sqlite3_finalize(st);
    sqlite3_finalize(ts);
    return rc;
}

int store_post_add_term(struct cairn *h, const char *tok, size_t n, const struct post_ent *v,
                        int nv)
{
    struct post_enc e = { 0 };
    int rc = post_encode(&e, v, nv);
    if (rc)
        rc = cairn__err(h, rc, "out of memory");
    else
        rc = store_post_put(h, tok, n, &e);
    post_enc_free(&e);
    return rc;
}

/* ---- keeping ---- */

struct pnew {
    int             w;
    struct post_ent e;
};

struct store_post_live {
    int      on;
    int64_t  upto, upto0;        /* the newest message kept; upto when loaded */
    struct wordset ws;           /* the words, and their counts in the message
                                    being read */
    struct pnew *rows;           /* the matches written at the commit */
    size_t   nrows, caprows;
    int64_t *redone;             /* messages of this transaction rewritten */
    size_t   nredone, capredone;
};

void store_post_keep_drop(struct cairn *h)
{
    struct store_post_live *k = h->post_live;
    if (!k)
        return;
    wordset_free(&k->ws);
    free(k->rows);
    free(k->redone);
    free(k);
    h->post_live = NULL;
}

/* The packed words, once a transaction (k->on 0: not kept). */
static int load(struct cairn *h, int64_t first, struct store_post_live *k)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    const char *v = cairn__setting(h, CAIRN__SET_TIER_KEEP);
    if ((v && !strcmp(v, "0")) || h->pg)
        return CAIRN_OK;
    int64_t nw = 0, bytes = 0;
    if ((rc = store_prepare(h, "SELECT upto, (SELECT count(*) FROM post_terms), (SELECT "
                            "coalesce(sum(length(CAST(term AS BLOB))), 0) FROM post_terms) "
                            "FROM post_state WHERE upto > 0 AND EXISTS (SELECT 1 FROM "
                            "post_terms) AND NOT EXISTS (SELECT 1 FROM messages WHERE id > "
                            "upto AND id < ?1)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, first);
    if ((src = sqlite3_step(st)) == SQLITE_ROW) {
        k->upto = k->upto0 = sqlite3_column_int64(st, 0);
        nw = sqlite3_column_int64(st, 1);
        bytes = sqlite3_column_int64(st, 2);
        k->on = 1;
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "packed postings");
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc || !k->on)
        return rc;
    if (wordset_init(&k->ws, nw, (size_t)bytes))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if ((rc = store_prepare(h, "SELECT term FROM post_terms", &st)))
        return rc;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (t)
            wordset_add(&k->ws, t, (size_t)sqlite3_column_bytes(st, 0));
    }
    if (src != SQLITE_ROW && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "packed postings");
    sqlite3_finalize(st);
    return rc;
}

int store_post_keep_begin(struct cairn *h, int64_t msg, int ntok, int fresh, struct wordset **ws)
{
    struct store_post_live *k = h->post_live;
    int rc;
    *ws = NULL;
    if (!k) {
        if (!fresh)
            return CAIRN_OK;          /* a rewrite alone: post_dirty has it */
        if (!(k = calloc(1, sizeof *k)))
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        h->post_live = k;
        if ((rc = load(h, msg, k)))
            return rc;
    }
    if (!k->on || (!fresh && msg <= k->upto0) || ntok < 0)
        return CAIRN_OK;              /* below: post_dirty has it */
    if (!fresh) {
        /* one of this transaction's messages rewritten: its matches
         * counted again (the trigger put it in post_dirty; the commit
         * takes it out) */
        size_t kept = 0;
        for (size_t i = 0; i < k->nrows; i++)
            if (k->rows[i].e.row != msg)
                k->rows[kept++] = k->rows[i];
        k->nrows = kept;
        if (k->nredone == k->capredone) {
            size_t nc = k->capredone ? 2 * k->capredone : 16;
            int64_t *nr = realloc(k->redone, nc * sizeof *nr);
            if (!nr)
                return cairn__err(h, CAIRN_NOMEM, "out of memory");
            k->redone = nr;
            k->capredone = nc;
        }
        k->redone[k->nredone++] = msg;
    }
    wordset_count_clear(&k->ws);     /* (empty, unless a read failed midway) */
    *ws = &k->ws;
    return CAIRN_OK;
}

int store_post_keep_end(struct cairn *h, int64_t sess, int64_t msg, int ntok, int fresh)
{
    struct store_post_live *k = h->post_live;
    struct wordset *ws = &k->ws;
    for (int j = 0; j < ws->nin; j++) {
        if (k->nrows == k->caprows) {
            size_t nc = k->caprows ? 2 * k->caprows : 1024;
            struct pnew *nr = realloc(k->rows, nc * sizeof *nr);
            if (!nr)
                return cairn__err(h, CAIRN_NOMEM, "out of memory");
            k->rows = nr;
            k->caprows = nc;
        }
        int i = ws->in[j];
        k->rows[k->nrows++] = (struct pnew){ i, { msg, sess, ws->tf[i], ntok } };
    }
    wordset_count_clear(ws);
    if (fresh && msg > k->upto)
        k->upto = msg;
    return CAIRN_OK;
}

static int cmp_pnew(const void *a, const void *b)
{
    const struct pnew *x = a, *y = b;
    if (x->w != y->w)
        return x->w < y->w ? -1 : 1;
    return x->e.row < y->e.row ? -1 : x->e.row > y->e.row;
}

/* One word's new matches after its last block: into it when it holds
 * fewer than POST_MERGE matches, else a block of their own, so an add
 * rewrites at most a small blob a word (rewriting the last full block,
 * ~2.4 KB a word a transaction, made `cairn add` ~60% dearer in CPU). A
 * last block missing, behind the new matches, or small and not reading
 * whole drops the word (its reader walks it). */
static int keep_word(struct cairn *h, sqlite3_stmt **last, sqlite3_stmt **put,
                     sqlite3_stmt **term, const char *tok, size_t n, const struct post_ent *v,
                     int nv)
{
    struct buf data = BUF_INIT;
    struct post_ent *e = NULL;
    int rc, src, ok = 0, nb = 0;
    int64_t lo = 0, hi = 0, sess = 0;
    /* the blob only of a small block (a big one is not read at all) */
    if (!*last && (rc = store_prepare(h, "SELECT lo, hi, n, CASE WHEN n < ?2 THEN data END FROM "
                                      "post_blocks WHERE term = ?1 ORDER BY lo DESC LIMIT 1",
                                      last)))
        return rc;
    sqlite3_reset(*last);
    sqlite3_bind_text(*last, 1, tok, (int)n, SQLITE_STATIC);
    sqlite3_bind_int(*last, 2, POST_MERGE);
    buf_init(&data, SIZE_MAX / 2);
    if ((src = sqlite3_step(*last)) == SQLITE_ROW) {
        int64_t blo = sqlite3_column_int64(*last, 0), bn = sqlite3_column_int64(*last, 2);
        hi = sqlite3_column_int64(*last, 1);
        const void *p = sqlite3_column_blob(*last, 3);
        int bytes = sqlite3_column_bytes(*last, 3);
        ok = v[0].row > hi;
        if (ok && p && bn >= 1 && bn + nv <= POST_BLOCK) {
            ok = (e = malloc((size_t)bn * sizeof *e)) &&
                 post_blob_get(p, (size_t)bytes, blo, e, (int)bn) == bn && e[bn - 1].row == hi &&
                 !buf_add(&data, p, (size_t)bytes);
            if (ok) {
                lo = blo;
                sess = e[bn - 1].sess;
                nb = (int)bn;
            }
        } else {
            lo = hi;                      /* a block of their own */
        }
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "packed postings");
        goto out;
    }
    sqlite3_reset(*last);
    if (!ok)
        goto drop;
    if (!(rc = append(h, put, tok, n, lo, &data, nb, hi, sess, v, nv)))
        rc = set_term(h, term, tok, n, nv, v[nv - 1].row);
    goto out;
drop:
    {
        sqlite3_stmt *st;
        if (!(rc = store_prepare(h, "DELETE FROM post_terms WHERE term = ?1", &st))) {
            sqlite3_bind_text(st, 1, tok, (int)n, SQLITE_STATIC);
            src = sqlite3_step(st);
            sqlite3_finalize(st);
            rc = src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "packed postings");
        }
    }
out:
    free(e);
    buf_release(&data);
    return rc;
}

int store_post_keep_flush(struct cairn *h)
{
    struct store_post_live *k = h->post_live;
    sqlite3_stmt *last = NULL, *put = NULL, *term = NULL;
    struct post_ent *v = NULL;
    int rc = CAIRN_OK;
    if (!k || !k->on)
        return CAIRN_OK;
    if (k->nrows) /* qsort's base may not be NULL, even for 0 rows */
        qsort(k->rows, k->nrows, sizeof *k->rows, cmp_pnew);
    if (k->nrows && !(v = malloc(k->nrows * sizeof *v)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (size_t i = 0; i < k->nrows && !rc;) {
        size_t j = i;
        int nv = 0;
        for (; j < k->nrows && k->rows[j].w == k->rows[i].w; j++)
            v[nv++] = k->rows[j].e;
        size_t n;
        const char *tok = wordset_word(&k->ws, k->rows[i].w, &n);
        rc = keep_word(h, &last, &put, &term, tok, n, v, nv);
        i = j;
    }
    sqlite3_finalize(last);
    sqlite3_finalize(put);
    sqlite3_finalize(term);
    free(v);
    for (size_t i = 0; !rc && i < k->nredone; i++)
        rc = exec1(h, "DELETE FROM post_dirty WHERE msg = ?1", k->redone[i]);
    if (!rc)
        rc = exec1(h, "UPDATE post_state SET upto = max(upto, ?1)", k->upto);
    k->nrows = k->nredone = 0;
    return rc;
}
