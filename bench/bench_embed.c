/*
 * bench_embed.c: forward-pass throughput of cairn's encoder on a random
 * L12-shaped BERT (12 layers, hidden 384, 12 heads, intermediate 1536,
 * vocab 30522; F32), the shape of the anchors in docs perf-anchors §2.
 *
 * It writes the model (config.json, model.safetensors, a stub
 * tokenizer.json) to a temporary folder, loads it with embed_load, and
 * times embed_forward_ids on random ids in [5, 30000) at batch 1 x 20
 * tokens (a query: p50 over 200 runs) and 32 x 128 (a bulk batch: median of
 * 5), with 1 and 2 threads. The first line names the SIMD level in use
 * (CAIRN_SIMD=avx2 caps it, see kernels.h) and the CPU's. The baseline measured in the same run
 * is one cblas_sgemm at the FFN shape 4096x1536x384 (B^T), so the
 * encoder's GFLOP/s can be read as a share of what BLAS gives here.
 *
 * Output: one line per measurement, key=value, machine-readable:
 *   bench=embed model=L12 threads=1 batch=1 seq=20 ms_p50=.. tokens_per_s=.. gflops=..
 *   cpu_ms_p50=.. proc_cpu_ms_p50=.. faults_p50=..
 * cpu_ms_p50 is the calling thread's CPU time per pass (bench_cpu_ms): at
 * 1 thread, on a machine busy with other jobs, a steadier measure of the
 * code than the wall time (it leaves out the time the thread waited for a
 * core); at 2 threads it leaves out the pool's other thread.
 * proc_cpu_ms_p50 is the whole process's CPU time per pass (every
 * thread's), faults_p50 its minor page faults per pass.
 *
 * usage: bench_embed [--layers N] [--quick] [--threads N] [--only query|batch]
 *                    [--first N]
 *   --threads N  only that thread count (default: 1, then 2)
 *   --only       only the query (1 x 20) or the batch (32 x 128) shape
 *   --first N    instead: the first query of a process (issue 22), N
 *                rounds of fresh child processes that load the model and
 *                run one 1 x 20 pass, taking turns with the pre-packed
 *                file (packcache.c, CAIRN_PACK_CACHE=1) and without it;
 *                first one process that finds no file and writes it.
 *                Lines: bench=embed_first file=on|off|write threads=T
 *                load_ms=.. query_ms=.. query_cpu_ms=.. (medians; the
 *                CPU time is the calling thread's)
 */
#include "embed/embed.h"
#include "embed/kernels.h"
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define H 384
#define HEADS 12
#define INTER 1536
#define VOCAB 30522
#define MAXPOS 512

static unsigned long long rng = 88172645463325252ull;

static float urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 11) * (1.0 / 9007199254740992.0));
}

struct tensor {
    char name[128];
    long rows, cols;      /* cols 0: 1-D */
    int  kind;            /* 0 weight N(0,.02)-ish, 1 gamma (1), 2 beta/bias (0) */
};

static int write_model(const char *dir, int layers)
{
    struct tensor *ts = calloc(5 + 16 * (size_t)layers, sizeof(*ts));
    char path[512];
    size_t nt = 0, i, off = 0, hlen;
    char *hdr = malloc(1 << 20);
    FILE *f;
    int l;
    static const char *lnames[16] = {
        "attention.self.query.weight", "attention.self.query.bias",
        "attention.self.key.weight", "attention.self.key.bias",
        "attention.self.value.weight", "attention.self.value.bias",
        "attention.output.dense.weight", "attention.output.dense.bias",
        "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
        "intermediate.dense.weight", "intermediate.dense.bias",
        "output.dense.weight", "output.dense.bias",
        "output.LayerNorm.weight", "output.LayerNorm.bias" };
    static const long lshape[16][3] = {
        { H, H, 0 }, { H, 0, 2 }, { H, H, 0 }, { H, 0, 2 }, { H, H, 0 }, { H, 0, 2 },
        { H, H, 0 }, { H, 0, 2 }, { H, 0, 1 }, { H, 0, 2 }, { INTER, H, 0 },
        { INTER, 0, 2 }, { H, INTER, 0 }, { H, 0, 2 }, { H, 0, 1 }, { H, 0, 2 } };

    if (!ts || !hdr)
        return -1;
#define ADD(nm, r, c, k) do { snprintf(ts[nt].name, sizeof(ts[nt].name), "%s", nm); \
        ts[nt].rows = r; ts[nt].cols = c; ts[nt].kind = k; nt++; } while (0)
    ADD("embeddings.word_embeddings.weight", VOCAB, H, 0);
    ADD("embeddings.position_embeddings.weight", MAXPOS, H, 0);
    ADD("embeddings.token_type_embeddings.weight", 2, H, 0);
    ADD("embeddings.LayerNorm.weight", H, 0, 1);
    ADD("embeddings.LayerNorm.bias", H, 0, 2);
    for (l = 0; l < layers; l++) {
        for (i = 0; i < 16; i++) {
            char nm[128];
            snprintf(nm, sizeof(nm), "encoder.layer.%d.%s", l, lnames[i]);
            ADD(nm, lshape[i][0], lshape[i][1], (int)lshape[i][2]);
        }
    }
