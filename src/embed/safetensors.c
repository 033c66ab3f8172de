/*
 * safetensors.c: mmap and validate a .safetensors file (format and the list
 * of checks in safetensors.h).
 *
 * Validation happens once, at open: afterwards every tensor's data pointer
 * and byte count are known to lie inside the mapping, to agree with its
 * shape and dtype, and not to overlap another tensor, so the encoder can
 * use the bytes without further checks. cJSON parses the header; numbers
 * come back as doubles, so every shape and offset is also checked to be a
 * non-negative integer below 2^53 before it is converted.
 */
#include "embed/safetensors.h"
#include "embed/common.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct embed_st_file {
    const unsigned char    *base;      /* whole file image */
    size_t                  len;       /* its length */
    int                     mapped;    /* 1 if base is our mmap */
    struct embed_st_tensor *tensors;   /* [count], sorted by name */
    size_t                  count;
};

/* 1 and *out set if j is a number holding a non-negative integer < 2^53. */
static int st_json_u64(const cJSON *j, uint64_t *out)
{
    double d;

    if (!cJSON_IsNumber(j))
        return 0;
    d = j->valuedouble;
    if (!(d >= 0.0) || d > 9007199254740992.0 || d != (double)(uint64_t)d)
        return 0;
    *out = (uint64_t)d;
    return 1;
}

static int st_dtype(const char *s, int *elsize)
{
    static const struct { const char *name; int dtype; int size; } tab[] = {
        { "F32", EMBED_ST_F32, 4 },  { "F16", EMBED_ST_F16, 2 },
        { "BF16", EMBED_ST_BF16, 2 }, { "F64", EMBED_ST_OTHER, 8 },
        { "I64", EMBED_ST_OTHER, 8 }, { "U64", EMBED_ST_OTHER, 8 },
        { "I32", EMBED_ST_OTHER, 4 }, { "U32", EMBED_ST_OTHER, 4 },
        { "I16", EMBED_ST_OTHER, 2 }, { "U16", EMBED_ST_OTHER, 2 },
        { "I8", EMBED_ST_OTHER, 1 },  { "U8", EMBED_ST_OTHER, 1 },
        { "BOOL", EMBED_ST_OTHER, 1 },
    };
    size_t i;

    for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
        if (strcmp(s, tab[i].name) == 0) {
            *elsize = tab[i].size;
            return tab[i].dtype;
        }
    }
    return 0;
}

static int st_cmp_name(const void *a, const void *b)
{
    return strcmp(((const struct embed_st_tensor *)a)->name,
                  ((const struct embed_st_tensor *)b)->name);
}

static int st_cmp_ptr(const void *a, const void *b)
{
    const struct embed_st_tensor *x = *(const struct embed_st_tensor *const *)a;
    const struct embed_st_tensor *y = *(const struct embed_st_tensor *const *)b;
    const unsigned char *px = x->data, *py = y->data;

    return px < py ? -1 : px > py ? 1 : 0;
}

static void st_free(struct embed_st_file *f)
{
    size_t i;

    if (!f)
        return;
    for (i = 0; i < f->count; i++)
        free(f->tensors[i].name);
    free(f->tensors);
    if (f->mapped && f->base)
        munmap((void *)f->base, f->len);
    free(f);
}

int embed_st_file_offset(const struct embed_st_file *f, const void *p, size_t n,
                         uint64_t *off)
{
    const unsigned char *c = p;

    if (!f || !f->mapped || c < f->base || n > f->len || (size_t)(c - f->base) > f->len - n)
        return -1;
    *off = (uint64_t)(c - f->base);
    return 0;
}

void embed_st_close(struct embed_st_file *f)
{
    st_free(f);
}

