/*
 * bench.h: what every benchmark here needs: a monotonic clock in
 * milliseconds (os_now_ms), this thread's CPU time (bench_cpu_ms), and a
 * comparator and median for timings.
 */
#ifndef CAIRN_BENCH_H
#define CAIRN_BENCH_H

#include <stdlib.h>
#include <time.h>
#include "util/os.h"        /* os_now_ms: the library's monotonic clock */

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* This thread's CPU time in milliseconds: on a machine shared with other
 * jobs, wall time measures the queue as much as the code. */
static inline double bench_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The median of v[0..n), n >= 1 (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
