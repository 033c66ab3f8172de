/*
 * read.c: reading sessions and messages back, forgetting, statistics and
 * re-masking a store written before masking was on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"
#include "mask/redact.h"
#include "store/pg_read.h"
#include "util/buf.h"

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

static int64_t col_time(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? CAIRN_NO_TIME
                                                     : sqlite3_column_int64(st, i);
}

/* The message count comes from session_stats (maintained by every write
 * path, schema v6), not a count over messages: a listing costs one row per
 * session whatever the sessions hold. */
#define SESSION_COLS "s.ext_id, s.source, s.project, s.title, s.meta, s.started_at, " \
                     "s.ended_at, coalesce((SELECT n FROM session_stats t " \
                     "WHERE t.session = s.id), 0)"

static void fill_session(sqlite3_stmt *st, struct cairn_session_info *si)
{
    si->id = col_text(st, 0);
    si->source = col_text(st, 1);
    si->project = col_text(st, 2);
    si->title = col_text(st, 3);
    si->meta = sqlite3_column_type(st, 4) == SQLITE_NULL ? NULL : col_text(st, 4);
    si->started_at = col_time(st, 5);
    si->ended_at = col_time(st, 6);
    si->n_messages = (size_t)sqlite3_column_int64(st, 7);
}

/* Runs a prepared statement, handing each row to fn. */
static int walk(struct cairn *h, sqlite3_stmt *st, int (*row)(void *, sqlite3_stmt *),
                void *arg, int *nrows)
{
    int src, rc = CAIRN_OK;
    *nrows = 0;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        (*nrows)++;
        int r = row(arg, st);
        if (r) {
            rc = r > 0 ? r : CAIRN_ERROR;
            break;
        }
    }
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "read");
    sqlite3_finalize(st);
    return rc;
}

struct sess_walk { cairn_session_cb cb; void *arg; };

static int session_row(void *arg, sqlite3_stmt *st)
{
    struct sess_walk *w = arg;
    struct cairn_session_info si;
    fill_session(st, &si);
    return w->cb(w->arg, &si);
}

int cairn_sessions(struct cairn *h, const char *project, int oldest_first, size_t limit,
                   cairn_session_cb cb, void *arg)
{
    char sql[512];
    sqlite3_stmt *st;
    struct sess_walk w = { cb, arg };
    int n, rc;
    /* ORDER BY the column itself (NULL sorts lowest, as 0 did) so that
     * sessions_started or sessions_project gives the order: the newest 50
     * of 50,000 sessions without sorting them all */
    snprintf(sql, sizeof sql, "SELECT " SESSION_COLS " FROM sessions s %s ORDER BY "
             "s.started_at %s, s.id %s LIMIT ?",
             project ? "WHERE s.project = ?1" : "", oldest_first ? "ASC" : "DESC",
             oldest_first ? "ASC" : "DESC");
    if ((rc = store_prepare(h, sql, &st)))
        return rc;
    if (project)
        sqlite3_bind_text(st, 1, project, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, project ? 2 : 1, limit ? (int64_t)limit : -1);
    return walk(h, st, session_row, &w, &n);
}

struct vec_walk { cairn_vector_model_cb cb; void *arg; };

static int vector_model_row(void *arg, sqlite3_stmt *st)
{
    struct vec_walk *w = arg;
    return w->cb(w->arg, col_text(st, 0), sqlite3_column_int64(st, 1));
}

int cairn_vector_models(struct cairn *h, cairn_vector_model_cb cb, void *arg)
{
    sqlite3_stmt *st;
    struct vec_walk w = { cb, arg };
    int n, rc;
    /* The primary key (model, msg, piece) gives each model's messages in
     * order: a distinct count without a sort. */
    if ((rc = store_prepare(h, "SELECT model, count(DISTINCT msg) FROM vectors GROUP BY model "
                            "ORDER BY model", &st)))
        return rc;
    return walk(h, st, vector_model_row, &w, &n);
}

int cairn_session_get(struct cairn *h, const char *id, cairn_session_cb cb, void *arg)
{
    sqlite3_stmt *st;
    struct sess_walk w = { cb, arg };
    int n, rc;
    if ((rc = store_prepare(h, "SELECT " SESSION_COLS " FROM sessions s WHERE s.ext_id = ?",
                            &st)))
        return rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    rc = walk(h, st, session_row, &w, &n);
    if (!rc && n == 0)
        rc = cairn__err(h, CAIRN_NOTFOUND, "no session \"%s\"", id);
    return rc;
}

