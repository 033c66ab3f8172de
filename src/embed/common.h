/*
 * common.h: what the encoder's files share: error messages into a
 * caller's buffer, reading a small model file whole, and running a batch
 * as shares on several threads.
 */
#ifndef CAIRN_EMBED_COMMON_H
#define CAIRN_EMBED_COMMON_H

#include <stddef.h>
#include <stdint.h>

/* printf into err[errlen] (nothing if err is NULL or errlen is 0). */
void embed_errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Reads dir/name whole, at most cap bytes, NUL-terminated (caller frees
 * with free()); its length in *len (may be NULL). NULL with err set on
 * failure; *missing (may be NULL) is 1 when the file does not exist. */
char *embed_read_file(const char *dir, const char *name, size_t cap, size_t *len,
                      int *missing, char *err, size_t errlen);

/* A forward pass over `batch` sequences of model (ids rows `stride` apart,
 * seq <= stride token rows each, lens[batch]) into out[batch][dim], on
 * validated input; it must allocate its own work space, so that several
 * can run at once on disjoint sequences. */
typedef int embed_part_fn(const void *model, const int32_t *ids, int stride, const int *lens,
                          int batch, int seq, float *out, char *err, size_t errlen);

/* How many shares embed_run_shares cuts a batch into (1: one pass). */
int embed_share_count(int batch, int seq, int threads);

/*
 * Runs part over ids[batch][seq] with up to `threads` threads. With
 * several, and enough token rows for each (EMBED_MIN_ROWS_PER_THREAD),
 * the sequences are cut into shares of whole sequences run side by side,
 * each padded to its own longest and with a single-threaded OpenBLAS (and
 * the packed product): share 0 on the calling thread, the others on
 * threads of their own (or here too, if one cannot be started). Every
 * step of the pass is then parallel, where OpenBLAS's threads only split
 * the products. Else part runs once over the whole batch, with OpenBLAS's
 * threads if the pass is long enough to split. Sets the calling thread's
 * count (embed_k_set_threads). Returns 0, or -1 with the first failing
 * share's message in err.
 */
int embed_run_shares(embed_part_fn *part, const void *model, const int32_t *ids,
                     const int *lens, int batch, int seq, float *out, int dim, int threads,
                     char *err, size_t errlen);

#endif
