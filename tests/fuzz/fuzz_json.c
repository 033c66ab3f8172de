/*
 * fuzz_json.c: libFuzzer target for json_parse (src/util/json.c), the
 * reader of every write path, and json_scan, which finds the same ends
 * without building (`cairn add`). Any input: no crash, leak or undefined
 * behaviour; the end it reports is inside the input; json_scan accepts
 * exactly what json_parse accepts, with the same end and the value's
 * type; a tree it accepts prints (cJSON_PrintUnformatted) to text it
 * accepts again, with as many nodes; number ids have text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t nodes(const cJSON *v)
{
    size_t n = 1;
    char buf[32];
    if (cJSON_IsNumber(v) && !*json_number_text(v, buf, sizeof buf))
        abort();
    for (const cJSON *c = v->child; c; c = c->next)
        n += nodes(c);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *p = (const char *)data, *end = NULL;
    cJSON *v = json_parse(p, size, &end);
    const char *send = NULL;
    int type = json_scan(p, size, &send);
    if (end < p || end > p + size || send != end || !type != !v ||
        (v && (v->type & 0xff) != type))
        abort();
    if (v) {
        char *text = cJSON_PrintUnformatted(v);
        if (text) {                      /* NULL only when out of memory */
            cJSON *w = json_parse(text, strlen(text), NULL);
            if (!w || nodes(w) != nodes(v))
                abort();
            cJSON_Delete(w);
            cJSON_free(text);
        }
    }
    cJSON_Delete(v);
    return 0;
}
