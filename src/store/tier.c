/*
 * tier.c: the term tiers' rows (schema 22; store/tier.h). What goes in
 * them, and why, is recall/tier.c's; here only the statements. The rows
 * hold message and session ids, counts and lengths; the words are index
 * tokens found in at least TIER_DF_MIN messages when built, and a word
 * loses its row with its last match (the triggers of schema 22).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "store/tier.h"
#include "util/buf.h"

/* One integer from a statement with no parameter but ?1 (text, may be
 * NULL) and ?2 (integer). */
static int one_int(struct cairn *h, const char *sql, const char *t1, size_t n1, int64_t i2,
                   int64_t *out, const char *what)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st), src;
    if (rc)
        return rc;
    if (t1)
        sqlite3_bind_text(st, 1, t1, (int)n1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, i2);
    *out = 0;
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    else if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, what);
    sqlite3_finalize(st);
    return rc;
}

int store_tier_upto(struct cairn *h, int64_t *upto)
{
    *upto = 0;
    if (h->pg)
        return CAIRN_OK;
    return one_int(h, "SELECT upto FROM tier_state WHERE EXISTS (SELECT 1 FROM tier_terms)",
                   NULL, 0, 0, upto, "term tiers");
}

int store_tier_built(struct cairn *h, int64_t *built)
{
    *built = 0;
    if (h->pg)
        return CAIRN_OK;
    return one_int(h, "SELECT built FROM tier_state", NULL, 0, 0, built, "term tiers");
}

int store_tier_terms(struct cairn *h, const char *const *tok, const size_t *n, int k,
                     int64_t *id, int64_t *df)
{
    /* one statement for the k tokens, reset between them: a prepare was
     * ~55,000 instructions, a hook looks up each word of its question
     * (issue 23, hook51) */
    sqlite3_stmt *st = NULL;
    int rc = CAIRN_OK, src;
    for (int i = 0; i < k; i++) {
        id[i] = df[i] = 0;
        if (!tok[i])
            continue;
        if (!st && (rc = store_prepare(h, "SELECT id, df, EXISTS (SELECT 1 FROM tier_post "
                                       "WHERE term = tier_terms.id) FROM tier_terms "
                                       "WHERE term = ?1", &st)))
            return rc;
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, tok[i], (int)n[i], SQLITE_STATIC);
        if ((src = sqlite3_step(st)) == SQLITE_ROW) {
            id[i] = sqlite3_column_int(st, 2) ? sqlite3_column_int64(st, 0) : 0;
            df[i] = sqlite3_column_int64(st, 1);
        } else if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "term tier");
            break;
        }
    }
    if (st)
        sqlite3_finalize(st);
    return rc;
}

int store_tier_posts(struct cairn *h, int64_t id, const char *exclude, store_match_fn fn,
                     void *arg)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT msg, sess, tf, ntok FROM tier_post WHERE term = ?2 "
                           "AND sess IS NOT (SELECT id FROM sessions WHERE ext_id = ?1) "
                           "ORDER BY msg", &st), src;
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, exclude, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, id);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int tf = sqlite3_column_int(st, 2);
        uint16_t c = (uint16_t)(tf < 0 ? 0 : tf > 65535 ? 65535 : tf);
        if ((rc = fn(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                     sqlite3_column_int(st, 3), &c)))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "term tier rows");
out:
    sqlite3_finalize(st);
    return rc;
}

/* A build's writer: the insert, and tier_post's own indexes and triggers
 * as the schema holds them (their CREATE statements), dropped while the
 * build rewrites the table whole and made again before its commit. With
 * them, the reset deleted row by row (a trigger on the table forbids
 * SQLite's truncation, and tier_terms_gone ran its lookup a row) and
 * every row went into the index by message at a random place; without,
 * the table is truncated, and CREATE INDEX sorts once. */
/* Rows go in TIER_ROWS_BATCH a statement: a one-row INSERT spent about as
 * many instructions in its statement's start and end (the VDBE's program,
 * the row's record, the statement journal's checks) as in the B-tree's
 * append (bench/README.md, "The tier build's rows, many a statement"). */
#define TIER_ROWS_BATCH 64

struct tier_row { int64_t term, msg, sess; int tf, ntok; };

struct store_tier_writer {
    sqlite3_stmt *st;            /* TIER_ROWS_BATCH rows */
    struct tier_row rows[TIER_ROWS_BATCH];
    int           nrows;
    char        **ddl;
    int           nddl;
};

