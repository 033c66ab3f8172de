/*
 * cmd_reindex.c: `cairn reindex [--quiet]`: every vector (of any model)
 * deleted and all messages embedded again with the current model
 * (backfill.c, docs/HYBRID.md).
 *
 * `cairn reindex --events [--quiet]`: the dates older messages speak of
 * read, for a store upgraded to schema 15 with more than 30,000 messages
 * (cairn_events_fill; docs/ARCHITECTURE.md, "Time"). In chunks of
 * REINDEX_EVENTS_CHUNK, each its own transaction, so a prompt hook waits
 * on the write lock for about half a second at most and an interrupted
 * run keeps what it read; running it again continues.
 */
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/os.h"

#define REINDEX_EVENTS_CHUNK 20000

static int reindex_events(struct cli_ctx *ctx, int quiet)
{
    struct cairn *db = NULL;
    int64_t done = 0, left = 0, total = 0;
    double t0 = os_now_ms();
    int bar = !quiet && isatty(2), rc;
    if ((rc = cli_open(ctx, 0, &db)))
        return rc;
    do {
        if ((rc = cairn_events_fill(db, REINDEX_EVENTS_CHUNK, &done, &left))) {
            rc = cli_fail(db, "reindex --events", rc);
            goto out;
        }
        total += done;
        if (bar)
            fprintf(stderr, "\r%lld messages read, %lld left ", (long long)total,
                    (long long)left);
    } while (left > 0 && done > 0);
    if (bar)
        fputc('\n', stderr);
    if (!quiet)
        fprintf(stderr, "reindex --events: %s%lld older message%s read for the dates they speak "
                "of in %.1f s\n", total ? "" : "every message was read already: ", (long long)total,
                cli_s(total), (os_now_ms() - t0) / 1000);
out:
    cairn_close(db);
    return rc;
}

int cmd_reindex(int argc, char **argv, struct cli_ctx *ctx)
{
    int events = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--events"))
            events = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            quiet = 1;
    }
    if (events) {
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], "--events") && strcmp(argv[i], "--quiet") && strcmp(argv[i], "-q")) {
                cli_error("usage: cairn reindex [--events] [--quiet]");
                return 2;
            }
        return reindex_events(ctx, quiet);
    }
    return cli_backfill(argc, argv, ctx, 1, 1);
}
