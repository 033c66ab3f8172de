/*
 * test_embed_configs.c: the four BERT-family models cairn targets load from
 * synthetic folders with their exact published tensor names, shapes and
 * configuration, and encode text to finite vectors.
 *
 * No real weights exist on these machines, so each model.safetensors is
 * written here as a sparse file: the real header (every tensor the
 * published checkpoint holds, F32, plus the I64 embeddings.position_ids
 * buffer the old checkpoints persist), then ftruncate to the full ~90-470
 * MB, so the data costs no disk and reads as 0.0. A few small tensors are
 * then given values chosen so the output can be predicted exactly:
 * every LayerNorm weight is 1 and position rows 0..63 are one-hot. With all
 * matrices zero, each layer is then LN(0 + x) = x, so token t leaves the
 * encoder as LN(pos[offset + t]): CLS pooling gives that row for t = 0,
 * mean pooling the mean over the tokens. Matching it checks the position
 * offset (0: all four are "bert" models, not RoBERTa), the pooling each
 * folder selects, and that every LayerNorm of every layer was found by its
 * name (a missed one would be read as zeros and flatten the output).
 *
 * Where the values come from (searched public copies; see the report):
 *   config.json      the models' own config.json as published (e5-small at
 *                    614241f: BertModel, vocab 250037, 512 positions,
 *                    type vocab 2, pad 0; paraphrase-multilingual-MiniLM:
 *                    the same; bge-small-en-v1.5 and all-MiniLM-L6-v2:
 *                    vocab 30522, 12 / 6 layers).
 *   tensor names     HF BertModel names without a prefix, with pooler and
 *                    position_ids; for all-MiniLM-L6-v2, bge-small-en-v1.5
 *                    and e5-small the resulting file size equals the
 *                    published model.safetensors size to the byte
 *                    (90,868,376 / 133,466,304 / 470,641,600).
 *   pooling          1_Pooling/config.json as in the repos (CLS for bge,
 *                    mean otherwise) and cairn_embed.json as `cairn model
 *                    pull` writes it from the registry.
 */
#include "t.h"

#include "embed/embed.h"
#include "embed/registry.h"

#include <cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define H        384
#define INTER    1536
#define POS_ROWS 64          /* position rows given one-hot values */
#define MAX_T    512

/* ---- the four configurations ------------------------------------------ */

struct model_spec {
    const char *reg_name;      /* name in the registry (cairn_embed.json) */
    int layers, vocab;
    int unigram;               /* 1: XLM-R SentencePiece, 0: WordPiece */
    int cls;                   /* 1_Pooling: CLS token */
    const char *config;        /* config.json */
    long long published_size;  /* model.safetensors bytes, 0 if unknown */
};

/* The configs as published (fields the loader reads, plus the rest of the
 * file so unknown keys are exercised too). */
static const char CFG_E5[] =
    "{\n  \"_name_or_path\": \"tmp/\",\n  \"architectures\": [\n    \"BertModel\"\n  ],\n"
    "  \"attention_probs_dropout_prob\": 0.1,\n  \"classifier_dropout\": null,\n"
    "  \"hidden_act\": \"gelu\",\n  \"hidden_dropout_prob\": 0.1,\n  \"hidden_size\": 384,\n"
    "  \"initializer_range\": 0.02,\n  \"intermediate_size\": 1536,\n"
    "  \"layer_norm_eps\": 1e-12,\n  \"max_position_embeddings\": 512,\n"
    "  \"model_type\": \"bert\",\n  \"num_attention_heads\": 12,\n"
    "  \"num_hidden_layers\": 12,\n  \"pad_token_id\": 0,\n"
    "  \"position_embedding_type\": \"absolute\",\n"
    "  \"tokenizer_class\": \"XLMRobertaTokenizer\",\n  \"torch_dtype\": \"float32\",\n"
    "  \"transformers_version\": \"4.29.0\",\n  \"type_vocab_size\": 2,\n"
    "  \"use_cache\": true,\n  \"vocab_size\": 250037\n}\n";

