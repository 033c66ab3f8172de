/*
 * t.h: the tiny unit-test harness. Each tests/unit/test_*.c is its own
 * program: it calls T_CHECK / T_EQ_* inside test functions listed in
 * main via T_RUN, and ends with T_DONE(), which prints
 * "N passed, N failed, N skipped" and returns non-zero on failure.
 * tests/run.sh adds the counts of every program up.
 *
 * A part that cannot run here (no data, no model) calls T_SKIP(reason):
 * it prints "SKIP <test function>: reason" on stdout, which tests/run.sh
 * lists at the end, and counts one skipped, never a pass (see
 * tests/README.md).
 *
 * A "check" is one assertion; a failing one prints file:line and the
 * expression to stderr and the test function goes on (so one run shows
 * every failure).
 */
#ifndef CAIRN_T_H
#define CAIRN_T_H

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <stdlib.h>

static int t_passed, t_failed, t_skipped;
static const char *t_current = "";

#define T_CHECK(cond) do { \
    if (cond) t_passed++; \
    else { t_failed++; fprintf(stderr, "FAIL %s:%d [%s] %s\n", __FILE__, __LINE__, \
                               t_current, #cond); } \
} while (0)

#define T_EQ_INT(a, b) do { \
    long long t_a_ = (long long)(a), t_b_ = (long long)(b); \
    if (t_a_ == t_b_) t_passed++; \
    else { t_failed++; fprintf(stderr, "FAIL %s:%d [%s] %s == %s: %lld != %lld\n", \
                               __FILE__, __LINE__, t_current, #a, #b, t_a_, t_b_); } \
} while (0)

#define T_EQ_STR(a, b) do { \
    const char *t_a_ = (a), *t_b_ = (b); \
    if (t_a_ && t_b_ && strcmp(t_a_, t_b_) == 0) t_passed++; \
    else { t_failed++; fprintf(stderr, "FAIL %s:%d [%s] %s == %s: \"%s\" != \"%s\"\n", \
                               __FILE__, __LINE__, t_current, #a, #b, \
                               t_a_ ? t_a_ : "(null)", t_b_ ? t_b_ : "(null)"); } \
} while (0)

#define T_SKIP(...) do { \
    t_skipped++; printf("SKIP %s: ", *t_current ? t_current : __FILE__); printf(__VA_ARGS__); printf("\n"); \
    fflush(stdout); \
} while (0)

#define T_RUN(fn) do { t_current = #fn; fn(); } while (0)

/* xorshift64: a test's repeatable random numbers from its own state *s. */
static inline uint32_t t_xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return (uint32_t)*s;
}

/* Cosine similarity of two float vectors, in double; 0 when either is all
 * zeros (the encoder tests compare vectors with it). */
static inline double t_cosine(const float *a, const float *b, int n)
{
    double ab = 0, aa = 0, bb = 0;
    int i;

    for (i = 0; i < n; i++) {
        ab += (double)a[i] * b[i];
        aa += (double)a[i] * a[i];
        bb += (double)b[i] * b[i];
    }
    return aa > 0 && bb > 0 ? ab / sqrt(aa * bb) : 0.0;
}

/* xorshift64: uniform floats in [-1, 1) from *state (nonzero), and
 * malloc'd arrays of them times scale (NULL if out of memory). */
static inline float t_frand(unsigned long long *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return (float)((*state >> 11) * (1.0 / 9007199254740992.0)) * 2.0f - 1.0f;
}

static inline float *t_rand_array(unsigned long long *state, size_t n, float scale)
{
    float *a = malloc(n * sizeof(float));
    size_t i;

    for (i = 0; a && i < n; i++)
        a[i] = t_frand(state) * scale;
    return a;
}

/* The whole file at path, NUL-terminated, malloc'd; NULL if unreadable. */
static inline char *t_read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)n + 1)) != NULL && fread(p, 1, (size_t)n, f) == (size_t)n)
        p[n] = 0;
    else if (p) {
        free(p);
        p = NULL;
    }
    fclose(f);
    return p;
}

#define T_DONE() ( printf("%d passed, %d failed, %d skipped\n", t_passed, t_failed, t_skipped), \
                   t_failed ? 1 : 0 )

#endif
