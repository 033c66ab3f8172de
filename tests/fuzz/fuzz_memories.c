/*
 * fuzz_memories.c: libFuzzer target for cairn_memories_import, the JSONL
 * reader of `cairn memories import` (src/store/memory_io.c), into an
 * in-memory store. Any input gives CAIRN_OK or an error whose message
 * names a line (or the input's size), and adds nothing when it fails.
 * What it accepts exports and imports again into a new store with as many
 * memories, superseded ones as many too.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cairn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t count(struct cairn *db, int all)
{
    struct cairn_memories *l;
    if (cairn_memory_list(db, NULL, NULL, all, &l) != CAIRN_OK)
        abort();
    size_t n = cairn_memories_count(l);
    cairn_memories_free(l);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct cairn *db = NULL, *db2 = NULL;
    size_t added = 0, again = 0, len;
    char *out = NULL;
    if (cairn_open(":memory:", 0, &db) != CAIRN_OK)
        abort();
    int rc = cairn_memories_import(db, (const char *)data, size, &added);
    if (rc != CAIRN_OK) {
        if (added || count(db, 1) || (rc != CAIRN_NOMEM && !strstr(cairn_errmsg(db), "line")))
            abort();
        goto out;
    }
    if (count(db, 1) != added)
        abort();
    if (cairn_memories_export(db, &out, &len) != CAIRN_OK ||
        cairn_open(":memory:", 0, &db2) != CAIRN_OK ||
        cairn_memories_import(db2, out, len, &again) != CAIRN_OK || again != added ||
        count(db2, 0) != count(db, 0))
        abort();
out:
    free(out);
    cairn_close(db2);
    cairn_close(db);
    return 0;
}
