/*
 * vectors.c: dense vectors in the store (see vectors.h): the process-wide
 * encoder, cutting messages into pieces, int8 storage, embedding at ingest
 * outside the write lock, the per-connection set recall scans (mapped from
 * the cache file beside the store when it is valid: veccache.c), and
 * cairn_embed_backfill (`cairn embed --backfill`, `cairn reindex`).
 *
 * Per-connection state (the ingest switch and the vector cache) hangs off
 * the sqlite3 connection: it is registered as the user data of a private
 * SQL function whose destructor SQLite calls when the connection closes,
 * so the state lives exactly as long as the handle without a field in
 * struct cairn.
 */
#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/vectors.h"
#include "store/pg_read.h"
#include "store/memory.h"
#include "store/vault.h"
#include "embed/embed.h"
#include "embed/registry.h"

/* Bytes of text per piece: USE-lite reads 128 tokens of an 8k-piece
 * SentencePiece vocabulary, about 4 bytes of English each; 3.5 bytes a
 * token keeps most pieces whole within the model's window. */
#define VEC_BYTES_PER_TOKEN 3.5
#define VEC_PIECE_MIN       256
#define VEC_PIECE_MAX       2048
/* Texts per encoder call at ingest and in the backfill. */
#define VEC_ENCODE_BATCH    64
/* Messages per backfill transaction. */
#define VEC_BACKFILL_CHUNK  256
/* Seconds the vectors must have stood still before a reader writes the
 * cache file (cairn_embed_backfill writes it itself when it is done). */
#define VEC_CACHE_SETTLE_S  30
/* Sets of fewer pieces are not written to a cache file: reading them out
 * of SQLite costs a process a few milliseconds (159.9 ms for 192,804
 * vectors in bench/bench_vecload.c, 0.83 us each: about 7 ms for 8,192),
 * not worth a file beside every small store. */
#define VEC_CACHE_MIN       8192

/* ---- the model ------------------------------------------------------ */

struct vec_model {
    char                dir[4096];
    char                id[VEC_MODEL_ID_MAX];
    struct embed_model *m;
    int                 dim, max_tokens;
    struct vec_model   *prev;   /* the one current before it (kept: see below) */
};

static pthread_mutex_t vm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vec_model *vm_cur;       /* the loaded model, kept for the process */
static char vm_failed_dir[4096];       /* a folder that failed to load: not retried */

/* The model's identity: its folder name and a hash of its small files
 * (configuration, vocabulary: embed_id_hash, which the loader of a
 * USE-lite model made from the files it read, so they are not read and
 * hashed again) and of every file's name and size, so a different model,
 * or the same name with other weights, never matches. */
static void model_identity(const struct embed_model *m, const char *dir, char *out, size_t n)
{
    const char *base = NULL;
    char p[4600];
    uint64_t h;
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        len--;
    for (size_t i = 0; i < len; i++)
        if (dir[i] == '/')
            base = dir + i;
    base = base ? base + 1 : dir;
    h = embed_id_hash(m, dir);
    /* names and sizes, in sorted order so readdir order does not matter */
    struct dirent **ents = NULL;
    char dpath[4200];
    snprintf(dpath, sizeof dpath, "%.*s", (int)len, dir);
    int k = scandir(dpath, &ents, NULL, alphasort);
    for (int i = 0; i < k; i++) {
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dpath, ents[i]->d_name);
        if (stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
            uint64_t sz = (uint64_t)st.st_size;
            h = hash64(ents[i]->d_name, strlen(ents[i]->d_name), h);
            h = hash64(&sz, sizeof sz, h);
        }
        free(ents[i]);
    }
    free(ents);
    int blen = (int)(dir + len - base);
    if (blen > 100)
        blen = 100;
    snprintf(out, n, "%.*s:%016llx", blen, base, (unsigned long long)h);
}

int vec_model_resolve(const struct cairn *h, char *dir, size_t n, char *err, size_t errlen)
{
    char models[4096];
    if (embed_reg_models_dir(cairn__setting(h, CAIRN__SET_MODEL_DIR), models, sizeof models) != 0)
        models[0] = '\0';
    return embed_reg_resolve(models, cairn__setting(h, CAIRN__SET_EMBED_MODEL), dir, n, err,
                             errlen);
}

struct vec_model *vec_model_current(const struct cairn *h, char *why, size_t whylen)
{
    const char *env = cairn__setting(h, CAIRN__SET_EMBED_MODEL);
    char dir[4096], err[512];
    struct vec_model *res = NULL;

