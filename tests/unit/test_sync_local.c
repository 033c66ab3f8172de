/*
 * test_sync_local.c: what `cairn sync` keeps in the local store (schema
 * v12, store/pg_sync.c), without a server. cairn_forget records the
 * session as the sha256 of its id, never the id (forget leaves no byte of
 * it), once, and drops it from sync_foreign; a forget of nothing records
 * nothing; and a forget that deletes the newest messages pulls push
 * cursors back to the highest id left, since SQLite hands deleted rowids
 * out again and a new message must not hide below a cursor. cairn_sync
 * refuses a read-only handle and a zeroed options struct before connecting.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"
#include "util/sha256.h"

static char dir[] = "/tmp/cairn-test-sync-local-XXXXXX";

static void test_forget_records_hash(struct cairn *h)
{
    char want[65], sql[256];
    const char *id = "forget-me-7f3a9c";
    add_chat(h, "keep-1", 3);
    add_chat(h, id, 4);
    /* the digest, from util/sha256.h directly: not store_sid_hash, which
     * is what is checked */
    {
        struct sha256 st;
        unsigned char d[32];
        sha256_init(&st);
        sha256_update(&st, id, strlen(id));
        sha256_final(&st, d);
        sha256_hex(d, want);
    }
    snprintf(sql, sizeof sql, "INSERT INTO sync_foreign VALUES ('%s', 'someone')", want);
    T_EQ_INT(sqlite3_exec(h->db, sql, NULL, NULL, NULL), SQLITE_OK);
    /* a cursor past every message, as after a push of all of them */
    T_EQ_INT(sqlite3_exec(h->db, "INSERT INTO sync_state(server, scope, push_msg, updated_at) "
                          "VALUES ('srv/alice', '', 7, 0), ('srv/alice', 'p', 3, 0)",
                          NULL, NULL, NULL), SQLITE_OK);
    int64_t top = count(h, "SELECT max(id) FROM messages");
    T_EQ_INT(top, 7);

    int rc = cairn_forget(h, id);
    T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    T_EQ_INT(count(h, "SELECT count(*) FROM forgotten"), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM forgotten WHERE sid_hash = '%s'", want);
    T_EQ_INT(count(h, sql), 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM forgotten WHERE sid_hash LIKE '%%%s%%'", id);
    T_EQ_INT(count(h, sql), 0);
    T_EQ_INT(count(h, "SELECT count(*) FROM sync_foreign"), 0);
    /* the cursor past the deleted ids comes back to the last id left; the
     * one below it stays */
    T_EQ_INT(count(h, "SELECT push_msg FROM sync_state WHERE scope = ''"), 3);
    T_EQ_INT(count(h, "SELECT push_msg FROM sync_state WHERE scope = 'p'"), 3);
    add_chat(h, "new-after-forget", 2);
    T_EQ_INT(count(h, "SELECT min(m.id) FROM messages m JOIN sessions s ON s.id = m.session "
                      "WHERE s.ext_id = 'new-after-forget'"), 4);   /* a reused id, above 3 */

    /* forgetting nothing records nothing; forgetting again is NOTFOUND */
    T_EQ_INT(cairn_forget(h, "no-such-session"), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_forget(h, id), CAIRN_NOTFOUND);
    T_EQ_INT(count(h, "SELECT count(*) FROM forgotten"), 1);
    /* the same id added and forgotten again: still one row */
    add_chat(h, id, 2);
    rc = cairn_forget(h, id);
    T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    T_EQ_INT(count(h, "SELECT count(*) FROM forgotten"), 1);
}

static void test_sync_refuses(const char *path)
{
    struct cairn *ro = NULL;
    struct cairn_sync_opts zero;
    memset(&zero, 0, sizeof zero);
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &ro), CAIRN_OK);
    /* no server is contacted for either: the URL points nowhere */
    T_EQ_INT(cairn_sync(ro, "host=/nonexistent", NULL, NULL), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(ro), "writable") != NULL);
    cairn_close(ro);
    struct cairn *h = NULL;
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_sync(h, "host=/nonexistent", &zero, NULL), CAIRN_INVALID);
    struct cairn_sync_opts big = CAIRN_SYNC_OPTS_INIT;
    big.batch = 1000000;
    T_EQ_INT(cairn_sync(h, "host=/nonexistent", &big, NULL), CAIRN_INVALID);
    cairn_close(h);
}

int main(void)
{
    char path[256];
    struct cairn *h = NULL;
    T_CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/s.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    test_forget_records_hash(h);
    cairn_close(h);
    test_sync_refuses(path);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
