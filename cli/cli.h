/*
 * cli.h: what the command files of the `cairn` tool share.
 *
 * Every command is one file cli/cmd_<name>.c with one entry point
 *     int cmd_<name>(int argc, char **argv, struct cli_ctx *ctx);
 * listed in the command table in cli/main.c. argv[0] is the command name;
 * global options (--db) are already taken out; main.c answers --help from
 * the table. A command returns the exit code (README, docs/cairn.1):
 *   0  success
 *   1  failure, after one clear line on stderr via cli_error: the store
 *      cannot be opened, a named session does not exist, a write failed
 *   2  bad usage
 *   3  nothing found: a search or listing ran and came up empty (recall,
 *      sessions, show's range, export), said in one line on stderr
 * stdout carries only the command's output, and nothing when it fails.
 *
 * Commands use only <cairn.h> and src/util/ helpers. The environment
 * variables that steer the library are read in env.c only.
 */
#ifndef CAIRN_CLI_H
#define CAIRN_CLI_H

#include <stdio.h>
#include "cairn.h"
#include "util/buf.h"   /* struct cli_when holds buffers */

struct cli_ctx {
    const char *db_path;   /* --db, or NULL for the default */
};

typedef int (*cli_cmd_fn)(int argc, char **argv, struct cli_ctx *ctx);

enum { CLI_OK = 0, CLI_FAILED = 1, CLI_USAGE = 2, CLI_EMPTY = 3 };

/* "s" unless n is 1: "%zu session%s", n, cli_s(n). */
const char *cli_s(long long n);
/* A cairn_session_cb that counts the sessions into the size_t at arg. */
int cli_count_session(void *arg, const struct cairn_session_info *s);

/* Prints "cairn: <message>" and a newline to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Opens the store named by ctx (or the default). On failure prints the
 * reason and returns non-zero (the exit code to use). */
int cli_open(struct cli_ctx *ctx, unsigned flags, struct cairn **out);

/* The environment, read in one place (env.c): */
/* The store to open: --db, else $CAIRN_DB, else NULL (the library's
 * default, ~/.cairn/memory.db). */
const char *cli_db_path(const struct cli_ctx *ctx);
/* The default store path: $CAIRN_DB, else cairn_default_path. */
int cli_default_path(char *out, size_t n);
/* cairn_open, then the settings the environment gives (CAIRN_REDACT,
 * CAIRN_EMBED_MODEL, ... -> cairn_set). Every handle the CLI opens comes
 * from here. Same results as cairn_open. */
int cli_db_open(const char *path, unsigned flags, struct cairn **out);
/* $CAIRN_EMBED_MODEL, NULL when unset or empty. */
const char *cli_embed_model(void);
/* The settings of a prepared question (cairn_prep_start) from the
 * environment, as cli_db_open gives a handle's. */
void cli_prep_opts(struct cairn_prep_opts *o);
/* cairn_models_open with $CAIRN_MODEL_DIR and $CAIRN_HF_ENDPOINT (else
 * $HF_ENDPOINT, else the Hugging Face hub's public address). */
int cli_models_open(struct cairn_models **out);

/* Reports a library failure: "cairn: <what>: <errmsg>"; returns 1. */
int cli_fail(struct cairn *db, const char *what, int rc);

/* After `cairn add` or `cairn import` committed: the term tiers built
 * when due (cairn_tier_due), said on stderr unless quiet. A failure is
 * reported and changes nothing of what was added. */
void cli_tiers_when_due(struct cairn *db, const char *what, int quiet);

/* Reads a whole file ("-" or NULL: stdin) into a malloc'd NUL-terminated
 * buffer of at most `cap` bytes. Returns NULL after printing the reason. */
char *cli_read_file(const char *path, size_t cap, size_t *len);

/* A small option scanner: returns 1 and sets *val if argv[*i] is `name`
 * followed by a value (either "--name VALUE" or "--name=VALUE"); advances
 * *i past what it took. Prints a usage error and exits 2 when the value is
 * missing. */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);

/* The session and message writers of export, sessions and show: a JSON
 * field `"name":value` appended to b, with a comma unless *first (which
 * they clear). A time of CAIRN_NO_TIME and an empty or NULL string add
 * nothing; times are UTC with a Z, as `cairn add` reads them. */
struct buf;
void cli_json_time_field(struct buf *b, const char *name, int64_t t, int *first);
void cli_json_str_field(struct buf *b, const char *name, const char *v, int *first);
/* Appends session s, its messages read from db, as one line of the
 * `cairn add` JSONL format (export_jsonl.c): export --format jsonl and
 * cairn web's export. 0 or a CAIRN_* code. */
int cli_session_jsonl(struct cairn *db, const struct cairn_session_info *s, struct buf *b);
/* The session's id, source, project, title, started_at and ended_at as
 * JSON fields (cli_json_str_field's rules), for the writers above. */
