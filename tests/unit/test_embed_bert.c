/*
 * test_embed_bert.c: the whole encoder on the tiny random BERT in
 * tests/data/embed/tiny-bert against golden.json from a float64 PyTorch
 * forward pass (tests/tools/make_tiny_bert.py): token ids exactly, vectors
 * at cosine >= 0.9999, one text at a time and all in one batch; CLS
 * pooling through both config files; the "bert." tensor-name prefix;
 * query prefixes; 2 threads; and broken model folders. Run from the
 * repository root.
 */
#include "t.h"
#include "embed/embed.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define TINY_DIR "tests/data/embed/tiny-bert"
#define MAXC 32

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        p = malloc((size_t)n + 1);
        if (p && fread(p, 1, (size_t)n, f) == (size_t)n) {
            p[n] = 0;
            if (len)
                *len = (size_t)n;
        } else {
            free(p);
            p = NULL;
        }
    }
    fclose(f);
    return p;
}

static int write_all(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && fwrite(p, 1, n, f) == n;

    if (f)
        fclose(f);
    return ok;
}

struct golden {
    int    n;
    char  *text[MAXC];
    int    nids[MAXC];
    int    ids[MAXC][64];
    float  mean[MAXC][64];
    float  cls[MAXC][64];
};

static struct golden G;

static int load_golden(void)
{
    char *text = read_all(TINY_DIR "/golden.json", NULL);
    cJSON *root = text ? cJSON_Parse(text) : NULL, *c;

    free(text);
    if (!root)
        return 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
        cJSON *e;
        int i = 0;
        if (G.n >= MAXC)
            break;
        G.text[G.n] = strdup(cJSON_GetObjectItem(c, "text")->valuestring);
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "ids"))
            if (i < 64)
                G.ids[G.n][i++] = e->valueint;
        G.nids[G.n] = i;
        i = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "mean"))
            if (i < 64)
                G.mean[G.n][i++] = (float)e->valuedouble;
        i = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "cls"))
            if (i < 64)
                G.cls[G.n][i++] = (float)e->valuedouble;
        G.n++;
    }
    cJSON_Delete(root);
    return G.n > 0;
}

/* Every golden vector matched (pooled = 0 mean, 1 cls); returns the
 * smallest cosine seen. */
static double check_all(struct embed_model *m, int cls, int batched)
{
    float *out = calloc((size_t)G.n * 64, sizeof(float));
    double worst = 1.0;
    int i;

    if (batched) {
        if (embed_encode(m, (const char *const *)G.text, (size_t)G.n, 0, out) != 0)
            worst = -2;
    } else {
        for (i = 0; i < G.n; i++)
            if (embed_encode(m, (const char *const *)&G.text[i], 1, 0, out + i * 64) != 0)
                worst = -2;
    }
    for (i = 0; i < G.n && worst > -2; i++) {
        double c = t_cosine(out + i * 64, cls ? G.cls[i] : G.mean[i], 64);
        if (c < worst)
            worst = c;
        if (c < 0.9999)
            fprintf(stderr, "  case %d \"%.30s\": cosine %.7f\n", i, G.text[i], c);
    }
    free(out);
    return worst;
}

static void test_golden(void)
{
    char err[256] = "";
    struct embed_model *m = embed_load(TINY_DIR, err, sizeof(err));
    int i, ids_ok = 0;
    double w1, w2;

    T_CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "  %s\n", err);
        return;
    }
    T_EQ_INT(embed_dim(m), 64);
    T_EQ_INT(embed_max_tokens(m), 48);
    for (i = 0; i < G.n; i++) {
        int32_t ids[64];
        int n = embed_tokenize(m, G.text[i], 0, ids, 64), j, same = n == G.nids[i];
        for (j = 0; same && j < n; j++)
            same = ids[j] == G.ids[i][j];
        ids_ok += same;
    }
    T_EQ_INT(ids_ok, G.n);
    w1 = check_all(m, 0, 0);
    w2 = check_all(m, 0, 1);
    printf("# tiny-bert mean pooling: worst cosine %.8f single, %.8f batched\n", w1, w2);
    T_CHECK(w1 >= 0.9999);
    T_CHECK(w2 >= 0.9999);
    embed_set_threads(m, 2);
    T_CHECK(check_all(m, 0, 1) >= 0.9999);
    embed_set_threads(m, 1);
    /* Batched == single, bit for bit or nearly (same kernels). */
    {
        float a[64], *all = calloc((size_t)G.n * 64, sizeof(float));
        double md = 0;
        T_EQ_INT(embed_encode(m, (const char *const *)G.text, (size_t)G.n, 0, all), 0);
        for (i = 0; i < G.n; i++) {
            int d;
            embed_encode(m, (const char *const *)&G.text[i], 1, 0, a);
            for (d = 0; d < 64; d++)
                md = fmax(md, fabs(a[d] - all[i * 64 + d]));
        }
        T_CHECK(md < 1e-5);
        free(all);
    }
    embed_free(m);
}

