/*
 * tokenize.c: cairn's word splitter (see tokenize.h and docs/TOKENS.md).
 *
 * One scanner feeds both the FTS5 index (tokenizer "cairn") and the
 * ranker's queries, so a word is folded the same way on both sides. The
 * scanner walks the input once, left to right, and classifies each code
 * point: word character (letters, digits, marks), CJK (Han, kana,
 * Hangul), joiner (the ASCII characters that glue identifiers, paths and
 * versions: _ - . / \ : @ # $ ~ +), or separator (everything else,
 * including NUL and bytes that are not valid UTF-8).
 *
 *   - A CJK run goes out as overlapping bigrams (a run of one character as
 *     that character), each at its own position.
 *   - A "compound" is word characters glued by joiners (src/store.c,
 *     v1.2.3, foo-bar, $HOME) or one word with inner case changes
 *     (getUserName). It goes out whole (folded, not stemmed) and, when
 *     indexing documents, followed by its parts (folded and stemmed) as
 *     FTS5 colocated tokens at the same position. A query emits the whole
 *     only: it matches the whole indexed token, and a query on a part
 *     matches the indexed part.
 *   - A plain word goes out folded and, if it is Latin script, stemmed
 *     with the Snowball English stemmer.
 *
 * Folding is NFKC + case fold + mark stripping (utf8proc) applied to one
 * token's bytes at a time, so the byte offsets handed out always point
 * into the original text (FTS5 highlight() and our excerpts use them).
 * Pure ASCII tokens skip utf8proc entirely: that is the fast path.
 *
 * Tokens are capped at TOK_MAX bytes (longer ones are cut on a UTF-8
 * boundary): a 10 MB run without a space costs one token, not 10 MB of
 * index. Nothing here allocates per token: a tokenizer context owns one
 * stemmer and fixed scratch buffers, reused for every token.
 */
#include "text/stem.h"
#include "text/tokenize.h"
#include "util/buf.h"
#include "util/utf8.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <utf8proc.h>

/* Longest token we emit, in bytes. Longer tokens (hashes past SHA-256
 * hex, base64 blobs, URLs) are cut here; queries are cut the same way so
 * they still match. */
#define TOK_MAX      64
/* Bytes of a token's source text we normalise: enough for TOK_MAX output
 * bytes even when marks are stripped (e + U+0301 is 3 bytes -> 1). */
#define TOK_SRC_MAX  (TOK_MAX * 2)
/* Code points of scratch for one normalisation: NFKC can expand a code
 * point up to 18 times (U+FDFA), TOK_SRC_MAX bytes hold at most
 * TOK_SRC_MAX code points. */
#define TOK_CP_MAX   (TOK_SRC_MAX * 18 + 8)
/* Longest run of leading sigils ($HOME, ~/.bashrc, --verbose). */
#define SIGIL_MAX    3

/* Code point classes. */
enum {
    C_SEP = 0,   /* splits words */
    C_LOWER,     /* word character, lower case */
    C_UPPER,     /* word character, upper or title case */
    C_DIGIT,     /* word character, decimal digit */
    C_OTHER,     /* word character without case (other letters, marks) */
    C_IGN,       /* inside a word only, dropped by folding (ZWJ, soft hyphen) */
    C_JOIN,      /* ASCII joiner: _ - . / \ : @ # $ ~ + */
    C_APOS,      /* apostrophe: inside a word between word characters */
    C_COMMA,     /* comma: inside a number between digits (1,000) */
    C_CJK        /* Han, Hiragana, Katakana, Hangul */
};

#define IS_WORD(c) ((c) >= C_LOWER && (c) <= C_OTHER)

