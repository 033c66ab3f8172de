/*
 * bert.c: loading a BERT-family model folder and the forward pass
 * (the interface and the folder layout are in embed.h).
 *
 * Forward pass over a padded batch of T = batch*seq token rows, hidden H,
 * intermediate I (post-LayerNorm BERT, as HF's BertModel):
 *
 *   x[T][H]   = LN(word[id] + pos[offset + i] + type[0])
 *   per layer:
 *     q,k,v[T][H] = x Wq^T + bq, ...              3 sgemm
 *     ctx[T][H]   = attention(q, k, v, lens)      per sequence and head
 *     x           = LN(ctx Wo^T + bo + x)         1 sgemm
 *     f[T][I]     = gelu(x Wi^T + bi)             1 sgemm
 *     x           = LN(f Wo2^T + bo2 + x)         1 sgemm
 *   out[batch][H] = normalise(pool(x, lens))      mean or CLS
 *
 * Padding rows go through the per-token layers (cheap: texts are sorted
 * by length and cut into batches of similar lengths first, so little is
 * padding) but never into attention or pooling, so a text's vector does
 * not depend on what it was batched with. With several threads a batch
 * is cut into per-thread shares of whole sequences (embed_forward_ids).
 */
#include "embed/embed.h"

#include "embed/kernels.h"
#include "embed/packcache.h"
#include "embed/pool.h"
#include "embed/safetensors.h"
#include "embed/tokenizer.h"
#include "embed/use.h"
#include "util/buf.h"
#include "util/os.h"
#include "embed/common.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define EMBED_MAX_CONFIG     ((size_t)1 << 20)   /* config files are tiny */
#define EMBED_BATCH_SEQS     32                  /* texts per forward pass */
#define EMBED_BATCH_TOKENS   4096                /* padded tokens per pass */
#define EMBED_CHUNK_TEXTS    256                 /* texts tokenized at once */
#define EMBED_PREFIX_MAX     64

enum { ACT_GELU, ACT_GELU_TANH, ACT_RELU };
enum { POOL_MEAN, POOL_CLS };

struct embed_layer {
    const float *wq, *bq;          /* [H][H], [H] */
    const float *wk, *bk;          /* [H][H], [H] */
    const float *wv, *bv;          /* [H][H], [H] */
    const float *wo, *bo;          /* [H][H], [H]  attention output */
    const float *ln1_g, *ln1_b;    /* [H] */
    const float *wi, *bi;          /* [I][H], [I]  FFN up */
    const float *wo2, *bo2;        /* [H][I], [H]  FFN down */
    const float *ln2_g, *ln2_b;    /* [H] */
    /* the six weights packed for embed_k_linear_packed, once a batch
     * needs them (pack_layers); NULL before, or when packing does not pay */
    struct embed_k_packed *pq, *pk, *pv, *po, *pi, *po2;
};

struct embed_model {
    struct use_model     *use;                /* USE-lite (use.h), or NULL */
    struct embed_st_file *st;                 /* the mapped weights */
    struct embed_tok     *tok;
    int    hidden, layers, heads, inter;      /* H, L, heads, I */
    int    max_pos, type_vocab, vocab;        /* table rows */
    int    pos_offset;                        /* 0; pad+1 for RoBERTa */
    int    max_tokens;                        /* truncation, specials included */
    float  eps;
    int    act;                               /* ACT_* */
    int    pooling;                           /* POOL_* */
    int    normalize;
    int    threads;
    int    pack_tried;                        /* pack_layers has run, or the file mapped */
    int    packed_from;                       /* embed_packed_from */
    struct embed_pc *pc;                      /* the mapped pre-packed file, or NULL */
    struct embed_pc_source src;               /* model.safetensors' size and mtime */
    char   dir[PATH_MAX];                     /* the model folder (the packed file's) */
    int    queries;                           /* passes of <= EMBED_QUERY_ROWS before */
    int    int8;                              /* the linear layers in int8 (embed_int8) */
    struct embed_pool *pool;                  /* threads for one pass (forward_pooled) */
    const struct embed_st_tensor *word;       /* [vocab][H], any float dtype */
    const float *word_f32;                    /* word data if aligned F32, else NULL */
    const float *pos;                         /* [max_pos][H] */
    const float *type;                        /* [type_vocab][H] */
    const float *emb_ln_g, *emb_ln_b;         /* [H] */
    struct embed_layer *layer;                /* [layers] */
    float **owned;                            /* converted copies to free */
    size_t  n_owned;
    char    query_prefix[EMBED_PREFIX_MAX];
    char    doc_prefix[EMBED_PREFIX_MAX];
    char    errmsg[256];
};

/* ---- loading ----------------------------------------------------------- */

static int cfg_int(const cJSON *cfg, const char *key, int dflt, int lo, int hi,
                   int *out, char *err, size_t errlen)
{
    const cJSON *j = cJSON_GetObjectItemCaseSensitive(cfg, key);

    if (!j) {
        if (dflt < 0) {
            embed_errf(err, errlen, "config.json: %s missing", key);
            return -1;
        }
        *out = dflt;
        return 0;
    }
    if (!cJSON_IsNumber(j) || j->valuedouble < lo || j->valuedouble > hi ||
        j->valuedouble != (int)j->valuedouble) {
        embed_errf(err, errlen, "config.json: %s must be an integer in [%d, %d]", key, lo, hi);
        return -1;
    }
    *out = (int)j->valuedouble;
    return 0;
}

