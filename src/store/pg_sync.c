/*
 * pg_sync.c: cairn_sync, the local store and a PostgreSQL server in step
 * (docs/POSTGRES.md, "Sync").
 *
 * Append-only by stable ids: a session is (owner, its external id), a
 * message (owner, session, its external id or "h:" + the content hash the
 * local store dedupes it by). Every insert on the server is ON CONFLICT on
 * those keys, so a re-run, a batch sent twice after a crash, or two
 * machines pushing the same sessions at once never duplicate a row; a
 * message rewritten here after it was pushed moves the push cursor back
 * (store_sync_rewritten) and its new text replaces the old one.
 *
 * Push: forgets first (tombstones: a session once forgotten is never sent
 * again, by this machine or another that has not heard yet, because the
 * server refuses sessions that have a tombstone), then messages in local
 * row order, `batch` per server transaction; the local cursor moves after
 * the server committed. What leaves is what the store holds: masked and
 * without <private> spans when it was written (the store masks every write).
 *
 * Pull: the server's rows carry the transaction that wrote them (xid8).
 * Pull reads rows whose transaction is at or past its cursor, and the
 * cursor it keeps is the oldest transaction still running when it began
 * (pg_snapshot_xmin): every row below it was committed and read, so no row
 * committed late by a slow writer is skipped. Rows near the cursor may be
 * read twice; adding them again adds nothing (cairn_add_session is
 * idempotent). Tombstones the role may read forget the local session.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/sha256.h"

#define SYNC_BATCH 500
#define PULL_BATCH_BYTES "33554432"     /* 32 MB of message text a pull batch */
/* The tsvector literal of one message is capped: PostgreSQL refuses a
 * tsvector over 1 MB, and a pasted log needs no more terms than these. */
#define TSV_MAX (512 * 1024)

static void hex_sha256(const char *s, size_t n, char out[65])
{
    struct sha256 st;
    unsigned char d[32];
    sha256_init(&st);
    sha256_update(&st, s, n);
    sha256_final(&st, d);
    sha256_hex(d, out);
}

void store_sid_hash(const char *sid, char out[65])
{
    hex_sha256(sid, strlen(sid), out);
}

/* ---- the local side ---------------------------------------------------- */

int pg_local_exec(struct cairn *h, const char *sql, const char *a, const char *b)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
    if (b)
        sqlite3_bind_text(st, 2, b, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE || src == SQLITE_ROW ? CAIRN_OK : cairn__sqlerr(h, src, "sync");
}

int pg_local_has(struct cairn *h, const char *sql, const char *a)
{
    sqlite3_stmt *st;
    if (store_prepare(h, sql, &st))
        return -1;
    sqlite3_bind_text(st, 1, a, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_ROW ? 1 : src == SQLITE_DONE ? 0 : -1;
}

/* cairn_forget's part: the session's hash joins `forgotten` (pushed as a
 * tombstone by the next sync) and leaves `sync_foreign`. In forget's
 * transaction. */
int store_sync_forget(struct cairn *h, const char *session)
{
    char hash[65];
    int rc;
    store_sid_hash(session, hash);
    if ((rc = pg_local_exec(h, "INSERT OR IGNORE INTO forgotten(sid_hash, at) VALUES "
                            "(?, CAST(strftime('%s') AS INTEGER))", hash, NULL)) ||
        (rc = pg_local_exec(h, "DELETE FROM sync_foreign WHERE sid_hash = ?", hash, NULL)))
        return rc;
    /* messages.id is a rowid: once the newest rows are deleted SQLite hands
     * their ids out again, below a push cursor past them. Pulling the
     * cursors back to the highest id left makes the next push look at every
     * id a new message can get (what it sends again is already there). */
    return pg_local_exec(h, "UPDATE sync_state SET push_msg = (SELECT coalesce(max(id), 0) FROM "
                         "messages) WHERE push_msg > (SELECT coalesce(max(id), 0) FROM messages)",
                      NULL, NULL);
}

int store_sync_rewritten(struct cairn *h, int64_t msg)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE sync_state SET push_msg = ?1 - 1 WHERE push_msg >= ?1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, msg);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "sync state");
}

static int cursor_load(struct cairn *h, const char *server, const char *scope, struct cursor *c)
{
    sqlite3_stmt *st;
    memset(c, 0, sizeof *c);
    snprintf(c->pull_tx, sizeof c->pull_tx, "0");
    snprintf(c->pull_mtx, sizeof c->pull_mtx, "0");
    int rc = store_prepare(h, "SELECT push_msg, push_tomb, pull_tx, push_mtomb, pull_mtx "
                              "FROM sync_state WHERE server = ? AND scope = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, server, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, scope, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        c->push_msg = c->push_seen = sqlite3_column_int64(st, 0);
        c->push_tomb = sqlite3_column_int64(st, 1);
        snprintf(c->pull_tx, sizeof c->pull_tx, "%s", (const char *)sqlite3_column_text(st, 2));
        c->push_mtomb = sqlite3_column_int64(st, 3);
        snprintf(c->pull_mtx, sizeof c->pull_mtx, "%s", (const char *)sqlite3_column_text(st, 4));
    }
    sqlite3_finalize(st);
    return src == SQLITE_ROW || src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "sync state");
}

/* A push cursor below what this run saw was moved back meanwhile (a
 * rewrite or a forget by another process, or by a pull's own adds): it
 * stays there, so the next push sends what it must. */
int pg_cursor_save(struct cairn *h, const char *server, const char *scope, struct cursor *c)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT INTO sync_state(server, scope, push_msg, push_tomb, pull_tx, "
                              "push_mtomb, pull_mtx, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?7, "
                              "?8, CAST(strftime('%s') AS INTEGER)) ON CONFLICT(server, scope) DO "
                              "UPDATE SET push_msg = CASE WHEN push_msg < ?6 THEN push_msg ELSE ?3 "
                              "END, push_tomb = ?4, pull_tx = ?5, push_mtomb = ?7, pull_mtx = ?8, "
                              "updated_at = excluded.updated_at", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, server, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, scope, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, c->push_msg);
    sqlite3_bind_int64(st, 4, c->push_tomb);
    sqlite3_bind_text(st, 5, c->pull_tx, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, c->push_seen);
    sqlite3_bind_int64(st, 7, c->push_mtomb);
    sqlite3_bind_text(st, 8, c->pull_mtx, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "sync state");
    c->push_seen = c->push_msg;
    return CAIRN_OK;
}

