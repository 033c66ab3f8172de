/*
 * test_recall_units.c: the exact recall over unit rows (recall.units,
 * src/recall/gather.c gather_units, pool_load; rank.c and unitrank.c
 * rank_pool_units; gate.c, pack.c) against the recall that loads every
 * turn (issue 23, steps (b), (d), (e)).
 *
 * Random stores of user-assistant sessions (runs of replies longer than
 * UNIT_MAX_REPLIES, sessions that open with a reply, turns without a time,
 * sessions appended to later; each with a reply: a session without one is
 * a dialog, gathered whole) are asked questions of common and rare
 * words, about the assistant's replies (the reply lane), the first time
 * (order_boost), a summary, a period (gathered whole) and with a session
 * excluded, at budgets from 200 to 8000 tokens, with and without
 * CAIRN_RECALL_CITE:
 *   - gather's two pools (keyword only): the one over rows must be one
 *     (pool.pu), its sessions and units the loaded pool's, field by field;
 *     after rank_default every unit's fused score, round and window score,
 *     period flag and order bonus the same doubles; the heads' times,
 *     positions and ids (unit_head_*) the turns'; the order (units_by_rank,
 *     units_rank_all) and the gate's share and weight the same; and once
 *     every session is read (pool_load) every turn's row, session,
 *     position, role, time, length, speaker, counts, unit and own BM25
 *     (s_msg) the loaded pool's;
 *   - cairn_recall's text, tokens, gate figures and items (session,
 *     message, role, time, position, rank, score, excerpt, why) the same
 *     bytes with the setting on and off.
 * All of it again with the rows' second half read on a thread of its own
 * (forced on the small store: the pool must say so). Then the store
 * changes under a pool over rows: a session appended to
 * and one whose message is deleted after gather read as POOL_FAILED
 * (their turns are not their rows' any more) and are never packed, the
 * others read. A store with a dialog between people is gathered whole.
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

static char dir[] = "/tmp/cairn-runits-XXXXXX";
static unsigned rng = 2323;

static unsigned rnd(unsigned n)
{
    rng = rng * 1103515245u + 12345u;
    return (rng >> 8) % n;
}

static const char *const words[] = {
    "cache", "eviction", "policy", "socket", "retry", "build", "flag", "staging",
    "database", "migration", "kernel", "ledger", "parser", "quorum", "router", "vector",
    "fixed", "timeout", "deploy", "lambda",
};
#define NWORDS ((int)(sizeof words / sizeof words[0]))

static void add_text(struct buf *b)
{
    int nw = 1 + (int)rnd(14);
    for (int i = 0; i < nw; i++) {
        int w = (int)rnd(NWORDS);
        w = rnd(2) ? w % 5 : w;             /* the first five in most sessions */
        buf_printf(b, "%s%s", i ? " " : "", words[w]);
    }
}

/* Session s, turns from `from` (an append when above 0): user turns and
 * runs of 1 to 8 replies, some sessions opening with a reply, some turns
 * without a time. dialog: a chat between named people. */
static int add_session(struct cairn *db, int s, int from, int n, int dialog)
{
    struct buf b = BUF_INIT;
    int user = !(s % 7 == 3), run = 0;
    buf_printf(&b, "{\"id\":\"ru%d\",\"title\":\"t%d\",\"messages\":[", s, s);
    for (int k = 0; k < from + n; k++) {
        if (!dialog && k == 1 && user) {
            user = 0;                       /* a reply in every session (one
                                             * without is a dialog: gathered whole) */
            run = (int)rnd(8);
        } else if (!dialog) {
            if (run > 0) {
                run--;
                user = run == 0 && rnd(3) ? 1 : 0;
            } else if (user) {
                user = 0;
                run = (int)rnd(8);
            } else {
                user = 1;
            }
        }
        if (k < from)
            continue;
        buf_printf(&b, "%s{\"id\":\"ru%d-%d\",\"role\":\"%s\",", k > from ? "," : "", s, k,
                   dialog || user ? "user" : "assistant");
        if (dialog)
            buf_printf(&b, "\"speaker\":\"%s\",", k % 2 ? "Ana" : "Bo");
        if (rnd(9))
            buf_printf(&b, "\"created_at\":\"2026-0%d-%02dT10:%02d:00Z\",", 1 + s % 9,
                       1 + s % 28, k % 60);
        buf_adds(&b, "\"content\":\"");
        add_text(&b);
        buf_adds(&b, "\"}");
    }
    buf_adds(&b, "]}");
    int rc = b.err ? CAIRN_NOMEM : cairn_add_json(db, b.p, b.n, NULL);
    buf_release(&b);
    return rc;
}