static int load_config(struct embed_model *m, const char *dir, char *err,
                       size_t errlen)
{
    int missing, rc = -1, pad = 1;
    char *text = embed_read_file(dir, "config.json", EMBED_MAX_CONFIG, NULL, &missing, err, errlen);
    cJSON *cfg = text ? cJSON_Parse(text) : NULL;
    const cJSON *j;

    if (!text)
        goto out;
    if (!cJSON_IsObject(cfg)) {
        embed_errf(err, errlen, "config.json is not a JSON object");
        goto out;
    }
    if (cfg_int(cfg, "hidden_size", -1, 1, 65536, &m->hidden, err, errlen) ||
        cfg_int(cfg, "num_hidden_layers", -1, 1, 256, &m->layers, err, errlen) ||
        cfg_int(cfg, "num_attention_heads", -1, 1, 1024, &m->heads, err, errlen) ||
        cfg_int(cfg, "intermediate_size", -1, 1, 1 << 20, &m->inter, err, errlen) ||
        cfg_int(cfg, "max_position_embeddings", 512, 1, 1 << 16, &m->max_pos, err, errlen) ||
        cfg_int(cfg, "type_vocab_size", 2, 0, 1 << 16, &m->type_vocab, err, errlen) ||
        cfg_int(cfg, "vocab_size", -1, 1, 1 << 22, &m->vocab, err, errlen) ||
        cfg_int(cfg, "pad_token_id", 1, 0, 1 << 22, &pad, err, errlen))
        goto out;
    if (m->hidden % m->heads != 0) {
        embed_errf(err, errlen, "config.json: hidden_size %d is not a multiple of "
              "num_attention_heads %d", m->hidden, m->heads);
        goto out;
    }
    m->eps = 1e-12f;
    j = cJSON_GetObjectItemCaseSensitive(cfg, "layer_norm_eps");
    if (cJSON_IsNumber(j) && j->valuedouble > 0 && j->valuedouble < 1)
        m->eps = (float)j->valuedouble;
    m->act = ACT_GELU;
    j = cJSON_GetObjectItemCaseSensitive(cfg, "hidden_act");
    if (cJSON_IsString(j)) {
        if (strcmp(j->valuestring, "gelu") == 0)
            m->act = ACT_GELU;
        else if (strcmp(j->valuestring, "gelu_new") == 0 ||
                 strcmp(j->valuestring, "gelu_pytorch_tanh") == 0)
            m->act = ACT_GELU_TANH;
        else if (strcmp(j->valuestring, "relu") == 0)
            m->act = ACT_RELU;
        else {
            embed_errf(err, errlen, "config.json: unsupported hidden_act '%.32s'",
                  j->valuestring);
            goto out;
        }
    }
    j = cJSON_GetObjectItemCaseSensitive(cfg, "model_type");
    if (cJSON_IsString(j) && (strcmp(j->valuestring, "xlm-roberta") == 0 ||
                              strcmp(j->valuestring, "roberta") == 0 ||
                              strcmp(j->valuestring, "camembert") == 0))
        m->pos_offset = pad + 1;   /* RoBERTa numbers positions from pad+1 */
    if (m->pos_offset >= m->max_pos) {
        embed_errf(err, errlen, "config.json: no room for positions");
        goto out;
    }
    rc = 0;
out:
    cJSON_Delete(cfg);
    free(text);
    return rc;
}

static void copy_prefix(char *dst, const cJSON *j)
{
    if (cJSON_IsString(j) && strlen(j->valuestring) < EMBED_PREFIX_MAX)
        memcpy(dst, j->valuestring, strlen(j->valuestring) + 1);
}

/* Pooling and prefixes: 1_Pooling/config.json, then cairn_embed.json. */
static int load_options(struct embed_model *m, const char *dir, char *err,
                        size_t errlen)
{
    int missing;
    char *text;
    cJSON *j;

    m->pooling = POOL_MEAN;
    m->normalize = 1;
    text = embed_read_file(dir, "1_Pooling/config.json", EMBED_MAX_CONFIG, NULL, &missing, err,
                           errlen);
    if (!text && !missing)
        return -1;
    if (text) {
        j = cJSON_Parse(text);
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "pooling_mode_cls_token")))
            m->pooling = POOL_CLS;
        cJSON_Delete(j);
        free(text);
    }
    text = embed_read_file(dir, "cairn_embed.json", EMBED_MAX_CONFIG, NULL, &missing, err, errlen);
    if (!text && !missing)
        return -1;
    if (text) {
        const cJSON *p;
        j = cJSON_Parse(text);
        free(text);
        if (!cJSON_IsObject(j)) {
            cJSON_Delete(j);
            embed_errf(err, errlen, "cairn_embed.json is not a JSON object");
            return -1;
        }
        p = cJSON_GetObjectItemCaseSensitive(j, "pooling");
        if (cJSON_IsString(p)) {
            if (strcmp(p->valuestring, "cls") == 0)
                m->pooling = POOL_CLS;
            else if (strcmp(p->valuestring, "mean") == 0)
                m->pooling = POOL_MEAN;
            else {
                cJSON_Delete(j);
                embed_errf(err, errlen, "cairn_embed.json: pooling must be mean or cls");
                return -1;
            }
        }
        p = cJSON_GetObjectItemCaseSensitive(j, "normalize");
        if (cJSON_IsBool(p))
            m->normalize = cJSON_IsTrue(p);
        copy_prefix(m->query_prefix, cJSON_GetObjectItemCaseSensitive(j, "query_prefix"));
        copy_prefix(m->doc_prefix, cJSON_GetObjectItemCaseSensitive(j, "document_prefix"));
        cJSON_Delete(j);
    }
    err[0] = 0;
    return 0;
}

/* Finds prefix+name, checks its shape, returns float data (owned copies
 * are remembered in m). */
static const float *get_tensor(struct embed_model *m, const char *prefix,
                               const char *name, int64_t d0, int64_t d1,
                               char *err, size_t errlen)
{
    char full[256];
    const struct embed_st_tensor *t;
    const float *p;
    float *owned = NULL, **grown;

    snprintf(full, sizeof(full), "%s%s", prefix, name);
    t = embed_st_find(m->st, full);
    if (!t) {
        embed_errf(err, errlen, "model.safetensors: tensor '%s' missing", full);
        return NULL;
    }
    if ((d1 == 0 && (t->ndim != 1 || t->shape[0] != d0)) ||
        (d1 != 0 && (t->ndim != 2 || t->shape[0] != d0 || t->shape[1] != d1))) {
        if (d1)
            embed_errf(err, errlen, "model.safetensors: tensor '%s' has the wrong "
                  "shape (want [%lld, %lld])", full, (long long)d0, (long long)d1);
        else
            embed_errf(err, errlen, "model.safetensors: tensor '%s' has the wrong "
                  "shape (want [%lld])", full, (long long)d0);
        return NULL;
    }
    grown = realloc(m->owned, (m->n_owned + 1) * sizeof(*m->owned));
    if (!grown) {
        embed_errf(err, errlen, "out of memory");
        return NULL;
    }
    m->owned = grown;
    p = embed_st_f32(t, &owned);
    if (!p) {
        embed_errf(err, errlen, "model.safetensors: tensor '%s' is not F32/F16/BF16 "
              "(or out of memory)", full);
        return NULL;
    }
    if (owned)
        m->owned[m->n_owned++] = owned;
    return p;
}

