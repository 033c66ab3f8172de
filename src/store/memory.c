/*
 * memory.c: explicit memories (schema version 8, docs/MEMORIES.md): add,
 * read, list, update, link, undo, remove, and the expiry of the scratch
 * tier.
 *
 * Every change that replaces something writes what it replaced to
 * memory_history in the same transaction, so cairn_memory_undo can put it
 * back: an update keeps the old text, a supersede the old superseded_by,
 * a link the link it made. Removal (rm, expiry) goes through store_scrub,
 * so that a removed memory, its history and its links leave no byte in
 * the store's files, as cairn_forget promises for sessions.
 *
 * Text, scope, tags and provenance are cleaned (store_clean_text) before
 * the write lock is taken, as ingest.c does for sessions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>

#include "internal.h"
#include "mask/redact.h"
#include "store/memory.h"
#include "store/vectors.h"
#include "util/buf.h"

static const char *const memory_types[] = { "fact", "preference", "decision", "procedure",
                                            "correction" };

int memory_type_valid(const char *t)
{
    for (size_t i = 0; i < sizeof memory_types / sizeof memory_types[0]; i++)
        if (!strcmp(t, memory_types[i]))
            return 1;
    return 0;
}

/* ---- the result list ---- */

struct cairn_memories {
    struct cairn_memory *items;
    size_t n, cap;
};

size_t cairn_memories_count(const struct cairn_memories *l)
{
    return l ? l->n : 0;
}

const struct cairn_memory *cairn_memories_at(const struct cairn_memories *l, size_t i)
{
    return l && i < l->n ? &l->items[i] : NULL;
}

static void item_free(struct cairn_memory *m)
{
    free((char *)m->type);
    free((char *)m->text);
    free((char *)m->scope);
    free((char *)m->tags);
    free((char *)m->session);
    free((char *)m->message);
    free((char *)m->links);
    free((char *)m->op);
}

void cairn_memories_free(struct cairn_memories *l)
{
    if (!l)
        return;
    for (size_t i = 0; i < l->n; i++)
        item_free(&l->items[i]);
    free(l->items);
    free(l);
}

char *memory_col_dup(sqlite3_stmt *st, int c)
{
    const char *s = (const char *)sqlite3_column_text(st, c);
    return strdup(s ? s : "");
}

int memory_grow(struct cairn *h, void **items, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return CAIRN_OK;
    size_t nc = *cap ? *cap * 2 : 8;
    void *p = realloc(*items, nc * size);
    if (!p)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    *items = p;
    *cap = nc;
    return CAIRN_OK;
}

int memory_rows(struct cairn *h, sqlite3_stmt *st, int (*push)(struct cairn *, void *,
                                                                  sqlite3_stmt *, int),
                void *list, int arg, const char *what)
{
    int rc = CAIRN_OK, src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW)
        if ((rc = push(h, list, st, arg)))
            break;
    if (!rc && src != SQLITE_DONE)
        rc = cairn__sqlerr(h, src, what);
    sqlite3_finalize(st);
    return rc;
}

static int64_t col_time(sqlite3_stmt *st, int c)
{
    return sqlite3_column_type(st, c) == SQLITE_NULL ? CAIRN_NO_TIME : sqlite3_column_int64(st, c);
}

/* The columns every read selects, in this order (struct cairn_memory). */
#define MEMORY_COLS \
    "m.id, m.type, m.text, m.scope, m.tags, m.created_at, m.updated_at, m.expires_at," \
    " m.session, m.message, coalesce(m.superseded_by, 0)," \
    " (SELECT group_concat(l, ',') FROM (" \
    "   SELECT kind || ':' || dst AS l FROM memory_links WHERE src = m.id" \
    "   UNION ALL SELECT CASE kind WHEN 'supersedes' THEN 'superseded_by'" \
    "     WHEN 'contradicts' THEN 'contradicted_by' ELSE kind END || ':' || src" \
    "   FROM memory_links WHERE dst = m.id))"

