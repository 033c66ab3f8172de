/*
 * bench_json.c: json_parse (src/util/json.c, every write path) against
 * cJSON_ParseWithLength, the parser it replaced, on a big transcript.
 *
 *   bench_json [FILE] [ROUNDS]
 *
 * FILE is a JSONL transcript (one record a line); without one, a Claude
 * Code-like transcript of 20,000 records (about 30 MB: text with escapes,
 * accented letters, emoji pairs, numbers, nesting) is made in memory. Each
 * round parses every line with both parsers, in alternating order; the
 * medians of ROUNDS (default 9) rounds and their ratio are printed. Both
 * trees are walked (node count) so neither is measured without its result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "util/buf.h"
#include "util/json.h"

/* The process's CPU time: on a machine shared with other jobs, wall time
 * swings with their load, CPU time much less. */
static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static size_t count_nodes(const cJSON *v)
{
    size_t n = 1;
    for (const cJSON *c = v->child; c; c = c->next)
        n += count_nodes(c);
    return n;
}

static void make_transcript(struct buf *b, int records)
{
    static const char *words[] = { "the", "build", "fails", "on", "\\u00e9t\\u00e9", "with",
                                   "\\\"quoted\\\"", "path\\/to\\/file.c", "line\\n", "\\ud83d\\ude00",
                                   "tab\\t", "caf\\u00e9", "and", "a", "longer", "word" };
    unsigned seed = 12345;
    for (int i = 0; i < records; i++) {
        buf_printf(b, "{\"parentUuid\":\"u%d\",\"isSidechain\":false,\"userType\":\"external\","
                   "\"cwd\":\"/home/u/proj\",\"sessionId\":\"s-1\",\"version\":\"2.1.300\","
                   "\"type\":\"%s\",\"uuid\":\"u%d\",\"timestamp\":\"2026-01-01T10:%02d:%02dZ\","
                   "\"message\":{\"role\":\"%s\",\"id\":\"msg_%d\",\"usage\":{\"input_tokens\":%d,"
                   "\"output_tokens\":%d,\"cache\":[1,2.5,-3e2,null,true]},\"content\":[{\"type\":"
                   "\"text\",\"text\":\"", i - 1, i % 2 ? "assistant" : "user", i,
                   (i / 60) % 60, i % 60, i % 2 ? "assistant" : "user", i, 1000 + i, i * 7);
        int words_n = 60 + (int)(seed % 400);
        for (int w = 0; w < words_n; w++) {
            seed = seed * 1103515245u + 12345u;
            buf_adds(b, words[(seed >> 16) % (sizeof words / sizeof *words)]);
            buf_addc(b, ' ');
        }
        buf_adds(b, "\"}]}}\n");
    }
}

int main(int argc, char **argv)
{
    struct buf in = BUF_INIT;
    int rounds = argc > 2 ? atoi(argv[2]) : 9;
    if (argc > 1 && strcmp(argv[1], "-")) {
        FILE *f = fopen(argv[1], "rb");
        char chunk[65536];
        size_t k;
        if (!f) {
            perror(argv[1]);
            return 1;
        }
        while ((k = fread(chunk, 1, sizeof chunk, f)) > 0)
            buf_add(&in, chunk, k);
        fclose(f);
    } else {
        make_transcript(&in, 20000);
    }
    if (in.err || rounds < 1) {
        fprintf(stderr, "bench_json: no input\n");
        return 1;
    }
    size_t nr = (size_t)rounds;
    double *tj = calloc(nr, sizeof *tj), *tc = calloc(nr, sizeof *tc);
    double *cj = calloc(nr, sizeof *cj), *cc = calloc(nr, sizeof *cc);
    size_t lines = 0, nodes_j = 0, nodes_c = 0, failed_c = 0;
    for (int r = 0; r < rounds; r++) {
        for (int pass = 0; pass < 2; pass++) {
            int use_json = (pass + r) % 2 == 0;     /* alternate which goes first */
            size_t nodes = 0, failed = 0, n = 0;
            double t0 = os_now_ms(), c0 = cpu_ms();
            for (const char *p = in.p, *end = in.p + in.n; p < end;) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
                cJSON *v = use_json ? json_parse(p, len, NULL) : cJSON_ParseWithLength(p, len);
                if (v)
                    nodes += count_nodes(v);
                else
                    failed++;
                cJSON_Delete(v);
                n++;
                p += len + 1;
            }
            double t = os_now_ms() - t0, c = cpu_ms() - c0;
            if (use_json) {
                tj[r] = t;
                cj[r] = c;
                nodes_j = nodes;
            } else {
                tc[r] = t;
                cc[r] = c;
                nodes_c = nodes;
                failed_c = failed;
            }
            lines = n;
        }
    }
    qsort(tj, nr, sizeof *tj, cmp_double);
    qsort(tc, nr, sizeof *tc, cmp_double);
    qsort(cj, nr, sizeof *cj, cmp_double);
    qsort(cc, nr, sizeof *cc, cmp_double);
    double mj = tj[nr / 2], mc = tc[nr / 2], pj = cj[nr / 2], pc = cc[nr / 2];
    printf("bench json bytes=%zu lines=%zu rounds=%d json_parse_ms=%.1f cjson_ms=%.1f "
           "ratio=%.2f json_parse_cpu_ms=%.1f cjson_cpu_ms=%.1f cpu_ratio=%.2f "
           "nodes_json=%zu nodes_cjson=%zu cjson_failed_lines=%zu\n", in.n, lines, rounds,
           mj, mc, mj / mc, pj, pc, pj / pc, nodes_j, nodes_c, failed_c);
    printf("# json: json_parse %.1f ms, cJSON %.1f ms wall (%.2fx); CPU %.1f vs %.1f ms (%.2fx); "
           "medians of %d on %.1f MB\n", mj, mc, mj / mc, pj, pc, pj / pc, rounds,
           (double)in.n / 1e6);
    free(tj);
    free(tc);
    free(cj);
    free(cc);
    buf_release(&in);
    return 0;
}
