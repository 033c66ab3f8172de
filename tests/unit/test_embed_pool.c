/*
 * test_embed_pool.c: the encoder's thread pool (src/embed/pool.c), which
 * bert.c splits a query's pass with. A job runs on every thread once,
 * with its index; after a barrier every thread sees what all wrote
 * before it (many rounds, so a lost wake-up or a barrier passed early
 * shows as a wrong sum or a hang); jobs run again on the same threads
 * after the pool has gone idle long enough to sleep; sizes out of range
 * are refused.
 */
#include "t.h"
#include "embed/pool.h"

#include <stdatomic.h>
#include <unistd.h>

#define ROUNDS 300

struct job {
    struct embed_pool *pool;
    int slot[EMBED_POOL_MAX];
    atomic_int calls, bad;
    int seen[EMBED_POOL_MAX];
};

static void job_fn(void *arg, int i, int n)
{
    struct job *j = arg;
    int r, t;

    atomic_fetch_add(&j->calls, 1);
    j->seen[i]++;
    for (r = 0; r < ROUNDS; r++) {
        int sum = 0;

        j->slot[i] = r * 10 + i;
        embed_pool_barrier(j->pool);
        for (t = 0; t < n; t++)
            sum += j->slot[t];
        if (sum != r * 10 * n + n * (n - 1) / 2)
            atomic_fetch_add(&j->bad, 1);
        /* nobody writes the next round's value before all have read */
        embed_pool_barrier(j->pool);
    }
}

static void test_pool(void)
{
    int n, t, run;

    T_CHECK(embed_pool_new(1) == NULL);
    T_CHECK(embed_pool_new(EMBED_POOL_MAX + 1) == NULL);
    embed_pool_free(NULL);
    for (n = 2; n <= 4; n++) {
        struct job j = { 0 };

        j.pool = embed_pool_new(n);
        T_CHECK(j.pool != NULL);
        if (!j.pool)
            continue;
        T_EQ_INT(embed_pool_size(j.pool), n);
        for (run = 0; run < 3; run++) {
            embed_pool_run(j.pool, job_fn, &j);
            if (run == 1)
                usleep(20000);   /* long enough for the workers to sleep */
        }
        T_EQ_INT(atomic_load(&j.calls), 3 * n);
        T_EQ_INT(atomic_load(&j.bad), 0);
        for (t = 0; t < n; t++)
            T_EQ_INT(j.seen[t], 3);
        embed_pool_free(j.pool);
    }
}

int main(void)
{
    T_RUN(test_pool);
    return T_DONE();
}