/*
 * A batch cut into shares run on threads (embed_forward_ids with 2 and 3
 * threads, batches long enough to be split) gives the vectors of the
 * single-threaded pass; a bad token id in any share fails the call.
 */
static void test_thread_split(void)
{
    enum { B = 12, S = 40 };
    char err[256] = "";
    struct embed_model *m = embed_load(TINY_DIR, err, sizeof(err));
    int32_t ids[B * S];
    int lens[B], b, t, nt;
    float out1[B * 64], out2[B * 64];

    T_CHECK(m != NULL);
    if (!m)
        return;
    for (b = 0; b < B; b++) {
        /* lengths 40, 37, ..., some short: shares get their own padding */
        lens[b] = S - 3 * b > 3 ? S - 3 * b : 3;
        for (t = 0; t < S; t++)
            ids[b * S + t] = t < lens[b] ? (t == 0 ? 2 : 5 + (b * 31 + t * 7) % 90) : 0;
    }
    embed_set_threads(m, 1);
    T_EQ_INT(embed_forward_ids(m, ids, lens, B, S, out1), 0);
    for (nt = 2; nt <= 3; nt++) {
        double md = 0;
        int i;
        embed_set_threads(m, nt);
        T_EQ_INT(embed_forward_ids(m, ids, lens, B, S, out2), 0);
        for (i = 0; i < B * 64; i++)
            md = fmax(md, fabs(out1[i] - out2[i]));
        T_CHECK(md < 1e-5);
    }
    ids[(B - 1) * S + 1] = 1 << 30;     /* in the last share */
    T_EQ_INT(embed_forward_ids(m, ids, lens, B, S, out2), -1);
    T_CHECK(strstr(embed_errmsg(m), "out of range") != NULL);
    embed_free(m);
}

/* Makes a temp folder with symlinks to the tiny model's files. */
static int make_dir(char *dir, int link_model)
{
    char path[512], target[512], cwd[400];
    const char *files[] = { "config.json", "tokenizer.json", "model.safetensors" };
    size_t i;

    if (!mkdtemp(dir) || !getcwd(cwd, sizeof(cwd)))
        return 0;
    for (i = 0; i < 3; i++) {
        if (i == 2 && !link_model)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        snprintf(target, sizeof(target), "%s/" TINY_DIR "/%s", cwd, files[i]);
        if (symlink(target, path) != 0)
            return 0;
    }
    return 1;
}

static void rm_dir(const char *dir)
{
    const char *files[] = { "config.json", "tokenizer.json", "model.safetensors",
                            "cairn_embed.json", "1_Pooling/config.json", "1_Pooling" };
    char path[512];
    size_t i;

    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
        if (unlink(path) != 0)
            rmdir(path);
    }
    rmdir(dir);
}

