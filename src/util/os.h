/*
 * os.h: the few operating-system helpers both the library and the CLI
 * need (util/os.c), written once: a monotonic clock, mkdir -p, the
 * allocation of big arrays, and whole writes and reads of a descriptor.
 */
#ifndef CAIRN_UTIL_OS_H
#define CAIRN_UTIL_OS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Milliseconds on the monotonic clock: for durations and deadlines only. */
double os_now_ms(void);

/* mkdir -p: creates each missing folder of `dir`, `dir` included, with
 * `mode`; folders that exist are left as they are. Returns 0, or -1 with
 * errno set (ENAMETOOLONG past PATH_MAX) and, when `bad` is not NULL, the
 * folder that could not be made in bad[nbad]. */
int os_mkdirs(const char *dir, mode_t mode, char *bad, size_t nbad);

/* os_mkdirs for the folders above `path`, a file's path: "a/b/f" makes
 * a and a/b; a path without a folder makes nothing. */
int os_mkparents(const char *path, mode_t mode, char *bad, size_t nbad);

/* malloc for an array of n bytes that is filled soon after, in 2 MB
 * pages where the kernel allows it (transparent huge pages, "madvise"
 * mode): recall's pool on a million-message store is ~150 MB touched
 * once, and a 4 KB page fault each 4 KB cost a third of the recall in
 * the kernel on a virtual machine. Below 4 MB it is plain malloc. Free it
 * with free(); realloc works on it. */
void *os_alloc_big(size_t n);
/* os_alloc_big for an array the caller writes whole at once: its pages
 * are faulted in by one call (MADV_POPULATE_WRITE, Linux 5.14; advice
 * only elsewhere), about half the cost of a fault a page on the virtual
 * machines measured (23 against 10 us a 4 KB page; bench/README.md "Page
 * faults"). Not for an array sized for the worst case and filled less. */
void *os_alloc_filled(size_t n);
/* os_alloc_filled's faulting-in of p[0..n) alone: for an array whose
 * parts are written by different threads, each faults in its own. */
void os_populate(void *p, size_t n);
/* Every 4 KB page holding a byte of p[0..n) faulted in by one call, however
 * small: for a few pages about to be written in a big array otherwise left
 * untouched (a fault a page ~12-15 us on the paravirtualised host, the call
 * ~1-4 us; bench/README.md, mem54). Advice only: nothing is written. */
void os_populate_pages(void *p, size_t n);
/* For a one-shot process: malloc's blocks up to 32 MB from its heap,
 * not each its own mmap (unmapped at its free, so the next is fresh pages
 * again), and the heap not trimmed, so freed memory serves the next
 * blocks. Process-wide (mallopt): not for a long-lived process or a
 * library's caller; cli_one_shot_heap says what it saves. */
void os_heap_keep(void);
/* os_heap_keep, and n bytes of the heap faulted in by one call (one
 * arena for every thread), free again for what follows to be carved from
 * pages already there instead of trapping once a 4 KB page (cli_heap_
 * reserve); the block starts at a 2 MB boundary where malloc can place it
 * there, and its whole 2 MB pages are advised as huge pages
 * (MADV_HUGEPAGE). Returns where the block began (for a test; 0 when
 * nothing was reserved). No-op but os_heap_keep without
 * MADV_POPULATE_WRITE. */
uintptr_t os_heap_reserve(size_t n);

/* The heap a one-shot recall of a store file of store_bytes reserves
 * (os_heap_reserve; os.c says why): 0 below 64 MB, 4 MB, 8 MB from 1 GB;
 * for the exact recall (exact: not --fast) an eighth of the store when
 * more, rounded up to whole 2 MB pages, up to 28 MB (below glibc's
 * largest mmap threshold, so the reserve stays in the heap). */
size_t os_heap_reserve_size(uint64_t store_bytes, int exact);

/* write(2) of all n bytes, again after EINTR and short writes: 0, or -1
 * with errno set (ENOSPC, EIO, ...). */
int os_write_all(int fd, const void *p, size_t n);
/* pread(2) of all n bytes at off, the same way: 0, or -1 (also at the
 * end of the file before n bytes). */
int os_pread_all(int fd, void *p, size_t n, uint64_t off);

#endif
