/*
 * test_events.c: the dates messages speak of (schema v15, store/events.c).
 * "Yesterday" in a message of 5 Dec is stored as 4 Dec; a question about
 * 4 Dec ranks that message above one that only matches as well on its
 * words, where recall without time (or before v15) ranked it below; the
 * rows follow a message through an extension of its text, a redaction and
 * forget; a v13 store gets them on migration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "internal.h"
#include "t_store.h"
#include "t_open.h"

static char dir[] = "/tmp/cairn-test-events-XXXXXX";

/* 2023-12-05 09:00 UTC, 2023-11-20 09:00 UTC, 2023-12-04 00:00 UTC */
#define DEC5   1701766800
#define NOV20  1700470800
#define DEC4_0 1701648000

static void add(struct cairn *h, const char *sid, int64_t at, const char *mid, const char *text)
{
    struct cairn_message m;
    memset(&m, 0, sizeof m);
    m.id = mid;
    m.role = "user";
    m.speaker = "Sam";
    m.content = text;
    m.at = at;
    struct cairn_session s = { 0 };
    s.id = sid;
    s.started_at = s.ended_at = at;
    s.messages = &m;
    s.n_messages = 1;
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
}

/* The message of the best-ranked item, "" if none. */
static const char *best(struct cairn *h, const char *q, int method, int64_t now)
{
    static char out[64];
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    o.budget = 2000;
    o.now = now;
    o.method = method;
    out[0] = 0;
    if (cairn_recall(h, q, &o, &r) != CAIRN_OK)
        return "error";
    for (size_t i = 0; i < r->n_items; i++)
        if (r->items[i].rank == 0)
            snprintf(out, sizeof out, "%s", r->items[i].message);
    cairn_recall_free(r);
    return out;
}

static void test_recall(void)
{
    char path[300];
    struct cairn *h = NULL;
    snprintf(path, sizeof path, "%s/recall.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    /* the shorter turn wins on words alone; the other says "yesterday" on
     * 5 Dec, which is the question's date */
    add(h, "a", NOV20, "a1", "we went to the county fair");
    add(h, "b", DEC5, "b1", "Yesterday we went to the county fair with the kids, so much fun");
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 1);
    T_EQ_INT(count(h, "SELECT t_from FROM message_events"), DEC4_0);
    T_EQ_INT(count(h, "SELECT t_to - t_from FROM message_events"), 86400);
    const char *q = "Which county fair did Sam go to on December 4, 2023?";
    int64_t later = DEC5 + 86400 * 30;
    T_EQ_STR(best(h, "county fair", CAIRN_METHOD_KEYWORD, later), "a1");
    T_EQ_STR(best(h, q, CAIRN_METHOD_NO_TIME, later), "a1");
    T_EQ_STR(best(h, q, CAIRN_METHOD_KEYWORD, later), "b1");
    /* "lately" is a leaning, not a period: the recent turn first (asked
     * two days after it) */
    T_EQ_STR(best(h, "which county fair lately?", CAIRN_METHOD_NO_TIME, DEC5 + 2 * 86400), "a1");
    T_EQ_STR(best(h, "which county fair lately?", CAIRN_METHOD_KEYWORD, DEC5 + 2 * 86400), "b1");
    cairn_close(h);
}

static void test_follow(void)
{
    char path[300];
    struct cairn *h = NULL;
    struct cairn_redact_report rep;
    snprintf(path, sizeof path, "%s/follow.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    /* what to keep: vague words, the message's own day and a year go */
    add(h, "v", DEC5, "v1", "lately I paint a lot; today too; in 2022 I did not");
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 0);
    /* a repeated range is one row */
    add(h, "r", DEC5, "r1", "yesterday was long. Yesterday!");
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 1);
    /* a message extended by a later read of its transcript */
    add(h, "x", DEC5, "x1", "Hi Tim,");
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events e JOIN messages m ON m.id = e.msg "
                      "WHERE m.ext_id = 'x1'"), 0);
    add(h, "x", DEC5, "x1", "Hi Tim, last week I lost my job");
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events e JOIN messages m ON m.id = e.msg "
                      "WHERE m.ext_id = 'x1'"), 1);
    /* a redaction rewrites the text: the rows are made again from it */
    T_EQ_INT(cairn_set(h, "redact", "0"), CAIRN_OK);
    add(h, "k", DEC5, "k1", "two days ago I set the key sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    T_EQ_INT(cairn_set(h, "redact", NULL), CAIRN_OK);
    int64_t before = count(h, "SELECT t_from FROM message_events e JOIN messages m "
                              "ON m.id = e.msg WHERE m.ext_id = 'k1'");
    T_EQ_INT(before, DEC4_0 - 86400);
    T_EQ_INT(cairn_redact_store(h, 0, &rep), CAIRN_OK);
    T_EQ_INT(count(h, "SELECT count(*) FROM messages WHERE content LIKE '%sk-ant%'"), 0);
    T_EQ_INT(count(h, "SELECT t_from FROM message_events e JOIN messages m "
                      "ON m.id = e.msg WHERE m.ext_id = 'k1'"), before);
    /* forget drops them with the session */
    int64_t n = count(h, "SELECT count(*) FROM message_events");
    int rc = cairn_forget(h, "x");
    T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), n - 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events e WHERE NOT EXISTS "
                      "(SELECT 1 FROM messages m WHERE m.id = e.msg)"), 0);
    cairn_close(h);
}

