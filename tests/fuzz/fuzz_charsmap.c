/*
 * fuzz_charsmap.c: libFuzzer target for SentencePiece's precompiled
 * charsmap (src/embed/charsmap.c) and the Unigram tokenizer around it.
 * The input is a blob and a text: the first byte says how much of the
 * rest (in 1/255ths) is the blob. The blob is loaded raw and as
 * tokenizer.json's base64; whatever loads normalises the text through
 * the Precompiled step, the squeeze and Metaspace into Viterbi. Any input
 * must load or be refused cleanly, and never read out of bounds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "embed/charsmap.h"
#include "embed/tokenizer.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void to_base64(const uint8_t *p, size_t n, struct buf *out)
{
    size_t i;

    for (i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
                     (i + 2 < n ? p[i + 2] : 0);
        buf_addc(out, b64[v >> 18 & 63]);
        buf_addc(out, b64[v >> 12 & 63]);
        buf_addc(out, i + 1 < n ? b64[v >> 6 & 63] : '=');
        buf_addc(out, i + 2 < n ? b64[v & 63] : '=');
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    size_t nblob;
    const uint8_t *blob, *text;
    size_t ntext;
    struct embed_charsmap *m;
    struct buf json = BUF_INIT;
    struct embed_tok *t;

    if (size < 1)
        return 0;
    nblob = (size - 1) * data[0] / 255;
    blob = data + 1;
    text = blob + nblob;
    ntext = size - 1 - nblob;
    m = embed_charsmap_new(blob, nblob, err, sizeof(err));
    if (m) {
        struct embed_cpread rd;
        struct buf out = BUF_INIT;
        embed_cpread_init(&rd, (const char *)text, ntext, "x", 1);
        while (!out.err && embed_charsmap_step(m, &rd, &out))
            ;
        buf_release(&out);
        embed_charsmap_free(m);
    }
    buf_adds(&json, "{\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":["
                    "{\"type\":\"Precompiled\",\"precompiled_charsmap\":\"");
    to_base64(blob, nblob, &json);
    buf_adds(&json, "\"},{\"type\":\"Replace\",\"pattern\":{\"Regex\":\" {2,}\"},"
                    "\"content\":\" \"},{\"type\":\"NFKC\"}]},"
                    "\"pre_tokenizer\":{\"type\":\"Metaspace\"},"
                    "\"model\":{\"type\":\"Unigram\",\"unk_id\":0,\"byte_fallback\":true,"
                    "\"vocab\":[[\"<unk>\",0],[\"\\u2581\",-1],[\"a\",-2],[\"\\u2581ab\",-3],"
                    "[\"<0x41>\",-4],[\"\\u00e9\",-2]]}}");
    t = json.err ? NULL : embed_tok_load_mem(json.p, json.n, err, sizeof(err));
    if (t) {
        int32_t ids[64];
        embed_tok_encode2(t, "q: ", 3, (const char *)text, ntext, ids, 64);
        embed_tok_free(t);
    }
    buf_release(&json);
    return 0;
}
