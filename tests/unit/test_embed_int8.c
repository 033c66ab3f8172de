/*
 * test_embed_int8.c: the encoder's int8 path (embed_int8, qgemm.c) on
 * whole models against the f32 path: cosine of each text's two vectors.
 *   - the tiny random BERT in tests/data/embed/tiny-bert, always: its
 *     golden texts, alone and batched, 1 and 2 threads (the same bits
 *     every way, as on f32), and switching back gives f32's bits;
 *   - every model of the registry that is installed (CAIRN_TEST_MODEL_DIR,
 *     else CAIRN_MODEL_DIR, else ~/.cairn/models; USE-lite and the BERTs):
 *     the golden texts and the dev sets' queries (../shared/data: LoCoMo
 *     and devmem), worst cosine >= 0.999 (issue 22's bar). A model that
 *     is not installed, or shared data that is not there, is a SKIP.
 * Run from the repository root.
 */
#include "t.h"
#include "embed/embed.h"
#include "embed/registry.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TINY_DIR "tests/data/embed/tiny-bert"
#define MAX_TEXTS 600

struct texts {
    char *t[MAX_TEXTS];
    int n;
};

static void add_text(struct texts *T, const char *s)
{
    if (s && T->n < MAX_TEXTS)
        T->t[T->n++] = strdup(s);
}

static void free_texts(struct texts *T)
{
    while (T->n > 0)
        free(T->t[--T->n]);
}

static void golden_texts(struct texts *T)
{
    char *js = t_read_file(TINY_DIR "/golden.json");
    cJSON *g = js ? cJSON_Parse(js) : NULL, *c, *e;

    c = cJSON_GetObjectItem(g, "cases");
    cJSON_ArrayForEach(e, c)
        add_text(T, cJSON_GetStringValue(cJSON_GetObjectItem(e, "text")));
    cJSON_Delete(g);
    free(js);
}

