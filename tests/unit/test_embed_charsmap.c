/*
 * test_embed_charsmap.c: SentencePiece's precompiled charsmap on a tiny
 * double-array trie built here by hand (the builder below places each
 * node's children at base ^ label in the first free spot), then hostile
 * blobs: bad sizes, non-UTF-8 pools, and tries whose offsets and values
 * point anywhere (never read out of bounds: run under `make check`).
 */
#include "t.h"
#include "embed/charsmap.h"
#include "util/buf.h"
#include "util/utf8.h"

#include <stdlib.h>

#define NU     1024                 /* units in the test trie */
#define NNODE  64

struct tnode {
    int child[256];                 /* node index, 0 = none (0 is the root) */
    int value;                      /* pool offset, -1 if not a key */
};

static struct tnode nodes[NNODE];
static int nnodes;
static uint32_t units[NU];
static unsigned char used[NU];

/* Places node n (already at position pos) and its subtree. */
static int place(int n, size_t pos)
{
    size_t base;
    int c;

    for (base = 1; base < NU; base++) {
        int fits = !used[base] || nodes[n].value < 0;
        if (nodes[n].value >= 0 && used[base])
            continue;
        for (c = 1; c < 256 && fits; c++)
            if (nodes[n].child[c] && ((base ^ (size_t)c) >= NU || used[base ^ (size_t)c]))
                fits = 0;
        if (fits)
            break;
    }
    if (base >= NU)
        return -1;
    units[pos] |= (uint32_t)((pos ^ base) << 10) | (nodes[n].value >= 0 ? 1u << 8 : 0);
    if (nodes[n].value >= 0) {
        used[base] = 1;
        units[base] = 0x80000000u | (uint32_t)nodes[n].value;
    }
    for (c = 1; c < 256; c++)
        if (nodes[n].child[c]) {
            used[base ^ (size_t)c] = 1;
            units[base ^ (size_t)c] = (uint32_t)c;
        }
    for (c = 1; c < 256; c++)
        if (nodes[n].child[c] && place(nodes[n].child[c], base ^ (size_t)c) != 0)
            return -1;
    return 0;
}

/* keys[i] -> vals[i]; the blob in *out (caller frees), its length returned. */
static size_t build(const char *const *keys, const char *const *vals, int nk,
                    unsigned char **out)
{
    struct buf pool = BUF_INIT;
    unsigned char *b;
    size_t len, i;
    int k;

    memset(nodes, 0, sizeof(nodes));
    memset(units, 0, sizeof(units));
    memset(used, 0, sizeof(used));
    nnodes = 1;
    nodes[0].value = -1;
    used[0] = 1;
    for (k = 0; k < nk; k++) {
        int n = 0;
        for (i = 0; keys[k][i]; i++) {
            unsigned char c = (unsigned char)keys[k][i];
            if (!nodes[n].child[c]) {
                nodes[nnodes].value = -1;
                nodes[n].child[c] = nnodes++;
            }
            n = nodes[n].child[c];
        }
        nodes[n].value = (int)pool.n;
        buf_add(&pool, vals[k], strlen(vals[k]) + 1);
    }
    if (place(0, 0) != 0)
        return 0;
    len = 4 + sizeof(units) + pool.n;
    b = malloc(len);
    b[0] = (unsigned char)(sizeof(units) & 0xff);
    b[1] = (unsigned char)(sizeof(units) >> 8);
    b[2] = b[3] = 0;
    for (i = 0; i < NU; i++) {
        b[4 + i * 4] = (unsigned char)units[i];
        b[5 + i * 4] = (unsigned char)(units[i] >> 8);
        b[6 + i * 4] = (unsigned char)(units[i] >> 16);
        b[7 + i * 4] = (unsigned char)(units[i] >> 24);
    }
    memcpy(b + 4 + sizeof(units), pool.p, pool.n);
    buf_release(&pool);
    *out = b;
    return len;
}

static int norm_is(const struct embed_charsmap *m, const char *in, const char *want)
{
    struct embed_cpread rd;
    struct buf out = BUF_INIT;
    int ok;

    embed_cpread_init(&rd, in, strlen(in), NULL, 0);
    while (embed_charsmap_step(m, &rd, &out))
        ;
    ok = out.err == 0 && strcmp(out.p, want) == 0;
    if (!ok)
        fprintf(stderr, "  [%s] -> [%s], want [%s]\n", in, out.p, want);
    buf_release(&out);
    return ok;
}

static const char *const keys[] = { "A", "e", "e\xcc\x81", "\t", "\x01",
                                    "\xef\xac\x81", "\xef\xbd\x88", "AB" };
static const char *const vals[] = { "a", "E", "\xc3\xa9", " ", "",
                                    "fi", "h", "X" };