    if (why && whylen)
        why[0] = '\0';
    if (env && (!strcmp(env, "none") || !strcmp(env, "off") || !strcmp(env, "0"))) {
        if (why)
            snprintf(why, whylen, "dense retrieval is off (CAIRN_EMBED_MODEL=%s)", env);
        return NULL;
    }
    if (vec_model_resolve(h, dir, sizeof dir, err, sizeof err) != 0) {
        if (why)   /* the registry's own "no embedding model installed" says it already */
            snprintf(why, whylen, "%s%s",
                     strncmp(err, "no embedding model", 18) ? "no embedding model: " : "", err);
        return NULL;
    }
    pthread_mutex_lock(&vm_lock);
    for (struct vec_model *o = vm_cur; o; o = o->prev)
        if (!strcmp(o->dir, dir)) {
            res = o;
            goto out;
        }
    if (!strcmp(vm_failed_dir, dir)) {
        if (why)
            snprintf(why, whylen, "the embedding model in %s did not load", dir);
        goto out;
    }
    struct vec_model *vm = calloc(1, sizeof *vm);
    if (!vm)
        goto out;
    snprintf(vm->dir, sizeof vm->dir, "%s", dir);
    vm->m = embed_load(dir, err, sizeof err);
    if (!vm->m) {
        snprintf(vm_failed_dir, sizeof vm_failed_dir, "%s", dir);
        if (why)
            snprintf(why, whylen, "the embedding model did not load: %s", err);
        free(vm);
        goto out;
    }
    vm->dim = embed_dim(vm->m);
    vm->max_tokens = embed_max_tokens(vm->m);
    model_identity(vm->m, dir, vm->id, sizeof vm->id);
    /* The previous model stays loaded: a caller may still hold it (the
     * variable changed mid-process, which only tests do, or a prepared
     * question's model that its recall did not use: cairn_prep); listed
     * behind this one, and found there when asked for again. */
    vm->prev = vm_cur;
    vm_cur = vm;
    res = vm;
out:
    pthread_mutex_unlock(&vm_lock);
    return res;
}

const char *vec_model_id(const struct vec_model *vm)
{
    return vm->id;
}

int vec_model_dim(const struct vec_model *vm)
{
    return vm->dim;
}

size_t vec_model_piece_bytes(const struct vec_model *vm)
{
    double b = vm->max_tokens * VEC_BYTES_PER_TOKEN;
    if (b < VEC_PIECE_MIN)
        b = VEC_PIECE_MIN;
    if (b > VEC_PIECE_MAX)
        b = VEC_PIECE_MAX;
    return (size_t)b;
}

/* Threads for the encoder: the setting embed.threads, else the cores (at
 * most 4). A batch is cut into one group of texts per thread; a single
 * text (a question) is split between a pool of threads the model keeps,
 * by heads and columns (src/embed/bert.c, forward_pooled), once its
 * weights are packed (from the process's second pass on). */
static int encoder_threads(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_EMBED_THREADS);
    /* default: the cores. Since the encoder splits a batch into one group
     * of whole texts per thread, 2 threads on the 2-core dev machine took
     * a backfill of 1,862 messages from 39.0 s to 22.6 s (before that
     * split, 2 threads were slower than 1). */
    long n = v && *v ? strtol(v, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > 4 ? 4 : (int)n;
}

/* The last question embedded: recall asks the same one at several
 * budgets (and `cairn eval` with several methods). */
static char  *lastq;
static size_t lastq_len;
static float *lastq_vec;
static const struct vec_model *lastq_model;

int vec_encode(const struct cairn *h, struct vec_model *vm, const char *const *texts,
               const size_t *lens, size_t n, int is_query, float *out)
{
    if (n == 1 && is_query) {
        int hit = 0;
        pthread_mutex_lock(&vm_lock);
        if (lastq && lastq_model == vm && lastq_len == lens[0] &&
            !memcmp(lastq, texts[0], lens[0])) {
            memcpy(out, lastq_vec, (size_t)vm->dim * sizeof *out);
            hit = 1;
        }
        pthread_mutex_unlock(&vm_lock);
        if (hit)
            return 0;
    }
    /* embed_encode wants NUL-terminated texts: copy them. */
    char **tmp = calloc(n ? n : 1, sizeof *tmp);
    int rc = -1;
    if (!tmp)
        return -1;
    for (size_t i = 0; i < n; i++) {
        tmp[i] = malloc(lens[i] + 1);
        if (!tmp[i])
            goto out;
        memcpy(tmp[i], texts[i], lens[i]);
        tmp[i][lens[i]] = '\0';
    }
    pthread_mutex_lock(&vm_lock);
    embed_set_threads(vm->m, encoder_threads(h));
    rc = embed_encode(vm->m, (const char *const *)tmp, n, is_query, out);
    if (rc == 0 && n == 1 && is_query) {
        float *nv = realloc(lastq_vec, (size_t)vm->dim * sizeof *nv);
        char *nq = malloc(lens[0] + 1);
        if (nv && nq) {
            memcpy(nv, out, (size_t)vm->dim * sizeof *nv);
            memcpy(nq, texts[0], lens[0]);
            free(lastq);
            lastq = nq;
            lastq_len = lens[0];
            lastq_vec = nv;
            lastq_model = vm;
        } else {
            free(nq);
            lastq_vec = nv ? nv : lastq_vec;
        }
    }
    pthread_mutex_unlock(&vm_lock);
out:
    for (size_t i = 0; i < n; i++)
        free(tmp[i]);
    free(tmp);
    return rc;
}

/* ---- pieces and quantisation --------------------------------------- */

/* Pieces embedded per message: the setting embed.max_pieces (1..16), else
 * VEC_DEFAULT_PIECES. Text past the last piece is matched by keywords only. */
static int max_pieces(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_EMBED_MAX_PIECES);
    long n = v && *v ? strtol(v, NULL, 10) : VEC_DEFAULT_PIECES;
    return n < 1 ? 1 : n > VEC_MAX_PIECES ? VEC_MAX_PIECES : (int)n;
}

