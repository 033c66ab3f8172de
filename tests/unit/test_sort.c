/*
 * test_sort.c: the stable pair sort recall ranks with (util/sort.h) and
 * the big-array allocation (util/os.h).
 *
 * Recall's results depend on the exact order of equal scores (a unit's
 * rank in each fused ranking), so the sort is checked against the
 * definition by brute force: an item's place is the number of items with
 * a larger key plus the number of earlier items with the same key. Keys
 * are drawn from small ranges so that ties are the rule, as they are for
 * BM25 scores of one-word turns of the same length.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "t.h"
#include "util/os.h"
#include "util/sort.h"

/* splitmix64: a fixed seed, so a failure repeats */
static uint64_t rng_state = 20261202;

static uint64_t next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* A double from a small set (ties), spread over magnitudes and signs. */
static double pick_double(int spread)
{
    static const double base[] = { 0.0, -0.0, 1.0, 0.5, 3.25, 1e-300, 7.0e10, -2.0, -1e-5 };
    double x = base[next() % (sizeof base / sizeof *base)];
    if (spread)
        x *= 1.0 + (double)(next() % 5) / 1024;
    return x;
}

/* The place of item i in the stable descending order, by brute force. */
static size_t place(const uint64_t *key, size_t n, size_t i)
{
    size_t r = 0;
    for (size_t j = 0; j < n; j++)
        r += key[j] > key[i] || (key[j] == key[i] && j < i);
    return r;
}

static void check_sorted(const uint64_t *key, size_t n)
{
    struct sort_kv *v = malloc((n ? n : 1) * sizeof *v);
    T_CHECK(v != NULL);
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        v[i] = (struct sort_kv){ key[i], (int64_t)i };
    T_EQ_INT(sort_kv_desc(v, n), 0);
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++)
        ok = place(key, n, (size_t)v[i].val) == i && v[i].key == key[v[i].val];
    T_CHECK(ok);
    /* the same through a scratch the caller gives, holding rubbish */
    struct sort_kv *w = malloc((n ? n : 1) * sizeof *w), *tmp = malloc((n ? n : 1) * sizeof *tmp);
    T_CHECK(w && tmp);
    if (w && tmp) {
        for (size_t i = 0; i < n; i++) {
            w[i] = (struct sort_kv){ key[i], (int64_t)i };
            tmp[i] = (struct sort_kv){ next(), -1 };
        }
        T_EQ_INT(sort_kv_desc_tmp(w, n, tmp), 0);
        T_CHECK(!memcmp(w, v, n * sizeof *v));
    }
    free(w);
    free(tmp);
    free(v);
}

static void test_random_orders(void)
{
    for (int round = 0; round < 200; round++) {
        size_t n = (size_t)(next() % 700);
        uint64_t *key = malloc((n ? n : 1) * sizeof *key);
        T_CHECK(key != NULL);
        if (!key)
            return;
        int kind = round % 4;
        for (size_t i = 0; i < n; i++) {
            switch (kind) {
            case 0: key[i] = next() % 7; break;                         /* few values */
            case 1: key[i] = next(); break;                             /* all bits */
            case 2: key[i] = sort_key_double(pick_double(1)); break;    /* scores */
            default: key[i] = (next() % 3) << 60 | (next() % 3) << 20; break; /* sparse digits */
            }
        }
        check_sorted(key, n);
        free(key);
    }
}

/* Both sides of the size where the merge sort hands over to the radix
 * sort (SMALL_N in sort.c, 4096): the same stable order either way. */
static void test_either_side(void)
{
    static const size_t sizes[] = { 4095, 4096, 4097, 6000 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n = sizes[s];
        uint64_t *key = malloc(n * sizeof *key);
        T_CHECK(key != NULL);
        if (!key)
            return;
        for (size_t i = 0; i < n; i++)
            key[i] = s % 2 ? sort_key_double(pick_double(1)) : next() % 13;
        check_sorted(key, n);
        free(key);
    }
}

