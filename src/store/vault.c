/*
 * vault.c: the SQL of Markdown vaults (schema v13, store/vault.h).
 *
 * vault_fts is an external-content index of vault_sections.text, kept in
 * step here as messages_fts is by the code that writes messages (fts.c):
 * a section's index row is added after its insert and removed (with the
 * text exactly as stored) before its delete. There are no cascades: a
 * cascade would delete sections behind the index's back.
 *
 * Every string written is cleaned as every stored string is
 * (store_clean_text: <private> spans dropped, secrets masked), so what a
 * note holds reaches the store no more than what a conversation holds.
 */
#include <stdlib.h>
#include <string.h>

#include "store/vault.h"
#include "mask/redact.h"
#include "store/memory.h"

void store_vault_release(struct store_vault *v)
{
    free(v->name);
    free(v->root);
    free(v->settings);
    memset(v, 0, sizeof *v);
}

int store_vault_insert(struct cairn *h, const char *name, const char *root,
                       const char *settings, int64_t now, int64_t *id)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT INTO vaults(name, root, settings, added_at) "
                           "VALUES (?, ?, ?, ?)", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, root, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, settings ? settings : "", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 4, now);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src == SQLITE_CONSTRAINT)
        return cairn__err(h, CAIRN_INVALID, "a vault named \"%s\" exists already", name);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "add vault");
    *id = sqlite3_last_insert_rowid(h->db);
    return CAIRN_OK;
}

#define VAULT_COLS "v.id, v.name, v.root, v.settings, v.added_at, v.indexed_at"

static int vault_row(sqlite3_stmt *st, struct store_vault *v)
{
    v->id = sqlite3_column_int64(st, 0);
    v->name = memory_col_dup(st, 1);
    v->root = memory_col_dup(st, 2);
    v->settings = memory_col_dup(st, 3);
    v->added_at = sqlite3_column_int64(st, 4);
    v->indexed_at = sqlite3_column_type(st, 5) == SQLITE_NULL ? CAIRN_NO_TIME
                                                                : sqlite3_column_int64(st, 5);
    return v->name && v->root && v->settings ? CAIRN_OK : CAIRN_NOMEM;
}

int store_vault_find(struct cairn *h, const char *name, struct store_vault *out)
{
    sqlite3_stmt *st;
    memset(out, 0, sizeof *out);
    int rc = store_prepare(h, "SELECT " VAULT_COLS " FROM vaults v WHERE v.name = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        rc = vault_row(st, out);
    else if (src == SQLITE_DONE)
        rc = cairn__err(h, CAIRN_NOTFOUND, "no vault named \"%s\"", name);
    else
        rc = cairn__sqlerr(h, src, "find vault");
    sqlite3_finalize(st);
    if (rc == CAIRN_NOMEM) {
        store_vault_release(out);
        return cairn__err(h, rc, "out of memory");
    }
    return rc;
}

int store_vault_all(struct cairn *h, struct store_vault **out, int *n)
{
    sqlite3_stmt *st;
    struct store_vault *v = NULL;
    int cap = 0, k = 0, src;
    *out = NULL;
    *n = 0;
    int rc = store_prepare(h, "SELECT " VAULT_COLS ","
                           " (SELECT count(*) FROM vault_docs d WHERE d.vault = v.id"
                           "  AND d.skipped = ''),"
                           " (SELECT count(*) FROM vault_sections s JOIN vault_docs d"
                           "  ON d.id = s.doc WHERE d.vault = v.id AND s.line > 0),"
                           " (SELECT coalesce(sum(size), 0) FROM vault_docs d WHERE d.vault = v.id)"
                           " FROM vaults v ORDER BY v.name", &st);
    if (rc)
        return rc;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (k == cap) {
            int nc = cap ? cap * 2 : 4;
            struct store_vault *nv = realloc(v, (size_t)nc * sizeof *nv);
            if (!nv) {
                rc = CAIRN_NOMEM;
                break;
            }
            v = nv;
            cap = nc;
        }
        memset(&v[k], 0, sizeof v[k]);
        rc = vault_row(st, &v[k]);
        v[k].docs = sqlite3_column_int64(st, 6);
        v[k].sections = sqlite3_column_int64(st, 7);
        v[k].bytes = sqlite3_column_int64(st, 8);
        k++;
        if (rc)
            break;
    }
    sqlite3_finalize(st);
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "list vaults");
    if (rc) {
        for (int i = 0; i < k; i++)
            store_vault_release(&v[i]);
        free(v);
        return rc == CAIRN_NOMEM ? cairn__err(h, rc, "out of memory") : rc;
    }
    *out = v;
    *n = k;
    return CAIRN_OK;
}