static int load_weights(struct embed_model *m, const char *dir, char *err,
                        size_t errlen)
{
    static const char *const prefixes[] = { "", "bert.", "roberta.", "model." };
    const char *pre = NULL;
    char path[PATH_MAX], name[128];
    int H = m->hidden, I = m->inter, i;
    size_t k;

    if ((size_t)snprintf(path, sizeof(path), "%s/model.safetensors", dir) >= sizeof(path)) {
        embed_errf(err, errlen, "path too long");
        return -1;
    }
    m->st = embed_st_open(path, err, errlen);
    if (!m->st)
        return -1;
    for (k = 0; k < sizeof(prefixes) / sizeof(prefixes[0]); k++) {
        snprintf(name, sizeof(name), "%sembeddings.word_embeddings.weight", prefixes[k]);
        if (embed_st_find(m->st, name)) {
            pre = prefixes[k];
            break;
        }
    }
    if (!pre) {
        embed_errf(err, errlen, "model.safetensors: no embeddings.word_embeddings.weight "
              "(with or without a bert./roberta. prefix)");
        return -1;
    }
    m->word = embed_st_find(m->st, name);
    if (m->word->ndim != 2 || m->word->shape[0] != m->vocab || m->word->shape[1] != H ||
        (m->word->dtype != EMBED_ST_F32 && m->word->dtype != EMBED_ST_F16 &&
         m->word->dtype != EMBED_ST_BF16)) {
        embed_errf(err, errlen, "model.safetensors: word embeddings are not a float "
              "[%d][%d] table", m->vocab, H);
        return -1;
    }
    if (m->word->dtype == EMBED_ST_F32 && (uintptr_t)m->word->data % sizeof(float) == 0)
        m->word_f32 = m->word->data;
    embed_st_advise_random(m->st, m->word);

#define GET(dst, nm, a, b) do { \
        if (!((dst) = get_tensor(m, pre, (nm), (a), (b), err, errlen))) return -1; \
    } while (0)
    GET(m->pos, "embeddings.position_embeddings.weight", m->max_pos, H);
    if (m->type_vocab > 0)
        GET(m->type, "embeddings.token_type_embeddings.weight", m->type_vocab, H);
    GET(m->emb_ln_g, "embeddings.LayerNorm.weight", H, 0);
    GET(m->emb_ln_b, "embeddings.LayerNorm.bias", H, 0);
    m->layer = calloc((size_t)m->layers, sizeof(*m->layer));
    if (!m->layer) {
        embed_errf(err, errlen, "out of memory");
        return -1;
    }
    for (i = 0; i < m->layers; i++) {
        struct embed_layer *l = &m->layer[i];
        char lp[160];
#define LGET(dst, nm, a, b) do { \
        snprintf(lp, sizeof(lp), "encoder.layer.%d.%s", i, (nm)); \
        GET(dst, lp, a, b); \
    } while (0)
        LGET(l->wq, "attention.self.query.weight", H, H);
        LGET(l->bq, "attention.self.query.bias", H, 0);
        LGET(l->wk, "attention.self.key.weight", H, H);
        LGET(l->bk, "attention.self.key.bias", H, 0);
        LGET(l->wv, "attention.self.value.weight", H, H);
        LGET(l->bv, "attention.self.value.bias", H, 0);
        LGET(l->wo, "attention.output.dense.weight", H, H);
        LGET(l->bo, "attention.output.dense.bias", H, 0);
        LGET(l->ln1_g, "attention.output.LayerNorm.weight", H, 0);
        LGET(l->ln1_b, "attention.output.LayerNorm.bias", H, 0);
        LGET(l->wi, "intermediate.dense.weight", I, H);
        LGET(l->bi, "intermediate.dense.bias", I, 0);
        LGET(l->wo2, "output.dense.weight", H, I);
        LGET(l->bo2, "output.dense.bias", H, 0);
        LGET(l->ln2_g, "output.LayerNorm.weight", H, 0);
        LGET(l->ln2_b, "output.LayerNorm.bias", H, 0);
#undef LGET
    }
#undef GET
    return 0;
}

static void pc_note_source(struct embed_model *m, const char *dir);
static void pc_map(struct embed_model *m);
static int int8_wanted(int use);

struct embed_model *embed_load(const char *dir, char *err, size_t errlen)
{
    struct embed_model *m = calloc(1, sizeof(*m));
    char local[256], path[PATH_MAX];
    int trunc;

    if (!err || errlen == 0) {
        err = local;
        errlen = sizeof(local);
    }
    err[0] = 0;
    if (!m) {
        embed_errf(err, errlen, "out of memory");
        return NULL;
    }
    m->threads = 1;
    if (use_is_model_dir(dir)) {
        /* A TF.js USE-lite folder (model.json + shards + vocab.json). */
        m->use = use_load(dir, err, errlen);
        if (!m->use)
            goto fail;
        m->int8 = int8_wanted(1);
        use_int8(m->use, m->int8);
        m->hidden = USE_DIM;
        m->max_tokens = USE_MAX_TOKENS;
        m->normalize = 1;
        return m;
    }
    if (!dir || load_config(m, dir, err, errlen) != 0 ||
        load_options(m, dir, err, errlen) != 0 ||
        load_weights(m, dir, err, errlen) != 0)
        goto fail;
    if ((size_t)snprintf(path, sizeof(path), "%s/tokenizer.json", dir) >= sizeof(path)) {
        embed_errf(err, errlen, "path too long");
        goto fail;
    }
    m->tok = embed_tok_load(path, err, errlen);
    if (!m->tok)
        goto fail;
    if (embed_tok_vocab_size(m->tok) > m->vocab) {
        embed_errf(err, errlen, "tokenizer has %d ids but the model only %d rows",
              embed_tok_vocab_size(m->tok), m->vocab);
        goto fail;
    }
    m->max_tokens = m->max_pos - m->pos_offset;
    m->int8 = int8_wanted(0);
    pc_note_source(m, dir);
    pc_map(m);
    trunc = embed_tok_trunc_len(m->tok);
    if (trunc > 0 && trunc < m->max_tokens)
        m->max_tokens = trunc;
    if (m->max_tokens < 3) {
        embed_errf(err, errlen, "max length %d leaves no room for text", m->max_tokens);
        goto fail;
    }
    return m;
fail:
    embed_free(m);
    return NULL;
}

static void unpack_layers(struct embed_model *m)
{
    int l;

    for (l = 0; m->layer && l < m->layers; l++) {
        struct embed_layer *L = &m->layer[l];

        embed_k_packed_free(L->pq); embed_k_packed_free(L->pk);
        embed_k_packed_free(L->pv); embed_k_packed_free(L->po);
        embed_k_packed_free(L->pi); embed_k_packed_free(L->po2);
        L->pq = L->pk = L->pv = L->po = L->pi = L->po2 = NULL;
    }
}

/* ---- the pre-packed file (packcache.c) -------------------------------- */

/* Packed weights smaller than this are packed in each process rather than
 * kept in a file: packing them costs less than a millisecond (the test
 * models), where an L6 model's 42 MB cost ~40 ms and an L12's 85 MB 64-94. */
#define EMBED_PC_MIN_BYTES ((size_t)8 << 20)
static size_t pc_min_bytes = EMBED_PC_MIN_BYTES;

void embed_pack_cache_min(size_t bytes)
{
    pc_min_bytes = bytes;
}

int embed_packed_from(const struct embed_model *m)
{
    return m->packed_from;
}

/* The six weights of each layer, in file order: w[6 * layers] and their
 * shapes into t (edges not filled). */
static void pc_tensors(const struct embed_model *m, struct embed_pc_tensor *t, const float **w)
{
    int H = m->hidden, I = m->inter, l;

    for (l = 0; l < m->layers; l++, t += 6, w += 6) {
        const struct embed_layer *L = &m->layer[l];

        w[0] = L->wq; w[1] = L->wk; w[2] = L->wv; w[3] = L->wo; w[4] = L->wi; w[5] = L->wo2;
        t[0].n = t[1].n = t[2].n = t[3].n = t[5].n = H;
        t[0].k = t[1].k = t[2].k = t[3].k = t[4].k = H;
        t[4].n = I;
        t[5].k = I;
    }
}