int vec_pieces(const char *s, size_t len, size_t piece_bytes, size_t *off, size_t *plen,
               int max)
{
    size_t pos = 0;
    int k = 0;
    if (piece_bytes < 16)
        piece_bytes = 16;
    /* skip leading white space: a piece of blanks says nothing */
    while (pos < len && (s[pos] == ' ' || s[pos] == '\n' || s[pos] == '\t' || s[pos] == '\r'))
        pos++;
    while (pos < len && k < max) {
        size_t end = pos + piece_bytes;
        if (end >= len) {
            end = len;
        } else {
            /* the last line break in the second half, else the last
             * space, else a UTF-8 boundary */
            size_t cut = 0;
            for (size_t i = end; i > pos + piece_bytes / 2; i--) {
                if (s[i - 1] == '\n') {
                    cut = i;
                    break;
                }
            }
            for (size_t i = end; !cut && i > pos + piece_bytes / 2; i--) {
                if (s[i - 1] == ' ') {
                    cut = i;
                    break;
                }
            }
            if (!cut) {
                cut = end;
                while (cut > pos + 1 && ((unsigned char)s[cut] & 0xC0) == 0x80)
                    cut--;
            }
            end = cut;
        }
        off[k] = pos;
        plen[k] = end - pos;
        k++;
        pos = end;
        while (pos < len && (s[pos] == ' ' || s[pos] == '\n' || s[pos] == '\t' || s[pos] == '\r'))
            pos++;
    }
    return k;
}

void vec_quantize(const float *x, int dim, int8_t *q, float *scale)
{
    float mx = 0;
    for (int i = 0; i < dim; i++) {
        float a = fabsf(x[i]);
        if (a > mx && isfinite(a))
            mx = a;
    }
    if (mx <= 0) {
        memset(q, 0, (size_t)dim);
        *scale = 0;
        return;
    }
    float inv = 127.0f / mx;
    for (int i = 0; i < dim; i++) {
        float v = isfinite(x[i]) ? x[i] * inv : 0;
        long r = lrintf(v);
        q[i] = (int8_t)(r > 127 ? 127 : r < -127 ? -127 : r);
    }
    *scale = mx / 127.0f;
}

/* ---- per-connection state ------------------------------------------- */

struct vec_conn {
    sqlite3         *db;
    struct vec_conn *next;
    int              ingest_off;
    /* the cache */
    int              valid;
    int64_t          data_version, changes;
    struct vec_set   set;
    struct vec_set   near;       /* vec_set_near's, when set.by_index */
    /* set's sign sketch (vec_sketch_get), made at most once a set */
    struct vec_sketch sk;
    int              sk_tried;
    int              cache_wrote; /* set was just written to the cache file */
};

static pthread_mutex_t conn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vec_conn *conns;

static void set_release(struct vec_set *s)
{
    if (s->map) {
        munmap(s->map, s->map_len);
        close(s->fd);
    } else {
        free(s->msg);
        free(s->sess);
        free(s->v8);
        free(s->vf);
        free(s->inv_norm);
    }
    memset(s, 0, sizeof *s);
}

static void conn_destroy(void *p)
{
    struct vec_conn *c = p;
    pthread_mutex_lock(&conn_lock);
    for (struct vec_conn **pp = &conns; *pp; pp = &(*pp)->next) {
        if (*pp == c) {
            *pp = c->next;
            break;
        }
    }
    pthread_mutex_unlock(&conn_lock);
    set_release(&c->set);
    set_release(&c->near);
    vecsketch_release(&c->sk);
    free(c);
}

static void conn_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    sqlite3_result_null(ctx);
}

/* The state of h's connection, created on first use (NULL: no memory). */
static struct vec_conn *conn_get(struct cairn *h)
{
    struct vec_conn *c;
    pthread_mutex_lock(&conn_lock);
    for (c = conns; c; c = c->next)
        if (c->db == h->db)
            break;
    pthread_mutex_unlock(&conn_lock);
    if (c)
        return c;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->db = h->db;
    pthread_mutex_lock(&conn_lock);
    c->next = conns;
    conns = c;
    pthread_mutex_unlock(&conn_lock);
    /* On failure SQLite calls the destructor, which unlinks c. */
    if (sqlite3_create_function_v2(h->db, "cairn__vec_state", 0, SQLITE_UTF8, c, conn_fn, NULL,
                                   NULL, conn_destroy) != SQLITE_OK)
        return NULL;
    return c;
}

int vec_ingest_enabled(struct cairn *h)
{
    struct vec_conn *c = conn_get(h);
    return !c || !c->ingest_off;
}

int cairn_embed_at_ingest(struct cairn *h, int on)
{
    struct vec_conn *c;
    if (!h || !h->db)
        return CAIRN_ERROR;
    c = conn_get(h);
    if (!c)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    c->ingest_off = !on;
    return CAIRN_OK;
}

/* ---- the write path ------------------------------------------------- */

void vec_batch_free(struct vec_batch *b)
{
    free(b->first);
    free(b->v);
    b->first = NULL;
    b->v = NULL;
    b->n = 0;
    b->model[0] = '\0';
}

/* The pieces of text s: its opening (max pieces of pb bytes), then, when
 * sc is on, its sentences (vec_sent_cut) up to VEC_MAX_PIECES in all. */
