/*
 * cmd_export.c: `cairn export [--format markdown|jsonl] [--session S]
 * [--project P]`: the whole store (or one session) as Markdown or JSONL.
 *
 * export --format jsonl writes exactly the `cairn add` format (times in
 * UTC with a Z, so a re-add gives the same instants on any machine), so
 * `cairn export --format jsonl | cairn --db new.db add` rebuilds the store.
 * Nothing to export (an empty store, a project with no session) prints
 * nothing and exits 3 after one line on stderr.
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"

/* ---- JSON writer: one session per line (cli_session_jsonl) ---- */

struct jw {
    struct cairn *db;
    struct buf    b;
};

static int jw_session(void *arg, const struct cairn_session_info *s)
{
    struct jw *w = arg;
    buf_reset(&w->b);
    int rc = cli_session_jsonl(w->db, s, &w->b);
    if (rc)
        return rc;
    fwrite(w->b.p, 1, w->b.n, stdout);
    return 0;
}

/* ---- Markdown writer ---- */

static int md_message(void *arg, const struct cairn_message_info *m)
{
    char ts[40];
    (void)arg;
    cairn_format_time(m->at, 0, ts, sizeof ts);
    printf("**%s", m->role);
    if (m->speaker && *m->speaker) {
        printf(" (");
        cli_print_line(m->speaker);
        printf(")");
    }
    printf("**%s%s\n\n", *ts ? " · " : "", ts);
    fwrite(m->content, 1, m->content_len, stdout);
    printf("\n\n");
    return 0;
}

struct mw { struct cairn *db; };

static int md_session(void *arg, const struct cairn_session_info *s)
{
    struct mw *w = arg;
    char ts[40];
    cairn_format_time(s->started_at, 0, ts, sizeof ts);
    printf("## ");
    cli_print_line(*s->title ? s->title : s->id);
    printf("\n\n- session: `");
    cli_print_line(s->id);
    printf("`\n");
    if (*ts)
        printf("- started: %s\n", ts);
    if (*s->source) {
        printf("- source: ");
        cli_print_line(s->source);
        printf("\n");
    }
    if (*s->project) {
        printf("- project: ");
        cli_print_line(s->project);
        printf("\n");
    }
    printf("\n");
    char *id = strdup(s->id);
    if (!id)
        return CAIRN_NOMEM;
    int rc = cairn_messages(w->db, id, 0, -1, md_message, w);
    free(id);
    printf("---\n\n");
    return rc;
}

/* Session ids are collected first: walking messages inside a session walk
 * would nest statements, which SQLite allows, but a list keeps the
 * writers simple and lets --session pick one. */
struct idlist { char **v; size_t n, cap; };

static int collect(void *arg, const struct cairn_session_info *s)
{
    struct idlist *l = arg;
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 64;
        char **nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return CAIRN_NOMEM;
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n] = strdup(s->id);
    if (!l->v[l->n])
        return CAIRN_NOMEM;
    l->n++;
    return 0;
}

int cmd_export(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *format = "markdown", *session = NULL, *project = NULL;
    struct idlist ids = { 0 };
    struct cairn *db = NULL;
    int rc = 0;
    for (int i = 1; i < argc;) {
        if (cli_opt(argc, argv, &i, "--format", &format) ||
            cli_opt(argc, argv, &i, "--session", &session) ||
            cli_opt(argc, argv, &i, "--project", &project))
            continue;
        cli_error("export: unknown argument %s", argv[i]);
        return 2;
    }
    int jsonl = !strcmp(format, "jsonl") || !strcmp(format, "json");
    if (!jsonl && strcmp(format, "markdown") && strcmp(format, "md")) {
        cli_error("export: --format is markdown or jsonl, not %s", format);
        return 2;
    }
    if ((rc = cli_open(ctx, CAIRN_OPEN_READONLY, &db)))
        return rc;
    /* The session asked for is looked up before anything is printed: a
     * failed export leaves stdout empty. */
    if (session)
        rc = cairn_session_get(db, session, collect, &ids);
    else
        rc = cairn_sessions(db, project, 1, 0, collect, &ids);
    if (rc) {
        rc = cli_fail(db, "export", rc);
        goto out;
    }
    if (ids.n == 0) {
        if (project)
            cli_error("export: no session in project \"%s\" (cairn sessions lists them)", project);
        else
            cli_error("export: the store holds no session yet");
        rc = CLI_EMPTY;
        goto out;
    }
    struct jw jw = { db, BUF_INIT };
    struct mw mw = { db };
    if (!jsonl)
        printf("# cairn export\n\n%zu session%s, oldest first.\n\n", ids.n,
               cli_s((long long)ids.n));
    for (size_t i = 0; i < ids.n; i++) {
        int r = cairn_session_get(db, ids.v[i], jsonl ? jw_session : md_session,
                                  jsonl ? (void *)&jw : (void *)&mw);
        if (r) {
            rc = cli_fail(db, "export", r);
            break;
        }
    }
    buf_release(&jw.b);
out:
    for (size_t i = 0; i < ids.n; i++)
        free(ids.v[i]);
    free(ids.v);
    cairn_close(db);
    if (fflush(stdout) != 0) {
        cli_error("export: cannot write the output");
        rc = 1;
    }
    return rc;
}
