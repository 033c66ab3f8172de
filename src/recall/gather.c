/*
 * gather.c: candidates for a question.
 *
 * One FTS5 query with every term OR'ed gives each matching message and,
 * through cairn_tf(), how often each term occurs in it. The sessions those
 * messages sit in are then loaded whole (metadata only, not text), because
 * a round is a user turn with the replies around it and a window reaches
 * the turns next to it: both need the neighbours even when they matched
 * nothing. Sessions inside the question's time range are loaded too, so
 * "what did I do yesterday?" finds turns that share no word with it.
 */
#include <stdlib.h>
#include <string.h>

#include "recall/recall.h"
#include "recall/policy.h"

/* The fewest bytes of text that cost one token, for any text the counter
 * sees (ASCII letters cost a token per 6; docs/TOKENS.md). */
#define GATHER_BYTES_PER_TOKEN 8

#define GROW(arr, n, cap) do { \
    if ((n) == (cap)) { \
        int nc_ = (cap) ? (cap) * 2 : 64; \
        void *np_ = realloc((arr), (size_t)nc_ * sizeof *(arr)); \
        if (!np_) { rc = CAIRN_NOMEM; goto out; } \
        (arr) = np_; (cap) = nc_; \
    } \
} while (0)

static char *dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? strdup((const char *)t) : NULL;
}

/* A sorted list of session rowids, for membership tests. */
struct idset { int64_t *v; int n, cap; };

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Match rows keep their tf until the session's messages are loaded. */
struct hit { int64_t row, sess; int ntok; double score; uint16_t *tf; };

static int cmp_hit(const void *a, const void *b)
{
    return cmp_i64(&((const struct hit *)a)->row, &((const struct hit *)b)->row);
}

static int cmp_hit_sess(const void *a, const void *b)
{
    return cmp_i64(&((const struct hit *)a)->sess, &((const struct hit *)b)->sess);
}

/* The setting recall.exhaustive "1": never prune (the reference for tests
 * and benchmarks). */
static int exhaustive(const struct cairn *h)
{
    const char *v = cairn__setting(h, CAIRN__SET_RECALL_EXHAUSTIVE);
    return v && *v && strcmp(v, "0");
}

/* A session that holds matches, for pruning. */
struct cand { int64_t sess; double best; int keep; };

static int cmp_cand_best(const void *a, const void *b)
{
    double x = ((const struct cand *)a)->best, y = ((const struct cand *)b)->best;
    return x < y ? 1 : x > y ? -1 : 0;
}

/*
 * On a big store a question of common words matches messages in nearly
 * every session, and loading them all (~100k turns, then ranking ~100k
 * units) is what cost ~200 ms a recall. When the sessions that hold
 * matches have more than GATHER_PRUNE_MSGS turns, only the GATHER_KEEP
 * sessions whose best match (BM25 of the message alone, exact IDF) is
 * highest are loaded; ranking and packing then run as always on them.
 * Not exact: the rounds' and windows' ranks are taken among the units
 * loaded, and a left-out session may hold a unit that fused ranks high
 * (bench/README.md measures how often the result differs). Keeping the
 * top sessions by the sum of their matches instead, or besides, agreed
 * less with the exhaustive path. Term counts of the left-out matches go
 * to pool.pruned_df (unit IDF); the unit count comes from session_stats.
 * Only callers that ask for it (CAIRN_RECALL_FAST: the prompt hook, which
 * runs on every prompt) get it; recall, the MCP tool and eval stay exact.
 * The setting recall.exhaustive turns pruning off even then. The two numbers
 * are in policy.h.
 */

