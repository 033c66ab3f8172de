/*
 * vault_vec.c: dense vectors of note sections (schema version 16,
 * docs/VAULTS.md "Dense vectors for sections").
 *
 * One int8 vector a section (its heading path and the opening piece of
 * its text, as a message's first piece), with the model's id and the hash
 * of the text it was made from. `vault add` and `vault reindex` fill them
 * after their own transaction, when a model is installed: the sections
 * with no vector of the current model are read, embedded with no lock
 * held, and written a chunk a transaction, so a long first fill never
 * holds the write lock while the model runs. The prompt path never makes
 * one: recall reads what is here (a section without one is found by its
 * words only). A hook's re-index embeds nothing (hooks keep to their
 * budget: cairn_embed_at_ingest off), so `cairn embed --backfill` fills the
 * sections it left, after the messages and memories. Triggers (schema.c)
 * drop a section's vector when the section is deleted or its text
 * rewritten, so a re-index, `vault rm` and `redact` leave no vector of an
 * old text. The card (line 0) has none: its names are in every section's
 * embedded text.
 */
#include <stdlib.h>
#include <string.h>

#include "store/vault.h"
#include "store/vectors.h"
#include "util/buf.h"
#include "util/hash.h"

/* The text a section's vector is made from: the page's title and the
 * section's heading path (the words a question names it by), then the
 * text. */
static char *embed_text(const char *title, const char *heading, const char *text, size_t *len)
{
    struct buf b = BUF_INIT;
    if (*title && strncmp(heading, title, strlen(title))) {
        buf_adds(&b, title);
        buf_adds(&b, *heading ? " > " : "\n");
    }
    if (*heading) {
        buf_adds(&b, heading);
        buf_addc(&b, '\n');
    }
    buf_adds(&b, text);
    return buf_detach(&b, len);
}

/* Sections with no vector of model, after id `after`, at most max
 * (vec_fill's read). */
static int read_missing(struct cairn *h, void *arg, const char *model, int64_t after, int max,
                        int64_t *ids, char **texts, size_t *lens, size_t *n)
{
    sqlite3_stmt *st;
    int rc, src = SQLITE_DONE;
    *n = 0;
    if ((rc = store_prepare(h, "SELECT s.id, d.title, s.heading, s.text FROM vault_sections s "
                            "JOIN vault_docs d ON d.id = s.doc LEFT JOIN vault_vectors v "
                            "ON v.section = s.id WHERE s.id > ? AND s.line > 0 AND "
                            "(v.section IS NULL OR v.model != ?) ORDER BY s.id", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, after);
    sqlite3_bind_text(st, 2, model, -1, SQLITE_STATIC);
    while ((int)*n < max && (src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 1);
        const char *hd = (const char *)sqlite3_column_text(st, 2);
        const char *x = (const char *)sqlite3_column_text(st, 3);
        ids[*n] = sqlite3_column_int64(st, 0);
        if (!(texts[*n] = embed_text(t ? t : "", hd ? hd : "", x ? x : "", &lens[*n]))) {
            sqlite3_finalize(st);
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        }
        (*n)++;
    }
    if ((int)*n < max && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "note sections to embed");
    sqlite3_finalize(st);
    return rc;
}

/* Item i of b as section id's vector (nothing when b has none): its
 * first piece, the heading and the opening of the text. A section
 * re-indexed meanwhile is gone, and its new row has no vector. */
static int put_one(struct cairn *h, void *arg, int64_t id, const char *text, size_t len,
                   const struct vec_batch *b, size_t i)
{
    sqlite3_stmt *ins;
    int8_t q[8192];
    float scale;
    int rc;
    if (!b->v || i >= b->n || b->first[i] == b->first[i + 1])
        return CAIRN_OK;
    if (b->dim > (int)sizeof q)
        return cairn__err(h, CAIRN_INVALID, "vector dimension %d too large", b->dim);
    if ((rc = store_prepare(h, "INSERT OR REPLACE INTO vault_vectors(section, model, dim, "
                            "text_hash, vec) SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS "
                            "(SELECT 1 FROM vault_sections WHERE id = ?1)", &ins)))
        return rc;
    vec_quantize(b->v + (size_t)b->first[i] * (size_t)b->dim, b->dim, q, &scale);
    sqlite3_bind_int64(ins, 1, id);
    sqlite3_bind_text(ins, 2, b->model, -1, SQLITE_STATIC);
    sqlite3_bind_int(ins, 3, b->dim);
    sqlite3_bind_int64(ins, 4, (int64_t)hash64(text, len, 0));
    sqlite3_bind_blob(ins, 5, q, b->dim, SQLITE_STATIC);
    int src = sqlite3_step(ins);
    sqlite3_finalize(ins);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "note section vector");
}

int store_vault_vec_fill_model(struct cairn *h, struct vec_model *vm, int64_t *made)
{
    struct vec_fill f = { read_missing, put_one, NULL };
    *made = 0;
    return vec_fill(h, vm, &f, made);
}

int store_vault_vec_fill(struct cairn *h, int64_t *made)
{
    struct vec_model *vm = vec_ingest_enabled(h) ? vec_model_current(h, NULL, 0) : NULL;
    *made = 0;
    return vm ? store_vault_vec_fill_model(h, vm, made) : CAIRN_OK;
}

int store_vault_vec_any(struct cairn *h, int *any)
{
    sqlite3_stmt *st;
    *any = 0;
    int rc = store_prepare(h, "SELECT EXISTS (SELECT 1 FROM vault_vectors)", &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *any = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return src == SQLITE_ROW ? CAIRN_OK : cairn__sqlerr(h, src, "any note vector");
}

int store_vault_vectors(struct cairn *h, const char *model, int dim, store_vvec_fn fn, void *arg)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT v.section, s.doc, s.ntok, v.vec FROM vault_vectors v "
                           "JOIN vault_sections s ON s.id = v.section "
                           "WHERE v.model = ? AND v.dim = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, dim);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (sqlite3_column_bytes(st, 3) != dim)
            continue;
        if ((rc = fn(arg, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                     sqlite3_column_int(st, 2), sqlite3_column_blob(st, 3))))
            break;
    }
    sqlite3_finalize(st);
    if (rc)
        return rc;
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "note vectors");
}
