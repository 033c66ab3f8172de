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
 *
 * `cairn reindex --pages [--quiet]`: the store's file rewritten in pages of
 * 16 KB, the size new stores get (cairn_repage; issue 23, hook54): the
 * prompt hook reads a third of the pages. Needs the only connection.
 *
 * `cairn reindex --tiers [--quiet]`: the term tiers rebuilt, every common
 * word's best sessions for the prompt hook's recall (cairn_tier_build;
 * docs/ARCHITECTURE.md, "Term tiers"). One transaction. `cairn add` and
 * `cairn import` build them too when due (cli_tiers_when_due), and the
 * write paths keep them current between builds.
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

static int reindex_tiers(struct cli_ctx *ctx, int quiet)
{
    struct cairn *db = NULL;
    int64_t terms = 0, rows = 0;
    double t0 = os_now_ms();
    int rc;
    if ((rc = cli_open(ctx, 0, &db)))
        return rc;
    if ((rc = cairn_tier_build(db, &terms, &rows)))
        rc = cli_fail(db, "reindex --tiers", rc);
    else if (!quiet)
        fprintf(stderr, "reindex --tiers: %lld common word%s, %lld row%s, in %.1f s\n",
                (long long)terms, cli_s(terms), (long long)rows, cli_s(rows),
                (os_now_ms() - t0) / 1000);
    cairn_close(db);
    return rc;
}

static int reindex_pages(struct cli_ctx *ctx, int quiet)
{
    struct cairn *db = NULL;
    double t0 = os_now_ms();
    int rc, was = 0;
    if ((rc = cli_open(ctx, 0, &db)))
        return rc;
    if ((rc = cairn_repage(db, &was)))
        rc = cli_fail(db, "reindex --pages", rc);
    else if (!quiet && was == 16384)
        fprintf(stderr, "reindex --pages: the store's pages are 16 KB already\n");
    else if (!quiet)
        fprintf(stderr, "reindex --pages: the store rewritten in pages of 16 KB (were %d bytes) "
                "in %.1f s\n", was, (os_now_ms() - t0) / 1000);
    cairn_close(db);
    return rc;
}

int cmd_reindex(int argc, char **argv, struct cli_ctx *ctx)
{
    int events = 0, tiers = 0, pages = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tiers"))
            tiers = 1;
        else if (!strcmp(argv[i], "--events"))
            events = 1;
        else if (!strcmp(argv[i], "--pages"))
            pages = 1;
        else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
            quiet = 1;
    }
    if (events + tiers + pages) {
        const char *what = events ? "--events" : tiers ? "--tiers" : "--pages";
        for (int i = 1; i < argc; i++)
            if (strcmp(argv[i], what) && strcmp(argv[i], "--quiet") && strcmp(argv[i], "-q")) {
                cli_error("usage: cairn reindex [--events | --tiers | --pages] [--quiet]");
                return 2;
            }
        return events ? reindex_events(ctx, quiet) : tiers ? reindex_tiers(ctx, quiet)
               : reindex_pages(ctx, quiet);
    }
    return cli_backfill(argc, argv, ctx, 1, 1);
}
