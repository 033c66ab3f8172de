/*
 * ingest.c: adding sessions (cairn_add_session, cairn_add_json).
 *
 * The write path does no model call and rewrites nothing but secrets:
 * text is repaired only where it is not valid UTF-8, masked where it holds
 * a secret, and stored as it came. All CPU work (repair, masking, hashing)
 * happens before the write lock is taken, so concurrent writers wait only
 * for the inserts themselves. One session is one transaction.
 *
 * Vectors: when an embedding model is present (store/vectors.h) the new
 * messages are embedded here too, also before the lock (a read looks up
 * which messages the store already has, so a re-added session costs no
 * model call), and written in the same transaction as their message.
 *
 * Idempotence: a session is found by its external id (made from its
 * content when the caller gave none); a message by its external id, or,
 * without one, by a hash of (role, speaker, time, content) counted with
 * repeats, so re-adding a session with two identical "ok" turns neither
 * loses nor doubles them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>

#include "internal.h"
#include "mask/private.h"
#include "mask/redact.h"
#include "store/keep.h"
#include "store/recall_read.h"
#include "store/units.h"
#include "store/vectors.h"
#include "text/tokenize.h"
#include "util/timeutil.h"
#include "util/buf.h"
#include "util/json.h"
#include "util/utf8.h"

/* A message after cleaning: owns its text. */
struct clean_msg {
    char    *content;
    size_t   len;
    char    *speaker;      /* cleaned like content; NULL if none */
    uint64_t hash;
    int      occurrence;   /* 1 for the first message with this hash (no id) */
};

/* Removes private spans, repairs and masks text into a malloc'd string.
 * Every string cairn_add_session stores goes through here. */
char *store_clean_text(const char *s, size_t n, struct store_clean *cl, size_t *out_len)
{
    struct buf a = BUF_INIT, b = BUF_INIT, c = BUF_INIT;
    char *res = NULL;
    const char *src = s;
    size_t srcn = n;
    if (private_has_tag(src, srcn)) {
        int k = private_strip(src, srcn, &c);
        if (k < 0)
            goto out;
        cl->private_removed += (size_t)k;
        src = c.p ? c.p : "";
        srcn = c.n;
    }
    if (!utf8_clean(src, srcn)) {
        if (utf8_repair(src, srcn, &a))
            goto out;
        src = a.p;
        srcn = a.n;
    }
    if (cl->redact) {
        int k = redact_text(src, srcn, &b, cl->rep);
        if (k < 0)
            goto out;
        cl->masked += (size_t)k;
    } else if (buf_add(&b, src, srcn)) {
        goto out;
    }
    res = buf_detach(&b, out_len);
out:
    buf_release(&a);
    buf_release(&b);
    buf_release(&c);
    return res;
}

/* store_clean_text for an optional NUL-terminated field: NULL stays NULL.
 * Returns 0, or -1 on NOMEM. */
static int clean_field(const char *s, struct store_clean *cl, char **out)
{
    size_t n;
    *out = NULL;
    if (!s)
        return 0;
    *out = store_clean_text(s, strlen(s), cl, &n);
    return *out ? 0 : -1;
}

/* Cleans every string (keys too) of a JSON tree in place; 1 if any
 * changed, -1 on NOMEM. */
static int clean_json(cJSON *j, struct store_clean *cl)
{
    int changed = 0;
    for (; j; j = j->next) {
        char *c;
        if (j->string) {
            if (clean_field(j->string, cl, &c))
                return -1;
            if (strcmp(c, j->string)) {
                cJSON_free(j->string);
                j->string = c;
                j->type &= ~cJSON_StringIsConst;
                changed = 1;
            } else {
                free(c);
            }
        }
        if (cJSON_IsString(j) && j->valuestring) {
            if (clean_field(j->valuestring, cl, &c))
                return -1;
            if (strcmp(c, j->valuestring)) {
                cJSON_free(j->valuestring);
                j->valuestring = c;
                changed = 1;
            } else {
                free(c);
            }
        }
        if (j->child) {
            int r = clean_json(j->child, cl);
            if (r < 0)
                return -1;
            changed |= r;
        }
    }
    return changed;
}

/*
 * The session's meta (a JSON object as text), cleaned string by string so
 * that a mask never breaks the JSON; kept byte for byte when nothing
 * changes. Text that is not JSON is cleaned as text. NULL on NOMEM.
 */
char *store_clean_meta(const char *meta, struct store_clean *cl)
{
    cJSON *j = cJSON_Parse(meta);
    char *res = NULL;
    if (!j) {
        clean_field(meta, cl, &res);
        return res;
    }
    int r = clean_json(j, cl);
    if (r > 0) {
        char *p = cJSON_PrintUnformatted(j);
        res = p ? strdup(p) : NULL;
        cJSON_free(p);
    } else if (r == 0) {
        res = strdup(meta);
    }
    cJSON_Delete(j);
    return res;
}

/* The document length BM25 normalises by: whole tokens, not the parts of
 * compounds that share their position. */
int store_index_tokens(const char *s, size_t n)
{
    int k = text_count_words(s, n);
    return k > 0 ? k : 0;
}

uint64_t store_message_hash(const char *role, const char *speaker, int64_t at,
                            const char *content, size_t len)
{
    uint64_t h = hash64(role, strlen(role), 0x51);
    if (speaker)
        h = hash64(speaker, strlen(speaker), h);
    h = hash64(&at, sizeof at, h);
    return hash64(content, len, h);
}

/* Counts repeats of each hash within one batch (open addressing). */
static void count_occurrences(struct clean_msg *cm, const struct cairn_message *m, size_t n)
{
    size_t cap = 16;
    while (cap < n * 2)
        cap *= 2;
    struct { uint64_t h; int c; } *tab = calloc(cap, sizeof *tab);
    for (size_t i = 0; i < n; i++) {
        if (m[i].id && *m[i].id) {
            cm[i].occurrence = 0;
            continue;
        }
        if (!tab) {                /* no memory for the table: quadratic scan */
            int c = 1;
            for (size_t j = 0; j < i; j++)
                c += !(m[j].id && *m[j].id) && cm[j].hash == cm[i].hash;
            cm[i].occurrence = c;
            continue;
        }
        uint64_t h = cm[i].hash | 1;   /* 0 marks an empty slot */
        size_t k = (size_t)h & (cap - 1);
        while (tab[k].h && tab[k].h != h)
            k = (k + 1) & (cap - 1);
        tab[k].h = h;
        cm[i].occurrence = ++tab[k].c;
    }
    free(tab);
}

/* 1 if a (n bytes) and b (m bytes) agree up to the shorter one. */
static int prefix_agrees(const char *a, size_t n, const char *b, size_t m)
{
    return !memcmp(a, b, n < m ? n : m);
}

/*
 * Refuses an input that gives one id to two messages whose texts differ:
 * the store keeps one message per id, so the second would be lost. The
 * same text twice, or a reply and its longer later form (one text starts
 * with the other), lose nothing and pass (the longer one is kept).
 */
static int check_repeated_ids(struct cairn *h, const struct cairn_session *s)
{
    size_t cap = 16;
    int rc = CAIRN_OK;
    while (cap < s->n_messages * 2)
        cap *= 2;
    size_t *tab = calloc(cap, sizeof *tab);          /* message index + 1, 0: empty */
    if (!tab)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n_messages; i++) {
        const struct cairn_message *m = &s->messages[i];
        if (!m->id || !*m->id)
            continue;
        size_t k = (size_t)hash64(m->id, strlen(m->id), 0x1d) & (cap - 1);
        for (; tab[k]; k = (k + 1) & (cap - 1)) {
            const struct cairn_message *o = &s->messages[tab[k] - 1];
            if (strcmp(o->id, m->id))
                continue;
            size_t on = o->content_len ? o->content_len : strlen(o->content);
            size_t mn = m->content_len ? m->content_len : strlen(m->content);
            if (strcmp(o->role, m->role) || !prefix_agrees(o->content, on, m->content, mn)) {
                rc = cairn__err(h, CAIRN_INVALID, "message %zu repeats the id \"%.80s\" of "
                                "message %zu with other text; ids must be unique in a session",
                                i + 1, m->id, tab[k]);
                goto out;
            }
            break;
        }
        if (!tab[k])
            tab[k] = i + 1;
    }
