/*
 * test_store.c: the store through the public API: open, add, dedupe,
 * read back, forget, versions, and that bad input writes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "t.h"
#include "t_open.h"
#include "cairn.h"
#include "internal.h"
#include "util/buf.h"
#include "t_store.h"   /* AFTER_V8_DROP: what each migration after 8 added */

static char dir[] = "/tmp/cairn-test-store-XXXXXX";

static struct cairn *open_new(const char *name)
{
    char path[256];
    struct cairn *db;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    unlink(path);
    int rc = t_open(path, 0, &db);
    T_EQ_INT(rc, CAIRN_OK);
    if (rc)
        fprintf(stderr, "%s\n", cairn_errmsg(db));
    return db;
}

static int count_cb(void *arg, const struct cairn_message_info *m)
{
    (*(int *)arg)++;
    return 0;
}

static int nmsgs(struct cairn *db, const char *sid)
{
    int n = 0;
    if (cairn_messages(db, sid, 0, -1, count_cb, &n) != CAIRN_OK)
        return -1;
    return n;
}

static void test_add_and_dedupe(void)
{
    struct cairn *db = open_new("a.db");
    struct cairn_message m[3] = {
        { "m1", "user", NULL, "hello there", 0, CAIRN_NO_TIME },
        { NULL, "assistant", NULL, "hi", 0, CAIRN_NO_TIME },
        { NULL, "assistant", NULL, "hi", 0, CAIRN_NO_TIME },
    };
    struct cairn_session s = { "s1", "test", "p", "t", CAIRN_NO_TIME, CAIRN_NO_TIME, NULL, m, 3 };
    struct cairn_add_stats st = { 0 };
    T_EQ_INT(cairn_add_session(db, &s, &st), CAIRN_OK);
    T_EQ_INT(st.sessions_added, 1);
    T_EQ_INT(st.messages_added, 3);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_add_session(db, &s, &st), CAIRN_OK);
    T_EQ_INT(st.sessions_added, 0);
    T_EQ_INT(st.messages_added, 0);
    T_EQ_INT(st.messages_skipped, 3);
    T_EQ_INT(nmsgs(db, "s1"), 3);
    /* a third identical "hi" is new */
    struct cairn_message m2[4] = { m[0], m[1], m[2], m[2] };
    s.messages = m2;
    s.n_messages = 4;
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_add_session(db, &s, &st), CAIRN_OK);
    T_EQ_INT(st.messages_added, 1);
    T_EQ_INT(st.sessions_updated, 1);
    T_EQ_INT(nmsgs(db, "s1"), 4);
    /* bad role: nothing written */
    struct cairn_message bad[2] = {
        { NULL, "user", NULL, "fine", 0, CAIRN_NO_TIME },
        { NULL, "robot", NULL, "not fine", 0, CAIRN_NO_TIME },
    };
    struct cairn_session sb = { "s2", NULL, NULL, NULL, CAIRN_NO_TIME, CAIRN_NO_TIME, NULL, bad, 2 };
    T_EQ_INT(cairn_add_session(db, &sb, NULL), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "robot") != NULL);
    T_EQ_INT(nmsgs(db, "s2"), -1);
    T_EQ_INT(cairn_session_get(db, "s2", NULL, NULL), CAIRN_NOTFOUND);
    cairn_close(db);
}

static int first_content(void *arg, const struct cairn_message_info *m)
{
    snprintf((char *)arg, 128, "%.*s", (int)m->content_len, m->content);
    return 1;   /* stop after the first */
}