void store_tier_done(struct store_tier_writer *w)
{
    if (!w)
        return;
    sqlite3_finalize(w->st);
    for (int i = 0; i < w->nddl; i++)
        sqlite3_free(w->ddl[i]);
    free(w->ddl);
    free(w);
}

/* Runs sql (built by sqlite3_mprintf; NULL: out of memory) and frees it. */
static int exec_free(struct cairn *h, char *sql)
{
    if (!sql)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    int src = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, "term tiers' schema");
}

/* Saves then drops tier_post's indexes and triggers (its primary key is
 * the table itself), in the schema's order. */
static int drop_post_ddl(struct cairn *h, struct store_tier_writer *w)
{
    sqlite3_stmt *st;
    char **drops = NULL;
    int rc = store_prepare(h, "SELECT type, name, sql FROM sqlite_master WHERE tbl_name = "
                           "'tier_post' AND type IN ('index', 'trigger') AND sql IS NOT NULL "
                           "ORDER BY rowid", &st), src, n = 0;
    if (rc)
        return rc;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *type = (const char *)sqlite3_column_text(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        const char *sql = (const char *)sqlite3_column_text(st, 2);
        char **nd = realloc(w->ddl, (size_t)(n + 1) * sizeof *nd), **nx;
        if (nd)
            w->ddl = nd;
        nx = realloc(drops, (size_t)(n + 1) * sizeof *nx);
        if (nx)
            drops = nx;
        if (!nd || !nx || !type || !name || !sql ||
            !(w->ddl[n] = sqlite3_mprintf("%s", sql))) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            break;
        }
        drops[n] = sqlite3_mprintf("DROP %s \"%w\"", strcmp(type, "index") ? "TRIGGER" : "INDEX",
                                   name);
        w->nddl = ++n;
    }
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "term tiers' schema");
    sqlite3_finalize(st);
    for (int i = 0; i < n; i++)        /* exec_free frees each, run or not */
        rc = rc ? (sqlite3_free(drops[i]), rc) : exec_free(h, drops[i]);
    free(drops);
    return rc;
}

/* The statement inserting n rows ("(?, ?, ?, ?, ?)" n times). */
static int prepare_rows(struct cairn *h, int n, sqlite3_stmt **st)
{
    struct buf sql = BUF_INIT;
    buf_adds(&sql, "INSERT INTO tier_post(term, msg, sess, tf, ntok) VALUES ");
    for (int i = 0; i < n; i++)
        buf_adds(&sql, i ? ", (?, ?, ?, ?, ?)" : "(?, ?, ?, ?, ?)");
    int rc = sql.err ? cairn__err(h, CAIRN_NOMEM, "out of memory")
                     : store_prepare(h, sql.p, st);
    buf_release(&sql);
    return rc;
}

/* The rows held written, in the order they came. */
static int flush_rows(struct cairn *h, struct store_tier_writer *w)
{
    sqlite3_stmt *st = NULL;
    int rc = CAIRN_OK, src, n = w->nrows;
    if (!n)
        return CAIRN_OK;
    if (n == TIER_ROWS_BATCH) {
        if (!w->st && (rc = prepare_rows(h, n, &w->st)))
            return rc;
        st = w->st;
        sqlite3_reset(st);
    } else if ((rc = prepare_rows(h, n, &st))) {
        return rc;
    }
    for (int i = 0; i < n; i++) {
        const struct tier_row *r = &w->rows[i];
        sqlite3_bind_int64(st, 5 * i + 1, r->term);
        sqlite3_bind_int64(st, 5 * i + 2, r->msg);
        sqlite3_bind_int64(st, 5 * i + 3, r->sess);
        sqlite3_bind_int(st, 5 * i + 4, r->tf);
        sqlite3_bind_int(st, 5 * i + 5, r->ntok);
    }
    src = sqlite3_step(st);
    if (st != w->st)
        sqlite3_finalize(st);
    w->nrows = 0;
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "term tier rows");
}

int store_tier_finish(struct cairn *h, struct store_tier_writer *w)
{
    int rc = w ? flush_rows(h, w) : CAIRN_OK;
    for (int i = 0; w && !rc && i < w->nddl; i++)
        rc = exec_free(h, sqlite3_mprintf("%s", w->ddl[i]));
    store_tier_done(w);
    return rc;
}

