/*
 * pg_read.h: reading a PostgreSQL server as the store (docs/POSTGRES.md,
 * "Reading the server"). A handle opened on a postgres:// URL holds an
 * in-memory SQLite store with the sessions the role sees (their metadata
 * and counts, loaded at open) and a connection; what reads messages
 * (recall's candidates, metadata and texts; cairn_messages) asks the
 * server instead, through the functions below, which recall_read.c and
 * read.c call when h->pg is set. Same arguments and results as their
 * SQLite twins (store/recall_read.h), so recall ranks the same pool.
 * No libpq here: only store/pg*.c include it.
 */
#ifndef CAIRN_STORE_PG_READ_H
#define CAIRN_STORE_PG_READ_H

#include "store/recall_read.h"

int pg_term_matches(struct cairn *h, const struct store_scope *sc, const char *expr,
                    size_t expr_len, int nt, store_match_fn fn, void *arg);
int pg_range_sessions(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                      struct store_ids *out);
int pg_event_msgs(struct cairn *h, const struct store_scope *sc, int64_t from, int64_t to,
                  struct store_ids *msgs, struct store_ids *sess);
int pg_messages_meta(struct cairn *h, const int64_t *sess, int n,
                     int (*fn)(void *arg, const struct store_msg_row *r), void *arg);
/* Packing on a server store reads this many times as far ahead as on a
 * local one (store_read_ahead): each read is a round trip (measured in
 * docs/POSTGRES.md, version 6); the choice does not depend on it. */
#define PG_READ_AHEAD 8
int pg_msgs_meta(struct cairn *h, struct store_msg_text *v, int n);
int pg_msgs_text(struct cairn *h, struct store_msg_text *v, int n, size_t max);
/* The phrases of an FTS5 MATCH expression as recall writes it ("a" OR
 * "b c": nt of them), tokenized as FTS5 tokenizes a query; then the count
 * of each in one message whose lexemes lex[nl] stand at positions pos[nl]
 * (tsvector's text form, "{3,17}"), into tf[nt]: 1 if one is non-zero, 0
 * if none, -1 out of memory. What FTS5's cairn_tf gives for the same
 * text (store/fts.c). Pure: fuzzed by tests/fuzz/fuzz_pg_tf.c. */
struct pg_phrases;
int pg_phrases_parse(const char *expr, size_t len, int nt, struct pg_phrases **out);
int pg_phrase_tf(const struct pg_phrases *pp, const char *const *lex, const char *const *pos,
                 int nl, uint16_t *tf);
void pg_phrases_free(struct pg_phrases *pp);

/* Dense recall on a server store (store/vectors.c reads them into its
 * set): *any when the role sees a vector of any model; and every vector of
 * model (dim) it sees, in (seq, piece) order, each handed to fn with its
 * message's seq and its session's local id (fn: <0 out of memory, else
 * go on), and in other[n] a model with vectors that is not this one ("" if
 * none), chosen as SQLite's store chooses it. */
int pg_any_vectors(struct cairn *h, int *any);
int pg_vectors(struct cairn *h, const char *model, int dim,
               int (*fn)(void *arg, int64_t msg, int64_t sess, const void *v, int bytes),
               void *arg, char *other, size_t n);

/* The index path ("pg.dense" "index"): *has when the server has the HNSW
 * index of dim (version 4, pgvector); the count of messages with a vector
 * of model (dim) and other[] as pg_vectors gives them, without the
 * vectors; and the k pieces nearest q[dim] by that index (approximate),
 * of the sessions allowed[n_allowed] (local ids; NULL: every one), handed
 * to fn as pg_vectors does. */
int pg_vector_index(struct cairn *h, int dim, int *has);
int pg_vector_count(struct cairn *h, const char *model, int dim, int64_t *msgs, char *other,
                    size_t n);
int pg_vectors_near(struct cairn *h, const char *model, int dim, const float *q, int k,
                    const int64_t *allowed, int n_allowed,
                    int (*fn)(void *arg, int64_t msg, int64_t sess, const void *v, int bytes),
                    void *arg);

/* cairn_messages of the session whose local row is sess (ext_id its id). */
int pg_messages(struct cairn *h, int64_t sess, const char *ext_id, int from, int to,
                cairn_message_cb cb, void *arg);

#endif
