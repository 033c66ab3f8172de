/*
 * test_store_fts.c: messages_fts stays in step with messages through
 * every change the library makes to a message: an insert (cairn_add),
 * a rewrite (a reply extended, a secret masked by cairn_redact_store) and
 * a delete (cairn_forget). Since schema version 7 the code that writes a
 * message does it (store/fts.c), with no trigger; checked on a new store
 * and on a version 6 store migrated on open, where a trigger left behind
 * would remove each row twice and corrupt the index.
 *
 * In step means: FTS5's integrity check, comparing the index with the
 * content table, passes; the index has one row a message; a word is
 * found exactly in the messages that hold it now.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"

#define SECRET "ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo"

static char dir[] = "/tmp/cairn-test-store-fts-XXXXXX";

static int64_t matches(struct cairn *h, const char *word)
{
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM messages_fts WHERE messages_fts MATCH '%s'",
             word);
    return count(h, sql);
}

static void check_in_step(struct cairn *h, const char *when)
{
    int src = sqlite3_exec(h->db, "INSERT INTO messages_fts(messages_fts, rank) "
                           "VALUES ('integrity-check', 1)", NULL, NULL, NULL);
    if (src != SQLITE_OK)
        fprintf(stderr, "after %s: %s\n", when, sqlite3_errmsg(h->db));
    T_EQ_INT(src, SQLITE_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages_fts_docsize"),
             count(h, "SELECT count(*) FROM messages"));
}

static int add(struct cairn *h, const char *sid, const char *id, const char *text,
               struct cairn_add_stats *st)
{
    struct cairn_message m = { id, "assistant", NULL, text, 0, CAIRN_NO_TIME };
    struct cairn_session s = { 0 };
    s.id = sid;
    s.started_at = s.ended_at = CAIRN_NO_TIME;
    s.messages = &m;
    s.n_messages = 1;
    return cairn_add_session(h, &s, st);
}

/* Insert, extend, redact, forget: each leaves the index in step. */
static void exercise(struct cairn *h)
{
    struct cairn_add_stats st = { 0 };
    struct cairn_redact_report rep;
    int64_t had = matches(h, "message"), rows = count(h, "SELECT count(*) FROM messages");
    add_chat(h, "chat", 4);
    T_EQ_INT(add(h, "reply", "r1", "the quokka", &st), CAIRN_OK);
    check_in_step(h, "insert");
    T_EQ_INT(matches(h, "quokka"), 1);
    T_EQ_INT(add(h, "reply", "r1", "the quokka jumped over the wombat", &st), CAIRN_OK);
    T_EQ_INT((int)st.messages_extended, 1);
    check_in_step(h, "extend");
    T_EQ_INT(matches(h, "quokka"), 1);
    T_EQ_INT(matches(h, "wombat"), 1);

    /* a secret stored while masking was off, masked afterwards */
    T_EQ_INT(cairn_set(h, "redact", "0"), CAIRN_OK);
    T_EQ_INT(add(h, "leak", NULL, "my token is " SECRET " keep it", NULL), CAIRN_OK);
    T_EQ_INT(cairn_set(h, "redact", NULL), CAIRN_OK);
    check_in_step(h, "insert with a secret");
    T_EQ_INT(matches(h, "ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo"), 1);
    memset(&rep, 0, sizeof rep);
    T_EQ_INT(cairn_redact_store(h, 0, &rep), CAIRN_OK);
    T_EQ_INT((int)rep.messages_changed, 1);
    check_in_step(h, "redact");
    T_EQ_INT(matches(h, "ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo"), 0);
    T_EQ_INT(matches(h, "token"), 1);

    T_EQ_INT(cairn_forget(h, "reply"), CAIRN_OK);
    check_in_step(h, "forget");
    T_EQ_INT(matches(h, "wombat"), 0);
    T_EQ_INT(matches(h, "message"), had + 4);
    T_EQ_INT(cairn_forget(h, "chat"), CAIRN_OK);
    check_in_step(h, "forget");
    T_EQ_INT(matches(h, "message"), had);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages"), rows + 1);
}

/* A message too long to record (TEXT_TOKS_MAX tokens: ingest counts it
 * and the index tokenizes it, two passes) and one just under: the same
 * length and index either way. */
static void test_long_message(void)
{
    char path[256];
    struct cairn *h;
    snprintf(path, sizeof path, "%s/long.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    static const int words[2] = { TEXT_TOKS_MAX + 10, TEXT_TOKS_MAX - 10 };
    for (int k = 0; k < 2; k++) {
        size_t n = (size_t)words[k] * 6;
        char *text = malloc(n + 1), sid[16], sql[128];
        T_CHECK(text != NULL);
        if (!text)
            break;
        for (int i = 0; i < words[k]; i++)
            memcpy(text + (size_t)i * 6, i % 2 ? "kiwi  " : "tuis  ", 6);
        text[n] = '\0';
        snprintf(sid, sizeof sid, "long%d", k);
        T_EQ_INT(add(h, sid, NULL, text, NULL), CAIRN_OK);
        snprintf(sql, sizeof sql, "SELECT ntok FROM messages m JOIN sessions s ON s.id = "
                 "m.session WHERE s.ext_id = '%s'", sid);
        T_EQ_INT(count(h, sql), words[k]);
        T_EQ_INT(count(h, sql), text_count_words(text, n));
        free(text);
    }
    check_in_step(h, "long messages");
    T_EQ_INT(matches(h, "kiwi"), 2);
    T_EQ_INT(matches(h, "tuis"), 2);
    cairn_close(h);
}

static void test_new_store(void)
{
    char path[256];
    struct cairn *h;
    snprintf(path, sizeof path, "%s/new.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND "
                   "sql LIKE '%messages_fts%'"), 0);
    exercise(h);
    cairn_close(h);
}

/* A store as version 6 left it (the FTS delete and update triggers, one
 * session), migrated by the next open. */
static void test_migrated_store(void)
{
    char path[256];
    struct cairn *h;
    sqlite3 *raw;
    snprintf(path, sizeof path, "%s/v6.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add_chat(h, "before", 3);
    cairn_close(h);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    /* the triggers last: ALTER TABLE (version 25's columns) reads the whole
     * schema, which they stop on a raw connection */
    T_EQ_INT(sqlite3_exec(raw, MEMORY_TABLES_V8_DROP FTS_TRIGGERS_V1_TO_6 "PRAGMA user_version=6", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND "
                   "sql LIKE '%messages_fts%'"), 0);
    check_in_step(h, "the migration");
    exercise(h);
    T_EQ_INT(cairn_forget(h, "before"), CAIRN_OK);
    check_in_step(h, "forget of a session stored before the migration");
    T_EQ_INT(matches(h, "message"), 0);
    cairn_close(h);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_new_store);
    T_RUN(test_migrated_store);
    T_RUN(test_long_message);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "test_store_fts: could not remove %s\n", dir);
    return T_DONE();
}
