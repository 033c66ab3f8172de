/*
 * kernels.h: the numeric kernels of cairn's sentence encoder.
 *
 * Every kernel works on row-major float32 arrays and comes in two forms:
 * the fast one (BLAS for the matrix products, AVX2 / AVX-512 code chosen
 * at run time or plain loops for the rest, see embed_k_simd) and a scalar
 * reference `*_ref` that is written to be obviously right. The unit tests
 * (tests/unit/test_embed_kernels.c) compare the two on random data; the
 * forward pass only calls the fast ones. Shapes are given in brackets: [rows][cols].
 *
 * Linear weights keep the PyTorch / safetensors layout W[out][in], so a
 * layer is y = x W^T + b and embed_k_linear uses the weight in place from
 * the mmap'd file (cblas_sgemm with CblasTrans). embed_k_pack makes the
 * one copy there is: the panel layout of cairn's own product (gemm.c);
 * embed_k_pack_kn packs USE-lite's [in][out] weights into the same.
 *
 * Threads: OpenBLAS keeps one process-wide thread count. The kernels never
 * set it; the caller (embed_run_shares in common.c, for bert.c and use.c)
 * does, through embed_k_set_threads, before each forward pass. The count
 * also picks between the packed product and OpenBLAS
 * (embed_k_linear_packed); that choice follows the count the calling thread
 * last set, so two models encoding in two threads at once do not switch
 * each other's path.
 *
 * OpenBLAS is loaded at run time (dlopen "libopenblas.so.0", Debian's
 * libopenblas0) at the first matrix product or embed_k_set_threads, once
 * per process (thread-safe). When it cannot be loaded, or the environment
 * has CAIRN_BLAS=none (read at that first use; for tests and for machines
 * where OpenBLAS misbehaves), the products it would run go to scalar C
 * loops: the same vectors to float rounding, many times slower.
 * embed_k_note() says which.
 */
#ifndef CAIRN_EMBED_KERNELS_H
#define CAIRN_EMBED_KERNELS_H

#include <stddef.h>
#include <stdint.h>

/* Sets OpenBLAS's thread count (n < 1 is taken as 1); a no-op on the
 * scalar fallback. */
void embed_k_set_threads(int n);
/* 1 if the matrix products run on OpenBLAS, 0 on the scalar fallback. */
int embed_k_blas(void);
/* "" on OpenBLAS; else why the scalar fallback is in use (the loader's
 * message and the package to install, or CAIRN_BLAS=none), for the caller
 * to show as a note. Static storage. */
const char *embed_k_note(void);
/* 1 once OpenBLAS has been tried (loaded or not); never loads it. A
 * process whose products all run packed never does (embed_k_set_threads
 * keeps the count for when it does). */
int embed_k_blas_tried(void);

/* Which hand-vectorised kernels are in use: 0 none (portable loops),
 * 1 AVX2+FMA (the element-wise kernels, embed_k_linear for m <= 24, the
 * packed product on 16-column panels and attention on it), 2 also
 * AVX-512 F (embed_k_linear for m <= 32, the packed product's 32-column
 * tiles). Chosen from the CPU, capped by CAIRN_SIMD and the tests. */
int embed_k_simd(void);
/* For tests: caps embed_k_simd at level (0, 1 or 2; 2 is the default).
 * Not thread-safe. The environment's CAIRN_SIMD (avx2 or portable, read
 * once) caps it too, for the process: the AVX2 path on an AVX-512 CPU. */
void embed_k_simd_enable(int level);
/* The level the CPU has, whatever the caps. */
int embed_k_simd_cpu(void);
/* The VNNI instructions the int8 product may use (bits): 1 AVX-VNNI, 2
 * AVX-512 VNNI (with AVX-512 F). What the CPU has, capped by CAIRN_SIMD:
 * avx2 and portable allow none, avxvnni only AVX-VNNI (and caps the level
 * at 1). */
int embed_k_simd_vnni(void);
/* "avx512", "avx2" or "portable" for a level. */
const char *embed_k_simd_name(int level);

/* y[m][n] = x[m][k] . w[n][k]^T + b[n]   (b may be NULL). For few rows
 * (a query) a kernel that reads w in place; else OpenBLAS. */
void embed_k_linear(const float *x, const float *w, const float *b,
                    float *y, int m, int n, int k);
void embed_k_linear_ref(const float *x, const float *w, const float *b,
                        float *y, int m, int n, int k);

/*
 * Weights w[n][k] (the embed_k_linear layout) packed once into the panel
 * layout of cairn's own matrix product (gemm.c), for products with many
 * rows (a batch). The copy costs n*k floats (rounded up to 32 columns,
 * or 16 when packed at the AVX2 level: the panel width follows the level
 * in force at packing, and a later level runs on it all the same);
 * w itself is kept (not copied) for the other paths and must outlive the
 * pack. NULL when out of memory.
 */
