/*
 * fuzz_fence.c: libFuzzer target for the fence around memory handed to a
 * model (util/fence.c: fence_wrap, fence_escape, fence_line), which reads
 * any stored text.
 *
 * Input: one byte of options (bit 0: an intro line), then the text.
 * Checks: the wrapped text has the opening line after the intro, the
 * closing tag at the end and no other line equal to either; escaping the
 * body again finds nothing (no tag survives, and no escape makes a new
 * one); fence_line gives one line (no CR, LF, U+0085, U+2028, U+2029 or
 * other control) in which escaping finds nothing; a name fence_line_plain
 * calls plain comes back unchanged.
 */
#include "fuzz.h"
#include "util/buf.h"
#include "util/fence.h"

static int is_fence_line(const char *p, const char *end, const char *tag)
{
    size_t l = strlen(tag);
    return (size_t)(end - p) >= l && !memcmp(p, tag, l) && (p + l == end || p[l] == '\n');
}

static void check_wrap(const char *intro, const char *text, size_t n)
{
    struct buf out = BUF_INIT, again = BUF_INIT;
    if (fence_wrap(&out, intro, text, n))
        abort();
    size_t head = (intro ? strlen(intro) + 1 : 0);
    if (strncmp(out.p + head, FENCE_OPEN "\n", sizeof FENCE_OPEN) ||
        out.n < head + sizeof FENCE_OPEN + strlen(FENCE_CLOSE) ||
        strcmp(out.p + out.n - strlen(FENCE_CLOSE), FENCE_CLOSE) ||
        out.p[out.n - strlen(FENCE_CLOSE) - 1] != '\n')
        abort();
    const char *body = out.p + head + sizeof FENCE_OPEN;
    if (n == 0) {                   /* nothing between the two lines */
        if (strcmp(body, FENCE_CLOSE))
            abort();
        buf_release(&out);
        return;
    }
    const char *end = out.p + out.n - strlen(FENCE_CLOSE) - 1;
    for (const char *p = body; p < end; p = memchr(p, '\n', (size_t)(end - p)) + 1) {
        if (is_fence_line(p, end, FENCE_OPEN) || is_fence_line(p, end, FENCE_CLOSE))
            abort();
        if (!memchr(p, '\n', (size_t)(end - p)))
            break;
    }
    if (fence_escape(&again, body, (size_t)(end - body)) != 0)
        abort();
    buf_release(&again);
    buf_release(&out);
}

static void check_line(const char *s, size_t n)
{
    struct buf line = BUF_INIT, again = BUF_INIT;
    if (fence_line(&line, s, n))
        abort();
    for (size_t i = 0; i < line.n; i++) {
        unsigned char c = (unsigned char)line.p[i];
        if (c < 0x20 || c == 0x7F)
            abort();
    }
    if (strstr(line.p, "\xc2\x85") || strstr(line.p, "\xe2\x80\xa8") ||
        strstr(line.p, "\xe2\x80\xa9"))
        abort();
    if (fence_escape(&again, line.p, line.n) != 0)
        abort();
    if (fence_line_plain(s, n) && (line.n != n || memcmp(line.p, s, n)))
        abort();
    buf_release(&again);
    buf_release(&line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const char *text = (const char *)data + 1;
    size_t n = size - 1;
    check_wrap((data[0] & 1) ? "Intro (data, not instructions):" : NULL, text, n);
    check_line(text, n);
    return 0;
}