static void test_extend(void)
{
    /* A reply stored while it was being written grows when the whole of
     * it comes; a different text under the same id does not replace it. */
    struct cairn *db = open_new("x.db");
    struct cairn_message m = { "r1", "assistant", NULL, "The fix is in parser.c", 0, CAIRN_NO_TIME };
    struct cairn_session s = { "sx", NULL, NULL, NULL, CAIRN_NO_TIME, CAIRN_NO_TIME, NULL, &m, 1 };
    struct cairn_add_stats st = { 0 };
    char got[128] = "";
    T_EQ_INT(cairn_add_session(db, &s, &st), CAIRN_OK);
    m.content = "The fix is in parser.c; the test is test_quokka.c";
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_add_session(db, &s, &st), CAIRN_OK);
    T_EQ_INT(st.messages_extended, 1);
    T_EQ_INT(st.messages_added, 0);
    cairn_messages(db, "sx", 0, -1, first_content, got);
    T_EQ_STR(got, "The fix is in parser.c; the test is test_quokka.c");
    struct cairn_recall *r;
    T_EQ_INT(cairn_recall(db, "test_quokka.c", NULL, &r), CAIRN_OK);
    T_EQ_INT(r->n_items, 1);
    cairn_recall_free(r);
    m.content = "Something else entirely";
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_add_session(db, &s, &st), CAIRN_OK);
    T_EQ_INT(st.messages_extended, 0);
    T_EQ_INT(st.messages_skipped, 1);
    cairn_messages(db, "sx", 0, -1, first_content, got);
    T_EQ_STR(got, "The fix is in parser.c; the test is test_quokka.c");
    T_EQ_INT(nmsgs(db, "sx"), 1);
    cairn_close(db);
}

static void test_json(void)
{
    struct cairn *db = open_new("j.db");
    struct cairn_add_stats st = { 0 };
    const char *ok = "{\"id\":\"conv-26/S1\",\"started_at\":\"2023-05-08T13:56:00\",\"source\":"
                     "\"locomo\",\"project\":\"conv-26\",\"title\":\"t\",\"meta\":{\"k\":1},"
                     "\"messages\":[{\"id\":\"D1:1\",\"role\":\"user\",\"speaker\":\"Caroline\","
                     "\"content\":\"hi\",\"at\":\"2023-05-08T13:56:00\"},{\"id\":7,\"role\":"
                     "\"user\",\"speaker\":\"Mel\",\"content\":\"yo\",\"at\":1683554200}]}";
    T_EQ_INT(cairn_add_json(db, ok, strlen(ok), &st), CAIRN_OK);
    T_EQ_INT(st.messages_added, 2);
    const char *bad = "{\n  \"id\": \"x\",\n  \"messages\": [\n    {\"role\": \"user\" \"content\": 1}\n]}";
    T_EQ_INT(cairn_add_json(db, bad, strlen(bad), &st), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "line 4, column ") != NULL);
    fprintf(stderr, "(message for a bad session: %s)\n", cairn_errmsg(db));
    const char *types = "{\"id\":\"y\",\"messages\":[{\"role\":\"user\",\"content\":5}]}";
    T_EQ_INT(cairn_add_json(db, types, strlen(types), &st), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "content") != NULL);
    const char *nomsgs = "{\"id\":\"z\"}";
    T_EQ_INT(cairn_add_json(db, nomsgs, strlen(nomsgs), &st), CAIRN_INVALID);
    const char *arr = "[1,2]";
    T_EQ_INT(cairn_add_json(db, arr, strlen(arr), &st), CAIRN_INVALID);
    /* not NUL-terminated: only len bytes are read */
    char buf[64];
    const char *small = "{\"id\":\"n\",\"messages\":[]}";
    memcpy(buf, small, strlen(small));
    memset(buf + strlen(small), 'x', sizeof buf - strlen(small));
    T_EQ_INT(cairn_add_json(db, buf, strlen(small), &st), CAIRN_OK);
    cairn_close(db);
}

