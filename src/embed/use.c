/*
 * use.c: USE-lite from its TF.js files: loading, tokenizer, forward pass
 * (the architecture and the tokenizer's rules are in use.h).
 *
 * Loading treats the files as hostile: model.json must be a JSON object
 * with a weightsManifest whose shard names are plain file names; the
 * shards together must hold exactly the bytes the manifest lists; every
 * weight we use must be there with the expected dtype and shape, and the
 * shapes must agree with each other. Quantised weights are refused (the
 * published package has none). The weights (28 MB) are mapped, the shards
 * one after another in one reserved range, so a tensor that straddles two
 * shard files is still one run of floats, and a process reads only the
 * pages it touches: a query with the int8 file reads its pieces' rows of
 * the 16 MB embedding table and the products kept in f32, not all 28 MB
 * (reading them was 90 ms of a hook's system time). Shards that do not
 * end on a page boundary (every one but the last must) are read instead.
 * The files are never written while mapped by cairn: `cairn model pull`
 * unpacks into a staging folder and renames it (a file truncated under a
 * running process by something else would fault, as a mapped library does).
 */
#include "embed/use.h"

#include "embed/kernels.h"
#include "embed/packcache.h"
#include "util/buf.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/os.h"
#include "util/utf8.h"
#include "embed/common.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <utf8proc.h>

#define USE_MAX_JSON       ((size_t)16 << 20)   /* model.json / vocab.json */
#define USE_MAX_WEIGHTS    ((size_t)1 << 30)
#define USE_MAX_SHARDS     256
#define USE_RESERVED       6                    /* ids 0..5: not pieces */
#define USE_HEADS          4
#define USE_LN_EPS         1e-6f
/* Input beyond this many bytes is not tokenized: only 128 tokens are
 * used, and they come from the first few hundred characters. Bounds the
 * work and memory per text (use.h: tokenizer). */
#define USE_MAX_INPUT      ((size_t)16 << 10)
/* A pass with more token rows than this packs the weights first, as does
 * a second one with fewer (use_pack). */
#define USE_QUERY_ROWS     32
/* A pass whose work space fits in this many bytes takes it from the
 * model's arena (use_arena): one 2 MB page, kept for the next pass. */
#define USE_ARENA_BYTES    ((size_t)2 << 20)
/* A batch's block from this size is in 2 MB pages (os_alloc_big, which
 * aligns it to 2 MB from here) */
#define USE_BIG_BLOCK      ((size_t)4 << 20)
/* A process's first passes read their embedding rows (forward_part) */
#define USE_READ_PASSES    16

struct use_layer {
    int din, d, dout, inner;          /* input, attention, output, FFN */
    const float *ln_g, *ln_b;         /* [din] */
    const float *wqkv, *bqkv;         /* [din][3d], [3d] */
    const float *wo, *bo;             /* [d][dout], [dout] */
    const float *wd, *bd;             /* [din][dout] residual projection, or NULL */
    const float *ln2_g, *ln2_b;       /* [dout] */
    const float *w1, *b1;             /* [dout][inner], [inner] */
    const float *w2, *b2;             /* [inner][dout], [dout] */
    /* the products' weights packed for embed_k_linear_packed (use_pack);
     * NULL before, or when packing does not pay */
    struct embed_k_packed *pd, *pq, *pk, *pv, *po, *p1, *p2;
};

/* A mapped shard: its bytes are data[off, off + len), its file stays open
 * for use_read. */
struct use_shard {
    size_t off, len;
    int    fd;
};

/* The model's arena: one 2 MB page from a 2 MB boundary, advised as a
 * huge page (use_arena_new, at the load): a short pass's work space, then
 * the copies of the norms and biases (use_copy_small). On the
 * paravirtualised host a fresh 4 KB page costs a fault of ~15 us; a
 * query's ~90 of them (its activations and the products' work, each
 * malloc'd) were ~1.3 ms of its first pass, the huge page's fault and
 * clearing ~0.1 ms. Later passes find it touched. Without transparent
 * huge pages it is 4 KB pages touched as needed. */
struct use_arena {
    char  *p;
    size_t work;                      /* its first bytes: a pass's work space */
    int    busy;                      /* a pass is using it (atomic) */
};

struct use_model {
    float  *data;                     /* all groups' weights */
    size_t  nbytes;
    size_t  maplen;                   /* > 0: data is our mapping of that length */
    struct use_shard *shard;          /* with the mapping: its shards, in order */
    int     nshard;
    struct use_arena *arena;          /* a short pass's work space, or NULL */
    int     passes;                   /* use_forward's calls so far */
    /* vocabulary */
    /* vocabulary: views of one image (struct vocab_bin), the mapped
     * vocab2.bin or vocab_buf built from vocab.json (load_vocab) */
    int             nvocab;
    const char     *pieces;           /* every piece, UTF-8, NUL-terminated */
    const uint32_t *poff;             /* piece id's offset in pieces */
    const int32_t  *plen;             /* bytes */
    const int32_t  *u16len;           /* UTF-16 code units (JS .length) */
    const double   *score;
    const int32_t  *slot;             /* hash: id + 1, 0 = empty */
    size_t          nslot;            /* power of two */
    int             max_cp;           /* longest piece, in code points */
    void           *vocab_buf;        /* the image when built here */
    struct embed_pc *vocab_file;      /* the image when mapped */
    /* weights */
    int          vocab_rows, demb;    /* Embeddings_en [rows][demb] */
    const float *emb;
    const float *inv_ts;              /* [demb / 2] */
    int          nts;
    struct use_layer layer[2];
    const float *wt, *bt;             /* [512][512], [512] */
    struct embed_k_packed *pt;        /* wt packed, or NULL */
    int threads;
    int pack_tried;                   /* use_pack has run */
    int int8;                         /* the products in int8 (use_int8) */
    int queries;                      /* passes of <= USE_QUERY_ROWS before */
    char dir[PATH_MAX];               /* the model folder, "" if too long */
    uint64_t src_key;                 /* hash of the weight shards' and model.json's
                                       * sizes and change times: the int8 file's key */
    struct embed_pc *q8file;          /* the mapped int8 file the int8 forms view, or NULL */
    struct embed_pc *f32file;         /* the mapped f32 panels of int8's f32 products, or NULL */
    uint64_t id_hash;                 /* the model identity's hash (embed_id_files), made
                                       * from model.json and vocab.json as loaded */
};

/* The products int8 quantises (use_pack), in the int8 file's order:
 * Q, K, Wo, W1, W2 of each layer. */
#define USE_NQ8 10

static int file_exists(const char *dir, const char *name)
{
    char path[PATH_MAX];
    struct stat st;

    if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >= sizeof(path))
        return 0;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int use_is_model_dir(const char *dir)
{
    return dir && file_exists(dir, "model.json") && file_exists(dir, "vocab.json");
}

static int use_q8_file_wanted(const struct use_model *m);

/* ---- vocabulary --------------------------------------------------------- */

/* The id of the piece s[0..n), or -1. */
static int vocab_find(const struct use_model *m, const char *s, size_t n)
{
    size_t i = (size_t)fnv1a64(s, n, FNV1A64_BASIS) & (m->nslot - 1);

    while (m->slot[i]) {
        int id = m->slot[i] - 1;
        if ((size_t)m->plen[id] == n && memcmp(m->pieces + m->poff[id], s, n) == 0)
            return id;
        i = (i + 1) & (m->nslot - 1);
    }
    return -1;
}

/*
 * vocab.json is [[piece, score], ...] (8,000 pairs in use-lite-en), read
 * here rather than by cJSON, whose tree of 24,000 nodes, each its own
 * allocation, was a third of a one-shot query's CPU (mostly page faults on
 * a fresh heap). The grammar is JSON's, restricted to that shape: white
 * space where JSON allows it; a piece is a JSON string (every escape,
 * \uXXXX with surrogate pairs), stored decoded in one block; a score is a
 * number or null. A lone surrogate or a raw control byte refuses the file,
 * as cJSON did; so does \u0000, which cJSON cut the piece at.
 */
struct vscan {
    const char *p, *end;
};

/* JSON's white space (vocab.json and model.json's top level) */
static const char *json_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

static void vs_ws(struct vscan *s)
{
    s->p = json_ws(s->p, s->end);
}

static int vs_eat(struct vscan *s, char c)
{
    vs_ws(s);
    if (s->p < s->end && *s->p == c) {
        s->p++;
        return 1;
    }
    return 0;
}

/* The JSON string at s->p (after white space), decoded to out (room for
 * cap bytes); its length in *n. -1 if malformed or longer than cap. */
static int vs_string(struct vscan *s, char *out, size_t cap, size_t *n)
{
    long len;

    vs_ws(s);
    if ((len = json_string_decode(s->p, s->end, out, cap, &s->p)) < 0)
        return -1;
    *n = (size_t)len;
    return 0;
}

/* A score: a JSON number, or null (the ':' piece has one: 0 in the JS sum). */
static int vs_score(struct vscan *s, double *v)
{
    char num[64], *e;
    size_t n = 0;

    vs_ws(s);
    if (s->end - s->p >= 4 && memcmp(s->p, "null", 4) == 0) {
        s->p += 4;
        *v = 0.0;
        return 0;
    }
    while (s->p < s->end && n < sizeof(num) - 1 &&
           ((*s->p >= '0' && *s->p <= '9') || *s->p == '-' || *s->p == '+' || *s->p == '.' ||
            *s->p == 'e' || *s->p == 'E'))
        num[n++] = *s->p++;
    num[n] = 0;
    if (n == 0 || n == sizeof(num) - 1)
        return -1;
    /* the same double as strtod's, mostly without it (json_decimal) */
    if (json_decimal(num, n, v) == 0)
        return isfinite(*v) ? 0 : -1;
    *v = strtod(num, &e);   /* what JSON's grammar does not take ("+1", "1.") */
    return *e || !isfinite(*v) ? -1 : 0;
}