struct msg_walk { cairn_message_cb cb; void *arg; const char *session; };

static int message_row(void *arg, sqlite3_stmt *st)
{
    struct msg_walk *w = arg;
    struct cairn_message_info mi;
    mi.session = w->session;
    mi.id = col_text(st, 0);
    mi.role = col_text(st, 1);
    mi.speaker = sqlite3_column_type(st, 2) == SQLITE_NULL ? NULL : col_text(st, 2);
    mi.content = col_text(st, 3);
    mi.content_len = (size_t)sqlite3_column_bytes(st, 3);
    mi.at = col_time(st, 4);
    mi.position = sqlite3_column_int(st, 5);
    return w->cb(w->arg, &mi);
}

int cairn_messages(struct cairn *h, const char *session, int from, int to,
                   cairn_message_cb cb, void *arg)
{
    sqlite3_stmt *st;
    struct msg_walk w = { cb, arg, session };
    int n, rc;
    int64_t sid;
    if ((rc = store_prepare(h, "SELECT id FROM sessions WHERE ext_id = ?", &st)))
        return rc;
    sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return cairn__err(h, CAIRN_NOTFOUND, "no session \"%s\"", session);
    }
    sid = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (h->pg)
        return pg_messages(h, sid, session, from, to, cb, arg);
    if ((rc = store_prepare(h, "SELECT ext_id, role, speaker, content, created_at, position "
                            "FROM messages WHERE session = ? AND position >= ? AND "
                            "(? < 0 OR position <= ?) ORDER BY position", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, sid);
    sqlite3_bind_int(st, 2, from < 0 ? 0 : from);
    sqlite3_bind_int(st, 3, to);
    sqlite3_bind_int(st, 4, to);
    return walk(h, st, message_row, &w, &n);
}

/* The deletes of cairn_forget, inside store_scrub's transaction. */
static int forget_rows(struct cairn *h, void *arg)
{
    const char *session = arg;
    sqlite3_stmt *st = NULL;
    int rc;
    int64_t sid;
    if ((rc = store_prepare(h, "SELECT id FROM sessions WHERE ext_id = ?", &st)))
        return rc;
    sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return cairn__err(h, CAIRN_NOTFOUND, "no session \"%s\"", session);
    }
    sid = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    /* Their FTS rows first (store/fts.c), then the messages, then the
     * session. Every table that points at messages or sessions must be
     * listed here (vectors, offsets...). */
    static const char *const del[] = {
        STORE_FTS_FORGET_SESSION,
        "DELETE FROM messages WHERE session = ?",
        "DELETE FROM capture_state WHERE session = (SELECT ext_id FROM sessions WHERE id = ?)",
        "DELETE FROM session_stats WHERE session = ?",
        "DELETE FROM sessions WHERE id = ?",
    };
    for (size_t i = 0; i < sizeof del / sizeof del[0]; i++) {
        if ((rc = store_prepare(h, del[i], &st)))
            return rc;
        sqlite3_bind_int64(st, 1, sid);
        int src = sqlite3_step(st);
        sqlite3_finalize(st);
        if (src != SQLITE_DONE)
            return cairn__sqlerr(h, src, "forget");
    }
    /* a tombstone for `cairn sync` to push (the id's hash, not the id) */
    return store_sync_forget(h, session);
}

int cairn_forget(struct cairn *h, const char *session)
{
    return store_scrub(h, forget_rows, (void *)session);
}

