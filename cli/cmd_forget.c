/*
 * cmd_forget.c: `cairn forget SESSION...` and `cairn forget --scrub`.
 */
#include <string.h>

#include "cli.h"

/* `cairn forget SESSION...`: each session deleted and wiped (cairn_forget);
 * `cairn forget --scrub`: wipe what earlier deletes left (cairn_scrub). A
 * wipe that a reader held up is an error: the text is still on disk. */
int cmd_forget(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn *db;
    int rc, bad = 0, scrub = argc == 2 && !strcmp(argv[1], "--scrub");
    if (argc < 2 || (!scrub && argv[1][0] == '-')) {
        cli_error("usage: cairn forget SESSION... | cairn forget --scrub");
        return 2;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_NOCREATE, &db)))
        return rc;
    if (scrub) {
        if ((rc = cairn_scrub(db)))
            bad = cli_fail(db, "forget --scrub", rc);
        else
            printf("scrubbed %s\n", cairn_path(db));
    }
    for (int i = 1; !scrub && i < argc; i++) {
        rc = cairn_forget(db, argv[i]);
        if (rc == CAIRN_SCRUB_PENDING) {
            cli_error("forget %s: deleted, but not yet wiped: %s", argv[i], cairn_errmsg(db));
            bad = 1;
        } else if (rc) {
            cli_fail(db, "forget", rc);
            bad = 1;
        } else {
            printf("forgot %s\n", argv[i]);
        }
    }
    cairn_close(db);
    return bad;
}