static int msg_pieces(const char *s, size_t len, size_t pb, int max, const struct vec_sent *sc,
                      size_t *off, size_t *pl)
{
    if (!sc || !sc->on)
        return vec_pieces(s, len, pb, off, pl, max);
    if (sc->only) {
        int k = vec_sent_cut(s, len, pb, sc, off, pl, VEC_MAX_PIECES);
        return k ? k : vec_pieces(s, len, pb, off, pl, max);
    }
    int k = vec_pieces(s, len, pb, off, pl, max);
    return k + vec_sent_cut(s, len, pb, sc, off + k, pl + k, VEC_MAX_PIECES - k);
}

/* Embeds the pieces of the wanted messages into b (model vm); msgs: they
 * are messages, cut by embed.sentences too. */
static int batch_embed_with(struct cairn *h, struct vec_model *vm, const char *const *texts,
                            const size_t *lens, const unsigned char *want, size_t n, int msgs,
                            struct vec_batch *b)
{
    size_t pb = vec_model_piece_bytes(vm), total = 0;
    int mp = max_pieces(h);
    size_t off[VEC_MAX_PIECES], pl[VEC_MAX_PIECES];
    const char **pt = NULL;
    size_t *plens = NULL;
    struct vec_sent sc;
    int rc = CAIRN_OK;

    if (!msgs || vec_sent_parse(cairn__setting(h, CAIRN__SET_EMBED_SENTENCES), &sc))
        sc.on = 0;               /* a spec it does not know: the opening only */
    b->first = calloc(n + 1, sizeof *b->first);
    if (!b->first)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        b->first[i] = (int)total;
        if (want && !want[i])
            continue;
        total += (size_t)msg_pieces(texts[i], lens[i], pb, mp, &sc, off, pl);
    }
    b->first[n] = (int)total;
    b->n = n;
    b->dim = vm->dim;
    snprintf(b->model, sizeof b->model, "%s", vm->id);
    if (!total)
        return CAIRN_OK;
    b->v = malloc(total * (size_t)vm->dim * sizeof *b->v);
    pt = malloc(total * sizeof *pt);
    plens = malloc(total * sizeof *plens);
    if (!b->v || !pt || !plens)
        goto nomem;
    for (size_t i = 0, k = 0; i < n; i++) {
        if (want && !want[i])
            continue;
        int np = msg_pieces(texts[i], lens[i], pb, mp, &sc, off, pl);
        for (int j = 0; j < np; j++, k++) {
            pt[k] = texts[i] + off[j];
            plens[k] = pl[j];
        }
    }
    for (size_t k = 0; k < total; k += VEC_ENCODE_BATCH) {
        size_t m = total - k < VEC_ENCODE_BATCH ? total - k : VEC_ENCODE_BATCH;
        if (vec_encode(h, vm, pt + k, plens + k, m, 0, b->v + k * (size_t)vm->dim) != 0) {
            rc = cairn__err(h, CAIRN_ERROR, "embedding failed: %s", embed_errmsg(vm->m));
            goto fail;
        }
    }
    free(pt);
    free(plens);
    return CAIRN_OK;
nomem:
    rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
fail:
    free(pt);
    free(plens);
    vec_batch_free(b);
    return rc;
}

int vec_batch_embed(struct cairn *h, const char *const *texts, const size_t *lens,
                    const unsigned char *want, size_t n, int msgs, struct vec_batch *b)
{
    memset(b, 0, sizeof *b);
    if (!n || !vec_ingest_enabled(h))
        return CAIRN_OK;
    struct vec_model *vm = vec_model_current(h, NULL, 0);
    if (!vm)
        return CAIRN_OK;
    return batch_embed_with(h, vm, texts, lens, want, n, msgs, b);
}

int vec_batch_embed_model(struct cairn *h, struct vec_model *vm, const char *const *texts,
                          const size_t *lens, size_t n, struct vec_batch *b)
{
    memset(b, 0, sizeof *b);
    return n ? batch_embed_with(h, vm, texts, lens, NULL, n, 0, b) : CAIRN_OK;
}

static int use_f32(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_VEC_F32);
    return v && *v && strcmp(v, "0");
}

int vec_fill(struct cairn *h, struct vec_model *vm, const struct vec_fill *f, int64_t *made)
{
    int64_t ids[VEC_FILL_CHUNK], after = 0;
    char *texts[VEC_FILL_CHUNK] = { 0 };
    size_t lens[VEC_FILL_CHUNK], n = 0;
    struct vec_batch b = VEC_BATCH_INIT;
    int rc = CAIRN_OK;
    for (;;) {
        if ((rc = f->read(h, f->arg, vec_model_id(vm), after, VEC_FILL_CHUNK, ids, texts, lens,
                          &n)) || !n)
            break;
        after = ids[n - 1];
        if ((rc = vec_batch_embed_model(h, vm, (const char *const *)texts, lens, n, &b)) ||
            (rc = store_begin(h)))
            break;
        for (size_t i = 0; i < n && !rc; i++)
            rc = f->put(h, f->arg, ids[i], texts[i], lens[i], &b, i);
        if (rc) {
            store_rollback(h);
            break;
        }
        if ((rc = store_commit(h)))
            break;
        if (made)
            *made += (int64_t)n;
        vec_batch_free(&b);
        for (size_t i = 0; i < n; i++) {
            free(texts[i]);
            texts[i] = NULL;
        }
    }
    vec_batch_free(&b);
    for (size_t i = 0; i < VEC_FILL_CHUNK; i++)
        free(texts[i]);
    return rc;
}

