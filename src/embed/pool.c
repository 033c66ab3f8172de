/*
 * pool.c: see pool.h.
 *
 * Every event (a job posted, a barrier passed, a job finished) is a
 * generation counter that goes up by one. A waiter spins on its counter
 * for POOL_SPIN rounds, then sleeps on the pool's one condition variable;
 * whoever moves a counter does so under the mutex and broadcasts, so a
 * waiter that checked the counter under the mutex cannot miss it.
 */
#include "embed/pool.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define POOL_PAUSE() _mm_pause()
#else
#define POOL_PAUSE() ((void)0)
#endif

/* Spin rounds before sleeping: some 20-100 us of pause instructions, about
 * the work between two barriers of a query (a half product of 20 rows is
 * ~30 us), far less than the gap between two queries. Longer spins cost
 * a busy machine's other threads their core. */
#define POOL_SPIN (1 << 11)

struct embed_pool {
    int n, started;
    pthread_t tid[EMBED_POOL_MAX];
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_uint job;        /* posted jobs */
    atomic_uint finished;   /* jobs all workers have finished */
    atomic_int left;        /* workers still in the current job */
    atomic_uint bar_gen;    /* barriers passed */
    atomic_int bar_count;   /* threads at the current barrier */
    atomic_int quit;
    embed_pool_fn *fn;
    void *arg;
};

struct pool_start {
    struct embed_pool *p;
    int i;
};

static void pool_wait(struct embed_pool *p, atomic_uint *gen, unsigned seen)
{
    int i;

    for (i = 0; i < POOL_SPIN; i++) {
        if (atomic_load_explicit(gen, memory_order_acquire) != seen)
            return;
        POOL_PAUSE();
    }
    pthread_mutex_lock(&p->mu);
    while (atomic_load(gen) == seen)
        pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
}

static void pool_bump(struct embed_pool *p, atomic_uint *gen)
{
    pthread_mutex_lock(&p->mu);
    atomic_fetch_add(gen, 1);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void *pool_worker(void *v)
{
    struct pool_start *s = v;
    struct embed_pool *p = s->p;
    int i = s->i;
    unsigned seen = 0;

    free(s);
    for (;;) {
        pool_wait(p, &p->job, seen);
        seen = atomic_load(&p->job);
        if (atomic_load(&p->quit))
            return NULL;
        p->fn(p->arg, i, p->n);
        if (atomic_fetch_sub(&p->left, 1) == 1)
            pool_bump(p, &p->finished);
    }
}

void embed_pool_barrier(struct embed_pool *p)
{
    /* the generation before arriving: the last one to arrive moves it */
    unsigned gen = atomic_load(&p->bar_gen);

    if (atomic_fetch_add(&p->bar_count, 1) == p->n - 1) {
        atomic_store(&p->bar_count, 0);
        pool_bump(p, &p->bar_gen);
        return;
    }
    pool_wait(p, &p->bar_gen, gen);
}

void embed_pool_run(struct embed_pool *p, embed_pool_fn *fn, void *arg)
{
    unsigned done = atomic_load(&p->finished);

    p->fn = fn;
    p->arg = arg;
    atomic_store(&p->left, p->n - 1);
    pool_bump(p, &p->job);
    fn(arg, 0, p->n);
    pool_wait(p, &p->finished, done);
}

int embed_pool_size(const struct embed_pool *p)
{
    return p->n;
}

/* Stops the started workers: quit, then a job to wake them. */
static void pool_stop(struct embed_pool *p)
{
    int i;

    atomic_store(&p->quit, 1);
    pool_bump(p, &p->job);
    for (i = 1; i < p->started; i++)
        pthread_join(p->tid[i], NULL);
}

struct embed_pool *embed_pool_new(int n)
{
    struct embed_pool *p;
    sigset_t all, old;
    int i;

    if (n < 2 || n > EMBED_POOL_MAX || !(p = calloc(1, sizeof(*p))))
        return NULL;
    p->n = n;
    p->started = 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    /* workers inherit this mask: signals stay with the caller's threads */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (i = 1; i < n; i++) {
        struct pool_start *s = malloc(sizeof(*s));

        if (!s)
            break;
        s->p = p;
        s->i = i;
        if (pthread_create(&p->tid[i], NULL, pool_worker, s) != 0) {
            free(s);
            break;
        }
        p->started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (p->started < n) {
        embed_pool_free(p);
        return NULL;
    }
    return p;
}

void embed_pool_free(struct embed_pool *p)
{
    if (!p)
        return;
    pool_stop(p);
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
