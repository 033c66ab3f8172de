/* wilson.c: the Wilson score interval (wilson.h). */
#include <math.h>

#include "util/wilson.h"

void wilson95(int64_t k, int64_t n, double *lo, double *hi)
{
    const double z = 1.959963984540054;      /* the normal's 97.5th percentile */
    if (n <= 0 || k < 0 || k > n) {
        *lo = 0;
        *hi = 1;
        return;
    }
    double p = (double)k / (double)n, z2n = z * z / (double)n;
    double centre = (p + z2n / 2) / (1 + z2n);
    double half = z * sqrt(p * (1 - p) / (double)n + z2n / (4 * (double)n)) / (1 + z2n);
    *lo = centre - half < 0 ? 0 : centre - half;
    *hi = centre + half > 1 ? 1 : centre + half;
}
