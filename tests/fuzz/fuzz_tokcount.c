/*
 * fuzz_tokcount.c: libFuzzer target for the budget token counter on any
 * bytes (text_count_tokens, text_prefix_within).
 *
 * The first byte picks a budget; the rest is the text. The count is at
 * least 0 and grows with the text (a prefix never costs more than the
 * whole); the prefix text_prefix_within() returns is inside the text, on
 * a UTF-8 boundary, costs at most the budget, and is the whole text when
 * the whole fits.
 */
#include "fuzz.h"
#include "text/tokcount.h"
#include "util/utf8.h"

static int on_boundary(const char *s, size_t n, size_t p)
{
    size_t i = 0;
    uint32_t cp;
    while (i < p)
        i += utf8_decode(s + i, n - i, &cp);
    return i == p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!size)
        return 0;
    const char *s = (const char *)data + 1;
    size_t n = size - 1;
    int whole = text_count_tokens(s, n);
    int max = data[0] < 0xF0 ? data[0] * (whole / 64 + 1) / 4 : whole + data[0] - 0xF0;
    size_t p = text_prefix_within(s, n, max);

    if (whole < 0 || p > n || text_count_tokens(s, p) > max || !on_boundary(s, n, p))
        abort();
    if (whole <= max && p != n)
        abort();
    if (text_count_tokens(s, p) > whole)
        abort();
    return 0;
}
