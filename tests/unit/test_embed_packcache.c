/*
 * test_embed_packcache.c: the pre-packed weights file (src/embed/
 * packcache.c) on a copy of tests/data/embed/tiny-bert, with
 * CAIRN_PACK_CACHE=1 (it is off by default) and the size from which a
 * model gets a file lowered to 1 byte (real models need 8 MB; tiny-bert's
 * packed weights are ~200 KB).
 *
 * It checks that:
 *   - a fresh folder packs at the first query and writes the file
 *     (.cairn-packed/nrNN.bin, NN the panel width of the SIMD level), and
 *     the model's identity files are untouched (a folder, not a file);
 *   - the next load maps it before any pass, and gives the same bits as
 *     the process that packed, at 1 and 2 threads, and cosine >= 0.99999
 *     with the path that reads the weights in place (CAIRN_PACK_CACHE=0,
 *     as when unset, the default: it writes nothing);
 *   - a damaged file is refused at load, the vectors stay right, and the
 *     first query writes a good file again: truncated (by a byte, to the
 *     header, to nothing), a header byte changed (magic, version, panel
 *     width, the header's own hash, the recorded source size), a value of
 *     a weight changed at either end, a padding column made non-zero,
 *     another model's file, a stale one (the weights' mtime changed),
 *     garbage of the right size, a symbolic link and a folder in its
 *     place;
 *   - a writer removes a killed writer's temporary file once it is old,
 *     and leaves a young one;
 *   - at the AVX2 level the file is nr16.bin beside nr32.bin, and at the
 *     portable level there is none;
 *   - where the kernel gives 2 MB pages on advice, a loaded model holds a
 *     copy of the file, not a mapping (packcache.c, pc_copy): its
 *     vectors keep their bits when the file's body is overwritten in
 *     place after the load (a mapping would see the new bytes).
 */
#include "t.h"

#include "embed/embed.h"
#include "embed/kernels.h"
#include "embed/packcache.h"
#include "embed/safetensors.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TINY "tests/data/embed/tiny-bert"
#define DIM  64
#define NTEXT 3

static const char *const texts[NTEXT] = {
    "which animal do I own?", "my dog Rex likes the park",
    "the sea in spring",
};

static char dir[64];

static int copy_file(const char *from, const char *to)
{
    char buf[65536];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ssize_t n;
    int ok = in >= 0 && out >= 0;

    while (ok && (n = read(in, buf, sizeof buf)) > 0)
        ok = write(out, buf, (size_t)n) == n;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        ok = 0;
    return ok ? 0 : -1;
}

static void packed_path(int nr, char *out, size_t n)
{
    T_CHECK(embed_pc_path(dir, nr, out, n) == 0);
}

/* Loads the copy, checks where its packed weights come from right after
 * loading, and encodes the texts at `threads` into out, one query each
 * (the case the file is for); the source after the passes is the result. */
static int encode(int threads, int want_at_load, float *out)
{
    char err[256];
    struct embed_model *m = embed_load(dir, err, sizeof err);
    int from, i;

    T_CHECK(m != NULL);
    if (!m) {
        fprintf(stderr, "load: %s\n", err);
        return -1;
    }
    T_EQ_INT(embed_packed_from(m), want_at_load);
    embed_set_threads(m, threads);
    for (i = 0; i < NTEXT; i++)
        T_EQ_INT(embed_encode(m, &texts[i], 1, 1, out + i * DIM), 0);
    from = embed_packed_from(m);
    embed_free(m);
    return from;
}

/* Each text as the first query of a fresh load with the file off: on the
 * kernels that read the weights in place. */
static void encode_inplace(float *out)
{
    char err[256];
    int i;

    setenv("CAIRN_PACK_CACHE", "0", 1);
    for (i = 0; i < NTEXT; i++) {
        struct embed_model *m = embed_load(dir, err, sizeof err);

        T_CHECK(m != NULL);
        if (!m)
            break;
        T_EQ_INT(embed_encode(m, &texts[i], 1, 1, out + i * DIM), 0);
        T_EQ_INT(embed_packed_from(m), 0);
        embed_free(m);
    }
    setenv("CAIRN_PACK_CACHE", "1", 1);
}

static void same_bits(const float *a, const float *b)
{
    T_CHECK(memcmp(a, b, sizeof(float) * NTEXT * DIM) == 0);
}

static void close_to(const float *a, const float *b)
{
    int i;

    for (i = 0; i < NTEXT; i++)
        T_CHECK(t_cosine(a + i * DIM, b + i * DIM, DIM) >= 0.99999);
}

