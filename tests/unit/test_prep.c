/*
 * test_prep.c: a question prepared before its store is open
 * (cairn_prep_start, recall/prep.c; issue 16, hyb55a), with the real
 * use-lite-en model (skipped, saying so, when it is not installed):
 *
 *  - a prep of the model the handle resolves is taken by the recall of its
 *    question, whose thread then scores the store's cache file, and the
 *    recall is the plain one byte for byte (text, items, cosine, status);
 *    the question encoded by the prep's thread itself, not the process's
 *    cache of the last question;
 *  - one of another model folder (the same model through a symlink), other
 *    encoder threads, another question, a keyword recall: not taken (or
 *    passed by), the same recall as without it;
 *  - a store with no vector: taken, stopped, the same recall;
 *  - freed unused at once, while its thread loads or encodes; freed after
 *    use; used once only; no model, a missing model, "none": no thread;
 *  - bad arguments refused, *out NULL.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "util/buf.h"
#include "internal.h"
#include "recall/recall.h"
#include "t_open.h"
#include "t_vec.h"
#include "embed/registry.h"

static char dir[256], store[300], cache[320], link_dir[300];
static char models[4096];

static const char *const qs[] = {
    "which animal do I own?", "motorbike engine repair", "a happy puppy in the park",
    "where am I flying tomorrow?",
};

/* A read-only handle with the model settings the prep is given. */
static struct cairn *reader(const char *path)
{
    struct cairn *h = NULL;
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &h), CAIRN_OK);
    T_EQ_INT(cairn_set(h, "embed.model_dir", models), CAIRN_OK);
    return h;
}

static struct cairn_recall *ask(struct cairn *h, const char *q, int method, struct cairn_prep *p)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = 200;
    o.method = method;
    o.flags = CAIRN_RECALL_MATCHED_ONLY | CAIRN_RECALL_FAST;  /* as the prompt hook */
    o.prep = p;
    T_EQ_INT(cairn_recall(h, q, &o, &r), CAIRN_OK);
    return r;
}

/* Two recalls the same: text, items, status and the best cosine's bits. */
static int same(const struct cairn_recall *a, const struct cairn_recall *b)
{
    if (!a || !b || strcmp(a->text, b->text) || a->n_items != b->n_items ||
        a->dense != b->dense || memcmp(&a->cosine, &b->cosine, sizeof a->cosine))
        return 0;
    for (size_t i = 0; i < a->n_items; i++)
        if (strcmp(a->items[i].session, b->items[i].session) ||
            strcmp(a->items[i].message, b->items[i].message))
            return 0;
    return 1;
}

static struct cairn_prep *prep(const char *q, const char *model, const char *mdir,
                               const char *threads)
{
    struct cairn_prep_opts po = CAIRN_PREP_OPTS_INIT;
    struct cairn_prep *p = NULL;
    po.model = model;
    po.model_dir = mdir;
    po.threads = threads;
    T_EQ_INT(cairn_prep_start(q, &po, &p), CAIRN_OK);
    T_CHECK(p != NULL);
    return p;
}

