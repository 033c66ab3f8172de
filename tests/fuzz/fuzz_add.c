/*
 * fuzz_add.c: libFuzzer target for the session JSON parser and the write
 * path (cairn_add_json into an in-memory store), and for ISO dates.
 * Any input must give CAIRN_OK or a clean error, never a crash or leak.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct cairn *db;
    if (!db && cairn_open(":memory:", 0, &db) != CAIRN_OK)
        abort();
    struct cairn_add_stats st = { 0 };
    cairn_add_json(db, (const char *)data, size, &st);
    char *s = malloc(size + 1);
    if (s) {
        memcpy(s, data, size);
        s[size] = '\0';
        int64_t t;
        cairn_parse_time(s, &t);
        free(s);
    }
    return 0;
}