static int prune(struct cairn *h, struct query *q, struct pool *p, struct hit *hits, int *nhp)
{
    struct cand *c = NULL;
    struct buf ids = BUF_INIT;
    sqlite3_stmt *st = NULL;
    double tf[RECALL_MAX_TERMS], w[RECALL_MAX_TERMS];
    int nh = *nhp, nc = 0, rc = CAIRN_OK;
    int64_t pool_msgs = 0;

    qsort(hits, (size_t)nh, sizeof *hits, cmp_hit_sess);
    for (int i = 0; i < nh; i++)
        if (!i || hits[i].sess != hits[i - 1].sess)
            buf_printf(&ids, "%s%lld", i ? "," : "[", (long long)hits[i].sess);
    buf_addc(&ids, ']');
    if (ids.err) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    /* a session's rounds: its user turns, or every turn between people */
    if ((rc = store_prepare(h, "SELECT coalesce(sum(n), 0), coalesce(sum(CASE WHEN nuser = n "
                            "THEN n ELSE nuser END), 0) FROM session_stats WHERE session IN "
                            "(SELECT value FROM json_each(?1))", &st)))
        goto out;
    sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        pool_msgs = sqlite3_column_int64(st, 0);
        p->hit_units = sqlite3_column_int64(st, 1);
        p->hit_msgs = pool_msgs;
    }
    const char *lim = cairn__setting(h, CAIRN__SET_RECALL_PRUNE_MSGS);   /* tests: small stores */
    if (pool_msgs <= (lim && *lim ? strtoll(lim, NULL, 10) : GATHER_PRUNE_MSGS))
        goto out;

    /* Each match's BM25 alone, and per session the best. */
    double avg = p->total_msgs ? (double)p->total_tok / p->total_msgs : 1;
    for (int t = 0; t < q->nt; t++)
        w[t] = rank_idf((double)p->total_msgs, q->t[t].df_msg);
    c = malloc((size_t)nh * sizeof *c);
    if (!c) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    for (int i = 0; i < nh; i++) {
        for (int t = 0; t < q->nt; t++)
            tf[t] = hits[i].tf[t];
        hits[i].score = rank_bm25(tf, q->nt, hits[i].ntok, avg, w);
        if (!nc || c[nc - 1].sess != hits[i].sess)
            c[nc++] = (struct cand){ hits[i].sess, 0, 0 };
        if (hits[i].score > c[nc - 1].best)
            c[nc - 1].best = hits[i].score;
    }
    qsort(c, (size_t)nc, sizeof *c, cmp_cand_best);
    for (int i = 0; i < nc && i < GATHER_KEEP; i++)
        c[i].keep = 1;
    qsort(c, (size_t)nc, sizeof *c, cmp_i64);    /* by session, as the hits */
    /* Drop the matches of the sessions left out. */
    int k = 0;
    for (int i = 0, j = 0; i < nh; i++) {
        while (c[j].sess != hits[i].sess)
            j++;
        if (c[j].keep) {
            hits[k++] = hits[i];
            continue;
        }
        for (int t = 0; t < q->nt; t++)
            p->pruned_df[t] += hits[i].tf[t] > 0;
        free(hits[i].tf);
    }
    *nhp = k;
    p->pruned = 1;
out:
    if (st)
        sqlite3_finalize(st);
    free(c);
    buf_release(&ids);
    return rc;
}

