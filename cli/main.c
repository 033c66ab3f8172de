/*
 * main.c: the `cairn` command: global options, then a command from the
 * table below. One command, one file (cli/cmd_<name>.c).
 *
 * `cairn COMMAND --help` (or -h, or `cairn help COMMAND`) is answered here,
 * from the table, before the command parses anything: every command has a
 * usage text and none can mistake --help for an argument (a session id, a
 * file, a question). eval, import and mcp keep their longer texts in their
 * own files; they get exactly `COMMAND --help`. tests/t/t0530-cli-help.sh
 * asks every command of the table for its usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The usage texts (man page: docs/cairn.1). Exit codes: cli.h. */
static const char usage_add[] =
    "usage: cairn add [FILE|-] [-q|--quiet]\n"
    "Adds sessions in the JSON format of docs/FORMAT.md (one object, an array,\n"
    "or one per line) from FILE, or stdin when FILE is - or absent. Adding a\n"
    "session again is a no-op; with more messages it appends the new ones.\n"
    "  -q, --quiet   no summary line\n";
static const char usage_recall[] =
    "usage: cairn recall QUESTION [--budget N] [--now DATE] [--project P]\n"
    "                   [--session-exclude ID] [--method M] [--source S] [--json]\n"
    "                   [--explain] [--fast]\n"
    "       cairn recall --batch < questions.jsonl\n"
    "What the store holds about QUESTION, packed into a token budget.\n"
    "  --budget N            tokens, 50 to 1000000 (default 4000)\n"
    "  --now DATE            answer as of DATE (ISO 8601), for \"last week\"\n"
    "  --project P           only sessions of project P (cairn sessions lists them)\n"
    "  --session-exclude ID  leave one session out\n"
    "  --method M            cairn (default), raw-bm25, keyword, no-time\n"
    "  --source S            all (default), conversations, notes (cairn vault)\n"
    "  --json                the result as JSON, with each item\n"
    "  --explain             why each item was chosen\n"
    "  --fast                latency first on big stores, as the prompt hook\n"
    "  --batch               one JSON question a line on stdin, one JSON answer a line\n"
    "Exit 3 when nothing is found.\n";
static const char usage_sessions[] =
    "usage: cairn sessions [--project P] [--limit N] [--json]\n"
    "The stored sessions, newest first: start, messages, source, project, id, title.\n"
    "  --project P   only project P\n"
    "  --limit N     at most N sessions\n"
    "  --json        one JSON object a line\n"
    "Exit 3 when there is no session to list.\n";
static const char usage_show[] =
    "usage: cairn show SESSION [--from N] [--to M] [--json]\n"
    "One session's messages verbatim; positions count from 0.\n"
    "  --from N, --to M   only positions N to M (inclusive)\n"
    "  --json             one JSON object a message\n"
    "Exit 1 when there is no such session, 3 when the range holds no message.\n";
static const char usage_export[] =
    "usage: cairn export [--format markdown|jsonl] [--session S] [--project P]\n"
    "The store, one project or one session, oldest first. --format jsonl is the\n"
    "format cairn add reads: cairn export --format jsonl | cairn --db new.db add\n"
    "Exit 1 when there is no such session, 3 when there is nothing to export.\n";
static const char usage_forget[] =
    "usage: cairn forget SESSION...\n"
    "       cairn forget --scrub\n"
    "Deletes each session and all it indexed, and wipes their bytes from the\n"
    "store's files. --scrub wipes what older deletes left, and VACUUMs.\n";
static const char usage_stats[] =
    "usage: cairn stats [--json]\n"
    "Counts and sizes of the store.\n";
static const char usage_redact[] =
    "usage: cairn redact [--dry-run]\n"
    "Masks secrets in what is stored, as the write path does today.\n"
    "  --dry-run   count what would change, change nothing\n";
static const char usage_model[] =
    "usage: cairn model list | pull [NAME] | verify [NAME] | rm NAME\n"
    "Embedding models in ~/.cairn/models ($CAIRN_MODEL_DIR), docs/EMBED.md.\n";
