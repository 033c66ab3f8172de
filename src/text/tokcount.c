/*
 * tokcount.c: the budget token counter (see tokcount.h, docs/TOKENS.md).
 *
 * A budget is a hard limit on a real model's context, so this counter
 * estimates what a byte-level BPE tokenizer (Claude's, cl100k, o200k)
 * would say and leans high: over-counting wastes a little budget,
 * under-counting overflows it. The text is cut into runs of one class
 * and each run costs by a fixed rule on its own bytes:
 *
 *   Latin letters      a word: ASCII letters and the Latin letters beyond
 *                      ASCII (é ß ł ș), split before a capital that
 *                      follows a small letter (camelCase). A word with a
 *                      letter beyond ASCII costs TC_LAT_NUM/TC_LAT_DEN a
 *                      letter plus TC_LAT_ADD. An ASCII word costs 1 per
 *                      TC_WORD letters (English), but TC_FOREIGN_NUM /
 *                      TC_FOREIGN_DEN a letter when it is "hot" (one of
 *                      the TC_HEAT words after a word with accents: a
 *                      French, German, Polish text) or has TC_ODD
 *                      consonants in a row, and more when in capitals
 *   ASCII digits       1 token per 3 digits, rounded up (BPE groups <= 3)
 *   whitespace         a single space is free (BPE glues it to the next
 *                      word); any other run costs 1 per TC_WS bytes, at
 *                      least 1 ("\n", indentation), and a run with no
 *                      newline at least 1 a tab
 *   ASCII punctuation  TC_PUNCT_NUM / TC_PUNCT_DEN per character, rounded
 *                      up per run (BPE merges "()", "==", "://" often)
 *   CJK character      TC_CJK_NUM / TC_CJK_DEN per character (Han, kana),
 *                      TC_HANGUL_NUM / TC_HANGUL_DEN per Hangul syllable,
 *                      rounded up per run, never below 1 per character
 *   Cyrillic letter    TC_CYR_NUM / TC_CYR_DEN per letter
 *   other non-ASCII    1 token per TC_UNI_BYTES bytes, rounded up per run
 *                      (Greek, emoji, curly quotes, symbols)
 *   control bytes      1 each, and so is each byte of invalid UTF-8
 *
 * The constants are tuned against real tokenizers on English prose,
 * English chat with code, Chinese, and Debian's manual pages in French,
 * German, Spanish, Portuguese, Polish, Russian, Japanese and its Korean
 * FAQ (tests/tools/tokcount-compare.sh; the figures are in
 * docs/TOKENS.md). A run's cost depends only on its own bytes and on the
 * heat, which only the runs before it set; it grows with the run's
 * length. So the cost of a text is a sum taken left to right, and a
 * prefix cut at a run boundary (or inside a run) costs exactly what that
 * sum was there: that is what makes text_prefix_within() consistent with
 * the counter.
 */
#include "text/tokcount.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "util/utf8.h"

#ifndef TC_WORD
#define TC_WORD       6      /* ASCII letters per token */
#endif
#ifndef TC_WS
#define TC_WS         32     /* whitespace bytes per token (runs other than " ") */
#endif
#ifndef TC_PUNCT_NUM
#define TC_PUNCT_NUM  1      /* punctuation tokens per character ... */
#endif
#ifndef TC_PUNCT_DEN
#define TC_PUNCT_DEN  2      /* ... as a fraction */
#endif
#ifndef TC_CJK_NUM
#define TC_CJK_NUM    4      /* CJK tokens per character ... */
#endif
#ifndef TC_CJK_DEN
#define TC_CJK_DEN    3      /* ... as a fraction (>= 1) */
#endif
#ifndef TC_UNI_BYTES
#define TC_UNI_BYTES  2      /* other non-ASCII bytes per token */
#endif
#ifndef TC_LAT_NUM
#define TC_LAT_NUM    2      /* tokens per letter of a word with accents ... */
#endif
#ifndef TC_LAT_DEN
#define TC_LAT_DEN    3      /* ... as a fraction ... */
#endif
#ifndef TC_LAT_ADD
#define TC_LAT_ADD    1      /* ... plus this much a word */
#endif
#ifndef TC_HEAT
#define TC_HEAT       8      /* ASCII words after a word with accents that ... */
#endif
#ifndef TC_ODD
#define TC_ODD        4      /* consonants in a row no English word has */
#endif
#ifndef TC_CAPS
#define TC_CAPS       4      /* letters per token of a word in capitals ... */
#endif
#ifndef TC_CAPS_HOT
#define TC_CAPS_HOT   2      /* ... and of one in a hot text */
#endif
#ifndef TC_FOREIGN_NUM
#define TC_FOREIGN_NUM 2     /* ... cost this many tokens per letter ... */
#endif
#ifndef TC_FOREIGN_DEN
#define TC_FOREIGN_DEN 5     /* ... as a fraction */
#endif
#ifndef TC_CYR_NUM
#define TC_CYR_NUM    1      /* Cyrillic tokens per letter ... */
#endif
#ifndef TC_CYR_DEN
#define TC_CYR_DEN    1      /* ... as a fraction */
#endif
#ifndef TC_HANGUL_NUM
#define TC_HANGUL_NUM 3      /* Hangul tokens per syllable ... */
#endif
#ifndef TC_HANGUL_DEN
#define TC_HANGUL_DEN 2      /* ... as a fraction (>= 1) */
#endif