static void test_forget(void)
{
    struct cairn *db = open_new("f.db");
    const char *a = "{\"id\":\"keep\",\"messages\":[{\"role\":\"user\",\"content\":\"apples and pears\"}]}";
    const char *b = "{\"id\":\"drop\",\"messages\":[{\"role\":\"user\",\"content\":\"apples and plums\"}]}";
    T_EQ_INT(cairn_add_json(db, a, strlen(a), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, b, strlen(b), NULL), CAIRN_OK);
    T_EQ_INT(cairn_forget(db, "drop"), CAIRN_OK);
    T_EQ_INT(cairn_forget(db, "drop"), CAIRN_NOTFOUND);
    struct cairn_recall *r;
    T_EQ_INT(cairn_recall(db, "apples plums", NULL, &r), CAIRN_OK);
    T_EQ_INT(r->n_items, 1);
    T_CHECK(strstr(r->text, "pears") != NULL);
    T_CHECK(strstr(r->text, "plums") == NULL);
    cairn_recall_free(r);
    struct cairn_stats s;
    T_EQ_INT(cairn_get_stats(db, &s), CAIRN_OK);
    T_EQ_INT(s.sessions, 1);
    T_EQ_INT(s.messages, 1);
    cairn_close(db);
    /* the FTS index holds no row for the forgotten message */
    char path[256];
    sqlite3 *raw;
    snprintf(path, sizeof path, "%s/f.db", dir);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT count(*) FROM messages_fts_docsize", -1, &st, NULL),
             SQLITE_OK);
    T_EQ_INT(sqlite3_step(st), SQLITE_ROW);
    T_EQ_INT(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    sqlite3_close(raw);
}

static void test_versions(void)
{
    char path[256];
    struct cairn *db;
    sqlite3 *raw;
    /* a newer schema is refused */
    snprintf(path, sizeof path, "%s/new.db", dir);
    db = open_new("new.db");
    cairn_close(db);
    sqlite3_open(path, &raw);
    sqlite3_exec(raw, "PRAGMA user_version=999", NULL, NULL, NULL);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_VERSION_TOO_NEW);
    T_CHECK(strstr(cairn_errmsg(db), "upgrade cairn") != NULL);
    cairn_close(db);
    /* someone else's SQLite file is not touched */
    snprintf(path, sizeof path, "%s/other.db", dir);
    unlink(path);
    sqlite3_open(path, &raw);
    sqlite3_exec(raw, "CREATE TABLE t(x); INSERT INTO t VALUES(1)", NULL, NULL, NULL);
    sqlite3_close(raw);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_CORRUPT);
    cairn_close(db);
    /* garbage */
    snprintf(path, sizeof path, "%s/garbage.db", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 200; i++)
        fputs("garbage ", f);
    fclose(f);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_CORRUPT);
    cairn_close(db);
    /* missing, read-only */
    snprintf(path, sizeof path, "%s/none.db", dir);
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &db), CAIRN_NOTFOUND);
    cairn_close(db);
    /* an empty file (created by someone, never written) becomes a store */
    snprintf(path, sizeof path, "%s/empty.db", dir);
    f = fopen(path, "w");
    fclose(f);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    cairn_close(db);
}

static int cache_kib(struct cairn *db)
{
    sqlite3_stmt *st = NULL;
    int kib = 0;
    if (sqlite3_prepare_v2(db->db, "PRAGMA cache_size", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        kib = -sqlite3_column_int(st, 0);      /* negative: KiB, not pages */
    sqlite3_finalize(st);
    return kib;
}

/* The page cache a handle gets (store/tx.c): 16 MB for a writer, 256 KB
 * for a one-shot reader (a bigger one is fresh memory to fault in), what
 * store.cache_mb asks for a long-lived one. */
static void test_cache_size(void)
{
    char path[256];
    struct cairn *db = open_new("cache.db"), *ro = NULL;
    T_EQ_INT(cache_kib(db), 16000);
    cairn_close(db);
    snprintf(path, sizeof path, "%s/cache.db", dir);
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &ro), CAIRN_OK);
    T_EQ_INT(cache_kib(ro), 256);
    T_EQ_INT(cairn_set(ro, "store.cache_mb", "64"), CAIRN_OK);
    T_EQ_INT(cache_kib(ro), 64000);
    cairn_close(ro);
}

