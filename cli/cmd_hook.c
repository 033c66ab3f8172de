/*
 * cmd_hook.c: `cairn hook stop|session-end|pre-compact`, the Claude Code
 * hooks that save every turn as it happens; `prompt` and `session-start`,
 * which add memory to the context, are in hook_inject.c; `pre-tool`, which
 * puts corrections before a tool call, in hook_pretool.c.
 *
 * Claude Code runs the hook with a JSON object on stdin (session_id,
 * transcript_path, cwd, hook_event_name, ...) and reads its exit code and
 * stdout as a decision: exit 2 on Stop would force Claude to keep going,
 * stdout JSON could change what happens. So whatever goes wrong, this
 * command exits 0 and prints nothing; a failure is one line in
 * ~/.cairn/cairn.log, shown by `cairn doctor`. Saving is the same for the
 * three events: the transcript is read from the offset kept in the store
 * (cairn_import_file), so a hook costs the new turns, not the session.
 *
 * It must never hold the user up: stdin is read with a size cap and a
 * deadline, the store's lock is waited on briefly (a locked store means
 * the next hook saves these turns), and an alarm ends the process if
 * anything still hangs; SQLite leaves the store whole when killed. A hook
 * that finds the store locked keeps its event in the spool (spool.c), and
 * a hook that saved its own turns saves a few spooled events too.
 *
 * Capture is off with CAIRN_CAPTURE=0, or for a project (name or folder)
 * listed in CAIRN_EXCLUDE_PROJECTS (comma-separated). CAIRN_PROJECT names
 * the project of every session saved.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "cli.h"
#include "util/json.h"

#define HOOK_MAX_INPUT ((size_t)8 << 20)  /* last_assistant_message can be long */
#define HOOK_STDIN_MS  3000               /* Claude Code writes stdin at once */
#define HOOK_DRAIN_MAX 8                  /* spooled events a hook saves, at most */

/* The Markdown vaults follow their folders on the write side (docs/VAULTS.md):
 * after a Stop or PreCompact has saved its turns, a vault whose files
 * changed since its last index (size and mtime, no file read) is
 * re-indexed, reading only what changed. The prompt hook never does
 * this: it stays within its time budget. CAIRN_VAULT_FOLLOW=0 turns it
 * off (then `cairn vault reindex` by hand). */
static void follow_vaults(struct cairn *db, const char *event)
{
    const char *off = getenv("CAIRN_VAULT_FOLLOW");
    struct cairn_vault_info *v;
    size_t n;
    if ((off && !strcmp(off, "0")) || cairn_vault_list(db, &v, &n) != CAIRN_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        int64_t changed = 0, checked = 0;
        struct cairn_vault_report r;
        if (cairn_vault_stale(db, v[i].name, 0, &changed, &checked) == CAIRN_OK && !changed)
            continue;
        if (cairn_vault_reindex(db, v[i].name, &r) != CAIRN_OK)
            cli_log("hook %s: vault %s: %s", event, v[i].name, cairn_errmsg(db));
    }
    cairn_vault_list_free(v, n);
}

static void on_alarm(int sig)
{
    (void)sig;
    _exit(0);
}

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 3600000 ? def : (int)x;
}

/* Reads stdin up to the cap, waiting at most HOOK_STDIN_MS in all. NULL
 * (and *why set) on a terminal, a timeout, too much input or an error. */
static char *read_input(size_t *len, const char **why)
{
    size_t n = 0, cap = 65536;
    char *p;
    struct timespec t0, t1;
    if (isatty(0)) {
        *why = "stdin is a terminal, not hook input";
        return NULL;
    }
    p = malloc(cap + 1);
    if (!p) {
        *why = "out of memory";
        return NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &t1);
        long ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        if (ms >= HOOK_STDIN_MS) {
            *why = "timed out reading stdin";
            goto fail;
        }
        struct pollfd pf = { 0, POLLIN, 0 };
        int r = poll(&pf, 1, (int)(HOOK_STDIN_MS - ms));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            *why = r == 0 ? "timed out reading stdin" : "cannot poll stdin";
            goto fail;
        }
        if (n == cap) {
            if (cap >= HOOK_MAX_INPUT) {
                *why = "hook input over 8 MB";
                goto fail;
            }
            char *q = realloc(p, cap * 2 + 1);
            if (!q) {
                *why = "out of memory";
                goto fail;
            }
            p = q;
            cap *= 2;
        }
        ssize_t k = read(0, p + n, cap - n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            *why = "cannot read stdin";
            goto fail;
        }
        if (k == 0)
            break;
        n += (size_t)k;
    }
    p[n] = '\0';
    *len = n;
    return p;
fail:
    free(p);
    return NULL;
}

static const char *str_field(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
    return cJSON_IsString(v) && v->valuestring[0] ? v->valuestring : NULL;
}

/* 1 if the project (its name, or a folder at or above cwd) is listed in
 * CAIRN_EXCLUDE_PROJECTS. */
