/*
 * bench_cold.c: a whole `cairn recall` process, as a hook runs it:
 * fork, exec, open the store, recall, print, exit. Baselines in the same
 * run: /bin/true (the process floor) and, if the sqlite3 CLI is on PATH,
 * `sqlite3 STORE "select count(*) from messages"` (a process that opens
 * the same file and runs one query).
 *
 * Each run is fork to wait4, with the child's stdout drained through a
 * pipe (as a hook's caller reads it) and stderr left alone. After 5
 * untimed warm-up runs of each command, the three commands take turns for
 * N rounds (default 50), so noise on this shared machine hits them alike.
 * cairn gets a different question each round (the file's first N, then
 * round again), with --budget 1000 and a fixed --now. Peak RSS is each
 * child's ru_maxrss from wait4 (per child; RUSAGE_CHILDREN would give the
 * maximum over all children of this process); CPU is its user + system
 * time.
 *
 * Output: `bench <name> key=value ...` lines, then a short human summary.
 *
 * usage: bench_cold CAIRN STORE QUESTIONS [--runs N] [--now DATE]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define MAX_RUNS 1000
#define WARMUP 5
#define N_CMDS 3

/* Nearest-rank percentile of v (sorted in place). */
static double pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int k = (int)(p / 100.0 * n + 0.999999) - 1;
    return v[k < 0 ? 0 : k];
}

struct run {
    double ms, cpu_ms;
    long maxrss_kb;
    long out_bytes;
    int status;
};

/* Runs argv with stdout drained through a pipe; wall time is fork to
 * reaping. */
static int spawn(char *const argv[], struct run *r)
{
    int fd[2], st = 0;
    struct rusage ru;

    memset(r, 0, sizeof *r);
    if (pipe(fd))
        return -1;
    fflush(NULL);
    double t0 = os_now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        close(fd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    for (;;) {
        char buf[16384];
        ssize_t k = read(fd[0], buf, sizeof buf);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        r->out_bytes += k;
    }
    close(fd[0]);
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR)
            return -1;
    }
    r->ms = os_now_ms() - t0;
    r->cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    r->maxrss_kb = ru.ru_maxrss;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

/* The first executable `name` on PATH into out, or 0 if none. */
static int find_on_path(const char *name, char *out, size_t cap)
{
    const char *path = getenv("PATH");

    while (path && *path) {
        const char *e = strchr(path, ':');
        size_t n = e ? (size_t)(e - path) : strlen(path);
        if (n && n + strlen(name) + 2 <= cap) {
            snprintf(out, cap, "%.*s/%s", (int)n, path, name);
            if (access(out, X_OK) == 0)
                return 1;
        }
        path = e ? e + 1 : NULL;
    }
    return 0;
}