/* t's edges (packcache.h) from w: read from model.safetensors (fd) with
 * pread when w is in its mapping, so that checking the file does not map
 * the weights' pages (packcache.c, pc_samples_match); else from memory
 * (a converted copy, already resident). -1 if a read failed. */
static int pc_edges(const struct embed_model *m, int fd, struct embed_pc_tensor *t,
                    const float *w)
{
    size_t e = t->k < EMBED_PC_EDGE ? (size_t)t->k : EMBED_PC_EDGE;
    size_t all = (size_t)t->n * (size_t)t->k;
    uint64_t off;

    if (fd < 0 || embed_st_file_offset(m->st, w, all * sizeof(float), &off) != 0) {
        embed_pc_edges(t, w);
        return 0;
    }
    if (os_pread_all(fd, t->edge, e * sizeof(float), off) != 0 ||
        os_pread_all(fd, t->edge + e, e * sizeof(float), off + (all - e) * sizeof(float)) != 0)
        return -1;
    return 0;
}

static void pc_note_source(struct embed_model *m, const char *dir)
{
    char path[PATH_MAX];
    struct stat st;

    if ((size_t)snprintf(m->dir, sizeof(m->dir), "%s", dir) >= sizeof(m->dir) ||
        (size_t)snprintf(path, sizeof(path), "%s/model.safetensors", dir) >= sizeof(path) ||
        stat(path, &st) != 0) {
        m->dir[0] = 0;   /* no file then */
        return;
    }
    m->src.size = (uint64_t)st.st_size;
    m->src.mtime_s = (int64_t)st.st_mtim.tv_sec;
    m->src.mtime_ns = (int64_t)st.st_mtim.tv_nsec;
}

/* CAIRN_EMBED_INT8: the linear layers on the int8 product (qgemm.c).
 * Read by the library itself, as CAIRN_SIMD (the model is loaded below
 * any handle). use: the model is USE-lite. Unset, on for USE-lite and off
 * for the BERTs: USE-lite's int8 path is measured (worst cosine 0.99919
 * against f32, recall unchanged, a backfill 41% less CPU, a fresh
 * process's first query cheaper than f32's once the int8 file exists;
 * docs/HYBRID.md, "int8"), the BERTs' is not yet. "1" or "0" forces it. */
static int int8_wanted(int use)
{
    const char *env = getenv("CAIRN_EMBED_INT8");

    if (env && strcmp(env, "1") == 0)
        return 1;
    if (env && strcmp(env, "0") == 0)
        return 0;
    return use;
}

void embed_int8(struct embed_model *m, int on)
{
    if (m->use) {
        use_int8(m->use, on);
        m->int8 = on != 0;
        return;
    }
    if ((on != 0) == m->int8)
        return;
    unpack_layers(m);
    embed_pc_close(m->pc);
    m->pc = NULL;
    m->pack_tried = 0;
    m->packed_from = 0;
    m->int8 = on != 0;
}

int embed_int8_on(const struct embed_model *m)
{
    return m->int8;
}

/* 1 if this model's packed weights belong in a file: CAIRN_PACK_CACHE=1
 * (read by the library itself, as CAIRN_BLAS: the model is loaded below
 * any handle), packing pays on this CPU, and they are big enough.
 * Off by default, by measurement (docs/EMBED.md, "The pre-packed file"):
 * on the 2-vCPU VMs here a process's first query costs mapping 85 MB of
 * weights, ~40-50 ms of CPU whichever copy it maps, and the file's load,
 * first query and pool together came out within the noise of the
 * in-place path, while the first process pays 1.5-3 s to write it. */
static int pc_wanted(const struct embed_model *m)
{
    const char *env = getenv("CAIRN_PACK_CACHE");
    struct embed_pc_tensor t = { .n = m->hidden, .k = m->hidden };
    size_t bytes;

    /* the file holds f32 panels; the int8 form is made at load */
    if (!m->dir[0] || !env || strcmp(env, "1") != 0 || !embed_k_packed_pays() || m->int8)
        return 0;
    bytes = embed_pc_tensor_bytes(&t, embed_k_pack_width()) * 4;
    t = (struct embed_pc_tensor){ .n = m->inter, .k = m->hidden };
    bytes += embed_pc_tensor_bytes(&t, embed_k_pack_width()) * 2;
    return bytes * (size_t)m->layers >= pc_min_bytes;
}

/* Maps the pre-packed file if there is a valid one: the model's weights
 * are then packed from the start, for a first query on the pool's
 * threads, with no packing cost in this process. */
static void pc_map(struct embed_model *m)
{
    int nt = 6 * m->layers, nr = embed_k_pack_width(), l, i, fd = -1;
    struct embed_pc_tensor *t = NULL;
    const float **panels = NULL, **w = NULL;
    char why[256], path[PATH_MAX + 32];

    if (!pc_wanted(m) || embed_pc_path(m->dir, nr, path, sizeof(path)) != 0 ||
        access(path, F_OK) != 0)
        return;   /* none yet: packed (and written) at first use */
    t = malloc((size_t)nt * sizeof(*t));
    panels = malloc((size_t)nt * sizeof(*panels));
    w = malloc((size_t)nt * sizeof(*w));
    if (!t || !panels || !w)
        goto out;
    pc_tensors(m, t, w);
    snprintf(path, sizeof(path), "%s/model.safetensors", m->dir);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    for (i = 0; i < nt; i++)
        if (pc_edges(m, fd, &t[i], w[i]) != 0)
            goto out;
    if (!(m->pc = embed_pc_open(m->dir, nr, &m->src, t, nt, panels, why, sizeof(why))))
        goto out;   /* refused: packed (and written again) at first use */
    for (l = 0; l < m->layers; l++) {
        struct embed_layer *L = &m->layer[l];
        const struct embed_pc_tensor *u = t + 6 * l;
        const float **p = panels + 6 * l, **v = w + 6 * l;

        if (!(L->pq = embed_k_packed_view(v[0], u[0].n, u[0].k, nr, p[0])) ||
            !(L->pk = embed_k_packed_view(v[1], u[1].n, u[1].k, nr, p[1])) ||
            !(L->pv = embed_k_packed_view(v[2], u[2].n, u[2].k, nr, p[2])) ||
            !(L->po = embed_k_packed_view(v[3], u[3].n, u[3].k, nr, p[3])) ||
            !(L->pi = embed_k_packed_view(v[4], u[4].n, u[4].k, nr, p[4])) ||
            !(L->po2 = embed_k_packed_view(v[5], u[5].n, u[5].k, nr, p[5]))) {
            unpack_layers(m);
            embed_pc_close(m->pc);
            m->pc = NULL;
            goto out;
        }
    }
    m->pack_tried = 1;
    m->packed_from = 2;
out:
    if (fd >= 0)
        close(fd);
    free(t);
    free(panels);
    free(w);
}