/* Appends the row at st (MEMORY_COLS, then op when with_op) to l. */
static int list_push(struct cairn *h, void *list, sqlite3_stmt *st, int with_op)
{
    struct cairn_memories *l = list;
    int rc = memory_grow(h, (void **)&l->items, &l->cap, l->n, sizeof *l->items);
    if (rc)
        return rc;
    struct cairn_memory *m = &l->items[l->n];
    memset(m, 0, sizeof *m);
    m->id = sqlite3_column_int64(st, 0);
    m->type = memory_col_dup(st, 1);
    m->text = memory_col_dup(st, 2);
    m->scope = memory_col_dup(st, 3);
    m->tags = memory_col_dup(st, 4);
    m->created = sqlite3_column_int64(st, 5);
    m->updated = sqlite3_column_int64(st, 6);
    m->expires = col_time(st, 7);
    m->session = memory_col_dup(st, 8);
    m->message = memory_col_dup(st, 9);
    m->superseded_by = sqlite3_column_int64(st, 10);
    m->links = memory_col_dup(st, 11);
    m->op = with_op ? memory_col_dup(st, 12) : strdup("");
    l->n++;
    if (!m->type || !m->text || !m->scope || !m->tags || !m->session || !m->message ||
        !m->links || !m->op)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    return CAIRN_OK;
}

/* Runs st (bound) and collects its rows into a new list at *out. */
static int collect(struct cairn *h, sqlite3_stmt *st, int with_op, struct cairn_memories **out)
{
    int rc;
    struct cairn_memories *l = calloc(1, sizeof *l);
    if (!l) {
        sqlite3_finalize(st);
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
    } else {
        rc = memory_rows(h, st, list_push, l, with_op, "reading memories");
    }
    if (rc) {
        cairn_memories_free(l);
        l = NULL;
    }
    *out = l;
    return rc;
}

/* ---- expiry ---- */

static int exec_int(struct cairn *h, const char *sql, int64_t a, int64_t *out)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, a);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW && out)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (src != SQLITE_ROW && src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "memories");
    return src == SQLITE_ROW || !out ? CAIRN_OK : CAIRN_NOTFOUND;
}

static int delete_expired(struct cairn *h, void *arg)
{
    return exec_int(h, "DELETE FROM memories WHERE expires_at <= ?", *(int64_t *)arg, NULL);
}

int memory_purge_expired(struct cairn *h)
{
    int64_t now = (int64_t)time(NULL), any = 0;
    int rc;
    /* a server store's copy is not written after its open (its listings
     * leave expired rows out by the clock, as a reader's do) */
    if (h->readonly || h->pg)
        return CAIRN_OK;
    /* the partial index makes this one probe on every open */
    if ((rc = exec_int(h, "SELECT EXISTS(SELECT 1 FROM memories WHERE expires_at <= ?)", now,
                       &any)) || !any)
        return rc;
    return store_scrub(h, delete_expired, &now);
}

/* Before every memory call of a handle that stays open (the MCP server):
 * what expired since it opened goes now. A reader that held up the wipe
 * does not fail the call: the rows are gone, the next scrub wipes them. */
static int purge(struct cairn *h)
{
    int rc = memory_purge_expired(h);
    return rc == CAIRN_SCRUB_PENDING ? CAIRN_OK : rc;
}

/* ---- reading ---- */

