/*
 * test_embed_safetensors.c: the safetensors reader on good files (F32,
 * F16, BF16 values read back exactly), on every truncation of a good file,
 * on every single-byte corruption of its header, and on a list of
 * hand-written hostile headers. A bad file must be refused with a message,
 * never crash; ASan/valgrind runs of this program check the "never".
 */
#include "t.h"
#include "embed/safetensors.h"

#include <stdlib.h>
#include <unistd.h>

/* Builds a safetensors image from a header text and a data blob. */
static unsigned char *make_image(const char *header, const void *data,
                                 size_t dlen, size_t *len)
{
    size_t h = strlen(header), i;
    unsigned char *img = malloc(8 + h + dlen + 1);

    for (i = 0; i < 8; i++)
        img[i] = (unsigned char)(((uint64_t)h >> (8 * i)) & 0xff);
    memcpy(img + 8, header, h);
    if (dlen)
        memcpy(img + 8 + h, data, dlen);
    *len = 8 + h + dlen;
    return img;
}

/* A good file: a 2x3 F32, a 2 F16 and a 2 BF16 tensor. The header is
 * padded with spaces to a multiple of 8 so the F32 data is aligned. */
static const char good_header[] =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"a\":{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,24]},"
    "\"h\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[24,28]},"
    "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[28,32]}}";

static unsigned char *good_image(size_t *len)
{
    unsigned char data[32];
    float a[6] = { 1.0f, -2.0f, 0.5f, 3.25f, 0.0f, -0.125f };
    char header[512];
    size_t h;

    memcpy(data, a, 24);
    /* F16: 1.5 = 0x3E00, -65504 = 0xFBFF; BF16: 1.0 = 0x3F80, -2.5 = 0xC020 */
    data[24] = 0x00; data[25] = 0x3E; data[26] = 0xFF; data[27] = 0xFB;
    data[28] = 0x80; data[29] = 0x3F; data[30] = 0x20; data[31] = 0xC0;
    memcpy(header, good_header, sizeof(good_header));
    h = strlen(header);
    while ((8 + h) % 8) {
        header[h++] = ' ';
        header[h] = 0;
    }
    return make_image(header, data, sizeof(data), len);
}

static void test_good(void)
{
    char err[256] = "";
    size_t len;
    unsigned char *img = good_image(&len);
    struct embed_st_file *f = embed_st_open_mem(img, len, err, sizeof(err));
    const struct embed_st_tensor *t;
    const float *v;
    float *owned = NULL;

    T_CHECK(f != NULL);
    if (!f) {
        fprintf(stderr, "err: %s\n", err);
        free(img);
        return;
    }
    T_EQ_INT(embed_st_count(f), 3);
    T_CHECK(embed_st_find(f, "__metadata__") == NULL);
    T_CHECK(embed_st_find(f, "zz") == NULL);
    t = embed_st_find(f, "a");
    T_CHECK(t && t->dtype == EMBED_ST_F32 && t->ndim == 2 && t->shape[0] == 2 &&
            t->shape[1] == 3 && t->nelem == 6 && t->nbytes == 24);
    v = embed_st_f32(t, &owned);
    T_CHECK(v && owned == NULL);      /* aligned F32: used in place */
    T_CHECK(v && v[1] == -2.0f && v[5] == -0.125f);
    t = embed_st_find(f, "h");
    v = embed_st_f32(t, &owned);
    T_CHECK(v && owned == v && v[0] == 1.5f && v[1] == -65504.0f);
    free(owned);
    t = embed_st_find(f, "b");
    v = embed_st_f32(t, &owned);
    T_CHECK(v && owned == v && v[0] == 1.0f && v[1] == -2.5f);
    free(owned);
    embed_st_close(f);
    free(img);
}

static void test_half(void)
{
    T_CHECK(embed_st_half_to_float(0x3C00) == 1.0f);
    T_CHECK(embed_st_half_to_float(0xC000) == -2.0f);
    T_CHECK(embed_st_half_to_float(0x0001) == 5.9604644775390625e-08f);  /* min subnormal */
    T_CHECK(embed_st_half_to_float(0x03FF) == 6.097555160522461e-05f);   /* max subnormal */
    T_CHECK(embed_st_half_to_float(0x7C00) > 1e38f);                    /* inf */
    T_CHECK(embed_st_half_to_float(0x8000) == 0.0f);
    T_CHECK(embed_st_bf16_to_float(0x4049) == 3.140625f);
}

/* Every strict prefix of a good file is refused (or, for prefixes that
 * keep the whole header but drop data, refused by the offset check). */
static void test_truncated(void)
{
    size_t len, cut;
    unsigned char *img = good_image(&len);
    int refused = 0, msgs = 0;

    for (cut = 0; cut < len; cut++) {
        char err[256] = "";
        unsigned char *copy = malloc(cut ? cut : 1);
        struct embed_st_file *f;

        memcpy(copy, img, cut);
        f = embed_st_open_mem(copy, cut, err, sizeof(err));
        if (!f)
            refused++;
        if (err[0])
            msgs++;
        embed_st_close(f);
        free(copy);
    }
    T_EQ_INT(refused, len);
    T_EQ_INT(msgs, len);
    free(img);
}

/* Flip every byte of the header and length, in turn, to several values;
 * whatever the reader says, it must not crash, and anything it accepts
 * must stay inside the image. */