static int same_d(double a, double b)
{
    return !memcmp(&a, &b, sizeof a);
}

/* the rows' second half read on a thread of its own (and the loaded
 * pool's in two halves), forced on a small store */
static int force_split;

static int set_units(struct cairn *db, int on)
{
    int rc = cairn_set(db, "recall.split_msgs", force_split ? "1" : NULL);
    return rc ? rc : cairn_set(db, "recall.units", on ? NULL : "0");   /* (on: the default) */
}

/* The two pools of question, ranked, field by field. */
static void check_pools(struct cairn *db, const char *question, int want_units)
{
    struct query q1, q2;
    struct pool p1, p2;
    t_gather_two(db, question, 1, 0, set_units, &q1, &p1, &q2, &p2);
    T_EQ_INT(set_units(db, 0), CAIRN_OK);
    T_CHECK(!p1.pu);
    T_EQ_INT(!!p2.pu, want_units);
    T_EQ_INT(p2.split, force_split && want_units);
    build_units(&p1, 0);
    build_units(&p2, 0);
    T_EQ_INT(p1.ns, p2.ns);
    T_EQ_INT(p1.nm, p2.nm);
    T_EQ_INT(p1.nu, p2.nu);
    T_EQ_INT(p1.any_dialog, p2.any_dialog);
    T_EQ_INT(p1.any_assistant, p2.any_assistant);
    if (p1.ns != p2.ns || p1.nm != p2.nm || p1.nu != p2.nu)
        goto out;
    T_EQ_INT(t_sessions_differ(&p1, &p2, 0), 0);
    int bad;
    T_EQ_INT(rank_default(&p1, &q1, 1, NULL), 0);
    T_EQ_INT(rank_default(&p2, &q2, 1, NULL), 0);
    bad = 0;
    for (int u = 0; u < p1.nu; u++) {
        const struct runit *x = &p1.u[u], *y = &p2.u[u];
        bad += x->sess != y->sess || x->first != y->first || x->last != y->last ||
               x->head != y->head || !same_d(x->score, y->score) ||
               !same_d(x->s_round, y->s_round) || !same_d(x->s_window, y->s_window) ||
               x->in_range != y->in_range || !same_d(x->ord_bonus, y->ord_bonus) ||
               unit_head_at(&p1, u) != unit_head_at(&p2, u) ||
               unit_head_pos(&p1, u) != unit_head_pos(&p2, u) ||
               unit_head_row(&p1, u) != unit_head_row(&p2, u);
    }
    T_EQ_INT(bad, 0);
    for (int t = 0; t < q1.nt; t++) {
        T_CHECK(same_d(q1.t[t].idf_msg, q2.t[t].idf_msg));
        T_CHECK(same_d(q1.t[t].idf_unit, q2.t[t].idf_unit));
    }
    double sh1, w1, sh2, w2;
    recall_gate(&p1, &q1, &sh1, &w1);
    recall_gate(&p2, &q2, &sh2, &w2);
    T_CHECK(same_d(sh1, sh2) && same_d(w1, w2));
    T_EQ_INT(units_rank_all(&p1), 0);
    T_EQ_INT(units_rank_all(&p2), 0);
    bad = 0;
    for (int u = 0; u < p1.nu; u++)
        bad += p1.ord[u] != p2.ord[u] || p1.u[u].rank != p2.u[u].rank;
    T_EQ_INT(bad, 0);
    /* every session read: the turns the loaded pool has */
    int *all = malloc((size_t)(p2.ns ? p2.ns : 1) * sizeof *all);
    T_CHECK(all != NULL);
    for (int i = 0; all && i < p2.ns; i++)
        all[p2.ns - 1 - i] = i;                    /* (any order) */
    if (all)
        T_EQ_INT(pool_load(&p2, all, p2.ns), CAIRN_OK);
    free(all);
    bad = 0;
    for (int i = 0; i < p2.ns; i++)
        bad += pool_state(&p2, i) != POOL_LOADED;
    T_EQ_INT(bad, 0);
    T_EQ_INT(t_sessions_differ(&p1, &p2, 1), 0);
    T_EQ_INT(t_turns_differ(&p1, &p2, q1.nt, 1), 0);
out:
    pool_free(&p1);
    pool_free(&p2);
    query_free(&q1);
    query_free(&q2);
}

