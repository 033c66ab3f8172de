/*
 * cmd_remember.c: `cairn remember [--type T] [--scope P] [--tag X]...
 * [--replaces ID] [--contradicts ID] [--related ID] [--ttl 7d]
 * [--session S] [--message M] TEXT...`: one explicit memory
 * (docs/MEMORIES.md); its id on stdout. A correction takes
 * [--severity p0|p1|p2] [--when-keyword K]... [--when-path GLOB]...
 * [--when-command PATTERN]... too (cli_when_opt, shared with `cairn
 * memories review --accept`).
 */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "util/buf.h"

int64_t cli_parse_ttl(const char *s)
{
    char *end;
    long long n = strtoll(s, &end, 10);
    int64_t unit;
    if (end == s || n <= 0 || n > 100000 || end[0] == '\0' || end[1] != '\0')
        return -1;
    switch (*end) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default:  return -1;
    }
    return (int64_t)n * unit;
}

int cli_memory_id(const char *s, int64_t *id)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || v <= 0) {
        cli_error("'%s' is not a memory id (a number: cairn memories list)", s);
        return CLI_USAGE;
    }
    *id = v;
    return 0;
}

void cli_when_release(struct cli_when *c)
{
    buf_release(&c->keywords);
    buf_release(&c->paths);
    buf_release(&c->commands);
}

/* "p0".."p2" or "0".."2"; -1 when it is neither. */
static int parse_severity(const char *s)
{
    if (*s == 'p' || *s == 'P')
        s++;
    return s[0] >= '0' && s[0] <= '2' && !s[1] ? s[0] - '0' : -1;
}

int cli_when_opt(int argc, char **argv, int *i, struct cli_when *c)
{
    const char *v;
    struct buf *list = NULL;
    if (cli_opt(argc, argv, i, "--severity", &v)) {
        if ((c->w.severity = parse_severity(v)) < 0) {
            cli_error("--severity %s: p0 (the most severe), p1 or p2", v);
            return -1;
        }
        c->any = 1;
        return 1;
    }
    if (cli_opt(argc, argv, i, "--when-keyword", &v))
        list = &c->keywords;
    else if (cli_opt(argc, argv, i, "--when-path", &v))
        list = &c->paths;
    else if (cli_opt(argc, argv, i, "--when-command", &v))
        list = &c->commands;
    else
        return 0;
    if (strchr(v, '\n')) {
        cli_error("%s: one item an option (no line break)", argv[*i - 2]);
        return -1;
    }
    buf_printf(list, "%s%s", list->n ? "\n" : "", v);
    /* a list given, even as "" (which empties it on `memories edit`), is
     * not NULL (which keeps it there) */
    *(list == &c->keywords ? &c->w.keywords : list == &c->paths ? &c->w.paths
                                                                 : &c->w.commands) =
        list->p ? list->p : "";
    c->any = 1;
    return 1;
}

/* What remember adds beside the memory itself: the links it asks for. */
struct remember_links {
    int64_t contradicts, related;
};

static int add_links(struct cairn *db, int64_t id, const struct remember_links *l)
{
    int rc = CAIRN_OK;
    if (l->contradicts)
        rc = cairn_memory_link(db, id, l->contradicts, "contradicts");
    if (!rc && l->related)
        rc = cairn_memory_link(db, id, l->related, "related_to");
    return rc;
}

int cmd_remember(int argc, char **argv, struct cli_ctx *ctx)
{
    struct cairn_memory_new m = { 0 };
    struct remember_links links = { 0, 0 };
    struct cli_when when = CLI_WHEN_INIT;
    struct buf tags = BUF_INIT, text = BUF_INIT;
    struct cairn *db = NULL;
    const char *v;
    int64_t id = 0;
    int rc = CLI_USAGE;
    for (int i = 1; i < argc; ) {
        if (cli_opt(argc, argv, &i, "--type", &m.type) ||
            cli_opt(argc, argv, &i, "--scope", &m.scope) ||
            cli_opt(argc, argv, &i, "--session", &m.session) ||
            cli_opt(argc, argv, &i, "--message", &m.message))
            continue;
        int w = cli_when_opt(argc, argv, &i, &when);
        if (w < 0)
            goto out;
        if (w)
            continue;
        if (cli_opt(argc, argv, &i, "--tag", &v)) {
            buf_printf(&tags, "%s%s", tags.n ? "," : "", v);
        } else if (cli_opt(argc, argv, &i, "--ttl", &v)) {
            if ((m.ttl = cli_parse_ttl(v)) < 0) {
                cli_error("--ttl %s: a number and a unit, s m h d or w (7d)", v);
                goto out;
            }
        } else if (cli_opt(argc, argv, &i, "--replaces", &v)) {
            if (cli_memory_id(v, &m.replaces))
                goto out;
        } else if (cli_opt(argc, argv, &i, "--contradicts", &v)) {
            if (cli_memory_id(v, &links.contradicts))
                goto out;
        } else if (cli_opt(argc, argv, &i, "--related", &v)) {
            if (cli_memory_id(v, &links.related))
                goto out;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("remember: unknown option %s (cairn remember --help)", argv[i]);
            goto out;
        } else {
            /* the words of TEXT may come unquoted */
            buf_printf(&text, "%s%s", text.n ? " " : "", argv[i++]);
        }
    }
    if (!text.n) {
        cli_error("usage: cairn remember [--type T] [--scope P] [--tag X] [--replaces ID] "
                  "[--ttl 7d] TEXT");
        goto out;
    }
    int correction = m.type && !strcmp(m.type, "correction");
    if (when.any && !correction) {
        cli_error("remember: --severity and --when-* are for --type correction");
        goto out;
    }
    m.text = text.p;
    m.tags = tags.n ? tags.p : NULL;
    if ((rc = cli_open(ctx, 0, &db)))
        goto out;
    if ((rc = correction ? cairn_correction_add(db, &m, &when.w, &id)
                         : cairn_memory_add(db, &m, &id))) {
        rc = cli_fail(db, "remember", rc);
        goto out;
    }
    if ((rc = add_links(db, id, &links))) {
        /* all or nothing: a memory without the link asked for is not what
         * the user said */
        rc = cli_fail(db, "remember", rc);
        cairn_memory_remove(db, id);
        goto out;
    }
    printf("remembered %lld\n", (long long)id);
out:
    cairn_close(db);
    buf_release(&tags);
    buf_release(&text);
    cli_when_release(&when);
    return rc;
}