static const char CFG_PML12[] =
    "{\n  \"_name_or_path\": \"old_models/paraphrase-multilingual-MiniLM-L12-v2/0_Transformer\",\n"
    "  \"architectures\": [\n    \"BertModel\"\n  ],\n"
    "  \"attention_probs_dropout_prob\": 0.1,\n  \"gradient_checkpointing\": false,\n"
    "  \"hidden_act\": \"gelu\",\n  \"hidden_dropout_prob\": 0.1,\n  \"hidden_size\": 384,\n"
    "  \"initializer_range\": 0.02,\n  \"intermediate_size\": 1536,\n"
    "  \"layer_norm_eps\": 1e-12,\n  \"max_position_embeddings\": 512,\n"
    "  \"model_type\": \"bert\",\n  \"num_attention_heads\": 12,\n"
    "  \"num_hidden_layers\": 12,\n  \"pad_token_id\": 0,\n"
    "  \"position_embedding_type\": \"absolute\",\n  \"transformers_version\": \"4.7.0\",\n"
    "  \"type_vocab_size\": 2,\n  \"use_cache\": true,\n  \"vocab_size\": 250037\n}\n";

static const char CFG_BGE[] =
    "{\n  \"_name_or_path\": \"BAAI/bge-small-en-v1.5\",\n  \"architectures\": [\n"
    "    \"BertModel\"\n  ],\n  \"attention_probs_dropout_prob\": 0.1,\n"
    "  \"classifier_dropout\": null,\n  \"hidden_act\": \"gelu\",\n"
    "  \"hidden_dropout_prob\": 0.1,\n  \"hidden_size\": 384,\n"
    "  \"id2label\": {\n    \"0\": \"LABEL_0\"\n  },\n  \"initializer_range\": 0.02,\n"
    "  \"intermediate_size\": 1536,\n  \"label2id\": {\n    \"LABEL_0\": 0\n  },\n"
    "  \"layer_norm_eps\": 1e-12,\n  \"max_position_embeddings\": 512,\n"
    "  \"model_type\": \"bert\",\n  \"num_attention_heads\": 12,\n"
    "  \"num_hidden_layers\": 12,\n  \"pad_token_id\": 0,\n"
    "  \"position_embedding_type\": \"absolute\",\n  \"torch_dtype\": \"float32\",\n"
    "  \"type_vocab_size\": 2,\n  \"use_cache\": true,\n  \"vocab_size\": 30522\n}\n";

static const char CFG_L6[] =
    "{\n  \"_name_or_path\": \"nreimers/MiniLM-L6-H384-uncased\",\n  \"architectures\": [\n"
    "    \"BertModel\"\n  ],\n  \"attention_probs_dropout_prob\": 0.1,\n"
    "  \"gradient_checkpointing\": false,\n  \"hidden_act\": \"gelu\",\n"
    "  \"hidden_dropout_prob\": 0.1,\n  \"hidden_size\": 384,\n"
    "  \"initializer_range\": 0.02,\n  \"intermediate_size\": 1536,\n"
    "  \"layer_norm_eps\": 1e-12,\n  \"max_position_embeddings\": 512,\n"
    "  \"model_type\": \"bert\",\n  \"num_attention_heads\": 12,\n"
    "  \"num_hidden_layers\": 6,\n  \"pad_token_id\": 0,\n"
    "  \"position_embedding_type\": \"absolute\",\n  \"transformers_version\": \"4.8.2\",\n"
    "  \"type_vocab_size\": 2,\n  \"use_cache\": true,\n  \"vocab_size\": 30522\n}\n";

static const struct model_spec specs[] = {
    { "multilingual-e5-small", 12, 250037, 1, 0, CFG_E5, 470641600LL },
    { "paraphrase-multilingual-MiniLM-L12-v2", 12, 250037, 1, 0, CFG_PML12, 0 },
    { "bge-small-en-v1.5", 12, 30522, 0, 1, CFG_BGE, 133466304LL },
    { "all-MiniLM-L6-v2", 6, 30522, 0, 0, CFG_L6, 90868376LL },
};