static void same_recall(const struct cairn_recall *r1, const struct cairn_recall *r2)
{
    T_EQ_STR(r1->text, r2->text);
    T_EQ_INT(r1->tokens, r2->tokens);
    T_CHECK(same_d(r1->match, r2->match) && same_d(r1->match_weight, r2->match_weight));
    T_EQ_INT(r1->n_items, r2->n_items);
    for (size_t i = 0; i < r1->n_items && i < r2->n_items; i++) {
        const struct cairn_recall_item *a = &r1->items[i], *b = &r2->items[i];
        T_EQ_STR(a->session, b->session);
        T_EQ_STR(a->message, b->message);
        T_EQ_STR(a->why, b->why);
        T_EQ_STR(a->role, b->role);
        T_CHECK(same_d(a->score, b->score));
        T_CHECK(a->rank == b->rank && a->at == b->at && a->position == b->position &&
                a->excerpt == b->excerpt);
    }
}

/* cairn_recall on and off, at several budgets, with and without cite. */
static int check_recalls(struct cairn *db, const char *question, const char *exclude)
{
    static const int budgets[] = { 200, 1000, 4000, 8000 };
    int items = 0;
    for (int b = 0; b < 4; b++) {
        for (int cite = 0; cite < 2; cite++) {
            struct cairn_recall *r1 = NULL, *r2 = NULL;
            struct cairn_recall_opts ro = CAIRN_RECALL_OPTS_INIT;
            ro.budget = budgets[b];
            ro.explain = 1;
            ro.now = 1800000000;
            ro.exclude_session = exclude;
            ro.flags = cite ? CAIRN_RECALL_CITE : 0;
            T_EQ_INT(set_units(db, 0), CAIRN_OK);
            T_EQ_INT(cairn_recall(db, question, &ro, &r1), CAIRN_OK);
            T_EQ_INT(set_units(db, 1), CAIRN_OK);
            T_EQ_INT(cairn_recall(db, question, &ro, &r2), CAIRN_OK);
            T_EQ_INT(set_units(db, 0), CAIRN_OK);
            if (r1 && r2) {
                same_recall(r1, r2);
                items += (int)r1->n_items;
            }
            cairn_recall_free(r1);
            cairn_recall_free(r2);
        }
    }
    return items;
}

static const char *const questions[] = {
    "what about the cache eviction policy",
    "the migration that failed on the staging database",
    "how did we fix the socket timeout",          /* about the replies: the lane */
    "the first time we talked about the parser",  /* order_boost */
    "summarize the router and quorum work",
    "lambda ledger",
    "kernel",
};
#define NQ ((int)(sizeof questions / sizeof questions[0]))

