/*
 * internal.h: what the library's subsystems share and the public header
 * does not show: the handle itself and error plumbing.
 *
 * Layers (each includes only those below it; docs/ARCHITECTURE.md has the
 * table that tests/t/t0511-layers.sh checks):
 *   util  <  text, mask, embed  <  store  <  capture, recall  <  api  <  cli
 * This header belongs to the store: store/ and the layers above it include
 * it, never util/, text/, mask/ or embed/. include/cairn.h (the public
 * contract, no code) may be included from mask/ up and by the CLI.
 */
#ifndef CAIRN_INTERNAL_H
#define CAIRN_INTERNAL_H

#include <sqlite3.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include "cairn.h"
#include "text/tokenize.h"

/* The schema version (PRAGMA user_version) this build creates and reads:
 * the number of migrations in store/schema.c, checked there at compile time. */
#define CAIRN_SCHEMA_VERSION 30
/* PRAGMA application_id of a cairn store: "crn1". Lets us refuse to
 * migrate a SQLite file that belongs to some other program. */
#define CAIRN_APP_ID 0x63726e31
#define CAIRN_APP_ID_SQL "1668443697"   /* CAIRN_APP_ID in decimal, for SQL text */

/* The handle's settings (cairn_set): each the value last given, or NULL
 * for the default. Values are kept as text and read where they are used,
 * as the environment variables they replace were (docs/ARCHITECTURE.md). */
enum cairn__setting {
    CAIRN__SET_RECALL_EXHAUSTIVE,   /* "recall.exhaustive" */
    CAIRN__SET_RECALL_PRUNE_MSGS,   /* "recall.prune_msgs" */
    CAIRN__SET_REPLY_LANE,          /* "recall.reply_lane" */
    CAIRN__SET_EMBED_MODEL,         /* "embed.model" */
    CAIRN__SET_MODEL_DIR,           /* "embed.model_dir" */
    CAIRN__SET_EMBED_THREADS,       /* "embed.threads" */
    CAIRN__SET_EMBED_MAX_PIECES,    /* "embed.max_pieces" */
    CAIRN__SET_VEC_F32,             /* "vec.f32" */
    CAIRN__SET_VEC_CACHE,           /* "vec.cache" */
    CAIRN__SET_REDACT,              /* "redact" */
    CAIRN__SET_CACHE_MB,            /* "store.cache_mb" */
    CAIRN__SET_KEEP_TURNS,          /* "store.keep_turns" */
    CAIRN__SET_PG_DENSE,            /* "pg.dense" */
    CAIRN__SET_RECALL_TIER,         /* "recall.tier" */
    CAIRN__SET_TIER_KEEP,           /* "store.tier_keep" */
    CAIRN__SET_RECALL_PACKED,       /* "recall.packed" */
    CAIRN__SET_TIER_WALK,           /* "store.tier_walk" */
    CAIRN__SET_ADD_THREAD,          /* "store.add_thread" */
    CAIRN__SET_RECALL_THREADS,      /* "recall.threads" */
    CAIRN__SET_RECALL_SPLIT_MSGS,   /* "recall.split_msgs" */
    CAIRN__SET_RECALL_UNITS,        /* "recall.units" */
    CAIRN__SET_RECALL_SKETCH,       /* "recall.sketch" */
    CAIRN__SET_EMBED_SENTENCES,     /* "embed.sentences" */
    CAIRN__NSET
};

struct cairn;

/* What a subsystem that keeps state derived from the store outside it
 * (the vector cache file: store/vectors.c) hears of every transaction:
 * begin after BEGIN, commit after a successful COMMIT (store/tx.c). */
struct store_tx_hook {
    void (*begin)(struct cairn *h);
    void (*commit)(struct cairn *h);
};
#define STORE_TX_HOOKS 2

