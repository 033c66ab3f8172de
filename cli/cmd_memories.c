/*
 * cmd_memories.c: `cairn memories list|show|edit|rm|undo|export|import`
 * (export --markdown: the Markdown view),
 * the explicit memories `cairn remember` adds (docs/MEMORIES.md).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"

#define IMPORT_CAP (64u << 20)     /* as cairn_memories_import's own cap */

/* One memory on one line: id, type, scope, text, then tags, links, expiry. */
static void print_memory(const struct cairn_memory *m)
{
    printf("%-5lld %-10s ", (long long)m->id, m->type);
    cli_print_line(*m->scope ? m->scope : "global");
    printf("  ");
    cli_print_line(m->text);
    if (*m->tags) {
        printf("  [");
        cli_print_line(m->tags);
        printf("]");
    }
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

/* The subcommands that take one id, and edit's text after it. */
static int mem_by_id(struct cairn *db, const char *sub, int argc, char **argv)
{
    int64_t id;
    int rc;
    if (argc < 3 || (strcmp(sub, "edit") ? argc != 3 : argc < 4)) {
        cli_error("usage: cairn memories %s ID%s", sub, strcmp(sub, "edit") ? "" : " TEXT");
        return CLI_USAGE;
    }
    if ((rc = cli_memory_id(argv[2], &id)))
        return rc;
    if (!strcmp(sub, "show"))
        return mem_show(db, id);
    if (!strcmp(sub, "edit")) {
        struct buf text = BUF_INIT;
        for (int i = 3; i < argc; i++)
            buf_printf(&text, "%s%s", i > 3 ? " " : "", argv[i]);
        rc = cairn_memory_update(db, id, text.p);
        buf_release(&text);
    } else if (!strcmp(sub, "rm")) {
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
    printf("%s %lld\n", !strcmp(sub, "edit") ? "edited" : !strcmp(sub, "rm") ? "removed"
                                                                             : "undid the last change of",
           (long long)id);
    return 0;
}

int cmd_memories(int argc, char **argv, struct cli_ctx *ctx)
{
    static const char *const subs[] = { "list", "show", "edit", "rm", "undo", "export", "import" };
    const char *sub = argc > 1 ? argv[1] : "list";
    struct cairn *db;
    int rc, known = 0;
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        known |= !strcmp(sub, subs[i]);
    int export_ok = argc == 2 || (argc >= 3 && !strcmp(argv[2], "--markdown") &&
                                  (argc == 3 || (argc == 5 && !strcmp(argv[3], "--scope"))));
    if (!known || (!strcmp(sub, "import") && argc != 3) || (!strcmp(sub, "export") && !export_ok)) {
        cli_error("usage: cairn memories list|show ID|edit ID TEXT|rm ID|undo ID|"
                  "export [--markdown [--scope P]]|import FILE");
        return CLI_USAGE;
    }
    int reads = !strcmp(sub, "list") || !strcmp(sub, "show") || !strcmp(sub, "export");
    if ((rc = cli_open(ctx, reads ? CAIRN_OPEN_NOCREATE : 0, &db)))
        return rc;
    if (!strcmp(sub, "list"))
        rc = mem_list(db, argc, argv);
    else if (!strcmp(sub, "export"))
        rc = mem_export(db, argc, argv);
    else if (!strcmp(sub, "import"))
        rc = mem_import(db, argv[2]);
    else
        rc = mem_by_id(db, sub, argc, argv);
    cairn_close(db);
    return rc;
}
