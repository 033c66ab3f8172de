/*
 * test_models.c: the public model API (cairn.h, "Embedding models") that
 * `cairn model` and `cairn embed` use, and cairn_set, the handle settings
 * that replaced the library's own reads of CAIRN_* variables. Uses only
 * the header. No network: pulls that cannot start say why.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cairn.h"
#include "t.h"

static char dir[] = "/tmp/cairn-models-XXXXXX";
static char tiny[PATH_MAX];

static void test_list(void)
{
    struct cairn_models *r = NULL;
    struct cairn_model_info m;
    size_t defaults = 0, n;

    T_EQ_INT(cairn_models_open(dir, NULL, &r), CAIRN_OK);
    T_EQ_STR(cairn_models_dir(r), dir);
    n = cairn_models_count(r);
    T_CHECK(n >= 5);
    for (size_t i = 0; i < n; i++) {
        T_EQ_INT(cairn_models_get(r, i, &m), CAIRN_OK);
        T_CHECK(m.name && *m.name && m.dim > 0 && m.about);
        T_CHECK(!strcmp(m.source, "huggingface") || !strcmp(m.source, "npm"));
        T_EQ_INT(m.installed, 0);               /* an empty folder */
        defaults += m.is_default;
    }
    T_EQ_INT(defaults, 1);
    T_EQ_INT(cairn_models_get(r, n, &m), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_models_find(r, "multilingual-e5-small", &m), CAIRN_OK);
    T_EQ_INT(m.dim, 384);
    T_EQ_INT(cairn_models_find(r, "no-such-model", &m), CAIRN_NOTFOUND);
    T_CHECK(strstr(cairn_models_errmsg(r), "unknown model 'no-such-model'") != NULL);

    /* an installed model is a folder of its name */
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/use-lite-en", dir);
    T_EQ_INT(mkdir(p, 0700), 0);
    T_EQ_INT(cairn_models_find(r, "use-lite-en", &m), CAIRN_OK);
    T_EQ_INT(m.installed, 1);
    T_EQ_INT(cairn_model_remove(r, "use-lite-en"), CAIRN_OK);
    T_CHECK(access(p, F_OK) != 0);
    T_EQ_INT(cairn_model_remove(r, "use-lite-en"), CAIRN_NOTFOUND);
    T_CHECK(strstr(cairn_models_errmsg(r), "not installed") != NULL);
    T_EQ_INT(cairn_model_verify(r, "use-lite-en"), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_model_remove(r, "no-such-model"), CAIRN_NOTFOUND);
    cairn_models_close(r);
    cairn_models_close(NULL);
}

static void test_pull_needs_endpoint(void)
{
    struct cairn_models *r = NULL;
    T_EQ_INT(cairn_models_open(dir, NULL, &r), CAIRN_OK);
    /* the default is a Hugging Face model: no endpoint was given */
    T_EQ_INT(cairn_model_pull(r, NULL, NULL, NULL, NULL), CAIRN_INVALID);
    T_CHECK(strstr(cairn_models_errmsg(r), "no Hugging Face endpoint") != NULL);
    T_EQ_INT(cairn_model_pull(r, "no-such-model", NULL, NULL, NULL), CAIRN_NOTFOUND);
    cairn_models_close(r);
}

static void test_resolve_load_encode(void)
{
    struct cairn_models *r = NULL;
    struct cairn_model *m = NULL;
    char out[PATH_MAX];

    T_EQ_INT(cairn_models_open(dir, NULL, &r), CAIRN_OK);
    /* nothing installed */
    T_EQ_INT(cairn_model_resolve(r, NULL, out, sizeof out), CAIRN_NOTFOUND);
    T_CHECK(strstr(cairn_models_errmsg(r), "no embedding model installed") != NULL);
    T_EQ_INT(cairn_model_resolve(r, "use-lite-en", out, sizeof out), CAIRN_NOTFOUND);
    T_CHECK(strstr(cairn_models_errmsg(r), "not installed") != NULL);
    T_EQ_INT(cairn_model_load(r, "/nonexistent/model", &m), CAIRN_NOTFOUND);
    T_CHECK(m == NULL);
    /* a folder */
    T_EQ_INT(cairn_model_resolve(r, tiny, out, sizeof out), CAIRN_OK);
    T_EQ_STR(out, tiny);
    T_EQ_INT(cairn_model_load(r, tiny, &m), CAIRN_OK);
    cairn_models_close(r);                      /* the model outlives the list */
    if (!m)
        return;
    int dim = cairn_model_dim(m);
    T_CHECK(dim > 0);
    float *v = calloc((size_t)dim, sizeof *v), *q = calloc((size_t)dim, sizeof *q);
    T_CHECK(v && q);
    if (v && q) {
        T_EQ_INT(cairn_model_encode(m, "the quick brown fox", 0, v), CAIRN_OK);
        T_EQ_INT(cairn_model_encode(m, "the quick brown fox", 1, q), CAIRN_OK);
        double norm = 0;
        for (int i = 0; i < dim; i++)
            norm += (double)v[i] * v[i];
        T_CHECK(fabs(norm - 1) < 1e-3);
        T_EQ_STR(cairn_model_errmsg(m), "");
    }
    free(v);
    free(q);
    cairn_model_free(m);
    cairn_model_free(NULL);
}

