/*
 * os.h: the few operating-system helpers both the library and the CLI
 * need (util/os.c), written once: a monotonic clock and mkdir -p.
 */
#ifndef CAIRN_UTIL_OS_H
#define CAIRN_UTIL_OS_H

#include <stddef.h>
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

#endif
