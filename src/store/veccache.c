/*
 * veccache.c: the vector cache file, a derived copy of one model's
 * vectors beside the store (STORE-vec), mapped read-only by each process
 * instead of reading every row out of SQLite.
 *
 * Why: a hook is one process per prompt. On a 100,000-message store
 * (192,804 use-lite-en vectors) reading the rows out of SQLite costs a
 * process a few hundred milliseconds however it is done (bench/
 * bench_vecload.c); mapping this file costs about a millisecond and its
 * pages are shared in the page cache by every process.
 *
 * A new process's full scan reads it by pread too (veccache_read_run, in
 * runs into one buffer: recall/dense.c, the question's thread), so it maps
 * none of its pages; a long-lived one populates the mapping once instead.
 *
 * Beside it, STORE-vsk holds the vectors' sign sketches (64 bytes a 512-d
 * vector; below, "the sign sketch"), for the two-stage scan that reads
 * the sketches whole and only its candidates' vectors (veccache_read, by
 * pread: a mapped page costs a trap on a paravirtualised host, and a
 * fault maps up to 16 pages around it). The same rules hold for it, and
 * it goes when the cache file goes.
 *
 * SQLite stays the source of truth and the file is disposable:
 *   - it is valid only for the stamp in vec_stamp (schema version 5),
 *     which triggers replace on every change to vectors, and for one
 *     model id and dimension; anything else is ignored and rebuilt;
 *   - it is never trusted blindly: its owner must be us, its size must be
 *     exactly what its header says, and the header carries a hash of
 *     itself, so a truncated, torn, foreign or hostile file is ignored.
 *     Its body is only ever read as values (message and session ids,
 *     norms, vectors), never as offsets, so a damaged body can give odd
 *     ranks but never reads outside the mapping;
 *   - it is written to a temporary file in the same folder (0600), synced
 *     and renamed over the old one, so a reader sees a whole file or
 *     none; cairn never truncates or rewrites a cache file in place, so a
 *     mapping stays valid (an unlinked file lives until unmapped);
 *   - a commit that changed the stamp removes it and any writer's
 *     temporary file (store/tx.c), so the vectors of forgotten or
 *     redacted text do not outlive their rows; a writer removes the
 *     temporary files of writers killed before their rename.
 *
 * Layout (host byte order; the endian mark rejects a file from another):
 *   header  512 bytes (struct vc_head)
 *   msg     int64[n]          message row of each piece
 *   sess    int64[n]          session row of each piece
 *   norm    float[n]          1 / |stored vector|, padded to 64 bytes
 *   v       int8[n][dim] or float[n][dim]
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "store/vectors.h"
#include "util/os.h"

#define VC_MAGIC   "cairnvc1"
#define VC_ENDIAN  0x01020304u
#define VC_HEAD    512
/* Caps that keep every size computation far from overflow. */
#define VC_MAX_N   ((uint64_t)1 << 36)
#define VC_MAX_DIM 8192
/* A writer's temporary file this old is a leftover: writing takes seconds. */
#define VC_TEMP_STALE_S 600

struct vc_head {
    char     magic[8];
    uint32_t endian;
    uint32_t head_size;
    uint32_t dim;
    uint32_t f32;
    uint64_t n;                          /* pieces */
    int64_t  stamp;                      /* vec_stamp when it was built */
    int64_t  msgs_with;
    uint64_t file_size;
    char     model[VEC_MODEL_ID_MAX];
    char     other[VEC_MODEL_ID_MAX];
    unsigned char pad[VC_HEAD - 56 - 2 * VEC_MODEL_ID_MAX - 8];
    uint64_t check;                      /* hash64 of everything before it */
};
_Static_assert(sizeof(struct vc_head) == VC_HEAD, "the header is 512 bytes");

struct vc_layout { uint64_t msg, sess, norm, v, size; };

static uint64_t pad64(uint64_t x)
{
    return (x + 63) & ~(uint64_t)63;
}

static void layout(uint64_t n, uint32_t dim, uint32_t f32, struct vc_layout *l)
{
    l->msg = VC_HEAD;
    l->sess = l->msg + 8 * n;
    l->norm = l->sess + 8 * n;
    l->v = pad64(l->norm + 4 * n);
    l->size = l->v + n * dim * (f32 ? 4 : 1);
}

/* STORE + suffix, the path of a file beside the store. */
static int path_beside(struct cairn *h, const char *suffix, char *out, size_t n)
{
    const char *f = sqlite3_db_filename(h->db, "main");
    if (!f || !*f)
        return -1;                       /* an in-memory or temporary store */
    return (size_t)snprintf(out, n, "%s%s", f, suffix) < n ? 0 : -1;
}