/* The radix sort's passes (past SMALL_N) with its 32-bit digit counts:
 * every digit the same in every key (no pass moves a pair), one digit
 * varying (one pass: v read and written by it), the top digit alone,
 * two middle ones, and scores; ties the rule throughout. Checked
 * against the brute-force place, pair for pair. */
static void test_radix_passes(void)
{
    size_t n = 5000;
    uint64_t *key = malloc(n * sizeof *key);
    T_CHECK(key != NULL);
    if (!key)
        return;
    for (int kind = 0; kind < 5; kind++) {
        for (size_t i = 0; i < n; i++) {
            switch (kind) {
            case 0: key[i] = UINT64_C(0x0123456789abcdef); break;
            case 1: key[i] = UINT64_C(0x7000000000000000) | next() % 9; break;
            case 2: key[i] = (next() % 5) << 58 | 12345; break;
            case 3: key[i] = (next() % 4) << 25 | (next() % 3) << 40; break;
            default: key[i] = sort_key_double(pick_double(1)); break;
            }
        }
        check_sorted(key, n);
    }
    free(key);
}

/* The reference order of the wide digits' tests: key, largest first, then
 * input order. */
static int cmp_ref(const void *a, const void *b)
{
    const struct sort_kv *x = a, *y = b;
    if (x->key != y->key)
        return x->key > y->key ? -1 : 1;
    return x->val < y->val ? -1 : x->val > y->val;
}

/* From 65,536 pairs the digits are 12 bits (sort.c WIDE_N): keys varying
 * in 4 to 64 bits, fused-score-like doubles over ~15 binades (57 bits, the
 * case it is for), each with many ties, on both sides of the bound and
 * through a given scratch, against qsort by key then input order. */
static void test_wide(void)
{
    static const size_t ns[] = { 65535, 65536, 70001 };
    static const int widths[] = { 4, 12, 13, 24, 47, 48, 49, 56, 57, 60, 61, 64 };
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        size_t n = ns[a];
        struct sort_kv *v = malloc(n * sizeof *v), *ref = malloc(n * sizeof *ref);
        struct sort_kv *tmp = malloc(n * sizeof *tmp);
        T_CHECK(v && ref && tmp);
        for (size_t w = 0; v && ref && tmp && w <= sizeof widths / sizeof *widths; w++) {
            int bits = w < sizeof widths / sizeof *widths ? widths[w] : 0;
            uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
            for (size_t i = 0; i < n; i++) {
                uint64_t k = next() & mask;
                if (i % 3 == 1)
                    k = v[next() % i].key;          /* a tie with an earlier one */
                if (bits == 0)                      /* fused-like: 0.8 / (61 + place) and sums */
                    k = sort_key_double(0.8 / (61 + (double)(next() % 400000)) +
                                        (next() % 2 ? 0.6 / (61 + (double)(next() % 200000)) : 0));
                v[i] = (struct sort_kv){ k | (bits && bits < 64 ? UINT64_C(0x5) << 60 : 0),
                                         (int64_t)i };
                tmp[i] = (struct sort_kv){ next(), -1 };
            }
            memcpy(ref, v, n * sizeof *v);
            qsort(ref, n, sizeof *ref, cmp_ref);
            T_EQ_INT(w % 2 ? sort_kv_desc_tmp(v, n, tmp) : sort_kv_desc(v, n), 0);
            if (memcmp(v, ref, n * sizeof *v))
                fprintf(stderr, "wide n=%zu bits=%d: not the reference order\n", n, bits);
            T_CHECK(!memcmp(v, ref, n * sizeof *v));
        }
        free(v);
        free(ref);
        free(tmp);
    }
}

/* Past the size where os_alloc_big asks for huge pages, and with one
 * digit the same in every key (a pass that is skipped). */
