/*
 * test_embed_prop.c: property tests of the encoder's fast paths (the
 * packed product and attention of gemm.c, the in-place kernels and the
 * per-thread split of bert.c) on small random BERT models.
 *
 * Each model is written to a temporary folder (config.json, a WordPiece
 * tokenizer.json, model.safetensors with random F32 weights) in shapes off
 * every block size: hidden 32..128, 1..4 heads of sizes that are and are
 * not multiples of 8, 16 and 32, intermediate sizes off the 32-column
 * panel, 1..2 layers, up to 512 positions. Each gets random batches of
 * 1..40 texts: one at the longest length the batch is padded to and many
 * short ones, so most texts are far shorter than the padded length (a
 * work area sized for the padded length once overflowed for a 300-token
 * text in a batch padded to 512). For every SIMD level the CPU has, at 1
 * and 2 threads, on a freshly loaded model (so the first pass runs before
 * the weights are packed and later ones after), it checks that:
 *
 *   - every text's vector has cosine >= 0.99999 with that text's vector
 *     from a reference forward pass written here on the scalar `*_ref`
 *     kernels (double accumulators), the text alone;
 *   - the same batch twice gives the same bits;
 *   - where a text's vector is computed on the packed product with one
 *     BLAS thread, it has the same bits alone as in any batch: the packed
 *     kernel computes each row of a product from that row alone in a fixed
 *     order, and attention reads only the sequence's own rows. At 2
 *     threads a text alone is split between the model's pool by heads and
 *     panels (bert.c, forward_pooled) and must still have those bits;
 *   - guard floats around every buffer the API writes (the output, and the
 *     work areas and outputs of the kernel-level calls) are intact.
 *
 * A second process (a fork, with CAIRN_BLAS=none set before the first
 * kernel call) runs the same with OpenBLAS missing, where the AVX2 level
 * also runs on the packed product. Then: two models encoding at once in
 * two threads keep their bits (test_two_models), and a pass of more rows
 * than an int holds is refused (test_row_limit).
 *
 * Deterministic (fixed seeds). CAIRN_PROP_ROUNDS=N adds N rounds of
 * random models and batches (a soak; default 1); CAIRN_PROP_SEED changes
 * their seed.
 */
#include "t.h"

#include "embed/embed.h"
#include "embed/kernels.h"

#include <cJSON.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUARD      64            /* guard floats on each side of a buffer */
#define MAX_LAYERS 2
#define NWORDS     60            /* tokenizer words w0..w59 */
#define VOCAB      (NWORDS + 4)  /* [PAD] [UNK] [CLS] [SEP] first */
#define MAX_TEXTS  40

static int g_rounds = 1;   /* CAIRN_PROP_ROUNDS */
static int g_short;        /* CAIRN_PROP_SHORT, or under valgrind */

static unsigned long long rng = 0x9E3779B97F4A7C15ull;

static unsigned long long next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* uniform in [lo, hi] */
static int irand(int lo, int hi)
{
    return lo + (int)(next_u64() % (unsigned long long)(hi - lo + 1));
}

