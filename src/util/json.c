/*
 * json.c: a JSON reader that builds cJSON trees and loses no text
 * (json.h says what it repairs and why).
 *
 * One pass, recursive descent, RFC 8259 grammar. Like cJSON it treats
 * every byte up to space as whitespace and skips a leading byte order
 * mark, so whatever cJSON_ParseWithLength accepted and stored faithfully
 * is accepted here with the same tree. Nodes are cJSON's own (made with
 * cJSON_Create*, strings malloc'd as cJSON's default hooks expect), so
 * the rest of the code reads and frees them as before.
 *
 * json_scan runs the same code with `skip` set: every value parses to one
 * static node and nothing is allocated or linked, so it finds where a
 * value ends, and fails at the same byte, at no cost in memory.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/utf8.h"

/* A double holds every integer up to 2^53 = 9007199254740992 (16 digits);
 * integers of 16 digits or more keep their text (json_number_text). */
#define EXACT_DIGITS 16

struct jp {
    const char *p, *end;
    int depth;
    int skip;                  /* json_scan: validate only, build nothing */
};

/* What every value is in skip mode; never written to. */
static cJSON skipped;

static cJSON *parse_value(struct jp *j);

static void drop(const struct jp *j, cJSON *c)
{
    if (!j->skip)
        cJSON_Delete(c);
}

static void skip_ws(struct jp *j)
{
    while (j->p < j->end && (unsigned char)*j->p <= ' ')
        j->p++;
}

static cJSON *new_node(const struct jp *j, int type)
{
    if (j->skip)
        return &skipped;
    cJSON *c = cJSON_CreateNull();
    if (c)
        c->type = type;
    return c;
}