/*
 * The vocabulary's image, the same bytes in memory and in
 * .cairn-packed/vocab2.bin: parsing vocab.json (8,000 pieces, their scores
 * and the hash of pieces) was ~12 M of a one-shot query's ~27 M
 * instructions (docs/EMBED.md), so it is done once and mapped after.
 * Both ways go through vocab_view, so a query tokenizes with the same
 * arrays either way. Layout (host byte order; the file's header, with its
 * endian mark, refuses another host's):
 *   struct vocab_bin, then double score[nvocab], int32 plen[nvocab],
 *   int32 u16len[nvocab], uint32 poff[nvocab], int32 slot[nslot],
 *   char pieces[npb] (each piece NUL-terminated).
 */
/* "2": keyed by the model identity's chain since fix58 (use_load), where
 * the "1" files (vocab.bin, manifest.bin, left to an older cairn) had
 * hashes of their own; other names, so an older and a newer cairn on the
 * same model folder (an A/B benchmark) do not rewrite each other's file
 * every process. */
#define USE_VOCAB_FILE  "vocab2.bin"
#define USE_VOCAB_MAGIC "cairnvo2"   /* bump with the layout or the tokenizer's tables */
#define USE_MAX_VOCAB   (1 << 20)
/* model.json's weightsManifest member, its text (load_model_json) */
#define USE_MAN_FILE    "manifest2.bin"
#define USE_MAN_MAGIC   "cairnmf2"

struct vocab_bin {
    uint32_t nvocab, nslot, max_cp, npb;
};

static size_t vocab_bytes(size_t nvocab, size_t nslot, size_t npb)
{
    return sizeof(struct vocab_bin) + nvocab * (sizeof(double) + 3 * sizeof(int32_t)) +
           nslot * sizeof(int32_t) + npb;
}

/* Points m's vocabulary at the image img (len bytes, 8-byte aligned)
 * after checking everything a lookup reads through: sizes, every piece
 * inside the block and terminated, lengths and hash slots in range. An
 * image that passes with other values tokenizes oddly, never reads
 * outside itself. 0, or -1. */
static int vocab_view(struct use_model *m, const void *img, size_t len)
{
    struct vocab_bin h;
    const char *p = img;
    size_t nv, ns, i;

    if (len < sizeof h)
        return -1;
    memcpy(&h, img, sizeof h);
    nv = h.nvocab;
    ns = h.nslot;
    if (nv <= USE_RESERVED || nv > USE_MAX_VOCAB || ns < 2 * nv || ns > 4 * (size_t)USE_MAX_VOCAB ||
        (ns & (ns - 1)) || h.max_cp < 1 || h.max_cp > 256 || len != vocab_bytes(nv, ns, h.npb))
        return -1;
    m->score = (const double *)(const void *)(p + sizeof h);
    m->plen = (const int32_t *)(const void *)(m->score + nv);
    m->u16len = m->plen + nv;
    m->poff = (const uint32_t *)(const void *)(m->u16len + nv);
    m->slot = (const int32_t *)(const void *)(m->poff + nv);
    m->pieces = (const char *)(m->slot + ns);
    for (i = 0; i < nv; i++)
        if (m->plen[i] < 1 || m->plen[i] > 256 || m->u16len[i] < 1 ||
            m->u16len[i] > m->plen[i] || m->poff[i] >= h.npb ||
            h.npb - m->poff[i] <= (uint32_t)m->plen[i] ||
            m->pieces[m->poff[i] + (uint32_t)m->plen[i]] != 0)
            return -1;
    for (i = 0; i < ns; i++)
        if (m->slot[i] < 0 || (uint32_t)m->slot[i] > nv)
            return -1;
    m->nvocab = (int)nv;
    m->nslot = ns;
    m->max_cp = (int)h.max_cp;
    return 0;
}

/* Parses vocab.json's text into the image *out (malloc'd, *outlen bytes). */
static int vocab_parse(const char *text, size_t len, void **out, size_t *outlen, char *err,
                       size_t errlen)
{
    struct vscan s = { text, text + len };
    struct vocab_bin h = { 0, 16, 0, 0 };
    char *pieces = malloc(len + 1), *img = NULL;
    uint32_t *poff = NULL;
    int32_t *plen = NULL, *u16 = NULL, *slot;
    double *score = NULL;
    size_t used = 0, cap = 0, nv = 0, i;
    int rc = -1;

    /* decoded pieces are never longer than their JSON text */
    if (!pieces) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    if (!vs_eat(&s, '['))
        goto bad;
    for (i = 0; !(i == 0 && vs_eat(&s, ']')); i++) {
        size_t n = 0, k, cps = 0;
        double sc;

        if (i > 0 && !vs_eat(&s, ','))
            goto bad;
        if (i >= USE_MAX_VOCAB) {
            embed_errf(err, errlen, "vocab.json has more than %d pieces", USE_MAX_VOCAB);
            goto out;
        }
        if (i == cap) {
            size_t nc = cap ? cap * 2 : 1024;
            uint32_t *p1 = realloc(poff, nc * sizeof(*poff));
            int32_t *p2 = p1 ? realloc(plen, nc * sizeof(*plen)) : NULL;
            int32_t *p3 = p2 ? realloc(u16, nc * sizeof(*u16)) : NULL;
            double *p4 = p3 ? realloc(score, nc * sizeof(*score)) : NULL;

            if (p1)
                poff = p1;
            if (p2)
                plen = p2;
            if (p3)
                u16 = p3;
            if (!p4) {
                embed_errf(err, errlen, "out of memory");
                goto out;
            }
            score = p4;
            cap = nc;
        }
        if (!vs_eat(&s, '[') || vs_string(&s, pieces + used, len - used, &n) != 0 ||
            !vs_eat(&s, ',') || vs_score(&s, &sc) != 0 || !vs_eat(&s, ']')) {
            embed_errf(err, errlen, "vocab.json: entry %zu is not [piece, score]", i);
            goto out;
        }
        if (n == 0 || n > 256 || !utf8_valid(pieces + used, n)) {
            embed_errf(err, errlen, "vocab.json: entry %zu is empty, too long or not UTF-8", i);
            goto out;
        }
        poff[i] = (uint32_t)used;
        pieces[used + n] = 0;   /* room: the closing quote's byte at least */
        plen[i] = (int32_t)n;
        score[i] = sc;
        u16[i] = 0;
        for (k = 0; k < n;) {
            uint32_t cp;
            k += utf8_decode(pieces + used + k, n - k, &cp);
            u16[i] += cp >= 0x10000 ? 2 : 1;
            cps++;
        }
        used += n + 1;
        if (i >= USE_RESERVED && cps > h.max_cp)
            h.max_cp = (uint32_t)cps;
        nv = i + 1;
        if (vs_eat(&s, ']'))
            break;
    }
    vs_ws(&s);
    if (s.p != s.end || nv <= USE_RESERVED)
        goto bad;   /* something after the array, or no pieces */
    h.nvocab = (uint32_t)nv;
    h.npb = (uint32_t)used;
    while (h.nslot < 2 * nv)
        h.nslot *= 2;
    *outlen = vocab_bytes(nv, h.nslot, used);
    if (!(img = calloc(1, *outlen))) {
        embed_errf(err, errlen, "out of memory");
        goto out;
    }
    memcpy(img, &h, sizeof h);
    {
        char *q = img + sizeof h;
        memcpy(q, score, nv * sizeof(*score)); q += nv * sizeof(*score);
        memcpy(q, plen, nv * sizeof(*plen));   q += nv * sizeof(*plen);
        memcpy(q, u16, nv * sizeof(*u16));     q += nv * sizeof(*u16);
        memcpy(q, poff, nv * sizeof(*poff));   q += nv * sizeof(*poff);
        slot = (int32_t *)(void *)q;           q += h.nslot * sizeof(*slot);
        memcpy(q, pieces, used);
    }
    for (i = USE_RESERVED; i < nv; i++) {
        /* A repeated piece: the JS trie keeps the later entry. */
        size_t n = (size_t)plen[i];
        const char *pc = pieces + poff[i];
        size_t hs = (size_t)fnv1a64(pc, n, FNV1A64_BASIS) & (h.nslot - 1);

        while (slot[hs]) {
            int id = slot[hs] - 1;
            if (plen[id] == (int32_t)n && memcmp(pieces + poff[id], pc, n) == 0)
                break;
            hs = (hs + 1) & (h.nslot - 1);
        }
        slot[hs] = (int32_t)i + 1;
    }
    *out = img;
    img = NULL;
    rc = 0;
    goto out;
bad:
    embed_errf(err, errlen, "vocab.json is not an array of [piece, score] pairs");
out:
    free(img);
    free(pieces);
    free(poff);
    free(plen);
    free(u16);
    free(score);
    return rc;
}

/* The vocabulary from vocab2.bin when it is there and made from vocab.json
 * as it is now (file: CAIRN_PACK_CACHE not 0), else from vocab.json's
 * text (len bytes), then written to vocab2.bin for later processes (best
 * effort: a folder we cannot write changes nothing). Keyed by a hash of
 * vocab.json's bytes (key: the model identity's chain once vocab.json is
 * in, use_load, so model.json's bytes too), not its size and change time
 * as the weights' files are: hashing its 218 KB costs ~0.2 M
 * instructions, and a file rewritten within the clock's tick at the same
 * size cannot pass for the old one. */