static char **read_lines(const char *path, int max, int *n)
{
    FILE *f = fopen(path, "r");
    char **v = NULL, *line = NULL;
    size_t cap = 0;
    ssize_t k;

    *n = 0;
    if (!f)
        return NULL;
    v = calloc((size_t)max, sizeof *v);
    while (v && *n < max && (k = getline(&line, &cap, f)) >= 0) {
        while (k > 0 && (line[k - 1] == '\n' || line[k - 1] == '\r'))
            line[--k] = '\0';
        if (k > 0 && !(v[*n] = strdup(line)))
            break;
        if (k > 0)
            (*n)++;
    }
    free(line);
    fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    int runs = 50, nq = 0;
    const char *now = "2024-01-01T00:00:00";
    char sqlite_bin[4096];
    static const char *const names[N_CMDS] = { "cairn_recall", "true", "sqlite3_count" };

    if (argc < 4) {
        fprintf(stderr, "usage: bench_cold CAIRN STORE QUESTIONS [--runs N] [--now DATE]\n");
        return 2;
    }
    for (int i = 4; i + 1 < argc; i++) {
        if (!strcmp(argv[i], "--runs"))
            runs = (int)strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--now"))
            now = argv[++i];
    }
    if (runs < 1 || runs > MAX_RUNS)
        runs = 50;
    char **qs = read_lines(argv[3], runs, &nq);
    if (!qs || !nq) {
        fprintf(stderr, "bench_cold: no questions in %s\n", argv[3]);
        return 2;
    }
    int have_sqlite = find_on_path("sqlite3", sqlite_bin, sizeof sqlite_bin);
    char *cairn_argv[] = { argv[1], "--db", argv[2], "recall", NULL, "--budget", "1000",
                           "--now", (char *)now, NULL };
    char *true_argv[] = { "/bin/true", NULL };
    char *sqlite_argv[] = { sqlite_bin, argv[2], "select count(*) from messages", NULL };
    char **cmds[N_CMDS] = { cairn_argv, true_argv, sqlite_argv };
    int n_cmds = have_sqlite ? 3 : 2;

    double *ms[N_CMDS], *cpu[N_CMDS], *rss[N_CMDS];
    long out_min[N_CMDS], rss_max[N_CMDS];
    for (int c = 0; c < N_CMDS; c++) {
        ms[c] = calloc((size_t)runs, sizeof *ms[c]);
        cpu[c] = calloc((size_t)runs, sizeof *cpu[c]);
        rss[c] = calloc((size_t)runs, sizeof *rss[c]);
        if (!ms[c] || !cpu[c] || !rss[c])
            return 1;
        out_min[c] = -1;
        rss_max[c] = 0;
    }
    for (int i = -WARMUP; i < runs; i++) {
        cairn_argv[4] = qs[(i < 0 ? -i : i) % nq];
        for (int c = 0; c < n_cmds; c++) {
            struct run r;
            if (spawn(cmds[c], &r) || r.status) {
                fprintf(stderr, "bench_cold: %s failed (status %d)\n", names[c], r.status);
                return 1;
            }
            if (i < 0)
                continue;
            ms[c][i] = r.ms;
            cpu[c][i] = r.cpu_ms;
            rss[c][i] = (double)r.maxrss_kb;
            if (r.maxrss_kb > rss_max[c])
                rss_max[c] = r.maxrss_kb;
            if (out_min[c] < 0 || r.out_bytes < out_min[c])
                out_min[c] = r.out_bytes;
        }
    }
    double p50[N_CMDS] = { 0 }, p95[N_CMDS] = { 0 };
    for (int c = 0; c < n_cmds; c++) {
        p50[c] = pct(ms[c], runs, 50);
        p95[c] = pct(ms[c], runs, 95);
    }
    for (int c = 0; c < n_cmds; c++) {
        printf("bench cold.%s runs=%d p50_ms=%.3f p95_ms=%.3f cpu_p50_ms=%.3f "
               "maxrss_kb_p50=%.0f maxrss_kb_max=%ld", names[c], runs, p50[c], p95[c],
               pct(cpu[c], runs, 50), pct(rss[c], runs, 50), rss_max[c]);
        if (c == 0)
            printf(" budget=1000 out_bytes_min=%ld ratio_p50_vs_true=%.2f", out_min[0],
                   p50[0] / p50[1]);
        if (c == 0 && have_sqlite)
            printf(" ratio_p50_vs_sqlite3=%.2f", p50[0] / p50[2]);
        printf("\n");
    }
    if (!have_sqlite)
        printf("bench cold.sqlite3_count skipped=no_sqlite3_cli\n");
    printf("# cold process: cairn recall --budget 1000 p50 %.2f ms, p95 %.2f ms, peak RSS %.1f MB "
           "(max); /bin/true %.2f ms (%.1fx)", p50[0], p95[0], (double)rss_max[0] / 1024,
           p50[1], p50[0] / p50[1]);
    if (have_sqlite)
        printf("; sqlite3 count(*) %.2f ms (%.1fx)", p50[2], p50[0] / p50[2]);
    printf("\n");
    for (int c = 0; c < N_CMDS; c++) {
        free(ms[c]);
        free(cpu[c]);
        free(rss[c]);
    }
    for (int i = 0; i < nq; i++)
        free(qs[i]);
    free(qs);
    return 0;
}
