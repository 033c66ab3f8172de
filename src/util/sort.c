/*
 * sort.c: the stable pair sort of sort.h.
 *
 * Least significant digit first, 11 bits a pass (six passes cover 64
 * bits; 12 from WIDE_N pairs), every digit's histogram counted in one read of the input; a pass
 * whose digit is the same in every key moves nothing and is skipped (the
 * high bits of scores of one magnitude often are). Each pass is stable,
 * so the whole is: ties stay in input order. Sorting the complement of
 * each key ascending gives the largest first.
 *
 * Up to SMALL_N pairs, a merge sort instead (stable too, so the same
 * order): the radix sort's histograms are 96 KB, zeroed at each call,
 * and a one-shot process (the prompt hook) pays a page fault for each
 * fresh 4 KB page it touches; the hook sorts a few thousand units at a
 * time, several times a recall (bench/README.md "Page faults").
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "util/os.h"
#include "util/sort.h"

#define DIGIT_BITS 11
#define DIGITS     6                   /* 6 * 11 >= 64 */
/* From WIDE_N pairs, digits of WIDE_BITS (five cover 60 bits, the sixth
 * the top four): a key whose bits above the 55th are the same in every key
 * (a double's sign and the top of its exponent) takes five passes at 11
 * bits only if it varies in 55 bits or fewer, at 12 in 60. The fused
 * scores of a recall at a million messages vary in 57 (the exponents of
 * ~15 binades): six passes at 11 bits, five at 12. Their counts, 96 KB,
 * are cleared once for 65,536 pairs or more (issue 23, rank53). */
#define WIDE_BITS  12
#define WIDE_N     65536
#define SMALL_N    4096                /* below: merge sort (no histogram) */

static void swap_bufs(struct sort_kv **a, struct sort_kv **b)
{
    struct sort_kv *t = *a;
    *a = *b;
    *b = t;
}

/* The sorted pairs back into v, if the last pass left them in the copy. */
static void settle(struct sort_kv *v, const struct sort_kv *sorted, size_t n)
{
    if (sorted != v)
        memcpy(v, sorted, n * sizeof *v);
}

/* Bottom-up merge sort, largest first: on a tie the left run's pair
 * goes first, so equal keys keep their order. */
static int merge_desc(struct sort_kv *v, size_t n, struct sort_kv *given)
{
    struct sort_kv *tmp = given ? given : malloc(n * sizeof *tmp), *src = v, *dst = tmp;
    if (!tmp)
        return -1;
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t a = lo, b = mid, k = lo;
            while (a < mid && b < hi)
                dst[k++] = src[a].key >= src[b].key ? src[a++] : src[b++];
            while (a < mid)
                dst[k++] = src[a++];
            while (b < hi)
                dst[k++] = src[b++];
        }
        swap_bufs(&src, &dst);
    }
    settle(v, src, n);
    if (!given)
        free(tmp);
    return 0;
}

/* The radix passes, digits of bits (a constant where inlined): six
 * digits' counts in one read, each key complemented there and back at the
 * end (not at every pass; the counts unrolled: the loop over them cost as
 * much as the counting, issue 23, exact30), then a pass a digit that is
 * not the same in every key. */
static inline __attribute__((always_inline)) void
radix_desc(struct sort_kv *v, size_t n, struct sort_kv *tmp, uint32_t *count, int bits)
{
    const size_t nb = (size_t)1 << bits, m = nb - 1;
    _Static_assert(DIGITS == 6, "the histogram below counts six digits");
    uint32_t *c0 = count, *c1 = c0 + nb, *c2 = c1 + nb, *c3 = c2 + nb, *c4 = c3 + nb,
             *c5 = c4 + nb;
    for (size_t i = 0; i < n; i++) {
        uint64_t k = ~v[i].key;
        v[i].key = k;
        c0[k & m]++;
        c1[(k >> bits) & m]++;
        c2[(k >> 2 * bits) & m]++;
        c3[(k >> 3 * bits) & m]++;
        c4[(k >> 4 * bits) & m]++;
        c5[(k >> 5 * bits) & m]++;
    }
    struct sort_kv *src = v, *dst = tmp;
    for (int d = 0; d < DIGITS; d++) {
        uint32_t *c = count + (size_t)d * nb;
        int sh = d * bits;
        if (c[(src[0].key >> sh) & m] == n)
            continue;                  /* one digit value in every key */
        uint32_t sum = 0;
        for (size_t b = 0; b < nb; b++) {
            uint32_t t = c[b];
            c[b] = sum;
            sum += t;
        }
        for (size_t i = 0; i < n; i++)
            dst[c[(src[i].key >> sh) & m]++] = src[i];
        swap_bufs(&src, &dst);
    }
    for (size_t i = 0; i < n; i++)
        src[i].key = ~src[i].key;
    settle(v, src, n);
}

int sort_kv_desc(struct sort_kv *v, size_t n)
{
    return sort_kv_desc_tmp(v, n, NULL);
}

