/*
 * bench_capture.c: what capture costs.
 *
 *  1. hook: `cairn hook stop` for a typical turn on a 5 MB transcript, as
 *     a whole process (spawn to exit), against /bin/true spawned the same
 *     way in the same run (alternating, so machine noise hits both). Each
 *     round appends one turn to the transcript (a prompt, an assistant
 *     text, a tool call with ~4 KB of output, a final text) and runs the
 *     hook on it, as Claude Code would after the reply. Reports p50/p90;
 *     checks that every turn was saved (3 messages per turn).
 *  2. import: `cairn import claude-code DIR` on ~1 GB of generated
 *     transcripts (many sessions across project folders, shaped like real
 *     ones: most bytes are tool output, metadata and thinking signatures),
 *     reported as MB/s of transcript; baseline: reading the same files
 *     (`cat` to /dev/null, page cache warm) in the same run. Then the same
 *     import again, which must add nothing.
 *
 * Data is generated into WORKDIR at run time and removed by the caller.
 * Output: `bench <name> key=value ...` lines, then a human summary with
 * lines starting with "#". Exit 1 if a check failed.
 *
 * usage: bench_capture CAIRN WORKDIR [--mb N (import size, default 1024)]
 *                      [--turns N (hook rounds, default 40)]
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cairn.h"
#include "bench.h"

extern char **environ;

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static const char *const words[] = {
    "the", "build", "cache", "parser", "returns", "index", "session", "memory", "file",
    "because", "we", "should", "check", "error", "value", "when", "test", "fails", "after",
    "update", "schema", "query", "token", "budget", "store", "hook", "transcript", "line",
    "offset", "project", "branch", "commit", "merge", "worktree", "latency", "p50",
    "struct", "pointer", "buffer", "length", "UTF-8", "invalid", "lock", "timeout",
    "retry", "import", "export", "zebra", "lisbon", "deposit", "climbing", "gradle",
};
#define NW (sizeof words / sizeof words[0])

/* Appends ~n bytes of JSON-safe prose. */
static void prose(FILE *f, size_t n)
{
    size_t k = 0;
    while (k < n) {
        const char *w = words[rnd() % NW];
        k += fprintf(f, "%s%s", k ? " " : "", w);
        if (rnd() % 17 == 0)
            k += fprintf(f, ".");
    }
}

static void code(FILE *f, size_t n)
{
    size_t k = 0;
    while (k < n)
        k += fprintf(f, "    int %s_%u = %s(%u);\\n", words[rnd() % NW], (unsigned)(rnd() % 1000),
                     words[rnd() % NW], (unsigned)(rnd() % 100));
}

static unsigned long uuid_n;
static void uuid(char *out)
{
    snprintf(out, 48, "%08lx-0000-4000-8000-%012llx", ++uuid_n, (unsigned long long)(rnd() & 0xffffffffffffULL));
}

#define HDR "{\"parentUuid\":\"%s\",\"isSidechain\":false,\"userType\":\"external\"," \
            "\"cwd\":\"/home/u/%s\",\"sessionId\":\"%s\",\"version\":\"2.1.300\"," \
            "\"gitBranch\":\"main\",\"uuid\":\"%s\",\"timestamp\":\"2026-03-01T10:%02d:%02d.000Z\","

/* Writes one turn; parent is updated to the last uuid. Returns 3 (the
 * messages it holds: prompt, two assistant texts). */
