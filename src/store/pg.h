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
#define PG_SCHEMA_VERSION 4

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
/* Runs sql (no parameters, no rows wanted): 0 or pg_fail. */
int pg_exec(struct pgc *pc, const char *sql, const char *what);

#endif