static void test_big(void)
{
    size_t n = 300000;
    uint64_t *key = malloc(n * sizeof *key);
    struct sort_kv *v = malloc(n * sizeof *v);
    T_CHECK(key && v);
    if (!key || !v)
        goto out;
    for (size_t i = 0; i < n; i++) {
        key[i] = (uint64_t)1 << 62 | (next() % 1000);
        v[i] = (struct sort_kv){ key[i], (int64_t)i };
    }
    T_EQ_INT(sort_kv_desc(v, n), 0);
    int ok = 1;
    for (size_t i = 1; i < n && ok; i++)
        ok = v[i - 1].key > v[i].key || (v[i - 1].key == v[i].key && v[i - 1].val < v[i].val);
    T_CHECK(ok);
    /* the radix sort through a scratch the caller gives: the same */
    struct sort_kv *w = malloc(2 * n * sizeof *w);
    T_CHECK(w != NULL);
    if (w) {
        for (size_t i = 0; i < n; i++) {
            w[i] = (struct sort_kv){ key[i], (int64_t)i };
            w[n + i] = (struct sort_kv){ next(), -1 };
        }
        T_EQ_INT(sort_kv_desc_tmp(w, n, w + n), 0);
        T_CHECK(!memcmp(w, v, n * sizeof *v));
    }
    free(w);
out:
    free(key);
    free(v);
}

/* sort_kv_desc_two, each half on a thread and merged, gives sort_kv_desc's
 * order pair for pair (checked by brute force above): on both sides of
 * SORT_TWO_MIN, with ties across the halves (few values: a merge taking
 * the second half's pair first on a tie fails), scores and all bits. */
static void test_two(void)
{
    const size_t sizes[] = { 1000, SORT_TWO_MIN - 1, SORT_TWO_MIN, SORT_TWO_MIN + 1, 200001 };
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        for (int kind = 0; kind < 3; kind++) {
            size_t n = sizes[s];
            struct sort_kv *v = malloc(n * sizeof *v), *w = malloc(n * sizeof *w);
            T_CHECK(v && w);
            if (!v || !w) {
                free(v);
                free(w);
                return;
            }
            for (size_t i = 0; i < n; i++) {
                uint64_t k = kind == 0 ? next() % 5
                             : kind == 1 ? sort_key_double(pick_double(1)) : next();
                v[i] = w[i] = (struct sort_kv){ k, (int64_t)i };
            }
            T_EQ_INT(sort_kv_desc(v, n), 0);
            T_EQ_INT(sort_kv_desc_two(w, n, 1), 0);
            T_CHECK(!memcmp(w, v, n * sizeof *v));
            free(v);
            free(w);
        }
    }
}

/* sort_kv_top picks the set sort_kv_desc puts first, in input order:
 * checked against the stable sort itself, for k below, at and past n,
 * keys with many ties (a tie at the k-th key) and keys all distinct,
 * sizes on both sides of the merge sort's. */
static void test_top(void)
{
    static const size_t sizes[] = { 0, 1, 2, 7, 100, 1000, 5000, 20000 };
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si];
        for (int s = 0; s < 4; s++) {
            size_t k = s == 0 ? 0 : s == 1 ? n / 3 + 1 : s == 2 ? n : (size_t)(next() % (n + 2));
            struct sort_kv *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
            unsigned char *in = calloc(n ? n : 1, 1);
            T_CHECK(a && b && in);
            if (!a || !b || !in) {
                free(a), free(b), free(in);
                return;
            }
            for (size_t i = 0; i < n; i++) {
                uint64_t key = s % 2 ? next() % 7 : sort_key_double(pick_double(1));
                a[i] = b[i] = (struct sort_kv){ key, (int64_t)i };
            }
            long m = sort_kv_top(a, n, k);
            T_EQ_INT(m, (long)(k < n ? k : n));
            T_EQ_INT(sort_kv_desc(b, n), 0);
            for (size_t i = 0; i < (size_t)m && i < n; i++)
                in[b[i].val] = 1;
            int ok = 1;
            for (long i = 0; i < m && ok; i++) {
                ok = in[a[i].val];
                ok = ok && (i == 0 || a[i - 1].val < a[i].val);   /* input order */
                in[a[i].val] = 0;                                  /* each once */
            }
            T_CHECK(ok);
            free(a), free(b), free(in);
        }
    }
}