static float first[NTEXT * DIM], inplace[NTEXT * DIM];

/* Bytes of the file, read whole (NULL if absent); *n its size. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    unsigned char *p = NULL;
    long sz;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (sz = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (p = malloc((size_t)sz + 1)) && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    *n = p ? (size_t)sz : 0;
    fclose(f);
    return p;
}

static void spill(const char *path, const unsigned char *p, size_t n)
{
    FILE *f = fopen(path, "wb");

    T_CHECK(f && fwrite(p, 1, n, f) == n);
    if (f)
        T_CHECK(fclose(f) == 0);
}

static void test_write_then_map(void)
{
    float v[NTEXT * DIM];
    char path[256];
    struct stat st;
    int nr = embed_k_pack_width();

    packed_path(nr, path, sizeof path);
    T_CHECK(stat(path, &st) != 0);
    /* no file: the first query packs and writes it */
    T_EQ_INT(encode(1, 0, first), 1);
    T_CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 077) == 0);
    /* later processes map it at load: the same bits, at 1 and 2 threads */
    T_EQ_INT(encode(1, 2, v), 2);
    same_bits(first, v);
    T_EQ_INT(encode(2, 2, v), 2);
    same_bits(first, v);
    /* the in-place kernels (file off) agree; the switch writes nothing,
     * and packs at the second query as before */
    unlink(path);
    encode_inplace(inplace);
    close_to(first, inplace);
    setenv("CAIRN_PACK_CACHE", "0", 1);
    T_EQ_INT(encode(1, 0, v), 1);
    setenv("CAIRN_PACK_CACHE", "1", 1);
    close_to(first, v);   /* its first query in place, the others packed */
    T_CHECK(stat(path, &st) != 0);
    /* a batch on the mapped file: the same vectors as the queries */
    {
        char err[256];
        struct embed_model *m;

        T_EQ_INT(encode(1, 0, v), 1);
        m = embed_load(dir, err, sizeof err);
        T_CHECK(m && embed_packed_from(m) == 2);
        if (m) {
            T_EQ_INT(embed_encode(m, texts, NTEXT, 1, v), 0);
            close_to(first, v);
            embed_free(m);
        }
    }
    same_bits(first, v);
    T_CHECK(stat(path, &st) == 0);
}

/* The file as damage() leaves it must be refused at load; the vectors
 * stay right and the query writes a good file again. */
static void refused(const char *what)
{
    float v[NTEXT * DIM];

    t_current = what;
    T_EQ_INT(encode(1, 0, v), 1);
    same_bits(first, v);
    T_EQ_INT(encode(1, 2, v), 2);
    same_bits(first, v);
}

enum { H_MAGIC = 0, H_VERSION = 12, H_NR = 20, H_SRC_SIZE = 32, H_CHECK = 120 };

static void test_damaged(void)
{
    char path[256], link[300];
    int nr = embed_k_pack_width();
    size_t n, body = 128, last;
    unsigned char *good, *bad;

    packed_path(nr, path, sizeof path);
    good = slurp(path, &n);
    T_CHECK(good && n > body + 64);
    if (!good || n <= body + 64)
        return;
    bad = malloc(n);
    /* the last value of the last weight: the last panel's row k-1 holds the
     * weight's last row at column (n_out - 1) % nr; tiny-bert's last weight
     * is the FFN down one [64][128], so the panel is full and the value is
     * the file's last float */
    last = n - sizeof(float);

    spill(path, good, n - 1);
    refused("truncated by one byte");
    spill(path, good, body);
    refused("header only");
    spill(path, good, 0);
    refused("empty");

    static const struct { size_t at; const char *what; } hb[] = {
        { H_MAGIC, "magic" }, { H_VERSION, "version" }, { H_NR, "panel width" },
        { H_SRC_SIZE, "source size" }, { H_CHECK, "header hash" },
    };
    for (size_t i = 0; i < sizeof hb / sizeof hb[0]; i++) {
        memcpy(bad, good, n);
        bad[hb[i].at] ^= 0x01;
        spill(path, bad, n);
        refused(hb[i].what);
    }
    memcpy(bad, good, n);
    bad[body] ^= 0x40;          /* the first weight's first value */
    spill(path, bad, n);
    refused("first value");
    memcpy(bad, good, n);
    bad[last + 1] ^= 0x40;      /* the last weight's last value */
    spill(path, bad, n);
    refused("last value");
    for (size_t i = 0; i < n; i++)
        bad[i] = (unsigned char)(i * 131 + 7);
    spill(path, bad, n);
    refused("garbage of the right size");

    /* stale: the weights file's mtime moves */
    {
        char st_path[128];
        struct timespec ts[2] = { { 0, UTIME_OMIT }, { 1000000000, 5 } };

        spill(path, good, n);
        snprintf(st_path, sizeof st_path, "%s/model.safetensors", dir);
        T_CHECK(utimensat(AT_FDCWD, st_path, ts, 0) == 0);
        refused("stale");
        free(good);
        good = slurp(path, &n);
        T_CHECK(good != NULL);
    }
    /* a symbolic link to a good copy, and a folder, in its place */
    snprintf(link, sizeof link, "%s.copy", path);
    spill(link, good, n);
    unlink(path);
    T_CHECK(symlink(link, path) == 0);
    refused("symbolic link");
    unlink(link);
    unlink(path);
    T_CHECK(mkdir(path, 0700) == 0);
    {
        float v[NTEXT * DIM];
        char err[256];
        struct embed_model *m = embed_load(dir, err, sizeof err);

        t_current = "folder in its place";
        T_CHECK(m && embed_packed_from(m) == 0);
        if (m) {   /* the write fails (a folder is there): packed here, vectors right */
            T_EQ_INT(embed_encode(m, texts, NTEXT, 1, v), 0);
            same_bits(first, v);
            embed_free(m);
        }
    }
    rmdir(path);
    t_current = "test_damaged";
    free(good);
    free(bad);
}

