/*
 * charsmap.c: SentencePiece's precompiled charsmap (format and semantics
 * in charsmap.h). Written from the format descriptions of darts-clone and
 * of Hugging Face's Precompiled normalizer; no code taken from either.
 */
#include "embed/charsmap.h"

#include "util/buf.h"
#include "util/utf8.h"
#include "embed/common.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define CM_GRAPHEME_WHOLE 6      /* clusters shorter than this are looked up whole */

struct embed_charsmap {
    uint32_t *units;             /* [nunits] the double array */
    size_t    nunits;
    char     *pool;              /* [npool] replacements, NUL-separated */
    size_t    npool;
};

/* ---- loading ------------------------------------------------------------- */

struct embed_charsmap *embed_charsmap_new(const void *blob, size_t len,
                                          char *err, size_t errlen)
{
    const unsigned char *b = blob;
    struct embed_charsmap *m;
    size_t trie_size, i;

    if (len < 4) {
        embed_errf(err, errlen, "precompiled_charsmap: %zu bytes, too short", len);
        return NULL;
    }
    trie_size = (size_t)b[0] | (size_t)b[1] << 8 | (size_t)b[2] << 16 |
                (size_t)b[3] << 24;
    if (trie_size % 4 != 0 || trie_size > len - 4) {
        embed_errf(err, errlen, "precompiled_charsmap: trie size %zu does not fit "
                   "its %zu bytes", trie_size, len);
        return NULL;
    }
    if (!utf8_valid((const char *)b + 4 + trie_size, len - 4 - trie_size)) {
        embed_errf(err, errlen, "precompiled_charsmap: replacement strings are not UTF-8");
        return NULL;
    }
    m = calloc(1, sizeof(*m));
    if (!m)
        goto nomem;
    m->nunits = trie_size / 4;
    m->npool = len - 4 - trie_size;
    m->units = malloc(m->nunits ? m->nunits * 4 : 1);
    m->pool = malloc(m->npool ? m->npool : 1);
    if (!m->units || !m->pool)
        goto nomem;
    for (i = 0; i < m->nunits; i++) {
        const unsigned char *u = b + 4 + i * 4;
        m->units[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 |
                      (uint32_t)u[3] << 24;
    }
    memcpy(m->pool, b + 4 + trie_size, m->npool);
    return m;
nomem:
    embed_charsmap_free(m);
    embed_errf(err, errlen, "out of memory");
    return NULL;
}

static int b64_value(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

/* Standard alphabet with '=' padding, as tokenizer.json writes it. */
struct embed_charsmap *embed_charsmap_from_base64(const char *b64, char *err,
                                                  size_t errlen)
{
    size_t n = strlen(b64), pad = 0, i, o = 0;
    unsigned char *raw;
    struct embed_charsmap *m;

    while (pad < 2 && pad < n && b64[n - 1 - pad] == '=')
        pad++;
    if (n % 4 != 0) {
        embed_errf(err, errlen, "precompiled_charsmap: base64 length %zu is not a "
                   "multiple of 4", n);
        return NULL;
    }
    raw = malloc(n / 4 * 3 + 1);
    if (!raw) {
        embed_errf(err, errlen, "out of memory");
        return NULL;
    }
    for (i = 0; i < n; i += 4) {
        uint32_t acc = 0;
        int k;
        for (k = 0; k < 4; k++) {
            int v = i + (size_t)k >= n - pad ? 0 : b64_value((unsigned char)b64[i + k]);
            if (v < 0) {
                free(raw);
                embed_errf(err, errlen, "precompiled_charsmap: not base64 at byte %zu",
                           i + (size_t)k);
                return NULL;
            }
            acc = acc << 6 | (uint32_t)v;
        }
        raw[o++] = (unsigned char)(acc >> 16);
        raw[o++] = (unsigned char)(acc >> 8);
        raw[o++] = (unsigned char)acc;
    }
    m = embed_charsmap_new(raw, o - pad, err, errlen);
    free(raw);
    return m;
}

void embed_charsmap_free(struct embed_charsmap *m)
{
    if (!m)
        return;
    free(m->units);
    free(m->pool);
    free(m);
}

/* ---- lookup -------------------------------------------------------------- */

static size_t unit_offset(uint32_t u)
{
    return (size_t)(u >> 10) << ((u & (1u << 9)) >> 6);
}

/* The pool string at offset v, or NULL if v is not the start of one. */
static const char *pool_string(const struct embed_charsmap *m, uint32_t v, size_t *rlen)
{
    const char *s, *end;

    if (v > m->npool || (v < m->npool && ((unsigned char)m->pool[v] & 0xc0) == 0x80))
        return NULL;
    s = m->pool + v;
    end = memchr(s, 0, m->npool - v);
    *rlen = end ? (size_t)(end - s) : m->npool - v;
    return s;
}

const char *embed_charsmap_match(const struct embed_charsmap *m, const char *s,
                                 size_t n, size_t *rlen)
{
    size_t pos, i;

    if (!m || m->nunits == 0)
        return NULL;
    pos = unit_offset(m->units[0]);
    for (i = 0; i < n; i++) {
        uint32_t c = (unsigned char)s[i], u;

        if (c == 0)                         /* keys never hold NUL (HF stops there) */
            return NULL;
        pos ^= c;
        if (pos >= m->nunits)
            return NULL;
        u = m->units[pos];
        if ((u & 0x800000ffu) != c)
            return NULL;
        pos ^= unit_offset(u);
        if (u & (1u << 8))                  /* first hit = shortest key, as HF */
            return pos < m->nunits ? pool_string(m, m->units[pos] & 0x7fffffffu, rlen)
                                   : NULL;
    }
    return NULL;
}

/* ---- applying it ----------------------------------------------------------- */

void embed_cpread_init(struct embed_cpread *r, const char *a, size_t an,
                       const char *b, size_t bn)
{
    memset(r, 0, sizeof(*r));
    r->s[0] = a;
    r->n[0] = a ? an : 0;
    r->s[1] = b;
    r->n[1] = b ? bn : 0;
}

static int cpread_get(struct embed_cpread *r, uint32_t *cp)
{
    while (r->seg < 2 && r->i >= r->n[r->seg]) {
        r->seg++;
        r->i = 0;
    }
    if (r->seg >= 2)
        return 0;
    r->i += utf8_decode(r->s[r->seg] + r->i, r->n[r->seg] - r->i, cp);
    return 1;
}

/* One character (UTF-8 in c[0..k)): its replacement, or itself. */
static void put_char(const struct embed_charsmap *m, const char *c, size_t k,
                     struct buf *out)
{
    size_t rlen;
    const char *rep = embed_charsmap_match(m, c, k, &rlen);

    if (rep)
        buf_add(out, rep, rlen);
    else
        buf_add(out, c, k);
}

/* The characters of the valid UTF-8 g[0..n), one at a time. */
static void put_chars(const struct embed_charsmap *m, const char *g, size_t n,
                      struct buf *out)
{
    size_t i = 0;

    while (i < n) {
        size_t k = utf8_valid_prefix(g + i, n - i);
        put_char(m, g + i, k ? k : 1, out);
        i += k ? k : 1;
    }
}

int embed_charsmap_step(const struct embed_charsmap *m, struct embed_cpread *r,
                        struct buf *out)
{
    char g[CM_GRAPHEME_WHOLE + 4];          /* the cluster while it is short */
    size_t gn = 0, rlen;
    int long_cluster = 0;
    uint32_t cp;
    const char *rep;

    if (!r->have && !cpread_get(r, &r->next))
        return 0;
    r->have = 0;
    cp = r->next;
    for (;;) {
        char enc[4];
        size_t k = utf8_encode(cp, enc);
        uint32_t prev = cp;

        if (!long_cluster && gn + k < CM_GRAPHEME_WHOLE) {
            memcpy(g + gn, enc, k);
            gn += k;
        } else {
            if (!long_cluster)
                put_chars(m, g, gn, out);
            long_cluster = 1;
            put_char(m, enc, k, out);
        }
        if (!cpread_get(r, &r->next))
            break;
        if (utf8proc_grapheme_break_stateful((utf8proc_int32_t)prev,
                                             (utf8proc_int32_t)r->next, &r->gstate)) {
            r->have = 1;
            break;
        }
        cp = r->next;
    }
    if (long_cluster)
        return 1;
    rep = embed_charsmap_match(m, g, gn, &rlen);
    if (rep)
        buf_add(out, rep, rlen);
    else
        put_chars(m, g, gn, out);
    return 1;
}
