/*
 * vectors.h: dense vectors in the store (schema version 4) and the
 * encoder that makes them, as the write path and recall see them.
 *
 * One row of `vectors` per piece of a message and model: long messages
 * are cut into pieces that fit the model's input (vec_pieces), each
 * embedded on its own. Rows carry the model id (the model's name and a
 * hash of its files), so vectors of two models are never compared: a
 * search only ever reads the rows of the current model.
 *
 * The handle's setting embed.model (the CLI's CAIRN_EMBED_MODEL) names
 * the model, NAME|PATH; "none" (or "off") turns dense retrieval off, and
 * without it the first installed model of the registry (the registry
 * default first) is used. The loaded model is kept once per process and
 * shared by every handle that names it, behind a mutex.
 *
 * Storage: int8 with one float scale per vector (x ~ scale * q), 4x
 * smaller than f32; the setting vec.f32 "1" stores f32 instead (for measuring
 * what int8 costs: docs/HYBRID.md). Readers accept both.
 */
#ifndef CAIRN_STORE_VECTORS_H
#define CAIRN_STORE_VECTORS_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

#define VEC_MAX_PIECES 16        /* a message's text past 16 pieces is never embedded */
/* Pieces embedded per message unless the setting embed.max_pieces says: one, the
 * opening ~128 tokens. Measured on BEAM dev (use-lite-en, docs/HYBRID.md
 * "Pieces per message"): 16 pieces made loading several times slower for
 * no consistent recall gain, so what `cairn add` ships is what `cairn
 * eval` measures. */
#define VEC_DEFAULT_PIECES 1
#define VEC_MODEL_ID_MAX 160

struct vec_model;

/* The folder of the model h's settings name (embed.model, else the first
 * installed in embed.model_dir): 0, or -1 with a message in err. */
int vec_model_resolve(const struct cairn *h, char *dir, size_t n, char *err, size_t errlen);
/*
 * The current model of h's settings (loading it on first use: one loaded
 * model is shared by the process), or NULL when dense retrieval is off or
 * no model can be loaded; then `why` (may be NULL) says which, for
 * recall's note. Never fails otherwise.
 */
struct vec_model *vec_model_current(const struct cairn *h, char *why, size_t whylen);
const char *vec_model_id(const struct vec_model *vm);
int vec_model_dim(const struct vec_model *vm);
/* Bytes of text per piece for this model. */
size_t vec_model_piece_bytes(const struct vec_model *vm);
/* Encodes n texts (lengths given; not NUL-terminated) into out[n][dim],
 * unit vectors. Thread-safe (one encode at a time). 0 or -1. */
int vec_encode(const struct cairn *h, struct vec_model *vm, const char *const *texts,
               const size_t *lens, size_t n, int is_query, float *out);

/* Cuts text into at most max pieces of about piece_bytes each, at a line
 * or word boundary when there is one, never inside a UTF-8 sequence.
 * Writes offsets and lengths; returns the count (0 for empty text). */
int vec_pieces(const char *s, size_t len, size_t piece_bytes, size_t *off, size_t *plen,
               int max);

/* A message's sentences as pieces of their own, after its whole-text
 * pieces (issue 16, multi-hop; vec_sent.c): the setting embed.sentences
 * (CAIRN_EMBED_SENTENCES), off unless set; an experiment, measured on LoCoMo
 * dev (docs/ARCHITECTURE.md, "Multi-hop: a vector per sentence"). Its spec,
 * comma-separated: "on"; "group=N" sentences a piece (1); "words=N" as many
 * sentences as reach N words instead; "overlap" pieces step by one
 * sentence; "min=N" a sentence of fewer words joins the next; "long=N" only
 * messages of N words or more; "only" the sentences replace the whole-text
 * piece (a message of one sentence keeps it). Recall reads the pieces as
 * any others: a message's best piece is its dense score (recall/dense.c). */
struct vec_sent {
    int on, only, overlap;
    int group, words, min_words, long_words;
};
/* 0, or -1 for a spec it does not know (c is then off). */
int vec_sent_parse(const char *spec, struct vec_sent *c);
/* The sentence pieces of s[0, len) by c, each at most piece_bytes: offsets
 * and lengths, at most max; 0 when off, for a text of one sentence (after
 * the short ones are joined), or one that is not long enough. */
int vec_sent_cut(const char *s, size_t len, size_t piece_bytes, const struct vec_sent *c,
                 size_t *off, size_t *plen, int max);

/* x[dim] -> q[dim] with x ~ scale * q; scale 0 for a zero vector. */
void vec_quantize(const float *x, int dim, int8_t *q, float *scale);

/* ---- the write path ----------------------------------------------- */

/* Vectors computed before the write lock, stored inside it. */
struct vec_batch {
    char    model[VEC_MODEL_ID_MAX];
    int     dim;
    size_t  n;                   /* messages */
    int    *first;               /* [n + 1]: pieces of message i are first[i]..first[i+1]-1 */
    float  *v;                   /* [pieces][dim] */
};
#define VEC_BATCH_INIT { "", 0, 0, NULL, NULL }

