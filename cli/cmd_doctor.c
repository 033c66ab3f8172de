/*
 * cmd_doctor.c: `cairn doctor`: is capture working, and is anything about
 * to be lost?
 *
 * Checks the store (path, permissions, schema, counts), the hook log's last
 * errors, how the Claude Code hooks are installed (the plugin, or `cairn
 * setup claude-code` in settings.json: one of the two, since both would
 * save every turn twice), and the transcripts in ~/.claude/projects that
 * are not (fully) imported: Claude Code deletes transcripts older than
 * cleanupPeriodDays (30 by default, from settings.json), and users have
 * lost months of history that way, so those within a week of deletion get
 * a warning. Each Markdown vault is checked for files changed since it
 * was indexed. Exit 0 when all is well, 1 when something needs attention:
 * the last line then names the lines that need it.
 */
#include <errno.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <cjson/cJSON.h>

#include "cli.h"

#define SOON_DAYS 7

/* The lines (by their label) that need attention, each named once. */
struct attention {
    const char *what[8];
    int n;
};

static void attend(struct attention *a, const char *what)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->what[i], what))
            return;
    if (a->n < 8)
        a->what[a->n++] = what;
}

struct scan {
    struct cairn *db;
    int64_t now, cleanup_days;
    size_t files, not_imported, at_risk, expired;
    int64_t oldest_at_risk;      /* mtime of the oldest unimported file */
};
static struct scan *scan_ctx;    /* nftw has no user pointer */

static int scan_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    struct scan *s = scan_ctx;
    size_t n = strlen(path);
    (void)ftw;
    if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".jsonl") || strstr(path, "/subagents/"))
        return 0;
    s->files++;
    struct cairn_capture_state cs;
    int imported = cairn_capture_state_get(s->db, path, &cs) == CAIRN_OK &&
                   cs.size >= (uint64_t)st->st_size;
    if (imported)
        return 0;
    s->not_imported++;
    int64_t age_days = (s->now - (int64_t)st->st_mtime) / 86400;
    if (age_days >= s->cleanup_days)
        s->expired++;
    else if (age_days + SOON_DAYS >= s->cleanup_days)
        s->at_risk++;
    if (!s->oldest_at_risk || st->st_mtime < s->oldest_at_risk)
        s->oldest_at_risk = (int64_t)st->st_mtime;
    return 0;
}

static void show_log(struct attention *att)
{
    char path[4096];
    if (cli_log_path(path, sizeof path)) {
        printf("log:      (no HOME)\n");
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("log:      %s (no errors recorded)\n", path);
        return;
    }
    /* The last five lines, from the last 64 KB. */
    static char tail[65536 + 1];
    long size = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : 0;
    long from = size > 65536 ? size - 65536 : 0;
    fseek(f, from, SEEK_SET);
    size_t n = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[n] = '\0';
    const char *lines[5] = { 0 };
    size_t nl = 0;
    for (char *p = tail; *p;) {
        char *e = strchr(p, '\n');
        if (e)
            *e = '\0';
        if (*p)
            lines[nl++ % 5] = p;
        if (!e)
            break;
        p = e + 1;
    }
    printf("log:      %s (%ld bytes)%s\n", path, size, nl ? "; last errors:" : "");
    for (size_t i = nl > 5 ? nl - 5 : 0; i < nl; i++)
        printf("          %s\n", lines[i % 5]);
    if (nl)
        attend(att, "log");
}

/* The corrections the pre-tool hook checks, and the candidates that wait
 * for the user (docs/MEMORIES.md). */
static void show_corrections(struct cairn *db)
{
    struct cairn_corrections *l;
    size_t n = 0, waiting = 0;
    if (cairn_corrections_list(db, NULL, &l) == CAIRN_OK)
        n = cairn_corrections_count(l);
    cairn_corrections_free(l);
    if (cairn_candidates_list(db, &l) == CAIRN_OK)
        waiting = cairn_corrections_count(l);
    cairn_corrections_free(l);
    if (n || waiting)
        printf("          %zu correction%s; %zu candidate%s waiting for `cairn memories "
               "review`\n", n, cli_s((long long)n), waiting, cli_s((long long)waiting));
}

