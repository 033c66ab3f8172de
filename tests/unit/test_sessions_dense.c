/*
 * test_sessions_dense.c: the sessions and turns of a dense list read by
 * one range scan (recall_read.c, ids_dense; issue 23).
 *
 * The exact recall of a common word lists nearly every session of the
 * store; from SESS_RANGE_MIN (256) listed sessions covering at least half
 * of the ids between the list's ends, store_sessions_meta and
 * store_messages_meta scan that range and keep the listed rows instead of
 * handing SQLite the list as JSON. What they give must not depend on it:
 * for lists dense (every session, two in three, exactly half the span) and
 * sparse (one in five: the JSON list, walked as the outer loop when it
 * ascends, hook52), with ids that name no session (forgotten ones, past
 * the end), unsorted and with a repeat, a session
 * without its packed row and one without its session_stats row, both
 * calls give, row for row, what plain SQL gives for each listed session.
 * The rows carry no turns' count (exact35: gather sizes its pool from
 * store_sessions_size instead): that call's count for the list is the
 * sum of the listed sessions' session_stats.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "t.h"
#include "t_open.h"
#include "internal.h"
#include "store/recall_read.h"
#include "util/buf.h"
#include "t_store.h"

#define NSESS 700

static char dir[] = "/tmp/cairn-sdense-XXXXXX";

static int sess_cb(void *arg, const struct store_session_row *r)
{
    buf_printf(arg, "%lld %s|%s|%s|%s %lld\n", (long long)r->row, r->ext_id,
               r->source ? r->source : "(null)", r->project ? r->project : "(null)",
               r->title ? r->title : "(null)", (long long)r->started_at);
    return 0;
}

static int msg_cb(void *arg, const struct store_msg_row *r)
{
    buf_printf(arg, "%lld %lld %d %d %s %lld %d\n", (long long)r->row, (long long)r->sess,
               r->position, r->user, r->speaker ? r->speaker : "-", (long long)r->at, r->ntok);
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* What each call should give for the list: its distinct ids in order,
 * each read alone by plain SQL. */
static void want_for(sqlite3 *raw, const int64_t *list, int n, struct buf *ws, struct buf *wm,
                     int64_t *turns)
{
    int64_t *v = malloc((size_t)(n ? n : 1) * sizeof *v);
    T_CHECK(v != NULL);
    memcpy(v, list, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    sqlite3_stmt *s, *m;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT id, ext_id, source, project, title, started_at, "
                                "(SELECT n FROM session_stats WHERE session = sessions.id) FROM "
                                "sessions WHERE id = ?1", -1, &s, NULL), SQLITE_OK);
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT id, session, position, role = 'user', speaker, "
                                "coalesce(created_at, ?2), ntok FROM messages WHERE session = ?1 "
                                "ORDER BY position", -1, &m, NULL), SQLITE_OK);
    for (int i = 0; i < n; i++) {
        if (i && v[i] == v[i - 1])
            continue;
        sqlite3_reset(s);
        sqlite3_bind_int64(s, 1, v[i]);
        if (sqlite3_step(s) == SQLITE_ROW) {
            const char *c[4];
            for (int k = 0; k < 4; k++)
                c[k] = (const char *)sqlite3_column_text(s, 1 + k);
            buf_printf(ws, "%lld %s|%s|%s|%s %lld\n", sqlite3_column_int64(s, 0), c[0],
                       c[1] ? c[1] : "(null)", c[2] ? c[2] : "(null)", c[3] ? c[3] : "(null)",
                       sqlite3_column_type(s, 5) == SQLITE_NULL ? (long long)CAIRN_NO_TIME
                                                                : sqlite3_column_int64(s, 5));
            *turns += sqlite3_column_int64(s, 6);
        }
        sqlite3_reset(m);
        sqlite3_bind_int64(m, 1, v[i]);
        sqlite3_bind_int64(m, 2, CAIRN_NO_TIME);
        while (sqlite3_step(m) == SQLITE_ROW) {
            const char *sp = (const char *)sqlite3_column_text(m, 4);
            buf_printf(wm, "%lld %lld %d %d %s %lld %d\n", sqlite3_column_int64(m, 0),
                       sqlite3_column_int64(m, 1), sqlite3_column_int(m, 2),
                       sqlite3_column_int(m, 3), sp ? sp : "-", sqlite3_column_int64(m, 5),
                       sqlite3_column_int(m, 6));
        }
    }
    sqlite3_finalize(s);
    sqlite3_finalize(m);
    free(v);
}