int cairn_get_stats(struct cairn *h, struct cairn_stats *o)
{
    sqlite3_stmt *st;
    int rc;
    memset(o, 0, sizeof o[0]);
    if ((rc = store_prepare(h,
            "SELECT (SELECT count(*) FROM sessions),"
            /* one row (schema 14), not one a session */
            " (SELECT n FROM store_totals), (SELECT nuser FROM store_totals),"
            " (SELECT bytes FROM store_totals),"
            /* distinct projects by a walk of sessions_project: one
             * lookup per project, not a read of every session */
            " (WITH RECURSIVE p(x) AS (SELECT min(project) FROM sessions WHERE project > ''"
            "   UNION ALL SELECT (SELECT min(project) FROM sessions WHERE project > x)"
            "   FROM p WHERE x IS NOT NULL) SELECT count(x) FROM p),"
            " (SELECT min(coalesce(started_at, ended_at)) FROM sessions),"   /* sessions_first */
            " (SELECT max(coalesce(ended_at, started_at)) FROM sessions),"   /* sessions_last */
            " (SELECT user_version FROM pragma_user_version),"
            " (SELECT count(*) FROM sessions WHERE project = '')", &st)))
        return rc;
    if (sqlite3_step(st) == SQLITE_ROW) {
        o->sessions = sqlite3_column_int64(st, 0);
        o->messages = sqlite3_column_int64(st, 1);
        o->user_messages = sqlite3_column_int64(st, 2);
        o->assistant_messages = o->messages - o->user_messages;
        o->content_bytes = sqlite3_column_int64(st, 3);
        o->projects = sqlite3_column_int64(st, 4);
        o->first_at = col_time(st, 5);
        o->last_at = col_time(st, 6);
        /* a server store's in-memory copy has this build's version: the
         * one that says what the store holds is the server's */
        o->schema_version = h->pg ? store_server_schema(h) : sqlite3_column_int(st, 7);
        o->loose_sessions = sqlite3_column_int64(st, 8);
    } else {
        rc = cairn__sqlerr(h, SQLITE_ERROR, "stats");
    }
    sqlite3_finalize(st);
    struct stat sb;
    if (!rc && h->path && stat(h->path, &sb) == 0)
        o->file_bytes = (int64_t)sb.st_size;
    return rc;
}

struct redact_run {
    int dry_run;
    struct cairn_redact_report *out;
    struct store_clean cl;
};

/* Cleans one stored column value into *res (malloc'd) as the write path
 * would; 1 if that changes it, 0 if not, -1 on NOMEM. */
static int redact_col(struct redact_run *r, sqlite3_stmt *st, int col, int is_meta, char **res)
{
    const char *t = (const char *)sqlite3_column_text(st, col);
    size_t n = (size_t)sqlite3_column_bytes(st, col), rn;
    *res = NULL;
    if (!t)
        return 0;
    *res = is_meta ? store_clean_meta(t, &r->cl) : store_clean_text(t, n, &r->cl, &rn);
    if (!*res)
        return -1;
    return strlen(*res) != n || memcmp(*res, t, n) != 0;
}

static void bind_owned(sqlite3_stmt *st, int i, char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, free);
    else
        sqlite3_bind_null(st, i);
}

static int step_done(struct cairn *h, sqlite3_stmt *st)
{
    int src = sqlite3_step(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "update");
}

/* Every message: its text and speaker; a changed one gets its new hash
 * (the identity cairn_add_session computes from the cleaned fields, so
 * re-adding the session later finds it). */
static int redact_messages(struct cairn *h, struct redact_run *r)
{
    sqlite3_stmt *sel = NULL, *upd = NULL;
    char *content = NULL, *speaker = NULL;
    int rc, src, rewritten = 0;   /* rows in id order: the first moves the cursors */
    if ((rc = store_prepare(h, "SELECT id, content, speaker, role, created_at FROM messages "
                            "ORDER BY id", &sel)))
        goto out;
    if (!r->dry_run && (rc = store_prepare(h, "UPDATE messages SET content = ?, speaker = ?, "
                                           "hash = ? WHERE id = ?", &upd)))
        goto out;
    while ((src = sqlite3_step(sel)) == SQLITE_ROW) {
        r->out->messages_seen++;
        int c1 = redact_col(r, sel, 1, 0, &content), c2 = redact_col(r, sel, 2, 0, &speaker);
        if (c1 < 0 || c2 < 0) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        if (!c1 && !c2) {
            free(content), free(speaker);
            content = speaker = NULL;
            continue;
        }
        r->out->messages_changed++;
        const char *role = (const char *)sqlite3_column_text(sel, 3);
        int64_t at = sqlite3_column_type(sel, 4) == SQLITE_NULL ? CAIRN_NO_TIME
                                                                 : sqlite3_column_int64(sel, 4);
        if (r->dry_run || !content) {   /* content is NOT NULL: only speaker changed */
            free(content), free(speaker);
            content = speaker = NULL;
            continue;
        }
        uint64_t hash = store_message_hash(role ? role : "", speaker, at, content,
                                           strlen(content));
        int64_t id = sqlite3_column_int64(sel, 0);
        if (c1 && (rc = store_fts_replace(h, id, (const char *)sqlite3_column_text(sel, 1),
                                          (size_t)sqlite3_column_bytes(sel, 1), content,
                                          strlen(content))))
            goto out;
        sqlite3_reset(upd);
        bind_owned(upd, 1, content);
        bind_owned(upd, 2, speaker);
        content = speaker = NULL;   /* owned by the statement now */
        sqlite3_bind_int64(upd, 3, (int64_t)hash);
        sqlite3_bind_int64(upd, 4, id);
        if ((rc = step_done(h, upd)))
            goto out;
        /* the trigger dropped its event dates with the old text */
        if (c1 && (rc = store_events_refresh(h, id)))
            goto out;
        /* a server may hold what was masked: the next push sends the new text */
        if (!rewritten++ && (rc = store_sync_rewritten(h, id)))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "read");
    /* a rewritten speaker dropped its session's packed turns (a trigger,
     * schema 21): packed again, each session once */
    else if (rewritten)
        rc = store_turns_fill(h, -1);
out:
    free(content);
    free(speaker);
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    return rc;
}

