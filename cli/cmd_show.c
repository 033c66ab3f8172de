/*
 * cmd_show.c: `cairn show SESSION [--from N --to M] [--json]`: one
 * session's messages verbatim.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"

static int show_message(void *arg, const struct cairn_message_info *m)
{
    int json = *(int *)arg;
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

int cmd_show(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *session = NULL, *from = NULL, *to = NULL;
    int json = 0, rc;
    struct cairn *db;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--from", &from) || cli_opt(argc, argv, &i, "--to", &to))
            continue;
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            i++;
            continue;
        }
        if (argv[i][0] == '-' || session) {
            cli_error("show: unexpected argument %s", argv[i]);
            return 2;
        }
        session = argv[i++];
    }
    if (!session) {
        cli_error("usage: cairn show SESSION [--from N --to M] [--json]");
        return 2;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    rc = cairn_messages(db, session, from ? atoi(from) : 0, to ? atoi(to) : -1,
                        show_message, &json);
    if (rc)
        rc = cli_fail(db, "show", rc);
    cairn_close(db);
    return rc;
}
