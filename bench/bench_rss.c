/*
 * bench_rss.c: the helper of bench/bench_rss.sh, which measures how much of
 * the 470 MB multilingual-e5-small weights a cairn process holds resident.
 *
 *   bench_rss gen DIR
 *       Writes a folder shaped like intfloat/multilingual-e5-small:
 *       config.json, model.safetensors (every tensor of the published
 *       checkpoint, F32, random non-zero values, so the file really holds
 *       470,641,600 bytes of data and not holes), tokenizer.json (an XLM-R
 *       style Unigram vocabulary of 250,002 made-up pieces: letter strings,
 *       ASCII, the CJK block), 1_Pooling and cairn_embed.json.
 *   bench_rss embed [--read] [--passages] DIR FILE
 *       Loads DIR and embeds every line of FILE in one call, in this
 *       process. Prints one key=value line: the peak RSS, how much of the
 *       mapping of model.safetensors is resident (the word-embedding table,
 *       which the loader marks MADV_RANDOM and so shows as its own "rr"
 *       region in /proc/self/smaps, apart from the rest), and how many
 *       distinct token rows the texts used. --read first reads the whole
 *       file into malloc'ed memory and keeps it: the baseline, what a loader
 *       that copies the weights holds at least.
 *   bench_rss cache hot|cold FILE
 *       Puts FILE whole into the page cache (hot: read through) or drops it
 *       from there (cold: fdatasync, then POSIX_FADV_DONTNEED), and prints
 *       how much of it is cached afterwards (mincore). A hot cache is the
 *       usual case, and the kernel's fault-around then maps up to 64 KiB
 *       of already cached neighbours with each page a lookup touches; cold,
 *       only the touched pages are read in.
 *   bench_rss maxrss CMD ARGS...
 *       Runs CMD (stdout to /dev/null) and prints its peak RSS in KiB, from
 *       wait4's ru_maxrss: /usr/bin/time -v without the dependency.
 */
#include "embed/embed.h"
#include "embed/registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define H       384
#define INTER   1536
#define LAYERS  12
#define VOCAB   250037          /* rows of the published word-embedding table */
#define PIECES  250002          /* entries of XLM-R's tokenizer.json vocab */
#define MAXPOS  512
#define MS      "\xe2\x96\x81"  /* U+2581, SentencePiece's metaspace */

static unsigned long long rng = 0x9e3779b97f4a7c15ull;

static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 32);
}

/* ---- gen ---------------------------------------------------------------- */

struct tensor {
    char name[80];
    int  i64;                   /* the position_ids buffer; F32 otherwise */
    long rows, cols;            /* cols 0: 1-D */
};

static int by_layout(const void *a, const void *b)
{
    const struct tensor *x = a, *y = b;

    /* the safetensors writer's order: 8-byte dtypes first, then by name */
    if (x->i64 != y->i64)
        return y->i64 - x->i64;
    return strcmp(x->name, y->name);
}

static long t_elems(const struct tensor *t)
{
    return t->rows * (t->cols ? t->cols : 1);
}

/* The tensors of transformers' BertModel state dict, as e5-small has them. */
static int tensor_list(struct tensor *t)
{
    static const struct { const char *sfx; long rows, cols; } per_layer[] = {
        { "attention.self.query.weight", H, H }, { "attention.self.query.bias", H, 0 },
        { "attention.self.key.weight", H, H }, { "attention.self.key.bias", H, 0 },
        { "attention.self.value.weight", H, H }, { "attention.self.value.bias", H, 0 },
        { "attention.output.dense.weight", H, H }, { "attention.output.dense.bias", H, 0 },
        { "attention.output.LayerNorm.weight", H, 0 },
        { "attention.output.LayerNorm.bias", H, 0 },
        { "intermediate.dense.weight", INTER, H }, { "intermediate.dense.bias", INTER, 0 },
        { "output.dense.weight", H, INTER }, { "output.dense.bias", H, 0 },
        { "output.LayerNorm.weight", H, 0 }, { "output.LayerNorm.bias", H, 0 },
    };
    static const struct tensor fixed[] = {
        { "embeddings.word_embeddings.weight", 0, VOCAB, H },
        { "embeddings.position_embeddings.weight", 0, MAXPOS, H },
        { "embeddings.token_type_embeddings.weight", 0, 2, H },
        { "embeddings.LayerNorm.weight", 0, H, 0 },
        { "embeddings.LayerNorm.bias", 0, H, 0 },
        { "embeddings.position_ids", 1, 1, MAXPOS },
        { "pooler.dense.weight", 0, H, H },
        { "pooler.dense.bias", 0, H, 0 },
    };
    int n = 0, l;
    size_t k;

    for (k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++)
        t[n++] = fixed[k];
    for (l = 0; l < LAYERS; l++) {
        for (k = 0; k < sizeof(per_layer) / sizeof(per_layer[0]); k++, n++) {
            snprintf(t[n].name, sizeof(t[n].name), "encoder.layer.%d.%s", l,
                     per_layer[k].sfx);
            t[n].i64 = 0;
            t[n].rows = per_layer[k].rows;
            t[n].cols = per_layer[k].cols;
        }
    }
    qsort(t, (size_t)n, sizeof(*t), by_layout);
    return n;
}

