/*
 * bench_redact.c: secret masking throughput (redact_text), the cost every
 * stored message pays.
 *
 * Inputs, made in memory from the false-positive corpus (prose, code,
 * lockfiles, hashes: tests/data/redact-clean.txt, or argv[1]) repeated to
 * 16 MB: "clean" as it is, and "secrets" with one generated secret of a
 * known shape inserted every 4 KB; masked as messages of up to 2,000 bytes
 * cut at line ends, into one reused buffer, as the write path does. The
 * baseline in the same run is a plain copy of the same messages: what any
 * write path pays anyway. It needs only src/mask/redact.c and the
 * buffer code, whose interface has not changed, so bench/bench_redact.sh
 * builds it against an older redact.c too and runs the two in turn.
 *
 * usage: bench_redact [CORPUS] [ROUNDS]
 * prints: bench redact.<input> mb=.. msgs=.. masked=.. p50_mbps=.. (wall)
 *         cpu_p50_mbps=.. (this thread's CPU time) copy_p50_mbps=..
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mask/redact.h"
#include "util/buf.h"

#define TARGET (16u << 20)

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = sz > 0 ? malloc((size_t)sz) : NULL;
    if (p && fread(p, 1, (size_t)sz, f) != (size_t)sz) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *n = p ? (size_t)sz : 0;
    return p;
}

/* The corpus repeated to TARGET bytes; with `every`, a secret inserted
 * every `every` bytes (at a line start). */
static char *build(const char *corpus, size_t cn, size_t every, size_t *out_n)
{
    static const char *const secret[] = {
        "OPENAI_API_KEY=sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAB7CD\n",
        "token: ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8\n",
        "Authorization: Bearer abcdEFGH1234ijklMNOP5678qrst\n",
        "db: postgres://u:Pa55word9@db:5432/x\n",
        "SIGNING_KEY=9a7f3c1e5b2d4f6a8c0e1f3a5b7d9c2e\n",
        "key AKIAIOSFODNN7QWERTY2 and SKce57f8e017b2f03777d160f6794f13d7\n",
    };
    size_t cap = TARGET + TARGET / 16 + cn, n = 0, next = every, k = 0;
    char *p = malloc(cap);
    if (!p)
        return NULL;
    while (n < TARGET) {
        const char *c = corpus, *e = corpus + cn;
        while (c < e && n < TARGET) {
            const char *nl = memchr(c, '\n', (size_t)(e - c));
            size_t len = nl ? (size_t)(nl - c) + 1 : (size_t)(e - c);
            memcpy(p + n, c, len);
            n += len;
            c += len;
            if (every && n >= next) {
                size_t sl = strlen(secret[k % 6]);
                memcpy(p + n, secret[k++ % 6], sl);
                n += sl;
                next += every;
            }
        }
    }
    *out_n = n;
    return p;
}

/* Messages of at most MSG bytes, cut at line ends: the write path masks
 * one message at a time, into a buffer it reuses. */
#define MSG 2000

static size_t msg_len(const char *p, size_t left)
{
    if (left <= MSG)
        return left;
    const char *nl = memrchr(p, '\n', MSG);
    return nl ? (size_t)(nl - p) + 1 : MSG;
}

static int run(const char *name, const char *text, size_t n, int rounds)
{
    double *t = calloc((size_t)rounds, sizeof *t), *c = calloc((size_t)rounds, sizeof *c);
    double *u = calloc((size_t)rounds, sizeof *u);
    char *dst = malloc(MSG + 1);
    struct buf out = BUF_INIT;
    size_t masked = 0, msgs = 0;
    int rc = 1;
    if (!t || !c || !u || !dst)
        goto out;
    for (int r = 0; r < rounds; r++) {
        struct cairn_redact_report rep;
        memset(&rep, 0, sizeof rep);
        masked = msgs = 0;
        double a = os_now_ms(), ua = bench_cpu_ms();
        for (size_t off = 0, m; off < n; off += m, msgs++) {
            m = msg_len(text + off, n - off);
            buf_reset(&out);
            int k = redact_text(text + off, m, &out, &rep);
            if (k < 0)
                goto out;
            masked += (size_t)k;
        }
        t[r] = os_now_ms() - a;
        u[r] = bench_cpu_ms() - ua;
        a = os_now_ms();
        for (size_t off = 0, m; off < n; off += m) {
            m = msg_len(text + off, n - off);
            memcpy(dst, text + off, m);
            dst[m] = dst[m / 2];   /* keep the copy */
        }
        c[r] = os_now_ms() - a;
    }
    double mb = (double)n / 1e6;
    printf("bench redact.%s mb=%.1f msgs=%zu masked=%zu p50_mbps=%.1f cpu_p50_mbps=%.1f "
           "copy_p50_mbps=%.1f\n", name, mb, msgs, masked, mb / (bench_median(t, rounds) / 1e3),
           mb / (bench_median(u, rounds) / 1e3), mb / (bench_median(c, rounds) / 1e3));
    rc = 0;
out:
    free(t);
    free(c);
    free(u);
    free(dst);
    buf_release(&out);
    return rc;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "tests/data/redact-clean.txt";
    int rounds = argc > 2 ? atoi(argv[2]) : 7;
    size_t cn, n1, n2;
    char *corpus = slurp(path, &cn);
    if (!corpus || rounds < 1) {
        fprintf(stderr, "usage: bench_redact [CORPUS] [ROUNDS]\n");
        return 2;
    }
    char *clean = build(corpus, cn, 0, &n1), *dirty = build(corpus, cn, 4096, &n2);
    if (!clean || !dirty)
        return 1;
    int rc = run("clean", clean, n1, rounds) || run("secrets", dirty, n2, rounds);
    free(corpus);
    free(clean);
    free(dirty);
    return rc;
}
