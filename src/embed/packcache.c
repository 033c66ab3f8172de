/*
 * packcache.c: the pre-packed weights file (interface in packcache.h).
 *
 * Why: a process that encodes once (`cairn recall` with hybrid, the
 * prompt hook) cannot pay the 64-94 ms that packing an L12 model's 85 MB
 * of encoder weights costs, so before this file it ran its query on the
 * kernels that read the weights in place, on one thread: the slowest
 * path. Mapping a copy packed once costs well under a millisecond plus
 * the page faults the weights cost anyway, and its pages are shared in
 * the page cache by every process. A file of up to PC_COPY_MAX is read
 * into 2 MB pages of the process's own instead (pc_copy: on the
 * paravirtualised host a mapping's first touch of each 4 KB page costs
 * more than the copy).
 *
 * The weights stay the source of truth and the file is disposable:
 *   - it lives in DIR/.cairn-packed/, a folder: the model's identity
 *     (store/vectors.c) hashes the names and sizes of the folder's plain
 *     files only, so vectors keep their model id; `cairn model rm`
 *     removes it with the folder;
 *   - one file per panel width (nr16.bin for AVX2, nr32.bin for AVX-512):
 *     the width follows the SIMD level, and each level runs fastest on
 *     its own;
 *   - beside them, q8.bin (the int8 forms) and files of bytes only their
 *     caller reads (embed_pc_blob_*: USE-lite's vocab.bin and manifest.bin);
 *   - it is never trusted blindly: its owner must be us, its size must be
 *     exactly what the shapes give, its header carries a hash of itself,
 *     the weights file's size and change time and a hash of every
 *     weight's shape, and 32 values of every weight (16 at each end) must
 *     have the same bits as the weights, and a padding column zeros. A
 *     truncated, torn, stale, foreign or hostile file is refused and
 *     rebuilt. Its body is only ever read as values, never as offsets or
 *     sizes, so a file that passes the checks with other values elsewhere
 *     gives odd vectors, never a read outside the mapping. Who can write it
 *     can write the weights beside it.
 *   - it is written to a temporary file in the same folder (0600), synced
 *     and renamed over the old one, so a reader sees a whole file or
 *     none; cairn never truncates or rewrites it in place, so a mapping
 *     stays valid. A writer removes temporary files of writers killed
 *     before their rename (85 MB each).
 *
 * Layout (host byte order; the endian mark rejects a file from another):
 *   header  128 bytes (struct pc_head)
 *   then each weight's panels in order, each at a 64-byte boundary, in
 *   gemm.c's layout: ceil(n / nr) panels of k x nr floats, zero past n.
 */
#include "embed/packcache.h"

#include "embed/common.h"
#include "embed/kernels.h"
#include "util/hash.h"
#include "util/os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PC_MAGIC    "cairnpk1"
#define PC_ENDIAN   0x01020304u
#define PC_VERSION  1u
/* The int8 file (embed_pc_q8_*): its own magic and version, bumped when
 * qgemm.c's image changes. */
#define PC_Q8_MAGIC   "cairnq81"
#define PC_Q8_VERSION 1u
#define PC_Q8_NAME    "q8.bin"
#define PC_HEAD     128
#define PC_DIR      ".cairn-packed"
/* Caps that keep every size computation far from overflow. */
#define PC_MAX_NT   4096
#define PC_MAX_DIM  (1 << 20)
/* A writer's temporary file this old is a leftover: writing takes seconds. */
#define PC_TEMP_STALE_S 600

struct pc_head {
    char     magic[8];
    uint32_t endian;
    uint32_t version;
    uint32_t head_size;
    uint32_t nr;
    uint32_t nt;
    uint32_t zero;
    uint64_t src_size;
    int64_t  src_mtime_s, src_mtime_ns;
    uint64_t shapes;                     /* hash64 of every (n, k) */
    uint64_t file_size;
    uint64_t src_hash;                   /* a source key: embed_pc_source.key, or the
                                          * int8 file's (embed_pc_q8_*) */
    unsigned char pad[PC_HEAD - 88];
    uint64_t check;                      /* hash64 of everything before it */
};
_Static_assert(sizeof(struct pc_head) == PC_HEAD, "the header is 128 bytes");