/* Rewrites model.safetensors as img, keeping the old file's mtime. */
static void same_stamp_spill(const char *path, const unsigned char *img, size_t n)
{
    struct stat s0;
    struct timespec ts[2];

    T_CHECK(stat(path, &s0) == 0);
    spill(path, img, n);
    ts[0] = s0.st_atim;
    ts[1] = s0.st_mtim;
    T_CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

/* Another model's file: weights of the same size and mtime whose first
 * packed weight differs in one value. The file's header matches them;
 * its values do not, so it is refused (and rebuilt for them). */
static void test_other_model(void)
{
    char st_path[128], err[256];
    size_t sn;
    unsigned char *img;
    struct embed_st_file *f;
    const struct embed_st_tensor *t;
    float v[NTEXT * DIM];

    snprintf(st_path, sizeof st_path, "%s/model.safetensors", dir);
    img = slurp(st_path, &sn);
    T_CHECK(img != NULL);
    if (!img)
        return;
    f = embed_st_open_mem(img, sn, err, sizeof err);
    t = f ? embed_st_find(f, "encoder.layer.0.attention.self.query.weight") : NULL;
    T_CHECK(t != NULL);
    if (t) {
        size_t at = (size_t)((const unsigned char *)t->data - img);

        img[at + t->elsize - 1] ^= 0x01;   /* the first value's high byte: its sign */
        same_stamp_spill(st_path, img, sn);
        T_EQ_INT(encode(1, 0, v), 1);
        T_CHECK(memcmp(v, first, sizeof v) != 0);   /* other weights, other vectors */
        img[at + t->elsize - 1] ^= 0x01;
        same_stamp_spill(st_path, img, sn);
        T_EQ_INT(encode(1, 0, v), 1);               /* and back */
        same_bits(first, v);
        T_EQ_INT(encode(1, 2, v), 2);
    }
    embed_st_close(f);
    free(img);
}

static void test_temps(void)
{
    char pdir[128], old[200], young[200];
    struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };
    struct stat st;
    float v[NTEXT * DIM];
    char path[256];

    snprintf(pdir, sizeof pdir, "%s/.cairn-packed", dir);
    snprintf(old, sizeof old, "%s/nr32.bin.AbC123", pdir);
    snprintf(young, sizeof young, "%s/nr16.bin.XyZ789", pdir);
    spill(old, (const unsigned char *)"x", 1);
    spill(young, (const unsigned char *)"y", 1);
    T_CHECK(utimensat(AT_FDCWD, old, ts, 0) == 0);
    packed_path(embed_k_pack_width(), path, sizeof path);
    unlink(path);
    T_EQ_INT(encode(1, 0, v), 1);     /* writes, and sweeps */
    T_CHECK(stat(old, &st) != 0);
    T_CHECK(stat(young, &st) == 0);
    unlink(young);
}