int sort_kv_desc_tmp(struct sort_kv *v, size_t n, struct sort_kv *given)
{
    if (n < 2)
        return 0;
    /* (past 2^32 pairs, 64 GB, the counts would not fit: merged) */
    if (n <= SMALL_N || n > UINT32_MAX)
        return merge_desc(v, n, given);
    struct sort_kv *tmp = given ? given : os_alloc_filled(n * sizeof *tmp);
    /* 32-bit counts: 48 KB to clear instead of 96 (a fresh page a fault
     * in a one-shot process, the hook), half the cache lines the scatter
     * passes hit (issue 23, hook52b); wide digits from WIDE_N pairs */
    int wide = n >= WIDE_N;
    uint32_t *count = calloc((size_t)DIGITS << (wide ? WIDE_BITS : DIGIT_BITS), sizeof *count);
    if (!tmp || !count) {
        if (!given)
            free(tmp);
        free(count);
        return -1;
    }
    if (wide)
        radix_desc(v, n, tmp, count, WIDE_BITS);
    else
        radix_desc(v, n, tmp, count, DIGIT_BITS);
    if (!given)
        free(tmp);
    free(count);
    return 0;
}

/* sort_kv_desc_two's second half, on its thread. */
struct half_sort {
    struct sort_kv *v;
    size_t          n;
    int             rc;
};

static void *half_sort_run(void *arg)
{
    struct half_sort *h = arg;
    h->rc = sort_kv_desc(h->v, h->n);
    return NULL;
}

int sort_kv_desc_two(struct sort_kv *v, size_t n, int two)
{
    if (!two || n < SORT_TWO_MIN)
        return sort_kv_desc(v, n);
    size_t h = n / 2;
    struct half_sort b = { v + h, n - h, 0 };
    pthread_t th;
    /* (written whole by the merge: faulted in by one call, not a trap a
     * 4 KB page of the heap's fresh top, ~400 of them on some questions
     * at a million messages; issue 23, mem54) */
    struct sort_kv *out = os_alloc_filled(n * sizeof *out);
    if (!out)
        return -1;
    if (pthread_create(&th, NULL, half_sort_run, &b)) {
        free(out);
        return sort_kv_desc(v, n);
    }
    int rc = sort_kv_desc(v, h);
    pthread_join(th, NULL);
    if (rc || b.rc) {
        /* a half not sorted (no memory): v is a permutation of its
         * pairs, not their order; the caller fails, as sort_kv_desc's */
        free(out);
        return -1;
    }
    /* merged, the first half's pair first on equal keys: it came first
     * in the input, so the order is the stable sort's */
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        out[k++] = v[j].key > v[i].key ? v[j++] : v[i++];
    while (i < h)
        out[k++] = v[i++];
    while (j < n)
        out[k++] = v[j++];
    memcpy(v, out, n * sizeof *v);
    free(out);
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t median3(uint64_t x, uint64_t y, uint64_t z)
{
    if (x > y) {
        uint64_t t = x;
        x = y;
        y = t;
    }
    return z <= x ? x : z >= y ? y : z;
}

/* The key at place r of a[n] sorted ascending (a is reordered). A
 * three-way partition a round, so runs of equal keys (ties are common
 * among BM25 scores) end it at once; past SELECT_ROUNDS rounds, which
 * only keys chosen against the median of three reach, the rest is
 * sorted: O(n log n) at worst. */
#define SELECT_ROUNDS 64

static uint64_t select_key(uint64_t *a, size_t n, size_t r)
{
    size_t lo = 0, hi = n;
    for (int round = 0; hi - lo > 1; round++) {
        if (round == SELECT_ROUNDS) {
            qsort(a + lo, hi - lo, sizeof *a, cmp_u64);
            break;
        }
        uint64_t piv = median3(a[lo], a[lo + (hi - lo) / 2], a[hi - 1]);
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            uint64_t x = a[i];
            if (x < piv) {
                a[i++] = a[lt];
                a[lt++] = x;
            } else if (x > piv) {
                a[i] = a[--gt];
                a[gt] = x;
            } else {
                i++;
            }
        }
        if (r < lt)
            hi = lt;
        else if (r >= gt)
            lo = gt;
        else
            return piv;
    }
    return a[r];
}

long sort_kv_top(struct sort_kv *v, size_t n, size_t k)
{
    if (k >= n)
        return (long)n;
    if (k == 0)
        return 0;
    uint64_t *a = malloc(n * sizeof *a);
    if (!a)
        return -1;
    for (size_t i = 0; i < n; i++)
        a[i] = v[i].key;
    uint64_t kth = select_key(a, n, n - k);       /* the k-th largest */
    free(a);
    size_t above = 0;
    for (size_t i = 0; i < n; i++)
        above += v[i].key > kth;
    size_t ties = k - above, j = 0;   /* of the keys equal to it, the first */
    for (size_t i = 0; i < n && j < k; i++) {
        int take = v[i].key > kth;
        if (!take && v[i].key == kth && ties) {
            ties--;
            take = 1;
        }
        if (take)
            v[j++] = v[i];
    }
    return (long)k;
}