/* The keys order as the numbers do: compared with <, for every pair. */
static void test_keys(void)
{
    double d[64];
    int64_t s[64];
    for (int i = 0; i < 64; i++) {
        d[i] = pick_double(1) * (double)(next() % 3);
        s[i] = (int64_t)next();
    }
    d[0] = 1.0 / 0.0;
    d[1] = -1.0 / 0.0;
    s[0] = INT64_MIN;
    s[1] = INT64_MAX;
    s[2] = 0;
    s[3] = -1;
    int ok_d = 1, ok_s = 1;
    for (int i = 0; i < 64; i++) {
        for (int j = 0; j < 64; j++) {
            uint64_t a = sort_key_double(d[i]), b = sort_key_double(d[j]);
            ok_d &= (d[i] < d[j]) == (a < b) && (d[i] == d[j]) == (a == b);
            uint64_t x = sort_key_i64(s[i]), y = sort_key_i64(s[j]);
            ok_s &= (s[i] < s[j]) == (x < y) && (s[i] == s[j]) == (x == y);
        }
    }
    T_CHECK(ok_d);
    T_CHECK(ok_s);
    T_CHECK(sort_key_double(0.0) == sort_key_double(-0.0));
    /* sort_key_pos: sort_key_double's key for every x > 0 */
    int ok_p = 1, npos = 0;
    for (int i = 0; i < 4096; i++) {
        double x = i < 64 ? d[i] : pick_double(1) * (double)(1 + next() % 1000);
        if (x > 0) {
            ok_p &= sort_key_pos(x) == sort_key_double(x);
            npos++;
        }
    }
    T_CHECK(ok_p);
    T_CHECK(npos > 1000);
    T_CHECK(sort_key_pos(1.0 / 0.0) == sort_key_double(1.0 / 0.0));
    T_CHECK(sort_key_pos(4.9e-324) == sort_key_double(4.9e-324));
}

static void test_alloc_big(void)
{
    size_t sizes[] = { 0, 1, 4096, (size_t)4 << 20, (size_t)9 << 20 };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = os_alloc_big(sizes[i]);
        T_CHECK(p != NULL);
        if (!p)
            continue;
        if (sizes[i]) {
            memset(p, 0xab, sizes[i]);
            T_CHECK(p[sizes[i] - 1] == 0xab);
        }
        unsigned char *q = realloc(p, sizes[i] + 100);  /* realloc works on it */
        T_CHECK(q != NULL);
        if (q && sizes[i])
            T_CHECK(q[sizes[i] - 1] == 0xab);
        free(q ? q : p);
    }
}

/* Pages of [a, a + n) in memory now (mincore), of those wholly inside. */
static size_t resident(const unsigned char *a, size_t n, size_t *whole)
{
    uintptr_t s = ((uintptr_t)a + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)a + n) & ~(uintptr_t)4095;
    size_t np = e > s ? (e - s) / 4096 : 0, in = 0;
    unsigned char *v = malloc(np ? np : 1);
    *whole = np;
    if (!v)
        return 0;
    if (np && mincore((void *)s, e - s, v) == 0)
        for (size_t i = 0; i < np; i++)
            in += v[i] & 1;
    free(v);
    return in;
}

/* os_alloc_filled: usable as os_alloc_big is, and its whole pages are in
 * memory before the first write (faulted in by one call, not one a page). */