static void test_budget_property(void)
{
    /* No output ever exceeds its budget, over many questions and budgets. */
    struct cairn *db = open_new("p.db");
    char json[2048];
    const char *words[] = { "apple", "kernel", "北京", "climbing", "release", "v1.2.3",
                            "getUserName", "dentist", "insurance", "上周", "tokenizer", "Lisbon" };
    unsigned seed = 12345;
    for (int s = 0; s < 40; s++) {
        int n = snprintf(json, sizeof json, "{\"id\":\"s%d\",\"started_at\":\"2024-01-%02d\","
                         "\"messages\":[", s, 1 + s % 28);
        for (int m = 0; m < 6; m++) {
            n += snprintf(json + n, sizeof json - (size_t)n, "%s{\"role\":\"%s\",\"content\":\"",
                          m ? "," : "", m % 2 ? "assistant" : "user");
            int len = 5 + (int)((seed = seed * 1103515245 + 12345) >> 16) % 40;
            for (int w = 0; w < len && n < 1800; w++) {
                seed = seed * 1103515245 + 12345;
                n += snprintf(json + n, sizeof json - (size_t)n, "%s ",
                              words[(seed >> 16) % 12]);
            }
            n += snprintf(json + n, sizeof json - (size_t)n, "\"}");
        }
        snprintf(json + n, sizeof json - (size_t)n, "]}");
        T_EQ_INT(cairn_add_json(db, json, strlen(json), NULL), CAIRN_OK);
    }
    const char *qs[] = { "apple kernel", "北京 上周", "what did I do last week", "Lisbon dentist",
                         "getUserName v1.2.3 release", "nothing matches zzz" };
    const int budgets[] = { 50, 80, 120, 200, 333, 500, 1000, 4000 };
    int over = 0, runs = 0;
    for (size_t qi = 0; qi < sizeof qs / sizeof qs[0]; qi++) {
        for (size_t bi = 0; bi < sizeof budgets / sizeof budgets[0]; bi++) {
            for (int method = 0; method < 2; method++) {
                struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
                struct cairn_recall *r;
                o.budget = budgets[bi];
                o.method = method ? CAIRN_METHOD_RAW_BM25 : CAIRN_METHOD_DEFAULT;
                cairn_parse_time("2024-02-01", &o.now);
                if (cairn_recall(db, qs[qi], &o, &r) != CAIRN_OK) {
                    over++;
                    continue;
                }
                runs++;
                int t = cairn_count_tokens(r->text, strlen(r->text));
                if (t > o.budget || r->tokens != t) {
                    over++;
                    fprintf(stderr, "over budget: %s at %d: %d tokens\n", qs[qi], o.budget, t);
                }
                cairn_recall_free(r);
            }
        }
    }
    T_EQ_INT(over, 0);
    T_EQ_INT(runs, 96);
    cairn_close(db);
}

/* The stats and the session listing read maintained totals; after every
 * kind of write they must equal a count over the messages themselves. */
