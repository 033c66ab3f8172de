/*
 * cmd_vault.c: `cairn vault add|list|rm|reindex`, folders of Markdown
 * notes recalled beside the conversations (docs/VAULTS.md).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char vault_usage[] =
    "usage: cairn vault add PATH [--name N] [--exclude GLOB]... | list [--json] | rm NAME\n"
    "       | reindex [NAME]";

/* The summary of one (re)index, and the files it left out. */
static void report(const char *what, const char *name, const struct cairn_vault_report *r)
{
    printf("%s %s: %lld file%s, %lld added, %lld changed, %lld unchanged, %lld removed, "
           "%lld section%s written", what, name, (long long)r->files, cli_s(r->files),
           (long long)r->added, (long long)r->changed, (long long)r->unchanged,
           (long long)r->removed, (long long)r->sections, cli_s(r->sections));
    if (r->excluded)
        printf(", %lld excluded", (long long)r->excluded);
    if (r->vectors)
        printf(", %lld embedded", (long long)r->vectors);
    printf("\n");
    if (r->binary || r->too_big || r->unreadable)
        cli_error("note: %lld binary, %lld over 4 MB and %lld unreadable file%s not indexed:",
                  (long long)r->binary, (long long)r->too_big, (long long)r->unreadable,
                  cli_s(r->binary + r->too_big + r->unreadable));
    /* one line each: the paths are the user's, printed as they are */
    for (const char *p = r->skipped; *p;) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        fprintf(stderr, "  %.*s\n", n, p);
        p += n + (nl != NULL);
    }
}

static int vault_add(struct cairn *db, int argc, char **argv)
{
    const char *path = NULL, *name = NULL, *v;
    struct buf ex = BUF_INIT;
    int rc = CLI_USAGE;
    for (int i = 2; i < argc;) {
        if (cli_opt(argc, argv, &i, "--name", &name))
            continue;
        if (cli_opt(argc, argv, &i, "--exclude", &v)) {
            if (strchr(v, '\n')) {
                cli_error("vault add: an --exclude glob holds a line break");
                goto out;
            }
            if (ex.n)
                buf_addc(&ex, '\n');
            buf_adds(&ex, v);
            continue;
        }
        if (argv[i][0] == '-' || path) {
            cli_error("%s", vault_usage);
            goto out;
        }
        path = argv[i++];
    }
    if (!path) {
        cli_error("%s", vault_usage);
        goto out;
    }
    if (ex.err) {
        cli_error("vault add: out of memory");
        rc = CLI_FAILED;
        goto out;
    }
    struct cairn_vault_report r;
    if ((rc = cairn_vault_add(db, path, name, ex.n ? ex.p : NULL, &r))) {
        rc = cli_fail(db, "vault add", rc);
        goto out;
    }
    report("added", r.name, &r);
out:
    buf_release(&ex);
    return rc;
}

static void json_str(const char *k, const char *v)
{
    struct buf b = BUF_INIT;
    buf_add_json_str(&b, v, strlen(v));
    printf("\"%s\":%s", k, b.err ? "\"\"" : b.p);
    buf_release(&b);
}

static int vault_list(struct cairn *db, int json)
{
    struct cairn_vault_info *v;
    size_t n;
    int rc = cairn_vault_list(db, &v, &n);
    if (rc)
        return cli_fail(db, "vault list", rc);
    if (!n) {
        cli_error("no vault (cairn vault add PATH)");
        return CLI_EMPTY;
    }
    for (size_t i = 0; i < n; i++) {
        char at[40] = "never";
        if (v[i].indexed_at != CAIRN_NO_TIME)
            cairn_format_time(v[i].indexed_at, 1, at, sizeof at);
        if (json) {
            printf("{");
            json_str("name", v[i].name);
            printf(",");
            json_str("root", v[i].root);
            printf(",");
            json_str("excludes", v[i].excludes);
            printf(",\"indexed_at\":\"%s\",\"docs\":%lld,\"sections\":%lld,\"bytes\":%lld}\n",
                   at, (long long)v[i].docs, (long long)v[i].sections, (long long)v[i].bytes);
            continue;
        }
        printf("%s\t%s\t%lld note%s, %lld section%s, %lld bytes, indexed %s\n", v[i].name,
               v[i].root, (long long)v[i].docs, cli_s(v[i].docs), (long long)v[i].sections,
               cli_s(v[i].sections), (long long)v[i].bytes, at);
    }
    cairn_vault_list_free(v, n);
    return CLI_OK;
}

/* `cairn vault ...`: opens the store (creating it for add) and runs one
 * subcommand. */
int cmd_vault(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn *db;
    const char *sub = argc > 1 ? argv[1] : "";
    int rc, json = argc == 3 && !strcmp(argv[2], "--json");
    int ok = (!strcmp(sub, "add") && argc >= 3) ||
             (!strcmp(sub, "list") && (argc == 2 || json)) ||
             (!strcmp(sub, "rm") && argc == 3 && argv[2][0] != '-') ||
             (!strcmp(sub, "reindex") && argc <= 3 && (argc == 2 || argv[2][0] != '-'));
    if (!ok) {
        cli_error("%s", vault_usage);
        return CLI_USAGE;
    }
    if ((rc = cli_open(ctx, strcmp(sub, "add") ? CAIRN_OPEN_NOCREATE : 0, &db)))
        return rc;
    if (!strcmp(sub, "add")) {
        rc = vault_add(db, argc, argv);
    } else if (!strcmp(sub, "list")) {
        rc = vault_list(db, json);
    } else if (!strcmp(sub, "rm")) {
        rc = cairn_vault_rm(db, argv[2]);
        if (rc == CAIRN_SCRUB_PENDING) {
            cli_error("vault rm %s: removed, but not yet wiped: %s", argv[2], cairn_errmsg(db));
            rc = CLI_FAILED;
        } else if (rc) {
            rc = cli_fail(db, "vault rm", rc);
        } else {
            printf("removed vault %s\n", argv[2]);
        }
    } else {
        struct cairn_vault_report r;
        const char *name = argc == 3 ? argv[2] : NULL;
        if ((rc = cairn_vault_reindex(db, name, &r)))
            rc = cli_fail(db, "vault reindex", rc);
        else
            report("reindexed", name ? name : "all vaults", &r);
    }
    cairn_close(db);
    return rc;
}