/*
 * dir/name (model.json, vocab.json) mapped read-only (*maplen > 0; munmap
 * it), else read as embed_read_file does. A one-shot query reads both
 * whole once (their hashes key the manifest and vocabulary files: 247 and
 * 260 KB), and reading them into fresh heap pages cost ~130 page faults
 * each (~2 ms apiece on the paravirtualised host) where a mapping takes a
 * few, the kernel mapping 16 pages a fault. The text is used by its
 * length, never as a C string. NULL and why.
 */
static char *use_map_text(const char *dir, const char *name, size_t *len, size_t *maplen,
                          char *err, size_t errlen)
{
    char path[PATH_MAX];
    struct stat st;
    void *p = MAP_FAILED;
    int fd;

    *maplen = 0;
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) < sizeof path &&
        (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
            (uint64_t)st.st_size <= USE_MAX_JSON)
            p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (p != MAP_FAILED) {
            *len = *maplen = (size_t)st.st_size;
            return p;
        }
    }
    return embed_read_file(dir, name, USE_MAX_JSON, len, NULL, err, errlen);
}

static void use_unmap_text(char *text, size_t maplen)
{
    if (maplen)
        munmap(text, maplen);
    else
        free(text);
}

static int load_vocab(struct use_model *m, const char *dir, const char *text, size_t len,
                      uint64_t key, int file, char *err, size_t errlen)
{
    char ferr[256];
    const void *body;
    size_t blen;
    int rc = -1;

    if (file) {
        m->vocab_file = embed_pc_blob_open(dir, USE_VOCAB_FILE, USE_VOCAB_MAGIC, key, &body,
                                           &blen, ferr, sizeof ferr);
        if (m->vocab_file && vocab_view(m, body, blen) == 0) {
            rc = 0;
            goto out;
        }
        embed_pc_close(m->vocab_file);   /* refused: built again below */
        m->vocab_file = NULL;
    }
    if (vocab_parse(text, len, &m->vocab_buf, &blen, err, errlen) != 0)
        goto out;
    if (vocab_view(m, m->vocab_buf, blen) != 0) {
        embed_errf(err, errlen, "vocab.json: the vocabulary does not fit its limits");
        goto out;
    }
    if (file)
        (void)embed_pc_blob_write(dir, USE_VOCAB_FILE, USE_VOCAB_MAGIC, key, m->vocab_buf,
                                  blen, ferr, sizeof ferr);
    rc = 0;
out:
    return rc;
}

/* ---- weights ------------------------------------------------------------ */

struct use_w {
    const char *name;
    int         ndim;
    int64_t     shape[4];
    const void *data;
    int         is_f32;
};

struct use_manifest {
    struct use_w *w;
    size_t n;
};

static int plain_name(const char *s)
{
    return s[0] && s[0] != '.' && !strchr(s, '/') && !strchr(s, '\\');
}

/* Adds a file's size and change time to the int8 file's key (use_pack):
 * rewriting a shard or model.json makes the file stale. */
static void use_key_add(struct use_model *m, const struct stat *st)
{
    int64_t v[3] = { (int64_t)st->st_size, (int64_t)st->st_mtim.tv_sec,
                     (int64_t)st->st_mtim.tv_nsec };

    m->src_key = hash64(v, sizeof v, m->src_key);
}

static void use_close_shards(struct use_model *m)
{
    int i;

    for (i = 0; i < m->nshard; i++)
        close(m->shard[i].fd);
    free(m->shard);
    m->shard = NULL;
    m->nshard = 0;
}

/* The shard holding byte off of the mapped weights, or NULL. */
static const struct use_shard *use_shard_at(const struct use_model *m, size_t off)
{
    int lo = 0, hi = m->nshard;

    while (lo < hi) {
        int mid = (lo + hi) / 2;

        if (off >= m->shard[mid].off + m->shard[mid].len)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nshard && off >= m->shard[lo].off ? &m->shard[lo] : NULL;
}

/*
 * n bytes of the weights from at (a pointer into m->data) copied to dst,
 * by pread from the shards' files rather than through the mapping: on the
 * paravirtualised host the first touch of a mapped file's page costs a
 * fault of ~20 us, a pread of a few hundred bytes ~3 us, and a one-shot
 * query reads small pieces of many pages (the int8 file's edge checks,
 * its tokens' embedding rows, the norms and biases: docs/EMBED.md, "USE-lite:
 * one short question"). The bytes are the same either way (the mapping
 * is private and never written): a failed read takes them from memory.
 */
static void use_read(const struct use_model *m, const void *at, size_t n, void *dst)
{
    size_t off = (size_t)((const char *)at - (const char *)m->data), done = 0;

    while (done < n && m->nshard) {
        const struct use_shard *sh = use_shard_at(m, off + done);
        size_t part = n - done;

        if (!sh)
            break;
        if (part > sh->off + sh->len - (off + done))
            part = sh->off + sh->len - (off + done);
        if (os_pread_all(sh->fd, (char *)dst + done, part, off + done - sh->off) != 0)
            break;
        done += part;
    }
    if (done < n)
        memcpy((char *)dst + done, (const char *)at + done, n - done);
}

/*
 * count floats spaced ldw apart from w, into dst: use_read's way for a
 * column, one preadv whose gaps go to a scratch buffer over and over
 * (the kernel copies ~ldw * count floats, a few microseconds) instead of
 * count reads or count faults. A column not in one shard, or with too
 * many gaps for the vector, is read a float at a time.
 */
#define USE_COL_IOV 256
static void use_read_col(const struct use_model *m, const float *w, size_t ldw, int count,
                         float *dst)
{
    struct iovec iov[USE_COL_IOV];
    char gap[1024];
    size_t off = (size_t)((const char *)w - (const char *)m->data);
    size_t span = ((size_t)(count - 1) * ldw + 1) * sizeof(float), want = 0;
    const struct use_shard *sh = m->nshard ? use_shard_at(m, off) : NULL;
    int c, niov = 0;

    if (count < 1)
        return;
    if (sh && off + span <= sh->off + sh->len) {
        for (c = 0; c < count && niov < USE_COL_IOV; c++) {
            size_t skip = c + 1 < count ? (ldw - 1) * sizeof(float) : 0;

            iov[niov++] = (struct iovec){ dst + c, sizeof(float) };
            while (skip && niov < USE_COL_IOV) {
                size_t g = skip < sizeof gap ? skip : sizeof gap;

                iov[niov++] = (struct iovec){ gap, g };
                skip -= g;
            }
            if (skip)
                break;
        }
        want = span;
        if (c == count && preadv(sh->fd, iov, niov, (off_t)(off - sh->off)) == (ssize_t)want)
            return;
    }
    for (c = 0; c < count; c++)
        use_read(m, w + (size_t)c * ldw, sizeof(float), dst + c);
}

/* Maps the shards (groups' paths, in order, of sizes sz, total bytes in all, as the
 * first pass of load_manifest measured them) into one range, each shard
 * at the offset it would be read to. 1 if mapped (m->data, m->maplen);
 * 0 and nothing mapped if a shard does not end on a page boundary, changed
 * size since it was measured, or the system refuses: the caller reads. */
static int map_shards(struct use_model *m, const char *dir, const cJSON *groups,
                      const size_t *sz, size_t nsz, size_t total)
{
    long pg = sysconf(_SC_PAGESIZE);
    size_t len, off = 0, k = 0;
    char *base;
    const cJSON *g, *p;

    if (pg <= 0 || total == 0)
        return 0;
    len = (total + (size_t)pg - 1) / (size_t)pg * (size_t)pg;
    /* Reserved first, so the shards land side by side and the tail past
     * the last one faults rather than reading a neighbour's memory. */
    base = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 0;
    if (!(m->shard = calloc(nsz ? nsz : 1, sizeof(*m->shard))))
        goto fail;
    cJSON_ArrayForEach(g, groups) {
        const cJSON *paths = cJSON_GetObjectItemCaseSensitive(g, "paths");
        cJSON_ArrayForEach(p, paths) {
            char path[PATH_MAX];
            struct stat st;
            int fd, ok;

            snprintf(path, sizeof(path), "%s/%s", dir, p->valuestring);
            fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
            if (fd < 0)
                goto fail;
            ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && off % (size_t)pg == 0 &&
                 k < nsz && (size_t)st.st_size == sz[k++] && (uint64_t)st.st_size <= total - off &&
                 (st.st_size == 0 ||
                  mmap(base + off, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_FIXED,
                       fd, 0) != MAP_FAILED);
            if (!ok) {
                close(fd);
                goto fail;
            }
            /* kept open: use_read reads through it */
            m->shard[m->nshard++] = (struct use_shard){ off, (size_t)st.st_size, fd };
            off += (size_t)st.st_size;
        }
    }
    if (off != total)
        goto fail;
    m->data = (float *)(void *)base;
    m->maplen = len;
    return 1;
fail:
    use_close_shards(m);
    munmap(base, len);
    return 0;
}

/* Maps (or reads) every group's shards into m->data and lists the weights
 * (names point into the parsed JSON, which the caller keeps until done). */
static int load_manifest(struct use_model *m, const char *dir, cJSON *model,
                         struct use_manifest *man, char *err, size_t errlen)
{
    const cJSON *groups = cJSON_GetObjectItemCaseSensitive(model, "weightsManifest");
    const cJSON *g;
    size_t total = 0, off = 0, cap = 0, nsz = 0, k = 0, *sz = NULL;

    if (!cJSON_IsArray(groups)) {
        embed_errf(err, errlen, "model.json: no weightsManifest");
        goto fail;
    }
    /* First pass: sizes of the shards, so one buffer holds them all. */
    cJSON_ArrayForEach(g, groups) {
        const cJSON *paths = cJSON_GetObjectItemCaseSensitive(g, "paths"), *p;
        if (!cJSON_IsArray(paths) || cJSON_GetArraySize(paths) > USE_MAX_SHARDS) {
            embed_errf(err, errlen, "model.json: a weight group has no paths");
            goto fail;
        }
        cJSON_ArrayForEach(p, paths) {
            char path[PATH_MAX];
            struct stat st;
            if (!cJSON_IsString(p) || !plain_name(p->valuestring)) {
                embed_errf(err, errlen, "model.json: bad shard name");
                goto fail;
            }
            if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, p->valuestring) >=
                    sizeof(path) ||
                stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
                embed_errf(err, errlen, "weight shard %.64s missing", p->valuestring);
                goto fail;
            }
            if (nsz % 64 == 0) {
                size_t *grown = realloc(sz, (nsz + 64) * sizeof(*sz));
                if (!grown) {
                    embed_errf(err, errlen, "out of memory");
                    goto fail;
                }
                sz = grown;
            }
            sz[nsz++] = (size_t)st.st_size;
            total += (size_t)st.st_size;
            use_key_add(m, &st);
            if (total > USE_MAX_WEIGHTS) {
                embed_errf(err, errlen, "weights larger than %zu bytes", USE_MAX_WEIGHTS);
                goto fail;
            }
        }
    }
    m->nbytes = total;
    if (!map_shards(m, dir, groups, sz, nsz, total) && !(m->data = malloc(total ? total : 1))) {
        embed_errf(err, errlen, "out of memory");
        goto fail;
    }
    cJSON_ArrayForEach(g, groups) {
        const cJSON *paths = cJSON_GetObjectItemCaseSensitive(g, "paths"), *p;
        const cJSON *ws = cJSON_GetObjectItemCaseSensitive(g, "weights"), *w;
        size_t gstart = off, gend;

        cJSON_ArrayForEach(p, paths) {
            if (m->maplen) {            /* mapped: the sizes measured above */
                off += sz[k++];
                continue;
            }
            char path[PATH_MAX];
            FILE *f;
            size_t n;
            snprintf(path, sizeof(path), "%s/%s", dir, p->valuestring);
            f = fopen(path, "rb");
            if (!f) {
                embed_errf(err, errlen, "%s: %s", path, strerror(errno));
                goto fail;
            }
            /* no more than measured: a shard grown since reads short,
             * which the check of the group's end refuses below */
            n = fread((char *)m->data + off, 1, sz[k++], f);
            fclose(f);
            off += n;
        }
        gend = off;
        if (!cJSON_IsArray(ws)) {
            embed_errf(err, errlen, "model.json: a weight group has no weights");
            goto fail;
        }
        off = gstart;
        cJSON_ArrayForEach(w, ws) {
            const cJSON *nm = cJSON_GetObjectItemCaseSensitive(w, "name");
            const cJSON *shape = cJSON_GetObjectItemCaseSensitive(w, "shape"), *d;
            const cJSON *dt = cJSON_GetObjectItemCaseSensitive(w, "dtype");
            struct use_w *e;
            uint64_t nel = 1;
            int nd = 0;

            if (!cJSON_IsString(nm) || !cJSON_IsArray(shape) || !cJSON_IsString(dt) ||
                cJSON_GetArraySize(shape) > 4) {
                embed_errf(err, errlen, "model.json: a weight entry is malformed");
                goto fail;
            }
            if (cJSON_GetObjectItemCaseSensitive(w, "quantization")) {
                embed_errf(err, errlen, "model.json: quantised weights are not supported");
                goto fail;
            }
            if (strcmp(dt->valuestring, "float32") != 0 &&
                strcmp(dt->valuestring, "int32") != 0) {
                embed_errf(err, errlen, "model.json: weight dtype %.16s not supported",
                      dt->valuestring);
                goto fail;
            }
            if (man->n == cap) {
                size_t nc = cap ? cap * 2 : 64;
                struct use_w *grown = realloc(man->w, nc * sizeof(*grown));
                if (!grown) {
                    embed_errf(err, errlen, "out of memory");
                    goto fail;
                }
                man->w = grown;
                cap = nc;
            }
            e = &man->w[man->n];
            memset(e, 0, sizeof(*e));
            cJSON_ArrayForEach(d, shape) {
                if (!cJSON_IsNumber(d) || d->valuedouble < 0 || d->valuedouble > (1 << 24) ||
                    d->valuedouble != (int64_t)d->valuedouble) {
                    embed_errf(err, errlen, "model.json: bad shape of %.80s", nm->valuestring);
                    goto fail;
                }
                e->shape[nd++] = (int64_t)d->valuedouble;
                nel *= (uint64_t)d->valuedouble;
                if (nel > USE_MAX_WEIGHTS) {
                    embed_errf(err, errlen, "model.json: %.80s too large", nm->valuestring);
                    goto fail;
                }
            }
            if (off + nel * 4 > gend) {
                embed_errf(err, errlen, "weight shards are shorter than model.json says "
                      "(truncated download?)");
                goto fail;
            }
            e->name = nm->valuestring;
            e->ndim = nd;
            e->data = (const char *)m->data + off;
            e->is_f32 = dt->valuestring[0] == 'f';
            off += nel * 4;
            man->n++;
        }
        if (off != gend) {
            embed_errf(err, errlen, "weight shards hold %zu bytes more than model.json lists",
                  gend - off);
            goto fail;
        }
        off = gend;
    }
    free(sz);
    return 0;
