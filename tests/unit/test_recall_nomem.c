/*
 * test_recall_nomem: cairn_recall when an allocation in the ranking fails.
 *
 * This program replaces malloc, calloc and realloc (glibc lets a program
 * interpose them) with versions that, once armed, fail the Nth call made
 * inside the ranking (the link wraps rank_default and rank_raw_bm25, see
 * the Makefile). For every N up to the number of allocations one ranking
 * makes, the recall must either fail (an error code) or return exactly
 * what it returns with memory to spare: the same items with the same
 * fused scores. A ranking that left a fusion out when its buffer could
 * not be had, and still said CAIRN_OK (rank.c's rrf did), fails it.
 *
 * Skipped under AddressSanitizer and valgrind, which bring allocators of
 * their own that this one would be put in front of.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
int main(void)
{
    printf("SKIP test_recall_nomem: AddressSanitizer's allocator cannot be interposed\n");
    printf("0 passed, 0 failed\n");
    return 0;
}
#else

#include "t.h"
#include "t_open.h"
#include "recall/recall.h"

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

static long g_calls;          /* allocations since armed */
static long g_fail_at = -1;   /* which one fails; -1: none */
static int g_failed;          /* the armed failure happened */

static int g_in_rank;         /* inside rank_default / rank_raw_bm25 */

static int fail_now(void)
{
    if (g_fail_at < 0 || !g_in_rank)
        return 0;
    if (g_calls++ == g_fail_at) {
        g_failed = 1;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    return fail_now() ? NULL : __libc_malloc(n);
}

void *calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __libc_realloc(p, n);
}

/* The link wraps the ranking (the Makefile's --wrap for this program):
 * only the allocations made while ranking are failed. */
int __real_rank_default(struct pool *p, struct query *q, int use_time,
                        const struct dense_result *dense);
int __wrap_rank_default(struct pool *p, struct query *q, int use_time,
                        const struct dense_result *dense);
int __real_rank_raw_bm25(struct pool *p, struct query *q);
int __wrap_rank_raw_bm25(struct pool *p, struct query *q);

int __wrap_rank_default(struct pool *p, struct query *q, int use_time,
                        const struct dense_result *dense)
{
    g_in_rank++;
    int rc = __real_rank_default(p, q, use_time, dense);
    g_in_rank--;
    return rc;
}

int __wrap_rank_raw_bm25(struct pool *p, struct query *q)
{
    g_in_rank++;
    int rc = __real_rank_raw_bm25(p, q);
    g_in_rank--;
    return rc;
}

static void arm(long at)
{
    g_calls = 0;
    g_failed = 0;
    g_fail_at = at;
}

static void disarm(void)
{
    g_fail_at = -1;
}

static void add(struct cairn *db, const char *id, int dialog, const char *const *texts, int n)
{
    struct cairn_message m[8];
    struct cairn_session s;
    char mid[8][8];
    memset(&s, 0, sizeof s);
    memset(m, 0, sizeof m);
    for (int i = 0; i < n; i++) {
        snprintf(mid[i], sizeof mid[i], "m%d", i);
        m[i].id = mid[i];
        m[i].role = dialog || i % 2 == 0 ? "user" : "assistant";
        m[i].speaker = dialog ? (i % 2 ? "Bob" : "Alice") : NULL;
        m[i].content = texts[i];
        m[i].at = CAIRN_NO_TIME;
    }
    s.id = id;
    s.started_at = 1700000000 + 86400 * (int64_t)strlen(id);
    s.ended_at = CAIRN_NO_TIME;
    s.messages = m;
    s.n_messages = (size_t)n;
    T_EQ_INT(cairn_add_session(db, &s, NULL), CAIRN_OK);
}