/* Writes the packed weights to the file for later processes; a failure
 * (a read-only folder, a full disk) only costs them packing again. */
static void pc_save(struct embed_model *m)
{
    int nt = 6 * m->layers, l, i;
    struct embed_pc_tensor *t = malloc((size_t)nt * sizeof(*t));
    const float **panels = malloc((size_t)nt * sizeof(*panels));
    const float **w = malloc((size_t)nt * sizeof(*w));
    char why[256];

    if (t && panels && w) {
        pc_tensors(m, t, w);
        for (i = 0; i < nt; i++)
            embed_pc_edges(&t[i], w[i]);   /* packing just read them all */
        for (l = 0; l < m->layers; l++) {
            const struct embed_layer *L = &m->layer[l];
            const float **p = panels + 6 * l;

            p[0] = embed_k_packed_panels(L->pq); p[1] = embed_k_packed_panels(L->pk);
            p[2] = embed_k_packed_panels(L->pv); p[3] = embed_k_packed_panels(L->po);
            p[4] = embed_k_packed_panels(L->pi); p[5] = embed_k_packed_panels(L->po2);
        }
        (void)embed_pc_write(m->dir, embed_k_packed_nr(m->layer[0].pq), &m->src, t, nt,
                             panels, why, sizeof(why));
    }
    free(t);
    free(panels);
    free(w);
}

/* 1 if a first query should pack (and write the file) rather than run on
 * the weights in place: only when the file can be written, so that every
 * later process maps it. */
static int pc_writable(const struct embed_model *m)
{
    return pc_wanted(m) && access(m->dir, W_OK) == 0;
}

/*
 * Packs every layer's six weights for cairn's own matrix product (gemm.c),
 * once per model: a copy the size of the encoder's weights (85 MB for an
 * L12 model) that took 82-94 ms here (bench_gemm, bench=gemm_pack). Big
 * models keep the copy in the pre-packed file (above), so a process maps
 * it at load and never gets here; without a file it happens at the first
 * pass when the file can be written (once per model and machine), else at
 * the first pass with more rows than a query, or at the second query: a
 * one-shot query (`cairn recall`) should not pay for it, and runs on
 * kernels that read the weights in place. Out of memory, nothing is
 * packed and the other paths run.
 */
static void pack_layers(struct embed_model *m)
{
    /* int8 (embed_int8): quantised instead, at any SIMD level (qgemm.c) */
    struct embed_k_packed *(*pack)(const float *, int, int) =
        m->int8 ? embed_k_pack_q8 : embed_k_pack;
    int H = m->hidden, I = m->inter, l;

    m->pack_tried = 1;
    if (!m->int8 && !embed_k_packed_pays())
        return;
    for (l = 0; l < m->layers; l++) {
        struct embed_layer *L = &m->layer[l];

        if (!(L->pq = pack(L->wq, H, H)) || !(L->pk = pack(L->wk, H, H)) ||
            !(L->pv = pack(L->wv, H, H)) || !(L->po = pack(L->wo, H, H)) ||
            !(L->pi = pack(L->wi, I, H)) || !(L->po2 = pack(L->wo2, H, I))) {
            unpack_layers(m);
            return;
        }
    }
    m->packed_from = 1;
    if (pc_wanted(m))
        pc_save(m);
}

/* y = x w^T + b on the packed copy when there is one. */
static void linear(const float *x, const float *w, const struct embed_k_packed *pw,
                   const float *b, float *y, int rows, int n, int k)
{
    if (pw)
        embed_k_linear_packed(x, pw, b, y, rows);
    else
        embed_k_linear(x, w, b, y, rows, n, k);
}

void embed_free(struct embed_model *m)
{
    size_t i;

    if (!m)
        return;
    for (i = 0; i < m->n_owned; i++)
        free(m->owned[i]);
    free(m->owned);
    unpack_layers(m);
    embed_pc_close(m->pc);
    embed_pool_free(m->pool);
    free(m->layer);
    use_free(m->use);
    embed_tok_free(m->tok);
    embed_st_close(m->st);
    free(m);
}

uint64_t embed_id_hash(const struct embed_model *m, const char *dir)
{
    return m && m->use ? use_id_hash(m->use) : embed_id_files(dir, NULL, 0);
}

int embed_dim(const struct embed_model *m) { return m->hidden; }
int embed_max_tokens(const struct embed_model *m) { return m->max_tokens; }
const char *embed_errmsg(const struct embed_model *m) { return m->errmsg; }

void embed_set_threads(struct embed_model *m, int n)
{
    m->threads = n < 1 ? 1 : n;
    if (m->use)
        use_set_threads(m->use, m->threads);
}

/* ---- forward ---------------------------------------------------------- */

/* Copies word-embedding row id into dst as float32. */
static void word_row(const struct embed_model *m, int id, float *dst)
{
    const unsigned char *p;
    int H = m->hidden, d;

    if (m->word_f32) {
        memcpy(dst, m->word_f32 + (size_t)id * H, (size_t)H * sizeof(float));
        return;
    }
    p = (const unsigned char *)m->word->data + (size_t)id * H * m->word->elsize;
    for (d = 0; d < H; d++) {
        if (m->word->dtype == EMBED_ST_F32) {
            memcpy(&dst[d], p + 4 * (size_t)d, 4);
        } else {
            uint16_t h = (uint16_t)(p[2 * d] | (p[2 * d + 1] << 8));
            dst[d] = m->word->dtype == EMBED_ST_F16 ? embed_st_half_to_float(h)
                                                    : embed_st_bf16_to_float(h);
        }
    }
}

/* x[batch * seq][H] = the embedding layer's output (word + position +
 * type, layer norm). Padding rows get row 0 of each table: finite values
 * that nothing downstream reads for the result. */
static void embed_rows(const struct embed_model *m, const int32_t *ids, int stride,
                       const int *lens, int batch, int seq, float *x)
{
    int H = m->hidden, b, t, d;

    for (b = 0; b < batch; b++) {
        for (t = 0; t < seq; t++) {
            float *row = x + ((size_t)b * seq + t) * H;
            const float *pos = m->pos + (size_t)(m->pos_offset + t) * H;

            word_row(m, t < lens[b] ? ids[(size_t)b * stride + t] : 0, row);
            for (d = 0; d < H; d++)
                row[d] += pos[d] + (m->type ? m->type[d] : 0.0f);
        }
    }
    embed_k_add_layernorm(x, NULL, m->emb_ln_g, m->emb_ln_b, batch * seq, H, m->eps);
}

/* The activation of rows [T] of f, columns [c0, c1), rows ld apart. */
static void activate(const struct embed_model *m, float *f, int T, int ld, int c0, int c1)
{
    int r;

    for (r = 0; r < T && c1 > c0; r++) {
        float *p = f + (size_t)r * ld + c0;

        if (m->act == ACT_GELU)
            embed_k_gelu(p, (size_t)(c1 - c0));
        else if (m->act == ACT_GELU_TANH)
            embed_k_gelu_tanh(p, (size_t)(c1 - c0));
        else
            embed_k_relu(p, (size_t)(c1 - c0));
    }
}