static long hex4(const char *s, const char *end)
{
    long v = 0;
    if (end - s < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* The code point of a \u escape at r (after "\u"), joining a surrogate
 * pair; a NUL or half a pair becomes U+FFFD. Advances *r; -1 if bad. */
static long unicode_escape(const char **r, const char *end)
{
    long u = hex4(*r, end);
    if (u < 0)
        return -1;
    *r += 4;
    if (u >= 0xD800 && u <= 0xDBFF) {
        const char *s = *r;
        long lo = end - s >= 6 && s[0] == '\\' && s[1] == 'u' ? hex4(s + 2, end) : -1;
        if (lo < 0xDC00 || lo > 0xDFFF)
            return 0xFFFD;        /* the high half alone: the next escape stands */
        *r += 6;
        return 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
    }
    if ((u >= 0xDC00 && u <= 0xDFFF) || u == 0)
        return 0xFFFD;
    return u;
}

/* Decodes the string at j->p (on its opening quote) into a malloc'd C
 * string (in skip mode: checks its escapes, *out is NULL). Returns 0, or
 * -1 with j->p at the error. */
static int parse_string(struct jp *j, char **out)
{
    const char *s = j->p + 1, *q = s;
    size_t nul = 0;
    int esc = 0;
    while (q < j->end && *q != '"') {
        if (*q == '\\') {
            esc = 1;
            if (++q >= j->end)
                break;
        } else if (!*q) {
            nul++;
        }
        q++;
    }
    if (q >= j->end) {
        j->p = q;
        return -1;                   /* unterminated */
    }
    /* Escapes only shrink; a raw NUL grows to the 3 bytes of U+FFFD. */
    size_t raw = (size_t)(q - s);
    char scratch[8], *o = j->skip ? NULL : malloc(raw + 2 * nul + 1), *w = o;
    if (!o && !j->skip)
        return -1;
    if (o && !esc && !nul) {
        memcpy(o, s, raw);
        w += raw;
    }
    for (const char *r = s; (esc || (nul && o)) && r < q;) {
        unsigned char c = (unsigned char)*r++;
        if (!o)
            w = scratch;             /* skip mode: each step writes 4 bytes at most */
        if (!c) {
            w += utf8_encode(0xFFFD, w);
            continue;
        }
        if (c != '\\') {
            *w++ = (char)c;
            continue;
        }
        switch (*r++) {
        case '"':  *w++ = '"'; break;
        case '\\': *w++ = '\\'; break;
        case '/':  *w++ = '/'; break;
        case 'b':  *w++ = '\b'; break;
        case 'f':  *w++ = '\f'; break;
        case 'n':  *w++ = '\n'; break;
        case 'r':  *w++ = '\r'; break;
        case 't':  *w++ = '\t'; break;
        case 'u': {
            long u = unicode_escape(&r, q);
            if (u < 0)
                goto bad;
            w += utf8_encode((uint32_t)u, w);
            break;
        }
        default:
        bad:
            j->p = r - 1;
            free(o);
            return -1;
        }
    }
    if (o)
        *w = 0;
    *out = o;
    j->p = q + 1;
    return 0;
}

long json_string_decode(const char *p, const char *end, char *out, size_t cap,
                        const char **next)
{
    size_t n = 0;

    if (p >= end || *p++ != '"')
        return -1;
    while (p < end && *p != '"') {
        unsigned char c = (unsigned char)*p++;
        long cp;

        if (c < 0x20)
            return -1;
        if (c != '\\') {
            if (n >= cap)
                return -1;
            out[n++] = (char)c;
            continue;
        }
        if (p >= end)
            return -1;
        switch (c = (unsigned char)*p++) {
        case '"': case '\\': case '/': cp = c; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u':
            /* unicode_escape's rule, less its repairs: what it would
             * turn into U+FFFD (NUL, half a pair) is refused here */
            if ((cp = hex4(p, end)) <= 0 || (cp >= 0xDC00 && cp <= 0xDFFF))
                return -1;
            p += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                long lo = end - p >= 6 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2, end) : -1;
                if (lo < 0xDC00 || lo > 0xDFFF)
                    return -1;
                p += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            break;
        default:
            return -1;
        }
        if (cap - n < 4)
            return -1;
        n += utf8_encode((uint32_t)cp, out + n);
    }
    if (p >= end)
        return -1;
    if (next)
        *next = p + 1;
    return (long)n;
}

static int is_digit(const struct jp *j, const char *q)
{
    return q < j->end && *q >= '0' && *q <= '9';
}

static cJSON *parse_number(struct jp *j)
{
    const char *s = j->p, *q = s;
    int integer = 1;
    size_t digits = 0;
    if (q < j->end && *q == '-')
        q++;
    if (!is_digit(j, q))
        goto bad;
    if (*q == '0')
        q++, digits = 1;
    else
        while (is_digit(j, q))
            q++, digits++;
    if (q < j->end && *q == '.') {
        integer = 0;
        if (!is_digit(j, ++q))
            goto bad;
        while (is_digit(j, q))
            q++;
    }
    if (q < j->end && (*q == 'e' || *q == 'E')) {
        integer = 0;
        q++;
        if (q < j->end && (*q == '+' || *q == '-'))
            q++;
        if (!is_digit(j, q))
            goto bad;
        while (is_digit(j, q))
            q++;
    }
    if (j->skip) {
        j->p = q;
        return &skipped;
    }
    size_t len = (size_t)(q - s);
    char small[64], *tmp = len < sizeof small ? small : malloc(len + 1);
    if (!tmp)
        return NULL;
    memcpy(tmp, s, len);
    tmp[len] = 0;
    cJSON *c = cJSON_CreateNumber(strtod(tmp, NULL));
    if (c && integer && digits >= EXACT_DIGITS) {
        /* cJSON_Delete frees valuestring whatever the type */
        c->valuestring = tmp == small ? strdup(small) : tmp;
        tmp = NULL;
        if (!c->valuestring) {
            cJSON_Delete(c);
            c = NULL;
        }
    }
    if (tmp != small)
        free(tmp);
    j->p = q;
    return c;
bad:
    j->p = q;
    return NULL;
}

static cJSON *parse_literal(struct jp *j, const char *word, int type)
{
    size_t n = strlen(word);
    if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n))
        return NULL;
    j->p += n;
    return new_node(j, type);
}

/* An array or object, j->p on its opening bracket. */
static cJSON *parse_container(struct jp *j, int obj)
{
    const char close = obj ? '}' : ']';
    cJSON *c, *last = NULL;
    if (j->depth >= JSON_PARSE_MAX_DEPTH || !(c = new_node(j, obj ? cJSON_Object : cJSON_Array)))
        return NULL;
    j->depth++;
    j->p++;
    skip_ws(j);
    if (j->p < j->end && *j->p == close) {
        j->p++;
        goto done;
    }
    for (;;) {
        char *key = NULL;
        cJSON *v;
        if (obj) {
            skip_ws(j);
            if (j->p >= j->end || *j->p != '"' || parse_string(j, &key))
                goto fail;
            skip_ws(j);
            if (j->p >= j->end || *j->p != ':') {
                free(key);
                goto fail;
            }
            j->p++;
            skip_ws(j);
        }
        if (!(v = parse_value(j))) {
            free(key);
            goto fail;
        }
        if (!j->skip) {
            v->string = key;
            /* cJSON's list: next/prev, and the first item's prev is the last */
            if (last) {
                last->next = v;
                v->prev = last;
            } else {
                c->child = v;
            }
            last = v;
            c->child->prev = last;
        }
        skip_ws(j);
        if (j->p < j->end && *j->p == ',') {
            j->p++;
            skip_ws(j);
            continue;
        }
        if (j->p < j->end && *j->p == close) {
            j->p++;
            break;
        }
        goto fail;
    }
done:
    j->depth--;
    return c;
fail:
    drop(j, c);
    return NULL;
}