struct embed_pc {
    void  *map;
    size_t size;
    void  *base;      /* what to munmap: the file's mapping, or the copy's */
    size_t len;
};

static uint64_t pad64(uint64_t x)
{
    return (x + 63) & ~(uint64_t)63;
}

size_t embed_pc_tensor_bytes(const struct embed_pc_tensor *t, int nr)
{
    return ((size_t)t->n + (size_t)nr - 1) / (size_t)nr * (size_t)t->k * (size_t)nr *
           sizeof(float);
}

/* The file's size for these weights, 0 if a shape is out of bounds. */
static uint64_t pc_size(const struct embed_pc_tensor *t, int nt, int nr)
{
    uint64_t at = PC_HEAD;
    int i;

    if (nt < 1 || nt > PC_MAX_NT || (nr != 16 && nr != 32))
        return 0;
    for (i = 0; i < nt; i++) {
        if (t[i].n < 1 || t[i].n > PC_MAX_DIM || t[i].k < 1 || t[i].k > PC_MAX_DIM)
            return 0;
        at = pad64(at) + embed_pc_tensor_bytes(&t[i], nr);
    }
    return at;
}

static uint64_t pc_shapes(const struct embed_pc_tensor *t, int nt)
{
    uint64_t h = 0x9ac4ed;
    int i;

    for (i = 0; i < nt; i++) {
        int32_t nk[2] = { t[i].n, t[i].k };
        h = hash64(nk, sizeof nk, h);
    }
    return h;
}

/* The header of a file of magic and version whose body is `size` bytes
 * long in all (0: the shapes are out of bounds). */
static void pc_head(struct pc_head *hd, const char *magic, uint32_t version, int nr, int nt,
                    uint64_t shapes, uint64_t size)
{
    memset(hd, 0, sizeof(*hd));
    memcpy(hd->magic, magic, 8);
    hd->endian = PC_ENDIAN;
    hd->version = version;
    hd->head_size = PC_HEAD;
    hd->nr = (uint32_t)nr;
    hd->nt = (uint32_t)nt;
    hd->shapes = shapes;
    hd->file_size = size;
}

static void pc_seal(struct pc_head *hd)
{
    hd->check = hash64(hd, offsetof(struct pc_head, check), 0x5eed);
}

static void pc_fill_head(struct pc_head *hd, int nr, const struct embed_pc_source *src,
                         const struct embed_pc_tensor *t, int nt)
{
    pc_head(hd, PC_MAGIC, PC_VERSION, nr, nt, pc_shapes(t, nt), pc_size(t, nt, nr));
    hd->src_size = src->size;
    hd->src_mtime_s = src->mtime_s;
    hd->src_mtime_ns = src->mtime_ns;
    hd->src_hash = src->key;
    pc_seal(hd);
}

/* 0 if the image's header (size bytes in all) is want's, else -1 and why. */
static int pc_head_check(const void *img, size_t size, const struct pc_head *want,
                         char *err, size_t errlen)
{
    struct pc_head got;

    if (size < PC_HEAD) {
        embed_errf(err, errlen, "packed file truncated (%zu bytes)", size);
        return -1;
    }
    memcpy(&got, img, sizeof got);
    if (memcmp(got.magic, want->magic, 8) != 0 || got.endian != PC_ENDIAN ||
        got.version != want->version || got.head_size != PC_HEAD) {
        embed_errf(err, errlen, "not a packed file of this version");
        return -1;
    }
    if (got.check != hash64(&got, offsetof(struct pc_head, check), 0x5eed)) {
        embed_errf(err, errlen, "packed file header damaged");
        return -1;
    }
    if (got.nr != want->nr || got.nt != want->nt || got.shapes != want->shapes) {
        embed_errf(err, errlen, "packed file is for other shapes");
        return -1;
    }
    if (got.src_size != want->src_size || got.src_mtime_s != want->src_mtime_s ||
        got.src_mtime_ns != want->src_mtime_ns || got.src_hash != want->src_hash) {
        embed_errf(err, errlen, "packed file is stale (the weights changed)");
        return -1;
    }
    if (got.file_size != want->file_size || size != want->file_size) {
        embed_errf(err, errlen, "packed file has %zu bytes, not %llu", size,
                   (unsigned long long)want->file_size);
        return -1;
    }
    return 0;
}

