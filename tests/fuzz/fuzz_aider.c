/*
 * fuzz_aider.c: libFuzzer target for the aider chat log parser
 * (capture_aider), whole and from an offset the first byte picks, so the
 * incremental path runs too. Any input must give a clean result, never a
 * crash, a hang or a leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *d = (const char *)data;
    uint64_t from = size ? data[0] * (uint64_t)size / 256 : 0, next = UINT64_MAX;
    struct capture_batch b;
    capture_batch_init(&b);
    capture_aider(d, size, from, "fz", &b, &next);
    /* the next offset is past a complete line (or 0), inside the input */
    if (next > size || (next && d[next - 1] != '\n') || memchr(d + next, '\n', size - next))
        abort();
    /* a session has an id and starts with a prompt; messages have content */
    for (size_t i = 0; i < b.n; i++) {
        if (!b.v[i].s.id || !b.v[i].s.n_messages || strcmp(b.v[i].s.messages[0].role, "user"))
            abort();
        for (size_t k = 0; k < b.v[i].s.n_messages; k++)
            /* content_len, not strlen: a NUL byte in the log is kept */
            if (!b.v[i].s.messages[k].content || !b.v[i].s.messages[k].content_len)
                abort();
    }
    capture_batch_free(&b);
    return 0;
}