/* q, k and v of x in one int8 product (x quantised once: qgemm.c); -1
 * where the weights are not int8, for three linear() calls. */
static int qkv(const float *x, const struct embed_layer *L, float *q, float *k, float *v,
               int rows)
{
    const struct embed_k_packed *pk[3] = { L->pq, L->pk, L->pv };
    const float *b[3] = { L->bq, L->bk, L->bv };
    float *y[3] = { q, k, v };

    if (!L->pq || !L->pk || !L->pv)
        return -1;
    return embed_k_linear_packed_n(x, pk, b, y, 3, rows);
}

/* The FFN of an int8 pass runs this many token rows at a time (every
 * row's int8 product is its own, so the bits do not depend on it): the
 * [rows][I] intermediate, 25 MB for a 32 x 128 batch of an L12 model, is
 * then 1.5 MB that stays in cache between the two products and GELU, and
 * is not mapped and faulted in afresh by every pass. A group's rows
 * (EMBED_GROUP_ROWS) in one block: at 240, a 256-row group's last 16 rows
 * were a block of their own, which read W1 and W2 again. */
#define EMBED_FFN_ROWS 256

/* A forward pass with more token rows than this packs the weights first,
 * as does a second one with fewer (pack_layers). */
#define EMBED_QUERY_ROWS 32

/* An int8 pass runs each layer a group of whole sequences at a time, of
 * at most this many token rows (at least one sequence): q, k, v, ctx and
 * the FFN block of a group (~1.5 MB at 256 rows of an L12 model) then stay
 * in cache from the product that writes them to the one that reads them,
 * where a share's 16 sequences (2,048 rows) made them 3 MB each, read back
 * from past L2 by attention, Wo and the quantiser. The layer's weights
 * (1.8 MB of int8) are read once per group, as the tile reads them once
 * per row block anyway. Every step of a layer is row-local but attention,
 * which is per sequence, so the bits do not depend on the grouping; f32
 * keeps one group (its tile heights follow the row count). */
#define EMBED_GROUP_ROWS 256

/*
 * The forward pass of `batch` sequences (ids rows `stride` apart, seq <=
 * stride token rows each) into out[batch][H]; validated input. Allocates
 * its own work space, so several can run at once on disjoint sequences.
 *
 * Per layer and group of sequences g (rows x_g of x):
 *   q, k, v = x_g W | ctx = attention | h = LN(ctx Wo + x_g)   (into q)
 *   x_g = LN(FFN(h) + h)   (x_g is dead once h is made: FFN down writes it)
 */
static int forward_part(const void *model, const int32_t *ids, int stride,
                        const int *lens, int batch, int seq, float *out,
                        char *err, size_t errlen)
{
    const struct embed_model *m = model;
    int H = m->hidden, I = m->inter, hd = H / m->heads;
    size_t T = (size_t)batch * seq, r0;
    float *x = NULL, *q = NULL, *k = NULL, *v = NULL, *ctx = NULL, *f = NULL;
    float *scratch = NULL;
    const struct embed_layer *L0 = m->layers > 0 ? &m->layer[0] : NULL;
    int l, g0, rc = -1, q8 = L0 && L0->pi && embed_k_packed_is_q8(L0->pi) && L0->po2 &&
                             embed_k_packed_is_q8(L0->po2);
    /* sequences a group; f32 keeps one group and one FFN block */
    int gb = q8 ? EMBED_GROUP_ROWS / seq : batch;
    size_t gT, fr;

    if (gb < 1)
        gb = 1;
    if (gb > batch)
        gb = batch;
    gT = (size_t)gb * seq;
    fr = q8 && gT > EMBED_FFN_ROWS ? EMBED_FFN_ROWS : gT;
    x = malloc(T * H * sizeof(float));
    q = malloc(gT * H * sizeof(float));
    k = malloc(gT * H * sizeof(float));
    v = malloc(gT * H * sizeof(float));
    ctx = malloc(gT * H * sizeof(float));
    f = malloc(fr * I * sizeof(float));
    scratch = malloc((size_t)seq * seq * sizeof(float));
    if (!x || !q || !k || !v || !ctx || !f || !scratch) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }

    embed_rows(m, ids, stride, lens, batch, seq, x);

    for (l = 0; l < m->layers; l++) {
        const struct embed_layer *L = &m->layer[l];

        for (g0 = 0; g0 < batch; g0 += gb) {
            int nb = batch - g0 < gb ? batch - g0 : gb, rows = nb * seq;
            float *xg = x + (size_t)g0 * seq * H;

            if (qkv(xg, L, q, k, v, rows) != 0) {
                linear(xg, L->wq, L->pq, L->bq, q, rows, H, H);
                linear(xg, L->wk, L->pk, L->bk, k, rows, H, H);
                linear(xg, L->wv, L->pv, L->bv, v, rows, H, H);
            }
            embed_k_attention(q, k, v, ctx, lens + g0, nb, seq, m->heads, hd, scratch);
            /* q is free now: attention output projection into it */
            linear(ctx, L->wo, L->po, L->bo, q, rows, H, H);
            embed_k_add_layernorm(q, xg, L->ln1_g, L->ln1_b, rows, H, m->eps);
            for (r0 = 0; r0 < (size_t)rows; r0 += fr) {
                int fn = (int)((size_t)rows - r0 < fr ? (size_t)rows - r0 : fr);

                linear(q + r0 * H, L->wi, L->pi, L->bi, f, fn, I, H);
                activate(m, f, fn, I, 0, I);
                linear(f, L->wo2, L->po2, L->bo2, xg + r0 * H, fn, H, I);
            }
            embed_k_add_layernorm(xg, q, L->ln2_g, L->ln2_b, rows, H, m->eps);
        }
    }
    if (m->pooling == POOL_CLS)
        embed_k_cls_pool(x, batch, seq, H, out);
    else
        embed_k_mean_pool(x, lens, batch, seq, H, out);
    if (m->normalize)
        embed_k_l2_normalize(out, batch, H);
    rc = 0;
out:
    free(x); free(q); free(k); free(v); free(ctx); free(f); free(scratch);
    return rc;
}

/*
 * One pass split between the threads of the model's pool: a query, or any
 * pass that embed_run_shares would not cut into shares (too few rows, or
 * one sequence). Thread i of n takes heads [h0, h1) of attention, with
 * their columns of q, k and v, and 1/n of the panels of the other
 * products; the rows of x and the layer norms it keeps whole, in a copy of
 * its own (a few KB: cheaper than another meeting). Per layer the threads
 * meet 4 times (embed_pool_barrier), where a product needs columns other
 * threads wrote:
 *
 *   q, k, v cols of my heads (private) -> attention of my heads -> ctx
 *   | Wo: my panels of y  | x = LN(x + y)  (each thread, whole)
 *     FFN up + act: my panels of f | FFN down: my panels of y
 *   | x = LN(x + y)
 *
 * Every value is computed by the same kernels in the same order as on one
 * thread (embed_k_gemm_packed_cols computes a column as the whole product
 * does), so a text has the same bits at any thread count. ctx, y and f
 * are shared; each is written again only after a barrier every reader of
 * it has passed.
 */
