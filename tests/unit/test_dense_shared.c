/*
 * test_dense_shared.c: the prompt hook's dense scan made on the question's
 * thread (recall/dense.c, dense_pre: issue 16, hyb53) against the scan made
 * on the main thread.
 *
 *  - every piece's cosine made on a second thread from the cache file by
 *    pread, its blocks shared with the main thread, then selected: the
 *    same hits, bit for bit, as dense_topk / dense_topk_except (with a
 *    scope, with a session left out, a question equal to a stored piece),
 *    at every kernel level the CPU allows, on a set whose last block is
 *    partial and whose dimension is not a multiple of 64;
 *  - the cosines are used only when the main thread's set is that very
 *    file: a cache file replaced by a copy of itself (same bytes, another
 *    inode) or the cache turned off gives the main thread's own scan, with
 *    the same hits; and not once the connection's set is mapped and
 *    populated (a long-lived process's later questions);
 *  - veccache_read_run copies exactly the mapped bytes of a run and
 *    refuses a run past the end or a set without a mapping;
 *    veccache_read_ids the same for the pieces' rows, msg[n] then sess[n]
 *    as one array (the shared search selects from that copy: its hits
 *    above are the main thread's scan's, so the copy is read right).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "recall/recall.h"
#include "store/vectors.h"
#include "t_store.h"
#include "t_open.h"
#include "t_vec.h"

enum { D = 70, MSGS = 128, PIECES = 81 };     /* 10,368 vectors: over VEC_CACHE_MIN, 40.5
                                                 blocks of 256; 70 dims: a masked tail */
#define MODEL "test-model:1"

static char dir[256], store[300], cache[320];

static uint64_t rng = 0x2545f4914f6cdd1dULL;
static uint64_t next(void)
{
    return t_xorshift(&rng);
}

/* A new connection's set, mapped from the cache file (written by the
 * first connection): NULL when it is not. */
static const struct vec_set *load(struct cairn **hp)
{
    const struct vec_set *s = NULL;
    if (t_open(store, CAIRN_OPEN_READONLY, hp) != CAIRN_OK ||
        vec_set_get(*hp, MODEL, D, &s) != CAIRN_OK || !s || !s->map)
        return NULL;
    return s;
}

/* qn questions, each searched both ways, the shared scan first (the main
 * thread's scan populates the mapping, after which a connection reads it
 * from memory: vec_cache_where): how many differ, and how many were made
 * from the shared cosines. */
enum { QMAX = 48 };
static void compare(struct cairn *h, const struct vec_set *s, int qn, int *diff, int *shared)
{
    static struct dense_hit got[QMAX][DENSE_TOPK];
    static float q[QMAX][D];
    struct dense_hit ref[DENSE_TOPK];
    int64_t except[QMAX], allowed[3] = { 1, 3, 6 };
    int ng[QMAX];
    *diff = *shared = 0;
    for (int t = 0; t < qn && t < QMAX; t++) {
        for (int d = 0; d < D; d++)
            q[t][d] = (float)((int64_t)(next() % 2001) - 1000) / 1000.0f;
        if (t % 3 == 0) {                        /* a stored piece: ties with itself */
            size_t i = next() % s->n;
            for (int d = 0; d < D; d++)
                q[t][d] = (float)s->v8[i * D + d];
        }
        except[t] = t % 4 == 1 ? s->sess[next() % s->n] : 0;
        int use_allowed = t % 4 == 2, sh = -1;
        ng[t] = dense_topk_shared(h, s, q[t], use_allowed ? allowed : NULL, use_allowed ? 3 : 0,
                                  except[t], DENSE_TOPK, got[t], &sh);
        *shared += sh == 1;
    }
    for (int t = 0; t < qn && t < QMAX; t++) {
        int use_allowed = t % 4 == 2;
        int nr = use_allowed ? dense_topk(s, q[t], allowed, 3, DENSE_TOPK, 2, ref)
                             : dense_topk_except(s, q[t], except[t], DENSE_TOPK, 2, ref);
        T_CHECK(nr == DENSE_TOPK || use_allowed);
        *diff += !t_same_hits(ref, nr, got[t], ng[t]);
    }
}

static void test_same_hits(void)
{
    struct cairn *h = NULL;
    const struct vec_set *s;
    int diff, shared;
    unlink(cache);
    t_vec_store(store, MODEL, D, MSGS, PIECES);
    T_CHECK(load(&h) == NULL);                   /* the first reader writes the file */
    cairn_close(h);
    T_CHECK((s = load(&h)) != NULL);
    if (s) {
        T_EQ_INT((int)s->n, MSGS * PIECES);
        compare(h, s, QMAX, &diff, &shared);
        T_EQ_INT(diff, 0);
        T_EQ_INT(shared, QMAX);
        /* the connection's set is populated now: read from memory */
        compare(h, s, 4, &diff, &shared);
        T_EQ_INT(diff, 0);
        T_EQ_INT(shared, 0);
    }
    cairn_close(h);
    /* at every kernel level (the int8 sums are exact at each), each on a
     * fresh connection */
    static const char *const levels[] = { "scalar", "avx2", "avxvnni", "avx512vnni" };
    int ran = 0;
    for (size_t l = 0; l < sizeof levels / sizeof levels[0]; l++) {
        if (dense_kernel_set(levels[l]) != 0)
            continue;
        ran++;
        T_CHECK((s = load(&h)) != NULL);
        if (s) {
            compare(h, s, 8, &diff, &shared);
            T_EQ_INT(diff, 0);
            T_EQ_INT(shared, 8);
        }
        cairn_close(h);
    }
    dense_kernel_set(NULL);
    T_CHECK(ran >= 1);
}

