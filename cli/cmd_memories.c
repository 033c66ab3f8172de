/*
 * cmd_memories.c: `cairn memories list|show|edit|rm|undo|export|import`,
 * the explicit memories `cairn remember` adds (docs/MEMORIES.md; export
 * --markdown: the Markdown view), and for
 * corrections `review` (the candidates the prompt hook recognised),
 * `stats` (their counters and heed rates) and `recognise` (the recogniser
 * on prompts from stdin, for measuring it: scripts/corrections-eval.sh).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"
#include "util/json.h"
#include <cjson/cJSON.h>

#define IMPORT_CAP (64u << 20)     /* as cairn_memories_import's own cap */
#define RECOGNISE_LINE_MAX (1u << 20)   /* one prompt on stdin */

/* A listing line's start: id, kind, scope, text; then, when there are
 * any, "  [what]" (tags, a candidate's command). */
static void print_head(int64_t id, const char *kind, const char *scope, const char *text,
                       const char *label, const char *what)
{
    printf("%-5lld %-10s ", (long long)id, kind);
    cli_print_line(*scope ? scope : "global");
    printf("  ");
    cli_print_line(text);
    if (*what) {
        printf("  [%s", label);
        cli_print_line(what);
        printf("]");
    }
}

/* One memory on one line: id, type, scope, text, then tags, links, expiry. */
static void print_memory(const struct cairn_memory *m)
{
    print_head(m->id, m->type, m->scope, m->text, "", m->tags);
    if (*m->links)
        printf("  (%s)", m->links);
    if (m->expires != CAIRN_NO_TIME) {
        char ts[40];
        cairn_format_time(m->expires, 0, ts, sizeof ts);
        printf("  expires %s", ts);
    }
    printf("\n");
}

static void print_json(const struct cairn_memory *m)
{
    struct buf b = BUF_INIT;
    int first = 0;
    buf_printf(&b, "{\"id\":%lld", (long long)m->id);
    cli_json_str_field(&b, "type", m->type, &first);
    cli_json_str_field(&b, "text", m->text, &first);
    cli_json_str_field(&b, "scope", m->scope, &first);
    cli_json_str_field(&b, "tags", m->tags, &first);
    cli_json_time_field(&b, "created", m->created, &first);
    cli_json_time_field(&b, "updated", m->updated, &first);
    cli_json_time_field(&b, "expires", m->expires, &first);
    cli_json_str_field(&b, "links", m->links, &first);
    buf_adds(&b, "}\n");
    fwrite(b.p, 1, b.n, stdout);
    buf_release(&b);
}

static int mem_list(struct cairn *db, int argc, char **argv)
{
    const char *scope = NULL, *type = NULL;
    int json = 0, all = 0, rc;
    struct cairn_memories *l;
    for (int i = 2; i < argc; ) {
        if (cli_opt(argc, argv, &i, "--scope", &scope) || cli_opt(argc, argv, &i, "--type", &type))
            continue;
        if (!strcmp(argv[i], "--json"))
            json = 1;
        else if (!strcmp(argv[i], "--all"))
            all = 1;
        else {
            cli_error("memories list: unknown argument %s", argv[i]);
            return CLI_USAGE;
        }
        i++;
    }
    if ((rc = cairn_memory_list(db, scope, type, all, &l)))
        return cli_fail(db, "memories list", rc);
    size_t n = cairn_memories_count(l);
    for (size_t i = 0; i < n; i++)
        (json ? print_json : print_memory)(cairn_memories_at(l, i));
    cairn_memories_free(l);
    if (!n) {
        cli_error("memories: none%s%s (cairn remember TEXT adds one)", scope ? " in scope " : "",
                  scope ? scope : "");
        return CLI_EMPTY;
    }
    return 0;
}