void cli_json_session_fields(struct buf *b, const struct cairn_session_info *s, int *first);
/* Prints s (NULL: nothing) on one line with no fence tag in it
 * (util/fence.h): titles, speakers and projects are the users' data, and
 * text output is often pasted to a model. JSON output keeps them exact
 * (it is escaped). */
void cli_print_line(const char *s);
/* The line that introduces a fenced recall (fence_wrap's intro) into b:
 * what r holds ("Kept memories, notes from the user's Markdown vaults
 * (path:line) and past conversations", the parts present), then tail, so
 * the model is not told a note is a conversation. */
void cli_recall_intro(struct buf *b, const struct cairn_recall *r, const char *tail);

/* A correction's options (cmd_remember.c): --severity, --when-keyword,
 * --when-path, --when-command, each --when-* repeatable. */
struct cli_when {
    struct cairn_correction_when w;
    struct buf keywords, paths, commands;
    int any;                     /* one was given */
};
#define CLI_WHEN_INIT { { -1, NULL, NULL, NULL }, BUF_INIT, BUF_INIT, BUF_INIT, 0 }
/* 1 if argv[*i] was one of them (taken), 0 if not, -1 after a usage error. */
int cli_when_opt(int argc, char **argv, int *i, struct cli_when *c);
void cli_when_release(struct cli_when *c);

/* The clients' files, for setup, doctor and import (claude.c). */
struct cJSON;
/* A client's folder: $env/env_sub when the variable is set, else
 * ~/home_sub, into out; -1 without HOME or when it does not fit. */
int cli_client_path(char *out, size_t n, const char *env, const char *env_sub,
                    const char *home_sub);
/* The hooks `cairn setup claude-code` installs: the plugin's
 * (plugin/hooks/hooks.json), event for event. */
struct claude_hook {
    const char *event, *arg;     /* "Stop", `cairn hook stop` */
    const char *matcher;         /* NULL: every occasion */
    int timeout;                 /* seconds */
};
extern const struct claude_hook claude_hooks[];
extern const size_t claude_n_hooks;
/* $CLAUDE_CONFIG_DIR/sub, else ~/.claude/sub, into out; -1 without HOME
 * or when it does not fit. */
int claude_path(char *out, size_t n, const char *sub);
/* The user's settings.json, parsed (its path into path); NULL when it is
 * missing or not JSON. */
struct cJSON *claude_settings(char *path, size_t n);
/* 1 if settings handler h runs `cairn ... hook <arg>` (shell or exec form). */
int claude_hook_is_ours(const struct cJSON *h, const char *arg);
/* Which of claude_hooks the settings hold: bit i for claude_hooks[i]. */
unsigned claude_hooks_installed(const struct cJSON *settings);
/* The cairn plugin as Claude Code recorded its installs. */
struct claude_plugin {
    char name[256];              /* "cairn@<marketplace>" */
    int user;                    /* installed for the user (every project) */
    int projects;                /* installs for one project each */
    int enabled;                 /* the user install, on in `settings` */
};
/* 1 and *p filled when the plugin is installed (any scope), else 0. */
int claude_plugin_find(const struct cJSON *settings, struct claude_plugin *p);

/* The commands (cli/cmd_*.c), listed in the table in main.c. */
int cmd_add(int argc, char **argv, struct cli_ctx *ctx);
int cmd_sessions(int argc, char **argv, struct cli_ctx *ctx);
int cmd_show(int argc, char **argv, struct cli_ctx *ctx);
int cmd_export(int argc, char **argv, struct cli_ctx *ctx);
int cmd_forget(int argc, char **argv, struct cli_ctx *ctx);
int cmd_stats(int argc, char **argv, struct cli_ctx *ctx);
int cmd_redact(int argc, char **argv, struct cli_ctx *ctx);
int cmd_recall(int argc, char **argv, struct cli_ctx *ctx);
int cmd_eval(int argc, char **argv, struct cli_ctx *ctx);
int cmd_model(int argc, char **argv, struct cli_ctx *ctx);
int cmd_embed(int argc, char **argv, struct cli_ctx *ctx);
int cmd_reindex(int argc, char **argv, struct cli_ctx *ctx);
/* `cairn embed --backfill` (reindex 0) and `cairn reindex` (reindex 1),
 * docs/HYBRID.md: their options (--quiet) are argv[first..]; backfill.c. */
int cli_backfill(int argc, char **argv, struct cli_ctx *ctx, int reindex, int first);
/* The MCP server over stdio (docs/MCP.md): cmd_mcp.c and cli/mcp/. */
int cmd_mcp(int argc, char **argv, struct cli_ctx *ctx);
/* Capture (docs/CAPTURE.md): cmd_import.c, cmd_hook.c, cmd_setup.c,
 * cmd_doctor.c; the hook log is cli/log.c. */
