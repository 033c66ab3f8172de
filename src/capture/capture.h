/*
 * capture.h: the pure parsing layer of the importers.
 *
 * Turns the files other assistants leave behind into in-memory sessions
 * made of the public `struct cairn_session` / `struct cairn_message`, ready
 * for cairn_add_session(). Nothing here touches the store, prints or exits:
 *
 *   - Claude Code transcripts (~/.claude/projects/<p>/<session>.jsonl),
 *     whole or from a byte offset for the Stop hook (claude_code.c);
 *   - claude.ai and ChatGPT exports (conversations.json) (chat_export.c);
 *   - Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl)
 *     (codex.c);
 *   - aider chat logs (.aider.chat.history.md) (aider.c);
 *   - which of these a file looks like (sniff.c).
 *
 * Every parse appends to a `struct capture_batch`, which owns all the
 * memory it hands out: session structs, message arrays and every string
 * stay valid until capture_batch_free(). Bad input (garbage lines, a
 * half-written last line, fields of the wrong type, huge lines, invalid
 * UTF-8) is skipped or repaired and counted in batch->counts, never fatal.
 *
 * Text between <private> and </private> is removed, tags included, before
 * anything is kept (an unclosed <private> hides the rest of the message).
 *
 * The helpers at the bottom (JSON scanner, string map, arena, time parser,
 * file reader) are shared by the three parsers and live in runtime.c.
 */
#ifndef CAIRN_CAPTURE_H
#define CAIRN_CAPTURE_H

#include <stddef.h>
#include <stdint.h>
#include "cairn.h"

/* Lines (or export conversations) longer than this are skipped, counted
 * in skipped_too_long. */
#define CAPTURE_MAX_LINE ((size_t)64 << 20)
/* Whole files read by capture_read_file are refused above this. */
#define CAPTURE_MAX_FILE ((size_t)4 << 30)
/* The most of an export's conversations.json read out of a .zip. A file
 * on disk shows its size; an archive can hold 4 GB in 4 MB and claim
 * anything, and the whole is read into memory (then parsed into a batch
 * about as big). The largest real exports we know of are a few hundred
 * MB; a bigger one can still be unzipped and imported as a file. */
#define CAPTURE_MAX_EXPORT ((size_t)1 << 30)

/* Options (flags argument of the parse functions). */
#define CAPTURE_OPT_ATTACHMENTS 0x1 /* claude.ai: append pasted attachments
                                       ("[attachment: name]" + extracted
                                       text) to the message text */

/* What a parse saw. For JSONL formats a "line" is a line; for exports it is
 * one conversation of the top-level array. Counts add up across parses
 * into the same batch. */
struct capture_counts {
    size_t lines_total;          /* lines (conversations) looked at */
    size_t lines_blank;          /* empty or whitespace-only lines */
    size_t lines_ignored;        /* known record types that never hold
                                    conversation text (progress, ...) */
    size_t skipped_bad_json;     /* malformed JSON */
    size_t skipped_unknown_type; /* a "type" we do not know (still used
                                    for branch links when it has a uuid) */
    size_t skipped_wrong_type;   /* not an object, or a field we need has
                                    the wrong JSON type */
    size_t skipped_too_long;     /* over CAPTURE_MAX_LINE */
    size_t utf8_repaired;        /* kept strings with invalid UTF-8 fixed */
    size_t private_removed;      /* <private> spans removed */
    size_t messages_kept;        /* messages handed out */
    size_t messages_dropped;     /* role/text filtered out (tool calls,
                                    meta, harness text, empty, branches) */
};

struct capture_session {
    struct cairn_session s;      /* s.messages points into msgs */
    struct cairn_message *msgs;
    size_t n_msgs, alloc_msgs;
};

struct capture_chunk;            /* arena block, private */

struct capture_batch {
    struct capture_session *v;
    size_t n, alloc;
    struct capture_counts counts;
    struct capture_chunk *arena; /* owns every string handed out */
};