static int exec_id(struct cairn *h, const char *sql, int64_t id, const char *what)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, what);
}

int store_vault_set_indexed(struct cairn *h, int64_t vault, int64_t now)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE vaults SET indexed_at = ? WHERE id = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_int64(st, 2, vault);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "vault indexed");
}

/* The index rows of the sections of the documents `where` picks (bound
 * to ?1) go first, then the sections. */
#define UNINDEX(where) \
    "INSERT INTO vault_fts(vault_fts, rowid, text) SELECT 'delete', s.id, s.text " \
    "FROM vault_sections s WHERE s.doc IN (SELECT id FROM vault_docs WHERE " where ")"
#define DROP_SECTIONS(where) \
    "DELETE FROM vault_sections WHERE doc IN (SELECT id FROM vault_docs WHERE " where ")"

int store_vault_delete(struct cairn *h, int64_t vault)
{
    int rc;
    if ((rc = exec_id(h, UNINDEX("vault = ?1"), vault, "unindex vault")) ||
        (rc = exec_id(h, DROP_SECTIONS("vault = ?1"), vault, "delete vault sections")) ||
        (rc = exec_id(h, "DELETE FROM vault_docs WHERE vault = ?1", vault, "delete vault docs")) ||
        (rc = exec_id(h, "DELETE FROM vaults WHERE id = ?1", vault, "delete vault")))
        return rc;
    return store_vault_optimize(h);
}

int store_vault_remove_doc(struct cairn *h, int64_t id)
{
    int rc;
    if ((rc = exec_id(h, UNINDEX("id = ?1"), id, "unindex note")) ||
        (rc = exec_id(h, DROP_SECTIONS("id = ?1"), id, "delete note sections")) ||
        (rc = exec_id(h, "DELETE FROM vault_docs WHERE id = ?1", id, "delete note")))
        return rc;
    return CAIRN_OK;
}

int store_vault_optimize(struct cairn *h)
{
    int src = sqlite3_exec(h->db, "INSERT INTO vault_fts(vault_fts) VALUES('optimize')",
                           NULL, NULL, NULL);
    return src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, "rewrite the notes' index");
}

void store_vault_docs_free(struct store_vdoc *v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i].path);
    free(v);
}

int store_vault_docs(struct cairn *h, int64_t vault, struct store_vdoc **out, int *n)
{
    sqlite3_stmt *st;
    struct store_vdoc *v = NULL;
    int cap = 0, k = 0, src;
    *out = NULL;
    *n = 0;
    /* BINARY collation: the order strcmp gives, which the indexer searches */
    int rc = store_prepare(h, "SELECT id, path, size, mtime, hash, skipped = 'unreadable', "
                           "skipped != '', cut "
                           "FROM vault_docs WHERE vault = ? ORDER BY path COLLATE BINARY", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, vault);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (k == cap) {
            int nc = cap ? cap * 2 : 64;
            struct store_vdoc *nv = realloc(v, (size_t)nc * sizeof *nv);
            if (!nv) {
                rc = CAIRN_NOMEM;
                break;
            }
            v = nv;
            cap = nc;
        }
        struct store_vdoc *d = &v[k++];
        memset(d, 0, sizeof *d);
        d->id = sqlite3_column_int64(st, 0);
        d->path = memory_col_dup(st, 1);
        d->size = sqlite3_column_int64(st, 2);
        d->mtime = sqlite3_column_int64(st, 3);
        d->hash = (uint64_t)sqlite3_column_int64(st, 4);
        d->unreadable = sqlite3_column_int(st, 5);
        d->skipped = sqlite3_column_int(st, 6);
        d->cut = sqlite3_column_int(st, 7);
        if (!d->path) {
            rc = CAIRN_NOMEM;
            break;
        }
    }
    sqlite3_finalize(st);
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "read vault documents");
    if (rc) {
        store_vault_docs_free(v, k);
        return rc == CAIRN_NOMEM ? cairn__err(h, rc, "out of memory") : rc;
    }
    *out = v;
    *n = k;
    return CAIRN_OK;
}