int vec_batch_store(struct cairn *h, const struct vec_batch *b, size_t i, int64_t msg,
                    int64_t sess, sqlite3_stmt **ins)
{
    int rc;
    if (!b->v || i >= b->n || b->first[i] == b->first[i + 1])
        return CAIRN_OK;
    if (!*ins && (rc = store_prepare(h, "INSERT OR REPLACE INTO vectors(model, msg, piece, "
                                     "session, dim, scale, v) VALUES (?,?,?,?,?,?,?)", ins)))
        return rc;
    int f32 = use_f32(h);
    int8_t q[8192];
    if (b->dim > (int)sizeof q)
        return cairn__err(h, CAIRN_INVALID, "vector dimension %d too large", b->dim);
    for (int p = b->first[i]; p < b->first[i + 1]; p++) {
        const float *x = b->v + (size_t)p * (size_t)b->dim;
        float scale = 1;
        sqlite3_reset(*ins);
        sqlite3_bind_text(*ins, 1, b->model, -1, SQLITE_STATIC);
        sqlite3_bind_int64(*ins, 2, msg);
        sqlite3_bind_int(*ins, 3, p - b->first[i]);
        sqlite3_bind_int64(*ins, 4, sess);
        sqlite3_bind_int(*ins, 5, b->dim);
        if (f32) {
            sqlite3_bind_double(*ins, 6, 1.0);
            sqlite3_bind_blob(*ins, 7, x, b->dim * (int)sizeof(float), SQLITE_STATIC);
        } else {
            vec_quantize(x, b->dim, q, &scale);
            sqlite3_bind_double(*ins, 6, scale);
            sqlite3_bind_blob(*ins, 7, q, b->dim, SQLITE_STATIC);
        }
        int src = sqlite3_step(*ins);
        if (src != SQLITE_DONE)
            return cairn__sqlerr(h, src, "store vector");
    }
    return CAIRN_OK;
}

/* ---- reading -------------------------------------------------------- */

static int64_t query_int(struct cairn *h, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int64_t vec_stamp(struct cairn *h)
{
    /* a random stamp of -1 only costs one rebuild of the file */
    return query_int(h, "SELECT stamp FROM vec_stamp WHERE id = 1");
}

static void stamp_at_begin(struct cairn *h)
{
    h->vec_stamp = vec_stamp(h);
}

/* Vectors changed: the cache file beside the store is stale, and may hold
 * the vectors of text this transaction forgot or rewrote. A reader would
 * ignore it (its stamp no longer matches); removing it is what keeps
 * those vectors off the disk. */
static void stamp_at_commit(struct cairn *h)
{
    if (vec_stamp(h) != h->vec_stamp)
        veccache_remove(h);
}

int vec_watch_commits(struct cairn *h)
{
    static const struct store_tx_hook hook = { stamp_at_begin, stamp_at_commit };
    return store_tx_hook_add(h, &hook);
}

static int cache_on(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_VEC_CACHE);
    return !(v && !strcmp(v, "0"));
}

int vec_cache_where(struct cairn *h, char *path, size_t n, int64_t *stamp)
{
    if (h->pg || !cache_on(h) || (*stamp = vec_stamp(h)) == -1)
        return -1;
    /* a long-lived process (the MCP server, the web preview) that already
     * scanned this set has its pages mapped: reading them again is cheaper
     * than copying the file */
    struct vec_conn *c = conn_get(h);
    if (c && c->valid && c->set.map && c->set.populated && c->set.stamp == *stamp)
        return -1;
    return veccache_path(h, path, n);
}

/* Another model's id with vectors in the store, for recall's note. Two
 * range reads of the primary key: `model <> ?` walked the whole msg
 * index instead (13 ms on 192,804 vectors). */
static int other_model(struct cairn *h, const char *model, char *out, size_t n)
{
    static const char *const sql[] = { "SELECT model FROM vectors WHERE model < ? LIMIT 1",
                                       "SELECT model FROM vectors WHERE model > ? LIMIT 1" };
    out[0] = '\0';
    for (int i = 0; i < 2 && !out[0]; i++) {
        sqlite3_stmt *st;
        int rc = store_prepare(h, sql[i], &st);
        if (rc)
            return rc;
        sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_ROW) {
            const unsigned char *t = sqlite3_column_text(st, 0);
            snprintf(out, n, "%s", t ? (const char *)t : "");
        }
        sqlite3_finalize(st);
    }
    return CAIRN_OK;
}

/* Room for cap pieces in every array of s. */
static int set_grow(struct vec_set *s, size_t cap)
{
    int64_t *nm = realloc(s->msg, cap * sizeof *nm);
    if (nm)
        s->msg = nm;
    int64_t *ns = realloc(s->sess, cap * sizeof *ns);
    if (ns)
        s->sess = ns;
    float *ni = realloc(s->inv_norm, cap * sizeof *ni);
    if (ni)
        s->inv_norm = ni;
    void *nv = s->f32 ? realloc(s->vf, cap * (size_t)s->dim * sizeof(float))
                      : realloc(s->v8, cap * (size_t)s->dim);
    if (nv) {
        if (s->f32)
            s->vf = nv;
        else
            s->v8 = nv;
    }
    return nm && ns && ni && nv ? 0 : -1;
}