/* How far back text_prefix_within() may go to end on whitespace. */
#define TC_WS_BACK    64

enum { K_CTRL, K_ALPHA, K_DIGIT, K_SPACE, K_PUNCT, K_CJK, K_HANGUL, K_CYR, K_UNI, K_BAD };

/* ASCII classes, C control, A letter, D digit, S space, P punctuation. */
#define C K_CTRL
#define A K_ALPHA
#define D K_DIGIT
#define S K_SPACE
#define P K_PUNCT
static const unsigned char tc_class[128] = {
    C, C, C, C, C, C, C, C, C, S, S, S, S, S, C, C,
    C, C, C, C, C, C, C, C, C, C, C, C, C, C, C, C,
    S, P, P, P, P, P, P, P, P, P, P, P, P, P, P, P,
    D, D, D, D, D, D, D, D, D, D, P, P, P, P, P, P,
    P, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A,
    A, A, A, A, A, A, A, A, A, A, A, P, P, P, P, P,
    P, A, A, A, A, A, A, A, A, A, A, A, A, A, A, A,
    A, A, A, A, A, A, A, A, A, A, A, P, P, P, P, C,
};
#undef C
#undef A
#undef D
#undef S
#undef P

static int tc_is_cjk(uint32_t cp)
{
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) ||
           (cp >= 0x3040 && cp <= 0x30FF) ||
           (cp >= 0x31F0 && cp <= 0x31FF) || (cp >= 0xFF66 && cp <= 0xFF9F) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x3000 && cp <= 0x303F) ||
           (cp >= 0xFF00 && cp <= 0xFF65) ||     /* fullwidth forms, ，。！ */
           (cp >= 0x20000 && cp <= 0x3134F);
}

static int tc_is_hangul(uint32_t cp)
{
    return (cp >= 0xAC00 && cp <= 0xD7AF) || (cp >= 0x1100 && cp <= 0x11FF) ||
           (cp >= 0x3130 && cp <= 0x318F);
}

/* A letter of the Latin script beyond ASCII (Latin-1 and Extended-A/B,
 * Extended Additional): é, ß, ł, ș, ạ. It joins the ASCII letters around
 * it in one word. */
static int tc_is_latin(uint32_t cp)
{
    return (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) ||
           (cp >= 0x1E00 && cp <= 0x1EFF);
}

/* Class and byte length of the character at s[i]. Invalid bytes are
 * K_BAD, one byte each (a byte-level BPE spends a token on each). */
static int tc_char(const char *s, size_t n, size_t i, size_t *len)
{
    unsigned char c = (unsigned char)s[i];
    uint32_t cp;

    if (c < 0x80) {
        *len = 1;
        return tc_class[c];
    }
    *len = utf8_decode(s + i, n - i, &cp);
    if (*len == 1)
        return K_BAD;
    if (tc_is_latin(cp))
        return K_ALPHA;
    if (cp >= 0x400 && cp <= 0x52F)
        return K_CYR;
    if (tc_is_hangul(cp))
        return K_HANGUL;
    return tc_is_cjk(cp) ? K_CJK : K_UNI;
}

/* A run being measured: its class, first byte, bytes, characters, how
 * many of those are beyond ASCII (wide), and for ASCII letters the shape
 * of the word: the current streak of consonants, whether one streak
 * reached TC_ODD, whether every letter so far is a capital. */
struct tc_span {
    int k;
    unsigned char c;
    size_t len, chars, wide, streak;
    size_t tabs, newlines;      /* whitespace */
    int odd, caps;
};

static void tc_span_start(struct tc_span *r, int k, unsigned char c)
{
    memset(r, 0, sizeof *r);
    r->k = k;
    r->c = c;
    r->caps = 1;
}