/* uniform in [-1, 1) */
static float frand(void)
{
    return (float)((next_u64() >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

/* ---- guarded buffers ------------------------------------------------- */

static const uint32_t GUARD_BITS = 0x7fc0dead;   /* a NaN nothing computes */

/* n floats with GUARD sentinel floats on each side; returns the inside. */
static float *g_alloc(size_t n)
{
    float *p = malloc((n + 2 * GUARD) * sizeof(float));
    size_t i;

    if (!p)
        abort();
    for (i = 0; i < n + 2 * GUARD; i++)
        memcpy(&p[i], &GUARD_BITS, 4);
    return p + GUARD;
}

static int g_intact(const float *in, size_t n)
{
    size_t i;

    for (i = 0; i < GUARD; i++)
        if (memcmp(&in[-1 - (long)i], &GUARD_BITS, 4) != 0 ||
            memcmp(&in[n + i], &GUARD_BITS, 4) != 0)
            return 0;
    return 1;
}

static void g_free(float *in)
{
    if (in)
        free(in - GUARD);
}

/* ---- kernel-level properties --------------------------------------- */

/*
 * One head of attention on the packed product, for random head sizes and
 * padded lengths, at every length n <= seq the work area sized for seq
 * must serve: the work area, the scores and the other columns of ctx
 * (the other heads' slices) are left alone, and ctx matches the reference.
 */
static void prop_attention_head(int level, int rounds)
{
    int r, bad_guard = 0, bad_val = 0, calls = 0;

    for (r = 0; r < rounds; r++) {
        int hd = irand(1, 80), seq = irand(1, r % 3 == 0 ? 512 : 160), pad = irand(0, 5);
        int ld = hd + pad, tries, n;
        size_t sz = (size_t)seq * ld, need = embed_k_attention_work(seq, hd), i;
        float *q = g_alloc(sz), *k = g_alloc(sz), *v = g_alloc(sz), *ctx = g_alloc(sz);
        float *ref = malloc(sz * sizeof(float)), *scores = g_alloc((size_t)seq * seq);
        float *work, *wbase;

        /* 64-byte aligned, with guards after */
        wbase = aligned_alloc(64, ((need + GUARD) * sizeof(float) + 63) & ~(size_t)63);
        work = wbase;
        for (i = 0; i < need + GUARD; i++)
            memcpy(&work[i], &GUARD_BITS, 4);
        for (i = 0; i < sz; i++) {
            q[i] = frand();
            k[i] = frand();
            v[i] = frand();
        }
        for (tries = 0; tries < 4; tries++) {
            int good = 1;

            n = tries == 0 ? seq : tries == 1 ? 1 : irand(1, seq);
            for (i = 0; i < sz; i++)
                memcpy(&ctx[i], &GUARD_BITS, 4);
            if (embed_k_attention_packed(level, q, k, v, ctx, ld, n, hd,
                                         1.0f / sqrtf((float)hd), scores, work) != 0) {
                bad_val++;
                continue;
            }
            calls++;
            for (i = 0; i < GUARD; i++)
                if (memcmp(&work[need + i], &GUARD_BITS, 4) != 0)
                    good = 0;
            if (!good || !g_intact(scores, (size_t)seq * seq) || !g_intact(ctx, sz))
                good = 0;
            /* ctx: rows past n and columns past hd untouched */
            for (i = 0; i < sz && good; i++) {
                int row = (int)(i / (size_t)ld), col = (int)(i % (size_t)ld);
                int untouched = memcmp(&ctx[i], &GUARD_BITS, 4) == 0;

                if ((row >= n || col >= hd) != untouched)
                    good = 0;
            }
            if (!good) {
                if (bad_guard++ < 5)
                    fprintf(stderr, "  attention head: level %d hd %d ld %d seq %d n %d: "
                            "wrote outside its buffers\n", level, hd, ld, seq, n);
                continue;
            }
            /* the reference on a packed copy: heads = 1, hidden = ld */
            {
                float *qc = malloc((size_t)n * hd * sizeof(float));
                float *kc = malloc((size_t)n * hd * sizeof(float));
                float *vc = malloc((size_t)n * hd * sizeof(float));
                int row, col;
                double worst = 0;

                for (row = 0; row < n; row++)
                    for (col = 0; col < hd; col++) {
                        qc[row * hd + col] = q[(size_t)row * ld + col];
                        kc[row * hd + col] = k[(size_t)row * ld + col];
                        vc[row * hd + col] = v[(size_t)row * ld + col];
                    }
                embed_k_attention_ref(qc, kc, vc, ref, &n, 1, n, 1, hd);
                for (row = 0; row < n; row++)
                    for (col = 0; col < hd; col++)
                        worst = fmax(worst, fabs(ref[row * hd + col] -
                                                 ctx[(size_t)row * ld + col]));
                if (!(worst < 1e-5)) {
                    if (bad_val++ < 5)
                        fprintf(stderr, "  attention head: level %d hd %d n %d: max diff "
                                "%.3g\n", level, hd, n, worst);
                }
                free(qc); free(kc); free(vc);
            }
        }
        g_free(q); g_free(k); g_free(v); g_free(ctx); free(ref); g_free(scores);
        free(wbase);
    }
    T_EQ_INT(bad_guard, 0);
    T_EQ_INT(bad_val, 0);
    T_CHECK(calls > 0);
}

/* The packed product for random shapes: y has exactly m x n floats
 * written, matching the reference, the same bits for any m (a row does
 * not depend on the rows computed with it). */
static void prop_gemm(int level, int rounds)
{
    int r, bad = 0;

    for (r = 0; r < rounds; r++) {
        int m = irand(1, r % 4 == 0 ? 300 : 40), n = irand(1, 140);
        int k = irand(1, r % 5 == 0 ? 1700 : 200), sub = irand(1, m);
        float *x = g_alloc((size_t)m * k), *w = malloc((size_t)n * k * sizeof(float));
        float *b = malloc((size_t)n * sizeof(float)), *y = g_alloc((size_t)m * n);
        float *y1 = g_alloc((size_t)sub * n), *ref = malloc((size_t)m * n * sizeof(float));
        struct embed_k_packed *pk;
        size_t i;
        double worst = 0;

        for (i = 0; i < (size_t)m * k; i++)
            x[i] = frand();
        for (i = 0; i < (size_t)n * k; i++)
            w[i] = frand();
        for (i = 0; i < (size_t)n; i++)
            b[i] = frand();
        pk = embed_k_pack(w, n, k);
        T_CHECK(pk != NULL);
        if (!pk)
            break;
        embed_k_linear_ref(x, w, b, ref, m, n, k);
        if (embed_k_gemm_packed(level, x, pk, b, y, m) != 0 ||
            embed_k_gemm_packed(level, x + (size_t)(m - sub) * k, pk, b, y1, sub) != 0) {
            bad++;
        } else {
            for (i = 0; i < (size_t)m * n; i++)
                worst = fmax(worst, fabs(y[i] - ref[i]) / (1.0 + fabs(ref[i])));
            if (!g_intact(y, (size_t)m * n) || !g_intact(y1, (size_t)sub * n) ||
                !(worst < 1e-5 * sqrt((double)k)) ||
                memcmp(y1, y + (size_t)(m - sub) * n, (size_t)sub * n * sizeof(float)) != 0) {
                if (bad++ < 5)
                    fprintf(stderr, "  gemm: level %d m %d n %d k %d (rows %d..): worst %.3g "
                            "guards %d/%d\n", level, m, n, k, m - sub, worst,
                            g_intact(y, (size_t)m * n), g_intact(y1, (size_t)sub * n));
            }
        }
        embed_k_packed_free(pk);
        g_free(x); free(w); free(b); g_free(y); g_free(y1); free(ref);
    }
    T_EQ_INT(bad, 0);
}

/* ---- random models ---------------------------------------------------- */

enum { P_ACT_GELU, P_ACT_GELU_TANH, P_ACT_RELU };

/* A layer's parts, each a weight (or LayerNorm gain) and a bias. */
enum { P_Q, P_K, P_V, P_O, P_LN1, P_I, P_O2, P_LN2, P_PARTS };

static const struct {
    const char *name;
    char out, in;       /* 'H' or 'I'; in 0: a LayerNorm */
} parts[P_PARTS] = {
    { "attention.self.query", 'H', 'H' }, { "attention.self.key", 'H', 'H' },
    { "attention.self.value", 'H', 'H' }, { "attention.output.dense", 'H', 'H' },
    { "attention.output.LayerNorm", 'H', 0 }, { "intermediate.dense", 'I', 'H' },
    { "output.dense", 'H', 'I' }, { "output.LayerNorm", 'H', 0 },
};

struct player {
    const float *w[P_PARTS], *b[P_PARTS];
};

struct pmodel {
    int H, heads, I, L, P, act, cls;
    char dir[64];
    /* tensors in file order, with their values kept for the reference */
    struct { char name[80]; int d0, d1; float *v; } t[8 + 16 * MAX_LAYERS];
    int nt;
    const float *word, *pos, *type, *elng, *elnb;
    struct player layer[MAX_LAYERS];
};

/* Floats in a tensor of shape [d0] (d1 0) or [d0][d1]. */
static size_t pt_floats(int d0, int d1)
{
    return (size_t)d0 * (d1 ? d1 : 1);
}

/* Adds a tensor of random values: kind 0 a weight of variance 1/d1 (so
 * activations stay near 1 through any depth), 1 a bias or table entry in
 * [-0.5, 0.5), 2 a LayerNorm gain near 1. */
static const float *pm_add(struct pmodel *pm, const char *name, int d0, int d1, int kind)
{
    size_t n = pt_floats(d0, d1), i;
    float *v = malloc(n * sizeof(float)), sc = d1 ? sqrtf(3.0f / (float)d1) : 0.5f;

    if (!v)
        abort();
    for (i = 0; i < n; i++)
        v[i] = kind == 2 ? 1.0f + 0.2f * frand() : kind == 1 ? 0.5f * frand() : sc * frand();
    snprintf(pm->t[pm->nt].name, sizeof(pm->t[0].name), "%s", name);
    pm->t[pm->nt].d0 = d0;
    pm->t[pm->nt].d1 = d1;
    pm->t[pm->nt].v = v;
    pm->nt++;
    return v;
}

/* dir/name := n bytes at p. */
static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[128];
    int fd, ok;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ok = fd >= 0 && write(fd, p, n) == (ssize_t)n;
    return fd >= 0 && close(fd) == 0 && ok ? 0 : -1;
}

static int write_text(const char *dir, const char *name, const char *text)
{
    return write_file(dir, name, text, strlen(text));
}

/* model.safetensors: the header as the writer pads it (spaces to a
 * multiple of 8), then every tensor in order. */
static int write_safetensors(const struct pmodel *pm)
{
    cJSON *root = cJSON_CreateObject();
    char *hdr, *img = NULL;
    size_t off = 0, hlen, at;
    int i, rc = -1;

    for (i = 0; i < pm->nt; i++) {
        cJSON *e = cJSON_AddObjectToObject(root, pm->t[i].name), *a;
        size_t bytes = pt_floats(pm->t[i].d0, pm->t[i].d1) * sizeof(float);

        cJSON_AddStringToObject(e, "dtype", "F32");
        a = cJSON_AddArrayToObject(e, "shape");
        cJSON_AddItemToArray(a, cJSON_CreateNumber(pm->t[i].d0));
        if (pm->t[i].d1)
            cJSON_AddItemToArray(a, cJSON_CreateNumber(pm->t[i].d1));
        a = cJSON_AddArrayToObject(e, "data_offsets");
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)off));
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)(off + bytes)));
        off += bytes;
    }
    hdr = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    if (!hdr)
        return -1;
    hlen = (strlen(hdr) + 7) / 8 * 8;
    img = malloc(8 + hlen + off);
    if (img) {
        for (i = 0; i < 8; i++)
            img[i] = (char)(unsigned char)((uint64_t)hlen >> (8 * i));
        memset(img + 8, ' ', hlen);
        memcpy(img + 8, hdr, strlen(hdr));
        for (i = 0, at = 8 + hlen; i < pm->nt; i++) {
            size_t bytes = pt_floats(pm->t[i].d0, pm->t[i].d1) * sizeof(float);

            memcpy(img + at, pm->t[i].v, bytes);
            at += bytes;
        }
        rc = write_file(pm->dir, "model.safetensors", img, 8 + hlen + off);
    }
    free(img);
    free(hdr);
    return rc;
}

