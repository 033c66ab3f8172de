/*
 * bench_units.c: what reading a whole store's units costs (session_units,
 * schema 30; issue 23, branch units49), against reading its packed turns,
 * the step of an exact recall's gather that the unit rows are meant to
 * replace (docs/ARCHITECTURE.md, "Ranking a big pool without its turns").
 *
 * Three reads of every session, each in turn for N rounds (CPU medians):
 *   turns   SELECT session, n, turns FROM session_turns, every turn decoded
 *           (store_turns_read, as store_messages_meta reads a session)
 *   units   SELECT session, units FROM session_units WHERE rule = R, every
 *           unit decoded (store_units_read)
 *   checked the same rows joined to session_turns on session and n (a
 *           row valid only with the packed turns' count)
 * Each prints its rows, turns or units and the CPU time; the decoded
 * values are summed so that nothing is left unread. Run it under
 * `valgrind --tool=callgrind` with one mode for instruction counts.
 *
 * usage: bench_units STORE [--runs N] [--only turns|units|checked]
 * (the store must be at schema 30: open it once with this build first)
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "store/recall_read.h"
#include "store/units.h"

#define MAXT 65536

static int64_t read_turns(sqlite3 *db, int64_t *rows, int64_t *items)
{
    static struct store_msg_row r[MAXT];
    static size_t spn[MAXT];
    sqlite3_stmt *st;
    int64_t sum = 0;
    *rows = *items = 0;
    if (sqlite3_prepare_v2(db, "SELECT session, n, turns FROM session_turns", -1, &st, NULL))
        return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = sqlite3_column_blob(st, 2);
        int bytes = sqlite3_column_bytes(st, 2);
        if (!t || bytes < 1 || (unsigned char)t[0] != STORE_TURNS_MARK)
            continue;
        struct turns_cur c = { t + 1, t + bytes, 0, 0, 0 };
        size_t n;
        while ((n = store_turns_read(&c, r, spn, MAXT)) > 0) {
            for (size_t i = 0; i < n; i++)
                sum += r[i].ntok + r[i].user;
            *items += (int64_t)n;
            if (n < MAXT)
                break;
        }
        (*rows)++;
    }
    sqlite3_finalize(st);
    return sum;
}

static int64_t read_units(sqlite3 *db, int checked, int64_t *rows, int64_t *items)
{
    static struct store_unit u_buf[MAXT];
    sqlite3_stmt *st;
    int64_t sum = 0;
    *rows = *items = 0;
    if (sqlite3_prepare_v2(db, checked
                           ? "SELECT u.session, u.units FROM session_units u JOIN session_turns t "
                             "ON t.session = u.session AND t.n = u.n WHERE u.rule = ?1"
                           : "SELECT session, units FROM session_units WHERE rule = ?1",
                           -1, &st, NULL))
        return -1;
    sqlite3_bind_int(st, 1, STORE_UNITS_RULE);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *u = sqlite3_column_blob(st, 1);
        int bytes = sqlite3_column_bytes(st, 1);
        struct units_cur c;
        int nu, flags;
        if (!u || store_units_open(&c, u, (size_t)bytes, &nu, &flags))
            continue;
        size_t n;
        while ((n = store_units_read(&c, u_buf, MAXT)) > 0) {
            for (size_t i = 0; i < n; i++)
                sum += u_buf[i].round_ntok + u_buf[i].head_user;
            *items += (int64_t)n;
            if (n < MAXT)
                break;
        }
        (*rows)++;
    }
    sqlite3_finalize(st);
    return sum;
}

int main(int argc, char **argv)
{
    const char *only = NULL;
    int runs = 11;
    if (argc < 2) {
        fprintf(stderr, "usage: bench_units STORE [--runs N] [--only turns|units|checked]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--only"))
            only = argv[i + 1];
    }
    if (runs < 1 || runs > 1000)
        runs = 11;
    sqlite3 *db;
    if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "bench_units: cannot open %s\n", argv[1]);
        return 1;
    }
    static const char *const names[3] = { "turns", "units", "checked" };
    double *cpu[3];
    int64_t rows[3] = { 0 }, items[3] = { 0 }, sums[3] = { 0 };
    for (int m = 0; m < 3; m++)
        cpu[m] = calloc((size_t)runs, sizeof *cpu[m]);
    for (int r = 0; r < runs; r++) {
        for (int m = 0; m < 3; m++) {
            if (only && strcmp(only, names[m]))
                continue;
            double t0 = bench_cpu_ms();
            sums[m] = m == 0 ? read_turns(db, &rows[m], &items[m])
                             : read_units(db, m == 2, &rows[m], &items[m]);
            cpu[m][r] = bench_cpu_ms() - t0;
            if (sums[m] < 0) {
                fprintf(stderr, "bench_units: %s: %s (schema 30?)\n", names[m], sqlite3_errmsg(db));
                return 1;
            }
        }
    }
    for (int m = 0; m < 3; m++) {
        if (only && strcmp(only, names[m]))
            continue;
        printf("bench units.%s rows=%lld items=%lld sum=%lld cpu_p50_ms=%.2f runs=%d\n", names[m],
               (long long)rows[m], (long long)items[m], (long long)sums[m],
               bench_median(cpu[m], runs), runs);
    }
    for (int m = 0; m < 3; m++)
        free(cpu[m]);
    sqlite3_close(db);
    return 0;
}
