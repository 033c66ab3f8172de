/*
 * pg_msync.c: explicit memories and corrections through cairn_sync
 * (docs/POSTGRES.md, "Memories").
 *
 * A memory is keyed everywhere by its global id (memory_sync.gid, 16
 * random bytes as hex, made where it was created); its local id is this
 * store's own number and never leaves. A memory changes in place (edit,
 * undo, supersede, a correction's fields), so unlike messages it has
 * versions: (updated_at, rev, vid), compared in that order, vid as bytes
 * (memory_version_cmp). The server keeps the greatest version it was sent
 * (the upsert's WHERE compares the same row value), a pull applies a
 * server row only when it is greater than the local one, and the local
 * triggers (schema version 20) bump rev and set dirty on every change of
 * what is synced, so every machine ends on the same version whatever the
 * order of their syncs.
 *
 * Push: the memories' tombstones first (the sha256 of a removed memory's
 * gid; the server then refuses that gid from any machine that has not
 * heard), then the dirty memories of this store's user, a batch per
 * server transaction; a memory is marked clean after the commit only if
 * it is still the version sent (a change meanwhile keeps it dirty). A
 * batch sent twice changes nothing: the server's version is not smaller.
 *
 * Pull: as messages, by the server transaction that wrote a row (xid8),
 * from a cursor kept per server and scope (sync_state.pull_mtx), moved
 * after each batch and at the end to the oldest transaction running when
 * the pull began. A tombstone removes the local copy through
 * cairn_memory_remove (store_scrub: no byte left). Tombstones of both
 * kinds go through pg_push_tombs and pg_pull_tombs (pg_sync.c).
 *
 * A server store (pg_read.c) loads every memory the role sees at open
 * through the same row code (pg_msync_load).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/memory.h"
#include "store/pg.h"
#include "util/buf.h"

#define MEM_PUSH_ROWS 250   /* 19 parameters each: far below PostgreSQL's 65535 */
/* The most characters a pull reads of a memory's text and of its other
 * fields: one past 4x the limits memory_clean enforces on bytes (so an
 * oversized value is still refused, not cut and taken). */
#define TEXT_CAP "65537"
#define FIELD_CAP "4097"

int memory_version_cmp(int64_t at_a, int64_t rev_a, const char *vid_a, int64_t at_b,
                       int64_t rev_b, const char *vid_b)
{
    if (at_a != at_b)
        return at_a < at_b ? -1 : 1;
    if (rev_a != rev_b)
        return rev_a < rev_b ? -1 : 1;
    int c = strcmp(vid_a ? vid_a : "", vid_b ? vid_b : "");
    return (c > 0) - (c < 0);
}

/* ---- push -------------------------------------------------------------- */

static int drop_memory(struct cairn *h, const char *id)
{
    /* rm's path: the tombstone recorded, every byte wiped; not found:
     * removed here meanwhile */
    int rc = cairn_memory_remove(h, strtoll(id, NULL, 10));
    return rc == CAIRN_NOTFOUND ? CAIRN_OK : rc;
}

/* A removed memory: the sha256 of its gid, with the memory's project on
 * the server so that those it was shared with remove it too. */
static const struct pg_tombs memory_tombs = {
    .local_sql = "SELECT id, gid_hash FROM memories_forgotten WHERE id > ? ORDER BY id LIMIT ?",
    .server_sql = "WITH t AS (INSERT INTO cairn.memory_tombstones(gid_hash, project) VALUES ($1, "
                  "coalesce((SELECT project FROM cairn.memories WHERE owner = current_user AND "
                  "gid_hash = $1), '')) ON CONFLICT DO NOTHING) DELETE FROM cairn.memories "
                  "WHERE owner = current_user AND gid_hash = $1",
    .push_what = "push a memory's removal",
    .pull_what = "pull memory removals",
    .pull_sql = "SELECT gid_hash FROM cairn.memory_tombstones WHERE tx >= $1::xid8 "
                "ORDER BY tx, seq",
    .known_sql = "SELECT 1 FROM memories_forgotten WHERE gid_hash = ?",
    .index_sql = "SELECT gid, memory FROM memory_sync",
    .remember_sql = "INSERT OR IGNORE INTO memories_forgotten(gid_hash, at) VALUES "
                    "(?, CAST(strftime('%s') AS INTEGER))",
    .drop = drop_memory,
};