/* ---- server statements ------------------------------------------------- */

/* Runs a parameterised statement; *affected gets the rows it changed. */
static int pq(struct pgc *pc, const char *sql, int n, const char *const *v, const int *len,
              const int *fmt, size_t *affected, const char *what)
{
    PGresult *r = PQexecParams(pc->c, sql, n, NULL, v, len, fmt, 0);
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
        return pg_fail(pc, r, what);
    if (affected)
        *affected = (size_t)strtoul(PQcmdTuples(r), NULL, 10);
    PQclear(r);
    return CAIRN_OK;
}

/* Runs a parameterised statement that returns one row (or none: *out
 * is then ""); its first value goes to out. */
static int pq_first(struct pgc *pc, const char *sql, int n, const char *const *v, char *out,
                    size_t outlen, const char *what)
{
    PGresult *r = PQexecParams(pc->c, sql, n, NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(pc, r, what);
    snprintf(out, outlen, "%s", PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    return CAIRN_OK;
}

void pg_values_sql(struct buf *b, size_t rows, size_t cols)
{
    for (size_t i = 0; i < rows; i++) {
        buf_adds(b, i ? ",(" : "(");
        for (size_t k = 0; k < cols; k++)
            buf_printf(b, "%s$%zu", k ? "," : "", i * cols + k + 1);
        buf_addc(b, ')');
    }
}

/* The tsvector literal of cairn's own tokens of text: 'token':position,
 * parts of a compound at their whole's position (as FTS5 colocates them). */
struct tsv {
    struct buf b;
    int pos;
};

static int tsv_cb(void *arg, const char *tok, size_t n, size_t start, size_t end, int colocated)
{
    struct tsv *t = arg;
    (void)start, (void)end;
    if (!colocated)
        t->pos++;
    if (n == 0 || n > 2046)                   /* PostgreSQL's longest lexeme */
        return 0;
    if (t->b.n + 2 * n + 16 > TSV_MAX)
        return 1;
    buf_addc(&t->b, '\'');
    for (size_t i = 0; i < n; i++) {
        if (tok[i] == '\'' || tok[i] == '\\')
            buf_addc(&t->b, tok[i]);
        buf_addc(&t->b, tok[i]);
    }
    /* positions past 16383 are clamped by PostgreSQL; say so ourselves */
    buf_printf(&t->b, "':%d ", t->pos > 16383 ? 16383 : t->pos);
    return 0;
}

static char *tsv_literal(const char *s, size_t n)
{
    struct tsv t = { .pos = 0 };
    buf_init(&t.b, TSV_MAX + 64);
    text_tokenize(s, n, 0, tsv_cb, &t);
    if (t.b.err) {
        buf_release(&t.b);
        return NULL;
    }
    return buf_detach(&t.b, NULL);
}

/* ---- push -------------------------------------------------------------- */

static int forget_session(struct cairn *h, const char *sid)
{
    return cairn_forget(h, sid);
}

/* A forgotten session: the sha256 of its id. The server's tombstone takes
 * the session's project, so that those it was shared with forget it too;
 * then every row goes (the insert's subquery sees the rows as they were
 * before the statement). */
static const struct pg_tombs session_tombs = {
    .local_sql = "SELECT id, sid_hash FROM forgotten WHERE id > ? ORDER BY id LIMIT ?",
    .server_sql = "WITH t AS (INSERT INTO cairn.tombstones(sid_hash, project) VALUES ($1, "
                  "coalesce((SELECT project FROM cairn.sessions WHERE owner = current_user AND "
                  "sid_hash = $1), '')) ON CONFLICT DO NOTHING) DELETE FROM cairn.sessions "
                  "WHERE owner = current_user AND sid_hash = $1",
    .push_what = "push a forget",
    .pull_what = "pull forgets",
    .pull_sql = "SELECT sid_hash FROM cairn.tombstones WHERE tx >= $1::xid8 ORDER BY tx, seq",
    .known_sql = "SELECT 1 FROM forgotten WHERE sid_hash = ?",
    .index_sql = "SELECT ext_id, ext_id FROM sessions",
    .remember_sql = "INSERT OR IGNORE INTO forgotten(sid_hash, at) VALUES "
                    "(?, CAST(strftime('%s') AS INTEGER))",
    .drop = forget_session,
};

int pg_push_tombs(struct pgc *pc, const struct pg_tombs *k, struct cursor *c, int64_t *cursor,
                  const char *scope, size_t batch, size_t *count)
{
    struct cairn *h = pc->h;
    for (;;) {
        sqlite3_stmt *st;
        int rc = store_prepare(h, k->local_sql, &st);
        if (rc)
            return rc;
        sqlite3_bind_int64(st, 1, *cursor);
        sqlite3_bind_int64(st, 2, (int64_t)batch);
        int64_t last = *cursor;
        size_t n = 0;
        if ((rc = pg_exec(pc, "BEGIN", "begin"))) {
            sqlite3_finalize(st);
            return rc;
        }
        while (!rc && sqlite3_step(st) == SQLITE_ROW) {
            const char *v[1] = { (const char *)sqlite3_column_text(st, 1) };
            last = sqlite3_column_int64(st, 0);
            rc = pq(pc, k->server_sql, 1, v, NULL, NULL, NULL, k->push_what);
            n++;
        }
        sqlite3_finalize(st);
        if (!rc)
            rc = pg_exec(pc, "COMMIT", "commit");
        if (rc) {
            PQclear(PQexec(pc->c, "ROLLBACK"));
            return rc;
        }
        if (n == 0)
            return CAIRN_OK;
        *cursor = last;
        *count += n;
        if ((rc = pg_cursor_save(h, pc->key, scope, c)))
            return rc;
    }
}

static int push_forgets(struct pgc *pc, struct cursor *c, const char *scope,
                        const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    return pg_push_tombs(pc, &session_tombs, c, &c->push_tomb, scope, o->batch,
                         &rep->forgets_pushed);
}

/* One local message row as push reads it (strings owned by the row). */
struct prow {
    int64_t id, hash, position, ntok;
    int     known;           /* its session was on the server before this push */
    char   *v[16];           /* the server statement's text parameters */
    int     len[16];
    int     null[16];
};

static void prow_free(struct prow *r)
{
    for (int i = 0; i < 16; i++)
        free(r->v[i]);
}

static char *dup_col(sqlite3_stmt *st, int i, int *len)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return NULL;
    const char *t = (const char *)sqlite3_column_text(st, i);
    int n = sqlite3_column_bytes(st, i);
    char *p = malloc((size_t)n + 1);
    if (p) {
        memcpy(p, t, (size_t)n);
        p[n] = 0;
    }
    if (len)
        *len = n;
    return p;
}

static char *dup_int(sqlite3_stmt *st, int i)
{
    char tmp[32];
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        return NULL;
    snprintf(tmp, sizeof tmp, "%" PRId64, (int64_t)sqlite3_column_int64(st, i));
    return strdup(tmp);
}

/* Session parameters: $1 sid, $2 project, $3 private, $4 source, $5 title,
 * $6 started_at, $7 ended_at, $8 meta. Message parameters: $1 sid, $2 mkey,
 * $3 project, $4 position, $5 ext_id, $6 role, $7 speaker, $8 content,
 * $9 created_at, $10 chash, $11 ntok, $12 tsv. Kept in one row: slots
 * 0-7 the session's, 8-15 the message's own ($2, $4-$7, $9-$12 less the
 * shared ones), mapped below. */
enum { S_SID, S_PROJECT, S_PRIVATE, S_SOURCE, S_TITLE, S_START, S_END, S_META,
       M_KEY, M_POS, M_EXT, M_ROLE, M_SPEAKER, M_CONTENT, M_AT, M_HASH };

static int read_prow(sqlite3_stmt *st, int private_sessions, struct prow *r)
{
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->v[S_SID] = dup_col(st, 1, NULL);
    r->v[S_SOURCE] = dup_col(st, 2, NULL);
    r->v[S_PROJECT] = dup_col(st, 3, NULL);
    r->v[S_TITLE] = dup_col(st, 4, NULL);
    r->v[S_START] = dup_int(st, 5);
    r->v[S_END] = dup_int(st, 6);
    r->v[S_META] = dup_col(st, 7, NULL);
    r->v[M_POS] = dup_int(st, 8);
    r->v[M_EXT] = dup_col(st, 9, NULL);
    r->v[M_ROLE] = dup_col(st, 10, NULL);
    r->v[M_SPEAKER] = dup_col(st, 11, NULL);
    r->v[M_CONTENT] = dup_col(st, 12, &r->len[M_CONTENT]);
    r->v[M_AT] = dup_int(st, 13);
    r->hash = sqlite3_column_int64(st, 14);
    r->ntok = sqlite3_column_int64(st, 15);
    r->v[S_PRIVATE] = strdup(private_sessions ? "true" : "false");
    /* a message without an id is its content hash and which repeat of
     * that content in the session it is (the store keeps repeats: "ok",
     * "ok") */
    char key[48];
    snprintf(key, sizeof key, "h:%016" PRIx64 ":%" PRId64, (uint64_t)r->hash,
             (int64_t)sqlite3_column_int64(st, 16));
    r->v[M_KEY] = r->v[M_EXT] ? strdup(r->v[M_EXT]) : strdup(key);
    r->v[M_HASH] = malloc(65);
    if (r->v[M_HASH] && r->v[M_CONTENT])
        hex_sha256(r->v[M_CONTENT], (size_t)r->len[M_CONTENT], r->v[M_HASH]);
    /* the columns that may be NULL: speaker, ext id, times, meta */
    if (!r->v[S_SID] || !r->v[S_SOURCE] || !r->v[S_PROJECT] || !r->v[S_TITLE] || !r->v[M_POS] ||
        !r->v[M_ROLE] || !r->v[M_CONTENT] || !r->v[S_PRIVATE] || !r->v[M_KEY] || !r->v[M_HASH])
        return CAIRN_NOMEM;
    return CAIRN_OK;
}

static int push_vectors(struct pgc *pc, const struct prow *r, struct cairn_sync_report *rep)
{
    sqlite3_stmt *st;
    int rc = store_prepare(pc->h, "SELECT model, piece, dim, scale, v FROM vectors WHERE msg = ?",
                           &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, r->id);
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        char piece[16], dim[16], scale[32];
        int d = sqlite3_column_int(st, 2), nb = sqlite3_column_bytes(st, 4);
        double sc = sqlite3_column_double(st, 3);
        const void *blob = sqlite3_column_blob(st, 4);
        snprintf(piece, sizeof piece, "%d", sqlite3_column_int(st, 1));
        snprintf(dim, sizeof dim, "%d", d);
        snprintf(scale, sizeof scale, "%.9g", sc);
        /* pgvector's text form: int8 rows are scale * q, f32 rows as they are */
        struct buf e;
        buf_init(&e, (size_t)d * 24 + 16);
        if (pc->has_emb && d > 0 && (nb == d || nb == d * 4)) {
            buf_addc(&e, '[');
            for (int i = 0; i < d; i++) {
                float x;
                if (nb == d)
                    x = (float)(sc * ((const int8_t *)blob)[i]);
                else
                    memcpy(&x, (const char *)blob + 4 * i, 4);
                buf_printf(&e, "%s%.7g", i ? "," : "", x);
            }
            buf_addc(&e, ']');
        }
        const char *v[9] = { r->v[S_SID], r->v[M_KEY], (const char *)sqlite3_column_text(st, 0),
                             piece, dim, scale, blob, e.n ? e.p : NULL };
        int len[9] = { 0, 0, 0, 0, 0, 0, nb, 0 };
        int fmt[9] = { 0, 0, 0, 0, 0, 0, 1, 0 };
        size_t added = 0;
        if (e.err)
            rc = CAIRN_NOMEM;
        else
            rc = pq(pc, pc->has_emb
                        ? "INSERT INTO cairn.vectors(sid, mkey, model, piece, dim, scale, v, emb) "
                          "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::vector) ON CONFLICT DO NOTHING"
                        : "INSERT INTO cairn.vectors(sid, mkey, model, piece, dim, scale, v) "
                          "VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING",
                    pc->has_emb ? 8 : 7, v, len, fmt, &added, "push a vector");
        rep->vectors_pushed += added;
        buf_release(&e);
        /* the dim's HNSW index, made with the first vector of that dim */
        if (!rc && added && pc->has_vindex && d != pc->indexed_dim) {
            const char *dv[1] = { dim };
            if (!(rc = pq(pc, "SELECT cairn.vector_index($1::integer)", 1, dv, NULL, NULL, NULL,
                          "index the vectors")))
                pc->indexed_dim = d;
        }
    }
    sqlite3_finalize(st);
    return rc;
}

