/*
 * correction.c: corrections (schema version 9, docs/MEMORIES.md
 * "Corrections"): a correction memory's severity, applies_when and
 * counters, and the candidates the prompt hook recognised.
 *
 * A correction is a memory first (memory.c keeps its text, scope, history
 * and removal); its `corrections` row goes with it (ON DELETE CASCADE, so
 * rm and expiry wipe it along). A memory of type correction without a row
 * (added by cairn_memory_add or imported) reads as p1 with nothing to
 * match; the first count gives it a row.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"
#include "store/memory.h"
#include "text/correction.h"
#include "util/buf.h"

_Static_assert(CORR_ITEM_MAX == CAIRN_CORRECTION_LIST_MAX, "an item fits the matchers' copy");

/* ---- the result list ---- */

struct cairn_corrections {
    struct cairn_correction *items;
    size_t n, cap;
};

size_t cairn_corrections_count(const struct cairn_corrections *l)
{
    return l ? l->n : 0;
}

const struct cairn_correction *cairn_corrections_at(const struct cairn_corrections *l, size_t i)
{
    return l && i < l->n ? &l->items[i] : NULL;
}

static void item_free(struct cairn_correction *c)
{
    const char *const s[] = { c->text, c->scope, c->session, c->message, c->keywords,
                              c->paths, c->commands, c->rule };
    for (size_t i = 0; i < sizeof s / sizeof s[0]; i++)
        free((char *)s[i]);
}

void cairn_corrections_free(struct cairn_corrections *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        item_free(&l->items[i]);
    free(l->items);
    free(l);
}

/* The columns both reads select, in this order. */
enum { C_ID, C_TEXT, C_SCOPE, C_SESSION, C_MESSAGE, C_SEVERITY, C_KEYWORDS, C_PATHS,
       C_COMMANDS, C_RETRIEVED, C_HEEDED, C_RECURRED, C_CREATED, C_UPDATED, C_LAST, C_RULE,
       C_RECURS };

static int list_push(struct cairn *h, void *list, sqlite3_stmt *st, int unused)
{
    struct cairn_corrections *l = list;
    int rc = memory_grow(h, (void **)&l->items, &l->cap, l->n, sizeof *l->items);
    (void)unused;
    if (rc)
        return rc;
    struct cairn_correction *c = &l->items[l->n++];
    memset(c, 0, sizeof *c);
    c->id = sqlite3_column_int64(st, C_ID);
    c->text = memory_col_dup(st, C_TEXT);
    c->scope = memory_col_dup(st, C_SCOPE);
    c->session = memory_col_dup(st, C_SESSION);
    c->message = memory_col_dup(st, C_MESSAGE);
    c->severity = sqlite3_column_int(st, C_SEVERITY);
    c->keywords = memory_col_dup(st, C_KEYWORDS);
    c->paths = memory_col_dup(st, C_PATHS);
    c->commands = memory_col_dup(st, C_COMMANDS);
    c->retrieved = sqlite3_column_int64(st, C_RETRIEVED);
    c->heeded = sqlite3_column_int64(st, C_HEEDED);
    c->recurred = sqlite3_column_int64(st, C_RECURRED);
    c->created = sqlite3_column_int64(st, C_CREATED);
    c->updated = sqlite3_column_int64(st, C_UPDATED);
    c->last_seen = sqlite3_column_type(st, C_LAST) == SQLITE_NULL
                   ? CAIRN_NO_TIME : sqlite3_column_int64(st, C_LAST);
    c->rule = memory_col_dup(st, C_RULE);
    c->recurs = sqlite3_column_int64(st, C_RECURS);
    if (!c->text || !c->scope || !c->session || !c->message || !c->keywords || !c->paths ||
        !c->commands || !c->rule)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    return CAIRN_OK;
}

static int collect(struct cairn *h, sqlite3_stmt *st, struct cairn_corrections **out)
{
    int rc;
    struct cairn_corrections *l = calloc(1, sizeof *l);
    if (!l) {
        sqlite3_finalize(st);
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
    } else {
        rc = memory_rows(h, st, list_push, l, 0, "reading corrections");
    }
    if (rc) {
        cairn_corrections_free(l);
        l = NULL;
    }
    *out = l;
    return rc;
}

/* Expired memories go before a read, as memory.c does; a reader that held
 * up the wipe does not fail the call. */
static int purge(struct cairn *h)
{
    int rc = memory_purge_expired(h);
    return rc == CAIRN_SCRUB_PENDING ? CAIRN_OK : rc;
}