/* Embeds the messages with want[i] != 0 (want may be NULL: all) with
 * the current model; msgs: they are messages (embed.sentences applies),
 * else rows kept beside them (memories: their first piece is read). Without
 * a model, or when embedding is off for this handle, leaves b empty and
 * returns CAIRN_OK. CAIRN_NOMEM / CAIRN_ERROR with the handle's message on
 * failure. */
int vec_batch_embed(struct cairn *h, const char *const *texts, const size_t *lens,
                    const unsigned char *want, size_t n, int msgs, struct vec_batch *b);
/* The same with model vm, whatever the handle's ingest setting (backfill). */
int vec_batch_embed_model(struct cairn *h, struct vec_model *vm, const char *const *texts,
                          const size_t *lens, size_t n, struct vec_batch *b);
/* Inside the caller's transaction: writes message i's pieces for message
 * row msg of session row sess. *ins caches the statement (finalize it). */
int vec_batch_store(struct cairn *h, const struct vec_batch *b, size_t i, int64_t msg,
                    int64_t sess, sqlite3_stmt **ins);
void vec_batch_free(struct vec_batch *b);

/* The chunked fill of the vectors kept beside rows (memories, note
 * sections): read gives at most max ids after `after` with the texts to
 * embed (malloc'd; *n of them, 0 when done), the chunk is embedded with
 * model vm and no lock held, then put stores item i of the batch, all of
 * one chunk in one transaction. *made (may be NULL) counts the items. */
#define VEC_FILL_CHUNK 64
struct vec_fill {
    int (*read)(struct cairn *h, void *arg, const char *model, int64_t after, int max,
                int64_t *ids, char **texts, size_t *lens, size_t *n);
    int (*put)(struct cairn *h, void *arg, int64_t id, const char *text, size_t len,
               const struct vec_batch *b, size_t i);
    void *arg;
};
int vec_fill(struct cairn *h, struct vec_model *vm, const struct vec_fill *f, int64_t *made);

/* 0 when cairn_embed_at_ingest(h, 0) was called on this handle. */
int vec_ingest_enabled(struct cairn *h);

/* ---- reading: every vector of one model, cached per connection ---- */

struct vec_set {
    char           model[VEC_MODEL_ID_MAX];
    int            dim;
    int            f32;          /* 1: vf holds the vectors, else v8 */
    size_t         n;            /* pieces */
    int64_t       *msg, *sess;   /* [n] */
    int8_t        *v8;           /* [n][dim] */
    float         *vf;           /* [n][dim] */
    float         *inv_norm;     /* [n]: 1 / |stored vector| */
    int64_t        msgs_with;    /* distinct messages that have vectors */
    int64_t        msgs_total;   /* messages in the store */
    char           other[VEC_MODEL_ID_MAX]; /* a model with vectors that is not
                                               this one ("" if none) */
    int64_t        stamp;        /* vec_stamp the set was read at */
    int            by_index;     /* a server store searched by its HNSW index
                                    (pg.dense "index"): the set holds the
                                    counts only; vec_set_near per question */
    void          *map;          /* the cache file's mapping (the arrays point
                                    into it), or NULL: they are malloc'd */
    size_t         map_len;
    int            fd;           /* with map: the file, open (veccache_read) */
    int            populated;    /* veccache_populate ran on the mapping */
};

/* The vectors of model (dim) in h's store, cached on the connection.
 * When the store changed (PRAGMA data_version, this connection's change
 * count) but the vectors did not (vec_stamp), only msgs_total is read
 * again; when they did, the set comes from the cache file if it is valid,
 * else from one scan of SQLite, which then writes the file for the next
 * process. The set lives until the next call on the connection or its
 * close. The setting vec.cache "0" never reads or writes the file. */
int vec_set_get(struct cairn *h, const char *model, int dim, const struct vec_set **out);

/* When set->by_index: the k pieces nearest q by the server's index, of the
 * sessions allowed[n] (sorted local ids; NULL: all), as a set of the same
 * model to scan exactly (store/pg_read.c); else *out is set itself. Lives
 * as long as the set. */
int vec_set_near(struct cairn *h, const struct vec_set *set, const float *q, int k,
                 const int64_t *allowed, int n_allowed, const struct vec_set **out);

/* The store's vector stamp (schema version 5), or -1 when there is none
 * (an older schema, mid-migration). Sets no error. */
int64_t vec_stamp(struct cairn *h);
/* The cache file's path and the stamp a file there must have to be read
 * (set_get's rules: not a server store, the setting vec.cache not "0", a
 * stamp): 0, or -1 when no file would be read or when h's set of that
 * stamp is mapped and populated already (a process's second question). */
int vec_cache_where(struct cairn *h, char *path, size_t n, int64_t *stamp);
/* Registers on h the transaction hook that removes the cache file when a
 * transaction changed the vectors (cairn_open calls it). */