/* Items and scores of a recall, one line each, for comparison. */
static char *summary(const struct cairn_recall *r)
{
    size_t cap = 64 + r->n_items * 96 + strlen(r->text), n = 0;
    char *s = __libc_malloc(cap);
    if (!s)
        return NULL;
    n += (size_t)snprintf(s + n, cap - n, "tokens %d\n", r->tokens);
    for (size_t i = 0; i < r->n_items && n < cap; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s %s %.9f %d\n", r->items[i].session,
                              r->items[i].message, r->items[i].score, r->items[i].excerpt);
    if (n < cap)
        snprintf(s + n, cap - n, "%s", r->text);
    return s;
}

/* Every single allocation failure in one recall's ranking: an error, or
 * the result with memory to spare. Returns how many runs had a failure
 * injected. */
static long sweep(struct cairn *db, const char *question, int method)
{
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    long runs = 0, silent = 0, errors = 0;
    char *ref;

    o.budget = 300;
    o.method = method;
    o.now = 1700000000 + 86400 * 30;
    o.explain = 1;               /* the items carry their fused scores */
    T_EQ_INT(cairn_recall(db, question, &o, &r), CAIRN_OK);
    if (!r)
        return 0;
    T_CHECK(r->n_items >= 2);
    ref = summary(r);
    cairn_recall_free(r);
    for (long at = 0; ref; at++) {
        int rc;
        r = NULL;
        arm(at);
        rc = cairn_recall(db, question, &o, &r);
        disarm();
        if (!g_failed) {          /* past the last allocation: done */
            T_EQ_INT(rc, CAIRN_OK);
            cairn_recall_free(r);
            break;
        }
        runs++;
        if (rc != CAIRN_OK) {
            errors++;
            T_CHECK(r == NULL);
            continue;
        }
        char *got = summary(r);
        if (!got || strcmp(got, ref)) {
            silent++;
            fprintf(stderr, "allocation %ld in the ranking failed, recall said CAIRN_OK "
                    "with another result (method %d)\n", at, method);
        }
        free(got);
        cairn_recall_free(r);
    }
    T_EQ_INT(silent, 0);
    T_CHECK(errors > 0);
    free(ref);
    return runs;
}

static struct cairn *g_db;

static void setup(void)
{
    static const char *const trip[] = {
        "We should plan the hiking trip to the Alps in July",
        "Yes, the Matterhorn trail near Zermatt is a good hiking route",
        "I also need new boots before the trip",
        "The outdoor shop in town has hiking boots on sale",
    };
    static const char *const cook[] = {
        "How do I bake sourdough bread at home?",
        "Feed the starter, mix flour and water, then bake at 250 degrees",
        "My bread came out flat last week",
        "A flat loaf usually means the starter was weak",
    };
    static const char *const chat[] = {
        "Alice here: I booked the train to Zermatt for the hiking trip",
        "Bob: great, I will bring the map and the boots",
        "Alice: the weather in the Alps looks good for July",
        "Bob: then the trip is on",
    };
    T_EQ_INT(t_open(":memory:", 0, &g_db), CAIRN_OK);
    add(g_db, "trip", 0, trip, 4);
    add(g_db, "cooking", 0, cook, 4);
    add(g_db, "friends", 1, chat, 4);
}

static void test_default(void)
{
    T_CHECK(sweep(g_db, "which hiking boots for the Alps trip did Bob bring?",
                  CAIRN_METHOD_DEFAULT) >= 10);
}

static void test_keyword_time(void)
{
    T_CHECK(sweep(g_db, "what did I bake last week?", CAIRN_METHOD_KEYWORD) >= 10);
}

static void test_raw_bm25(void)
{
    T_CHECK(sweep(g_db, "hiking trip boots", CAIRN_METHOD_RAW_BM25) >= 2);
}

int main(void)
{
    const char *pre = getenv("LD_PRELOAD");
    if (pre && strstr(pre, "vgpreload")) {
        printf("SKIP test_recall_nomem: valgrind replaces the allocator this test wraps\n");
        printf("0 passed, 0 failed\n");
        return 0;
    }
    setup();
    T_RUN(test_default);
    T_RUN(test_keyword_time);
    T_RUN(test_raw_bm25);
    cairn_close(g_db);
    return T_DONE();
}
#endif
