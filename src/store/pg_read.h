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
int pg_messages_meta(struct cairn *h, const int64_t *sess, int n,
                     int (*fn)(void *arg, const struct store_msg_row *r), void *arg);
int pg_msgs_meta(struct cairn *h, struct store_msg_text *v, int n);
int pg_msgs_text(struct cairn *h, struct store_msg_text *v, int n, size_t max);
/* cairn_messages of the session whose local row is sess (ext_id its id). */
int pg_messages(struct cairn *h, int64_t sess, const char *ext_id, int from, int to,
                cairn_message_cb cb, void *arg);

#endif
