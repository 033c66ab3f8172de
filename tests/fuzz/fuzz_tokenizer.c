/*
 * fuzz_tokenizer.c: libFuzzer target for tokenizer.json loading
 * (WordPiece and Unigram, embed_tok_load_mem) and for tokenizing any
 * bytes with what loaded (embed_tok_encode / encode2).
 *
 * Input: tokenizer.json \0 prefix \0 text. A bad tokenizer.json must be
 * refused with a message; a loaded one must give only ids inside its
 * vocabulary, at most max_ids of them, for any text.
 */
#include "fuzz.h"
#include "embed/tokenizer.h"

static void check_ids(const struct embed_tok *t, const int32_t *ids, int n, int max)
{
    if (n > max)
        abort();
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= embed_tok_vocab_size(t))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part part[3];
    char err[256] = "";
    fuzz_split(data, size, part, 3);
    /* the loader gets exactly the bytes, not a NUL-terminated copy */
    char *json = malloc(part[0].n ? part[0].n : 1);
    if (!json)
        abort();
    memcpy(json, part[0].p, part[0].n);
    struct embed_tok *t = embed_tok_load_mem(json, part[0].n, err, sizeof err);
    free(json);
    if (!t) {
        if (!err[0])
            abort();
        return 0;
    }
    for (int id = 0; id < embed_tok_vocab_size(t) && id < 64; id++) {
        const char *piece = embed_tok_piece(t, id);
        if (piece && embed_tok_id(t, piece) < 0)
            abort();
    }
    /* the text in its own allocation, so reading past it is seen */
    char *text = malloc(part[2].n ? part[2].n : 1), *prefix = malloc(part[1].n ? part[1].n : 1);
    if (!text || !prefix)
        abort();
    memcpy(text, part[2].p, part[2].n);
    memcpy(prefix, part[1].p, part[1].n);
    static const int maxes[] = { 2, 3, 8, 512 };
    int32_t ids[512];
    for (size_t k = 0; k < sizeof maxes / sizeof maxes[0]; k++) {
        int n = embed_tok_encode(t, text, part[2].n, ids, maxes[k]);
        check_ids(t, ids, n, maxes[k]);
        n = embed_tok_encode2(t, prefix, part[1].n, text, part[2].n, ids, maxes[k]);
        check_ids(t, ids, n, maxes[k]);
    }
    free(text);
    free(prefix);
    embed_tok_free(t);
    return 0;
}