/* One table's stored strings, cleaned column by column. `meta` is the
 * column holding JSON (cleaned as metadata), -1 if none. `after`, when
 * set, runs for a changed row before it is rewritten, with the old row in
 * sel and the new values in v (NULL: unchanged), to keep an index in step. */
struct redact_table {
    const char *table;
    const char *cols[5];
    int ncols, meta;
    int (*after)(struct cairn *h, sqlite3_stmt *sel, char **v);
};

/* A note section's index rows follow its new text: vault_fts is an
 * external-content table, so the old text leaves it explicitly. */
static int redact_section_index(struct cairn *h, sqlite3_stmt *sel, char **v)
{
    sqlite3_stmt *st = NULL;
    int64_t id = sqlite3_column_int64(sel, 0);
    if (!v[1])
        return CAIRN_OK;   /* only the heading changed: it is not indexed */
    int rc = store_prepare(h, "INSERT INTO vault_fts(vault_fts, rowid, text) "
                           "VALUES ('delete', ?, ?)", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, (const char *)sqlite3_column_text(sel, 2),
                      sqlite3_column_bytes(sel, 2), SQLITE_TRANSIENT);
    if ((rc = step_done(h, st)))
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = store_prepare(h, "INSERT INTO vault_fts(rowid, text) VALUES (?, ?)", &st)))
        goto out;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, v[1], -1, SQLITE_STATIC);
    if ((rc = step_done(h, st)))
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    /* a mask is shorter or longer than the secret: lengths drive BM25 */
    if ((rc = store_prepare(h, "UPDATE vault_sections SET ntok = ?1 WHERE id = ?2", &st)))
        goto out;
    sqlite3_bind_int(st, 1, store_index_tokens(v[1], strlen(v[1])));
    sqlite3_bind_int64(st, 2, id);
    if ((rc = step_done(h, st)))
        goto out;
    sqlite3_finalize(st);
    st = NULL;
    if ((rc = store_prepare(h, "UPDATE vault_docs SET ntok = (SELECT coalesce(sum(ntok), 0) "
                            "FROM vault_sections WHERE doc = vault_docs.id) WHERE id = "
                            "(SELECT doc FROM vault_sections WHERE id = ?)", &st)))
        goto out;
    sqlite3_bind_int64(st, 1, id);
    rc = step_done(h, st);
out:
    sqlite3_finalize(st);
    return rc;
}

/* Everything else a person's words reach besides messages: sessions'
 * names and metadata, Markdown notes, memories and their history,
 * corrections. The counts go to sessions, notes or memories. */
static const struct redact_table redact_tables[] = {
    { "sessions", { "title", "project", "source", "meta" }, 4, 3, NULL },
    { "vault_docs", { "title", "aliases", "tags", "links", "names" }, 5, -1, NULL },
    { "vault_sections", { "heading", "text" }, 2, -1, redact_section_index },
    { "memories", { "text", "scope", "tags" }, 3, -1, NULL },
    { "memory_history", { "text" }, 1, -1, NULL },
    { "corrections", { "keywords", "paths", "commands" }, 3, -1, NULL },
    { "correction_candidates", { "text", "scope", "commands" }, 3, -1, NULL },
};