out:
    free(tab);
    return rc;
}

static void derive_session_id(const struct cairn_session *s, const struct clean_msg *cm,
                              char *out, size_t n)
{
    uint64_t h = 0x5e55;
    if (s->source)
        h = hash64(s->source, strlen(s->source), h);
    if (s->project)
        h = hash64(s->project, strlen(s->project), h);
    h = hash64(&s->started_at, sizeof s->started_at, h);
    for (size_t i = 0; i < s->n_messages && i < 4; i++)
        h = hash64(&cm[i].hash, sizeof cm[i].hash, h);
    snprintf(out, n, "auto-%016llx", (unsigned long long)h);
}

/*
 * If the session's message `id` holds a strict prefix of cm's text,
 * replaces it with cm's (its index row and event dates too; its vectors
 * go, by trigger, and a backfill gives new ones). Returns 1 if extended, 0 if not, -1 on
 * a SQLite error. *st caches the statements between calls.
 */
struct extend_st { sqlite3_stmt *sel, *upd; };

static int group_stats_apply(struct cairn *h);
static int fts_bulk_begin(struct cairn *h);

/* Message id of session sess extended to cm (its length ntok; rt: its
 * tokens as text_record made them, or NULL). */
static int extend_message(struct cairn *h, int64_t sess, const char *id,
                          const struct clean_msg *cm, int ntok, const struct text_toks *rt,
                          struct extend_st *st)
{
    int res = 0;
    if (!st->sel && (store_prepare(h, "SELECT id, content FROM messages WHERE session = ? "
                                   "AND ext_id = ?", &st->sel) ||
                     store_prepare(h, "UPDATE messages SET content = ?, hash = ?, ntok = ? "
                                   "WHERE id = ?", &st->upd)))
        return -1;
    sqlite3_reset(st->sel);
    sqlite3_bind_int64(st->sel, 1, sess);
    sqlite3_bind_text(st->sel, 2, id, -1, SQLITE_STATIC);
    if (sqlite3_step(st->sel) != SQLITE_ROW)
        return 0;
    const char *old = (const char *)sqlite3_column_text(st->sel, 1);
    size_t on = (size_t)sqlite3_column_bytes(st->sel, 1);
    if (!old || on >= cm->len || memcmp(old, cm->content, on) != 0)
        return 0;
    int64_t row = sqlite3_column_int64(st->sel, 0);
    /* the update's trigger moves session_stats: a group's pending totals
     * must be there first */
    if (group_stats_apply(h)) {
        sqlite3_reset(st->sel);
        return -1;
    }
    /* the new text's record (store_message made it for the insert the
     * stored id refused): FTS5's tokens (it makes the old text's again,
     * to delete them) and the keepers' */
    store_keep_replay(h, cm->content, cm->len, rt);
    int frc = store_fts_replace(h, row, old, on, cm->content, cm->len);
    store_keep_replay(h, NULL, 0, NULL);
    if (frc) {
        sqlite3_reset(st->sel);
        return -1;
    }
    sqlite3_reset(st->upd);
    sqlite3_bind_text(st->upd, 1, cm->content, (int)cm->len, SQLITE_STATIC);
    sqlite3_bind_int64(st->upd, 2, (int64_t)cm->hash);
    sqlite3_bind_int(st->upd, 3, ntok);
    sqlite3_bind_int64(st->upd, 4, row);
    res = sqlite3_step(st->upd) == SQLITE_DONE ? 1 : -1;
    sqlite3_reset(st->sel);
    /* the trigger dropped its event dates with the shorter text, and its
     * term tier rows */
    if (res == 1 && (store_events_refresh(h, row) ||
                     store_keep_rewrite(h, sess, row, cm->content, cm->len, ntok, rt)))
        res = -1;
    /* the server may hold the shorter text: the next push sends this one */
    if (res == 1 && store_sync_rewritten(h, row))
        res = -1;
    return res;
}

/* A session's new totals, kept for its group's commit. */
struct stat_delta { int64_t sess, n, ntok, nuser, bytes; };

static int put_session_stats(struct cairn *h, sqlite3_stmt **st, int64_t sess, int64_t n,
                             int64_t ntok, int64_t nuser, int64_t bytes);

/* Adds a batch of new messages to the session's totals (schema v6). Not a
 * trigger on insert: that would make FTS5 flush at every message (v3).
 * In a group (cairn_add_group) they wait for its commit: the statement
 * opens a savepoint (the totals' trigger), and FTS5 writes out its
 * pending terms at every savepoint, which is what a group saves. */
static int add_session_stats(struct cairn *h, int64_t sess, int64_t n, int64_t ntok,
                             int64_t nuser, int64_t bytes)
{
    if (!h->group_tx) {
        sqlite3_stmt *st = NULL;
        int rc = put_session_stats(h, &st, sess, n, ntok, nuser, bytes);
        sqlite3_finalize(st);
        return rc;
    }
    if (h->gd_n == h->gd_cap) {
        size_t cap = h->gd_cap ? 2 * h->gd_cap : 64;
        struct stat_delta *d = realloc(h->gd, cap * sizeof *d);
        if (!d)
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        h->gd = d;
        h->gd_cap = cap;
    }
    h->gd[h->gd_n++] = (struct stat_delta){ sess, n, ntok, nuser, bytes };
    return CAIRN_OK;
}

/* *st: the upsert, prepared at the first call (the caller finalizes it),
 * so that a group's sessions share it: with its triggers (store_totals,
 * session_sizes) compiled in, preparing it cost ~540,000 instructions, a
 * session's tenth when it was prepared for each. */
static int put_session_stats(struct cairn *h, sqlite3_stmt **st, int64_t sess, int64_t n,
                             int64_t ntok, int64_t nuser, int64_t bytes)
{
    int rc;
    if (!*st && (rc = store_prepare(h, "INSERT INTO session_stats(session, n, ntok, nuser, "
                                    "bytes) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT(session) DO "
                                    "UPDATE SET n = n + ?2, ntok = ntok + ?3, nuser = nuser + ?4, "
                                    "bytes = bytes + ?5", st)))
        return rc;
    sqlite3_reset(*st);
    sqlite3_bind_int64(*st, 1, sess);
    sqlite3_bind_int64(*st, 2, n);
    sqlite3_bind_int64(*st, 3, ntok);
    sqlite3_bind_int64(*st, 4, nuser);
    sqlite3_bind_int64(*st, 5, bytes);
    return sqlite3_step(*st) == SQLITE_DONE ? CAIRN_OK
                                             : cairn__sqlerr(h, SQLITE_ERROR, "session totals");
}

static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
    if (s && *s)
        sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, i);
}

static void bind_time(sqlite3_stmt *st, int i, int64_t t)
{
    if (t == CAIRN_NO_TIME)
        sqlite3_bind_null(st, i);
    else
        sqlite3_bind_int64(st, i, t);
}

/* Which messages of s the store lacks, for embedding before the lock:
 * want[i] = 0 for those already there (by id, or by hash and repeat
 * count). A guess made without the lock: a message that another writer
 * adds meanwhile is embedded for nothing, one added without a vector gets
 * it from the backfill. */
static int lacking(struct cairn *h, const char *sid, const struct cairn_session *s,
                   const struct clean_msg *cm, unsigned char *want)
{
    sqlite3_stmt *find = NULL, *by_id = NULL, *by_hash = NULL;
    int rc;
    memset(want, 1, s->n_messages);
    if ((rc = store_prepare(h, "SELECT id FROM sessions WHERE ext_id=?", &find)))
        return rc;
    sqlite3_bind_text(find, 1, sid, -1, SQLITE_STATIC);
    if (sqlite3_step(find) != SQLITE_ROW)
        goto out;                         /* a new session: every message is new */
    int64_t row = sqlite3_column_int64(find, 0);
    if ((rc = store_prepare(h, "SELECT 1 FROM messages WHERE session=? AND ext_id=?", &by_id)) ||
        (rc = store_prepare(h, "SELECT count(*) FROM messages WHERE session=? AND hash=? "
                            "AND ext_id IS NULL", &by_hash)))
        goto out;
    for (size_t i = 0; i < s->n_messages; i++) {
        const struct cairn_message *m = &s->messages[i];
        if (m->id && *m->id) {
            sqlite3_reset(by_id);
            sqlite3_bind_int64(by_id, 1, row);
            sqlite3_bind_text(by_id, 2, m->id, -1, SQLITE_STATIC);
            want[i] = sqlite3_step(by_id) != SQLITE_ROW;
        } else {
            sqlite3_reset(by_hash);
            sqlite3_bind_int64(by_hash, 1, row);
            sqlite3_bind_int64(by_hash, 2, (int64_t)cm[i].hash);
            int64_t have = sqlite3_step(by_hash) == SQLITE_ROW ? sqlite3_column_int64(by_hash, 0)
                                                              : 0;
            want[i] = have < cm[i].occurrence;
        }
    }
out:
    sqlite3_finalize(find);
    sqlite3_finalize(by_id);
    sqlite3_finalize(by_hash);
    return rc;
}

