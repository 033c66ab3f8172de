/*
 * pg.h: the PostgreSQL side of the store (docs/POSTGRES.md): a connection
 * to a server, its schema, and the errors it reports. Only store/pg*.c
 * include <libpq-fe.h>; the rest of the library sees cairn_sync and
 * cairn_server_check (include/cairn.h).
 */
#ifndef CAIRN_STORE_PG_H
#define CAIRN_STORE_PG_H

#include <libpq-fe.h>
#include "internal.h"

/*
 * libpq is loaded on first use (util/dl.h), not linked: its load-time
 * cost (libssl, Kerberos, LDAP behind it) would be paid by every `cairn
 * hook`, which never syncs. The functions we call, resolved once by
 * pg_lib_load; the macros below make the code read as plain libpq.
 */
struct pg_lib {
    __typeof__(PQconnectdbParams)    *connectdbParams;
    __typeof__(PQstatus)             *status;
    __typeof__(PQerrorMessage)       *errorMessage;
    __typeof__(PQfinish)             *finish;
    __typeof__(PQexec)               *exec;
    __typeof__(PQexecParams)         *execParams;
    __typeof__(PQresultStatus)       *resultStatus;
    __typeof__(PQresultErrorMessage) *resultErrorMessage;
    __typeof__(PQresultErrorField)   *resultErrorField;
    __typeof__(PQclear)              *clear;
    __typeof__(PQntuples)            *ntuples;
    __typeof__(PQgetvalue)           *getvalue;
    __typeof__(PQgetlength)          *getlength;
    __typeof__(PQgetisnull)          *getisnull;
    __typeof__(PQcmdTuples)          *cmdTuples;
    __typeof__(PQuser)               *user;
    __typeof__(PQhost)               *host;
    __typeof__(PQdb)                 *db;
    __typeof__(PQpass)               *pass;
    __typeof__(PQsetNoticeProcessor) *setNoticeProcessor;
};
extern struct pg_lib pg_lib;
#define PQconnectdbParams    (pg_lib.connectdbParams)
#define PQstatus             (pg_lib.status)
#define PQerrorMessage       (pg_lib.errorMessage)
#define PQfinish             (pg_lib.finish)
#define PQexec               (pg_lib.exec)
#define PQexecParams         (pg_lib.execParams)
#define PQresultStatus       (pg_lib.resultStatus)
#define PQresultErrorMessage (pg_lib.resultErrorMessage)
#define PQresultErrorField   (pg_lib.resultErrorField)
#define PQclear              (pg_lib.clear)
#define PQntuples            (pg_lib.ntuples)
#define PQgetvalue           (pg_lib.getvalue)
#define PQgetlength          (pg_lib.getlength)
#define PQgetisnull          (pg_lib.getisnull)
#define PQcmdTuples          (pg_lib.cmdTuples)
#define PQuser               (pg_lib.user)
#define PQhost               (pg_lib.host)
#define PQdb                 (pg_lib.db)
#define PQpass               (pg_lib.pass)
#define PQsetNoticeProcessor (pg_lib.setNoticeProcessor)

/* The server schema version this build creates and reads (the number of
 * server migrations in store/pg.c, checked there at compile time). */
#define PG_SCHEMA_VERSION 7

struct pgc {
    PGconn       *c;
    struct cairn *h;
    char          who[200];      /* user@host/database: never the password */
    char          key[160];      /* the server's id and the role: sync_state.server */
    char          user[64];
    int           has_emb;       /* cairn.vectors has pgvector's `emb vector` column */
    int           has_vindex;    /* the server has cairn.vector_index (version 4) */
    int           indexed_dim;   /* the last dim cairn.vector_index was asked for */
    int           schema;        /* the server's schema version as found */
    char          pgvector[32];  /* the extension's version in this database, "" none */
    char          sqlstate[8];   /* of the last failure pg_fail saw, "" none */
};

/* Connects (server: a postgres:// URL or key=value conninfo; "" or NULL:
 * libpq's PG* variables and ~/.pgpass), and with migrate=1 creates or
 * upgrades the server schema. 0, or a CAIRN_* code with the message on h. */