/* A WordPiece tokenizer.json: [PAD] 0, [UNK] 1, [CLS] 2, [SEP] 3, then
 * the words w0..w59, so a text of n words is n + 2 tokens. */
static int write_tokenizer(const char *dir)
{
    cJSON *root = cJSON_CreateObject(), *model, *vocab, *pp, *a;
    char nm[16], *text;
    int i, rc;

    model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(model, "type", "WordPiece");
    cJSON_AddStringToObject(model, "unk_token", "[UNK]");
    vocab = cJSON_AddObjectToObject(model, "vocab");
    cJSON_AddNumberToObject(vocab, "[PAD]", 0);
    cJSON_AddNumberToObject(vocab, "[UNK]", 1);
    cJSON_AddNumberToObject(vocab, "[CLS]", 2);
    cJSON_AddNumberToObject(vocab, "[SEP]", 3);
    for (i = 0; i < NWORDS; i++) {
        snprintf(nm, sizeof(nm), "w%d", i);
        cJSON_AddNumberToObject(vocab, nm, 4 + i);
    }
    cJSON_AddNullToObject(root, "normalizer");
    cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "pre_tokenizer"), "type",
                            "BertPreTokenizer");
    pp = cJSON_AddObjectToObject(root, "post_processor");
    cJSON_AddStringToObject(pp, "type", "BertProcessing");
    a = cJSON_AddArrayToObject(pp, "cls");
    cJSON_AddItemToArray(a, cJSON_CreateString("[CLS]"));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(2));
    a = cJSON_AddArrayToObject(pp, "sep");
    cJSON_AddItemToArray(a, cJSON_CreateString("[SEP]"));
    cJSON_AddItemToArray(a, cJSON_CreateNumber(3));
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    rc = text ? write_text(dir, "tokenizer.json", text) : -1;
    free(text);
    return rc;
}

