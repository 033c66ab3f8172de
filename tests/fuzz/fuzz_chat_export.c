/*
 * fuzz_chat_export.c: libFuzzer target for the claude.ai and ChatGPT
 * conversations.json parsers (capture_claude_ai, capture_chatgpt), with
 * and without attachments. Any input must give CAIRN_OK or a clean
 * CAIRN_INVALID, never a crash, a hang or a leak.
 */
#include <stdint.h>
#include <stdlib.h>

#include "cairn.h"
#include "capture/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct capture_batch b;
    unsigned flags = size && (data[size - 1] & 1) ? CAPTURE_OPT_ATTACHMENTS : 0;
    capture_batch_init(&b);
    capture_claude_ai((const char *)data, size, flags, &b);
    for (size_t i = 0; i < b.n; i++)      /* what is handed out must be readable */
        if (b.v[i].s.n_messages && !b.v[i].s.messages[0].content)
            abort();
    capture_batch_free(&b);
    capture_batch_init(&b);
    capture_chatgpt((const char *)data, size, flags, &b);
    for (size_t i = 0; i < b.n; i++)
        if (b.v[i].s.n_messages && !b.v[i].s.messages[0].role)
            abort();
    capture_batch_free(&b);
    return 0;
}