static const char usage_embed[] =
    "usage: cairn embed [--model NAME|PATH] [--query] TEXT\n"
    "       cairn embed --backfill [--quiet]\n"
    "The vector of TEXT as a JSON array (--query: embedded as a question);\n"
    "--backfill embeds the stored messages that have no vector of the current\n"
    "model (docs/HYBRID.md), then the memories (docs/MEMORIES.md).\n";
static const char usage_reindex[] =
    "usage: cairn reindex [--events | --tiers | --pages] [--quiet]\n"
    "Deletes every vector and embeds all messages and memories again with the\n"
    "current model. --events instead reads the dates that messages older than\n"
    "a store's upgrade to schema 15 speak of (the upgrade reads the newest\n"
    "30,000; cairn doctor says how many are left); it can be interrupted.\n"
    "--tiers rebuilds the term tiers: every common word's best sessions, which\n"
    "the prompt hook reads instead of all its matches (a big store; minutes at\n"
    "a million messages). cairn add and cairn import build them when due and\n"
    "every add keeps them current (CAIRN_TIER_KEEP=0: neither).\n"
    "--pages rewrites an older store's file in pages of 16 KB, the size new\n"
    "stores are made with (the prompt hook reads a third of the pages); it\n"
    "needs the only connection to the store and free space its size.\n";
static const char usage_hook[] =
    "usage: cairn hook stop|session-end|pre-compact|prompt|session-start|pre-tool\n"
    "The Claude Code hooks (docs/CAPTURE.md): the event's JSON on stdin. A hook\n"
    "always exits 0; its failures go to ~/.cairn/cairn.log (cairn doctor).\n";
static const char usage_setup[] =
    "usage: cairn setup claude-code [--dry-run] [--remove] [--import|--no-import]\n"
    "                               [--settings FILE]\n"
    "Merges cairn's hooks into ~/.claude/settings.json (backed up first).\n"
    "  --dry-run   show the change, write nothing\n"
    "  --remove    take cairn's hooks out again\n";
static const char usage_doctor[] =
    "usage: cairn doctor [--server URL]\n"
    "Checks the store, the hook log, the hooks, and the Claude Code transcripts\n"
    "not imported yet that are about to be deleted; with --server (or\n"
    "$CAIRN_SERVER) also the PostgreSQL server sync uses: the connection, its\n"
    "cairn schema, pgvector and the clock skew. Exit 1 when something needs\n"
    "attention.\n";
static const char usage_sync[] =
    "usage: cairn sync [--push|--pull] [--project P] [--private] [--server URL]\n"
    "                  [--batch N] [-q|--quiet]\n"
    "Syncs the store with a PostgreSQL server (docs/POSTGRES.md): pushes the\n"
    "sessions, messages, vectors and forgets the server lacks, and the memories\n"
    "and corrections changed or removed here, then pulls what others pushed that\n"
    "this role may read (of a memory, its newest version). Re-running moves\n"
    "nothing; an interrupted sync is finished by the next one.\n"
    "  --push, --pull  one way only (default: both)\n"
    "  --project P     only project P's sessions and memories\n"
    "  --private       the sessions and memories pushed now are private: no other\n"
    "                  role reads them, even in a shared project\n"
    "  --server URL    postgres://USER@HOST/DB (else $CAIRN_SERVER, else libpq's\n"
    "                  PG* variables and ~/.pgpass)\n"
    "  --batch N       messages per server transaction (default 500; memories:\n"
    "                  at most 250)\n";

static const char usage_remember[] =
    "usage: cairn remember [--type T] [--scope P] [--tag X]... [--replaces ID]\n"
    "                      [--contradicts ID] [--related ID] [--ttl 7d]\n"
    "                      [--session S] [--message M]\n"
    "                      [--severity p0|p1|p2] [--when-keyword K]...\n"
    "                      [--when-path GLOB]... [--when-command PATTERN]... TEXT\n"
    "Keeps TEXT as an explicit memory (docs/MEMORIES.md) and prints its id.\n"
    "  --type T        fact (default), preference, decision, procedure, correction\n"
    "  --scope P       project P (default: global)\n"
    "  --tag X         a tag; repeat for more\n"
    "  --replaces ID   supersede memory ID: it stays as history, never listed alone\n"
    "  --contradicts ID, --related ID   link it to memory ID\n"
    "  --ttl 7d        remove it after 7 days (s, m, h, d, w)\n"
    "  --session S, --message M   where it came from\n"
    "A correction (--type correction) also takes:\n"
    "  --severity p1   p0 (the pre-tool hook denies), p1 (default) or p2 (it asks)\n"
    "  --when-keyword K, --when-path GLOB, --when-command PATTERN\n"
    "                  when it applies (repeat each for more): a word of the tool\n"
    "                  call, a file glob (*.lock), a command (git push --force)\n";