struct embed_k_packed;
struct embed_k_packed *embed_k_pack(const float *w, int n, int k);
/* The same from TensorFlow's layout w[k][n], rows ldw >= n floats apart
 * (embed_k_linear_kn's weights, USE-lite). NULL also if ldw < n. */
struct embed_k_packed *embed_k_pack_kn(const float *w, int ldw, int n, int k);
/* A packed weight whose panels p (the embed_k_pack layout for panel
 * width nr, 64-byte aligned) belong to the caller, e.g. a mapped cache
 * file (packcache.c): p must outlive it and is never freed or written.
 * NULL for a bad shape, width or alignment, or out of memory. */
struct embed_k_packed *embed_k_packed_view(const float *w, int n, int k, int nr,
                                           const float *p);
/* The same for w[k][n] with rows ldw >= n apart (embed_k_pack_kn's
 * weights): p holds embed_k_pack_kn's panels. */
struct embed_k_packed *embed_k_packed_view_kn(const float *w, int ldw, int n, int k, int nr,
                                              const float *p);
/* The int8 form (qgemm.c): w[n][k] quantised per output channel, for
 * embed_k_linear_packed and embed_k_gemm_packed_cols, which then run the
 * int8 product (at any level, embed_k_q8_level_at) instead of the f32
 * one. No f32 panels: embed_k_packed_panels is NULL. w is kept (not
 * copied) and must outlive the pack. NULL when out of memory. */
struct embed_k_packed *embed_k_pack_q8(const float *w, int n, int k);
/* The same from w[k][n] (embed_k_pack_kn's), rows ldw >= n apart. */
struct embed_k_packed *embed_k_pack_q8_kn(const float *w, int ldw, int n, int k);
/* embed_k_pack_q8_kn's result over an image (embed_k_q8_view) instead of
 * quantising w: the same vectors when the image is w's. */
struct embed_k_packed *embed_k_packed_q8_view(const float *w, int ldw, int n, int k,
                                              const void *img);
/* pk's int8 form (NULL if pk is f32), for embed_k_q8_parts. */
const struct embed_k_q8 *embed_k_packed_q8(const struct embed_k_packed *pk);
/* 1 if pk is the int8 form. */
int embed_k_packed_is_q8(const struct embed_k_packed *pk);
/* The panel width embed_k_pack would use now (32 at AVX-512, else 16). */
int embed_k_pack_width(void);
void embed_k_packed_free(struct embed_k_packed *pk);
const float *embed_k_packed_panels(const struct embed_k_packed *pk);
int embed_k_packed_nr(const struct embed_k_packed *pk);
size_t embed_k_packed_bytes(const struct embed_k_packed *pk);
const float *embed_k_packed_w(const struct embed_k_packed *pk);
int embed_k_packed_n(const struct embed_k_packed *pk);
int embed_k_packed_k(const struct embed_k_packed *pk);
/* 0 for embed_k_pack's w[n][k]; embed_k_pack_kn's ldw for w[k][n]. */
int embed_k_packed_ldw(const struct embed_k_packed *pk);

/* 1 if embed_k_linear_packed runs the packed product on this CPU with
 * this OpenBLAS (at 1 thread; see kernels.c): else packing is wasted. */
int embed_k_packed_pays(void);
/* embed_k_linear on packed weights: y[m][n] = x[m][k] . w^T + b. Runs
 * the packed product where it is measured to win, else embed_k_linear
 * (or embed_k_linear_kn, for embed_k_pack_kn) on the original w. */
void embed_k_linear_packed(const float *x, const struct embed_k_packed *pk,
                           const float *b, float *y, int m);
/* The same with the packed product's work space given: work holds
 * embed_k_gemm_work(m, k) floats, or is NULL (then allocated per call). A
 * caller that runs many products on few rows (a query) gives one block
 * already touched rather than fresh pages each product. Same bits. */
void embed_k_linear_packed_w(const float *x, const struct embed_k_packed *pk,
                             const float *b, float *y, int m, float *work);
/* embed_k_linear_packed of the same x[m][k] on n <= EMBED_K_Q8_MAXN
 * packs, x quantised once, where all are the int8 form of inner size k
 * (embed_k_q8_cols_n): 0 when done, -1 (nothing written) otherwise, for
 * the caller to run each. */
int embed_k_linear_packed_n(const float *x, const struct embed_k_packed *const *pk,
                            const float *const *b, float *const *y, int n, int m);