static int redact_table(struct cairn *h, struct redact_run *r, const struct redact_table *t,
                        size_t *seen, size_t *changed_rows)
{
    sqlite3_stmt *sel = NULL, *upd = NULL;
    char *v[5] = { NULL };
    struct buf q = BUF_INIT;
    /* corrections key on their memory, the rest on their own id */
    const char *key = strcmp(t->table, "corrections") ? "rowid" : "memory";
    int rc, src;
    buf_printf(&q, "SELECT %s", key);
    for (int i = 0; i < t->ncols; i++)
        buf_printf(&q, ", %s", t->cols[i]);
    buf_printf(&q, " FROM %s ORDER BY %s", t->table, key);
    if (q.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_prepare(h, q.p, &sel)))
        goto out;
    buf_reset(&q);
    buf_printf(&q, "UPDATE %s SET ", t->table);
    for (int i = 0; i < t->ncols; i++)
        buf_printf(&q, "%s%s = coalesce(?%d, %s)", i ? ", " : "", t->cols[i], i + 1, t->cols[i]);
    buf_printf(&q, " WHERE %s = ?%d", key, t->ncols + 1);
    if (q.err) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if (!r->dry_run && (rc = store_prepare(h, q.p, &upd)))
        goto out;
    while ((src = sqlite3_step(sel)) == SQLITE_ROW) {
        int changed = 0;
        (*seen)++;
        for (int i = 0; i < t->ncols; i++) {
            int c = redact_col(r, sel, i + 1, i == t->meta, &v[i]);
            if (c < 0) {
                rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                goto out;
            }
            if (!c) {   /* unchanged: coalesce keeps the column */
                free(v[i]);
                v[i] = NULL;
            }
            changed |= c;
        }
        if (changed)
            (*changed_rows)++;
        if (changed && !r->dry_run && t->after && (rc = t->after(h, sel, v)))
            goto out;
        if (!changed || r->dry_run) {
            for (int i = 0; i < t->ncols; i++)
                free(v[i]), v[i] = NULL;
            continue;
        }
        sqlite3_reset(upd);
        for (int i = 0; i < t->ncols; i++) {
            bind_owned(upd, i + 1, v[i]);
            v[i] = NULL;
        }
        sqlite3_bind_int64(upd, t->ncols + 1, sqlite3_column_int64(sel, 0));
        if ((rc = step_done(h, upd)))
            goto out;
    }
    if (src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "read");
out:
    for (int i = 0; i < 5; i++)
        free(v[i]);
    buf_release(&q);
    sqlite3_finalize(sel);
    sqlite3_finalize(upd);
    return rc;
}

/* Cleans every stored string as the write path does today (a store
 * written before masking was on, or with older patterns or older
 * <private> rules); rewrites only with dry_run off, inside store_scrub's
 * transaction. */
static int redact_rows(struct cairn *h, void *arg)
{
    struct redact_run *r = arg;
    struct cairn_redact_report *o = r->out;
    int rc = redact_messages(h, r);
    for (size_t i = 0; !rc && i < sizeof redact_tables / sizeof redact_tables[0]; i++) {
        const struct redact_table *t = &redact_tables[i];
        int notes = !strncmp(t->table, "vault_", 6), session = !strcmp(t->table, "sessions");
        rc = redact_table(h, r, t,
                          session ? &o->sessions_seen : notes ? &o->notes_seen : &o->memories_seen,
                          session ? &o->sessions_changed
                                  : notes ? &o->notes_changed : &o->memories_changed);
    }
    r->out->private_removed = r->cl.private_removed;
    return rc;
}

int cairn_redact_store(struct cairn *h, int dry_run, struct cairn_redact_report *out)
{
    struct redact_run r = { dry_run, out, { 1, 0, 0, out } };
    memset(out, 0, sizeof *out);
    /* One transaction: a half-cleaned store would be worse than either;
     * store_scrub also wipes the unmasked text the rewrite leaves behind. */
    return dry_run ? redact_rows(h, &r) : store_scrub(h, redact_rows, &r);
}

char *cairn_redact_text(const char *text, size_t len, size_t *out_len,
                        struct cairn_redact_report *rep)
{
    struct buf b = BUF_INIT;
    if (redact_text(text, len, &b, rep) < 0) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, out_len);
}