/* Values: LayerNorm gains near 1, everything else uniform with the
 * standard deviation 0.02 that BERT is initialised with; never 0. */
static int write_data(FILE *f, const struct tensor *t)
{
    static float buf[1 << 16];
    int gain = strstr(t->name, "LayerNorm.weight") != NULL;
    long left = t_elems(t), i;

    if (t->i64) {
        for (i = 0; i < left; i++) {
            int64_t v = i;
            if (fwrite(&v, sizeof(v), 1, f) != 1)
                return -1;
        }
        return 0;
    }
    while (left > 0) {
        long n = left < (long)(sizeof(buf) / sizeof(buf[0])) ? left
                                                              : (long)(sizeof(buf) / sizeof(buf[0]));
        for (i = 0; i < n; i++) {
            float u = ((float)(next_u32() >> 8) + 0.5f) * (1.0f / 16777216.0f);
            buf[i] = (gain ? 1.0f : 0.0f) + (u * 2.0f - 1.0f) * 0.0346f;
        }
        if (fwrite(buf, sizeof(float), (size_t)n, f) != (size_t)n)
            return -1;
        left -= n;
    }
    return 0;
}

static int write_safetensors(const char *path, long long *size)
{
    struct tensor t[8 + 16 * LAYERS];
    int n = tensor_list(t), i, rc = -1;
    size_t cap = 1 << 16, len, pad;
    char *hdr = malloc(cap);
    long long off = 0;
    unsigned char len8[8];
    FILE *f = NULL;

    if (!hdr)
        return -1;
    /* the header as the writer prints it: compact JSON, space-padded to 8 */
    len = (size_t)snprintf(hdr, cap, "{\"__metadata__\":{\"format\":\"pt\"}");
    for (i = 0; i < n; i++) {
        long long end = off + t_elems(&t[i]) * (t[i].i64 ? 8 : 4);
        char shape[48];

        if (t[i].cols)
            snprintf(shape, sizeof(shape), "%ld,%ld", t[i].rows, t[i].cols);
        else
            snprintf(shape, sizeof(shape), "%ld", t[i].rows);
        len += (size_t)snprintf(hdr + len, cap - len,
                                ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%s],"
                                "\"data_offsets\":[%lld,%lld]}",
                                t[i].name, t[i].i64 ? "I64" : "F32", shape, off, end);
        off = end;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    if (len + 8 >= cap)
        goto out;
    for (pad = (8 - len % 8) % 8; pad > 0; pad--)
        hdr[len++] = ' ';
    for (i = 0; i < 8; i++)
        len8[i] = (unsigned char)((uint64_t)len >> (8 * i));
    f = fopen(path, "wb");
    if (!f || fwrite(len8, 1, 8, f) != 8 || fwrite(hdr, 1, len, f) != len)
        goto out;
    for (i = 0; i < n; i++) {
        if (write_data(f, &t[i]) != 0)
            goto out;
    }
    *size = 8 + (long long)len + off;
    rc = 0;
out:
    if (f && fclose(f) != 0)
        rc = -1;
    free(hdr);
    return rc;
}