/* ---- the tensor list ---------------------------------------------------- */

struct tensor {
    char    name[96];
    int     i64;               /* dtype I64 (position_ids), else F32 */
    int     ndim;
    int64_t shape[2];
    int64_t off;               /* data offset, set when laid out */
};

struct tlist {
    struct tensor t[256];
    int n;
};

static void t_add(struct tlist *l, const char *name, int i64, int64_t d0, int64_t d1)
{
    struct tensor *t = &l->t[l->n++];

    snprintf(t->name, sizeof(t->name), "%s", name);
    t->i64 = i64;
    t->ndim = d1 ? 2 : 1;
    t->shape[0] = d0;
    t->shape[1] = d1;
}

/* Every tensor of a published BertModel checkpoint (transformers'
 * BertModel state dict: embeddings, encoder.layer.N, pooler) plus the
 * position_ids buffer. */
static void build_list(const struct model_spec *s, struct tlist *l)
{
    static const char *const qkv[] = { "query", "key", "value" };
    char nm[96];
    int i, k;

    l->n = 0;
    t_add(l, "embeddings.word_embeddings.weight", 0, s->vocab, H);
    t_add(l, "embeddings.position_embeddings.weight", 0, MAX_T, H);
    t_add(l, "embeddings.token_type_embeddings.weight", 0, 2, H);
    t_add(l, "embeddings.LayerNorm.weight", 0, H, 0);
    t_add(l, "embeddings.LayerNorm.bias", 0, H, 0);
    t_add(l, "embeddings.position_ids", 1, 1, MAX_T);
    for (i = 0; i < s->layers; i++) {
#define L_ADD(suffix, d0, d1) do { \
        snprintf(nm, sizeof(nm), "encoder.layer.%d.%s", i, (suffix)); \
        t_add(l, nm, 0, (d0), (d1)); \
    } while (0)
        for (k = 0; k < 3; k++) {
            char sfx[64];
            snprintf(sfx, sizeof(sfx), "attention.self.%s.weight", qkv[k]);
            L_ADD(sfx, H, H);
            snprintf(sfx, sizeof(sfx), "attention.self.%s.bias", qkv[k]);
            L_ADD(sfx, H, 0);
        }
        L_ADD("attention.output.dense.weight", H, H);
        L_ADD("attention.output.dense.bias", H, 0);
        L_ADD("attention.output.LayerNorm.weight", H, 0);
        L_ADD("attention.output.LayerNorm.bias", H, 0);
        L_ADD("intermediate.dense.weight", INTER, H);
        L_ADD("intermediate.dense.bias", INTER, 0);
        L_ADD("output.dense.weight", H, INTER);
        L_ADD("output.dense.bias", H, 0);
        L_ADD("output.LayerNorm.weight", H, 0);
        L_ADD("output.LayerNorm.bias", H, 0);
#undef L_ADD
    }
    t_add(l, "pooler.dense.weight", 0, H, H);
    t_add(l, "pooler.dense.bias", 0, H, 0);
}