/* `show ID`: the memory, its provenance, then each earlier state. */
static int mem_show(struct cairn *db, int64_t id)
{
    struct cairn_memories *l, *hist;
    int rc;
    if ((rc = cairn_memory_get(db, id, &l)))
        return cli_fail(db, "memories show", rc);
    const struct cairn_memory *m = cairn_memories_at(l, 0);
    print_memory(m);
    if (*m->session) {
        printf("  from session ");
        cli_print_line(m->session);
        if (*m->message) {
            printf(", message ");
            cli_print_line(m->message);
        }
        printf("\n");
    }
    if (m->superseded_by)
        printf("  superseded by %lld\n", (long long)m->superseded_by);
    if (!(rc = cairn_memory_history(db, id, &hist))) {
        for (size_t i = 0; i < cairn_memories_count(hist); i++) {
            const struct cairn_memory *h = cairn_memories_at(hist, i);
            char ts[40];
            cairn_format_time(h->updated, 0, ts, sizeof ts);
            printf("  %s %s: ", ts, h->op);
            if (!strcmp(h->op, "link"))
                printf("%s", h->links);
            else
                cli_print_line(h->text);
            printf("\n");
        }
        cairn_memories_free(hist);
    }
    cairn_memories_free(l);
    return rc ? cli_fail(db, "memories show", rc) : 0;
}

/* export: JSONL; export --markdown [--scope P]: the Markdown view. */
static int mem_export(struct cairn *db, int argc, char **argv)
{
    char *out;
    size_t n;
    int md = argc > 2, rc;
    if (md)
        rc = cairn_memories_markdown(db, argc == 5 ? argv[4] : NULL, &out, &n);
    else
        rc = cairn_memories_export(db, &out, &n);
    if (rc)
        return cli_fail(db, "memories export", rc);
    fwrite(out, 1, n, stdout);
    free(out);
    return 0;
}

static int mem_import(struct cairn *db, const char *path)
{
    size_t len, added = 0;
    char *text = cli_read_file(path, IMPORT_CAP, &len);
    if (!text)
        return CLI_FAILED;
    int rc = cairn_memories_import(db, text, len, &added);
    free(text);
    if (rc)
        return cli_fail(db, "memories import", rc);
    printf("imported %zu memor%s\n", added, added == 1 ? "y" : "ies");
    return 0;
}

/* ---- corrections ---- */

/* `review`: the candidates; `review --accept ID [--severity p1] [--when-*]`,
 * `review --reject ID`. */
static int mem_review(struct cairn *db, int argc, char **argv)
{
    struct cli_when when = CLI_WHEN_INIT;
    const char *accept = NULL, *reject = NULL;
    struct cairn_corrections *l = NULL;
    int64_t id = 0, mem = 0;
    int rc = CLI_USAGE;
    for (int i = 2; i < argc; ) {
        int w = cli_when_opt(argc, argv, &i, &when);
        if (w < 0)
            goto out;
        if (w || cli_opt(argc, argv, &i, "--accept", &accept) ||
            cli_opt(argc, argv, &i, "--reject", &reject))
            continue;
        cli_error("memories review: unknown argument %s", argv[i]);
        goto out;
    }
    if ((accept && reject) || (when.any && !accept)) {
        cli_error("usage: cairn memories review [--accept ID [--severity p1] [--when-...]] | "
                  "[--reject ID]");
        goto out;
    }
    if ((accept || reject) && (rc = cli_memory_id(accept ? accept : reject, &id)))
        goto out;
    if (accept) {
        if ((rc = cairn_candidate_accept(db, id, &when.w, &mem)))
            rc = cli_fail(db, "memories review --accept", rc);
        else
            printf("accepted %lld as correction %lld\n", (long long)id, (long long)mem);
        goto out;
    }
    if (reject) {
        rc = cairn_candidate_reject(db, id);
        if (rc && rc != CAIRN_SCRUB_PENDING)
            rc = cli_fail(db, "memories review --reject", rc);
        else
            printf("rejected %lld%s\n", (long long)id, rc ? " (not yet wiped: cairn forget "
                                                            "--scrub)" : "");
        rc = rc ? CLI_FAILED : 0;
        goto out;
    }
    if ((rc = cairn_candidates_list(db, &l))) {
        rc = cli_fail(db, "memories review", rc);
        goto out;
    }
    for (size_t i = 0; i < cairn_corrections_count(l); i++) {
        const struct cairn_correction *c = cairn_corrections_at(l, i);
        print_head(c->id, c->rule, c->scope, c->text, "command: ", c->commands);
        if (c->recurs)
            printf("  (repeats correction %lld)", (long long)c->recurs);
        printf("\n");
    }
    if (!cairn_corrections_count(l)) {
        cli_error("memories review: no candidate corrections waiting");
        rc = CLI_EMPTY;
    }
out:
    cairn_corrections_free(l);
    cli_when_release(&when);
    return rc;
}