fail:
    free(sz);
    return -1;
}

/* The float32 weight called name, of the given shape (d < 0: any). */
static const float *get_w(const struct use_manifest *man, const char *name,
                          int ndim, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
                          int64_t *out_shape, char *err, size_t errlen)
{
    int64_t want[4] = { d0, d1, d2, d3 };
    size_t i;
    int k;

    for (i = 0; i < man->n; i++) {
        const struct use_w *w = &man->w[i];
        if (strcmp(w->name, name) != 0)
            continue;
        if (!w->is_f32 || w->ndim != ndim)
            goto bad;
        for (k = 0; k < ndim; k++)
            if (want[k] >= 0 && w->shape[k] != want[k])
                goto bad;
        if (out_shape)
            memcpy(out_shape, w->shape, sizeof(w->shape));
        return w->data;
    }
    embed_errf(err, errlen, "model.json: weight %.200s missing", name);
    return NULL;
bad:
    embed_errf(err, errlen, "model.json: weight %.200s has the wrong dtype or shape", name);
    return NULL;
}

#define P_APPLY "module_apply_default/Encoder_en/KonaTransformer/Encode/"
#define P_MOD   "module/Encoder_en/KonaTransformer/Encode/"

static int load_layer(struct use_model *m, const struct use_manifest *man, int li,
                      int din, char *err, size_t errlen)
{
    struct use_layer *L = &m->layer[li];
    char nm[320];
    int64_t sh[4];

#define NAME(...) snprintf(nm, sizeof(nm), __VA_ARGS__)
#define GET(dst, nd, a, b, c, d) do { \
        if (!((dst) = get_w(man, nm, nd, a, b, c, d, sh, err, errlen))) return -1; \
    } while (0)
    L->din = din;
    NAME(P_APPLY "Layer_%d/TransformerLayer/layer_prepostprocess/layer_norm/layer_norm_scale/"
         "ConcatPartitions/concat", li);
    GET(L->ln_g, 1, din, 0, 0, 0);
    NAME(P_APPLY "Layer_%d/TransformerLayer/layer_prepostprocess/layer_norm/layer_norm_bias/"
         "ConcatPartitions/concat", li);
    GET(L->ln_b, 1, din, 0, 0, 0);
    NAME(P_MOD "Layer_%d/TransformerLayer/MultiheadAttention/qkv_transform_single/kernel/"
         "part_0", li);
    GET(L->wqkv, 4, 1, 1, din, -1);
    if (sh[3] % 3 != 0 || (sh[3] / 3) % USE_HEADS != 0 || sh[3] < 3 * USE_HEADS) {
        embed_errf(err, errlen, "layer %d: qkv width %lld does not split into %d heads",
              li, (long long)sh[3], USE_HEADS);
        return -1;
    }
    L->d = (int)(sh[3] / 3);
    NAME(P_APPLY "Layer_%d/TransformerLayer/MultiheadAttention/qkv_transform_single/bias/"
         "ConcatPartitions/concat", li);
    GET(L->bqkv, 1, 3 * L->d, 0, 0, 0);
    NAME(P_MOD "Layer_%d/TransformerLayer/MultiheadAttention/output_transform_single/kernel/"
         "part_0", li);
    GET(L->wo, 4, 1, 1, L->d, -1);
    L->dout = (int)sh[3];
    if (L->dout < 1) {
        embed_errf(err, errlen, "layer %d: empty output", li);
        return -1;
    }
    NAME(P_APPLY "Layer_%d/TransformerLayer/MultiheadAttention/output_transform_single/bias/"
         "ConcatPartitions/concat", li);
    GET(L->bo, 1, L->dout, 0, 0, 0);
    if (din != L->dout) {
        /* The residual changes width: AdjustResidualInput's dense layer. */
        NAME(P_APPLY "Layer_%d/TransformerLayer/dense/kernel/ConcatPartitions/concat", li);
        GET(L->wd, 2, din, L->dout, 0, 0);
        NAME(P_APPLY "Layer_%d/TransformerLayer/dense/bias/ConcatPartitions/concat", li);
        GET(L->bd, 1, L->dout, 0, 0, 0);
    }
    NAME(P_APPLY "Layer_%d/TransformerLayer/FFN/layer_prepostprocess/layer_norm/layer_norm_scale/"
         "ConcatPartitions/concat", li);
    GET(L->ln2_g, 1, L->dout, 0, 0, 0);
    NAME(P_APPLY "Layer_%d/TransformerLayer/FFN/layer_prepostprocess/layer_norm/layer_norm_bias/"
         "ConcatPartitions/concat", li);
    GET(L->ln2_b, 1, L->dout, 0, 0, 0);
    NAME(P_APPLY "TransformerStack/Layer_%d/TransformerLayer/FFN/conv1/Tensordot/Reshape_1", li);
    GET(L->w1, 2, L->dout, -1, 0, 0);
    L->inner = (int)sh[1];
    if (L->inner < 1) {
        embed_errf(err, errlen, "layer %d: empty FFN", li);
        return -1;
    }
    NAME(P_APPLY "Layer_%d/TransformerLayer/FFN/conv1/bias/ConcatPartitions/concat", li);
    GET(L->b1, 1, L->inner, 0, 0, 0);
    NAME(P_APPLY "TransformerStack/Layer_%d/TransformerLayer/FFN/conv2/Tensordot/Reshape_1", li);
    GET(L->w2, 2, L->inner, L->dout, 0, 0);
    NAME(P_APPLY "Layer_%d/TransformerLayer/FFN/conv2/bias/ConcatPartitions/concat", li);
    GET(L->b2, 1, L->dout, 0, 0, 0);
