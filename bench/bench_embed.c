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
 *   cpu_ms_p50=..
 * cpu_ms_p50 is the calling thread's CPU time per pass (bench_cpu_ms): at
 * 1 thread, on a machine busy with other jobs, a steadier measure of the
 * code than the wall time (it leaves out the time the thread waited for a
 * core); at 2 threads it leaves out the pool's other thread.
 *
 * usage: bench_embed [--layers N] [--quick] [--threads N] [--only query|batch]
 *   --threads N  only that thread count (default: 1, then 2)
 *   --only       only the query (1 x 20) or the batch (32 x 128) shape
 */
#include "embed/embed.h"
#include "embed/kernels.h"
#include "bench.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static int run(struct embed_model *m, int layers, int threads, int batch, int seq,
               int reps)
{
    int32_t *ids = malloc((size_t)batch * seq * sizeof(*ids));
    int *lens = malloc((size_t)batch * sizeof(*lens));
    float *out = malloc((size_t)batch * H * sizeof(*out));
    double *ms = malloc((size_t)reps * sizeof(*ms)), *cpu = malloc((size_t)reps * sizeof(*cpu));
    double med, flop;
    int i, r, rc = 0;

    for (i = 0; i < batch * seq; i++)
        ids[i] = 5 + (int32_t)(urand() * 29995);
    for (i = 0; i < batch; i++)
        lens[i] = seq;
    embed_set_threads(m, threads);
    embed_forward_ids(m, ids, lens, batch, seq, out);      /* warm-up */
    for (r = 0; r < reps; r++) {
        double t0 = os_now_ms(), c0 = bench_cpu_ms();
        if (embed_forward_ids(m, ids, lens, batch, seq, out) != 0)
            rc = -1;
        ms[r] = os_now_ms() - t0;
        cpu[r] = bench_cpu_ms() - c0;
    }
    qsort(ms, (size_t)reps, sizeof(*ms), cmp_double);
    med = ms[reps / 2];
    /* FLOPs per token: dense 8H^2 + 4HI per layer, attention 4*seq*H. */
    flop = (double)batch * seq * layers *
           (8.0 * H * H + 4.0 * H * INTER + 4.0 * seq * H);
    printf("bench=embed model=L%d threads=%d batch=%d seq=%d reps=%d ms_p50=%.3f "
           "ms_p90=%.3f tokens_per_s=%.0f gflops=%.1f cpu_ms_p50=%.3f\n", layers, threads,
           batch, seq, reps, med, ms[(reps * 9) / 10], batch * seq / (med / 1e3),
           flop / (med / 1e3) / 1e9, bench_median(cpu, reps));
    free(ids); free(lens); free(out); free(ms); free(cpu);
    return rc;
}

int main(int argc, char **argv)
{
    char dir[] = "/tmp/cairn_bench_embed_XXXXXX", err[256], path[600];
    int layers = 12, quick = 0, i, threads, rc = 0, t_lo = 1, t_hi = 2;
    int do_query = 1, do_batch = 1;
    struct embed_model *m;
    double t0;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--layers") == 0 && i + 1 < argc)
            layers = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            t_lo = t_hi = (int)strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            i++;
            do_query = strcmp(argv[i], "query") == 0;
            do_batch = strcmp(argv[i], "batch") == 0;
        }
    }
    if (layers < 1 || layers > 48 || !mkdtemp(dir)) {
        fprintf(stderr, "usage: bench_embed [--layers N] [--quick] [--threads N] "
                "[--only query|batch]\n");
        return 2;
    }
    if (write_model(dir, layers) != 0) {
        fprintf(stderr, "bench_embed: cannot write the model to %s\n", dir);
        return 1;
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
    snprintf(path, sizeof(path), "%s/model.safetensors", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/config.json", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/tokenizer.json", dir);
    unlink(path);
    rmdir(dir);
    return rc;
}