int store_tier_reset(struct cairn *h, int64_t upto, const struct store_tier_scoring *sc,
                     struct store_tier_writer **w)
{
    sqlite3_stmt *st;
    int rc, src;
    if (!(*w = calloc(1, sizeof **w)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if ((rc = drop_post_ddl(h, *w)) || (rc = store_prepare(h, "DELETE FROM tier_post", &st)))
        return rc;
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "term tiers");
    int64_t ignored;
    if ((rc = one_int(h, "DELETE FROM tier_terms", NULL, 0, 0, &ignored, "term tiers")))
        return rc;
    if ((rc = store_prepare(h, "UPDATE tier_state SET upto = ?1, avg = ?2, k1 = ?3, b = ?4, "
                            "built = ?5", &st)))
        return rc;
    sqlite3_bind_int64(st, 5, sc->built);
    sqlite3_bind_int64(st, 1, upto);
    sqlite3_bind_double(st, 2, sc->avg);
    sqlite3_bind_double(st, 3, sc->k1);
    sqlite3_bind_double(st, 4, sc->b);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "term tiers");
}

int store_tier_reader(struct cairn *h, int cache_mb, struct cairn **r)
{
    sqlite3_stmt *st;
    int wal = 0;
    *r = NULL;
    /* a reader sees what a writer committed only through the WAL; without
     * it (an in-memory store, another journal mode) the build walks alone */
    const char *v = cairn__setting(h, CAIRN__SET_TIER_WALK);
    if ((v && !strcmp(v, "0")) || h->pg || !h->path || !strcmp(h->path, ":memory:") ||
        !h->path[0] || !h->open_reader || !h->close_reader ||
        store_prepare(h, "PRAGMA journal_mode", &st))
        return CAIRN_OK;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *m = (const char *)sqlite3_column_text(st, 0);
        wal = m && !strcmp(m, "wal");
    }
    sqlite3_finalize(st);
    /* a writer's page cache, not a one-shot reader's 256 KB, when the
     * walks read msg_runs again for every word (the caller's choice) */
    if (wal && (h->open_reader(h, r) || store_cache_size(*r, cache_mb))) {
        h->close_reader(*r);       /* no reader: the build walks alone */
        *r = NULL;
    }
    return CAIRN_OK;
}

void store_tier_reader_close(struct cairn *h, struct cairn *r)
{
    if (r)
        h->close_reader(r);
}

int store_max_message(struct cairn *h, int64_t *max)
{
    return one_int(h, "SELECT coalesce(max(id), 0) FROM messages", NULL, 0, 0, max, "messages");
}

int store_tier_vocab(struct cairn *h, int64_t df_min,
                     int (*fn)(void *arg, const char *tok, size_t n, int64_t df), void *arg)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    /* fts5vocab reads the index's terms in order with their document
     * counts: one pass over the index, no table row read */
    int64_t ignored;
    if ((rc = one_int(h, "CREATE VIRTUAL TABLE IF NOT EXISTS temp.tier_vocab USING "
                      "fts5vocab(main, 'messages_fts', 'row')", NULL, 0, 0, &ignored,
                      "index terms")))
        return rc;
    if ((rc = store_prepare(h, "SELECT term, doc FROM temp.tier_vocab WHERE doc >= ?1", &st)))
        goto out;
    sqlite3_bind_int64(st, 1, df_min);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        if (t && (rc = fn(arg, t, (size_t)sqlite3_column_bytes(st, 0),
                          sqlite3_column_int64(st, 1))))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "index terms");
out:
    sqlite3_finalize(st);
    int drc = one_int(h, "DROP TABLE IF EXISTS temp.tier_vocab", NULL, 0, 0, &ignored,
                      "index terms");
    return rc ? rc : drc;
}

int store_tier_add_term(struct cairn *h, const char *tok, size_t n, int64_t df, const double *cut,
                        int64_t *id)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT INTO tier_terms(term, df, cut) VALUES (?1, ?2, ?3) "
                           "RETURNING id", &st), src;
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, tok, (int)n, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, df);
    if (cut)
        sqlite3_bind_double(st, 3, *cut);
    *id = 0;
    if ((src = sqlite3_step(st)) == SQLITE_ROW)
        *id = sqlite3_column_int64(st, 0);
    else
        rc = cairn__sqlerr(h, src, "term tier");
    sqlite3_finalize(st);
    return rc;
}

int store_tier_add_post(struct cairn *h, struct store_tier_writer *w, int64_t id, int64_t msg,
                        int64_t sess, int tf, int ntok)
{
    w->rows[w->nrows++] = (struct tier_row){ id, msg, sess, tf, ntok };
    return w->nrows == TIER_ROWS_BATCH ? flush_rows(h, w) : CAIRN_OK;
}