/* Adds the character of clen bytes whose first byte is b. */
static void tc_span_add(struct tc_span *r, unsigned char b, size_t clen)
{
    r->len += clen;
    r->chars++;
    if (b >= 0x80) {
        r->wide++;
        r->streak = 0;
        r->caps = 0;
        return;
    }
    if (r->k != K_ALPHA)
        return;
    if (b >= 'a')
        r->caps = 0;
    /* vowels a e i o u y, as bits of (letter | 0x20) - 'a' */
    if ((0x1104111u >> (((unsigned)b | 0x20) - 'a')) & 1) {
        r->streak = 0;
    } else if (++r->streak >= TC_ODD) {
        r->odd = 1;
    }
}

/* Cost of an ASCII word. BPE has most English words up to TC_WORD letters
 * whole; it cuts a word of another language into pieces of 2-3 letters,
 * and so a word in a text around accents (hot), a word no English word
 * looks like (a streak of TC_ODD consonants: "fixdlsrps",
 * "Übersetzungsfehler"), and a word in capitals ("BESCHREIBUNG"), more so
 * in a text around accents. */
static size_t tc_word(const struct tc_span *r, int hot)
{
    size_t cost = (r->len + TC_WORD - 1) / TC_WORD, x;

    if (hot || r->odd) {
        x = (r->len * TC_FOREIGN_NUM + TC_FOREIGN_DEN - 1) / TC_FOREIGN_DEN;
        cost = x > cost ? x : cost;
    }
    if (r->caps && r->len > 1) {
        size_t per = hot ? TC_CAPS_HOT : TC_CAPS;
        x = (r->len + per - 1) / per;
        cost = x > cost ? x : cost;
    }
    return cost;
}

/* Cost of a run; hot after a word with accents. */
static size_t tc_cost(const struct tc_span *r, int hot)
{
    size_t len = r->len, chars = r->chars;

    switch (r->k) {
    case K_ALPHA:
        if (r->wide)    /* not an English word: BPE splits it finer */
            return (chars * TC_LAT_NUM + TC_LAT_DEN - 1) / TC_LAT_DEN + TC_LAT_ADD;
        return tc_word(r, hot);
    case K_DIGIT:
        return (len + 2) / 3;
    case K_SPACE:
        if (len == 1 && r->c == ' ')
            return 0;
        /* between words on a line, BPE spends a token on each tab
         * (columns of a table); indentation after a newline is cheap */
        if (!r->newlines && r->tabs > (len + TC_WS - 1) / TC_WS)
            return r->tabs;
        return (len + TC_WS - 1) / TC_WS;
    case K_PUNCT:
        return (len * TC_PUNCT_NUM + TC_PUNCT_DEN - 1) / TC_PUNCT_DEN;
    case K_CJK:
        return (chars * TC_CJK_NUM + TC_CJK_DEN - 1) / TC_CJK_DEN;
    case K_HANGUL:
        return (chars * TC_HANGUL_NUM + TC_HANGUL_DEN - 1) / TC_HANGUL_DEN;
    case K_CYR:
        return (chars * TC_CYR_NUM + TC_CYR_DEN - 1) / TC_CYR_DEN;
    case K_UNI:
        return (len + TC_UNI_BYTES - 1) / TC_UNI_BYTES;
    default:
        return len;
    }
}

/* Common words of French, German, Spanish, Portuguese and Polish that
 * are no English word (nor a common identifier: "die", "do", "os", "del",
 * "com" are left out): one of them makes the text around it hot, as a
 * word with accents does. Each is its letters packed little-endian with
 * its length in the top byte (tc_fkey), sorted for a binary search;
 * test_tokcount checks the table against the words. */