static const char usage_memories[] =
    "usage: cairn memories list [--scope P] [--type T] [--all] [--json]\n"
    "       cairn memories show ID | edit ID [TEXT] [--severity P] [--when-...] | rm ID | undo ID\n"
    "       cairn memories export > FILE | import FILE\n"
    "       cairn memories export --markdown [--scope P]\n"
    "       cairn memories review [--accept ID [--severity p1] [--when-...] | --reject ID]\n"
    "       cairn memories stats [--scope P] | recognise < PROMPTS\n"
    "The explicit memories (docs/MEMORIES.md), newest first. --scope P lists\n"
    "P's and the global ones; --all adds superseded ones. edit keeps the old\n"
    "text in the history (show lists it), and sets a correction's --severity and\n"
    "--when-* (one given replaces that list, \"\" empties it; they have no history);\n"
    "undo takes back the last change; rm\n"
    "deletes a memory with its history and wipes its bytes. export and import\n"
    "use JSONL; export --markdown prints the live ones grouped by scope and\n"
    "type. Exit 3 when list finds none.\n"
    "review lists the candidate corrections the prompt hook recognised; --accept\n"
    "makes one a correction (--severity and --when-* as in remember), --reject drops\n"
    "it. stats shows each correction's retrieved/heeded/recurred counts and heed\n"
    "rate. recognise reads prompts (JSON strings, a line each) and prints the rule\n"
    "that fired or -.\n";

static const char usage_vault[] =
    "usage: cairn vault add PATH [--name N] [--exclude GLOB]...\n"
    "       cairn vault list [--json] | rm NAME | reindex [NAME]\n"
    "Folders of Markdown notes recalled beside the conversations (docs/VAULTS.md).\n"
    "add indexes PATH as vault N (default: the folder's name): one document a\n"
    "file, cut at its headings, with its frontmatter's title, tags and aliases.\n"
    ".gitignore files and each --exclude GLOB leave files out; binary files and\n"
    "files over 4 MB are skipped with a note. reindex reads only the files whose\n"
    "size, mtime and content changed; removed files leave the index. rm removes\n"
    "a vault and wipes its bytes from the store. Files are never written.\n"
    "Exit 3 when list finds none.\n";

static const char usage_web[] =
    "usage: cairn web [--port N] [--open]\n"
    "A local web page to browse, search and control the store (docs/WEB.md),\n"
    "on 127.0.0.1 and [::1] only. Prints its address, which holds a token new\n"
    "each run; requests without it are refused. Ctrl-C stops it.\n"
    "  --port N   the port (default 0: any free one)\n"
    "  --open     open the address in the browser (xdg-open)\n";