static void test_alloc_filled(void)
{
    size_t sizes[] = { 0, 1, 65535, 65536, (size_t)600 << 10 | 3, (size_t)4 << 20, (size_t)9 << 20 };
    int can = 1;
#ifdef MADV_POPULATE_WRITE
    void *probe = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    can = probe != MAP_FAILED && madvise(probe, 4096, MADV_POPULATE_WRITE) == 0;
    if (probe != MAP_FAILED)
        munmap(probe, 4096);
#else
    can = 0;
#endif
    if (!can)
        T_SKIP("MADV_POPULATE_WRITE not supported here: residency not checked");
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned char *p = os_alloc_filled(sizes[i]);
        T_CHECK(p != NULL);
        if (!p)
            continue;
        size_t whole, in = resident(p, sizes[i], &whole);
        if (can && sizes[i] >= 65536)
            T_EQ_INT((int)in, (int)whole);
        if (sizes[i]) {
            memset(p, 0xcd, sizes[i]);
            T_CHECK(p[0] == 0xcd && p[sizes[i] - 1] == 0xcd);
        }
        unsigned char *q = realloc(p, sizes[i] + 100);
        T_CHECK(q != NULL);
        free(q ? q : p);
    }
}

/* os_populate_pages: every page holding a byte of the range in memory,
 * those at its ends too (a range a page's middle to another's), no page
 * outside it, what the pages held kept; nothing for an empty range. Over a
 * fresh mapping of 4 KB pages, so residency says what the call did. */