/* Embeds the messages the store lacks (no-op without a model). */
static int embed_new(struct cairn *h, const char *sid, const struct cairn_session *s,
                     const struct clean_msg *cm, struct vec_batch *vb)
{
    const char **texts = NULL;
    size_t *lens = NULL;
    unsigned char *want = NULL;
    int rc = CAIRN_OK;
    if (!s->n_messages || !vec_ingest_enabled(h) || !vec_model_current(h, NULL, 0))
        return CAIRN_OK;
    texts = malloc(s->n_messages * sizeof *texts);
    lens = malloc(s->n_messages * sizeof *lens);
    want = malloc(s->n_messages);
    if (!texts || !lens || !want) {
        rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < s->n_messages; i++) {
        texts[i] = cm[i].content;
        lens[i] = cm[i].len;
    }
    if ((rc = lacking(h, sid, s, cm, want)))
        goto out;
    rc = vec_batch_embed(h, texts, lens, want, s->n_messages, 1, vb);
out:
    free(texts);
    free(lens);
    free(want);
    return rc;
}

/* ---- prepare: everything that needs no lock ------------------------- */

/* What the preparing thread (cairn_prepare_json) did for message i: its
 * dates (pre_ev[2 * ev_off ..], ev_n pairs) and whether pre_toks[i] is its
 * record. */
struct pre_msg {
    size_t        ev_off;
    unsigned char ev_n, recd;
};

/*
 * A session made ready to store: every string cleaned, every message
 * hashed and counted, the messages the store lacks embedded. Made by
 * prepare_session without the write lock and without writing; read by
 * write_session inside it.
 */
struct prepared {
    const struct cairn_session *s;
    struct clean_msg *cm;                  /* [s->n_messages] */
    char *title, *project, *source, *meta; /* cleaned; NULL when absent */
    const char *sid;                       /* s->id, or autoid made from the content */
    char autoid[32];
    int64_t started, ended;                /* the session's, else its messages' range */
    struct store_clean cl;
    struct vec_batch vb;
    /* set by cairn_prepare_json: what its thread did a message, which the
     * writer takes instead of doing it (NULL: the writer does it all) */
    const struct pre_msg *pre;             /* [s->n_messages] */
    const struct text_toks *pre_toks;      /* [s->n_messages] */
    const int64_t *pre_ev;
};

static void prepared_free(struct prepared *p)
{
    vec_batch_free(&p->vb);
    if (p->cm) {
        for (size_t i = 0; i < p->s->n_messages; i++) {
            free(p->cm[i].content);
            free(p->cm[i].speaker);
        }
        free(p->cm);
    }
    free(p->title);
    free(p->project);
    free(p->source);
    free(p->meta);
}

/* Refuses what cairn_add_session cannot store, before anything else. */
static int validate_session(struct cairn *h, const struct cairn_session *s)
{
    for (size_t i = 0; i < s->n_messages; i++) {
        const struct cairn_message *m = &s->messages[i];
        if (!m->role || (strcmp(m->role, "user") && strcmp(m->role, "assistant")))
            return cairn__err(h, CAIRN_INVALID, "message %zu: role must be \"user\" or "
                              "\"assistant\", not \"%s\"", i + 1, m->role ? m->role : "(none)");
        if (!m->content)
            return cairn__err(h, CAIRN_INVALID, "message %zu: no content", i + 1);
    }
    return check_repeated_ids(h, s);
}

/* Cleans, hashes and counts every message; widens the session's time
 * range to its messages' where the caller gave none. */
static int prepare_messages(struct cairn *h, struct prepared *p)
{
    const struct cairn_session *s = p->s;
    p->cm = calloc(s->n_messages ? s->n_messages : 1, sizeof *p->cm);
    if (!p->cm)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (size_t i = 0; i < s->n_messages; i++) {
        const struct cairn_message *m = &s->messages[i];
        struct clean_msg *c = &p->cm[i];
        size_t len = m->content_len ? m->content_len : strlen(m->content);
        c->content = store_clean_text(m->content, len, &p->cl, &c->len);
        if (!c->content || clean_field(m->speaker, &p->cl, &c->speaker))
            return cairn__err(h, CAIRN_NOMEM, "out of memory");
        c->hash = store_message_hash(m->role, c->speaker, m->at, c->content, c->len);
        if (m->at != CAIRN_NO_TIME) {
            if (s->started_at == CAIRN_NO_TIME && (p->started == CAIRN_NO_TIME ||
                                                   m->at < p->started))
                p->started = m->at;
            if (s->ended_at == CAIRN_NO_TIME && (p->ended == CAIRN_NO_TIME || m->at > p->ended))
                p->ended = m->at;
        }
    }
    count_occurrences(p->cm, s->messages, s->n_messages);
    return CAIRN_OK;
}

/* Validates, cleans, masks, hashes and counts: the CPU work of an add
 * that reads nothing of the store (h only for its message and settings:
 * cairn_prepare_json runs it on a handle of its own in another thread). p
 * is set up (and must be freed with prepared_free) whatever the result. */
static int prepare_cpu(struct cairn *h, const struct cairn_session *s, struct prepared *p)
{
    int rc;
    memset(p, 0, sizeof *p);
    p->s = s;
    p->started = s->started_at;
    p->ended = s->ended_at;
    p->cl = (struct store_clean){ redact_enabled(cairn__setting(h, CAIRN__SET_REDACT)), 0, 0,
                                  NULL };
    p->vb = (struct vec_batch)VEC_BATCH_INIT;
    if ((rc = validate_session(h, s)) || (rc = prepare_messages(h, p)))
        return rc;
    /* Metadata is stored text too: masked like the messages (a git remote
     * with a token in meta, a key pasted into a title). */
    if (clean_field(s->title, &p->cl, &p->title) || clean_field(s->project, &p->cl, &p->project)
        || clean_field(s->source, &p->cl, &p->source)
        || (s->meta && !(p->meta = store_clean_meta(s->meta, &p->cl))))
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (s->id && *s->id) {
        p->sid = s->id;
    } else {
        derive_session_id(s, p->cm, p->autoid, sizeof p->autoid);
        p->sid = p->autoid;
    }
    return CAIRN_OK;
}

/* prepare_cpu, then the messages the store lacks embedded: all the CPU
 * work of an add, with no lock taken and nothing written. */
static int prepare_session(struct cairn *h, const struct cairn_session *s, struct prepared *p)
{
    int rc = prepare_cpu(h, s, p);
    return rc ? rc : embed_new(h, p->sid, s, p->cm, &p->vb);
}

/* ---- write: one transaction ------------------------------------------ */

/* The write path's statements, kept in a group (h->gst) from one session
 * to the next and finalized with it (group_clear): prepared a session,
 * they cost ~355,000 instructions a session (callgrind, the writing
 * thread of 100 bench sessions: 316.9 M -> 281.4 M, bench/README.md). */
enum { GST_INS_M, GST_INS_F, GST_INS_E, GST_INS_V, GST_FIND, GST_INS_S, GST_RUN_UPD,
       GST_RUN_INS, GST_TURN_NEW, GST_TURN_ADD, GST_UNITS, GST_TURN_GET, GST_N };
_Static_assert(GST_N <= sizeof ((struct cairn *)0)->gst / sizeof (sqlite3_stmt *),
               "room for the group's statements");

/* Statement k: the group's (taken from its slot), or sql prepared. */
static int get_st(struct cairn *h, int k, const char *sql, sqlite3_stmt **st)
{
    if (h->group_tx && h->gst[k]) {
        *st = h->gst[k];
        h->gst[k] = NULL;
        sqlite3_reset(*st);
        sqlite3_clear_bindings(*st);
        return CAIRN_OK;
    }
    return store_prepare(h, sql, st);
}