static void test_cls(void)
{
    char dir[] = "/tmp/cairn_embed_XXXXXX", path[600], err[256] = "";
    static const char opt[] = "{\"pooling\": \"cls\"}";
    static const char st[] = "{\"word_embedding_dimension\": 64, "
                             "\"pooling_mode_cls_token\": true, "
                             "\"pooling_mode_mean_tokens\": false}";
    struct embed_model *m;

    T_CHECK(make_dir(dir, 1));
    snprintf(path, sizeof(path), "%s/cairn_embed.json", dir);
    T_CHECK(write_all(path, opt, sizeof(opt) - 1));
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m != NULL);
    if (m)
        T_CHECK(check_all(m, 1, 1) >= 0.9999);
    embed_free(m);
    unlink(path);
    snprintf(path, sizeof(path), "%s/1_Pooling", dir);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/1_Pooling/config.json", dir);
    T_CHECK(write_all(path, st, sizeof(st) - 1));
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m != NULL);
    if (m)
        T_CHECK(check_all(m, 1, 0) >= 0.9999);
    embed_free(m);
    rm_dir(dir);
}

/* Rewrites model.safetensors with every tensor renamed "bert.NAME". */
static void test_bert_prefix(void)
{
    char dir[] = "/tmp/cairn_embed_XXXXXX", path[600], err[256] = "";
    size_t len = 0, hlen = 0, nh, i;
    char *raw = read_all(TINY_DIR "/model.safetensors", &len);
    cJSON *hdr, *e, *out;
    char *text;
    unsigned char *img;
    struct embed_model *m;

    T_CHECK(raw != NULL && make_dir(dir, 0));
    if (!raw)
        return;
    for (i = 0; i < 8; i++)
        hlen |= (size_t)(unsigned char)raw[i] << (8 * i);
    hdr = cJSON_ParseWithLength(raw + 8, hlen);
    out = cJSON_CreateObject();
    cJSON_ArrayForEach(e, hdr) {
        char name[200];
        snprintf(name, sizeof(name), "%s%s",
                 strcmp(e->string, "__metadata__") ? "bert." : "", e->string);
        cJSON_AddItemToObject(out, name, cJSON_Duplicate(e, 1));
    }
    text = cJSON_PrintUnformatted(out);
    nh = strlen(text);
    img = malloc(8 + nh + len - 8 - hlen);
    for (i = 0; i < 8; i++)
        img[i] = (unsigned char)(nh >> (8 * i));
    memcpy(img + 8, text, nh);
    memcpy(img + 8 + nh, raw + 8 + hlen, len - 8 - hlen);
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    T_CHECK(write_all(path, img, 8 + nh + len - 8 - hlen));
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m != NULL);
    if (!m)
        fprintf(stderr, "  %s\n", err);
    if (m)   /* data now unaligned for F32: exercises the copy path */
        T_CHECK(check_all(m, 0, 1) >= 0.9999);
    embed_free(m);
    rm_dir(dir);
    free(img);
    free(text);
    cJSON_Delete(out);
    cJSON_Delete(hdr);
    free(raw);
}

static void test_prefix_and_junk(void)
{
    char dir[] = "/tmp/cairn_embed_XXXXXX", path[600], err[256] = "";
    static const char opt[] = "{\"query_prefix\": \"what did we say \", "
                              "\"document_prefix\": \"memory \"}";
    struct embed_model *m;
    int32_t ids[64];
    int n;

    T_CHECK(make_dir(dir, 1));
    snprintf(path, sizeof(path), "%s/cairn_embed.json", dir);
    T_CHECK(write_all(path, opt, sizeof(opt) - 1));
    m = embed_load(dir, err, sizeof(err));
    T_CHECK(m != NULL);
    if (m) {
        static const char junk[] = "\xff\xfe\xc0\x80 cat \xed\xa0\x80";
        const char *texts[3] = { junk, NULL, "" };
        float out[3 * 64];
        size_t big = (size_t)8 << 20, i;
        char *huge = malloc(big + 1);

        n = embed_tokenize(m, "cat", 1, ids, 64);
        T_EQ_INT(n, 7);     /* [CLS] what did we say cat [SEP] */
        n = embed_tokenize(m, "cat", 0, ids, 64);
        T_EQ_INT(n, 4);     /* [CLS] memory cat [SEP] */
        T_EQ_INT(embed_encode(m, texts, 3, 0, out), 0);
        T_CHECK(fabs(t_cosine(out, out, 64) - 1.0) < 1e-6);
        T_CHECK(fabs(t_cosine(out + 128, out + 64, 64) - 1.0) < 1e-6);  /* NULL == "" */
        for (i = 0; i < big; i++)
            huge[i] = "memory cat "[i % 11];
        huge[big] = 0;
        texts[0] = huge;
        T_EQ_INT(embed_encode(m, texts, 1, 1, out), 0);
        T_CHECK(fabs(t_cosine(out, out, 64) - 1.0) < 1e-6);
        free(huge);
        {
            int32_t bad[2] = { 2, 100000 };
            int lens[1] = { 2 };
            T_EQ_INT(embed_forward_ids(m, bad, lens, 1, 2, out), -1);
            T_CHECK(strstr(embed_errmsg(m), "out of range") != NULL);
            lens[0] = 3;
            T_EQ_INT(embed_forward_ids(m, bad, lens, 1, 2, out), -1);
            T_EQ_INT(embed_forward_ids(m, bad, lens, 1, 49, out), -1);
        }
    }
    embed_free(m);
    rm_dir(dir);
}