int cairn_memory_get(struct cairn *h, int64_t id, struct cairn_memories **out)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    if ((rc = purge(h)) ||
        (rc = store_prepare(h, "SELECT " MEMORY_COLS " FROM memories m WHERE m.id = ?1 AND "
                               "(m.expires_at IS NULL OR m.expires_at > ?2)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, (int64_t)time(NULL));
    if ((rc = collect(h, st, 0, out)))
        return rc;
    if ((*out)->n == 0) {
        cairn_memories_free(*out);
        *out = NULL;
        return cairn__err(h, CAIRN_NOTFOUND, "no memory %lld", (long long)id);
    }
    return CAIRN_OK;
}

int cairn_memory_list(struct cairn *h, const char *scope, const char *type, int all,
                      struct cairn_memories **out)
{
    sqlite3_stmt *st;
    int rc;
    *out = NULL;
    if (type && !memory_type_valid(type))
        return cairn__err(h, CAIRN_INVALID, "unknown memory type '%s' (fact, preference, "
                          "decision, procedure, correction)", type);
    if ((rc = purge(h)) ||
        (rc = store_prepare(h, "SELECT " MEMORY_COLS " FROM memories m WHERE "
                               "(?1 IS NULL OR m.scope = ?1 OR m.scope = '') AND "
                               "(?2 IS NULL OR m.type = ?2) AND (?3 OR m.superseded_by IS NULL) "
                               "AND (m.expires_at IS NULL OR m.expires_at > ?4) "
                               "ORDER BY m.updated_at DESC, m.id DESC", &st)))
        return rc;
    if (scope)
        sqlite3_bind_text(st, 1, scope, -1, SQLITE_STATIC);
    if (type)
        sqlite3_bind_text(st, 2, type, -1, SQLITE_STATIC);
    sqlite3_bind_int(st, 3, all != 0);
    sqlite3_bind_int64(st, 4, (int64_t)time(NULL));
    return collect(h, st, 0, out);
}

int cairn_memory_history(struct cairn *h, int64_t id, struct cairn_memories **out)
{
    sqlite3_stmt *st;
    struct cairn_memories *one;
    int rc;
    *out = NULL;
    if ((rc = cairn_memory_get(h, id, &one)))
        return rc;
    cairn_memories_free(one);
    /* each earlier state: the memory as it is, with the history row's text,
     * superseded_by, and the time of the change that replaced it */
    if ((rc = store_prepare(h, "SELECT m.id, m.type, hi.text, m.scope, m.tags, m.created_at, "
                               "hi.at, m.expires_at, m.session, m.message, "
                               "coalesce(hi.superseded_by, 0), "
                               "CASE WHEN hi.op = 'link' THEN hi.link_kind || ':' || hi.link_dst "
                               "ELSE '' END, hi.op "
                               "FROM memory_history hi JOIN memories m ON m.id = hi.memory "
                               "WHERE hi.memory = ? ORDER BY hi.id DESC", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, id);
    return collect(h, st, 1, out);
}

/* ---- writing ---- */

void memory_row_release(struct memory_row *r)
{
    free(r->type);
    free(r->text);
    free(r->scope);
    free(r->tags);
    free(r->session);
    free(r->message);
    memset(r, 0, sizeof *r);
}

int memory_clean(struct cairn *h, const char *what, const char *s, size_t max, char **out)
{
    struct store_clean cl = { redact_enabled(cairn__setting(h, CAIRN__SET_REDACT)), 0, 0, NULL };
    size_t n;
    *out = NULL;
    if (!s)
        s = "";
    /* capped before cleaning too: masking never grows text by more than
     * its markers, and no caller should make us copy megabytes to refuse them */
    if (strlen(s) > 4 * max)
        return cairn__err(h, CAIRN_INVALID, "memory %s: over %zu bytes", what, max);
    if (!(*out = store_clean_text(s, strlen(s), &cl, &n)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (n > max)
        return cairn__err(h, CAIRN_INVALID, "memory %s: %zu bytes, over %zu", what, n, max);
    return CAIRN_OK;
}

int memory_row_fill(struct cairn *h, struct memory_row *r, const char *type, const char *text,
                    const char *scope, const char *tags, const char *session,
                    const char *message)
{
    int rc;
    memset(r, 0, sizeof *r);
    r->expires = CAIRN_NO_TIME;
    if (!type)
        type = "fact";
    if (!memory_type_valid(type))
        return cairn__err(h, CAIRN_INVALID, "unknown memory type '%s' (fact, preference, "
                          "decision, procedure, correction)", type);
    if (!(r->type = strdup(type)))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if ((rc = memory_clean(h, "text", text, CAIRN_MEMORY_TEXT_MAX, &r->text)) ||
        (rc = memory_clean(h, "scope", scope, CAIRN_MEMORY_FIELD_MAX, &r->scope)) ||
        (rc = memory_clean(h, "tags", tags, CAIRN_MEMORY_FIELD_MAX, &r->tags)) ||
        (rc = memory_clean(h, "session", session, CAIRN_MEMORY_FIELD_MAX, &r->session)) ||
        (rc = memory_clean(h, "message", message, CAIRN_MEMORY_FIELD_MAX, &r->message)))
        return rc;
    if (!r->text[strspn(r->text, " \t\r\n")])
        return cairn__err(h, CAIRN_INVALID, "a memory needs text");
    return CAIRN_OK;
}

/* r's columns as ?1-?9 of an INSERT or an UPDATE of memories */
static void bind_row(sqlite3_stmt *st, const struct memory_row *r)
{
    sqlite3_bind_text(st, 1, r->type, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->text, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->scope, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->tags, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, r->created);
    sqlite3_bind_int64(st, 6, r->updated);
    if (r->expires != CAIRN_NO_TIME)
        sqlite3_bind_int64(st, 7, r->expires);
    sqlite3_bind_text(st, 8, r->session, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, r->message, -1, SQLITE_STATIC);
}

int memory_update_row(struct cairn *h, int64_t id, const struct memory_row *r)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "UPDATE memories SET type = ?1, text = ?2, scope = ?3, tags = ?4, "
                              "created_at = ?5, updated_at = ?6, expires_at = ?7, session = ?8, "
                              "message = ?9 WHERE id = ?10", &st);
    if (rc)
        return rc;
    bind_row(st, r);
    sqlite3_bind_int64(st, 10, id);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "updating a memory");
}

int memory_insert(struct cairn *h, const struct memory_row *r, int64_t *id)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT INTO memories(type, text, scope, tags, created_at, "
                              "updated_at, expires_at, session, message) "
                              "VALUES (?,?,?,?,?,?,?,?,?)", &st);
    if (rc)
        return rc;
    bind_row(st, r);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "adding a memory");
    *id = sqlite3_last_insert_rowid(h->db);
    /* its global id and first version, from the OS's random source: what
     * names it on a server and every machine that syncs it */
    char gid[33], vid[33];
    if ((rc = memory_gid_new(h, gid)) || (rc = memory_gid_new(h, vid)) ||
        (rc = store_prepare(h, "INSERT INTO memory_sync(memory, gid, vid) VALUES (?,?,?)", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, *id);
    sqlite3_bind_text(st, 2, gid, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, vid, -1, SQLITE_STATIC);
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "adding a memory");
}

int memory_gid_new(struct cairn *h, char out[33])
{
    unsigned char b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t n = getrandom(b + got, sizeof b - got, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return cairn__err(h, CAIRN_IO, "no random bytes for a memory's id: %s",
                              strerror(errno));
        got += (size_t)n;
    }
    for (size_t i = 0; i < sizeof b; i++)
        snprintf(out + 2 * i, 3, "%02x", b[i]);
    return CAIRN_OK;
}

/* Writes memory id's history row for op, holding its state now (and the
 * link it is about to make, for op "link"). */
static int history_add(struct cairn *h, int64_t id, const char *op, int64_t dst,
                       const char *kind)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT INTO memory_history(memory, op, at, text, updated_at, "
                              "superseded_by, link_dst, link_kind) SELECT id, ?2, ?3, text, "
                              "updated_at, superseded_by, ?4, ?5 FROM memories WHERE id = ?1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, op, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (int64_t)time(NULL));
    if (kind) {
        sqlite3_bind_int64(st, 4, dst);
        sqlite3_bind_text(st, 5, kind, -1, SQLITE_STATIC);
    }
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "memory history");
    return sqlite3_changes(h->db) ? CAIRN_OK
                                  : cairn__err(h, CAIRN_NOTFOUND, "no memory %lld", (long long)id);
}

static int link_insert(struct cairn *h, int64_t from, int64_t to, const char *kind)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "INSERT OR IGNORE INTO memory_links(src, dst, kind) VALUES (?,?,?)",
                           &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, from);
    sqlite3_bind_int64(st, 2, to);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "memory link");
}

