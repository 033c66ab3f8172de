/*
 * mcp.h: the pieces of `cairn mcp` (cli/cmd_mcp.c), the Model Context
 * Protocol server over stdio.
 *
 * Three parts, one file each:
 *  - reader.c: a thread that reads stdin, one JSON-RPC message per line
 *    (capped at MCP_MAX_LINE), parses it and queues it for the main thread.
 *    It sees `notifications/cancelled` as soon as it arrives, so a request
 *    that is queued or running when its cancel comes in is never answered.
 *  - protocol.c: the dual-era dispatcher (docs/MCP.md, protocols.md 1.7):
 *    the handshake revisions 2024-11-05 .. 2025-11-25 and the stateless
 *    2026-07-28 revision, JSON-RPC errors, batches for 2025-03-26.
 *  - tools.c: the six tools, their JSON Schemas, argument checking against
 *    those schemas and the readable text they answer with.
 *
 * Only the main thread touches the store and stdout; the reader thread only
 * reads stdin and writes stderr.
 */
#ifndef CAIRN_MCP_H
#define CAIRN_MCP_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../cli.h"
#include "util/buf.h"

/* A message line longer than this is refused with an error (id taken from
 * the line when it can be read cheaply) and the server goes on. */
#define MCP_MAX_LINE ((size_t)64 << 20)

/* Protocol revisions. The first is the stateless one. */
#define MCP_MODERN_VERSION "2026-07-28"
#define MCP_LATEST_LEGACY  "2025-11-25"

/* ---- reader.c ---- */

enum mcp_item_kind {
    MCP_ITEM_MESSAGE,      /* a parsed JSON value (object or array) */
    MCP_ITEM_PARSE_ERROR,  /* the line is not JSON */
    MCP_ITEM_TOO_LONG      /* the line passed MCP_MAX_LINE; id_hint may be set */
};

struct mcp_item {
    int    kind;
    cJSON *msg;            /* MCP_ITEM_MESSAGE: owned by the item */
    cJSON *id_hint;        /* MCP_ITEM_TOO_LONG: the request id if found, else NULL */
    size_t bytes;          /* the line's length */
    struct mcp_item *next;
};

struct mcp_reader;

/* Starts the reader thread on file descriptor fd. NULL on failure. */
struct mcp_reader *mcp_reader_start(int fd);
/* The next item, waiting for one; NULL once stdin hit EOF and the queue is
 * empty. The caller frees it with mcp_item_free(). */
struct mcp_item *mcp_reader_next(struct mcp_reader *r);
void mcp_item_free(struct mcp_item *it);
/* 1 if the client cancelled the request with this id. */
int mcp_reader_cancelled(struct mcp_reader *r, const cJSON *id);
/* The request with this id is answered (or dropped): forget it, so a late
 * cancel for it is ignored. */
void mcp_reader_done(struct mcp_reader *r, const cJSON *id);
/* Joins the thread (after EOF) and frees everything. */
void mcp_reader_stop(struct mcp_reader *r);

/* A canonical key for a request id ("s:<text>" or "i:<n>"), malloc'd;
 * NULL if the id is not a string or an integer (or out of memory). */
char *mcp_id_key(const cJSON *id);

/* ---- protocol.c ---- */

struct mcp_server {
    struct cli_ctx    *ctx;
    struct cairn      *db;             /* opened on the first tool call */
    struct mcp_reader *rd;             /* for cancellation checks (may be NULL) */
    char   legacy_version[16];         /* negotiated by initialize, "" before */
    int    initialized;                /* notifications/initialized seen */
    int    log_level;                  /* legacy logging/setLevel, -1: none */
    int    delay_ms;                   /* CAIRN_MCP_TEST_DELAY_MS: tests of cancellation */
    int    hooks;                      /* CAIRN_MCP_HOOKS=1: hooks save the turns */
    char   client[64];                 /* clientInfo.name, for saved sessions' meta */
};

/* Handles one item from the reader and appends what to send to `out`:
 * zero or more complete lines, each ending in '\n'. */
void mcp_handle_item(struct mcp_server *s, struct mcp_item *it, struct buf *out);

/* The server instructions (depends on s->hooks). Static storage. */
const char *mcp_instructions(const struct mcp_server *s);

/* ---- tools.c ---- */

/* The tools/list array (a new cJSON array the caller owns). */
cJSON *mcp_tools_list(void);
/* 1 if `name` is one of the tools. */
int mcp_tool_exists(const char *name);

/* What a tool call produced: readable text, and whether it failed. */
struct mcp_tool_result {
    struct buf text;
    int        is_error;
    char       log[200];   /* a one-line summary for log notifications */
};

/* Runs tool `name` with `args` (an object, or NULL for none). meta is the
 * request's params._meta (may be NULL). Never fails at the protocol level:
 * bad arguments and store errors become is_error results. */
void mcp_tool_call(struct mcp_server *s, const char *name, const cJSON *args,
                   const cJSON *meta, struct mcp_tool_result *res);

#endif