int store_vault_touch(struct cairn *h, int64_t id, int64_t size, int64_t mtime)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE vault_docs SET size = ?, mtime = ? WHERE id = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, size);
    sqlite3_bind_int64(st, 2, mtime);
    sqlite3_bind_int64(st, 3, id);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "update note");
}

int store_vault_skip(struct cairn *h, int64_t vault, int64_t id, const char *path, int64_t size,
                     int64_t mtime, const char *why)
{
    sqlite3_stmt *st;
    int rc;
    if (id && (rc = store_vault_remove_doc(h, id)))
        return rc;
    if ((rc = store_prepare(h, "INSERT INTO vault_docs(vault, path, size, mtime, hash, skipped) "
                            "VALUES (?, ?, ?, ?, 0, ?)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, vault);
    sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, size);
    sqlite3_bind_int64(st, 4, mtime);
    sqlite3_bind_text(st, 5, why, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "note a skipped file");
}

/* The cleaned copy of s (never NULL on success); *n its length. */
static char *clean(struct cairn *h, struct store_clean *cl, const char *s, size_t len, size_t *n)
{
    size_t k = 0;
    char *c = store_clean_text(s ? s : "", s ? len : 0, cl, &k);
    if (!c)
        cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (n)
        *n = k;
    return c;
}

int store_vault_put(struct cairn *h, int64_t vault, int64_t id, const struct store_vdoc_in *d)
{
    struct store_clean cl = { redact_enabled(cairn__setting(h, CAIRN__SET_REDACT)), 0, 0, NULL };
    sqlite3_stmt *doc = NULL, *sec = NULL, *fts = NULL;
    char *title = NULL, *aliases = NULL, *tags = NULL, *links = NULL, *names = NULL;
    int rc;
    if (id && (rc = store_vault_remove_doc(h, id)))
        return rc;
    rc = CAIRN_NOMEM;
    if (!(title = clean(h, &cl, d->title, d->title ? strlen(d->title) : 0, NULL)) ||
        !(aliases = clean(h, &cl, d->aliases, d->aliases ? strlen(d->aliases) : 0, NULL)) ||
        !(tags = clean(h, &cl, d->tags, d->tags ? strlen(d->tags) : 0, NULL)) ||
        !(links = clean(h, &cl, d->links, d->links ? strlen(d->links) : 0, NULL)) ||
        !(names = clean(h, &cl, d->names, d->names ? strlen(d->names) : 0, NULL)))
        goto out;
    if ((rc = store_prepare(h, "INSERT INTO vault_docs(vault, path, size, mtime, hash, title,"
                            " aliases, tags, links, names, cut) "
                           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                            &doc)) ||
        (rc = store_prepare(h, "INSERT INTO vault_sections(doc, line, heading, text, ntok, "
                            "part) VALUES (?, ?, ?, ?, ?, ?)", &sec)) ||
        (rc = store_prepare(h, "INSERT INTO vault_fts(rowid, text) VALUES (?, ?)", &fts)))
        goto out;
    sqlite3_bind_int64(doc, 1, vault);
    sqlite3_bind_text(doc, 2, d->path, -1, SQLITE_STATIC);
    sqlite3_bind_int64(doc, 3, d->size);
    sqlite3_bind_int64(doc, 4, d->mtime);
    sqlite3_bind_int64(doc, 5, (int64_t)d->hash);
    sqlite3_bind_text(doc, 6, title, -1, SQLITE_STATIC);
    sqlite3_bind_text(doc, 7, aliases, -1, SQLITE_STATIC);
    sqlite3_bind_text(doc, 8, tags, -1, SQLITE_STATIC);
    sqlite3_bind_text(doc, 9, links, -1, SQLITE_STATIC);
    sqlite3_bind_text(doc, 10, names, -1, SQLITE_STATIC);
    sqlite3_bind_int(doc, 11, d->cut);
    int src = sqlite3_step(doc);
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "add note");
        goto out;
    }
    int64_t docid = sqlite3_last_insert_rowid(h->db), ntok = 0;
    for (int i = 0; i < d->nsec; i++) {
        size_t n;
        char *text = clean(h, &cl, d->sec[i].text, d->sec[i].len, &n);
        char *head = text ? clean(h, &cl, d->sec[i].heading, strlen(d->sec[i].heading), NULL)
                          : NULL;
        if (!text || !head) {
            free(text);
            rc = CAIRN_NOMEM;
            goto out;
        }
        int k = store_index_tokens(text, n);
        ntok += k;
        sqlite3_reset(sec);
        sqlite3_bind_int64(sec, 1, docid);
        sqlite3_bind_int(sec, 2, d->sec[i].line);
        sqlite3_bind_text(sec, 3, head, -1, SQLITE_STATIC);
        sqlite3_bind_text(sec, 4, text, (int)n, SQLITE_STATIC);
        sqlite3_bind_int(sec, 5, k);
        sqlite3_bind_int(sec, 6, d->sec[i].part);
        src = sqlite3_step(sec);
        if (src == SQLITE_DONE) {
            sqlite3_reset(fts);
            sqlite3_bind_int64(fts, 1, sqlite3_last_insert_rowid(h->db));
            sqlite3_bind_text(fts, 2, text, (int)n, SQLITE_STATIC);
            src = sqlite3_step(fts);
        }
        free(text);
        free(head);
        if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "add note section");
            goto out;
        }
    }
    rc = exec_id(h, "UPDATE vault_docs SET ntok = (SELECT coalesce(sum(ntok), 0) FROM "
                 "vault_sections WHERE doc = ?1) WHERE id = ?1", docid, "note length");
