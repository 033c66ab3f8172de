/*
 * cmd_admin.c: `cairn forget`, `cairn stats`, `cairn redact`.
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

int cmd_stats(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn *db;
    struct cairn_stats s;
    char a[40], b[40];
    int rc, json = argc > 1 && !strcmp(argv[1], "--json");
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    rc = cairn_get_stats(db, &s);
    if (rc) {
        rc = cli_fail(db, "stats", rc);
        goto out;
    }
    cairn_format_time(s.first_at, 0, a, sizeof a);
    cairn_format_time(s.last_at, 0, b, sizeof b);
    if (json) {
        printf("{\"store\":\"%s\",\"schema_version\":%d,\"sessions\":%lld,\"messages\":%lld,"
               "\"user_messages\":%lld,\"assistant_messages\":%lld,\"projects\":%lld,"
               "\"content_bytes\":%lld,\"file_bytes\":%lld,\"first\":\"%s\",\"last\":\"%s\"}\n",
               cairn_path(db), s.schema_version, (long long)s.sessions, (long long)s.messages,
               (long long)s.user_messages, (long long)s.assistant_messages,
               (long long)s.projects, (long long)s.content_bytes, (long long)s.file_bytes, a, b);
    } else {
        printf("store          %s (schema %d)\n", cairn_path(db), s.schema_version);
        printf("sessions       %lld in %lld projects\n", (long long)s.sessions,
               (long long)s.projects);
        printf("messages       %lld (%lld user, %lld assistant)\n", (long long)s.messages,
               (long long)s.user_messages, (long long)s.assistant_messages);
        printf("text           %.1f MB verbatim; file %.1f MB\n", s.content_bytes / 1e6,
               s.file_bytes / 1e6);
        if (*a)
            printf("period         %s .. %s\n", a, b);
    }
out:
    cairn_close(db);
    return rc;
}

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
        if (rep.private_removed)
            printf("  %-14s %zu\n", "<private>", rep.private_removed);
        for (size_t i = 0; i < rep.n_kinds; i++)
            printf("  %-14s %zu\n", rep.kinds[i].kind, rep.kinds[i].count);
    }
    cairn_close(db);
    return rc;
}