/* ---- the local side ---------------------------------------------------- */

int memory_sync_forget(struct cairn *h, int64_t id)
{
    sqlite3_stmt *st;
    char hash[65] = "";
    int rc = store_prepare(h, "SELECT gid FROM memory_sync WHERE memory = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        store_sid_hash((const char *)sqlite3_column_text(st, 0), hash);
    sqlite3_finalize(st);
    if (src != SQLITE_ROW && src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "memory_sync");
    return *hash ? pg_local_exec(h, memory_tombs.remember_sql, hash, NULL) : CAIRN_OK;
}

/* The server statement's parameters of one memory, in this order. */
enum { V_GID, V_HASH, V_PROJECT, V_PRIVATE, V_TYPE, V_TEXT, V_TAGS, V_CREATED, V_UPDATED,
       V_EXPIRES, V_SESSION, V_MESSAGE, V_SUPER, V_REV, V_VID, V_SEV, V_KW, V_PATHS, V_CMDS,
       MEM_PARAMS };

struct mrow {
    int64_t id;
    char   *v[MEM_PARAMS];
    char    hash[65];
};

static void mrows_free(struct mrow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int k = 0; k < MEM_PARAMS; k++)
            if (k != V_HASH && k != V_PRIVATE)
                free(rows[i].v[k]);
}

static int mrow_cmp(const void *a, const void *b)
{
    return strcmp(((const struct mrow *)a)->v[V_GID], ((const struct mrow *)b)->v[V_GID]);
}

/* The columns of the local read, in V_ order but for V_HASH and V_PRIVATE. */
#define PUSH_SELECT \
    "SELECT m.id, s.gid, m.scope, m.type, m.text, m.tags, m.created_at, m.updated_at, " \
    "m.expires_at, m.session, m.message, (SELECT x.gid FROM memory_sync x WHERE x.memory = " \
    "m.superseded_by), s.rev, s.vid, c.severity, c.keywords, c.paths, c.commands " \
    "FROM memory_sync s JOIN memories m ON m.id = s.memory " \
    "LEFT JOIN corrections c ON c.memory = m.id " \
    "WHERE s.dirty AND s.owner = '' AND s.memory > ?1 AND (?2 IS NULL OR m.scope = ?2) " \
    "ORDER BY s.memory LIMIT ?3"

static int read_rows(struct cairn *h, int64_t after, const char *project, size_t batch,
                     int private_, struct mrow *rows, size_t *n)
{
    static const int col[MEM_PARAMS] = {
        [V_GID] = 1, [V_PROJECT] = 2, [V_TYPE] = 3, [V_TEXT] = 4, [V_TAGS] = 5,
        [V_CREATED] = 6, [V_UPDATED] = 7, [V_EXPIRES] = 8, [V_SESSION] = 9, [V_MESSAGE] = 10,
        [V_SUPER] = 11, [V_REV] = 12, [V_VID] = 13, [V_SEV] = 14, [V_KW] = 15, [V_PATHS] = 16,
        [V_CMDS] = 17,
    };
    sqlite3_stmt *st;
    int rc = store_prepare(h, PUSH_SELECT, &st), src;
    *n = 0;
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, after);
    if (project)
        sqlite3_bind_text(st, 2, project, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (int64_t)batch);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        struct mrow *r = &rows[(*n)++];
        memset(r, 0, sizeof *r);
        r->id = sqlite3_column_int64(st, 0);
        for (int k = 0; k < MEM_PARAMS; k++) {
            if (k == V_HASH || k == V_PRIVATE || sqlite3_column_type(st, col[k]) == SQLITE_NULL)
                continue;
            if (!(r->v[k] = strdup((const char *)sqlite3_column_text(st, col[k])))) {
                sqlite3_finalize(st);
                return cairn__err(h, CAIRN_NOMEM, "out of memory");
            }
        }
        store_sid_hash(r->v[V_GID], r->hash);     /* v[V_HASH] when sent: rows move */
        r->v[V_PRIVATE] = private_ ? "t" : "f";
    }
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "memories");
}