struct pooled {
    const struct embed_model *m;
    const int *lens;
    int batch, seq, level;
    const float *x0;                  /* [T][H] the embedding layer's output */
    float *ctx, *y, *f;               /* shared: [T][H], [T][H], [T][I] */
    float *own[EMBED_POOL_MAX];       /* each thread's x, q, k, v, scores, work */
    size_t th, attn_work;             /* floats of x, q, k, v each; of the work area */
    float *out;
};

/* Panels [n * i / parts, n * (i + 1) / parts) of n columns, as columns. */
static void panel_share(int n, int parts, int i, int *c0, int *c1)
{
    int np = (n + 31) / 32;

    *c0 = np * i / parts * 32;
    *c1 = np * (i + 1) / parts * 32;
    if (*c1 > n)
        *c1 = n;
}

static void pooled_layer(struct pooled *P, struct embed_pool *pool, const struct embed_layer *L,
                         int i, int n, float *x, float *q, float *k, float *v, float *scores,
                         float *aw, float *gw)
{
    const struct embed_model *m = P->m;
    int H = m->hidden, I = m->inter, hd = H / m->heads, T = P->batch * P->seq, lv = P->level;
    int h0 = m->heads * i / n, h1 = m->heads * (i + 1) / n, b, h, r, c0, c1;
    float scale = 1.0f / sqrtf((float)hd);

    /* from the panel holding my first head's first column */
    c0 = h0 * hd / 32 * 32;
    embed_k_gemm_packed_cols(lv, x, H, L->pq, c0, h1 * hd, L->bq, q, H, T, gw);
    embed_k_gemm_packed_cols(lv, x, H, L->pk, c0, h1 * hd, L->bk, k, H, T, gw);
    embed_k_gemm_packed_cols(lv, x, H, L->pv, c0, h1 * hd, L->bv, v, H, T, gw);
    for (b = 0; b < P->batch; b++) {
        size_t base = (size_t)b * P->seq * H;

        for (h = h0; h < h1; h++)
            embed_k_attention_packed(lv, q + base + h * hd, k + base + h * hd, v + base + h * hd,
                                     P->ctx + base + h * hd, H, P->lens[b], hd, scale, scores,
                                     aw);
        for (r = P->lens[b]; r < P->seq; r++)
            memset(P->ctx + base + (size_t)r * H + h0 * hd, 0,
                   (size_t)(h1 - h0) * hd * sizeof(float));
    }
    embed_pool_barrier(pool);
    panel_share(H, n, i, &c0, &c1);
    embed_k_gemm_packed_cols(lv, P->ctx, H, L->po, c0, c1, L->bo, P->y, H, T, gw);
    embed_pool_barrier(pool);
    embed_k_add_layernorm(x, P->y, L->ln1_g, L->ln1_b, T, H, m->eps);
    panel_share(I, n, i, &c0, &c1);
    embed_k_gemm_packed_cols(lv, x, H, L->pi, c0, c1, L->bi, P->f, I, T, gw);
    activate(m, P->f, T, I, c0, c1);
    embed_pool_barrier(pool);
    panel_share(H, n, i, &c0, &c1);
    embed_k_gemm_packed_cols(lv, P->f, I, L->po2, c0, c1, L->bo2, P->y, H, T, gw);
    embed_pool_barrier(pool);
    embed_k_add_layernorm(x, P->y, L->ln2_g, L->ln2_b, T, H, m->eps);
}

static void pooled_run(void *arg, int i, int n)
{
    struct pooled *P = arg;
    const struct embed_model *m = P->m;
    size_t TH = P->th;
    float *x = P->own[i], *q = x + TH, *k = q + TH, *v = k + TH;
    float *aw = v + TH, *scores = aw + P->attn_work, *gw = scores + (size_t)P->seq * P->seq;
    int l;

    memcpy(x, P->x0, (size_t)P->batch * P->seq * m->hidden * sizeof(float));
    for (l = 0; l < m->layers; l++)
        pooled_layer(P, m->pool, &m->layer[l], i, n, x, q, k, v, scores, aw, gw);
    if (i != 0)
        return;
    if (m->pooling == POOL_CLS)
        embed_k_cls_pool(x, P->batch, P->seq, m->hidden, P->out);
    else
        embed_k_mean_pool(x, P->lens, P->batch, P->seq, m->hidden, P->out);
    if (m->normalize)
        embed_k_l2_normalize(P->out, P->batch, m->hidden);
}

/* The pass on the pool's threads (the model's weights packed, a SIMD
 * level); -1 (out written or not) when there is no pool or no memory, for
 * the caller to run it another way. */
static int forward_pooled(struct embed_model *m, const int32_t *ids, const int *lens,
                          int batch, int seq, float *out)
{
    int H = m->hidden, I = m->inter, want = m->threads, n, i;
    size_t T = (size_t)batch * seq, TH, gw, own;
    struct pooled P = { 0 };
    float *shared = NULL;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);

    /* more threads than cores would spin at every barrier waiting for one
     * that is not running */
    if (cpus > 0 && want > cpus)
        want = (int)cpus;
    if (want > m->heads)
        want = m->heads;
    if (want > EMBED_POOL_MAX)
        want = EMBED_POOL_MAX;
    if (want < 2)
        return -1;
    if (m->pool && embed_pool_size(m->pool) != want) {
        embed_pool_free(m->pool);
        m->pool = NULL;
    }
    if (!m->pool && !(m->pool = embed_pool_new(want)))
        return -1;
    n = embed_pool_size(m->pool);
    P.m = m;
    P.lens = lens;
    P.batch = batch;
    P.seq = seq;
    P.level = embed_k_simd();
    P.out = out;
    /* every block a multiple of 16 floats, so each starts 64-byte aligned
     * (the attention work area must) */
    TH = (T * H + 15) & ~(size_t)15;
    P.th = TH;
    P.attn_work = (embed_k_attention_work(seq, H / m->heads) + 15) & ~(size_t)15;
    gw = embed_k_gemm_work((int)T, H) > embed_k_gemm_work((int)T, I)
             ? embed_k_gemm_work((int)T, H) : embed_k_gemm_work((int)T, I);
    own = (4 * TH + P.attn_work + (size_t)seq * seq + gw + 15) & ~(size_t)15;
    shared = aligned_alloc(64, (TH * 3 + ((T * I + 15) & ~(size_t)15) + own * n) *
                               sizeof(float));
    if (!shared)
        return -1;
    P.x0 = shared;
    P.ctx = shared + TH;
    P.y = P.ctx + TH;
    P.f = P.y + TH;
    for (i = 0; i < n; i++)
        P.own[i] = P.f + ((T * I + 15) & ~(size_t)15) + own * i;
    embed_rows(m, ids, seq, lens, batch, seq, (float *)P.x0);
    embed_pool_run(m->pool, pooled_run, &P);
    free(shared);
    return 0;
}

