/*
 * main.c: the `cairn` command: global options, then a command from the
 * table below. One command, one file (cli/cmd_<name>.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct command {
    const char *name;
    cli_cmd_fn  fn;
    const char *help;
} commands[] = {
    { "add",      cmd_add,      "add [FILE|-]          add sessions (JSON or JSONL)" },
    { "recall",   cmd_recall,   "recall QUESTION       what the store holds about it, in a budget" },
    { "sessions", cmd_sessions, "sessions [--project P] [--json]   list sessions" },
    { "show",     cmd_show,     "show SESSION [--from N --to M]    one session verbatim" },
    { "export",   cmd_export,   "export [--format markdown|jsonl] [--session S]" },
    { "forget",   cmd_forget,   "forget SESSION|--scrub  delete and wipe a session and all it indexed" },
    { "stats",    cmd_stats,    "stats                 counts and sizes" },
    { "redact",   cmd_redact,   "redact [--dry-run]    mask secrets in what is stored" },
    { "eval",     cmd_eval,     "eval DATASET FILE...  evidence recall on a benchmark (cairn eval --help)" },
    { "model",    cmd_model,    "model list|pull [NAME]|verify [NAME]|rm NAME   embedding models" },
    { "embed",    cmd_embed,    "embed [--model NAME|PATH] [--query] TEXT | --backfill   a vector; vectors for the store" },
    { "reindex",  cmd_reindex,  "reindex               re-embed every message with the current model" },
    { "mcp",      cmd_mcp,      "mcp                   MCP server on stdio for AI clients (docs/MCP.md)" },
    { "import",   cmd_import,   "import KIND [PATH]    past sessions: claude-code, claude-ai, chatgpt, codex, aider, jsonl" },
    { "hook",     cmd_hook,     "hook EVENT            Claude Code hooks: stop, session-end, pre-compact, prompt, session-start" },
    { "setup",    cmd_setup,    "setup claude-code [--dry-run] [--remove]   install the capture hooks" },
    { "doctor",   cmd_doctor,   "doctor                store, hooks, log and transcripts at risk" },
};

static void usage(FILE *f)
{
    fprintf(f, "usage: cairn [--db PATH] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %s\n", commands[i].help);
    fprintf(f, "\nThe store is --db, else $CAIRN_DB, else ~/.cairn/memory.db.\n");
}

int main(int argc, char **argv)
{
    struct cli_ctx ctx = { NULL };
    int i = 1;
    while (i < argc && argv[i][0] == '-') {
        const char *v;
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--version")) {
            printf("cairn %s (ranking policy %s)\n", CAIRN_VERSION, cairn_policy_hash());
            return 0;
        }
        if (cli_opt(argc, argv, &i, "--db", &v)) {
            ctx.db_path = v;
            continue;
        }
        cli_error("unknown option %s", argv[i]);
        usage(stderr);
        return 2;
    }
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    for (size_t k = 0; k < sizeof commands / sizeof commands[0]; k++) {
        if (!strcmp(argv[i], commands[k].name))
            return commands[k].fn(argc - i, argv + i, &ctx);
    }
    if (!strcmp(argv[i], "help")) {
        usage(stdout);
        return 0;
    }
    cli_error("unknown command '%s' (see cairn --help)", argv[i]);
    return 2;
}
