/*
 * recall_read.h: what recall reads from the store, and the only way it
 * reads it. Every statement recall needs is here (store/recall_read.c),
 * so recall/ holds no SQL: it asks for plain values (totals, rows, texts)
 * and ranks and packs them in memory, which is also what lets its unit
 * tests build pools by hand with no database.
 *
 * The scope of a question: the sessions of one project (NULL: all), minus
 * the session whose external id is exclude_session (NULL: none).
 *
 * Functions return CAIRN_OK or an error code with the handle's message
 * set. A row callback that returns non-zero stops the read; that value is
 * returned as it is (the caller sets its own message).
 */
#ifndef CAIRN_STORE_RECALL_READ_H
#define CAIRN_STORE_RECALL_READ_H

#include <stddef.h>
#include <stdint.h>
#include "internal.h"

struct store_scope {
    const char *project;
    const char *exclude_session;
};

/* A growable list of session rowids. */
struct store_ids {
    int64_t *v;
    int      n, cap;
};

/* Appends v to out: CAIRN_OK or CAIRN_NOMEM with the handle's message. */
int store_ids_push(struct cairn *h, struct store_ids *out, int64_t v);

/* The scope's totals over session_stats: messages, index tokens, user
 * turns, bytes of text. */
struct store_totals {
    int64_t msgs, tok, user, bytes, units;   /* units: rounds (store_sessions_size) */
};
int store_scope_totals(struct cairn *h, const struct store_scope *sc, struct store_totals *t);

/* Where a run's token counts (msg_runs.lens, schema 19) are read:
 * p..end, at the count of id at (p NULL: the run has none). */
struct run_lens {
    const char *p, *end;
    int64_t     at;
};
/* The count of id row (>= at), the cursor moved to it; -1 when the run
 * has none there. */
int store_run_len(struct run_lens *rl, int64_t row);

/* Every message in scope that matches the FTS5 expression expr (terms
 * OR'ed), with its session, its index tokens (-1 unless want_len: from
 * its run's counts, msg_runs.lens, else a lookup) and its count of each of the nt
 * phrases of expr (cairn_tf, store/fts.c). */
typedef int (*store_match_fn)(void *arg, int64_t row, int64_t sess, int ntok,
                              const uint16_t *tf);
int store_term_matches(struct cairn *h, const struct store_scope *sc, const char *expr,
                       size_t expr_len, int nt, int want_len, store_match_fn fn, void *arg);
/* The same for the ids in (lo, hi] (SQLite stores only), with expr's np
 * phrases counted for terms: phrase i for term map[i] (-1: for none; two
 * phrases of one term: the larger count), tf nt counts. */
int store_term_matches_in(struct cairn *h, const struct store_scope *sc, const char *expr,
                          size_t expr_len, int np, const int *map, int nt, int64_t lo,
                          int64_t hi, int want_len, store_match_fn fn, void *arg);

/* Every message's session and length by id, from msg_runs, read once
 * for a walk of many words (the tier build, recall/tier.c): the walk of a
 * word stepped every run from its first match on, the same ~50,000 runs
 * (and their counts) again for each of ~2,800 words at a million
 * messages. sess[id - base] (0: in no run, so in no walk), ntok[id -
 * base] (-1: its run has no count; a lookup then, as the walk does). */
struct store_runs {
    int64_t  base, n;            /* ids base .. base + n - 1 */
    int64_t *sess;
    int32_t *ntok;
};
/* Loads the runs of the ids up to upto. *loaded 0 (nothing held) when the
 * ids are too sparse for an array (more than STORE_RUNS_SPARSE times the
 * messages): the caller walks as before. */
int store_runs_load(struct cairn *h, int64_t upto, struct store_runs *runs, int *loaded);
void store_runs_free(struct store_runs *runs);
/* store_term_matches_in of a one-phrase expr over every session, the ids
 * up to upto, each match's length wanted: the same matches, sessions,
 * lengths and counts, from runs instead of msg_runs. */
int store_term_matches_runs(struct cairn *h, const struct store_runs *runs, const char *expr,
                            size_t expr_len, int64_t upto, store_match_fn fn, void *arg);

/* Eight lowercase hex digits' value (a session_sizes field), or -1 when
 * one byte of p[0..8) is not one: store_hex8 all eight at once,
 * store_hex_field (n digits, one at a time) its reference. */
