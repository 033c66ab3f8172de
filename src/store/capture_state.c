/*
 * capture_state.c: what capture remembers between runs (the capture_state
 * table of schema version 2), and the small store calls the importers and
 * hooks need beyond adding sessions: updating a session's title and meta
 * once the transcript names them, and a shorter busy wait for hooks.
 *
 * A state row says how far one file was read. It is written after the
 * sessions of that read are committed, in its own transaction: a crash in
 * between leaves the old offset, and reading again from it is harmless
 * because adding a message twice is a no-op.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>

#include "internal.h"
#include "mask/redact.h"

static int64_t col_time(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL ? CAIRN_NO_TIME
                                                     : sqlite3_column_int64(st, i);
}

static void fill_state(sqlite3_stmt *st, struct cairn_capture_state *o)
{
    const unsigned char *p = sqlite3_column_text(st, 0);
    o->path = p ? (const char *)p : "";
    o->session = sqlite3_column_type(st, 1) == SQLITE_NULL
                 ? NULL : (const char *)sqlite3_column_text(st, 1);
    o->offset = (uint64_t)sqlite3_column_int64(st, 2);
    o->size = (uint64_t)sqlite3_column_int64(st, 3);
    o->inode = (uint64_t)sqlite3_column_int64(st, 4);
    o->dev = (uint64_t)sqlite3_column_int64(st, 5);
    o->mtime = col_time(st, 6);
    o->updated_at = col_time(st, 7);
}

#define STATE_COLS "path, session, read_offset, size, inode, dev, mtime, updated_at"

int cairn_capture_state_get(struct cairn *h, const char *path,
                            struct cairn_capture_state *out)
{
    sqlite3_stmt *st;
    int rc, src;
    if (!h || !path || !out)
        return cairn__err(h, CAIRN_INVALID, "capture state: no path");
    if ((rc = store_prepare(h, "SELECT " STATE_COLS " FROM capture_state WHERE path = ?", &st)))
        return rc;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        fill_state(st, out);
        out->path = path;
        out->session = NULL;     /* the row's text dies with the statement */
        rc = CAIRN_OK;
    } else if (src == SQLITE_DONE) {
        rc = cairn__err(h, CAIRN_NOTFOUND, "no capture state for %s", path);
    } else {
        rc = cairn__sqlerr(h, src, "capture state");
    }
    sqlite3_finalize(st);
    return rc;
}

int cairn_capture_state_set(struct cairn *h, const struct cairn_capture_state *s)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    if (!h || !s || !s->path || !*s->path)
        return cairn__err(h, CAIRN_INVALID, "capture state: no path");
    if ((rc = store_begin(h)))
        return rc;
    if ((rc = store_prepare(h, "INSERT OR REPLACE INTO capture_state(" STATE_COLS ") "
                            "VALUES (?,?,?,?,?,?,?,?)", &st)))
        goto fail;
    sqlite3_bind_text(st, 1, s->path, -1, SQLITE_STATIC);
    if (s->session && *s->session)
        sqlite3_bind_text(st, 2, s->session, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 2);
    sqlite3_bind_int64(st, 3, (int64_t)s->offset);
    sqlite3_bind_int64(st, 4, (int64_t)s->size);
    sqlite3_bind_int64(st, 5, (int64_t)s->inode);
    sqlite3_bind_int64(st, 6, (int64_t)s->dev);
    if (s->mtime == CAIRN_NO_TIME)
        sqlite3_bind_null(st, 7);
    else
        sqlite3_bind_int64(st, 7, s->mtime);
    sqlite3_bind_int64(st, 8, s->updated_at == CAIRN_NO_TIME ? (int64_t)time(NULL)
                                                             : s->updated_at);
    src = sqlite3_step(st);
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "capture state");
        goto fail;
    }
    sqlite3_finalize(st);
    return store_commit(h);
