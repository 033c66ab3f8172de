/*
 * backfill.c: what `cairn embed --backfill` (cmd_embed.c) and `cairn
 * reindex` (cmd_reindex.c) share: give stored messages vectors of the
 * current embedding model (docs/HYBRID.md).
 *
 *   cairn embed --backfill [--quiet]   messages with no vector of the
 *                                      current model get one
 *   cairn reindex [--quiet]            every vector (of any model) is
 *                                      deleted and all messages embedded
 *                                      again with the current model
 *
 * Both can be interrupted: what was written stays, and running the
 * backfill again continues. A progress bar goes to stderr on a terminal.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "util/os.h"

struct embed_progress {
    int      on;
    double   t0, last;
};

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct embed_progress *p = arg;
    double now = os_now_ms() / 1000;
    if (!p->on || (now - p->last < 0.1 && done < total))
        return;
    p->last = now;
    int width = 30, fill = total ? (int)((double)done * width / (double)total) : width;
    double rate = now > p->t0 ? (double)done / (now - p->t0) : 0;
    fprintf(stderr, "\r[%.*s%*s] %llu/%llu messages, %.0f/s ", fill,
            "##############################", width - fill, "", (unsigned long long)done,
            (unsigned long long)total, rate);
    if (done >= total)
        fputc('\n', stderr);
    fflush(stderr);
}

int cli_backfill(int argc, char **argv, struct cli_ctx *ctx, int reindex, int first)
{
    struct cairn *db = NULL;
    struct cairn_embed_stats st;
    struct embed_progress pr;
    int quiet = 0, rc;

    for (int i = first; i < argc; i++) {
        if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
            quiet = 1;
        } else {
            cli_error("usage: cairn %s [--quiet]", reindex ? "reindex" : "embed --backfill");
            return 2;
        }
    }
    if ((rc = cli_open(ctx, 0, &db)))
        return rc;
    memset(&st, 0, sizeof st);
    memset(&pr, 0, sizeof pr);
    pr.on = !quiet && isatty(2);
    pr.t0 = os_now_ms() / 1000;
    rc = cairn_embed_backfill(db, reindex, on_progress, &pr, &st);
    if (rc) {
        rc = cli_fail(db, reindex ? "reindex" : "backfill", rc);
        cairn_close(db);
        return rc;
    }
    if (!quiet)
        fprintf(stderr, "%s: %zu message%s, %zu vector%s of %s in %.1f s\n",
                reindex ? "reindex" : "backfill", st.messages, cli_s((long long)st.messages),
                st.pieces, cli_s((long long)st.pieces), st.model, st.seconds);
    cairn_close(db);
    return 0;
}
