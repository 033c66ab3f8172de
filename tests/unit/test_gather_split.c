/*
 * test_gather_split.c: the exact recall's pool loaded in two halves, the
 * second on a thread of its own with a reader of the same store
 * (src/recall/gather.c, load_split), against the pool loaded on one
 * thread.
 *
 * A store of a few hundred sessions (speakers, dialogs and not, common
 * words in most sessions) is asked the same questions with the split
 * forced ("recall.split_msgs" 1) and with one thread ("recall.threads"
 * 1): gather's two pools must be equal field by field (every session's
 * row, strings, start, dialog flag, first turn and count; every turn's
 * row, session, position, role, time, length, speaker and counts), the
 * split one must say a second thread loaded it, and cairn_recall's texts
 * and items must be the same bytes. A half dropped, put before the other
 * or given the other's session indices fails the pool's comparison.
 * Then the sessions' sizes are made wrong (session_sizes dropped, so the
 * counts come from session_stats, which is then changed): counted high,
 * the first half leaves a gap in its share of the array; counted low, a
 * share overflows into an array of its own; either way the halves are
 * copied together and the second half's indices moved, and the pools
 * must still be equal. An in-memory store has no second handle, nor a
 * handle with an add group open (its rows not yet committed): both
 * halves load on the caller's thread, and the pools must be equal too.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "recall/recall.h"
#include "t_pool.h"

static char dir[] = "/tmp/cairn-gsplit-XXXXXX";
static unsigned rng = 4242;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static const char *const words[] = {
    "cache", "eviction", "policy", "socket", "retry", "build", "flag", "staging",
    "database", "migration", "kernel", "ledger", "parser", "quorum", "router", "vector",
};
#define NWORDS ((int)(sizeof words / sizeof words[0]))

static const char *const people[] = { "Ana", "Bo", "Chen" };

/* Session s: 1 to 12 turns; every fifth a dialog between people (named
 * speakers), the rest user and assistant. */
static int add_session(struct cairn *db, int s)
{
    struct buf b = BUF_INIT;
    int n = 1 + (int)rnd(12), dialog = s % 5 == 0;
    buf_printf(&b, "{\"id\":\"sp%d\",\"title\":\"t%d\",\"project\":\"%s\",\"messages\":[", s,
               s, s % 2 ? "/p/a" : "");
    for (int k = 0; k < n; k++) {
        buf_printf(&b, "%s{\"id\":\"sp%d-%d\",\"role\":\"%s\",", k ? "," : "", s, k,
                   dialog || k % 2 == 0 ? "user" : "assistant");
        if (dialog)
            buf_printf(&b, "\"speaker\":\"%s\",", people[rnd(3)]);
        buf_printf(&b, "\"created_at\":\"2026-0%d-%02dT10:%02d:00Z\",\"content\":\"",
                   1 + s % 9, 1 + s % 28, k % 60);
        int nw = 1 + (int)rnd(10);
        for (int i = 0; i < nw; i++) {
            int w = (int)rnd(NWORDS);
            w = rnd(2) ? w % 4 : w;           /* the first four in most sessions */
            buf_printf(&b, "%s%s", i ? " " : "", words[w]);
        }
        buf_adds(&b, "\"}");
    }
    buf_adds(&b, "]}");
    int rc = b.err ? CAIRN_NOMEM : cairn_add_json(db, b.p, b.n, NULL);
    buf_release(&b);
    return rc;
}

/* The two pools, field by field. */
static void same_pool(const struct pool *a, const struct pool *b, int nt)
{
    T_EQ_INT(a->ns, b->ns);
    T_EQ_INT(a->nm, b->nm);
    if (a->ns != b->ns || a->nm != b->nm)
        return;
    T_EQ_INT(t_sessions_differ(a, b, 1), 0);
    T_EQ_INT(t_turns_differ(a, b, nt, 0), 0);
    T_EQ_INT(a->any_dialog, b->any_dialog);
    T_EQ_INT(a->any_assistant, b->any_assistant);
}

static int set_split(struct cairn *db, int two)
{
    int rc = cairn_set(db, "recall.threads", two ? NULL : "1");
    return rc ? rc : cairn_set(db, "recall.split_msgs", two ? "1" : NULL);
}