/* Statement k back into the group's slot, or finalized outside a group. */
static void put_st(struct cairn *h, int k, sqlite3_stmt *st)
{
    if (!st)
        return;
    if (h->group_tx && !h->gst[k]) {
        sqlite3_reset(st);
        h->gst[k] = st;
    } else {
        sqlite3_finalize(st);
    }
}

/* A statement a callee prepares when it finds NULL: the group's, if kept. */
static sqlite3_stmt *take_st(struct cairn *h, int k)
{
    sqlite3_stmt *st = h->group_tx ? h->gst[k] : NULL;
    if (st)
        h->gst[k] = NULL;
    return st;
}

/* What write_session did, for the caller's stats and session_stats. */
struct written {
    int     is_new;
    size_t  added, skipped, extended;
    int64_t ntok, nuser, bytes;            /* of the added messages */
};

/* The statements of the message inserts, prepared once per session. */
struct msg_st {
    sqlite3_stmt *cnt, *ins_m, *ins_f, *ins_e, *ins_v;
    struct extend_st ext;
    int64_t       run_a, run_b;    /* the ids inserted in a row, not yet in msg_runs */
    struct buf    run_lens;        /* their token counts, "12,5,300" (schema 19) */
    struct buf    turns;           /* the inserted turns, packed (schema 21) */
    struct turns_cur tprev;        /* the turn before the next one inserted */
};

/* Ids a..b of session sess, just inserted, into msg_runs (schema 17) with
 * their token counts lens (schema 19): the run that ends at a - 1, if of
 * the same session, grows (its counts too, unless a delete left it
 * without); else a run starts. Here, once a run of inserts, rather than a
 * trigger a message: a trigger on the insert made `cairn add` ~45% slower
 * (a statement journal per row, and FTS5 flushing its pending terms at
 * each). */
static int runs_add(struct cairn *h, int64_t sess, int64_t a, int64_t b, const struct buf *lens)
{
    static const char *const sql[2] = {
        "UPDATE msg_runs SET last = ?2, lens = lens || ',' || ?4 WHERE first = (SELECT "
        "max(first) FROM msg_runs WHERE first < ?1) AND last = ?1 - 1 AND session = ?3",
        "INSERT INTO msg_runs(first, last, session, lens) VALUES (?1, ?2, ?3, ?4)",
    };
    if (lens->err)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    for (int k = 0; k < 2; k++) {
        sqlite3_stmt *st;
        int rc = get_st(h, GST_RUN_UPD + k, sql[k], &st);
        if (rc)
            return rc;
        sqlite3_bind_int64(st, 1, a);
        sqlite3_bind_int64(st, 2, b);
        sqlite3_bind_int64(st, 3, sess);
        sqlite3_bind_text(st, 4, lens->p, (int)lens->n, SQLITE_STATIC);
        int src = sqlite3_step(st);
        put_st(h, GST_RUN_UPD + k, st);
        if (src != SQLITE_DONE)
            return cairn__sqlerr(h, src, "message runs");
        if (sqlite3_changes(h->db) > 0)
            return CAIRN_OK;          /* grown, or started */
    }
    return cairn__err(h, CAIRN_ERROR, "message runs: nothing written");
}

static void msg_st_free(struct cairn *h, struct msg_st *m)
{
    sqlite3_finalize(m->cnt);
    put_st(h, GST_INS_M, m->ins_m);
    put_st(h, GST_INS_F, m->ins_f);
    put_st(h, GST_INS_E, m->ins_e);
    put_st(h, GST_INS_V, m->ins_v);
    sqlite3_finalize(m->ext.sel);
    sqlite3_finalize(m->ext.upd);
    buf_release(&m->run_lens);
    buf_release(&m->turns);
}

/* The session's last turn (id, position, time), which the packed turns
 * of its next inserts follow (schema 21). */
static int last_turn(struct cairn *h, int64_t row, struct turns_cur *prev)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, "SELECT id, position, created_at FROM messages INDEXED BY "
                           "messages_meta WHERE session = ? ORDER BY position DESC LIMIT 1", &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, row);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        prev->id = sqlite3_column_int64(st, 0);
        prev->pos = sqlite3_column_int64(st, 1);
        prev->at = sqlite3_column_int64(st, 2);       /* 0 when NULL */
    }
    sqlite3_finalize(st);
    return src == SQLITE_ROW || src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "last turn");
}

/* The session's units (session_units, schema 30) after its packed turns
 * were written (their trigger dropped the row): a new session's from the
 * turns just packed, else from its whole row read back (a live session's
 * few turns added to it). */
static int units_add(struct cairn *h, int64_t row, int is_new, size_t added,
                     const struct buf *turns)
{
    sqlite3_stmt *ins = NULL, *get = NULL;
    struct buf b = BUF_INIT;
    int rc;
    if ((rc = get_st(h, GST_UNITS, STORE_UNITS_INS_SQL, &ins)))
        return rc;
    if (is_new) {
        rc = store_units_write(h, ins, row, turns->n ? turns->p : "", turns->n,
                               (int64_t)added, &b);
        goto out;
    }
    if ((rc = get_st(h, GST_TURN_GET, "SELECT n, turns FROM session_turns WHERE session = ?1",
                     &get)))
        goto out;
    sqlite3_bind_int64(get, 1, row);
    int src = sqlite3_step(get);
    if (src == SQLITE_ROW) {
        const char *t = sqlite3_column_blob(get, 1);
        int bytes = sqlite3_column_bytes(get, 1);
        if (t && bytes >= 1 && (unsigned char)t[0] == STORE_TURNS_MARK)
            rc = store_units_write(h, ins, row, t + 1, (size_t)bytes - 1,
                                   sqlite3_column_int64(get, 0), &b);
    } else if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "packed turns");
    }
    sqlite3_reset(get);
out:
    put_st(h, GST_TURN_GET, get);
    put_st(h, GST_UNITS, ins);
    buf_release(&b);
    return rc;
}

/* The session's packed turns (session_turns, schema 21) after its inserts
 * of added turns: appended to its row, the row written for a new session,
 * or the whole session packed again (its row was dropped: an extended
 * reply, a delete), in the same transaction, so the row is always exact. */
static int turns_add(struct cairn *h, int64_t row, int is_new, size_t added, int repack,
                     const struct buf *turns)
{
    sqlite3_stmt *st;
    int rc;
    if (turns->err)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (repack)
        return store_turns_fill(h, row);
    /* binary (schema 27): a new row begins with the mark; || of two
     * blobs is their bytes, typed text, so cast back */
    if ((rc = get_st(h, is_new ? GST_TURN_NEW : GST_TURN_ADD,
                     is_new ? "INSERT OR REPLACE INTO session_turns(session, n, turns) "
                            "VALUES (?1, ?2, CAST(?4 || ?3 AS BLOB))"
                            : "UPDATE session_turns SET n = n + ?2, "
                            "turns = CAST(turns || ?3 AS BLOB) WHERE session = ?1", &st)))
        return rc;
    static const unsigned char mark = STORE_TURNS_MARK;
    sqlite3_bind_int64(st, 1, row);
    sqlite3_bind_int64(st, 2, (int64_t)added);
    sqlite3_bind_blob(st, 3, turns->n ? turns->p : "", (int)turns->n, SQLITE_STATIC);
    if (is_new)
        sqlite3_bind_blob(st, 4, &mark, 1, SQLITE_STATIC);
    int src = sqlite3_step(st);
    put_st(h, is_new ? GST_TURN_NEW : GST_TURN_ADD, st);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "packed turns");
    if (sqlite3_changes(h->db) == 0)
        return store_turns_fill(h, row);       /* its units with it */
    return units_add(h, row, is_new, added, turns);
}

