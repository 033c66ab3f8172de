/*
 * packcache.c: the pre-packed weights file (interface in packcache.h).
 *
 * Why: a process that encodes once (`cairn recall` with hybrid, the
 * prompt hook) cannot pay the 64-94 ms that packing an L12 model's 85 MB
 * of encoder weights costs, so before this file it ran its query on the
 * kernels that read the weights in place, on one thread: the slowest
 * path. Mapping a copy packed once costs well under a millisecond plus
 * the page faults the weights cost anyway, and its pages are shared in
 * the page cache by every process.
 *
 * The weights stay the source of truth and the file is disposable:
 *   - it lives in DIR/.cairn-packed/, a folder: the model's identity
 *     (store/vectors.c) hashes the names and sizes of the folder's plain
 *     files only, so vectors keep their model id; `cairn model rm`
 *     removes it with the folder;
 *   - one file per panel width (nr16.bin for AVX2, nr32.bin for AVX-512):
 *     the width follows the SIMD level, and each level runs fastest on
 *     its own;
 *   - it is never trusted blindly: its owner must be us, its size must be
 *     exactly what the shapes give, its header carries a hash of itself,
 *     the weights file's size and change time and a hash of every
 *     weight's shape, and 32 values of every weight (16 at each end) must
 *     have the same bits as the weights, and a padding column zeros. A truncated, torn, stale, foreign or
 *     hostile file is refused and rebuilt. Its body is only ever read as
 *     values, never as offsets or sizes, so a file that passes the checks
 *     with other values elsewhere gives odd vectors, never a read outside
 *     the mapping. Who can write it can write the weights beside it.
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
#include "util/hash.h"
#include "util/os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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
    unsigned char pad[PC_HEAD - 80];
    uint64_t check;                      /* hash64 of everything before it */
};
_Static_assert(sizeof(struct pc_head) == PC_HEAD, "the header is 128 bytes");

struct embed_pc {
    void  *map;
    size_t size;
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

static void pc_fill_head(struct pc_head *hd, int nr, const struct embed_pc_source *src,
                         const struct embed_pc_tensor *t, int nt)
{
    memset(hd, 0, sizeof(*hd));
    memcpy(hd->magic, PC_MAGIC, 8);
    hd->endian = PC_ENDIAN;
    hd->version = PC_VERSION;
    hd->head_size = PC_HEAD;
    hd->nr = (uint32_t)nr;
    hd->nt = (uint32_t)nt;
    hd->src_size = src->size;
    hd->src_mtime_s = src->mtime_s;
    hd->src_mtime_ns = src->mtime_ns;
    hd->shapes = pc_shapes(t, nt);
    hd->file_size = pc_size(t, nt, nr);
    hd->check = hash64(hd, offsetof(struct pc_head, check), 0x5eed);
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
    struct pc_head want, got;
    uint64_t at = PC_HEAD, need = pc_size(t, nt, nr);
    int i;

    if (!need) {
        embed_errf(err, errlen, "no packed file for these shapes");
        return -1;
    }
    if (size < PC_HEAD) {
        embed_errf(err, errlen, "packed file truncated (%zu bytes)", size);
        return -1;
    }
    memcpy(&got, img, sizeof got);
    if (memcmp(got.magic, PC_MAGIC, 8) != 0 || got.endian != PC_ENDIAN ||
        got.version != PC_VERSION || got.head_size != PC_HEAD) {
        embed_errf(err, errlen, "not a packed file of this version");
        return -1;
    }
    if (got.check != hash64(&got, offsetof(struct pc_head, check), 0x5eed)) {
        embed_errf(err, errlen, "packed file header damaged");
        return -1;
    }
    pc_fill_head(&want, nr, src, t, nt);
    if (got.nr != want.nr || got.nt != want.nt || got.shapes != want.shapes) {
        embed_errf(err, errlen, "packed file is for other shapes");
        return -1;
    }
    if (got.src_size != want.src_size || got.src_mtime_s != want.src_mtime_s ||
        got.src_mtime_ns != want.src_mtime_ns) {
        embed_errf(err, errlen, "packed file is stale (the weights changed)");
        return -1;
    }
    if (got.file_size != need || size != need) {
        embed_errf(err, errlen, "packed file has %zu bytes, not %llu", size,
                   (unsigned long long)need);
        return -1;
    }
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

struct embed_pc *embed_pc_open(const char *dir, int nr, const struct embed_pc_source *src,
                               const struct embed_pc_tensor *t, int nt,
                               const float **panels, char *err, size_t errlen)
{
    char path[4200];
    struct stat st;
    struct embed_pc *pc = NULL;
    void *map = MAP_FAILED;
    int fd = -1;

    if (embed_pc_path(dir, nr, path, sizeof path) != 0) {
        embed_errf(err, errlen, "path too long");
        return NULL;
    }
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        embed_errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size < PC_HEAD) {
        embed_errf(err, errlen, "%s: not a packed file of ours", path);
        goto out;
    }
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        embed_errf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        goto out;
    }
    if (embed_pc_check(map, (size_t)st.st_size, nr, src, t, nt, panels, err, errlen) != 0)
        goto out;
    if (!(pc = malloc(sizeof(*pc)))) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    pc->map = map;
    pc->size = (size_t)st.st_size;
    map = MAP_FAILED;
out:
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    close(fd);
    return pc;
}

void embed_pc_close(struct embed_pc *pc)
{
    if (!pc)
        return;
    munmap(pc->map, pc->size);
    free(pc);
}

/* Removes writers' temporary files (nrNN.bin.XXXXXX) in folder pdir last
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

        if (strncmp(e->d_name, "nr", 2) != 0 || !dot || strlen(dot) != 11)
            continue;
        snprintf(p, sizeof p, "%s/%s", pdir, e->d_name);
        if (lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
            now - st.st_mtime >= PC_TEMP_STALE_S)
            unlink(p);
    }
    closedir(d);
}

int embed_pc_write(const char *dir, int nr, const struct embed_pc_source *src,
                   const struct embed_pc_tensor *t, int nt, const float *const *panels,
                   char *err, size_t errlen)
{
    static const char zeros[64];
    char pdir[4200], path[4200], tmp[4300];
    struct pc_head hd;
    uint64_t at = PC_HEAD;
    int fd = -1, i, rc = -1;

    if (!pc_size(t, nt, nr)) {
        embed_errf(err, errlen, "no packed file for these shapes");
        return -1;
    }
    if ((size_t)snprintf(pdir, sizeof pdir, "%s/" PC_DIR, dir) >= sizeof pdir ||
        embed_pc_path(dir, nr, path, sizeof path) != 0 ||
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
    pc_fill_head(&hd, nr, src, t, nt);
    if (os_write_all(fd, &hd, sizeof hd) != 0)
        goto io;
    for (i = 0; i < nt; i++) {
        size_t bytes = embed_pc_tensor_bytes(&t[i], nr);

        if (os_write_all(fd, zeros, (size_t)(pad64(at) - at)) != 0 ||
            os_write_all(fd, panels[i], bytes) != 0)
            goto io;
        at = pad64(at) + bytes;
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