/* A session's row, before its first message of a batch: a session
 * tombstoned on the server is not sent again; a known one only widens its
 * time range, and becomes private, never public. */
static int push_session(struct pgc *pc, struct prow *r, struct cairn_sync_report *rep)
{
    char hash[65], isnew[8];
    int rc;
    store_sid_hash(r->v[S_SID], hash);
    const char *sv[9] = { r->v[S_SID], r->v[S_PROJECT], r->v[S_PRIVATE], r->v[S_SOURCE],
                          r->v[S_TITLE], r->v[S_START], r->v[S_END], r->v[S_META], hash };
    /* xmax is 0 on a row this statement inserted, not on one it updated */
    if ((rc = pq_first(pc, "INSERT INTO cairn.sessions AS s(sid, project, private, source, "
                           "title, started_at, ended_at, meta, sid_hash) SELECT $1, $2, $3, "
                           "$4, $5, $6, $7, $8, $9 WHERE NOT EXISTS (SELECT 1 FROM "
                           "cairn.tombstones t WHERE t.owner = current_user AND t.sid_hash = "
                           "$9) ON CONFLICT (owner, sid) DO UPDATE SET started_at = "
                           "least(s.started_at, EXCLUDED.started_at), ended_at = "
                           "greatest(s.ended_at, EXCLUDED.ended_at), private = s.private OR "
                           "EXCLUDED.private RETURNING s.xmax::text = '0'", 9, sv, isnew,
                       sizeof isnew, "push a session")))
        return rc;
    rep->sessions_pushed += isnew[0] == 't';
    r->known = isnew[0] == 'f';
    return CAIRN_OK;
}

