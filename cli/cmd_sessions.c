/*
 * cmd_sessions.c: `cairn sessions [--project P] [--limit N] [--json]`:
 * one line a session, oldest first.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"
#include "util/fence.h"

static int print_session_line(void *arg, const struct cairn_session_info *s)
{
    int json = *(int *)arg;
    char ts[40];
    cairn_format_time(s->started_at, 0, ts, sizeof ts);
    if (json) {
        struct buf b = BUF_INIT;
        int first = 1;
        buf_addc(&b, '{');
        cli_json_str_field(&b, "id", s->id, &first);
        cli_json_str_field(&b, "source", s->source, &first);
        cli_json_str_field(&b, "project", s->project, &first);
        cli_json_str_field(&b, "title", s->title, &first);
        cli_json_time_field(&b, "started_at", s->started_at, &first);
        cli_json_time_field(&b, "ended_at", s->ended_at, &first);
        buf_printf(&b, ",\"messages\":%zu}\n", s->n_messages);
        fwrite(b.p, 1, b.n, stdout);
        buf_release(&b);
    } else {
        printf("%-19s  %5zu msgs  ", *ts ? ts : "-", s->n_messages);
        struct buf src = BUF_INIT;
        fence_line(&src, *s->source ? s->source : "-", *s->source ? strlen(s->source) : 1);
        printf("%-12s  ", src.p);
        buf_release(&src);
        cli_print_line(s->id);
        printf("  ");
        cli_print_line(s->title);
        printf("\n");
    }
    return 0;
}

int cmd_sessions(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *project = NULL, *limit = NULL;
    int json = 0, rc;
    struct cairn *db;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--project", &project) ||
            cli_opt(argc, argv, &i, "--limit", &limit))
            continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            i++;
            continue;
        }
        cli_error("sessions: unknown argument %s", argv[i]);
        return 2;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    rc = cairn_sessions(db, project, 0, limit ? strtoul(limit, NULL, 10) : 0,
                        print_session_line, &json);
    if (rc)
        rc = cli_fail(db, "sessions", rc);
    cairn_close(db);
    return rc;
}