/* In a transaction: `old` (which must be live) is superseded by `by`. */
int memory_supersede(struct cairn *h, int64_t old, int64_t by)
{
    int64_t live = 0;
    int rc = exec_int(h, "SELECT count(*) FROM memories WHERE id = ? AND superseded_by IS NULL",
                      old, &live);
    if (rc)
        return rc;
    if (!live || old == by)
        return cairn__err(h, CAIRN_NOTFOUND, "no live memory %lld to replace", (long long)old);
    if ((rc = history_add(h, old, "supersede", 0, NULL)) ||
        (rc = link_insert(h, by, old, "supersedes")))
        return rc;
    sqlite3_stmt *st;
    if ((rc = store_prepare(h, "UPDATE memories SET superseded_by = ?2 WHERE id = ?1", &st)))
        return rc;
    sqlite3_bind_int64(st, 1, old);
    sqlite3_bind_int64(st, 2, by);
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "superseding a memory");
}

int memory_link_add(struct cairn *h, int64_t from, int64_t to, const char *kind)
{
    int64_t n = 0;
    int rc;
    if (!kind || (strcmp(kind, "contradicts") && strcmp(kind, "related_to")))
        return cairn__err(h, CAIRN_INVALID, "link kind '%s': contradicts or related_to",
                          kind ? kind : "");
    if (from == to)
        return cairn__err(h, CAIRN_INVALID, "a memory cannot be linked to itself");
    if ((rc = exec_int(h, "SELECT count(*) FROM memories WHERE id = ?", to, &n)))
        return rc;
    if (!n)
        return cairn__err(h, CAIRN_NOTFOUND, "no memory %lld", (long long)to);
    if ((rc = history_add(h, from, "link", to, kind)))
        return rc;
    return link_insert(h, from, to, kind);
}

