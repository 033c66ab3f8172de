/*
 * os.c: a monotonic clock, mkdir -p, big arrays and whole writes and
 * reads (util/os.h).
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "util/os.h"

double os_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

#define BIG_PAGE ((size_t)2 << 20)

void *os_alloc_big(size_t n)
{
    void *p = NULL;
    if (n < 2 * BIG_PAGE)
        return malloc(n ? n : 1);
    if (posix_memalign(&p, BIG_PAGE, n))
        return NULL;
#ifdef MADV_HUGEPAGE
    /* advice only: a kernel without it, or with THP off, pages as before */
    (void)madvise(p, n & ~(BIG_PAGE - 1), MADV_HUGEPAGE);
#endif
    return p;
}

void os_populate(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    /* the whole pages inside it; small arrays are not worth the call */
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
    uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)4095;
    if (p && n >= 64 * 1024 && b > a)
        (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p, (void)n;
#endif
}

void os_populate_pages(void *p, size_t n)
{
#ifdef MADV_POPULATE_WRITE
    /* (the pages at either end hold other bytes too: faulting a page in
     * never changes what it holds) */
    uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095, b = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;
    if (p && n)
        (void)madvise((void *)a, b - a, MADV_POPULATE_WRITE);
#else
    (void)p, (void)n;
#endif
}