out:
    sqlite3_finalize(doc);
    sqlite3_finalize(sec);
    sqlite3_finalize(fts);
    free(title);
    free(aliases);
    free(tags);
    free(links);
    free(names);
    return rc;
}

/* ---- What recall reads ---- */

int store_vault_any(struct cairn *h, int *any)
{
    sqlite3_stmt *st;
    *any = 0;
    int rc = store_prepare(h, "SELECT EXISTS (SELECT 1 FROM vault_sections)", &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *any = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return src == SQLITE_ROW ? CAIRN_OK : cairn__sqlerr(h, src, "any note");
}

int store_vault_totals(struct cairn *h, int64_t *sections, int64_t *tok, int64_t *whole)
{
    sqlite3_stmt *st;
    *sections = *tok = *whole = 0;
    /* the one row the triggers keep (schema 29); without it, the scan of
     * every section it stands for */
    int rc = store_prepare(h, "SELECT sections, tok, whole FROM vault_totals WHERE id = 1 "
                           "UNION ALL SELECT count(*), coalesce(sum(ntok), 0), "
                           "coalesce(sum(part = 0), 0) FROM vault_sections "
                           "INDEXED BY vault_sections_hit "
                           "WHERE NOT EXISTS (SELECT 1 FROM vault_totals WHERE id = 1)", &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *sections = sqlite3_column_int64(st, 0);
        *tok = sqlite3_column_int64(st, 1);
        *whole = sqlite3_column_int64(st, 2);
    }
    sqlite3_finalize(st);
    return src == SQLITE_ROW ? CAIRN_OK : cairn__sqlerr(h, src, "notes' totals");
}

int store_vault_matches(struct cairn *h, const char *expr, size_t len, int nt,
                        store_vmatch_fn fn, void *arg)
{
    sqlite3_stmt *st;
    uint16_t tf[64];
    if (nt > 64)
        nt = 64;
    /* the match drives the join (CROSS JOIN keeps that order), and
     * vault_sections_hit covers what is read: the text is not */
    int rc = store_prepare(h, "SELECT s.id, s.doc, s.ntok, cairn_tf(vault_fts), s.line, s.part "
                           "FROM vault_fts "
                           "CROSS JOIN vault_sections s INDEXED BY vault_sections_hit "
                           "ON s.id = vault_fts.rowid WHERE vault_fts MATCH ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, expr, (int)len, SQLITE_STATIC);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        const unsigned char *b = sqlite3_column_blob(st, 3);
        int bn = sqlite3_column_bytes(st, 3);
        for (int i = 0; i < nt; i++)
            tf[i] = b && 2 * i + 1 < bn ? (uint16_t)(b[2 * i] | b[2 * i + 1] << 8) : 0;
        if ((rc = fn(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                     sqlite3_column_int(st, 4), sqlite3_column_int(st, 2),
                     sqlite3_column_int(st, 5), tf)))
            break;
    }
    sqlite3_finalize(st);
    if (rc)
        return rc;
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "match notes");
}

/* Each row (id, a text) of sql to fn. */
static int each_doc(struct cairn *h, const char *sql, store_vname_fn fn, void *arg,
                    const char *what)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = fn(arg, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1))))
            break;
    sqlite3_finalize(st);
    if (rc)
        return rc;
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, what);
}