static int send_rows(struct pgc *pc, struct mrow *rows, size_t n, size_t *changed)
{
    struct cairn *h = pc->h;
    const char **v = calloc(n * MEM_PARAMS, sizeof *v);
    struct buf sql;
    int rc = CAIRN_OK;
    buf_init(&sql, 0);
    if (!v)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    buf_adds(&sql, "INSERT INTO cairn.memories AS m(gid, gid_hash, project, private, type, text, "
                   "tags, created_at, updated_at, expires_at, session, message, superseded_by, "
                   "rev, vid, severity, keywords, paths, commands) SELECT gid, gid_hash, project, "
                   "private::boolean, type, text, tags, created_at::bigint, updated_at::bigint, "
                   "expires_at::bigint, session, message, superseded_by, rev::bigint, vid, "
                   "severity::integer, keywords, paths, commands FROM (VALUES ");
    for (size_t i = 0; i < n; i++) {
        memcpy(v + i * MEM_PARAMS, rows[i].v, sizeof rows[i].v);
        v[i * MEM_PARAMS + V_HASH] = rows[i].hash;
    }
    pg_values_sql(&sql, n, MEM_PARAMS);
    /* a removed memory is never taken back; an older version changes nothing;
     * a memory may become private, never public again */
    buf_adds(&sql, ") v(gid, gid_hash, project, private, type, text, tags, created_at, "
                   "updated_at, expires_at, session, message, superseded_by, rev, vid, severity, "
                   "keywords, paths, commands) WHERE NOT EXISTS (SELECT 1 FROM "
                   "cairn.memory_tombstones t WHERE t.owner = current_user AND t.gid_hash = "
                   "v.gid_hash) ON CONFLICT (owner, gid) DO UPDATE SET project = EXCLUDED.project, "
                   "private = m.private OR EXCLUDED.private, type = EXCLUDED.type, text = "
                   "EXCLUDED.text, tags = EXCLUDED.tags, created_at = EXCLUDED.created_at, "
                   "updated_at = EXCLUDED.updated_at, expires_at = EXCLUDED.expires_at, session = "
                   "EXCLUDED.session, message = EXCLUDED.message, superseded_by = "
                   "EXCLUDED.superseded_by, rev = EXCLUDED.rev, vid = EXCLUDED.vid, severity = "
                   "EXCLUDED.severity, keywords = EXCLUDED.keywords, paths = EXCLUDED.paths, "
                   "commands = EXCLUDED.commands, tx = pg_current_xact_id(), seq = DEFAULT "
                   "WHERE (EXCLUDED.updated_at, EXCLUDED.rev, EXCLUDED.vid COLLATE \"C\") > "
                   "(m.updated_at, m.rev, m.vid COLLATE \"C\") RETURNING gid");
    if (sql.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    PGresult *r = PQexecParams(pc->c, sql.p, (int)(n * MEM_PARAMS), NULL, v, NULL, NULL, 0);
    if (PQresultStatus(r) != PGRES_TUPLES_OK) {
        rc = pg_fail(pc, r, "push memories");
        goto out;
    }
    *changed = (size_t)PQntuples(r);
    PQclear(r);
out:
    free(v);
    buf_release(&sql);
    return rc;
}

/* Clean again only what is still the version sent. */
static int mark_clean(struct cairn *h, const struct mrow *rows, size_t n)
{
    sqlite3_stmt *st = NULL;
    int rc;
    if ((rc = store_begin(h)))
        return rc;
    if ((rc = store_prepare(h, "UPDATE memory_sync SET dirty = 0 WHERE memory = ? AND vid = ?",
                            &st)))
        goto fail;
    for (size_t i = 0; i < n; i++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, rows[i].id);
        sqlite3_bind_text(st, 2, rows[i].v[V_VID], -1, SQLITE_STATIC);
        int src = sqlite3_step(st);
        if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "memory_sync");
            goto fail;
        }
    }
    sqlite3_finalize(st);
    return store_commit(h);
