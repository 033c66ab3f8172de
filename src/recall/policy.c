/*
 * policy.c: the ranking policy's identity. Every tuned constant of
 * policy.h, by name and value, and each known model's policy (its
 * registry entry: embed/registry.h), hashed into 16 hex digits that
 * `cairn eval` reports and `cairn --version` prints: two runs with the
 * same hash ran the same ranking constants.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cairn.h"
#include "embed/registry.h"
#include "recall/policy.h"
#include "util/hash.h"

#define ROW(name) { #name, (double)(name) },
static const struct policy_const constants[] = { CAIRN_POLICY(ROW) };
#undef ROW
#define N_CONSTANTS (sizeof constants / sizeof constants[0])
#define MAX_MODELS  32

/* The constants, then two rows a known model: "model:NAME:cjk" and
 * "model:NAME:gate_cosine". Built once. */
static struct policy_const table[N_CONSTANTS + 2 * MAX_MODELS];
static char model_names[2 * MAX_MODELS][96];
static size_t table_n;
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void table_init(void)
{
    size_t n = N_CONSTANTS;
    memcpy(table, constants, sizeof constants);
    for (size_t i = 0; i < embed_reg_count() && i < MAX_MODELS; i++) {
        const struct embed_reg_model *m = embed_reg_get(i);
        snprintf(model_names[2 * i], sizeof model_names[0], "model:%s:cjk", m->name);
        snprintf(model_names[2 * i + 1], sizeof model_names[0], "model:%s:gate_cosine", m->name);
        table[n++] = (struct policy_const){ model_names[2 * i], (double)m->cjk };
        table[n++] = (struct policy_const){ model_names[2 * i + 1], m->gate_cosine };
    }
    table_n = n;
}

const struct policy_const *policy_table(size_t *n)
{
    pthread_once(&table_once, table_init);
    *n = table_n;
    return table;
}

void policy_model(const char *model, struct model_policy *out)
{
    char name[96];
    const char *colon = model ? strrchr(model, ':') : NULL;
    size_t len = colon ? (size_t)(colon - model) : model ? strlen(model) : 0;
    const struct embed_reg_model *m = NULL;
    /* a model's id is its folder's name, ":", a hash of its files
     * (store/vectors.c); a folder named as the registry names it is
     * that model */
    if (len < sizeof name) {
        memcpy(name, model ? model : "", len);
        name[len] = '\0';
        m = embed_reg_find(name);
    }
    out->known = m != NULL;
    out->cjk = m ? m->cjk : 0;
    out->gate_cosine = m ? m->gate_cosine : 0;
}

uint64_t policy_hash(const struct policy_const *t, size_t n)
{
    uint64_t h = FNV1A64_BASIS;
    char item[160];
    for (size_t i = 0; i < n; i++) {
        int len = snprintf(item, sizeof item, "%s=%.17g;", t[i].name, t[i].value);
        if (len > (int)sizeof item - 1)    /* snprintf's count, not what it wrote */
            len = (int)sizeof item - 1;
        if (len > 0)
            h = fnv1a64(item, (size_t)len, h);
    }
    return h;
}

#ifdef CAIRN_PERSP_TUNE
#include <stdlib.h>
/* Each name spelled out (t0512 checks every variable the library reads). */
double policy_tune(const char *name, double value)
{
    const char *v = !strcmp(name, "PERSP_W")      ? getenv("CAIRN_PERSP_W")
                    : !strcmp(name, "PERSP_MIX")  ? getenv("CAIRN_PERSP_MIX")
                    : !strcmp(name, "PERSP_ONLY") ? getenv("CAIRN_PERSP_ONLY")
                    : !strcmp(name, "PERSP_TOPK") ? getenv("CAIRN_PERSP_TOPK")
                    : !strcmp(name, "PERSP_MIN")  ? getenv("CAIRN_PERSP_MIN")
                    : !strcmp(name, "PERSP_REPL") ? getenv("CAIRN_PERSP_REPL")
                    : !strcmp(name, "SEG_W_BM25") ? getenv("CAIRN_SEG_W_BM25")
                    : !strcmp(name, "SEG_MIN_BUDGET") ? getenv("CAIRN_SEG_MIN_BUDGET")
                                                  : NULL;
    return v && *v ? atof(v) : value;
}
#endif

static char hash_hex[17];
static pthread_once_t hash_once = PTHREAD_ONCE_INIT;

static void hash_init(void)
{
    size_t n;
    const struct policy_const *t = policy_table(&n);
    snprintf(hash_hex, sizeof hash_hex, "%016llx", (unsigned long long)policy_hash(t, n));
}

const char *cairn_policy_hash(void)
{
    pthread_once(&hash_once, hash_init);      /* compiled-once, like the other tables */
    return hash_hex;
}