static void test_levels(void)
{
    char p16[256], p32[256];
    struct stat st;
    float v[NTEXT * DIM];

    packed_path(16, p16, sizeof p16);
    packed_path(32, p32, sizeof p32);
    if (embed_k_simd_cpu() < 1) {
        T_SKIP("the AVX2 file: this CPU has no AVX2");
        return;
    }
    embed_k_simd_enable(1);
    unlink(p16);
    T_EQ_INT(encode(1, 0, v), 1);
    T_CHECK(stat(p16, &st) == 0);
    close_to(first, v);
    T_EQ_INT(encode(2, 2, v), 2);
    close_to(first, v);
    if (embed_k_simd_cpu() >= 2)
        T_CHECK(stat(p32, &st) == 0);   /* each level keeps its own */
    embed_k_simd_enable(0);
    T_EQ_INT(encode(1, 0, v), 0);       /* no packed product: no file either */
    close_to(first, v);
    embed_k_simd_enable(2);
}

static void rm_copy(void)
{
    static const char *const files[] = { "config.json", "tokenizer.json", "model.safetensors" };
    char p[256];
    DIR *d;

    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/.cairn-packed", dir);
    if ((d = opendir(p))) {
        struct dirent *e;
        char q[600];

        while ((e = readdir(d)))
            if (e->d_name[0] != '.') {
                snprintf(q, sizeof q, "%s/%s", p, e->d_name);
                unlink(q);
            }
        closedir(d);
    }
    rmdir(p);
    rmdir(dir);
}

/* 1 when anonymous memory comes in 2 MB pages on advice (what the copy
 * needs; without it the file stays mapped). */
static int huge_pages_on(void)
{
    char b[128] = { 0 };
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    int on = 0;
    if (f) {
        on = fgets(b, sizeof b, f) && (strstr(b, "[always]") || strstr(b, "[madvise]"));
        fclose(f);
    }
    return on;
}

static void test_copied(void)
{
    float v[NTEXT * DIM], w[NTEXT * DIM];
    char path[256], err[256];
    struct embed_model *m;
    size_t n = 0;
    int i;

    if (!huge_pages_on()) {
        T_SKIP("the copy in 2 MB pages: transparent huge pages are off here (the file stays mapped)");
        return;
    }
    packed_path(embed_k_pack_width(), path, sizeof path);
    unlink(path);
    T_EQ_INT(encode(1, 0, v), 1);            /* writes the file */
    m = embed_load(dir, err, sizeof err);
    T_CHECK(m && embed_packed_from(m) == 2);
    if (!m)
        return;
    embed_set_threads(m, 1);
    for (i = 0; i < NTEXT; i++)
        T_EQ_INT(embed_encode(m, &texts[i], 1, 1, v + i * DIM), 0);
    same_bits(first, v);
    /* the body overwritten in place, the size kept: the loaded model
     * must not see it */
    unsigned char *img = slurp(path, &n);
    T_CHECK(img && n > 4096);
    if (img && n > 4096) {
        memset(img + 256, 0x3f, n - 256);
        int fd = open(path, O_WRONLY);
        T_CHECK(fd >= 0 && pwrite(fd, img + 256, n - 256, 256) == (ssize_t)(n - 256));
        if (fd >= 0)
            close(fd);
        for (i = 0; i < NTEXT; i++)
            T_EQ_INT(embed_encode(m, &texts[i], 1, 1, w + i * DIM), 0);
        same_bits(first, w);
    }
    free(img);
    embed_free(m);
    unlink(path);                            /* the next query writes a good one */
    T_EQ_INT(encode(1, 0, v), 1);
    same_bits(first, v);
}

int main(void)
{
    static const char *const files[] = { "config.json", "tokenizer.json", "model.safetensors" };
    const char *root = getenv("CAIRN_TEST_ROOT");
    char from[128], to[128];

    if (root && chdir(root) != 0)
        fprintf(stderr, "cannot cd to %s\n", root);
    setenv("CAIRN_PACK_CACHE", "1", 1);   /* off by default (bert.c, pc_wanted) */
    snprintf(dir, sizeof dir, "/tmp/cairn-packcache-XXXXXX");
    T_CHECK(mkdtemp(dir) != NULL);
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(from, sizeof from, TINY "/%s", files[i]);
        snprintf(to, sizeof to, "%s/%s", dir, files[i]);
        T_CHECK(copy_file(from, to) == 0);
    }
    if (!embed_k_packed_pays()) {
        T_SKIP("the pre-packed file: the packed product does not run on this CPU (no AVX2)");
        rm_copy();
        return T_DONE();
    }
    embed_pack_cache_min(1);
    T_RUN(test_write_then_map);
    T_RUN(test_damaged);
    T_RUN(test_other_model);
    T_RUN(test_temps);
    T_RUN(test_levels);
    T_RUN(test_copied);
    rm_copy();
    return T_DONE();
}