static int64_t t_bytes(const struct tensor *t)
{
    return (t->i64 ? 8 : 4) * t->shape[0] * (t->ndim == 2 ? t->shape[1] : 1);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int cmp_tensor(const void *a, const void *b)
{
    const struct tensor *x = a, *y = b;

    if (x->i64 != y->i64)
        return y->i64 - x->i64;
    return strcmp(x->name, y->name);
}

/*
 * Writes dir/model.safetensors from l, leaving out the tensor named `skip`
 * and giving `swap` its two dimensions exchanged (same byte count). With
 * values, every LayerNorm weight is 1 and position rows 0..POS_ROWS-1 are
 * one-hot; everything else is a hole. Returns the file size, or -1.
 */
static long long write_st(const char *dir, struct tlist *l, const char *skip,
                          const char *swap, int values)
{
    char path[512], *hdr = NULL;
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_CreateObject();
    int64_t off = 0, hlen, total = -1;
    unsigned char len8[8];
    int fd = -1, i;
    size_t pad;

    cJSON_AddStringToObject(meta, "format", "pt");
    cJSON_AddItemToObject(root, "__metadata__", meta);
    /* As the safetensors writer lays data out: 8-byte dtypes first, then
     * by name (this makes the offsets, and so the header, byte-exact). */
    qsort(l->t, (size_t)l->n, sizeof(l->t[0]), cmp_tensor);
    for (i = 0; i < l->n; i++) {
        struct tensor *t = &l->t[i];
        cJSON *e, *shape, *offs;
        int64_t d0 = t->shape[0], d1 = t->shape[1];

        if (skip && strcmp(t->name, skip) == 0)
            continue;
        if (swap && strcmp(t->name, swap) == 0) {
            d0 = t->shape[1];
            d1 = t->shape[0];
        }
        e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "dtype", t->i64 ? "I64" : "F32");
        shape = cJSON_AddArrayToObject(e, "shape");
        cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)d0));
        if (t->ndim == 2)
            cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)d1));
        offs = cJSON_AddArrayToObject(e, "data_offsets");
        t->off = off;
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        off += t_bytes(t);
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)off));
        cJSON_AddItemToObject(root, t->name, e);
    }
    hdr = cJSON_PrintUnformatted(root);
    if (!hdr)
        goto out;
    pad = (8 - strlen(hdr) % 8) % 8;       /* the writer pads with spaces */
    hlen = (int64_t)(strlen(hdr) + pad);
    for (i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    if ((size_t)snprintf(path, sizeof(path), "%s/model.safetensors", dir) >= sizeof(path))
        goto out;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, len8, 8) != 8 ||
        write(fd, hdr, strlen(hdr)) != (ssize_t)strlen(hdr) ||
        write(fd, "        ", pad) != (ssize_t)pad ||
        ftruncate(fd, 8 + hlen + off) != 0)
        goto out;
    if (values) {
        static float ones[H], pos[POS_ROWS][H];
        int r;

        for (r = 0; r < H; r++)
            ones[r] = 1.0f;
        memset(pos, 0, sizeof(pos));
        for (r = 0; r < POS_ROWS; r++)
            pos[r][(r * 7) % H] = 2.0f;
        for (i = 0; i < l->n; i++) {
            const struct tensor *t = &l->t[i];
            off_t at = (off_t)(8 + hlen + t->off);

            if (skip && strcmp(t->name, skip) == 0)
                continue;
            if (ends_with(t->name, "LayerNorm.weight")) {
                if (pwrite(fd, ones, sizeof(ones), at) != (ssize_t)sizeof(ones))
                    goto out;
            } else if (strcmp(t->name, "embeddings.position_embeddings.weight") == 0) {
                if (pwrite(fd, pos, sizeof(pos), at) != (ssize_t)sizeof(pos))
                    goto out;
            }
        }
    }
    total = 8 + hlen + off;
out:
    if (fd >= 0 && close(fd) != 0)
        total = -1;
    free(hdr);
    cJSON_Delete(root);
    return total;
}

/* ---- the small files ---------------------------------------------------- */

static int write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    FILE *f;
    int ok;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
        return -1;
    f = fopen(path, "w");
    if (!f)
        return -1;
    ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* A WordPiece tokenizer.json laid out like bert-base-uncased's: [PAD] 0,
 * [unusedN] 1..99, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103, then a
 * few words and CJK characters. */
/* post_processor: TemplateProcessing "first A last" with their ids. */
static void add_template(cJSON *root, const char *first, int first_id, const char *last,
                         int last_id)
{
    cJSON *pp = cJSON_AddObjectToObject(root, "post_processor");
    cJSON *single = cJSON_AddArrayToObject(pp, "single"), *sp, *item;
    const char *seq[3] = { first, "A", last };
    const char *kind[3] = { "SpecialToken", "Sequence", "SpecialToken" };
    int ids[2] = { first_id, last_id };

    cJSON_AddStringToObject(pp, "type", "TemplateProcessing");
    for (int i = 0; i < 3; i++) {
        item = cJSON_CreateObject();
        sp = cJSON_AddObjectToObject(item, kind[i]);
        cJSON_AddStringToObject(sp, "id", seq[i]);
        cJSON_AddNumberToObject(sp, "type_id", 0);
        cJSON_AddItemToArray(single, item);
    }
    sp = cJSON_AddObjectToObject(pp, "special_tokens");
    for (int i = 0; i < 2; i++) {
        item = cJSON_AddObjectToObject(sp, seq[2 * i]);
        cJSON_AddStringToObject(item, "id", seq[2 * i]);
        cJSON_AddItemToObject(item, "ids", cJSON_CreateIntArray(&ids[i], 1));
    }
}

