/*
 * fuzz_codex.c: libFuzzer target for the Codex CLI rollout parser
 * (capture_codex), both the current {"type","payload"} lines and the
 * legacy bare items. Any input must give a clean result, never a crash,
 * a hang or a leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cairn.h"
#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct capture_batch b;
    capture_batch_init(&b);
    capture_codex((const char *)data, size, "fz", 0, &b);
    for (size_t i = 0; i < b.n; i++)
        for (size_t k = 0; k < b.v[i].s.n_messages; k++)
            if (!b.v[i].s.messages[k].content)
                abort();
    capture_batch_free(&b);
    return 0;
}
