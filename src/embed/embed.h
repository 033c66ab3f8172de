/*
 * embed.h: cairn's sentence encoder, text -> unit vector.
 *
 * A pure function of its inputs: it reads a model folder once, then maps
 * texts to float vectors; it never touches the store, prints, or keeps
 * state between calls beyond the loaded weights. The model is a BERT-family
 * encoder (BERT, MiniLM, bge, e5 / XLM-R) in Hugging Face layout:
 *
 *   DIR/config.json          hidden_size, num_hidden_layers,
 *                            num_attention_heads, intermediate_size,
 *                            max_position_embeddings, type_vocab_size,
 *                            vocab_size, layer_norm_eps, hidden_act
 *                            (gelu | gelu_new | gelu_pytorch_tanh | relu),
 *                            model_type (xlm-roberta / roberta shift the
 *                            position ids by pad_token_id + 1)
 *   DIR/model.safetensors    HF tensor names, with or without a "bert." /
 *                            "roberta." prefix; F32, F16 or BF16
 *   DIR/tokenizer.json       WordPiece or Unigram (tokenizer.h)
 *   DIR/1_Pooling/config.json  optional, sentence-transformers: CLS or mean
 *   DIR/cairn_embed.json     optional, ours: {"pooling": "mean"|"cls",
 *                            "normalize": true, "query_prefix": "query: ",
 *                            "document_prefix": "passage: "}; wins over
 *                            1_Pooling. Defaults: mean, normalised, no
 *                            prefixes.
 *
 * Files are treated as hostile: shapes are checked against config.json and
 * every tensor against the file (safetensors.h). Weights stay in the
 * mmap'd file when they are aligned F32, and are converted to F32 copies
 * otherwise (the word-embedding table is converted row by row on lookup
 * instead, so a 250k-row F16/BF16 table costs no copy).
 *
 * Threads: the matrix products run on OpenBLAS, whose thread count is one
 * process-wide setting; embed_encode sets it to the model's count (1 by
 * default, see embed_set_threads) before it starts. A model must not be
 * used by two threads at once; load one per thread if needed.
 */
#ifndef CAIRN_EMBED_H
#define CAIRN_EMBED_H

#include <stddef.h>
#include <stdint.h>

struct embed_model;

/* Loads the model in dir. Returns NULL with a message in err (if err is
 * not NULL) on failure. The caller owns the result: embed_free. */
struct embed_model *embed_load(const char *dir, char *err, size_t errlen);
void embed_free(struct embed_model *m);

/* The hash a model's identity is made of, of dir's small files (the
 * folder m was loaded from; embed_id_files in common.h says which and
 * how): as the loader made it from the files it read whole (USE-lite's
 * model.json and vocab.json, 465 KB, not hashed twice), else read from
 * dir. Stores keep vectors under the identity: it never changes. */
uint64_t embed_id_hash(const struct embed_model *m, const char *dir);
/* Output dimension (hidden_size). */
int embed_dim(const struct embed_model *m);
/* Longest input in tokens, specials included; longer texts are truncated. */
int embed_max_tokens(const struct embed_model *m);
/* Threads for a forward pass (>= 1; default 1): a batch is cut into
 * shares of whole texts, a query (BERT, weights packed) is split between
 * a pool of that many threads the model starts once and keeps until
 * embed_free (at most the CPU count and the head count). */
void embed_set_threads(struct embed_model *m, int n);
/* The message of the last failed call on m (never NULL; "" if none). */
const char *embed_errmsg(const struct embed_model *m);

/*
 * Encodes n NUL-terminated texts into out[n][embed_dim(m)] (caller's
 * memory). is_query selects the query prefix instead of the document
 * prefix, for models trained with them (e5: "query: " / "passage: ").
 * Any bytes are accepted (invalid UTF-8, empty strings; a NULL text is
 * taken as ""). Texts are batched by length internally, so the order of
 * texts does not change any vector. Returns 0, or -1 (embed_errmsg says
 * why: out of memory, or a bad argument).
 */
int embed_encode(struct embed_model *m, const char *const *texts, size_t n,
                 int is_query, float *out);

/* ---- lower level: for tests and benchmarks ---------------------------- */

/* Token ids of text as embed_encode would feed them (prefix included);
 * returns the count (<= max_ids and <= embed_max_tokens), or -1. */
int embed_tokenize(struct embed_model *m, const char *text, int is_query,
                   int32_t *ids, int max_ids);

/*
 * One forward pass over a padded batch: ids[batch][seq] (entries past
 * lens[b] are ignored), lens[b] in 1..seq, seq <= embed_max_tokens.
 * Writes pooled (and, if configured, normalised) vectors to
 * out[batch][dim]. Returns 0, or -1 on a bad id or length, or no memory.
 */
int embed_forward_ids(struct embed_model *m, const int32_t *ids,
                      const int *lens, int batch, int seq, float *out);

/*
 * Where a BERT model's packed weights come from: 0 not packed (yet), 1
 * packed in this process, 2 mapped from the pre-packed file in the model
 * folder (DIR/.cairn-packed/, packcache.h). With CAIRN_PACK_CACHE=1, a
 * model whose packed weights reach 8 MB keeps them in that file: mapped
 * at load when it is valid, else packed at the first pass and written
 * when the folder is writable. Without it (the default), packing happens
 * in each process at the first batch or second query.
 */
int embed_packed_from(const struct embed_model *m);
/*
 * The int8 path of a BERT model (qgemm.c): the six linear layers of every
 * block on int8 weights (per output channel) and int8 activations (per
 * row), attention, softmax, layer norms and GELU in f32. Off by default
 * for the BERTs, on for USE-lite; CAIRN_EMBED_INT8=1 or 0 in the
 * environment forces it at load. Its vectors
 * are close to the f32 ones (cosine >= 0.999 on the golden texts and dev
 * queries, test_embed_int8), not equal; both are stored under the same
 * model id (it names the files, not the path), so a store may hold both
 * and ranks as either alone would bar near-ties (docs/HYBRID.md, "Mixed
 * vectors"; `cairn reindex` makes it uniform).
 * USE-lite's products likewise (its layers are TensorFlow's [in][out],
 * quantised per output column), but for three that stay f32 (use.c,
 * use_pack: the cosine bar needs it). embed_int8 switches a loaded model
 * (dropping what was packed).
 */
void embed_int8(struct embed_model *m, int on);
int embed_int8_on(const struct embed_model *m);
/* For tests: the packed size from which the file is used (default 8 MB).
 * Not thread-safe. */
void embed_pack_cache_min(size_t bytes);

#endif