#undef ADD
    hlen = (size_t)snprintf(hdr, 1 << 20, "{");
    for (i = 0; i < nt; i++) {
        size_t n = (size_t)ts[i].rows * (ts[i].cols ? (size_t)ts[i].cols : 1) * 4;
        if (ts[i].cols)
            hlen += (size_t)snprintf(hdr + hlen, (1 << 20) - hlen,
                                     "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%ld,%ld],"
                                     "\"data_offsets\":[%zu,%zu]}", i ? "," : "",
                                     ts[i].name, ts[i].rows, ts[i].cols, off, off + n);
        else
            hlen += (size_t)snprintf(hdr + hlen, (1 << 20) - hlen,
                                     "%s\"%s\":{\"dtype\":\"F32\",\"shape\":[%ld],"
                                     "\"data_offsets\":[%zu,%zu]}", i ? "," : "",
                                     ts[i].name, ts[i].rows, off, off + n);
        off += n;
    }
    hlen += (size_t)snprintf(hdr + hlen, (1 << 20) - hlen, "}");
    while ((8 + hlen) % 64)
        hdr[hlen++] = ' ';
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    f = fopen(path, "wb");
    if (!f)
        return -1;
    for (i = 0; i < 8; i++)
        fputc((int)((hlen >> (8 * i)) & 0xff), f);
    fwrite(hdr, 1, hlen, f);
    for (i = 0; i < nt; i++) {
        size_t n = (size_t)ts[i].rows * (ts[i].cols ? (size_t)ts[i].cols : 1), j;
        float *v = malloc(n * sizeof(float));
        for (j = 0; j < n; j++)
            v[j] = ts[i].kind == 1 ? 1.0f : ts[i].kind == 2 ? 0.0f
                                           : (urand() * 2.0f - 1.0f) * 0.0346f;
        fwrite(v, sizeof(float), n, f);
        free(v);
    }
    fclose(f);
    snprintf(path, sizeof(path), "%s/config.json", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"model_type\":\"bert\",\"hidden_size\":%d,\"num_hidden_layers\":%d,"
            "\"num_attention_heads\":%d,\"intermediate_size\":%d,"
            "\"max_position_embeddings\":%d,\"type_vocab_size\":2,\"vocab_size\":%d,"
            "\"hidden_act\":\"gelu\",\"layer_norm_eps\":1e-12}\n",
            H, layers, HEADS, INTER, MAXPOS, VOCAB);
    fclose(f);
    snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
    f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"normalizer\":{\"type\":\"BertNormalizer\",\"lowercase\":true},"
            "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
            "\"post_processor\":{\"type\":\"BertProcessing\",\"cls\":[\"[CLS]\",2],"
            "\"sep\":[\"[SEP]\",3]},\"model\":{\"type\":\"WordPiece\","
            "\"unk_token\":\"[UNK]\",\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,\"[CLS]\":2,"
            "\"[SEP]\":3}}}\n");
    fclose(f);
    free(ts);
    free(hdr);
    return 0;
}

static double sgemm_baseline(int threads)
{
    int m = 4096, n = 1536, k = 384, reps = 0;
    float *a = calloc((size_t)m * k, 4), *b = calloc((size_t)n * k, 4);
    float *c = calloc((size_t)m * n, 4);
    double t0, t1;

    openblas_set_num_threads(threads);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a, k, b, k, 0, c, n);
    t0 = os_now_ms();
    do {
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1, a, k, b, k, 0, c, n);
        reps++;
        t1 = os_now_ms();
    } while (t1 - t0 < 300);
    free(a); free(b); free(c);
    return 2.0 * m * n * k * reps / ((t1 - t0) / 1e3) / 1e9;
}

/* The process's minor page faults so far (every thread's). */
static double minflt(void)
{
    struct rusage ru;

    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_minflt;
}

/* The whole process's CPU time in milliseconds: at 2 threads the calling
 * thread's (bench_cpu_ms) leaves out the other thread's half of a pass,
 * and any time one thread spent that the other did not. */