/*
 * With n threads and a batch of several sequences, the sequences are cut
 * into n shares run side by side (embed_run_shares), each with a
 * single-threaded OpenBLAS: every step of the pass (products, attention,
 * layer norms, GELU) is then parallel, with no hand-over per product,
 * where OpenBLAS's own threads only split the products and leave the
 * rest to one core. A share is padded to its own longest text, not the
 * batch's. A single sequence (a query) uses OpenBLAS's threads if it is
 * long enough, else 1.
 */
int embed_forward_ids(struct embed_model *m, const int32_t *ids,
                      const int *lens, int batch, int seq, float *out)
{
    int b, t;

    m->errmsg[0] = 0;
    if (m->use)
        return use_forward(m->use, ids, lens, batch, seq, out, m->errmsg,
                           sizeof(m->errmsg));
    /* the kernels take a pass's token rows as an int */
    if (batch < 1 || seq < 1 || seq > m->max_tokens || (size_t)batch * seq > INT_MAX) {
        embed_errf(m->errmsg, sizeof(m->errmsg), "bad batch shape %d x %d", batch, seq);
        return -1;
    }
    for (b = 0; b < batch; b++) {
        if (lens[b] < 1 || lens[b] > seq) {
            embed_errf(m->errmsg, sizeof(m->errmsg), "bad length %d", lens[b]);
            return -1;
        }
        for (t = 0; t < lens[b]; t++) {
            int32_t id = ids[(size_t)b * seq + t];
            if (id < 0 || id >= m->vocab) {
                embed_errf(m->errmsg, sizeof(m->errmsg), "token id %d out of range", (int)id);
                return -1;
            }
        }
    }
    /* int8 packs at the first pass: a query on the weights in place would
     * be f32, and a text's vector must not depend on when it was made */
    if (!m->pack_tried && (m->int8 || (size_t)batch * seq > EMBED_QUERY_ROWS ||
                           m->queries++ > 0 || pc_writable(m)))
        pack_layers(m);
    if (m->threads > 1 && m->heads > 1 && m->layer[0].pq && embed_k_simd() > 0 &&
        embed_share_count(batch, seq, m->threads) == 1 &&
        forward_pooled(m, ids, lens, batch, seq, out) == 0)
        return 0;
    return embed_run_shares(forward_part, m, ids, lens, batch, seq, out, m->hidden, m->threads,
                            m->errmsg, sizeof(m->errmsg));
}

/* ---- text in ---------------------------------------------------------- */

int embed_tokenize(struct embed_model *m, const char *text, int is_query,
                   int32_t *ids, int max_ids)
{
    const char *prefix = is_query ? m->query_prefix : m->doc_prefix;

    if (max_ids > m->max_tokens)
        max_ids = m->max_tokens;
    if (m->use)   /* no prefixes; an empty text has 0 tokens */
        return use_tokenize(m->use, text, text ? strlen(text) : 0, ids, max_ids);
    return embed_tok_encode2(m->tok, prefix, strlen(prefix), text,
                             text ? strlen(text) : 0, ids, max_ids);
}

struct len_idx {
    int len;
    int idx;
};

static int cmp_len(const void *a, const void *b)
{
    const struct len_idx *x = a, *y = b;

    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Texts are handled EMBED_CHUNK_TEXTS at a time: tokenized, sorted by
 * length, and cut into batches of at most EMBED_BATCH_SEQS texts and
 * EMBED_BATCH_TOKENS padded tokens, each padded to its longest text.
 */
int embed_encode(struct embed_model *m, const char *const *texts, size_t n,
                 int is_query, float *out)
{
    int maxt = m->max_tokens, H = m->hidden, rc = -1;
    int32_t *ids = NULL, *bids = NULL;
    struct len_idx *order = NULL;
    int *blens = NULL;
    float *bout = NULL;
    size_t c0;

    m->errmsg[0] = 0;
    if (n == 0)
        return 0;
    if (!texts || !out) {
        embed_errf(m->errmsg, sizeof(m->errmsg), "NULL argument");
        return -1;
    }
    ids = malloc((size_t)EMBED_CHUNK_TEXTS * maxt * sizeof(*ids));
    order = malloc(EMBED_CHUNK_TEXTS * sizeof(*order));
    bids = malloc((size_t)EMBED_BATCH_SEQS * maxt * sizeof(*bids));
    blens = malloc(EMBED_BATCH_SEQS * sizeof(*blens));
    bout = malloc((size_t)EMBED_BATCH_SEQS * H * sizeof(*bout));
    if (!ids || !order || !bids || !blens || !bout) {
        embed_errf(m->errmsg, sizeof(m->errmsg), "out of memory");
        goto out;
    }
    for (c0 = 0; c0 < n; c0 += EMBED_CHUNK_TEXTS) {
        int cn = (int)(n - c0 < EMBED_CHUNK_TEXTS ? n - c0 : EMBED_CHUNK_TEXTS);
        int i = 0;

        for (i = 0; i < cn; i++) {
            int len = embed_tokenize(m, texts[c0 + i], is_query,
                                     ids + (size_t)i * maxt, maxt);
            if (len < 0 || (len == 0 && !m->use)) {
                embed_errf(m->errmsg, sizeof(m->errmsg), "tokenizer failed (out of memory)");
                goto out;
            }
            order[i].len = len;
            order[i].idx = i;
        }
        qsort(order, (size_t)cn, sizeof(*order), cmp_len);
        i = 0;
        while (i < cn) {
            int nb = 0, seq, b;

            /* Sorted ascending, so the last text of a batch is its longest. */
            while (i + nb < cn && nb < EMBED_BATCH_SEQS &&
                   (nb + 1) * order[i + nb].len <= EMBED_BATCH_TOKENS)
                nb++;
            if (nb == 0)
                nb = 1;
            seq = order[i + nb - 1].len > 0 ? order[i + nb - 1].len : 1;
            for (b = 0; b < nb; b++) {
                const int32_t *src = ids + (size_t)order[i + b].idx * maxt;
                blens[b] = order[i + b].len;
                memcpy(bids + (size_t)b * seq, src, (size_t)blens[b] * sizeof(*src));
            }
            if (embed_forward_ids(m, bids, blens, nb, seq, bout) != 0)
                goto out;
            for (b = 0; b < nb; b++)
                memcpy(out + (c0 + (size_t)order[i + b].idx) * H,
                       bout + (size_t)b * H, (size_t)H * sizeof(float));
            i += nb;
        }
    }
    rc = 0;
out:
    free(ids); free(order); free(bids); free(blens); free(bout);
    return rc;
}