/* Makes the model folder; -1 if it could not be written. */
static int pm_make(struct pmodel *pm, int H, int heads, int I, int L, int P, int act, int cls)
{
    static const char *const acts[] = { "gelu", "gelu_new", "relu" };
    char cfg[512], nm[96];
    int l, p;

    memset(pm, 0, sizeof(*pm));
    pm->H = H; pm->heads = heads; pm->I = I; pm->L = L; pm->P = P;
    pm->act = act; pm->cls = cls;
    snprintf(pm->dir, sizeof(pm->dir), "/tmp/cairn-prop-XXXXXX");
    if (!mkdtemp(pm->dir))
        return -1;
    pm->word = pm_add(pm, "embeddings.word_embeddings.weight", VOCAB, H, 1);
    pm->pos = pm_add(pm, "embeddings.position_embeddings.weight", P, H, 1);
    pm->type = pm_add(pm, "embeddings.token_type_embeddings.weight", 2, H, 1);
    pm->elng = pm_add(pm, "embeddings.LayerNorm.weight", H, 0, 2);
    pm->elnb = pm_add(pm, "embeddings.LayerNorm.bias", H, 0, 1);
    for (l = 0; l < L; l++) {
        for (p = 0; p < P_PARTS; p++) {
            int out = parts[p].out == 'I' ? I : H, in = parts[p].in == 'I' ? I : H;

            snprintf(nm, sizeof(nm), "encoder.layer.%d.%s.weight", l, parts[p].name);
            pm->layer[l].w[p] = pm_add(pm, nm, out, parts[p].in ? in : 0, parts[p].in ? 0 : 2);
            snprintf(nm, sizeof(nm), "encoder.layer.%d.%s.bias", l, parts[p].name);
            pm->layer[l].b[p] = pm_add(pm, nm, out, 0, 1);
        }
    }
    snprintf(cfg, sizeof(cfg),
             "{\"model_type\": \"bert\", \"hidden_size\": %d, \"num_hidden_layers\": %d,"
             " \"num_attention_heads\": %d, \"intermediate_size\": %d,"
             " \"max_position_embeddings\": %d, \"type_vocab_size\": 2,"
             " \"vocab_size\": %d, \"hidden_act\": \"%s\", \"layer_norm_eps\": 1e-12}",
             H, L, heads, I, P, VOCAB, acts[act]);
    if (write_text(pm->dir, "config.json", cfg) != 0 || write_tokenizer(pm->dir) != 0 ||
        write_safetensors(pm) != 0 ||
        write_text(pm->dir, "cairn_embed.json", cls ? "{\"pooling\": \"cls\"}"
                                                    : "{\"pooling\": \"mean\"}") != 0)
        return -1;
    return 0;
}

static void pm_free(struct pmodel *pm)
{
    static const char *const files[] = { "config.json", "tokenizer.json",
                                         "model.safetensors", "cairn_embed.json" };
    char path[128];
    size_t i;
    int j;

    for (j = 0; j < pm->nt; j++)
        free(pm->t[j].v);
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", pm->dir, files[i]);
        unlink(path);
    }
    rmdir(pm->dir);
}

/* The forward pass of one text on the scalar references, in the order of
 * bert.c's comment (post-LayerNorm BERT); out[H], normalised. */
static void ref_forward(const struct pmodel *pm, const int32_t *ids, int n, float *out)
{
    int H = pm->H, hd = H / pm->heads, t, d, l;
    float *x = malloc((size_t)n * H * sizeof(float)), *q = malloc((size_t)n * H * sizeof(float));
    float *k = malloc((size_t)n * H * sizeof(float)), *v = malloc((size_t)n * H * sizeof(float));
    float *c = malloc((size_t)n * H * sizeof(float)), *f = malloc((size_t)n * pm->I * sizeof(float));
    float *tmp;
    double acc;

    for (t = 0; t < n; t++)
        for (d = 0; d < H; d++)
            x[t * H + d] = pm->word[ids[t] * H + d] + pm->pos[t * H + d] + pm->type[d];
    embed_k_add_layernorm_ref(x, NULL, pm->elng, pm->elnb, n, H, 1e-12f);
    for (l = 0; l < pm->L; l++) {
        const struct player *y = &pm->layer[l];

        embed_k_linear_ref(x, y->w[P_Q], y->b[P_Q], q, n, H, H);
        embed_k_linear_ref(x, y->w[P_K], y->b[P_K], k, n, H, H);
        embed_k_linear_ref(x, y->w[P_V], y->b[P_V], v, n, H, H);
        embed_k_attention_ref(q, k, v, c, &n, 1, n, pm->heads, hd);
        embed_k_linear_ref(c, y->w[P_O], y->b[P_O], q, n, H, H);
        embed_k_add_layernorm_ref(q, x, y->w[P_LN1], y->b[P_LN1], n, H, 1e-12f);
        tmp = x; x = q; q = tmp;
        embed_k_linear_ref(x, y->w[P_I], y->b[P_I], f, n, pm->I, H);
        if (pm->act == P_ACT_GELU)
            embed_k_gelu_ref(f, (size_t)n * pm->I);
        else if (pm->act == P_ACT_GELU_TANH)
            embed_k_gelu_tanh(f, (size_t)n * pm->I);
        else
            embed_k_relu(f, (size_t)n * pm->I);
        embed_k_linear_ref(f, y->w[P_O2], y->b[P_O2], q, n, H, pm->I);
        embed_k_add_layernorm_ref(q, x, y->w[P_LN2], y->b[P_LN2], n, H, 1e-12f);
        tmp = x; x = q; q = tmp;
    }
    for (d = 0; d < H; d++) {
        acc = 0;
        for (t = 0; t < (pm->cls ? 1 : n); t++)
            acc += x[t * H + d];
        out[d] = (float)(acc / (pm->cls ? 1 : n));
    }
    embed_k_l2_normalize(out, 1, H);
    free(x); free(q); free(k); free(v); free(c); free(f);
}