/* One stored piece into s (rows come in (msg, piece) order): its vector
 * copied and its inverse norm computed. 0, 1 for a row skipped (damaged,
 * or of the other format than the set's first), -1 out of memory. */
struct set_fill {
    struct vec_set *s;
    size_t          cap;
    int64_t         last;
};

static int set_add(void *arg, int64_t m, int64_t sess, const void *blob, int bytes)
{
    struct set_fill *f = arg;
    struct vec_set *s = f->s;
    int dim = s->dim, is_f32 = bytes == dim * (int)sizeof(float);
    double nn = 0;
    if (!blob || (bytes != dim && !is_f32))
        return 1;                             /* damaged row: skipped */
    if (s->n == 0)
        s->f32 = is_f32;
    if (is_f32 != s->f32)
        return 1;                             /* mixed formats: keep the first */
    if (s->n == f->cap) {
        f->cap = f->cap ? f->cap * 2 : 1024;
        if (set_grow(s, f->cap))
            return -1;
    }
    s->msg[s->n] = m;
    s->sess[s->n] = sess;
    if (s->f32) {
        float *d = s->vf + s->n * (size_t)dim;
        memcpy(d, blob, (size_t)bytes);
        for (int i = 0; i < dim; i++)
            nn += (double)d[i] * d[i];
    } else {
        /* in int32, which the compiler vectorises: 127^2 x 8192 fits */
        const int8_t *d = blob;
        int32_t sq = 0;
        memcpy(s->v8 + s->n * (size_t)dim, d, (size_t)dim);
        for (int i = 0; i < dim; i++)
            sq += (int32_t)d[i] * d[i];
        nn = sq;
    }
    s->inv_norm[s->n] = nn > 0 ? (float)(1.0 / sqrt(nn)) : 0;
    s->msgs_with += m != f->last;
    f->last = m;
    s->n++;
    return 0;
}

/* A server store's vectors (store/pg_read.c): the same rows, in the same
 * order (a message's id is its seq, the pushing store's order), so the
 * dense scan ranks them as it does on that store. Read once a handle: a
 * server handle writes nothing, and sees what it loaded at open. */
static int set_load_server(struct cairn *h, const char *model, int dim, struct vec_set *s)
{
    struct set_fill f = { s, 0, -1 };
    const char *mode = cairn__setting(h, CAIRN__SET_PG_DENSE);
    int rc, has = 0;
    s->stamp = -1;                            /* never a cache file */
    /* "index": pgvector's HNSW on the server, when it has one for dim;
     * without it (no pgvector, an older server) the exact scan below */
    if (mode && !strcmp(mode, "index")) {
        if ((rc = pg_vector_index(h, dim, &has)))
            return rc;
        if (has) {
            s->by_index = 1;
            return pg_vector_count(h, model, dim, &s->msgs_with, s->other, sizeof s->other);
        }
    }
    return pg_vectors(h, model, dim, set_add, &f, s->other, sizeof s->other);
}

