/*
 * bench.h: the timer and sort helper the encoder benchmarks share.
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <time.h>

static inline double now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* qsort comparator for doubles, ascending */
static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

#endif
