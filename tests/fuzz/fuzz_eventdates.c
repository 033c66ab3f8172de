/*
 * fuzz_eventdates.c: libFuzzer target for the dates a message speaks of
 * (timeexpr_scan, read against the message's own time at write time;
 * store/events.c). The first byte picks the message's time and the time
 * zone, the second the most ranges asked for (0..15), the rest is the
 * message. Every range found must be a non-empty span of the text, in
 * order, not overlapping the one before, inside the bytes the scan reads,
 * with a non-empty date range; never more than asked for.
 */
#include <time.h>

#include "fuzz.h"
#include "text/timeexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const zones[] = { "UTC", "Asia/Shanghai", "America/New_York",
                                         "Pacific/Kiritimati" };
    static int zone = -1;
    struct time_range r[16];
    if (size < 2)
        return 0;
    /* from 2026-03-29 01:30 UTC (a DST change in Europe), 7.9 days a step */
    int64_t at = 1774747800 + (int64_t)(data[0] >> 2) * 97200 * 7;
    if (zone != (data[0] & 3)) {
        zone = data[0] & 3;
        setenv("TZ", zones[zone], 1);
        tzset();
    }
    int max = data[1] & 15;
    size_t n = size - 2;
    char *t = malloc(n ? n : 1);        /* exactly n bytes: no terminator to lean on */
    if (!t)
        abort();
    memcpy(t, data + 2, n);
    int k = timeexpr_scan(t, n, at, r, max);
    if (k < 0 || k > max)
        abort();
    for (int i = 0; i < k; i++) {
        if (r[i].start >= r[i].end || r[i].end > n || r[i].end > TIMEEXPR_SCAN_BYTES ||
            r[i].from >= r[i].to || (i && r[i].start < r[i - 1].end))
            abort();
    }
    free(t);
    return 0;
}
