/*
 * claude.c: what `cairn setup`, `cairn doctor` and `cairn import` read of
 * the clients' own files (cli.h): their folders, the hooks cairn installs
 * in Claude Code's settings.json, and whether the cairn plugin is
 * installed.
 *
 * The hooks are the plugin's (plugin/hooks/hooks.json), event for event,
 * so that `cairn setup claude-code` is a true alternative to the plugin;
 * only the form differs: settings.json gets the shell form with the
 * binary's absolute path (the plugin's exec form runs `cairn` from PATH).
 *
 * Installed plugins: Claude Code (2.1.332, checked with `claude plugin
 * install` in a scratch HOME) records them in plugins/installed_plugins.json
 * of its folder:
 *     {"version": 2, "plugins": {"cairn@cairn": [
 *         {"scope": "user", "installPath": "...", "version": "0.1.0"},
 *         {"scope": "project", "projectPath": "/some/project", ...}]}}
 * (version 1 held one object per plugin, no scope: a user install), and
 * whether each is on in "enabledPlugins" of the settings of its scope: a
 * plugin missing there is off (`claude plugin list` says "disabled"). The
 * plugin is cairn's when its name, before the "@marketplace", is "cairn".
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>

#include "cli.h"

const struct claude_hook claude_hooks[] = {
    { "Stop",             "stop",          NULL,                            30 },
    { "UserPromptSubmit", "prompt",        NULL,                            10 },
    { "SessionStart",     "session-start", "startup|resume|clear|compact",  10 },
    /* SessionEnd hooks share 1.5 s unless a settings file asks for more
     * (a plugin's timeout does not count); a little more lets the last
     * turn land on slow disks. */
    { "SessionEnd",       "session-end",   NULL,                            5 },
    { "PreCompact",       "pre-compact",   NULL,                            30 },
    /* every tool: a correction may name any of them (docs/MEMORIES.md);
     * the hook answers in milliseconds and ends itself after 5 s */
    { "PreToolUse",       "pre-tool",      NULL,                            10 },
};
const size_t claude_n_hooks = sizeof claude_hooks / sizeof claude_hooks[0];

int cli_client_path(char *out, size_t n, const char *env, const char *env_sub,
                    const char *home_sub)
{
    const char *e = getenv(env), *home = getenv("HOME");
    int k;
    if (e && *e)
        k = snprintf(out, n, "%s/%s", e, env_sub);
    else if (home && *home)
        k = snprintf(out, n, "%s/%s", home, home_sub);
    else
        return -1;
    return k < 0 || (size_t)k >= n ? -1 : 0;
}

int claude_path(char *out, size_t n, const char *sub)
{
    char home_sub[512];
    int k = snprintf(home_sub, sizeof home_sub, ".claude/%s", sub);
    if (k < 0 || (size_t)k >= sizeof home_sub)
        return -1;
    return cli_client_path(out, n, "CLAUDE_CONFIG_DIR", sub, home_sub);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && !strcmp(s + a - b, suffix);
}

int claude_hook_is_ours(const cJSON *h, const char *arg)
{
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(h, "command");
    const cJSON *args = cJSON_GetObjectItemCaseSensitive(h, "args");
    char tail[64];
    if (!cJSON_IsString(c) || !strstr(c->valuestring, "cairn"))
        return 0;
    if (cJSON_IsArray(args)) {          /* the exec form: command + args */
        const cJSON *a0 = cJSON_GetArrayItem(args, 0), *a1 = cJSON_GetArrayItem(args, 1);
        return cJSON_GetArraySize(args) == 2 && cJSON_IsString(a0) && cJSON_IsString(a1) &&
               !strcmp(a0->valuestring, "hook") && !strcmp(a1->valuestring, arg);
    }
    snprintf(tail, sizeof tail, " hook %s", arg);
    return ends_with(c->valuestring, tail);
}

unsigned claude_hooks_installed(const cJSON *settings)
{
    const cJSON *hooks = cJSON_GetObjectItemCaseSensitive(settings, "hooks");
    unsigned mask = 0;
    for (size_t i = 0; i < claude_n_hooks; i++) {
        const cJSON *g, *h;
        cJSON_ArrayForEach(g, cJSON_GetObjectItemCaseSensitive(hooks, claude_hooks[i].event)) {
            cJSON_ArrayForEach(h, cJSON_GetObjectItemCaseSensitive(g, "hooks")) {
                if (claude_hook_is_ours(h, claude_hooks[i].arg))
                    mask |= 1u << i;
            }
        }
    }
    return mask;
}

/* Parses a JSON file of Claude Code's; NULL when it is missing or broken
 * (neither is ours to report: Claude Code rewrites them). */
static cJSON *read_json(const char *path)
{
    struct stat st;
    size_t len;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return NULL;
    char *t = cli_read_file(path, (size_t)16 << 20, &len);
    cJSON *j = t ? cJSON_ParseWithLength(t, len) : NULL;
    free(t);
    return j;
}

cJSON *claude_settings(char *path, size_t n)
{
    if (claude_path(path, n, "settings.json"))
        return NULL;
    return read_json(path);
}

/* One install record: a user install counts once, project ones add up. */
static void count_install(const cJSON *rec, struct claude_plugin *p)
{
    const cJSON *scope = cJSON_GetObjectItemCaseSensitive(rec, "scope");
    if (!cJSON_IsString(scope) || !strcmp(scope->valuestring, "user"))
        p->user = 1;
    else
        p->projects++;
}

int claude_plugin_find(const cJSON *settings, struct claude_plugin *p)
{
    char path[4096];
    memset(p, 0, sizeof *p);
    if (claude_path(path, sizeof path, "plugins/installed_plugins.json"))
        return 0;
    cJSON *j = read_json(path);
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(j, "plugins")) {
        if (!e->string || strncmp(e->string, "cairn@", 6))
            continue;
        snprintf(p->name, sizeof p->name, "%s", e->string);
        if (cJSON_IsArray(e)) {
            const cJSON *rec;
            cJSON_ArrayForEach(rec, e)
                count_install(rec, p);
        } else if (cJSON_IsObject(e)) {
            count_install(e, p);          /* version 1: one record */
        }
        break;
    }
    cJSON_Delete(j);
    const cJSON *on = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(settings, "enabledPlugins"), p->name);
    p->enabled = p->user && cJSON_IsTrue(on);
    return p->name[0] != '\0';
}