/* Messages a statement carries: 12 parameters each, well below the
 * 65535 PostgreSQL takes, and few enough that a statement stays small. */
#define PUSH_ROWS 250
#define MSG_PARAMS 12

/* A message without an id is keyed by its content hash: rewritten, it has
 * a new key, and the row of its old text at its place must go (after the
 * new one came: rows[] are such new rows). Rows keyed by an id are updated
 * in place instead. */
static int push_rekeyed(struct pgc *pc, struct prow **rows, size_t n)
{
    const char **v = calloc(n * 3, sizeof *v);
    struct buf sql;
    size_t k = 0;
    int rc;
    buf_init(&sql, 0);
    /* a lateral lookup a row: each is an index scan of its session's rows
     * (the primary key's (owner, sid)), never a join over the table */
    buf_adds(&sql, "DELETE FROM cairn.messages WHERE ctid = ANY (ARRAY(SELECT x.ctid FROM "
                   "(VALUES ");
    for (size_t i = 0; v && i < n; i++) {
        if (rows[i]->v[M_EXT])
            continue;
        v[k] = rows[i]->v[S_SID], v[k + 1] = rows[i]->v[M_KEY], v[k + 2] = rows[i]->v[M_POS];
        buf_printf(&sql, "%s($%zu,$%zu,$%zu)", k ? "," : "", k + 1, k + 2, k + 3);
        k += 3;
    }
    buf_adds(&sql, ") v(sid, mkey, position) CROSS JOIN LATERAL (SELECT m.ctid FROM "
                   "cairn.messages m WHERE m.owner = current_user AND m.sid = v.sid AND "
                   "m.position = v.position::integer AND m.mkey <> v.mkey AND m.ext_id IS NULL) "
                   "x))");
    if (!v || sql.err)
        rc = cairn__err(pc->h, CAIRN_NOMEM, "out of memory");
    else
        rc = k ? pq(pc, sql.p, (int)k, v, NULL, NULL, NULL, "push messages") : CAIRN_OK;
    free(v);
    buf_release(&sql);
    return rc;
}

/* The dates the pushed messages rows[n] speak of (local message_events,
 * computed by the store's write path), in one statement: recall on a
 * server store matches a question's date against them. */
static int push_events(struct pgc *pc, struct prow **rows, size_t n)
{
    struct buf sid = BUF_INIT, key = BUF_INIT, from = BUF_INIT, to = BUF_INIT;
    sqlite3_stmt *st = NULL;
    size_t k = 0;
    int rc = store_prepare(pc->h, "SELECT t_from, t_to FROM message_events WHERE msg = ?", &st);
    for (size_t i = 0; !rc && i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, rows[i]->id);
        while (sqlite3_step(st) == SQLITE_ROW) {
            buf_addc(&sid, k ? ',' : '{');
            buf_addc(&key, k ? ',' : '{');
            pg_array_elem(&sid, rows[i]->v[S_SID], 1);
            pg_array_elem(&key, rows[i]->v[M_KEY], 1);
            buf_printf(&from, "%s%lld", k ? "," : "{", (long long)sqlite3_column_int64(st, 0));
            buf_printf(&to, "%s%lld", k ? "," : "{", (long long)sqlite3_column_int64(st, 1));
            k++;
        }
    }
    buf_addc(&sid, '}');
    buf_addc(&key, '}');
    buf_addc(&from, '}');
    buf_addc(&to, '}');
    const char *v[4] = { sid.p, key.p, from.p, to.p };
    if (!rc && (sid.err || key.err || from.err || to.err))
        rc = cairn__err(pc->h, CAIRN_NOMEM, "out of memory");
    else if (!rc && k)
        rc = pq(pc, "INSERT INTO cairn.events(sid, mkey, t_from, t_to) SELECT * FROM "
                    "unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[])", 4, v, NULL, NULL,
                NULL, "push event dates");
    sqlite3_finalize(st);
    buf_release(&sid);
    buf_release(&key);
    buf_release(&from);
    buf_release(&to);
    return rc;
}