int store_vault_names(struct cairn *h, store_vname_fn fn, void *arg)
{
    return each_doc(h, "SELECT id, names FROM vault_docs INDEXED BY vault_docs_names "
                    "WHERE skipped = '' AND names != ''", fn, arg, "note names");
}

int store_vault_links(struct cairn *h, store_vname_fn fn, void *arg)
{
    return each_doc(h, "SELECT id, links FROM vault_docs WHERE skipped = '' AND links != ''",
                    fn, arg, "note links");
}

int store_vault_first_section(struct cairn *h, int64_t doc, int64_t *sec, int *ntok)
{
    sqlite3_stmt *st;
    *sec = 0;
    *ntok = 0;
    int rc = store_prepare(h, "SELECT id, ntok FROM vault_sections WHERE doc = ? AND line > 0 "
                           "ORDER BY id LIMIT 1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, doc);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *sec = sqlite3_column_int64(st, 0);
        *ntok = sqlite3_column_int(st, 1);
    }
    sqlite3_finalize(st);
    return src == SQLITE_ROW || src == SQLITE_DONE ? CAIRN_OK
                                                   : cairn__sqlerr(h, src, "note section");
}

int store_vault_headings(struct cairn *h, const int64_t *secs, int n, store_vhead_fn fn,
                         void *arg)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT heading FROM vault_sections WHERE id = ?", &st);
    if (rc)
        return rc;
    for (int i = 0; i < n && !rc; i++) {
        sqlite3_bind_int64(st, 1, secs[i]);
        int src = sqlite3_step(st);
        if (src == SQLITE_ROW) {
            const char *hd = (const char *)sqlite3_column_text(st, 0);
            rc = fn(arg, i, hd ? hd : "");
        } else if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "note heading");
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

void store_vault_section_release(struct store_vsec *s)
{
    free(s->vault);
    free(s->path);
    free(s->title);
    free(s->heading);
    free(s->text);
    memset(s, 0, sizeof *s);
}

int store_vault_doc_totals(struct cairn *h, int64_t *docs, int64_t *tok)
{
    sqlite3_stmt *st;
    *docs = *tok = 0;
    int rc = store_prepare(h, "SELECT count(*), coalesce(sum(ntok), 0) FROM vault_docs "
                           "WHERE skipped = ''", &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *docs = sqlite3_column_int64(st, 0);
        *tok = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return src == SQLITE_ROW ? CAIRN_OK : cairn__sqlerr(h, src, "notes' file totals");
}

static int read_vsec(struct cairn *h, const char *sql, int64_t id, struct store_vsec *out);

int store_vault_doc_text(struct cairn *h, int64_t doc, struct store_vsec *out)
{
    return read_vsec(h, "SELECT v.name, d.path, d.title, '', (SELECT group_concat(text, '') "
                     "FROM (SELECT text FROM vault_sections WHERE doc = d.id AND line > 0 "
                     "ORDER BY line)), 1, "
                     "d.mtime FROM vault_docs d JOIN vaults v ON v.id = d.vault WHERE d.id = ?",
                     doc, out);
}

int store_vault_section(struct cairn *h, int64_t sec, struct store_vsec *out)
{
    return read_vsec(h, "SELECT v.name, d.path, d.title, s.heading, s.text, s.line, d.mtime "
                     "FROM vault_sections s JOIN vault_docs d ON d.id = s.doc "
                     "JOIN vaults v ON v.id = d.vault WHERE s.id = ?", sec, out);
}

static int read_vsec(struct cairn *h, const char *sql, int64_t id, struct store_vsec *out)
{
    sqlite3_stmt *st;
    memset(out, 0, sizeof *out);
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        out->vault = memory_col_dup(st, 0);
        out->path = memory_col_dup(st, 1);
        out->title = memory_col_dup(st, 2);
        out->heading = memory_col_dup(st, 3);
        out->text = memory_col_dup(st, 4);
        out->line = sqlite3_column_int(st, 5);
        out->mtime = sqlite3_column_int64(st, 6);
        if (!out->vault || !out->path || !out->title || !out->heading || !out->text)
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
    } else {
        rc = src == SQLITE_DONE ? cairn__err(h, CAIRN_NOTFOUND, "no note %lld", (long long)id)
                                : cairn__sqlerr(h, src, "read note section");
    }
    sqlite3_finalize(st);
    if (rc)
        store_vault_section_release(out);
    return rc;
}