#define CAPTURE_BATCH_INIT { NULL, 0, 0, { 0 }, NULL }

void capture_batch_init(struct capture_batch *b);
/* Frees everything; b is left empty and reusable. NULL is a no-op. */
void capture_batch_free(struct capture_batch *b);

/*
 * Reads a file from byte `from` to its end into a malloc'd buffer (NUL
 * appended, not counted in *len). Returns CAIRN_OK, CAIRN_IO, CAIRN_NOMEM
 * or CAIRN_TOOBIG (over CAPTURE_MAX_FILE).
 */
int capture_read_file(const char *path, uint64_t from, char **data, size_t *len);

/* ---- Claude Code ------------------------------------------------------ */

/*
 * Parses a Claude Code transcript held in data[0..len) and appends the
 * session on its active branch (if it has any message) to `out`.
 *
 * `default_id` names the session when no record carries a sessionId (the
 * file name without .jsonl is a good choice; may be NULL).
 *
 * Incremental use (the Stop hook): pass the offset returned by the last
 * call as `from`. The whole buffer is still parsed, because the parent
 * links that pick the active branch reach back before `from`; only
 * messages with at least one record starting at or after `from` are
 * emitted. Their ids are stable, so adding one twice is a no-op in the
 * store. *next_off (may be NULL) receives the offset just past the last
 * complete ('\n'-terminated) line: a half-written last line is left to be
 * read again next time.
 *
 * Message ids: a human prompt's id is its record's uuid; an assistant
 * reply (one API message, whose text blocks are merged from several
 * records) uses message.id ("msg_..."), else the first record's uuid.
 *
 * Returns CAIRN_OK (also for an empty or all-garbage file) or CAIRN_NOMEM.
 */
int capture_claude_code(const char *data, size_t len, uint64_t from,
                        const char *default_id, unsigned flags,
                        struct capture_batch *out, uint64_t *next_off);

/* ---- Chat exports ----------------------------------------------------- */

/*
 * claude.ai conversations.json: a JSON array of conversations (or one
 * conversation object). Each conversation becomes one session (source
 * "claude.ai"). Returns CAIRN_OK, CAIRN_INVALID when the top level is not
 * an array or object, or CAIRN_NOMEM. A conversation that fails to parse
 * is counted and skipped; a truncated file yields the complete ones.
 */
int capture_claude_ai(const char *json, size_t len, unsigned flags,
                      struct capture_batch *out);
/* ChatGPT conversations.json, same contract (source "chatgpt"). */
int capture_chatgpt(const char *json, size_t len, unsigned flags,
                    struct capture_batch *out);

/* ---- Codex CLI -------------------------------------------------------- */

/*
 * A Codex CLI rollout JSONL file (source "codex"). Messages carry no id
 * (the store dedupes them by role, time and content). Returns CAIRN_OK or
 * CAIRN_NOMEM.
 */
int capture_codex(const char *data, size_t len, const char *default_id,
                  unsigned flags, struct capture_batch *out);

/* ---- aider ------------------------------------------------------------ */

/*
 * aider's .aider.chat.history.md (source "aider"), one session per "# aider
 * chat started at" header, with the id "aider:<id_prefix>@<time>" (a
 * second header with the same time gets "#2", ...). Only complete lines
 * are read; *next_off (may be NULL) receives the offset past the last
 * one. Sessions that end at or before `from` (0: none) were read whole
 * by an earlier import and are left out. Returns CAIRN_OK or CAIRN_NOMEM.
 */
int capture_aider(const char *data, size_t len, uint64_t from, const char *id_prefix,
                  struct capture_batch *out, uint64_t *next_off);

/* ---- Which kind is it? (sniff.c) ------------------------------------- */

/*
 * The CAIRN_IMPORT_* kind that data[0..len) looks like, from the first
 * values in it (a conversations.json, a transcript, a rollout, a JSONL of
 * sessions, an aider log), or 0 when it looks like none. Reads only
 * within len; never allocates.
 */