/* ---- batches ---------------------------------------------------------- */

struct pbatch {
    int n, seq;                       /* texts, padded length */
    int lens[MAX_TEXTS];
    int32_t *ids;                     /* [n][seq] */
    float *ref;                       /* [n][H], ref_forward of each text */
    int longest, shortest;            /* indices */
};

/* n texts: one at seq (the padded length), one near 300 when seq allows
 * (the length that overflowed), most of the rest 1..8 tokens, a few
 * anywhere in 1..seq. Token ids past a text's length are garbage, which
 * nothing may read. */
static void pb_make(struct pbatch *pb, const struct pmodel *pm, int n, int seq)
{
    int b, t;

    pb->n = n;
    pb->seq = seq;
    pb->ids = malloc((size_t)n * seq * sizeof(int32_t));
    pb->ref = malloc((size_t)n * pm->H * sizeof(float));
    pb->longest = irand(0, n - 1);
    for (b = 0; b < n; b++) {
        int kind = irand(0, 9);

        pb->lens[b] = b == pb->longest ? seq
                    : kind < 6 ? irand(1, seq < 8 ? seq : 8)
                    : kind < 8 && seq > 300 ? irand(290, seq < 310 ? seq : 310)
                    : irand(1, seq);
        for (t = 0; t < seq; t++)
            pb->ids[(size_t)b * seq + t] = t < pb->lens[b] ? irand(0, VOCAB - 1) : -12345;
    }
    pb->shortest = 0;
    for (b = 0; b < n; b++) {
        if (pb->lens[b] < pb->lens[pb->shortest])
            pb->shortest = b;
        ref_forward(pm, pb->ids + (size_t)b * seq, pb->lens[b], pb->ref + (size_t)b * pm->H);
    }
}

/* Whether embed_forward_ids runs a pass of `batch` texts padded to seq on
 * OpenBLAS with several threads (bert.c: one sequence of >= 256 rows
 * with threads > 1), where the per-row bit-exactness does not hold. */
static int blas_threaded(int threads, int batch, int seq)
{
    return embed_k_blas() && threads > 1 && batch == 1 && seq >= 256;
}

struct ptally {
    int passes, guard, cos, bits, det, fail;
    double worst;
};

/* One call of embed_forward_ids into a guarded buffer. */
static float *run(struct embed_model *m, const int32_t *ids, const int *lens, int batch,
                  int seq, int H, struct ptally *ty)
{
    float *out = g_alloc((size_t)batch * H);

    ty->passes++;
    if (embed_forward_ids(m, ids, lens, batch, seq, out) != 0) {
        if (ty->fail++ < 3)
            fprintf(stderr, "  forward: %s\n", embed_errmsg(m));
    }
    if (!g_intact(out, (size_t)batch * H))
        ty->guard++;
    return out;
}

static void check_cos(const float *got, const float *ref, int H, struct ptally *ty,
                      const char *what, int b, int len)
{
    double c = t_cosine(got, ref, H);

    if (c < ty->worst || c != c)
        ty->worst = c;
    if (!(c >= 0.99999) && ty->cos++ < 5)
        fprintf(stderr, "  %s: text %d (%d tokens): cosine %.7f\n", what, b, len, c);
}

/*
 * The batch on a freshly loaded model at the SIMD level in force and
 * `threads` threads: a short text alone first (a query, before packing),
 * the batch twice, then a few texts alone.
 */
static void check_config(const struct pmodel *pm, const struct pbatch *pb, int threads,
                         struct ptally *ty)
{
    char err[256] = "";
    struct embed_model *m = embed_load(pm->dir, err, sizeof(err));
    int H = pm->H, b, s, bits, samples[4];
    float *o1, *o2, *o;

    if (!m) {
        if (ty->fail++ < 3)
            fprintf(stderr, "  load: %s\n", err);
        return;
    }
    embed_set_threads(m, threads);
    b = pb->shortest;
    o = run(m, pb->ids + (size_t)b * pb->seq, &pb->lens[b], 1, pb->lens[b], H, ty);
    check_cos(o, pb->ref + (size_t)b * H, H, ty, "first query", b, pb->lens[b]);
    g_free(o);

    o1 = run(m, pb->ids, pb->lens, pb->n, pb->seq, H, ty);
    o2 = run(m, pb->ids, pb->lens, pb->n, pb->seq, H, ty);
    if (memcmp(o1, o2, (size_t)pb->n * H * sizeof(float)) != 0)
        ty->det++;
    for (b = 0; b < pb->n; b++)
        check_cos(o1 + (size_t)b * H, pb->ref + (size_t)b * H, H, ty, "batch", b,
                  pb->lens[b]);

    /* alone: the longest, the shortest, two others */
    samples[0] = pb->longest;
    samples[1] = pb->shortest;
    samples[2] = irand(0, pb->n - 1);
    samples[3] = irand(0, pb->n - 1);
    bits = embed_k_packed_pays() && !blas_threaded(threads, pb->n, pb->seq);
    for (s = 0; s < 4; s++) {
        int len;

        b = samples[s];
        len = pb->lens[b];
        o = run(m, pb->ids + (size_t)b * pb->seq, &len, 1, len, H, ty);
        check_cos(o, pb->ref + (size_t)b * H, H, ty, "alone", b, len);
        if (bits && !blas_threaded(threads, 1, len) &&
            memcmp(o, o1 + (size_t)b * H, (size_t)H * sizeof(float)) != 0 && ty->bits++ < 5)
            fprintf(stderr, "  text %d (%d tokens of %d x %d): not the same bits alone\n",
                    b, len, pb->n, pb->seq);
        g_free(o);
    }
    g_free(o1);
    g_free(o2);
    embed_free(m);
}

