/*
 * fuzz_packcache.c: libFuzzer target for the pre-packed weights file's
 * checks (embed_pc_check, src/embed/packcache.c), for three small weights
 * whose shapes are off the panel widths.
 *
 * The first input byte picks the panel width (bit 0: 16 or 32) and how
 * the rest becomes the file image (bits 1-2):
 *   0  the bytes as they are;
 *   1  a valid file (written once by embed_pc_write into TMPDIR) with the
 *      bytes XORed over it from its start, cut to the input's length when
 *      bit 3 is set: damage past the header's own hash;
 *   2  the bytes, with the header's hash recomputed as the writer does
 *      (hash64 of the 120 bytes before it), so the other fields are
 *      reached.
 * A refused image must come with a reason; an accepted one must place
 * every weight's panels inside the image, 64-byte aligned, in order and
 * without overlap, and hold the weights' values at both ends.
 *
 * Bit 4 set: the int8 file's checks instead (embed_pc_q8_check, the same
 * three modes over the valid int8 file of the same weights); an accepted
 * image must place every weight's int8 image inside it, 64-byte aligned,
 * in order, and the int8 product over each (embed_k_q8_view, at the
 * portable level) must read only inside it, whatever its bytes.
 */
#include "fuzz.h"
#include "embed/kernels.h"
#include "embed/packcache.h"
#include "util/hash.h"

#define NT 3

static float w0[5 * 7], w1[17 * 3], w2[2 * 40];
static const float *const w[NT] = { w0, w1, w2 };
static struct embed_pc_tensor t[NT] = { { .n = 5, .k = 7 }, { .n = 17, .k = 3 },
                                        { .n = 2, .k = 40 } };
static const struct embed_pc_source src = { .size = 1234, .mtime_s = 5, .mtime_ns = 6 };
static unsigned char *valid[3];   /* the valid file at width 16, 32, the int8 file */
static size_t valid_n[3];
#define Q8_KEY 0x51ed

/* The whole of the file dir/.cairn-packed/name into valid[v], then removed. */
static void slurp(const char *dir, const char *name, int v)
{
    char path[700];
    FILE *f;
    long sz;

    snprintf(path, sizeof path, "%s/.cairn-packed/%s", dir, name);
    if (!(f = fopen(path, "rb")))
        abort();
    fseek(f, 0, SEEK_END);
    sz = ftell(f);
    rewind(f);
    valid[v] = malloc((size_t)sz);
    valid_n[v] = (size_t)sz;
    if (!valid[v] || fread(valid[v], 1, (size_t)sz, f) != (size_t)sz)
        abort();
    fclose(f);
    unlink(path);
}

/* panels of weight i at width nr, as gemm.c lays them out */
static void pack(int i, int nr, float *p)
{
    size_t k = (size_t)t[i].k, panels = ((size_t)t[i].n + nr - 1) / nr;

    memset(p, 0, panels * k * nr * sizeof(float));
    for (size_t j = 0; j < (size_t)t[i].n; j++)
        for (size_t c = 0; c < k; c++)
            p[(j / nr) * k * nr + c * nr + j % nr] = w[i][j * k + c];
}