/* A store upgraded to schema 15 read the dates its newest 30,000
 * messages speak of; the older ones wait for `cairn reindex --events`. */
static void show_events(struct cairn *db)
{
    int64_t left = 0;
    if (cairn_events_fill(db, 0, NULL, &left) == CAIRN_OK && left > 0)
        printf("note:     %lld older message%s not yet read for the dates they speak of (a "
               "question naming a date ranks them by their session's date): run `cairn reindex "
               "--events`\n", (long long)left, cli_s(left));
}

/* Term tiers due (cairn_tier_due): a store that grew through the hooks
 * alone, which never build them (their time is the user's). A note, not
 * a fault: the prompt hook walks every match until they are built. */
static void show_tiers(struct cairn *db)
{
    int due = 0;
    int64_t msgs = 0;
    if (cairn_tier_due(db, &due, &msgs) == CAIRN_OK && due)
        printf("note:     %lld messages and the term tiers the prompt hook reads are due: run "
               "`cairn reindex --tiers` (cairn add and cairn import build them when due)\n",
               (long long)msgs);
}

/* A store made before new stores' 16 KB pages (cairn_repage_due): a
 * note, not a fault; it works as it is, but the prompt hook makes about
 * three page reads where it would make one (docs/ARCHITECTURE.md, "The
 * hook at 100,000: pages of 16 KB"). */
static void show_pages(struct cairn *db)
{
    int due = 0, page = 0;
    if (cairn_repage_due(db, &due, &page) == CAIRN_OK && due)
        printf("note:     the store is in pages of %d KB, new stores in 16 KB (the prompt hook "
               "then reads a third as many): run `cairn reindex --pages` (no other process may "
               "have the store open; it needs free space the size of the store)\n", page / 1024);
}

/* Each vault's freshness (docs/VAULTS.md): the files added, changed or
 * removed since its last index, by size and mtime (no file is read). A
 * stale vault needs `cairn vault reindex`; the prompt hook never does it. */
static void show_vaults(struct cairn *db, struct attention *att)
{
    struct cairn_vault_info *v;
    size_t n;
    if (cairn_vault_list(db, &v, &n) != CAIRN_OK)
        return;
    for (size_t i = 0; i < n; i++) {
        int64_t changed = 0, checked = 0;
        printf("vault:    %s (%lld note%s) in ", v[i].name, (long long)v[i].docs,
               cli_s(v[i].docs));
        cli_print_line(v[i].root);
        if (cairn_vault_stale(db, v[i].name, 0, &changed, &checked) != CAIRN_OK) {
            printf("\nWARNING:  vault %s cannot be checked: %s\n", v[i].name, cairn_errmsg(db));
            attend(att, "vault");
        } else if (changed) {
            printf("\nWARNING:  vault %s: %lld file%s changed since it was indexed: run `cairn "
                   "vault reindex %s`\n", v[i].name, (long long)changed, cli_s(changed),
                   v[i].name);
            attend(att, "vault");
        } else {
            printf(": up to date (%lld file%s checked)\n", (long long)checked, cli_s(checked));
        }
    }
    cairn_vault_list_free(v, n);
}

/* Which events of claude_hooks a mask leaves out, for the message. */
static void missing_events(unsigned mask, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (size_t i = 0; i < claude_n_hooks && k < n; i++)
        if (!(mask & (1u << i)))
            k += (size_t)snprintf(out + k, n - k, "%s%s", k ? ", " : "", claude_hooks[i].event);
}

/*
 * The Claude Code hooks: from the plugin or from settings.json, never
 * both (Stop and SessionEnd would run twice and save each turn twice), so
 * no advice here ever leads to both.
 */
