/*
 * sort.h: a stable sort of (key, value) pairs, largest key first, in time
 * linear in n (an LSD radix sort over the key's bits).
 *
 * Recall orders every unit of its pool by score several times (four
 * rankings fused by rank, then the fused order): on a big store a million
 * units, where qsort's comparator calls were a fifth of a recall. The
 * order is the one a stable comparison sort gives (glibc's qsort is a
 * merge sort when it can allocate, which recall's ties relied on), so the
 * results do not move: equal keys keep the order they came in.
 */
#ifndef CAIRN_UTIL_SORT_H
#define CAIRN_UTIL_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct sort_kv {
    uint64_t key;
    int64_t  val;
};

/* A key that orders doubles as the numbers do (-0 as +0; no NaN).
 * Inline: a ranking keys every unit that scored, and the call was a
 * tenth of the loop (issue 23, exact30). */
static inline uint64_t sort_key_double(double x)
{
    uint64_t b;
    if (x == 0)
        x = 0;                         /* -0 compares equal to +0 */
    memcpy(&b, &x, sizeof b);
    /* IEEE 754: flip every bit of a negative, only the sign of the rest */
    return b >> 63 ? ~b : b | (uint64_t)1 << 63;
}

/* sort_key_double of an x > 0 (no -0, no NaN to mend): its bits with the
 * sign set. For a loop keying the units that scored without a branch a
 * unit (rank.c rrf_places; issue 23, rank53). */
static inline uint64_t sort_key_pos(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b | (uint64_t)1 << 63;
}

/* A key that orders int64 values as the numbers do. */
static inline uint64_t sort_key_i64(int64_t x)
{
    return (uint64_t)x ^ (uint64_t)1 << 63;
}

/* Sorts v[n] by key, largest first; equal keys keep their order.
 * Returns 0, or -1 when the scratch copy cannot be had (v unchanged). */
/* qsort's comparator for ints, ascending (shared by gather, pack and the
 * server reader's sorts of session indexes). */
int sort_cmp_int(const void *a, const void *b);

int sort_kv_desc(struct sort_kv *v, size_t n);
/* sort_kv_desc with the scratch copy given: tmp[n], or NULL (allocated).
 * For a caller sorting big arrays several times in a row, which pays for
 * fresh pages at each allocation (issue 23, exact30). */
int sort_kv_desc_tmp(struct sort_kv *v, size_t n, struct sort_kv *tmp);

/* sort_kv_desc on two threads when two and n >= SORT_TWO_MIN: each half
 * sorted on its own thread, then merged (the first half's pair first on
 * equal keys: the same order, value for value). For a recall whose pool
 * gather loaded in two (issue 23, exact38: the fused order of ~300,000
 * units at a million messages). Returns 0, or -1 on no memory (v then
 * holds its pairs in some order: the caller fails). */
#define SORT_TWO_MIN 65536
int sort_kv_desc_two(struct sort_kv *v, size_t n, int two);

/* The k pairs sort_kv_desc would put first, moved to the front of v in
 * their input order (not sorted), without sorting the rest: the k largest
 * keys, a tie at the k-th key going to the earlier pair. For a caller that
 * wants the set (the pruning's kept sessions), in time linear in n.
 * Returns min(k, n), or -1 when the scratch copy cannot be had (v
 * unchanged). */
long sort_kv_top(struct sort_kv *v, size_t n, size_t k);

/* The place each pair of v[n] takes in sort_kv_desc's order (larger keys
 * first, equal keys in input order), into place[n] (place[i]: v[i]'s),
 * when its keys repeat: a fused ranking needs only each unit's place, and
 * its scores do (a tenth of them distinct at a million messages). The
 * distinct keys are counted in a hash table kept in tmp[ntmp] (scratch
 * pairs: n / 2 rounded up to a power of two), only they are sorted, and
 * a pair's place is the count of the larger keys plus the equal ones
 * before it. Returns 0; 1 when it is not worth it or the scratch is
 * short (fewer than 16,384 pairs, more than n / 4 distinct keys, below
 * 65,536 pairs more than 1,024 distinct among the first 4,096: sort v
 * instead; place is scratch then); -1 on no memory. */
int sort_kv_places_desc(const struct sort_kv *v, size_t n, struct sort_kv *tmp, size_t ntmp,
                        uint32_t *place);

#endif
