/*
 * bench.h: what every benchmark here needs: a monotonic clock in
 * milliseconds and a comparator for sorting timings (medians, p95).
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <time.h>

static inline double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#endif