int64_t store_hex8(const unsigned char *p);
int64_t store_hex_field(const unsigned char *p, int n);
/* A slot's sixteen digits (two fields of eight) at once: 0 with the
 * fields' values in *a and *b (store_hex8's), or -1 when a byte of
 * p[0..16) is not a lowercase hex digit (then *a and *b are unset). */
int store_hex16(const unsigned char *p, int64_t *a, int64_t *b);

/* Summed over the sessions sess[n] (session_sizes, 128 sessions a row,
 * else session_stats), in increasing order without repeats: their
 * messages, and their rounds (user turns; every turn in a chat between
 * people). For gather's pruning. */
int store_sessions_size(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                        int64_t *units);
/* The same, and when each is not NULL and the packed rows answered,
 * each[i] the turns of sess[i] and *got 1 (else *got 0, each unset): the
 * pruned path keeps its kept sessions' sizes, so the pool's size is not
 * read a second time (gather.c, issue 23, hook50). */
int store_sessions_size_each(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                             int64_t *units, int64_t *each, int *got);
/* The same as store_sessions_size, and *dialogs: how many of them have no
 * reply (every turn a user's, as their unit rows flag STORE_UNITS_DIALOG:
 * rounds = messages > 0), read from the same rows. */
int store_sessions_shape(struct cairn *h, const int64_t *sess, int n, int64_t *msgs,
                         int64_t *units, int *dialogs);

/* Sessions appended to out: those in scope with a message time (its own,
 * else the session's start) in [from, to); every session in scope; every
 * session in scope in rowid order (the dense search's filter). */
int store_range_sessions(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                         struct store_ids *out);
/* Messages in scope that speak of a date range meeting [from, to) (schema
 * v15, store/events.c): their rows appended to msgs, their sessions to
 * sess, in no order. */
int store_event_msgs(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                     struct store_ids *msgs, struct store_ids *sess);
int store_scope_sessions(struct cairn *h, const struct store_scope *sc, struct store_ids *out);
int store_scope_sessions_sorted(struct cairn *h, const struct store_scope *sc,
                                struct store_ids *out);
/* *any: does the store hold any vector (of any model)? */
int store_any_vectors(struct cairn *h, int *any);

/* The metadata of the sessions sess[n] in rowid order, and of their
 * messages in (session, position) order, each session once: a session's
 * turns from its packed row (session_turns, schema 21), else from the
 * messages_meta index alone (the table's pages hold the text). Strings
 * are valid only during the call; started_at/at are CAIRN_NO_TIME when
 * unset. A session's turns are not counted here: store_sessions_size. */
struct store_session_row {
    int64_t     row;
    const char *ext_id, *source, *project, *title;
    int64_t     started_at;
};
struct store_msg_row {
    int64_t     row, sess;
    int         position;
    int         user;       /* role is "user" */
    const char *speaker;    /* NULL if none */
    int64_t     at;
    int         ntok;
};
/* A session's packed turns (session_turns, schema 21, binary since 27:
 * the format is in turns.c): a row is STORE_TURNS_MARK, then its turns,
 * read or written in position order from { p, end, 0, 0, 0 } (p past the
 * mark): id, pos and at are the previous turn's (at 0 after one without a
 * time). store_turns_next fills r's row, position, user, at and ntok, and
 * the speaker's bytes (*sp, *splen: not NUL-terminated; *sp NULL when
 * none): 1, 0 at the end, -1 when the bytes there are not a turn. Never
 * reads outside [p, end) (tests/fuzz/fuzz_turns.c). */
#define STORE_TURNS_MARK 0xC7     /* a text row (schema 21-26) began with a digit */
struct turns_cur {
    const char *p, *end;
    int64_t     id, pos, at;
};
int store_turns_next(struct turns_cur *c, struct store_msg_row *r, const char **sp,
                     size_t *splen);
/* Up to n turns from c into r[i] (the speaker's bytes in r[i].speaker,
 * splen[i]) as store_turns_next reads them one by one: how many were read
 * before the end, a bad turn or n; c is past them, as after as many calls. */
size_t store_turns_read(struct turns_cur *c, struct store_msg_row *r, size_t *splen, size_t n);
/* Appends a turn after prev's to b (b->err on failure); prev moves on.
 * speaker: NULL, or its splen bytes. */