int cairn_corrections_list(struct cairn *h, const char *scope, struct cairn_corrections **out)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    if ((rc = purge(h)) ||
        (rc = store_prepare(h, "SELECT m.id, m.text, m.scope, m.session, m.message, "
                               "coalesce(c.severity, 1), coalesce(c.keywords, ''), "
                               "coalesce(c.paths, ''), coalesce(c.commands, ''), "
                               "coalesce(c.retrieved, 0), coalesce(c.heeded, 0), "
                               "coalesce(c.recurred, 0), m.created_at, m.updated_at, c.last_seen, "
                               "'', 0 FROM memories m LEFT JOIN corrections c ON c.memory = m.id "
                               "WHERE m.type = 'correction' AND m.superseded_by IS NULL AND "
                               "(?1 IS NULL OR m.scope = ?1 OR m.scope = '') AND "
                               "(m.expires_at IS NULL OR m.expires_at > ?2) "
                               "ORDER BY 6, m.updated_at DESC, m.id DESC", &st)))
        return rc;
    if (scope)
        sqlite3_bind_text(st, 1, scope, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
    return collect(h, st, out);
}

/* ---- adding ---- */

static int count_item(const char *item, void *arg)
{
    (void)item;
    ++*(int *)arg;
    return 0;
}

static int list_fill(struct cairn *h, const char *what, const char *list, char **out)
{
    int rc = memory_clean(h, what, list, CAIRN_CORRECTION_LIST_MAX, out), n = 0;
    if (rc)
        return rc;
    corr_each_item(*out, count_item, &n);
    return n > CAIRN_CORRECTION_ITEMS_MAX
           ? cairn__err(h, CAIRN_INVALID, "correction %s: %d items, over %d", what, n,
                        CAIRN_CORRECTION_ITEMS_MAX)
           : CAIRN_OK;
}

void correction_row_release(struct correction_row *r)
{
    free(r->keywords);
    free(r->paths);
    free(r->commands);
    memset(r, 0, sizeof *r);
}

int correction_row_fill(struct cairn *h, struct correction_row *r,
                        const struct cairn_correction_when *w)
{
    static const struct cairn_correction_when none = { -1, NULL, NULL, NULL };
    int rc;
    memset(r, 0, sizeof *r);
    if (!w)
        w = &none;
    if (w->severity < -1 || w->severity > 2)
        return cairn__err(h, CAIRN_INVALID, "severity %d: p0, p1 or p2", w->severity);
    r->severity = w->severity < 0 ? 1 : w->severity;
    if ((rc = list_fill(h, "keywords", w->keywords, &r->keywords)) ||
        (rc = list_fill(h, "paths", w->paths, &r->paths)))
        return rc;
    return list_fill(h, "commands", w->commands, &r->commands);
}

int correction_row_store(struct cairn *h, int64_t id, const struct correction_row *r)
{
    sqlite3_stmt *st;
    /* an upsert: the counters of a row already there are its history and stay */
    int rc = store_prepare(h, "INSERT INTO corrections(memory, severity, keywords, paths, "
                              "commands) VALUES (?,?,?,?,?) ON CONFLICT(memory) DO UPDATE SET "
                              "severity = excluded.severity, keywords = excluded.keywords, "
                              "paths = excluded.paths, commands = excluded.commands", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, r->severity);
    sqlite3_bind_text(st, 3, r->keywords, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->paths, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, r->commands, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "storing a correction");
}

static int insert_when(struct cairn *h, int64_t id, void *arg)
{
    return correction_row_store(h, id, arg);
}

/* Adds m as a correction with w cleaned into r; extra(h, id, arg) writes
 * the correction's row (arg holds r) in the memory's transaction. */
static int add_with(struct cairn *h, const struct cairn_memory_new *m,
                    const struct cairn_correction_when *w, struct correction_row *r,
                    int (*extra)(struct cairn *, int64_t, void *), void *arg, int64_t *id)
{
    struct cairn_memory_new mm = *m;
    int rc;
    if (m->type && strcmp(m->type, "correction"))
        return cairn__err(h, CAIRN_INVALID, "a correction is of type correction, not '%s'",
                          m->type);
    mm.type = "correction";
    if (!(rc = correction_row_fill(h, r, w)))
        rc = memory_add_with(h, &mm, extra, arg, id);
    correction_row_release(r);
    return rc;
}