/* Parses one header entry into t. Returns 0, or -1 with err set. */
static int st_parse_entry(const cJSON *e, const unsigned char *data,
                          uint64_t data_len, struct embed_st_tensor *t,
                          char *err, size_t errlen)
{
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *off = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    const cJSON *d;
    uint64_t begin, end, nelem = 1, v;
    int n = 0;

    if (!cJSON_IsObject(e) || !cJSON_IsString(dt) || !cJSON_IsArray(sh) ||
        !cJSON_IsArray(off)) {
        embed_errf(err, errlen, "tensor '%s': needs dtype, shape and data_offsets",
               t->name);
        return -1;
    }
    t->dtype = st_dtype(dt->valuestring, &t->elsize);
    if (!t->dtype) {
        embed_errf(err, errlen, "tensor '%s': unknown dtype '%.16s'", t->name,
               dt->valuestring);
        return -1;
    }
    cJSON_ArrayForEach(d, sh) {
        if (n >= EMBED_ST_MAX_DIMS) {
            embed_errf(err, errlen, "tensor '%s': more than %d dimensions", t->name,
                   EMBED_ST_MAX_DIMS);
            return -1;
        }
        if (!st_json_u64(d, &v) || v > (uint64_t)INT64_MAX) {
            embed_errf(err, errlen, "tensor '%s': bad dimension", t->name);
            return -1;
        }
        if (v != 0 && nelem > UINT64_MAX / v) {
            embed_errf(err, errlen, "tensor '%s': element count overflows", t->name);
            return -1;
        }
        nelem *= v;
        t->shape[n++] = (int64_t)v;
    }
    t->ndim = n;
    t->nelem = nelem;
    if (cJSON_GetArraySize(off) != 2 ||
        !st_json_u64(cJSON_GetArrayItem(off, 0), &begin) ||
        !st_json_u64(cJSON_GetArrayItem(off, 1), &end) || begin > end) {
        embed_errf(err, errlen, "tensor '%s': bad data_offsets", t->name);
        return -1;
    }
    if (end > data_len) {
        embed_errf(err, errlen, "tensor '%s': data [%llu, %llu) past the end of "
               "the file (%llu data bytes)", t->name, (unsigned long long)begin,
               (unsigned long long)end, (unsigned long long)data_len);
        return -1;
    }
    if (nelem > UINT64_MAX / (uint64_t)t->elsize ||
        nelem * (uint64_t)t->elsize != end - begin) {
        embed_errf(err, errlen, "tensor '%s': shape x dtype size (%llu elements) "
               "does not match its %llu bytes", t->name,
               (unsigned long long)nelem, (unsigned long long)(end - begin));
        return -1;
    }
    t->data = data + begin;
    t->nbytes = (size_t)(end - begin);
    return 0;
}

static struct embed_st_file *st_parse(struct embed_st_file *f, char *err,
                                      size_t errlen)
{
    cJSON *root = NULL, *e;
    struct embed_st_tensor **by_ptr = NULL;
    uint64_t hlen = 0, data_len;
    const unsigned char *data;
    size_t i, n = 0;
    int ok = 0;

    if (f->len < 8) {
        embed_errf(err, errlen, "file too short (%zu bytes) for a safetensors header",
               f->len);
        goto out;
    }
    for (i = 0; i < 8; i++)
        hlen |= (uint64_t)f->base[i] << (8 * i);
    if (hlen == 0 || hlen > EMBED_ST_MAX_HEADER || hlen > f->len - 8) {
        embed_errf(err, errlen, "header length %llu is out of bounds (file %zu bytes)",
               (unsigned long long)hlen, f->len);
        goto out;
    }
    if (f->base[8] != '{') {
        embed_errf(err, errlen, "header is not a JSON object");
        goto out;
    }
    root = cJSON_ParseWithLength((const char *)f->base + 8, (size_t)hlen);
    if (!cJSON_IsObject(root)) {
        embed_errf(err, errlen, "header is not valid JSON");
        goto out;
    }
    data = f->base + 8 + hlen;
    data_len = f->len - 8 - hlen;

    cJSON_ArrayForEach(e, root)
        n++;
    f->tensors = calloc(n ? n : 1, sizeof(*f->tensors));
    by_ptr = calloc(n ? n : 1, sizeof(*by_ptr));
    if (!f->tensors || !by_ptr) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    cJSON_ArrayForEach(e, root) {
        struct embed_st_tensor *t = &f->tensors[f->count];

        if (!e->string) {
            embed_errf(err, errlen, "header entry without a name");
            goto out;
        }
        if (strcmp(e->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(e)) {
                embed_errf(err, errlen, "__metadata__ is not an object");
                goto out;
            }
            continue;
        }
        t->name = strdup(e->string);
        if (!t->name) {
            embed_errf(err, errlen, "out of memory");
            goto out;
        }
        f->count++;
        if (st_parse_entry(e, data, data_len, t, err, errlen) != 0)
            goto out;
    }
    qsort(f->tensors, f->count, sizeof(*f->tensors), st_cmp_name);
    for (i = 1; i < f->count; i++) {
        if (strcmp(f->tensors[i - 1].name, f->tensors[i].name) == 0) {
            embed_errf(err, errlen, "tensor '%s' appears twice", f->tensors[i].name);
            goto out;
        }
    }
    for (i = 0; i < f->count; i++)
        by_ptr[i] = &f->tensors[i];
    qsort(by_ptr, f->count, sizeof(*by_ptr), st_cmp_ptr);
    for (i = 1; i < f->count; i++) {
        const unsigned char *prev_end =
            (const unsigned char *)by_ptr[i - 1]->data + by_ptr[i - 1]->nbytes;
        if ((const unsigned char *)by_ptr[i]->data < prev_end) {
            embed_errf(err, errlen, "tensors '%s' and '%s' overlap",
                   by_ptr[i - 1]->name, by_ptr[i]->name);
            goto out;
        }
    }
    ok = 1;
out:
    cJSON_Delete(root);
    free(by_ptr);
    if (!ok) {
        st_free(f);
        return NULL;
    }
    return f;
}

