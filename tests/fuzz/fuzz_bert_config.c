/*
 * fuzz_bert_config.c: libFuzzer target for a BERT folder's JSON options
 * (config.json, cairn_embed.json, 1_Pooling/config.json; embed_load),
 * with tests/data/embed/tiny-bert's weights and tokenizer, then encoding
 * a text with what loaded.
 *
 * Input: config.json \0 cairn_embed.json \0 1_Pooling/config.json \0 text
 * (a missing part leaves that file out). A bad folder must be refused
 * with a message; a loaded model must encode any text to finite values.
 */
#include <math.h>
#include <sys/stat.h>

#include "fuzz.h"
#include "embed/embed.h"

static void link_data(const char *name)
{
    char from[1024], to[1024];
    snprintf(from, sizeof from, "%s/embed/tiny-bert/%s", FUZZ_DATA, name);
    snprintf(to, sizeof to, "%s/%s", fuzz_tmpdir(), name);
    if (symlink(from, to) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    struct fuzz_part part[4];
    char err[256] = "";
    if (!ready) {
        char dir[1024];
        link_data("model.safetensors");
        link_data("tokenizer.json");
        snprintf(dir, sizeof dir, "%s/1_Pooling", fuzz_tmpdir());
        mkdir(dir, 0700);
        ready = 1;
    }
    fuzz_split(data, size, part, 4);
    fuzz_write("config.json", part[0]);
    fuzz_write("cairn_embed.json", part[1]);
    fuzz_write("1_Pooling/config.json", part[2]);
    struct embed_model *m = embed_load(fuzz_tmpdir(), err, sizeof err);
    if (!m) {
        if (!err[0])
            abort();
        return 0;
    }
    char *text = fuzz_strdup(part[3]);
    const char *texts[2] = { text, "" };
    int dim = embed_dim(m);
    float *out = malloc(2 * (size_t)dim * sizeof *out);
    if (!out)
        abort();
    if (embed_encode(m, texts, 2, size & 1, out) != 0)
        abort();
    for (int i = 0; i < 2 * dim; i++)
        if (!isfinite(out[i]))
            abort();
    free(out);
    free(text);
    embed_free(m);
    return 0;
}
