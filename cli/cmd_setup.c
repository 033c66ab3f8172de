/*
 * cmd_setup.c: `cairn setup claude-code [--dry-run] [--remove] [--import]`:
 * installs the capture hooks in Claude Code's user settings
 * (~/.claude/settings.json, or $CLAUDE_CONFIG_DIR/settings.json).
 *
 * The settings file is the user's: we merge into it and never clobber.
 * Every key we do not know is kept in its place; only the plugin's five
 * handlers are appended (Stop, UserPromptSubmit, SessionStart, SessionEnd,
 * PreCompact: claude_hooks in claude.c), each in a matcher group of its
 * own, and each only when no handler of ours is there yet for its event.
 * With the cairn plugin enabled, nothing is installed: both would save
 * every turn twice. --remove takes out
 * exactly the handlers whose command is ours (a `cairn` binary running
 * `hook <event>`) and the groups and event lists that this left empty.
 * Before writing, the old file is copied to settings.json.cairn-bak; the
 * new one is written to a temporary file and renamed over, so Claude Code
 * never reads half a file. A symlinked settings.json stays a symlink: the
 * change is written to the file it points to. --dry-run prints the change as a unified diff.
 *
 * The hooks use the shell form ("'/path/cairn' hook stop"), which every
 * Claude Code version runs; the absolute path makes them work whatever
 * PATH Claude Code was started with.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cjson/cJSON.h>

#include "cli.h"
#include "util/buf.h"

extern char **environ;

/* Appends s to b in single quotes for sh. */
static void sh_quote(struct buf *b, const char *s)
{
    buf_addc(b, '\'');
    for (; *s; s++) {
        if (*s == '\'')
            buf_adds(b, "'\\''");
        else
            buf_addc(b, *s);
    }
    buf_addc(b, '\'');
}

/* JSON the way Claude Code writes it (two spaces, one member a line), so
 * the diff shows our change and not a reformatting. Scalars are printed
 * by cJSON. */
static void emit(struct buf *b, const cJSON *v, int depth)
{
    if ((cJSON_IsObject(v) || cJSON_IsArray(v)) && v->child) {
        int obj = cJSON_IsObject(v);
        buf_addc(b, obj ? '{' : '[');
        buf_addc(b, '\n');
        for (const cJSON *c = v->child; c; c = c->next) {
            for (int i = 0; i <= depth; i++)
                buf_adds(b, "  ");
            if (obj) {
                buf_add_json_str(b, c->string ? c->string : "", c->string ? strlen(c->string) : 0);
                buf_adds(b, ": ");
            }
            emit(b, c, depth + 1);
            buf_adds(b, c->next ? ",\n" : "\n");
        }
        for (int i = 0; i < depth; i++)
            buf_adds(b, "  ");
        buf_addc(b, obj ? '}' : ']');
        return;
    }
    char *p = cJSON_PrintUnformatted(v);
    if (!p) {
        b->err = BUF_NOMEM;
        return;
    }
    buf_adds(b, p);
    cJSON_free(p);
}

static char *pretty(const cJSON *root)
{
    struct buf b;
    buf_init(&b, 0);
    emit(&b, root, 0);
    buf_addc(&b, '\n');
    if (b.err) {
        buf_release(&b);
        return NULL;
    }
    return buf_detach(&b, NULL);
}

/* Adds our handlers; returns how many were added, -1 on a settings shape
 * we will not touch. */
