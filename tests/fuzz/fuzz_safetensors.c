/*
 * fuzz_safetensors.c: libFuzzer target for the .safetensors reader
 * (embed_st_open_mem). The input is the whole file. A hostile file must
 * be refused with a message; an accepted one must describe only bytes
 * inside the image, and every F32/F16/BF16 tensor must convert.
 */
#include "fuzz.h"
#include "embed/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256] = "";
    /* a copy of exactly size bytes, so ASan sees any read past the end */
    uint8_t *img = malloc(size ? size : 1);
    if (!img)
        abort();
    memcpy(img, data, size);
    struct embed_st_file *f = embed_st_open_mem(img, size, err, sizeof err);
    if (!f) {
        if (!err[0])
            abort();                            /* refused without a reason */
        free(img);
        return 0;
    }
    for (size_t i = 0; i < embed_st_count(f); i++) {
        const struct embed_st_tensor *t = embed_st_get(f, i);
        const uint8_t *p = t->data;
        if (p < img || p + t->nbytes > img + size || t->nbytes != t->nelem * (size_t)t->elsize)
            abort();
        if (embed_st_find(f, t->name) != t)
            abort();
        if (t->dtype == EMBED_ST_OTHER)
            continue;
        float *owned = NULL;
        const float *v = embed_st_f32(t, &owned);
        if (!v && t->nelem)
            abort();
        /* every value read, so the sanitizer sees one outside the file */
        volatile float sum = 0;
        for (uint64_t k = 0; k < t->nelem; k++)
            sum += v[k];
        (void)sum;
        free(owned);
    }
    embed_st_close(f);
    free(img);
    return 0;
}