/* One multi-row INSERT for rows[0..n): one round trip, not one a message.
 * The rows whose session is on the server go in (a tombstoned one is not);
 * one already there with the same text and speaker is left alone, one
 * whose text was rewritten here (an extended reply, cairn_redact) takes
 * the new text and a new transaction, so pulls read it again. RETURNING
 * names the rows that went in or changed: the pushed ones, and the only
 * ones whose vectors are sent. */
static int push_chunk(struct pgc *pc, struct prow **rows, size_t n, struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    const char **v = calloc(n * MSG_PARAMS, sizeof *v);
    char **tsv = calloc(n, sizeof *tsv);
    char (*ntok)[24] = calloc(n, sizeof *ntok);
    struct prow **fresh = calloc(n, sizeof *fresh), **done = calloc(n, sizeof *done);
    struct buf sql;
    PGresult *r = NULL;
    int rc = CAIRN_OK;
    buf_init(&sql, 0);
    if (!v || !tsv || !ntok || !fresh || !done) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    buf_adds(&sql, "INSERT INTO cairn.messages AS m(sid, mkey, project, position, ext_id, role, "
                   "speaker, content, created_at, chash, ntok, tsv) SELECT sid, mkey, project, "
                   "position::integer, ext_id, role, speaker, content, created_at::bigint, "
                   "chash, ntok::integer, tsv::tsvector FROM (VALUES ");
    for (size_t i = 0; i < n; i++) {
        struct prow *p = rows[i];
        if (!(tsv[i] = tsv_literal(p->v[M_CONTENT], (size_t)p->len[M_CONTENT]))) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        snprintf(ntok[i], sizeof ntok[i], "%" PRId64, p->ntok);
        const char *mv[MSG_PARAMS] = { p->v[S_SID], p->v[M_KEY], p->v[S_PROJECT], p->v[M_POS],
                                       p->v[M_EXT], p->v[M_ROLE], p->v[M_SPEAKER],
                                       p->v[M_CONTENT], p->v[M_AT], p->v[M_HASH], ntok[i],
                                       tsv[i] };
        memcpy(v + i * MSG_PARAMS, mv, sizeof mv);
    }
    pg_values_sql(&sql, n, MSG_PARAMS);
    buf_adds(&sql, ") v(sid, mkey, project, position, ext_id, role, speaker, content, "
                   "created_at, chash, ntok, tsv) WHERE EXISTS (SELECT 1 FROM cairn.sessions s "
                   "WHERE s.owner = current_user AND s.sid = v.sid) ON CONFLICT (owner, sid, "
                   "mkey) DO UPDATE SET content = EXCLUDED.content, chash = EXCLUDED.chash, "
                   "speaker = EXCLUDED.speaker, ntok = EXCLUDED.ntok, tsv = EXCLUDED.tsv, "
                   "tx = pg_current_xact_id(), seq = DEFAULT WHERE (m.chash, m.speaker) IS "
                   "DISTINCT FROM (EXCLUDED.chash, EXCLUDED.speaker) "
                   "RETURNING sid, mkey, xmax::text = '0'");
    if (sql.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    r = PQexecParams(pc->c, sql.p, (int)(n * MSG_PARAMS), NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(pc, r, "push messages");
        r = NULL;                       /* pg_fail cleared it */
        goto out;
    }
    size_t added = (size_t)PQntuples(r), at = 0;
    rep->messages_pushed += added;
    rep->messages_present += n - added;
    /* RETURNING comes in VALUES order in practice; the scan wraps around
     * so that no order is relied on. New rows keyed by their content in a
     * session the server had may be rewrites: push_rekeyed's */
    size_t nk = 0, nd = 0;
    for (size_t i = 0; !rc && i < added; i++) {
        const char *kv[2] = { PQgetvalue(r, (int)i, 0), PQgetvalue(r, (int)i, 1) };
        /* a rewritten row's vectors and dates were of its old text */
        if (PQgetvalue(r, (int)i, 2)[0] != 't' &&
            (rc = pq(pc, "WITH v AS (DELETE FROM cairn.vectors WHERE owner = current_user AND "
                         "sid = $1 AND mkey = $2) DELETE FROM cairn.events WHERE owner = "
                         "current_user AND sid = $1 AND mkey = $2", 2, kv, NULL, NULL, NULL,
                     "push a message")))
            break;
        for (size_t k = 0; k < n; k++, at = (at + 1) % n) {
            if (!strcmp(rows[at]->v[M_KEY], kv[1]) && !strcmp(rows[at]->v[S_SID], kv[0])) {
                done[nd++] = rows[at];
                rc = push_vectors(pc, rows[at], rep);
                if (rows[at]->known && !rows[at]->v[M_EXT])
                    fresh[nk++] = rows[at];
                break;
            }
        }
    }
    if (!rc && nd)
        rc = push_events(pc, done, nd);
    if (!rc && nk)
        rc = push_rekeyed(pc, fresh, nk);
out:
    PQclear(r);
    if (tsv)
        for (size_t i = 0; i < n; i++)
            free(tsv[i]);
    free(tsv);
    free(ntok);
    free(fresh);
    free(done);
    free(v);
    buf_release(&sql);
    return rc;
}

/* One server transaction a batch: all of it lands or none. Two machines
 * pushing the same sessions in different orders can deadlock on their
 * rows; PostgreSQL then aborts one, which tries its batch again. */
static int push_batch(struct pgc *pc, struct prow *rows, size_t n, struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    struct prow **send = calloc(n < PUSH_ROWS ? n : PUSH_ROWS, sizeof *send);
    int rc;
    if (!send)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (int attempt = 0;; attempt++) {
        struct cairn_sync_report before = *rep;
        if ((rc = pg_exec(pc, "BEGIN", "begin")))
            break;
        const char *last_sid = NULL;
        int foreign = 0;
        size_t ns = 0, last_row = 0;
        for (size_t i = 0; !rc && i < n; i++) {
            if (!last_sid || strcmp(last_sid, rows[i].v[S_SID])) {
                /* a session pulled from another owner is theirs, not ours */
                char hash[65];
                store_sid_hash(rows[i].v[S_SID], hash);
                last_sid = rows[i].v[S_SID];
                last_row = i;
                foreign = pg_local_has(h, "SELECT 1 FROM sync_foreign WHERE sid_hash = ?", hash);
                if (foreign < 0)
                    rc = cairn__sqlerr(h, SQLITE_ERROR, "sync_foreign");
                else if (!foreign)      /* before any message of it is sent */
                    rc = push_session(pc, &rows[i], rep);
            }
            if (rc || foreign)
                continue;
            rows[i].known = rows[last_row].known;
            send[ns++] = &rows[i];
            if (ns == PUSH_ROWS && !(rc = push_chunk(pc, send, ns, rep)))
                ns = 0;
        }
        if (!rc && ns)
            rc = push_chunk(pc, send, ns, rep);
        if (!rc)
            rc = pg_exec(pc, "COMMIT", "commit");
        if (!rc)
            break;
        PQclear(PQexec(pc->c, "ROLLBACK"));
        *rep = before;                       /* nothing of this attempt landed */
        if (!pg_retryable(pc) || attempt == 4)
            break;
    }
    free(send);
    return rc;
}

static int push_messages(struct pgc *pc, struct cursor *c, const char *scope,
                         const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    struct prow *rows = calloc(o->batch, sizeof *rows);
    int rc = CAIRN_OK;
    if (!rows)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (;;) {
        sqlite3_stmt *st;
        size_t n = 0;
        if ((rc = store_prepare(h, "SELECT m.id, s.ext_id, s.source, s.project, s.title, "
                                   "s.started_at, s.ended_at, s.meta, m.position, m.ext_id, "
                                   "m.role, m.speaker, m.content, m.created_at, m.hash, m.ntok, "
                                   "(SELECT count(*) FROM messages r WHERE r.session = m.session "
                                   "AND r.hash = m.hash AND r.ext_id IS NULL AND r.position < "
                                   "m.position) FROM messages m JOIN sessions s ON s.id = "
                                   "m.session "
                                   "WHERE m.id > ?1 AND (?2 IS NULL OR s.project = ?2) "
                                   "ORDER BY m.id LIMIT ?3", &st)))
            break;
        sqlite3_bind_int64(st, 1, c->push_msg);
        if (o->project)
            sqlite3_bind_text(st, 2, o->project, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (int64_t)o->batch);
        int64_t last = c->push_msg;
        int src = SQLITE_DONE;
        while (!rc && n < o->batch && (src = sqlite3_step(st)) == SQLITE_ROW) {
            rc = read_prow(st, o->private_sessions, &rows[n]);
            last = rows[n].id;
            n++;
        }
        sqlite3_finalize(st);
        if (rc)
            cairn__err(h, rc, "out of memory");
        else if (src != SQLITE_ROW && src != SQLITE_DONE)
            rc = cairn__sqlerr(h, src, "read messages to push");
        if (rc || n == 0)
            goto done;
        if ((rc = push_batch(pc, rows, n, rep)))
            goto done;
        c->push_msg = last;
        if ((rc = pg_cursor_save(h, pc->key, scope, c)))
            goto done;
        for (size_t i = 0; i < n; i++)
            prow_free(&rows[i]);
        n = 0;
        continue;
done:
        for (size_t i = 0; i < n; i++)
            prow_free(&rows[i]);
        break;
    }
    free(rows);
    return rc;
}

/* ---- pull -------------------------------------------------------------- */

/* The local rows by the hash of a key (sessions by their ids, memories by
 * their global ids), built once a pull that meets a tombstone it has not
 * seen (one pass over the rows, not one per tombstone): the index's query
 * gives the key hashed (column 0) and what the drop callback takes (1). */
struct hash_entry {
    char  hash[65];
    char *key;
};
struct hash_index {
    struct hash_entry *e;
    size_t n;
    int built;
};

static int hash_entry_cmp(const void *a, const void *b)
{
    return strcmp(((const struct hash_entry *)a)->hash, ((const struct hash_entry *)b)->hash);
}

static void hash_index_free(struct hash_index *x)
{
    for (size_t i = 0; i < x->n; i++)
        free(x->e[i].key);
    free(x->e);
}

static int hash_index_build(struct cairn *h, const char *sql, struct hash_index *x)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    int rc = store_prepare(h, sql, &st), src;
    if (rc)
        return rc;
    x->built = 1;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (x->n == cap) {
            cap = cap ? 2 * cap : 256;
            struct hash_entry *e = realloc(x->e, cap * sizeof *e);
            if (!e)
                goto nomem;
            x->e = e;
        }
        if (!(x->e[x->n].key = strdup((const char *)sqlite3_column_text(st, 1))))
            goto nomem;
        store_sid_hash((const char *)sqlite3_column_text(st, 0), x->e[x->n++].hash);
    }
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "sync");
    if (x->n)
        qsort(x->e, x->n, sizeof *x->e, hash_entry_cmp);
    return CAIRN_OK;
