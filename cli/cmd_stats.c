/*
 * cmd_stats.c: `cairn stats [--json]`: counts and sizes of the store.
 */
#include <string.h>

#include "cli.h"

/* A size a person reads at a glance: bytes, KB, MB or GB (powers of 1000,
 * as du --si): a small store is "48.2 KB", not "0.0 MB". */
static void format_size(long long n, char *out, size_t cap)
{
    if (n < 1000)
        snprintf(out, cap, "%lld byte%s", n, cli_s(n));
    else if (n < 1000000)
        snprintf(out, cap, "%.1f KB", n / 1e3);
    else if (n < 1000000000)
        snprintf(out, cap, "%.1f MB", n / 1e6);
    else
        snprintf(out, cap, "%.1f GB", n / 1e9);
}

/* "7 in 3 projects", "2 in 1 project, 1 in none", "3, none in a project" */
static void print_sessions(long long sessions, long long projects, long long loose)
{
    printf("sessions       %lld", sessions);
    if (loose == sessions && sessions)
        printf(", none in a project\n");
    else if (loose)
        printf(" (%lld in %lld project%s, %lld in none)\n", sessions - loose, projects,
               cli_s(projects), loose);
    else
        printf(" in %lld project%s\n", projects, cli_s(projects));
}

int cmd_stats(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn *db;
    struct cairn_stats s;
    char a[40], b[40], text[32], file[32];
    int rc, json = argc > 1 && !strcmp(argv[1], "--json");
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    if ((rc = cairn_get_stats(db, &s))) {
        rc = cli_fail(db, "stats", rc);
        goto out;
    }
    cairn_format_time(s.first_at, 0, a, sizeof a);
    cairn_format_time(s.last_at, 0, b, sizeof b);
    if (json) {
        printf("{\"store\":\"%s\",\"schema_version\":%d,\"sessions\":%lld,\"messages\":%lld,"
               "\"user_messages\":%lld,\"assistant_messages\":%lld,\"projects\":%lld,"
               "\"sessions_without_project\":%lld,\"content_bytes\":%lld,\"file_bytes\":%lld,"
               "\"first\":\"%s\",\"last\":\"%s\"}\n",
               cairn_path(db), s.schema_version, (long long)s.sessions, (long long)s.messages,
               (long long)s.user_messages, (long long)s.assistant_messages,
               (long long)s.projects, (long long)s.loose_sessions, (long long)s.content_bytes,
               (long long)s.file_bytes, a, b);
    } else {
        format_size(s.content_bytes, text, sizeof text);
        format_size(s.file_bytes, file, sizeof file);
        printf("store          %s (schema %d)\n", cairn_path(db), s.schema_version);
        print_sessions(s.sessions, s.projects, s.loose_sessions);
        printf("messages       %lld (%lld user, %lld assistant)\n", (long long)s.messages,
               (long long)s.user_messages, (long long)s.assistant_messages);
        printf("text           %s verbatim; file %s\n", text, file);
        if (*a)
            printf("period         %s .. %s\n", a, b);
    }
out:
    cairn_close(db);
    return rc;
}
