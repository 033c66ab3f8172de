/*
 * wilson.h: the Wilson score interval of a proportion, which a heed rate
 * is shown with (docs/MEMORIES.md): k successes in n trials. Unlike the
 * plain p +- z*sqrt(p(1-p)/n) it stays inside [0, 1] and says something
 * honest for 0 of 3 or 3 of 3.
 */
#ifndef CAIRN_UTIL_WILSON_H
#define CAIRN_UTIL_WILSON_H

#include <stdint.h>

/* The 95% interval (z = 1.96) of k in n into *lo, *hi; n <= 0: [0, 1]. */
void wilson95(int64_t k, int64_t n, double *lo, double *hi);

#endif