#undef GET
#undef NAME
    return 0;
}

/* model.json with only its weightsManifest built: the file is mostly the
 * graph's topology (247 KB in use-lite-en), which cJSON built as a tree of
 * thousands of nodes for nothing (~10% of a one-shot query's CPU). The
 * other members are stepped over by json_scan (json_parse's grammar, no
 * allocation). The first of repeated keys counts, as in cJSON's lookup.
 * *span, *spanlen: that member's value's text (NULL if none). NULL if the
 * text is not a JSON object. */
static cJSON *model_manifest(const char *text, size_t len, const char **span,
                             size_t *spanlen)
{
    const char *p = text, *end = text + len, *next;
    cJSON *out = cJSON_CreateObject(), *key = NULL, *v;

    *span = NULL;
    *spanlen = 0;
    if (len >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3;
    p = json_ws(p, end);
    if (!out || p >= end || *p++ != '{')
        goto bad;
    p = json_ws(p, end);
    if (p < end && *p == '}')
        return out;
    for (;;) {
        if (json_scan(p, (size_t)(end - p), &next) != cJSON_String ||
            !(key = json_parse(p, (size_t)(end - p), &next)))
            goto bad;
        p = json_ws(next, end);
        if (p >= end || *p++ != ':')
            goto bad;
        if (strcmp(key->valuestring, "weightsManifest") == 0 &&
            !cJSON_GetObjectItemCaseSensitive(out, "weightsManifest")) {
            if (!(v = json_parse(p, (size_t)(end - p), &next)))
                goto bad;
            cJSON_AddItemToObject(out, "weightsManifest", v);
            *span = p;
            *spanlen = (size_t)(next - p);
        } else if (!json_scan(p, (size_t)(end - p), &next)) {
            goto bad;
        }
        cJSON_Delete(key);
        key = NULL;
        p = json_ws(next, end);
        if (p < end && *p == ',') {
            p = json_ws(p + 1, end);
            continue;
        }
        if (p < end && *p == '}')
            return out;
        goto bad;
    }
bad:
    cJSON_Delete(key);
    cJSON_Delete(out);
    *span = NULL;
    *spanlen = 0;
    return NULL;
}

/* model.json's weightsManifest, from manifest2.bin when it is there and
 * made from model.json as it is now (file: CAIRN_PACK_CACHE not 0), else
 * from model.json, then written to manifest2.bin for later processes (best
 * effort). Stepping over the graph was 2.6 M instructions a process
 * (json_scan); hashing model.json is ~0.25 M, and keys the file by
 * model.json's bytes for vocab2.bin's reason (key: the model identity's
 * chain once model.json is in, use_load). The file's body is the
 * member's offset in model.json (uint64) and its text: the text must be
 * model.json's bytes there, so a file sealed with a good hash but other
 * text is refused like a damaged one and rebuilt, and the text is parsed
 * by the same json_parse, so load_manifest checks the same tree either way. */
static cJSON *load_model_json(const char *dir, const char *text, size_t len, uint64_t key,
                              int file)
{
    char ferr[256];
    uint64_t off;
    const char *span, *next, *body;
    const void *img;
    size_t blen, slen;
    cJSON *out, *v;
    char *buf;

    if (file) {
        struct embed_pc *pc = embed_pc_blob_open(dir, USE_MAN_FILE, USE_MAN_MAGIC, key, &img,
                                                 &blen, ferr, sizeof ferr);
        if (pc) {
            body = img;
            v = NULL;
            if (blen > sizeof off) {
                memcpy(&off, body, sizeof off);
                body += sizeof off;
                blen -= sizeof off;
                if (off <= len && blen <= len - off && memcmp(text + off, body, blen) == 0)
                    v = json_parse(body, blen, &next);
            }
            if (cJSON_IsArray(v) && next == body + blen && (out = cJSON_CreateObject())) {
                cJSON_AddItemToObject(out, "weightsManifest", v);
                embed_pc_close(pc);
                return out;
            }
            cJSON_Delete(v);   /* refused: built again below */
            embed_pc_close(pc);
        }
    }
    out = model_manifest(text, len, &span, &slen);
    if (file && span &&
        cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(out, "weightsManifest")) &&
        (buf = malloc(sizeof off + slen))) {
        off = (uint64_t)(span - text);
        memcpy(buf, &off, sizeof off);
        memcpy(buf + sizeof off, span, slen);
        (void)embed_pc_blob_write(dir, USE_MAN_FILE, USE_MAN_MAGIC, key, buf, sizeof off + slen,
                                  ferr, sizeof ferr);
        free(buf);
    }
    return out;
}

static struct use_arena *use_arena_new(void);
static void use_copy_small(struct use_model *m);

struct use_model *use_load(const char *dir, char *err, size_t errlen)
{
    struct use_model *m = calloc(1, sizeof(*m));
    struct use_manifest man = { NULL, 0 };
    char *text = NULL, *vtext = NULL, local[256];
    cJSON *model = NULL;
    size_t len = 0, textmap = 0, vlen = 0, vtextmap = 0;
    int64_t sh[4];
    int ok = 0;

    if (!err || errlen == 0) {
        err = local;
        errlen = sizeof(local);
    }
    err[0] = 0;
    if (!m) {
        embed_errf(err, errlen, "out of memory");
        return NULL;
    }
    m->threads = 1;
    if (!dir)
        goto out;
    if ((size_t)snprintf(m->dir, sizeof m->dir, "%s", dir) >= sizeof m->dir)
        m->dir[0] = 0;   /* no int8 file then */
    /* Both JSON files whole, hashed once: the model's identity (the id
     * stored with its vectors, store/vectors.c) is a hash of their bytes,
     * and its chain's values key vocab2.bin and manifest2.bin; hashed apart
     * for each, as before, the two 465 KB cost ~0.47 M instructions more
     * a process. */
    vtext = use_map_text(dir, "vocab.json", &vlen, &vtextmap, err, errlen);
    if (!vtext)
        goto out;
    text = use_map_text(dir, "model.json", &len, &textmap, err, errlen);
    if (!text)
        goto out;
    struct embed_id_text have[2] = { { "model.json", text, len, 0 },
                                     { "vocab.json", vtext, vlen, 0 } };
    m->id_hash = embed_id_files(dir, have, 2);
    if (load_vocab(m, dir, vtext, vlen, have[1].after, use_q8_file_wanted(m), err,
                   errlen) != 0)
        goto out;
    {
        char path[PATH_MAX];
        struct stat st;

        if ((size_t)snprintf(path, sizeof path, "%s/model.json", dir) >= sizeof path ||
            stat(path, &st) != 0)
            m->dir[0] = 0;
        else
            use_key_add(m, &st);
    }
    model = load_model_json(dir, text, len, have[0].after, use_q8_file_wanted(m));
    if (!cJSON_IsObject(model)) {
        embed_errf(err, errlen, "model.json is not a JSON object");
        goto out;
    }
    if (load_manifest(m, dir, model, &man, err, errlen) != 0)
        goto out;
    m->emb = get_w(&man, "module/Embeddings_en", 2, -1, -1, 0, 0, sh, err, errlen);
    if (!m->emb)
        goto out;
    m->vocab_rows = (int)sh[0];
    m->demb = (int)sh[1];
    if (m->vocab_rows < m->nvocab || m->demb < 2 || m->demb % 2) {
        embed_errf(err, errlen, "embedding table [%d][%d] does not fit the %d-piece vocabulary",
              m->vocab_rows, m->demb, m->nvocab);
        goto out;
    }
    m->nts = m->demb / 2;
    m->inv_ts = get_w(&man, P_APPLY "TransformerStack/Layer_0/AddTimingSignal/TimingSignal/"
                      "ExpandDims_1",
                      2, 1, m->nts, 0, 0, NULL, err, errlen);
    if (!m->inv_ts || load_layer(m, &man, 0, m->demb, err, errlen) != 0 ||
        load_layer(m, &man, 1, m->layer[0].dout, err, errlen) != 0)
        goto out;
    if (m->layer[1].dout != USE_DIM) {
        embed_errf(err, errlen, "output width %d, expected %d", m->layer[1].dout, USE_DIM);
        goto out;
    }
    m->wt = get_w(&man, "module/Encoder_en/hidden_layers/tanh_layer_0/weights", 2,
                  USE_DIM, USE_DIM, 0, 0, NULL, err, errlen);
    m->bt = m->wt ? get_w(&man, "module/Encoder_en/hidden_layers/tanh_layer_0/bias", 1,
                          USE_DIM, 0, 0, 0, NULL, err, errlen) : NULL;
    if (!m->bt)
        goto out;
    if ((m->arena = use_arena_new()))
        use_copy_small(m);
    ok = 1;
out:
    free(man.w);
    cJSON_Delete(model);
    if (text)
        use_unmap_text(text, textmap);
    if (vtext)
        use_unmap_text(vtext, vtextmap);
    if (!ok) {
        use_free(m);
        return NULL;
    }
    return m;
}