int memory_add_with(struct cairn *h, const struct cairn_memory_new *m,
                    int (*extra)(struct cairn *, int64_t, void *), void *arg, int64_t *id)
{
    struct memory_row r;
    struct vec_batch vb = VEC_BATCH_INIT;
    int64_t nid = 0;
    int rc;
    if (m->ttl < 0)
        return cairn__err(h, CAIRN_INVALID, "a memory's ttl cannot be negative");
    if ((rc = memory_row_fill(h, &r, m->type, m->text, m->scope, m->tags, m->session,
                              m->message)))
        goto out;
    r.created = r.updated = (int64_t)time(NULL);
    if (m->ttl)
        r.expires = r.created + m->ttl;
    /* its vector before the lock; none is no error (backfill makes it) */
    memory_vec_make(h, r.text, &vb);
    if ((rc = purge(h)) || (rc = store_begin(h)))
        goto out;
    if ((rc = memory_insert(h, &r, &nid)) || (rc = memory_vec_store(h, nid, r.text, &vb)) ||
        (m->replaces && (rc = memory_supersede(h, m->replaces, nid))) ||
        (extra && (rc = extra(h, nid, arg)))) {
        store_rollback(h);
        goto out;
    }
    if ((rc = store_commit(h)))
        goto out;
    if (id)
        *id = nid;
out:
    vec_batch_free(&vb);
    memory_row_release(&r);
    return rc;
}

int cairn_memory_add(struct cairn *h, const struct cairn_memory_new *m, int64_t *id)
{
    return memory_add_with(h, m, NULL, NULL, id);
}

/* Runs change(h, arg) in one transaction after the expiry purge. */
static int in_tx(struct cairn *h, int (*change)(struct cairn *, void *), void *arg)
{
    int rc;
    if ((rc = purge(h)) || (rc = store_begin(h)))
        return rc;
    if ((rc = change(h, arg))) {
        store_rollback(h);
        return rc;
    }
    return store_commit(h);
}

struct update_arg {
    int64_t id;
    const char *text;
    const struct vec_batch *vb;
};

static int do_update(struct cairn *h, void *arg)
{
    struct update_arg *a = arg;
    sqlite3_stmt *st;
    int rc;
    if ((rc = history_add(h, a->id, "update", 0, NULL)) ||
        (rc = store_prepare(h, "UPDATE memories SET text = ?2, updated_at = ?3 WHERE id = ?1",
                            &st)))
        return rc;
    sqlite3_bind_int64(st, 1, a->id);
    sqlite3_bind_text(st, 2, a->text, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, (int64_t)time(NULL));
    int src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "updating a memory");
    return memory_vec_store(h, a->id, a->text, a->vb);
}

