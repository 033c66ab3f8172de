/*
 * test_memory.c: explicit memories (store/memory.c, store/memory_io.c,
 * docs/MEMORIES.md): add, get, list by scope and type, update and undo,
 * supersede (never listed alone; undo makes the old one live again),
 * links, masking and <private> on memory text, remove and expiry leaving
 * no byte of the text in the store's files, the migration of a version-7
 * store, and the JSONL export and import (round trip, errors with line
 * numbers, all or nothing).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"

static char dir[] = "/tmp/cairn-test-memory-XXXXXX";

/* Whether the file holds the bytes of mark (a missing file holds none). */
static int holds(const char *path, const char *mark)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 1 << 20, n = 0, r;
    char *b;
    int found;
    if (!f)
        return 0;
    b = malloc(cap);
    while (b && (r = fread(b + n, 1, cap - n, f)) > 0) {
        n += r;
        if (n == cap) {
            char *nb = realloc(b, cap *= 2);
            if (!nb)
                free(b);
            b = nb;
        }
    }
    fclose(f);
    T_CHECK(b != NULL);
    found = b && memmem(b, n, mark, strlen(mark)) != NULL;
    free(b);
    return found;
}

/* Whether the store or its WAL holds mark. */
static int store_holds(const char *path, const char *mark)
{
    char wal[320];
    snprintf(wal, sizeof wal, "%s-wal", path);
    return holds(path, mark) || holds(wal, mark);
}

static int64_t add(struct cairn *h, const char *type, const char *text, const char *scope,
                   int64_t replaces)
{
    struct cairn_memory_new m = { 0 };
    int64_t id = 0;
    m.type = type;
    m.text = text;
    m.scope = scope;
    m.replaces = replaces;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_OK);
    return id;
}

/* How many memories cairn_memory_list gives for scope/type/all. */
static size_t listed(struct cairn *h, const char *scope, const char *type, int all)
{
    struct cairn_memories *l;
    if (cairn_memory_list(h, scope, type, all, &l) != CAIRN_OK)
        return (size_t)-1;
    size_t n = cairn_memories_count(l);
    cairn_memories_free(l);
    return n;
}

/* A copy of memory id's text, or NULL. */
static char *text_of(struct cairn *h, int64_t id)
{
    struct cairn_memories *l;
    if (cairn_memory_get(h, id, &l) != CAIRN_OK)
        return NULL;
    char *s = strdup(cairn_memories_at(l, 0)->text);
    cairn_memories_free(l);
    return s;
}

static void test_add_list(void)
{
    struct cairn *h;
    struct cairn_memories *l;
    struct cairn_memory_new m = { 0 };
    int64_t id;
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    int64_t a = add(h, "preference", "tabs, not spaces", "proj", 0);
    add(h, NULL, "the user lives in Lisbon", NULL, 0);
    add(h, "decision", "we use SQLite", "other", 0);
    T_EQ_INT(listed(h, NULL, NULL, 0), 3);
    T_EQ_INT(listed(h, "proj", NULL, 0), 2);          /* proj's and the global one */
    T_EQ_INT(listed(h, "", NULL, 0), 1);
    T_EQ_INT(listed(h, NULL, "decision", 0), 1);
    T_EQ_INT(listed(h, NULL, "fact", 0), 1);
    T_EQ_INT(cairn_memory_get(h, a, &l), CAIRN_OK);
    T_EQ_STR(cairn_memories_at(l, 0)->type, "preference");
    T_EQ_STR(cairn_memories_at(l, 0)->scope, "proj");
    T_EQ_INT(cairn_memories_at(l, 0)->expires, CAIRN_NO_TIME);
    cairn_memories_free(l);
    T_EQ_INT(cairn_memory_get(h, 999, &l), CAIRN_NOTFOUND);
    T_CHECK(l == NULL);

    m.text = "x";
    m.type = "opinion";
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(h), "opinion") != NULL);
    m.type = NULL;
    m.text = "  \n";
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_INVALID);
    char *big = malloc(CAIRN_MEMORY_TEXT_MAX + 2);
    memset(big, 'a', CAIRN_MEMORY_TEXT_MAX + 1);
    big[CAIRN_MEMORY_TEXT_MAX + 1] = '\0';
    m.text = big;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_INVALID);
    free(big);
    m.text = "ok";
    m.ttl = -1;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_INVALID);
    T_EQ_INT(cairn_memory_list(h, NULL, "opinion", 0, &l), CAIRN_INVALID);
    T_EQ_INT(listed(h, NULL, NULL, 1), 3);            /* nothing was added */

    /* masking and <private> as on every write path */
    id = add(h, "fact", "token ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo <private>pin 4417</private>kept",
             NULL, 0);
    char *t = text_of(h, id);
    T_CHECK(t && !strstr(t, "ghp_Zq7") && strstr(t, "[REDACTED:") && !strstr(t, "4417") &&
            strstr(t, "kept"));
    free(t);
    cairn_close(h);
}