static void use_unpack(struct use_model *m)
{
    int i;

    for (i = 0; i < 2; i++) {
        struct use_layer *L = &m->layer[i];

        embed_k_packed_free(L->pd); embed_k_packed_free(L->pq);
        embed_k_packed_free(L->pk); embed_k_packed_free(L->pv);
        embed_k_packed_free(L->po); embed_k_packed_free(L->p1);
        embed_k_packed_free(L->p2);
        L->pd = L->pq = L->pk = L->pv = L->po = L->p1 = L->p2 = NULL;
    }
    embed_k_packed_free(m->pt);
    m->pt = NULL;
    embed_pc_close(m->q8file);   /* after the views over it */
    m->q8file = NULL;
    embed_pc_close(m->f32file);
    m->f32file = NULL;
}

/* A product's weight w[k][n], rows ldw apart, and where its pack goes. */
struct use_prod {
    const float *w;
    int ldw, n, k;
    struct embed_k_packed **slot;
};

/* The products that stay f32 with int8 (use_pack): Wd (when the layer
 * has one) and V of each layer, then Wt. Returns the count. */
#define USE_NF32 5
static int use_f32_list(struct use_model *m, struct use_prod *f)
{
    int i, n = 0;

    for (i = 0; i < 2; i++) {
        struct use_layer *L = &m->layer[i];

        if (L->wd)
            f[n++] = (struct use_prod){ L->wd, L->dout, L->dout, L->din, &L->pd };
        f[n++] = (struct use_prod){ L->wqkv + 2 * L->d, 3 * L->d, L->d, L->din, &L->pv };
    }
    f[n++] = (struct use_prod){ m->wt, USE_DIM, USE_DIM, USE_DIM, &m->pt };
    return n;
}

static void use_q8_list(struct use_model *m, struct use_prod *q)
{
    int i;

    for (i = 0; i < 2; i++) {
        struct use_layer *L = &m->layer[i];
        int d = L->d;

        q[5 * i + 0] = (struct use_prod){ L->wqkv, 3 * d, d, L->din, &L->pq };
        q[5 * i + 1] = (struct use_prod){ L->wqkv + d, 3 * d, d, L->din, &L->pk };
        q[5 * i + 2] = (struct use_prod){ L->wo, L->dout, L->dout, d, &L->po };
        q[5 * i + 3] = (struct use_prod){ L->w1, L->inner, L->inner, L->dout, &L->p1 };
        q[5 * i + 4] = (struct use_prod){ L->w2, L->dout, L->dout, L->inner, &L->p2 };
    }
}

/* The int8 file is on with int8 unless CAIRN_PACK_CACHE=0 (docs/EMBED.md,
 * "The int8 file"): read by the library itself, as CAIRN_EMBED_INT8. */
static int use_q8_file_wanted(const struct use_model *m)
{
    const char *env = getenv("CAIRN_PACK_CACHE");

    return m->dir[0] && !(env && strcmp(env, "0") == 0);
}

/* t: the int8 file's shapes and edge values of q's weights, 16 values at
 * each end of each [k][n] weight (its first row's first, its last row's
 * last): read from the weights in memory, 2 pages a weight. */
static void use_q8_edges(const struct use_model *m, const struct use_prod *q, int nq,
                         struct embed_pc_tensor *t)
{
    int i;

    for (i = 0; i < nq; i++) {
        size_t e = q[i].n < EMBED_PC_EDGE ? (size_t)q[i].n : EMBED_PC_EDGE;
        const float *last = q[i].w + (size_t)(q[i].k - 1) * q[i].ldw + q[i].n - e;

        memset(&t[i], 0, sizeof(t[i]));
        t[i].n = q[i].n;
        t[i].k = q[i].k;
        use_read(m, q[i].w, e * sizeof(float), t[i].edge);
        use_read(m, last, e * sizeof(float), t[i].edge + EMBED_PC_EDGE);
    }
}

/* t: the f32 file's shapes and edge values of f's weights, as
 * embed_pc_edges gives them for w[n][k] (the first output's first 16
 * inputs, the last output's last 16), read from the [k][n] layout: what
 * packcache.c checks the panels against. */
static void use_f32_edges(const struct use_model *m, const struct use_prod *f, int nf,
                          struct embed_pc_tensor *t)
{
    int i;

    for (i = 0; i < nf; i++) {
        int e = f[i].k < EMBED_PC_EDGE ? f[i].k : EMBED_PC_EDGE;

        memset(&t[i], 0, sizeof(t[i]));
        t[i].n = f[i].n;
        t[i].k = f[i].k;
        use_read_col(m, f[i].w, (size_t)f[i].ldw, e, t[i].edge);
        use_read_col(m, f[i].w + (size_t)(f[i].k - e) * f[i].ldw + f[i].n - 1, (size_t)f[i].ldw,
                     e, t[i].edge + e);
    }
}

/*
 * Packs the products' weights (a 19.7 MB copy of use-lite-en's) for
 * cairn's own matrix product (gemm.c), once per model, at the first pass
 * with more rows than a query or at the second query, as bert.c does: a
 * one-shot query does not pay for the copy. Out of memory, nothing is
 * packed and OpenBLAS runs.
 *
 * With int8 (use_int8), three products stay f32: the residual projection
 * Wd, V and the final dense Wt. Measured on use-lite-en over the 17 golden
 * texts and 480 dev queries (test_embed_int8), 1 - worst cosine against
 * f32 with one kind of product alone in int8: Wd 3.6e-4, Q 0.9e-4, K
 * 0.9e-4, V 4.4e-4, Wo 2.5e-4, W1 2.9e-4, W2 2.1e-4, Wt 4.6e-4; all in
 * int8 2.0e-3 (worst 0.99802). It is spread over every kind, and it is
 * the weights' rounding more than the activations' (weights alone 1.7e-3,
 * activations alone 0.8e-3). Wd, V and Wt in f32 give worst 0.99919 (mean
 * 0.99976) while 90% of a token's multiply-adds stay int8 (Wd and V are
 * 10%; Wt runs once per text, not per token).
 *
 * The int8 forms come from the int8 file when it holds these weights'
 * (packcache.c): quantising them all is most of a one-shot int8 query's
 * CPU. Else they are quantised and the file written for later processes
 * (a folder we cannot write: no file, nothing else changes).
 */
static void use_pack(struct use_model *m)
{
    struct embed_k_packed *(*f32)(const float *, int, int, int) = embed_k_pack_kn;
    struct use_prod q[USE_NQ8], f[USE_NF32];
    struct embed_pc_tensor t[USE_NQ8], tf[USE_NF32];
    struct embed_pc_source src = { m->nbytes, 0, 0, m->src_key };
    const void *img[USE_NQ8];
    const struct embed_k_q8 *made[USE_NQ8];
    const float *panels[USE_NF32];
    char err[256];
    int i, file = 0, pfile = 0, nf, nr = embed_k_pack_width();

    m->pack_tried = 1;
    if (!m->int8 && !embed_k_packed_pays())
        return;
    use_q8_list(m, q);
    nf = use_f32_list(m, f);
    if (m->int8 && (file = use_q8_file_wanted(m))) {
        use_q8_edges(m, q, USE_NQ8, t);
        m->q8file = embed_pc_q8_open(m->dir, m->src_key, t, USE_NQ8, img, err, sizeof err);
        /* the f32 products' panels (their width is the SIMD level's, so
         * they are in the level's nrNN.bin, not in the int8 file) */
        if ((pfile = embed_k_packed_pays())) {
            use_f32_edges(m, f, nf, tf);
            m->f32file = embed_pc_open(m->dir, nr, &src, tf, nf, panels, err, sizeof err);
        }
    }
    for (i = 0; i < nf; i++) {
        *f[i].slot = m->f32file
                         ? embed_k_packed_view_kn(f[i].w, f[i].ldw, f[i].n, f[i].k, nr, panels[i])
                         : f32(f[i].w, f[i].ldw, f[i].n, f[i].k);
        if (!*f[i].slot)
            goto fail;
    }
    for (i = 0; i < USE_NQ8; i++) {
        const struct use_prod *w = &q[i];

        *w->slot = !m->int8 ? f32(w->w, w->ldw, w->n, w->k)
                   : m->q8file ? embed_k_packed_q8_view(w->w, w->ldw, w->n, w->k, img[i])
                   : embed_k_pack_q8_kn(w->w, w->ldw, w->n, w->k);
        if (!*w->slot)
            goto fail;
        made[i] = embed_k_packed_q8(*w->slot);
    }
    /* best effort: without the files the next process packs again */
    if (file && !m->q8file)
        (void)embed_pc_q8_write(m->dir, m->src_key, t, USE_NQ8, made, err, sizeof err);
    if (pfile && !m->f32file) {
        for (i = 0; i < nf; i++)
            panels[i] = embed_k_packed_panels(*f[i].slot);
        if (embed_k_packed_nr(*f[0].slot) == nr)
            (void)embed_pc_write(m->dir, nr, &src, tf, nf, panels, err, sizeof err);
    }
    return;
fail:
    use_unpack(m);
}

