/*
 * cmd_sessions.c: `cairn sessions [--project P] [--limit N] [--json]`:
 * one line a session, newest first, under a line naming the columns; none
 * is said on stderr (exit 3).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"
#include "util/fence.h"

/* Column widths of the text listing; a longer value pushes the rest of
 * its line right rather than being cut (a project name must stay whole:
 * it is what --project takes). */
#define W_SOURCE  12
#define W_PROJECT 20

struct listing { int json; size_t n; };

/* s (or "-" when empty) padded to width w, with no fence tag in it. */
static void print_field(const char *s, int w)
{
    struct buf b = BUF_INIT;
    if (!s || !*s)
        s = "-";
    fence_line(&b, s, strlen(s));
    printf("%-*s  ", w, b.p ? b.p : "");
    buf_release(&b);
}

static int print_session_line(void *arg, const struct cairn_session_info *s)
{
    struct listing *l = arg;
    char ts[40];
    cairn_format_time(s->started_at, 0, ts, sizeof ts);
    if (l->json) {
        struct buf b = BUF_INIT;
        int first = 1;
        buf_addc(&b, '{');
        cli_json_session_fields(&b, s, &first);
        buf_printf(&b, ",\"messages\":%zu}\n", s->n_messages);
        fwrite(b.p, 1, b.n, stdout);
        buf_release(&b);
    } else {
        if (l->n == 0)
            printf("%-19s  %8s  %-*s  %-*s  %s  %s\n", "started", "messages", W_SOURCE, "source",
                   W_PROJECT, "project", "session", "title");
        printf("%-19s  %8zu  ", *ts ? ts : "-", s->n_messages);
        print_field(s->source, W_SOURCE);
        print_field(s->project, W_PROJECT);
        cli_print_line(s->id);
        printf("  ");
        cli_print_line(s->title);
        printf("\n");
    }
    l->n++;
    return 0;
}

/* An empty listing: why, on stderr; exit 3. */
static int no_sessions(const char *project)
{
    if (project)
        cli_error("sessions: no session in project \"%s\" (`cairn sessions` lists every "
                  "session with its project)", project);
    else
        cli_error("sessions: the store holds no session yet (cairn add, cairn import)");
    return CLI_EMPTY;
}

int cmd_sessions(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *project = NULL, *limit = NULL;
    struct listing l = { 0, 0 };
    int rc;
    struct cairn *db;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--project", &project) ||
            cli_opt(argc, argv, &i, "--limit", &limit))
            continue;
        if (!strcmp(argv[i], "--json")) {
            l.json = 1;
            i++;
            continue;
        }
        cli_error("sessions: unknown argument %s", argv[i]);
        return CLI_USAGE;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    rc = cairn_sessions(db, project, 0, limit ? strtoul(limit, NULL, 10) : 0,
                        print_session_line, &l);
    if (rc)
        rc = cli_fail(db, "sessions", rc);
    else if (l.n == 0)
        rc = no_sessions(project);
    cairn_close(db);
    return rc;
}