static const unsigned char ascii_class[128] = {
    ['a'] = C_LOWER, ['b'] = C_LOWER, ['c'] = C_LOWER, ['d'] = C_LOWER,
    ['e'] = C_LOWER, ['f'] = C_LOWER, ['g'] = C_LOWER, ['h'] = C_LOWER,
    ['i'] = C_LOWER, ['j'] = C_LOWER, ['k'] = C_LOWER, ['l'] = C_LOWER,
    ['m'] = C_LOWER, ['n'] = C_LOWER, ['o'] = C_LOWER, ['p'] = C_LOWER,
    ['q'] = C_LOWER, ['r'] = C_LOWER, ['s'] = C_LOWER, ['t'] = C_LOWER,
    ['u'] = C_LOWER, ['v'] = C_LOWER, ['w'] = C_LOWER, ['x'] = C_LOWER,
    ['y'] = C_LOWER, ['z'] = C_LOWER,
    ['A'] = C_UPPER, ['B'] = C_UPPER, ['C'] = C_UPPER, ['D'] = C_UPPER,
    ['E'] = C_UPPER, ['F'] = C_UPPER, ['G'] = C_UPPER, ['H'] = C_UPPER,
    ['I'] = C_UPPER, ['J'] = C_UPPER, ['K'] = C_UPPER, ['L'] = C_UPPER,
    ['M'] = C_UPPER, ['N'] = C_UPPER, ['O'] = C_UPPER, ['P'] = C_UPPER,
    ['Q'] = C_UPPER, ['R'] = C_UPPER, ['S'] = C_UPPER, ['T'] = C_UPPER,
    ['U'] = C_UPPER, ['V'] = C_UPPER, ['W'] = C_UPPER, ['X'] = C_UPPER,
    ['Y'] = C_UPPER, ['Z'] = C_UPPER,
    ['0'] = C_DIGIT, ['1'] = C_DIGIT, ['2'] = C_DIGIT, ['3'] = C_DIGIT,
    ['4'] = C_DIGIT, ['5'] = C_DIGIT, ['6'] = C_DIGIT, ['7'] = C_DIGIT,
    ['8'] = C_DIGIT, ['9'] = C_DIGIT,
    ['_'] = C_JOIN, ['-'] = C_JOIN, ['.'] = C_JOIN, ['/'] = C_JOIN,
    ['\\'] = C_JOIN, [':'] = C_JOIN, ['@'] = C_JOIN, ['#'] = C_JOIN,
    ['$'] = C_JOIN, ['~'] = C_JOIN, ['+'] = C_JOIN,
    ['\''] = C_APOS, [','] = C_COMMA,
};

/* One tokenizer context: a stemmer (not thread-safe, so one per context)
 * and scratch buffers. */
/* Stems of recent words, direct-mapped by a hash of the word: natural
 * text repeats its words, and Snowball was a tenth of `cairn add`'s CPU.
 * Only the FTS5 tokenizer instance, which lives as long as its
 * connection, has one (92 KB, made at its first document); words over
 * STEM_W bytes bypass it. */
#define STEM_W     22
#define STEM_SLOTS 2048
struct stem_slot {
    unsigned char n, m;      /* word and stem lengths; n = 0: empty */
    char w[STEM_W], s[STEM_W];
};

struct tok_ctx {
    struct stemmer *stem;
    struct stem_slot *cache;  /* NULL: none */
    int for_query;
    int (*emit)(void *arg, const char *tok, size_t n, size_t start,
                size_t end, int colocated);
    void *arg;
    char out[TOK_MAX + 8];                /* the folded token */
    utf8proc_int32_t cps[TOK_CP_MAX + 1]; /* normalisation scratch */
};

/* ---- classification ---------------------------------------------------- */

static int is_cjk(uint32_t cp)
{
    if (cp < 0x1100)
        return 0;
    return (cp >= 0x4E00 && cp <= 0x9FFF) ||     /* CJK unified */
           (cp >= 0x3400 && cp <= 0x4DBF) ||     /* ext A */
           (cp >= 0x3040 && cp <= 0x30FF) ||     /* Hiragana, Katakana */
           (cp >= 0xAC00 && cp <= 0xD7AF) ||     /* Hangul syllables */
           (cp >= 0x1100 && cp <= 0x11FF) ||     /* Hangul jamo */
           (cp >= 0x3130 && cp <= 0x318F) ||     /* Hangul compat jamo */
           (cp >= 0x31F0 && cp <= 0x31FF) ||     /* Katakana ext */
           (cp >= 0xFF66 && cp <= 0xFF9F) ||     /* halfwidth Katakana */
           (cp >= 0xF900 && cp <= 0xFAFF) ||     /* compat ideographs */
           (cp >= 0xA960 && cp <= 0xA97F) ||     /* Hangul jamo ext A */
           (cp >= 0xD7B0 && cp <= 0xD7FF) ||     /* Hangul jamo ext B */
           cp == 0x3005 || cp == 0x3007 ||       /* 々 〇 */
           (cp >= 0x20000 && cp <= 0x3134F);     /* ext B..G, compat sup */
}