void use_int8(struct use_model *m, int on)
{
    if ((on != 0) == m->int8)
        return;
    use_unpack(m);
    m->pack_tried = 0;
    m->int8 = on != 0;
}

void use_free(struct use_model *m)
{
    if (!m)
        return;
    use_unpack(m);
    free(m->vocab_buf);
    embed_pc_close(m->vocab_file);
    use_close_shards(m);
    if (m->arena)
        munmap(m->arena->p, USE_ARENA_BYTES);
    free(m->arena);
    if (m->maplen)
        munmap(m->data, m->maplen);
    else
        free(m->data);
    free(m);
}

int use_mapped(const struct use_model *m)
{
    return m->maplen > 0;
}

void use_set_threads(struct use_model *m, int n)
{
    m->threads = n < 1 ? 1 : n;
}

/* ---- tokenizer ---------------------------------------------------------- */

int use_tokenize(const struct use_model *m, const char *text, size_t len,
                 int32_t *ids, int max_ids)
{
    struct buf clean = BUF_INIT, s = BUF_INIT;
    utf8proc_uint8_t *nfkc = NULL;
    utf8proc_ssize_t nlen;
    size_t *off = NULL, ncp = 0, i, k;
    double *best = NULL;
    int *words = NULL, *res = NULL;
    unsigned char *has = NULL;
    int nres = 0, nout = 0, rc = -1, end, start, prev_unk;

    if (max_ids < 0)
        return -1;
    if (!text)
        len = 0;
    if (len > USE_MAX_INPUT) {
        len = USE_MAX_INPUT;
        while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
            len--;
    }
    buf_init(&clean, USE_MAX_INPUT * 3 + 16);
    buf_init(&s, USE_MAX_INPUT * 54 + 16);   /* NFKC can grow text 18x */
    if (utf8_repair(text ? text : "", len, &clean) != BUF_OK)
        goto out;
    nlen = utf8proc_map((const utf8proc_uint8_t *)(clean.p),
                        (utf8proc_ssize_t)clean.n, &nfkc,
                        UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    if (nlen < 0)
        goto out;
    if (nlen == 0) {
        rc = 0;
        goto out;
    }
    /* "▁" + text with every U+0020 as "▁". */
    if (buf_add(&s, "\xE2\x96\x81", 3) != BUF_OK)
        goto out;
    for (k = 0; k < (size_t)nlen; k++) {
        int r = nfkc[k] == ' ' ? buf_add(&s, "\xE2\x96\x81", 3)
                               : buf_add(&s, (const char *)&nfkc[k], 1);
        if (r != BUF_OK)
            goto out;
    }
    off = malloc((s.n + 1) * sizeof(*off));
    if (!off)
        goto out;
    for (k = 0; k < s.n;) {
        uint32_t cp;
        off[ncp++] = k;
        k += utf8_decode(s.p + k, s.n - k, &cp);
    }
    off[ncp] = s.n;
    best = calloc(ncp + 1, sizeof(*best));
    words = calloc(ncp + 1, sizeof(*words));
    has = calloc(ncp + 1, 1);
    res = malloc((ncp + 1) * sizeof(*res));
    if (!best || !words || !has || !res)
        goto out;
    for (i = 0; i < ncp; i++)
        for (k = 1; k <= (size_t)m->max_cp && i + k <= ncp && !has[i]; k++)
            has[i] = vocab_find(m, s.p + off[i], off[i + k] - off[i]) >= 0;
    /* Viterbi, in the JS library's order: for each end, candidates by
     * ascending start; a candidate wins if none has yet (best == 0) or
     * it scores >= the current best. */
    for (end = 1; end <= (int)ncp; end++) {
        start = end - m->max_cp > 0 ? end - m->max_cp : 0;
        for (; start < end; start++) {
            int id;
            double sc;
            if (has[start]) {
                id = vocab_find(m, s.p + off[start], off[end] - off[start]);
                if (id < 0)
                    continue;
                sc = m->score[id];
            } else if (end == start + 1) {
                id = 0;           /* an unknown character, score 0 */
                sc = 0.0;
            } else {
                continue;
            }
            sc += best[start];
            if (best[end] == 0.0 || sc >= best[end]) {
                best[end] = sc;
                words[end] = id;
            }
        }
    }
    /* Back from the end, stepping by the piece's UTF-16 length. */
    for (end = (int)ncp; end > 0; end -= m->u16len[words[end]])
        res[nres++] = words[end];
    prev_unk = 0;
    for (i = (size_t)nres; i-- > 0 && nout < max_ids;) {
        /* The JS merges in back-to-front order: an unknown is dropped when
         * the one after it (in text order) is also unknown; the kept one
         * is the last of a run, and all are id 0, so the ids agree. */
        if (!(prev_unk && res[i] == 0))
            ids[nout++] = res[i];
        prev_unk = res[i] == 0;
    }
    rc = nout;
out:
    buf_release(&clean);
    buf_release(&s);
    free(nfkc);
    free(off);
    free(best);
    free(words);
    free(has);
    free(res);
    return rc;
}

/* ---- forward ------------------------------------------------------------ */

static void add_rows(float *x, const float *y, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        x[i] += y[i];
}

/* y[m][n] = x[m][k] . w + b, w [k][n] with rows ldw apart, on the packed
 * copy when there is one. */
static void linear(const float *x, const float *w, int ldw, const struct embed_k_packed *pw,
                   const float *b, float *y, int m, int n, int k, float *work)
{
    if (pw)
        embed_k_linear_packed_w(x, pw, b, y, m, work);
    else
        embed_k_linear_kn(x, w, ldw, b, y, m, n, k);
}

/*
 * x[T][din] -> x[T][dout] through one layer. Scratch buffers are sized
 * for the widest layer. Attention skips padding (lens), the rest runs on
 * every row, padding included: those rows stay finite and unused.
 */
static void layer_forward(const struct use_layer *L, float **xp, float **yp,
                          float *q, float *k, float *v, float *ctx, float *h,
                          float *res, float *scratch, float *gw, float *aw,
                          const int *lens, int batch, int seq)
{
    float *x = *xp, *y = *yp, *tmp;
    int T = batch * seq, d = L->d;
    size_t n;

    /* residual: x itself, or its projection to the new width */
    if (L->wd)
        linear(x, L->wd, L->dout, L->pd, L->bd, res, T, L->dout, L->din, gw);
    else
        memcpy(res, x, (size_t)T * L->dout * sizeof(float));
    memcpy(y, x, (size_t)T * L->din * sizeof(float));
    embed_k_add_layernorm(y, NULL, L->ln_g, L->ln_b, T, L->din, USE_LN_EPS);
    linear(y, L->wqkv, 3 * d, L->pq, L->bqkv, q, T, d, L->din, gw);
    linear(y, L->wqkv + d, 3 * d, L->pk, L->bqkv + d, k, T, d, L->din, gw);
    linear(y, L->wqkv + 2 * d, 3 * d, L->pv, L->bqkv + 2 * d, v, T, d, L->din, gw);
    embed_k_attention_w(q, k, v, ctx, lens, batch, seq, USE_HEADS, d / USE_HEADS, scratch, aw);
    linear(ctx, L->wo, L->dout, L->po, L->bo, x, T, L->dout, d, gw);
    n = (size_t)T * L->dout;
    add_rows(x, res, n);
    /* FFN: x += relu(LN(x) W1 + b1) W2 + b2 */
    memcpy(y, x, n * sizeof(float));
    embed_k_add_layernorm(y, NULL, L->ln2_g, L->ln2_b, T, L->dout, USE_LN_EPS);
    linear(y, L->w1, L->inner, L->p1, L->b1, h, T, L->inner, L->dout, gw);
    embed_k_relu(h, (size_t)T * L->inner);
    linear(h, L->w2, L->dout, L->p2, L->b2, y, T, L->dout, L->inner, gw);
    add_rows(y, x, n);
    tmp = x; x = y; y = tmp;
    *xp = x;
    *yp = y;
}

/* A pass's work space: the activations, the products' and attention's
 * work and the pooled rows, in floats, each part a multiple of 64 bytes
 * (use_work_floats lays them out; forward_part carves them). */
struct use_work {
    size_t x, h, scratch, pool, gw, aw, lens, total;
};

static size_t use_round16(size_t n)
{
    return (n + 15) & ~(size_t)15;
}

static void use_work_floats(const struct use_model *m, int batch, int seq, struct use_work *w)
{
    size_t T = (size_t)batch * seq, g;
    int i, wmax = m->demb, inner = 1;

    memset(w, 0, sizeof(*w));
    w->gw = embed_k_gemm_work(batch, USE_DIM);
    for (i = 0; i < 2; i++) {
        const struct use_layer *L = &m->layer[i];
        const int ks[4] = { L->din, L->d, L->dout, L->inner };
        int j;

        if (L->dout > wmax) wmax = L->dout;
        if (L->d > wmax) wmax = L->d;
        if (L->inner > inner) inner = L->inner;
        for (j = 0; j < 4; j++)
            if ((g = embed_k_gemm_work((int)T, ks[j])) > w->gw)
                w->gw = g;
        if ((g = embed_k_attention_work(seq, L->d / USE_HEADS)) > w->aw)
            w->aw = g;
    }
    w->x = use_round16(T * wmax);
    w->h = use_round16(T * inner);
    w->scratch = use_round16((size_t)seq * seq);
    w->pool = use_round16((size_t)batch * USE_DIM);
    w->gw = use_round16(w->gw);
    w->aw = use_round16(w->aw);
    w->lens = use_round16((size_t)batch);   /* ints, as many as floats */
    w->total = 7 * w->x + w->h + w->scratch + w->pool + w->gw + w->aw + w->lens;
}

static struct use_arena *use_arena_new(void)
{
    struct use_arena *a = calloc(1, sizeof(*a));
    char *p, *at;

    if (!a)
        return NULL;
    p = mmap(NULL, 2 * USE_ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
             -1, 0);
    if (p == MAP_FAILED) {
        free(a);
        return NULL;
    }
    at = (char *)(((uintptr_t)p + USE_ARENA_BYTES - 1) & ~(uintptr_t)(USE_ARENA_BYTES - 1));
    if (at > p)
        munmap(p, (size_t)(at - p));
    if (p + 2 * USE_ARENA_BYTES > at + USE_ARENA_BYTES)
        munmap(at + USE_ARENA_BYTES, (size_t)(p + 2 * USE_ARENA_BYTES - (at + USE_ARENA_BYTES)));
#ifdef MADV_HUGEPAGE
    (void)madvise(at, USE_ARENA_BYTES, MADV_HUGEPAGE);
#endif
    a->p = at;
    a->work = USE_ARENA_BYTES;
    return a;
}

/* The vectors every pass reads whole from the weights (the norms, the
 * biases, the timing signal's scales: ~50 KB of USE-lite's, spread over
 * ~20 pages of the shards) copied by use_read to the arena's end, and the
 * model's pointers moved to the copies: one pread each, not a fault each
 * in the first pass. The same floats; when they do not fit in a quarter
 * of the arena they stay where they are. */
static void use_copy_small(struct use_model *m)
{
    const float **v[2 * 9 + 2];
    size_t len[2 * 9 + 2], total = 0, at;
    int n = 0, i;
    char *dst;

    if (!m->nshard)
        return;
    for (i = 0; i < 2; i++) {
        struct use_layer *L = &m->layer[i];

        v[n] = &L->ln_g; len[n++] = (size_t)L->din;
        v[n] = &L->ln_b; len[n++] = (size_t)L->din;
        v[n] = &L->bqkv; len[n++] = 3 * (size_t)L->d;
        v[n] = &L->bo; len[n++] = (size_t)L->dout;
        if (L->bd) {
            v[n] = &L->bd; len[n++] = (size_t)L->dout;
        }
        v[n] = &L->ln2_g; len[n++] = (size_t)L->dout;
        v[n] = &L->ln2_b; len[n++] = (size_t)L->dout;
        v[n] = &L->b1; len[n++] = (size_t)L->inner;
        v[n] = &L->b2; len[n++] = (size_t)L->dout;
    }
    v[n] = &m->inv_ts; len[n++] = (size_t)m->nts;
    v[n] = &m->bt; len[n++] = USE_DIM;
    for (i = 0; i < n; i++)
        total += (len[i] * sizeof(float) + 63) & ~(size_t)63;
    if (total > USE_ARENA_BYTES / 4)
        return;
    m->arena->work = (USE_ARENA_BYTES - total) & ~(size_t)63;
    dst = m->arena->p + m->arena->work;
    for (i = 0, at = 0; i < n; i++) {
        use_read(m, *v[i], len[i] * sizeof(float), dst + at);
        *v[i] = (const float *)(void *)(dst + at);
        at += (len[i] * sizeof(float) + 63) & ~(size_t)63;
    }
}

/*
 * The pass over `batch` sequences (ids rows `stride` apart, seq <= stride
 * token rows each) into out[batch][USE_DIM]; validated input. Its work
 * space is the model's arena when it fits and no other share holds it,
 * else one block of its own, so several can run at once on disjoint
 * sequences. Where the floats sit changes no bit of the result.
 */
static int forward_part(const void *model, const int32_t *ids, int stride,
                        const int *lens, int batch, int seq, float *out, char *err,
                        size_t errlen)
{
    const struct use_model *m = model;
    struct use_arena *arena = m->arena;
    struct use_work w;
    int b, t, i, rows_read;
    float *blk, *x, *y, *q, *k, *v, *ctx, *h, *res, *scratch, *pool, *gw, *aw;
    int *alens;
    size_t T = (size_t)batch * seq;

    /* The embedding rows by pread (use_read) in a process's first short
     * passes: each row of the 8 MB table a question's pieces pick is on a
     * page not touched yet, a fault of ~20 us against a read of ~3 us.
     * Later passes find more of them mapped; a batch's many rows fault in
     * at most the table's pages, fewer than its reads. */
    rows_read = m->nshard && T <= USE_MAX_TOKENS && m->passes <= USE_READ_PASSES;
    use_work_floats(m, batch, seq, &w);
    if (arena && w.total * sizeof(float) <= arena->work &&
        !__atomic_exchange_n(&arena->busy, 1, __ATOMIC_ACQUIRE)) {
        blk = (float *)(void *)arena->p;
    } else {
        /* A batch's own block, in 2 MB pages where the kernel allows
         * (os_alloc_big): a fault and a clear each 2 MB, whatever glibc's
         * history. Blocks by malloc came from fresh 4 KB pages or from the
         * pages the last pass freed depending on its mmap threshold, which
         * the sizes freed before move: ~490,000 against ~50,000 faults for
         * the same 939 pieces when that history changed. */
        size_t bytes = w.total * sizeof(float);

        arena = NULL;
        /* (os_alloc_big is malloc below 4 MB: attention's work wants 64
         * bytes' alignment) */
        blk = bytes < USE_BIG_BLOCK ? aligned_alloc(64, bytes) : os_alloc_big(bytes);
        if (!blk) {
            embed_errf(err, errlen, "out of memory");
            return -1;
        }
    }
    x = blk;
    y = x + w.x; q = y + w.x; k = q + w.x; v = k + w.x; ctx = v + w.x; res = ctx + w.x;
    h = res + w.x;
    scratch = h + w.h;
    pool = scratch + w.scratch;
    gw = pool + w.pool;
    aw = gw + w.gw;
    alens = (int *)(void *)(aw + w.aw);
    /* padding rows stay 0 (and any row a text does not reach) */
    memset(x, 0, w.x * sizeof(float));
    /* Embedding + timing signal. The graph adds the embedding twice:
     * AddTimingSignal returns emb + timing, and Layer_0/add adds that to
     * emb again; so x = 2 emb + timing. Padding rows stay 0 (ScatterNd). An
     * empty text attends over one zero row that pooling then ignores. */
    for (b = 0; b < batch; b++) {
        alens[b] = lens[b] > 0 ? lens[b] : 1;
        for (t = 0; t < lens[b]; t++) {
            float *row = x + ((size_t)b * seq + t) * m->demb;
            const float *e = m->emb + (size_t)ids[(size_t)b * stride + t] * m->demb;
            if (rows_read) {
                use_read(m, e, (size_t)m->demb * sizeof(float), row);
                e = row;
            }
            for (i = 0; i < m->nts; i++) {
                float a = (float)t * m->inv_ts[i];
                row[i] = 2.0f * e[i] + sinf(a);
                row[m->nts + i] = 2.0f * e[m->nts + i] + cosf(a);
            }
        }
    }
    for (i = 0; i < 2; i++)
        layer_forward(&m->layer[i], &x, &y, q, k, v, ctx, h, res, scratch, gw, aw, alens,
                      batch, seq);
    embed_k_mean_pool(x, lens, batch, seq, USE_DIM, pool);
    linear(pool, m->wt, USE_DIM, m->pt, m->bt, out, batch, USE_DIM, USE_DIM, gw);
    embed_k_tanh(out, (size_t)batch * USE_DIM);
    embed_k_l2_normalize(out, batch, USE_DIM);
    if (arena)
        __atomic_store_n(&arena->busy, 0, __ATOMIC_RELEASE);
    else
        free(blk);
    return 0;
}

/* With several threads a batch is cut into shares of whole texts, one per
 * thread, as bert.c does (embed_run_shares): every step is then parallel
 * and each share runs the packed product, which OpenBLAS's own threads
 * would replace. */
int use_forward(struct use_model *m, const int32_t *ids, const int *lens,
                int batch, int seq, float *out, char *err, size_t errlen)
{
    int b, t;

    /* forward_part and the kernels take the token rows as an int */
    if (batch < 1 || seq < 1 || seq > USE_MAX_TOKENS || (size_t)batch * seq > INT_MAX) {
        embed_errf(err, errlen, "bad batch shape %d x %d", batch, seq);
        return -1;
    }
    for (b = 0; b < batch; b++) {
        if (lens[b] < 0 || lens[b] > seq) {
            embed_errf(err, errlen, "bad length %d", lens[b]);
            return -1;
        }
        for (t = 0; t < lens[b]; t++) {
            int32_t id = ids[(size_t)b * seq + t];
            if (id < 0 || id >= m->vocab_rows) {
                embed_errf(err, errlen, "token id %d out of range", (int)id);
                return -1;
            }
        }
    }
    /* int8 packs at the first pass, as bert.c does: a text's vector must
     * not depend on whether it was a process's first query */
    if (!m->pack_tried && (m->int8 || (size_t)batch * seq > USE_QUERY_ROWS || m->queries++ > 0))
        use_pack(m);
    m->passes++;
    return embed_run_shares(forward_part, m, ids, lens, batch, seq, out, USE_DIM, m->threads,
                            err, errlen);
}

uint64_t use_id_hash(const struct use_model *m)
{
    return m->id_hash;
}