nomem:
    sqlite3_finalize(st);
    return cairn__err(h, CAIRN_NOMEM, "out of memory");
}

int pg_pull_tombs(struct pgc *pc, const struct pg_tombs *k, const char *from, size_t *count)
{
    struct cairn *h = pc->h;
    const char *v[1] = { from };
    struct hash_index idx = { NULL, 0, 0 };
    PGresult *r = PQexecParams(pc->c, k->pull_sql, 1, NULL, v, NULL, NULL, 0);
    int rc = CAIRN_OK;
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(pc, r, k->pull_what);
    for (int i = 0; !rc && i < PQntuples(r); i++) {
        struct hash_entry key, *hit = NULL;
        snprintf(key.hash, sizeof key.hash, "%s", PQgetvalue(r, i, 0));
        int known = pg_local_has(h, k->known_sql, key.hash);
        if (known < 0) {
            rc = cairn__sqlerr(h, SQLITE_ERROR, "sync");
            break;
        }
        if (known)
            continue;
        if (!idx.built && (rc = hash_index_build(h, k->index_sql, &idx)))
            break;
        if (idx.n)
            hit = bsearch(&key, idx.e, idx.n, sizeof *idx.e, hash_entry_cmp);
        if (hit) {
            rc = k->drop(h, hit->key);
            if (rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING)
                (*count)++;
            if (rc == CAIRN_SCRUB_PENDING)
                rc = CAIRN_OK;             /* gone for readers; cairn_scrub wipes it later */
        } else {
            /* never here: remember it, so that it is never pulled (the
             * local table's own insert: forget's or rm's) */
            rc = pg_local_exec(h, k->remember_sql, key.hash, NULL);
        }
    }
    hash_index_free(&idx);
    PQclear(r);
    return rc;
}