int vec_watch_commits(struct cairn *h);

/* ---- the cache file (veccache.c) ------------------------------------ */

/* STORE-vec, the file beside the store; -1 for a store without a file. */
int  veccache_path(struct cairn *h, char *out, size_t n);
/* Maps the file into s when it is whole and of this model, dim and stamp;
 * else -1 and s is untouched. */
int  veccache_open(struct cairn *h, const char *model, int dim, int64_t stamp,
                   struct vec_set *s);
/* veccache_open of the file at path p (veccache_path's), for a thread that
 * must not touch the connection (recall/dense.c, dense_pre). */
int  veccache_open_at(const char *p, const char *model, int dim, int64_t stamp,
                      struct vec_set *s);
/* Unmaps and closes a set veccache_open_at mapped (set_get's own sets go
 * with their connection). */
void veccache_close(struct vec_set *s);
/* Whether two mapped sets are the same file (device and inode) of the same
 * model, dimension, stamp and size: the same pieces in the same order. */
int  veccache_same_file(const struct vec_set *a, const struct vec_set *b);
/* Copies the count vectors from index `from` of a mapped int8 set into
 * out[count][dim] by pread, through no mapping: on a paravirtualised host
 * the 4 KB pages of a 52 MB mapping cost a process 20-40 ms to map, a
 * 128 KB buffer read again and again costs only the copy (issue 16,
 * hyb53). 0, or -1 (not such a set, or the read failed). */
int  veccache_read_run(const struct vec_set *s, size_t from, size_t count, int8_t *out);
/* Entries from..from+count of the pieces' rows, msg[n] then sess[n] as
 * one array of 2n, into out by pread (no page of the mapping touched:
 * the hook's selection then reads them from the heap, hyb55b). 0 or -1. */
int  veccache_read_ids(const struct vec_set *s, size_t from, size_t count, int64_t *out);
/* Writes s (s->stamp) atomically: temporary file, fsync, rename. 0 or -1. */
int  veccache_write(struct cairn *h, const struct vec_set *s);
/* Removes the cache file and the sketch file (and writers' temporaries). */
void veccache_remove(struct cairn *h);
/* Faults in every page of a mapped set at once (a full scan reads them
 * all; one call fills the page tables faster than faults): the mapping is
 * made without, so a two-stage scan reads only the pages it rescores. */
void veccache_populate(const struct vec_set *s);   /* once a set */
/* Copies the count stored vectors (dim bytes each, int8 sets) whose
 * indexes are idx[count] into out[count][dim]: from a mapped set by
 * pread, which maps no page (a fault maps up to 16 around the one
 * touched: 2,000 vectors scattered over 98,060 touched most of the file),
 * else from memory. */
void veccache_read(const struct vec_set *s, const int64_t *idx, size_t count, int8_t *out);

/* ---- the sign sketch (veccache.c, STORE-vsk; issue 16, hyb52) -------
 *
 * One bit a dimension a vector: whether the unit vector's value is above
 * that dimension's mean over the set (mu), with each dimension's mean
 * absolute distance from it (sigma): q . (v - mu) ~ sum q_i sigma_i s_i,
 * s_i = +-1. 64 bytes a 512-d vector, 1/8 of the int8 cache, read whole
 * by a two-stage scan (recall/dense.c) that then scores exactly only the
 * vectors whose sketches score best. Derived from the set, like the cache
 * file: keyed by its model, dimension, count and stamp. */
struct vec_sketch {
    int             dim, words;  /* words: 64-bit words a vector, (dim + 63) / 64 */
    size_t          n;
    const float    *mu, *sigma;  /* [dim] */
    const uint64_t *bits;        /* [n][words]: bit d of vector i is word d / 64,
                                    bit d % 64; bits past dim are 0 */
    void           *map;         /* the file's mapping, or NULL */
    size_t          map_len;
    void           *mem;         /* else the malloc'd block */
};

/* The sketch of s, computed (three passes over its vectors). 0 or -1 (no
 * memory). */
int  vecsketch_build(const struct vec_set *s, struct vec_sketch *k);
/* Maps STORE-vsk into k when it is whole and of s's model, dim, count and
 * stamp; else -1 and k is untouched. */
int  vecsketch_open(struct cairn *h, const struct vec_set *s, struct vec_sketch *k);
/* Writes k for s atomically, as veccache_write. 0 or -1. */
int  vecsketch_write(struct cairn *h, const struct vec_set *s, const struct vec_sketch *k);
void vecsketch_release(struct vec_sketch *k);
/* The sketch of h's current set (set must be vec_set_get's), from the
 * file, else built and, when the set's cache file stands for it, written
 * beside it; kept with the set. *out NULL when the set has none (a server
 * store's index, an empty set). CAIRN_OK or CAIRN_NOMEM. */
int  vec_sketch_get(struct cairn *h, const struct vec_set *set, const struct vec_sketch **out);

#endif