static char *wordpiece_json(void)
{
    static const char *const words[] = {
        "the", "cat", "sat", "on", "mat", "hello", "world", "##s", ".",
        "\xe7\x8c\xab", "\xe5\x9d\x90", "\xe5\x9c\xa8", "\xe5\x9e\xab",
        "\xe5\xad\x90", "\xe4\xb8\x8a", "\xe3\x80\x82",
    };
    cJSON *root = cJSON_CreateObject(), *model, *vocab, *item;
    char nm[32];
    char *out;
    int i, id = 0;

    cJSON_AddStringToObject(root, "version", "1.0");
    cJSON_AddNullToObject(root, "truncation");
    cJSON_AddNullToObject(root, "padding");
    item = cJSON_AddObjectToObject(root, "normalizer");
    cJSON_AddStringToObject(item, "type", "BertNormalizer");
    cJSON_AddTrueToObject(item, "clean_text");
    cJSON_AddTrueToObject(item, "handle_chinese_chars");
    cJSON_AddNullToObject(item, "strip_accents");
    cJSON_AddTrueToObject(item, "lowercase");
    item = cJSON_AddObjectToObject(root, "pre_tokenizer");
    cJSON_AddStringToObject(item, "type", "BertPreTokenizer");
    add_template(root, "[CLS]", 101, "[SEP]", 102);
    model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(model, "type", "WordPiece");
    cJSON_AddStringToObject(model, "unk_token", "[UNK]");
    cJSON_AddStringToObject(model, "continuing_subword_prefix", "##");
    cJSON_AddNumberToObject(model, "max_input_chars_per_word", 100);
    vocab = cJSON_AddObjectToObject(model, "vocab");
    cJSON_AddNumberToObject(vocab, "[PAD]", id++);
    for (i = 0; i < 99; i++) {
        snprintf(nm, sizeof(nm), "[unused%d]", i);
        cJSON_AddNumberToObject(vocab, nm, id++);
    }
    cJSON_AddNumberToObject(vocab, "[UNK]", id++);
    cJSON_AddNumberToObject(vocab, "[CLS]", id++);
    cJSON_AddNumberToObject(vocab, "[SEP]", id++);
    cJSON_AddNumberToObject(vocab, "[MASK]", id++);
    for (i = 0; i < (int)(sizeof(words) / sizeof(words[0])); i++)
        cJSON_AddNumberToObject(vocab, words[i], id++);
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

/* An XLM-R style Unigram tokenizer.json: <s> 0, <pad> 1, </s> 2, <unk> 3,
 * then scored pieces; Precompiled normaliser, Metaspace, <s> A </s>. */
#define MS "\xe2\x96\x81"   /* U+2581, the metaspace */
static char *unigram_json(void)
{
    static const struct { const char *p; double s; } pieces[] = {
        { MS, -3.0 }, { MS "the", -4.0 }, { MS "cat", -8.0 },
        { MS "sat", -9.0 }, { MS "on", -5.0 }, { MS "mat", -9.5 },
        { "s", -6.0 }, { ".", -3.5 }, { "\xe7\x8c\xab", -9.0 }, { "\xe5\x9d\x90", -9.0 },
        { "\xe5\x9c\xa8", -7.0 }, { "\xe5\x9e\xab\xe5\xad\x90", -10.0 },
        { "\xe4\xb8\x8a", -7.5 }, { "\xe3\x80\x82", -4.5 }, { MS "query", -9.0 },
        { MS "passage", -9.0 }, { ":", -4.0 },
    };
    static const char *const special[] = { "<s>", "<pad>", "</s>", "<unk>" };
    cJSON *root = cJSON_CreateObject(), *model, *vocab, *item, *seq, *sp;
    char *out;
    size_t i;

    cJSON_AddStringToObject(root, "version", "1.0");
    cJSON_AddNullToObject(root, "truncation");
    cJSON_AddNullToObject(root, "padding");
    item = cJSON_AddObjectToObject(root, "normalizer");
    cJSON_AddStringToObject(item, "type", "Sequence");
    seq = cJSON_AddArrayToObject(item, "normalizers");
    sp = cJSON_CreateObject();
    cJSON_AddStringToObject(sp, "type", "Precompiled");
    /* the smallest valid charsmap: a one-unit trie with no keys (an empty
     * blob is refused, as HF refuses it) */
    cJSON_AddStringToObject(sp, "precompiled_charsmap", "BAAAAAAAAAA=");
    cJSON_AddItemToArray(seq, sp);
    item = cJSON_AddObjectToObject(root, "pre_tokenizer");
    cJSON_AddStringToObject(item, "type", "Metaspace");
    cJSON_AddStringToObject(item, "replacement", "\xe2\x96\x81");
    cJSON_AddStringToObject(item, "prepend_scheme", "always");
    cJSON_AddTrueToObject(item, "split");
    add_template(root, "<s>", 0, "</s>", 2);
    model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(model, "type", "Unigram");
    cJSON_AddNumberToObject(model, "unk_id", 3);
    cJSON_AddFalseToObject(model, "byte_fallback");
    vocab = cJSON_AddArrayToObject(model, "vocab");
    for (i = 0; i < 4; i++) {
        item = cJSON_CreateArray();
        cJSON_AddItemToArray(item, cJSON_CreateString(special[i]));
        cJSON_AddItemToArray(item, cJSON_CreateNumber(0.0));
        cJSON_AddItemToArray(vocab, item);
    }
    for (i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
        item = cJSON_CreateArray();
        cJSON_AddItemToArray(item, cJSON_CreateString(pieces[i].p));
        cJSON_AddItemToArray(item, cJSON_CreateNumber(pieces[i].s));
        cJSON_AddItemToArray(vocab, item);
    }
    out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

/* 1_Pooling/config.json as sentence-transformers writes it. */
static int write_pooling(const char *dir, int cls)
{
    char path[512], text[512];

    if ((size_t)snprintf(path, sizeof(path), "%s/1_Pooling", dir) >= sizeof(path) ||
        (mkdir(path, 0700) != 0 && errno != EEXIST))
        return -1;
    snprintf(text, sizeof(text),
             "{\n  \"word_embedding_dimension\": 384,\n"
             "  \"pooling_mode_cls_token\": %s,\n"
             "  \"pooling_mode_mean_tokens\": %s,\n"
             "  \"pooling_mode_max_tokens\": false,\n"
             "  \"pooling_mode_mean_sqrt_len_tokens\": false\n}\n",
             cls ? "true" : "false", cls ? "false" : "true");
    return write_file(dir, "1_Pooling/config.json", text);
}

static int make_folder(const char *dir, const struct model_spec *s)
{
    const struct embed_reg_model *reg = embed_reg_find(s->reg_name);
    char *tok = s->unigram ? unigram_json() : wordpiece_json();
    int rc = -1;

    if (mkdir(dir, 0700) != 0 || !tok || !reg || !reg->cairn_json)
        goto out;
    if (write_file(dir, "config.json", s->config) != 0 ||
        write_file(dir, "tokenizer.json", tok) != 0 ||
        write_pooling(dir, s->cls) != 0 ||
        write_file(dir, "cairn_embed.json", reg->cairn_json) != 0)
        goto out;
    rc = 0;
out:
    free(tok);
    return rc;
}

static void remove_folder(const char *dir)
{
    static const char *const files[] = {
        "config.json", "tokenizer.json", "model.safetensors", "cairn_embed.json",
        "1_Pooling/config.json", "1_Pooling",
    };
    char path[512];
    size_t i;

    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, files[i]) < sizeof(path))
            remove(path);
    }
    rmdir(dir);
}

