/*
 * safetensors.h: a validating, mmap-based reader of .safetensors files.
 *
 * File format (https://github.com/huggingface/safetensors), all we accept:
 *
 *   u64 LE  N                  header length in bytes
 *   N bytes JSON header        { "NAME": { "dtype": "F32",
 *                                          "shape": [d0, d1, ...],
 *                                          "data_offsets": [begin, end] },
 *                                ...,
 *                                "__metadata__": { "k": "v", ... } }
 *   bytes   data               tensor bytes, little-endian, row-major;
 *                              offsets are relative to the data start
 *
 * The file is treated as hostile. It is refused, with a message saying why,
 * when: it is shorter than 8 bytes; N is 0, larger than the rest of the
 * file or larger than EMBED_ST_MAX_HEADER; the header is not a JSON object;
 * an entry lacks dtype/shape/data_offsets or has them of the wrong type; a
 * dtype is unknown; a dimension is negative, not an integer or the element
 * count overflows; shape x dtype size differs from end - begin; an offset
 * lies outside the data; two tensors overlap; a name is duplicated.
 *
 * Accepted dtypes are F32, F16 and BF16 (others, e.g. I64, parse but can
 * not be converted to float). Data is used in place from the mapping:
 * embed_st_f32 hands out a pointer into the map for an aligned F32 tensor
 * and a converted copy otherwise.
 */
#ifndef CAIRN_EMBED_SAFETENSORS_H
#define CAIRN_EMBED_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#define EMBED_ST_MAX_HEADER  ((uint64_t)100 << 20)  /* as the Rust crate */
#define EMBED_ST_MAX_DIMS    8

enum embed_st_dtype {
    EMBED_ST_F32 = 1,
    EMBED_ST_F16,
    EMBED_ST_BF16,
    EMBED_ST_OTHER        /* valid in the file, not convertible to float */
};

struct embed_st_tensor {
    char       *name;                     /* NUL-terminated, owned by the file */
    int         dtype;                    /* enum embed_st_dtype */
    int         elsize;                   /* bytes per element */
    int         ndim;
    int64_t     shape[EMBED_ST_MAX_DIMS];
    uint64_t    nelem;                    /* product of shape (1 for ndim 0) */
    const void *data;                     /* into the mapping */
    size_t      nbytes;
};

struct embed_st_file;

/* Maps and validates path. Returns NULL with a message in err on any
 * problem. The result is released with embed_st_close. */
struct embed_st_file *embed_st_open(const char *path, char *err, size_t errlen);
/* Validates an in-memory image (the caller keeps it alive and unchanged
 * while the result is used; embed_st_close does not free it). */
struct embed_st_file *embed_st_open_mem(const void *data, size_t len,
                                        char *err, size_t errlen);
void embed_st_close(struct embed_st_file *f);

size_t embed_st_count(const struct embed_st_file *f);
const struct embed_st_tensor *embed_st_get(const struct embed_st_file *f,
                                           size_t i);
/* The tensor called name, or NULL. */
const struct embed_st_tensor *embed_st_find(const struct embed_st_file *f,
                                            const char *name);
/* Advises the kernel that t's pages are read at random (embedding rows):
 * no read-ahead of the whole table for a 20-row lookup. */
void embed_st_advise_random(const struct embed_st_file *f,
                            const struct embed_st_tensor *t);

/* 0 and *off set to p's offset in the file if p points into f's mapping
 * (n bytes from p inside it); -1 otherwise (a converted copy, an image in
 * memory). For reading a few values with pread instead of through the
 * mapping (bert.c, the pre-packed file's check). */
int embed_st_file_offset(const struct embed_st_file *f, const void *p, size_t n,
                         uint64_t *off);

/* Returns t's values as float32. For an aligned F32 tensor that is the
 * mapped data itself and *owned is set to NULL; otherwise the values are
 * converted into a new array that is returned and also stored in *owned,
 * for the caller to free(). NULL on an unconvertible dtype or no memory. */
const float *embed_st_f32(const struct embed_st_tensor *t, float **owned);

/* Scalar conversions, exposed for tests. */
float embed_st_half_to_float(uint16_t h);
float embed_st_bf16_to_float(uint16_t h);

#endif