static int64_t scan(const char *path, const char *sql)
{
    sqlite3 *raw;
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_open(path, &raw) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(raw, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(raw);
    return v;
}

static int sum_listed(void *arg, const struct cairn_session_info *si)
{
    *(int64_t *)arg += (int64_t)si->n_messages;
    return 0;
}

/* Sessions of test_totals and test_group: a in a project, b without one,
 * then b with a reply (appended) and that reply longer (extended). */
static const char *const tot_a = "{\"id\":\"a\",\"project\":\"/p/one\",\"messages\":[{\"role\":"
                                 "\"user\",\"content\":\"caf\\u00e9 au lait\"},{\"role\":"
                                 "\"assistant\",\"content\":\"ok\"}]}";
static const char *const tot_b = "{\"id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":"
                                 "\"no project\"}]}";
static const char *const tot_b2 = "{\"id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":"
                                  "\"no project\"},{\"id\":\"r\",\"role\":\"assistant\","
                                  "\"content\":\"half\"}]}";
static const char *const tot_b3 = "{\"id\":\"b\",\"messages\":[{\"role\":\"user\",\"content\":"
                                  "\"no project\"},{\"id\":\"r\",\"role\":\"assistant\","
                                  "\"content\":\"half of a longer reply\"}]}";

static void check_totals(struct cairn *db, const char *path, int64_t want_loose, int64_t want_projects)
{
    struct cairn_stats s;
    int64_t listed = 0;
    T_EQ_INT(cairn_get_stats(db, &s), CAIRN_OK);
    T_EQ_INT(s.messages, scan(path, "SELECT count(*) FROM messages"));
    T_EQ_INT(s.user_messages, scan(path, "SELECT count(*) FROM messages WHERE role = 'user'"));
    T_EQ_INT(s.assistant_messages, scan(path, "SELECT count(*) FROM messages WHERE role <> 'user'"));
    T_EQ_INT(s.content_bytes,
             scan(path, "SELECT coalesce(sum(length(CAST(content AS BLOB))), 0) FROM messages"));
    T_EQ_INT(s.loose_sessions, want_loose);
    T_EQ_INT(s.projects, want_projects);
    T_EQ_INT(cairn_sessions(db, NULL, 0, 0, sum_listed, &listed), CAIRN_OK);
    T_EQ_INT(listed, s.messages);
    /* the one-row totals (schema 14) against the rows they sum */
    T_EQ_INT(scan(path, "SELECT ntok FROM store_totals"),
             scan(path, "SELECT coalesce(sum(ntok), 0) FROM messages"));
    T_EQ_INT(scan(path, "SELECT units FROM store_totals"),
             scan(path, "SELECT coalesce(sum(CASE WHEN nuser = n THEN n ELSE nuser END), 0) "
                        "FROM session_stats"));
    T_EQ_INT(scan(path, "SELECT count(*) FROM store_totals"), 1);
}

static void test_totals(void)
{
    char path[256];
    struct cairn *db = open_new("tot.db");
    snprintf(path, sizeof path, "%s/tot.db", dir);
    const char *a = tot_a, *b = tot_b, *b2 = tot_b2, *b3 = tot_b3;
    const char *c = "{\"id\":\"c\",\"project\":\"/p/two\",\"messages\":[{\"role\":\"user\",\"content\":"
                    "\"my key is sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}]}";
    struct cairn_redact_report rep;
    check_totals(db, path, 0, 0);
    T_EQ_INT(cairn_add_json(db, a, strlen(a), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, b, strlen(b), NULL), CAIRN_OK);
    check_totals(db, path, 1, 1);
    T_EQ_INT(cairn_add_json(db, b2, strlen(b2), NULL), CAIRN_OK);   /* appended */
    T_EQ_INT(cairn_add_json(db, b3, strlen(b3), NULL), CAIRN_OK);   /* extended */
    T_EQ_INT(cairn_add_json(db, c, strlen(c), NULL), CAIRN_OK);
    check_totals(db, path, 1, 2);
    T_EQ_INT(cairn_redact_store(db, 0, &rep), CAIRN_OK);   /* rewrites nothing or c */
    check_totals(db, path, 1, 2);
    int rc = cairn_forget(db, "a");
    T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    check_totals(db, path, 1, 1);
    rc = cairn_forget(db, "b");
    T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    check_totals(db, path, 0, 1);
    cairn_close(db);
    /* a version-8 store (no time indexes) migrates and keeps its answers */
    sqlite3 *raw;
    struct cairn_stats before, after;
    db = NULL;
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_get_stats(db, &before), CAIRN_OK);
    cairn_close(db);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, AFTER_V8_DROP "PRAGMA user_version=8", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(scan(path, "SELECT count(*) FROM sqlite_master WHERE name IN "
                        "('sessions_first', 'sessions_last')"), 0);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_get_stats(db, &after), CAIRN_OK);
    T_CHECK(after.schema_version > 8);
    T_EQ_INT(after.first_at, before.first_at);
    T_EQ_INT(after.last_at, before.last_at);
    T_EQ_INT(after.messages, before.messages);
    check_totals(db, path, 0, 1);        /* store_totals made from session_stats */
    const char *d = "{\"id\":\"d\",\"messages\":[{\"role\":\"user\",\"content\":\"after the "
                    "migration\"},{\"role\":\"assistant\",\"content\":\"kept in step\"}]}";
    T_EQ_INT(cairn_add_json(db, d, strlen(d), NULL), CAIRN_OK);
    check_totals(db, path, 1, 1);
    cairn_close(db);
    T_EQ_INT(scan(path, "SELECT count(*) FROM sqlite_master WHERE name IN "
                        "('sessions_first', 'sessions_last')"), 2);
}

/* cairn_add_group: sessions share a transaction until the commit, with
 * the same rows and totals as one transaction each; a failure takes the
 * open group back whole; another write and cairn_close land it. */