int gather(struct cairn *h, struct query *q, const struct cairn_recall_opts *o,
           const struct dense_result *extra, struct pool *p)
{
    sqlite3_stmt *st = NULL;
    struct buf sql = BUF_INIT, expr = BUF_INIT, ids = BUF_INIT;
    struct hit *hits = NULL;
    int nh = 0, ch = 0, rc = CAIRN_OK, src;
    struct idset sess = { 0 };
    const char *scope_join = " JOIN sessions s ON s.id = m.session ";
    const char *scope_where =
        " AND (?1 IS NULL OR s.project = ?1) AND (?2 IS NULL OR s.ext_id <> ?2) ";

    memset(p, 0, sizeof *p);

    /* Scope totals, for IDF and average lengths. */
    buf_printf(&sql, "SELECT coalesce(sum(st.n),0), coalesce(sum(st.ntok),0), "
               "coalesce(sum(st.nuser),0), coalesce(sum(st.bytes),0) FROM session_stats st "
               "JOIN sessions s ON s.id = st.session WHERE 1 %s", scope_where);
    if ((rc = store_prepare(h, sql.p, &st)))
        goto out;
    sqlite3_bind_text(st, 1, o->project, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, o->exclude_session, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        p->total_msgs = sqlite3_column_int64(st, 0);
        p->total_tok = sqlite3_column_int64(st, 1);
        p->total_user = sqlite3_column_int64(st, 2);
        p->total_bytes = sqlite3_column_int64(st, 3);
    }
    sqlite3_finalize(st);
    st = NULL;
    if (p->total_msgs == 0)
        goto out;
    /* Could the whole scope fit? No text costs less than a token per
     * GATHER_BYTES_PER_TOKEN bytes (docs/TOKENS.md), so this never misses
     * a store that fits; pack.c finds out exactly. */
    p->all_mode = !(o->flags & CAIRN_RECALL_MATCHED_ONLY) &&
                  p->total_bytes <= (int64_t)o->budget * GATHER_BYTES_PER_TOKEN;

    /* 1. Messages matching any term, with per-term counts. */
    query_match_expr(q, &expr);
    if (expr.err) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    if (q->nt > 0) {
        buf_reset(&sql);
        /* messages_hit covers (id, session, ntok): the table's pages,
         * which hold the text, are not read; the scope is two constant
         * subqueries, not a join per match */
        buf_printf(&sql, "SELECT m.id, m.session, m.ntok, cairn_tf(messages_fts) "
                   "FROM messages_fts JOIN messages m INDEXED BY messages_hit "
                   "ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?3 "
                   "AND (?1 IS NULL OR m.session IN (SELECT id FROM sessions WHERE project = ?1)) "
                   "AND (?2 IS NULL OR m.session IS NOT (SELECT id FROM sessions "
                   "WHERE ext_id = ?2))");
        if ((rc = store_prepare(h, sql.p, &st)))
            goto out;
        sqlite3_bind_text(st, 1, o->project, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, o->exclude_session, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, expr.p, (int)expr.n, SQLITE_STATIC);
        while ((src = sqlite3_step(st)) == SQLITE_ROW) {
            int bytes = sqlite3_column_bytes(st, 3);
            const unsigned char *blob = sqlite3_column_blob(st, 3);
            GROW(hits, nh, ch);
            hits[nh].row = sqlite3_column_int64(st, 0);
            hits[nh].sess = sqlite3_column_int64(st, 1);
            hits[nh].ntok = sqlite3_column_int(st, 2);
            hits[nh].tf = calloc((size_t)q->nt, sizeof(uint16_t));
            if (!hits[nh].tf) {
                rc = CAIRN_NOMEM;
                goto out;
            }
            for (int t = 0; t < q->nt && 2 * t + 1 < bytes; t++) {
                hits[nh].tf[t] = (uint16_t)(blob[2 * t] | blob[2 * t + 1] << 8);
                q->t[t].df_msg += hits[nh].tf[t] > 0;
            }
            nh++;
        }
        if (src != SQLITE_DONE) {
            rc = cairn__sqlerr(h, src, "search");
            goto out;
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (nh && !p->all_mode && o->method != CAIRN_METHOD_RAW_BM25 &&
        (o->flags & CAIRN_RECALL_FAST) && !exhaustive(h) &&
        (rc = prune(h, q, p, hits, &nh)))
        goto out;
    for (int i = 0; i < nh; i++) {
        GROW(sess.v, sess.n, sess.cap);
        sess.v[sess.n++] = hits[i].sess;
    }
    /* 2. Sessions inside the time range. */
    if (q->has_range) {
        buf_reset(&sql);
        /* A message's time is its own, else its session's start: two
         * index range scans, not a scan of every message (~50 ms on 100k) */
        buf_printf(&sql, "SELECT m.session FROM messages m INDEXED BY messages_time %s WHERE "
                   "m.created_at >= ?3 AND m.created_at < ?4 %s "
                   "UNION SELECT s.id FROM sessions s WHERE s.started_at >= ?3 AND "
                   "s.started_at < ?4 AND EXISTS (SELECT 1 FROM messages m WHERE "
                   "m.session = s.id AND m.created_at IS NULL) %s",
                   scope_join, scope_where, scope_where);
        if ((rc = store_prepare(h, sql.p, &st)))
            goto out;
        sqlite3_bind_text(st, 1, o->project, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, o->exclude_session, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, q->from);
        sqlite3_bind_int64(st, 4, q->to);
        while (sqlite3_step(st) == SQLITE_ROW) {
            GROW(sess.v, sess.n, sess.cap);
            sess.v[sess.n++] = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    /* 2a. Sessions of the dense hits (already limited to the scope). */
    for (int i = 0; extra && i < extra->n; i++) {
        GROW(sess.v, sess.n, sess.cap);
        sess.v[sess.n++] = extra->hits[i].sess;
    }
    /* 2b. Everything in scope, when it may all fit. */
    if (p->all_mode) {
        buf_reset(&sql);
        buf_printf(&sql, "SELECT s.id FROM sessions s WHERE 1 %s", scope_where);
        if ((rc = store_prepare(h, sql.p, &st)))
            goto out;
        sqlite3_bind_text(st, 1, o->project, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, o->exclude_session, -1, SQLITE_STATIC);
        while (sqlite3_step(st) == SQLITE_ROW) {
            GROW(sess.v, sess.n, sess.cap);
            sess.v[sess.n++] = sqlite3_column_int64(st, 0);
        }
        sqlite3_finalize(st);
        st = NULL;
    }
    if (sess.n == 0)
        goto out;
    qsort(sess.v, (size_t)sess.n, sizeof *sess.v, cmp_i64);
    int k = 0;
    for (int i = 0; i < sess.n; i++) {
        if (!k || sess.v[k - 1] != sess.v[i])
            sess.v[k++] = sess.v[i];
    }
    sess.n = k;
    if (nh)
        qsort(hits, (size_t)nh, sizeof *hits, cmp_hit);

    /* 3. Sessions and their messages (metadata), in order. */
    for (int i = 0; i < sess.n; i++)
        buf_printf(&ids, "%s%lld", i ? "," : "[", (long long)sess.v[i]);
    buf_addc(&ids, ']');
    if (ids.err) {
        rc = CAIRN_NOMEM;
        goto out;
    }
    if ((rc = store_prepare(h, "SELECT s.id, s.ext_id, s.source, s.project, s.title, "
                            "s.started_at FROM sessions s WHERE s.id IN "
                            "(SELECT value FROM json_each(?1)) ORDER BY s.id", &st)))
        goto out;
    sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        GROW(p->s, p->ns, p->cs);
        struct rsession *rs = &p->s[p->ns];
        memset(rs, 0, sizeof *rs);
        rs->row = sqlite3_column_int64(st, 0);
        rs->ext_id = dup_col(st, 1);
        rs->source = dup_col(st, 2);
        rs->project = dup_col(st, 3);
        rs->title = dup_col(st, 4);
        rs->started_at = sqlite3_column_type(st, 5) == SQLITE_NULL ? CAIRN_NO_TIME
                                                                   : sqlite3_column_int64(st, 5);
        rs->dialog = 1;
        p->ns++;
        if (!rs->ext_id) {
            rc = CAIRN_NOMEM;
            goto out;
        }
    }
    sqlite3_finalize(st);
    st = NULL;
    /* From messages_meta alone: the table's pages hold the text. The
     * external id and the length are read for the few that pack.c looks
     * at (load_meta). */
    if ((rc = store_prepare(h, "SELECT id, session, position, role, speaker, created_at, ntok "
                            "FROM messages INDEXED BY messages_meta WHERE session IN "
                            "(SELECT value FROM json_each(?1)) ORDER BY session, position",
                            &st)))
        goto out;
    sqlite3_bind_text(st, 1, ids.p, (int)ids.n, SQLITE_STATIC);
    int si = -1;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t srow = sqlite3_column_int64(st, 1);
        if (si < 0 || p->s[si].row != srow) {
            si++;
            while (si < p->ns && p->s[si].row != srow)
                si++;
            if (si >= p->ns)
                break;                 /* cannot happen: both ordered by session */
            p->s[si].first_msg = p->nm;
        }
        GROW(p->m, p->nm, p->cm);
        struct rmsg *m = &p->m[p->nm];
        memset(m, 0, sizeof *m);
        m->row = sqlite3_column_int64(st, 0);
        m->sess = si;
        m->position = sqlite3_column_int(st, 2);
        m->role = strcmp((const char *)sqlite3_column_text(st, 3), "user") ? ROLE_ASSISTANT
                                                                          : ROLE_USER;
        m->speaker = dup_col(st, 4);
        m->at = sqlite3_column_type(st, 5) == SQLITE_NULL ? p->s[si].started_at
                                                          : sqlite3_column_int64(st, 5);
        m->ntok = sqlite3_column_int(st, 6);
        m->bytes = -1;
        if (sqlite3_column_type(st, 4) != SQLITE_NULL && !m->speaker) {
            p->nm++;
            rc = CAIRN_NOMEM;
            goto out;
        }
        p->s[si].n_msgs++;
        if (m->role == ROLE_ASSISTANT)
            p->s[si].dialog = 0;
        /* hits are sorted by row id; so are messages within a session but
         * not across sessions, hence the search */
        struct hit key = { .row = m->row };
        struct hit *hh = nh ? bsearch(&key, hits, (size_t)nh, sizeof *hits, cmp_hit) : NULL;
        if (hh) {
            m->tf = hh->tf;
            hh->tf = NULL;
        }
        p->nm++;
    }
    if (src != SQLITE_DONE && src != SQLITE_ROW) {
        rc = cairn__sqlerr(h, src, "load");
        goto out;
    }
    /* Dense scores onto the loaded messages. */
    if (extra && extra->n) {
        struct hit *dh = malloc((size_t)extra->n * sizeof *dh);
        if (!dh) {
            rc = CAIRN_NOMEM;
            goto out;
        }
        for (int i = 0; i < extra->n; i++)
            dh[i].row = extra->hits[i].msg, dh[i].tf = NULL;
        qsort(dh, (size_t)extra->n, sizeof *dh, cmp_hit);
        for (int j = 0; j < p->nm; j++) {
            struct hit key = { .row = p->m[j].row };
            struct hit *f = bsearch(&key, dh, (size_t)extra->n, sizeof *dh, cmp_hit);
            if (f) {
                for (int i = 0; i < extra->n; i++)
                    if (extra->hits[i].msg == p->m[j].row)
                        p->m[j].dense = 1.0f + extra->hits[i].cos;
            }
        }
        free(dh);
    }
    for (int i = 0; i < p->ns; i++) {
        p->any_dialog |= p->s[i].dialog;
        p->any_assistant |= !p->s[i].dialog;
    }
out:
    if (st)
        sqlite3_finalize(st);
    for (int i = 0; i < nh; i++)
        free(hits[i].tf);
    free(hits);
    free(sess.v);
    buf_release(&sql);
    buf_release(&expr);
    buf_release(&ids);
    if (rc == CAIRN_NOMEM)
        cairn__err(h, rc, "out of memory");
    return rc;
}

void pool_free(struct pool *p)
{
    for (int i = 0; i < p->ns; i++) {
        free(p->s[i].ext_id);
        free(p->s[i].source);
        free(p->s[i].project);
        free(p->s[i].title);
    }
    for (int i = 0; i < p->nm; i++) {
        free(p->m[i].speaker);
        free(p->m[i].ext_id);
        free(p->m[i].tf);
        free(p->m[i].text);
    }
    free(p->s);
    free(p->m);
    free(p->u);
    free(p->ord);
    memset(p, 0, sizeof *p);
}

/* The text's length in bytes, from the record's header through the blob
 * handle *bl (opened on first use, moved to each row after): SQL's
 * length() would read all of a TEXT value to count its characters. */
static int text_bytes(struct cairn *h, int64_t row, sqlite3_blob **bl, int *bytes)
{
    int src = *bl ? sqlite3_blob_reopen(*bl, row)
                  : sqlite3_blob_open(h->db, "main", "messages", "content", row, 0, bl);
    if (src != SQLITE_OK) {
        /* a failed reopen leaves the handle aborted: start afresh next time */
        if (*bl)
            sqlite3_blob_close(*bl);
        *bl = NULL;
        return cairn__sqlerr(h, src, "read message");
    }
    *bytes = sqlite3_blob_bytes(*bl);
    return CAIRN_OK;
}

int load_meta(struct cairn *h, struct rmsg *m, sqlite3_blob **bl)
{
    sqlite3_stmt *st;
    int rc;
    if (m->ext_id)
        return CAIRN_OK;
    if ((rc = store_prepare(h, "SELECT coalesce(ext_id, CAST(position AS TEXT)) FROM messages "
                            "WHERE id = ?", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, m->row);
    if (sqlite3_step(st) == SQLITE_ROW) {
        m->ext_id = dup_col(st, 0);
        rc = m->ext_id ? text_bytes(h, m->row, bl, &m->bytes)
                       : cairn__err(h, CAIRN_NOMEM, "out of memory");
    } else {
        rc = cairn__err(h, CAIRN_NOTFOUND, "message %lld vanished", (long long)m->row);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The first max bytes of a longer text, through SQLite's incremental
 * blob I/O: only the pages that hold them are read, not the whole
 * overflow chain of a 50 MB paste. */
static int load_prefix(struct cairn *h, int64_t row, size_t max, char **text, size_t *len)
{
    sqlite3_blob *bl = NULL;
    int src = sqlite3_blob_open(h->db, "main", "messages", "content", row, 0, &bl);
    int rc = CAIRN_OK;
    if (src != SQLITE_OK) {
        rc = cairn__sqlerr(h, src, "read message");
        goto out;
    }
    size_t n = (size_t)sqlite3_blob_bytes(bl);
    if (n > max)
        n = max;
    if (!(*text = malloc(n + 1))) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    if ((src = sqlite3_blob_read(bl, *text, (int)n, 0)) != SQLITE_OK) {
        free(*text);
        *text = NULL;
        rc = cairn__sqlerr(h, src, "read message");
        goto out;
    }
    /* end on a character: drop a sequence the cut split (stored text is
     * valid UTF-8) */
    size_t k = n;
    while (k > 0 && n - k < 3 && ((unsigned char)(*text)[k - 1] & 0xC0) == 0x80)
        k--;
    if (k > 0) {
        unsigned char c = (unsigned char)(*text)[k - 1];
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        if (n - (k - 1) < need)
            n = k - 1;
    }
    (*text)[n] = '\0';
    *len = n;
out:
    if (bl)
        sqlite3_blob_close(bl);
    return rc;
}

int load_message(struct cairn *h, const struct rmsg *m, size_t max, char **text, size_t *len)
{
    sqlite3_stmt *st;
    *text = NULL;
    *len = 0;
    if (m->bytes >= 0 && (size_t)m->bytes > max)
        return load_prefix(h, m->row, max, text, len);
    int rc = store_prepare(h, "SELECT content FROM messages WHERE id = ?", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, m->row);
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(st, 0);
        *len = (size_t)sqlite3_column_bytes(st, 0);
        *text = malloc(*len + 1);
        if (*text) {
            memcpy(*text, t ? t : "", *len);
            (*text)[*len] = '\0';
        }
        rc = *text ? CAIRN_OK : cairn__err(h, CAIRN_NOMEM, "out of memory");
    } else {
        rc = cairn__err(h, CAIRN_NOTFOUND, "message %lld vanished", (long long)m->row);
    }
    sqlite3_finalize(st);
    return rc;
}