/* embed_encode on word texts into a guarded buffer, against the
 * reference of the ids embed_tokenize gives. */
static void check_encode(const struct pmodel *pm, int n, struct ptally *ty)
{
    char err[256] = "", *texts[MAX_TEXTS];
    struct embed_model *m = embed_load(pm->dir, err, sizeof(err));
    int32_t *ids;
    float *out, ref[128];
    int b, w, maxw;

    if (!m) {
        ty->fail++;
        return;
    }
    ids = malloc((size_t)embed_max_tokens(m) * sizeof(int32_t));
    maxw = embed_max_tokens(m) - 2;
    for (b = 0; b < n; b++) {
        int words = b == 0 ? maxw + 3 : irand(0, irand(0, 1) ? maxw : (maxw < 6 ? maxw : 6));

        texts[b] = malloc((size_t)words * 4 + 1);
        texts[b][0] = 0;
        for (w = 0; w < words; w++)
            sprintf(texts[b] + strlen(texts[b]), "%sw%d", w ? " " : "", irand(0, NWORDS - 1));
    }
    out = g_alloc((size_t)n * pm->H);
    ty->passes++;
    if (embed_encode(m, (const char *const *)texts, (size_t)n, 0, out) != 0)
        ty->fail++;
    if (!g_intact(out, (size_t)n * pm->H))
        ty->guard++;
    for (b = 0; b < n; b++) {
        int len = embed_tokenize(m, texts[b], 0, ids, embed_max_tokens(m));

        ref_forward(pm, ids, len, ref);
        check_cos(out + (size_t)b * pm->H, ref, pm->H, ty, "embed_encode", b, len);
        free(texts[b]);
    }
    g_free(out);
    free(ids);
    embed_free(m);
}

/* ---- driving ---------------------------------------------------------- */

struct pshape { int H, heads, I, L, P, act, cls, texts, seq; };

/* The fixed models of every run: head sizes 32 (the overflow's), 10, 128,
 * 18 and 9; intermediate sizes off the panel; the longest texts 512. */
static const struct pshape fixed[] = {
    { 96, 3, 200, 1, 512, P_ACT_GELU, 0, 12, 512 },
    { 40, 4, 77, 2, 130, P_ACT_GELU, 0, 40, 130 },
    { 128, 1, 129, 2, 64, P_ACT_RELU, 1, 33, 64 },
    { 36, 2, 50, 1, 300, P_ACT_GELU_TANH, 0, 7, 300 },
    { 36, 4, 33, 2, 40, P_ACT_GELU, 1, 1, 17 },
};

/* The short run (CAIRN_PROP_SHORT=1, and under valgrind, ~50x slower):
 * one batch padded far past most of its texts, and the smallest model. */
static const struct pshape fixed_short[] = {
    { 48, 2, 40, 1, 400, P_ACT_GELU, 0, 4, 400 },
    { 36, 4, 33, 2, 40, P_ACT_GELU, 1, 1, 17 },
};

static void random_shape(struct pshape *s)
{
    int hd;

    s->heads = irand(1, 4);
    do
        hd = irand(8, 64);
    while (s->heads * hd < 32 || s->heads * hd > 128);
    s->H = s->heads * hd;
    s->I = irand(16, 400);
    s->L = irand(1, MAX_LAYERS);
    s->P = irand(0, 2) ? irand(8, 512) : 512;
    s->act = irand(0, 2);
    s->cls = irand(0, 3) == 0;
    s->texts = irand(1, MAX_TEXTS);
    s->seq = irand(3, s->P);
}

static void run_shape(const struct pshape *s)
{
    struct pmodel pm;
    struct pbatch pb;
    struct ptally ty;
    int level, threads;

    memset(&ty, 0, sizeof(ty));
    ty.worst = 1.0;
    T_CHECK(pm_make(&pm, s->H, s->heads, s->I, s->L, s->P, s->act, s->cls) == 0);
    pb_make(&pb, &pm, s->texts, s->seq);
    for (level = 2; level >= 0; level--) {
        embed_k_simd_enable(level);
        if (embed_k_simd() != level)
            continue;
        for (threads = 1; threads <= 2; threads++)
            check_config(&pm, &pb, threads, &ty);
    }
    embed_k_simd_enable(2);
    check_encode(&pm, s->texts < 12 ? s->texts : 12, &ty);
    printf("# H %d heads %d I %d L %d P %d %s%s: %d texts padded to %d, %d passes, "
           "1 - worst cosine %.2g\n", s->H, s->heads, s->I, s->L, s->P,
           s->act == P_ACT_GELU ? "gelu" : s->act == P_ACT_RELU ? "relu" : "gelu_new",
           s->cls ? " cls" : "", s->texts, s->seq, ty.passes, 1.0 - ty.worst);
    T_EQ_INT(ty.fail, 0);
    T_EQ_INT(ty.guard, 0);
    T_EQ_INT(ty.cos, 0);
    T_EQ_INT(ty.bits, 0);
    T_EQ_INT(ty.det, 0);
    free(pb.ids);
    free(pb.ref);
    pm_free(&pm);
}

/* ---- two models at once ---------------------------------------------- */

struct pside {
    struct embed_model *m;
    const int32_t *ids;
    const int *lens;
    int batch, seq, H, rounds, passes, differ, fail;
    const float *want;             /* NULL: do not compare */
    atomic_int *stop;
};

