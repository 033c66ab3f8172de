/*
 * spans.c: the answer-text metric. A question's spans are short verbatim
 * pieces of its evidence that hold the answer; one counts as present when
 * it appears in the packed text (cairn_recall's `text`, what a model
 * reads) after both are normalised:
 *
 *  - white space: every run of white space (ASCII space, tab, newline,
 *    carriage return, form feed, vertical tab, and Unicode space
 *    separators such as U+00A0) becomes one space, none at the ends, so
 *    a span copied across a line break still matches;
 *  - case: every code point is lowercased (utf8proc's simple mapping, so
 *    "É" matches "é", not only ASCII); invalid UTF-8 bytes are kept as
 *    they are.
 *
 * Nothing else is changed: no accent stripping, no punctuation folding,
 * no Unicode normalisation, so a span is only found when its words come
 * back as written.
 */
#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#include "eval.h"

static int is_space(utf8proc_int32_t cp)
{
    return cp == ' ' || (cp >= '\t' && cp <= '\r') ||
           utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS;
}

/* s normalised into a new NUL-terminated string, or NULL (out of memory).
 * Lowercasing can lengthen a code point (at most to 4 bytes, from 1). */
static char *normalise(const char *s, size_t n)
{
    char *out = malloc(n * 4 + 1), *o = out;
    int pending = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate((const utf8proc_uint8_t *)s + i,
                                              (utf8proc_ssize_t)(n - i), &cp);
        if (k < 1) {                  /* an invalid byte: kept, not a space */
            if (pending && o > out)
                *o++ = ' ';
            pending = 0;
            *o++ = s[i++];
            continue;
        }
        i += (size_t)k;
        if (is_space(cp)) {
            pending = 1;
            continue;
        }
        if (pending && o > out)
            *o++ = ' ';
        pending = 0;
        o += utf8proc_encode_char(utf8proc_tolower(cp), (utf8proc_uint8_t *)o);
    }
    *o = '\0';
    return out;
}

long eval_spans_found(const char *text, const char *const *spans, size_t n)
{
    char *t = normalise(text ? text : "", text ? strlen(text) : 0);
    long found = 0;
    if (!t)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char *sp = normalise(spans[i], strlen(spans[i]));
        if (!sp) {
            found = -1;
            break;
        }
        /* a span of nothing but white space is empty: never present */
        found += *sp && strstr(t, sp);
        free(sp);
    }
    free(t);
    return found;
}