/* `stats [--scope P]`: each correction's counters and heed rate. */
static int mem_stats(struct cairn *db, int argc, char **argv)
{
    const char *scope = NULL;
    struct cairn_corrections *l;
    struct buf b = BUF_INIT;
    int rc;
    for (int i = 2; i < argc; ) {
        if (cli_opt(argc, argv, &i, "--scope", &scope))
            continue;
        cli_error("memories stats: unknown argument %s", argv[i]);
        return CLI_USAGE;
    }
    if ((rc = cairn_corrections_list(db, scope, &l)))
        return cli_fail(db, "memories stats", rc);
    size_t n = cairn_corrections_count(l);
    if (n)
        printf("id    sev retrieved heeded recurred  heed rate\n");
    for (size_t i = 0; i < n; i++) {
        const struct cairn_correction *c = cairn_corrections_at(l, i);
        buf_reset(&b);
        cli_heed_rate(&b, c);
        printf("%-5lld p%d  %9lld %6lld %8lld  %s  ", (long long)c->id, c->severity,
               (long long)c->retrieved, (long long)c->heeded, (long long)c->recurred, b.p);
        cli_print_line(c->text);
        printf("\n");
    }
    buf_release(&b);
    cairn_corrections_free(l);
    if (!n) {
        cli_error("memories stats: no corrections%s%s", scope ? " in scope " : "",
                  scope ? scope : "");
        return CLI_EMPTY;
    }
    return 0;
}

/* `recognise`: one prompt a line on stdin (a JSON string, or an object
 * with "text"); prints the rule that fired, or "-", a line each. */
static int mem_recognise(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        cJSON *j = (size_t)n <= RECOGNISE_LINE_MAX ? json_parse(line, (size_t)n, NULL) : NULL;
        const cJSON *t = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "text") : j;
        const char *rule = NULL;
        if (cJSON_IsString(t) &&
            cairn_correction_recognise(t->valuestring, strlen(t->valuestring), &rule, NULL))
            printf("%s\n", rule);
        else
            printf("-\n");
        cJSON_Delete(j);
    }
    free(line);
    return 0;
}

/* `edit ID [TEXT] [--severity ...] [--when-...]...`: a --when-* option
 * replaces that list ("" empties it), one not given stays; the correction's
 * fields go first, as they are refused for a memory of another type. -1
 * after a usage error. */
static int mem_edit(struct cairn *db, int64_t id, int argc, char **argv)
{
    struct cli_when when = CLI_WHEN_INIT;
    struct buf text = BUF_INIT;
    int rc = -1;
    for (int i = 3; i < argc; ) {
        int w = cli_when_opt(argc, argv, &i, &when);
        if (w < 0)
            goto out;
        if (!w)     /* the words of TEXT may come unquoted */
            buf_printf(&text, "%s%s", text.n ? " " : "", argv[i++]);
    }
    if (!text.n && !when.any) {
        cli_error("memories edit %lld: a new TEXT, or a correction's --severity or --when-*",
                  (long long)id);
        goto out;
    }
    rc = when.any ? cairn_correction_set(db, id, &when.w) : CAIRN_OK;
    if (!rc && text.n)
        rc = cairn_memory_update(db, id, text.p);
out:
    buf_release(&text);
    cli_when_release(&when);
    return rc;
}