static int excluded(const char *project, const char *cwd)
{
    const char *list = getenv("CAIRN_EXCLUDE_PROJECTS");
    if (!list || !*list)
        return 0;
    const char *p = list;
    while (*p) {
        size_t n = strcspn(p, ",");
        const char *e = p;
        size_t k = n;
        while (k && (*e == ' ' || *e == '\t'))
            e++, k--;
        while (k && (e[k - 1] == ' ' || e[k - 1] == '\t' || e[k - 1] == '/'))
            k--;
        if (k) {
            if (project && strlen(project) == k && !strncmp(project, e, k))
                return 1;
            if (cwd && e[0] == '/' && !strncmp(cwd, e, k) && (cwd[k] == '\0' || cwd[k] == '/'))
                return 1;
        }
        p += n;
        if (*p == ',')
            p++;
    }
    return 0;
}

int cmd_hook(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *event = argc > 1 ? argv[1] : "";
    char *input = NULL;
    cJSON *j = NULL;
    struct cairn *db = NULL;
    size_t len = 0;
    const char *why = NULL;
    int end = !strcmp(event, "session-end");

    /* Nothing of ours, or of a library, may reach Claude Code's stdout:
     * only the injecting hooks write there, through out_fd. */
    int inject = !strcmp(event, "prompt") || !strcmp(event, "session-start");
    int pretool = !strcmp(event, "pre-tool");
    int out_fd = inject || pretool ? dup(1) : -1;
    int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (devnull >= 0) {
        dup2(devnull, 1);
        dup2(devnull, 2);
        close(devnull);
    }
    signal(SIGALRM, on_alarm);
    signal(SIGPIPE, SIG_IGN);
    /* a tool call waits on this hook: it gets a short leash */
    alarm((unsigned)env_int("CAIRN_HOOK_TIMEOUT", end || pretool ? 5 : 30));

    if (strcmp(event, "stop") && !end && strcmp(event, "pre-compact") &&
        strcmp(event, "subagent-stop") && !inject && !pretool) {
        cli_log("hook %s: unknown hook event (expected stop, session-end, pre-compact, "
                "prompt, session-start, pre-tool)", event);
        goto out;
    }
    const char *cap = getenv("CAIRN_CAPTURE");
    if (!inject && !pretool && cap && !strcmp(cap, "0"))
        goto out;
    input = read_input(&len, &why);
    if (!input) {
        cli_log("hook %s: %s", event, why);
        goto out;
    }
    j = json_parse(input, len, NULL);
    if (!j || !cJSON_IsObject(j)) {
        cli_log("hook %s: stdin is not a JSON object (%zu bytes)", event, len);
        goto out;
    }
    if (inject || pretool) {
        cli_one_shot_heap();
        if (out_fd >= 0 && inject)
            hook_inject(event, j, ctx, out_fd);
        else if (out_fd >= 0)
            hook_pretool(j, ctx, out_fd);
        goto out;
    }
    const char *sid = str_field(j, "session_id"), *tp = str_field(j, "transcript_path");
    const char *cwd = str_field(j, "cwd");
    if (!tp) {
        cli_log("hook %s: session %s: no transcript_path in the hook input", event,
                sid ? sid : "?");
        goto out;
    }
    const char *forced = getenv("CAIRN_PROJECT");
    if (forced && !*forced)
        forced = NULL;
    if (getenv("CAIRN_EXCLUDE_PROJECTS")) {
        struct cairn_project p;
        const char *name = forced;
        if (!name && cwd && cairn_project_of(cwd, &p) == CAIRN_OK)
            name = p.name;
        if (excluded(name, cwd))
            goto out;
    }
    int rc = cli_db_open(cli_db_path(ctx), 0, &db);
    if (rc) {
        cli_log("hook %s: session %s: cannot open the store: %s", event, sid ? sid : "?",
                cairn_errmsg(db));
        goto out;
    }
    cairn_busy_timeout(db, env_int("CAIRN_HOOK_BUSY_MS", end ? 800 : 3000));
    /* Embedding a turn would cost the hook more than its budget: the new
     * messages get vectors from `cairn embed --backfill` (docs/HYBRID.md)
     * and are keyword-only until then. */
    cairn_embed_at_ingest(db, 0);
    struct cairn_import_opts o = CAIRN_IMPORT_OPTS_INIT;
    struct cairn_import_stats st;
    memset(&st, 0, sizeof st);
    o.project = forced;
    o.cwd = cwd;
    o.default_id = sid;
    rc = cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, tp, &o, &st);
    if (rc == CAIRN_BUSY) {
        /* locked past the budget: the event waits in the spool for the
         * next hook or command, so a SessionEnd's last turn is not lost */
        int spooled = spool_put(db, event, sid, tp, cwd, forced) == 0;
        cli_log("hook %s: session %s: %s: %s%s", event, sid ? sid : "?", cairn_errstr(rc),
                cairn_errmsg(db), spooled ? "; spooled for the next hook or command" : "");
        goto out;
    }
    if (rc)
        cli_log("hook %s: session %s: %s: %s", event, sid ? sid : "?", cairn_errstr(rc),
                cairn_errmsg(db));
    else if (st.sessions_failed)
        cli_log("hook %s: session %s: not saved: %s", event, sid ? sid : "?", cairn_errmsg(db));
    if (!rc)
        spool_drain(db, HOOK_DRAIN_MAX);
    if (!rc && !end)
        follow_vaults(db, event);
out:
    cairn_close(db);
    cJSON_Delete(j);
    free(input);
    if (out_fd >= 0)
        close(out_fd);
    return 0;
}
