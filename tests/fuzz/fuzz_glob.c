/*
 * fuzz_glob.c: libFuzzer target for the glob matcher of a vault's
 * .gitignore rules and --exclude (src/vault/walk.c: walk_glob), which
 * reads patterns from files in the user's vault.
 *
 * Input: the pattern, a NUL, the name. Checks: no crash, undefined
 * behaviour or leak, and, for short inputs without a class, the same
 * answer as the syntax's definition tried split by split (ref below, as
 * in test_vault_walk).
 */
#include "fuzz.h"
#include "vault/walk.h"

static int ref(const char *g, const char *s)
{
    if (!*g)
        return !*s;
    if (*g == '*') {
        int k = 0;
        while (g[k] == '*')
            k++;
        const char *r = g + k;
        if (k > 1 && *r == '/') {
            if (ref(r + 1, s))
                return 1;
            for (size_t i = 0; s[i]; i++)
                if (s[i] == '/' && ref(r + 1, s + i + 1))
                    return 1;
            return 0;
        }
        for (size_t i = 0;; i++) {
            if (ref(r, s + i))
                return 1;
            if (!s[i] || (k == 1 && s[i] == '/'))
                return 0;
        }
    }
    if (!*s)
        return 0;
    if (*g == '?')
        return *s != '/' && ref(g + 1, s + 1);
    return *g == *s && ref(g + 1, s + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part part[2];
    if (size > 8192)
        return 0;
    fuzz_split(data, size, part, 2);
    char *g = fuzz_strdup(part[0]), *s = fuzz_strdup(part[1]);
    int got = walk_glob(g, s);
    if (strlen(g) <= 10 && strlen(s) <= 12 && !strchr(g, '[') && got != ref(g, s))
        abort();
    free(g);
    free(s);
    return 0;
}