void embed_pc_edges(struct embed_pc_tensor *t, const float *w)
{
    size_t e = t->k < EMBED_PC_EDGE ? (size_t)t->k : EMBED_PC_EDGE;
    size_t all = (size_t)t->n * (size_t)t->k;

    memcpy(t->edge, w, e * sizeof(float));
    memcpy(t->edge + e, w + all - e, e * sizeof(float));
}

/* 0 if the panels p of t (width nr) hold t's edge values (its first row's
 * first ones, its last row's last ones) and zero in a padding column.
 * The edges, not positions spread over the weight, and read by the
 * caller with pread: a value read through the weights' mapping maps the
 * page-cache folio around it (up to megabytes on a file system with large
 * folios), pages a query on packed weights never reads; 8 spread
 * positions per weight read that way cost a query process 38 MB of RSS
 * and ~30 ms. */
static int pc_samples_match(const struct embed_pc_tensor *t, int nr, const float *p)
{
    size_t n = (size_t)t->n, k = (size_t)t->k, nrs = (size_t)nr, i;
    size_t e = k < EMBED_PC_EDGE ? k : EMBED_PC_EDGE;

    for (i = 0; i < 2 * e; i++) {
        size_t j = i < e ? 0 : n - 1;
        size_t c = i < e ? i : k - e + (i - e);
        const float *got = p + (j / nrs) * k * nrs + c * nrs + j % nrs;

        if (memcmp(got, &t->edge[i], sizeof(float)) != 0)
            return -1;
    }
    if (n % nrs) {   /* column n, the first past the end, in the last panel */
        const float *pad = p + (n / nrs) * k * nrs + (k - 1) * nrs + n % nrs;
        if (*pad != 0.0f)
            return -1;
    }
    return 0;
}

int embed_pc_check(const void *img, size_t size, int nr, const struct embed_pc_source *src,
                   const struct embed_pc_tensor *t, int nt, const float **panels,
                   char *err, size_t errlen)
{
    struct pc_head want;
    uint64_t at = PC_HEAD;
    int i;

    if (!pc_size(t, nt, nr)) {
        embed_errf(err, errlen, "no packed file for these shapes");
        return -1;
    }
    pc_fill_head(&want, nr, src, t, nt);
    if (pc_head_check(img, size, &want, err, errlen) != 0)
        return -1;
    for (i = 0; i < nt; i++) {
        const float *p = (const float *)((const char *)img + pad64(at));

        if (pc_samples_match(&t[i], nr, p) != 0) {
            embed_errf(err, errlen, "packed file differs from the weights (weight %d)", i);
            return -1;
        }
        panels[i] = p;
        at = pad64(at) + embed_pc_tensor_bytes(&t[i], nr);
    }
    return 0;
}

int embed_pc_path(const char *dir, int nr, char *out, size_t n)
{
    return (size_t)snprintf(out, n, "%s/" PC_DIR "/nr%d.bin", dir, nr) < n ? 0 : -1;
}

/* The weights' files a query reads whole (the panels, the int8 images)
 * are copied into memory in 2 MB pages rather than mapped, up to this
 * size: on the paravirtualised host every 4 KB page of a mapping a
 * process touches first costs ~3 us (the weights of USE-lite's int8 query,
 * 7 MB, ~1,750 pages: 3-4 ms of its encode), a pread into huge pages ~0.3
 * us a page of 4 KB (bench/README.md, "The hybrid hook ... (issue 16,
 * hyb54)"). Bigger files (an L12 model's f32 panels, 85 MB) stay mapped
 * and shared in the page cache. */
#define PC_COPY_MAX  ((size_t)32 << 20)
#define PC_HUGE      ((size_t)2 << 20)

/* 1 when anonymous memory can be had in 2 MB pages on advice
 * (transparent_hugepage "always" or "madvise"): without them a copy costs
 * a fault a 4 KB page, dearer than the mapping's. Read once a process. */
