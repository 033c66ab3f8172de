/*
 * bench_forget.c: what forgetting one session costs on a big store, and
 * where it goes, against the plain delete cairn did before (the baseline)
 * in the same run. Each variant runs on a fresh copy of the store (the
 * copy is not timed) and forgets the same session; variants take turns
 * in every round, so noise hits them alike:
 *
 *   delete    the baseline: the session's rows deleted in one transaction
 *             (the old cairn_forget: the index keeps the terms, the WAL
 *             the text);
 *   optimize  delete, then FTS5 'optimize' in the same transaction: the
 *             index rewritten without the session (what store_scrub does);
 *   rebuild   delete, then FTS5 'rebuild': the alternative, the index
 *             built again from the messages;
 *   forget    cairn_forget: delete, optimize, commit, WAL checkpoint and
 *             truncation, cache file removed (what `cairn forget` pays);
 *   scrub     delete, then cairn_scrub: optimize, VACUUM, checkpoint
 *             (what `cairn forget --scrub` pays).
 *
 * Output: `bench forget.<variant> p50_ms=... min_ms=... max_ms=... cpu_p50_ms=...`
 * lines (cpu: this process's user+system time, steadier on a loaded
 * machine), and the ratio of each wall median to the baseline's.
 *
 * usage: bench_forget STORE TMPDIR [--runs N]
 *   STORE is only read (bench/README.md: the 100,000-message store).
 */
#include <cairn.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "bench.h"
#include "../cli/cli.h"

#define MAX_RUNS 50

enum { V_DELETE, V_OPTIMIZE, V_REBUILD, V_FORGET, V_SCRUB, N_VARIANTS };
static const char *const names[N_VARIANTS] = { "delete", "optimize", "rebuild", "forget",
                                                "scrub" };

static int copy_file(const char *from, const char *to)
{
    char buf[1 << 16];
    ssize_t n;
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600), rc = 0;
    if (in < 0 || out < 0)
        rc = -1;
    while (!rc && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n)
            rc = -1;
    if (in >= 0)
        close(in);
    if (out >= 0 && close(out) != 0)
        rc = -1;
    return rc;
}

static void remove_store(const char *p)
{
    static const char *const side[] = { "", "-wal", "-shm", "-vec" };
    char f[4200];
    for (size_t i = 0; i < sizeof side / sizeof side[0]; i++) {
        snprintf(f, sizeof f, "%s%s", p, side[i]);
        unlink(f);
    }
}

static int exec(struct cairn *h, const char *sql)
{
    char *err = NULL;
    if (sqlite3_exec(h->db, sql, NULL, NULL, &err) == SQLITE_OK)
        return 0;
    fprintf(stderr, "bench_forget: %s: %s\n", sql, err ? err : "?");
    sqlite3_free(err);
    return -1;
}

/* The old cairn_forget's statements, and then `then` (may be NULL) in the
 * same transaction. */
static int plain_delete(struct cairn *h, const char *session, const char *then)
{
    static const char *const del[] = {
        "DELETE FROM messages WHERE session = (SELECT id FROM sessions WHERE ext_id = ?1)",
        "DELETE FROM capture_state WHERE session = ?1",
        "DELETE FROM session_stats WHERE session = (SELECT id FROM sessions WHERE ext_id = ?1)",
        "DELETE FROM sessions WHERE ext_id = ?1",
    };
    if (exec(h, "BEGIN IMMEDIATE"))
        return -1;
    for (size_t i = 0; i < sizeof del / sizeof del[0]; i++) {
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(h->db, del[i], -1, &st, NULL) != SQLITE_OK)
            return -1;
        sqlite3_bind_text(st, 1, session, -1, SQLITE_STATIC);
        int src = sqlite3_step(st);
        sqlite3_finalize(st);
        if (src != SQLITE_DONE)
            return -1;
    }
    if (then && exec(h, then))
        return -1;
    return exec(h, "COMMIT");
}