static void *side_run(void *arg)
{
    struct pside *s = arg;
    float *out = malloc((size_t)s->batch * s->H * sizeof(float));
    int r;

    for (r = 0; r < s->rounds && !*s->stop; r++, s->passes++) {
        if (embed_forward_ids(s->m, s->ids, s->lens, s->batch, s->seq, out) != 0)
            s->fail++;
        else if (s->want && memcmp(out, s->want, (size_t)s->batch * s->H * sizeof(float)))
            s->differ++;
    }
    if (s->want)
        *s->stop = 1;
    free(out);
    return NULL;
}

/*
 * Two models used by two threads at once (embed.h allows it: one model
 * per thread). Model A runs a batch on the packed product (shares of one
 * BLAS thread each); model B runs one long text at 2 threads, which
 * bert.c sends to OpenBLAS's threads. Which path a pass takes must
 * depend on its own model's settings only, so A's vectors keep the bits
 * they have when it runs alone.
 */
static void test_two_models(void)
{
    struct pmodel pm;
    struct pside a, b;
    char err[256];
    enum { NA = 6, SA = 40, SB = 300 };
    int32_t ids[NA * SA + SB];
    int lens[NA], lenb = SB, i;
    float want[NA * 64];
    atomic_int stop = 0;
    pthread_t ta, tb;

    embed_k_simd_enable(2);
    if (!embed_k_packed_pays() || !embed_k_blas())
        return;        /* the paths do not differ here */
    T_CHECK(pm_make(&pm, 64, 2, 100, 1, 512, P_ACT_GELU, 0) == 0);
    for (i = 0; i < NA * SA + SB; i++)
        ids[i] = irand(0, VOCAB - 1);
    for (i = 0; i < NA; i++)
        lens[i] = irand(1, SA);
    lens[0] = SA;
    memset(&a, 0, sizeof(a));
    a.m = embed_load(pm.dir, err, sizeof(err));
    a.ids = ids; a.lens = lens; a.batch = NA; a.seq = SA; a.H = 64; a.rounds = g_short ? 10 : 200;
    a.stop = &stop;
    b = a;
    b.m = embed_load(pm.dir, err, sizeof(err));
    b.ids = ids + NA * SA; b.lens = &lenb; b.batch = 1; b.seq = SB; b.rounds = 1 << 30;
    T_CHECK(a.m && b.m);
    if (a.m && b.m) {
        embed_set_threads(a.m, 2);
        embed_set_threads(b.m, 2);
        T_EQ_INT(embed_forward_ids(a.m, a.ids, a.lens, NA, SA, want), 0);
        a.want = want;
        T_CHECK(pthread_create(&tb, NULL, side_run, &b) == 0);
        T_CHECK(pthread_create(&ta, NULL, side_run, &a) == 0);
        pthread_join(ta, NULL);
        pthread_join(tb, NULL);
        printf("# two models at once: %d passes of A (%d with other bits), %d of B\n",
               a.passes, a.differ, b.passes);
        T_EQ_INT(a.fail + b.fail, 0);
        T_EQ_INT(a.differ, 0);
    }
    embed_free(a.m);
    embed_free(b.m);
    pm_free(&pm);
}

/* A pass of more token rows than an int holds (the kernels' row count)
 * is refused by its shape, before lens or ids are read. */
static void test_row_limit(void)
{
    struct pmodel pm;
    struct embed_model *m;
    char err[256];
    int32_t ids[16] = { 0 };
    int lens[1] = { 16 };
    float out[32];

    T_CHECK(pm_make(&pm, 32, 1, 40, 1, 16, P_ACT_GELU, 0) == 0);
    m = embed_load(pm.dir, err, sizeof(err));
    T_CHECK(m != NULL);
    if (m) {
        T_EQ_INT(embed_forward_ids(m, ids, lens, 1 << 28, 16, out), -1);
        T_CHECK(strstr(embed_errmsg(m), "bad batch shape") != NULL);
        T_EQ_INT(embed_forward_ids(m, ids, lens, 1, 16, out), 0);
    }
    embed_free(m);
    pm_free(&pm);
}

/* Bytes of address space in use (VmSize), or 0. */
static size_t vm_size(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    size_t kb = 0;

    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "VmSize: %zu kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb * 1024;
}

/*
 * The child of test_pack_fails, a fresh process (so its heap holds no
 * free blocks big enough to serve the packed copies without new address
 * space), with CAIRN_BLAS=none: loads the model in dir, caps its address
 * space so one layer's packed copies fit and two do not, and runs two
 * passes of the ids in dir/ids.bin into dir/out.bin. Exit status: 0, or
 * which step failed.
 */
enum { PF_H = 128, PF_I = 2048, PF_S = 20, PF_N = 3 };
static const int pf_lens[PF_N] = { PF_S, 7, 1 };

static int pack_fails_child(const char *dir)
{
    char err[256], path[128];
    struct embed_model *m = embed_load(dir, err, sizeof(err));
    int32_t ids[PF_N * PF_S];
    float out[PF_N * PF_H];
    struct rlimit rl;
    void *big;
    FILE *f;
    int r;

    snprintf(path, sizeof(path), "%s/ids.bin", dir);
    f = fopen(path, "rb");
    if (!m || !f || fread(ids, sizeof(ids), 1, f) != 1)
        return 1;
    fclose(f);
    /* big blocks from mmap, which the cap limits */
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    rl.rlim_cur = vm_size() + 3 * 1024 * 1024;   /* one layer's copies: 2.4 MB */
    rl.rlim_max = RLIM_INFINITY;
    if (setrlimit(RLIMIT_AS, &rl) != 0)
        return 2;
    big = malloc(5 * 1024 * 1024);
    free(big);
    if (big)
        return 3;                                /* the cap must bite */
    for (r = 0; r < 2; r++)
        if (embed_forward_ids(m, ids, pf_lens, PF_N, PF_S, out) != 0)
            return 4;
    embed_free(m);
    return write_file(dir, "out.bin", out, sizeof(out)) == 0 ? 0 : 5;
}