static cJSON *parse_value(struct jp *j)
{
    if (j->p >= j->end)
        return NULL;
    switch (*j->p) {
    case '{':
        return parse_container(j, 1);
    case '[':
        return parse_container(j, 0);
    case '"': {
        char *s;
        cJSON *c;
        if (parse_string(j, &s))
            return NULL;
        if (!(c = new_node(j, cJSON_String))) {
            free(s);
            return NULL;
        }
        if (!j->skip)
            c->valuestring = s;
        return c;
    }
    case 't':
        return parse_literal(j, "true", cJSON_True);
    case 'f':
        return parse_literal(j, "false", cJSON_False);
    case 'n':
        return parse_literal(j, "null", cJSON_NULL);
    default:
        return parse_number(j);
    }
}

/* json_parse and json_scan: one value, after a byte order mark and
 * whitespace; *first is its first byte (0 if none). */
static cJSON *parse_top(const char *p, size_t n, int skip, const char **end, char *first)
{
    struct jp j = { p, p + n, 0, skip };
    cJSON *v;
    *first = 0;
    if (!p) {
        if (end)
            *end = p;
        return NULL;
    }
    if (n >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
        j.p += 3;
    skip_ws(&j);
    if (j.p < j.end)
        *first = *j.p;
    v = parse_value(&j);
    /* like cJSON, an input that ends too soon is blamed on its last byte,
     * which is on the line the user wrote, not the empty one after it */
    if (!v && j.p == j.end && n)
        j.p = j.end - 1;
    if (end)
        *end = j.p;
    return v;
}

cJSON *json_parse(const char *p, size_t n, const char **end)
{
    char first;
    return parse_top(p, n, 0, end, &first);
}

int json_scan(const char *p, size_t n, const char **end)
{
    char first;
    if (!parse_top(p, n, 1, end, &first))
        return 0;
    switch (first) {
    case '{': return cJSON_Object;
    case '[': return cJSON_Array;
    case '"': return cJSON_String;
    case 't': return cJSON_True;
    case 'f': return cJSON_False;
    case 'n': return cJSON_NULL;
    default:  return cJSON_Number;
    }
}

const char *json_number_text(const cJSON *v, char *buf, size_t nb)
{
    double d = v->valuedouble;
    if (v->valuestring)
        return v->valuestring;
    if (d == floor(d) && fabs(d) < 9.2e18)      /* inside long long */
        snprintf(buf, nb, "%lld", (long long)d);
    else
        snprintf(buf, nb, "%.17g", d);
    return buf;
}

int json_decimal(const char *s, size_t n, double *v)
{
    /* 10^0 .. 10^22: the powers of ten a double holds exactly */
    static const double p10[] = { 1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                  1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                  1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22 };
    const char *p = s, *end = s + n;
    uint64_t m = 0;
    int neg = 0, sig = 0, e10 = 0, ok = 1;

    if (p < end && *p == '-') {
        neg = 1;
        p++;
    }
    if (p == end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' &&
                                            p[1] <= '9'))
        return -1;
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (m || *p != '0')
            sig++;
        if (sig > 19)              /* m would overflow: strtod */
            ok = 0;
        else
            m = m * 10 + (uint64_t)(*p - '0');
    }
    if (p < end && *p == '.') {
        p++;
        if (p == end || *p < '0' || *p > '9')
            return -1;
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            if (m || *p != '0')
                sig++;
            if (sig > 19)
                ok = 0;
            else {
                m = m * 10 + (uint64_t)(*p - '0');
                e10--;
            }
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        int eneg = 0, x = 0;
        p++;
        if (p < end && (*p == '+' || *p == '-'))
            eneg = *p++ == '-';
        if (p == end || *p < '0' || *p > '9')
            return -1;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (x < 100000)
                x = x * 10 + (*p - '0');
        e10 += eneg ? -x : x;
    }
    if (p != end)
        return -1;
    if (ok && m <= (UINT64_C(1) << 53) && e10 >= -22 && e10 <= 22) {
        double d = (double)m;      /* exact: m <= 2^53 */
        d = e10 < 0 ? d / p10[-e10] : d * p10[e10];
        *v = neg ? -d : d;
        return 0;
    }
    char small[64], *tmp = n < sizeof small ? small : malloc(n + 1);
    if (!tmp)
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    *v = strtod(tmp, NULL);
    if (tmp != small)
        free(tmp);
    return 0;
}