static int merge(cJSON *root, const char *exe, const char *db, const char **why)
{
    cJSON *hooks = cJSON_GetObjectItemCaseSensitive(root, "hooks");
    int added = 0;
    if (!hooks) {
        hooks = cJSON_AddObjectToObject(root, "hooks");
    } else if (!cJSON_IsObject(hooks)) {
        *why = "\"hooks\" is not an object";
        return -1;
    }
    for (size_t i = 0; i < claude_n_hooks; i++) {
        const struct claude_hook *d = &claude_hooks[i];
        cJSON *arr = cJSON_GetObjectItemCaseSensitive(hooks, d->event);
        if (!arr) {
            arr = cJSON_AddArrayToObject(hooks, d->event);
        } else if (!cJSON_IsArray(arr)) {
            *why = "an event in \"hooks\" is not a list";
            return -1;
        }
        int have = 0;
        const cJSON *g, *h;
        cJSON_ArrayForEach(g, arr) {
            const cJSON *hs = cJSON_GetObjectItemCaseSensitive(g, "hooks");
            cJSON_ArrayForEach(h, hs)
                have |= claude_hook_is_ours(h, d->arg);
        }
        if (have)
            continue;
        struct buf cmd;
        buf_init(&cmd, 0);
        sh_quote(&cmd, exe);
        if (db) {
            buf_adds(&cmd, " --db ");
            sh_quote(&cmd, db);
        }
        buf_printf(&cmd, " hook %s", d->arg);
        cJSON *grp = cJSON_CreateObject();
        if (d->matcher)
            cJSON_AddStringToObject(grp, "matcher", d->matcher);
        cJSON *list = cJSON_AddArrayToObject(grp, "hooks");
        cJSON *hd = cJSON_CreateObject();
        cJSON_AddStringToObject(hd, "type", "command");
        cJSON_AddStringToObject(hd, "command", cmd.err ? "cairn" : cmd.p);
        cJSON_AddNumberToObject(hd, "timeout", d->timeout);
        cJSON_AddItemToArray(list, hd);
        cJSON_AddItemToArray(arr, grp);
        buf_release(&cmd);
        added++;
    }
    return added;
}