static const uint64_t tc_fwords[] = {
    0x020000000000657aull /* ze */,
    0x0200000000006f61ull /* ao */,
    0x0200000000007561ull /* au */,
    0x020000000000756full /* ou */,
    0x020000000000757aull /* zu */,
    0x0300000000616c64ull /* dla */,
    0x0300000000616d75ull /* uma */,
    0x0300000000616e75ull /* una */,
    0x030000000062756cull /* lub */,
    0x0300000000646e75ull /* und */,
    0x030000000065696eull /* nie */,
    0x0300000000656973ull /* sie */,
    0x0300000000656e75ull /* une */,
    0x0300000000667561ull /* auf */,
    0x0300000000686369ull /* ich */,
    0x0300000000696562ull /* bei */,
    0x0300000000697571ull /* qui */,
    0x03000000006b616aull /* jak */,
    0x03000000006b6174ull /* tak */,
    0x03000000006d6f76ull /* vom */,
    0x03000000006d757aull /* zum */,
    0x03000000006e6965ull /* ein */,
    0x0300000000726564ull /* der */,
    0x0300000000727573ull /* sur */,
    0x030000000072757aull /* zur */,
    0x0300000000736164ull /* das */,
    0x030000000073616cull /* las */,
    0x0300000000736564ull /* des */,
    0x030000000073656cull /* les */,
    0x0300000000736f6cull /* los */,
    0x030000000074696dull /* mit */,
    0x0300000000747365ull /* est */,
    0x0300000000747369ull /* ist */,
    0x0300000000797a63ull /* czy */,
    0x04000000616c6570ull /* pela */,
    0x0400000061726170ull /* para */,
    0x0400000061747365ull /* esta */,
    0x0400000063657661ull /* avec */,
    0x0400000064726977ull /* wird */,
    0x04000000656c6c65ull /* elle */,
    0x04000000656e6965ull /* eine */,
    0x0400000065747365ull /* este */,
    0x040000006863616eull /* nach */,
    0x0400000068636973ull /* sich */,
    0x0400000068637561ull /* auch */,
    0x040000006e6e616bull /* kann */,
    0x040000006e6e6577ull /* wenn */,
    0x040000006f6b616aull /* jako */,
    0x040000006f6c6570ull /* pelo */,
    0x040000006f6d6f63ull /* como */,
    0x040000006f726570ull /* pero */,
    0x040000007265646full /* oder */,
    0x040000007275656cull /* leur */,
    0x04000000736e6164ull /* dans */,
    0x04000000746e6f73ull /* sont */,
    0x040000007473656aull /* jest */,
    0x0400000074756570ull /* peut */,
    0x040000007a61726full /* oraz */,
    0x0500006564657570ull /* puede */,
    0x0500006573656964ull /* diese */,
    0x0500006574746563ull /* cette */,
    0x0500006e656e6965ull /* einen */,
    0x050000746863696eull /* nicht */,
    0x0500007a657a7270ull /* przez */,
    0x06006e6564726577ull /* werden */,
    0x0600726573656964ull /* dieser */,
};

/* The key of the ASCII word w[0..len), 1 <= len <= 7, its first letter
 * folded to small. */
static uint64_t tc_fkey(const char *w, size_t len)
{
    uint64_t k = (uint64_t)len << 56;
    for (size_t i = 0; i < len; i++)
        k |= (uint64_t)(unsigned char)(i ? w[i] : w[i] | 0x20) << (8 * i);
    return k;
}

/* Is the ASCII word w[0..len) (its first letter in either case) one of
 * tc_fwords? */
