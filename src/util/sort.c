/*
 * sort.c: the stable pair sort of sort.h.
 *
 * Least significant digit first, 11 bits a pass (six passes cover 64
 * bits), every digit's histogram counted in one read of the input; a pass
 * whose digit is the same in every key moves nothing and is skipped (the
 * high bits of scores of one magnitude often are). Each pass is stable,
 * so the whole is: ties stay in input order. Sorting the complement of
 * each key ascending gives the largest first.
 */
#include <stdlib.h>
#include <string.h>

#include "util/os.h"
#include "util/sort.h"

#define DIGIT_BITS 11
#define DIGITS     6                   /* 6 * 11 >= 64 */
#define BUCKETS    (1u << DIGIT_BITS)

uint64_t sort_key_double(double x)
{
    uint64_t b;
    if (x == 0)
        x = 0;                         /* -0 compares equal to +0 */
    memcpy(&b, &x, sizeof b);
    /* IEEE 754: flip every bit of a negative, only the sign of the rest */
    return b >> 63 ? ~b : b | (uint64_t)1 << 63;
}

uint64_t sort_key_i64(int64_t x)
{
    return (uint64_t)x ^ (uint64_t)1 << 63;
}

int sort_kv_desc(struct sort_kv *v, size_t n)
{
    if (n < 2)
        return 0;
    struct sort_kv *tmp = os_alloc_big(n * sizeof *tmp);
    size_t *count = calloc((size_t)DIGITS * BUCKETS, sizeof *count);
    if (!tmp || !count) {
        free(tmp);
        free(count);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        uint64_t k = ~v[i].key;
        for (int d = 0; d < DIGITS; d++)
            count[(size_t)d * BUCKETS + ((k >> (d * DIGIT_BITS)) & (BUCKETS - 1))]++;
    }
    struct sort_kv *src = v, *dst = tmp;
    for (int d = 0; d < DIGITS; d++) {
        size_t *c = count + (size_t)d * BUCKETS;
        uint64_t k0 = ~src[0].key;
        if (c[(k0 >> (d * DIGIT_BITS)) & (BUCKETS - 1)] == n)
            continue;                  /* one digit value in every key */
        size_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            size_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++) {
            uint64_t k = ~src[i].key;
            dst[c[(k >> (d * DIGIT_BITS)) & (BUCKETS - 1)]++] = src[i];
        }
        struct sort_kv *t = src;
        src = dst;
        dst = t;
    }
    if (src != v)
        memcpy(v, src, n * sizeof *v);
    free(tmp);
    free(count);
    return 0;
}