/* The subcommands that take one id, and edit's text after it. */
static int mem_by_id(struct cairn *db, const char *sub, int argc, char **argv)
{
    int64_t id;
    int rc;
    if (argc < 3 || (strcmp(sub, "edit") ? argc != 3 : argc < 4)) {
        cli_error("usage: cairn memories %s ID%s", sub, strcmp(sub, "edit") ? ""
                  : " [TEXT] [--severity p0|p1|p2] [--when-keyword K]... [--when-path GLOB]... "
                    "[--when-command PATTERN]...");
        return CLI_USAGE;
    }
    if ((rc = cli_memory_id(argv[2], &id)))
        return rc;
    if (!strcmp(sub, "show"))
        return mem_show(db, id);
    if (!strcmp(sub, "edit")) {
        rc = mem_edit(db, id, argc, argv);
        if (rc < 0)
            return CLI_USAGE;    } else if (!strcmp(sub, "rm")) {
        rc = cairn_memory_remove(db, id);
    } else {
        rc = cairn_memory_undo(db, id);
    }
    if (rc == CAIRN_SCRUB_PENDING) {
        cli_error("memories rm %lld: removed, but not yet wiped: %s", (long long)id,
                  cairn_errmsg(db));
        return CLI_FAILED;
    }
    if (rc) {
        char what[32];
        snprintf(what, sizeof what, "memories %s", sub);
        return cli_fail(db, what, rc);
    }
    printf("%s %lld\n",
           !strcmp(sub, "edit") ? "edited"
           : !strcmp(sub, "rm") ? "removed"
                                : "undid the last change of",
           (long long)id);
    return 0;
}

int cmd_memories(int argc, char **argv, struct cli_ctx *ctx)
{
    static const char *const subs[] = { "list", "show", "edit", "rm", "undo", "export", "import",
                                        "review", "stats", "recognise" };
    const char *sub = argc > 1 ? argv[1] : "list";
    struct cairn *db;
    int rc, known = 0;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        known |= !strcmp(sub, subs[i]);
    int export_ok = argc == 2 || (argc >= 3 && !strcmp(argv[2], "--markdown") &&
                                  (argc == 3 || (argc == 5 && !strcmp(argv[3], "--scope"))));
    if (!known || (!strcmp(sub, "import") && argc != 3) || (!strcmp(sub, "export") && !export_ok)) {
        cli_error("usage: cairn memories list|show ID|edit ID TEXT|rm ID|undo ID|"
                  "export [--markdown [--scope P]]|import FILE|review|stats|recognise");
        return CLI_USAGE;
    }
    if (!strcmp(sub, "recognise"))
        return mem_recognise();                 /* no store */
    int reads = !strcmp(sub, "list") || !strcmp(sub, "show") || !strcmp(sub, "export") ||
                !strcmp(sub, "stats") || (!strcmp(sub, "review") && argc == 2);
    if ((rc = cli_open(ctx, reads ? CAIRN_OPEN_NOCREATE : 0, &db)))
        return rc;
    if (!strcmp(sub, "list"))
        rc = mem_list(db, argc, argv);
    else if (!strcmp(sub, "export"))
        rc = mem_export(db, argc, argv);
    else if (!strcmp(sub, "import"))
        rc = mem_import(db, argv[2]);
    else if (!strcmp(sub, "review"))
        rc = mem_review(db, argc, argv);
    else if (!strcmp(sub, "stats"))
        rc = mem_stats(db, argc, argv);
    else
        rc = mem_by_id(db, sub, argc, argv);
    cairn_close(db);
    return rc;
}