static double run(int v, const char *path, const char *session, double *cpu_ms)
{
    struct cairn *h = NULL;
    int rc;
    if (cli_db_open(path, CAIRN_OPEN_NOCREATE, &h) != CAIRN_OK) {
        fprintf(stderr, "bench_forget: %s\n", cairn_errmsg(h));
        cairn_close(h);
        return -1;
    }
    struct timespec c0, c1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    double t0 = os_now_ms();
    switch (v) {
    case V_DELETE:
        rc = plain_delete(h, session, NULL);
        break;
    case V_OPTIMIZE:
        rc = plain_delete(h, session, "INSERT INTO messages_fts(messages_fts) VALUES('optimize')");
        break;
    case V_REBUILD:
        rc = plain_delete(h, session, "INSERT INTO messages_fts(messages_fts) VALUES('rebuild')");
        break;
    case V_FORGET:
        rc = cairn_forget(h, session);
        break;
    default:
        rc = plain_delete(h, session, NULL);
        if (!rc)
            rc = cairn_scrub(h);
    }
    double ms = os_now_ms() - t0;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
    *cpu_ms = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
    if (rc)
        fprintf(stderr, "bench_forget: %s failed: %s\n", names[v], cairn_errmsg(h));
    cairn_close(h);
    return rc ? -1 : ms;
}

int main(int argc, char **argv)
{
    int runs = 5;
    char copy[4200], session[256] = "";
    static double t[N_VARIANTS][MAX_RUNS], cpu[N_VARIANTS][MAX_RUNS];
    if (argc < 3) {
        fprintf(stderr, "usage: bench_forget STORE TMPDIR [--runs N]\n");
        return 2;
    }
    if (argc == 5 && !strcmp(argv[3], "--runs"))
        runs = atoi(argv[4]);
    if (runs < 1 || runs > MAX_RUNS)
        runs = 5;
    snprintf(copy, sizeof copy, "%s/forget.db", argv[2]);

    /* one session of middling age and size: the median message count */
    struct cairn *h = NULL;
    sqlite3_stmt *st;
    long long nmsg = 0;
    if (cli_db_open(argv[1], CAIRN_OPEN_READONLY, &h) != CAIRN_OK ||
        sqlite3_prepare_v2(h->db, "SELECT s.ext_id, st.n FROM sessions s JOIN session_stats st "
                           "ON st.session = s.id ORDER BY st.n, s.id LIMIT 1 OFFSET "
                           "(SELECT count(*) / 2 FROM sessions)", -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_forget: %s: %s\n", argv[1], cairn_errmsg(h));
        return 1;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        snprintf(session, sizeof session, "%s", (const char *)sqlite3_column_text(st, 0));
        nmsg = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    struct cairn_stats stats;
    cairn_get_stats(h, &stats);
    cairn_close(h);
    if (!*session) {
        fprintf(stderr, "bench_forget: no session in %s\n", argv[1]);
        return 1;
    }
    fprintf(stderr, "bench_forget: %lld messages, forgetting %s (%lld messages), %d rounds\n",
            (long long)stats.messages, session, nmsg, runs);

    for (int r = 0; r < runs; r++) {
        for (int v = 0; v < N_VARIANTS; v++) {
            remove_store(copy);
            if (copy_file(argv[1], copy) != 0) {
                fprintf(stderr, "bench_forget: cannot copy %s to %s\n", argv[1], copy);
                return 1;
            }
            t[v][r] = run(v, copy, session, &cpu[v][r]);
            if (t[v][r] < 0)
                return 1;
            fprintf(stderr, "  round %d %-8s %8.1f ms (cpu %.1f ms)\n", r + 1, names[v], t[v][r],
                    cpu[v][r]);
        }
    }
    remove_store(copy);
    double base = 0;
    for (int v = 0; v < N_VARIANTS; v++) {
        qsort(t[v], (size_t)runs, sizeof t[v][0], cmp_double);
        qsort(cpu[v], (size_t)runs, sizeof cpu[v][0], cmp_double);
        double p50 = t[v][runs / 2];
        if (v == V_DELETE)
            base = p50;
        printf("bench forget.%s messages=%lld session_messages=%lld runs=%d p50_ms=%.1f "
               "min_ms=%.1f max_ms=%.1f cpu_p50_ms=%.1f ratio=%.2f\n", names[v],
               (long long)stats.messages, nmsg, runs, p50, t[v][0], t[v][runs - 1],
               cpu[v][runs / 2], base > 0 ? p50 / base : 0);
    }
    return 0;
}