static const struct command {
    const char *name;
    cli_cmd_fn  fn;
    const char *help;    /* its line in `cairn --help` */
    const char *usage;   /* `cairn NAME --help`; NULL: the command's own */
} commands[] = {
    { "add",      cmd_add,      "add [FILE|-]          add sessions (JSON or JSONL)", usage_add },
    { "recall",   cmd_recall,   "recall QUESTION       what the store holds about it, in a budget",
      usage_recall },
    { "sessions", cmd_sessions, "sessions [--project P] [--json]   list sessions", usage_sessions },
    { "show",     cmd_show,     "show SESSION [--from N --to M]    "
                                "one session verbatim", usage_show },
    { "export",   cmd_export,   "export [--format markdown|jsonl] [--session S]", usage_export },
    { "forget",   cmd_forget,   "forget SESSION|--scrub  "
                                "delete and wipe a session and all it indexed",
      usage_forget },
    { "stats",    cmd_stats,    "stats                 counts and sizes", usage_stats },
    { "redact",   cmd_redact,   "redact [--dry-run]    "
                                "mask secrets in what is stored", usage_redact },
    { "eval",     cmd_eval,     "eval DATASET FILE...  "
                                "evidence recall on a benchmark (cairn eval --help)",
      NULL },
    { "model",    cmd_model,    "model list|pull [NAME]|verify [NAME]|rm NAME   embedding models",
      usage_model },
    { "embed",    cmd_embed,    "embed [--model NAME|PATH] [--query] TEXT | --backfill   "
                                "a vector; vectors for the store",
      usage_embed },
    { "reindex",  cmd_reindex,  "reindex               "
                                "re-embed every message with the current model",
      usage_reindex },
    { "mcp",      cmd_mcp,      "mcp                   "
                                "MCP server on stdio for AI clients (docs/MCP.md)",
      NULL },
    { "import",   cmd_import,   "import KIND [PATH]    "
                                "past sessions: claude-code, claude-ai, chatgpt, codex, "
                                "aider, jsonl",
      NULL },
    { "hook",     cmd_hook,     "hook EVENT            "
                                "Claude Code hooks: stop, session-end, pre-compact, prompt, "
                                "session-start, pre-tool",
      usage_hook },
    { "setup",    cmd_setup,    "setup claude-code [--dry-run] [--remove]   "
                                "install the capture hooks",
      usage_setup },
    { "remember", cmd_remember, "remember [--type T] [--scope P] TEXT   keep an explicit memory",
      usage_remember },
    { "memories", cmd_memories, "memories list|show|edit|rm|undo|export|import   explicit memories",
      usage_memories },
    { "vault",    cmd_vault,    "vault add PATH|list|rm NAME|reindex [NAME]   "
                                "Markdown notes recalled beside conversations",
      usage_vault },
    { "web",      cmd_web,      "web [--port N] [--open]   "
                                "a local web page: browse, search, recall preview, forget",
      usage_web },
    { "sync",     cmd_sync,     "sync [--push|--pull] [--project P] [--server URL]   "
                                "share through PostgreSQL",
      usage_sync },
    { "doctor",   cmd_doctor,   "doctor [--server URL] "
                                "store, hooks, log, transcripts at risk, the server",
      usage_doctor },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: cairn [--db PATH] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %s\n", commands[i].help);
    fprintf(f, "\n`cairn COMMAND --help` for its options; `man cairn` for all.\n"
               "The store is --db, else $CAIRN_DB, else ~/.cairn/memory.db; a postgres://\n"
               "URL reads a server that `cairn sync` fills (read commands only).\n"
               "Exit codes: 0 ok, 1 failed, 2 bad usage, 3 nothing found.\n");
}

static const struct command *find_command(const char *name)
{
    for (size_t k = 0; k < N_COMMANDS; k++)
        if (!strcmp(name, commands[k].name))
            return &commands[k];
    return NULL;
}

/* 1 if argv (after the command name) asks for help. */
static int wants_help(int argc, char **argv)
{
    for (int k = 1; k < argc; k++)
        if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h"))
            return 1;
    return 0;
}

/* The usage text of c on stdout, exit code 0. */
static int command_help(const struct command *c, struct cli_ctx *ctx)
{
    if (!c->usage) {
        char *av[] = { (char *)c->name, "--help", NULL };
        return c->fn(2, av, ctx);
    }
    fputs(c->usage, stdout);
    return 0;
}

int main(int argc, char **argv)
{
    struct cli_ctx ctx = { NULL };
    const struct command *c;
    int i = 1;
    /* The process is ours: SQLite's memory statistics off before its
     * first use (nothing here reads them; a hook's open ~0.5 M fewer
     * instructions). It cannot fail this early; if it did, nothing
     * changed and nothing depends on it. */
    (void)cairn_process_init();
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
    if (!strcmp(argv[i], "help")) {
        if (i + 1 >= argc) {
            usage(stdout);
            return 0;
        }
        if ((c = find_command(argv[i + 1])))
            return command_help(c, &ctx);
        cli_error("unknown command '%s' (see cairn --help)", argv[i + 1]);
        return 2;
    }
    if ((c = find_command(argv[i])))
        return wants_help(argc - i, argv + i) ? command_help(c, &ctx)
                                              : c->fn(argc - i, argv + i, &ctx);
    cli_error("unknown command '%s' (see cairn --help)", argv[i]);
    return 2;
}
