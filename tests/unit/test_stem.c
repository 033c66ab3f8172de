/*
 * test_stem.c: src/text/stem.c against libstemmer's public API.
 *
 * Built with CAIRN_STEM_EN (Debian's archive linked), stem.c calls the
 * English stemmer's functions directly; sb_stemmer_new("english") of the
 * same archive is the reference. Every word of a list (inflected English,
 * possessives, non-ASCII, the empty word, long words) and 20,000 random
 * ones built from English stems and suffixes must stem to the same bytes
 * and length both ways. Without CAIRN_STEM_EN stem.c is that API itself,
 * so the comparison is skipped (it could not fail).
 */
#include "text/stem.h"
#include "t.h"

#ifdef CAIRN_STEM_EN
#include <libstemmer.h>

static struct sb_stemmer *ref;
static struct stemmer *st;

static void same(const char *w, int n)
{
    int m = -1;
    const sb_symbol *r = sb_stemmer_stem(ref, (const sb_symbol *)w, n);
    const char *s = stemmer_stem(st, w, n, &m);
    T_CHECK((r == NULL) == (s == NULL));
    if (!r || !s)
        return;
    int rm = sb_stemmer_length(ref);
    if (m != rm || memcmp(r, s, (size_t)m) != 0 || s[m] != '\0')
        fprintf(stderr, "stem of \"%.*s\": \"%.*s\" against \"%.*s\"\n", n, w, m, s, rm,
                (const char *)r);
    T_EQ_INT(m, rm);
    T_CHECK(memcmp(r, s, (size_t)rm) == 0);
    T_CHECK(s[m] == '\0');
}

static void test_words(void)
{
    static const char *words[] = {
        "", "a", "s", "connections", "connected", "connecting", "relational", "generously",
        "running", "ran", "runs", "flies", "dying", "agreed", "happiness", "hopefully",
        "john's", "dogs'", "it's", "reconnect", "reconnected", "websocket", "websockets",
        "migration", "migrations", "eviction", "policies", "reproducible", "reproducibility",
        "caf\xc3\xa9s", "na\xc3\xafvet\xc3\xa9", "stra\xc3\x9f" "e", "\xe6\x97\xa5\xe6\x9c\xac",
        "x86_64", "v2.3.1", "ationalization", "organizationally", "sky", "skies", "news",
        "commonly", "early", "only", "singly", "gently", "innings", "outing", "canning",
        "herring", "earring", "proceed", "exceed", "succeed", "atlas", "cosmos", "bias",
        "andes", "generate", "generates", "generated", "generating", "general", "generally",
        "generic", "generically", "generous", "generously",
        "supercalifragilisticexpialidociouslyness-and-then-some-more-letters-to-pass-sixty-four",
    };
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        same(words[i], (int)strlen(words[i]));
}

static void test_random(void)
{
    static const char *stems[] = {
        "connect", "relat", "generat", "happ", "run", "fl", "agre", "organ", "nation", "cach",
        "evict", "migrat", "reproduc", "decid", "fix", "build", "test", "stor", "index", "quer",
        "y", "e", "ss", "abl", "iz", "is", "ou", "li", "eed", "ing",
    };
    static const char *suffixes[] = {
        "", "s", "es", "ed", "ing", "ly", "ation", "ational", "ization", "ness", "ment",
        "able", "ible", "ful", "ous", "ive", "ize", "ise", "iti", "biliti", "li", "er",
        "ies", "ied", "'s", "s'", "eed", "eedly", "ingly", "edly", "ement", "ance", "ence",
    };
    uint64_t seed = 0x5eed5eedULL;
    char w[256];
    for (int k = 0; k < 20000; k++) {
        int n = 0, parts = 1 + (int)(t_xorshift(&seed) % 4);
        n += snprintf(w + n, sizeof w - (size_t)n, "%s",
                      stems[t_xorshift(&seed) % (sizeof stems / sizeof *stems)]);
        for (int p = 0; p < parts && n < 200; p++)
            n += snprintf(w + n, sizeof w - (size_t)n, "%s",
                          suffixes[t_xorshift(&seed) % (sizeof suffixes / sizeof *suffixes)]);
        if (t_xorshift(&seed) % 16 == 0 && n < 250)   /* a random letter inside */
            w[t_xorshift(&seed) % (unsigned)n] = (char)('a' + t_xorshift(&seed) % 26);
        same(w, n);
    }
}

int main(void)
{
    ref = sb_stemmer_new("english", "UTF_8");
    st = stemmer_new();
    T_CHECK(ref != NULL);
    T_CHECK(st != NULL);
    if (ref && st) {
        T_RUN(test_words);
        T_RUN(test_random);
    }
    sb_stemmer_delete(ref);
    stemmer_free(st);
    return T_DONE();
}

#else

int main(void)
{
    struct stemmer *st = stemmer_new();
    int m = 0;
    const char *s = st ? stemmer_stem(st, "connections", 11, &m) : NULL;
    T_CHECK(s && m == 7 && memcmp(s, "connect", 7) == 0);
    stemmer_free(st);
    T_SKIP("built without CAIRN_STEM_EN: stem.c is libstemmer's API itself, nothing to compare");
    return T_DONE();
}

#endif
