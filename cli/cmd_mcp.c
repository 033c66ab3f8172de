/*
 * cmd_mcp.c: `cairn mcp`, the Model Context Protocol server over stdio
 * (docs/MCP.md). A client (Claude Code, Claude Desktop, Cursor, Codex,
 * Gemini CLI...) starts it and talks JSON-RPC 2.0, one message per line.
 *
 * stdout carries nothing but protocol messages, each written whole and
 * flushed; every diagnostic goes to stderr. The server exits when stdin
 * ends (or stdout is gone), after answering what was already read.
 * The parts live in cli/mcp/: reader.c (stdin, line cap, cancellation),
 * protocol.c (both protocol eras), tools.c (the tools).
 *
 * Test hook: CAIRN_MCP_TEST_DELAY_MS=N makes every tools/call wait N ms
 * first (checking for cancellation), so tests can cancel a call in flight.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mcp/mcp.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage: cairn [--db PATH] mcp\n"
            "\n"
            "Runs the MCP server on stdin/stdout (JSON-RPC, one message per line) for an AI\n"
            "client to start, e.g.  claude mcp add cairn -- cairn mcp\n"
            "Tools: recall, save_conversation, list_sessions, get_conversation,\n"
            "forget_session. Protocols 2024-11-05 .. 2025-11-25 and 2026-07-28.\n"
            "\n"
            "Environment:\n"
            "  CAIRN_DB           the store (default ~/.cairn/memory.db)\n"
            "  CAIRN_SESSION_ID   the current session, left out of recall\n"
            "                     (default: CLAUDE_CODE_SESSION_ID)\n"
            "  CAIRN_MCP_HOOKS=1  hooks save the turns: don't ask the model to save\n"
            "See docs/MCP.md.\n");
}

/* Writes all of b to stdout; -1 if stdout is gone. */
static int send_out(const struct buf *b)
{
    if (!b->n)
        return 0;
    if (fwrite(b->p, 1, b->n, stdout) != b->n || fflush(stdout))
        return -1;
    return 0;
}

int cmd_mcp(int argc, char **argv, struct cli_ctx *ctx)
{
    struct mcp_server s;
    struct mcp_item *it;
    struct buf out;
    int gone = 0;
    const char *v;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        cli_error("mcp: unknown argument %s", argv[i]);
        usage(stderr);
        return 2;
    }
    /* A client that goes away must not kill us mid-write: EPIPE instead. */
    signal(SIGPIPE, SIG_IGN);

    memset(&s, 0, sizeof s);
    s.ctx = ctx;
    s.log_level = -1;
    if ((v = getenv("CAIRN_MCP_TEST_DELAY_MS")) && *v) {
        char *end;
        long ms = strtol(v, &end, 10);
        if (!*end && ms > 0 && ms <= 60000)
            s.delay_ms = (int)ms;
    }
    s.hooks = (v = getenv("CAIRN_MCP_HOOKS")) && !strcmp(v, "1");

    s.rd = mcp_reader_start(0);
    if (!s.rd) {
        cli_error("mcp: cannot start the reader thread");
        return 1;
    }
    fprintf(stderr, "cairn mcp %s: ready (the store opens on the first tool call)\n",
            CAIRN_VERSION);
    buf_init(&out, 0);
    while ((it = mcp_reader_next(s.rd))) {
        buf_reset(&out);
        mcp_handle_item(&s, it, &out);
        mcp_item_free(it);
        if (out.err) {
            buf_reset(&out);
            buf_adds(&out, "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32603,"
                           "\"message\":\"Internal error: the response did not fit in "
                           "memory\"}}\n");
        }
        if (send_out(&out)) {
            gone = 1;
            break;
        }
    }
    buf_release(&out);
    /* After EOF the reader thread has ended; if stdout went away first it
     * may still sit in read(), and exiting the process ends it. */
    if (!gone)
        mcp_reader_stop(s.rd);
    cairn_close(s.db);
    if (gone)
        fprintf(stderr, "cairn mcp: stdout closed; exiting\n");
    return 0;
}