fail:
    sqlite3_finalize(st);
    store_rollback(h);
    return rc;
}

int cairn_capture_state_delete(struct cairn *h, const char *path)
{
    sqlite3_stmt *st = NULL;
    int rc, src;
    if (!h || !path)
        return cairn__err(h, CAIRN_INVALID, "capture state: no path");
    if ((rc = store_begin(h)))
        return rc;
    if ((rc = store_prepare(h, "DELETE FROM capture_state WHERE path = ?", &st)))
        goto fail;
    sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "capture state");
        goto fail;
    }
    if (sqlite3_changes(h->db) == 0) {
        rc = cairn__err(h, CAIRN_NOTFOUND, "no capture state for %s", path);
        goto fail;
    }
    sqlite3_finalize(st);
    return store_commit(h);
fail:
    sqlite3_finalize(st);
    store_rollback(h);
    return rc;
}

int cairn_capture_states(struct cairn *h, const char *path, cairn_capture_state_cb cb,
                         void *arg)
{
    sqlite3_stmt *st;
    int rc, src;
    if (!h || !cb)
        return cairn__err(h, CAIRN_INVALID, "capture states: no callback");
    if ((rc = store_prepare(h, path ? "SELECT " STATE_COLS " FROM capture_state WHERE path = ?"
                                    : "SELECT " STATE_COLS " FROM capture_state ORDER BY path",
                            &st)))
        return rc;
    if (path)
        sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
    rc = CAIRN_OK;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        struct cairn_capture_state s;
        fill_state(st, &s);
        int r = cb(arg, &s);
        if (r) {
            rc = r > 0 ? r : CAIRN_ERROR;
            break;
        }
    }
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "capture states");
    sqlite3_finalize(st);
    return rc;
}

int cairn_session_update(struct cairn *h, const char *id, const char *title, const char *meta)
{
    sqlite3_stmt *st = NULL;
    char *ctitle = NULL, *cmeta = NULL;
    struct store_clean cl = { redact_enabled(cairn__setting(h, CAIRN__SET_REDACT)), 0, 0, NULL };
    int rc, src;
    size_t tl;
    if (!h || !id)
        return cairn__err(h, CAIRN_INVALID, "session update: no id");
    if (meta) {
        cJSON *m = cJSON_Parse(meta);
        int ok = m && cJSON_IsObject(m);
        cJSON_Delete(m);
        if (!ok)
            return cairn__err(h, CAIRN_INVALID, "session meta must be a JSON object");
    }
    /* cleaned (private spans, secrets) like everything cairn_add_session
     * writes */
    if ((title && !(ctitle = store_clean_text(title, strlen(title), &cl, &tl)))
        || (meta && !(cmeta = store_clean_meta(meta, &cl)))) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = store_begin(h)))
        goto out;
    if ((rc = store_prepare(h, "UPDATE sessions SET title = coalesce(?2, title), "
                            "meta = coalesce(?3, meta) WHERE ext_id = ?1", &st)))
        goto fail;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    if (ctitle)
        sqlite3_bind_text(st, 2, ctitle, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 2);
    if (cmeta)
        sqlite3_bind_text(st, 3, cmeta, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 3);
    src = sqlite3_step(st);
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "session update");
        goto fail;
    }
    if (sqlite3_changes(h->db) == 0) {
        rc = cairn__err(h, CAIRN_NOTFOUND, "no session \"%s\"", id);
        goto fail;
    }
    sqlite3_finalize(st);
    st = NULL;
    rc = store_commit(h);
    goto out;
fail:
    sqlite3_finalize(st);
    store_rollback(h);
out:
    free(ctitle);
    free(cmeta);
    return rc;
}

int cairn_busy_timeout(struct cairn *h, int ms)
{
    if (!h || !h->db)
        return CAIRN_ERROR;
    sqlite3_busy_timeout(h->db, ms < 0 ? 0 : ms);
    return CAIRN_OK;
}