static void test_units_file(void)
{
    char path[256];
    struct cairn *db = NULL;
    snprintf(path, sizeof path, "%s/u.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    for (int s = 0; s < 240; s++)
        T_EQ_INT(add_session(db, s, 0, 2 + (int)rnd(20), 0), CAIRN_OK);
    /* appended to later: their new turns' ids after every other session's */
    for (int s = 0; s < 240; s += 11)
        T_EQ_INT(add_session(db, s, 25, 1 + (int)rnd(6), 0), CAIRN_OK);
    for (force_split = 0; force_split < 2; force_split++) {
        for (int i = 0; i < NQ; i++)
            check_pools(db, questions[i], 1);
        int items = 0;
        for (int i = 0; i < NQ; i++)
            items += check_recalls(db, questions[i], NULL);
        T_CHECK(items > 200);
    }
    force_split = 0;
    check_recalls(db, questions[0], "ru4");
    /* a period: gathered whole, the same answers */
    check_pools(db, "what did we do in March 2026 about the cache", 0);
    check_recalls(db, "what did we do in March 2026 about the cache", NULL);

    /* the store changes under a pool over rows */
    struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
    struct query q;
    struct pool p;
    o.method = CAIRN_METHOD_KEYWORD;
    o.budget = 1000;
    T_EQ_INT(query_parse(&q, questions[0], 1800000000, 1), 0);
    T_EQ_INT(set_units(db, 1), CAIRN_OK);
    T_EQ_INT(gather(db, &q, &o, NULL, NULL, NULL, &p), CAIRN_OK);
    T_EQ_INT(set_units(db, 0), CAIRN_OK);
    T_CHECK(p.pu != NULL && p.ns > 30);
    if (p.pu && p.ns > 30) {
        int grown = 3, cut = 9, all[3] = { 3, 9, 15 };
        char sql[200];
        char ext[64];
        /* a header's strings alone (pool_names, pack54): read, the turns
         * not, the session still to load; and not read again by its load */
        int named[3] = { 21, 15, 21 };
        T_CHECK(!p.s[15].ext_id && !p.s[21].ext_id);
        T_EQ_INT(pool_names(&p, named, 3), CAIRN_OK);
        T_CHECK(p.s[15].ext_id && p.s[21].ext_id && p.s[21].title);
        T_EQ_INT(pool_state(&p, 15), POOL_UNLOADED);
        T_EQ_INT(pool_state(&p, 21), POOL_UNLOADED);
        T_CHECK(!p.s[22].ext_id);
        T_CHECK(p.m[p.s[21].first_msg].row == 0);
        const char *strs15 = p.s[15].strs;
        snprintf(ext, sizeof ext, "%s", "");
        /* session grown: one more turn than its row */
        sqlite3 *raw = NULL;
        T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
        snprintf(sql, sizeof sql, "SELECT ext_id FROM sessions WHERE id = %lld",
                 (long long)p.s[grown].row);
        sqlite3_stmt *st = NULL;
        T_EQ_INT(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), SQLITE_OK);
        if (st && sqlite3_step(st) == SQLITE_ROW)
            snprintf(ext, sizeof ext, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        int s = atoi(ext + 2);
        T_EQ_INT(add_session(db, s, 40, 1, 0), CAIRN_OK);
        /* session cut: its last turn deleted (the packed turns and the
         * row go with it: read from the messages) */
        snprintf(sql, sizeof sql, "DELETE FROM messages WHERE id = (SELECT max(id) FROM messages "
                 "WHERE session = %lld)", (long long)p.s[cut].row);
        T_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        /* a session gone whole: its strings do not read, it fails */
        snprintf(sql, sizeof sql, "DELETE FROM messages WHERE session = %lld; "
                 "DELETE FROM sessions WHERE id = %lld", (long long)p.s[27].row,
                 (long long)p.s[27].row);
        T_EQ_INT(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
        sqlite3_close(raw);
        int gone = 27;
        T_EQ_INT(pool_names(&p, &gone, 1), CAIRN_OK);
        T_EQ_INT(pool_state(&p, 27), POOL_FAILED);
        T_EQ_INT(pool_load(&p, all, 3), CAIRN_OK);
        T_CHECK(p.s[15].strs == strs15);
        T_EQ_INT(pool_state(&p, grown), POOL_FAILED);
        T_EQ_INT(pool_state(&p, cut), POOL_FAILED);
        T_EQ_INT(pool_state(&p, 15), POOL_LOADED);
        T_EQ_INT(pool_state(&p, 16), POOL_UNLOADED);
        int zero = 1;
        for (int i = p.s[grown].first_msg; i < p.s[grown].first_msg + p.s[grown].n_msgs; i++)
            zero &= p.m[i].row == 0 && !p.m[i].speaker;
        T_CHECK(zero);
        T_CHECK(p.m[p.s[15].first_msg].row == unit_head_row(&p, p.pu->ufirst[15]));
        /* packed as it is: the turns of the two are never read (pack's
         * slots of unread turns are not cleared up front, mem53: one that
         * fails unread is emptied for the cleanup, which the sanitizer
         * build checks), the others packed */
        T_EQ_INT(rank_default(&p, &q, 0, NULL), CAIRN_OK);
        struct pack_src src = pack_src_store(db);
        struct cairn_recall r;
        memset(&r, 0, sizeof r);
        o.budget = 8000;
        T_EQ_INT(pack(&src, &p, &q, &o, 0, &r), CAIRN_OK);
        int bad = 0;
        for (size_t i = 0; i < r.n_items; i++)
            bad += r.items[i].session && !strcmp(r.items[i].session, ext);
        T_EQ_INT(bad, 0);
        T_CHECK(r.n_items > 0 && r.text && *r.text);
        free(r.items);
        free((char *)r.text);
    }
    pool_free(&p);
    query_free(&q);
    /* and the recalls of the changed store: the same again */
    for (int i = 0; i < 3; i++)
        check_recalls(db, questions[i], NULL);
    cairn_close(db);
}

/* A dialog between people in the pool: speakers are in the turns, so
 * the pool is gathered whole. */
static void test_units_dialog(void)
{
    char path[256];
    struct cairn *db = NULL;
    snprintf(path, sizeof path, "%s/d.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    for (int s = 0; s < 60; s++)
        T_EQ_INT(add_session(db, s, 0, 1 + (int)rnd(12), s % 4 == 0), CAIRN_OK);
    check_pools(db, questions[0], 0);
    check_recalls(db, questions[0], NULL);
    cairn_close(db);

    /* one old session without a reply among many with one (not the
     * newest: known from the sizes' rows before a unit row is read) */
    snprintf(path, sizeof path, "%s/d1.db", dir);
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    for (int s = 0; s < 80; s++)
        T_EQ_INT(add_session(db, s, 0, 2 + (int)rnd(12), s == 7), CAIRN_OK);
    int with = 0;
    for (int i = 0; i < NQ; i++) {
        struct query q;
        struct pool p;
        struct cairn_recall_opts o = CAIRN_RECALL_OPTS_INIT;
        o.method = CAIRN_METHOD_KEYWORD;
        o.budget = 1000;
        T_EQ_INT(query_parse(&q, questions[i], 1800000000, 1), 0);
        T_EQ_INT(set_units(db, 1), CAIRN_OK);
        T_EQ_INT(gather(db, &q, &o, NULL, NULL, NULL, &p), CAIRN_OK);
        T_EQ_INT(set_units(db, 0), CAIRN_OK);
        int old = 0;                        /* the reply-less session's in it */
        for (int k = 0; k < p.ns; k++)
            old |= p.s[k].dialog;
        pool_free(&p);
        query_free(&q);
        with += old;
        check_pools(db, questions[i], !old);
        check_recalls(db, questions[i], NULL);
    }
    T_CHECK(with > 0);                       /* (asked of such a pool) */
    cairn_close(db);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(dir))
        return 1;
    T_RUN(test_units_file);
    T_RUN(test_units_dialog);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "cannot remove %s\n", dir);
    return T_DONE();
}
