/*
 * hook_pretool.c: the corrections in the hooks (docs/MEMORIES.md): the
 * SessionStart "watch for" lines (hook_watch_for, called by hook_inject.c)
 * and `cairn hook pre-tool`, Claude Code's PreToolUse hook:
 * before a tool runs, the corrections of this project (and the global
 * ones) that apply to the call are put before the user or the model
 * (docs/MEMORIES.md, "Before acting").
 *
 *   a p0 correction applies      permissionDecision "deny", the reason (its
 *                                text) goes to the model
 *   a p1 or p2 one applies       "ask": the user confirms, seeing the reason
 *   none applies                 no output: Claude Code's own permissions
 *
 * We chose deny for p0 because a p0 is what the user said must never happen;
 * ask for the rest, so that a correction that matched too widely costs one
 * confirmation, not a refused tool. With CAIRN_PRETOOL_RISKY=1 a risky
 * command (force push, publish, rm -rf, DROP TABLE, a deploy, a version
 * bump) is asked about even when no correction applies; it is off unless
 * the user turns it on.
 *
 * Like every hook it never blocks: a missing or locked store, bad JSON,
 * anything wrong means no decision and exit 0 (cmd_hook.c). The decision
 * is written before the counters (retrieved, heeded) are, so a busy store
 * delays nothing but the count, which is then lost (a line in cairn.log).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/param.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "cli.h"
#include "util/buf.h"
#include "util/fence.h"
#include "util/wilson.h"

#define PRETOOL_MAX_SHOWN  3      /* corrections named in one reason */
#define PRETOOL_REASON_MAX 2000   /* bytes of the reason */
#define PRETOOL_BUSY_MS    300    /* a locked store: the count waits this long */

/* Command patterns a risky call matches (CAIRN_PRETOOL_RISKY=1), with the
 * same matcher as a correction's --when-command. */
static const char RISKY_COMMANDS[] =
    "git push --force\ngit push -f\ngit push --force-with-lease\ngit reset --hard\n"
    "npm publish\nyarn publish\npnpm publish\ncargo publish\ntwine upload\ngem push\n"
    "rm -rf\nrm -fr\nrm -r\n"
    "kubectl apply\nkubectl delete\nhelm install\nhelm upgrade\nterraform apply\n"
    "terraform destroy\nfly deploy\nflyctl deploy\nvercel --prod\nnetlify deploy\n"
    "firebase deploy\ngcloud deploy\nserverless deploy\nsls deploy\n"
    "npm version\nyarn version\npnpm version\ncargo release\nbump2version\nbumpversion\n"
    "poetry version\n";
/* Keywords of a risky call, matched in the command as a correction's are. */
static const char RISKY_KEYWORDS[] = "DROP TABLE\nDROP DATABASE\nTRUNCATE TABLE\n";

#define WATCH_MAX_LINES    5      /* corrections at session start */
#define WATCH_TEXT_MAX     300    /* bytes of one correction's text there */

static const char WATCH_INTRO[] =
    "Corrections the user confirmed in earlier sessions, kept in cairn memory: watch for "
    "these (p0 is the most severe; quoted as the user kept them):";

/* ---- the heed rate and the watch-for lines ---- */

void cli_heed_rate(struct buf *b, const struct cairn_correction *c)
{
    int64_t n = c->heeded + c->recurred;
    double lo, hi;
    if (!n) {
        buf_adds(b, "not met yet");
        return;
    }
    wilson95(c->heeded, n, &lo, &hi);
    buf_printf(b, "heeded %lld of %lld = %.0f%%, 95%% CI %.0f-%.0f%%", (long long)c->heeded,
               (long long)n, 100.0 * (double)c->heeded / (double)n, 100 * lo, 100 * hi);
}

static int64_t last_change(const struct cairn_correction *c)
{
    return c->last_seen != CAIRN_NO_TIME && c->last_seen > c->updated ? c->last_seen
                                                                       : c->updated;
}

static double heed_rate(const struct cairn_correction *c)
{
    int64_t n = c->heeded + c->recurred;
    return n ? (double)c->heeded / (double)n : 1.0;
}