int cmd_import(int argc, char **argv, struct cli_ctx *ctx);
int cmd_hook(int argc, char **argv, struct cli_ctx *ctx);
int cmd_setup(int argc, char **argv, struct cli_ctx *ctx);
int cmd_doctor(int argc, char **argv, struct cli_ctx *ctx);
/* Sharing through PostgreSQL (docs/POSTGRES.md): cmd_sync.c. */
int cmd_sync(int argc, char **argv, struct cli_ctx *ctx);
/* Explicit memories (docs/MEMORIES.md): cmd_remember.c, cmd_memories.c. */
int cmd_remember(int argc, char **argv, struct cli_ctx *ctx);
int cmd_memories(int argc, char **argv, struct cli_ctx *ctx);
/* Markdown vaults (docs/VAULTS.md). */
int cmd_vault(int argc, char **argv, struct cli_ctx *ctx);
/* The local web workbench (docs/WEB.md): cmd_web.c and cli/web/. */
int cmd_web(int argc, char **argv, struct cli_ctx *ctx);
/* A memory id from argv into *id: 0, or CLI_USAGE after saying why. */
int cli_memory_id(const char *s, int64_t *id);
/* "90s", "30m", "12h", "7d", "2w" into seconds; -1 when it is none of those
 * (cairn remember --ttl, the MCP memory tool). */
int64_t cli_parse_ttl(const char *s);
/* The injecting hooks (hook_inject.c): event "prompt" or "session-start",
 * input the parsed hook JSON (a cJSON object), out_fd the real stdout. */
int hook_inject(const char *event, const void *input, struct cli_ctx *ctx, int out_fd);
/* The prompt hook's decision log: $CAIRN_INJECT_LOG, else
 * ~/.cairn/inject.jsonl, into out (0, or -1). */
int inject_log_path(char *out, size_t n);
/* The project a hook's event is about: $CAIRN_PROJECT, else the project
 * of its cwd (cairn_project_of), else "" (hook_inject.c). */
void hook_project(const void *input, char *out, size_t n);
/* `cairn hook pre-tool` (hook_pretool.c): input the parsed PreToolUse JSON,
 * out_fd the real stdout; at most one decision line written there. */
void hook_pretool(const void *input, struct cli_ctx *ctx, int out_fd);
/* The SessionStart "watch for" lines (hook_pretool.c): the top
 * corrections of project ("" global ones only), fenced, appended to out. */
void hook_watch_for(struct cairn *db, const char *project, struct buf *out);
/* "heeded K of N = P%, 95% CI LO-HI%" or "not met yet", appended to b. */
void cli_heed_rate(struct buf *b, const struct cairn_correction *c);
/* The recall method of the prompt hook (CAIRN_INJECT_DENSE). */
int inject_method(void);
/* What the prompt hook does with one prompt, up to the text it injects:
 * its skip rules, a recall at `budget` less the fence (now, exclusions as
 * given; exclude_items as in cairn_recall_opts), the gate, the fence and
 * Claude Code's size cap. `cairn eval inject` calls it too, so it measures
 * exactly what the hook does. Returns 1 when it would inject (ctxt holds
 * the fenced text), 0 when not (*why says why), -1 when recall failed
 * (cairn_errmsg). *r gets the recall when one ran (the caller frees it). */
/* The budget of the hook's recall: `budget` less the fence. */
int inject_budget(int budget);
struct inject_req {
    int budget;
    int64_t now;                    /* CAIRN_NO_TIME: the clock */
    const char *exclude_session, *exclude_items;
    struct cairn_prep *prep;        /* the question begun early (hook_prompt), or NULL */
};
int inject_prompt(struct cairn *db, const char *prompt, const struct inject_req *q,
                  struct cairn_recall **r, struct buf *ctxt, const char **why);
/* ~/.cairn/cairn.log ($CAIRN_LOG): its path into out (0, or -1), and one
 * timestamped line appended to it (file 0600; never fails loudly). */
int cli_log_path(char *out, size_t n);
/* The spool (spool.c, docs/CAPTURE.md): a save hook that found the store
 * locked keeps its event in STORE-spool (0, or -1 after a line in
 * cairn.log); a later save hook, `cairn add` or `cairn import` imports up
 * to max of them and returns how many it saved. */
int spool_put(const struct cairn *db, const char *event, const char *sid, const char *tp,
              const char *cwd, const char *project);
int spool_drain(struct cairn *db, int max);
void cli_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* glibc's heap kept by a one-shot process: fewer page faults (common.c). */
void cli_one_shot_heap(void);
/* A one-shot recall's heap faulted in up front, sized by the store's file
 * at path (NULL: the default store; none for a small one; common.c), by
 * the recall (exact, not --fast: more) and by whether it scans the
 * store's vector file (dense: more, when there is one): before the store
 * is opened. 1 when dense and that file (PATH-vec) is there. */
int cli_heap_reserve(const char *path, int exact, int dense);
/* open(path, flags) (O_CLOEXEC added, mode 0600) for a regular file only,
 * without blocking on a FIFO: the fd, or -1 with errno set. The hooks'
 * own files (log, injection state) go through it. */
int cli_open_regular(const char *path, int flags);

#endif
