/*
 * cmd_import.c: `cairn import KIND [PATH]`: past conversations into the
 * store.
 *
 *   claude-code [DIR|FILE]  ~/.claude/projects (or $CLAUDE_CONFIG_DIR/
 *                           projects): every <session>.jsonl below;
 *                           subagent transcripts (…/subagents/agent-*.jsonl)
 *                           are skipped and counted (their turns are the
 *                           main agent talking to a helper, not the user)
 *   codex [DIR|FILE]        ~/.codex/sessions (or $CODEX_HOME/sessions)
 *   aider [DIR|FILE]        DIR/.aider.chat.history.md (default: the
 *                           current folder's)
 *   claude-ai FILE          the export .zip, or its conversations.json
 *   chatgpt FILE            the same for ChatGPT
 *   jsonl FILE              the `cairn add` format, one session a line
 *
 * Each session is its own transaction (cairn_import_file), so this can be
 * interrupted at any point and run again; a second run adds nothing and
 * skips unchanged files without reading them (--full reads them). A file
 * of another kind is refused with the import that reads it; a file that
 * gives no conversation is an error when named on its own, counted in a
 * folder (docs/CAPTURE.md). With no PATH and no default folder yet (a
 * machine with no Claude Code or Codex history), there is nothing to
 * import: exit 0. A progress bar goes to stderr when it is a terminal;
 * the summary (sessions, messages, and what was skipped and why) to
 * stdout.
 */
#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

struct file_list {
    char **v;
    uint64_t *size;
    size_t n, alloc;
    size_t subagents;        /* skipped subagent transcripts */
    uint64_t total;
    int nomem;
};

static struct file_list *walk_list;   /* nftw has no user pointer */

static int is_subagent(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return strstr(path, "/subagents/") != NULL || !strncmp(b, "agent-", 6);
}

static int walk_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    struct file_list *l = walk_list;
    size_t n = strlen(path);
    (void)ftw;
    if (type != FTW_F || !S_ISREG(st->st_mode) || n < 6 || strcmp(path + n - 6, ".jsonl"))
        return 0;
    if (is_subagent(path)) {
        l->subagents++;
        return 0;
    }
    if (l->n == l->alloc) {
        size_t na = l->alloc ? l->alloc * 2 : 64;
        char **v = realloc(l->v, na * sizeof *v);
        if (v)
            l->v = v;
        uint64_t *s = v ? realloc(l->size, na * sizeof *s) : NULL;
        if (!v || !s) {
            l->nomem = 1;
            return 1;
        }
        l->size = s;
        l->alloc = na;
    }
    l->v[l->n] = strdup(path);
    if (!l->v[l->n]) {
        l->nomem = 1;
        return 1;
    }
    l->size[l->n] = (uint64_t)st->st_size;
    l->total += (uint64_t)st->st_size;
    l->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The progress bar: redrawn at most ten times a second. */
struct progress {
    int on;
    uint64_t done_files_bytes, total;
    size_t file, files;
    struct timespec last;
    struct timespec start;
};

static void draw(struct progress *p, uint64_t done, int force)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long ms = (now.tv_sec - p->last.tv_sec) * 1000 + (now.tv_nsec - p->last.tv_nsec) / 1000000;
    if (!force && ms < 100)
        return;
    p->last = now;
    int pct = p->total ? (int)(done * 100 / p->total) : 100, w = 30, k = pct * w / 100;
    char bar[64];
    for (int i = 0; i < w; i++)
        bar[i] = i < k ? '#' : '.';
    bar[w] = '\0';
    fprintf(stderr, "\r[%s] %3d%%  %zu/%zu files  %.1f/%.1f MB ", bar, pct, p->file, p->files,
            (double)done / 1e6, (double)p->total / 1e6);
    fflush(stderr);
}

static void on_progress(void *arg, uint64_t done, uint64_t total)
{
    struct progress *p = arg;
    if (p->on)
        draw(p, p->done_files_bytes + (done > total ? total : done), 0);
}

/* 1 if `path` was read whole and gave no session: cairn_import_file then
 * records it with nothing consumed (offset 0), so that the next import
 * reads it again. */
static int gave_nothing(struct cairn *db, const char *path)
{
    struct cairn_capture_state cs;
    return cairn_capture_state_get(db, path, &cs) == CAIRN_OK && cs.offset == 0 && cs.size > 0;
}

/* One failed file, on stderr: the library's reason names the file (say it
 * once). After the first few of a folder, only a count at the end. */
#define SHOW_FAILED 5