/* The shared data folder beside the repository, or NULL. */
static const char *shared_data(void)
{
    static const char *const cand[] = { "../shared/data", "../../shared/data",
                                        "../../../shared/data" };
    struct stat st;
    size_t i;

    for (i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
        if (stat(cand[i], &st) == 0 && S_ISDIR(st.st_mode))
            return cand[i];
    return NULL;
}

/* LoCoMo dev's questions (the first 400) and devmem dev's (all). */
static int dev_queries(struct texts *T)
{
    static const char *const stores[] = { "ac-project1", "auryn", "django-crm", "klima",
                                          "research-agent", "ros-agents", "storm-es",
                                          "web-crawler" };
    const char *root = shared_data();
    char path[512], *js, *line, *save = NULL;
    cJSON *d, *conv, *qa, *q;
    int before = T->n;
    size_t i;

    if (!root)
        return 0;
    snprintf(path, sizeof(path), "%s/locomo-dev/locomo10-dev.json", root);
    if ((js = t_read_file(path)) != NULL) {
        d = cJSON_Parse(js);
        cJSON_ArrayForEach(conv, d) {
            qa = cJSON_GetObjectItem(conv, "qa");
            cJSON_ArrayForEach(q, qa)
                if (T->n - before < 400)
                    add_text(T, cJSON_GetStringValue(cJSON_GetObjectItem(q, "question")));
        }
        cJSON_Delete(d);
        free(js);
    }
    for (i = 0; i < sizeof(stores) / sizeof(stores[0]); i++) {
        snprintf(path, sizeof(path), "%s/devmem-dev/%s/questions.jsonl", root, stores[i]);
        if (!(js = t_read_file(path)))
            continue;
        for (line = strtok_r(js, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            d = cJSON_Parse(line);
            add_text(T, cJSON_GetStringValue(cJSON_GetObjectItem(d, "query")));
            cJSON_Delete(d);
        }
        free(js);
    }
    return T->n - before;
}

/* Worst and mean cosine between the f32 and int8 vectors of the texts, as
 * queries (prefixes included), on model m. -2 if encoding failed. */
static double compare(struct embed_model *m, const struct texts *T, double *mean)
{
    int D = embed_dim(m), i;
    float *a = malloc((size_t)T->n * D * sizeof(float)), *b = malloc((size_t)T->n * D * sizeof(float));
    double worst = 2.0, sum = 0.0;

    embed_int8(m, 0);
    if (!a || !b || embed_encode(m, (const char *const *)T->t, (size_t)T->n, 1, a) != 0)
        goto fail;
    embed_int8(m, 1);
    if (!embed_int8_on(m) || embed_encode(m, (const char *const *)T->t, (size_t)T->n, 1, b) != 0)
        goto fail;
    for (i = 0; i < T->n; i++) {
        double c = t_cosine(a + (size_t)i * D, b + (size_t)i * D, D);

        sum += c;
        worst = c < worst ? c : worst;
    }
    *mean = sum / T->n;
    embed_int8(m, 0);
    free(a);
    free(b);
    return worst;
fail:
    embed_int8(m, 0);
    free(a);
    free(b);
    return -2.0;
}

/* A batch of many more token rows than the int8 FFN's row block (bert.c,
 * EMBED_FFN_ROWS: the golden texts 8 times over, padded to a 60-word
 * text, ~4,000 rows; a last block part full): each text's vector has the
 * bits it has alone (one[], the texts' vectors one at a time). */
static void test_tiny_long_batch(struct embed_model *m, const struct texts *T, const float *one)
{
    enum { REP = 8 };
    const char *t[REP * MAX_TEXTS / 8 + 1];
    char longtext[1024] = "";
    int D = embed_dim(m), n = T->n < MAX_TEXTS / 8 ? T->n : MAX_TEXTS / 8, i, same = 1;
    float *all = malloc((size_t)(REP * n + 1) * D * sizeof(float));
    float *lone = malloc((size_t)D * sizeof(float));

    for (i = 0; i < 60; i++)
        strcat(longtext, i % 3 ? "memory " : "recall ");
    for (i = 0; i < REP * n; i++)
        t[i] = T->t[i % n];
    t[REP * n] = longtext;
    T_CHECK(all && lone);
    if (!all || !lone)
        goto out;
    T_EQ_INT(embed_encode(m, t, (size_t)(REP * n + 1), 0, all), 0);
    for (i = 0; i < REP * n; i++)
        if (memcmp(all + (size_t)i * D, one + (size_t)(i % n) * D, (size_t)D * sizeof(float)))
            same = 0;
    T_EQ_INT(embed_encode(m, &t[REP * n], 1, 0, lone), 0);
    if (memcmp(all + (size_t)REP * n * D, lone, (size_t)D * sizeof(float)))
        same = 0;
    T_CHECK(same);
out:
    free(all);
    free(lone);
}

static void test_tiny(void)
{
    struct texts T = { { 0 }, 0 };
    char err[256];
    struct embed_model *m = embed_load(TINY_DIR, err, sizeof(err));
    float *f32 = NULL, *one = NULL, *all = NULL, *two = NULL, *back = NULL;
    double worst, mean = 0;
    int D, i, n;

    T_CHECK(m != NULL);
    golden_texts(&T);
    T_CHECK(T.n >= 5);
    if (!m || T.n < 1)
        goto out;
    D = embed_dim(m);
    n = T.n;
    f32 = malloc((size_t)n * D * sizeof(float));
    one = malloc((size_t)n * D * sizeof(float));
    all = malloc((size_t)n * D * sizeof(float));
    two = malloc((size_t)n * D * sizeof(float));
    back = malloc((size_t)n * D * sizeof(float));
    T_CHECK(!embed_int8_on(m));
    T_EQ_INT(embed_encode(m, (const char *const *)T.t, (size_t)n, 0, f32), 0);
    embed_int8(m, 1);
    T_CHECK(embed_int8_on(m));
    for (i = 0; i < n; i++)
        T_EQ_INT(embed_encode(m, (const char *const *)&T.t[i], 1, 0, one + (size_t)i * D), 0);
    T_EQ_INT(embed_packed_from(m), 1);   /* int8 packs at its first pass, a query's too */
    T_EQ_INT(embed_encode(m, (const char *const *)T.t, (size_t)n, 0, all), 0);
    embed_set_threads(m, 2);
    T_EQ_INT(embed_encode(m, (const char *const *)T.t, (size_t)n, 0, two), 0);
    for (i = 0; i < n; i++)
        T_EQ_INT(embed_encode(m, (const char *const *)&T.t[i], 1, 0, two + (size_t)i * D), 0);
    embed_set_threads(m, 1);
    /* the same bits alone, batched and on 2 threads */
    T_CHECK(memcmp(one, all, (size_t)n * D * sizeof(float)) == 0);
    T_CHECK(memcmp(one, two, (size_t)n * D * sizeof(float)) == 0);
    T_CHECK(memcmp(one, f32, (size_t)n * D * sizeof(float)) != 0);   /* it is int8 */
    test_tiny_long_batch(m, &T, one);
    embed_int8(m, 0);
    T_EQ_INT(embed_encode(m, (const char *const *)T.t, (size_t)n, 0, back), 0);
    T_CHECK(memcmp(back, f32, (size_t)n * D * sizeof(float)) == 0);
    worst = compare(m, &T, &mean);
    printf("# tiny-bert: int8 vs f32 over %d texts: worst cosine %.6f, mean %.6f\n", n, worst,
           mean);
    T_CHECK(worst >= 0.999);
out:
    free(f32); free(one); free(all); free(two); free(back);
    free_texts(&T);
    embed_free(m);
}

static void test_models(void)
{
    const char *env = getenv("CAIRN_TEST_MODEL_DIR");
    char models[4096], dir[4096], err[256];
    struct texts T = { { 0 }, 0 };
    int ndev, tried = 0;
    size_t i;

    if (!env || !*env)
        env = getenv("CAIRN_MODEL_DIR");
    if (embed_reg_models_dir(env, models, sizeof(models)) != 0) {
        T_SKIP("no models folder (CAIRN_TEST_MODEL_DIR, CAIRN_MODEL_DIR or HOME)");
        return;
    }
    golden_texts(&T);
    ndev = dev_queries(&T);
    if (ndev == 0)
        T_SKIP("dev-set queries: ../shared/data (locomo-dev, devmem-dev) not found; golden texts only");
    for (i = 0; i < embed_reg_count(); i++) {
        const struct embed_reg_model *rm = embed_reg_get(i);
        struct embed_model *m;
        double worst, mean = 0;

        if (!embed_reg_installed(models, rm) ||
            embed_reg_resolve(models, rm->name, dir, sizeof(dir), err, sizeof(err)) != 0) {
            T_SKIP("%s is not installed in %s", rm->name, models);
            continue;
        }
        if (!(m = embed_load(dir, err, sizeof(err)))) {
            fprintf(stderr, "%s: %s\n", rm->name, err);
            T_CHECK(!"an installed model loads");
            continue;
        }
        tried++;
        worst = compare(m, &T, &mean);
        printf("# %s: int8 vs f32 over %d texts (%d dev queries): worst cosine %.6f, mean %.6f\n",
               rm->name, T.n, ndev, worst, mean);
        /* issue 22's bar, on every model; USE-lite meets it with three
         * products kept f32 (use_pack: 0.99919 worst, mean 0.99976, over
         * these 497 texts; 0.99802 with all of them in int8) */
        T_CHECK(worst >= 0.999);
        embed_free(m);
    }
    free_texts(&T);
    (void)tried;
}

int main(void)
{
    /* The installed models are the user's: int8 would write its file of
     * quantised weights into their folders (.cairn-packed/q8.bin); a test
     * leaves them as it found them. The file's own tests are in
     * test_embed_use (test_q8_file), on a copy. */
    setenv("CAIRN_PACK_CACHE", "0", 1);
    T_RUN(test_tiny);
    T_RUN(test_models);
    return T_DONE();
}