static void test_update_undo(void)
{
    struct cairn *h;
    struct cairn_memories *l;
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    int64_t a = add(h, "fact", "first", NULL, 0);
    T_EQ_INT(cairn_memory_undo(h, a), CAIRN_NOTFOUND);   /* nothing to undo */
    T_EQ_INT(cairn_memory_update(h, a, "second"), CAIRN_OK);
    T_EQ_INT(cairn_memory_update(h, a, "third"), CAIRN_OK);
    T_EQ_INT(cairn_memory_update(h, 999, "x"), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_memory_update(h, a, ""), CAIRN_INVALID);
    T_EQ_INT(cairn_memory_history(h, a, &l), CAIRN_OK);
    T_EQ_INT(cairn_memories_count(l), 2);
    T_EQ_STR(cairn_memories_at(l, 0)->text, "second");   /* newest first */
    T_EQ_STR(cairn_memories_at(l, 0)->op, "update");
    T_EQ_STR(cairn_memories_at(l, 1)->text, "first");
    cairn_memories_free(l);
    char *t = text_of(h, a);
    T_EQ_STR(t, "third");
    free(t);
    T_EQ_INT(cairn_memory_undo(h, a), CAIRN_OK);
    t = text_of(h, a);
    T_EQ_STR(t, "second");
    free(t);
    T_EQ_INT(cairn_memory_undo(h, a), CAIRN_OK);
    t = text_of(h, a);
    T_EQ_STR(t, "first");
    free(t);
    T_EQ_INT(cairn_memory_undo(h, a), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_memory_history(h, a, &l), CAIRN_OK);
    T_EQ_INT(cairn_memories_count(l), 0);
    cairn_memories_free(l);
    cairn_close(h);
}

static void test_supersede_links(void)
{
    struct cairn *h;
    struct cairn_memories *l;
    struct cairn_memory_new m = { 0 };
    int64_t id;
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    int64_t old = add(h, "preference", "4 spaces", "p", 0);
    int64_t nw = add(h, "preference", "tabs", "p", old);
    T_EQ_INT(listed(h, NULL, NULL, 0), 1);        /* the old one is never listed alone */
    T_EQ_INT(listed(h, NULL, NULL, 1), 2);
    T_EQ_INT(cairn_memory_get(h, old, &l), CAIRN_OK);
    T_EQ_INT(cairn_memories_at(l, 0)->superseded_by, nw);
    T_EQ_STR(cairn_memories_at(l, 0)->links, "superseded_by:2");
    cairn_memories_free(l);
    T_EQ_INT(cairn_memory_get(h, nw, &l), CAIRN_OK);
    T_EQ_STR(cairn_memories_at(l, 0)->links, "supersedes:1");
    cairn_memories_free(l);
    /* a superseded memory cannot be replaced again; nothing is added */
    m.text = "spaces again";
    m.replaces = old;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_NOTFOUND);
    T_EQ_INT(listed(h, NULL, NULL, 1), 2);
    /* undo on the old one: live again, the link gone */
    T_EQ_INT(cairn_memory_undo(h, old), CAIRN_OK);
    T_EQ_INT(listed(h, NULL, NULL, 0), 2);
    T_EQ_INT(cairn_memory_get(h, nw, &l), CAIRN_OK);
    T_EQ_STR(cairn_memories_at(l, 0)->links, "");
    cairn_memories_free(l);

    int64_t c = add(h, "fact", "tabs are banned", NULL, 0);
    T_EQ_INT(cairn_memory_link(h, c, nw, "contradicts"), CAIRN_OK);
    T_EQ_INT(cairn_memory_link(h, c, old, "related_to"), CAIRN_OK);
    T_EQ_INT(cairn_memory_link(h, c, nw, "likes"), CAIRN_INVALID);
    T_EQ_INT(cairn_memory_link(h, c, 999, "related_to"), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_memory_link(h, c, c, "related_to"), CAIRN_INVALID);
    T_EQ_INT(cairn_memory_get(h, nw, &l), CAIRN_OK);
    T_EQ_STR(cairn_memories_at(l, 0)->links, "contradicted_by:3");
    cairn_memories_free(l);
    T_EQ_INT(cairn_memory_undo(h, c), CAIRN_OK);         /* the related_to link */
    T_EQ_INT(cairn_memory_get(h, c, &l), CAIRN_OK);
    T_EQ_STR(cairn_memories_at(l, 0)->links, "contradicts:2");
    cairn_memories_free(l);

    /* removing the memory that superseded another makes that one live */
    int64_t r = add(h, "fact", "replacement", NULL, c);
    T_EQ_INT(listed(h, NULL, "fact", 0), 1);
    T_EQ_INT(cairn_memory_remove(h, r), CAIRN_OK);
    T_EQ_INT(cairn_memory_get(h, c, &l), CAIRN_OK);
    T_EQ_INT(cairn_memories_at(l, 0)->superseded_by, 0);
    cairn_memories_free(l);
    T_EQ_INT(cairn_memory_remove(h, r), CAIRN_NOTFOUND);
    /* and undoing its supersede then finds no memory to point at again */
    T_EQ_INT(cairn_memory_undo(h, c), CAIRN_OK);
    T_EQ_INT(listed(h, NULL, "fact", 0), 1);
    cairn_close(h);
}

