/*
 * tokcount.c: the budget token counter (see tokcount.h, docs/TOKENS.md).
 *
 * A budget is a hard limit on a real model's context, so this counter
 * estimates what a byte-level BPE tokenizer (Claude's, cl100k, o200k)
 * would say and leans high: over-counting wastes a little budget,
 * under-counting overflows it. The text is cut into runs of one class
 * and each run costs by a fixed rule on its own bytes:
 *
 *   ASCII letters      1 token per TC_WORD letters, rounded up
 *   ASCII digits       1 token per 3 digits, rounded up (BPE groups <= 3)
 *   whitespace         a single space is free (BPE glues it to the next
 *                      word); any other run costs 1 per TC_WS bytes, at
 *                      least 1 ("\n", indentation)
 *   ASCII punctuation  TC_PUNCT_NUM / TC_PUNCT_DEN per character, rounded
 *                      up per run (BPE merges "()", "==", "://" often)
 *   CJK character      TC_CJK_NUM / TC_CJK_DEN per character, rounded up
 *                      per run, never below 1 per character
 *   other non-ASCII    1 token per TC_UNI_BYTES bytes, rounded up per run
 *                      (accented Latin, Cyrillic, emoji, curly quotes)
 *   control bytes      1 each, and so is each byte of invalid UTF-8
 *
 * The constants are tuned against real tokenizers on English prose,
 * English chat with code, and Chinese (tests/tools/tokcount-compare.js;
 * the figures are in docs/TOKENS.md). Because every run's cost depends
 * only on its own bytes and grows with its length, the cost of a text is
 * the sum over its runs, and a prefix cut at a run boundary (or inside a
 * run) costs exactly what text_count_tokens() says for it: that is what
 * makes text_prefix_within() consistent with the counter.
 */
#include "text/tokcount.h"

#include <limits.h>
#include <stdint.h>

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

/* How far back text_prefix_within() may go to end on whitespace. */
#define TC_WS_BACK    64

enum { K_CTRL, K_ALPHA, K_DIGIT, K_SPACE, K_PUNCT, K_CJK, K_UNI, K_BAD };

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
           (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0xAC00 && cp <= 0xD7AF) ||
           (cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0x3130 && cp <= 0x318F) ||
           (cp >= 0x31F0 && cp <= 0x31FF) || (cp >= 0xFF66 && cp <= 0xFF9F) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x3000 && cp <= 0x303F) ||
           (cp >= 0xFF00 && cp <= 0xFF65) ||     /* fullwidth forms, ，。！ */
           (cp >= 0x20000 && cp <= 0x3134F);
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
    return tc_is_cjk(cp) ? K_CJK : K_UNI;
}

/* Cost of a run of class k: len bytes, chars characters, first byte c. */
static size_t tc_cost(int k, size_t len, size_t chars, unsigned char c)
{
    switch (k) {
    case K_ALPHA:
        return (len + TC_WORD - 1) / TC_WORD;
    case K_DIGIT:
        return (len + 2) / 3;
    case K_SPACE:
        if (len == 1 && c == ' ')
            return 0;
        return (len + TC_WS - 1) / TC_WS;
    case K_PUNCT:
        return (len * TC_PUNCT_NUM + TC_PUNCT_DEN - 1) / TC_PUNCT_DEN;
    case K_CJK:
        return (chars * TC_CJK_NUM + TC_CJK_DEN - 1) / TC_CJK_DEN;
    case K_UNI:
        return (len + TC_UNI_BYTES - 1) / TC_UNI_BYTES;
    default:
        return len;
    }
}

/* Ends the run of class k starting at i; returns its end, *chars gets
 * its character count. */
static size_t tc_run(const char *s, size_t n, size_t i, int k, size_t *chars)
{
    size_t j = i, m = 0, len;

    if (k <= K_PUNCT) {
        /* ASCII classes: one byte per character */
        while (j < n && (unsigned char)s[j] < 0x80 &&
               tc_class[(unsigned char)s[j]] == k)
            j++;
        *chars = j - i;
        return j;
    }
    while (j < n && (unsigned char)s[j] >= 0x80 && tc_char(s, n, j, &len) == k) {
        j += len;
        m++;
    }
    *chars = m;
    return j;
}

int text_count_tokens(const char *s, size_t n)
{
    size_t i = 0, total = 0, chars, len;

    if (!s)
        return 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        int k = tc_char(s, n, i, &len);
        size_t j = tc_run(s, n, i, k, &chars);
        total += tc_cost(k, j - i, chars, c);
        if (total >= INT_MAX)
            return INT_MAX;
        i = j;
    }
    return (int)total;
}

size_t text_prefix_within(const char *s, size_t n, int max_tokens)
{
    size_t i = 0, total = 0, chars, len, ws = 0;
    int have_ws = 0;

    if (!s || max_tokens < 0)
        return 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        int k = tc_char(s, n, i, &len);
        size_t j = tc_run(s, n, i, k, &chars);
        size_t cost = tc_cost(k, j - i, chars, c);

        if (total + cost <= (size_t)max_tokens) {
            total += cost;
            if (k == K_SPACE) {
                ws = i;                 /* a cut here drops the space */
                have_ws = 1;
            }
            i = j;
            continue;
        }
        /* The run does not fit whole. Whitespace is never cut into: stop
         * before it. Otherwise take as many characters as fit. */
        size_t cut = i;
        if (k != K_SPACE) {
            size_t p = i, m = 0;
            while (p < j) {
                size_t q = p + 1;
                if (k > K_PUNCT) {
                    tc_char(s, n, p, &len);
                    q = p + len;
                }
                if (total + tc_cost(k, q - i, m + 1, c) > (size_t)max_tokens)
                    break;
                p = q;
                m++;
            }
            cut = p;
        }
        /* Prefer to end on whitespace when it costs little text. */
        if (have_ws && ws > 0 && cut - ws <= TC_WS_BACK)
            return ws;
        return cut;
    }
    return n;
}