struct cairn {
    sqlite3 *db;
    char    *path;
    int      readonly;
    int      in_tx;          /* inside a store transaction */
    int64_t  vec_stamp;      /* the vectors' stamp when the transaction began
                                (store/vectors.c's transaction hook) */
    const struct store_tx_hook *tx_hooks[STORE_TX_HOOKS];
    int      n_tx_hooks;
    char     errmsg[512];
    char    *set[CAIRN__NSET]; /* settings: cairn_set, NULL = default */
    struct pg_store *pg;     /* a server store (store/pg_read.c): db is then an
                                in-memory store of the sessions it sees */
    struct store_tier_live *tier_live; /* what the write transaction keeps the
                                          term tiers with (store/tier_keep.c) */
    struct store_post_live *post_live; /* and the packed postings (store/post.c) */
    struct text_fts_tap fts_tap; /* the connection's FTS5 tokenizer's tap: around
                                    a message's insert, store/keep.c sets its
                                    record and the keepers' listener */
    struct text_tokenizer *rec;  /* ingest's: a new message recorded once */
    /* Another handle on the same store, read-only, and its close: the api
     * layer's cairn_open and cairn_close, set there, for the term tiers'
     * walks in a thread of their own (store_tier_reader); NULL: none. */
    int    (*open_reader)(struct cairn *h, struct cairn **r);
    void   (*close_reader)(struct cairn *r);
    struct text_toks rec_toks;   /* (its length, then the index's tokens) */
    struct store_turns *turns; /* every turn's metadata, kept between recalls
                                  ("store.keep_turns": store/recall_read.c) */
    int      add_group;      /* cairn_add_group: adds share a transaction */
    int      group_tx;       /* that transaction is open */
    size_t   group_n;        /* sessions written in it */
    int      fts_bulk;       /* FTS5's merge settings for a bulk add are in
                                messages_fts_config (store/ingest.c, fts_bulk_begin) */
    struct stat_delta *gd;   /* their session_stats, applied at its commit */
    sqlite3_stmt *gst[12];   /* the write path's statements, kept from one session of
                                the group to the next (store/ingest.c, get_st) */
    size_t   gd_n, gd_cap;
};

/* A setting of h (NULL: h is NULL, or the setting is at its default). */
static inline const char *cairn__setting(const struct cairn *h, enum cairn__setting k)
{
    return h ? h->set[k] : NULL;
}