/* rm: the memory's text and its history's text are in no file after. */
static void test_remove_wipes(void)
{
    char path[300];
    struct cairn *h;
    snprintf(path, sizeof path, "%s/rm.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add_chat(h, "chat", 4);
    int64_t keep = add(h, "fact", "kept memory zzkeepmarker", NULL, 0);
    int64_t a = add(h, "fact", "the door code is qqvictimmarker", NULL, 0);
    T_EQ_INT(cairn_memory_update(h, a, "the door code is qqeditedmarker"), CAIRN_OK);
    T_CHECK(store_holds(path, "qqvictimmarker"));
    T_CHECK(store_holds(path, "qqeditedmarker"));
    T_EQ_INT(cairn_memory_remove(h, a), CAIRN_OK);
    T_CHECK(!store_holds(path, "qqvictimmarker"));
    T_CHECK(!store_holds(path, "qqeditedmarker"));
    T_CHECK(store_holds(path, "zzkeepmarker"));
    T_EQ_INT(count(h, "SELECT count(*) FROM memory_history"), 0);
    T_EQ_INT(listed(h, NULL, NULL, 1), 1);
    char *t = text_of(h, keep);
    T_EQ_STR(t, "kept memory zzkeepmarker");
    free(t);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages"), 4);
    cairn_close(h);
}

/* TTL: an expired memory is removed (with its bytes) on the next open, and
 * a handle that stays open removes it at its next memory call. */
static void test_ttl(void)
{
    char path[300];
    struct cairn *h, *ro;
    struct cairn_memory_new m = { 0 };
    int64_t id, b;
    snprintf(path, sizeof path, "%s/ttl.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    m.text = "scratch note qqscratchmarker";
    m.ttl = 7 * 86400;
    T_EQ_INT(cairn_memory_add(h, &m, &id), CAIRN_OK);
    add(h, "fact", "lasting", NULL, 0);
    T_EQ_INT(listed(h, NULL, NULL, 0), 2);
    /* as if a week had passed */
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE memories SET expires_at = expires_at - 8 * 86400 "
                                 "WHERE expires_at IS NOT NULL", NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(h->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL), SQLITE_OK);
    T_CHECK(store_holds(path, "qqscratchmarker"));
    /* a reader already hides it, before any writer removed it */
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &ro), CAIRN_OK);
    T_EQ_INT(listed(ro, NULL, NULL, 1), 1);
    T_EQ_INT(count(ro, "SELECT count(*) FROM memories"), 2);
    cairn_close(ro);
    cairn_close(h);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);     /* the open removes it */
    T_EQ_INT(count(h, "SELECT count(*) FROM memories"), 1);
    T_CHECK(!store_holds(path, "qqscratchmarker"));
    /* a handle that stays open: the next call removes what expired */
    m.text = "second scratch qqsecondmarker";
    m.ttl = 60;
    T_EQ_INT(cairn_memory_add(h, &m, &b), CAIRN_OK);
    T_EQ_INT(sqlite3_exec(h->db, "UPDATE memories SET expires_at = 1 WHERE expires_at IS NOT NULL",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(listed(h, NULL, NULL, 1), 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM memories"), 1);
    T_CHECK(!store_holds(path, "qqsecondmarker"));
    cairn_close(h);
}

/* A store as version 7 left it (no memory tables), with a session: the
 * next open migrates it to 8 and keeps the session. */
static void test_migrate_v7(void)
{
    char path[300];
    struct cairn *h;
    sqlite3 *raw;
    snprintf(path, sizeof path, "%s/v7.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add_chat(h, "before", 3);
    cairn_close(h);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, MEMORY_TABLES_V8_DROP "PRAGMA user_version=7", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages"), 3);
    T_EQ_INT(count(h, "SELECT count(*) FROM sqlite_master WHERE name IN ('memories', "
                      "'memory_links', 'memory_history')"), 3);
    T_CHECK(add(h, "fact", "after the migration", NULL, 0) == 1);
    cairn_close(h);
}

static void test_export_import(void)
{
    struct cairn *h, *h2;
    char *out;
    size_t len, added = 0;
    T_EQ_INT(t_open(":memory:", 0, &h), CAIRN_OK);
    int64_t a = add(h, "preference", "line one\nline \"two\"", "p", 0);
    int64_t b = add(h, "preference", "replacement", "p", a);
    int64_t c = add(h, "correction", "never bump the version", NULL, 0);
    T_EQ_INT(cairn_memory_link(h, c, b, "contradicts"), CAIRN_OK);
    T_EQ_INT(cairn_memories_export(h, &out, &len), CAIRN_OK);
    T_EQ_INT(t_open(":memory:", 0, &h2), CAIRN_OK);
    add(h2, "fact", "already here", NULL, 0);       /* so new ids differ from the file's */
    T_EQ_INT(cairn_memories_import(h2, out, len, &added), CAIRN_OK);
    T_EQ_INT(added, 3);
    T_EQ_INT(listed(h2, NULL, NULL, 0), 3);         /* the superseded one is not listed */
    T_EQ_INT(listed(h2, NULL, NULL, 1), 4);
    T_EQ_INT(count(h2, "SELECT count(*) FROM memories WHERE text = 'line one' || char(10) || "
                       "'line \"two\"' AND superseded_by = (SELECT id FROM memories WHERE "
                       "text = 'replacement')"), 1);
    T_EQ_INT(count(h2, "SELECT count(*) FROM memory_links l JOIN memories s ON s.id = l.src "
                       "JOIN memories d ON d.id = l.dst WHERE l.kind = 'contradicts' AND "
                       "s.type = 'correction' AND d.text = 'replacement'"), 1);
    free(out);

    /* errors name their line; nothing of a bad file is written */
    static const struct { const char *in, *msg; int rc; } bad[] = {
        { "{\"text\":\"a\"}\n\n{\"text\":\"b\"\n", "line 3", CAIRN_INVALID },
        { "{\"text\":\"a\"}\n{\"text\":\"b\",\"type\":\"rumour\"}\n", "line 2", CAIRN_INVALID },
        { "{\"text\":\"a\",\"superseded_by\":9}\n", "line 1: superseded_by 9", CAIRN_INVALID },
        { "{\"id\":1,\"text\":\"a\"}\n{\"id\":1,\"text\":\"b\"}\n", "line 2: id 1 again",
          CAIRN_INVALID },
        { "[1]\n", "line 1: not a JSON object", CAIRN_INVALID },
        { "{\"text\":\"a\"} x\n", "line 1, column 13", CAIRN_INVALID },
        { "{\"text\":\"a\",\"created\":\"soon\"}\n", "line 1: \"created\"", CAIRN_INVALID },
        { "{\"text\":\"a\",\"links\":[{\"kind\":\"x\",\"to\":1}]}\n", "line 1: link kind",
          CAIRN_INVALID },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        added = 0;
        T_EQ_INT(cairn_memories_import(h2, bad[i].in, strlen(bad[i].in), &added), bad[i].rc);
        if (!strstr(cairn_errmsg(h2), bad[i].msg))
            T_EQ_STR(cairn_errmsg(h2), bad[i].msg);
        T_EQ_INT(added, 0);
    }
    T_EQ_INT(listed(h2, NULL, NULL, 1), 4);
    /* an expired memory is skipped, a reference to it dropped */
    const char *exp = "{\"id\":1,\"text\":\"gone\",\"expires\":\"2001-01-01T00:00:00Z\"}\n"
                      "{\"id\":2,\"text\":\"stays\",\"links\":[{\"kind\":\"related_to\",\"to\":1}]}\n";
    added = 0;
    T_EQ_INT(cairn_memories_import(h2, exp, strlen(exp), &added), CAIRN_OK);
    T_EQ_INT(added, 1);
    T_EQ_INT(count(h2, "SELECT count(*) FROM memories WHERE text = 'gone'"), 0);
    cairn_close(h2);
    cairn_close(h);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_add_list);
    T_RUN(test_update_undo);
    T_RUN(test_supersede_links);
    T_RUN(test_remove_wipes);
    T_RUN(test_ttl);
    T_RUN(test_migrate_v7);
    T_RUN(test_export_import);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_memory: could not remove %s\n", dir);
    return T_DONE();
}