static int tc_fword(const char *w, size_t len)
{
    size_t lo = 0, hi = sizeof tc_fwords / sizeof tc_fwords[0];

    if (len < 2 || len > 6)
        return 0;
    uint64_t k = tc_fkey(w, len);
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (tc_fwords[mid] == k)
            return 1;
        if (tc_fwords[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The heat after a run: a word with accents, or one of tc_fwords, says
 * the text around it is not English, and the next TC_HEAT ASCII words
 * are costed as such. word is the run's text. */
static int tc_heat(int heat, const struct tc_span *r, const char *word)
{
    if (r->k != K_ALPHA)
        return heat;
    if (r->wide || tc_fword(word, r->len))
        return TC_HEAT;
    return heat > 0 ? heat - 1 : 0;
}

/* Where the next character, at s[j] (len bytes, class k), ends the run
 * s[i..j) of class k: another class, or a capital after a small letter
 * (camelCase: BPE takes "rateLimitPerMinute" a word at a time). */
static int tc_breaks(const char *s, size_t i, size_t j, int k, int kj)
{
    return kj != k || (k == K_ALPHA && j > i && s[j] >= 'A' && s[j] <= 'Z' &&
                       s[j - 1] >= 'a' && s[j - 1] <= 'z');
}

/* tc_span_add() over the ASCII letters from s[j] on, in a tight loop
 * (most of any text); returns where they end or the run breaks. */
static size_t tc_ascii_letters(const char *s, size_t n, size_t i, size_t j, struct tc_span *r)
{
    size_t streak = r->streak, start = j;
    int odd = r->odd, caps = r->caps;

    for (; j < n; j++) {
        unsigned b = (unsigned char)s[j];
        if (b >= 0x80 || tc_class[b] != K_ALPHA)
            break;
        if (b <= 'Z') {
            if (j > i && s[j - 1] >= 'a' && s[j - 1] <= 'z')
                break;                  /* camelCase */
        } else {
            caps = 0;
        }
        if ((0x1104111u >> ((b | 0x20) - 'a')) & 1)
            streak = 0;
        else if (++streak >= TC_ODD)
            odd = 1;
    }
    r->len += j - start;
    r->chars += j - start;
    r->streak = streak;
    r->odd = odd;
    r->caps = caps;
    return j;
}

/* Measures the run of class k starting at i into *r; returns its end. */
static size_t tc_run(const char *s, size_t n, size_t i, int k, struct tc_span *r)
{
    size_t j = i, len;

    tc_span_start(r, k, (unsigned char)s[i]);
    if (k != K_ALPHA && k <= K_PUNCT) {
        /* other ASCII classes: one byte a character */
        while (j < n && (unsigned char)s[j] < 0x80 && tc_class[(unsigned char)s[j]] == k) {
            r->tabs += s[j] == '\t';
            r->newlines += s[j] == '\n';
            j++;
        }
        r->len = r->chars = j - i;
        return j;
    }
    for (;;) {
        if (k == K_ALPHA)
            j = tc_ascii_letters(s, n, i, j, r);
        if (j >= n || tc_breaks(s, i, j, k, tc_char(s, n, j, &len)))
            return j;
        tc_span_add(r, (unsigned char)s[j], len);
        j += len;
    }
}

int text_count_tokens(const char *s, size_t n)
{
    size_t i = 0, total = 0, len;
    int heat = 0;
    struct tc_span r;

    if (!s)
        return 0;
    while (i < n) {
        int k = tc_char(s, n, i, &len);
        size_t j = tc_run(s, n, i, k, &r);
        total += tc_cost(&r, heat > 0);
        heat = tc_heat(heat, &r, s + i);
        if (total >= INT_MAX)
            return INT_MAX;
        i = j;
    }
    return (int)total;
}

int text_count_tokens_memo(struct tc_memo *m, const char *s, size_t n)
{
    char key[TC_MEMO_LEN];
    if (!s || n == 0 || n > TC_MEMO_LEN)
        return text_count_tokens(s, n);
    for (size_t i = 0; i < n; i++)
        key[i] = s[i] >= '0' && s[i] <= '9' ? '0' : s[i];
    for (int j = 0; j < TC_MEMO; j++)
        if (m->e[j].len == n && memcmp(m->e[j].key, key, n) == 0)
            return m->e[j].cost;
    /* the shape itself is counted: what is kept is its count, whichever
     * text of the shape came first */
    int c = text_count_tokens(key, n);
    unsigned j = m->next++ % TC_MEMO;
    m->e[j].len = (unsigned char)n;
    m->e[j].cost = c;
    memcpy(m->e[j].key, key, n);
    return c;
}

/* How much of the run s[i..j) of class k fits in room tokens: the end of
 * its longest prefix that does, on a character boundary. The prefix is
 * measured as text_count_tokens() measures it when it ends the text. */
static size_t tc_cut_run(const char *s, size_t n, size_t i, size_t j, int k, int hot,
                         size_t room)
{
    size_t p = i, len;
    struct tc_span r, next;

    tc_span_start(&r, k, (unsigned char)s[i]);
    while (p < j) {
        tc_char(s, n, p, &len);
        next = r;
        tc_span_add(&next, (unsigned char)s[p], len);
        if (tc_cost(&next, hot) > room)
            break;
        r = next;
        p += len;
    }
    return p;
}

size_t text_prefix_within(const char *s, size_t n, int max_tokens)
{
    size_t i = 0, total = 0, len, ws = 0;
    int have_ws = 0, heat = 0;
    struct tc_span r;

    if (!s || max_tokens < 0)
        return 0;
    while (i < n) {
        int k = tc_char(s, n, i, &len);
        size_t j = tc_run(s, n, i, k, &r);
        size_t cost = tc_cost(&r, heat > 0);

        if (total + cost <= (size_t)max_tokens) {
            total += cost;
            heat = tc_heat(heat, &r, s + i);
            if (k == K_SPACE) {
                ws = i;                 /* a cut here drops the space */
                have_ws = 1;
            }
            i = j;
            continue;
        }
        /* The run does not fit whole. Whitespace is never cut into: stop
         * before it. Otherwise take as many characters as fit. */
        size_t cut = k == K_SPACE ? i : tc_cut_run(s, n, i, j, k, heat > 0,
                                                  (size_t)max_tokens - total);
        /* Prefer to end on whitespace when it costs little text. */
        if (have_ws && ws > 0 && cut - ws <= TC_WS_BACK)
            return ws;
        return cut;
    }
    return n;
}