/* One question: the pools (and, want_split, the second thread's), then
 * the recalls' bytes. */
static void check_question(struct cairn *db, const char *question, int want_split)
{
    struct query q1, q2;
    struct pool p1, p2;
    t_gather_two(db, question, 0, CAIRN_RECALL_MATCHED_ONLY, set_split, &q1, &p1, &q2, &p2);
    T_EQ_INT(p1.split, 0);
    T_EQ_INT(p2.split, want_split);
    T_CHECK(p1.ns > 100);              /* the halves hold many sessions each */
    same_pool(&p1, &p2, q1.nt);
    pool_free(&p1);
    pool_free(&p2);
    query_free(&q1);
    query_free(&q2);

    for (int budget = 1000; budget <= 8000; budget *= 8) {
        struct cairn_recall *r1 = NULL, *r2 = NULL;
        struct cairn_recall_opts ro = CAIRN_RECALL_OPTS_INIT;
        ro.method = CAIRN_METHOD_KEYWORD;
        ro.budget = budget;
        ro.explain = 1;
        ro.now = 1800000000;
        T_EQ_INT(set_split(db, 0), CAIRN_OK);
        T_EQ_INT(cairn_recall(db, question, &ro, &r1), CAIRN_OK);
        T_EQ_INT(set_split(db, 1), CAIRN_OK);
        T_EQ_INT(cairn_recall(db, question, &ro, &r2), CAIRN_OK);
        if (r1 && r2) {
            T_CHECK(r1->n_items > 0);
            T_EQ_STR(r1->text, r2->text);
            T_EQ_INT(r1->n_items, r2->n_items);
            for (size_t i = 0; i < r1->n_items && i < r2->n_items; i++) {
                T_EQ_STR(r1->items[i].session, r2->items[i].session);
                T_EQ_STR(r1->items[i].message, r2->items[i].message);
                T_EQ_STR(r1->items[i].why, r2->items[i].why);
                T_CHECK(r1->items[i].score == r2->items[i].score);
            }
        }
        cairn_recall_free(r1);
        cairn_recall_free(r2);
    }
}

static const char *const questions[] = {
    "what did we decide about the cache eviction policy",
    "the migration that failed on the staging database",
    "which flag makes the build reproducible",
    "retry socket",
};
#define NQ ((int)(sizeof questions / sizeof questions[0]))

static void test_split_file(void)
{
    char path[256];
    struct cairn *db = NULL;
    snprintf(path, sizeof path, "%s/s.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    for (int s = 0; s < 400; s++)
        T_EQ_INT(add_session(db, s), CAIRN_OK);
    for (int i = 0; i < NQ; i++)
        check_question(db, questions[i], 1);

    /* an add group open: the handle reads its uncommitted sessions, a
     * reader would not, so the pool loads on the caller's thread */
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    for (int s = 400; s < 440; s++)
        T_EQ_INT(add_session(db, s), CAIRN_OK);
    check_question(db, questions[0], 0);
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    check_question(db, questions[0], 1);

    /* the sizes wrong: from session_stats, counted high, then low */
    sqlite3 *raw = NULL;
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, "DELETE FROM session_sizes; UPDATE session_stats SET n = n + 5",
                          NULL, NULL, NULL), SQLITE_OK);
    for (int i = 0; i < NQ; i++)
        check_question(db, questions[i], 1);
    /* (store_totals follows session_stats by its triggers: the scope's
     * totals move too, the same for both pools) */
    T_EQ_INT(sqlite3_exec(raw, "UPDATE session_stats SET n = (n - 5) / 3", NULL, NULL, NULL),
             SQLITE_OK);
    for (int i = 0; i < NQ; i++)
        check_question(db, questions[i], 1);
    sqlite3_close(raw);
    cairn_close(db);
}

static void test_split_memory(void)
{
    struct cairn *db = NULL;
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    for (int s = 0; s < 300; s++)
        T_EQ_INT(add_session(db, s), CAIRN_OK);
    for (int i = 0; i < NQ; i++)
        check_question(db, questions[i], 0);
    cairn_close(db);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_split_file);
    T_RUN(test_split_memory);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return T_DONE();
}