struct buf;
void store_turn_write(struct buf *b, struct turns_cur *prev, int64_t id, int64_t pos, int user,
                      int64_t at, int ntok, const char *speaker, size_t splen);

int store_sessions_meta(struct cairn *h, const int64_t *sess, int n,
                        int (*fn)(void *arg, const struct store_session_row *r), void *arg);
int store_messages_meta(struct cairn *h, const int64_t *sess, int n,
                        int (*fn)(void *arg, const struct store_msg_row *r), void *arg);
/* Whether a second handle on h's store (h->open_reader) reads the same
 * sessions and turns as these two on h: a SQLite file on disk, not a
 * server store, not one whose turns h keeps in memory (store.keep_turns),
 * nor an in-memory one (another handle would be another store), and no
 * transaction open on h (its uncommitted rows are its own). Reads no
 * table. */
int store_split_ok(const struct cairn *h);

/* The unit rows (store/units.h) of the sessions sess[n] (ascending, each
 * once) for a recall that ranks units without their turns (issue 23,
 * recall.units): fn once for each listed session that exists, in id order,
 * with its start and, when it has a row of rule `rule` whose count n is its
 * packed turns' (session_turns.n), that row (units NULL: none valid).
 * SQLite stores whose turns are not kept in memory only (store_units_ok). */
struct store_units_row {
    int64_t     sess, started_at;  /* started_at: CAIRN_NO_TIME when unset */
    int64_t     n;                 /* the session's turns */
    const char *units;             /* the row (valid during the call), or NULL */
    size_t      len;
};
int store_units_ok(const struct cairn *h);
int store_units_rows(struct cairn *h, const int64_t *sess, int n, int rule,
                     int (*fn)(void *arg, const struct store_units_row *r), void *arg);
/* A read transaction on h (SQLite, none open: *began 1), so that reads by
 * several statements see one state of the store; store_read_end ends it
 * (nothing when *began is 0). */
int  store_read_begin(struct cairn *h, int *began);
void store_read_end(struct cairn *h, int *began);

/* One batch of messages to read for packing: set row, get the rest. */
struct store_msg_text {
    int64_t row;
    char   *ext_id;    /* external id, else the position as text (malloc'd) */
    int     bytes;     /* length of the text in bytes */
    char   *text;      /* the text, or its first max bytes cut on a character
                        * when longer (malloc'd, NUL-terminated) */
    size_t  len;
};
/* Fills ext_id and bytes of v[n] (the length from the record's header:
 * the text itself is not read). */
int store_msgs_meta(struct cairn *h, struct store_msg_text *v, int n);
/* Fills text and len of v[n] whose bytes store_msgs_meta filled: a text
 * longer than max is read only up to max (incremental blob I/O), so a
 * 50 MB paste costs the pages of its opening only. */
int store_msgs_text(struct cairn *h, struct store_msg_text *v, int n, size_t max);
/* How many messages a packing read should ask for at once: 1 (the
 * default) where a read is a local lookup; more where each read is a round
 * trip to a server (store/pg_read.c). */
int store_read_ahead(const struct cairn *h);
/* The length of s's first n bytes ended on a whole character (s is valid
 * UTF-8 cut at n): where a text cut at max bytes ends. */
size_t store_utf8_cut(const char *s, size_t n);

/* The live memories recall may use (docs/MEMORIES.md): not superseded,
 * not expired at now, of scope `project` and the global ones (project
 * NULL: every scope), the most recently changed first, at most max of
 * them. contradicts lists the ids of the live memories (any scope) that
 * a `contradicts` link ties to it, either way ("7,9"; "" when none);
 * its vector (schema 9) when it has one, with the model and the hash of
 * the text it was made from. Strings and the vector are valid only during
 * the call. */
struct store_memory_row {
    int64_t     id;
    const char *type, *text, *scope, *contradicts;
    int64_t     created, updated;
    const char *vmodel;         /* NULL: no vector */
    const void *vec;           /* dim floats, maybe unaligned: copy them */
    int         dim;
    int64_t     text_hash;
};
int store_recall_memories(struct cairn *h, const char *project, int64_t now, int max,
                          int (*fn)(void *arg, const struct store_memory_row *r), void *arg);

#endif