static int pc_huge_ok(void)
{
    static int ok = -1;
    int v = __atomic_load_n(&ok, __ATOMIC_RELAXED);
    if (v < 0) {
        char b[128] = { 0 };
        int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
        v = 0;
        if (fd >= 0) {
            ssize_t n = read(fd, b, sizeof b - 1);
            v = n > 0 && (strstr(b, "[always]") || strstr(b, "[madvise]"));
            close(fd);
        }
        __atomic_store_n(&ok, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* The file's size bytes copied into fresh anonymous memory starting at a
 * 2 MB boundary, advised as huge pages: 0 and *base / *len to unmap, or
 * -1 (nothing left mapped) for the caller to map the file instead. */
static int pc_copy(int fd, size_t size, void **base, size_t *len)
{
    size_t want = (size + PC_HUGE - 1) & ~(PC_HUGE - 1);
    char *p = mmap(NULL, want + PC_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return -1;
    char *at = (char *)(((uintptr_t)p + PC_HUGE - 1) & ~(uintptr_t)(PC_HUGE - 1));
    /* the reserve's unaligned head and tail back to the system */
    if (at > p)
        munmap(p, (size_t)(at - p));
    if (p + want + PC_HUGE > at + want)
        munmap(at + want, (size_t)(p + want + PC_HUGE - (at + want)));
#ifdef MADV_HUGEPAGE
    (void)madvise(at, want, MADV_HUGEPAGE);
#endif
    if (os_pread_all(fd, at, size, 0) != 0 ||
        mprotect(at, want, PROT_READ) != 0) {   /* read-only, as the mapping was */
        munmap(at, want);
        return -1;
    }
    *base = at;
    *len = want;
    return 0;
}

/* Maps the file at path read-only if it is a regular file of ours of at
 * least a header's size, or copies it (whole: a file of weights every
 * query reads whole; pc_copy): a handle, or NULL and why. */
static struct embed_pc *pc_map(const char *path, int whole, char *err, size_t errlen)
{
    struct stat st;
    struct embed_pc *pc = NULL;
    void *map = MAP_FAILED;
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

    if (fd < 0) {
        embed_errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size < PC_HEAD) {
        embed_errf(err, errlen, "%s: not a packed file of ours", path);
        goto out;
    }
    if (!(whole && (uint64_t)st.st_size <= PC_COPY_MAX && pc_huge_ok() &&
          pc_copy(fd, (size_t)st.st_size, &map, &len) == 0)) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
        len = (size_t)st.st_size;
    }
    if (map == MAP_FAILED) {
        embed_errf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        goto out;
    }
    if (!(pc = malloc(sizeof(*pc)))) {
        embed_errf(err, errlen, "out of memory");
        munmap(map, len);
        goto out;
    }
    pc->map = pc->base = map;
    pc->size = (size_t)st.st_size;
    pc->len = len;
out:
    close(fd);
    return pc;
}

struct embed_pc *embed_pc_open(const char *dir, int nr, const struct embed_pc_source *src,
                               const struct embed_pc_tensor *t, int nt,
                               const float **panels, char *err, size_t errlen)
{
    char path[4200];
    struct embed_pc *pc;

    if (embed_pc_path(dir, nr, path, sizeof path) != 0) {
        embed_errf(err, errlen, "path too long");
        return NULL;
    }
    if (!(pc = pc_map(path, 1, err, errlen)))
        return NULL;
    if (embed_pc_check(pc->map, pc->size, nr, src, t, nt, panels, err, errlen) != 0) {
        embed_pc_close(pc);
        return NULL;
    }
    return pc;
}

void embed_pc_close(struct embed_pc *pc)
{
    if (!pc)
        return;
    munmap(pc->base, pc->len);
    free(pc);
}

/* Removes writers' temporary files (nrNN.bin.XXXXXX, q8.bin.XXXXXX,
 * vocab.bin.XXXXXX) in folder pdir last
 * changed at least PC_TEMP_STALE_S seconds ago. */
static void pc_remove_temps(const char *pdir)
{
    DIR *d = opendir(pdir);
    struct dirent *e;
    char p[4400];
    struct stat st;
    time_t now = time(NULL);

    if (!d)
        return;
    while ((e = readdir(d))) {
        const char *dot = strstr(e->d_name, ".bin.");

        if ((strncmp(e->d_name, "nr", 2) != 0 && strncmp(e->d_name, "q8", 2) != 0 &&
             strncmp(e->d_name, "vo", 2) != 0) ||
            !dot ||
            strlen(dot) != 11)
            continue;
        snprintf(p, sizeof p, "%s/%s", pdir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            now - st.st_mtime >= PC_TEMP_STALE_S)
            unlink(p);
    }
    closedir(d);
}

/* Writes hd then parts[i] (len[i] bytes each, at 64-byte boundaries)
 * to dir/.cairn-packed/name: a temporary file (0600), synced, renamed
 * into place. 0, or -1 and why. */
static int pc_write(const char *dir, const char *name, const struct pc_head *hd,
                    const void *const *parts, const size_t *len, int nparts,
                    char *err, size_t errlen)
{
    static const char zeros[64];
    char pdir[4200], path[4300], tmp[4400];
    uint64_t at = PC_HEAD;
    int fd = -1, i, rc = -1;

    if ((size_t)snprintf(pdir, sizeof pdir, "%s/" PC_DIR, dir) >= sizeof pdir ||
        (size_t)snprintf(path, sizeof path, "%s/%s", pdir, name) >= sizeof path ||
        (size_t)snprintf(tmp, sizeof tmp, "%s.XXXXXX", path) >= sizeof tmp) {
        embed_errf(err, errlen, "path too long");
        return -1;
    }
    if (mkdir(pdir, 0700) != 0 && errno != EEXIST) {
        embed_errf(err, errlen, "%s: %s", pdir, strerror(errno));
        return -1;
    }
    pc_remove_temps(pdir);
    if ((fd = mkstemp(tmp)) < 0) {
        embed_errf(err, errlen, "%s: %s", pdir, strerror(errno));
        return -1;
    }
    if (os_write_all(fd, hd, sizeof *hd) != 0)
        goto io;
    for (i = 0; i < nparts; i++) {
        if (os_write_all(fd, zeros, (size_t)(pad64(at) - at)) != 0 ||
            os_write_all(fd, parts[i], len[i]) != 0)
            goto io;
        at = pad64(at) + len[i];
    }
    if (fsync(fd) != 0)
        goto io;
    if (close(fd) != 0) {
        fd = -1;
        goto io;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto io;
    rc = 0;
    goto out;
io:
    embed_errf(err, errlen, "%s: %s", tmp, strerror(errno));
out:
    if (fd >= 0)
        close(fd);
    if (rc != 0)
        unlink(tmp);
    return rc;
}

int embed_pc_write(const char *dir, int nr, const struct embed_pc_source *src,
                   const struct embed_pc_tensor *t, int nt, const float *const *panels,
                   char *err, size_t errlen)
{
    struct pc_head hd;
    size_t len[PC_MAX_NT];
    char name[16];
    int i;

    if (!pc_size(t, nt, nr)) {
        embed_errf(err, errlen, "no packed file for these shapes");
        return -1;
    }
    for (i = 0; i < nt; i++)
        len[i] = embed_pc_tensor_bytes(&t[i], nr);
    snprintf(name, sizeof name, "nr%d.bin", nr);
    pc_fill_head(&hd, nr, src, t, nt);
    return pc_write(dir, name, &hd, (const void *const *)panels, len, nt, err, errlen);
}

/* ---- the int8 file --------------------------------------------------------
 *
 * The int8 forms of a model's weights (qgemm.c's images, which do not
 * depend on the SIMD level: one file, dir/.cairn-packed/q8.bin), so that a
 * process's first int8 query maps them instead of quantising every weight
 * (which reads all the f32 weights: most of a one-shot int8 query's CPU).
 * Keyed by the caller's src_key, a hash of the weights files' sizes and
 * change times (not of their contents: hashing 18 MB of weights cost a
 * fresh process 40-60 ms, as much as quantising, since it is the first
 * read of those pages, docs/EMBED.md), by the shapes, by this format's
 * version, and checked against 32 values of each weight, 16 at each end
 * (struct embed_pc_tensor, kept after the header). Anything else is a
 * refusal, and the caller quantises and rewrites the file. The body is
 * only read as values (embed_k_q8_view), so a file that passes with other
 * bytes in its body gives wrong vectors, never a read outside the
 * mapping; whoever can write it can write the weights beside it. */

/* Bytes of the edges block: each weight's 2 * EMBED_PC_EDGE floats. */
static uint64_t q8_edges(int nt)
{
    return (uint64_t)nt * 2 * EMBED_PC_EDGE * sizeof(float);
}

static uint64_t q8_size(const struct embed_pc_tensor *t, int nt)
{
    uint64_t at;
    int i;

    if (nt < 1 || nt > PC_MAX_NT)
        return 0;
    at = PC_HEAD + q8_edges(nt);
    for (i = 0; i < nt; i++) {
        size_t b;

        if (t[i].n < 1 || t[i].n > PC_MAX_DIM || t[i].k < 1 || t[i].k > PC_MAX_DIM ||
            !(b = embed_k_q8_image_bytes(t[i].n, t[i].k)))
            return 0;
        at = pad64(at) + b;
    }
    return at;
}

static void q8_fill_head(struct pc_head *hd, uint64_t src_key, const struct embed_pc_tensor *t,
                         int nt)
{
    pc_head(hd, PC_Q8_MAGIC, PC_Q8_VERSION, 0, nt, pc_shapes(t, nt), q8_size(t, nt));
    hd->src_hash = src_key;
    pc_seal(hd);
}

int embed_pc_q8_check(const void *img, size_t size, uint64_t src_key,
                      const struct embed_pc_tensor *t, int nt, const void **images,
                      char *err, size_t errlen)
{
    struct pc_head want;
    uint64_t at = PC_HEAD + q8_edges(nt);
    int i;

    if (!q8_size(t, nt)) {
        embed_errf(err, errlen, "no int8 file for these shapes");
        return -1;
    }
    q8_fill_head(&want, src_key, t, nt);
    if (pc_head_check(img, size, &want, err, errlen) != 0)
        return -1;
    for (i = 0; i < nt; i++) {
        const char *e = (const char *)img + PC_HEAD + (size_t)i * sizeof(t[i].edge);

        if (memcmp(e, t[i].edge, sizeof(t[i].edge)) != 0) {
            embed_errf(err, errlen, "int8 file differs from the weights (weight %d)", i);
            return -1;
        }
        images[i] = (const char *)img + pad64(at);
        at = pad64(at) + embed_k_q8_image_bytes(t[i].n, t[i].k);
    }
    return 0;
}

struct embed_pc *embed_pc_q8_open(const char *dir, uint64_t src_key,
                                  const struct embed_pc_tensor *t, int nt,
                                  const void **images, char *err, size_t errlen)
{
    char path[4200];
    struct embed_pc *pc;

    if ((size_t)snprintf(path, sizeof path, "%s/" PC_DIR "/" PC_Q8_NAME, dir) >= sizeof path) {
        embed_errf(err, errlen, "path too long");
        return NULL;
    }
    if (!(pc = pc_map(path, 1, err, errlen)))
        return NULL;
    if (embed_pc_q8_check(pc->map, pc->size, src_key, t, nt, images, err, errlen) != 0) {
        embed_pc_close(pc);
        return NULL;
    }
    return pc;
}

int embed_pc_q8_write(const char *dir, uint64_t src_key, const struct embed_pc_tensor *t,
                      int nt, const struct embed_k_q8 *const *q, char *err, size_t errlen)
{
    struct pc_head hd;
    const void **part = NULL;
    size_t *len = NULL;
    int i, np = 0, rc = -1;

    if (!q8_size(t, nt)) {
        embed_errf(err, errlen, "no int8 file for these shapes");
        return -1;
    }
    part = malloc(((size_t)nt * 4) * sizeof(*part));
    len = malloc(((size_t)nt * 4) * sizeof(*len));
    if (!part || !len) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    for (i = 0; i < nt; i++) {   /* the edges block, end to end */
        part[np] = t[i].edge;
        len[np++] = sizeof(t[i].edge);
    }
    for (i = 0; i < nt; i++) {
        size_t sum = 0;
        int j, k = embed_k_q8_parts(q[i], part + np, len + np);

        for (j = 0; j < k; j++)
            sum += len[np + j];
        if (sum != embed_k_q8_image_bytes(t[i].n, t[i].k)) {
            embed_errf(err, errlen, "int8 weight %d is not of its shape", i);
            goto out;
        }
        np += k;
    }
    q8_fill_head(&hd, src_key, t, nt);
    rc = pc_write(dir, PC_Q8_NAME, &hd, part, len, np, err, errlen);
out:
    free(part);
    free(len);
    return rc;
}

/* ---- a caller's bytes (embed_pc_blob_*) -----------------------------------
 *
 * For data that is not weights (USE-lite's vocabulary, use.c): the body
 * is the caller's, so it cannot be checked against anything here but
 * itself; the header's `shapes` holds hash64 of the whole body (a few
 * hundred KB: ~0.2 M instructions), so a file torn or damaged anywhere
 * is refused, and the caller still bounds every offset it reads from it. */

#define PC_BLOB_MAX ((uint64_t)64 << 20)

static int pc_blob_name(const char *dir, const char *name, char *path, size_t n)
{
    size_t i;

    for (i = 0; name[i]; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '.'))
            return -1;
    if (i == 0 || name[0] == '.')
        return -1;
    return (size_t)snprintf(path, n, "%s/" PC_DIR "/%s", dir, name) < n ? 0 : -1;
}

static void pc_blob_head(struct pc_head *hd, const char *magic, uint64_t src_key,
                         uint64_t body_hash, uint64_t size)
{
    pc_head(hd, magic, PC_VERSION, 0, 1, body_hash, size);
    hd->src_hash = src_key;
    pc_seal(hd);
}

int embed_pc_blob_check(const void *img, size_t size, const char *magic, uint64_t src_key,
                        const void **body, size_t *len, char *err, size_t errlen)
{
    struct pc_head want;
    uint64_t h = 0;

    if (size > PC_BLOB_MAX) {
        embed_errf(err, errlen, "packed file too large");
        return -1;
    }
    if (size >= PC_HEAD)
        h = hash64((const char *)img + PC_HEAD, size - PC_HEAD, 0xb10b);
    pc_blob_head(&want, magic, src_key, h, size);
    if (pc_head_check(img, size, &want, err, errlen) != 0)
        return -1;
    *body = (const char *)img + PC_HEAD;
    *len = size - PC_HEAD;
    return 0;
}

struct embed_pc *embed_pc_blob_open(const char *dir, const char *name, const char *magic,
                                    uint64_t src_key, const void **body, size_t *len,
                                    char *err, size_t errlen)
{
    char path[4200];
    struct embed_pc *pc;

    if (pc_blob_name(dir, name, path, sizeof path) != 0) {
        embed_errf(err, errlen, "bad packed file name or path too long");
        return NULL;
    }
    if (!(pc = pc_map(path, 0, err, errlen)))
        return NULL;
    if (embed_pc_blob_check(pc->map, pc->size, magic, src_key, body, len, err, errlen) != 0) {
        embed_pc_close(pc);
        return NULL;
    }
    return pc;
}

int embed_pc_blob_write(const char *dir, const char *name, const char *magic,
                        uint64_t src_key, const void *body, size_t len,
                        char *err, size_t errlen)
{
    struct pc_head hd;
    char path[4200];

    if (pc_blob_name(dir, name, path, sizeof path) != 0 || len > PC_BLOB_MAX - PC_HEAD) {
        embed_errf(err, errlen, "bad packed file name, path too long or body too large");
        return -1;
    }
    pc_blob_head(&hd, magic, src_key, hash64(body, len, 0xb10b), PC_HEAD + len);
    return pc_write(dir, name, &hd, &body, &len, 1, err, errlen);
}