/* The session's row: found by its external id, or inserted. */
static int session_row(struct cairn *h, const struct prepared *p, int64_t *row, int *is_new)
{
    sqlite3_stmt *find = NULL, *ins = NULL;
    int rc, src;
    if ((rc = get_st(h, GST_FIND, "SELECT id, started_at, ended_at FROM sessions WHERE ext_id=?",
                     &find)))
        return rc;
    sqlite3_bind_text(find, 1, p->sid, -1, SQLITE_STATIC);
    src = sqlite3_step(find);
    if (src == SQLITE_ROW) {
        *row = sqlite3_column_int64(find, 0);
        goto out;
    }
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "find session");
        goto out;
    }
    *is_new = 1;
    if ((rc = get_st(h, GST_INS_S, "INSERT INTO sessions(ext_id, source, project, title, "
                            "started_at, ended_at, meta, stored_at) VALUES (?,?,?,?,?,?,?,?)",
                            &ins)))
        goto out;
    sqlite3_bind_text(ins, 1, p->sid, -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 2, p->source ? p->source : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 3, p->project ? p->project : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(ins, 4, p->title ? p->title : "", -1, SQLITE_STATIC);
    bind_time(ins, 5, p->started);
    bind_time(ins, 6, p->ended);
    bind_text_or_null(ins, 7, p->meta);
    sqlite3_bind_int64(ins, 8, (int64_t)time(NULL));
    if (sqlite3_step(ins) != SQLITE_DONE)
        rc = cairn__sqlerr(h, SQLITE_ERROR, "insert session");
    else
        *row = sqlite3_last_insert_rowid(h->db);
out:
    put_st(h, GST_FIND, find);
    put_st(h, GST_INS_S, ins);
    return rc;
}

/* The position after the session's last message (0 for a new session). */
static int next_position(struct cairn *h, int64_t row, int64_t *pos)
{
    sqlite3_stmt *mx;
    int rc = store_prepare(h, "SELECT coalesce(max(position)+1, 0) FROM messages "
                           "WHERE session=?", &mx);
    if (rc)
        return rc;
    sqlite3_bind_int64(mx, 1, row);
    if (sqlite3_step(mx) == SQLITE_ROW)
        *pos = sqlite3_column_int64(mx, 0);
    sqlite3_finalize(mx);
    return CAIRN_OK;
}

/* The index tokens of a message about to be inserted or extended, its
 * length (BM25's): recorded once (h->rec_toks, *rec 1), then handed to the
 * index's tokenizer (text_fts_tap) and the keepers (store/keep.c) instead
 * of a pass each; or, past TEXT_TOKS_MAX tokens or out of memory, counted
 * (*rec 0) and tokenized again by the index as before. After the dedup
 * check, so a message the session holds is not tokenized at all. */
static int message_tokens(struct cairn *h, const struct clean_msg *c, int *rec)
{
    *rec = 0;
    if (!h->rec)
        h->rec = text_tokenizer_new();
    if (h->rec && !text_record(h->rec, c->content, c->len, &h->rec_toks)) {
        *rec = 1;
        return h->rec_toks.words;
    }
    return store_index_tokens(c->content, c->len);
}

/* Message i of p, unless the session holds it already: inserted at *pos
 * with its FTS row and vectors, or an extension of the stored text, or
 * skipped; w counts which. */
static int store_message(struct cairn *h, const struct prepared *p, size_t i, int64_t row,
                         int64_t *pos, struct msg_st *ms, struct written *w)
{
    const struct cairn_message *m = &p->s->messages[i];
    const struct clean_msg *c = &p->cm[i];
    int has_id = m->id && *m->id, rc, src, rec, ntok;
    const struct text_toks *rt = NULL;
    if (!w->is_new && !has_id) {
        sqlite3_reset(ms->cnt);
        sqlite3_bind_int64(ms->cnt, 1, row);
        sqlite3_bind_int64(ms->cnt, 2, (int64_t)c->hash);
        int64_t have = sqlite3_step(ms->cnt) == SQLITE_ROW ? sqlite3_column_int64(ms->cnt, 0) : 0;
        if (have >= c->occurrence) {
            w->skipped++;
            return CAIRN_OK;
        }
    }
    if (p->pre && p->pre[i].recd) {
        rt = &p->pre_toks[i];            /* recorded by the preparing thread */
        ntok = rt->words;
    } else {
        ntok = message_tokens(h, c, &rec);
        rt = rec ? &h->rec_toks : NULL;
    }
    sqlite3_reset(ms->ins_m);
    sqlite3_bind_int64(ms->ins_m, 1, row);
    sqlite3_bind_int64(ms->ins_m, 2, *pos);
    bind_text_or_null(ms->ins_m, 3, has_id ? m->id : NULL);
    sqlite3_bind_text(ms->ins_m, 4, m->role, -1, SQLITE_STATIC);
    bind_text_or_null(ms->ins_m, 5, c->speaker);
    sqlite3_bind_text(ms->ins_m, 6, c->content, (int)c->len, SQLITE_STATIC);
    bind_time(ms->ins_m, 7, m->at);
    sqlite3_bind_int64(ms->ins_m, 8, (int64_t)c->hash);
    sqlite3_bind_int(ms->ins_m, 9, ntok);
    src = sqlite3_step(ms->ins_m);
    if (src != SQLITE_DONE)
        return cairn__sqlerr(h, src, "insert message");
    if (sqlite3_changes(h->db) > 0) {
        int64_t mrow = sqlite3_last_insert_rowid(h->db);
        int64_t at = m->at != CAIRN_NO_TIME ? m->at : p->started;
        if (ms->run_b && mrow == ms->run_b + 1) {
            ms->run_b = mrow;
            buf_addc(&ms->run_lens, ',');
        } else {
            if (ms->run_b && (rc = runs_add(h, row, ms->run_a, ms->run_b, &ms->run_lens)))
                return rc;
            ms->run_a = ms->run_b = mrow;
            buf_reset(&ms->run_lens);
        }
        buf_printf(&ms->run_lens, "%d", ntok);   /* runs_add reports a failure */
        /* as stored: an empty speaker is NULL (bind_text_or_null) */
        const char *spk = c->speaker && *c->speaker ? c->speaker : NULL;
        store_turn_write(&ms->turns, &ms->tprev, mrow, *pos, !strcmp(m->role, "user"), m->at,
                         ntok, spk, spk ? strlen(spk) : 0);
        const struct pre_msg *pm = p->pre ? &p->pre[i] : NULL;
        if (h->group_tx && !h->fts_bulk && (rc = fts_bulk_begin(h)))
            return rc;
        if ((rc = store_keep_insert(h, &ms->ins_f, row, mrow, c->content, c->len, ntok, rt)) ||
            (rc = pm ? store_events_put(h, &ms->ins_e, mrow, row, p->pre_ev + 2 * pm->ev_off,
                                        pm->ev_n)
                     : store_events_add(h, &ms->ins_e, mrow, row, at, c->content, c->len)) ||
            (rc = vec_batch_store(h, &p->vb, i, mrow, row, &ms->ins_v)))
            return rc;
        w->ntok += ntok;
        w->nuser += !strcmp(m->role, "user");
        w->bytes += (int64_t)c->len;
        w->added++;
        (*pos)++;
    } else if (has_id) {
        /* The id is there. A transcript read while a reply was still
         * being written gives its first blocks; when the whole reply
         * comes, it starts with what was stored: keep the longer. */
        int r2 = extend_message(h, row, m->id, c, ntok, rt, &ms->ext);
        if (r2 < 0)
            return cairn__sqlerr(h, SQLITE_ERROR, "extend message");
        if (r2 > 0)
            w->extended++;
        else
            w->skipped++;
    } else {
        w->skipped++;
    }
    return CAIRN_OK;
}

/* Every message of p the session lacks, and their totals. */
static int store_messages(struct cairn *h, const struct prepared *p, int64_t row,
                          struct written *w)
{
    struct msg_st ms = { NULL, NULL, NULL, NULL, NULL, { NULL, NULL }, 0, 0, BUF_INIT, BUF_INIT,
                         { NULL, NULL, 0, 0, 0 } };
    int64_t pos = 0;
    int rc;
    if (!w->is_new &&
        ((rc = next_position(h, row, &pos)) || (rc = last_turn(h, row, &ms.tprev)) ||
         (rc = store_prepare(h, "SELECT count(*) FROM messages WHERE session=? AND hash=? "
                             "AND ext_id IS NULL", &ms.cnt))))
        goto out;
    ms.ins_f = take_st(h, GST_INS_F);
    ms.ins_e = take_st(h, GST_INS_E);
    ms.ins_v = take_st(h, GST_INS_V);
    if ((rc = get_st(h, GST_INS_M, "INSERT OR IGNORE INTO messages(session, position, ext_id, "
                            "role, speaker, content, created_at, hash, ntok) "
                            "VALUES (?,?,?,?,?,?,?,?,?)", &ms.ins_m)))
        goto out;
    for (size_t i = 0; i < p->s->n_messages && !rc; i++)
        rc = store_message(h, p, i, row, &pos, &ms, w);
    if (!rc && ms.run_b)
        rc = runs_add(h, row, ms.run_a, ms.run_b, &ms.run_lens);
    if (!rc && (w->added || w->extended))
        rc = turns_add(h, row, w->is_new, w->added, w->extended > 0, &ms.turns);
    if (!rc && w->added)
        rc = add_session_stats(h, row, (int64_t)w->added, w->ntok, w->nuser, w->bytes);
out:
    msg_st_free(h, &ms);
    return rc;
}

