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

/* The server schema version this build creates and reads (the number of
 * server migrations in store/pg.c, checked there at compile time). */
#define PG_SCHEMA_VERSION 1

struct pgc {
    PGconn       *c;
    struct cairn *h;
    char          who[200];      /* user@host/database: never the password */
    char          key[160];      /* the server's id and the role: sync_state.server */
    char          user[64];
    int           has_emb;       /* cairn.vectors has pgvector's `emb vector` column */
    int           schema;        /* the server's schema version as found */
    char          pgvector[32];  /* the extension's version in this database, "" none */
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
/* Runs sql (no parameters, no rows wanted): 0 or pg_fail. */
int pg_exec(struct pgc *pc, const char *sql, const char *what);

#endif