int pg_open(struct cairn *h, const char *server, int migrate, struct pgc *pc);
void pg_close(struct pgc *pc);
/* Records libpq's message for what (r may be NULL: the connection's) on
 * the handle, without the password, and returns CAIRN_IO when the
 * connection is gone, else CAIRN_ERROR. Clears r. */
int pg_fail(struct pgc *pc, PGresult *r, const char *what);
/* 1 when the last failure was one a retry of the transaction may not meet
 * (a deadlock between two machines' batches, a serialization failure). */
int pg_retryable(const struct pgc *pc);
/* Appends s to b as one element of an array literal for a text[]
 * parameter ("a","b": " and \ escaped), a comma before all but the first.
 * The braces are the caller's. */
struct buf;
void pg_array_elem(struct buf *b, const char *s, int first);
/* Appends the rows of a multi-row VALUES: "($1,...,$cols),(...)", rows times. */
void pg_values_sql(struct buf *b, size_t rows, size_t cols);
/* On the local store: sql with text parameters a (and b unless NULL), no
 * rows wanted; and whether sql with a gives a row (1, 0; -1 on error). */
int pg_local_exec(struct cairn *h, const char *sql, const char *a, const char *b);
int pg_local_has(struct cairn *h, const char *sql, const char *a);
/* Tombstones of one kind (sessions' or memories'): a local table of the
 * hashes of what was removed here, pushed past a cursor, and the server's
 * table of them, pulled. */
struct pg_tombs {
    const char *local_sql;    /* SELECT id, hash ... WHERE id > ?1 ORDER BY id LIMIT ?2 */
    const char *server_sql;   /* $1 the hash: record the tombstone, delete the rows */
    const char *push_what, *pull_what; /* for errors: "push a forget", "pull forgets" */
    const char *pull_sql;     /* $1 the pull cursor: the hashes, in (tx, seq) order */
    const char *known_sql;    /* ?1 the hash: a row when this store has it already */
    const char *index_sql;    /* the local rows: the key hashed, what drop takes */
    const char *remember_sql; /* ?1 the hash: into the local table */
    int (*drop)(struct cairn *h, const char *key); /* removes the local row (scrubbed) */
};

/* Pull: the server's tombstones from cursor from: the local rows they name
 * dropped, the others remembered; *count: the rows dropped. */
int pg_pull_tombs(struct pgc *pc, const struct pg_tombs *k, const char *from, size_t *count);
/* A sync's local cursors for one server and scope (sync_state's row). */
struct cursor {
    int64_t push_msg, push_tomb;
    int64_t push_seen;       /* push_msg as this run last read or wrote it */
    char    pull_tx[32];
    int64_t push_mtomb;      /* memories' tombstones pushed (memories_forgotten.id) */
    char    pull_mtx[32];    /* the server transaction memory pull has read up to */
};
int pg_cursor_save(struct cairn *h, const char *server, const char *scope, struct cursor *c);
/* Push: the local hashes past *cursor (a field of c), batch a server
 * transaction; after each commit *cursor moves, *count grows and c is
 * saved for scope. */
int pg_push_tombs(struct pgc *pc, const struct pg_tombs *k, struct cursor *c, int64_t *cursor,
                  const char *scope, size_t batch, size_t *count);
/* pg_msync.c: explicit memories and corrections, after the sessions' push
 * and pull of cairn_sync (scope: the project or ""). */
int pg_msync_push(struct pgc *pc, struct cursor *c, const char *scope,
                  const struct cairn_sync_opts *o, struct cairn_sync_report *rep);
int pg_msync_pull(struct pgc *pc, struct cursor *c, const char *scope,
                  const struct cairn_sync_opts *o, struct cairn_sync_report *rep);
/* A server store's open: every memory the role sees on the server (its
 * own, and the non-private ones of projects shared with it), unexpired,
 * into the handle's in-memory store, as a pull would add them. */
int pg_msync_load(struct pgc *pc);
/* Runs sql (no parameters, no rows wanted): 0 or pg_fail. */
int pg_exec(struct pgc *pc, const char *sql, const char *what);

#endif
