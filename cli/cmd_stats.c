/*
 * cmd_stats.c: `cairn stats [--json]`: counts and sizes of the store.
 */
#include <string.h>

#include "cli.h"

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