static double proc_cpu_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int run(struct embed_model *m, int layers, int threads, int batch, int seq,
               int reps)
{
    int32_t *ids = malloc((size_t)batch * seq * sizeof(*ids));
    int *lens = malloc((size_t)batch * sizeof(*lens));
    float *out = malloc((size_t)batch * H * sizeof(*out));
    double *ms = malloc((size_t)reps * sizeof(*ms)), *cpu = malloc((size_t)reps * sizeof(*cpu));
    double *pcpu = malloc((size_t)reps * sizeof(*pcpu)), *flt = malloc((size_t)reps * sizeof(*flt));
    double med, flop;
    int i, r, rc = 0;

    for (i = 0; i < batch * seq; i++)
        ids[i] = 5 + (int32_t)(urand() * 29995);
    for (i = 0; i < batch; i++)
        lens[i] = seq;
    embed_set_threads(m, threads);
    embed_forward_ids(m, ids, lens, batch, seq, out);      /* warm-up */
    for (r = 0; r < reps; r++) {
        double t0 = os_now_ms(), c0 = bench_cpu_ms(), p0 = proc_cpu_ms(), f0 = minflt();
        if (embed_forward_ids(m, ids, lens, batch, seq, out) != 0)
            rc = -1;
        ms[r] = os_now_ms() - t0;
        cpu[r] = bench_cpu_ms() - c0;
        pcpu[r] = proc_cpu_ms() - p0;
        flt[r] = minflt() - f0;
    }
    qsort(ms, (size_t)reps, sizeof(*ms), cmp_double);
    med = ms[reps / 2];
    /* FLOPs per token: dense 8H^2 + 4HI per layer, attention 4*seq*H. */
    flop = (double)batch * seq * layers *
           (8.0 * H * H + 4.0 * H * INTER + 4.0 * seq * H);
    printf("bench=embed model=L%d threads=%d batch=%d seq=%d reps=%d ms_p50=%.3f "
           "ms_p90=%.3f tokens_per_s=%.0f gflops=%.1f cpu_ms_p50=%.3f proc_cpu_ms_p50=%.3f "
           "faults_p50=%.0f\n", layers, threads,
           batch, seq, reps, med, ms[(reps * 9) / 10], batch * seq / (med / 1e3),
           flop / (med / 1e3) / 1e9, bench_median(cpu, reps), bench_median(pcpu, reps),
           bench_median(flt, reps));
    free(ids); free(lens); free(out); free(ms); free(cpu); free(pcpu); free(flt);
    return rc;
}

/* In a child process: CAIRN_PACK_CACHE=0 unless file, load dir, one
 * 1 x 20 pass at threads; writes load ms, query ms, query CPU ms to fd.
 * -1 if it failed. */
static int first_child(const char *dir, int file, int threads, double out[5])
{
    int fds[2], st, ok;
    pid_t pid;

    if (pipe(fds) != 0 || (pid = fork()) < 0)
        return -1;
    if (pid == 0) {
        double r[5], t0, c0, f0;
        int32_t ids[20];
        int len = 20, i;
        float v[H];
        char err[256];
        struct embed_model *m;

        close(fds[0]);
        setenv("CAIRN_PACK_CACHE", file ? "1" : "0", 1);
        for (i = 0; i < 20; i++)
            ids[i] = 5 + (int32_t)(urand() * 29995);
        t0 = os_now_ms();
        f0 = minflt();
        if (!(m = embed_load(dir, err, sizeof(err))))
            _exit(1);
        r[0] = os_now_ms() - t0;
        r[3] = minflt() - f0;
        embed_set_threads(m, threads);
        t0 = os_now_ms();
        c0 = bench_cpu_ms();
        f0 = minflt();
        if (embed_forward_ids(m, ids, &len, 1, 20, v) != 0)
            _exit(1);
        r[1] = os_now_ms() - t0;
        r[2] = bench_cpu_ms() - c0;
        r[4] = minflt() - f0;
        if (write(fds[1], r, sizeof(r)) != (ssize_t)sizeof(r))
            _exit(1);
        _exit(0);
    }
    close(fds[1]);
    ok = read(fds[0], out, 5 * sizeof(double)) == (ssize_t)(5 * sizeof(double));
    close(fds[0]);
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !ok)
        return -1;
    return 0;
}

/* The median over rounds of load + query ms. */
static double first_total(double *const *v, int rounds)
{
    double t[64];
    int r, n = rounds < 64 ? rounds : 64;

    for (r = 0; r < n; r++)
        t[r] = v[0][r] + v[1][r];
    return bench_median(t, n);
}

static void unlink_in(const char *dir, const char *name)
{
    char path[600];

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    unlink(path);
}