/* An existing session that got new messages: its time range widens, and
 * a title arrives if it had none. */
static int touch_session(struct cairn *h, const struct prepared *p, int64_t row)
{
    sqlite3_stmt *upd;
    int rc = store_prepare(h, "UPDATE sessions SET "
                           "started_at = CASE WHEN ?2 IS NOT NULL AND (started_at IS NULL "
                           "  OR ?2 < started_at) THEN ?2 ELSE started_at END, "
                           "ended_at = CASE WHEN ?3 IS NOT NULL AND (ended_at IS NULL "
                           "  OR ?3 > ended_at) THEN ?3 ELSE ended_at END, "
                           "title = CASE WHEN title = '' THEN ?4 ELSE title END "
                           "WHERE id = ?1", &upd);
    if (rc)
        return rc;
    sqlite3_bind_int64(upd, 1, row);
    bind_time(upd, 2, p->started);
    bind_time(upd, 3, p->ended);
    sqlite3_bind_text(upd, 4, p->title ? p->title : "", -1, SQLITE_STATIC);
    if (sqlite3_step(upd) != SQLITE_DONE)
        rc = cairn__sqlerr(h, SQLITE_ERROR, "update session");
    sqlite3_finalize(upd);
    return rc;
}

/* ---- groups: sessions sharing a transaction (cairn_add_group) ---- */

/* FTS5 merges its segments while a bulk add writes them: by default
 * (automerge 4) it merges 4 segments of a level into one of the next, so
 * a group's segment is read and written again about log4(groups) times
 * (~5 at a million messages, 780 groups). For a group add the store's
 * index merges 16 at a time (FTS5_BULK_AUTOMERGE; crisismerge, 16, is the
 * same bound), about half the levels: the writer's instructions for 20,000
 * messages 3,376 -> 3,244 M (bench/README.md, add35). The setting is a row
 * of messages_fts_config, written in the group's transaction with its first
 * message and taken out again when the group add ends (fts_bulk_end), so
 * the stored rows are the same; the answers are, whatever the segments.
 * An add killed in between leaves the row: the index then merges 16 at a
 * time until the next group add ends, which is slower to read at most. */
#define FTS5_BULK_AUTOMERGE 16

static int fts_automerge(struct cairn *h, int n)
{
    char sql[96];
    snprintf(sql, sizeof sql, "INSERT INTO messages_fts(messages_fts, rank) VALUES "
             "('automerge', %d)", n);
    int src = sqlite3_exec(h->db, sql, NULL, NULL, NULL);
    return src == SQLITE_OK ? CAIRN_OK : cairn__sqlerr(h, src, "full-text merge setting");
}

/* In the open group's transaction, before its first message's FTS row. */
static int fts_bulk_begin(struct cairn *h)
{
    h->fts_bulk = 1;
    return fts_automerge(h, FTS5_BULK_AUTOMERGE);
}

/* The default back, in a transaction of its own after the last group:
 * FTS5's own command first (it tells the other connections, by the
 * index's cookie, to read the settings again), then the row it wrote
 * taken out, as a store that never had it. */
static int fts_bulk_end(struct cairn *h)
{
    if (!h->fts_bulk)
        return CAIRN_OK;
    int rc = store_begin(h), src;
    if (rc)
        return rc;
    if ((rc = fts_automerge(h, 4)))
        goto out;
    src = sqlite3_exec(h->db, "DELETE FROM messages_fts_config WHERE k = 'automerge'", NULL,
                       NULL, NULL);
    if (src != SQLITE_OK)
        rc = cairn__sqlerr(h, src, "full-text merge setting");
out:
    if (rc) {
        store_rollback(h);
        return rc;
    }
    if (!(rc = store_commit(h)))
        h->fts_bulk = 0;
    return rc;
}

static void group_clear(struct cairn *h)
{
    for (int k = 0; k < GST_N; k++) {
        sqlite3_finalize(h->gst[k]);
        h->gst[k] = NULL;
    }
    h->group_tx = 0;
    h->group_n = 0;
    h->gd_n = 0;
}

/* Writes the group's pending session totals (before its commit, and
 * before anything whose trigger reads or moves them). */
static int group_stats_apply(struct cairn *h)
{
    sqlite3_stmt *st = NULL;
    int rc = CAIRN_OK;
    for (size_t i = 0; i < h->gd_n && !rc; i++)
        rc = put_session_stats(h, &st, h->gd[i].sess, h->gd[i].n, h->gd[i].ntok,
                               h->gd[i].nuser, h->gd[i].bytes);
    sqlite3_finalize(st);
    h->gd_n = 0;
    return rc;
}

int store_group_commit(struct cairn *h)
{
    if (!h->group_tx)
        return CAIRN_OK;
    h->group_tx = 0;
    int rc = group_stats_apply(h);
    if (rc)
        store_rollback(h);
    else
        rc = store_commit(h);        /* rolls back if it fails */
    group_clear(h);
    return rc;
}

int cairn_add_group(struct cairn *h, int on)
{
    if (!h)
        return CAIRN_ERROR;
    int rc = on ? CAIRN_OK : store_group_commit(h);
    h->add_group = on != 0;
    /* the group's sessions are stored: a failure to take the setting out
     * (the lock held past the timeout) is not theirs, and leaves what a
     * killed add leaves; cairn_close tries again */
    if (!on && !rc)
        (void)fts_bulk_end(h);
    return rc;
}

int cairn_add_commit(struct cairn *h)
{
    return h ? store_group_commit(h) : CAIRN_ERROR;
}

size_t cairn_add_pending(const struct cairn *h)
{
    return h && h->group_tx ? h->group_n : 0;
}

void store_group_free(struct cairn *h)
{
    (void)fts_bulk_end(h);     /* cairn_close: an add that did not end its group mode */
    free(h->gd);
    h->gd = NULL;
    h->gd_cap = 0;
    group_clear(h);
}

/* Takes the write lock, looks the session up, inserts what is new and
 * commits: one session, one transaction, or in a group the group's. A
 * failure rolls the whole transaction back: in a group, the sessions
 * written since its last commit go with it (cairn_add_pending says 0). */
static int write_session(struct cairn *h, const struct prepared *p, struct written *w)
{
    int64_t row = 0;
    int rc = h->group_tx ? CAIRN_OK : store_begin(h);
    if (rc)
        return rc;
    h->group_tx = h->add_group;
    if ((rc = session_row(h, p, &row, &w->is_new)) || (rc = store_messages(h, p, row, w)) ||
        (!w->is_new && w->added && (rc = touch_session(h, p, row)))) {
        store_rollback(h);
        group_clear(h);
        return rc;
    }
    if (h->group_tx) {
        h->group_n++;
        return CAIRN_OK;
    }
    return store_commit(h);
}

/* What a session's write adds to the caller's stats (NULL: none). */
static void add_stats(struct cairn_add_stats *stats, const struct prepared *p,
                      const struct written *w)
{
    if (!stats)
        return;
    stats->sessions_added += (size_t)w->is_new;
    stats->sessions_updated += (size_t)(!w->is_new && (w->added > 0 || w->extended > 0));
    stats->messages_added += w->added;
    stats->messages_extended += w->extended;
    stats->messages_skipped += w->skipped;
    stats->secrets_masked += w->is_new || w->added ? p->cl.masked : 0;
}

int cairn_add_session(struct cairn *h, const struct cairn_session *s,
                      struct cairn_add_stats *stats)
{
    struct prepared p;
    struct written w = { 0 };
    int rc;
    if (!h)
        return CAIRN_ERROR;
    if ((rc = prepare_session(h, s, &p)) || (rc = write_session(h, &p, &w)))
        goto out;
    add_stats(stats, &p, &w);
out:
    prepared_free(&p);
    return rc;
}

