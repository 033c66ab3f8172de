/*
 * web.h: `cairn web`, the local workbench (docs/WEB.md): the server
 * (server.c), its guard (guard.c), the JSON API the page calls (api.c,
 * api_*.c) and the page itself (assets/, embedded at build time by
 * scripts/embed-assets.sh).
 */
#ifndef CAIRN_WEB_H
#define CAIRN_WEB_H

#include <pthread.h>
#include <stddef.h>

#include "cairn.h"
#include "guard.h"
#include "util/buf.h"

/* Caps on what a request may carry (docs/WEB.md). */
#define WEB_QUERY_MAX   2048          /* bytes of a question or search */
#define WEB_ARG_MAX     1024          /* bytes of any other argument */
#define WEB_BODY_MAX    (64 << 10)    /* bytes of a POST body */
#define WEB_CONN_MAX    16            /* connections at once, per address */
#define WEB_PAGE_MAX    200           /* sessions or messages in one answer */
#define WEB_MSG_CUT     (32 << 10)    /* bytes of one message in a session page */
#define WEB_MSG_MAX     (16 << 20)    /* bytes of one message asked for whole */

struct web_cache;

struct web {
    struct cairn *db;                 /* read-only; writes open their own handle */
    const char *db_path;              /* as the CLI resolved it (NULL: the default) */
    char token[WEB_TOKEN_LEN + 1];
    unsigned port;
    int ipv6;                         /* also listening on ::1 */
    struct web_cache *cache;          /* the session list (api.c) */
    pthread_mutex_t lock;             /* one request at a time on db */
};

/* One request as the API sees it. */
struct web_req {
    struct web *w;
    void *conn;                       /* struct MHD_Connection */
    const char *path;                 /* after "/api", e.g. "/sessions" */
    int post;                         /* POST (else GET or HEAD) */
    const char *body;                 /* POST body, NUL-terminated */
    size_t body_len;
};

/* Its answer: status 0 until set; JSON unless type says otherwise. */
struct web_reply {
    unsigned status;
    struct buf body;
    const char *type;                 /* NULL: application/json */
    char filename[128];               /* non-empty: a download of that name */
};

/* The query argument `name` (NULL when absent). A value over cap bytes
 * sets a 413 answer naming it and gives NULL: the handler returns when
 * r->status is set. */
const char *web_arg(const struct web_req *q, struct web_reply *r, const char *name, size_t cap);
/* An integer argument in lo..hi, def when absent; else a 400 answer. */
long web_arg_long(const struct web_req *q, struct web_reply *r, const char *name, long def,
                  long lo, long hi);
/* {"error": msg} with this status. */
void web_fail(struct web_reply *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* A library failure: 404 for CAIRN_NOTFOUND, 413 for CAIRN_TOOBIG, 400 for
 * CAIRN_INVALID, else 500, with cairn_errmsg. */
void web_fail_rc(struct web_reply *r, struct cairn *db, const char *what, int rc);

/* Answers one /api request (api.c); r->status set on return. */
void web_api(const struct web_req *q, struct web_reply *r);
/* Frees what the API kept between requests. */
void web_api_free(struct web *w);
/* The endpoints of api_recall.c (recall preview, search) and api_act.c
 * (export, injection log, memories, forget). */
void web_api_recall(const struct web_req *q, struct web_reply *r);
void web_api_search(const struct web_req *q, struct web_reply *r);
void web_api_export(const struct web_req *q, struct web_reply *r);
void web_api_injections(const struct web_req *q, struct web_reply *r);
void web_api_memories(const struct web_req *q, struct web_reply *r);
void web_api_memory_edit(const struct web_req *q, struct web_reply *r);
void web_api_memory_rm(const struct web_req *q, struct web_reply *r);
void web_api_memory_supersede(const struct web_req *q, struct web_reply *r);
void web_api_forget(const struct web_req *q, struct web_reply *r);

/* The page's files, embedded (build/gen/web_assets.c). */
struct web_asset {
    const char *path;                 /* "/app.js" */
    const char *type;
    const unsigned char *data;
    size_t len;
};
extern const struct web_asset web_assets[];
extern const size_t web_n_assets;

/* Starts the server on 127.0.0.1 and ::1 at port (0: any free one), with
 * w->token set; w->port gets the port. Returns 0, or -1 with the reason
 * in err; w->ipv6 says whether ::1 is served too. web_stop stops it. */
struct web_server;
int web_start(struct web *w, unsigned port, struct web_server **out, char *err, size_t errlen);
void web_stop(struct web_server *s);

#endif