static int class_of(uint32_t cp)
{
    if (cp < 0x80)
        return ascii_class[cp];
    if (is_cjk(cp))
        return C_CJK;
    if (cp == 0x2019 || cp == 0x2018)
        return C_APOS;
    if (cp == 0x00AD || cp == 0x200C || cp == 0x200D)
        return C_IGN;
    switch (utf8proc_category((utf8proc_int32_t)cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LT:
        return C_UPPER;
    case UTF8PROC_CATEGORY_LL:
        return C_LOWER;
    case UTF8PROC_CATEGORY_ND:
        return C_DIGIT;
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return C_OTHER;
    default:
        return C_SEP;
    }
}

/* Decodes the code point at s[i] and classifies it; *len gets its byte
 * length. Bytes that are not valid UTF-8 are separators of one byte. */
static int peek(const char *s, size_t n, size_t i, size_t *len, uint32_t *cpo)
{
    unsigned char c = (unsigned char)s[i];
    if (c < 0x80) {
        *len = 1;
        *cpo = c;
        return ascii_class[c];
    }
    size_t k = utf8_valid_prefix(s + i, n - i);
    if (!k) {
        *len = 1;
        *cpo = 0xFFFD;
        return C_SEP;
    }
    uint32_t cp;
    utf8_decode(s + i, n - i, &cp);
    *len = k;
    *cpo = cp;
    return class_of(cp);
}

/* ---- folding ----------------------------------------------------------- */

/* Cuts out[0..n) to at most TOK_MAX bytes on a UTF-8 boundary. */
static size_t cap_len(const char *out, size_t n)
{
    if (n <= TOK_MAX)
        return n;
    n = TOK_MAX;
    while (n > 0 && ((unsigned char)out[n] & 0xC0) == 0x80)
        n--;
    return n;
}

/* Folds s[a..b) into ctx->out; returns the length (0: nothing left, e.g.
 * a lone mark). strip: drop marks (not for CJK, where a mark is part of
 * the kana). */
static size_t fold(struct tok_ctx *ctx, const char *s, size_t a, size_t b,
                   int strip)
{
    size_t len = b - a, i;
    int ascii = 1;

    if (len > TOK_SRC_MAX) {
        len = TOK_SRC_MAX;
        while (len > 0 && ((unsigned char)s[a + len] & 0xC0) == 0x80)
            len--;
    }
    for (i = 0; i < len; i++) {
        if ((unsigned char)s[a + i] >= 0x80) {
            ascii = 0;
            break;
        }
    }
    if (ascii) {
        size_t m = len < TOK_MAX ? len : TOK_MAX;
        for (i = 0; i < m; i++) {
            unsigned char c = (unsigned char)s[a + i];
            ctx->out[i] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        return m;
    }

    utf8proc_option_t opt = UTF8PROC_COMPOSE | UTF8PROC_COMPAT |
                            UTF8PROC_CASEFOLD | UTF8PROC_IGNORE;
    if (strip)
        opt |= UTF8PROC_STRIPMARK;
    utf8proc_ssize_t k = utf8proc_decompose((const utf8proc_uint8_t *)s + a,
                                            (utf8proc_ssize_t)len, ctx->cps,
                                            TOK_CP_MAX, opt);
    if (k <= 0 || k > TOK_CP_MAX)
        return 0;                       /* cannot happen on valid UTF-8 */
    k = utf8proc_reencode(ctx->cps, k, opt);
    if (k <= 0)
        return 0;

    /* Curly apostrophes become ASCII ones so the stemmer sees "john's". */
    const char *src = (const char *)ctx->cps;
    size_t o = 0;
    for (i = 0; i < (size_t)k && o < TOK_MAX + 4; ) {
        if (i + 2 < (size_t)k && (unsigned char)src[i] == 0xE2 &&
            (unsigned char)src[i + 1] == 0x80 &&
            ((unsigned char)src[i + 2] == 0x98 || (unsigned char)src[i + 2] == 0x99)) {
            ctx->out[o++] = '\'';
            i += 3;
        } else {
            ctx->out[o++] = src[i++];
        }
    }
    /* The copy above may stop inside a sequence; cap_len backs off to a
     * boundary (out has slack past TOK_MAX, and o <= TOK_MAX + 4). */
    if (o > TOK_MAX)
        return cap_len(ctx->out, o);
    return o;
}

/* Emits ctx->out[0..n), stemmed if stem and it is a Latin word. */
static int put(struct tok_ctx *ctx, size_t n, int stem, size_t a, size_t b,
               int colocated)
{
    if (n == 0)
        return 0;
    if (stem && ctx->stem && n >= 3) {
        size_t i;
        for (i = 0; i < n; i++) {
            unsigned char c = (unsigned char)ctx->out[i];
            if (!((c >= 'a' && c <= 'z') || c == '\''))
                break;
        }
        if (i == n) {
            struct stem_slot *e = NULL;
            if (ctx->cache && n <= STEM_W) {
                uint32_t hv = 2166136261u;          /* FNV-1a */
                for (i = 0; i < n; i++)
                    hv = (hv ^ (unsigned char)ctx->out[i]) * 16777619u;
                e = &ctx->cache[hv & (STEM_SLOTS - 1)];
                if (e->n == n && memcmp(e->w, ctx->out, n) == 0)
                    return ctx->emit(ctx->arg, e->s, e->m, a, b, colocated);
            }
            int m = 0;
            const char *r = stemmer_stem(ctx->stem, ctx->out, (int)n, &m);
            if (r) {
                if (m > 0 && e && m <= STEM_W) {
                    e->n = (unsigned char)n;
                    e->m = (unsigned char)m;
                    memcpy(e->w, ctx->out, n);
                    memcpy(e->s, r, (size_t)m);
                }
                if (m > 0)
                    return ctx->emit(ctx->arg, r, (size_t)m, a, b,
                                     colocated);
            }
        }
    }
    return ctx->emit(ctx->arg, ctx->out, n, a, b, colocated);
}

/* ---- CJK runs ---------------------------------------------------------- */

/* Folds one CJK character into buf (>= 16 bytes); the common blocks are
 * already NFKC and caseless, so they are copied. */
static size_t fold_cjk(struct tok_ctx *ctx, const char *s, size_t a, size_t len,
                       uint32_t cp, char *buf)
{
    if ((cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
        (cp >= 0x3041 && cp <= 0x3096) || (cp >= 0x30A1 && cp <= 0x30FA) ||
        (cp >= 0xAC00 && cp <= 0xD7A3)) {
        memcpy(buf, s + a, len);
        return len;
    }
    size_t m = fold(ctx, s, a, a + len, 0);
    if (m > 16)
        m = 0;                          /* not a single character: skip */
    memcpy(buf, ctx->out, m);
    return m;
}

/* Emits the CJK run starting at i as bigrams; returns the end of the run
 * through *next. */
static int do_cjk(struct tok_ctx *ctx, const char *s, size_t n, size_t i,
                  size_t *next)
{
    char prev[16], cur[16];
    size_t prev_n = 0, prev_a = 0, cur_n;
    int count = 0, rc;

    while (i < n) {
        size_t len;
        uint32_t cp;
        if (peek(s, n, i, &len, &cp) != C_CJK)
            break;
        cur_n = fold_cjk(ctx, s, i, len, cp, cur);
        if (cur_n == 0) {               /* folded to nothing: skip it */
            i += len;
            continue;
        }
        if (count > 0) {
            memcpy(ctx->out, prev, prev_n);
            memcpy(ctx->out + prev_n, cur, cur_n);
            rc = ctx->emit(ctx->arg, ctx->out, prev_n + cur_n, prev_a, i + len, 0);
            if (rc)
                return rc;
        }
        memcpy(prev, cur, cur_n);
        prev_n = cur_n;
        prev_a = i;
        count++;
        i += len;
    }
    *next = i;
    if (count == 1)
        return ctx->emit(ctx->arg, prev, prev_n, prev_a, i, 0);
    return 0;
}

/* ---- compounds --------------------------------------------------------- */

/* Walks the compound s[a..b) part by part: each call returns the next
 * part's span in [*pa, *pb) and 1, or 0 at the end. Parts are runs of word
 * characters (with inner apostrophes) split at case changes: getUser ->
 * get|User, HTTPServer -> HTTP|Server, user2Name -> user2|Name, but IDs
 * and v2 stay whole. */
static int next_part(const char *s, size_t b, size_t *pos, size_t *pa, size_t *pb)
{
    size_t i = *pos, len, len2;
    uint32_t cp;
    int c;

    /* skip joiners and anything else not starting a part */
    while (i < b) {
        c = peek(s, b, i, &len, &cp);
        if (IS_WORD(c))
            break;
        i += len;
    }
    if (i >= b)
        return 0;
    *pa = i;
    int prev = C_SEP;
    while (i < b) {
        c = peek(s, b, i, &len, &cp);
        if (c == C_APOS || c == C_IGN) {
            /* kept when a word character follows */
            if (i + len < b && IS_WORD(peek(s, b, i + len, &len2, &cp))) {
                i += len;
                continue;
            }
            break;
        }
        if (!IS_WORD(c))
            break;
        if (c == C_UPPER && i > *pa) {
            if (prev == C_LOWER)
                break;                          /* getUser */
            int nx = i + len < b ? peek(s, b, i + len, &len2, &cp) : C_SEP;
            if (prev == C_DIGIT && nx == C_LOWER)
                break;                          /* user2Name */
            if (prev == C_UPPER && nx == C_LOWER) {
                /* HTTPServer, but not IDs: need two lower-case letters */
                size_t j = i + len + len2;
                int nx2 = j < b ? peek(s, b, j, &len2, &cp) : C_SEP;
                if (nx2 == C_LOWER)
                    break;
            }
        }
        prev = c;
        i += len;
    }
    *pb = i;
    *pos = i;
    return 1;
}

/* At a joiner at s[i]: is this a sigil run (at most SIGIL_MAX joiners,
 * no ':', not an ellipsis) with a word character right after? Returns
 * the run length if so; otherwise 0 and *skip gets the whole joiner run,
 * so "....foo" gives foo, not ..foo. */
static size_t sigil_run(const char *s, size_t n, size_t i, size_t *skip)
{
    size_t j = i, dots = 0, len;
    uint32_t cp;
    int colon = 0;

    while (j < n && (unsigned char)s[j] < 0x80 &&
           ascii_class[(unsigned char)s[j]] == C_JOIN) {
        dots += s[j] == '.';
        colon |= s[j] == ':';
        j++;
    }
    *skip = j - i;
    if (j - i > SIGIL_MAX || colon || (dots == j - i && dots >= 3) || j >= n)
        return 0;
    return IS_WORD(peek(s, n, j, &len, &cp)) ? j - i : 0;
}

/* Finds the end of the compound that starts at a (a word character or a
 * sigil run); *joined is set when it holds a joiner (or a 1,000 comma). */
static size_t compound_end(const char *s, size_t n, size_t a, int *joined)
{
    size_t i = a, end = a, len, len2;
    uint32_t cp;
    int prev = C_SEP;

    *joined = 0;
    while (i < n) {
        int c = peek(s, n, i, &len, &cp);
        if (IS_WORD(c)) {
            prev = c;
            i += len;
            end = i;
            continue;
        }
        if (c == C_IGN && prev != C_SEP) {
            i += len;
            continue;
        }
        if (c == C_APOS && IS_WORD(prev)) {
            if (i + len < n && IS_WORD(peek(s, n, i + len, &len2, &cp))) {
                i += len;
                continue;
            }
            break;
        }
        if (c == C_COMMA && prev == C_DIGIT) {
            if (i + 1 < n && peek(s, n, i + 1, &len2, &cp) == C_DIGIT) {
                *joined = 1;
                i += len;
                continue;
            }
            break;
        }
        if (c == C_JOIN) {
            /* a run of joiners continues the compound only if a word
             * character follows; trailing underscores stay (foo_) */
            size_t j = i;
            while (j < n && (unsigned char)s[j] < 0x80 &&
                   ascii_class[(unsigned char)s[j]] == C_JOIN)
                j++;
            if (j < n && IS_WORD(peek(s, n, j, &len2, &cp))) {
                *joined = 1;
                prev = C_SEP;
                i = j;
                continue;
            }
            /* keep a trailing run of underscores */
            size_t k = i;
            while (k < j && s[k] == '_')
                k++;
            if (k > i && end == i) {
                end = k;
                *joined = 1;
            }
            break;
        }
        break;
    }
    if (end < a)
        end = a;
    return end;
}

static int do_compound(struct tok_ctx *ctx, const char *s, size_t a, size_t b,
                       int joined)
{
    size_t pos = a, pa, pb, m;
    int rc, nparts = 0;

    if (!joined) {
        /* one word: several parts only if case changes split it */
        while (next_part(s, b, &pos, &pa, &pb)) {
            if (++nparts > 1)
                break;
        }
        if (nparts <= 1) {
            m = fold(ctx, s, a, b, 1);
            return put(ctx, m, 1, a, b, 0);
        }
    }
    m = fold(ctx, s, a, b, 1);
    if (m == 0)
        return 0;
    rc = put(ctx, m, 0, a, b, 0);
    if (rc || ctx->for_query)
        return rc;
    pos = a;
    while (next_part(s, b, &pos, &pa, &pb)) {
        m = fold(ctx, s, pa, pb, 1);
        rc = put(ctx, m, 1, pa, pb, 1);
        if (rc)
            return rc;
    }
    /* A path also gives its file name whole, so a question that names
     * "tokenize.c" finds "src/text/tokenize.c". */
    const char *slash = memrchr(s + a, '/', b - a);
    if (slash && (size_t)(slash - s) + 1 < b) {
        size_t ba = (size_t)(slash - s) + 1;
        size_t q = ba, qa, qb;
        int np = 0;
        while (next_part(s, b, &q, &qa, &qb))
            np++;
        if (np > 1) {                   /* one part was emitted already */
            m = fold(ctx, s, ba, b, 1);
            rc = put(ctx, m, 0, ba, b, 1);
        }
    }
    return rc;
}

/* ---- the scanner ------------------------------------------------------- */

static int tok_run(struct tok_ctx *ctx, const char *s, size_t n)
{
    size_t i = 0, len, end, k;
    uint32_t cp;
    int rc = 0, joined;

    if (!s)
        return 0;
    while (i < n) {
        unsigned char c0 = (unsigned char)s[i];
        /* fast skip of ASCII separators */
        if (c0 < 0x80 && ascii_class[c0] == C_SEP) {
            i++;
            continue;
        }
        int c = peek(s, n, i, &len, &cp);
        if (c == C_CJK) {
            rc = do_cjk(ctx, s, n, i, &end);
            if (rc)
                return rc;
            i = end;
            continue;
        }
        if (IS_WORD(c)) {
            end = compound_end(s, n, i, &joined);
            rc = do_compound(ctx, s, i, end, joined);
            if (rc)
                return rc;
            i = end > i ? end : i + len;
            continue;
        }
        if (c == C_JOIN) {
            size_t skip;
            k = sigil_run(s, n, i, &skip);
            if (k == 0) {
                i += skip;
                continue;
            }
            end = compound_end(s, n, i + k, &joined);
            rc = do_compound(ctx, s, i, end, 1);
            if (rc)
                return rc;
            i = end;
            continue;
        }
        i += len;
    }
    return rc;
}

static int ctx_init(struct tok_ctx *ctx)
{
    ctx->cache = NULL;
    ctx->stem = stemmer_new();
    return ctx->stem ? 0 : -1;
}

int text_tokenize(const char *s, size_t n, int for_query,
                  text_token_cb cb, void *arg)
{
    struct tok_ctx *ctx = malloc(sizeof *ctx);
    int rc;

    if (!ctx)
        return -1;
    if (ctx_init(ctx)) {
        free(ctx);
        return -1;
    }
    ctx->for_query = for_query;
    ctx->emit = cb;
    ctx->arg = arg;
    rc = tok_run(ctx, s, n);
    stemmer_free(ctx->stem);
    free(ctx);
    return rc;
}

static int count_whole(void *arg, const char *tok, size_t n, size_t start, size_t end,
                       int colocated)
{
    (void)tok, (void)n, (void)start, (void)end;
    if (!colocated)
        (*(int *)arg)++;
    return 0;
}

/* put() emits once a token with or without ctx->stem: only its text
 * differs. The stemmer was a third of this count's time at ingest (and
 * its making and freeing a message). */
int text_count_words(const char *s, size_t n)
{
    struct tok_ctx *ctx = malloc(sizeof *ctx);
    int k = 0;

    if (!ctx)
        return -1;
    ctx->stem = NULL;
    ctx->cache = NULL;
    ctx->for_query = 1;
    ctx->emit = count_whole;
    ctx->arg = &k;
    tok_run(ctx, s, n);
    free(ctx);
    return k;
}

/* ---- recorded documents (text_record) ---------------------------------- */

struct text_tokenizer {
    struct tok_ctx ctx;
};

struct text_tokenizer *text_tokenizer_new(void)
{
    struct text_tokenizer *t = malloc(sizeof *t);
    if (!t)
        return NULL;
    if (ctx_init(&t->ctx)) {
        free(t);
        return NULL;
    }
    if (!(t->ctx.cache = calloc(STEM_SLOTS, sizeof *t->ctx.cache))) {
        stemmer_free(t->ctx.stem);
        free(t);
        return NULL;
    }
    return t;
}

void text_tokenizer_free(struct text_tokenizer *t)
{
    if (!t)
        return;
    stemmer_free(t->ctx.stem);
    free(t->ctx.cache);
    free(t);
}

void text_toks_free(struct text_toks *t)
{
    free(t->v);
    free(t->b);
    memset(t, 0, sizeof *t);
}

static int record_cb(void *arg, const char *tok, size_t n, size_t start, size_t end,
                     int colocated)
{
    struct text_toks *r = arg;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 1024;
        struct text_tok *v;
        if (r->n >= TEXT_TOKS_MAX || !(v = realloc(r->v, cap * sizeof *v)))
            return 1;
        r->v = v;
        r->cap = cap;
    }
    if (r->nb + n > r->capb) {
        size_t cap = r->capb ? 2 * r->capb : 8192;
        while (cap < r->nb + n)
            cap *= 2;
        char *b = realloc(r->b, cap);
        if (!b)
            return 1;
        r->b = b;
        r->capb = cap;
    }
    if (end > UINT32_MAX || r->nb + n > UINT32_MAX)
        return 1;
    r->v[r->n++] = (struct text_tok){ (uint32_t)r->nb, (uint32_t)n, (uint32_t)start,
                                      (uint32_t)end, colocated != 0 };
    memcpy(r->b + r->nb, tok, n);
    r->nb += n;
    r->words += !colocated;
    return 0;
}

int text_record(struct text_tokenizer *t, const char *s, size_t n, struct text_toks *out)
{
    out->n = out->nb = 0;
    out->words = 0;
    t->ctx.for_query = 0;
    t->ctx.emit = record_cb;
    t->ctx.arg = out;
    return tok_run(&t->ctx, s, n) ? -1 : 0;
}

/* ---- FTS5 glue --------------------------------------------------------- */

/* The FTS5 tokenizer instance: one context, reused by every xTokenize
 * call on this table and connection. busy guards against a nested call
 * (then a fresh context is made for it). */
struct fts_tok {
    int busy;
    const struct text_fts_tap *tap;   /* the user data; NULL: none */
    struct tok_ctx ctx;
};

struct fts_call {
    void *pCtx;
    int (*xToken)(void *, int, const char *, int, int, int);
    const struct text_fts_tap *tap;   /* set: a document's tokens to it too */
};

static int fts_emit(void *arg, const char *tok, size_t n, size_t start,
                    size_t end, int colocated)
{
    struct fts_call *fc = arg;
    return fc->xToken(fc->pCtx, colocated ? FTS5_TOKEN_COLOCATED : 0, tok, (int)n,
                      (int)start, (int)end);
}

static int fts_emit_tap(void *arg, const char *tok, size_t n, size_t start,
                        size_t end, int colocated)
{
    struct fts_call *fc = arg;
    fc->tap->cb(fc->tap->arg, tok, n, start, end, colocated);
    return fts_emit(arg, tok, n, start, end, colocated);
}

static int fts_create(void *pUserData, const char **azArg, int nArg,
                      Fts5Tokenizer **ppOut)
{
    struct fts_tok *t = sqlite3_malloc(sizeof *t);
    *ppOut = NULL;
    if (!t)
        return SQLITE_NOMEM;
    t->busy = 0;
    t->tap = pUserData;
    if (ctx_init(&t->ctx)) {
        sqlite3_free(t);
        return SQLITE_NOMEM;
    }
    *ppOut = (Fts5Tokenizer *)t;
    return SQLITE_OK;
}

static void fts_delete(Fts5Tokenizer *p)
{
    struct fts_tok *t = (struct fts_tok *)p;
    if (!t)
        return;
    stemmer_free(t->ctx.stem);
    sqlite3_free(t->ctx.cache);
    sqlite3_free(t);
}

static int fts_tokenize(Fts5Tokenizer *p, void *pCtx, int flags,
                        const char *pText, int nText,
                        int (*xToken)(void *, int, const char *, int, int, int))
{
    struct fts_tok *t = (struct fts_tok *)p;
    struct fts_call fc = { pCtx, xToken, NULL };
    struct tok_ctx *ctx = &t->ctx, *own = NULL;
    int rc;

    if (nText <= 0 || !pText)
        return SQLITE_OK;
    if (!(flags & FTS5_TOKENIZE_QUERY) && t->tap && t->tap->rtoks &&
        (size_t)nText == t->tap->rn && !memcmp(pText, t->tap->rtext, t->tap->rn)) {
        /* the document text_record made these tokens from */
        const struct text_toks *r = t->tap->rtoks;
        text_token_cb emit = fts_emit;
        if (t->tap->cb) {
            fc.tap = t->tap;
            emit = fts_emit_tap;
        }
        for (size_t i = 0; i < r->n; i++) {
            const struct text_tok *k = &r->v[i];
            if ((rc = emit(&fc, r->b + k->off, k->n, k->start, k->end, (int)k->colocated)))
                return rc;
        }
        return SQLITE_OK;
    }
    if (t->busy) {
        own = sqlite3_malloc(sizeof *own);
        if (!own)
            return SQLITE_NOMEM;
        if (ctx_init(own)) {
            sqlite3_free(own);
            return SQLITE_NOMEM;
        }
        ctx = own;
    }
    /* made at the first document (a reader's process never needs it);
     * without it only slower: a failed allocation is not an error */
    if (!own && !ctx->cache && !(flags & FTS5_TOKENIZE_QUERY)) {
        ctx->cache = sqlite3_malloc(STEM_SLOTS * sizeof *ctx->cache);
        if (ctx->cache)
            memset(ctx->cache, 0, STEM_SLOTS * sizeof *ctx->cache);
    }
    t->busy++;
    ctx->for_query = (flags & FTS5_TOKENIZE_QUERY) != 0;
    ctx->emit = fts_emit;
    if (!(flags & FTS5_TOKENIZE_QUERY) && t->tap && t->tap->cb) {
        fc.tap = t->tap;
        ctx->emit = fts_emit_tap;
    }
    ctx->arg = &fc;
    rc = tok_run(ctx, pText, (size_t)nText);
    t->busy--;
    if (own) {
        stemmer_free(own->stem);
        sqlite3_free(own);
    }
    return rc;
}

fts5_tokenizer *text_fts_tokenizer(void)
{
    static fts5_tokenizer tok = { fts_create, fts_delete, fts_tokenize };
    return &tok;
}

/* ---- page names (vault_docs.names) ---- */

static int name_tok(void *arg, const char *tok, size_t n, size_t start, size_t end, int coloc)
{
    struct buf *b = arg;
    if (coloc)
        return 0;
    if (b->n && b->p[b->n - 1] != '\n')
        buf_addc(b, ' ');
    buf_add(b, tok, n);
    return 0;
}

void text_name_tokens(const char *s, size_t n, struct buf *b)
{
    size_t at = b->n;
    text_tokenize(s, n, 1, name_tok, b);
    if (b->n > at)
        buf_addc(b, '\n');
}