/* ---- JSON ---------------------------------------------------------- */

/* Reads an optional string field; numbers are accepted for ids and
 * formatted (as written when a double cannot hold them). Returns 0 if
 * absent or null, 1 if set, -1 on a wrong type. */
static int get_str(const cJSON *o, const char *name, const char **out, char *numbuf,
                   size_t nb)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    *out = NULL;
    if (!v || cJSON_IsNull(v))
        return 0;
    if (cJSON_IsString(v)) {
        *out = v->valuestring;
        return 1;
    }
    if (numbuf && cJSON_IsNumber(v)) {
        *out = json_number_text(v, numbuf, nb);   /* exact digits past 2^53 */
        return 1;
    }
    return -1;
}

/* Reads an optional time field: an ISO 8601 string or Unix seconds. */
static int get_time(struct cairn *h, const cJSON *o, const char *name, const char *where,
                    int64_t *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    *out = CAIRN_NO_TIME;
    if (!v || cJSON_IsNull(v))
        return CAIRN_OK;
    if (cJSON_IsNumber(v)) {
        *out = (int64_t)v->valuedouble;
        return CAIRN_OK;
    }
    if (cJSON_IsString(v) && !*v->valuestring)
        return CAIRN_OK;
    if (cJSON_IsString(v) && iso8601_parse(v->valuestring, out) == 0)
        return CAIRN_OK;
    return cairn__err(h, CAIRN_INVALID, "%s\"%s\": not an ISO 8601 date: %s", where, name,
                      cJSON_IsString(v) ? v->valuestring : "(not a string)");
}

/* A session read from its JSON: s, whose strings point into root (and
 * sidbuf, msgs, idbuf, meta, which it owns). */
struct parsed {
    cJSON *root;
    struct cairn_message *msgs;
    char (*idbuf)[32];
    char *meta;
    char sidbuf[32];
    struct cairn_session s;
};

static void parsed_free(struct parsed *ps)
{
    cJSON_Delete(ps->root);
    free(ps->msgs);
    free(ps->idbuf);
    if (ps->meta)
        cJSON_free(ps->meta);
}

/* Reads json[0..len) into ps (zeroed here; parsed_free it whatever the
 * result). h: for the message only. */
static int parse_session(struct cairn *h, const char *json, size_t len, struct parsed *ps)
{
    const char *end = NULL;
    int rc = CAIRN_OK;
    struct cairn_session *s = &ps->s;

    memset(ps, 0, sizeof *ps);
    ps->root = json_parse(json, len, &end);
    cJSON *root = ps->root;
    if (!root) {
        size_t off = end && end >= json && end <= json + len ? (size_t)(end - json) : 0, l, c;
        utf8_line_col(json, off, &l, &c);
        return cairn__err(h, CAIRN_INVALID, "malformed JSON at line %zu, column %zu", l, c);
    }
    if (!cJSON_IsObject(root))
        return cairn__err(h, CAIRN_INVALID, "a session must be a JSON object");
#define STR_FIELD(obj, name, dst, nb, where) \
    if (get_str(obj, name, dst, nb, sizeof ps->sidbuf) < 0) \
        return cairn__err(h, CAIRN_INVALID, "%s\"%s\" must be a string", where, name);
    STR_FIELD(root, "id", &s->id, ps->sidbuf, "");
    STR_FIELD(root, "source", &s->source, NULL, "");
    STR_FIELD(root, "project", &s->project, NULL, "");
    STR_FIELD(root, "title", &s->title, NULL, "");
#undef STR_FIELD
    if ((rc = get_time(h, root, "started_at", "", &s->started_at)) ||
        (rc = get_time(h, root, "ended_at", "", &s->ended_at)))
        return rc;
    const cJSON *mj = cJSON_GetObjectItemCaseSensitive(root, "meta");
    if (mj && !cJSON_IsNull(mj)) {
        if (!cJSON_IsObject(mj))
            return cairn__err(h, CAIRN_INVALID, "\"meta\" must be an object");
        ps->meta = cJSON_PrintUnformatted(mj);
        s->meta = ps->meta;
    }
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "messages");
    if (!arr || !cJSON_IsArray(arr))
        return cairn__err(h, CAIRN_INVALID, "a session needs a \"messages\" array");
    int n = cJSON_GetArraySize(arr);
    struct cairn_message *msgs = ps->msgs = calloc(n ? (size_t)n : 1, sizeof *msgs);
    char (*idbuf)[32] = ps->idbuf = calloc(n ? (size_t)n : 1, sizeof *idbuf);
    if (!msgs || !idbuf)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    int i = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, arr) {
        char where[48];
        snprintf(where, sizeof where, "message %d: ", i + 1);
        if (!cJSON_IsObject(m))
            return cairn__err(h, CAIRN_INVALID, "message %d must be an object", i + 1);
        if (get_str(m, "id", &msgs[i].id, idbuf[i], sizeof idbuf[i]) < 0 ||
            get_str(m, "role", &msgs[i].role, NULL, 0) < 0 ||
            get_str(m, "speaker", &msgs[i].speaker, NULL, 0) < 0)
            return cairn__err(h, CAIRN_INVALID, "%sid, role and speaker must be strings", where);
        const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "content");
        if (!c || !cJSON_IsString(c))
            return cairn__err(h, CAIRN_INVALID, "%s\"content\" must be a string", where);
        msgs[i].content = c->valuestring;
        if ((rc = get_time(h, m, "at", where, &msgs[i].at)))
            return rc;
        i++;
    }
    s->messages = msgs;
    s->n_messages = (size_t)i;
    return CAIRN_OK;
}

int cairn_add_json(struct cairn *h, const char *json, size_t len,
                   struct cairn_add_stats *stats)
{
    struct parsed ps;
    int rc = parse_session(h, json, len, &ps);
    if (!rc)
        rc = cairn_add_session(h, &ps.s, stats);
    parsed_free(&ps);
    return rc;
}

/* ---- a session prepared in another thread (cairn_prepare_json) ------- */

/* A record of a session's tokens costs ~5 times its text; past this many
 * bytes of records a session, the rest of its messages are tokenized by
 * the writer as before, so a prepared session stays within a bound. */
#define PREP_TOKS_BYTES ((size_t)64 << 20)

struct cairn_prepared {
    int            rc;              /* the preparation's result, errmsg its message */
    char           errmsg[512];
    int            p_set;           /* p was set up by prepare_cpu */
    struct parsed  ps;
    struct prepared p;
    struct pre_msg *mm;             /* [n_messages] */
    struct text_toks *toks;         /* [n_messages] */
    int64_t       *ev;
    size_t         ev_n, ev_cap;    /* pairs */
    size_t         bytes;           /* what it holds (cairn_prepared_bytes) */
};

/* A handle of its own, never opened: its message, its copy of the
 * settings prepare_cpu reads, its tokenizer; and a read-only handle on the
 * store (rd, when it is a WAL file) to ask whether a session is stored. */
struct cairn_preparer {
    struct cairn h;
    struct cairn *rd;
    sqlite3_stmt *find;
    void (*close_reader)(struct cairn *r);
};

/* The reader: only on a WAL store on disk (a reader there never blocks
 * the writer's commit), as the tier build's walks (store_tier_reader). */
static void preparer_reader(struct cairn *db, struct cairn_preparer *pp)
{
    sqlite3_stmt *st;
    int wal = 0;
    if (db->pg || !db->path || !db->path[0] || !strcmp(db->path, ":memory:") ||
        !db->open_reader || !db->close_reader || store_prepare(db, "PRAGMA journal_mode", &st))
        return;
    if (sqlite3_step(st) == SQLITE_ROW) {
        const char *m = (const char *)sqlite3_column_text(st, 0);
        wal = m && !strcmp(m, "wal");
    }
    sqlite3_finalize(st);
    if (!wal)
        return;
    pp->close_reader = db->close_reader;
    if (db->open_reader(db, &pp->rd) ||
        sqlite3_prepare_v2(pp->rd->db, "SELECT 1 FROM sessions WHERE ext_id = ?", -1, &pp->find,
                           NULL) != SQLITE_OK) {
        sqlite3_finalize(pp->find);
        pp->find = NULL;
        if (pp->rd)
            pp->close_reader(pp->rd);
        pp->rd = NULL;
    }
}

