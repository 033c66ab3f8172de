/*
 * test_policy.c: the ranking policy's identity (src/recall/policy.c).
 *
 *  - every constant #defined in policy.h is in the table, once, with the
 *    value the header gives it, so no tuned constant escapes the hash;
 *  - the hash is FNV-1a over "name=value;", printed as 16 hex digits;
 *  - changing any one value, or any one name, changes the hash;
 *  - each known model's policy (its registry entry) is in the table, and
 *    policy_model finds it from a vector model id; a model the registry
 *    does not know is English-only with no cosine gate, and the gate
 *    opens by cosine only at a model's measured threshold.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "t.h"
#include "cairn.h"
#include "recall/policy.h"
#include "embed/registry.h"

static const struct policy_const *find(const struct policy_const *t, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(t[i].name, name))
            return &t[i];
    return NULL;
}

/* Every "#define NAME value" of policy.h, but its guard and the X list. */
static void test_table_covers_header(void)
{
    char path[4096], line[512];
    const char *root = getenv("CAIRN_TEST_ROOT");
    size_t n, seen = 0;
    const struct policy_const *t = policy_table(&n);
    snprintf(path, sizeof path, "%s/src/recall/policy.h", root ? root : ".");
    FILE *f = fopen(path, "r");
    T_CHECK(f != NULL);
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char name[128];
        double v;
        if (sscanf(line, "#define %127s %lf", name, &v) != 2)
            continue;
        const struct policy_const *c = find(t, n, name);
        if (!c)
            fprintf(stderr, "policy.h: %s is not in CAIRN_POLICY\n", name);
        T_CHECK(c != NULL);
        if (c)
            T_CHECK(c->value == v);
        seen++;
    }
    fclose(f);
    /* the table has these plus VEC_DEFAULT_PIECES (store/vectors.h) and
     * NOTE_SPLIT_TOK (text/markdown.h), then two rows a known model */
    T_EQ_INT(n, seen + 2 + 2 * embed_reg_count());
    T_CHECK(find(t, n, "VEC_DEFAULT_PIECES") != NULL);
    T_CHECK(find(t, n, "NOTE_SPLIT_TOK") != NULL);
    T_CHECK(find(t, n, "W_DENSE_REPLY") != NULL && find(t, n, "PACK_CAP_TURN") != NULL);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            T_CHECK(strcmp(t[i].name, t[j].name) != 0);
}

static void test_hash(void)
{
    size_t n;
    const struct policy_const *t = policy_table(&n);
    char want[32];
    /* FNV-1a of the empty input is the offset basis; of "a=1;" known */
    T_CHECK(policy_hash(t, 0) == 0xcbf29ce484222325ULL);
    struct policy_const one = { "a", 1 };
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const char *s = "a=1;"; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    T_CHECK(policy_hash(&one, 1) == h);
    snprintf(want, sizeof want, "%016llx", (unsigned long long)policy_hash(t, n));
    T_EQ_STR(cairn_policy_hash(), want);
    T_EQ_INT(strlen(cairn_policy_hash()), 16);
}

static void test_any_change_moves_it(void)
{
    size_t n;
    const struct policy_const *t = policy_table(&n);
    struct policy_const *c = malloc(n * sizeof *c);
    uint64_t base = policy_hash(t, n);
    T_CHECK(c != NULL);
    if (!c)
        return;
    for (size_t i = 0; i < n; i++) {
        memcpy(c, t, n * sizeof *c);
        c[i].value = t[i].value + (t[i].value ? t[i].value * 1e-9 : 1e-9);
        T_CHECK(policy_hash(c, n) != base);
        memcpy(c, t, n * sizeof *c);
        c[i].name = "RENAMED";
        T_CHECK(policy_hash(c, n) != base);
    }
    free(c);
}

static void test_models(void)
{
    size_t n;
    char name[128];
    const struct policy_const *t = policy_table(&n);
    struct model_policy p;
    for (size_t i = 0; i < embed_reg_count(); i++) {
        const struct embed_reg_model *m = embed_reg_get(i);
        snprintf(name, sizeof name, "model:%s:cjk", m->name);
        const struct policy_const *c = find(t, n, name);
        T_CHECK(c && c->value == m->cjk);
        snprintf(name, sizeof name, "model:%s:gate_cosine", m->name);
        c = find(t, n, name);
        T_CHECK(c && c->value == m->gate_cosine);
        /* found from an id as store/vectors.c makes it */
        snprintf(name, sizeof name, "%s:0123456789abcdef", m->name);
        policy_model(name, &p);
        T_CHECK(p.known && p.cjk == m->cjk && p.gate_cosine == m->gate_cosine);
    }
    /* what was measured: use-lite-en (English) at 0.7; the multilingual
     * default covers CJK and its cosine scale was not measured */
    policy_model("use-lite-en:00000000deadbeef", &p);
    T_CHECK(p.known && !p.cjk && p.gate_cosine == 0.7);
    policy_model("multilingual-e5-small:1", &p);
    T_CHECK(p.known && p.cjk && p.gate_cosine == 0);
    /* a folder of the user's: English-only, cosine opens nothing */
    policy_model("my-model:1234", &p);
    T_CHECK(!p.known && !p.cjk && p.gate_cosine == 0);
    policy_model(NULL, &p);
    T_CHECK(!p.known && p.gate_cosine == 0);
    policy_model("multilingual-e5-small", &p);   /* no hash: the name alone */
    T_CHECK(p.known && p.cjk);

    /* the gate: a cosine opens it only at a measured threshold */
    struct cairn_recall r;
    struct cairn_recall_item it;
    const char *why = NULL;
    memset(&r, 0, sizeof r);
    memset(&it, 0, sizeof it);
    r.items = &it;               /* one message item: matched by neither words nor time */
    r.n_items = 1;
    r.cosine = 0.95;
    r.cosine_z = GATE_COS_Z;     /* well ahead of the question's other hits */
    r.gate_cosine = 0;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
    r.gate_cosine = 0.7;
    T_EQ_INT(cairn_inject_gate(&r, &why), 1);
    T_CHECK(why && strstr(why, "cosine") != NULL);
    r.cosine = 0.69;
    T_EQ_INT(cairn_inject_gate(&r, &why), 0);
}

int main(void)
{
    T_RUN(test_table_covers_header);
    T_RUN(test_hash);
    T_RUN(test_any_change_moves_it);
    T_RUN(test_models);
    return T_DONE();
}
