/*
 * stem.c: English Snowball stemming (stem.h says why two ways).
 */
#include "text/stem.h"

#include <stddef.h>

#ifdef CAIRN_STEM_EN

/* Snowball's runtime (runtime/api.h, not installed by libstemmer-dev):
 * the environment's leading fields, the current string and its length,
 * unchanged since Snowball's first C runtime; the rest of the struct
 * is the runtime's own. tests/unit/test_stem.c compares every stem with
 * sb_stemmer_stem's on the same words. */
struct SN_env {
    unsigned char *p;
    int c, l;
};

struct SN_env *english_UTF_8_create_env(void);
void english_UTF_8_close_env(struct SN_env *z);
int english_UTF_8_stem(struct SN_env *z);
int SN_set_current(struct SN_env *z, int size, const unsigned char *s);

struct stemmer *stemmer_new(void)
{
    return (struct stemmer *)english_UTF_8_create_env();
}

/* What sb_stemmer_stem does for the English module. */
const char *stemmer_stem(struct stemmer *s, const char *word, int n, int *m)
{
    struct SN_env *z = (struct SN_env *)s;
    if (SN_set_current(z, n, (const unsigned char *)word)) {
        z->l = 0;
        return NULL;
    }
    if (english_UTF_8_stem(z) < 0)
        return NULL;
    z->p[z->l] = 0;
    *m = z->l;
    return (const char *)z->p;
}

void stemmer_free(struct stemmer *s)
{
    if (s)
        english_UTF_8_close_env((struct SN_env *)s);
}

#else

#include <libstemmer.h>

struct stemmer *stemmer_new(void)
{
    return (struct stemmer *)sb_stemmer_new("english", "UTF_8");
}

const char *stemmer_stem(struct stemmer *s, const char *word, int n, int *m)
{
    struct sb_stemmer *st = (struct sb_stemmer *)s;
    const sb_symbol *r = sb_stemmer_stem(st, (const sb_symbol *)word, n);
    if (r)
        *m = sb_stemmer_length(st);
    return (const char *)r;
}

void stemmer_free(struct stemmer *s)
{
    if (s)
        sb_stemmer_delete((struct sb_stemmer *)s);
}

#endif