/* Removes our handlers and what that left empty; returns how many. */
static int unmerge(cJSON *root)
{
    cJSON *hooks = cJSON_GetObjectItemCaseSensitive(root, "hooks");
    int removed = 0;
    if (!cJSON_IsObject(hooks))
        return 0;
    for (size_t i = 0; i < claude_n_hooks; i++) {
        const struct claude_hook *d = &claude_hooks[i];
        cJSON *arr = cJSON_GetObjectItemCaseSensitive(hooks, d->event);
        if (!cJSON_IsArray(arr))
            continue;
        int before = removed;
        for (int gi = cJSON_GetArraySize(arr) - 1; gi >= 0; gi--) {
            cJSON *g = cJSON_GetArrayItem(arr, gi);
            cJSON *hs = cJSON_GetObjectItemCaseSensitive(g, "hooks");
            if (!cJSON_IsArray(hs))
                continue;
            int took = 0;
            for (int hi = cJSON_GetArraySize(hs) - 1; hi >= 0; hi--) {
                if (claude_hook_is_ours(cJSON_GetArrayItem(hs, hi), d->arg)) {
                    cJSON_DeleteItemFromArray(hs, hi);
                    removed++;
                    took = 1;
                }
            }
            if (took && cJSON_GetArraySize(hs) == 0)
                cJSON_DeleteItemFromArray(arr, gi);
        }
        if (removed > before && cJSON_GetArraySize(arr) == 0)
            cJSON_DeleteItemFromObjectCaseSensitive(hooks, d->event);
    }
    if (removed && !hooks->child)
        cJSON_DeleteItemFromObjectCaseSensitive(root, "hooks");
    return removed;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.cairn-tmp.%ld", path, (long)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    size_t n = strlen(text), off = 0;
    while (off < n) {
        ssize_t w = write(fd, text + off, n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            close(fd);
            unlink(tmp);
            return -1;
        }
        off += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

/*
 * The file to write for path: path itself, or, when path is a symlink
 * (dotfiles kept in a repository and linked into ~/.claude), the file it
 * points to. Renaming our new file over the link would replace the link
 * with a regular file and cut the settings off from the repository; the
 * new text goes to the target instead, by the same rename in the target's
 * folder. A link to nothing is refused. 0 on success.
 */
static int link_target(const char *path, char *out, size_t n)
{
    struct stat st;
    char real[PATH_MAX];
    if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) {
        snprintf(out, n, "%s", path);
        return 0;
    }
    if (!realpath(path, real)) {
        cli_error("setup: %s is a symlink to a file that cannot be reached (%s); fix the link "
                  "first (nothing changed)", path, strerror(errno));
        return -1;
    }
    if ((size_t)snprintf(out, n, "%s", real) >= n) {
        cli_error("setup: path too long: %s", real);
        return -1;
    }
    return 0;
}

/* diff -u old new on stdout (labels a/b). */
static void show_diff(const char *path, const char *old, const char *new_text)
{
    char a[] = "/tmp/cairn-setup-XXXXXX", b[] = "/tmp/cairn-setup-XXXXXX";
    int fa = mkstemp(a), fb = mkstemp(b);
    if (fa < 0 || fb < 0) {
        fputs(new_text, stdout);
        goto out;
    }
    if (write(fa, old, strlen(old)) < 0 || write(fb, new_text, strlen(new_text)) < 0) {
        fputs(new_text, stdout);
        goto out;
    }
    fflush(stdout);
    char la[4200], lb[4200];
    snprintf(la, sizeof la, "%s (now)", path);
    snprintf(lb, sizeof lb, "%s (after cairn setup)", path);
    char *argv[] = { "diff", "-u", "--label", la, "--label", lb, a, b, NULL };
    pid_t pid;
    if (posix_spawnp(&pid, "diff", NULL, NULL, argv, environ) == 0) {
        int st;
        waitpid(pid, &st, 0);
    } else {
        fputs(new_text, stdout);
    }
out:
    if (fa >= 0) {
        close(fa);
        unlink(a);
    }
    if (fb >= 0) {
        close(fb);
        unlink(b);
    }
}

/*
 * The plugin runs the same hooks: installing them in settings.json too
 * would save every turn twice. Refused (1) when the plugin is on for every
 * project; a note when it is installed for some projects only.
 */
static int plugin_conflict(void)
{
    char spath[4096];
    struct claude_plugin pl;
    cJSON *user = claude_settings(spath, sizeof spath);
    int found = claude_plugin_find(user, &pl);
    cJSON_Delete(user);
    if (found && pl.enabled) {
        cli_error("setup: the cairn plugin (%s) is installed and enabled: it runs these hooks "
                  "already, and with both every turn is saved twice. Nothing changed; to use "
                  "settings.json instead, `claude plugin uninstall %s` first", pl.name, pl.name);
        return 1;
    }
    if (found && pl.projects)
        printf("note: the cairn plugin (%s) is also installed for %d project%s: there its hooks "
               "and these would both run (`claude plugin uninstall %s --scope project` in %s)\n",
               pl.name, pl.projects, pl.projects == 1 ? "" : "s", pl.name,
               pl.projects == 1 ? "that folder" : "those folders");
    return 0;
}

/* 1 if Claude Code has saved any session here (its projects folder). */
static int have_history(void)
{
    char proj[4096];
    struct stat st;
    return !claude_path(proj, sizeof proj, "projects") && stat(proj, &st) == 0 &&
           S_ISDIR(st.st_mode);
}

int cmd_setup(int argc, char **argv, struct cli_ctx *ctx)
{
    int dry = 0, remove_ = 0, import = -1, status = 1;
    const char *client = NULL, *settings_arg = NULL;
    char path[4096], exe[4096];
    char *old = NULL, *new_text = NULL;
    cJSON *root = NULL;
    for (int i = 1; i < argc;) {
        const char *v;
        if (!strcmp(argv[i], "--dry-run"))
            dry = 1;
        else if (!strcmp(argv[i], "--remove"))
            remove_ = 1;
        else if (!strcmp(argv[i], "--import"))
            import = 1;
        else if (!strcmp(argv[i], "--no-import"))
            import = 0;
        else if (cli_opt(argc, argv, &i, "--settings", &v)) {
            settings_arg = v;
            continue;
        } else if (argv[i][0] == '-') {
            cli_error("setup: unknown option %s", argv[i]);
            return 2;
        } else if (!client) {
            client = argv[i];
        } else {
            cli_error("setup: one client at a time");
            return 2;
        }
        i++;
    }
    if (!client || strcmp(client, "claude-code")) {
        cli_error("usage: cairn setup claude-code [--dry-run] [--remove] [--import|--no-import]"
                  " [--settings FILE]\n(other clients: see docs/CAPTURE.md)");
        return 2;
    }
    if (settings_arg)
        snprintf(path, sizeof path, "%s", settings_arg);
    else if (claude_path(path, sizeof path, "settings.json")) {
        cli_error("setup: no HOME; give --settings FILE");
        return 2;
    }
    ssize_t k = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (k <= 0) {
        cli_error("setup: cannot find the cairn binary's path");
        return 1;
    }
    exe[k] = '\0';

    struct stat st;
    mode_t mode = 0600;
    size_t len = 0;
    char target[4096];
    if (link_target(path, target, sizeof target))
        return 1;
    int exists = stat(path, &st) == 0;
    if (exists) {
        mode = st.st_mode & 0777;
        old = cli_read_file(path, (size_t)16 << 20, &len);
        if (!old)
            return 1;
        root = cJSON_ParseWithLength(old, len);
        if (!root && len == strspn(old, " \t\r\n"))
            root = cJSON_CreateObject();          /* an empty file */
        if (!root || !cJSON_IsObject(root)) {
            cli_error("setup: %s is not a JSON object; fix it first (nothing changed)", path);
            goto out;
        }
    } else {
        old = strdup("");
        root = cJSON_CreateObject();
        if (!old || !root) {
            cli_error("setup: out of memory");
            goto out;
        }
    }
    if (!remove_ && plugin_conflict())
        goto out;
    const char *why = NULL;
    int n = remove_ ? unmerge(root) : merge(root, exe, ctx->db_path, &why);
    if (n < 0) {
        cli_error("setup: %s: %s; fix it first (nothing changed)", path, why);
        goto out;
    }
    if (n == 0) {
        printf("%s: %s\n", path, remove_ ? "no cairn hooks to remove"
                                         : "cairn hooks already installed");
        status = 0;
        goto import;
    }
    new_text = pretty(root);
    if (!new_text) {
        cli_error("setup: out of memory");
        goto out;
    }
    if (dry) {
        show_diff(path, old, new_text);
        status = 0;
        goto out;
    }
    if (!exists) {
        /* ~/.claude may not exist yet: make it like Claude Code would */
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
                cli_error("setup: cannot create %s: %s", dir, strerror(errno));
                goto out;
            }
        }
    } else {
        char bak[4200];
        snprintf(bak, sizeof bak, "%s.cairn-bak", path);
        if (write_file(bak, old, mode) != 0) {
            cli_error("setup: cannot back up %s to %s: %s (nothing changed)", path, bak,
                      strerror(errno));
            goto out;
        }
        printf("backed up %s to %s\n", path, bak);
    }
    if (write_file(target, new_text, mode) != 0) {
        cli_error("setup: cannot write %s: %s", target, strerror(errno));
        goto out;
    }
    printf("%s %d cairn hook%s %s %s\n", remove_ ? "removed" : "added", n, n == 1 ? "" : "s",
           remove_ ? "from" : "to", path);
    status = 0;
import:
    if (remove_ || dry || import == 0)
        goto out;
    if (import < 0 && !have_history()) {
        /* a fresh machine: `cairn import claude-code` would find nothing */
        printf("no Claude Code sessions on this machine yet: nothing to import; the hooks save "
               "them from now on\n");
        goto out;
    }
    if (import < 0 && isatty(0) && isatty(1)) {
        char line[16];
        printf("Import your past Claude Code sessions now (Claude Code deletes them after "
               "cleanupPeriodDays)? [Y/n] ");
        fflush(stdout);
        import = fgets(line, sizeof line, stdin) && (line[0] == '\n' || line[0] == 'y' ||
                                                     line[0] == 'Y');
    }
    if (import == 1) {
        char *iargv[] = { "import", "claude-code", NULL };
        status = cmd_import(2, iargv, ctx);
    } else if (status == 0) {
        printf("run `cairn import claude-code` to import past sessions\n");
    }
out:
    cJSON_Delete(root);
    free(old);
    free(new_text);
    return status;
}