static int pull_forgets(struct pgc *pc, const char *from, struct cairn_sync_report *rep)
{
    return pg_pull_tombs(pc, &session_tombs, from, &rep->forgets_pulled);
}

/* Columns of the pull query. */
enum { P_OWNER, P_SID, P_MKEY, P_POS, P_EXT, P_ROLE, P_SPEAKER, P_CONTENT, P_AT, P_TX, P_SEQ,
       P_PROJECT, P_SOURCE, P_TITLE, P_START, P_END, P_META };

static int64_t opt_time(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? CAIRN_NO_TIME : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

static const char *opt_text(PGresult *r, int row, int col)
{
    return PQgetisnull(r, row, col) ? NULL : PQgetvalue(r, row, col);
}

/* The vectors of the messages of session (owner, sid) the store lacks,
 * with their model tags, as the server has them. */
static int pull_vectors(struct pgc *pc, const char *owner, const char *sid,
                        struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    const char *v[2] = { owner, sid };
    int rc;
    PGresult *r = PQexecParams(pc->c, "SELECT mkey, model, piece, dim, scale, v FROM cairn.vectors "
                                      "WHERE owner = $1 AND sid = $2", 2, NULL, v, NULL, NULL, 1);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(pc, r, "pull vectors");
    if (PQntuples(r) == 0) {
        PQclear(r);
        return CAIRN_OK;
    }
    sqlite3_stmt *st = NULL;
    if ((rc = store_begin(h)))
        goto out;
    if ((rc = store_prepare(h, "INSERT OR IGNORE INTO vectors(model, msg, piece, session, dim, "
                               "scale, v) SELECT ?1, m.id, ?2, m.session, ?3, ?4, ?5 "
                               "FROM messages m "
                               "JOIN sessions s ON s.id = m.session WHERE s.ext_id = ?6 AND "
                               "(CASE WHEN ?7 IS NULL THEN m.ext_id IS NULL AND m.hash = ?8 "
                               "ELSE m.ext_id = ?7 END) ORDER BY m.position LIMIT 1 OFFSET ?9",
                           &st)))
        goto fail;
    for (int i = 0; i < PQntuples(r); i++) {
        /* binary results: integers in network order, real as float4 */
        const char *mkey = PQgetvalue(r, i, 0);
        int mlen = PQgetlength(r, i, 0);
        uint32_t piece, dim, sc;
        memcpy(&piece, PQgetvalue(r, i, 2), 4);
        memcpy(&dim, PQgetvalue(r, i, 3), 4);
        memcpy(&sc, PQgetvalue(r, i, 4), 4);
        piece = __builtin_bswap32(piece), dim = __builtin_bswap32(dim), sc = __builtin_bswap32(sc);
        float scale;
        memcpy(&scale, &sc, 4);
        sqlite3_reset(st);
        sqlite3_bind_text(st, 1, PQgetvalue(r, i, 1), PQgetlength(r, i, 1), SQLITE_STATIC);
        sqlite3_bind_int(st, 2, (int)piece);
        sqlite3_bind_int(st, 3, (int)dim);
        sqlite3_bind_double(st, 4, scale);
        sqlite3_bind_blob(st, 5, PQgetvalue(r, i, 5), PQgetlength(r, i, 5), SQLITE_STATIC);
        sqlite3_bind_text(st, 6, sid, -1, SQLITE_STATIC);
        char *end;
        if (mlen > 2 && !strncmp(mkey, "h:", 2)) {
            sqlite3_bind_null(st, 7);
            sqlite3_bind_int64(st, 8, (int64_t)strtoull(mkey + 2, &end, 16));
            sqlite3_bind_int64(st, 9, *end == ':' ? strtoll(end + 1, NULL, 10) : 0);
        } else {
            sqlite3_bind_text(st, 7, mkey, mlen, SQLITE_STATIC);
            sqlite3_bind_null(st, 8);
            sqlite3_bind_int64(st, 9, 0);
        }
        int src = sqlite3_step(st);
        if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "pull vectors");
            goto fail;
        }
        rep->vectors_pulled += (size_t)sqlite3_changes(h->db);
    }
    sqlite3_finalize(st);
    PQclear(r);
    return store_commit(h);
fail:
    sqlite3_finalize(st);
    store_rollback(h);
out:
    PQclear(r);
    return rc;
}

/* Adds rows [a, b) of r, one session's, through cairn_add_session. */
static int pull_session(struct pgc *pc, PGresult *r, int a, int b, struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    const char *owner = PQgetvalue(r, a, P_OWNER), *sid = PQgetvalue(r, a, P_SID);
    char hash[65];
    int rc, known;
    store_sid_hash(sid, hash);
    if ((known = pg_local_has(h, "SELECT 1 FROM forgotten WHERE sid_hash = ?", hash)) != 0)
        return known < 0 ? cairn__sqlerr(h, SQLITE_ERROR, "forgotten") : CAIRN_OK;
    if (strcmp(owner, pc->user) &&
        (rc = pg_local_exec(h, "INSERT OR IGNORE INTO sync_foreign(sid_hash, owner) VALUES (?, ?)",
                         hash, owner)))
        return rc;
    struct cairn_message *m = calloc((size_t)(b - a), sizeof *m);
    if (!m)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (int i = a; i < b; i++) {
        struct cairn_message *x = &m[i - a];
        x->id = opt_text(r, i, P_EXT);
        x->role = PQgetvalue(r, i, P_ROLE);
        x->speaker = opt_text(r, i, P_SPEAKER);
        x->content = PQgetvalue(r, i, P_CONTENT);
        x->content_len = (size_t)PQgetlength(r, i, P_CONTENT);
        x->at = opt_time(r, i, P_AT);
    }
    struct cairn_session s = {
        .id = sid, .source = PQgetvalue(r, a, P_SOURCE), .project = PQgetvalue(r, a, P_PROJECT),
        .title = PQgetvalue(r, a, P_TITLE), .started_at = opt_time(r, a, P_START),
        .ended_at = opt_time(r, a, P_END), .meta = opt_text(r, a, P_META),
        .messages = m, .n_messages = (size_t)(b - a),
    };
    struct cairn_add_stats st = { 0 };
    rc = cairn_add_session(h, &s, &st);
    free(m);
    if (rc)
        return rc;
    rep->messages_pulled += st.messages_added;
    rep->sessions_pulled += st.messages_added > 0;
    return pull_vectors(pc, owner, sid, rep);
}

