/*
 * common.h: what the encoder's files share: error messages into a
 * caller's buffer, and reading a small model file whole.
 */
#ifndef CAIRN_EMBED_COMMON_H
#define CAIRN_EMBED_COMMON_H

#include <stddef.h>

/* printf into err[errlen] (nothing if err is NULL or errlen is 0). */
void embed_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reads dir/name whole, at most cap bytes, NUL-terminated (caller frees
 * with free()); its length in *len (may be NULL). NULL with err set on
 * failure; *missing (may be NULL) is 1 when the file does not exist. */
char *embed_read_file(const char *dir, const char *name, size_t cap, size_t *len,
                      int *missing, char *err, size_t errlen);

#endif
