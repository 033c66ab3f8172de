/*
 * fuzz_glob.c: libFuzzer target for the glob matcher of a vault's
 * .gitignore rules and --exclude (src/vault/walk.c: walk_glob), which
 * reads patterns from files in the user's vault.
 *
 * Input: the pattern, a NUL, the name. Checks: no crash, undefined
 * behaviour or leak, and, for short inputs without a class, the same
 * answer as the syntax's definition tried split by split (tests/unit/
 * t_glob.h, as in test_vault_walk).
 */
#include "fuzz.h"
#include "vault/walk.h"
#include "../unit/t_glob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_part part[2];
    if (size > 8192)
        return 0;
    fuzz_split(data, size, part, 2);
    char *g = fuzz_strdup(part[0]), *s = fuzz_strdup(part[1]);
    int got = walk_glob(g, s);
    if (strlen(g) <= 10 && strlen(s) <= 12 && !strchr(g, '[') && got != ref_glob(g, s))
        abort();
    free(g);
    free(s);
    return 0;
}