static void test_group(void)
{
    char path[256];
    struct cairn *db = open_new("grp.db");
    snprintf(path, sizeof path, "%s/grp.db", dir);
    const char *a = tot_a, *b = tot_b, *b2 = tot_b2, *b3 = tot_b3;
    const char *d = "{\"id\":\"d\",\"messages\":[{\"role\":\"user\",\"content\":\"kept\"}]}";
    const char *e = "{\"id\":\"e\",\"messages\":[{\"role\":\"user\",\"content\":\"boom\"}]}";
    const char *f = "{\"id\":\"f\",\"messages\":[{\"role\":\"user\",\"content\":\"at close\"}]}";
    struct cairn_add_stats st = { 0 };

    T_EQ_INT(cairn_add_pending(db), 0);
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, a, strlen(a), &st), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, b, strlen(b), &st), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, b2, strlen(b2), &st), CAIRN_OK);   /* appended */
    T_EQ_INT(cairn_add_json(db, b3, strlen(b3), &st), CAIRN_OK);   /* extended */
    T_EQ_INT((int)cairn_add_pending(db), 4);
    T_EQ_INT(scan(path, "SELECT count(*) FROM messages"), 0);      /* not yet */
    T_EQ_INT(nmsgs(db, "b"), 2);            /* the handle reads its own group */
    T_EQ_INT(cairn_add_commit(db), CAIRN_OK);
    T_EQ_INT(cairn_add_pending(db), 0);
    T_EQ_INT(scan(path, "SELECT count(*) FROM messages"), 4);
    T_EQ_INT((int)st.sessions_added, 2);
    T_EQ_INT((int)st.messages_added, 4);
    T_EQ_INT((int)st.messages_extended, 1);
    check_totals(db, path, 1, 1);           /* the deferred session_stats */
    T_EQ_INT(scan(path, "SELECT n FROM session_stats JOIN sessions s ON s.id = session "
                        "WHERE s.ext_id = 'b'"), 2);
    /* a group add merges FTS5's segments 16 at a time (ingest.c,
     * fts_bulk_begin), a setting stored with its first commit */
    T_EQ_INT(scan(path, "SELECT v FROM messages_fts_config WHERE k = 'automerge'"), 16);

    /* a failure while writing takes the whole open group back */
    sqlite3 *raw;
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, "CREATE TRIGGER boom BEFORE INSERT ON messages WHEN "
                               "NEW.content = 'boom' BEGIN SELECT RAISE(ABORT, 'boom'); END",
                          NULL, NULL, NULL), SQLITE_OK);
    T_EQ_INT(cairn_add_json(db, d, strlen(d), NULL), CAIRN_OK);
    T_EQ_INT((int)cairn_add_pending(db), 1);
    T_CHECK(cairn_add_json(db, e, strlen(e), NULL) != CAIRN_OK);
    T_EQ_INT(cairn_add_pending(db), 0);
    T_EQ_INT(cairn_add_commit(db), CAIRN_OK);                      /* nothing open */
    T_EQ_INT(scan(path, "SELECT count(*) FROM sessions WHERE ext_id IN ('d', 'e')"), 0);
    check_totals(db, path, 1, 1);
    T_EQ_INT(sqlite3_exec(raw, "DROP TRIGGER boom", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    T_EQ_INT(cairn_add_json(db, d, strlen(d), NULL), CAIRN_OK);     /* added again */

    /* another write lands the group first, then does its own */
    int rc = cairn_forget(db, "a");
    T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    T_EQ_INT(cairn_add_pending(db), 0);
    T_EQ_INT(scan(path, "SELECT count(*) FROM sessions WHERE ext_id IN ('a', 'd')"), 1);
    check_totals(db, path, 2, 0);

    /* cairn_close commits an open group */
    T_EQ_INT(cairn_add_json(db, f, strlen(f), NULL), CAIRN_OK);
    T_EQ_INT((int)cairn_add_pending(db), 1);
    cairn_close(db);
    T_EQ_INT(scan(path, "SELECT count(*) FROM sessions WHERE ext_id = 'f'"), 1);
    /* and takes the setting out again, as cairn_add_group(db, 0) does */
    T_EQ_INT(scan(path, "SELECT count(*) FROM messages_fts_config WHERE k <> 'version'"), 0);

    /* off: one transaction a session again, the setting gone with the group mode */
    const char *g = "{\"id\":\"g\",\"messages\":[{\"role\":\"user\",\"content\":\"grouped\"}]}";
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    T_EQ_INT(cairn_add_json(db, g, strlen(g), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_commit(db), CAIRN_OK);
    T_EQ_INT(scan(path, "SELECT v FROM messages_fts_config WHERE k = 'automerge'"), 16);
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    T_EQ_INT(scan(path, "SELECT count(*) FROM messages_fts_config WHERE k <> 'version'"), 0);
    T_EQ_INT(cairn_add_json(db, a, strlen(a), NULL), CAIRN_OK);
    T_EQ_INT(cairn_add_pending(db), 0);
    T_EQ_INT(scan(path, "SELECT count(*) FROM sessions WHERE ext_id = 'a'"), 1);
    T_EQ_INT(scan(path, "SELECT count(*) FROM messages_fts_config WHERE k <> 'version'"), 0);
    check_totals(db, path, 4, 1);
    cairn_close(db);
}

/* cairn_prepare_json (on a preparer, as `cairn add`'s second thread runs
 * it) then cairn_add_prepared, against cairn_add_json: the same results,
 * messages, stats and rows, refused sessions included, in a group. */
static void test_prepared(void)
{
    char p1[256], p2[256];
    struct cairn *d1 = open_new("prep1.db"), *d2 = open_new("prep2.db"), *d3 = open_new("prep3.db");
    snprintf(p1, sizeof p1, "%s/prep1.db", dir);
    snprintf(p2, sizeof p2, "%s/prep2.db", dir);
    const char *in[] = {
        tot_a, tot_b, tot_b2, tot_b3,
        "{\"id\":\"m\",\"messages\":[",
        "[1]",
        "{\"id\":\"r\",\"messages\":[{\"role\":\"system\",\"content\":\"x\"}]}",
        "{\"id\":\"t\",\"messages\":[{\"role\":\"user\",\"content\":\"x\",\"at\":\"soon\"}]}",
        "{\"id\":\"i\",\"messages\":[{\"id\":\"1\",\"role\":\"user\",\"content\":\"a\"},"
        "{\"id\":\"1\",\"role\":\"user\",\"content\":\"b\"}]}",
        "{\"id\":\"k\",\"title\":\"ghp_T1tleT0kenAbCdEfGhIjKlMnOpQrStUv9876\",\"messages\":[{\"role\":"
        "\"user\",\"content\":\"mine <private>hidden</private> yesterday at noon\",\"at\":"
        "\"2026-03-05T10:00:00Z\"},{\"role\":\"assistant\",\"content\":\"last week, the fix\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"no id two days ago\",\"at\":1700000000}]}",
        tot_b3,
    };
    struct cairn_add_stats s1 = { 0 }, s2 = { 0 };
    struct cairn_preparer *pp = NULL;
    T_EQ_INT(cairn_preparer_new(d2, &pp), CAIRN_OK);
    T_CHECK(pp != NULL);
    T_EQ_INT(cairn_add_group(d1, 1), CAIRN_OK);
    T_EQ_INT(cairn_add_group(d2, 1), CAIRN_OK);
    for (size_t i = 0; pp && i < sizeof in / sizeof in[0]; i++) {
        int r1 = cairn_add_json(d1, in[i], strlen(in[i]), &s1);
        char m1[512];
        snprintf(m1, sizeof m1, "%s", cairn_errmsg(d1));
        struct cairn_prepared *pr = cairn_prepare_json(pp, in[i], strlen(in[i]));
        T_CHECK(pr != NULL);
        /* what `cairn add`'s queue bounds itself by: at least its input */
        T_CHECK(cairn_prepared_bytes(pr) >= strlen(in[i]));
        int r2 = cairn_add_prepared(d2, pr, &s2);
        cairn_prepared_free(pr);
        T_EQ_INT(r2, r1);
        if (r1)
            T_EQ_STR(cairn_errmsg(d2), m1);
    }
    /* a session's records counted: ten times the text, well over ten times the size */
    if (pp) {
        struct buf big = BUF_INIT, one = BUF_INIT;
        buf_adds(&big, "{\"id\":\"z\",\"messages\":[{\"role\":\"user\",\"content\":\"");
        buf_adds(&one, "{\"id\":\"z\",\"messages\":[{\"role\":\"user\",\"content\":\"");
        for (int i = 0; i < 2000; i++)
            buf_adds(&big, "websocket reconnect ");
        for (int i = 0; i < 200; i++)
            buf_adds(&one, "websocket reconnect ");
        buf_adds(&big, "\"}]}");
        buf_adds(&one, "\"}]}");
        struct cairn_prepared *pb = cairn_prepare_json(pp, big.p, big.n);
        struct cairn_prepared *po = cairn_prepare_json(pp, one.p, one.n);
        T_CHECK(pb && po && cairn_prepared_bytes(pb) > 3 * big.n);
        T_CHECK(pb && po && cairn_prepared_bytes(pb) > 9 * cairn_prepared_bytes(po) / 2);
        T_EQ_INT((int)cairn_prepared_bytes(NULL), 0);
        cairn_prepared_free(pb);
        cairn_prepared_free(po);
        buf_release(&big);
        buf_release(&one);
    }
    cairn_preparer_free(pp);
    T_EQ_INT(cairn_add_group(d1, 0), CAIRN_OK);
    T_EQ_INT(cairn_add_group(d2, 0), CAIRN_OK);
    T_EQ_INT((int)s2.sessions_added, (int)s1.sessions_added);
    T_EQ_INT((int)s2.sessions_updated, (int)s1.sessions_updated);
    T_EQ_INT((int)s2.messages_added, (int)s1.messages_added);
    T_EQ_INT((int)s2.messages_extended, (int)s1.messages_extended);
    T_EQ_INT((int)s2.messages_skipped, (int)s1.messages_skipped);
    T_EQ_INT((int)s2.secrets_masked, (int)s1.secrets_masked);
    T_CHECK(s1.messages_added >= 6 && s1.secrets_masked >= 1 && s1.messages_extended >= 1);
    const char *q[] = {
        "SELECT count(*) FROM messages",
        "SELECT sum(id * 7 + position * 3 + ntok + length(content) + hash % 1000) FROM messages",
        "SELECT count(*) FROM message_events",
        "SELECT sum(msg * 5 + (t_from % 100000) + (t_to % 1000)) FROM message_events",
        "SELECT sum(session * 3 + n * 5 + ntok) FROM session_stats",
        "SELECT sum(first + last * 3 + length(lens)) FROM msg_runs",
        "SELECT sum(id + length(ext_id) + length(title) * 7) FROM sessions",
        "SELECT count(*) FROM messages WHERE content LIKE '%hidden%' OR content LIKE '%ghp_%'",
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++)
        T_EQ_INT(scan(p2, q[i]), scan(p1, q[i]));
    T_CHECK(scan(p1, "SELECT count(*) FROM message_events") > 0);
    /* out of memory in the preparing thread is the writer's NOMEM */
    T_EQ_INT(cairn_add_prepared(d2, NULL, NULL), CAIRN_NOMEM);
    /* "store.add_thread" "0": no preparer, the caller adds on one thread */
    T_EQ_INT(cairn_set(d3, "store.add_thread", "0"), CAIRN_OK);
    pp = (struct cairn_preparer *)1;
    T_EQ_INT(cairn_preparer_new(d3, &pp), CAIRN_OK);
    T_CHECK(pp == NULL);
    cairn_close(d1);
    cairn_close(d2);
    cairn_close(d3);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_add_and_dedupe);
    T_RUN(test_extend);
    T_RUN(test_json);
    T_RUN(test_forget);
    T_RUN(test_versions);
    T_RUN(test_cache_size);
    T_RUN(test_budget_property);
    T_RUN(test_totals);
    T_RUN(test_group);
    T_RUN(test_prepared);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return T_DONE();
}