int vec_set_near(struct cairn *h, const struct vec_set *set, const float *q, int k,
                 const int64_t *allowed, int n_allowed, const struct vec_set **out)
{
    struct vec_conn *c;
    *out = set;
    if (!set->by_index)
        return CAIRN_OK;
    if (!(c = conn_get(h)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    struct vec_set *s = &c->near;
    struct set_fill f = { s, 0, -1 };
    set_release(s);
    snprintf(s->model, sizeof s->model, "%s", set->model);
    s->dim = set->dim;
    int rc = pg_vectors_near(h, set->model, set->dim, q, k, allowed, n_allowed, set_add, &f);
    if (rc) {
        set_release(s);
        return rc;
    }
    *out = s;
    return CAIRN_OK;
}

/* The model's rows into s, in one scan in (msg, piece) order, with the
 * stamp read in the same read transaction so a cache file written from s
 * holds exactly the vectors of that stamp. */
static int set_load(struct cairn *h, const char *model, int dim, struct vec_set *s)
{
    sqlite3_stmt *st = NULL;
    int rc = CAIRN_OK, src, own_tx = sqlite3_get_autocommit(h->db);
    struct set_fill f = { s, 0, -1 };

    if (h->pg)
        return set_load_server(h, model, dim, s);
    if (own_tx && sqlite3_exec(h->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        own_tx = 0;                            /* then without: the stamp is a hint */
    s->stamp = vec_stamp(h);
    if ((rc = store_prepare(h, "SELECT msg, session, v FROM vectors WHERE model = ? "
                            "AND dim = ? ORDER BY msg, piece", &st)))
        goto out;
    sqlite3_bind_text(st, 1, model, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 2, dim);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        if (set_add(&f, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
                    sqlite3_column_blob(st, 2), sqlite3_column_bytes(st, 2)) < 0) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
    }
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "read vectors");
        goto out;
    }
    rc = other_model(h, model, s->other, sizeof s->other);
out:
    sqlite3_finalize(st);
    if (own_tx)
        sqlite3_exec(h->db, "COMMIT", NULL, NULL, NULL);
    return rc;
}

/* Whether the file is worth writing for a set just read out of SQLite:
 * not while the vectors are still changing (a backfill commits every few
 * seconds for an hour, and each commit would make the file stale), unless
 * the caller knows they are done (force). */
static int cache_worth(struct cairn *h, const struct vec_set *s, int force)
{
    if (s->stamp == -1 || s->n < VEC_CACHE_MIN || !cache_on(h))
        return 0;
    if (force)
        return 1;
    int64_t at = query_int(h, "SELECT changed_at FROM vec_stamp WHERE id = 1");
    return at >= 0 && (int64_t)time(NULL) - at >= VEC_CACHE_SETTLE_S;
}

static int set_get(struct cairn *h, const char *model, int dim, int force,
                   const struct vec_set **out)
{
    struct vec_conn *c = conn_get(h);
    struct vec_set *s;
    int rc = CAIRN_OK;
    *out = NULL;
    if (!c)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    s = &c->set;
    int64_t dv = query_int(h, "PRAGMA data_version");
    int64_t ch = sqlite3_total_changes64(h->db);
    int same = c->valid && s->dim == dim && !strcmp(s->model, model);
    if (same && c->data_version == dv && c->changes == ch) {
        *out = s;
        return CAIRN_OK;
    }
    /* a server store's messages are on the server: its sessions' counts;
     * a local store's one row of totals (schema 14, kept by triggers as
     * recall's IDF reads it): count(*) walked every message's row, ~1.1 ms
     * of CPU a hybrid hook at 98,060 messages (hyb55b) */
    int64_t stamp = h->pg ? -1 : vec_stamp(h),
            total = query_int(h, h->pg ? "SELECT coalesce(sum(n), 0) FROM session_stats"
                                       : "SELECT n FROM store_totals");
    if (!(same && stamp != -1 && s->stamp == stamp)) {
        /* the vectors changed (or are not loaded): the file, else SQLite */
        c->valid = 0;
        set_release(s);
        vecsketch_release(&c->sk);
        c->sk_tried = c->cache_wrote = 0;
        if (stamp == -1 || !cache_on(h) || veccache_open(h, model, dim, stamp, s) != 0) {
            snprintf(s->model, sizeof s->model, "%s", model);
            s->dim = dim;
            if ((rc = set_load(h, model, dim, s))) {
                set_release(s);
                return rc;
            }
            if (cache_worth(h, s, force) && veccache_write(h, s) == 0) {
                if (vec_stamp(h) != s->stamp)
                    /* a writer committed while it was built: it may hold
                     * vectors the writer just deleted (tx.c removes the file
                     * only after its commit, which came first) */
                    veccache_remove(h);
                else
                    c->cache_wrote = 1;
            }
        }
    }
    s->msgs_total = total;
    c->valid = 1;
    c->data_version = dv;
    c->changes = ch;
    *out = s;
    return CAIRN_OK;
}

int vec_set_get(struct cairn *h, const char *model, int dim, const struct vec_set **out)
{
    return set_get(h, model, dim, 0, out);
}

int vec_sketch_get(struct cairn *h, const struct vec_set *set, const struct vec_sketch **out)
{
    struct vec_conn *c = conn_get(h);
    *out = NULL;
    if (!c)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (set != &c->set || !set->n || set->by_index)
        return CAIRN_OK;
    if (!c->sk_tried) {
        c->sk_tried = 1;
        /* the file only stands beside a cache file of the same set: a set
         * read out of SQLite without one may be changing (cache_worth) */
        int beside = set->map || c->cache_wrote;
        if (!(beside && cache_on(h) && vecsketch_open(h, set, &c->sk) == 0)) {
            if (vecsketch_build(set, &c->sk) != 0)
                return cairn__err(h, CAIRN_NOMEM, "out of memory");
            if (beside && cache_on(h) && vecsketch_write(h, set, &c->sk) == 0 &&
                vec_stamp(h) != set->stamp)
                veccache_remove(h);      /* as set_get: a writer came between */
        }
    }
    *out = c->sk.n ? &c->sk : NULL;
    return CAIRN_OK;
}

/* ---- backfill and reindex ------------------------------------------ */

int cairn_embed_backfill(struct cairn *h, int reindex,
                         void (*progress)(void *arg, uint64_t done, uint64_t total), void *arg,
                         struct cairn_embed_stats *stats)
{
    char why[600];
    sqlite3_stmt *sel = NULL, *ins = NULL;
    int rc = CAIRN_OK, src;
    int64_t *rows = NULL, *sess = NULL;
    char **texts = NULL;
    size_t *lens = NULL;
    struct vec_batch b = VEC_BATCH_INIT;
    struct timespec t0, t1;
    uint64_t total = 0, done = 0;

    if (!h || !h->db)
        return CAIRN_ERROR;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct vec_model *vm = vec_model_current(h, why, sizeof why);
    if (!vm)
        return cairn__err(h, CAIRN_NOTFOUND, "%s", why);
    if (stats)
        snprintf(stats->model, sizeof stats->model, "%s", vm->id);
    if (reindex) {
        /* Every vector goes, this model's included, the memories' too:
         * they are all made again below. */
        if ((rc = store_begin(h)))
            return rc;
        src = sqlite3_exec(h->db, "DELETE FROM vectors; DELETE FROM memory_vectors", NULL, NULL,
                           NULL);
        if (src != SQLITE_OK) {
            rc = cairn__sqlerr(h, src, "reindex");
            store_rollback(h);
            return rc;
        }
        if ((rc = store_commit(h)))
            return rc;
    }
    {
        sqlite3_stmt *cnt;
        if ((rc = store_prepare(h, "SELECT count(*) FROM messages m WHERE NOT EXISTS "
                                "(SELECT 1 FROM vectors v WHERE v.model = ?1 AND v.msg = m.id)",
                                &cnt)))
            return rc;
        sqlite3_bind_text(cnt, 1, vm->id, -1, SQLITE_STATIC);
        if (sqlite3_step(cnt) == SQLITE_ROW)
            total = (uint64_t)sqlite3_column_int64(cnt, 0);
        sqlite3_finalize(cnt);
    }
    if (progress)
        progress(arg, 0, total);
    rows = malloc(VEC_BACKFILL_CHUNK * sizeof *rows);
    sess = malloc(VEC_BACKFILL_CHUNK * sizeof *sess);
    texts = calloc(VEC_BACKFILL_CHUNK, sizeof *texts);
    lens = malloc(VEC_BACKFILL_CHUNK * sizeof *lens);
    if (!rows || !sess || !texts || !lens) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    int64_t after = 0;
    for (;;) {
        /* Read a chunk (no lock held while embedding it). Messages are
         * walked by id, so each is looked at once even if it has no
         * text to embed. */
        size_t n = 0;
        if ((rc = store_prepare(h, "SELECT m.id, m.session, m.content FROM messages m "
                                "WHERE m.id > ?2 AND NOT EXISTS (SELECT 1 FROM vectors v "
                                "WHERE v.model = ?1 AND v.msg = m.id) ORDER BY m.id LIMIT ?3",
                                &sel)))
            goto out;
        sqlite3_bind_text(sel, 1, vm->id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(sel, 2, after);
        sqlite3_bind_int(sel, 3, VEC_BACKFILL_CHUNK);
        while ((src = sqlite3_step(sel)) == SQLITE_ROW) {
            const char *t = (const char *)sqlite3_column_text(sel, 2);
            size_t len = (size_t)sqlite3_column_bytes(sel, 2);
            rows[n] = sqlite3_column_int64(sel, 0);
            sess[n] = sqlite3_column_int64(sel, 1);
            texts[n] = malloc(len + 1);
            if (!texts[n]) {
                rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
                goto out;
            }
            memcpy(texts[n], t ? t : "", len);
            texts[n][len] = '\0';
            lens[n] = len;
            n++;
        }
        sqlite3_finalize(sel);
        sel = NULL;
        if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "backfill read");
            goto out;
        }
        if (!n)
            break;
        after = rows[n - 1];
        if ((rc = batch_embed_with(h, vm, (const char *const *)texts, lens, NULL, n, 1, &b)))
            goto out;
        if ((rc = store_begin(h)))
            goto out;
        for (size_t i = 0; i < n && !rc; i++) {
            /* the message may have gone meanwhile: only store if it is there */
            sqlite3_stmt *chk;
            if ((rc = store_prepare(h, "SELECT 1 FROM messages WHERE id = ?", &chk)))
                break;
            sqlite3_bind_int64(chk, 1, rows[i]);
            int there = sqlite3_step(chk) == SQLITE_ROW;
            sqlite3_finalize(chk);
            if (there)
                rc = vec_batch_store(h, &b, i, rows[i], sess[i], &ins);
            if (stats && there) {
                stats->messages++;
                stats->pieces += (size_t)(b.first[i + 1] - b.first[i]);
            }
        }
        sqlite3_finalize(ins);
        ins = NULL;
        if (rc) {
            store_rollback(h);
            goto out;
        }
        if ((rc = store_commit(h)))
            goto out;
        vec_batch_free(&b);
        for (size_t i = 0; i < n; i++) {
            free(texts[i]);
            texts[i] = NULL;
        }
        done += n;
        if (progress)
            progress(arg, done > total ? total : done, total);
    }
    /* Then the memories' (store/memory_vec.c): few, after the messages;
     * and the note sections' a hook's re-index left without one
     * (store/vault_vec.c: hooks do not embed) */
    int64_t secs = 0;
    if ((rc = memory_vec_backfill(h, vm)) || (rc = store_vault_vec_fill_model(h, vm, &secs)))
        goto out;
    /* Done: the cache file now, so the next hook maps it instead of
     * reading every vector (a failure here only costs that hook). */
    {
        const struct vec_set *set;
        const struct vec_sketch *sk;
        if (set_get(h, vm->id, vm->dim, 1, &set) == CAIRN_OK)
            vec_sketch_get(h, set, &sk);    /* and its sketch (dense.c) */
    }
out:
    if (sel)
        sqlite3_finalize(sel);
    sqlite3_finalize(ins);
    vec_batch_free(&b);
    if (texts)
        for (size_t i = 0; i < VEC_BACKFILL_CHUNK; i++)
            free(texts[i]);
    free(texts);
    free(rows);
    free(sess);
    free(lens);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (stats)
        stats->seconds += (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}
