/*
 * bench_ingest.c: how fast `cairn add` stores a large history, against a
 * plain SQLite + FTS5 loop doing the same inserts, in the same run.
 *
 * Input is a `cairn add` JSONL (bench/gen_data.py ingest: 5,000 sessions,
 * 100,000 messages of mixed prose, code and Chinese). Each round:
 *   1. baseline: a forked child reads the file, parses each line with
 *      cJSON and inserts the session and its messages into a fresh on-disk
 *      database (WAL, synchronous=NORMAL, like cairn) holding a plain
 *      messages table and an FTS5 unicode61 index over it, one transaction
 *      per session. What cairn does on top of this (its own tokenizer,
 *      secret masking, dedupe hashes, secondary indexes) is the ratio.
 *   2. cairn: `cairn --db FRESH add FILE` as a whole process; the printed
 *      summary must say every session and message was added.
 *   3. re-add: the same command again on the now full store; the summary
 *      must say nothing was added (everything "already present").
 * Times are wall clock from fork to wait4; peak RSS is the child's
 * ru_maxrss from wait4 (per child, where RUSAGE_CHILDREN would give the
 * maximum over all of them). Rounds alternate the three so that noise on
 * this shared machine hits them alike; medians are reported, and the
 * ratio is the median of the per-round ratios.
 *
 * Output: `bench <name> key=value ...` lines (machine-readable), then a
 * short human summary. Exit status 1 if a check failed.
 *
 * usage: bench_ingest CAIRN FILE.jsonl WORKDIR [--runs N] [--timeout S] [--budget S]
 *   --runs: rounds (default 3); --timeout: kill a cairn add still running
 *   after S seconds (default 60); --budget: start no new round after S
 *   seconds (default 100).
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_RUNS 16

/* The project's goal for this input (bench/README.md). */
#define TARGET_S 10.0

struct child_result {
    double secs, cpu_secs;  /* wall; the child's user + system */
    int timed_out;
    long maxrss_kb;
    int status;          /* exit code, or 128 + signal */
    char out[1024];      /* start of the child's stdout */
};

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double s[MAX_RUNS];

    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

static long file_size(const char *path)
{
    struct stat st;

    return stat(path, &st) ? -1 : (long)st.st_size;
}