static void check_list(struct cairn *db, sqlite3 *raw, const int64_t *list, int n)
{
    struct buf hs = BUF_INIT, hm = BUF_INIT, ws = BUF_INIT, wm = BUF_INIT;
    T_EQ_INT(store_sessions_meta(db, list, n, sess_cb, &hs), CAIRN_OK);
    T_EQ_INT(store_messages_meta(db, list, n, msg_cb, &hm), CAIRN_OK);
    int64_t turns = 0, msgs = -1, units;
    want_for(raw, list, n, &ws, &wm, &turns);
    /* the turns' count gather sizes the pool from, now that the rows
     * above do not carry it: the list sorted, each id once */
    int64_t *v = malloc((size_t)n * sizeof *v);
    int nv = 0;
    T_CHECK(v != NULL);
    memcpy(v, list, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    for (int i = 0; i < n; i++)
        if (!nv || v[nv - 1] != v[i])
            v[nv++] = v[i];
    T_EQ_INT(store_sessions_size(db, v, nv, &msgs, &units), CAIRN_OK);
    T_EQ_INT(msgs, turns);
    free(v);
    T_CHECK(ws.n > 0 && wm.n > 0);
    T_EQ_INT((int64_t)hs.n, (int64_t)ws.n);
    T_CHECK(hs.n == ws.n && !memcmp(hs.p, ws.p, ws.n));
    T_EQ_INT((int64_t)hm.n, (int64_t)wm.n);
    T_CHECK(hm.n == wm.n && !memcmp(hm.p, wm.p, wm.n));
    buf_release(&hs);
    buf_release(&hm);
    buf_release(&ws);
    buf_release(&wm);
}

static void test_lists(void)
{
    char path[256];
    struct cairn *db;
    sqlite3 *raw, *rw;
    snprintf(path, sizeof path, "%s/d.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_add_group(db, 1), CAIRN_OK);
    for (int s = 0; s < NSESS; s++) {
        struct buf b = BUF_INIT;
        buf_printf(&b, "{\"id\":\"s%d\",\"title\":\"t%d\",\"messages\":[", s, s % 7);
        for (int k = 0; k < 1 + s % 4; k++)
            buf_printf(&b, "%s{\"role\":\"%s\",\"content\":\"turn %d of %d\"%s}", k ? "," : "",
                       k % 2 ? "assistant" : "user", k, s,
                       s % 3 ? ",\"at\":1700000000" : "");
        buf_adds(&b, "]}");
        T_CHECK(!b.err);
        T_EQ_INT(cairn_add_json(db, b.p, b.n, NULL), CAIRN_OK);
        buf_release(&b);
    }
    T_EQ_INT(cairn_add_group(db, 0), CAIRN_OK);
    /* gaps: forgotten sessions inside the range */
    for (int s = 10; s < NSESS; s += 37) {
        char id[16];
        snprintf(id, sizeof id, "s%d", s);
        int rc = cairn_forget(db, id);
        T_CHECK(rc == CAIRN_OK || rc == CAIRN_SCRUB_PENDING);
    }
    /* a session without its packed row (read from messages_meta) and one
     * without its totals (n_msgs 0, as the subquery gives) */
    T_EQ_INT(sqlite3_open(path, &rw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(rw, "DELETE FROM session_turns WHERE session = (SELECT id FROM "
                          "sessions WHERE ext_id = 's300'); DELETE FROM session_stats WHERE "
                          "session = (SELECT id FROM sessions WHERE ext_id = 's301')",
                          NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(rw);
    T_EQ_INT(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);

    struct store_ids all = { NULL, 0, 0 };
    sqlite3_stmt *st;
    T_EQ_INT(sqlite3_prepare_v2(raw, "SELECT id FROM sessions ORDER BY id", -1, &st, NULL),
             SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW)
        T_EQ_INT(store_ids_push(db, &all, sqlite3_column_int64(st, 0)), CAIRN_OK);
    sqlite3_finalize(st);
    T_CHECK(all.n > 600);
    int64_t *l = malloc((size_t)(all.n + 8) * sizeof *l);
    T_CHECK(l != NULL);
    int n;

    /* every session, and ids of no session around them */
    check_list(db, raw, all.v, all.n);
    n = 0;
    l[n++] = 0;
    for (int i = 0; i < all.n; i++)
        l[n++] = all.v[i];
    l[n++] = all.v[all.n - 1] + 5;
    check_list(db, raw, l, n);
    /* two in three */
    n = 0;
    for (int i = 0; i < all.n; i++)
        if (i % 3)
            l[n++] = all.v[i];
    check_list(db, raw, l, n);
    /* every other id of the span: exactly half, the edge of dense */
    n = 0;
    for (int64_t id = all.v[0]; id <= all.v[all.n - 1]; id += 2)
        l[n++] = id;
    check_list(db, raw, l, n);
    /* one in five: sparse, the JSON list */
    n = 0;
    for (int i = 0; i < all.n; i += 5)
        l[n++] = all.v[i];
    check_list(db, raw, l, n);
    /* sparse and ascending (the JSON list walked as the outer loop,
     * hook52) with ids that name no session: before the first, every
     * forgotten one, past the last; then the same list from the end with
     * a repeat (IN's ephemeral index: each row once, in id order) */
    n = 0;
    l[n++] = 0;
    for (int64_t id = all.v[0], i = 0; id <= all.v[all.n - 1]; id++) {
        while (i < all.n && all.v[i] < id)
            i++;
        if (i < all.n && all.v[i] == id ? i % 5 == 1 : 1)
            l[n++] = id;
    }
    l[n++] = all.v[all.n - 1] + 5;
    T_CHECK(n > all.n / 5 + 10 && n < all.n / 2);
    check_list(db, raw, l, n);
    for (int i = 0; i < n / 2; i++) {
        int64_t t = l[i];
        l[i] = l[n - 1 - i];
        l[n - 1 - i] = t;
    }
    l[n] = l[n / 2];
    check_list(db, raw, l, n + 1);
    /* a window of the store: the range's ends inside it */
    n = 0;
    for (int i = 100; i < 500; i++)
        l[n++] = all.v[i];
    check_list(db, raw, l, n);
    /* unsorted, with a repeat */
    n = 0;
    for (int i = all.n - 1; i >= 0; i--)
        l[n++] = all.v[i];
    l[n++] = all.v[3];
    check_list(db, raw, l, n);

    free(l);
    free(all.v);
    sqlite3_close(raw);
    cairn_close(db);
}

int main(void)
{
    T_CHECK(mkdtemp(dir) != NULL);
    T_RUN(test_lists);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0);
    return T_DONE();
}
