/*
 * bench_use.c: encoding throughput of a real model folder (USE-lite is
 * what it is for; any folder embed_load reads works) the way a backfill
 * feeds it: messages cut into pieces (vec_pieces, 448 bytes for a
 * 128-token model, at most 16 a message), embed_encode on 64 pieces per
 * call (VEC_ENCODE_BATCH), at 1 and 2 threads.
 *
 * The texts are a file of NUL-separated messages (--texts; e.g. the
 * contents of a store, see bench/bench_use.sh), else 300 generated
 * messages of 5-400 words. Each round encodes every piece once; the figure
 * is the median round. The model is not in the repository: --model, else
 * $CAIRN_MODELS_DIR/use-lite-en, else ~/.cairn/models/use-lite-en; a
 * missing folder is a skip (exit 0 with a note).
 *
 * Its baseline is another build of this same file (on an older
 * libcairn), run alternately by bench/bench_use.sh.
 *
 * Output, one line per thread count:
 *   bench=use threads=1 pieces=.. rounds=.. ms_median=.. texts_per_s=..
 *
 * usage: bench_use [--model DIR] [--texts FILE] [--threads N] [--rounds N]
 *                  [--first N] [--queries FILE [--vectors OUT]]
 *   --first N  instead: a fresh process's load + first query (issue 22),
 *              N rounds of three child processes in turn, each loading
 *              the model and encoding one 11-word question at 1 thread:
 *              f32, int8 quantising at its first pass (CAIRN_PACK_CACHE=0)
 *              and int8 mapping the int8 file (packcache.c; one child
 *              writes it first). Lines (medians; cpu_ms is the child's
 *              user+sys, all its threads; max_diff the largest difference
 *              of a vector component from the file=off int8 vector):
 *     bench=use_first path=f32|int8|int8_file load_ms=.. query_ms=..
 *     cpu_ms=.. query_cpu_ms=.. max_diff=..
 *   (query_cpu_ms: the process's CPU during the query alone)
 *   --queries FILE  instead: one short question's encode (issue 16,
 *              enc55), each line of FILE a question, each in a fresh
 *              child process at 1 thread: the model's load, the first
 *              encode (packing included, as in the prompt hook) and three
 *              more of the same text (warm); CPU is the encoding thread's.
 *              Medians over the lines:
 *     bench=use_query texts=.. load_cpu_ms=.. first_cpu_ms=.. first_ms=..
 *     first_faults=.. warm_cpu_ms=.. same_warm=..
 *   (same_warm: lines whose warm vectors have the first one's bits)
 *   --vectors OUT  with --queries: every first vector's floats to OUT, in
 *              line order, for cmp against another build's
 */
#include "embed/embed.h"
#include "store/vectors.h"
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIECE_BYTES 448       /* vec_model_piece_bytes at 128 tokens */
#define MAX_PIECES  16
#define PER_CALL    64

static unsigned long long rng = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* n messages of 5-400 words from a small vocabulary, NUL-separated. */
static char *gen_texts(int n, size_t *len)
{
    static const char *const words[] = {
        "the", "memory", "store", "keeps", "every", "session", "and", "a", "query",
        "returns", "messages", "ranked", "by", "their", "score", "we", "should", "fix",
        "build", "test", "fails", "because", "pointer", "is", "null", "after", "free",
        "function", "returns", "error", "code", "when", "file", "missing", "user",
        "asked", "about", "deploy", "server", "config", "timeout", "retry", "cache" };
    size_t cap = (size_t)n * 400 * 12 + 1, o = 0;
    char *s = malloc(cap);
    int i, w;

    if (!s)
        return NULL;
    for (i = 0; i < n; i++) {
        int nw = 5 + (int)rnd(396);
        for (w = 0; w < nw; w++)
            o += (size_t)sprintf(s + o, "%s%s", w ? (rnd(12) ? " " : ". ") : "",
                                 words[rnd(sizeof(words) / sizeof(*words))]);
        s[o++] = 0;
    }
    *len = o;
    return s;
}