int cairn_correction_add(struct cairn *h, const struct cairn_memory_new *m,
                         const struct cairn_correction_when *w, int64_t *id)
{
    struct correction_row r;
    return add_with(h, m, w, &r, insert_when, &r, id);
}

/* ---- changing ---- */

/* The correction fields of live correction id, its default ones when it has
 * no row; CAIRN_NOTFOUND when id is no live correction. */
static int when_get(struct cairn *h, int64_t id, struct correction_row *r)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT coalesce(c.severity, 1), coalesce(c.keywords, ''), "
                              "coalesce(c.paths, ''), coalesce(c.commands, '') FROM memories m "
                              "LEFT JOIN corrections c ON c.memory = m.id WHERE m.id = ? AND "
                              "m.type = 'correction' AND m.superseded_by IS NULL", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        r->severity = sqlite3_column_int(st, 0);
        r->keywords = memory_col_dup(st, 1);
        r->paths = memory_col_dup(st, 2);
        r->commands = memory_col_dup(st, 3);
        rc = r->keywords && r->paths && r->commands ? CAIRN_OK
                                                    : cairn__err(h, CAIRN_NOMEM, "out of memory");
    } else if (src == SQLITE_DONE) {
        rc = cairn__err(h, CAIRN_NOTFOUND, "no live correction %lld", (long long)id);
    } else {
        rc = cairn__sqlerr(h, src, "reading a correction");
    }
    sqlite3_finalize(st);
    return rc;
}

/* The memory's last change is now (what list orders by and shows). */
static int touch(struct cairn *h, int64_t id)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE memories SET updated_at = ?2 WHERE id = ?1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "changing a correction");
}

int cairn_correction_set(struct cairn *h, int64_t id, const struct cairn_correction_when *w)
{
    struct correction_row old = { 0 }, r = { 0 };
    struct cairn_correction_when m;
    int rc;
    if ((rc = purge(h)) || (rc = store_begin(h)))
        return rc;
    if ((rc = when_get(h, id, &old)))
        goto fail;
    /* what w leaves out (severity -1, a NULL list) stays as it is */
    m.severity = w && w->severity >= 0 ? w->severity : old.severity;
    m.keywords = w && w->keywords ? w->keywords : old.keywords;
    m.paths = w && w->paths ? w->paths : old.paths;
    m.commands = w && w->commands ? w->commands : old.commands;
    if (w && w->severity < -1)
        m.severity = w->severity;       /* refused by the fill */
    if ((rc = correction_row_fill(h, &r, &m)) || (rc = correction_row_store(h, id, &r)) ||
        (rc = touch(h, id)))
        goto fail;
    correction_row_release(&old);
    correction_row_release(&r);
    return store_commit(h);
fail:
    correction_row_release(&old);
    correction_row_release(&r);
    store_rollback(h);
    return rc;
}

/* ---- counting ---- */

int cairn_correction_count(struct cairn *h, int64_t id, unsigned what)
{
    sqlite3_stmt *st;
    int rc, src;
    if ((rc = store_begin(h)))
        return rc;
    /* a correction without its row (cairn_memory_add, import) gets one */
    if ((rc = store_prepare(h, "INSERT OR IGNORE INTO corrections(memory) SELECT id FROM "
                               "memories WHERE id = ? AND type = 'correction' AND "
                               "superseded_by IS NULL", &st)))
        goto fail;
    sqlite3_bind_int64(st, 1, id);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "counting a correction");
        goto fail;
    }
    if ((rc = store_prepare(h, "UPDATE corrections SET retrieved = retrieved + ?2, "
                               "heeded = heeded + ?3, recurred = recurred + ?4, last_seen = ?5 "
                               "WHERE memory = ?1 AND memory IN (SELECT id FROM memories WHERE "
                               "superseded_by IS NULL)", &st)))
        goto fail;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, !!(what & CAIRN_CORRECTION_RETRIEVED));
    sqlite3_bind_int(st, 3, !!(what & CAIRN_CORRECTION_HEEDED));
    sqlite3_bind_int(st, 4, !!(what & CAIRN_CORRECTION_RECURRED));
    sqlite3_bind_int64(st, 5, (int64_t)time(NULL));
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "counting a correction");
        goto fail;
    }
    if (!sqlite3_changes(h->db)) {
        rc = cairn__err(h, CAIRN_NOTFOUND, "no live correction %lld", (long long)id);
        goto fail;
    }
    return store_commit(h);
fail:
    store_rollback(h);
    return rc;
}

