/*
 * test_embed_blas_none.c: the encoder without OpenBLAS. With CAIRN_BLAS=
 * none set before the first kernel call, the matrix products take the
 * scalar fallback (kernels.c k_sgemm_scalar); this checks that the switch
 * happened and is reported (embed_k_blas, embed_k_note), that the fast
 * kernels still match their references on odd shapes (k not a multiple of
 * the 8-way unroll, ldw > n, garbage in y when there is no bias, since
 * beta 0 must not read it), and that the whole tiny BERT still gives the
 * float64 PyTorch vectors of tests/data/embed/tiny-bert/golden.json.
 * Run from the repository root.
 */
#include "t.h"
#include "embed/embed.h"
#include "embed/kernels.h"

#include <cJSON.h>
#include <math.h>
#include <stdlib.h>

#define TINY_DIR "tests/data/embed/tiny-bert"

static unsigned long long rng_state = 0x2545F4914F6CDD1Dull;

static float frand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static float *rand_array(size_t n, float scale)
{
    float *a = malloc(n * sizeof(float));
    size_t i;

    for (i = 0; a && i < n; i++)
        a[i] = frand() * scale;
    return a;
}

static float max_abs_diff(const float *a, const float *b, size_t n)
{
    float m = 0.0f;
    size_t i;

    for (i = 0; i < n; i++) {
        float d = fabsf(a[i] - b[i]);
        if (!(d <= m))
            m = d;   /* also catches NaN */
    }
    return m;
}

static void test_switch(void)
{
    embed_k_set_threads(2);                /* a no-op on the fallback */
    T_EQ_INT(embed_k_blas(), 0);
    T_CHECK(strstr(embed_k_note(), "CAIRN_BLAS=none") != NULL);
    T_CHECK(strstr(embed_k_note(), "scalar") != NULL);
}

static void test_linear(void)
{
    int shapes[][3] = { {1, 1, 1}, {3, 5, 7}, {4, 9, 8}, {20, 96, 64}, {33, 17, 129} };
    size_t s;

    for (s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
        int m = shapes[s][0], n = shapes[s][1], k = shapes[s][2], ldw = n + 3, nb;
        float *x = rand_array((size_t)m * k, 1.0f);
        float *w = rand_array((size_t)n * k, 0.5f);
        float *wk = rand_array((size_t)k * ldw, 0.5f);
        float *b = rand_array((size_t)n, 1.0f);
        float *y1 = malloc((size_t)m * n * sizeof(float));
        float *y2 = malloc((size_t)m * n * sizeof(float));
        size_t i;

        for (nb = 0; nb < 2; nb++) {
            const float *bias = nb ? NULL : b;
            /* NaN in y: with no bias (beta 0) it must not leak through. */
            for (i = 0; i < (size_t)m * n; i++)
                y1[i] = NAN;
            embed_k_linear(x, w, bias, y1, m, n, k);
            embed_k_linear_ref(x, w, bias, y2, m, n, k);
            T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < 1e-4f);
            for (i = 0; i < (size_t)m * n; i++)
                y1[i] = NAN;
            embed_k_linear_kn(x, wk, ldw, bias, y1, m, n, k);
            embed_k_linear_kn_ref(x, wk, ldw, bias, y2, m, n, k);
            T_CHECK(max_abs_diff(y1, y2, (size_t)m * n) < 1e-4f);
        }
        free(x); free(w); free(wk); free(b); free(y1); free(y2);
    }
    /* A hand value: [1 2 3] . [4 5 6] + 0.5 = 32.5. */
    {
        float x[3] = {1, 2, 3}, w[3] = {4, 5, 6}, b[1] = {0.5f}, y[1] = {0};
        embed_k_linear(x, w, b, y, 1, 1, 3);
        T_CHECK(fabsf(y[0] - 32.5f) < 1e-6f);
    }
}

static void test_attention(void)
{
    int batch = 3, seq = 13, heads = 4, hd = 12, hidden = heads * hd;
    int lens[3] = {13, 5, 1};
    size_t n = (size_t)batch * seq * hidden;
    float *q = rand_array(n, 1.0f), *k = rand_array(n, 1.0f), *v = rand_array(n, 1.0f);
    float *c1 = calloc(n, sizeof(float)), *c2 = calloc(n, sizeof(float));
    float *scratch = calloc((size_t)seq * seq, sizeof(float));

    embed_k_attention(q, k, v, c1, lens, batch, seq, heads, hd, scratch);
    embed_k_attention_ref(q, k, v, c2, lens, batch, seq, heads, hd);
    T_CHECK(max_abs_diff(c1, c2, n) < 1e-4f);
    free(q); free(k); free(v); free(c1); free(c2); free(scratch);
}

static char *read_all(const char *path)
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
        } else {
            free(p);
            p = NULL;
        }
    }
    fclose(f);
    return p;
}

/* Every golden case encoded one at a time and all in one batch: the
 * smallest cosine to PyTorch's float64 mean-pooled vector. */
static void test_golden(void)
{
    char err[256] = "", *text = read_all(TINY_DIR "/golden.json");
    cJSON *root = text ? cJSON_Parse(text) : NULL, *c;
    struct embed_model *m = embed_load(TINY_DIR, err, sizeof(err));
    const char *texts[64];
    float want[64][64], got[64][64], one[64];
    double worst = 1.0;
    int n = 0, i, d;

    free(text);
    T_CHECK(root != NULL);
    T_CHECK(m != NULL);
    if (!root || !m) {
        fprintf(stderr, "  %s\n", err);
        goto out;
    }
    T_EQ_INT(embed_dim(m), 64);
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(root, "cases")) {
        cJSON *e;
        if (n >= 64)
            break;
        texts[n] = cJSON_GetObjectItem(c, "text")->valuestring;
        d = 0;
        cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "mean"))
            if (d < 64)
                want[n][d++] = (float)e->valuedouble;
        n++;
    }
    T_CHECK(n >= 5);
    T_EQ_INT(embed_encode(m, texts, (size_t)n, 0, &got[0][0]), 0);
    for (i = 0; i < n; i++) {
        double ab = 0, aa = 0, bb = 0, cs, md = 0;
        T_EQ_INT(embed_encode(m, &texts[i], 1, 0, one), 0);
        for (d = 0; d < 64; d++) {
            ab += (double)got[i][d] * want[i][d];
            aa += (double)got[i][d] * got[i][d];
            bb += (double)want[i][d] * want[i][d];
            md = fmax(md, fabs(one[d] - got[i][d]));
        }
        cs = aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
        if (cs < worst)
            worst = cs;
        T_CHECK(md < 1e-5);                     /* batched == single */
    }
    printf("# tiny-bert on the scalar fallback: %d cases, worst cosine %.8f\n", n, worst);
    T_CHECK(worst >= 0.9999);
out:
    embed_free(m);
    cJSON_Delete(root);
}

int main(void)
{
    /* Before any kernel runs: the choice is made once, at first use. */
    setenv("CAIRN_BLAS", "none", 1);
    T_RUN(test_switch);
    T_RUN(test_linear);
    T_RUN(test_attention);
    T_RUN(test_golden);
    return T_DONE();
}
