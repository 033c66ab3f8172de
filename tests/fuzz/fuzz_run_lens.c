/*
 * fuzz_run_lens.c: libFuzzer target for a run's token counts as the
 * pruned recall reads them (store/recall_read.c: store_run_len over
 * msg_runs.lens, "12,5,300", schema 19; a damaged store could hold
 * anything there).
 *
 * Input: the first byte picks how many ids are asked (0-15) and the
 * steps between them (each next byte's low 2 bits: 0 asks the same id
 * again); the rest is the counts, copied to a buffer of exactly its size
 * (no NUL after it) so that a read past the end is a sanitizer report.
 * A count is -1 or what the field of that id holds when it is all digits
 * and fits an int, whether the cursor moves or stays.
 */
#include <limits.h>

#include "fuzz.h"
#include "store/recall_read.h"

/* Field k of s[0..n) by a plain split, or -1 (not all digits, empty,
 * too big, or no such field). */
static long field(const char *s, size_t n, int64_t k)
{
    size_t a = 0;
    for (int64_t i = 0; i < k; i++) {
        const char *c = memchr(s + a, ',', n - a);
        if (!c)
            return -1;
        a = (size_t)(c - s) + 1;
    }
    size_t b = a;
    long v = 0;
    while (b < n && s[b] != ',') {
        if (s[b] < '0' || s[b] > '9' || v > INT_MAX / 10)
            return -1;
        v = v * 10 + (s[b++] - '0');
    }
    return b > a && v <= INT_MAX ? v : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int nask = data[0] & 15;
    size_t skip = 1 + (size_t)nask < size ? 1 + (size_t)nask : size;
    size_t n = size - skip;
    char *text = malloc(n ? n : 1);
    if (!text)
        return 0;
    memcpy(text, data + skip, n);
    struct run_lens rl = { text, text + n, 100 };
    int64_t id = 100;
    for (int i = 0; i < nask; i++) {
        id += 1 + i < (int)skip ? data[1 + i] & 3 : 1;
        int got = store_run_len(&rl, id);
        long want = field(text, n, id - 100);
        if (got != want)
            abort();
        if (rl.p && (rl.p < text || rl.p > text + n))
            abort();
    }
    free(text);
    return 0;
}