/* The packed product itself at SIMD level 2 (AVX-512) or 1 (AVX2+FMA),
 * whatever the policy: -1 (nothing written) for level 0, a CPU without
 * x86 SIMD, or no memory for its ~256 KB work block. For tests and the
 * dispatch above. */
int embed_k_gemm_packed(int level, const float *x, const struct embed_k_packed *pk,
                        const float *b, float *y, int m);
/* embed_k_gemm_packed with work (embed_k_gemm_work(m, k) floats) given,
 * or NULL to allocate it. */
int embed_k_gemm_packed_w(int level, const float *x, const struct embed_k_packed *pk,
                          const float *b, float *y, int m, float *work);

/* Floats of work space embed_k_gemm_packed_cols needs for m rows of
 * inner size k (no alignment needed). */
size_t embed_k_gemm_work(int m, int k);
/* Columns [c0, c1) of the packed product, y[m][c] = x[m][k] . w^T + b[c]
 * for c0 <= c < c1, x's rows ldx apart and y's ldy: for threads that split
 * a product's columns (bert.c). Each column is computed exactly as by the
 * whole product (the same bits). c0 must be a multiple of 32 (a panel);
 * c1 <= n. -1 (nothing written) at level 0, off x86, or for a bad range. */
int embed_k_gemm_packed_cols(int level, const float *x, int ldx,
                             const struct embed_k_packed *pk, int c0, int c1,
                             const float *bias, float *y, int ldy, int m, float *work);

/*
 * The int8 product (qgemm.c; its header says how it quantises and why
 * every level gives the same bits). Levels: 3 AVX-512 VNNI, 2 AVX-VNNI,
 * 1 AVX2 (vpmaddubsw, the sign trick), 0 plain C.
 */
struct embed_k_q8;
struct embed_k_q8 *embed_k_q8_new(const float *w, int n, int k);
/* The same from w[k][n], rows ldw >= n apart (USE-lite's layout). */
struct embed_k_q8 *embed_k_q8_new_kn(const float *w, int ldw, int n, int k);
void embed_k_q8_free(struct embed_k_q8 *q);
size_t embed_k_q8_bytes(const struct embed_k_q8 *q);
/* The int8 form as bytes, for a file (packcache.c, embed_pc_q8_*): its
 * image for an n x k weight is embed_k_q8_image_bytes(n, k) long (0 for a
 * bad shape) and is q's parts, embed_k_q8_parts (returns how many), end
 * to end. The image does not depend on the SIMD level. */
size_t embed_k_q8_image_bytes(int n, int k);
int embed_k_q8_parts(const struct embed_k_q8 *q, const void *part[3], size_t len[3]);
/* An int8 form over an image (64-byte aligned) of
 * embed_k_q8_image_bytes(n, k) bytes that belongs to the caller: it must
 * outlive the view and is never written. Its values are only ever used as
 * values (weights, scales, corrections), never as sizes or offsets, so any
 * image gives wrong vectors at worst, never a read outside it. NULL for a
 * bad shape or alignment, or out of memory. */
struct embed_k_q8 *embed_k_q8_view(int n, int k, const void *img);
/* The int8 level for a SIMD level (embed_k_simd's), on this CPU. */
int embed_k_q8_level_at(int simd);
/* embed_k_q8_level_at(embed_k_simd()). */
int embed_k_q8_level(void);
const char *embed_k_q8_level_name(int level);
/* Bytes of work embed_k_q8_cols needs for m rows of inner size k (any
 * alignment). */
size_t embed_k_q8_work(int m, int k);
/* Columns [c0, c1) of y[m][n] = x[m][k] . w^T + b (c0 a multiple of 32,
 * c1 <= n), x's rows ldx apart and y's ldy. -1 (nothing written) for a
 * bad level or range. */
int embed_k_q8_cols(int level, const float *x, int ldx, const struct embed_k_q8 *q, int c0,
                    int c1, const float *bias, float *y, int ldy, int m, void *work);
/* n <= EMBED_K_Q8_MAXN whole products of the same x[m][k] (rows k apart),
 * y[p][m][n_p] = x . q[p]^T + bias[p] (bias[p] may be NULL), each q[p] of
 * inner size k: x is quantised once for all (BERT's q, k and v). The same
 * bits as embed_k_q8_cols on each; -1 (nothing written) for a bad level,
 * n or k. Work: embed_k_q8_work(m, k) bytes. */
#define EMBED_K_Q8_MAXN 4
int embed_k_q8_cols_n(int level, const float *x, const struct embed_k_q8 *const *q,
                      const float *const *bias, float *const *y, int n, int m, void *work);
/* For tests: out[m][n] = the exact integer sums sum_t qx[i][t] qw[j][t]
 * the level computes. -1 if no memory or a bad level. */
