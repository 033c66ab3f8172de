/*
 * fuzz_post.c: libFuzzer target for a block of packed postings as recall
 * reads it (store/post.c: post_blob_get over post_blocks.data, schema 26;
 * a damaged store could hold anything there).
 *
 * Input: the first byte, the most matches asked for (0-255); the second,
 * the block's lo (0-255); the rest the blob, copied to a buffer of exactly
 * its size so that a read past the end is a sanitizer report. A result is
 * -1 or at most that many matches, each row above the one before (the
 * first above lo), each session at least 1, each count 1-65535 and length
 * at least 0; the matches written again (post_blob_put) read back the same.
 */
#include "fuzz.h"
#include "store/post.h"
#include "util/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    int max = data[0];
    int64_t lo = data[1];
    size_t n = size - 2;
    unsigned char *blob = malloc(n ? n : 1);
    struct post_ent *out = malloc(256 * sizeof *out), *again = malloc(256 * sizeof *again);
    if (!blob || !out || !again)
        abort();
    memcpy(blob, data + 2, n);
    int k = post_blob_get(blob, n, lo, out, max);
    if (k < -1 || k > max)
        abort();
    int64_t row = lo, sess = 0;
    struct buf b = BUF_INIT;
    for (int i = 0; i < k; i++) {
        if (out[i].row <= (i ? out[i - 1].row : lo) || out[i].sess < 1 || out[i].tf < 1 ||
            out[i].tf > 65535 || out[i].ntok < 0)
            abort();
        post_blob_put(&b, &row, &sess, &out[i]);
    }
    if (k > 0 && (b.err || post_blob_get((const unsigned char *)b.p, b.n, lo, again, k) != k ||
                  memcmp(out, again, (size_t)k * sizeof *out)))
        abort();
    buf_release(&b);
    free(blob);
    free(out);
    free(again);
    return 0;
}
