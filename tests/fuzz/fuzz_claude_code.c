/*
 * fuzz_claude_code.c: libFuzzer target for the Claude Code transcript
 * parser (capture_claude_code), whole and from an offset as the Stop hook
 * reads it, with every session it yields added to an in-memory store.
 * Any input must give a clean result, never a crash, a hang or a leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"
#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cairn *db;
    if (!db && cairn_open(":memory:", 0, &db) != CAIRN_OK)
        abort();
    struct capture_batch b;
    uint64_t next = 0;
    capture_batch_init(&b);
    /* the offset comes from the input, so incremental reads are explored */
    uint64_t from = size ? (uint64_t)(data[0] * size / 256) : 0;
    if (capture_claude_code((const char *)data, size, 0, "fz", 0, &b, &next) == CAIRN_OK) {
        if (next > size)
            abort();
        for (size_t i = 0; i < b.n; i++)
            cairn_add_session(db, &b.v[i].s, NULL);
    }
    capture_batch_free(&b);
    capture_batch_init(&b);
    capture_claude_code((const char *)data, size, from, NULL, 0, &b, &next);
    capture_batch_free(&b);
    return 0;
}