/* ---- matching ---- */

struct match_arg {
    const struct cairn_tool_call *call;
};

static int command_item(const char *pat, void *arg)
{
    const struct match_arg *a = arg;
    return a->call->command && corr_command_matches(pat, a->call->command);
}

static int path_item(const char *glob, void *arg)
{
    const struct match_arg *a = arg;
    for (size_t i = 0; i < a->call->n_paths; i++)
        if (a->call->paths[i] && corr_path_matches(glob, a->call->paths[i]))
            return 1;
    return 0;
}

static int keyword_item(const char *kw, void *arg)
{
    const struct match_arg *a = arg;
    if (corr_keyword_in(kw, a->call->tool) || corr_keyword_in(kw, a->call->command))
        return 1;
    for (size_t i = 0; i < a->call->n_paths; i++)
        if (corr_keyword_in(kw, a->call->paths[i]))
            return 1;
    return 0;
}

int cairn_correction_applies(const struct cairn_correction *c, const struct cairn_tool_call *call)
{
    struct match_arg a = { call };
    if (!c || !call)
        return 0;
    return corr_each_item(c->commands, command_item, &a) ||
           corr_each_item(c->paths, path_item, &a) ||
           corr_each_item(c->keywords, keyword_item, &a);
}

/* ---- recognising ---- */

int cairn_correction_recognise(const char *prompt, size_t len, const char **rule,
                               char **commands)
{
    struct buf cmds = BUF_INIT;
    const char *r = NULL;
    int yes = prompt ? corr_recognise(prompt, len, &r, &cmds) : 0;
    if (rule)
        *rule = yes ? r : NULL;
    if (commands) {
        *commands = cmds.err ? NULL : buf_detach(&cmds, NULL);
        if (!*commands) {
            buf_release(&cmds);
            return 0;
        }
    }
    buf_release(&cmds);
    return yes;
}

/* ---- candidates ---- */

/* 1 if every word of item (blank-separated) is a whole word of text. */
static int all_words_in(const char *item, const char *text)
{
    char copy[CORR_ITEM_MAX + 1], *save = NULL;
    int any = 0;
    snprintf(copy, sizeof copy, "%s", item);
    for (char *w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
        if (!corr_keyword_in(w, text))
            return 0;
        any = 1;
    }
    return any;
}

static int command_said(const char *item, void *arg)
{
    return all_words_in(item, arg);
}

static int keyword_missing(const char *item, void *arg)
{
    return !all_words_in(item, arg);
}

/* 1 if correction c says what text says: its keywords are all words of
 * text, or one of its command patterns has all its words there. */
static int says_same(const struct cairn_correction *c, const char *text)
{
    if (corr_each_item(c->commands, command_said, (void *)text))
        return 1;
    return *c->keywords && !corr_each_item(c->keywords, keyword_missing, (void *)text);
}

struct candidate_row {
    char *text, *scope, *session, *message, *rule, *commands;
    int64_t recurs;
};

static void candidate_release(struct candidate_row *r)
{
    free(r->text);
    free(r->scope);
    free(r->session);
    free(r->message);
    free(r->rule);
    free(r->commands);
    memset(r, 0, sizeof *r);
}

static int insert_candidate(struct cairn *h, void *arg)
{
    const struct candidate_row *r = arg;
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT INTO correction_candidates(text, scope, session, message, "
                              "rule, commands, created_at, recurs) VALUES (?,?,?,?,?,?,?,?)", &st);
    if (rc)
        return rc;
    sqlite3_bind_text(st, 1, r->text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->scope, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->session, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->message, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, r->rule, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, r->commands, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 7, (int64_t)time(NULL));
    if (r->recurs)
        sqlite3_bind_int64(st, 8, r->recurs);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "adding a candidate");
}