/* ---- checks ------------------------------------------------------------- */

static char tmp_root[256];

static const char *const texts[] = {
    "The cat sat on the mat.",
    "\xe7\x8c\xab\xe5\x9d\x90\xe5\x9c\xa8\xe5\x9e\xab\xe5\xad\x90\xe4\xb8\x8a\xe3\x80\x82",
};

/* The vector the folder's model must give for a text of n tokens (see the
 * top of the file): LN(pos[t]) per token, CLS row or mean, normalised. */
static void expected(int n, int cls, float *out)
{
    double acc[H], row[H];
    int t, d, rows = cls ? 1 : n;

    memset(acc, 0, sizeof(acc));
    for (t = 0; t < rows; t++) {
        double mean = 0, var = 0;
        for (d = 0; d < H; d++)
            row[d] = d == (t * 7) % H ? 2.0 : 0.0;
        for (d = 0; d < H; d++)
            mean += row[d] / H;
        for (d = 0; d < H; d++)
            var += (row[d] - mean) * (row[d] - mean) / H;
        for (d = 0; d < H; d++)
            acc[d] += (row[d] - mean) / sqrt(var + 1e-12);
    }
    {
        double ss = 0;
        for (d = 0; d < H; d++)
            ss += acc[d] * acc[d];
        for (d = 0; d < H; d++)
            out[d] = (float)(acc[d] / sqrt(ss));
    }
}

