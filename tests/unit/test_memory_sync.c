/*
 * test_memory_sync.c: what `cairn sync` needs of the local memories
 * (schema version 20, store/pg_msync.c; the server side is t0607): the
 * merge rule (memory_version_cmp), a global id and version for each
 * memory (new ones and, through the migration, old ones), every change
 * of what is synced bumping the version and marking it unsent (edit,
 * undo, supersede, a correction's fields) while what is not synced
 * (a correction's counters) does not, and a removal leaving the sha256 of
 * the global id, never the id.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "store/memory.h"
#include "t_store.h"
#include "t_open.h"

static char dir[] = "/tmp/cairn-test-memory-sync-XXXXXX";

static void test_version_cmp(void)
{
    /* time first, whatever the counter and the id */
    T_CHECK(memory_version_cmp(20, 0, "00", 10, 9, "ff") > 0);
    T_CHECK(memory_version_cmp(10, 9, "ff", 20, 0, "00") < 0);
    /* then the counter */
    T_CHECK(memory_version_cmp(10, 3, "00", 10, 2, "ff") > 0);
    T_CHECK(memory_version_cmp(10, 2, "ff", 10, 3, "00") < 0);
    /* then the version id, as bytes: the same answer on every machine */
    T_CHECK(memory_version_cmp(10, 3, "b0", 10, 3, "a9") > 0);
    T_CHECK(memory_version_cmp(10, 3, "a9", 10, 3, "b0") < 0);
    T_CHECK(memory_version_cmp(10, 3, "9f", 10, 3, "a0") < 0);   /* digits before letters */
    T_EQ_INT(memory_version_cmp(10, 3, "ab", 10, 3, "ab"), 0);
    /* antisymmetric over a few versions */
    const char *ids[] = { "0a", "a0", "ff" };
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            T_EQ_INT(memory_version_cmp(5, a, ids[a], 5, b, ids[b]),
                     -memory_version_cmp(5, b, ids[b], 5, a, ids[a]));
}

static int64_t add(struct cairn *h, const char *type, const char *text, int64_t replaces)
{
    struct cairn_memory_new m = { 0 };
    int64_t id = 0;
    m.type = type;
    m.text = text;
    m.replaces = replaces;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_OK);
    return id;
}

/* memory id's sync row as "rev|dirty|vid" into out */
static void version(struct cairn *h, int64_t id, char *out, size_t n)
{
    sqlite3_stmt *st;
    *out = 0;
    T_EQ_INT(sqlite3_prepare_v2(h->db, "SELECT rev, dirty, vid FROM memory_sync WHERE memory = ?",
                                -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(out, n, "%lld|%d|%s", (long long)sqlite3_column_int64(st, 0),
                 sqlite3_column_int(st, 1), (const char *)sqlite3_column_text(st, 2));
    sqlite3_finalize(st);
}

static void set_clean(struct cairn *h)
{
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE memory_sync SET dirty = 0", NULL, NULL, NULL), SQLITE_OK);
}

static void test_versions(void)
{
    char path[300], v0[80], v1[80];
    struct cairn *h;
    snprintf(path, sizeof path, "%s/v.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    int64_t a = add(h, "fact", "tabs, not spaces", 0);
    int64_t b = add(h, "fact", "the API is v2", 0);
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_sync"), 2);
    T_EQ_INT(count(h, "SELECT count(DISTINCT gid) FROM memory_sync WHERE length(gid) = 32 AND "
                      "gid NOT GLOB '*[^0-9a-f]*'"), 2);
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_sync WHERE dirty AND rev = 0"), 2);

    /* an edit: a new version, unsent */
    set_clean(h);
    version(h, a, v0, sizeof v0);
    T_EQ_INT(cairn_memory_update(h, a, "two spaces"), CAIRN_OK);
    version(h, a, v1, sizeof v1);
    T_CHECK(strncmp(v1, "1|1|", 4) == 0);
    T_CHECK(strcmp(v0 + 4, v1 + 4) != 0);            /* a new version id */
    /* undo is a change too */
    set_clean(h);
    T_EQ_INT(cairn_memory_undo(h, a), CAIRN_OK);
    version(h, a, v1, sizeof v1);
    T_CHECK(strncmp(v1, "2|1|", 4) == 0);
    /* a supersede changes the old one */
    set_clean(h);
    int64_t c = add(h, "fact", "the API is v3", b);
    version(h, b, v1, sizeof v1);
    T_CHECK(strncmp(v1, "1|1|", 4) == 0);
    version(h, c, v1, sizeof v1);
    T_CHECK(strncmp(v1, "0|1|", 4) == 0);
    /* a correction's fields are synced, its counters are not */
    struct cairn_memory_new m = { 0 };
    struct cairn_correction_when w = { 0, NULL, NULL, "npm publish" };
    int64_t k = 0;
    m.type = "correction";
    m.text = "never npm publish";
    T_EQ_INT(cairn_correction_add(h, &m, &w, &k), CAIRN_OK);
    set_clean(h);
    version(h, k, v0, sizeof v0);
    T_EQ_INT(cairn_correction_count(h, k, CAIRN_CORRECTION_RETRIEVED), CAIRN_OK);
    version(h, k, v1, sizeof v1);
    T_EQ_STR(v1, v0);
    w.severity = 2;
    T_EQ_INT(cairn_correction_set(h, k, &w), CAIRN_OK);
    version(h, k, v1, sizeof v1);
    T_CHECK(strcmp(v1, v0) != 0);
    T_CHECK(strchr(v1, '|')[1] == '1');

    /* a removal: the hash of the gid, never the gid */
    char gid[40] = "", hash[65];
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(h->db, "SELECT gid FROM memory_sync WHERE memory = ?", -1, &st,
                                NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, a);
    if (sqlite3_step(st) == SQLITE_ROW)
        snprintf(gid, sizeof gid, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    T_EQ_INT((int)strlen(gid), 32);
    T_EQ_INT(cairn_memory_remove(h, a), CAIRN_OK);
    store_sid_hash(gid, hash);
    char q[200];
    snprintf(q, sizeof q, "SELECT count(*) FROM memories_forgotten WHERE gid_hash = '%s'", hash);
    T_EQ_INT(count(h, q), 1);
    snprintf(q, sizeof q, "SELECT count(*) FROM memory_sync WHERE gid = '%s'", gid);
    T_EQ_INT(count(h, q), 0);
    /* expiry is each store's own: no tombstone */
    T_EQ_INT(count(h, "SELECT count(*) FROM memories_forgotten"), 1);
    cairn_close(h);
}

/* A version-19 store's memories get a global id and a version, unsent. */
static void test_migrate_v19(void)
{
    char path[300];
    struct cairn *h;
    sqlite3 *raw;
    snprintf(path, sizeof path, "%s/v19.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add(h, "fact", "one", 0);
    add(h, "preference", "two", 0);
    add(h, "decision", "three", 0);
    cairn_close(h);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, MEMORY_SYNC_V20_DROP "PRAGMA user_version=19", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(DISTINCT gid) FROM memory_sync WHERE length(gid) = 32"), 3);
    T_EQ_INT(count(h, "SELECT count(DISTINCT vid) FROM memory_sync"), 3);
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_sync WHERE dirty AND owner = ''"), 3);
    T_CHECK(add(h, "fact", "after the migration", 0) == 4);
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_sync"), 4);
    cairn_close(h);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_version_cmp);
    T_RUN(test_versions);
    T_RUN(test_migrate_v19);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_memory_sync: could not remove %s\n", dir);
    return T_DONE();
}
