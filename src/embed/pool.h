/*
 * pool.h: a small persistent pool of threads for one forward pass split
 * between them (bert.c: a query's heads and product columns). The threads
 * are started once and kept, so a pass pays no thread start: a query's
 * pass meets at ~50 barriers, each far cheaper than a pthread_create.
 *
 * Waiting spins for a while (a pass's barriers come microseconds apart),
 * then sleeps on a condition variable (between passes), so an idle pool
 * costs nothing. Worker threads block all signals. One caller at a time:
 * a pool belongs to one model (embed.h: a model is used by one thread at
 * a time).
 */
#ifndef CAIRN_EMBED_POOL_H
#define CAIRN_EMBED_POOL_H

#define EMBED_POOL_MAX 8

struct embed_pool;

/* A pool of n threads in all, the caller's included (n - 1 started here;
 * 2 <= n <= EMBED_POOL_MAX). NULL if n is out of range, out of memory or
 * a thread could not be started. */
struct embed_pool *embed_pool_new(int n);
/* Stops and joins the threads. NULL is a no-op. */
void embed_pool_free(struct embed_pool *p);
int embed_pool_size(const struct embed_pool *p);

/* Runs fn(arg, i, n) on every thread of the pool, i = 0 on the caller,
 * and returns when all have returned. */
typedef void embed_pool_fn(void *arg, int i, int n);
void embed_pool_run(struct embed_pool *p, embed_pool_fn *fn, void *arg);
/* Inside fn: returns once every thread of the pool has called it (the
 * writes before it on any thread are visible after it on all). Every
 * thread must call it the same number of times. */
void embed_pool_barrier(struct embed_pool *p);

#endif