static void make_store(void)
{
    struct cairn *h = NULL;
    T_EQ_INT(t_open(store, 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_set(h, "embed.model_dir", models), CAIRN_OK);
    const char *json[] = {
        "{\"id\":\"pets\",\"messages\":["
        "{\"role\":\"user\",\"content\":\"My dog Rex loves chasing the ball in the park.\"},"
        "{\"role\":\"assistant\",\"content\":\"That sounds like a happy puppy!\"}]}",
        "{\"id\":\"bike\",\"messages\":["
        "{\"role\":\"user\",\"content\":\"I repaired the carburetor of my motorbike today.\"},"
        "{\"role\":\"assistant\",\"content\":\"Engines can be tricky.\"}]}",
        "{\"id\":\"trip\",\"messages\":["
        "{\"role\":\"user\",\"content\":\"Tomorrow I fly to Lisbon for a conference.\"},"
        "{\"role\":\"assistant\",\"content\":\"Enjoy the pastries by the river.\"}]}",
    };
    for (size_t i = 0; i < sizeof json / sizeof *json; i++)
        T_EQ_INT(cairn_add_json(h, json[i], strlen(json[i]), NULL), CAIRN_OK);
    /* A cache file is written for 8,192 vectors and more: 400 more
     * messages, and 21 random pieces of the model's for every message
     * (which the real pieces must beat), then dated back: a reader writes
     * the file only for vectors that stood still. */
    T_EQ_INT(cairn_embed_at_ingest(h, 0), CAIRN_OK);
    struct buf b = BUF_INIT;
    buf_adds(&b, "{\"id\":\"filler\",\"messages\":[");
    for (int i = 0; i < 400; i++)
        buf_printf(&b, "%s{\"role\":\"%s\",\"content\":\"Filler line %d about nothing much.\"}",
                   i ? "," : "", i % 2 ? "assistant" : "user", i);
    buf_adds(&b, "]}");
    T_CHECK(!b.err);
    T_EQ_INT(cairn_add_json(h, b.p, b.n, NULL), CAIRN_OK);
    buf_release(&b);
    char model[VEC_MODEL_ID_MAX] = "";
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(h->db, "SELECT model FROM vectors LIMIT 1", -1, &st, NULL),
             SQLITE_OK);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(model, sizeof model, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    T_CHECK(!strncmp(model, "use-lite-en:", 12));
    t_put_vectors(h, model, 512, 1, 21);
    cairn_close(h);
    h = reader(store);
    cairn_recall_free(ask(h, qs[0], CAIRN_METHOD_DEFAULT, NULL));
    cairn_close(h);
    struct stat cs;
    T_CHECK(stat(cache, &cs) == 0);     /* the prep's thread scans this file */
}

static void test_used(void)
{
    enum { N = sizeof qs / sizeof *qs };
    struct cairn_recall *plain[N];
    for (int k = 0; k < N; k++) {
        struct cairn *h = reader(store);
        plain[k] = ask(h, qs[k], CAIRN_METHOD_DEFAULT, NULL);
        T_CHECK(plain[k] && plain[k]->dense == CAIRN_DENSE_ON);
        cairn_close(h);
    }
    /* each prep encodes its question anew: the process's last question
     * is the one before */
    for (int k = 0; k < N; k++) {
        struct cairn_prep *p = prep(qs[k], "use-lite-en", models, NULL);
        struct cairn *h = reader(store);        /* opened after the prep started */
        struct cairn_recall *r = ask(h, qs[k], CAIRN_METHOD_DEFAULT, p);
        T_EQ_INT(prep_taken(p), 2);
        T_CHECK(same(plain[k], r));
        cairn_recall_free(r);
        /* served once: a second recall does without it, the same */
        r = ask(h, qs[k], CAIRN_METHOD_DEFAULT, p);
        T_CHECK(same(plain[k], r));
        cairn_recall_free(r);
        cairn_close(h);
        cairn_prep_free(p);                      /* after use */
    }
    for (int k = 0; k < N; k++)
        cairn_recall_free(plain[k]);
}

static void test_not_taken(void)
{
    struct cairn *h = reader(store);
    struct cairn_recall *plain = ask(h, qs[1], CAIRN_METHOD_DEFAULT, NULL);
    struct cairn_recall *kw = ask(h, qs[1], CAIRN_METHOD_KEYWORD, NULL);
    /* the same model through another folder name: another model to the
     * handle, its load and vector never used */
    struct cairn_prep *p = prep(qs[1], link_dir, NULL, NULL);
    struct cairn_recall *r = ask(h, qs[1], CAIRN_METHOD_DEFAULT, p);
    T_EQ_INT(prep_taken(p), 1);
    T_CHECK(same(plain, r));
    cairn_recall_free(r);
    cairn_prep_free(p);
    /* other encoder threads */
    p = prep(qs[1], "use-lite-en", models, "1");
    r = ask(h, qs[1], CAIRN_METHOD_DEFAULT, p);
    T_EQ_INT(prep_taken(p), 1);
    T_CHECK(same(plain, r));
    cairn_recall_free(r);
    cairn_prep_free(p);
    /* another question: not taken, then freed unused */
    p = prep(qs[2], "use-lite-en", models, NULL);
    r = ask(h, qs[1], CAIRN_METHOD_DEFAULT, p);
    T_EQ_INT(prep_taken(p), 0);
    T_CHECK(same(plain, r));
    cairn_recall_free(r);
    /* a keyword recall never looks at it */
    r = ask(h, qs[2], CAIRN_METHOD_KEYWORD, p);
    T_EQ_INT(prep_taken(p), 0);
    cairn_recall_free(r);
    r = ask(h, qs[1], CAIRN_METHOD_KEYWORD, p);
    T_CHECK(same(kw, r));
    cairn_recall_free(r);
    cairn_prep_free(p);
    cairn_recall_free(plain);
    cairn_recall_free(kw);
    cairn_close(h);
    /* a store with no vector: taken, its thread stopped at the gate */
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_set(h, "embed.model_dir", models), CAIRN_OK);
    const char *json = "{\"id\":\"x\",\"messages\":[{\"role\":\"user\",\"content\":"
                       "\"The motorbike engine needed a new carburetor.\"}]}";
    T_EQ_INT(cairn_embed_at_ingest(h, 0), CAIRN_OK);
    T_EQ_INT(cairn_add_json(h, json, strlen(json), NULL), CAIRN_OK);
    plain = ask(h, qs[1], CAIRN_METHOD_DEFAULT, NULL);
    p = prep(qs[1], "use-lite-en", models, NULL);
    r = ask(h, qs[1], CAIRN_METHOD_DEFAULT, p);
    T_EQ_INT(prep_taken(p), 2);
    T_CHECK(same(plain, r) && r->n_items == 1 && r->dense == CAIRN_DENSE_NONE);
    cairn_recall_free(r);
    cairn_recall_free(plain);
    cairn_prep_free(p);
    cairn_close(h);
}

