/*
 * tier.h: the term tiers' rows (schema 22, store/tier.c): for a common
 * word, every match of it in the sessions where it scores best, so the
 * pruned recall (recall/tier.c, the prompt hook) reads those instead of
 * the word's whole posting list. SQLite stores only.
 */
#ifndef CAIRN_STORE_TIER_H
#define CAIRN_STORE_TIER_H

#include <stddef.h>
#include <stdint.h>

#include "store/recall_read.h"

struct cairn;

/* The newest message id the tiers were built at (tier_state.upto); 0 when
 * none is built, on a PostgreSQL store, or a store before schema 22. */
int store_tier_upto(struct cairn *h, int64_t *upto);

/* The tiers of k index tokens, tok[i][0..n[i]) (tok[i] NULL: none, id
 * and df 0), by one statement: id[i] (0: the token has no rows) and its
 * df[i] (its matches with id <= upto when built; 0: not a common word).
 * A common word a query cannot spell as its token (a stem that stems
 * again to another) has a df and no rows. */
int store_tier_terms(struct cairn *h, const char *const *tok, const size_t *n, int k,
                     int64_t *id, int64_t *df);

/* Every row of tier id outside session ext_id exclude (NULL: none), by
 * message id: fn gets its message, session, length and one count. */
int store_tier_posts(struct cairn *h, int64_t id, const char *exclude, store_match_fn fn,
                     void *arg);

/* How a build scored (tier_state, schema 23): the average length and the
 * BM25 constants (avg 0 tells ingest not to keep the tiers), and the
 * messages the store held. */
struct store_tier_scoring { double avg, k1, b; int64_t built; };

/* The messages the store held at the last build (0: none, or one before
 * schema 23). */
int store_tier_built(struct cairn *h, int64_t *built);

/* Building (in the caller's transaction): every tier dropped, upto and
 * the scoring set; the newest message id; the index's tokens in at least
 * df_min messages (fts5vocab), each given to fn with its message count;
 * one tier's word (cut: the score a new match needs to enter, NULL for a
 * word kept with its df only) and its rows. */
struct store_tier_writer;
int store_tier_reset(struct cairn *h, int64_t upto, const struct store_tier_scoring *sc,
                     struct store_tier_writer **w);
int store_max_message(struct cairn *h, int64_t *max);
/* A read-only handle on h's store (*r; NULL when there can be none: an
 * in-memory store, one not in WAL mode, a failed open, the setting
 * "store.tier_walk" "0") for the build's
 * walks in a thread of their own: opened inside h's write transaction, it
 * reads what h read at its start (h holds the write lock, so nothing is
 * committed meanwhile, and the build writes only the tiers and the packed
 * postings, which the walks do not read). Opened and closed through the
 * handle's open_reader and close_reader (the api layer's); its page
 * cache cache_mb MB. */
int store_tier_reader(struct cairn *h, int cache_mb, struct cairn **r);
void store_tier_reader_close(struct cairn *h, struct cairn *r);
int store_tier_vocab(struct cairn *h, int64_t df_min,
                     int (*fn)(void *arg, const char *tok, size_t n, int64_t df), void *arg);
int store_tier_add_term(struct cairn *h, const char *tok, size_t n, int64_t df, const double *cut,
                        int64_t *id);
/* Rows go in through the writer store_tier_reset made (*w, set even
 * when it fails): tier_post's indexes and triggers are dropped from the
 * reset on (the table rewritten whole: truncated, not deleted row by
 * row, and indexed once by a sort); store_tier_finish makes them again
 * from their saved CREATE statements, before the commit, and frees w;
 * store_tier_done frees it without (a failed build: its rollback
 * restores them). NULL is fine for both. */
int store_tier_add_post(struct cairn *h, struct store_tier_writer *w, int64_t id, int64_t msg,
                        int64_t sess, int tf, int ntok);
int store_tier_finish(struct cairn *h, struct store_tier_writer *w);
void store_tier_done(struct store_tier_writer *w);

/*
 * Keeping (store/tier_keep.c, schema 23): the write paths keep built
 * tiers current in their own transaction, through store/keep.c. For a
 * message inserted (fresh: 1, its words count in df) or its text
 * rewritten in place (fresh: 0, the extension of a reply: its rows come
 * back, df as it was), store_tier_keep_begin gives the set of tiered
 * words (*ws; NULL: nothing to keep) whose tally (wordset_count) the
 * message's tokens go to, and store_tier_keep_end (called only after a
 * set was given) adds its match of each tiered word it enters and clears
 * the tally; store_tier_keep_flush (store_commit calls it) writes the
 * dfs and moves upto past what was kept; store_tier_keep_drop (commit,
 * rollback, close) forgets what the transaction loaded. Nothing is done
 * when no tier is kept (none built, built before 23, "store.tier_keep"
 * "0") or when messages were added since the build without being kept:
 * those stay the tail the reader walks, until the next build.
 */
struct wordset;
int store_tier_keep_begin(struct cairn *h, int64_t sess, int64_t msg, int fresh,
                          struct wordset **ws);
int store_tier_keep_end(struct cairn *h, int64_t sess, int64_t msg, int ntok, int fresh);
int store_tier_keep_flush(struct cairn *h);
void store_tier_keep_drop(struct cairn *h);

#endif