static int all_finite(const float *v, int n)
{
    int i;
    for (i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return 0;
    return 1;
}

static double dot(const float *a, const float *b)
{
    double s = 0;
    int i;
    for (i = 0; i < H; i++)
        s += (double)a[i] * b[i];
    return s;
}

/* Loads dir and checks dimension, token ids and both texts both ways
 * against the predicted vector (or, for zero weights, the zero vector). */
static void check_encode(const char *dir, const struct model_spec *s, int cls, int zero)
{
    char err[256] = "";
    struct embed_model *m = embed_load(dir, err, sizeof(err));
    float out[2 * H], want[H];
    int q, i, k;

    T_CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "    %s: %s\n", s->reg_name, err);
        return;
    }
    T_EQ_INT(embed_dim(m), 384);
    T_EQ_INT(embed_max_tokens(m), 512);
    for (q = 0; q <= 1; q++) {
        T_EQ_INT(embed_encode(m, texts, 2, q, out), 0);
        T_CHECK(all_finite(out, 2 * H));
        for (i = 0; i < 2; i++) {
            int32_t ids[MAX_T];
            int n = embed_tokenize(m, texts[i], q, ids, MAX_T), bad = 0;

            T_CHECK(n >= 3 && n <= POS_ROWS);
            for (k = 0; k < n; k++)
                bad += ids[k] < 0 || ids[k] >= s->vocab;
            T_EQ_INT(bad, 0);
            /* the specials of the tokenizer's kind frame the text */
            T_EQ_INT(ids[0], s->unigram ? 0 : 101);
            T_EQ_INT(ids[n - 1], s->unigram ? 2 : 102);
            if (zero) {
                /* zero weights give a zero vector, left at zero by the
                 * normalisation (kernels.h: "an all-zero row stays zero") */
                double ss = dot(out + i * H, out + i * H);
                T_CHECK(ss == 0.0);
            } else {
                double c;
                expected(n, cls, want);
                c = dot(out + i * H, want);
                T_CHECK(c > 0.9999);
                T_CHECK(fabs(dot(out + i * H, out + i * H) - 1.0) < 1e-4);
                if (!(c > 0.9999))
                    fprintf(stderr, "    %s text %d query %d: cos %f\n", s->reg_name,
                            i, q, c);
            }
        }
    }
    embed_free(m);
}

/* A file missing one tensor, and one with one tensor's shape transposed,
 * are refused with a message naming the tensor. */