static int load_fails_with(const char *dir, const char *want)
{
    char err[256] = "";
    struct embed_model *m = embed_load(dir, err, sizeof(err));
    int ok = m == NULL && strstr(err, want) != NULL;

    if (!ok)
        fprintf(stderr, "  load %s -> %s (want %s)\n", dir, m ? "loaded" : err, want);
    embed_free(m);
    return ok;
}

static void test_broken(void)
{
    char dir[] = "/tmp/cairn_embed_XXXXXX", path[600], cfgp[600];
    size_t len = 0;
    char *model = read_all(TINY_DIR "/model.safetensors", &len);
    char *cfg = read_all(TINY_DIR "/config.json", NULL);
    char *p;

    T_CHECK(load_fails_with("/nonexistent", "config.json"));
    T_CHECK(model && cfg && make_dir(dir, 0));
    if (!model || !cfg)
        goto out;
    T_CHECK(load_fails_with(dir, "model.safetensors"));
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    T_CHECK(write_all(path, model, len / 2));
    T_CHECK(load_fails_with(dir, "past the end"));
    /* a config that disagrees with the weights */
    snprintf(cfgp, sizeof(cfgp), "%s/config.json", dir);
    unlink(cfgp);
    T_CHECK(write_all(path, model, len));
    p = strstr(cfg, "\"intermediate_size\": 128");
    T_CHECK(p != NULL);
    if (p) {
        memcpy(p, "\"intermediate_size\": 256", 24);
        T_CHECK(write_all(cfgp, cfg, strlen(cfg)));
        T_CHECK(load_fails_with(dir, "wrong shape"));
        memcpy(p, "\"intermediate_size\": 128", 24);
    }
    p = strstr(cfg, "\"num_attention_heads\": 4");
    if (p) {
        memcpy(p, "\"num_attention_heads\": 5", 24);
        T_CHECK(write_all(cfgp, cfg, strlen(cfg)));
        T_CHECK(load_fails_with(dir, "multiple"));
        memcpy(p, "\"num_attention_heads\": 4", 24);
    }
    p = strstr(cfg, "\"hidden_act\": \"gelu\"");
    if (p) {
        memcpy(p, "\"hidden_act\": \"silu\"", 20);
        T_CHECK(write_all(cfgp, cfg, strlen(cfg)));
        T_CHECK(load_fails_with(dir, "hidden_act"));
    }
    T_CHECK(write_all(cfgp, "[1]", 3));
    T_CHECK(load_fails_with(dir, "not a JSON object"));
out:
    rm_dir(dir);
    free(model);
    free(cfg);
}

int main(void)
{
    const char *root = getenv("CAIRN_TEST_ROOT");
    int i;

    if (root && chdir(root) != 0)
        fprintf(stderr, "cannot cd to %s\n", root);
    if (!load_golden()) {
        fprintf(stderr, "cannot read " TINY_DIR "/golden.json (run from the repo root)\n");
        T_CHECK(0);
        return T_DONE();
    }
    T_RUN(test_golden);
    T_RUN(test_thread_split);
    T_RUN(test_cls);
    T_RUN(test_bert_prefix);
    T_RUN(test_prefix_and_junk);
    T_RUN(test_broken);
    for (i = 0; i < G.n; i++)
        free(G.text[i]);
    return T_DONE();
}