static void report_failed(struct cairn *db, const char *path, size_t nth)
{
    const char *msg = cairn_errmsg(db);
    if (nth >= SHOW_FAILED)
        return;
    if (!strncmp(msg, path, strlen(path)))
        cli_error("import: %s", msg);
    else
        cli_error("import: %s: %s", path, msg);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: cairn import KIND [PATH] [--full] [--project P] [--attachments] [-q]\n"
        "  claude-code [DIR|FILE]  default ~/.claude/projects\n"
        "  codex [DIR|FILE]        default ~/.codex/sessions\n"
        "  aider [DIR|FILE]        default ./.aider.chat.history.md\n"
        "  claude-ai FILE          the export .zip or its conversations.json\n"
        "  chatgpt FILE            the export .zip or its conversations.json\n"
        "  jsonl FILE              the `cairn add` format, one session a line\n"
        "  --full         read every file whole, even those unchanged since the last import\n"
        "  --project P    put every session in project P\n"
        "  --attachments  claude.ai: keep the text of pasted attachments\n");
}

int cmd_import(int argc, char **argv, struct cli_ctx *ctx)
{
    const char *kind_name = NULL, *path = NULL, *project = NULL;
    unsigned flags = 0;
    int quiet = 0, rc, status = 0, walked = 0;
    char defpath[4096];
    struct file_list l;
    struct cairn *db = NULL;
    memset(&l, 0, sizeof l);

    for (int i = 1; i < argc;) {
        const char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "--full")) {
            flags |= CAIRN_IMPORT_FULL;
        } else if (!strcmp(argv[i], "--attachments")) {
            flags |= CAIRN_IMPORT_ATTACHMENTS;
        } else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
            quiet = 1;
        } else if (cli_opt(argc, argv, &i, "--project", &v)) {
            project = v;
            continue;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            cli_error("import: unknown option %s", argv[i]);
            return 2;
        } else if (!kind_name) {
            kind_name = argv[i];
        } else if (!path) {
            path = argv[i];
        } else {
            cli_error("import: one PATH at a time");
            return 2;
        }
        i++;
    }
    int kind = cairn_import_kind_parse(kind_name);
    if (!kind) {
        if (kind_name)
            cli_error("import: unknown kind '%s'", kind_name);
        usage(stderr);
        return 2;
    }
    if (!path) {
        if (kind == CAIRN_IMPORT_CLAUDE_CODE && !claude_path(defpath, sizeof defpath, "projects"))
            path = defpath;
        else if (kind == CAIRN_IMPORT_CODEX &&
                 !cli_client_path(defpath, sizeof defpath, "CODEX_HOME", "sessions",
                                  ".codex/sessions"))
            path = defpath;
        else if (kind == CAIRN_IMPORT_AIDER)
            path = ".";
        if (!path) {
            cli_error("import %s: which file? (cairn import --help)", kind_name);
            return 2;
        }
    }
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT && path == defpath && kind != CAIRN_IMPORT_AIDER) {
            /* a fresh machine: the client has not saved a session yet */
            if (!quiet)
                printf("nothing to import yet: %s does not exist (no %s session on this "
                       "machine so far)\n", path,
                       kind == CAIRN_IMPORT_CODEX ? "Codex CLI" : "Claude Code");
            return 0;
        }
        cli_error("import: cannot read %s: %s", path, strerror(errno));
        return 1;
    }
    if (S_ISDIR(st.st_mode) && kind == CAIRN_IMPORT_AIDER) {
        /* aider keeps one log in the project folder */
        int k = snprintf(defpath, sizeof defpath, "%s/.aider.chat.history.md", path);
        if (k < 0 || (size_t)k >= sizeof defpath || stat(defpath, &st) != 0) {
            cli_error("import aider: no .aider.chat.history.md in %s", path);
            return 1;
        }
        path = defpath;
    }
    if (S_ISDIR(st.st_mode)) {
        if (kind != CAIRN_IMPORT_CLAUDE_CODE && kind != CAIRN_IMPORT_CODEX) {
            cli_error("import %s: %s is a folder; give the export file", kind_name, path);
            return 2;
        }
        walked = 1;
        walk_list = &l;
        if (nftw(path, walk_cb, 32, FTW_PHYS) != 0 || l.nomem) {
            cli_error("import: cannot list %s: %s", path, l.nomem ? "out of memory"
                                                                   : strerror(errno));
            status = 1;
            goto out;
        }
        /* an empty folder leaves l.v NULL, which qsort must not be given
         * even for no element (UBSan: nonnull) */
        if (l.n > 1)
            qsort(l.v, l.n, sizeof *l.v, cmp_str);
        /* sizes were gathered in walk order: recount after the sort */
        for (size_t i = 0; i < l.n; i++) {
            struct stat fs;
            l.size[i] = stat(l.v[i], &fs) == 0 ? (uint64_t)fs.st_size : 0;
        }
    } else {
        l.v = malloc(sizeof *l.v);
        l.size = malloc(sizeof *l.size);
        if (!l.v || !l.size || !(l.v[0] = strdup(path))) {
            cli_error("import: out of memory");
            status = 1;
            goto out;
        }
        l.n = 1;
        l.size[0] = l.total = (uint64_t)st.st_size;
    }
    if ((rc = cli_open(ctx, 0, &db))) {
        status = rc;
        goto out;
    }
    spool_drain(db, INT_MAX);            /* hook events that found the store locked */

    struct progress pr;
    memset(&pr, 0, sizeof pr);
    pr.on = !quiet && isatty(2);
    pr.total = l.total;
    pr.files = l.n;
    clock_gettime(CLOCK_MONOTONIC, &pr.start);
    struct cairn_import_opts o = CAIRN_IMPORT_OPTS_INIT;
    struct cairn_import_stats s;
    memset(&s, 0, sizeof s);
    o.project = project;
    o.flags = flags;
    o.progress = on_progress;
    o.progress_arg = &pr;
    size_t failed_files = 0, shown = 0, empty_files = 0;
    for (size_t i = 0; i < l.n; i++) {
        pr.file = i + 1;
        size_t before = s.sessions_failed, files_before = s.files;
        rc = cairn_import_file(db, kind, l.v[i], &o, &s);
        if (rc || s.sessions_failed > before) {
            if (pr.on)
                fputc('\n', stderr);
            report_failed(db, l.v[i], shown++);
            if (rc == CAIRN_BUSY || rc == CAIRN_NOMEM) {
                status = 1;
                break;
            }
            failed_files += rc != CAIRN_OK;
        } else if (s.files > files_before && gave_nothing(db, l.v[i])) {
            empty_files++;
        }
        pr.done_files_bytes += l.size[i];
        if (pr.on)
            draw(&pr, pr.done_files_bytes, i + 1 == l.n);
    }
    if (pr.on)
        fputc('\n', stderr);
    if (shown > SHOW_FAILED)
        cli_error("import: and %zu more files failed", shown - SHOW_FAILED);
    /* A file named on its own that gave nothing is an error; in a folder
     * (where a transcript with no prompt in it is normal) only when no
     * file gave anything, now or before. */
    int nothing = empty_files && (!walked || (empty_files == s.files && !s.files_unchanged));
    if (nothing && !walked)
        cli_error("import: %s: nothing imported: no conversation found in it (read as %s)",
                  l.v[0], kind_name);
    else if (nothing)
        cli_error("import: nothing imported: no conversation found in the %zu files read "
                  "(read as %s)", empty_files, kind_name);
    if (!status)
        spool_drain(db, INT_MAX);        /* and those that found it locked by this import */
    struct timespec t1;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - pr.start.tv_sec) + (t1.tv_nsec - pr.start.tv_nsec) / 1e9;

    if (!quiet) {
        printf("imported %zu file%s (%zu unchanged, %zu failed, %zu with no conversation) "
               "in %.1fs: %zu session%s (%zu new, %zu updated, %zu refused), %zu message%s "
               "added, %zu already present\n",
               s.files, cli_s((long long)s.files), s.files_unchanged, failed_files, empty_files,
               secs, s.sessions, cli_s((long long)s.sessions), s.sessions_added,
               s.sessions_updated, s.sessions_failed, s.messages_added,
               cli_s((long long)s.messages_added), s.messages_skipped);
        if (s.files_unchanged && !s.files && !failed_files)
            printf("nothing new: %s unchanged since the last import (--full reads %s "
                   "again)\n", walked ? "the files are" : "the file is", walked ? "them" : "it");
        printf("read %zu line%s: %zu blank, %zu bookkeeping records, %zu malformed JSON, "
               "%zu unknown record types, %zu with a field of the wrong type, %zu too long\n",
               s.lines, cli_s((long long)s.lines), s.lines_blank, s.lines_ignored, s.bad_json,
               s.unknown_type, s.wrong_type, s.too_long);
        printf("left out %zu messages (tool calls and output, thinking, meta, harness text, "
               "other branches, empty); %zu <private> spans removed; %zu invalid UTF-8 "
               "repaired; %zu secrets masked",
               s.messages_dropped, s.private_removed, s.utf8_repaired, s.secrets_masked);
        if (kind == CAIRN_IMPORT_CLAUDE_CODE)
            printf("; %zu subagent files skipped", l.subagents);
        printf("\n");
    }
    if (failed_files || s.sessions_failed || nothing)
        status = 1;
    if (s.messages_added)
        cli_tiers_when_due(db, "import", quiet);
out:
    cairn_close(db);
    for (size_t i = 0; i < l.n; i++)
        free(l.v[i]);
    free(l.v);
    free(l.size);
    return status;
}
