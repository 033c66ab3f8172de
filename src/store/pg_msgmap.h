/*
 * pg_msgmap.h: the metadata of every message a server handle sees, read
 * once a handle and again only when the server's data moved
 * (docs/POSTGRES.md "Reading the server"). From a handle's second
 * question (store/pg_read.c), recall asks the server for the postings of
 * a question's lexemes alone and for no metadata: the message's session,
 * length, position, role, time and speaker come from here.
 *
 * Freshness: every change of a message (an insert, an update, a delete:
 * a push, a rewrite, a forget) rewrites its session's row on the server
 * (server version 3's counters), and a forget deletes it, so the sessions'
 * row versions (xmin) name the state of the messages. A question reads
 * their digest (one statement over the sessions, not the messages) and
 * the map is read again when it changed.
 */
#ifndef CAIRN_STORE_PG_MSGMAP_H
#define CAIRN_STORE_PG_MSGMAP_H
#include <stdint.h>

#include "store/pg.h"

struct pg_msg {
    int64_t seq, sess, at;   /* at: CAIRN_NO_TIME when unset */
    int     position, ntok, user;
    char   *speaker;         /* NULL if none */
};

struct pg_seq {
    int64_t seq;
    int     at;              /* index in msg[] */
};

struct pg_msgmap {
    int            loaded;
    char           stamp[64];    /* the sessions' digest the map was read at */
    int            n, nsess;
    struct pg_msg *msg;          /* in (sess, position) order */
    struct pg_seq *by_seq;       /* in seq order */
    int           *first;        /* msg[first[s - 1] .. first[s]) are session s's */
};

/* The local id of the server's session (owner, sid), 0 if not loaded. */
typedef int64_t (*pg_sess_fn)(void *arg, const char *owner, const char *sid);

/* Makes the map current for the nsess sessions the handle loaded: reads
 * the sessions' digest and, if it moved (or on the first call), every
 * visible message's metadata in one snapshot. Messages of sessions the
 * handle did not load are left out. CAIRN_OK or an error code with the
 * handle's message set. */
int pg_msgmap_fresh(struct pgc *pc, struct pg_msgmap *mm, int nsess, pg_sess_fn sess_of,
                    void *arg);
/* One session's pack (server version 7, store/pg.c: sessions.mpack) of n
 * bytes appended to mm->msg (room for cap), as session sess's messages:
 * 0, or -1 when it is malformed or does not fit (what it appended stays,
 * for pg_msgmap_free). */
int pg_msgmap_unpack(struct pg_msgmap *mm, int cap, int64_t sess, const unsigned char *p,
                     size_t n);
/* The message whose seq is seq, NULL if the map has none. */
const struct pg_msg *pg_msgmap_find(const struct pg_msgmap *mm, int64_t seq);
void pg_msgmap_free(struct pg_msgmap *mm);
#endif
