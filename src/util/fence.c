/*
 * fence.c: fencing remembered text (fence.h says what and why).
 *
 * The scan is one pass over the text. Plain ASCII other than '<' is
 * copied in runs; at a '<' or a look-alike of it, names_fence() reads on
 * (skipping what a reader would not see, and at most FENCE_LOOKAHEAD
 * code points) to decide whether what follows reads as the fence's tag.
 * Each look-ahead stops at the next '<' or look-alike (they fold to no
 * letter), so the whole scan stays linear in the text.
 *
 * Only the fence's own tag name is escaped, not every '<': code and
 * prose keep their "a < b" and "<div>" verbatim. The name is matched on
 * letters alone ("pastconversation": dashes, dots, underscores, spaces
 * and invisible characters between them are skipped), after folding
 * case, compatibility forms (full-width, mathematical, ligatures,
 * circled letters: Unicode NFKC through utf8proc) and the Cyrillic,
 * Greek and Latin small-capital letters that look like the name's.
 */
#include <stdint.h>
#include <string.h>
#include <utf8proc.h>

#include "util/buf.h"
#include "util/fence.h"
#include "util/utf8.h"

/* The letters a fence tag is recognised by: a prefix of
 * "pastconversations", so the singular counts too. */
static const char FENCE_NAME[] = "pastconversation";
#define FENCE_NAME_LEN (sizeof FENCE_NAME - 1)
/* A tag name that has not been decided within this many code points
 * after its '<' is escaped: nobody writes a real one that long, and the
 * bound keeps one look-ahead short whatever the text holds. */
#define FENCE_LOOKAHEAD 256

static const char REPLACEMENT[] = "\xEF\xBF\xBD";    /* U+FFFD */

/* '<' and what renders like it (Unicode confusables of '<', the
 * compatibility forms NFKC maps to it, angle brackets). */
static int lt_like(uint32_t c)
{
    switch (c) {
    case 0x3C: case 0xAB: case 0x2C2: case 0x1438: case 0x2039: case 0x2329: case 0x276C:
    case 0x276E: case 0x2770: case 0x27E8: case 0x27EA: case 0x29FC: case 0x3008: case 0x300A:
    case 0xFE64: case 0xFF1C: case 0x1D1C: case 0x16B3A:
        return 1;
    }
    return 0;
}

static int slash_like(uint32_t c)
{
    switch (c) {
    case 0x2F: case 0x5C: case 0x2044: case 0x2215: case 0x2216: case 0x2571: case 0x27CB:
    case 0x29F5: case 0x29F8: case 0x29F9: case 0x3033: case 0xFE68: case 0xFF0F: case 0xFF3C:
        return 1;
    }
    return 0;
}

/* What a reader does not see, or reads past: whitespace, controls,
 * format characters (zero-width, bidi), combining marks and the other
 * default-ignorable code points. */
static int invisible(uint32_t c)
{
    if (c < 0x80)
        return c <= 0x20 || c == 0x7F;
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_ZS: case UTF8PROC_CATEGORY_ZL: case UTF8PROC_CATEGORY_ZP:
    case UTF8PROC_CATEGORY_CC: case UTF8PROC_CATEGORY_CF: case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_ME:
        return 1;
    default:
        break;
    }
    return c == 0x2800 || utf8proc_get_property((utf8proc_int32_t)c)->ignorable;
}

/* Between the name's letters: any dash or connector, dots, colons. */
static int separator(uint32_t c)
{
    if (c < 0x80)
        return c == '-' || c == '_' || c == '.' || c == ':';
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return k == UTF8PROC_CATEGORY_PD || k == UTF8PROC_CATEGORY_PC || c == 0xB7 ||
           c == 0x2027 || c == 0x2212 || c == 0x2219 || c == 0x22C5 || c == 0x30FB ||
           c == 0xFF0E || c == 0xFF1A;
}

/* Letters of other scripts that look like the Latin letters of the
 * name (from Unicode's confusables), lower and upper case. */