static int turn(FILE *f, const char *sid, const char *proj, char *parent, size_t tool_bytes)
{
    char u[48], a1[48], a2[48], a3[48], t1[48], a4[48];
    int mm = (int)(rnd() % 60), ss = (int)(rnd() % 60);
    unsigned long mid = (unsigned long)rnd();
    uuid(u); uuid(a1); uuid(a2); uuid(a3); uuid(t1); uuid(a4);
    fprintf(f, "{\"type\":\"progress\",\"uuid\":\"p%s\",\"parentUuid\":\"%s\",\"sessionId\":\"%s\","
               "\"data\":{\"type\":\"hook_progress\",\"hookEvent\":\"UserPromptSubmit\"}}\n",
            u, parent, sid);
    fprintf(f, HDR "\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"", parent, proj,
            sid, u, mm, ss);
    prose(f, 150 + rnd() % 300);
    fprintf(f, "\"}}\n");
    fprintf(f, HDR "\"type\":\"assistant\",\"requestId\":\"req_%lx\",\"message\":{\"id\":\"msg_%lx\","
               "\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":"
               "[{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"", u, proj, sid, a1, mm,
            ss, mid, mid);
    for (int i = 0; i < 900; i++)
        fputc("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"[rnd() % 64], f);
    fprintf(f, "\"}],\"usage\":{\"input_tokens\":1200,\"output_tokens\":300}}}\n");
    fprintf(f, HDR "\"type\":\"assistant\",\"message\":{\"id\":\"msg_%lx\",\"type\":\"message\","
               "\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\","
               "\"text\":\"", a1, proj, sid, a2, mm, ss, mid);
    prose(f, 300 + rnd() % 600);
    fprintf(f, "\"}]}}\n");
    fprintf(f, HDR "\"type\":\"assistant\",\"message\":{\"id\":\"msg_%lx\",\"type\":\"message\","
               "\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[{\"type\":\"tool_use\","
               "\"id\":\"toolu_%lx\",\"name\":\"Read\",\"input\":{\"file_path\":\"/home/u/%s/src/"
               "main.c\"}}]}}\n", a2, proj, sid, a3, mm, ss, mid, mid, proj);
    fprintf(f, HDR "\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":"
               "\"tool_result\",\"tool_use_id\":\"toolu_%lx\",\"content\":\"", a3, proj, sid, t1,
            mm, ss, mid);
    code(f, tool_bytes);
    fprintf(f, "\"}]},\"toolUseResult\":{\"type\":\"text\"}}\n");
    fprintf(f, HDR "\"type\":\"assistant\",\"message\":{\"id\":\"msg_%lx2\",\"type\":\"message\","
               "\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[{\"type\":\"text\","
               "\"text\":\"", t1, proj, sid, a4, mm, ss, mid);
    prose(f, 400 + rnd() % 800);
    fprintf(f, "\"}]}}\n");
    snprintf(parent, 48, "%s", a4);
    return 3;
}

/* Runs argv with `input` on stdin and stdout/stderr to /dev/null (or to
 * `out_path`); returns wall ms, or -1 if it failed. */
static double run(char *const argv[], const char *input, const char *out_path, int *status)
{
    int pfd[2];
    posix_spawn_file_actions_t fa;
    pid_t pid;
    if (pipe(pfd))
        return -1;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, pfd[0], 0);
    posix_spawn_file_actions_addclose(&fa, pfd[1]);
    posix_spawn_file_actions_addopen(&fa, 1, out_path ? out_path : "/dev/null",
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    double t0 = os_now_ms();
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(pfd[0]);
    if (rc) {
        close(pfd[1]);
        return -1;
    }
    if (input) {
        ssize_t w = write(pfd[1], input, strlen(input));
        (void)w;
    }
    close(pfd[1]);
    int st;
    waitpid(pid, &st, 0);
    double t1 = os_now_ms();
    if (status)
        *status = st;
    return t1 - t0;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    int i = (int)(p * (n - 1) + 0.5);
    return v[i];
}