static void test_free(void)
{
    /* at once, while the thread loads the model or encodes: stopped at its
     * gate, joined */
    for (int i = 0; i < 6; i++) {
        char q[80];
        snprintf(q, sizeof q, "what did I fix on day %d?", i);
        struct cairn_prep *p = prep(q, i % 2 ? link_dir : "use-lite-en", models, NULL);
        if (i >= 4)
            usleep(2000);
        cairn_prep_free(p);
    }
    cairn_prep_free(NULL);
    /* nothing to load: a prep with no thread, never taken */
    static const char *const none[] = { "none", "no-such-model", "/no/such/folder/" };
    struct cairn *h = reader(store);
    struct cairn_recall *plain = ask(h, qs[0], CAIRN_METHOD_DEFAULT, NULL);
    for (size_t i = 0; i < sizeof none / sizeof *none; i++) {
        struct cairn_prep *p = prep(qs[0], none[i], models, NULL);
        struct cairn_recall *r = ask(h, qs[0], CAIRN_METHOD_DEFAULT, p);
        T_EQ_INT(prep_taken(p), 0);
        T_CHECK(same(plain, r));
        cairn_recall_free(r);
        cairn_prep_free(p);
    }
    cairn_recall_free(plain);
    cairn_close(h);
}

static void test_bad(void)
{
    struct cairn_prep *p = (struct cairn_prep *)&p;
    struct cairn_prep_opts po = CAIRN_PREP_OPTS_INIT;
    T_EQ_INT(cairn_prep_start(NULL, &po, &p), CAIRN_INVALID);
    T_CHECK(p == NULL);
    memset(&po, 0, sizeof po);                   /* zeroed, not from the macro */
    T_EQ_INT(cairn_prep_start("q", &po, &p), CAIRN_INVALID);
    po.size = sizeof po + 8;                     /* a newer header's */
    T_EQ_INT(cairn_prep_start("q", &po, &p), CAIRN_INVALID);
    T_CHECK(p == NULL);
    size_t n = RECALL_MAX_QUERY + 1;
    char *big = malloc(n + 1);
    T_CHECK(big != NULL);
    if (big) {
        memset(big, 'a', n);
        big[n] = '\0';
        T_EQ_INT(cairn_prep_start(big, NULL, &p), CAIRN_TOOBIG);
        T_CHECK(p == NULL);
        free(big);
    }
    /* NULL opts: the defaults (the models folder under HOME) */
    T_EQ_INT(cairn_prep_start("q", NULL, &p), CAIRN_OK);
    T_CHECK(p != NULL);
    cairn_prep_free(p);
}

int main(void)
{
    const struct embed_reg_model *rm = embed_reg_find("use-lite-en");
    const char *md = getenv("CAIRN_TEST_MODEL_DIR");
    if (!md || !*md)
        md = getenv("CAIRN_MODEL_DIR");
    if (embed_reg_models_dir(md, models, sizeof models) != 0)
        models[0] = '\0';
    T_RUN(test_bad);
    if (!rm || !embed_reg_installed(models, rm)) {
        T_SKIP("use-lite-en not installed (cairn model pull use-lite-en; scripts/test.sh fetches it into build/models)");
        return T_DONE();
    }
    if (t_vec_dir("cairn-prep", dir, sizeof dir, store, sizeof store))
        return 1;
    snprintf(cache, sizeof cache, "%s-vec", store);
    snprintf(link_dir, sizeof link_dir, "%s/model-link", dir);
    char target[4200];
    snprintf(target, sizeof target, "%s/use-lite-en", models);
    T_EQ_INT(symlink(target, link_dir), 0);
    t_model = "use-lite-en";
    T_RUN(make_store);
    T_RUN(test_used);
    T_RUN(test_not_taken);
    T_RUN(test_free);
    unlink(link_dir);
    t_vec_rmdir("test_prep", dir, store);
    return T_DONE();
}