static void test_migration(void)
{
    char path[300];
    struct cairn *h = NULL;
    sqlite3 *raw;
    snprintf(path, sizeof path, "%s/v14.db", dir);
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add(h, "a", NOV20, "a1", "we went to the county fair");
    add(h, "b", DEC5, "b1", "Yesterday we went to the county fair with the kids, so much fun");
    add(h, "c", DEC5, "c1", "3 weeks ago we moved, and next Friday we fly");
    cairn_close(h);
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, AFTER_V16_DROP EVENTS_FILL_V16_DROP MESSAGE_EVENTS_V15_DROP "PRAGMA user_version=14", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    h = NULL;
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 3);
    T_EQ_INT(count(h, "SELECT min(t_from) FROM message_events"), DEC4_0 - 86400 * 21);
    T_EQ_STR(best(h, "Which county fair did Sam go to on December 4, 2023?", CAIRN_METHOD_KEYWORD,
                  DEC5 + 86400 * 30), "b1");
    cairn_close(h);
    /* the fill is bounded (a hook may run it): only the newest
     * EVENTS_FILL_MAX messages by id; a message that far ahead leaves
     * the three above out */
    char sql[8192];
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_CHECK(snprintf(sql, sizeof sql, AFTER_V16_DROP EVENTS_FILL_V16_DROP MESSAGE_EVENTS_V15_DROP
                     "PRAGMA user_version=14;"
                     "INSERT INTO messages(id, session, position, role, content, hash) SELECT "
                     "max(id) + %d, (SELECT min(id) FROM sessions), 99, 'user', 'hello', 0 FROM "
                     "messages", EVENTS_FILL_MAX + 1) < (int)sizeof sql);   /* not cut */
    T_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);
    h = NULL;
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(count(h, "PRAGMA user_version"), CAIRN_SCHEMA_VERSION);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 0);
    /* the older three wait for cairn_events_fill: max 0 only counts, a
     * chunk reads the newest of them first, an interrupted fill goes on
     * where it stopped, and a finished one has nothing left */
    int64_t done = -1, left = -1;
    T_EQ_INT(cairn_events_fill(h, 0, &done, &left), CAIRN_OK);
    T_EQ_INT(done, 0);
    T_EQ_INT(left, 3);
    T_EQ_INT(cairn_events_fill(h, 2, &done, &left), CAIRN_OK);
    T_EQ_INT(done, 2);
    T_EQ_INT(left, 1);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 3);   /* b1's and c1's */
    T_EQ_INT(cairn_events_fill(h, 2, &done, &left), CAIRN_OK);
    T_EQ_INT(done, 1);
    T_EQ_INT(left, 0);
    T_EQ_INT(cairn_events_fill(h, 2, &done, &left), CAIRN_OK);
    T_EQ_INT(done, 0);
    T_EQ_INT(left, 0);
    T_EQ_INT(count(h, "SELECT below FROM events_fill"), 0);
    T_EQ_INT(count(h, "SELECT min(t_from) FROM message_events"), DEC4_0 - 86400 * 21);
    T_EQ_STR(best(h, "Which county fair did Sam go to on December 4, 2023?", CAIRN_METHOD_KEYWORD,
                  DEC5 + 86400 * 30), "b1");
    cairn_close(h);
    /* a message read twice gets the same rows, not twice as many (the
     * migration's line is a safe guess, so a fill may read messages the
     * write path read already) */
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, "UPDATE events_fill SET below = 1 << 40", NULL, NULL, NULL),
             SQLITE_OK);
    sqlite3_close(raw);
    h = NULL;
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    T_EQ_INT(cairn_events_fill(h, 100, &done, &left), CAIRN_OK);
    T_EQ_INT(done, 4);
    T_EQ_INT(left, 0);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 3);
    cairn_close(h);
    /* a new store has nothing to read */
    snprintf(path, sizeof path, "%s/new.db", dir);
    h = NULL;
    T_EQ_INT(t_open(path, 0, &h), CAIRN_OK);
    add(h, "n", DEC5, "n1", "yesterday we met");
    T_EQ_INT(cairn_events_fill(h, 0, &done, &left), CAIRN_OK);
    T_EQ_INT(left, 0);
    T_EQ_INT(count(h, "SELECT count(*) FROM message_events"), 1);
    cairn_close(h);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_recall);
    T_RUN(test_follow);
    T_RUN(test_migration);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return T_DONE();
}