int embed_k_q8_sums(int level, const float *x, const struct embed_k_q8 *q, int32_t *out,
                    int m);
/* The quantiser of x[k] (weights per output channel and activations per
 * row alike) into q[k]; returns the scale. */
float embed_k_q8_quant(const float *x, int k, int8_t *q);
/* The reference: both sides quantised by embed_k_q8_quant, summed in
 * int32, scaled as qgemm.c does. Nothing is written if out of memory. */
void embed_k_linear_q8_ref(const float *x, const float *w, const float *b, float *y, int m,
                           int n, int k);

/* y[m][n] = x[m][k] . w[k][n] + b[n], with w's rows ldw >= n floats apart
 * (TensorFlow's layout, [in][out]; ldw > n picks columns out of a fused
 * matrix, e.g. the q part of USE-lite's qkv kernel). b may be NULL. */
void embed_k_linear_kn(const float *x, const float *w, int ldw, const float *b,
                       float *y, int m, int n, int k);
void embed_k_linear_kn_ref(const float *x, const float *w, int ldw,
                           const float *b, float *y, int m, int n, int k);

/* x[rows][dim] = LayerNorm(x + res) * g + b, row by row, in place.
 * res may be NULL (plain LayerNorm). Biased variance, as torch does. */
void embed_k_add_layernorm(float *x, const float *res, const float *g,
                           const float *b, int rows, int dim, float eps);
void embed_k_add_layernorm_ref(float *x, const float *res, const float *g,
                               const float *b, int rows, int dim, float eps);

/* Element-wise activations, in place over n floats. gelu is the exact
 * erf form (BERT's "gelu"); gelu_tanh is the tanh approximation
 * ("gelu_new" / "gelu_pytorch_tanh"). */
void embed_k_gelu(float *x, size_t n);
void embed_k_gelu_ref(float *x, size_t n);
void embed_k_gelu_tanh(float *x, size_t n);
void embed_k_relu(float *x, size_t n);
void embed_k_relu_ref(float *x, size_t n);
void embed_k_tanh(float *x, size_t n);

/* Softmax of x[n] in place (max-subtracted). n must be >= 1. */
void embed_k_softmax(float *x, int n);
void embed_k_softmax_ref(float *x, int n);

/*
 * Multi-head self-attention over a padded batch.
 *   q, k, v  [batch*seq][hidden]  projections (bias already added)
 *   lens     [batch]              valid tokens per sequence (1..seq); the
 *                                 rest is padding, always at the end
 *   ctx      [batch*seq][hidden]  OUT: softmax(q k^T / sqrt(d)) v per head;
 *                                 rows of padding tokens are set to 0
 *   scratch  [seq*seq]            work space
 * hidden = heads * head_dim. Padding keys are left out of the softmax
 * entirely, which is what an additive -10000 / -inf mask gives in float32.
 */
void embed_k_attention(const float *q, const float *k, const float *v,
                       float *ctx, const int *lens, int batch, int seq,
                       int heads, int head_dim, float *scratch);
/* Floats of work space (64-byte aligned) embed_k_attention_packed needs
 * for any length up to n tokens and head size hd. */
size_t embed_k_attention_work(int n, int hd);
/* embed_k_attention with its work space given (embed_k_attention_work(seq,
 * head_dim) floats, 64-byte aligned), or NULL to allocate it. Same bits. */
void embed_k_attention_w(const float *q, const float *k, const float *v,
                         float *ctx, const int *lens, int batch, int seq,
                         int heads, int head_dim, float *scratch, float *work);
/* One head of one sequence of embed_k_attention on the packed product
 * (gemm.c), at SIMD level 2 or 1: q, k, v, ctx are that head's n x hd
 * slices with rows ld floats apart; scores [n][n]. -1 (nothing written)
 * at level 0. For embed_k_attention and tests. */
int embed_k_attention_packed(int level, const float *q, const float *k, const float *v,
                             float *ctx, int ld, int n, int hd, float scale,
                             float *scores, float *work);
void embed_k_attention_ref(const float *q, const float *k, const float *v,
                           float *ctx, const int *lens, int batch, int seq,
                           int heads, int head_dim);

/* out[batch][dim] = mean of x[b][0..lens[b]) (x is [batch*seq][dim]). */
void embed_k_mean_pool(const float *x, const int *lens, int batch, int seq,
                       int dim, float *out);
/* out[batch][dim] = x[b][0] (the [CLS] row). */
void embed_k_cls_pool(const float *x, int batch, int seq, int dim,
                      float *out);
/* Scales each of rows x[rows][dim] to unit L2 norm; an all-zero row stays
 * zero. */
void embed_k_l2_normalize(float *x, int rows, int dim);

#endif