/* Appends one [piece, score] entry; pieces here need no escapes but " \ */
static void piece(FILE *f, const char *p, double score, int *count)
{
    fputs(*count ? ",[\"" : "[\"", f);
    for (; *p; p++) {
        if (*p == '"' || *p == '\\')
            fputc('\\', f);
        fputc(*p, f);
    }
    fprintf(f, "\",%.4f]", score);
    ++*count;
}

/* letters: the i-th string of `len` lowercase letters */
static void letters(long i, int len, char *out)
{
    int k;

    for (k = len - 1; k >= 0; k--, i /= 26)
        out[k] = (char)('a' + i % 26);
    out[len] = '\0';
}

/* An XLM-R style tokenizer.json with PIECES entries (the published file
 * is 17 MB: real pieces, and the nmt_nfkc charsmap where this has the
 * smallest valid one, a trie with no keys): the four specials,
 * the metaspace, ASCII, the CJK block, then letter strings of length 1-4
 * with and without the metaspace until the count is reached. Longer pieces
 * score better per character, so words come out as a few long pieces
 * whose ids are spread over the whole table, as real text's are. */
static int write_tokenizer(const char *path)
{
    static const char *const special[] = { "<s>", "<pad>", "</s>", "<unk>" };
    FILE *f = fopen(path, "w");
    char s[16], w[24];
    int count = 0, len, c;
    long i, n;

    if (!f)
        return -1;
    fputs("{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,"
          "\"added_tokens\":[],"
          "\"normalizer\":{\"type\":\"Sequence\",\"normalizers\":[{\"type\":\"Precompiled\","
          "\"precompiled_charsmap\":\"BAAAAAAAAAA=\"}]},"
          "\"pre_tokenizer\":{\"type\":\"Metaspace\",\"replacement\":\"" MS "\","
          "\"prepend_scheme\":\"always\",\"split\":true},"
          "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":["
          "{\"SpecialToken\":{\"id\":\"<s>\",\"type_id\":0}},"
          "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},"
          "{\"SpecialToken\":{\"id\":\"</s>\",\"type_id\":0}}],"
          "\"special_tokens\":{\"<s>\":{\"id\":\"<s>\",\"ids\":[0]},"
          "\"</s>\":{\"id\":\"</s>\",\"ids\":[2]}}},"
          "\"model\":{\"type\":\"Unigram\",\"unk_id\":3,\"byte_fallback\":false,"
          "\"vocab\":[", f);
    for (i = 0; i < 4; i++)
        piece(f, special[i], 0.0, &count);
    piece(f, MS, -3.0, &count);
    for (c = 33; c < 127; c++) {
        s[0] = (char)c;
        s[1] = '\0';
        piece(f, s, -9.0, &count);
    }
    for (c = 0x4e00; c <= 0x9fff; c++) {
        s[0] = (char)(0xe0 | (c >> 12));
        s[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        s[2] = (char)(0x80 | (c & 0x3f));
        s[3] = '\0';
        piece(f, s, -10.0 - (next_u32() % 1000) / 500.0, &count);
    }
    for (len = 1, n = 26; count < PIECES; len++, n *= 26) {
        for (i = 0; i < n && count < PIECES; i++) {
            double score = -4.0 - len * 1.5 - (next_u32() % 1000) / 250.0;

            letters(i, len, s);
            if (len > 1)                       /* single letters came with ASCII */
                piece(f, s, score, &count);
            snprintf(w, sizeof(w), MS "%s", s);
            if (count < PIECES)
                piece(f, w, score + 1.0, &count);
        }
    }
    fputs("]}}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

static int write_text(const char *dir, const char *name, const char *text)
{
    char path[4096];
    FILE *f;
    int ok;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    f = fopen(path, "w");
    if (!f)
        return -1;
    ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok ? 0 : -1;
}

static int gen(const char *dir)
{
    /* the fields of the published config.json that the loader reads */
    static const char config[] =
        "{\"architectures\":[\"BertModel\"],\"model_type\":\"bert\",\"hidden_act\":\"gelu\","
        "\"hidden_size\":384,\"intermediate_size\":1536,\"layer_norm_eps\":1e-12,"
        "\"max_position_embeddings\":512,\"num_attention_heads\":12,"
        "\"num_hidden_layers\":12,\"pad_token_id\":0,\"position_embedding_type\":"
        "\"absolute\",\"tokenizer_class\":\"XLMRobertaTokenizer\",\"torch_dtype\":"
        "\"float32\",\"type_vocab_size\":2,\"vocab_size\":250037}\n";
    const struct embed_reg_model *reg = embed_reg_find("multilingual-e5-small");
    char path[4096];
    long long size = 0;

    snprintf(path, sizeof(path), "%s/1_Pooling", dir);
    if ((mkdir(dir, 0700) != 0 && errno != EEXIST) ||
        (mkdir(path, 0700) != 0 && errno != EEXIST) || !reg || !reg->cairn_json ||
        write_text(dir, "config.json", config) != 0 ||
        write_text(dir, "cairn_embed.json", reg->cairn_json) != 0 ||
        write_text(dir, "1_Pooling/config.json",
                   "{\"word_embedding_dimension\":384,\"pooling_mode_cls_token\":false,"
                   "\"pooling_mode_mean_tokens\":true}\n") != 0) {
        fprintf(stderr, "bench_rss: cannot write %s\n", dir);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
    if (write_tokenizer(path) != 0) {
        fprintf(stderr, "bench_rss: cannot write %s\n", path);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    if (write_safetensors(path, &size) != 0) {
        fprintf(stderr, "bench_rss: cannot write %s\n", path);
        return 1;
    }
    printf("model_bytes=%lld\n", size);
    return 0;
}

/* ---- embed -------------------------------------------------------------- */

/* Resident KiB of the mappings of a file named model.safetensors, split
 * into the MADV_RANDOM region (the word embeddings) and the rest. */
static void mapped_rss(long *words_kb, long *rest_kb)
{
    FILE *f = fopen("/proc/self/smaps", "r");
    char line[512];
    unsigned long lo, hi;
    long rss = 0, v;
    int ours = 0;

    *words_kb = *rest_kb = 0;
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        size_t n = strlen(line);

        if (n > 1 && line[n - 1] == '\n')
            line[--n] = '\0';
        /* a region's first line: "start-end perms offset dev inode path" */
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
            ours = n >= 18 && strcmp(line + n - 18, "/model.safetensors") == 0;
        } else if (ours && sscanf(line, "Rss: %ld kB", &v) == 1) {
            rss = v;
        } else if (ours && strncmp(line, "VmFlags:", 8) == 0) {
            if (strstr(line, " rr"))
                *words_kb += rss;
            else
                *rest_kb += rss;
        }
    }
    fclose(f);
}

/* Reads path whole into malloc'ed memory (the caller frees it). */
static char *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    char *p = NULL;
    size_t got = 0;

    if (fd < 0 || fstat(fd, &st) != 0)
        goto out;
    p = malloc((size_t)st.st_size);
    while (p && got < (size_t)st.st_size) {
        ssize_t k = read(fd, p + got, (size_t)st.st_size - got);
        if (k <= 0) {
            free(p);
            p = NULL;
            break;
        }
        got += (size_t)k;
    }
    *len = got;
out:
    if (fd >= 0)
        close(fd);
    return p;
}

static int embed_file(const char *dir, const char *file, int read_first, int passages)
{
    char err[512], path[4096], *text = NULL, *copy = NULL, **lines = NULL;
    static unsigned char seen[(VOCAB + 7) / 8];
    struct embed_model *m = NULL;
    size_t len = 0, copy_len = 0, n = 0, i;
    float *out = NULL;
    int32_t ids[512];
    long tokens = 0, rows = 0, words_kb, rest_kb;
    struct rusage ru;
    int rc = 1;

    if (read_first) {
        snprintf(path, sizeof(path), "%s/model.safetensors", dir);
        if (!(copy = read_all(path, &copy_len))) {
            fprintf(stderr, "bench_rss: cannot read %s\n", path);
            goto out;
        }
    }
    if (!(text = read_all(file, &len)) || !(text = realloc(text, len + 1)))
        goto out;
    text[len] = '\0';
    lines = malloc((len / 2 + 2) * sizeof(*lines));
    for (char *p = strtok(text, "\n"); lines && p; p = strtok(NULL, "\n"))
        lines[n++] = p;
    if (!lines || n == 0)
        goto out;
    if (!(m = embed_load(dir, err, sizeof(err)))) {
        fprintf(stderr, "bench_rss: %s\n", err);
        goto out;
    }
    embed_set_threads(m, 1);
    out = malloc(n * (size_t)embed_dim(m) * sizeof(float));
    if (!out || embed_encode(m, (const char *const *)lines, n, !passages, out) != 0) {
        fprintf(stderr, "bench_rss: embed: %s\n", embed_errmsg(m));
        goto out;
    }
    for (i = 0; i < n; i++) {
        int k = embed_tokenize(m, lines[i], !passages, ids, 512);
        for (int j = 0; j < k; j++) {
            tokens++;
            if (ids[j] >= 0 && ids[j] < VOCAB && !(seen[ids[j] / 8] & (1u << (ids[j] % 8)))) {
                seen[ids[j] / 8] |= (unsigned char)(1u << (ids[j] % 8));
                rows++;
            }
        }
    }
    mapped_rss(&words_kb, &rest_kb);
    getrusage(RUSAGE_SELF, &ru);
    printf("texts=%zu tokens=%ld distinct_rows=%ld rows_kb=%ld words_resident_kb=%ld "
           "rest_resident_kb=%ld copy_kb=%zu maxrss_kb=%ld\n", n, tokens, rows,
           rows * H * 4 / 1024, words_kb, rest_kb, copy_len / 1024, ru.ru_maxrss);
    rc = 0;
out:
    embed_free(m);
    free(out);
    free(lines);
    free(text);
    free(copy);
    return rc;
}

/* ---- cache -------------------------------------------------------------- */

static int cache(const char *how, const char *path)
{
    static char buf[1 << 20];
    int fd = open(path, O_RDONLY), hot = !strcmp(how, "hot"), rc = 1;
    unsigned char *vec = NULL;
    void *map = MAP_FAILED;
    struct stat st;
    size_t pages, i, cached = 0;
    long page = sysconf(_SC_PAGESIZE);

    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size == 0 || page <= 0)
        goto out;
    if (hot) {
        while (read(fd, buf, sizeof(buf)) > 0)
            ;
    } else if (fdatasync(fd) != 0 || posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) {
        goto out;
    }
    pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
    map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    vec = malloc(pages);
    if (map == MAP_FAILED || !vec || mincore(map, (size_t)st.st_size, vec) != 0)
        goto out;
    for (i = 0; i < pages; i++)
        cached += vec[i] & 1;
    printf("cached_kb=%zu\n", cached * (size_t)page / 1024);
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "bench_rss: cache %s %s: %s\n", how, path, strerror(errno));
    if (map != MAP_FAILED)
        munmap(map, (size_t)st.st_size);
    free(vec);
    if (fd >= 0)
        close(fd);
    return rc;
}

/* ---- maxrss ------------------------------------------------------------- */

static int maxrss(char **argv)
{
    struct rusage ru;
    int status;
    pid_t pid = fork();

    if (pid < 0)
        return 1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    if (wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
        fprintf(stderr, "bench_rss: %s failed\n", argv[0]);
        return 1;
    }
    printf("%ld\n", ru.ru_maxrss);
    return 0;
}

int main(int argc, char **argv)
{
    int i = 2, read_first = 0, passages = 0;

    if (argc >= 3 && !strcmp(argv[1], "gen"))
        return gen(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "cache") &&
        (!strcmp(argv[2], "hot") || !strcmp(argv[2], "cold")))
        return cache(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "maxrss"))
        return maxrss(argv + 2);
    if (argc >= 4 && !strcmp(argv[1], "embed")) {
        for (; i < argc && argv[i][0] == '-'; i++) {
            if (!strcmp(argv[i], "--read"))
                read_first = 1;
            else if (!strcmp(argv[i], "--passages"))
                passages = 1;
        }
        if (argc - i == 2)
            return embed_file(argv[i], argv[i + 1], read_first, passages);
    }
    fprintf(stderr, "usage: bench_rss gen DIR | embed [--read] [--passages] DIR FILE | "
                    "cache hot|cold FILE | maxrss CMD ARGS...\n");
    return 2;
}
