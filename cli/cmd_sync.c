/*
 * cmd_sync.c: `cairn sync`: the store and a PostgreSQL server in step
 * (cairn_sync, docs/POSTGRES.md).
 *
 * The server is --server URL, else $CAIRN_SERVER, else what libpq's PG*
 * variables and ~/.pgpass name. Safe to run from a hook or cron on several
 * machines at once; a sync cut short is finished by the next one.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_sync(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn_sync_opts o = CAIRN_SYNC_OPTS_INIT;
    struct cairn_sync_report r = { 0 };
    struct cairn *db;
    const char *server = getenv("CAIRN_SERVER"), *v;
    int rc, quiet = 0;
    for (int i = 1; i < argc;) {
        if (!strcmp(argv[i], "--push")) {
            o.push = 1, i++;
        } else if (!strcmp(argv[i], "--pull")) {
            o.pull = 1, i++;
        } else if (!strcmp(argv[i], "--private")) {
            o.private_sessions = 1, i++;
        } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            quiet = 1, i++;
        } else if (cli_opt(argc, argv, &i, "--server", &v)) {
            server = v;
        } else if (cli_opt(argc, argv, &i, "--project", &v)) {
            o.project = v;
        } else if (cli_opt(argc, argv, &i, "--batch", &v)) {
            char *end;
            unsigned long n = strtoul(v, &end, 10);
            if (*end || n < 1 || n > 100000) {
                cli_error("--batch takes 1 to 100000 messages, not '%s'", v);
                return CLI_USAGE;
            }
            o.batch = n;
        } else {
            cli_error("sync: unknown argument '%s' (see cairn sync --help)", argv[i]);
            return CLI_USAGE;
        }
    }
    if ((rc = cli_open(ctx, 0, &db)))
        return rc;
    rc = cairn_sync(db, server, &o, &r);
    /* what moved before a failure moved for good: say it either way */
    if (!quiet && (o.push || !o.pull) &&
        (!rc || r.messages_pushed || r.forgets_pushed))
        printf("pushed %zu message%s (%zu already there), %zu new session%s, %zu vector%s, "
               "%zu forget%s\n", r.messages_pushed, cli_s((long long)r.messages_pushed),
               r.messages_present, r.sessions_pushed, cli_s((long long)r.sessions_pushed),
               r.vectors_pushed, cli_s((long long)r.vectors_pushed), r.forgets_pushed,
               cli_s((long long)r.forgets_pushed));
    if (!quiet && (o.pull || !o.push) && (!rc || r.messages_pulled || r.forgets_pulled))
        printf("pulled %zu message%s in %zu session%s, %zu vector%s, %zu forget%s\n",
               r.messages_pulled, cli_s((long long)r.messages_pulled), r.sessions_pulled,
               cli_s((long long)r.sessions_pulled), r.vectors_pulled,
               cli_s((long long)r.vectors_pulled), r.forgets_pulled,
               cli_s((long long)r.forgets_pulled));
    /* memories: a line of their own, only when one moved */
    if (!quiet && (r.memories_pushed || r.memories_present || r.memory_forgets_pushed))
        printf("pushed %zu memor%s (%zu not newer than the server's), %zu removal%s\n",
               r.memories_pushed, r.memories_pushed == 1 ? "y" : "ies", r.memories_present,
               r.memory_forgets_pushed, cli_s((long long)r.memory_forgets_pushed));
    if (!quiet && (r.memories_pulled || r.memory_forgets_pulled))
        printf("pulled %zu memor%s, %zu removal%s\n", r.memories_pulled,
               r.memories_pulled == 1 ? "y" : "ies", r.memory_forgets_pulled,
               cli_s((long long)r.memory_forgets_pulled));
    if (r.memories_refused)     /* not quiet: something on the server is wrong */
        fprintf(stderr, "cairn: sync: left out %zu server row%s that %s no valid memory\n",
                r.memories_refused, cli_s((long long)r.memories_refused),
                r.memories_refused == 1 ? "is" : "are");
    if (rc)
        rc = cli_fail(db, "sync", rc);
    cairn_close(db);
    return rc;
}