static char homoglyph(uint32_t c)
{
    static const struct { uint32_t cp; char to; } map[] = {
        { 0x0131, 'i' }, { 0x0251, 'a' }, { 0x026A, 'i' }, { 0x0274, 'n' }, { 0x0280, 'r' },
        { 0x0391, 'a' }, { 0x0395, 'e' }, { 0x0399, 'i' }, { 0x039D, 'n' }, { 0x039F, 'o' },
        { 0x03A1, 'p' }, { 0x03A4, 't' }, { 0x03B1, 'a' }, { 0x03B5, 'e' }, { 0x03B7, 'n' },
        { 0x03B9, 'i' }, { 0x03BD, 'v' }, { 0x03BF, 'o' }, { 0x03C1, 'p' }, { 0x03C4, 't' },
        { 0x03F2, 'c' }, { 0x03F9, 'c' }, { 0x0405, 's' }, { 0x0406, 'i' }, { 0x0410, 'a' },
        { 0x0415, 'e' }, { 0x041E, 'o' }, { 0x0420, 'p' }, { 0x0421, 'c' }, { 0x0422, 't' },
        { 0x0430, 'a' }, { 0x0433, 'r' }, { 0x0435, 'e' }, { 0x043E, 'o' }, { 0x043F, 'n' },
        { 0x0440, 'p' }, { 0x0441, 'c' }, { 0x0442, 't' }, { 0x0455, 's' }, { 0x0456, 'i' },
        { 0x0474, 'v' }, { 0x0475, 'v' }, { 0x0578, 'n' }, { 0x0585, 'o' }, { 0x1D04, 'c' },
        { 0x1D07, 'e' }, { 0x1D0F, 'o' }, { 0x1D18, 'p' }, { 0x1D1B, 't' }, { 0x1D20, 'v' },
        { 0xA731, 's' },
    };
    size_t lo = 0, hi = sizeof map / sizeof map[0];
    while (lo < hi) {                       /* the table is sorted */
        size_t mid = (lo + hi) / 2;
        if (map[mid].cp == c)
            return map[mid].to;
        if (map[mid].cp < c)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

/* The ASCII lower-case letters c reads as, into out (at most cap);
 * returns how many, 0 if c is not letters. */
static int fold(uint32_t c, char *out, int cap)
{
    utf8proc_int32_t d[8];
    int last = 0, k = 0;
    if (c < 0x80) {
        if (!((c | 0x20) >= 'a' && (c | 0x20) <= 'z'))
            return 0;
        out[0] = (char)(c | 0x20);
        return 1;
    }
    if ((out[0] = homoglyph(c)))
        return 1;
    utf8proc_ssize_t nd = utf8proc_decompose_char((utf8proc_int32_t)c, d, 8,
                                                  UTF8PROC_COMPAT | UTF8PROC_DECOMPOSE |
                                                  UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK,
                                                  &last);
    if (nd <= 0 || nd > 8 || (nd == 1 && (uint32_t)d[0] == c))
        return 0;
    for (utf8proc_ssize_t i = 0; i < nd && k < cap; i++) {
        uint32_t x = (uint32_t)d[i];
        char l = x < 0x80 && (x | 0x20) >= 'a' && (x | 0x20) <= 'z' ? (char)(x | 0x20)
                                                                 : homoglyph(x);
        if (!l)
            return 0;
        out[k++] = l;
    }
    return k;
}

/* 1 if s[i..n), just after a '<' or look-alike, reads as the fence tag:
 * slashes, separators and invisible characters anywhere, then the
 * letters of FENCE_NAME. */
static int names_fence(const char *s, size_t n, size_t i)
{
    size_t matched = 0;
    for (int steps = 0; i < n && matched < FENCE_NAME_LEN; steps++) {
        uint32_t c;
        char f[8];
        if (steps == FENCE_LOOKAHEAD)
            return 1;
        i += utf8_decode(s + i, n - i, &c);
        if (invisible(c) || separator(c) || (matched == 0 && slash_like(c)))
            continue;
        int nf = fold(c, f, (int)sizeof f);
        if (!nf)
            return 0;
        for (int j = 0; j < nf && matched < FENCE_NAME_LEN; j++)
            if (f[j] != FENCE_NAME[matched++])
                return 0;
    }
    return matched == FENCE_NAME_LEN;
}

long fence_escape(struct buf *out, const char *s, size_t n)
{
    long hits = 0;
    size_t i = 0, run = 0;      /* s[run..i) is copied as it is */
    while (i < n) {
        unsigned char b = (unsigned char)s[i];
        if (b < 0x80 && b != '<' && b != 0) {
            i++;
            continue;
        }
        uint32_t c;
        size_t k = utf8_decode(s + i, n - i, &c);
        const char *rep = NULL;
        if (b == 0 || (c == 0xFFFD && k == 1))
            rep = REPLACEMENT;
        else if (lt_like(c) && names_fence(s, n, i + k))
            rep = "&lt;";
        if (rep) {
            buf_add(out, s + run, i - run);
            buf_adds(out, rep);
            hits += rep[0] == '&';
            run = i + k;
        }
        i += k;
    }
    buf_add(out, s + run, n - run);
    return out->err ? -1 : hits;
}

int fence_wrap(struct buf *out, const char *intro, const char *text, size_t n)
{
    if (intro && *intro) {
        buf_adds(out, intro);
        buf_addc(out, '\n');
    }
    buf_adds(out, FENCE_OPEN "\n");
    fence_escape(out, text, n);
    if (n && text[n - 1] != '\n')
        buf_addc(out, '\n');
    buf_adds(out, FENCE_CLOSE);
    return out->err;
}

/* Bidi embeddings, overrides and isolates: they reorder what a terminal
 * shows of the rest of the line. */
static int bidi_control(uint32_t c)
{
    return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

static int line_break_or_control(uint32_t c)
{
    if (c < 0x80)
        return c < 0x20 || c == 0x7F || c == ' ';
    utf8proc_category_t k = utf8proc_category((utf8proc_int32_t)c);
    return k == UTF8PROC_CATEGORY_CC || k == UTF8PROC_CATEGORY_ZS ||
           k == UTF8PROC_CATEGORY_ZL || k == UTF8PROC_CATEGORY_ZP;
}

int fence_line_plain(const char *s, size_t n)
{
    if (n && (s[0] == ' ' || s[n - 1] == ' '))
        return 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        if (b >= 0x7F || b == '<' || (b < 0x21 && (b != ' ' || s[i + 1] == ' ')))
            return 0;
    }
    return 1;
}

int fence_line(struct buf *out, const char *s, size_t n)
{
    struct buf line;
    int space = 0;
    if (fence_line_plain(s, n)) {       /* most names: nothing to do */
        buf_add(out, s, n);
        return out->err;
    }
    buf_init(&line, out->cap);
    for (size_t i = 0; i < n;) {
        uint32_t c;
        size_t k = utf8_decode(s + i, n - i, &c);
        if (line_break_or_control(c)) {
            space = line.n > 0;             /* none at the start */
        } else if (!bidi_control(c)) {
            if (space)
                buf_addc(&line, ' ');
            space = 0;
            if (c == 0xFFFD && k == 1)
                buf_adds(&line, REPLACEMENT);
            else
                buf_add(&line, s + i, k);
        }
        i += k;
    }
    if (line.err)
        out->err = out->err ? out->err : line.err;
    else
        fence_escape(out, line.p, line.n);
    buf_release(&line);
    return out->err;
}