static void test_trie(void)
{
    unsigned char *blob = NULL;
    size_t len = build(keys, vals, 8, &blob);
    char err[256] = "";
    struct embed_charsmap *m = len ? embed_charsmap_new(blob, len, err, sizeof(err)) : NULL;
    size_t rl;

    T_CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "  %s\n", err);
        free(blob);
        return;
    }
    T_CHECK(embed_charsmap_match(m, "A", 1, &rl) && rl == 1);
    T_CHECK(embed_charsmap_match(m, "Z", 1, &rl) == NULL);
    T_CHECK(embed_charsmap_match(m, "\x01", 1, &rl) && rl == 0);
    T_CHECK(norm_is(m, "Abc", "abc"));
    T_CHECK(norm_is(m, "AB", "aB"));                  /* two graphemes: "AB" never seen whole */
    T_CHECK(norm_is(m, "\xef\xac\x81n\xef\xbd\x88", "finh"));   /* ﬁ, ｈ share a first byte */
    T_CHECK(norm_is(m, "a\tb\x01" "c", "a bc"));
    /* one grapheme e + U+0301 under 6 bytes: the SHORTEST key ("e") wins
     * and replaces the whole cluster, accent and all (HF's quirk) */
    T_CHECK(norm_is(m, "e\xcc\x81", "E"));
    /* 6+ bytes (e + three U+0301): char by char, marks kept */
    T_CHECK(norm_is(m, "e\xcc\x81\xcc\x81\xcc\x81", "E\xcc\x81\xcc\x81\xcc\x81"));
    T_CHECK(norm_is(m, "x\xffy", "x\xef\xbf\xbdy"));   /* invalid byte read as U+FFFD */
    {
        /* two segments read as one: the cluster spans them */
        struct embed_cpread rd;
        struct buf out = BUF_INIT;
        embed_cpread_init(&rd, "e", 1, "\xcc\x81" "A", 3);
        while (embed_charsmap_step(m, &rd, &out))
            ;
        T_CHECK(strcmp(out.p, "Ea") == 0);
        buf_release(&out);
    }
    embed_charsmap_free(m);
    free(blob);
}

static int refused(const void *blob, size_t len, const char *want)
{
    char err[256] = "";
    struct embed_charsmap *m = embed_charsmap_new(blob, len, err, sizeof(err));
    int ok = m == NULL && strstr(err, want) != NULL;

    if (!ok)
        fprintf(stderr, "  %zu bytes -> %s\n", len, m ? "loaded" : err);
    embed_charsmap_free(m);
    return ok;
}

/* A 3-unit trie with the one key "A" whose value is v, over the pool "é". */
static int value_is(uint32_t v, const char *want)
{
    unsigned char b[4 + 12 + 2] = { 12, 0, 0, 0 };
    uint32_t u[3];
    char err[256] = "";
    struct embed_charsmap *m;
    const char *got;
    size_t rl = 0;
    int i, ok;

    u[0] = (0x41u ^ 1u) << 10;                    /* root: base 0x40, "A" at 1 */
    u[1] = 0x41u | 1u << 8 | (1u ^ 2u) << 10;     /* label A, has_leaf, base 2 */
    u[2] = 0x80000000u | v;
    for (i = 0; i < 12; i++)
        b[4 + i] = (unsigned char)(u[i / 4] >> (8 * (i % 4)));
    memcpy(b + 16, "\xc3\xa9", 2);
    m = embed_charsmap_new(b, sizeof(b), err, sizeof(err));
    got = m ? embed_charsmap_match(m, "A", 1, &rl) : NULL;
    ok = m && (want ? got && rl == strlen(want) && memcmp(got, want, rl) == 0 : !got);
    embed_charsmap_free(m);
    return ok;
}

static void test_hostile(void)
{
    unsigned char *blob = NULL;
    size_t len = build(keys, vals, 8, &blob), i, rl, rl2;
    char err[256] = "";
    struct embed_charsmap *m;
    unsigned int seed = 1;
    int loaded = 0, bad = 0;

    T_CHECK(refused("", 0, "too short"));
    T_CHECK(refused("\x08\0\0\0" "abc", 7, "does not fit"));
    T_CHECK(refused("\x06\0\0\0" "abcdefgh", 12, "does not fit"));
    T_CHECK(refused("\0\0\0\0" "a\xff", 6, "not UTF-8"));
    T_CHECK(embed_charsmap_from_base64("AAAA=", err, sizeof(err)) == NULL &&
            strstr(err, "multiple of 4"));
    T_CHECK(embed_charsmap_from_base64("AA*AAAAA", err, sizeof(err)) == NULL &&
            strstr(err, "not base64"));
    m = embed_charsmap_from_base64("AAAAAA==", err, sizeof(err));  /* empty trie */
    T_CHECK(m != NULL && embed_charsmap_match(m, "A", 1, &rl) == NULL);
    T_CHECK(norm_is(m, "Abc", "Abc"));
    embed_charsmap_free(m);
    /* "A" -> value v, pool "é": past the pool or inside a character is no match */
    T_CHECK(value_is(0, "\xc3\xa9"));
    T_CHECK(value_is(2, ""));
    T_CHECK(value_is(1, NULL));
    T_CHECK(value_is(3, NULL));
    /* the built trie with random units: lookups stay in bounds */
    for (i = 0; i < 2000 && len; i++) {
        size_t at = 4 + ((size_t)rand_r(&seed) % NU) * 4;
        blob[at + (size_t)rand_r(&seed) % 4] = (unsigned char)rand_r(&seed);
        m = embed_charsmap_new(blob, len, err, sizeof(err));
        if (m) {
            const char *r1 = embed_charsmap_match(m, "\xef\xac\x81", 3, &rl);
            const char *r2 = embed_charsmap_match(m, "e\xcc\x81", 3, &rl2);
            bad += (r1 && (rl > len || !utf8_valid(r1, rl))) ||
                   (r2 && (rl2 > len || !utf8_valid(r2, rl2)));
            loaded++;
        }
        embed_charsmap_free(m);
    }
    /* the trie is read lazily: damaged units load, and every hit is a
     * whole UTF-8 string inside the blob */
    T_EQ_INT(loaded, 2000);
    T_EQ_INT(bad, 0);
    free(blob);
}

int main(void)
{
    T_RUN(test_trie);
    T_RUN(test_hostile);
    return T_DONE();
}