/* A folder that is not a model: load fails with the reason, on r. */
static void test_load_bad_folder(void)
{
    struct cairn_models *r = NULL;
    struct cairn_model *m = NULL;
    T_EQ_INT(cairn_models_open(dir, NULL, &r), CAIRN_OK);
    T_EQ_INT(cairn_model_load(r, dir, &m), CAIRN_INVALID);
    T_CHECK(m == NULL);
    T_CHECK(strstr(cairn_models_errmsg(r), "cannot load the model in") != NULL);
    cairn_models_close(r);
}

static void test_set(void)
{
    struct cairn *db = NULL;
    T_EQ_INT(cairn_open(":memory:", 0, &db), CAIRN_OK);
    static const char *const keys[] = {
        "redact", "embed.model", "embed.model_dir", "embed.threads", "embed.max_pieces",
        "embed.sentences",
        "vec.f32", "vec.cache", "recall.exhaustive", "recall.prune_msgs", "recall.reply_lane",
        "store.cache_mb", "store.keep_turns", "pg.dense",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        T_EQ_INT(cairn_set(db, keys[i], "1"), CAIRN_OK);
        T_EQ_INT(cairn_set(db, keys[i], NULL), CAIRN_OK);
        T_EQ_INT(cairn_set(db, keys[i], ""), CAIRN_OK);
    }
    /* the page cache: 1 MB to STORE_CACHE_MB_MAX, a number */
    T_EQ_INT(cairn_set(db, "store.cache_mb", "0"), CAIRN_INVALID);
    T_EQ_INT(cairn_set(db, "store.cache_mb", "64x"), CAIRN_INVALID);
    T_EQ_INT(cairn_set(db, "store.cache_mb", "4097"), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "store.cache_mb is 1 to 4096") != NULL);
    T_EQ_INT(cairn_set(db, "store.cache_mb", "4096"), CAIRN_OK);
    T_EQ_INT(cairn_set(db, "CAIRN_REDACT", "0"), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "unknown setting 'CAIRN_REDACT'") != NULL);
    T_EQ_INT(cairn_set(db, NULL, "0"), CAIRN_INVALID);
    T_EQ_INT(cairn_set(NULL, "redact", "0"), CAIRN_INVALID);

    /* a setting takes effect: "redact" "0" stores a secret as given, and
     * the default masks it */
    const char *key = "AKIAIOSFODNN7EXAMPLE";
    char json[256];
    struct cairn_add_stats st;
    for (int on = 0; on < 2; on++) {
        memset(&st, 0, sizeof st);
        T_EQ_INT(cairn_set(db, "redact", on ? NULL : "0"), CAIRN_OK);
        snprintf(json, sizeof json, "{\"id\":\"s%d\",\"messages\":[{\"role\":\"user\","
                 "\"content\":\"my key is %s\"}]}", on, key);
        T_EQ_INT(cairn_add_json(db, json, strlen(json), &st), CAIRN_OK);
        T_EQ_INT(st.secrets_masked, on ? 1 : 0);
    }
    cairn_close(db);
}

int main(void)
{
    const char *root = getenv("CAIRN_TEST_ROOT");
    snprintf(tiny, sizeof tiny, "%s/tests/data/embed/tiny-bert", root ? root : ".");
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_list);
    T_RUN(test_pull_needs_endpoint);
    T_RUN(test_resolve_load_encode);
    T_RUN(test_load_bad_folder);
    T_RUN(test_set);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    return T_DONE();
}