static void remove_packed(const char *dir)
{
    char path[600];

    unlink_in(dir, ".cairn-packed/nr16.bin");
    unlink_in(dir, ".cairn-packed/nr32.bin");
    snprintf(path, sizeof(path), "%s/.cairn-packed", dir);
    rmdir(path);
}

static int first_runs(const char *dir, int layers, int t_lo, int t_hi, int rounds)
{
    double *v[2][5], w[5];
    int threads, r, f, k;

    for (f = 0; f < 2; f++)
        for (k = 0; k < 5; k++)
            if (!(v[f][k] = malloc((size_t)rounds * sizeof(double))))
                return -1;
    printf("bench=embed_first model=L%d simd=%s cpu_simd=%s rounds=%d\n", layers,
           embed_k_simd_name(embed_k_simd()), embed_k_simd_name(embed_k_simd_cpu()), rounds);
    for (threads = t_lo; threads <= t_hi; threads++) {
        remove_packed(dir);
        first_child(dir, 0, threads, w);            /* the page cache warm for both */
        if (first_child(dir, 1, threads, w) != 0)   /* no file yet: packs and writes it */
            return -1;
        printf("bench=embed_first file=write threads=%d load_ms=%.2f query_ms=%.2f "
               "query_cpu_ms=%.2f load_faults=%.0f query_faults=%.0f\n", threads, w[0], w[1],
               w[2], w[3], w[4]);
        for (r = 0; r < rounds; r++)
            for (f = 0; f < 2; f++) {
                if (first_child(dir, f, threads, w) != 0)
                    return -1;
                for (k = 0; k < 5; k++)
                    v[f][k][r] = w[k];
            }
        for (f = 1; f >= 0; f--)
            printf("bench=embed_first file=%s threads=%d load_ms=%.2f query_ms=%.2f "
                   "query_cpu_ms=%.2f load_faults=%.0f query_faults=%.0f total_ms=%.2f\n",
                   f ? "on" : "off", threads, bench_median(v[f][0], rounds),
                   bench_median(v[f][1], rounds), bench_median(v[f][2], rounds),
                   bench_median(v[f][3], rounds), bench_median(v[f][4], rounds),
                   first_total(v[f], rounds));
    }
    for (f = 0; f < 2; f++)
        for (k = 0; k < 5; k++)
            free(v[f][k]);
    return 0;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/cairn_bench_embed_XXXXXX", err[256];
    int layers = 12, quick = 0, i, threads, rc = 0, t_lo = 1, t_hi = 2;
    int do_query = 1, do_batch = 1, first = 0;
    struct embed_model *m;
    double t0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--layers") == 0 && i + 1 < argc)
            layers = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            t_lo = t_hi = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--first") == 0 && i + 1 < argc)
            first = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            i++;
            do_query = strcmp(argv[i], "query") == 0;
            do_batch = strcmp(argv[i], "batch") == 0;
        }
    }
    if (layers < 1 || layers > 48 || !mkdtemp(dir)) {
        fprintf(stderr, "usage: bench_embed [--layers N] [--quick] [--threads N] "
                "[--only query|batch] [--first N]\n");
        return 2;
    }
    if (write_model(dir, layers) != 0) {
        fprintf(stderr, "bench_embed: cannot write the model to %s\n", dir);
        return 1;
    }
    if (first > 0) {
        rc = first_runs(dir, layers, t_lo, t_hi, first) != 0;
        goto out;
    }
    t0 = os_now_ms();
    m = embed_load(dir, err, sizeof(err));
    if (!m) {
        fprintf(stderr, "bench_embed: %s\n", err);
        rc = 1;
        goto out;
    }
    printf("bench=embed model=L%d load_ms=%.1f simd=%s cpu_simd=%s\n", layers,
           os_now_ms() - t0, embed_k_simd_name(embed_k_simd()),
           embed_k_simd_name(embed_k_simd_cpu()));
    for (threads = t_lo; threads <= t_hi; threads++) {
        printf("bench=sgemm_baseline threads=%d shape=4096x1536x384 gflops=%.1f\n",
               threads, sgemm_baseline(threads));
        if ((do_query && run(m, layers, threads, 1, 20, quick ? 20 : 200) != 0) ||
            (do_batch && run(m, layers, threads, 32, 128, quick ? 1 : 5) != 0))
            rc = 1;
    }
    embed_free(m);
out:
    remove_packed(dir);   /* --first's, or the warm-up's with CAIRN_PACK_CACHE=1 */
    unlink_in(dir, "model.safetensors");
    unlink_in(dir, "config.json");
    unlink_in(dir, "tokenizer.json");
    rmdir(dir);
    return rc;
}