struct embed_st_file *embed_st_open_mem(const void *data, size_t len,
                                        char *err, size_t errlen)
{
    struct embed_st_file *f = calloc(1, sizeof(*f));

    if (!f) {
        embed_errf(err, errlen, "out of memory");
        return NULL;
    }
    f->base = data;
    f->len = len;
    return st_parse(f, err, errlen);
}

struct embed_st_file *embed_st_open(const char *path, char *err, size_t errlen)
{
    struct embed_st_file *f = NULL;
    struct stat sb;
    void *p;
    int fd;

    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        embed_errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        embed_errf(err, errlen, "%s: not a regular file", path);
        goto out;
    }
    if (sb.st_size < 8) {
        embed_errf(err, errlen, "%s: file too short (%lld bytes) for a safetensors "
               "header", path, (long long)sb.st_size);
        goto out;
    }
    p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
        embed_errf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        goto out;
    }
    f = calloc(1, sizeof(*f));
    if (!f) {
        munmap(p, (size_t)sb.st_size);
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    f->base = p;
    f->len = (size_t)sb.st_size;
    f->mapped = 1;
    f = st_parse(f, err, errlen);
out:
    close(fd);
    return f;
}

size_t embed_st_count(const struct embed_st_file *f)
{
    return f->count;
}

const struct embed_st_tensor *embed_st_get(const struct embed_st_file *f,
                                           size_t i)
{
    return i < f->count ? &f->tensors[i] : NULL;
}

const struct embed_st_tensor *embed_st_find(const struct embed_st_file *f,
                                            const char *name)
{
    struct embed_st_tensor key;

    memset(&key, 0, sizeof(key));
    key.name = (char *)name;
    return bsearch(&key, f->tensors, f->count, sizeof(*f->tensors),
                   st_cmp_name);
}

void embed_st_advise_random(const struct embed_st_file *f,
                            const struct embed_st_tensor *t)
{
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t start, end;

    if (!f->mapped || page <= 0 || t->nbytes == 0)
        return;
    start = (uintptr_t)t->data & ~(uintptr_t)(page - 1);
    end = (uintptr_t)t->data + t->nbytes;
    madvise((void *)start, end - start, MADV_RANDOM);
}

float embed_st_half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff, bits;
    float out;

    if (exp == 0x1f) {                      /* inf / NaN */
        bits = sign | 0x7f800000u | (mant << 13);
    } else if (exp != 0) {                  /* normal */
        bits = sign | ((exp + 112) << 23) | (mant << 13);
    } else if (mant == 0) {                 /* zero */
        bits = sign;
    } else {                                /* subnormal: renormalise */
        exp = 113;
        while (!(mant & 0x400)) {
            mant <<= 1;
            exp--;
        }
        bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
    memcpy(&out, &bits, sizeof(out));
    return out;
}

float embed_st_bf16_to_float(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float out;

    memcpy(&out, &bits, sizeof(out));
    return out;
}

const float *embed_st_f32(const struct embed_st_tensor *t, float **owned)
{
    const unsigned char *p = t->data;
    float *out;
    size_t i, n = (size_t)t->nelem;

    *owned = NULL;
    if (t->dtype == EMBED_ST_F32 && ((uintptr_t)p % sizeof(float)) == 0)
        return (const float *)t->data;
    if (t->dtype != EMBED_ST_F32 && t->dtype != EMBED_ST_F16 &&
        t->dtype != EMBED_ST_BF16)
        return NULL;
    out = malloc(n ? n * sizeof(float) : 1);
    if (!out)
        return NULL;
    for (i = 0; i < n; i++) {
        if (t->dtype == EMBED_ST_F32) {
            memcpy(&out[i], p + 4 * i, 4);
        } else {
            uint16_t h = (uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
            out[i] = t->dtype == EMBED_ST_F16 ? embed_st_half_to_float(h)
                                              : embed_st_bf16_to_float(h);
        }
    }
    *owned = out;
    return out;
}
