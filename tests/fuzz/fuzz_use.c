/*
 * fuzz_use.c: libFuzzer target for loading USE-lite (use_load: vocab.json
 * and model.json's weightsManifest against the shard files), then its
 * tokenizer and forward pass on what loaded.
 *
 * Input: vocab.json \0 model.json \0 text \0 shard "w1" (raw bytes). The
 * folder also holds a fixed shard "w0" of W0_BYTES pseudo-random floats,
 * written once, so a manifest can describe a whole model (the real one
 * needs a 512 x 512 layer, far past the input size); the seeds list the
 * synthetic model of tests/unit/test_embed_use.c plus a "pad" weight that
 * takes up the rest of w0. A bad folder must be refused with a message;
 * a loaded model must give ids inside its table and a finite vector.
 */
#include <math.h>

#include "fuzz.h"
#include "embed/use.h"

#define W0_BYTES ((size_t)2 << 20)

static void write_w0(void)
{
    float *w = malloc(W0_BYTES);
    uint64_t r = 88172645463325252ull;
    if (!w)
        abort();
    for (size_t i = 0; i < W0_BYTES / sizeof *w; i++) {
        r ^= r << 13;
        r ^= r >> 7;
        r ^= r << 17;
        w[i] = (float)((double)(r >> 11) / 9007199254740992.0 - 0.5) * 0.6f;
    }
    fuzz_write("w0", (struct fuzz_part){ (const char *)w, W0_BYTES, 0 });
    free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    struct fuzz_part part[4];
    char err[256] = "";
    if (!ready) {
        write_w0();
        ready = 1;
    }
    fuzz_split(data, size, part, 4);
    fuzz_write("vocab.json", part[0]);
    fuzz_write("model.json", part[1]);
    fuzz_write("w1", part[3]);
    struct use_model *m = use_load(fuzz_tmpdir(), err, sizeof err);
    if (!m) {
        if (!err[0])
            abort();
        return 0;
    }
    char *text = malloc(part[2].n ? part[2].n : 1);
    if (!text)
        abort();
    memcpy(text, part[2].p, part[2].n);
    int32_t ids[USE_MAX_TOKENS];
    int n = use_tokenize(m, text, part[2].n, ids, USE_MAX_TOKENS);
    free(text);
    if (n < 0 || n > USE_MAX_TOKENS)
        abort();
    /* a few tokens are enough to run every layer; the full 128 would only
     * slow the fuzzer down */
    int len = n < 8 ? n : 8;
    float out[USE_DIM];
    if (use_forward(m, ids, &len, 1, len ? len : 1, out, err, sizeof err) != 0)
        abort();                    /* the tokenizer's ids must be accepted */
    for (int i = 0; i < USE_DIM; i++)
        if (!isfinite(out[i]))
            abort();
    use_free(m);
    return 0;
}