int cairn_candidate_add(struct cairn *h, const char *text, const char *scope,
                        const char *session, const char *message, const char *rule,
                        const char *commands, int64_t *id, int64_t *recurs)
{
    struct candidate_row r = { 0 };
    struct cairn_corrections *l = NULL;
    int rc;
    if (recurs)
        *recurs = 0;
    if ((rc = memory_clean(h, "text", text, CAIRN_MEMORY_TEXT_MAX, &r.text)) ||
        (rc = memory_clean(h, "scope", scope, CAIRN_MEMORY_FIELD_MAX, &r.scope)) ||
        (rc = memory_clean(h, "session", session, CAIRN_MEMORY_FIELD_MAX, &r.session)) ||
        (rc = memory_clean(h, "message", message, CAIRN_MEMORY_FIELD_MAX, &r.message)) ||
        (rc = memory_clean(h, "rule", rule, CAIRN_MEMORY_FIELD_MAX, &r.rule)) ||
        (rc = list_fill(h, "commands", commands, &r.commands)))
        goto out;
    if (!r.text[strspn(r.text, " \t\r\n")]) {
        rc = cairn__err(h, CAIRN_INVALID, "a candidate needs text");
        goto out;
    }
    if ((rc = cairn_corrections_list(h, r.scope, &l)))
        goto out;
    for (size_t i = 0; i < l->n && !r.recurs; i++)
        if (says_same(&l->items[i], r.text))
            r.recurs = l->items[i].id;
    if ((rc = store_begin(h)))
        goto out;
    if ((rc = insert_candidate(h, &r))) {
        store_rollback(h);
        goto out;
    }
    int64_t cid = sqlite3_last_insert_rowid(h->db);
    if ((rc = store_commit(h)))
        goto out;
    /* the recurrence is counted after: a candidate kept is worth more than
     * a counter, and the count is its own transaction */
    if (r.recurs && (rc = cairn_correction_count(h, r.recurs, CAIRN_CORRECTION_RECURRED)))
        goto out;
    if (id)
        *id = cid;
    if (recurs)
        *recurs = r.recurs;
out:
    cairn_corrections_free(l);
    candidate_release(&r);
    return rc;
}

#define CANDIDATE_COLS \
    "id, text, scope, session, message, -1, '', '', commands, 0, 0, 0, created_at, " \
    "created_at, NULL, rule, coalesce(recurs, 0)"

int cairn_candidates_list(struct cairn *h, struct cairn_corrections **out)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    if ((rc = store_prepare(h, "SELECT " CANDIDATE_COLS " FROM correction_candidates "
                               "ORDER BY id", &st)))
        return rc;
    return collect(h, st, out);
}

static int candidate_get(struct cairn *h, int64_t id, struct cairn_corrections **out)
{
    sqlite3_stmt *st;
    int rc;
    if ((rc = store_prepare(h, "SELECT " CANDIDATE_COLS " FROM correction_candidates "
                               "WHERE id = ?", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, id);
    if ((rc = collect(h, st, out)))
        return rc;
    if (!(*out)->n) {
        cairn_corrections_free(*out);
        *out = NULL;
        return cairn__err(h, CAIRN_NOTFOUND, "no candidate %lld (cairn memories review)",
                          (long long)id);
    }
    return CAIRN_OK;
}

static int exec_id(struct cairn *h, const char *sql, int64_t id)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "candidates");
    return sqlite3_changes(h->db) ? CAIRN_OK
                                  : cairn__err(h, CAIRN_NOTFOUND, "no candidate %lld",
                                               (long long)id);
}

/* What accept writes in the new memory's transaction. */
struct accept_arg {
    struct correction_row when;    /* add_with fills it */
    int64_t candidate;
};

static int accept_extra(struct cairn *h, int64_t id, void *arg)
{
    struct accept_arg *a = arg;
    int rc = insert_when(h, id, &a->when);
    return rc ? rc : exec_id(h, "DELETE FROM correction_candidates WHERE id = ?", a->candidate);
}

int cairn_candidate_accept(struct cairn *h, int64_t id, const struct cairn_correction_when *w,
                           int64_t *memory)
{
    struct cairn_corrections *l = NULL;
    struct cairn_correction_when ww = { -1, NULL, NULL, NULL };
    struct accept_arg a = { { 0 }, id };
    int rc;
    if ((rc = candidate_get(h, id, &l)))
        return rc;
    const struct cairn_correction *c = &l->items[0];
    if (w)
        ww = *w;
    if (!ww.commands)
        ww.commands = c->commands;      /* what the prompt named */
    struct cairn_memory_new m = { 0 };
    m.text = c->text;
    m.scope = c->scope;
    m.session = c->session;
    m.message = c->message;
    rc = add_with(h, &m, &ww, &a.when, accept_extra, &a, memory);
    cairn_corrections_free(l);
    return rc;
}

static int do_reject(struct cairn *h, void *arg)
{
    return exec_id(h, "DELETE FROM correction_candidates WHERE id = ?", *(int64_t *)arg);
}

int cairn_candidate_reject(struct cairn *h, int64_t id)
{
    return store_scrub(h, do_reject, &id);
}
