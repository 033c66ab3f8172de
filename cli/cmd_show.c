/*
 * cmd_show.c: `cairn show SESSION [--from N --to M] [--json]`: one
 * session's messages verbatim. A range that holds none of them is said on
 * stderr (exit 3), a range that ends before it starts is bad usage.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"

struct shown { int json; size_t n; };

static int show_message(void *arg, const struct cairn_message_info *m)
{
    struct shown *sh = arg;
    int json = sh->json;
    sh->n++;
    if (json) {
        struct buf b = BUF_INIT;
        int first = 0;
        buf_printf(&b, "{\"position\":%d", m->position);
        cli_json_str_field(&b, "id", m->id, &first);
        cli_json_str_field(&b, "role", m->role, &first);
        cli_json_str_field(&b, "speaker", m->speaker, &first);
        buf_adds(&b, ",\"content\":");
        buf_add_json_str(&b, m->content, m->content_len);
        cli_json_time_field(&b, "at", m->at, &first);
        buf_adds(&b, "}\n");
        fwrite(b.p, 1, b.n, stdout);
        buf_release(&b);
        return 0;
    }
    char ts[40];
    cairn_format_time(m->at, 0, ts, sizeof ts);
    printf("[%d] %s", m->position, m->role);
    if (m->speaker && *m->speaker) {
        printf(" (");
        cli_print_line(m->speaker);
        printf(")");
    }
    printf("\n");
    if (*ts)
        printf("    %s\n", ts);
    fwrite(m->content, 1, m->content_len, stdout);
    printf("\n\n");
    return 0;
}

/* A position given to --from or --to: a whole number >= 0, else -1. */
static int position_arg(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    return end == s || *end || v < 0 || v > 0x7fffffff ? -1 : (int)v;
}

static int count_messages(void *arg, const struct cairn_session_info *s)
{
    *(size_t *)arg = s->n_messages;
    return 0;
}

/* Nothing was shown although the session exists: say why, exit 3. */
static int show_empty(struct cairn *db, const char *session, int from)
{
    size_t n = 0;
    cairn_session_get(db, session, count_messages, &n);
    if (n == 0)
        cli_error("show: session %s has no messages", session);
    else
        cli_error("show: session %s has %zu message%s (positions 0 to %zu): none from position %d",
                  session, n, cli_s((long long)n), n - 1, from);
    return CLI_EMPTY;
}

int cmd_show(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *session = NULL, *from_s = NULL, *to_s = NULL;
    struct shown sh = { 0, 0 };
    int rc, from = 0, to = -1;
    struct cairn *db;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--from", &from_s) || cli_opt(argc, argv, &i, "--to", &to_s))
            continue;
        if (!strcmp(argv[i], "--json")) {
            sh.json = 1;
            i++;
            continue;
        }
        if (argv[i][0] == '-' || session) {
            cli_error("show: unexpected argument %s", argv[i]);
            return CLI_USAGE;
        }
        session = argv[i++];
    }
    if (!session) {
        cli_error("usage: cairn show SESSION [--from N] [--to M] [--json]");
        return CLI_USAGE;
    }
    if ((from_s && (from = position_arg(from_s)) < 0) || (to_s && (to = position_arg(to_s)) < 0)) {
        cli_error("show: --from and --to take a position, a whole number from 0");
        return CLI_USAGE;
    }
    if (to >= 0 && from > to) {
        cli_error("show: --from %d is after --to %d: no message is in that range", from, to);
        return CLI_USAGE;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    rc = cairn_messages(db, session, from, to, show_message, &sh);
    if (rc)
        rc = cli_fail(db, "show", rc);
    else if (sh.n == 0)
        rc = show_empty(db, session, from);
    cairn_close(db);
    return rc;
}
