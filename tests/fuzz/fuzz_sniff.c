/*
 * fuzz_sniff.c: libFuzzer target for capture_sniff, which names the kind
 * of a file an import found nothing in. Any bytes: no crash, no read past
 * the input (libFuzzer hands an exact-size buffer), a kind cairn knows or
 * 0, the same answer twice, and the same answer after a byte order mark
 * and blank lines are put in front (what a file's start may carry).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data;
    int kind = capture_sniff(p, size);
    if (kind < 0 || kind > CAIRN_IMPORT_AIDER)
        abort();
    if (capture_sniff(p, size) != kind)
        abort();
    if (size >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
        return 0;
    char *q = malloc(size + 5);
    if (!q)
        return 0;
    memcpy(q, "\xEF\xBB\xBF\n ", 5);
    if (size)
        memcpy(q + 5, p, size);
    if (capture_sniff(q, size + 5) != kind)
        abort();
    free(q);
    return 0;
}
