/*
 * test_open_race.c: many processes opening one store at the same moment:
 * creating a new store, and migrating an older one (v4, in WAL or in
 * rollback-journal mode) while readers (the prompt hook opens read-only)
 * race the writers. Every process must succeed, every session must be
 * stored, and the schema must be migrated exactly once.
 *
 * Processes, not threads: SQLite's file locks are per process, and the
 * failures this guards against (SQLITE_BUSY returned without the busy
 * handler while the journal mode changes) happen between processes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>

#include "t.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"

#define NPROC 16
#define ROUNDS 8

static char dir[] = "/tmp/cairn-test-open-race-XXXXXX";

/* One child: wait for the start signal, open, then write one session
 * (writer) or read the stats (reader). Exits 0 on success. */
static void child(int go, const char *path, int i, int reader)
{
    char c, id[32];
    struct cairn *db;
    if (read(go, &c, 1) < 0)        /* returns 0 when the parent closes it */
        _exit(3);
    int rc = t_open(path, reader ? CAIRN_OPEN_READONLY : 0, &db);
    if (rc == CAIRN_OK && reader) {
        struct cairn_stats st;
        rc = cairn_get_stats(db, &st);
    } else if (rc == CAIRN_OK) {
        struct cairn_message m = { 0 };
        struct cairn_session s = { 0 };
        snprintf(id, sizeof id, "p%d", i);
        m.role = "user";
        m.content = id;
        m.at = CAIRN_NO_TIME;
        s.id = id;
        s.started_at = s.ended_at = CAIRN_NO_TIME;
        s.messages = &m;
        s.n_messages = 1;
        rc = cairn_add_session(db, &s, NULL);
    }
    if (rc)
        fprintf(stderr, "process %d (%s): %s\n", i, reader ? "reader" : "writer",
                cairn_errmsg(db));
    cairn_close(db);
    _exit(rc ? 1 : 0);
}

/* Starts NPROC processes at once on `path` (the first `readers` of them
 * read-only) and returns how many failed. */
static int race(const char *path, int readers)
{
    int fd[2], failed = 0;
    pid_t pid[NPROC];
    if (pipe(fd) != 0)
        return NPROC;
    for (int i = 0; i < NPROC; i++) {
        pid[i] = fork();
        if (pid[i] == 0) {
            close(fd[1]);
            child(fd[0], path, i, i < readers);
        }
    }
    close(fd[0]);
    close(fd[1]);                   /* every child's read returns now */
    for (int i = 0; i < NPROC; i++) {
        int st;
        if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
            WEXITSTATUS(st) != 0)
            failed++;
    }
    return failed;
}

static int64_t query(const char *path, const char *sql)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        sqlite3_close(raw);
        return -1;
    }
    if (sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return n;
}

/* The store is whole: current schema once, the cairn id, `sessions` rows. */
static void check_store(const char *path, int sessions)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    struct cairn *db;
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &db), CAIRN_OK);
    struct cairn_stats s;
    T_EQ_INT(cairn_get_stats(db, &s), CAIRN_OK);
    T_EQ_INT(s.sessions, sessions);
    T_EQ_INT(s.schema_version, CAIRN_SCHEMA_VERSION);
    T_EQ_INT(query(path, "SELECT count(*) FROM sqlite_master WHERE name = 'session_stats'"), 1);
    cairn_close(db);
    T_EQ_INT(query(path, "PRAGMA application_id"), 0x63726e31);
    T_EQ_INT(query(path, "SELECT count(*) FROM vec_stamp"), 1);
    T_EQ_INT(query(path, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'vec_stamp_a%'"), 3);
    T_EQ_INT(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_STR((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

static void remove_store(const char *path)
{
    char p[300];
    const char *suffix[] = { "", "-wal", "-shm", "-journal", "-vec" };
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffix[i]);
        unlink(p);
    }
}

static void test_create(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/new.db", dir);
    for (int r = 0; r < ROUNDS; r++) {
        remove_store(path);
        T_EQ_INT(race(path, 0), 0);
        check_store(path, NPROC);
    }
    remove_store(path);
}

/* A store as cairn 0.x wrote it at schema v4: today's store with the FTS
 * delete and update triggers (dropped by v7), without the vec_stamp table
 * and its triggers (v5) and session_stats with its triggers and indexes
 * (v6), and without the memory tables (v8). `journal` is its journal mode (a
 * store copied or restored may be in rollback mode). */
static void make_v4(const char *path, const char *journal)
{
    struct cairn *db;
    sqlite3 *raw;
    char sql[64];
    remove_store(path);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    struct cairn_message m = { .role = "user", .content = "before the upgrade",
                               .at = CAIRN_NO_TIME };
    struct cairn_session s = { .id = "old", .messages = &m, .n_messages = 1,
                               .started_at = CAIRN_NO_TIME, .ended_at = CAIRN_NO_TIME };
    T_EQ_INT(cairn_add_session(db, &s, NULL), CAIRN_OK);
    cairn_close(db);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    snprintf(sql, sizeof sql, "PRAGMA journal_mode=%s", journal);
    /* the later versions' tables first and the triggers last: ALTER TABLE
     * (version 25's columns) reads the whole schema, which a trigger on a
     * dropped table or an FTS5 one stops on a raw connection */
    T_EQ_INT(sqlite3_exec(raw, MEMORY_TABLES_V8_DROP "DROP INDEX messages_meta; DROP INDEX messages_hit;"
                          "DROP TRIGGER session_stats_au; DROP TRIGGER session_stats_ad;"
                          "DROP TABLE session_stats;"
                          "DROP TRIGGER vec_stamp_ai; DROP TRIGGER vec_stamp_ad;"
                          "DROP TRIGGER vec_stamp_au; DROP TABLE vec_stamp;"
                          "PRAGMA user_version=4", NULL, NULL, NULL),
             SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, FTS_TRIGGERS_V1_TO_6, NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(query(path, "PRAGMA user_version"), 4);
}

static void test_migrate(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/v4.db", dir);
    for (int r = 0; r < ROUNDS; r++) {
        make_v4(path, r % 2 ? "delete" : "wal");
        /* a quarter are readers: the prompt hook after an upgrade */
        T_EQ_INT(race(path, NPROC / 4), 0);
        check_store(path, 1 + NPROC - NPROC / 4);
    }
    remove_store(path);
}

/* Readers alone on an older store: the first one migrates it (the hook
 * must not stop injecting after an upgrade until some writer runs). */
static void test_readers_migrate(void)
{
    char path[256];
    snprintf(path, sizeof path, "%s/v4r.db", dir);
    for (int r = 0; r < ROUNDS / 2; r++) {
        make_v4(path, r % 2 ? "delete" : "wal");
        T_EQ_INT(race(path, NPROC), 0);
        check_store(path, 1);
    }
    remove_store(path);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_create);
    T_RUN(test_migrate);
    T_RUN(test_readers_migrate);
    if (rmdir(dir) != 0)
        fprintf(stderr, "test_open_race: %s is not empty\n", dir);
    return T_DONE();
}
