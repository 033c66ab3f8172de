/*
 * bench.h: what every benchmark here needs: a monotonic clock in
 * milliseconds (os_now_ms) and a comparator for sorting timings (medians, p95).
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <time.h>
#include "util/os.h"        /* os_now_ms: the library's monotonic clock */

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