/* Sets the handle's message (printf-style) and returns rc. */
int cairn__err(struct cairn *h, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Maps a SQLite result code to ours, records "what: sqlite message" and
 * returns the mapped code. */
int cairn__sqlerr(struct cairn *h, int src, const char *what);
/* Copies the caller's options struct `in` (NULL: keep the defaults) over
 * the defaults in `out` (the library's struct, `out_size` bytes), reading
 * only the `size` bytes the caller says it has (its first member). A size
 * below `min_size` (the struct's first public version) or above out_size
 * is CAIRN_INVALID, with `what` in the message. */
int cairn__opts(struct cairn *h, void *out, size_t out_size, const void *in, size_t min_size,
                const char *what);

/* ---- Interface to code in store/schema.c ---- */
/* Creates or migrates the schema to CAIRN_SCHEMA_VERSION. A read-only
 * handle on an older store is left as it is, with *old set to its
 * version (else 0): the caller upgrades it through a writable handle
 * (api.c) and then calls store_check_upgraded. */
int store_migrate(struct cairn *h, int *old);
int store_check_upgraded(struct cairn *h);
int store_check_foreign(struct cairn *h);
/* Packs session sess's turns again (sess < 0: every session without a
 * row), in the caller's transaction. */
int store_turns_fill(struct cairn *h, int64_t sess);

/* ---- Interface to code in store/pg_read.c ---- */
/* 1 if path names a PostgreSQL server: postgres:// or postgresql://. */
int store_is_server(const char *path);
/* Connects h (an empty in-memory store) to the server at url and loads
 * the sessions its role sees; the handle then reads the server and
 * refuses writes. store_server_close ends it (cairn_close). */
int store_server_open(struct cairn *h, const char *url);
void store_server_close(struct cairn *h);
/* user@host/database of a server store (never the password), else NULL. */
const char *store_server_name(const struct cairn *h);
/* The server's cairn schema version (store/pg.c), 0 if h is not one. */
int store_server_schema(const struct cairn *h);

/* ---- Interface to code in store/tx.c ---- */
/* Registers hook (static storage) on h; CAIRN_ERROR past STORE_TX_HOOKS. */
int store_tx_hook_add(struct cairn *h, const struct store_tx_hook *hook);
int store_begin(struct cairn *h);      /* BEGIN IMMEDIATE, waits on locks;
                                          commits an open add group first */
/* Commits the open add group (store/ingest.c); CAIRN_OK if none. */
int store_group_commit(struct cairn *h);
/* Frees the group's pending totals (cairn_close, after committing). */
void store_group_free(struct cairn *h);
int store_commit(struct cairn *h);
void store_rollback(struct cairn *h);
/* Prepares sql (cached by SQLite's own statement reuse: we keep none), or
 * records the error. */
int store_prepare(struct cairn *h, const char *sql, sqlite3_stmt **st);
/* A connection's settings: WAL (a writable file store; waits up to
 * timeout_ms for other processes creating the same store), then the
 * pragmas every connection sets. */
int store_wal(struct cairn *h, int timeout_ms);
int store_pragmas(struct cairn *h);
/* PRAGMA page_size of a new store (tx.c): before its first table */
int store_page_size_new(struct cairn *h);
/* The connection's page cache: mb megabytes, or (0) the default, 256 KB
 * for a read-only handle and 16 MB for a writer (setting "store.cache_mb"). */
#define STORE_CACHE_MB_MAX 4096
int store_cache_size(struct cairn *h, int mb);
/* PRAGMA temp_store set to mode (0 default, 1 file, 2 memory), outside a
 * transaction; *was (if not NULL) gets the mode it had. */
int store_temp_store(struct cairn *h, int mode, int *was);
/* Frees what "store.keep_turns" kept (store/recall_read.c). */
void store_turns_free(struct cairn *h);
/* Reads the schema once and returns the SQLite result code: how
 * open_unwritable (api.c) tells a store it cannot read. */
int store_probe(struct cairn *h);

/* ---- Interface to code in store/scrub.c ---- */
/* Runs change(h, arg) in one write transaction so that nothing it deletes
 * or overwrites stays recoverable from the store file, its WAL or the
 * vector cache file: secure_delete, the full-text index rewritten, the WAL
 * checkpointed and truncated. CAIRN_SCRUB_PENDING after the commit when a
 * reader kept the WAL from being emptied (the message says so). */
int store_scrub(struct cairn *h, int (*change)(struct cairn *, void *), void *arg);
/* Checkpoints the WAL and truncates it to zero bytes, or CAIRN_SCRUB_PENDING. */
int store_checkpoint(struct cairn *h);

/* ---- Interface to code in store/pg_sync.c ---- */
/* The sha256 (hex) of a session id: how `forgotten`, `sync_foreign` and the
 * server's tombstones name a session without keeping its id. */
void store_sid_hash(const char *sid, char out[65]);
/* cairn_forget's part of sync, in its transaction: the session becomes a
 * tombstone for the next push and is never pulled again. */
int store_sync_forget(struct cairn *h, const char *session);
/* A message rewritten in place (an extended reply, cairn_redact), in the
 * writer's transaction: push cursors past it move back before it, so the
 * next push carries its new text. */
int store_sync_rewritten(struct cairn *h, int64_t msg);

/* ---- Interface to code in store/memory.c ---- */
/* Removes (and wipes) the memories whose time has come; a no-op on a
 * read-only handle or when none has expired. cairn_open calls it. */
int memory_purge_expired(struct cairn *h);

/* ---- Interface to code in store/ingest.c ---- */
/* How stored text is cleaned, and what cleaning did (counts add up). */
struct store_clean {
    int    redact;                     /* mask secrets (redact_enabled) */
    size_t masked, private_removed;
    struct cairn_redact_report *rep;   /* per-kind counts, may be NULL */
};
/* What a stored string becomes: <private> spans removed, invalid UTF-8
 * repaired, secrets masked. malloc'd, NUL-terminated; NULL on NOMEM. */
char *store_clean_text(const char *s, size_t n, struct store_clean *cl, size_t *out_len);
/* The same for a session's meta (JSON): string by string, so the result
 * stays valid JSON; the input byte for byte when nothing changes. */
char *store_clean_meta(const char *meta, struct store_clean *cl);
/* Index tokens of s[0..n): the length BM25 normalises by (whole tokens,
 * not the parts of compounds that share their position). */
int store_index_tokens(const char *s, size_t n);
/* The identity of a message without an external id (cleaned fields). */
uint64_t store_message_hash(const char *role, const char *speaker, int64_t at,
                            const char *content, size_t len);

/* ---- Interface to code in store/fts.c ---- */
/* Registers the FTS5 tokenizer "cairn" and the cairn_tf() auxiliary
 * function on db (every connection). Returns a SQLite result code. */
int store_fts_register(sqlite3 *db);
/* The same, with a listener to the documents' tokens (tokenize.h); tap
 * must outlive the connection (a handle's own: h->fts_tap). */
int store_fts_register_tap(sqlite3 *db, struct text_fts_tap *tap);
/* messages_fts follows messages through these, called in the transaction
 * that writes the message (schema v7 has no FTS triggers). Adds message
 * row's text; *st caches the statement (finalize it). */
int store_fts_add(struct cairn *h, sqlite3_stmt **st, int64_t row, const char *text, size_t n);
/* Message row's text becomes text: call before the UPDATE, with the text
 * it replaces (old, exactly as stored). */
int store_fts_replace(struct cairn *h, int64_t row, const char *old, size_t on,
                      const char *text, size_t n);
/* Deleting messages: this statement first, bound to the session row (?1),
 * removes their index rows. */
#define STORE_FTS_FORGET_SESSION \
    "INSERT INTO messages_fts(messages_fts, rowid, content) " \
    "SELECT 'delete', id, content FROM messages WHERE session = ?"

/* ---- Interface to code in store/events.c ---- */
/* The longest date range a message's mention is kept for (schema v15): a
 * month and a few days ("last month" is 28-31 days; "last year" names no
 * event a date in a question could pick out). Recall's lookup of the
 * events that meet a range scans t_from from this far before it. */
#define EVENT_MAX_SPAN (35 * 86400)
/* The date ranges message msg of session sess names, read against `at`
 * (its time, else its session's start; CAIRN_NO_TIME: none), stored;
 * *st caches the insert (finalize it). In the transaction that writes
 * the message. */
int store_events_add(struct cairn *h, sqlite3_stmt **st, int64_t msg, int64_t sess, int64_t at,
                     const char *text, size_t n);
/* store_events_add in two steps, so that the scan needs no handle (a
 * second thread of `cairn add` runs it: cairn_prepare_json): the ranges
 * text names against `at`, as kept, into ft (from, to pairs; room for
 * STORE_EVENTS_MAX), their count returned; then their rows written. */
#define STORE_EVENTS_MAX 16
int store_events_scan(const char *text, size_t n, int64_t at, int64_t *ft);
int store_events_put(struct cairn *h, sqlite3_stmt **st, int64_t msg, int64_t sess,
                     const int64_t *ft, int k);
/* Message msg's rows made again from its stored text (after a rewrite). */
int store_events_refresh(struct cairn *h, int64_t msg);
/* The rows of the newest EVENTS_FILL_MAX messages by id (the migration to
 * v15 fills an older store; a bounded cost, as a hook may run it). */
#define EVENTS_FILL_MAX 30000
#define EVENTS_FILL_MAX_SQL "30000"
int store_events_fill(struct cairn *h);

/* ---- Interface to code in util/hash.c ---- */
#include "util/hash.h"

#endif