int veccache_path(struct cairn *h, char *out, size_t n)
{
    return path_beside(h, "-vec", out, n);
}

/* Removes the temporary files of writers (STORE-vec.XXXXXX) last
 * modified at least min_age seconds ago: a process killed while writing
 * leaves one behind, 100 MB on a big store. */
static void remove_temps(const char *path, time_t min_age)
{
    char dir[4200], p[4400];
    const char *slash = strrchr(path, '/');
    size_t plen = strlen(path);
    if (!slash)
        return;
    snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    DIR *d = opendir(*dir ? dir : "/");
    struct dirent *e;
    struct stat st;
    if (!d)
        return;
    const char *base = slash + 1;
    size_t blen = plen - (size_t)(base - path);
    while ((e = readdir(d))) {
        /* exactly the base name, ".", and mkstemp's six characters */
        if (strncmp(e->d_name, base, blen) || e->d_name[blen] != '.' ||
            strlen(e->d_name) != blen + 7)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && time(NULL) - st.st_mtime >= min_age)
            unlink(p);
    }
    closedir(d);
}

void veccache_remove(struct cairn *h)
{
    char p[4200];
    if (veccache_path(h, p, sizeof p) != 0)
        return;
    unlink(p);
    /* a writer's file in progress too: it may hold the vectors just
     * deleted, and its rename then fails */
    remove_temps(p, 0);
    /* the sketch is derived from the same vectors (a forgotten text's
     * signs are a little of it): it goes with them */
    if (path_beside(h, "-vsk", p, sizeof p) == 0) {
        unlink(p);
        remove_temps(p, 0);
    }
}

void veccache_read(const struct vec_set *s, const int64_t *idx, size_t count, int8_t *out)
{
    const size_t dim = (size_t)s->dim;
    const off_t base = s->map ? (off_t)((const char *)s->v8 - (const char *)s->map) : 0;
    for (size_t j = 0; j < count; j++) {
        size_t i = (size_t)idx[j];
        if (s->map && pread(s->fd, out + j * dim, dim, base + (off_t)(i * dim)) == (ssize_t)dim)
            continue;
        memcpy(out + j * dim, s->v8 + i * dim, dim);   /* no file, or it failed */
    }
}

/* len bytes at the file's offset at into out, by pread: 0, or -1 when it
 * failed or came short (a file cut under us). */