int cairn_memory_update(struct cairn *h, int64_t id, const char *text)
{
    struct memory_row r;
    int rc = memory_row_fill(h, &r, NULL, text, NULL, NULL, NULL, NULL);
    if (!rc) {
        struct vec_batch vb = VEC_BATCH_INIT;
        memory_vec_make(h, r.text, &vb);
        struct update_arg a = { id, r.text, &vb };
        rc = in_tx(h, do_update, &a);
        vec_batch_free(&vb);
    }
    memory_row_release(&r);
    return rc;
}

struct link_arg {
    int64_t from, to;
    const char *kind;
};

static int do_link(struct cairn *h, void *arg)
{
    struct link_arg *a = arg;
    return memory_link_add(h, a->from, a->to, a->kind);
}

int cairn_memory_link(struct cairn *h, int64_t from, int64_t to, const char *kind)
{
    struct link_arg a = { from, to, kind };
    return in_tx(h, do_link, &a);
}

/* Puts back what memory *id's newest history row replaced, and drops the row. */
static int do_undo(struct cairn *h, void *arg)
{
    int64_t id = *(int64_t *)arg;
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT id, op, link_dst, link_kind FROM memory_history "
                              "WHERE memory = ? ORDER BY id DESC LIMIT 1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, id);
    int src = sqlite3_step(st);
    if (src != SQLITE_ROW) {
        sqlite3_finalize(st);
        return src == SQLITE_DONE
               ? cairn__err(h, CAIRN_NOTFOUND, "memory %lld has no change to undo (its add is "
                            "undone by removing it)", (long long)id)
               : cairn__sqlerr(h, src, "memory history");
    }
    int64_t hid = sqlite3_column_int64(st, 0), dst = sqlite3_column_int64(st, 2);
    int is_link = !strcmp((const char *)sqlite3_column_text(st, 1), "link");
    char kind[16] = "";
    if (sqlite3_column_text(st, 3))
        snprintf(kind, sizeof kind, "%s", (const char *)sqlite3_column_text(st, 3));
    sqlite3_finalize(st);
    if (is_link) {
        if ((rc = store_prepare(h, "DELETE FROM memory_links WHERE src = ?1 AND dst = ?2 AND "
                                   "kind = ?3", &st)))
            return rc;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, dst);
        sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
    } else {
        /* text and superseded_by as they were; a supersede's link goes too.
         * A memory that superseded this one and is gone since (SET NULL)
         * leaves nothing to restore but the NULL. */
        if ((rc = store_prepare(h, "DELETE FROM memory_links WHERE dst = ?1 AND kind = "
                                   "'supersedes' AND src = (SELECT superseded_by FROM memories "
                                   "WHERE id = ?1) AND (SELECT op FROM memory_history "
                                   "WHERE id = ?2) = 'supersede'", &st)))
            return rc;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, hid);
        src = sqlite3_step(st);
        sqlite3_finalize(st);
        if (src != SQLITE_DONE)
            return cairn__sqlerr(h, src, "undo");
        if ((rc = store_prepare(h, "UPDATE memories SET (text, updated_at, superseded_by) = "
                                   "(SELECT hi.text, hi.updated_at, (SELECT m2.id FROM memories m2 "
                                   "WHERE m2.id = hi.superseded_by) FROM memory_history hi "
                                   "WHERE hi.id = ?2) WHERE id = ?1", &st)))
            return rc;
        sqlite3_bind_int64(st, 1, id);
        sqlite3_bind_int64(st, 2, hid);
    }
    src = sqlite3_step(st);
    sqlite3_finalize(st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "undo");
    return exec_int(h, "DELETE FROM memory_history WHERE id = ?", hid, NULL);
}

int cairn_memory_undo(struct cairn *h, int64_t id)
{
    return in_tx(h, do_undo, &id);
}

static int do_remove(struct cairn *h, void *arg)
{
    int rc = memory_sync_forget(h, *(int64_t *)arg);
    if (!rc)
        rc = exec_int(h, "DELETE FROM memories WHERE id = ?", *(int64_t *)arg, NULL);
    if (!rc && !sqlite3_changes(h->db))
        rc = cairn__err(h, CAIRN_NOTFOUND, "no memory %lld", (long long)*(int64_t *)arg);
    return rc;
}

int cairn_memory_remove(struct cairn *h, int64_t id)
{
    int rc = purge(h);
    return rc ? rc : store_scrub(h, do_remove, &id);
}