fail:
    sqlite3_finalize(st);
    store_rollback(h);
    return rc;
}

static int push_memories(struct pgc *pc, const struct cairn_sync_opts *o,
                         struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    size_t batch = o->batch < MEM_PUSH_ROWS ? o->batch : MEM_PUSH_ROWS;
    struct mrow *rows = calloc(batch, sizeof *rows);
    int64_t after = 0;
    int rc = CAIRN_OK;
    if (!rows)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (;;) {
        size_t n = 0, changed = 0;
        if ((rc = read_rows(h, after, o->project, batch, o->private_sessions, rows, &n)) || !n) {
            mrows_free(rows, n);               /* what a failed read had copied */
            break;
        }
        after = rows[n - 1].id;
        /* in gid order: two machines sending the same memories lock their
         * rows in one order, so they do not deadlock each other */
        qsort(rows, n, sizeof *rows, mrow_cmp);
        for (int attempt = 0;; attempt++) {
            if (!(rc = pg_exec(pc, "BEGIN", "begin")) &&
                !(rc = send_rows(pc, rows, n, &changed)) &&
                !(rc = pg_exec(pc, "COMMIT", "commit")))
                break;
            PQclear(PQexec(pc->c, "ROLLBACK"));
            if (!pg_retryable(pc) || attempt == 4)
                break;
        }
        if (!rc) {
            rep->memories_pushed += changed;
            rep->memories_present += n - changed;
            rc = mark_clean(h, rows, n);
        }
        mrows_free(rows, n);
        if (rc)
            break;
    }
    free(rows);
    return rc;
}

int pg_msync_push(struct pgc *pc, struct cursor *c, const char *scope,
                  const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    int rc = pg_push_tombs(pc, &memory_tombs, c, &c->push_mtomb, scope, o->batch,
                           &rep->memory_forgets_pushed);
    return rc ? rc : push_memories(pc, o, rep);
}

/* ---- pull -------------------------------------------------------------- */

/* Columns of the pull query. */
enum { Q_OWNER, Q_GID, Q_PROJECT, Q_TYPE, Q_TEXT, Q_TAGS, Q_CREATED, Q_UPDATED, Q_EXPIRES,
       Q_SESSION, Q_MESSAGE, Q_SUPER, Q_REV, Q_VID, Q_SEV, Q_KW, Q_PATHS, Q_CMDS, Q_TX, Q_SEQ };

static const char *qval(PGresult *r, int i, int c)
{
    return PQgetisnull(r, i, c) ? NULL : PQgetvalue(r, i, c);
}

static int64_t qint(PGresult *r, int i, int c)
{
    return strtoll(PQgetvalue(r, i, c), NULL, 10);
}

/* The local memory of gid: its id and version; 0: none. */
static int local_version(struct cairn *h, const char *gid, int64_t *id, int64_t *at,
                         int64_t *rev, char vid[33])
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT s.memory, m.updated_at, s.rev, s.vid FROM memory_sync s "
                              "JOIN memories m ON m.id = s.memory WHERE s.gid = ?", &st);
    *id = 0;
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, gid, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *id = sqlite3_column_int64(st, 0);
        *at = sqlite3_column_int64(st, 1);
        *rev = sqlite3_column_int64(st, 2);
        snprintf(vid, 33, "%s", (const char *)sqlite3_column_text(st, 3));
    }
    sqlite3_finalize(st);
    return src == SQLITE_ROW || src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "memories");
}

