/*
 * bench_tokcount.c: the budget token counter (text_count_tokens) and the
 * budget cut (text_prefix_within), which every packed recall runs over
 * each candidate text.
 *
 * Input, made in memory: 32 MB of made-up lines in the scripts users
 * write in (English prose, C code, accented Latin, Cyrillic, Japanese,
 * Korean, Chinese), cut into messages of up to 2,000 bytes at line ends.
 * It needs only src/text/tokcount.c and the UTF-8 decoder, so
 * bench/bench_tokcount.sh builds it against an older tokcount.c too and
 * runs the two in turn.
 *
 * usage: bench_tokcount [ROUNDS]
 * prints: bench tokcount mb=.. tokens=.. count_p50_mbps=.. (CPU time of
 *         this thread) prefix_p50_mbps=.. (a cut at half of each message)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "text/tokcount.h"

#define TARGET (32u << 20)
#define MSG_MAX 2000

static const char *const lines[] = {
    "The meeting moved to Thursday, so I booked the 10:30 train instead.\n",
    "    if (rc != SQLITE_OK) { goto out; }  // retry later\n",
    "for (size_t i = 0; i < n; i++) total += cost[i] * 3;\n",
    "Le défilé d'été a été reporté à jeudi à cause de l'orage prévu.\n",
    "Die Größe der Datei überschreitet das erlaubte Maß für Übertragungen.\n",
    "Zażółć gęślą jaźń, powiedział programista, sprawdzając kodowanie.\n",
    "Сегодня вечером мы проверим новую версию программы на сервере.\n",
    "明日の会議は午後三時からです。資料を事前に確認してください。\n",
    "내일 회의는 오후 세 시에 시작합니다. 자료를 미리 확인해 주세요.\n",
    "我上周去了北京开会，顺便见了老朋友。\n",
};

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 5;
    size_t n = 0, nl = sizeof lines / sizeof lines[0], k = 0, *cut = NULL, ncut = 0;
    int *half = NULL;
    char *text = malloc(TARGET);
    double *c = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *c);
    double *p = calloc((size_t)(rounds > 0 ? rounds : 1), sizeof *p);
    int rc = 1;

    if (rounds < 1 || !text || !c || !p)
        goto out;
    /* the lines in a fixed, uneven order: runs of one script, then others */
    while (n < TARGET) {
        const char *l = lines[(k * 7 + k / 3) % nl];
        size_t len = strlen(l);
        if (n + len > TARGET)
            break;
        memcpy(text + n, l, len);
        n += len;
        k++;
    }
    /* messages of up to MSG_MAX bytes, ending at a line end */
    cut = malloc((n / 64 + 2) * sizeof *cut);
    half = malloc((n / 64 + 2) * sizeof *half);
    if (!cut || !half)
        goto out;
    for (size_t a = 0; a < n;) {
        size_t b = a + MSG_MAX < n ? a + MSG_MAX : n;
        while (b > a + 1 && b < n && text[b - 1] != '\n')
            b--;
        cut[ncut] = b;
        half[ncut++] = text_count_tokens(text + a, b - a) / 2;
        a = b;
    }
    long long tokens = 0;
    size_t kept = 0;
    for (int r = 0; r < rounds; r++) {
        double t0 = bench_cpu_ms();
        tokens = 0;
        for (size_t i = 0, a = 0; i < ncut; a = cut[i++])
            tokens += text_count_tokens(text + a, cut[i] - a);
        c[r] = bench_cpu_ms() - t0;
        t0 = bench_cpu_ms();
        kept = 0;
        for (size_t i = 0, a = 0; i < ncut; a = cut[i++])
            kept += text_prefix_within(text + a, cut[i] - a, half[i]);
        p[r] = bench_cpu_ms() - t0;
    }
    double mb = (double)n / 1e6;
    printf("bench tokcount mb=%.1f msgs=%zu tokens=%lld kept=%zu count_p50_mbps=%.0f "
           "prefix_p50_mbps=%.0f\n", mb, ncut, tokens, kept, mb / (bench_median(c, rounds) / 1e3),
           mb / (bench_median(p, rounds) / 1e3));
    rc = 0;
out:
    free(text);
    free(cut);
    free(half);
    free(c);
    free(p);
    return rc;
}
