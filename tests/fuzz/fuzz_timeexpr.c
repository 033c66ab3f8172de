/*
 * fuzz_timeexpr.c: libFuzzer target for time expressions in questions
 * (timeexpr_parse, English and Chinese). The first byte picks "now" and
 * the time zone (calendar arithmetic is local), the rest is the question.
 * A found expression must be a non-empty span of the question and a
 * non-empty range; a vague word it replaced, a span before it.
 */
#include <time.h>

#include "fuzz.h"
#include "text/timeexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const zones[] = { "UTC", "Asia/Shanghai", "America/New_York",
                                         "Pacific/Kiritimati" };
    static int zone = -1;
    if (!size)
        return 0;
    /* 2026-03-29 01:30 UTC (a DST change in Europe), then a day and a
     * few hours further per step, so weekdays, month ends and year ends
     * all come up */
    int64_t now = 1774747800 + (int64_t)(data[0] >> 2) * 97200 * 7;
    if (zone != (data[0] & 3)) {
        zone = data[0] & 3;
        setenv("TZ", zones[zone], 1);
        tzset();
    }
    size_t n = size - 1;
    char *q = malloc(n ? n : 1);        /* exactly n bytes: no terminator to lean on */
    if (!q)
        abort();
    memcpy(q, data + 1, n);
    struct time_range r;
    if (timeexpr_parse(q, n, now, &r)) {
        if (r.start >= r.end || r.end > n || r.from >= r.to)
            abort();
        /* a vague word a later date replaced lies before it */
        if (r.vend && (r.vstart >= r.vend || r.vend > r.start))
            abort();
    }
    free(q);
    return 0;
}