static void check_refusals(const char *dir, const struct model_spec *s, struct tlist *l)
{
    char err[256], name[96];
    struct embed_model *m;

    snprintf(name, sizeof(name), "encoder.layer.%d.attention.self.key.bias", s->layers - 1);
    T_CHECK(write_st(dir, l, name, NULL, 0) > 0);
    err[0] = 0;
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m == NULL);
    embed_free(m);
    T_CHECK(strstr(err, name) != NULL);
    T_CHECK(strstr(err, "missing") != NULL);

    snprintf(name, sizeof(name), "encoder.layer.%d.intermediate.dense.weight", s->layers / 2);
    T_CHECK(write_st(dir, l, NULL, name, 0) > 0);
    err[0] = 0;
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m == NULL);
    embed_free(m);
    T_CHECK(strstr(err, name) != NULL);
    T_CHECK(strstr(err, "shape") != NULL);
    if (!strstr(err, name))
        fprintf(stderr, "    %s: %s\n", s->reg_name, err);

    /* the vocab row count is checked too: e.g. the XLM-R base 250002 */
    snprintf(name, sizeof(name), "embeddings.word_embeddings.weight");
    T_CHECK(write_st(dir, l, NULL, name, 0) > 0);
    err[0] = 0;
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m == NULL);
    embed_free(m);
    T_CHECK(strstr(err, "word embeddings") != NULL);
}

static void test_model(const struct model_spec *s)
{
    static struct tlist l;
    char dir[512], path[600];
    struct stat st;
    long long size;

    T_CHECK((size_t)snprintf(dir, sizeof(dir), "%s/%s", tmp_root, s->reg_name) < sizeof(dir));
    T_EQ_INT(make_folder(dir, s), 0);
    build_list(s, &l);
    T_EQ_INT(l.n, 6 + 16 * s->layers + 2);
    size = write_st(dir, &l, NULL, NULL, 1);
    T_CHECK(size > 0);
    if (s->published_size) {
        T_EQ_INT(size, s->published_size);
    }
    /* sparse: the ~0.1-0.5 GB take almost no blocks */
    T_CHECK((size_t)snprintf(path, sizeof(path), "%s/model.safetensors", dir) < sizeof(path));
    T_CHECK(stat(path, &st) == 0 && (long long)st.st_blocks * 512 < 8LL << 20);

    check_encode(dir, s, s->cls, 0);
    if (s->cls) {
        /* without cairn_embed.json, 1_Pooling alone must still select CLS */
        T_CHECK((size_t)snprintf(path, sizeof(path), "%s/cairn_embed.json", dir) < sizeof(path));
        T_EQ_INT(remove(path), 0);
        check_encode(dir, s, 1, 0);
    }
    T_CHECK(write_st(dir, &l, NULL, NULL, 0) > 0);
    check_encode(dir, s, s->cls, 1);
    check_refusals(dir, s, &l);
    remove_folder(dir);
}

static void test_e5_small(void) { test_model(&specs[0]); }
static void test_paraphrase_multilingual(void) { test_model(&specs[1]); }
static void test_bge_small(void) { test_model(&specs[2]); }
static void test_minilm_l6(void) { test_model(&specs[3]); }

int main(void)
{
    const char *base = getenv("TMPDIR");

    /* With the pre-packed file on, models of the published sizes would
     * each write an 85 MB file (.cairn-packed/, test_embed_packcache tests
     * it); these tests are about the configurations, and their folders
     * must go whole whatever the caller's environment says. */
    setenv("CAIRN_PACK_CACHE", "0", 1);
    snprintf(tmp_root, sizeof(tmp_root), "%s/cairn_cfg_XXXXXX",
             base && *base ? base : "/tmp");
    if (!mkdtemp(tmp_root)) {
        perror("mkdtemp");
        return 1;
    }
    T_RUN(test_e5_small);
    T_RUN(test_paraphrase_multilingual);
    T_RUN(test_bge_small);
    T_RUN(test_minilm_l6);
    rmdir(tmp_root);
    return T_DONE();
}
