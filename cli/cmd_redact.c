/*
 * cmd_redact.c: `cairn redact [--dry-run]`: mask secrets in what is stored.
 */
#include <string.h>

#include "cli.h"

int cmd_redact(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn *db;
    struct cairn_redact_report rep;
    int rc, dry = argc > 1 && !strcmp(argv[1], "--dry-run");
    if (argc > 1 && !dry) {
        cli_error("usage: cairn redact [--dry-run]");
        return 2;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_NOCREATE, &db)))
        return rc;
    rc = cairn_redact_store(db, dry, &rep);
    if (rc) {
        rc = cli_fail(db, "redact", rc);
    } else {
        printf("%s %zu of %zu messages, %zu of %zu sessions\n",
               dry ? "would change" : "changed", rep.messages_changed, rep.messages_seen,
               rep.sessions_changed, rep.sessions_seen);
        if (rep.notes_seen || rep.memories_seen)
            printf("  %zu of %zu note pages and sections, %zu of %zu memory rows\n",
                   rep.notes_changed, rep.notes_seen, rep.memories_changed, rep.memories_seen);
        if (rep.private_removed)
            printf("  %-14s %zu\n", "<private>", rep.private_removed);
        for (size_t i = 0; i < rep.n_kinds; i++)
            printf("  %-14s %zu\n", rep.kinds[i].kind, rep.kinds[i].count);
    }
    cairn_close(db);
    return rc;
}