/*
 * Packing runs out of memory half-way: the packed copies made so far are
 * given back, and the pass that packs, and the one after it, run on the
 * weights in place with the reference's vectors. Skipped under the
 * sanitizers and valgrind, which need address space of their own.
 */
static void test_pack_fails(void)
{
    struct pmodel pm;
    int32_t ids[PF_N * PF_S];
    float ref[PF_N * PF_H], out[PF_N * PF_H];
    const char *pre = getenv("LD_PRELOAD");
    char path[128];
    int i, st = -1, worst_ok = 1;
    pid_t pid;
    FILE *f;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return;
#endif
    if (pre && strstr(pre, "vgpreload"))
        return;
    T_CHECK(pm_make(&pm, PF_H, 2, PF_I, 2, 64, P_ACT_GELU, 0) == 0);
    for (i = 0; i < PF_N * PF_S; i++)
        ids[i] = irand(0, VOCAB - 1);
    for (i = 0; i < PF_N; i++)
        ref_forward(&pm, ids + i * PF_S, pf_lens[i], ref + i * PF_H);
    T_EQ_INT(write_file(pm.dir, "ids.bin", ids, sizeof(ids)), 0);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        setenv("CAIRN_BLAS", "none", 1);
        setenv("CAIRN_PROP_PACK_FAILS", pm.dir, 1);
        execl("/proc/self/exe", "test_embed_prop", (char *)NULL);
        _exit(99);
    }
    if (pid > 0)
        waitpid(pid, &st, 0);
    T_EQ_INT(pid > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
    snprintf(path, sizeof(path), "%s/out.bin", pm.dir);
    f = fopen(path, "rb");
    T_CHECK(f && fread(out, sizeof(out), 1, f) == 1);
    for (i = 0; f && i < PF_N; i++)
        worst_ok &= t_cosine(out + i * PF_H, ref + i * PF_H, PF_H) >= 0.99999;
    T_CHECK(f && worst_ok);
    if (f)
        fclose(f);
    unlink(path);
    snprintf(path, sizeof(path), "%s/ids.bin", pm.dir);
    unlink(path);
    pm_free(&pm);
}


static void test_kernels(void)
{
    int level;

    for (level = 2; level >= 1; level--) {
        embed_k_simd_enable(level);
        if (embed_k_simd() != level)
            continue;
        prop_attention_head(level, g_short ? 3 : 12 * g_rounds);
        prop_gemm(level, g_short ? 4 : 20 * g_rounds);
    }
    embed_k_simd_enable(2);
}

static void test_models(void)
{
    size_t i;
    int r;

    if (g_short) {
        for (i = 0; i < sizeof(fixed_short) / sizeof(fixed_short[0]); i++)
            run_shape(&fixed_short[i]);
        return;
    }
    for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        run_shape(&fixed[i]);
    for (r = 0; r < g_rounds; r++) {
        struct pshape s;

        random_shape(&s);
        run_shape(&s);
    }
}

/* Runs the tests with OpenBLAS as found, then in a child process with
 * CAIRN_BLAS=none (read at the first kernel call, so it must be set in a
 * process that has not made one), whose counts it adds. */
int main(void)
{
    const char *env;
    unsigned long long seed0;
    int fd[2], child = 0;
    pid_t pid;

    if ((env = getenv("CAIRN_PROP_PACK_FAILS")))
        return pack_fails_child(env);
    env = getenv("CAIRN_PROP_ROUNDS");
    if (env && atoi(env) > 0)
        g_rounds = atoi(env);
    env = getenv("LD_PRELOAD");
    g_short = (env && strstr(env, "vgpreload")) ||
              ((env = getenv("CAIRN_PROP_SHORT")) && atoi(env) > 0);
    if ((env = getenv("CAIRN_PROP_SEED")))
        rng ^= strtoull(env, NULL, 0) * 0xBF58476D1CE4E5B9ull;
    seed0 = rng;
    setvbuf(stdout, NULL, _IOLBF, 0);   /* whole lines from both processes */
    if (!getenv("CAIRN_BLAS") && pipe(fd) == 0) {
        pid = fork();
        if (pid == 0) {
            close(fd[0]);
            setenv("CAIRN_BLAS", "none", 1);
            child = 1;
        } else if (pid > 0) {
            close(fd[1]);
        } else {
            close(fd[0]);
            close(fd[1]);
        }
    } else {
        pid = -1;
    }
    printf("# %s: SIMD level %d, %s\n", child ? "CAIRN_BLAS=none" : "OpenBLAS as found",
           embed_k_simd(), g_short ? "short run" : "full run");
    if (!g_short && g_rounds > 1)
        printf("# %d random rounds\n", g_rounds);
    T_RUN(test_kernels);
    rng = seed0;
    T_RUN(test_models);
    if (!child) {
        T_RUN(test_two_models);
        T_RUN(test_row_limit);
        T_RUN(test_pack_fails);
    }
    if (child) {
        int c[2] = { t_passed, t_failed };

        fflush(stdout);
        _exit(write(fd[1], c, sizeof(c)) == (ssize_t)sizeof(c) && !t_failed ? 0 : 1);
    }
    if (pid > 0) {
        int c[2] = { 0, 1 }, st = 0;

        if (read(fd[0], c, sizeof(c)) != (ssize_t)sizeof(c))
            c[1] = 1;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st))
            c[1]++;
        t_passed += c[0];
        t_failed += c[1];
        T_CHECK(WIFEXITED(st));
    }
    return T_DONE();
}