static void init(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[512], path[600], err[256];

    for (int i = 0; i < 5 * 7; i++) w0[i] = (float)i * 0.25f - 3.0f;
    for (int i = 0; i < 17 * 3; i++) w1[i] = 1.0f / (float)(i + 1);
    for (int i = 0; i < 2 * 40; i++) w2[i] = (float)(i % 9) - 4.5f;
    for (int i = 0; i < NT; i++)
        embed_pc_edges(&t[i], w[i]);
    snprintf(dir, sizeof dir, "%s/fuzz-pc-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir))
        abort();
    for (int v = 0; v < 2; v++) {
        int nr = v ? 32 : 16;
        float *panels[NT];

        for (int i = 0; i < NT; i++) {
            panels[i] = aligned_alloc(64, embed_pc_tensor_bytes(&t[i], nr) + 64);
            if (!panels[i])
                abort();
            pack(i, nr, panels[i]);
        }
        if (embed_pc_write(dir, nr, &src, t, NT, (const float *const *)panels, err,
                           sizeof err) != 0)
            abort();
        snprintf(path, sizeof path, "nr%d.bin", nr);
        slurp(dir, path, v);
        for (int i = 0; i < NT; i++)
            free(panels[i]);
    }
    {
        struct embed_k_q8 *q[NT];

        for (int i = 0; i < NT; i++)
            if (!(q[i] = embed_k_q8_new(w[i], t[i].n, t[i].k)))
                abort();
        if (embed_pc_q8_write(dir, Q8_KEY, t, NT, (const struct embed_k_q8 *const *)q, err,
                              sizeof err) != 0)
            abort();
        slurp(dir, "q8.bin", 2);
        for (int i = 0; i < NT; i++)
            embed_k_q8_free(q[i]);
    }
    snprintf(path, sizeof path, "%s/.cairn-packed", dir);
    rmdir(path);
    rmdir(dir);
}

/* An accepted int8 image: each weight's image inside img, aligned, in
 * order, and a product over it that reads only inside (ASan checks). */
static void q8_accepted(const unsigned char *img, size_t n, const void *const *images)
{
    const unsigned char *end = img;
    float x[2 * 40] = { 0.5f, -1.0f, 2.0f }, y[2 * 17], *work;

    for (int i = 0; i < NT; i++) {
        const unsigned char *p = images[i];
        size_t b = embed_k_q8_image_bytes(t[i].n, t[i].k);
        struct embed_k_q8 *q;

        if (p < end || p + b > img + n || ((uintptr_t)p & 63))
            abort();
        end = p + b;
        if (!(q = embed_k_q8_view(t[i].n, t[i].k, p)) ||
            !(work = malloc(embed_k_q8_work(2, t[i].k))))
            abort();
        if (embed_k_q8_cols(0, x, t[i].k, q, 0, t[i].n, NULL, y, t[i].n, 2, work) != 0)
            abort();
        free(work);
        embed_k_q8_free(q);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    const float *panels[NT];
    char err[256] = "";
    unsigned char *img = NULL;
    size_t n;
    const void *images[NT];
    int v, mode, nr, q8;

    if (!ready) {
        init();
        ready = 1;
    }
    if (size < 1)
        return 0;
    q8 = (data[0] >> 4) & 1;
    v = q8 ? 2 : data[0] & 1;
    nr = v == 1 ? 32 : 16;
    mode = (data[0] >> 1) & 3;
    data++;
    size--;
    n = mode == 1 && !(data[-1] & 8) ? valid_n[v] : size;
    if (mode == 1 && n > valid_n[v])
        n = valid_n[v];
    /* 64-byte aligned as a mapping is, and exactly n bytes for ASan */
    if (posix_memalign((void **)&img, 64, n ? n : 1) != 0)
        abort();
    if (mode == 1) {
        memcpy(img, valid[v], n);
        for (size_t i = 0; i < size && i < n; i++)
            img[i] ^= data[i];
    } else {
        memcpy(img, data, n);
        if (mode == 2 && n >= 128) {
            uint64_t h = hash64(img, 120, 0x5eed);
            memcpy(img + 120, &h, sizeof h);
        }
    }
    if (q8) {
        if (embed_pc_q8_check(img, n, Q8_KEY, t, NT, images, err, sizeof err) != 0) {
            if (!err[0])
                abort();
        } else {
            q8_accepted(img, n, images);
        }
    } else if (embed_pc_check(img, n, nr, &src, t, NT, panels, err, sizeof err) != 0) {
        if (!err[0])
            abort();                                    /* refused without a reason */
    } else {
        const unsigned char *end = img;

        for (int i = 0; i < NT; i++) {
            const unsigned char *p = (const unsigned char *)panels[i];
            size_t b = embed_pc_tensor_bytes(&t[i], nr);
            size_t last = (size_t)t[i].n * (size_t)t[i].k - 1;
            size_t j = (size_t)t[i].n - 1, c = (size_t)t[i].k - 1;

            if (p < end || p + b > img + n || ((uintptr_t)p & 63))
                abort();
            if (panels[i][0] != w[i][0] ||
                panels[i][(j / nr) * t[i].k * nr + c * nr + j % nr] != w[i][last])
                abort();
            end = p + b;
        }
    }
    free(img);
    return 0;
}
