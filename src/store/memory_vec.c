/*
 * memory_vec.c: the vectors of explicit memories (schema version 9,
 * docs/MEMORIES.md), for recall's dense match of memories.
 *
 * One f32 vector a memory, of its opening piece (memories are short), with
 * the model's id and the hash of the text it was made from: add and edit
 * store it when a model is present (computed before the write lock, as
 * for messages), and a vector whose hash is not the memory's text (after
 * an undo, an import, or an add with no model) is not used by recall and
 * is made again by `cairn embed --backfill`, which covers memories after
 * messages; `cairn reindex` deletes them with the messages' vectors, so
 * they are all made again. f32, not int8: there are
 * few of them, and recall reads them with the memories, not through the
 * vector cache.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "store/memory.h"
#include "store/vectors.h"
#include "util/hash.h"

int64_t memory_text_hash(const char *text)
{
    return (int64_t)hash64(text, strlen(text), 0);
}

int memory_vec_make(struct cairn *h, const char *text, struct vec_batch *b)
{
    size_t len = strlen(text);
    return vec_batch_embed(h, &text, &len, NULL, 1, 0, b);
}

/* Stores item i of b as memory id's vector (nothing when b has none). */
static int store_one(struct cairn *h, int64_t id, const char *text, const struct vec_batch *b,
                     size_t i)
{
    sqlite3_stmt *st;
    int rc;
    if (!b->v || i >= b->n || b->first[i] == b->first[i + 1])
        return CAIRN_OK;
    /* a memory removed while a backfill embedded it stays removed */
    if ((rc = store_prepare(h, "INSERT OR REPLACE INTO memory_vectors(memory, model, dim, "
                            "text_hash, vec) SELECT ?1, ?2, ?3, ?4, ?5 "
                            "WHERE EXISTS (SELECT 1 FROM memories WHERE id = ?1)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, b->model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, b->dim);
    sqlite3_bind_int64(st, 4, memory_text_hash(text));
    sqlite3_bind_blob(st, 5, b->v + (size_t)b->first[i] * (size_t)b->dim,
                      b->dim * (int)sizeof(float), SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "memory vector");
}

int memory_vec_store(struct cairn *h, int64_t id, const char *text, const struct vec_batch *b)
{
    return store_one(h, id, text, b, 0);
}

/* The live and superseded memories whose vector is missing, of another
 * model or of another text, at most max of them after id `after`. */
static int read_stale(struct cairn *h, const char *model, int64_t after, int max, int64_t *ids,
                      char **texts, size_t *lens, size_t *n)
{
    sqlite3_stmt *st;
    int rc, src = SQLITE_DONE;
    *n = 0;
    if ((rc = store_prepare(h, "SELECT m.id, m.text, v.model, v.text_hash FROM memories m "
                            "LEFT JOIN memory_vectors v ON v.memory = m.id WHERE m.id > ? "
                            "ORDER BY m.id", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, after);
    while ((int)*n < max && (src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 1);
        const char *vm = (const char *)sqlite3_column_text(st, 2);
        if (!t)
            t = "";
        if (vm && !strcmp(vm, model) && sqlite3_column_int64(st, 3) == memory_text_hash(t))
            continue;
        ids[*n] = sqlite3_column_int64(st, 0);
        lens[*n] = strlen(t);
        if (!(texts[*n] = strdup(t))) {
            sqlite3_finalize(st);
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        }
        (*n)++;
    }
    if ((int)*n < max && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, "memory vectors");
    sqlite3_finalize(st);
    return rc;
}

/* (vec_fill's) */
static int put_one(struct cairn *h, void *arg, int64_t id, const char *text, size_t len,
                   const struct vec_batch *b, size_t i)
{
    return store_one(h, id, text, b, i);
}

static int read_chunk(struct cairn *h, void *arg, const char *model, int64_t after, int max,
                      int64_t *ids, char **texts, size_t *lens, size_t *n)
{
    return read_stale(h, model, after, max, ids, texts, lens, n);
}

int memory_vec_backfill(struct cairn *h, struct vec_model *vm)
{
    /* embedded with no lock held; a memory edited meanwhile keeps the
     * hash of the text embedded, which recall then ignores */
    struct vec_fill f = { read_chunk, put_one, NULL };
    return vec_fill(h, vm, &f, NULL);
}
