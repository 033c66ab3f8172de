/*
 * policy.c: the ranking policy's identity. Every tuned constant of
 * policy.h, by name and value, hashed into 16 hex digits that `cairn eval`
 * reports and `cairn --version` prints: two runs with the same hash ran
 * the same ranking constants.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "cairn.h"
#include "recall/policy.h"
#include "util/hash.h"

#define ROW(name) { #name, (double)(name) },
static const struct policy_const table[] = { CAIRN_POLICY(ROW) };
#undef ROW

const struct policy_const *policy_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
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
