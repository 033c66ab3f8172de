/*
 * packcache.h: the pre-packed weights file, a derived copy of a model's
 * packed encoder weights (gemm.c's panel layout: a BERT's, or the products
 * USE-lite's int8 keeps in f32) kept beside the model, mapped read-only by
 * every process instead of packing again (or, up to 32 MB where 2 MB
 * pages are on, read into them: packcache.c, pc_copy); and the int8 file.
 * See packcache.c for the format and why it is never trusted blindly.
 */
#ifndef CAIRN_EMBED_PACKCACHE_H
#define CAIRN_EMBED_PACKCACHE_H

#include <stddef.h>
#include <stdint.h>

/* Values of each weight the file is checked against, at each end. */
#define EMBED_PC_EDGE 16

/* One weight w[n][k] (the embed_k_pack layout) the file holds packed, by
 * its shape and the values at its two ends: edge[0..e) are w[0][0..e),
 * edge[e..2e) the last row's last e, e = min(k, EMBED_PC_EDGE)
 * (embed_pc_edges fills them). */
struct embed_pc_tensor {
    int n, k;
    float edge[2 * EMBED_PC_EDGE];
};

/* Fills t's edges from w[n][k] in memory. */
void embed_pc_edges(struct embed_pc_tensor *t, const float *w);

/* What the file was made from: the weights file's size and change time,
 * and for a model of several files (USE-lite's shards) key, the caller's
 * hash of all their sizes and times (0 for one file). */
struct embed_pc_source {
    uint64_t size;
    int64_t  mtime_s, mtime_ns;
    uint64_t key;
};

struct embed_pc;   /* a mapped, validated file */

/* The file for panel width nr in model folder dir: dir/.cairn-packed/nrNR.bin
 * (a subfolder, so the model's identity, which hashes the folder's plain
 * files, does not change). -1 if the path does not fit. */
int embed_pc_path(const char *dir, int nr, char *out, size_t n);

/* Maps dir's file for panel width nr if it is valid for the nt weights t
 * and the source src; panels[i] then points at t[i]'s panels (64-byte
 * aligned) until embed_pc_close. NULL (why in err) when there is none or
 * it does not match: absent, another owner, truncated, another format,
 * other shapes or source, or values that differ from the weights. */
struct embed_pc *embed_pc_open(const char *dir, int nr, const struct embed_pc_source *src,
                               const struct embed_pc_tensor *t, int nt,
                               const float **panels, char *err, size_t errlen);
void embed_pc_close(struct embed_pc *pc);

/* The same checks on a file image in memory (img 64-byte aligned, size
 * bytes): 0 and panels set, or -1 and why. For embed_pc_open and the
 * fuzzer. */
int embed_pc_check(const void *img, size_t size, int nr, const struct embed_pc_source *src,
                   const struct embed_pc_tensor *t, int nt, const float **panels,
                   char *err, size_t errlen);

/* Writes dir's file for panel width nr from panels[i] (t[i] packed at that
 * width): a temporary file in dir/.cairn-packed, synced, renamed into
 * place, so a reader sees a whole file or none. 0, or -1 and why. */
int embed_pc_write(const char *dir, int nr, const struct embed_pc_source *src,
                   const struct embed_pc_tensor *t, int nt, const float *const *panels,
                   char *err, size_t errlen);

/* The int8 file, dir/.cairn-packed/q8.bin: nt weights' int8 forms
 * (qgemm.c's images, embed_k_q8_view), keyed by src_key (the caller's
 * hash of its weights files' sizes and change times), the shapes and the
 * format's version, and checked against t[i].edge (the caller's 32 values
 * of each weight, compared bit for bit, kept in the file). */
struct embed_k_q8;

/* Maps dir's int8 file if it is valid for src_key and t; images[i] then
 * points at weight i's image (64-byte aligned) until embed_pc_close.
 * NULL (why in err) when absent, another owner, truncated, another format
 * or version, other shapes, another key or other edge values. */
struct embed_pc *embed_pc_q8_open(const char *dir, uint64_t src_key,
                                  const struct embed_pc_tensor *t, int nt,
                                  const void **images, char *err, size_t errlen);
/* The same checks on an image in memory (64-byte aligned): for
 * embed_pc_q8_open and the fuzzer. */
int embed_pc_q8_check(const void *img, size_t size, uint64_t src_key,
                      const struct embed_pc_tensor *t, int nt, const void **images,
                      char *err, size_t errlen);
/* Writes dir's int8 file from q[i] (t[i]'s int8 form), as embed_pc_write
 * does. 0, or -1 and why. */
int embed_pc_q8_write(const char *dir, uint64_t src_key, const struct embed_pc_tensor *t,
                      int nt, const struct embed_k_q8 *const *q, char *err, size_t errlen);

/* A file of bytes only the caller reads, dir/.cairn-packed/NAME (a
 * plain name of letters, digits and '.'): USE-lite's vocabulary
 * (vocab.bin, use.c). Keyed by magic (8 bytes: the caller's format and
 * version) and src_key (the caller's hash of its sources' sizes and
 * change times); its header holds a hash of the whole body, so a torn,
 * truncated or damaged body is refused, not only a stale one. Maps it:
 * *body (64-byte aligned) and *len until embed_pc_close. NULL and why
 * when absent, not ours, of another magic or key, or damaged. */
struct embed_pc *embed_pc_blob_open(const char *dir, const char *name, const char *magic,
                                    uint64_t src_key, const void **body, size_t *len,
                                    char *err, size_t errlen);
/* The same checks on an image in memory (64-byte aligned). */
int embed_pc_blob_check(const void *img, size_t size, const char *magic, uint64_t src_key,
                        const void **body, size_t *len, char *err, size_t errlen);
/* Writes body (len bytes) as dir's file name, as embed_pc_write does. */
int embed_pc_blob_write(const char *dir, const char *name, const char *magic,
                        uint64_t src_key, const void *body, size_t len,
                        char *err, size_t errlen);

/* Bytes of t's panels at width nr. */
size_t embed_pc_tensor_bytes(const struct embed_pc_tensor *t, int nr);

#endif
