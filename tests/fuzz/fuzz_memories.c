/*
 * fuzz_memories.c: libFuzzer target for cairn_memories_import, the JSONL
 * reader of `cairn memories import` (src/store/memory_io.c), into an
 * in-memory store. Any input gives CAIRN_OK or an error whose message
 * names a line (or the input's size), and adds nothing when it fails.
 * What it accepts exports and imports again into a new store with as many
 * memories, superseded ones as many too, and the same corrections
 * (severity and applies_when: a fingerprint of the live ones).
 */
#include <ctype.h>
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

/* Items of a list: its lines with something other than spaces (what the
 * matchers and the export read). */
static size_t items(const char *list)
{
    size_t n = 0;
    int seen = 0;
    for (const char *p = list; ; p++) {
        if (!*p || *p == '\n') {
            n += seen;
            seen = 0;
            if (!*p)
                return n;
        } else if (!isspace((unsigned char)*p)) {
            seen = 1;
        }
    }
}

/* The live corrections' severities and applies_when items, summed. */
static size_t corrections_print(struct cairn *db)
{
    struct cairn_corrections *l;
    size_t sum = 0;
    if (cairn_corrections_list(db, NULL, &l) != CAIRN_OK)
        abort();
    for (size_t i = 0; i < cairn_corrections_count(l); i++) {
        const struct cairn_correction *c = cairn_corrections_at(l, i);
        sum += 1000003 * (size_t)(c->severity + 1) + items(c->keywords) * 1009 +
               items(c->paths) * 101 + items(c->commands);
    }
    cairn_corrections_free(l);
    return sum;
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
        count(db2, 0) != count(db, 0) || corrections_print(db2) != corrections_print(db))
        abort();
out:
    free(out);
    cairn_close(db2);
    cairn_close(db);
    return 0;
}