/* Removes a database and its WAL and shared-memory files. */
static void remove_db(const char *path)
{
    char p[4096];

    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

/*
 * Runs argv (fn == NULL) or fn(arg) in a child, with the child's stdout
 * captured into r->out (the rest is drained and dropped). Wall time covers
 * fork to reaping. A child still running after timeout_s is killed.
 */
static int run_child(char *const argv[], int (*fn)(void *arg, int outfd), void *arg,
                     double timeout_s, struct child_result *r)
{
    int fd[2];
    struct rusage ru;
    int st = 0;
    size_t got = 0;

    memset(r, 0, sizeof *r);
    if (pipe(fd))
        return -1;
    fflush(NULL);
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        close(fd[0]);
        if (fn)
            _exit(fn(arg, fd[1]));
        dup2(fd[1], 1);
        close(fd[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(fd[1]);
    for (;;) {
        struct pollfd pf = { fd[0], POLLIN, 0 };
        double left = t0 + timeout_s - now_s();
        int pr = left > 0 ? poll(&pf, 1, (int)(left * 1000) + 1) : 0;
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr < 0)
            break;
        if (pr == 0) {
            if (now_s() - t0 < timeout_s)
                continue;
            kill(pid, SIGKILL);
            r->timed_out = 1;
            break;
        }
        char junk[4096];
        char *dst = got < sizeof r->out - 1 ? r->out + got : junk;
        size_t room = got < sizeof r->out - 1 ? sizeof r->out - 1 - got : sizeof junk;
        ssize_t k = read(fd[0], dst, room);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        if (dst != junk)
            got += (size_t)k;
    }
    close(fd[0]);
    while (wait4(pid, &st, 0, &ru) < 0) {
        if (errno != EINTR)
            return -1;
    }
    r->secs = now_s() - t0;
    r->cpu_secs = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                  (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    r->out[got] = '\0';
    r->maxrss_kb = ru.ru_maxrss;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

/* ---- baseline: plain SQLite + FTS5 ------------------------------------ */

struct baseline_arg {
    const char *jsonl;
    const char *db;
};

static const char *json_str(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *p = NULL;
    long n;

    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
        goto out;
    p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
        goto out;
    }
    if (p) {
        p[n] = '\0';
        *len = (size_t)n;
    }
out:
    fclose(f);
    return p;
}

static void bind_opt(sqlite3_stmt *st, int i, const char *s)
{
    if (s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, i);
}

/* The baseline proper, in the child. Writes the message count to outfd.
 * Returns the child's exit code. */
static int baseline_main(void *varg, int outfd)
{
    const struct baseline_arg *a = varg;
    sqlite3 *db = NULL;
    sqlite3_stmt *ins_s = NULL, *ins_m = NULL, *ins_f = NULL;
    char *text = NULL;
    size_t len = 0;
    long long n_msg = 0, n_sess = 0;
    int rc = 1;

    text = read_all(a->jsonl, &len);
    if (!text)
        goto out;
    if (sqlite3_open(a->db, &db) != SQLITE_OK)
        goto out;
    if (sqlite3_exec(db,
                     "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                     "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16000;"
                     "CREATE TABLE sessions(id INTEGER PRIMARY KEY, ext_id TEXT, source TEXT,"
                     " project TEXT, title TEXT, meta TEXT);"
                     "CREATE TABLE messages(id INTEGER PRIMARY KEY, session INTEGER,"
                     " position INTEGER, ext_id TEXT, role TEXT, speaker TEXT, content TEXT,"
                     " created_at TEXT);"
                     "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages',"
                     " content_rowid='id', tokenize='unicode61');",
                     NULL, NULL, NULL) != SQLITE_OK)
        goto out;
    if (sqlite3_prepare_v2(db, "INSERT INTO sessions(ext_id, source, project, title, meta)"
                           " VALUES (?,?,?,?,?)", -1, &ins_s, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO messages(session, position, ext_id, role, speaker,"
                           " content, created_at) VALUES (?,?,?,?,?,?,?)", -1, &ins_m,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO messages_fts(rowid, content) VALUES (?,?)", -1,
                           &ins_f, NULL) != SQLITE_OK)
        goto out;
    size_t p = 0;
    while (p < len) {
        const char *nl = memchr(text + p, '\n', len - p);
        size_t e = nl ? (size_t)(nl - text) : len;
        if (e == p) {
            p = e + 1;
            continue;
        }
        cJSON *s = cJSON_ParseWithLength(text + p, e - p);
        p = e + 1;
        if (!s)
            goto out;
        char *meta = NULL;
        const cJSON *mj = cJSON_GetObjectItemCaseSensitive(s, "meta");
        if (cJSON_IsObject(mj))
            meta = cJSON_PrintUnformatted(mj);
        int ok = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
        bind_opt(ins_s, 1, json_str(s, "id"));
        bind_opt(ins_s, 2, json_str(s, "source"));
        bind_opt(ins_s, 3, json_str(s, "project"));
        bind_opt(ins_s, 4, json_str(s, "title"));
        bind_opt(ins_s, 5, meta);
        ok = ok && sqlite3_step(ins_s) == SQLITE_DONE;
        sqlite3_reset(ins_s);
        sqlite3_int64 sid = sqlite3_last_insert_rowid(db);
        const cJSON *m;
        int pos = 0;
        cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(s, "messages")) {
            const char *content = json_str(m, "content");
            if (!ok || !content)
                break;
            sqlite3_bind_int64(ins_m, 1, sid);
            sqlite3_bind_int(ins_m, 2, pos++);
            bind_opt(ins_m, 3, json_str(m, "id"));
            bind_opt(ins_m, 4, json_str(m, "role"));
            bind_opt(ins_m, 5, json_str(m, "speaker"));
            sqlite3_bind_text(ins_m, 6, content, -1, SQLITE_STATIC);
            bind_opt(ins_m, 7, json_str(m, "at"));
            ok = sqlite3_step(ins_m) == SQLITE_DONE;
            sqlite3_reset(ins_m);
            sqlite3_bind_int64(ins_f, 1, sqlite3_last_insert_rowid(db));
            sqlite3_bind_text(ins_f, 2, content, -1, SQLITE_STATIC);
            ok = ok && sqlite3_step(ins_f) == SQLITE_DONE;
            sqlite3_reset(ins_f);
            n_msg++;
        }
        ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
        if (meta)
            cJSON_free(meta);
        cJSON_Delete(s);
        if (!ok)
            goto out;
        n_sess++;
    }
    char line[64];
    int k = snprintf(line, sizeof line, "%lld %lld\n", n_sess, n_msg);
    if (write(outfd, line, (size_t)k) != k)
        goto out;
    rc = 0;
out:
    if (rc && db)
        fprintf(stderr, "bench_ingest: baseline: %s\n", sqlite3_errmsg(db));
    sqlite3_finalize(ins_s);
    sqlite3_finalize(ins_m);
    sqlite3_finalize(ins_f);
    sqlite3_close(db);
    free(text);
    return rc;
}

/* ---- cairn's summary line --------------------------------------------- */

struct add_summary {
    unsigned long long sessions, updated, messages, present, masked;
};

static int parse_summary(const char *out, struct add_summary *s)
{
    const char *p = strstr(out, "added ");

    memset(s, 0, sizeof *s);
    return p && sscanf(p, "added %llu sessions (%llu updated), %llu messages; %llu already "
                       "present; %llu secrets masked", &s->sessions, &s->updated,
                       &s->messages, &s->present, &s->masked) == 5 ? 0 : -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_ingest CAIRN FILE.jsonl WORKDIR [--runs N] [--timeout S] "
            "[--budget S]\n");
}

int main(int argc, char **argv)
{
    int runs = 3, done = 0, bad = 0, timed_out = 0;
    double timeout_s = 60, budget_s = 100;
    char store[2048], base[2048];
    double t_base[MAX_RUNS], t_add[MAX_RUNS], t_re[MAX_RUNS], ratio[MAX_RUNS], cratio[MAX_RUNS];
    double c_base[MAX_RUNS], c_add[MAX_RUNS], c_re[MAX_RUNS];
    long rss_base = 0, rss_add = 0, rss_re = 0, db_bytes = 0, base_bytes = 0;
    unsigned long long n_sess = 0, n_msg = 0;
    struct add_summary first = { 0 }, again = { 0 };

    if (argc < 4) {
        usage();
        return 2;
    }
    for (int i = 4; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--runs")) {
            runs = (int)strtol(argv[++i], NULL, 10);
        } else if (i + 1 < argc && !strcmp(argv[i], "--timeout")) {
            timeout_s = strtod(argv[++i], NULL);
        } else if (i + 1 < argc && !strcmp(argv[i], "--budget")) {
            budget_s = strtod(argv[++i], NULL);
        } else {
            usage();
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS)
        runs = 3;
    long in_bytes = file_size(argv[2]);
    if (in_bytes < 0) {
        fprintf(stderr, "bench_ingest: %s: %s\n", argv[2], strerror(errno));
        return 2;
    }
    snprintf(store, sizeof store, "%s/ingest-cairn.db", argv[3]);
    snprintf(base, sizeof base, "%s/ingest-baseline.db", argv[3]);
    char *add_argv[] = { argv[1], "--db", store, "add", argv[2], NULL };
    struct baseline_arg ba = { argv[2], base };
    double start = now_s();

    /* Rounds stop early once the time budget is spent (the first always
     * runs), so a slow build cannot hold up the whole bench run. */
    for (int r = 0; r < runs && (r == 0 || now_s() - start < budget_s); r++) {
        struct child_result cr;
        unsigned long long bs = 0, bm = 0;

        remove_db(base);
        if (run_child(NULL, baseline_main, &ba, 1e9, &cr) || cr.status ||
            sscanf(cr.out, "%llu %llu", &bs, &bm) != 2) {
            fprintf(stderr, "bench_ingest: baseline failed (status %d)\n", cr.status);
            return 1;
        }
        n_sess = bs;
        n_msg = bm;
        t_base[r] = cr.secs;
        c_base[r] = cr.cpu_secs;
        if (cr.maxrss_kb > rss_base)
            rss_base = cr.maxrss_kb;
        base_bytes = file_size(base);

        remove_db(store);
        if (run_child(add_argv, NULL, NULL, timeout_s, &cr)) {
            fprintf(stderr, "bench_ingest: cannot run %s\n", argv[1]);
            return 1;
        }
        if (cr.timed_out) {
            fprintf(stderr, "bench_ingest: cairn add still running after %.0f s: killed\n",
                    timeout_s);
            timed_out = 1;
            break;
        }
        if (cr.status || parse_summary(cr.out, &first)) {
            fprintf(stderr, "bench_ingest: cairn add failed (status %d): %s\n", cr.status, cr.out);
            return 1;
        }
        t_add[r] = cr.secs;
        c_add[r] = cr.cpu_secs;
        if (cr.maxrss_kb > rss_add)
            rss_add = cr.maxrss_kb;
        if (first.sessions != n_sess || first.messages != n_msg || first.present) {
            fprintf(stderr, "bench_ingest: cairn add stored %llu sessions / %llu messages of "
                    "%llu / %llu\n", first.sessions, first.messages, n_sess, n_msg);
            bad = 1;
        }

        if (run_child(add_argv, NULL, NULL, timeout_s, &cr)) {
            fprintf(stderr, "bench_ingest: cannot run %s\n", argv[1]);
            return 1;
        }
        if (cr.timed_out) {
            fprintf(stderr, "bench_ingest: re-add still running after %.0f s: killed\n",
                    timeout_s);
            timed_out = 1;
            break;
        }
        if (cr.status || parse_summary(cr.out, &again)) {
            fprintf(stderr, "bench_ingest: re-add failed (status %d): %s\n", cr.status, cr.out);
            return 1;
        }
        t_re[r] = cr.secs;
        c_re[r] = cr.cpu_secs;
        if (cr.maxrss_kb > rss_re)
            rss_re = cr.maxrss_kb;
        if (again.sessions || again.updated || again.messages || again.present != n_msg) {
            fprintf(stderr, "bench_ingest: re-add was not a no-op: %s", cr.out);
            bad = 1;
        }
        db_bytes = file_size(store);
        ratio[r] = t_add[r] / t_base[r];
        cratio[r] = c_add[r] / c_base[r];
        done++;
        fprintf(stderr, "  round %d: baseline %.2f s (cpu %.2f), cairn add %.2f s (cpu %.2f), "
                "re-add %.2f s (cpu %.2f)\n", r + 1, t_base[r], c_base[r], t_add[r], c_add[r],
                t_re[r], c_re[r]);
    }

    double mb = (double)in_bytes / 1e6;
    if (!done) {
        printf("bench ingest.baseline runs=1 sessions=%llu messages=%llu input_mb=%.1f "
               "s_p50=%.3f cpu_s_p50=%.3f messages_per_s=%.0f mb_per_s=%.2f maxrss_kb=%ld\n",
               n_sess, n_msg, mb, t_base[0], c_base[0], (double)n_msg / t_base[0],
               mb / t_base[0], rss_base);
        printf("bench ingest.cairn timeout=1 timeout_s=%.0f target_s=%.0f meets_target=0\n",
               timeout_s, TARGET_S);
        printf("# ingest: cairn add of %llu messages did not finish in %.0f s (plain FTS5: "
               "%.2f s); target < %.0f s: MISSED\n", n_msg, timeout_s, t_base[0], TARGET_S);
        remove_db(base);
        remove_db(store);
        return 1;
    }
    double b50 = median(t_base, done), a50 = median(t_add, done), r50 = median(t_re, done);
    double rat = median(ratio, done);
    printf("bench ingest.baseline runs=%d sessions=%llu messages=%llu input_mb=%.1f s_p50=%.3f "
           "cpu_s_p50=%.3f messages_per_s=%.0f mb_per_s=%.2f maxrss_kb=%ld db_mb=%.1f\n", done,
           n_sess, n_msg, mb, b50, median(c_base, done), (double)n_msg / b50, mb / b50, rss_base,
           (double)base_bytes / 1e6);
    printf("bench ingest.cairn runs=%d sessions=%llu messages=%llu input_mb=%.1f s_p50=%.3f "
           "cpu_s_p50=%.3f messages_per_s=%.0f mb_per_s=%.2f maxrss_kb=%ld db_mb=%.1f "
           "secrets_masked=%llu ratio_vs_baseline=%.2f cpu_ratio_vs_baseline=%.2f target_s=%.0f "
           "meets_target=%d\n", done, first.sessions, first.messages, mb, a50,
           median(c_add, done), (double)n_msg / a50, mb / a50, rss_add, (double)db_bytes / 1e6,
           first.masked, rat, median(cratio, done), TARGET_S, a50 < TARGET_S);
    printf("bench ingest.readd runs=%d s_p50=%.3f cpu_s_p50=%.3f messages_added=%llu "
           "already_present=%llu maxrss_kb=%ld noop=%d\n", done, r50, median(c_re, done),
           again.messages, again.present, rss_re,
           !(again.sessions || again.updated || again.messages));
    printf("# ingest: %llu messages (%.1f MB JSONL), median of %d: cairn add %.2f s (%.0f msg/s, "
           "%.1f MB/s, %.2f s CPU, peak RSS %.0f MB) vs plain FTS5 %.2f s (%.2f s CPU): %.2fx "
           "wall, %.2fx CPU; re-add %.2f s, %s; target < %.0f s: %s%s\n", n_msg, mb, done, a50,
           (double)n_msg / a50, mb / a50, median(c_add, done), (double)rss_add / 1024, b50,
           median(c_base, done), rat, median(cratio, done), r50,
           bad ? "CHECK FAILED" : "added nothing",
           TARGET_S, a50 < TARGET_S ? "met" : "MISSED",
           timed_out ? " (a later round timed out)" : "");
    remove_db(base);
    remove_db(store);
    return bad || timed_out;
}
