/*
 * common.c: see common.h.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "embed/common.h"
#include "embed/kernels.h"
#include "util/buf.h"
#include "util/hash.h"

void embed_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    if (!err || errlen == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

char *embed_read_file(const char *dir, const char *name, size_t cap, size_t *len,
                      int *missing, char *err, size_t errlen)
{
    struct buf b = BUF_INIT;
    char path[PATH_MAX], chunk[65536];
    struct stat st;
    size_t n;
    FILE *f;

    if (missing)
        *missing = 0;
    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path)) {
        embed_errf(err, errlen, "path too long");
        return NULL;
    }
    f = fopen(path, "rb");
    if (!f) {
        if (missing)
            *missing = errno == ENOENT;
        embed_errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    buf_init(&b, cap);
    /* its size at once: growing by doubling copied model.json's 247 KB
     * several times (7% of a one-shot query's CPU); a file that grows
     * meanwhile still grows the buffer, up to cap */
    if (fstat(fileno(f), &st) == 0 && st.st_size > 0 && (uint64_t)st.st_size < cap)
        (void)buf_grow(&b, (size_t)st.st_size);
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        if (buf_add(&b, chunk, n) != BUF_OK)
            break;
    if (ferror(f) || b.err) {
        embed_errf(err, errlen, "%s: %s", path, b.err ? "file too large" : "read error");
        fclose(f);
        buf_release(&b);
        return NULL;
    }
    fclose(f);
    if (len)
        *len = b.n;
    return buf_detach(&b, NULL);
}

#define EMBED_MAX_SHARES 64
/* Below this many token rows per thread a pass is not cut into shares: at
 * a query's 20 rows each product is ~6 MFLOP and handing halves of a
 * batch to a thread started per pass cost more than it saved (measured: 2
 * threads made a 1 x 20 query 40% slower). bert.c splits such a pass
 * between the threads of a persistent pool instead (embed/pool.h). */
#define EMBED_MIN_ROWS_PER_THREAD 128

struct share {
    embed_part_fn *part;
    const void *model;
    const int32_t *ids;
    const int *lens;
    int stride, nb, seq, rc;
    float *out;
    char err[256];
};

static void *share_run(void *p)
{
    struct share *s = p;

    s->rc = s->part(s->model, s->ids, s->stride, s->lens, s->nb, s->seq, s->out, s->err,
                    sizeof(s->err));
    return NULL;
}

int embed_share_count(int batch, int seq, int threads)
{
    int n = threads < EMBED_MAX_SHARES ? threads : EMBED_MAX_SHARES;

    if (n > batch)
        n = batch;
    if (n > 1 && (size_t)batch * seq < (size_t)n * EMBED_MIN_ROWS_PER_THREAD)
        n = 1;
    return n < 1 ? 1 : n;
}

int embed_run_shares(embed_part_fn *part, const void *model, const int32_t *ids,
                     const int *lens, int batch, int seq, float *out, int dim, int threads,
                     char *err, size_t errlen)
{
    struct share sh[EMBED_MAX_SHARES];
    pthread_t tid[EMBED_MAX_SHARES];
    int started[EMBED_MAX_SHARES];
    size_t rows = (size_t)batch * seq;
    int n = embed_share_count(batch, seq, threads), p, b, rc = 0;

    if (n <= 1) {
        embed_k_set_threads(rows < 2 * EMBED_MIN_ROWS_PER_THREAD ? 1 : threads);
        return part(model, ids, seq, lens, batch, seq, out, err, errlen);
    }
    embed_k_set_threads(1);
    for (p = 0; p < n; p++) {
        int b0 = (int)((long)batch * p / n), b1 = (int)((long)batch * (p + 1) / n);

        sh[p].part = part;
        sh[p].model = model;
        sh[p].ids = ids + (size_t)b0 * seq;
        sh[p].lens = lens + b0;
        sh[p].stride = seq;
        sh[p].out = out + (size_t)b0 * dim;
        sh[p].nb = b1 - b0;
        sh[p].seq = 1;
        for (b = b0; b < b1; b++)
            if (lens[b] > sh[p].seq)
                sh[p].seq = lens[b];
        sh[p].rc = -1;
        sh[p].err[0] = 0;
        started[p] = p > 0 && pthread_create(&tid[p], NULL, share_run, &sh[p]) == 0;
    }
    for (p = 0; p < n; p++)     /* share 0, and any that got no thread, here */
        if (!started[p])
            share_run(&sh[p]);
    for (p = 0; p < n; p++) {
        if (started[p])
            pthread_join(tid[p], NULL);
        if (sh[p].rc != 0 && rc == 0) {
            rc = -1;
            embed_errf(err, errlen, "%s", sh[p].err);
        }
    }
    return rc;
}

/* ---- the model's identity (common.h) ---------------------------------- */

/* 64 KB steps: the chunks in which the identity first read its files
 * (fread into a 64 KB buffer), so bytes hashed from memory give the
 * value stored with every vector. */
#define EMBED_ID_STEP 65536

static uint64_t id_bytes(const void *p, size_t n, uint64_t h)
{
    const char *s = p;
    for (size_t at = 0; at < n; at += EMBED_ID_STEP)
        h = hash64(s + at, n - at < EMBED_ID_STEP ? n - at : EMBED_ID_STEP, h);
    return h;
}

static uint64_t id_file(const char *dir, const char *name, uint64_t h)
{
    char path[PATH_MAX], buf[EMBED_ID_STEP];
    FILE *f;
    size_t n;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path ||
        !(f = fopen(path, "rb")))
        return h;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        h = hash64(buf, n, h);
    fclose(f);
    return h;
}

uint64_t embed_id_files(const char *dir, struct embed_id_text *have, int nhave)
{
    static const char *const small[] = { "config.json", "model.json", "cairn_embed.json",
                                         "vocab.json", "1_Pooling/config.json" };
    uint64_t h = EMBED_ID_SEED;
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        int k = 0;
        while (k < nhave && strcmp(have[k].name, small[i]))
            k++;
        if (k < nhave) {
            h = id_bytes(have[k].p, have[k].n, h);
            have[k].after = h;
        } else {
            h = id_file(dir, small[i], h);
        }
    }
    return h;
}
