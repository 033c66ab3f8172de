/*
 * private.c: removing <private> spans (the rule is in private.h).
 *
 * The scan stops only at '<' (memchr), so text without tags costs one
 * memchr pass. Tags are matched by hand rather than with PCRE2: the
 * grammar is tiny, and nesting needs a depth count a regex cannot keep.
 */
#include "mask/private.h"

#include <string.h>

enum { TAG_NONE, TAG_OPEN, TAG_SELF, TAG_CLOSE };

static int ci_word(const char *s, size_t n, const char *lit)
{
    size_t m = strlen(lit);
    if (n < m)
        return 0;
    for (size_t i = 0; i < m; i++)
        if ((s[i] | 0x20) != lit[i])
            return 0;
    return 1;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/*
 * The tag at s[0] == '<' (n bytes left): its kind, and in *len its length
 * (for an opening tag with no '>', n: it runs to the end).
 */
static int tag_at(const char *s, size_t n, size_t *len)
{
    if (n >= 9 && s[1] == '/' && ci_word(s + 2, n - 2, "private")) {
        size_t i = 9;
        while (i < n && is_blank(s[i]))
            i++;
        if (i < n && s[i] == '>') {
            *len = i + 1;
            return TAG_CLOSE;
        }
        return TAG_NONE;
    }
    if (n < 9 || !ci_word(s + 1, n - 1, "private"))
        return TAG_NONE;
    char c = s[8];
    if (c != '>' && c != '/' && !is_blank(c))
        return TAG_NONE;   /* <privateKey>, <private_data> */
    const char *gt = memchr(s + 8, '>', n - 8);
    if (!gt) {
        *len = n;
        return TAG_OPEN;
    }
    *len = (size_t)(gt - s) + 1;
    return gt[-1] == '/' ? TAG_SELF : TAG_OPEN;
}

int private_has_tag(const char *in, size_t n)
{
    const char *p = in, *end = in + n;
    size_t len;
    while (p < end && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        if (tag_at(p, (size_t)(end - p), &len) != TAG_NONE)
            return 1;
        p++;
    }
    return 0;
}

/* One pass of private_strip. */
static int strip_pass(const char *in, size_t n, struct buf *out)
{
    const char *p = in, *end = in + n, *keep = in;   /* in[keep..) not yet copied */
    int depth = 0, removed = 0;
    size_t len;
    while (p < end && (p = memchr(p, '<', (size_t)(end - p))) != NULL) {
        int t = tag_at(p, (size_t)(end - p), &len);
        if (t == TAG_NONE) {
            p++;
            continue;
        }
        if (depth == 0) {
            /* text before a tag at the top level is kept */
            if (buf_add(out, keep, (size_t)(p - keep)))
                return -1;
            removed++;
        }
        if (t == TAG_OPEN)
            depth++;
        else if (t == TAG_CLOSE && depth > 0)
            depth--;
        p += len;
        keep = p;
    }
    if (depth > 0)
        return removed;   /* unclosed: the rest is private */
    if (buf_add(out, keep, (size_t)(end - keep)))
        return -1;
    return removed;
}

/*
 * Passes repeat while the result holds a tag: removing one can join the
 * bytes around it into a new one ("<<private>x</private>private>"), and
 * what is stored must have none. Each pass that finds a tag removes at
 * least its bytes, so this ends.
 */
int private_strip(const char *in, size_t n, struct buf *out)
{
    struct buf tmp = BUF_INIT;
    size_t base = out->n;
    int total = 0, k = strip_pass(in, n, out);
    while (k > 0) {
        total += k;
        if (out->n == base || !private_has_tag(out->p + base, out->n - base))
            break;
        buf_reset(&tmp);
        if (buf_add(&tmp, out->p + base, out->n - base)) {
            out->err = tmp.err;
            k = -1;
            break;
        }
        buf_truncate(out, base);
        k = strip_pass(tmp.p, tmp.n, out);
    }
    buf_release(&tmp);
    return k < 0 ? -1 : total;
}