static int read_at(int fd, void *out, size_t len, off_t at)
{
    for (size_t got = 0; got < len;) {
        ssize_t r = pread(fd, (char *)out + got, len - got, at + (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

int veccache_read_run(const struct vec_set *s, size_t from, size_t count, int8_t *out)
{
    if (!s->map || s->f32 || from > s->n || count > s->n - from)
        return -1;
    off_t at = (off_t)((const char *)s->v8 - (const char *)s->map) + (off_t)(from * (size_t)s->dim);
    /* short: the caller scans the mapping */
    return read_at(s->fd, out, count * (size_t)s->dim, at);
}

int veccache_read_ids(const struct vec_set *s, size_t from, size_t count, int64_t *out)
{
    /* msg[n] then sess[n], one run in the file (layout) */
    if (!s->map || from > 2 * s->n || count > 2 * s->n - from ||
        (const char *)s->sess != (const char *)(s->msg + s->n))
        return -1;
    off_t at = (off_t)((const char *)s->msg - (const char *)s->map) + (off_t)(from * sizeof *out);
    return read_at(s->fd, out, count * sizeof *out, at);
}

int veccache_same_file(const struct vec_set *a, const struct vec_set *b)
{
    struct stat x, y;
    return a->map && b->map && fstat(a->fd, &x) == 0 && fstat(b->fd, &y) == 0 &&
           x.st_dev == y.st_dev && x.st_ino == y.st_ino && a->n == b->n && a->dim == b->dim &&
           a->f32 == b->f32 && a->stamp == b->stamp && !strcmp(a->model, b->model);
}

void veccache_close(struct vec_set *s)
{
    if (s->map) {
        munmap(s->map, s->map_len);
        close(s->fd);
    }
    memset(s, 0, sizeof *s);
}

void veccache_populate(const struct vec_set *s)
{
    if (!s->map || s->populated)
        return;
    /* once: on pages already mapped it still walks all 12,740 of them
     * (~20 ms at 98,060 vectors), and a server scans many times. The
     * flag is the set's own (the connection's struct, not the mapping). */
    ((struct vec_set *)s)->populated = 1;
#ifdef MADV_POPULATE_READ
    if (madvise(s->map, s->map_len, MADV_POPULATE_READ) == 0)
        return;
#endif
    (void)madvise(s->map, s->map_len, MADV_WILLNEED);  /* an older kernel */
}

/* Only the bytes up to `check`, so the hash never covers itself. */
static uint64_t head_hash(const struct vc_head *hd)
{
    return hash64(hd, offsetof(struct vc_head, check), 0x76656363);
}

/* Opens p for reading when it is a regular file of ours of at least a
 * header, and reads its header (VC_HEAD bytes) into hd: the descriptor,
 * or -1. *size is the file's. */
static int open_head(const char *p, void *hd, uint64_t *size)
{
    struct stat st;
    int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size < VC_HEAD || pread(fd, hd, VC_HEAD, 0) != VC_HEAD) {
        close(fd);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    return fd;
}

int veccache_open(struct cairn *h, const char *model, int dim, int64_t stamp, struct vec_set *s)
{
    char p[4200];
    if (veccache_path(h, p, sizeof p) != 0)
        return -1;
    return veccache_open_at(p, model, dim, stamp, s);
}

int veccache_open_at(const char *p, const char *model, int dim, int64_t stamp,
                     struct vec_set *s)
{
    struct vc_head hd;
    struct vc_layout l;
    uint64_t size;
    void *map;
    int fd, rc = -1;

    if ((fd = open_head(p, &hd, &size)) < 0)
        return -1;
    if (memcmp(hd.magic, VC_MAGIC, 8) || hd.endian != VC_ENDIAN || hd.head_size != VC_HEAD ||
        hd.check != head_hash(&hd) || hd.stamp != stamp || hd.dim != (uint32_t)dim ||
        dim < 1 || dim > VC_MAX_DIM || hd.f32 > 1 || hd.n == 0 || hd.n > VC_MAX_N ||
        hd.msgs_with < 1 || (uint64_t)hd.msgs_with > hd.n ||
        !memchr(hd.model, '\0', sizeof hd.model) || !memchr(hd.other, '\0', sizeof hd.other) ||
        strcmp(hd.model, model))
        goto out;
    layout(hd.n, hd.dim, hd.f32, &l);
    if (hd.file_size != l.size || size != l.size || l.size > SIZE_MAX)
        goto out;
    /* No MAP_POPULATE: a full scan asks for every page at once
     * (veccache_populate: the kernel fills the page tables faster than
     * faults would), a two-stage scan reads only the vectors it rescores
     * (on a paravirtualised host each 4 KB fault traps: 12,740 of them
     * at 98,060 vectors cost the hybrid hook 15-20 ms, hyb51). */
    map = mmap(NULL, (size_t)l.size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        goto out;
    memset(s, 0, sizeof *s);
    snprintf(s->model, sizeof s->model, "%s", hd.model);
    snprintf(s->other, sizeof s->other, "%s", hd.other);
    s->dim = dim;
    s->f32 = (int)hd.f32;
    s->n = (size_t)hd.n;
    s->stamp = hd.stamp;
    s->msgs_with = hd.msgs_with;
    s->map = map;
    s->map_len = (size_t)l.size;
    s->fd = fd;
    fd = -1;                             /* kept: veccache_read */
    /* const is cast away only to share struct vec_set with the heap
     * copy; the pages are PROT_READ and nothing writes through them. */
    s->msg = (int64_t *)((char *)map + l.msg);
    s->sess = (int64_t *)((char *)map + l.sess);
    s->inv_norm = (float *)((char *)map + l.norm);
    if (s->f32)
        s->vf = (float *)((char *)map + l.v);
    else
        s->v8 = (int8_t *)((char *)map + l.v);
    rc = 0;
out:
    if (fd >= 0)
        close(fd);
    return rc;
}

/* Writes the n parts to p atomically: a temporary file beside it (0600),
 * synced, renamed over p; the temporaries of writers killed long ago go
 * first. 0 or -1 (nothing left behind). */
static int write_whole(const char *p, const struct iovec *part, int n)
{
    char tmp[4300];
    int fd;
    remove_temps(p, VC_TEMP_STALE_S);
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", p);
    fd = mkostemp(tmp, O_CLOEXEC);                 /* 0600 */
    if (fd < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        if (os_write_all(fd, part[i].iov_base, part[i].iov_len)) {
            close(fd);
            unlink(tmp);
            return -1;
        }
    }
    /* synced before the rename: after a crash the name holds the old
     * file or the whole new one, never a hole */
    if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, p) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int veccache_write(struct cairn *h, const struct vec_set *s)
{
    char p[4200];
    struct vc_head hd;
    struct vc_layout l;
    static const char zeros[64];

    if (!s->n || s->dim < 1 || s->dim > VC_MAX_DIM || veccache_path(h, p, sizeof p) != 0)
        return -1;
    memset(&hd, 0, sizeof hd);
    memcpy(hd.magic, VC_MAGIC, 8);
    hd.endian = VC_ENDIAN;
    hd.head_size = VC_HEAD;
    hd.dim = (uint32_t)s->dim;
    hd.f32 = s->f32 ? 1 : 0;
    hd.n = s->n;
    hd.stamp = s->stamp;
    hd.msgs_with = s->msgs_with;
    snprintf(hd.model, sizeof hd.model, "%s", s->model);
    snprintf(hd.other, sizeof hd.other, "%s", s->other);
    layout(hd.n, hd.dim, hd.f32, &l);
    hd.file_size = l.size;
    hd.check = head_hash(&hd);
    const struct iovec part[] = {
        { &hd, sizeof hd },
        { s->msg, s->n * 8 },
        { s->sess, s->n * 8 },
        { s->inv_norm, s->n * 4 },
        { (void *)zeros, (size_t)(l.v - (l.norm + 4 * (uint64_t)s->n)) },
        { s->f32 ? (void *)s->vf : (void *)s->v8, s->n * (size_t)s->dim * (s->f32 ? 4 : 1) },
    };
    return write_whole(p, part, 6);
}

/* ---- the sign sketch (STORE-vsk) ---------------------------------------
 *
 * The same rules as the cache file: derived and disposable, keyed by the
 * set it was made from (model, dimension, count, stamp, f32), its header
 * hashed, its size exact, written by rename, removed with the cache file.
 * Its body is read only as values (floats and bits), so a damaged body
 * gives worse candidates, never a read outside the mapping; the
 * candidates are scored exactly from the vectors anyway.
 *
 * Layout (host byte order):
 *   header  512 bytes (struct vs_head)
 *   mu      float[dim], padded to 64 bytes
 *   sigma   float[dim], padded to 64 bytes
 *   bits    uint64[n][words]
 */
#define VS_MAGIC "cairnvs1"

struct vs_head {
    char     magic[8];
    uint32_t endian;
    uint32_t head_size;
    uint32_t dim;
    uint32_t words;
    uint64_t n;
    int64_t  stamp;
    int64_t  msgs_with;
    uint64_t file_size;
    uint32_t f32;
    uint32_t zero;
    char     model[VEC_MODEL_ID_MAX];
    unsigned char pad[VC_HEAD - 64 - VEC_MODEL_ID_MAX - 8];
    uint64_t check;                      /* hash64 of everything before it */
};
_Static_assert(sizeof(struct vs_head) == VC_HEAD, "the header is 512 bytes");

struct vs_layout { uint64_t mu, sigma, bits, size; };

static void vs_layout(uint64_t n, uint32_t dim, struct vs_layout *l)
{
    uint32_t words = (dim + 63) / 64;
    l->mu = VC_HEAD;
    l->sigma = pad64(l->mu + 4 * (uint64_t)dim);
    l->bits = pad64(l->sigma + 4 * (uint64_t)dim);
    l->size = l->bits + n * words * 8;
}

static uint64_t vs_hash(const struct vs_head *hd)
{
    return hash64(hd, offsetof(struct vs_head, check), 0x76736b31);
}

/* Piece i's value d as a unit vector's. */
static inline float unit_at(const struct vec_set *s, size_t i, int d)
{
    size_t at = i * (size_t)s->dim + (size_t)d;
    return (s->f32 ? s->vf[at] : (float)s->v8[at]) * s->inv_norm[i];
}

int vecsketch_build(const struct vec_set *s, struct vec_sketch *k)
{
    struct vs_layout l;
    int dim = s->dim, words = (s->dim + 63) / 64;
    double *acc = NULL;
    char *mem = NULL;
    int rc = -1;

    if (!s->n || dim < 1 || dim > VC_MAX_DIM || s->by_index)
        return -1;
    vs_layout(s->n, (uint32_t)dim, &l);
    /* the same offsets as the file's, less its header */
    mem = calloc(1, (size_t)(l.size - VC_HEAD));
    acc = calloc((size_t)dim, sizeof *acc);
    if (!mem || !acc)
        goto out;
    float *mu = (float *)mem, *sigma = (float *)(mem + (l.sigma - VC_HEAD));
    uint64_t *bits = (uint64_t *)(mem + (l.bits - VC_HEAD));
    for (size_t i = 0; i < s->n; i++)
        for (int d = 0; d < dim; d++)
            acc[d] += unit_at(s, i, d);
    for (int d = 0; d < dim; d++) {
        mu[d] = (float)(acc[d] / (double)s->n);
        acc[d] = 0;
    }
    for (size_t i = 0; i < s->n; i++) {
        uint64_t *b = bits + i * (size_t)words;
        for (int d = 0; d < dim; d++) {
            float x = unit_at(s, i, d) - mu[d];
            acc[d] += fabsf(x);
            if (x > 0)
                b[d / 64] |= (uint64_t)1 << (d % 64);
        }
    }
    for (int d = 0; d < dim; d++)
        sigma[d] = (float)(acc[d] / (double)s->n);
    memset(k, 0, sizeof *k);
    k->dim = dim;
    k->words = words;
    k->n = s->n;
    k->mu = mu;
    k->sigma = sigma;
    k->bits = bits;
    k->mem = mem;
    mem = NULL;
    rc = 0;
out:
    free(acc);
    free(mem);
    return rc;
}

void vecsketch_release(struct vec_sketch *k)
{
    if (k->map)
        munmap(k->map, k->map_len);
    free(k->mem);
    memset(k, 0, sizeof *k);
}

int vecsketch_open(struct cairn *h, const struct vec_set *s, struct vec_sketch *k)
{
    char p[4200];
    struct vs_head hd;
    struct vs_layout l;
    uint64_t size;
    void *map;
    int fd, rc = -1;

    if (path_beside(h, "-vsk", p, sizeof p) != 0 || (fd = open_head(p, &hd, &size)) < 0)
        return -1;
    if (memcmp(hd.magic, VS_MAGIC, 8) || hd.endian != VC_ENDIAN || hd.head_size != VC_HEAD ||
        hd.check != vs_hash(&hd) || hd.stamp != s->stamp || hd.dim != (uint32_t)s->dim ||
        hd.dim < 1 || hd.dim > VC_MAX_DIM || hd.words != (hd.dim + 63) / 64 ||
        hd.n != s->n || hd.n > VC_MAX_N || hd.f32 != (uint32_t)(s->f32 ? 1 : 0) ||
        hd.msgs_with != s->msgs_with || !memchr(hd.model, '\0', sizeof hd.model) ||
        strcmp(hd.model, s->model))
        goto out;
    vs_layout(hd.n, hd.dim, &l);
    if (hd.file_size != l.size || size != l.size || l.size > SIZE_MAX)
        goto out;
    /* the scan reads every page of it */
    map = mmap(NULL, (size_t)l.size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED)
        goto out;
    memset(k, 0, sizeof *k);
    k->dim = (int)hd.dim;
    k->words = (int)hd.words;
    k->n = (size_t)hd.n;
    k->mu = (const float *)((char *)map + l.mu);
    k->sigma = (const float *)((char *)map + l.sigma);
    k->bits = (const uint64_t *)((char *)map + l.bits);
    k->map = map;
    k->map_len = (size_t)l.size;
    rc = 0;
out:
    close(fd);
    return rc;
}

int vecsketch_write(struct cairn *h, const struct vec_set *s, const struct vec_sketch *k)
{
    char p[4200];
    struct vs_head hd;
    struct vs_layout l;

    if (!k->n || k->n != s->n || k->dim != s->dim || s->stamp == -1 ||
        path_beside(h, "-vsk", p, sizeof p) != 0)
        return -1;
    memset(&hd, 0, sizeof hd);
    memcpy(hd.magic, VS_MAGIC, 8);
    hd.endian = VC_ENDIAN;
    hd.head_size = VC_HEAD;
    hd.dim = (uint32_t)k->dim;
    hd.words = (uint32_t)k->words;
    hd.n = k->n;
    hd.stamp = s->stamp;
    hd.msgs_with = s->msgs_with;
    hd.f32 = s->f32 ? 1 : 0;
    snprintf(hd.model, sizeof hd.model, "%s", s->model);
    vs_layout(hd.n, hd.dim, &l);
    hd.file_size = l.size;
    hd.check = vs_hash(&hd);
    /* mu, sigma and bits lie at the file's offsets less the header, in
     * one block or in the mapping past its header */
    const struct iovec part[] = {
        { &hd, sizeof hd },
        { (void *)k->mu, (size_t)(l.size - VC_HEAD) },
    };
    return write_whole(p, part, 2);
}
