/* test_repage: a new store's pages are 16 KB (store_page_size_new, read
 * from the file's header), and cairn_repage rewrites a 4 KB store to 16 KB
 * keeping every row, refuses a read-only handle, an in-memory store and a
 * file another connection holds open (nothing changed), and leaves a store
 * already at 16 KB as it is (issue 23, hook54; t0238 drives the CLI). */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"

static char dir[] = "/tmp/cairn-repage-XXXXXX";
static char path[256];

/* the page size in a SQLite file's header: two bytes at 16, big-endian */
static int header_page_size(void)
{
    unsigned char h[18];
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(h, 1, sizeof h, f) : 0;
    if (f)
        fclose(f);
    if (n < sizeof h)
        return -1;
    int v = h[16] << 8 | h[17];
    return v == 1 ? 65536 : v;
}

static int64_t count_messages(void)
{
    struct cairn *db = NULL;
    struct cairn_stats st;
    int64_t n = -1;
    if (t_open(path, CAIRN_OPEN_READONLY, &db) == CAIRN_OK && cairn_get_stats(db, &st) == CAIRN_OK)
        n = st.messages;
    cairn_close(db);
    return n;
}

static void to_4k(void)
{
    sqlite3 *s = NULL;
    T_EQ_INT(sqlite3_open(path, &s), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(s, "PRAGMA journal_mode=DELETE; PRAGMA page_size=4096; VACUUM; "
                          "PRAGMA journal_mode=WAL", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(s);
}

static void test_new_store(void)
{
    struct cairn *db = NULL;
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    const char *s = "{\"id\":\"s1\",\"messages\":[{\"role\":\"user\",\"content\":\"pages of sixteen\"},"
                    "{\"role\":\"assistant\",\"content\":\"kilobytes each\"}]}";
    T_EQ_INT(cairn_add_json(db, s, strlen(s), NULL), CAIRN_OK);
    int due = -1, page = 0;
    T_EQ_INT(cairn_repage_due(db, &due, &page), CAIRN_OK);
    T_EQ_INT(due, 0);
    T_EQ_INT(page, 16384);
    cairn_close(db);
    T_EQ_INT(header_page_size(), 16384);
    T_EQ_INT(count_messages(), 2);
}

static void test_refusals(void)
{
    struct cairn *db = NULL;
    int was = 0;
    int due = -1, page = -1;
    T_EQ_INT(cairn_repage(NULL, &was), CAIRN_INVALID);
    T_EQ_INT(cairn_repage_due(NULL, &due, &page), CAIRN_INVALID);
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_repage(db, &was), CAIRN_INVALID);
    /* no file to read: never due, whatever its page size */
    T_EQ_INT(cairn_repage_due(db, &due, &page), CAIRN_OK);
    T_EQ_INT(due, 0);
    T_CHECK(page > 0);
    cairn_close(db);

    to_4k();
    T_EQ_INT(header_page_size(), 4096);
    db = NULL;
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &db), CAIRN_OK);
    T_EQ_INT(cairn_repage(db, &was), CAIRN_INVALID);
    /* a reader can tell (cairn doctor), and the NULLs are allowed */
    T_EQ_INT(cairn_repage_due(db, &due, &page), CAIRN_OK);
    T_EQ_INT(due, 1);
    T_EQ_INT(page, 4096);
    T_EQ_INT(cairn_repage_due(db, NULL, NULL), CAIRN_OK);
    cairn_close(db);
    T_EQ_INT(header_page_size(), 4096);

    /* another connection on the file: WAL cannot be left */
    sqlite3 *other = NULL;
    T_EQ_INT(sqlite3_open(path, &other), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(other, "SELECT count(*) FROM sessions", NULL, NULL, NULL), SQLITE_OK);
    db = NULL;
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_CHECK(cairn_repage(db, &was) != CAIRN_OK);
    T_EQ_INT(was, 4096);
    cairn_close(db);
    sqlite3_close(other);
    T_EQ_INT(header_page_size(), 4096);
    T_EQ_INT(count_messages(), 2);
}

static void test_rewrite(void)
{
    struct cairn *db = NULL;
    int was = 0;
    T_EQ_INT(header_page_size(), 4096);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_repage(db, &was), CAIRN_OK);
    T_EQ_INT(was, 4096);
    /* the handle goes on writing, in WAL */
    const char *s = "{\"id\":\"s2\",\"messages\":[{\"role\":\"user\",\"content\":\"after the rewrite\"}]}";
    T_EQ_INT(cairn_add_json(db, s, strlen(s), NULL), CAIRN_OK);
    was = 0;
    T_EQ_INT(cairn_repage(db, &was), CAIRN_OK);
    T_EQ_INT(was, 16384);
    int due = -1, page = 0;
    T_EQ_INT(cairn_repage_due(db, &due, &page), CAIRN_OK);
    T_EQ_INT(due, 0);
    T_EQ_INT(page, 16384);
    cairn_close(db);
    T_EQ_INT(header_page_size(), 16384);
    T_EQ_INT(count_messages(), 3);
    sqlite3 *s3 = NULL;
    sqlite3_stmt *st = NULL;
    T_EQ_INT(sqlite3_open(path, &s3), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(s3, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_CHECK(strcmp((const char *)sqlite3_column_text(st, 0), "wal") == 0);
    sqlite3_finalize(st);
    sqlite3_close(s3);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(path, sizeof path, "%s/m.db", dir);
    T_RUN(test_new_store);
    T_RUN(test_refusals);
    T_RUN(test_rewrite);
    char f[300];
    const char *sfx[] = { "", "-wal", "-shm", "-journal" };
    for (int i = 0; i < 4; i++) {
        snprintf(f, sizeof f, "%s%s", path, sfx[i]);
        unlink(f);
    }
    rmdir(dir);
    return T_DONE();
}