int capture_sniff(const char *data, size_t len);

/* ---- Shared helpers (runtime.c) ---------------------------------------- */

/*
 * ISO 8601 date or date-time into Unix seconds ("2023-05-08",
 * "2025-07-01T10:00:00.000Z", "2023-05-08 13:56:00.123+02:00"). Without
 * a zone the time is local. Returns CAIRN_OK or CAIRN_INVALID.
 */
int capture_parse_time(const char *s, size_t n, int64_t *out);

/* A JSON value seen by the scanner: raw bytes, no allocation. For a
 * string, p/n are the bytes between the quotes (escapes not decoded). */
struct capture_jval {
    const char *p;
    size_t n;
    char kind;   /* '"' string, '{' object, '[' array, 'n' null,
                    't' true, 'f' false, '0' number */
};

/* Skips one JSON value at *p (leading whitespace allowed). On success
 * sets *v (may be NULL) and returns the pointer after the value; NULL if
 * the bytes are not a well-formed value. Nesting is capped (512). */
const char *capture_json_skip(const char *p, const char *end,
                              struct capture_jval *v);

/* Iterates an object or array, validating each member as it goes (so a
 * line is scanned once). `p` points at the '{' or '['; `end` is the end
 * of the buffer (or of a container's capture_jval). */
struct capture_jiter {
    const char *p, *end;
    int first, done;
    char close;
};
void capture_jiter_init(struct capture_jiter *it, const char *p, const char *end);
/* Next member: 1 and key, val set (key unused for arrays, may be NULL),
 * 0 after the closing bracket (it->p then points past it), -1 on
 * malformed input. */
int capture_jiter_next(struct capture_jiter *it, struct capture_jval *key,
                       struct capture_jval *val);
/* 1 if string value v equals the C string s (raw bytes). */
int capture_jval_is(const struct capture_jval *v, const char *s);

/* ASCII whitespace (what trimming removes). */
static inline int capture_is_ws(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}
/* Skips JSON whitespace in [p, end). */
static inline const char *capture_skip_ws(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Copies s[0..n) into the batch arena, NUL-terminated. NULL on NOMEM. */
char *capture_strndup(struct capture_batch *b, const char *s, size_t n);

/*
 * The shared text clean-up for every kept message: removes <private>
 * spans, trims ASCII whitespace at both ends when `trim` is set, repairs
 * invalid UTF-8 (U+FFFD) and copies the result into the arena.
 * Returns the copy (empty string possible) or NULL on NOMEM.
 */
char *capture_text(struct capture_batch *b, const char *s, size_t n,
                   int trim, size_t *out_len);
/* Copies s into the arena as-is apart from UTF-8 repair (ids, paths). */
char *capture_str(struct capture_batch *b, const char *s, size_t n);

/* Starts a new session in the batch; NULL on NOMEM. Its fields start
 * NULL / CAIRN_NO_TIME. The pointer is valid until the next call. */
struct capture_session *capture_session_new(struct capture_batch *b);
/* Appends a message (strings must be arena strings). CAIRN_OK / NOMEM. */
int capture_session_add(struct capture_batch *b, struct capture_session *s,
                        const char *id, const char *role, const char *content,
                        size_t content_len, int64_t at);
/* Drops the last session (used when it ended up with no messages). */
void capture_session_drop_last(struct capture_batch *b);

/* A map from byte strings to size_t, for uuid lookups. Keys are borrowed
 * (must outlive the map). */
struct capture_map {
    struct capture_map_slot *slots;
    size_t n, cap;
};
struct capture_map_slot {
    const char *k;
    size_t kn;
    size_t v;
};
/* Sets k -> v (replacing). CAIRN_OK or CAIRN_NOMEM. */
int capture_map_put(struct capture_map *m, const char *k, size_t kn, size_t v);
/* 1 and *v when found, else 0. */
int capture_map_get(const struct capture_map *m, const char *k, size_t kn, size_t *v);
void capture_map_free(struct capture_map *m);

#endif