void os_heap_keep(void)
{
#if defined(M_TRIM_THRESHOLD) && defined(M_MMAP_THRESHOLD)
    (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);      /* glibc's largest */
    (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

/* The heap below the reserve's 2 MB boundary, kept allocated so that
 * nothing is carved from it: address space, touched only at its ends. */
static void *heap_head;

uintptr_t os_heap_reserve(size_t n)
{
    uintptr_t at = 0;
    os_heap_keep();
#if defined(M_ARENA_MAX) && defined(MADV_POPULATE_WRITE)
    /* a second thread's blocks from the same heap too, not from an arena
     * of its own faulted in anew (recall's pool loads on two threads at a
     * million messages) */
    (void)mallopt(M_ARENA_MAX, 1);
    /* The block from a 2 MB boundary: malloc carves the next blocks from
     * the top of its heap, so a block where the top began, freed, comes
     * back by the same request; the head below the boundary is taken by a
     * block of its own (heap_head, never freed: the blocks that follow
     * then start at the boundary). Then every 2 MB of the reserve is a
     * huge page, not only the one or two whole pages inside a block that
     * started anywhere, its rest 4 KB pages populated one by one: the hook
     * at 100,000 messages 17.9 -> 14.6 ms of CPU, at a million 26.1 ->
     * 23.1 (bench/README.md, "The hook at 100,000", issue 23, hook51).
     * Where malloc places it elsewhere (another allocator, a heap not
     * contiguous), the block is where it is, as before. */
    void *p = heap_head ? NULL : malloc(n + BIG_PAGE);
    if (p) {
        size_t head = (BIG_PAGE - ((uintptr_t)p & (BIG_PAGE - 1))) & (BIG_PAGE - 1);
        free(p);
        /* a chunk's header is two size_t before its block: a block of
         * head - that much ends where the next block starts, at the
         * boundary (and a head too small for a chunk of its own, none) */
        if (head >= 4 * sizeof(size_t))
            heap_head = malloc(head - 2 * sizeof(size_t));
    }
    p = malloc(n);
#ifdef MADV_HUGEPAGE
    /* the 2 MB pages inside it as huge pages where the kernel has them
     * (transparent_hugepage "madvise" or "always"; advice only): faulted
     * in as 2 or 4 pages instead of 1,000-2,000, and the recall's arrays
     * in them (the pruning's slots a session, the packed words' matches,
     * the pool) each need a TLB entry a 2 MB, which on a paravirtualised
     * guest is most of the gain: the hook at a million 40.9 -> 31.1 ms of
     * task-clock (bench/README.md, "The hook's heap on huge pages",
     * issue 23, hook50). Only whole 2 MB pages of the block, so no page
     * outside what is populated below is touched. */
    if (p) {
        uintptr_t a = ((uintptr_t)p + BIG_PAGE - 1) & ~(uintptr_t)(BIG_PAGE - 1);
        uintptr_t b = ((uintptr_t)p + n) & ~(uintptr_t)(BIG_PAGE - 1);
        if (b > a)
            (void)madvise((void *)a, b - a, MADV_HUGEPAGE);
    }
#endif
    os_populate(p, n);
    at = (uintptr_t)p;
    free(p);
#else
    (void)n;
#endif
    return at;
}

/* The recall of a store of some size takes a few MB of heap in many
 * blocks (its pool of the kept sessions' turns, the units, the sorts'
 * copies), each fresh 4 KB page a trap into the kernel, dear on a
 * paravirtualised host: faulted in by one call up front instead. What the
 * pruned recall (--fast, the hook) takes grows slowly with the store (the
 * pool is pruned to a few hundred sessions): ~4 MB at 100,000 messages
 * (215 MB), ~8 MB at a million (1.8 GB); the hook then traps 577 -> 227
 * and 1,746 -> 227 times (bench/README.md, "What a process pays before
 * its first query"). A small store's recall takes little, and would pay
 * for pages it never uses.
 *
 * The exact recall pools every session with a match, not a pruned few
 * hundred: a peak of ~26 MB of heap at 100,000 messages (the pool 8.7 MB,
 * the units 5.1 MB, pack's texts 3.6 MB; massif), ~200 MB at a million,
 * so with the pruned recall's reserve it trapped ~370-730 times at
 * 100,000 and ~3,800 at a million. Its reserve is an eighth of the store
 * up to 28 MB, below glibc's largest mmap threshold (32 MB, os_heap_keep),
 * over which the reserve would be an mmap of its own, unmapped at its
 * free: task-clock 46.5 -> 33.2 ms at 100,000. More than 28 MB (taken in
 * 16 MB pieces, 64-200 MB, a trial) trapped less at a million but cost as
 * much in the kernel's zeroing (bench/README.md, "The exact recall's
 * heap", issue 23, hook50). */
#define RESERVE_STORE_MIN ((uint64_t)64 << 20)
#define RESERVE_STORE_BIG ((uint64_t)1 << 30)
#define RESERVE_EXACT_MAX ((size_t)28 << 20)

size_t os_heap_reserve_size(uint64_t store_bytes, int exact)
{
    if (store_bytes < RESERVE_STORE_MIN)
        return 0;
    size_t n = (size_t)(store_bytes >= RESERVE_STORE_BIG ? 8 : 4) << 20;
    /* rounded up to whole 2 MB pages: the reserve starts at a boundary
     * (os_heap_reserve), so a tail short of one would be ~250 pages
     * faulted 4 KB at a time (216 MB at 100,000 messages: 25.8 MB) */
    if (exact && store_bytes / 8 > n) {
        uint64_t e = (store_bytes / 8 + BIG_PAGE - 1) & ~(uint64_t)(BIG_PAGE - 1);
        n = e < RESERVE_EXACT_MAX ? (size_t)e : RESERVE_EXACT_MAX;
    }
    return n;
}

void *os_alloc_filled(size_t n)
{
    void *p = os_alloc_big(n);
    os_populate(p, n);
    return p;
}

/* Makes the folders of p[0..len) from the top down, each with mode.
 * EEXIST is success: mkdir reports it before a read-only or unsearchable
 * parent, so an existing folder is never an error. */
static int mkdirs_n(const char *p, size_t len, mode_t mode, char *bad, size_t nbad)
{
    char tmp[PATH_MAX];
    if (len >= sizeof tmp) {
        errno = ENAMETOOLONG;
        goto fail;
    }
    memcpy(tmp, p, len);
    tmp[len] = '\0';
    for (size_t i = 1; i <= len; i++) {
        if (tmp[i] != '/' && tmp[i] != '\0')
            continue;
        char c = tmp[i];
        tmp[i] = '\0';
        if (mkdir(tmp, mode) != 0 && errno != EEXIST) {
            p = tmp;
            len = i;
            goto fail;
        }
        tmp[i] = c;
    }
    return 0;
fail:
    if (bad) {
        int e = errno;
        snprintf(bad, nbad, "%.*s", (int)(len < (size_t)INT_MAX ? len : INT_MAX), p);
        errno = e;
    }
    return -1;
}

int os_mkdirs(const char *dir, mode_t mode, char *bad, size_t nbad)
{
    size_t len = strlen(dir);
    return len ? mkdirs_n(dir, len, mode, bad, nbad) : 0;
}

int os_mkparents(const char *path, mode_t mode, char *bad, size_t nbad)
{
    /* The whole path must fit, not only its folders: it is opened next. */
    if (strlen(path) >= PATH_MAX) {
        if (bad)
            snprintf(bad, nbad, "%s", path);
        return errno = ENAMETOOLONG, -1;
    }
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)        /* "f" or "/f": no folder to make */
        return 0;
    return mkdirs_n(path, (size_t)(slash - path), mode, bad, nbad);
}

int os_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;

    while (n > 0) {
        ssize_t w = write(fd, c, n);

        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

int os_pread_all(int fd, void *p, size_t n, uint64_t off)
{
    char *c = p;

    while (n > 0) {
        ssize_t r = pread(fd, c, n, (off_t)off);

        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        c += r;
        n -= (size_t)r;
        off += (uint64_t)r;
    }
    return 0;
}