static void check_hooks(const cJSON *settings, const char *spath, struct attention *att)
{
    struct claude_plugin pl;
    unsigned all = (1u << claude_n_hooks) - 1, mask = claude_hooks_installed(settings);
    char miss[256];
    claude_plugin_find(settings, &pl);
    missing_events(mask, miss, sizeof miss);
    if (pl.enabled && mask) {
        printf("WARNING:  hooks installed twice: by the plugin %s and in %s; every turn is saved "
               "twice. Keep the plugin: `cairn setup claude-code --remove`\n", pl.name, spath);
        attend(att, "hooks");
    } else if (pl.enabled) {
        printf("hooks:    from the plugin %s (every project)\n", pl.name);
    } else if (mask == all) {
        printf("hooks:    installed in %s\n", spath);
    } else if (mask) {
        printf("hooks:    partly installed in %s (missing: %s): run `cairn setup claude-code`\n",
               spath, miss);
        attend(att, "hooks");
    } else if (pl.user) {
        printf("hooks:    the plugin %s is installed but disabled: `claude plugin enable %s`\n",
               pl.name, pl.name);
        attend(att, "hooks");
    } else if (pl.projects) {
        printf("hooks:    from the plugin %s, in the %d project%s it is installed for; sessions "
               "elsewhere are not saved (`claude plugin install %s --scope user` saves them "
               "all)\n", pl.name, pl.projects, pl.projects == 1 ? "" : "s", pl.name);
    } else {
        printf("hooks:    not installed: install the plugin (README) or run `cairn setup "
               "claude-code`, one or the other\n");
        attend(att, "hooks");
    }
    if (mask && pl.projects) {
        printf("WARNING:  the plugin %s is also installed for %d project%s: there every turn is "
               "saved twice (`claude plugin uninstall %s --scope project` in %s)\n", pl.name,
               pl.projects, pl.projects == 1 ? "" : "s", pl.name,
               pl.projects == 1 ? "that folder" : "those folders");
        attend(att, "hooks");
    }
}

/*
 * The PostgreSQL server `cairn sync` uses (docs/POSTGRES.md): reachable
 * with these credentials, its cairn schema (none yet, this build's, or
 * newer than this cairn knows), pgvector, and the clock skew: sync's
 * cursors are the server's transaction ids, not clocks, but the times
 * sessions carry and the tombstones' are read across machines.
 */
static void check_server(const char *url, struct cairn *db, struct attention *att)
{
    struct cairn_server_info si;
    int rc = cairn_server_check(db, url, &si);
    if (rc) {
        printf("ERROR:    server: %s\n", db ? cairn_errmsg(db) : cairn_errstr(rc));
        attend(att, "server");
        return;
    }
    printf("server:   %s, PostgreSQL %s\n", si.who, si.server_version);
    if (si.schema == 0)
        printf("note:     no cairn schema there yet: the first `cairn sync` by a role that may "
               "create it (CREATE on the database) makes it\n");
    else if (si.schema > si.schema_known) {
        printf("WARNING:  cairn schema version %d there; this cairn knows up to %d: upgrade "
               "cairn\n", si.schema, si.schema_known);
        attend(att, "server");
    } else
        printf("          cairn schema version %d%s\n", si.schema,
               si.schema < si.schema_known ? " (the next sync upgrades it)" : "");
    if (si.pgvector[0])
        printf("          pgvector %s%s\n", si.pgvector,
               si.emb ? ", vectors kept as `vector` too" : "");
    else
        printf("          no pgvector: vectors are kept as bytes only\n");
    printf("          clock skew %+.3f s\n", si.clock_skew_s);
    if (si.clock_skew_s > 60 || si.clock_skew_s < -60) {
        printf("WARNING:  this machine's clock and the server's differ by more than a minute\n");
        attend(att, "server");
    }
}