/* Severity, then the most recently met or changed, then the least heeded. */
static int watch_order(const void *a, const void *b)
{
    const struct cairn_correction *x = *(const struct cairn_correction *const *)a;
    const struct cairn_correction *y = *(const struct cairn_correction *const *)b;
    if (x->severity != y->severity)
        return x->severity - y->severity;
    if (last_change(x) != last_change(y))
        return last_change(x) > last_change(y) ? -1 : 1;
    if (heed_rate(x) != heed_rate(y))
        return heed_rate(x) < heed_rate(y) ? -1 : 1;
    return x->id > y->id ? -1 : x->id < y->id;
}

void hook_watch_for(struct cairn *db, const char *project, struct buf *out)
{
    struct cairn_corrections *l = NULL;
    const struct cairn_correction **v = NULL;
    struct buf lines = BUF_INIT;
    size_t n;
    if (cairn_corrections_list(db, project, &l) || !(n = cairn_corrections_count(l)))
        goto out;
    if (!(v = malloc(n * sizeof *v)))
        goto out;
    for (size_t i = 0; i < n; i++)
        v[i] = cairn_corrections_at(l, i);
    qsort(v, n, sizeof *v, watch_order);
    for (size_t i = 0; i < MIN(n, (size_t)WATCH_MAX_LINES); i++) {
        size_t len = strlen(v[i]->text), cut = MIN(len, (size_t)WATCH_TEXT_MAX);
        while (cut < len && cut && ((unsigned char)v[i]->text[cut] & 0xC0) == 0x80)
            cut--;                                  /* on a UTF-8 edge */
        buf_printf(&lines, "- watch for [p%d]: ", v[i]->severity);
        fence_line(&lines, v[i]->text, cut);
        buf_adds(&lines, cut < len ? " … (" : " (");
        cli_heed_rate(&lines, v[i]);
        buf_adds(&lines, ")\n");
    }
    if (n > WATCH_MAX_LINES)
        buf_printf(&lines, "(%zu more: cairn memories list --type correction)\n",
                   n - WATCH_MAX_LINES);
    if (!lines.err)
        fence_wrap(out, WATCH_INTRO, lines.p, lines.n);
out:
    buf_release(&lines);
    free(v);
    cairn_corrections_free(l);
}

/* ---- pre-tool ---- */