static int pull_messages(struct pgc *pc, struct cursor *c, const char *scope, const char *xmin,
                         const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    char ltx[32] = "0", lseq[24] = "0", lim[24];
    int rc = CAIRN_OK;
    snprintf(lim, sizeof lim, "%zu", o->batch);
    for (;;) {
        /* a batch is also capped in bytes (its first message always comes):
         * what others share may be large, and a batch is held in memory */
        const char *v[6] = { c->pull_tx, ltx, lseq, o->project, lim, PULL_BATCH_BYTES };
        /* a batch in the server's write order, then grouped by session
         * (sessions in the order the server got them, so a new store lists
         * them as the pushing one does), each in its own order */
        PGresult *r = PQexecParams(pc->c,
            "SELECT * FROM (SELECT q.*, sum(len) OVER (ORDER BY xtx, seq) - len AS before FROM "
            "(SELECT m.owner, m.sid, m.mkey, m.position, m.ext_id, m.role, m.speaker, m.content, "
            "m.created_at, m.tx::text, m.seq, s.project, s.source, s.title, s.started_at, "
            "s.ended_at, s.meta, m.tx AS xtx, octet_length(m.content) AS len FROM cairn.messages m "
            "JOIN cairn.sessions s ON s.owner = m.owner AND s.sid = m.sid WHERE m.tx >= $1::xid8 "
            "AND (m.tx, m.seq) > ($2::xid8, $3::bigint) AND ($4::text IS NULL OR s.project = $4) "
            "ORDER BY m.tx, m.seq LIMIT $5::bigint) q) r WHERE before < $6::bigint "
            "ORDER BY min(seq) OVER (PARTITION BY owner, sid), owner, sid, position",
            6, NULL, v, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            return pg_fail(pc, r, "pull messages");
        int n = PQntuples(r);
        if (n == 0) {
            PQclear(r);
            break;
        }
        /* the batch's last row in write order: where the next one starts */
        uint64_t btx = 0, bseq = 0;
        for (int i = 0; i < n; i++) {
            uint64_t t = strtoull(PQgetvalue(r, i, P_TX), NULL, 10);
            uint64_t q = strtoull(PQgetvalue(r, i, P_SEQ), NULL, 10);
            if (t > btx || (t == btx && q > bseq))
                btx = t, bseq = q;
        }
        for (int a = 0; !rc && a < n;) {
            int b = a + 1;
            while (b < n && !strcmp(PQgetvalue(r, b, P_OWNER), PQgetvalue(r, a, P_OWNER)) &&
                   !strcmp(PQgetvalue(r, b, P_SID), PQgetvalue(r, a, P_SID)))
                b++;
            rc = pull_session(pc, r, a, b, rep);
            a = b;
        }
        PQclear(r);
        if (rc)
            return rc;
        snprintf(ltx, sizeof ltx, "%" PRIu64, btx);
        snprintf(lseq, sizeof lseq, "%" PRIu64, bseq);
        /* resumable: rows below the batch's last transaction are all read
         * (and the start's xmin bounds it: later ones may still commit) */
        uint64_t keep = btx < strtoull(xmin, NULL, 10) ? btx : strtoull(xmin, NULL, 10);
        if (keep > strtoull(c->pull_tx, NULL, 10)) {
            snprintf(c->pull_tx, sizeof c->pull_tx, "%" PRIu64, keep);
            if ((rc = pg_cursor_save(pc->h, pc->key, scope, c)))
                return rc;
        }
    }
    (void)scope;
    return CAIRN_OK;
}

static int pull(struct pgc *pc, struct cursor *c, const char *scope,
                const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    char xmin[32];
    PGresult *r = PQexec(pc->c, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return pg_fail(pc, r, "pull");
    snprintf(xmin, sizeof xmin, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    int rc = pull_forgets(pc, c->pull_tx, rep);
    if (!rc)
        rc = pull_messages(pc, c, scope, xmin, o, rep);
    if (rc)
        return rc;
    snprintf(c->pull_tx, sizeof c->pull_tx, "%s", xmin);
    return pg_cursor_save(pc->h, pc->key, scope, c);
}

int cairn_sync(struct cairn *h, const char *server, const struct cairn_sync_opts *opts,
               struct cairn_sync_report *rep)
{
    struct cairn_sync_opts o = CAIRN_SYNC_OPTS_INIT;
    struct cairn_sync_report dummy;
    struct pgc pc;
    struct cursor c;
    int rc;
    if (!h)
        return CAIRN_INVALID;
    if ((rc = cairn__opts(h, &o, sizeof o, opts, sizeof o, "cairn_sync_opts")))
        return rc;
    if (!rep)
        rep = &dummy, memset(&dummy, 0, sizeof dummy);
    if (h->pg)
        return cairn__err(h, CAIRN_INVALID, "sync needs a local store (--db FILE) to sync "
                          "with the server; this handle reads %s itself", store_server_name(h));
    if (h->readonly)
        return cairn__err(h, CAIRN_INVALID, "sync needs a writable store");
    if (!o.push && !o.pull)
        o.push = o.pull = 1;
    if (o.batch == 0)
        o.batch = SYNC_BATCH;
    if (o.batch > 100000)
        return cairn__err(h, CAIRN_INVALID, "sync batch %zu is over 100000", o.batch);
    const char *scope = o.project ? o.project : "";
    if ((rc = pg_open(h, server, 1, &pc)))
        return rc;
    if ((rc = cursor_load(h, pc.key, scope, &c)))
        goto out;
    if (o.push && !(rc = push_forgets(&pc, &c, scope, &o, rep)) &&
        !(rc = push_messages(&pc, &c, scope, &o, rep)))
        rc = pg_msync_push(&pc, &c, scope, &o, rep);
    if (!rc && o.pull && !(rc = pull(&pc, &c, scope, &o, rep)))
        rc = pg_msync_pull(&pc, &c, scope, &o, rep);
out:
    pg_close(&pc);
    return rc;
}
