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
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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

int veccache_path(struct cairn *h, char *out, size_t n)
{
    const char *f = sqlite3_db_filename(h->db, "main");
    if (!f || !*f)
        return -1;                       /* an in-memory or temporary store */
    return (size_t)snprintf(out, n, "%s-vec", f) < n ? 0 : -1;
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
}

/* Only the bytes up to `check`, so the hash never covers itself. */
static uint64_t head_hash(const struct vc_head *hd)
{
    return hash64(hd, offsetof(struct vc_head, check), 0x76656363);
}

int veccache_open(struct cairn *h, const char *model, int dim, int64_t stamp, struct vec_set *s)
{
    char p[4200];
    struct vc_head hd;
    struct vc_layout l;
    struct stat st;
    void *map;
    int fd, rc = -1;

    if (veccache_path(h, p, sizeof p) != 0)
        return -1;
    fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size < VC_HEAD || pread(fd, &hd, sizeof hd, 0) != (ssize_t)sizeof hd)
        goto out;
    if (memcmp(hd.magic, VC_MAGIC, 8) || hd.endian != VC_ENDIAN || hd.head_size != VC_HEAD ||
        hd.check != head_hash(&hd) || hd.stamp != stamp || hd.dim != (uint32_t)dim ||
        dim < 1 || dim > VC_MAX_DIM || hd.f32 > 1 || hd.n == 0 || hd.n > VC_MAX_N ||
        hd.msgs_with < 1 || (uint64_t)hd.msgs_with > hd.n ||
        !memchr(hd.model, '\0', sizeof hd.model) || !memchr(hd.other, '\0', sizeof hd.other) ||
        strcmp(hd.model, model))
        goto out;
    layout(hd.n, hd.dim, hd.f32, &l);
    if (hd.file_size != l.size || (uint64_t)st.st_size != l.size || l.size > SIZE_MAX)
        goto out;
    /* MAP_POPULATE: the search reads every page at once anyway, and the
     * kernel fills the page tables faster than page faults would. */
    map = mmap(NULL, (size_t)l.size, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, 0);
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
    close(fd);
    return rc;
}

int veccache_write(struct cairn *h, const struct vec_set *s)
{
    char p[4200], tmp[4300];
    struct vc_head hd;
    struct vc_layout l;
    static const char zeros[64];
    int fd;

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
    remove_temps(p, VC_TEMP_STALE_S);
    snprintf(tmp, sizeof tmp, "%s.XXXXXX", p);
    fd = mkostemp(tmp, O_CLOEXEC);                 /* 0600 */
    if (fd < 0)
        return -1;
    size_t vbytes = s->n * (size_t)s->dim * (s->f32 ? 4 : 1);
    if (os_write_all(fd, &hd, sizeof hd) || os_write_all(fd, s->msg, s->n * 8) ||
        os_write_all(fd, s->sess, s->n * 8) || os_write_all(fd, s->inv_norm, s->n * 4) ||
        os_write_all(fd, zeros, (size_t)(l.v - (l.norm + 4 * (uint64_t)s->n))) ||
        os_write_all(fd, s->f32 ? (const void *)s->vf : (const void *)s->v8, vbytes) ||
        fsync(fd) != 0) {
        close(fd);
        unlink(tmp);
        return -1;
    }
    /* synced before the rename: after a crash the name holds the old
     * file or the whole new one, never a hole */
    if (close(fd) != 0 || rename(tmp, p) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}