int cmd_doctor(int argc, char **argv, struct cli_ctx *ctx)
{
    struct attention att = { { 0 }, 0 };
    char path[4096];
    struct cairn *db = NULL;
    cJSON *settings = NULL;
    const char *server = getenv("CAIRN_SERVER");
    for (int i = 1; i < argc;) {
        if (!cli_opt(argc, argv, &i, "--server", &server)) {
            cli_error("doctor: unknown argument '%s' (see cairn doctor --help)", argv[i]);
            return CLI_USAGE;
        }
    }

    /* The store. */
    if (ctx->db_path)
        snprintf(path, sizeof path, "%s", ctx->db_path);
    else if (cli_default_path(path, sizeof path)) {
        cli_error("doctor: no store path: set CAIRN_DB or HOME");
        return 1;
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        printf("store:    %s does not exist yet (it is created by the first hook or import)\n",
               path);
        attend(&att, "store");
    } else {
        printf("store:    %s (%.1f MB, mode %03o)\n", path, (double)st.st_size / 1e6,
               (unsigned)(st.st_mode & 0777));
        if (st.st_mode & 077) {
            printf("WARNING:  the store is readable by others: chmod 600 %s\n", path);
            attend(&att, "store");
        }
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
            *slash = '\0';
            if (stat(dir, &st) == 0 && (st.st_mode & 077))
                printf("note:     folder %s is mode %03o (cairn creates it 0700)\n", dir,
                       (unsigned)(st.st_mode & 0777));
        }
        int rc = cli_db_open(path, CAIRN_OPEN_NOCREATE, &db);
        if (rc) {
            printf("ERROR:    cannot open the store: %s\n", cairn_errmsg(db));
            cairn_close(db);
            db = NULL;
            attend(&att, "store");
        } else {
            struct cairn_stats cs;
            if (cairn_get_stats(db, &cs) == CAIRN_OK)
                printf("          schema version %d, %lld sessions, %lld messages\n",
                       cs.schema_version, (long long)cs.sessions, (long long)cs.messages);
            show_events(db);
            show_tiers(db);
            show_pages(db);
            show_corrections(db);
            show_vaults(db, &att);
        }
    }
    show_log(&att);
    if (server)
        check_server(server, db, &att);

    /* Claude Code. */
    char spath[4096];
    settings = claude_settings(spath, sizeof spath);
    check_hooks(settings, spath, &att);
    const char *e = getenv("CAIRN_CAPTURE");
    if (e && !strcmp(e, "0")) {
        printf("note:     CAIRN_CAPTURE=0 is set here: hooks started with it save nothing\n");
    }
    int64_t cleanup = 30;
    const cJSON *cp = cJSON_GetObjectItemCaseSensitive(settings, "cleanupPeriodDays");
    if (cJSON_IsNumber(cp) && cp->valuedouble >= 0 && cp->valuedouble < 1e6)
        cleanup = (int64_t)cp->valuedouble;

    char proj[4096];
    if (claude_path(proj, sizeof proj, "projects"))
        snprintf(proj, sizeof proj, "~/.claude/projects");
    if (stat(proj, &st) != 0 || !S_ISDIR(st.st_mode)) {
        printf("claude:   no transcripts in %s\n", proj);
    } else if (!db) {
        printf("claude:   transcripts in %s (cannot tell which are imported)\n", proj);
    } else {
        struct scan sc;
        memset(&sc, 0, sizeof sc);
        sc.db = db;
        sc.now = (int64_t)time(NULL);
        sc.cleanup_days = cleanup;
        scan_ctx = &sc;
        nftw(proj, scan_cb, 32, FTW_PHYS);
        printf("claude:   %zu transcripts in %s, %zu not imported; cleanupPeriodDays %lld\n",
               sc.files, proj, sc.not_imported, (long long)cleanup);
        if (sc.at_risk || sc.expired) {
            printf("WARNING:  %zu transcripts not imported will be deleted by Claude Code "
                   "within %d days (%zu are past cleanupPeriodDays already): "
                   "run `cairn import claude-code` now\n",
                   sc.at_risk + sc.expired, SOON_DAYS, sc.expired);
            attend(&att, "claude");
        } else if (sc.not_imported) {
            printf("note:     run `cairn import claude-code` to import them\n");
            attend(&att, "claude");
        }
    }
    cJSON_Delete(settings);
    cairn_close(db);
    if (!att.n)
        printf("all good\n");
    for (int i = 0; i < att.n; i++)
        printf("%s%s", i ? ", " : "needs attention: ", att.what[i]);
    if (att.n)
        printf(" (the line%s above)\n", att.n == 1 ? "" : "s");
    return att.n ? 1 : 0;
}