static char *read_texts(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;

    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
        !(s = malloc((size_t)n + 1)) || fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    } else {
        s[n] = 0;
        *len = (size_t)n + (n > 0 && s[n - 1] != 0);
    }
    if (f)
        fclose(f);
    return s;
}

/* User + system CPU of the process so far, all its threads. */
static double process_cpu_ms(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

#define FIRST_VALS (4 + 512)   /* load ms, query ms, CPU ms, query CPU ms, the vector */

/* One child process: load dir with path 0 f32, 1 int8 without the file,
 * 2 int8 with it, encode one question; v gets FIRST_VALS values. */
static int first_child(const char *dir, int path, double *v)
{
    int fds[2], st, ok;
    pid_t pid;

    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        const char *q = "what did we decide about the retry timeout on the deploy server";
        double r[FIRST_VALS] = { 0 }, t0, c0;
        float out[512];
        char err[256];
        struct embed_model *m;
        int i;

        close(fds[0]);
        setenv("CAIRN_EMBED_INT8", path ? "1" : "0", 1);
        setenv("CAIRN_PACK_CACHE", path == 2 ? "1" : "0", 1);
        t0 = os_now_ms();
        if (!(m = embed_load(dir, err, sizeof(err))) || embed_dim(m) > 512)
            _exit(1);
        r[0] = os_now_ms() - t0;
        t0 = os_now_ms();
        c0 = process_cpu_ms();
        if (embed_encode(m, &q, 1, 1, out) != 0)
            _exit(1);
        r[1] = os_now_ms() - t0;
        r[2] = process_cpu_ms();
        r[3] = r[2] - c0;
        for (i = 0; i < embed_dim(m); i++)
            r[4 + i] = out[i];
        if (write(fds[1], r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    ok = read(fds[0], v, FIRST_VALS * sizeof(double)) == (ssize_t)(FIRST_VALS * sizeof(double));
    close(fds[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !ok)
        return -1;
    return 0;
}

/* This thread's CPU time in ms, and the process's page faults. */
static double thread_cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double faults_now(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_minflt + ru.ru_majflt);
}

#define Q_VALS (7 + 512)   /* load, first, first wall, faults, warm CPU ms, same, dim, the vector */

/* One question in a child process: v gets Q_VALS values. */
static int query_child(const char *dir, const char *q, double *v)
{
    int fds[2], st, ok;
    pid_t pid;

    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        static double r[Q_VALS];
        float out[512], again[512];
        double c0, t0, f0, warm[3];
        char err[256];
        struct embed_model *m;
        int i, same = 1;

        close(fds[0]);
        c0 = thread_cpu_ms();
        if (!(m = embed_load(dir, err, sizeof(err))) || embed_dim(m) > 512)
            _exit(1);
        r[0] = thread_cpu_ms() - c0;
        embed_set_threads(m, 1);
        f0 = faults_now();
        t0 = os_now_ms();
        c0 = thread_cpu_ms();
        if (embed_encode(m, &q, 1, 1, out) != 0)
            _exit(1);
        r[1] = thread_cpu_ms() - c0;
        r[2] = os_now_ms() - t0;
        r[3] = faults_now() - f0;
        for (i = 0; i < 3; i++) {
            c0 = thread_cpu_ms();
            if (embed_encode(m, &q, 1, 1, again) != 0)
                _exit(1);
            warm[i] = thread_cpu_ms() - c0;
            same &= memcmp(out, again, (size_t)embed_dim(m) * sizeof(float)) == 0;
        }
        r[4] = bench_median(warm, 3);
        r[5] = same;
        r[6] = embed_dim(m);
        for (i = 0; i < embed_dim(m); i++)
            r[7 + i] = out[i];
        if (write(fds[1], r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    ok = read(fds[0], v, Q_VALS * sizeof(double)) == (ssize_t)(Q_VALS * sizeof(double));
    close(fds[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !ok)
        return -1;
    return 0;
}

/* 1 if dir holds a model folder, else a skip note. */
static int use_model_there(const char *dir)
{
    char path[4200];

    snprintf(path, sizeof(path), "%s/model.json", dir);
    if (access(path, R_OK) == 0)
        return 1;
    printf("# bench_use: skipped, no model at %s\n", dir);
    return 0;
}

static int query_runs(const char *dir, const char *file, const char *vecs)
{
    FILE *f = fopen(file, "r"), *vo = NULL;
    double *col[5] = { NULL }, v[Q_VALS];
    char line[4096];
    int n = 0, cap = 0, same = 0, k, rc = -1;

    if (!f || (vecs && !(vo = fopen(vecs, "wb")))) {
        fprintf(stderr, "bench_use: cannot open %s\n", f ? vecs : file);
        goto out;
    }
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        if (!line[0])
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            for (k = 0; k < 5; k++)
                if (!(col[k] = realloc(col[k], (size_t)cap * sizeof(double))))
                    goto out;
        }
        if (query_child(dir, line, v) != 0) {
            fprintf(stderr, "bench_use: a child failed\n");
            goto out;
        }
        for (k = 0; k < 5; k++)
            col[k][n] = v[k];
        same += v[5] != 0;
        for (k = 0; vo && k < (int)v[6]; k++) {
            float x = (float)v[7 + k];
            fwrite(&x, sizeof x, 1, vo);
        }
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "bench_use: no questions in %s\n", file);
        goto out;
    }
    printf("bench=use_query texts=%d load_cpu_ms=%.3f first_cpu_ms=%.3f first_ms=%.3f "
           "first_faults=%.0f warm_cpu_ms=%.3f same_warm=%d\n", n, bench_median(col[0], n),
           bench_median(col[1], n), bench_median(col[2], n), bench_median(col[3], n),
           bench_median(col[4], n), same);
    rc = 0;
out:
    for (k = 0; k < 5; k++)
        free(col[k]);
    if (f)
        fclose(f);
    if (vo && fclose(vo) != 0)
        rc = -1;
    return rc;
}

static int first_runs(const char *dir, int rounds)
{
    static const char *const name[3] = { "f32", "int8", "int8_file" };
    double v[3][4][64], w[FIRST_VALS], ref[FIRST_VALS], diff[3] = { 0 };
    char path[4200];
    int r, p, k, i;

    snprintf(path, sizeof(path), "%s/.cairn-packed/q8.bin", dir);
    unlink(path);
    if (first_child(dir, 0, w) != 0 || first_child(dir, 1, ref) != 0 ||   /* page cache warm */
        first_child(dir, 2, w) != 0) {                                   /* writes the file */
        fprintf(stderr, "bench_use: a child failed\n");
        return -1;
    }
    printf("bench=use_first path=int8_file_write load_ms=%.2f query_ms=%.2f cpu_ms=%.2f\n",
           w[0], w[1], w[2]);
    for (r = 0; r < rounds; r++)
        for (p = 0; p < 3; p++) {
            if (first_child(dir, p, w) != 0) {
                fprintf(stderr, "bench_use: a child failed\n");
                return -1;
            }
            for (k = 0; k < 4; k++)
                v[p][k][r] = w[k];
            for (i = 4; i < FIRST_VALS; i++)
                diff[p] = fmax(diff[p], fabs(w[i] - ref[i]));
        }
    for (p = 0; p < 3; p++)
        printf("bench=use_first path=%s rounds=%d load_ms=%.2f query_ms=%.2f cpu_ms=%.2f "
               "query_cpu_ms=%.2f max_diff=%.3g\n", name[p], rounds,
               bench_median(v[p][0], rounds), bench_median(v[p][1], rounds),
               bench_median(v[p][2], rounds), bench_median(v[p][3], rounds), diff[p]);
    return 0;
}

int main(int argc, char **argv)
{
    const char *model = NULL, *texts = NULL, *home = getenv("HOME"), *queries = NULL;
    const char *vecs = NULL;
    const char *md = getenv("CAIRN_MODELS_DIR");
    char dir[4096], err[256];
    int i, t, r, t_lo = 1, t_hi = 2, rounds = 5, dim, first = 0;
    size_t len = 0, o, np = 0, cap = 0;
    char *buf, **piece = NULL;
    struct embed_model *m;
    float *out;
    double ms[64];

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model = argv[++i];
        else if (strcmp(argv[i], "--texts") == 0 && i + 1 < argc)
            texts = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            t_lo = t_hi = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
            first = atoi(argv[++i]);
        else if (strcmp(argv[i], "--queries") == 0 && i + 1 < argc)
            queries = argv[++i];
        else if (strcmp(argv[i], "--vectors") == 0 && i + 1 < argc)
            vecs = argv[++i];
        else {
            fprintf(stderr, "usage: bench_use [--model DIR] [--texts FILE] [--threads N] "
                            "[--rounds N] [--first N] [--queries FILE [--vectors OUT]]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 64 || t_lo < 1 || first < 0 || first > 64) {
        fprintf(stderr, "bench_use: --rounds and --first 1..64, --threads >= 1\n");
        return 2;
    }
    if (!model) {
        snprintf(dir, sizeof(dir), "%s/use-lite-en", md ? md : "");
        if (!md)
            snprintf(dir, sizeof(dir), "%s/.cairn/models/use-lite-en", home ? home : ".");
        model = dir;
    }
    if (queries) {   /* the children load it: this process stays small */
        if (!use_model_there(model))
            return 0;
        return query_runs(model, queries, vecs) != 0;
    }
    m = embed_load(model, err, sizeof(err));
    if (!m) {
        printf("# bench_use: skipped, no model at %s (%s)\n", model, err);
        return 0;
    }
    if (first) {
        embed_free(m);
        return first_runs(model, first) != 0;
    }

    buf = texts ? read_texts(texts, &len) : gen_texts(300, &len);
    if (!buf) {
        fprintf(stderr, "bench_use: cannot read %s\n", texts ? texts : "(generated)");
        return 1;
    }
    /* the backfill's pieces */
    for (o = 0; o < len; o += strlen(buf + o) + 1) {
        size_t off[MAX_PIECES], pl[MAX_PIECES];
        int k, n = vec_pieces(buf + o, strlen(buf + o), PIECE_BYTES, off, pl, MAX_PIECES);
        for (k = 0; k < n; k++) {
            if (np == cap) {
                cap = cap ? cap * 2 : 1024;
                piece = realloc(piece, cap * sizeof(*piece));
                if (!piece)
                    return 1;
            }
            piece[np] = malloc(pl[k] + 1);
            if (!piece[np])
                return 1;
            memcpy(piece[np], buf + o + off[k], pl[k]);
            piece[np++][pl[k]] = 0;
        }
    }
    dim = embed_dim(m);
    out = malloc((size_t)PER_CALL * dim * sizeof(*out));
    if (!out || np == 0)
        return 1;
    for (t = t_lo; t <= t_hi; t++) {
        embed_set_threads(m, t);
        for (r = 0; r < rounds; r++) {
            double t0 = os_now_ms();
            for (o = 0; o < np; o += PER_CALL) {
                size_t n = np - o < PER_CALL ? np - o : PER_CALL;
                if (embed_encode(m, (const char *const *)piece + o, n, 0, out) != 0) {
                    fprintf(stderr, "bench_use: %s\n", embed_errmsg(m));
                    return 1;
                }
            }
            ms[r] = os_now_ms() - t0;
        }
        qsort(ms, (size_t)rounds, sizeof(*ms), cmp_double);
        printf("bench=use threads=%d pieces=%zu rounds=%d ms_median=%.1f texts_per_s=%.1f\n",
               t, np, rounds, ms[rounds / 2], np / (ms[rounds / 2] / 1e3));
        fflush(stdout);
    }
    embed_free(m);
    return 0;
}