/* 1 if the store's last commit holds session sid: its messages are
 * likely there already (a re-add), so the writer tokenizes only those it
 * lacks, as on one thread, rather than this thread all of them. A
 * session written by the open group is not seen: prepared in full. */
static int preparer_stored(struct cairn_preparer *pp, const char *sid)
{
    if (!pp->find)
        return 0;
    sqlite3_bind_text(pp->find, 1, sid, -1, SQLITE_STATIC);
    int found = sqlite3_step(pp->find) == SQLITE_ROW;
    sqlite3_reset(pp->find);                  /* ends the read: the next sees new commits */
    return found;
}

int cairn_preparer_new(struct cairn *db, struct cairn_preparer **out)
{
    *out = NULL;
    if (!db)
        return CAIRN_ERROR;
    const char *v = cairn__setting(db, CAIRN__SET_ADD_THREAD);
    if (v && !strcmp(v, "0"))
        return CAIRN_OK;                  /* one thread: the caller adds as before */
    struct cairn_preparer *pp = calloc(1, sizeof *pp);
    const char *r = cairn__setting(db, CAIRN__SET_REDACT);
    if (!pp || (r && !(pp->h.set[CAIRN__SET_REDACT] = strdup(r)))) {
        free(pp);
        return cairn__err(db, CAIRN_NOMEM, "out of memory");
    }
    preparer_reader(db, pp);
    *out = pp;
    return CAIRN_OK;
}

void cairn_preparer_free(struct cairn_preparer *pp)
{
    if (!pp)
        return;
    sqlite3_finalize(pp->find);
    if (pp->rd)
        pp->close_reader(pp->rd);
    free(pp->h.set[CAIRN__SET_REDACT]);
    text_tokenizer_free(pp->h.rec);
    free(pp);
}

/* Every message's dates, and its tokens recorded while the records stay
 * under PREP_TOKS_BYTES; a message not recorded is tokenized by the
 * writer (message_tokens), as it was. */
static int prepare_tokens(struct cairn *h, struct cairn_prepared *pr)
{
    const struct cairn_session *s = &pr->ps.s;
    size_t n = s->n_messages;
    pr->mm = calloc(n ? n : 1, sizeof *pr->mm);
    pr->toks = calloc(n ? n : 1, sizeof *pr->toks);
    if (!pr->mm || !pr->toks)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (!h->rec)
        h->rec = text_tokenizer_new();
    for (size_t i = 0; i < n; i++) {
        const struct cairn_message *m = &s->messages[i];
        const struct clean_msg *c = &pr->p.cm[i];
        if (pr->ev_cap - pr->ev_n < STORE_EVENTS_MAX) {
            size_t cap = pr->ev_cap ? 2 * pr->ev_cap : 4 * STORE_EVENTS_MAX;
            int64_t *ev = realloc(pr->ev, cap * 2 * sizeof *ev);
            if (!ev)
                return cairn__err(h, CAIRN_NOMEM, "out of memory");
            pr->ev = ev;
            pr->ev_cap = cap;
        }
        int64_t at = m->at != CAIRN_NO_TIME ? m->at : pr->p.started;   /* as store_message */
        pr->mm[i].ev_off = pr->ev_n;
        pr->mm[i].ev_n = (unsigned char)store_events_scan(c->content, c->len, at,
                                                          pr->ev + 2 * pr->ev_n);
        pr->ev_n += pr->mm[i].ev_n;
        struct text_toks *t = &pr->toks[i];
        if (pr->bytes < PREP_TOKS_BYTES && h->rec && !text_record(h->rec, c->content, c->len, t)) {
            pr->mm[i].recd = 1;
            pr->bytes += t->cap * sizeof *t->v + t->capb;
        } else {
            text_toks_free(t);          /* unusable after a failed record */
        }
    }
    return CAIRN_OK;
}

struct cairn_prepared *cairn_prepare_json(struct cairn_preparer *pp, const char *json,
                                          size_t len)
{
    struct cairn_prepared *pr = calloc(1, sizeof *pr);
    if (!pp || !pr) {
        free(pr);
        return NULL;
    }
    struct cairn *h = &pp->h;
    int rc = parse_session(h, json, len, &pr->ps);
    if (!rc) {
        pr->p_set = 1;
        rc = prepare_cpu(h, &pr->ps.s, &pr->p);
    }
    /* a re-add: the writer tokenizes what the store lacks, as on one thread */
    if (!rc && !preparer_stored(pp, pr->p.sid))
        rc = prepare_tokens(h, pr);
    /* its size, told the queue (cairn_prepared_bytes): the records (so
     * far in bytes), the dates, and ~3 times the input for the JSON's
     * tree, the session and the cleaned texts (estimated, not counted) */
    pr->bytes += 3 * len + pr->ev_cap * 2 * sizeof *pr->ev;
    if (!rc && pr->mm) {
        pr->p.pre = pr->mm;
        pr->p.pre_toks = pr->toks;
        pr->p.pre_ev = pr->ev;
    }
    if ((pr->rc = rc))
        memcpy(pr->errmsg, h->errmsg, sizeof pr->errmsg);
    return pr;
}

int cairn_add_prepared(struct cairn *h, struct cairn_prepared *pr, struct cairn_add_stats *stats)
{
    struct written w = { 0 };
    int rc;
    if (!h)
        return CAIRN_ERROR;
    if (!pr)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    if (pr->rc)
        return cairn__err(h, pr->rc, "%s", pr->errmsg);
    struct prepared *p = &pr->p;
    /* the embedding reads the store (which messages it lacks): here, on
     * the writer's handle, not in the preparing thread */
    if ((rc = embed_new(h, p->sid, p->s, p->cm, &p->vb)) || (rc = write_session(h, p, &w)))
        return rc;
    add_stats(stats, p, &w);
    return CAIRN_OK;
}

size_t cairn_prepared_bytes(const struct cairn_prepared *pr)
{
    return pr ? sizeof *pr + pr->bytes : 0;
}

void cairn_prepared_free(struct cairn_prepared *pr)
{
    if (!pr)
        return;
    if (pr->p_set)
        prepared_free(&pr->p);
    for (size_t i = 0; pr->toks && i < pr->ps.s.n_messages; i++)
        text_toks_free(&pr->toks[i]);
    free(pr->toks);
    free(pr->mm);
    free(pr->ev);
    parsed_free(&pr->ps);
    free(pr);
}

/* ---- continuation --------------------------------------------------- */

int cairn_session_continues(struct cairn *h, const char *id, const struct cairn_session *s)
{
    sqlite3_stmt *st = NULL;
    struct store_clean cl = { redact_enabled(cairn__setting(h, CAIRN__SET_REDACT)), 0, 0, NULL };
    int rc, res = 1;
    size_t i = 0;
    if (!h || !id)
        return CAIRN_ERROR;
    if ((rc = store_prepare(h, "SELECT m.role, m.content FROM messages m JOIN sessions s "
                            "ON m.session = s.id WHERE s.ext_id = ? ORDER BY m.position", &st)))
        return -rc;
    sqlite3_bind_text(st, 1, id, -1, SQLITE_STATIC);
    while (res == 1 && i < s->n_messages && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const struct cairn_message *m = &s->messages[i++];
        const char *role = (const char *)sqlite3_column_text(st, 0);
        const char *text = (const char *)sqlite3_column_blob(st, 1);
        size_t tn = (size_t)sqlite3_column_bytes(st, 1), cn;
        if (!m->content || !m->role) {
            res = 0;                 /* cairn_add_session would refuse it anyway */
            break;
        }
        /* the stored text was repaired and masked: compare like with like */
        char *c = store_clean_text(m->content,
                                   m->content_len ? m->content_len : strlen(m->content), &cl, &cn);
        if (!c) {
            res = -cairn__err(h, CAIRN_NOMEM, "out of memory");
            break;
        }
        res = role && m->role && !strcmp(role, m->role) && cn == tn && !memcmp(c, text, tn);
        free(c);
    }
    if (res == 1 && i < s->n_messages && rc != SQLITE_DONE)
        res = -cairn__sqlerr(h, rc, "read session");
    sqlite3_finalize(st);
    return res;
}