static int set_gid(struct cairn *h, int64_t id, const char *gid)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE memory_sync SET gid = ?2 WHERE memory = ?1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, gid, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "memory_sync");
}

/* A correction's fields as the server has them, cleaned as every write is
 * (c->severity -1: the row has none). */
static int correction_fill(struct cairn *h, PGresult *r, int i, struct correction_row *c)
{
    int rc;
    memset(c, 0, sizeof *c);
    c->severity = -1;
    if (!qval(r, i, Q_SEV))
        return CAIRN_OK;
    int sev = (int)qint(r, i, Q_SEV);
    if (sev < 0 || sev > 2)
        return cairn__err(h, CAIRN_INVALID, "pulled correction: severity %d", sev);
    c->severity = sev;
    if (!(rc = memory_clean(h, "keywords", qval(r, i, Q_KW), CAIRN_MEMORY_TEXT_MAX,
                            &c->keywords)) &&
        !(rc = memory_clean(h, "paths", qval(r, i, Q_PATHS), CAIRN_MEMORY_TEXT_MAX, &c->paths)))
        rc = memory_clean(h, "commands", qval(r, i, Q_CMDS), CAIRN_MEMORY_TEXT_MAX, &c->commands);
    return rc;
}

/* Pass 1 of a server row: its fields into a new or older local memory.
 * *id: the local memory, 0 when the row was not applied. A row that is no
 * valid memory (what another role may have written to the server in SQL:
 * a malformed id, an unknown type, an empty or oversized text, a bad
 * severity) is left out and counted in *refused, never fails the pull. */
static int apply_fields(struct pgc *pc, PGresult *r, int i, int64_t now, int64_t *id,
                        size_t *refused)
{
    struct cairn *h = pc->h;
    struct memory_row m = { 0 };
    struct correction_row c = { 0 };
    const char *gid = PQgetvalue(r, i, Q_GID);
    char hash[65], lvid[33] = "";
    int64_t lid = 0, lat = 0, lrev = 0;
    int rc, known;
    *id = 0;
    if (strlen(gid) != 32 || strspn(gid, "0123456789abcdef") != 32 ||
        PQgetlength(r, i, Q_VID) > 32) {
        (*refused)++;
        return CAIRN_OK;
    }
    store_sid_hash(gid, hash);
    if ((known = pg_local_has(h, memory_tombs.known_sql, hash)) != 0)
        return known < 0 ? cairn__sqlerr(h, SQLITE_ERROR, "memories_forgotten") : CAIRN_OK;
    if (qval(r, i, Q_EXPIRES) && qint(r, i, Q_EXPIRES) <= now)
        return CAIRN_OK;                        /* expired: each store removes its own */
    if ((rc = local_version(h, gid, &lid, &lat, &lrev, lvid)))
        return rc;
    if (lid && memory_version_cmp(qint(r, i, Q_UPDATED), qint(r, i, Q_REV),
                                  PQgetvalue(r, i, Q_VID), lat, lrev, lvid) <= 0)
        return CAIRN_OK;                        /* this store's is as new or newer */
    if ((rc = memory_row_fill(h, &m, PQgetvalue(r, i, Q_TYPE), PQgetvalue(r, i, Q_TEXT),
                              PQgetvalue(r, i, Q_PROJECT), PQgetvalue(r, i, Q_TAGS),
                              PQgetvalue(r, i, Q_SESSION), PQgetvalue(r, i, Q_MESSAGE))) ||
        (rc = correction_fill(h, r, i, &c))) {
        if (rc == CAIRN_INVALID)
            (*refused)++, rc = CAIRN_OK;
        goto out;
    }
    m.created = qint(r, i, Q_CREATED);
    m.updated = qint(r, i, Q_UPDATED);
    m.expires = qval(r, i, Q_EXPIRES) ? qint(r, i, Q_EXPIRES) : CAIRN_NO_TIME;
    if (lid)
        rc = memory_update_row(h, lid, &m);
    else if (!(rc = memory_insert(h, &m, &lid)))
        rc = set_gid(h, lid, gid);     /* now: pass 2 finds what replaced a memory by it */
    if (!rc && c.severity >= 0)
        rc = correction_row_store(h, lid, &c);
    if (!rc)
        *id = lid;
out:
    correction_row_release(&c);
    memory_row_release(&m);
    return rc;
}

