/*
 * cmd_reindex.c: `cairn reindex [--quiet]`: every vector (of any model)
 * deleted and all messages embedded again with the current model
 * (backfill.c, docs/HYBRID.md).
 */
#include "cli.h"

int cmd_reindex(int argc, char **argv, struct cli_ctx *ctx)
{
    return cli_backfill(argc, argv, ctx, 1, 1);
}