static void test_populate_pages(void)
{
    const size_t np = 64, pg = 4096;
#ifdef MADV_POPULATE_WRITE
    unsigned char *m = mmap(NULL, np * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    T_CHECK(m != MAP_FAILED);
    if (m == MAP_FAILED)
        return;
#ifdef MADV_NOHUGEPAGE
    (void)madvise(m, np * pg, MADV_NOHUGEPAGE);
#endif
    if (madvise(m, pg, MADV_POPULATE_WRITE) != 0) {
        T_SKIP("MADV_POPULATE_WRITE not supported here: residency not checked");
        munmap(m, np * pg);
        return;
    }
    m[20 * pg + 7] = 0x5a;              /* a page already written, inside a range below */
    unsigned char v[64];
    /* (from, bytes): within one page, a page's middle to another's, whole
     * pages, one byte at a page's end, none */
    const size_t r[][2] = { { 3 * pg + 100, 200 }, { 8 * pg + 4000, pg + 200 },
                            { 16 * pg, 2 * pg }, { 19 * pg + 4095, 1 }, { 18 * pg + 8, 2 * pg },
                            { 40 * pg + 5, 0 } };
    for (size_t i = 0; i < sizeof r / sizeof *r; i++)
        os_populate_pages(m + r[i][0], r[i][1]);
    os_populate_pages(NULL, 4096);      /* (nothing to do) */
    T_CHECK(mincore(m, np * pg, v) == 0);
    for (size_t i = 1; i < np; i++) {   /* page 0: the probe */
        int want = i == 3 || i == 8 || i == 9 || i == 10 || i == 16 || i == 17 || i == 18 ||
                   i == 19 || i == 20;
        T_EQ_INT(i * 10 + (v[i] & 1), i * 10 + want);   /* (the page in the message) */
    }
    T_CHECK(m[20 * pg + 7] == 0x5a && m[3 * pg + 100] == 0 && m[9 * pg] == 0);
    munmap(m, np * pg);
#else
    (void)np, (void)pg;
    T_SKIP("MADV_POPULATE_WRITE not defined here: os_populate_pages is advice only");
#endif
}

/* sort_kv_places_desc against the places sort_kv_desc gives (itself
 * checked by brute force above) and, small, against the brute force: keys
 * drawn from d distinct values, d from one to every key, across the
 * bounds on pairs (16,384 and 65,536) and on distinct keys (n / 4; below
 * 65,536 pairs also 1,024 among the first 4,096): counted within them,
 * declined (1) past them or with too little scratch for the table; v
 * untouched. */
static void check_places(size_t n, size_t d)
{
    uint64_t *pool = malloc((d ? d : 1) * sizeof *pool);
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    struct sort_kv *v = malloc((n ? n : 1) * sizeof *v), *w = malloc((n ? n : 1) * sizeof *w);
    struct sort_kv *tmp = malloc((n ? n : 1) * sizeof *tmp);
    uint32_t *got = malloc((n ? n : 1) * sizeof *got), *want = malloc((n ? n : 1) * sizeof *want);
    T_CHECK(pool && key && v && w && tmp && got && want);
    if (!pool || !key || !v || !w || !tmp || !got || !want)
        goto out;
    for (size_t j = 0; j < d; j++)       /* the edges too: 0 and all ones */
        pool[j] = j == 0 ? 0 : j == 1 ? UINT64_MAX : next();
    size_t seen = 0;
    for (size_t i = 0; i < n; i++) {     /* every value used: d distinct */
        key[i] = pool[seen < d && next() % 2 ? seen++ : next() % (seen ? seen : 1)];
        v[i] = w[i] = (struct sort_kv){ key[i], (int64_t)(next() >> 1) };
    }
    size_t head = 0;                     /* distinct among the first 4,096 */
    for (size_t i = 0; i < n && i < 4096; i++) {
        size_t k = 0;
        while (k < i && key[k] != key[i])
            k++;
        head += k == i;
    }
    int counted = n >= 16384 && seen <= n / 4 && (n >= 65536 || head <= 1024);
    /* the table's scratch: short of it, declined */
    T_EQ_INT(sort_kv_places_desc(v, n, tmp, n / 8, got), 1);
    T_EQ_INT(sort_kv_places_desc(v, n, tmp, n, got), counted ? 0 : 1);
    int same = 1;
    for (size_t i = 0; i < n; i++)
        same &= v[i].key == w[i].key && v[i].val == w[i].val;
    T_CHECK(same);
    if (!counted)
        goto out;
    for (size_t i = 0; i < n; i++)
        w[i].val = (int64_t)i;
    T_EQ_INT(sort_kv_desc(w, n), 0);
    for (size_t r = 0; r < n; r++)
        want[w[r].val] = (uint32_t)r;
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += got[i] != want[i] || (n <= 6000 && got[i] != place(key, n, i));
    if (bad)
        fprintf(stderr, "places n=%zu d=%zu: %zu wrong\n", n, d, bad);
    T_EQ_INT(bad, 0);
out:
    free(pool);
    free(key);
    free(v);
    free(w);
    free(tmp);
    free(got);
    free(want);
}

static void test_places(void)
{
    static const size_t ns[] = { 0, 1, 2, 100, 4097, 16383, 16384, 40000, 65535, 65536, 100000,
                                 262145 };
    for (size_t a = 0; a < sizeof ns / sizeof *ns; a++) {
        size_t n = ns[a];
        /* (1,024 and 1,025: at the prefix's bound when drawn early) */
        const size_t ds[] = { 1, 2, 7, 50, 1024, 1025, 3000, n / 8, n / 4, n / 4 + 1, n };
        for (size_t b = 0; b < sizeof ds / sizeof *ds; b++)
            if (ds[b] >= 1 && ds[b] <= (n ? n : 1))
                check_places(n, ds[b]);
    }
}

int main(void)
{
    T_RUN(test_random_orders);
    T_RUN(test_either_side);
    T_RUN(test_radix_passes);
    T_RUN(test_big);
    T_RUN(test_wide);
    T_RUN(test_two);
    T_RUN(test_top);
    T_RUN(test_places);
    T_RUN(test_keys);
    T_RUN(test_alloc_big);
    T_RUN(test_alloc_filled);
    T_RUN(test_populate_pages);
    return T_DONE();
}