/* Pass 2: what replaced it (a memory of the same batch may have), then the
 * server's version over what the triggers made of these writes. */
static int apply_version(struct pgc *pc, PGresult *r, int i, int64_t id)
{
    struct cairn *h = pc->h;
    const char *owner = PQgetvalue(r, i, Q_OWNER), *super = qval(r, i, Q_SUPER);
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE memories SET superseded_by = (SELECT memory FROM "
                              "memory_sync WHERE gid = ?2) WHERE id = ?1 AND superseded_by IS NOT "
                              "(SELECT memory FROM memory_sync WHERE gid = ?2)", &st), src;
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    if (super)
        sqlite3_bind_text(st, 2, super, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "superseding a memory");
    if (super) {
        if ((rc = store_prepare(h, "INSERT OR IGNORE INTO memory_links(src, dst, kind) SELECT "
                                   "memory, ?1, 'supersedes' FROM memory_sync WHERE gid = ?2",
                                &st)))
            return rc;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_text(st, 2, super, -1, SQLITE_STATIC);
        src = sqlite3_step(st);
        sqlite3_finalize(st);
        if (src != SQLITE_DONE)
            return cairn__sqlerr(h, src, "memory link");
    }
    if ((rc = store_prepare(h, "UPDATE memory_sync SET vid = ?3, rev = ?4, dirty = 0, "
                               "owner = ?5 WHERE memory = ?1", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 3, PQgetvalue(r, i, Q_VID), -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, qint(r, i, Q_REV));
    /* another owner's (a shared project): never pushed as this user's */
    sqlite3_bind_text(st, 5, strcmp(owner, pc->user) ? owner : "", -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "memory_sync");
}

/* A server store's in-memory copy is written once, at open (pg_msync_load),
 * where store_begin, which refuses every write on a server handle, does
 * not serve: a plain transaction on the copy. */
static int tx_begin(struct cairn *h)
{
    if (!h->pg)
        return store_begin(h);
    int src = sqlite3_exec(h->db, "BEGIN", NULL, NULL, NULL);
    return src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, "begin");
}

static int tx_end(struct cairn *h, int rc)
{
    if (!h->pg) {
        if (rc)
            store_rollback(h);
        return rc ? rc : store_commit(h);
    }
    int src = sqlite3_exec(h->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
    return rc ? rc : src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, "commit");
}

static int apply_batch(struct pgc *pc, PGresult *r, struct cairn_sync_report *rep)
{
    struct cairn *h = pc->h;
    int n = PQntuples(r), rc;
    int64_t *ids = calloc((size_t)n, sizeof *ids), now = (int64_t)time(NULL);
    size_t applied = 0;
    if (!ids)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if ((rc = tx_begin(h)))
        goto out;
    for (int i = 0; !rc && i < n; i++)
        rc = apply_fields(pc, r, i, now, &ids[i], &rep->memories_refused);
    for (int i = 0; !rc && i < n; i++)
        if (ids[i] && !(rc = apply_version(pc, r, i, ids[i])))
            applied++;
    if (!(rc = tx_end(h, rc)))
        rep->memories_pulled += applied;
out:
    free(ids);
    return rc;
}

static int pull_memories(struct pgc *pc, struct cursor *c, const char *scope, const char *xmin,
                         const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    char ltx[32] = "0", lseq[24] = "0", lim[24];
    int rc = CAIRN_OK;
    snprintf(lim, sizeof lim, "%zu", o->batch);
    for (;;) {
        const char *v[5] = { c->pull_mtx, ltx, lseq, o->project, lim };
        PGresult *r = PQexecParams(pc->c,
            /* what the client keeps is capped (memory_clean refuses past 4x its
             * limits): so is what it reads, whatever a row holds */
            "SELECT owner, left(gid, 33), left(project, " FIELD_CAP "), left(type, 16), "
            "left(text, " TEXT_CAP "), left(tags, " FIELD_CAP "), created_at, updated_at, "
            "expires_at, left(session, " FIELD_CAP "), left(message, " FIELD_CAP "), "
            "left(superseded_by, 33), rev, left(vid, 33), severity, left(keywords, " TEXT_CAP
            "), left(paths, " TEXT_CAP "), left(commands, " TEXT_CAP "), "
            "tx::text, seq FROM cairn.memories WHERE tx >= $1::xid8 AND (tx, seq) > "
            "($2::xid8, $3::bigint) AND ($4::text IS NULL OR project = $4) ORDER BY tx, seq "
            "LIMIT $5::bigint", 5, NULL, v, NULL, NULL, 0);
        if (PQresultStatus(r) != PGRES_TUPLES_OK)
            return pg_fail(pc, r, "pull memories");
        int n = PQntuples(r);
        if (n == 0) {
            PQclear(r);
            return CAIRN_OK;
        }
        snprintf(ltx, sizeof ltx, "%s", PQgetvalue(r, n - 1, Q_TX));
        snprintf(lseq, sizeof lseq, "%s", PQgetvalue(r, n - 1, Q_SEQ));
        rc = apply_batch(pc, r, rep);
        PQclear(r);
        if (rc)
            return rc;
        /* resumable: what is below the batch's last transaction is read */
        uint64_t btx = strtoull(ltx, NULL, 10), x = strtoull(xmin, NULL, 10);
        uint64_t keep = btx < x ? btx : x;
        if (keep > strtoull(c->pull_mtx, NULL, 10)) {
            snprintf(c->pull_mtx, sizeof c->pull_mtx, "%" PRIu64, keep);
            if ((rc = pg_cursor_save(pc->h, pc->key, scope, c)))
                return rc;
        }
    }
}

int pg_msync_pull(struct pgc *pc, struct cursor *c, const char *scope,
                  const struct cairn_sync_opts *o, struct cairn_sync_report *rep)
{
    char xmin[32];
    int rc;
    PGresult *r = PQexec(pc->c, "SELECT pg_snapshot_xmin(pg_current_snapshot())::text");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1)
        return pg_fail(pc, r, "pull memories");
    snprintf(xmin, sizeof xmin, "%s", PQgetvalue(r, 0, 0));
    PQclear(r);
    if ((rc = pg_pull_tombs(pc, &memory_tombs, c->pull_mtx, &rep->memory_forgets_pulled)) ||
        (rc = pull_memories(pc, c, scope, xmin, o, rep)))
        return rc;
    snprintf(c->pull_mtx, sizeof c->pull_mtx, "%s", xmin);
    return pg_cursor_save(pc->h, pc->key, scope, c);
}

int pg_msync_load(struct pgc *pc)
{
    struct cursor c = { .pull_tx = "0", .pull_mtx = "0" };
    struct cairn_sync_opts o = CAIRN_SYNC_OPTS_INIT;
    struct cairn_sync_report rep = { 0 };
    o.batch = 1000;
    /* xmin "0": every row read, no cursor kept (the copy lives with the handle) */
    return pull_memories(pc, &c, "", "0", &o, &rep);
}