static void test_corrupted(void)
{
    size_t len, i, k;
    unsigned char *img = good_image(&len);
    unsigned char vals[] = { 0x00, 0xff, '"', '}', '9', '-', '[', 0x80 };
    int accepted_inside = 1, refused = 0;

    for (i = 0; i < len - 32; i++) {
        for (k = 0; k < sizeof(vals); k++) {
            char err[256] = "";
            unsigned char *copy = malloc(len);
            struct embed_st_file *f;
            size_t j;

            memcpy(copy, img, len);
            copy[i] = vals[k];
            f = embed_st_open_mem(copy, len, err, sizeof(err));
            if (!f) {
                refused++;
                if (!err[0])
                    accepted_inside = 0;
            }
            for (j = 0; f && j < embed_st_count(f); j++) {
                const struct embed_st_tensor *t = embed_st_get(f, j);
                const unsigned char *p = t->data;
                if (p < copy || p + t->nbytes > copy + len)
                    accepted_inside = 0;
            }
            embed_st_close(f);
            free(copy);
        }
    }
    T_CHECK(accepted_inside);
    T_CHECK(refused > 100);
    free(img);
}

static int refuses(const char *header, size_t dlen, const char *want)
{
    unsigned char data[64] = { 0 };
    char err[256] = "";
    size_t len;
    unsigned char *img = make_image(header, data, dlen, &len);
    struct embed_st_file *f = embed_st_open_mem(img, len, err, sizeof(err));
    int ok = f == NULL && strstr(err, want) != NULL;

    if (!ok)
        fprintf(stderr, "  header %s -> %s\n", header, f ? "accepted" : err);
    embed_st_close(f);
    free(img);
    return ok;
}

static void test_hostile(void)
{
    unsigned char img[16];
    char err[256];
    size_t i;

    /* length field larger than the file / than the cap */
    memset(img, 0, sizeof(img));
    img[0] = 0xff; img[1] = 0xff; img[7] = 0x7f;
    T_CHECK(embed_st_open_mem(img, sizeof(img), err, sizeof(err)) == NULL &&
            strstr(err, "out of bounds"));
    for (i = 0; i < 8; i++)
        img[i] = 0;
    T_CHECK(embed_st_open_mem(img, sizeof(img), err, sizeof(err)) == NULL &&
            strstr(err, "out of bounds"));
    T_CHECK(refuses("[1,2]", 0, "not a JSON object"));
    T_CHECK(refuses("{\"a\":", 0, "not valid JSON"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 8, "needs dtype"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F33\",\"shape\":[2],\"data_offsets\":[0,8]}}",
                    8, "unknown dtype"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}",
                    8, "bad dimension"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}",
                    8, "bad dimension"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[\"2\"],\"data_offsets\":[0,8]}}",
                    8, "bad dimension"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],"
                    "\"data_offsets\":[0,8]}}", 8, "overflows"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}",
                    8, "does not match"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
                    8, "past the end"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}",
                    8, "bad data_offsets"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0]}}",
                    8, "bad data_offsets"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}",
                    16, "overlap"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                    "\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,16]}}",
                    16, "twice"));
    T_CHECK(refuses("{\"a\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,1],"
                    "\"data_offsets\":[0,4]}}", 4, "dimensions"));
    T_CHECK(refuses("{\"__metadata__\":[1]}", 0, "__metadata__"));
    T_CHECK(refuses("{\"a\":7}", 0, "needs dtype"));
    /* an I64 tensor is accepted but cannot become float */
    {
        size_t len;
        unsigned char d[8] = { 0 };
        unsigned char *im = make_image("{\"i\":{\"dtype\":\"I64\",\"shape\":[1],"
                                       "\"data_offsets\":[0,8]}}", d, 8, &len);
        struct embed_st_file *f = embed_st_open_mem(im, len, err, sizeof(err));
        float *owned = NULL;
        T_CHECK(f != NULL);
        if (f)
            T_CHECK(embed_st_f32(embed_st_find(f, "i"), &owned) == NULL);
        embed_st_close(f);
        free(im);
    }
}

/* The file path: a real file, a missing file, a truncated file. */
static void test_files(void)
{
    char path[] = "/tmp/cairn_test_st_XXXXXX";
    char err[256] = "";
    size_t len;
    unsigned char *img = good_image(&len);
    struct embed_st_file *f;
    int fd = mkstemp(path);

    T_CHECK(fd >= 0);
    if (fd < 0) {
        free(img);
        return;
    }
    T_CHECK(write(fd, img, len) == (ssize_t)len);
    f = embed_st_open(path, err, sizeof(err));
    T_CHECK(f != NULL && embed_st_count(f) == 3);
    if (f)
        embed_st_advise_random(f, embed_st_find(f, "a"));
    embed_st_close(f);
    T_CHECK(ftruncate(fd, (off_t)len - 1) == 0);
    f = embed_st_open(path, err, sizeof(err));
    T_CHECK(f == NULL && strstr(err, "past the end"));
    T_CHECK(ftruncate(fd, 5) == 0);
    f = embed_st_open(path, err, sizeof(err));
    T_CHECK(f == NULL && strstr(err, "too short"));
    close(fd);
    unlink(path);
    f = embed_st_open(path, err, sizeof(err));
    T_CHECK(f == NULL && strstr(err, "No such file"));
    f = embed_st_open("/tmp", err, sizeof(err));
    T_CHECK(f == NULL && strstr(err, "not a regular file"));
    free(img);
}

int main(void)
{
    T_RUN(test_good);
    T_RUN(test_half);
    T_RUN(test_truncated);
    T_RUN(test_corrupted);
    T_RUN(test_hostile);
    T_RUN(test_files);
    return T_DONE();
}