/* The cosines of another file are never used, even with the same bytes. */
static void test_other_file(void)
{
    struct cairn *h = NULL;
    const struct vec_set *s;
    int diff, shared;
    T_CHECK((s = load(&h)) != NULL);
    if (s) {
        /* a copy renamed over it: another inode, the same header and body */
        char tmp[340], cmd[800];
        snprintf(tmp, sizeof tmp, "%s.copy", cache);
        snprintf(cmd, sizeof cmd, "cp '%s' '%s' && mv '%s' '%s'", cache, tmp, tmp, cache);
        T_EQ_INT(system(cmd), 0);
        compare(h, s, 12, &diff, &shared);
        T_EQ_INT(diff, 0);
        T_EQ_INT(shared, 0);
        /* the cache off: no file is read by the thread either */
        T_EQ_INT(cairn_set(h, "vec.cache", "0"), CAIRN_OK);
        compare(h, s, 6, &diff, &shared);
        T_EQ_INT(diff, 0);
        T_EQ_INT(shared, 0);
    }
    cairn_close(h);
}

static void test_read_run(void)
{
    struct cairn *h = NULL;
    const struct vec_set *s;
    T_CHECK((s = load(&h)) != NULL);
    if (s) {
        int8_t *buf = malloc(300 * (size_t)D);
        T_CHECK(buf != NULL);
        if (buf) {
            size_t from[] = { 0, 1, 255, 256, s->n - 300 };
            for (size_t i = 0; i < sizeof from / sizeof *from; i++) {
                memset(buf, 0x55, 300 * (size_t)D);
                T_EQ_INT(veccache_read_run(s, from[i], 300, buf), 0);
                T_CHECK(!memcmp(buf, s->v8 + from[i] * D, 300 * (size_t)D));
            }
            T_EQ_INT(veccache_read_run(s, s->n - 299, 300, buf), -1);
            T_EQ_INT(veccache_read_run(s, s->n + 1, 0, buf), -1);
            T_EQ_INT(veccache_read_run(s, 0, 0, buf), 0);
            struct vec_set heap = *s;            /* a set without a mapping */
            heap.map = NULL;
            T_EQ_INT(veccache_read_run(&heap, 0, 1, buf), -1);
            free(buf);
        }
        /* the rows: msg[n] then sess[n], any run of the 2n, across the seam */
        size_t n2 = 2 * s->n;
        int64_t *ids = malloc((n2 + 1) * sizeof *ids);
        T_CHECK(ids != NULL);
        if (ids) {
            size_t from[] = { 0, 1, s->n - 5, s->n, n2 - 300 };
            for (size_t i = 0; i < sizeof from / sizeof *from; i++) {
                memset(ids, 0x55, (n2 + 1) * sizeof *ids);
                T_EQ_INT(veccache_read_ids(s, from[i], 300, ids), 0);
                int same = 1;
                for (size_t j = 0; j < 300; j++) {
                    size_t e = from[i] + j;
                    same &= ids[j] == (e < s->n ? s->msg[e] : s->sess[e - s->n]);
                }
                T_CHECK(same);
                T_CHECK(ids[300] == (int64_t)0x5555555555555555LL);   /* no more */
            }
            T_EQ_INT(veccache_read_ids(s, 0, n2, ids), 0);
            T_CHECK(!memcmp(ids, s->msg, s->n * sizeof *ids) &&
                    !memcmp(ids + s->n, s->sess, s->n * sizeof *ids));
            T_EQ_INT(veccache_read_ids(s, n2 - 299, 300, ids), -1);
            T_EQ_INT(veccache_read_ids(s, n2 + 1, 0, ids), -1);
            T_EQ_INT(veccache_read_ids(s, 0, 0, ids), 0);
            struct vec_set heap = *s;
            heap.map = NULL;
            T_EQ_INT(veccache_read_ids(&heap, 0, 1, ids), -1);
            free(ids);
        }
    }
    cairn_close(h);
}

int main(void)
{
    if (t_vec_dir("cairn-denseshared", dir, sizeof dir, store, sizeof store))
        return 1;
    snprintf(cache, sizeof cache, "%s-vec", store);
    T_RUN(test_same_hits);
    T_RUN(test_other_file);
    T_RUN(test_read_run);
    t_vec_rmdir("test_dense_shared", dir, store);
    return T_DONE();
}