/* sort_kv_places_desc's table, in the caller's scratch pairs: a slot is
 * a pair (sort_kv's 16 bytes) holding a key, how many pairs hold it and
 * then the place of the next of them; open addressing, at most half
 * full, so no growth and each pair's slot is kept from the first read to
 * the second (in place[]). */
struct place_slot {
    uint64_t key;
    uint32_t n;                        /* 0: empty */
    uint32_t next;
};
_Static_assert(sizeof(struct place_slot) == sizeof(struct sort_kv), "a slot is a pair");

/* Counting costs a hash and a table read a pair and the sort of the
 * distinct keys; the radix sort six passes a pair. Measured (callgrind,
 * bench/README.md "exact34"): at a million messages the rankings' 6-18%
 * distinct keys gain; at 100,000 (13,000-41,000 pairs, 23-49% distinct)
 * counting lost, and giving up on the way was a loss too. So: from
 * PLACES_BIG_N pairs, with at most n / PLACES_DISTINCT distinct keys.
 * Between PLACES_MIN_N and PLACES_BIG_N (the head ranking at a million
 * messages, 19,765-62,847 pairs with 3-4% distinct; at 100,000 the rounds,
 * 21-30,000 with 22-35%) the first PLACES_PREFIX pairs decide as well: at
 * most PLACES_PREFIX / PLACES_DISTINCT distinct among them (the heads at a
 * million 348-795, the rounds at 100,000 2,116-2,997, counted first in a
 * small table: prefix_many), so a ranking that gives up does so early
 * (issue 23, rank53). */
#define PLACES_MIN_N    16384
#define PLACES_BIG_N    65536
#define PLACES_PREFIX   4096
#define PLACES_DISTINCT 4

static inline size_t place_hash(uint64_t key, int bits)
{
    return (size_t)((key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits));
}

/* Whether the first PLACES_PREFIX keys of v hold more than PLACES_PREFIX /
 * PLACES_DISTINCT distinct: counted in a table of PLACES_SMALL slots (each
 * the index + 1 of a pair holding its key, 0 empty; at most half full),
 * before the whole table is cleared, so a ranking given up costs 8 KB
 * cleared, not the table's up to 512 KB. s: scratch, PLACES_SMALL. */
#define PLACES_SMALL_BITS 11
#define PLACES_SMALL      (1u << PLACES_SMALL_BITS)
_Static_assert(PLACES_PREFIX / PLACES_DISTINCT <= PLACES_SMALL / 2, "at most half full");
_Static_assert(PLACES_PREFIX + PLACES_SMALL <= PLACES_MIN_N, "apart in place[]");

static int prefix_many(const struct sort_kv *v, uint32_t *s)
{
    size_t seen = 0;
    memset(s, 0, PLACES_SMALL * sizeof *s);
    for (uint32_t i = 0; i < PLACES_PREFIX; i++) {
        uint64_t key = v[i].key;
        size_t j = place_hash(key, PLACES_SMALL_BITS);
        while (s[j] && v[s[j] - 1].key != key)
            j = (j + 1) & (PLACES_SMALL - 1);
        if (!s[j]) {
            s[j] = i + 1;
            if (++seen > PLACES_PREFIX / PLACES_DISTINCT)
                return 1;
        }
    }
    return 0;
}

int sort_kv_places_desc(const struct sort_kv *v, size_t n, struct sort_kv *tmp, size_t ntmp,
                        uint32_t *place)
{
    int bits = 1;
    size_t distinct = 0, most = n / PLACES_DISTINCT;
    if (n < PLACES_MIN_N || n > UINT32_MAX)
        return 1;
    while (((size_t)1 << bits) < 2 * most)
        bits++;
    size_t cap = (size_t)1 << bits, mask = cap - 1;
    if (cap > ntmp)
        return 1;
    if (n < PLACES_BIG_N && prefix_many(v, place + n - PLACES_SMALL))
        return 1;
    struct place_slot *t = (struct place_slot *)(void *)tmp;
    memset(t, 0, cap * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        uint64_t key = v[i].key;
        size_t j = place_hash(key, bits);
        while (t[j].n && t[j].key != key)
            j = (j + 1) & mask;
        if (!t[j].n++) {
            t[j].key = key;
            if (++distinct > most)
                return 1;              /* many: the caller sorts */
        }
        place[i] = (uint32_t)j;
    }
    /* the distinct keys largest first; each one's first place is the
     * count of the pairs with larger keys */
    struct sort_kv *d = os_alloc_filled(distinct * sizeof *d);   /* (written whole: as out above) */
    if (!d)
        return -1;
    for (size_t j = 0, k = 0; j < cap; j++)
        if (t[j].n)
            d[k++] = (struct sort_kv){ t[j].key, (int64_t)j };
    if (sort_kv_desc(d, distinct)) {
        free(d);
        return -1;
    }
    uint32_t at = 0;
    for (size_t k = 0; k < distinct; k++) {
        struct place_slot *s = &t[d[k].val];
        s->next = at;
        at += s->n;
    }
    free(d);
    /* in input order: the equal keys take their places in it */
    for (size_t i = 0; i < n; i++)
        place[i] = t[place[i]].next++;
    return 0;
}

int sort_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}