static const char *str_in(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* The call from the hook input: tool, Bash command, the paths it names. */
static void read_call(const cJSON *in, struct cairn_tool_call *call, const char **paths)
{
    static const char *const path_fields[] = { "file_path", "path", "notebook_path" };
    const cJSON *ti = cJSON_GetObjectItemCaseSensitive(in, "tool_input");
    memset(call, 0, sizeof *call);
    call->tool = str_in(in, "tool_name");
    call->paths = paths;
    if (!cJSON_IsObject(ti))
        return;
    call->command = str_in(ti, "command");
    for (size_t i = 0; i < sizeof path_fields / sizeof path_fields[0]; i++)
        if ((paths[call->n_paths] = str_in(ti, path_fields[i])))
            call->n_paths++;
}

/* "cairn correction 3 (p0): TEXT" lines, one line each, no fence tag. */
static void add_reason(struct buf *b, const struct cairn_correction *c)
{
    buf_printf(b, "%scairn correction %lld (p%d): ", b->n ? "\n" : "", (long long)c->id,
               c->severity);
    fence_line(b, c->text, strlen(c->text));
}

static void emit_decision(int out_fd, const char *decision, struct buf *reason)
{
    if (reason->n > PRETOOL_REASON_MAX) {
        size_t cut = PRETOOL_REASON_MAX;
        while (cut && ((unsigned char)reason->p[cut] & 0xC0) == 0x80)
            cut--;                                  /* on a UTF-8 edge */
        buf_truncate(reason, cut);
        buf_adds(reason, " …");
    }
    cJSON *o = cJSON_CreateObject(), *h = cJSON_AddObjectToObject(o, "hookSpecificOutput");
    cJSON_AddStringToObject(h, "hookEventName", "PreToolUse");
    cJSON_AddStringToObject(h, "permissionDecision", decision);
    cJSON_AddStringToObject(h, "permissionDecisionReason", reason->p);
    char *s = cJSON_PrintUnformatted(o);
    if (s) {
        size_t n = strlen(s);
        if (write(out_fd, s, n) != (ssize_t)n || write(out_fd, "\n", 1) != 1)
            cli_log("hook pre-tool: cannot write the decision");
        cJSON_free(s);
    }
    cJSON_Delete(o);
}

static int risky_on(void)
{
    const char *v = getenv("CAIRN_PRETOOL_RISKY");
    return v && !strcmp(v, "1");
}

/* 1 if the call is risky in itself (RISKY_COMMANDS, RISKY_KEYWORDS). */
static int risky(const struct cairn_tool_call *call)
{
    struct cairn_correction c;
    memset(&c, 0, sizeof c);
    c.commands = RISKY_COMMANDS;
    c.keywords = RISKY_KEYWORDS;
    c.paths = "";
    struct cairn_tool_call bash = *call;
    bash.tool = NULL;                           /* the command's words only */
    bash.n_paths = 0;
    return call->command && cairn_correction_applies(&c, &bash);
}

/* After the decision is out: retrieved and heeded for each correction it
 * named, through a writable handle of its own. */
static void count_hits(struct cli_ctx *ctx, const int64_t *hit, size_t n)
{
    struct cairn *db = NULL;
    if (cli_db_open(cli_db_path(ctx), CAIRN_OPEN_NOCREATE, &db)) {
        cli_log("hook pre-tool: corrections not counted: %s", cairn_errmsg(db));
        goto out;
    }
    cairn_busy_timeout(db, PRETOOL_BUSY_MS);
    for (size_t i = 0; i < n; i++)
        if (cairn_correction_count(db, hit[i], CAIRN_CORRECTION_RETRIEVED |
                                                   CAIRN_CORRECTION_HEEDED))
            cli_log("hook pre-tool: correction %lld not counted: %s", (long long)hit[i],
                    cairn_errmsg(db));
out:
    cairn_close(db);
}

void hook_pretool(const void *input, struct cli_ctx *ctx, int out_fd)
{
    const cJSON *in = input;
    const char *paths[3];
    struct cairn_tool_call call;
    struct cairn *db = NULL;
    struct cairn_corrections *l = NULL;
    struct buf reason = BUF_INIT;
    int64_t hit[PRETOOL_MAX_SHOWN * 8];
    size_t n_hit = 0, shown = 0;
    int deny = 0;
    char project[1024];

    const char *off = getenv("CAIRN_PRETOOL");
    if (off && !strcmp(off, "0"))
        return;
    read_call(in, &call, paths);
    if (!call.tool)
        return;
    hook_project(in, project, sizeof project);
    /* read-only, as the prompt hook: the decision costs no write lock */
    if (cli_db_open(cli_db_path(ctx), CAIRN_OPEN_READONLY, &db))
        goto risky_only;                        /* no store: nothing learnt yet */
    if (cairn_corrections_list(db, project, &l)) {
        cli_log("hook pre-tool: %s", cairn_errmsg(db));
        goto risky_only;
    }
    /* most severe first (the list's order): the first ones named decide */
    for (size_t i = 0; i < cairn_corrections_count(l); i++) {
        const struct cairn_correction *c = cairn_corrections_at(l, i);
        if (!cairn_correction_applies(c, &call) || n_hit == sizeof hit / sizeof hit[0])
            continue;
        hit[n_hit++] = c->id;
        deny |= c->severity == 0;
        if (shown++ < PRETOOL_MAX_SHOWN)
            add_reason(&reason, c);
    }
    if (shown > PRETOOL_MAX_SHOWN)
        buf_printf(&reason, "\n(and %zu more: cairn memories list --type correction)",
                   shown - PRETOOL_MAX_SHOWN);
    if (n_hit) {
        emit_decision(out_fd, deny ? "deny" : "ask", &reason);
        count_hits(ctx, hit, n_hit);
        goto out;
    }
risky_only:
    if (risky_on() && risky(&call)) {
        buf_adds(&reason, "cairn: a risky command (CAIRN_PRETOOL_RISKY=1 asks before force "
                          "pushes, publishing, rm -rf, DROP TABLE, deploys and version bumps)");
        emit_decision(out_fd, "ask", &reason);
    }
out:
    buf_release(&reason);
    cairn_corrections_free(l);
    cairn_close(db);
}