static int64_t count_messages(const char *db)
{
    struct cairn *h;
    struct cairn_stats st;
    int64_t n = -1;
    if (cairn_open(db, CAIRN_OPEN_READONLY, &h) == CAIRN_OK && cairn_get_stats(h, &st) == CAIRN_OK)
        n = st.messages;
    cairn_close(h);
    return n;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_capture CAIRN WORKDIR [--mb N] [--turns N]\n");
        return 2;
    }
    const char *cairn = argv[1], *work = argv[2];
    long mb = 1024, turns = 40;
    for (int i = 3; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--mb"))
            mb = strtol(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--turns"))
            turns = strtol(argv[i + 1], NULL, 10);
    }
    int failed = 0;
    char path[4300], db[4096], dir[4096], input[8700], parent[48] = "root";
    mkdir(work, 0700);
    setenv("HOME", work, 1);               /* the hook log goes there */
    setenv("CAIRN_REDACT", "1", 1);

    /* ---- 1. hook stop on a 5 MB transcript -------------------------- */
    snprintf(path, sizeof path, "%s/hook-session.jsonl", work);
    snprintf(db, sizeof db, "%s/hook.db", work);
    FILE *f = fopen(path, "w");
    if (!f)
        return perror(path), 1;
    while (ftell(f) < 5L * 1000 * 1000)
        turn(f, "hook-s", "hookproj", parent, 3000 + rnd() % 3000);
    fclose(f);
    struct stat st;
    stat(path, &st);
    char *imp[] = { (char *)cairn, "--db", db, "import", "claude-code", "-q", path, NULL };
    run(imp, NULL, NULL, NULL);
    int64_t before = count_messages(db);
    snprintf(input, sizeof input, "{\"session_id\":\"hook-s\",\"transcript_path\":\"%s\","
             "\"cwd\":\"/home/u/hookproj\",\"hook_event_name\":\"Stop\","
             "\"stop_hook_active\":false}", path);
    char *hook[] = { (char *)cairn, "--db", db, "hook", "stop", NULL };
    char *tru[] = { "/bin/true", NULL };
    double *th = calloc((size_t)turns, sizeof *th), *tt = calloc((size_t)turns, sizeof *tt);
    int expect = 0;
    for (long i = 0; i < turns; i++) {
        f = fopen(path, "a");
        expect += turn(f, "hook-s", "hookproj", parent, 4000);
        fclose(f);
        tt[i] = run(tru, "", NULL, NULL);
        th[i] = run(hook, input, NULL, NULL);
    }
    int64_t after = count_messages(db);
    double hp50 = pct(th, (int)turns, 0.5), hp90 = pct(th, (int)turns, 0.9);
    double tp50 = pct(tt, (int)turns, 0.5);
    int hook_ok = after - before == expect;
    failed |= !hook_ok;
    printf("bench capture_hook transcript_mb=%.1f turns=%ld p50_ms=%.2f p90_ms=%.2f "
           "true_p50_ms=%.2f saved=%lld expected=%d ok=%d\n",
           (double)st.st_size / 1e6, turns, hp50, hp90, tp50, (long long)(after - before),
           expect, hook_ok);
    free(th);
    free(tt);

    /* ---- 2. import ~N MB of transcripts ------------------------------ */
    uint64_t total = 0, target = (uint64_t)mb * 1000 * 1000;
    int files = 0;
    double g0 = os_now_ms();
    while (total < target) {
        snprintf(dir, sizeof dir, "%s/projects/-home-u-proj%d", work, files / 40);
        snprintf(path, sizeof path, "%s/projects", work);
        mkdir(path, 0700);
        mkdir(dir, 0700);
        char sid[64];
        snprintf(sid, sizeof sid, "bench-%06d", files);
        snprintf(path, sizeof path, "%s/%s.jsonl", dir, sid);
        f = fopen(path, "w");
        if (!f)
            return perror(path), 1;
        snprintf(parent, sizeof parent, "root");
        /* sessions of 50 KB to 2 MB, most small, like real ones */
        long size = 50000 + (long)(rnd() % 4 == 0 ? rnd() % 2000000 : rnd() % 400000);
        while (ftell(f) < size)
            turn(f, sid, "proj", parent, 1000 + rnd() % 7000);
        total += (uint64_t)ftell(f);
        fclose(f);
        files++;
    }
    double g1 = os_now_ms();
    snprintf(path, sizeof path, "%s/projects", work);
    snprintf(db, sizeof db, "%s/import.db", work);
    /* baseline: read every file (this also warms the page cache for both) */
    char catcmd[8300];
    snprintf(catcmd, sizeof catcmd, "find '%s' -name '*.jsonl' -exec cat {} + > /dev/null", path);
    char *sh[] = { "/bin/sh", "-c", catcmd, NULL };
    run(sh, NULL, NULL, NULL);
    double tcat = run(sh, NULL, NULL, NULL);
    char outp[4200];
    snprintf(outp, sizeof outp, "%s/import.out", work);
    char *imp2[] = { (char *)cairn, "--db", db, "import", "claude-code", path, NULL };
    int status = 0;
    double timp = run(imp2, NULL, outp, &status);
    int64_t msgs = count_messages(db);
    double treimp = run(imp2, NULL, outp, NULL);
    int64_t msgs2 = count_messages(db);
    struct stat dbst;
    stat(db, &dbst);
    int imp_ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && msgs > 0 && msgs2 == msgs;
    failed |= !imp_ok;
    printf("bench capture_import mb=%.0f files=%d seconds=%.2f mb_per_s=%.1f "
           "cat_mb_per_s=%.0f messages=%lld store_mb=%.0f reimport_s=%.2f ok=%d\n",
           (double)total / 1e6, files, timp / 1e3, (double)total / 1e6 / (timp / 1e3),
           (double)total / 1e6 / (tcat / 1e3), (long long)msgs, (double)dbst.st_size / 1e6,
           treimp / 1e3, imp_ok);
    printf("# hook stop, one turn on a %.1f MB transcript: p50 %.1f ms, p90 %.1f ms "
           "(/bin/true p50 %.1f ms); all turns saved: %s\n",
           (double)st.st_size / 1e6, hp50, hp90, tp50, hook_ok ? "yes" : "NO");
    printf("# import claude-code: %.0f MB in %d files in %.1f s = %.1f MB/s "
           "(reading them: %.0f MB/s; generating: %.1f s); re-import %.2f s, added nothing: %s\n",
           (double)total / 1e6, files, timp / 1e3, (double)total / 1e6 / (timp / 1e3),
           (double)total / 1e6 / (tcat / 1e3), (g1 - g0) / 1e3, treimp / 1e3,
           msgs2 == msgs ? "yes" : "NO");
    return failed;
}
