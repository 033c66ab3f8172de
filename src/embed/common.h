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

/*
 * The hash a model's identity is made of (store/vectors.c adds the
 * folder's file names and sizes): the bytes of dir's small files
 * config.json, model.json, cairn_embed.json, vocab.json and
 * 1_Pooling/config.json, in that order (one that cannot be opened is
 * skipped), chained through hash64 in 64 KB steps from EMBED_ID_SEED.
 * Stores keep their vectors under the identity, so this never changes.
 * A loader that holds some of these files whole passes them in have[]
 * (name as listed, p, n): they are hashed from memory, not read again,
 * and each one's after is set to the chain's value once its bytes are
 * in (USE-lite keys its cache files with it: use.c). nhave may be 0.
 */
#define EMBED_ID_SEED 0xc0ffeeULL
struct embed_id_text {
    const char *name;
    const void *p;
    size_t      n;
    uint64_t    after;      /* out */
};
uint64_t embed_id_files(const char *dir, struct embed_id_text *have, int nhave);

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
