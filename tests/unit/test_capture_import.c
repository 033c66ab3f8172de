/*
 * test_capture_import.c: the capture layer above the parsers: schema
 * version 2 and the migration of a version-1 store, the capture state,
 * cairn_forget dropping it, project identity from git layouts (worktrees,
 * monorepo subfolders, .cairn-project), and cairn_import_file (incremental
 * reads, shrunk files, .zip exports).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sqlite3.h>
#include <zip.h>

#include "cairn.h"
#include "internal.h"
#include "text/tokenize.h"
#include "t.h"
#include "t_open.h"

static char tmpdir[] = "/tmp/cairn-test-capture-XXXXXX";

/* The version-1 schema exactly as cairn 0.1.0 created it (frozen here:
 * the point is to migrate stores that already exist). */
static const char *v1_sql =
    "CREATE TABLE sessions(id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE,"
    "  source TEXT NOT NULL DEFAULT '', project TEXT NOT NULL DEFAULT '',"
    "  title TEXT NOT NULL DEFAULT '', started_at INTEGER, ended_at INTEGER, meta TEXT,"
    "  stored_at INTEGER NOT NULL);"
    "CREATE INDEX sessions_project ON sessions(project, started_at);"
    "CREATE INDEX sessions_started ON sessions(started_at);"
    "CREATE TABLE messages(id INTEGER PRIMARY KEY,"
    "  session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    "  position INTEGER NOT NULL, ext_id TEXT,"
    "  role TEXT NOT NULL CHECK (role IN ('user','assistant')), speaker TEXT,"
    "  content TEXT NOT NULL, created_at INTEGER, hash INTEGER NOT NULL,"
    "  ntok INTEGER NOT NULL DEFAULT 0, UNIQUE(session, position));"
    "CREATE UNIQUE INDEX messages_ext ON messages(session, ext_id) WHERE ext_id IS NOT NULL;"
    "CREATE INDEX messages_hash ON messages(session, hash);"
    "CREATE INDEX messages_time ON messages(created_at);"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages',"
    "  content_rowid='id', tokenize='cairn');"
    "CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN"
    "  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
    "END;"
    "CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN"
    "  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);"
    "END;"
    "CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages BEGIN"
    "  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);"
    "  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
    "END;"
    "INSERT INTO sessions VALUES (1, 'old-1', 'locomo', 'p', 'Old one', 100, 200, NULL, 300);"
    "INSERT INTO messages VALUES (1, 1, 0, 'm1', 'user', NULL, 'the zebra crossing', 100, 7, 3);"
    "INSERT INTO messages VALUES (2, 1, 1, 'm2', 'assistant', NULL, 'noted about zebras', 200, 8, 3);"
    "PRAGMA user_version=1; PRAGMA application_id=1668443697;";

static void path_in(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Messages in the store (the tests below hold one session each). */
static int count_messages(struct cairn *db)
{
    struct cairn_stats st;
    if (cairn_get_stats(db, &st))
        return -1;
    return (int)st.messages;
}

static void test_migrate_v1(void)
{
    char path[PATH_MAX];
    sqlite3 *raw;
    path_in(path, sizeof path, "v1.db");
    T_EQ_INT(sqlite3_open(path, &raw), SQLITE_OK);
    T_EQ_INT(store_fts_register(raw), SQLITE_OK);
    T_EQ_INT(sqlite3_exec(raw, v1_sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(raw);

    struct cairn *db;
    T_EQ_INT(t_open(path, 0, &db), CAIRN_OK);
    struct cairn_stats st;
    T_EQ_INT(cairn_get_stats(db, &st), CAIRN_OK);
    T_CHECK(st.schema_version >= 2);   /* later versions migrate on top */
    T_EQ_INT(st.sessions, 1);
    T_EQ_INT(st.messages, 2);
    /* the index still finds the old text, and new writes work */
    struct cairn_recall_opts ro = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    ro.method = CAIRN_METHOD_RAW_BM25;
    T_EQ_INT(cairn_recall(db, "zebra crossing", &ro, &r), CAIRN_OK);
    T_CHECK(r && r->n_items > 0 && strstr(r->text, "zebra"));
    cairn_recall_free(r);
    struct cairn_capture_state cs = { path, "old-1", 10, 20, 1, 2, 3, CAIRN_NO_TIME };
    T_EQ_INT(cairn_capture_state_set(db, &cs), CAIRN_OK);
    cairn_close(db);
    /* opening again is a no-op, and the row stayed */
    T_EQ_INT(t_open(path, CAIRN_OPEN_READONLY, &db), CAIRN_OK);
    struct cairn_capture_state got;
    T_EQ_INT(cairn_capture_state_get(db, path, &got), CAIRN_OK);
    T_EQ_INT(got.offset, 10);
    cairn_close(db);
}

static int walk_count(void *arg, const struct cairn_capture_state *s)
{
    (*(int *)arg)++;
    return 0;
}

static void test_state_and_forget(void)
{
    struct cairn *db;
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    struct cairn_capture_state got, cs = { "/t/a.jsonl", "s-a", 100, 120, 42, 7, 1000,
                                           CAIRN_NO_TIME };
    T_EQ_INT(cairn_capture_state_get(db, "/t/a.jsonl", &got), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_capture_state_set(db, &cs), CAIRN_OK);
    cs.offset = 120;
    T_EQ_INT(cairn_capture_state_set(db, &cs), CAIRN_OK);  /* replaces */
    T_EQ_INT(cairn_capture_state_get(db, "/t/a.jsonl", &got), CAIRN_OK);
    T_EQ_INT(got.offset, 120);
    T_EQ_INT(got.size, 120);
    T_EQ_INT(got.inode, 42);
    T_EQ_INT(got.mtime, 1000);
    T_CHECK(got.updated_at != CAIRN_NO_TIME);
    struct cairn_capture_state other = { "/t/b.jsonl", NULL, 1, 1, 1, 1, CAIRN_NO_TIME,
                                         CAIRN_NO_TIME };
    T_EQ_INT(cairn_capture_state_set(db, &other), CAIRN_OK);
    int n = 0;
    T_EQ_INT(cairn_capture_states(db, NULL, walk_count, &n), CAIRN_OK);
    T_EQ_INT(n, 2);
    /* forgetting the session drops its row, not the other one */
    struct cairn_message m = { "x", "user", NULL, "hello", 0, CAIRN_NO_TIME };
    struct cairn_session s = { "s-a", "claude-code", NULL, NULL, CAIRN_NO_TIME, CAIRN_NO_TIME,
                               NULL, &m, 1 };
    T_EQ_INT(cairn_add_session(db, &s, NULL), CAIRN_OK);
    T_EQ_INT(cairn_forget(db, "s-a"), CAIRN_OK);
    T_EQ_INT(cairn_capture_state_get(db, "/t/a.jsonl", &got), CAIRN_NOTFOUND);
    T_EQ_INT(cairn_capture_state_get(db, "/t/b.jsonl", &got), CAIRN_OK);
    T_EQ_INT(cairn_capture_state_delete(db, "/t/b.jsonl"), CAIRN_OK);
    T_EQ_INT(cairn_capture_state_delete(db, "/t/b.jsonl"), CAIRN_NOTFOUND);
    /* session update */
    T_EQ_INT(cairn_add_session(db, &s, NULL), CAIRN_OK);
    T_EQ_INT(cairn_session_update(db, "s-a", "New title", "{\"gitBranch\":\"dev\"}"), CAIRN_OK);
    T_EQ_INT(cairn_session_update(db, "s-a", NULL, "[1]"), CAIRN_INVALID);
    T_EQ_INT(cairn_session_update(db, "nope", "t", NULL), CAIRN_NOTFOUND);
    cairn_close(db);
}

static void mkdirs(const char *rel)
{
    char p[PATH_MAX];
    path_in(p, sizeof p, rel);
    for (char *s = p + strlen(tmpdir) + 1; *s; s++) {
        if (*s == '/') {
            *s = '\0';
            mkdir(p, 0700);
            *s = '/';
        }
    }
    mkdir(p, 0700);
}

static void put(const char *rel, const char *text)
{
    char p[PATH_MAX];
    path_in(p, sizeof p, rel);
    write_text(p, text);
}

static void test_project(void)
{
    char p[PATH_MAX], real[PATH_MAX], buf[PATH_MAX + 64];
    struct cairn_project pr;
    /* a repository with a remote, a subfolder, and a linked worktree */
    mkdirs("repo/.git/worktrees/wt");
    mkdirs("repo/pkg/sub");
    mkdirs("wt/pkg");
    put("repo/.git/HEAD", "ref: refs/heads/main\n");
    put("repo/.git/config", "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = "
        "https://example.org/other.git\n[remote \"origin\"]\n\turl = git@github.com:u/r.git\n");
    put("repo/.git/worktrees/wt/HEAD", "ref: refs/heads/feature/x\n");
    put("repo/.git/worktrees/wt/commondir", "../..\n");
    path_in(p, sizeof p, "repo/.git/worktrees/wt");
    snprintf(buf, sizeof buf, "gitdir: %s\n", p);
    put("wt/.git", buf);

    path_in(p, sizeof p, "repo/pkg/sub");
    T_EQ_INT(cairn_project_of(p, &pr), CAIRN_OK);
    T_EQ_STR(pr.name, "github.com/u/r");
    T_EQ_STR(pr.git_branch, "main");
    T_EQ_STR(pr.git_remote, "git@github.com:u/r.git");
    path_in(p, sizeof p, "repo/.git");
    T_CHECK(realpath(p, real) != NULL);
    T_EQ_STR(pr.git_common_dir, real);

    path_in(p, sizeof p, "wt/pkg");
    T_EQ_INT(cairn_project_of(p, &pr), CAIRN_OK);
    T_EQ_STR(pr.name, "github.com/u/r");
    T_EQ_STR(pr.git_branch, "feature/x");
    T_EQ_STR(pr.git_common_dir, real);

    /* no remote: the main worktree's folder, from the worktree too */
    mkdirs("solo/.git/worktrees/w2");
    mkdirs("w2");
    put("solo/.git/HEAD", "ref: refs/heads/trunk\n");
    put("solo/.git/config", "[core]\n\tbare = false\n");
    put("solo/.git/worktrees/w2/commondir", "../..\n");
    put("w2/.git", "gitdir: ../solo/.git/worktrees/w2\n");     /* relative */
    path_in(p, sizeof p, "solo");
    T_CHECK(realpath(p, real) != NULL);
    T_EQ_INT(cairn_project_of(p, &pr), CAIRN_OK);
    T_EQ_STR(pr.name, real);
    path_in(p, sizeof p, "w2");
    T_EQ_INT(cairn_project_of(p, &pr), CAIRN_OK);
    T_EQ_STR(pr.name, real);

    /* .cairn-project wins, from any folder above */
    put("repo/pkg/.cairn-project", "  my-package \n");
    path_in(p, sizeof p, "repo/pkg/sub");
    T_EQ_INT(cairn_project_of(p, &pr), CAIRN_OK);
    T_EQ_STR(pr.name, "my-package");
    T_EQ_STR(pr.git_branch, "main");

    /* not in a repository, or not there at all: the folder itself */
    T_EQ_INT(cairn_project_of("/nonexistent/place/", &pr), CAIRN_OK);
    T_EQ_STR(pr.name, "/nonexistent/place");
    T_EQ_INT(cairn_project_of("", &pr), CAIRN_INVALID);
    T_EQ_INT(cairn_project_of(NULL, &pr), CAIRN_INVALID);

    /* remote spellings */
    put("solo/.git/config", "[remote \"origin\"]\n  url = ssh://git@host.example:22/team/app.git/\n");
    path_in(p, sizeof p, "solo");
    T_EQ_INT(cairn_project_of(p, &pr), CAIRN_OK);
    T_EQ_STR(pr.name, "host.example:22/team/app");
}

static const char *cc_lines[] = {
    "{\"type\":\"user\",\"uuid\":\"u1\",\"parentUuid\":null,\"sessionId\":\"inc-1\","
    "\"cwd\":\"/nowhere/proj\",\"timestamp\":\"2026-01-01T10:00:00Z\","
    "\"message\":{\"role\":\"user\",\"content\":\"first question\"}}\n",
    "{\"type\":\"assistant\",\"uuid\":\"a1\",\"parentUuid\":\"u1\",\"sessionId\":\"inc-1\","
    "\"timestamp\":\"2026-01-01T10:00:05Z\",\"message\":{\"id\":\"msg_1\",\"role\":\"assistant\","
    "\"model\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"first answer\"}]}}\n",
    "{\"type\":\"user\",\"uuid\":\"u2\",\"parentUuid\":\"a1\",\"sessionId\":\"inc-1\","
    "\"timestamp\":\"2026-01-01T10:01:00Z\","
    "\"message\":{\"role\":\"user\",\"content\":\"second <private>secret</private>question\"}}\n",
    "{\"type\":\"assistant\",\"uuid\":\"a2\",\"parentUuid\":\"u2\",\"sessionId\":\"inc-1\","
    "\"timestamp\":\"2026-01-01T10:01:05Z\",\"message\":{\"id\":\"msg_2\",\"role\":\"assistant\","
    "\"model\":\"m\",\"content\":[{\"type\":\"text\",\"text\":\"second answer\"}]}}\n",
};

static void test_import_incremental(void)
{
    char path[PATH_MAX];
    struct cairn *db;
    struct cairn_import_stats st;
    path_in(path, sizeof path, "inc-1.jsonl");
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    write_text(path, cc_lines[0]);
    FILE *f = fopen(path, "ab");
    fputs(cc_lines[1], f);
    fputs("{\"type\":\"user\",\"uuid\":\"u2\",\"parentU", f);   /* half-written */
    fclose(f);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, NULL, &st), CAIRN_OK);
    T_EQ_INT(st.messages_added, 2);
    struct cairn_capture_state cs;
    T_EQ_INT(cairn_capture_state_get(db, path, &cs), CAIRN_OK);
    T_EQ_INT(cs.offset, strlen(cc_lines[0]) + strlen(cc_lines[1]));
    T_CHECK(cs.size > cs.offset);
    /* the rest of the file arrives */
    write_text(path, cc_lines[0]);
    f = fopen(path, "ab");
    fputs(cc_lines[1], f);
    fputs(cc_lines[2], f);
    fputs(cc_lines[3], f);
    fclose(f);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, NULL, &st), CAIRN_OK);
    T_EQ_INT(st.messages_added, 2);
    T_EQ_INT(st.messages_skipped, 0);     /* only the new turns were offered */
    T_EQ_INT(st.private_removed, 1);
    T_EQ_INT(count_messages(db), 4);
    /* unchanged: not even read */
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, NULL, &st), CAIRN_OK);
    T_EQ_INT(st.files_unchanged, 1);
    T_EQ_INT(st.files, 0);
    /* shrunk (rewritten): read from the start, nothing new */
    write_text(path, cc_lines[0]);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, path, NULL, &st), CAIRN_OK);
    T_EQ_INT(st.files, 1);
    T_EQ_INT(st.messages_skipped, 1);
    T_EQ_INT(count_messages(db), 4);
    /* the private text never reached the store */
    struct cairn_recall_opts ro = CAIRN_RECALL_OPTS_INIT;
    struct cairn_recall *r = NULL;
    T_EQ_INT(cairn_recall(db, "secret", &ro, &r), CAIRN_OK);
    T_CHECK(r && !strstr(r->text, "secret"));
    cairn_recall_free(r);
    /* errors */
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, "/no/such.jsonl", NULL, NULL),
             CAIRN_IO);
    T_EQ_INT(cairn_import_file(db, 99, path, NULL, NULL), CAIRN_INVALID);
    T_EQ_INT(cairn_import_kind_parse("chatgpt"), CAIRN_IMPORT_CHATGPT);
    T_EQ_INT(cairn_import_kind_parse("nope"), 0);
    cairn_close(db);
}

static int collect_src(void *arg, const struct cairn_session_info *s)
{
    if (strcmp(s->source, "claude-ai") == 0)
        (*(int *)arg)++;
    return 0;
}

static void test_import_zip(void)
{
    char zpath[PATH_MAX], jpath[PATH_MAX];
    const char *conv = "[{\"uuid\":\"z-1\",\"name\":\"Zipped\",\"created_at\":"
        "\"2025-01-01T00:00:00Z\",\"chat_messages\":[{\"uuid\":\"zm1\",\"sender\":\"human\","
        "\"text\":\"hello from the zip\",\"created_at\":\"2025-01-01T00:00:00Z\"},"
        "{\"uuid\":\"zm2\",\"sender\":\"assistant\",\"text\":\"hi\",\"created_at\":"
        "\"2025-01-01T00:00:01Z\"}]}]";
    path_in(zpath, sizeof zpath, "export.zip");
    path_in(jpath, sizeof jpath, "conversations.json");
    int err = 0;
    zip_t *z = zip_open(zpath, ZIP_CREATE | ZIP_TRUNCATE, &err);
    T_CHECK(z != NULL);
    if (!z)
        return;
    zip_source_t *src = zip_source_buffer(z, "[]", 2, 0);
    zip_file_add(z, "users.json", src, 0);
    src = zip_source_buffer(z, conv, strlen(conv), 0);
    zip_file_add(z, "data-2025/conversations.json", src, 0);
    T_EQ_INT(zip_close(z), 0);

    struct cairn *db;
    struct cairn_import_stats st;
    memset(&st, 0, sizeof st);
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_AI, zpath, NULL, &st), CAIRN_OK);
    T_EQ_INT(st.sessions_added, 1);
    T_EQ_INT(st.messages_added, 2);
    int n = 0;
    cairn_sessions(db, NULL, 0, 0, collect_src, &n);
    T_EQ_INT(n, 1);
    /* the same conversations.json given bare adds nothing new */
    write_text(jpath, conv);
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_AI, jpath, NULL, &st), CAIRN_OK);
    T_EQ_INT(st.messages_added, 0);
    T_EQ_INT(st.messages_skipped, 2);
    /* a zip without conversations.json, and a damaged one */
    z = zip_open(zpath, ZIP_CREATE | ZIP_TRUNCATE, &err);
    src = zip_source_buffer(z, "x", 1, 0);
    zip_file_add(z, "other.txt", src, 0);
    zip_close(z);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CHATGPT, zpath, NULL, NULL), CAIRN_INVALID);
    write_text(zpath, "PK\003\004garbage that is not a zip");
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CHATGPT, zpath, NULL, NULL), CAIRN_INVALID);
    cairn_close(db);
}

/* Made-up exports, one conversation each. */
static const char *gpt_conv =
    "[{\"id\":\"g-1\",\"title\":\"Kettle\",\"create_time\":1760000000.0,\"current_node\":\"a\","
    "\"mapping\":{\"u\":{\"id\":\"u\",\"parent\":null,\"children\":[\"a\"],\"message\":{\"id\":\"u\","
    "\"author\":{\"role\":\"user\"},\"create_time\":1760000000.0,\"content\":{\"content_type\":"
    "\"text\",\"parts\":[\"how long to descale a kettle\"]}}},\"a\":{\"id\":\"a\",\"parent\":\"u\","
    "\"children\":[],\"message\":{\"id\":\"a\",\"author\":{\"role\":\"assistant\"},\"create_time\":"
    "1760000010.0,\"content\":{\"content_type\":\"text\",\"parts\":[\"twenty minutes\"]}}}}}]";
static const char *cai_conv =
    "[{\"uuid\":\"c-1\",\"name\":\"Bread\",\"created_at\":\"2025-01-01T00:00:00Z\","
    "\"chat_messages\":[{\"uuid\":\"cm1\",\"sender\":\"human\",\"text\":\"rye or spelt\","
    "\"created_at\":\"2025-01-01T00:00:00Z\",\"attachments\":[{\"file_name\":\"recipe.txt\","
    "\"extracted_content\":\"500 g of flour\"}]},{\"uuid\":\"cm2\",\"sender\":\"assistant\","
    "\"text\":\"spelt\",\"created_at\":\"2025-01-01T00:00:05Z\"}]}]";

/* A file imported as the wrong kind is refused with what it looks like,
 * leaves no capture state, and the right import then reads it; a file of
 * the right kind with nothing in it is never "unchanged". */
static void test_import_wrong_kind(void)
{
    static const struct { const char *name; int wrong, right; const char *says; } cases[] = {
        { "gpt.json", CAIRN_IMPORT_CLAUDE_AI, CAIRN_IMPORT_CHATGPT,
          "looks like a ChatGPT export, not a claude.ai export: cairn import chatgpt " },
        { "cai.json", CAIRN_IMPORT_CHATGPT, CAIRN_IMPORT_CLAUDE_AI,
          "looks like a claude.ai export, not a ChatGPT export: cairn import claude-ai " },
        { "cc.jsonl", CAIRN_IMPORT_CHATGPT, CAIRN_IMPORT_CLAUDE_CODE,
          "looks like a Claude Code transcript, not a ChatGPT export: cairn import claude-code " },
        { "cc2.jsonl", CAIRN_IMPORT_CODEX, CAIRN_IMPORT_CLAUDE_CODE,
          "looks like a Claude Code transcript, not a Codex CLI rollout" },
    };
    char path[PATH_MAX];
    struct cairn *db;
    struct cairn_import_stats st;
    struct cairn_capture_state cs;
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        path_in(path, sizeof path, cases[i].name);
        write_text(path, i == 0 ? gpt_conv : i == 1 ? cai_conv : cc_lines[0]);
        memset(&st, 0, sizeof st);
        T_EQ_INT(cairn_import_file(db, cases[i].wrong, path, NULL, &st), CAIRN_INVALID);
        T_CHECK(strstr(cairn_errmsg(db), cases[i].says) != NULL);
        T_EQ_INT(st.sessions_added, 0);
        T_EQ_INT(cairn_capture_state_get(db, path, &cs), CAIRN_NOTFOUND);
        memset(&st, 0, sizeof st);
        T_EQ_INT(cairn_import_file(db, cases[i].right, path, NULL, &st), CAIRN_OK);
        T_EQ_INT(st.files_unchanged, 0);
        T_EQ_INT(st.sessions_added, i == 3 ? 0 : 1);   /* cc2 holds cc's session again */
        T_EQ_INT(st.sessions_added + st.sessions_updated + (i == 3), 1);
    }
    /* a zip of a ChatGPT export, imported as a Claude Code transcript */
    char zpath[PATH_MAX];
    path_in(zpath, sizeof zpath, "gpt.zip");
    int err = 0;
    zip_t *z = zip_open(zpath, ZIP_CREATE | ZIP_TRUNCATE, &err);
    T_CHECK(z != NULL);
    if (z) {
        zip_source_t *src = zip_source_buffer(z, gpt_conv, strlen(gpt_conv), 0);
        zip_file_add(z, "conversations.json", src, 0);
        zip_close(z);
        T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_CODE, zpath, NULL, NULL),
                 CAIRN_INVALID);
        T_CHECK(strstr(cairn_errmsg(db), "looks like a ChatGPT export") != NULL);
    }
    /* the right kind, nothing in it: read, recorded with nothing consumed,
     * and read again next time */
    path_in(path, sizeof path, "empty.json");
    write_text(path, "[{\"title\":\"no mapping here\"}]");
    for (int run = 0; run < 2; run++) {
        memset(&st, 0, sizeof st);
        T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CHATGPT, path, NULL, &st), CAIRN_OK);
        T_EQ_INT(st.files, 1);
        T_EQ_INT(st.files_unchanged, 0);
        T_EQ_INT(st.sessions, 0);
        T_EQ_INT(cairn_capture_state_get(db, path, &cs), CAIRN_OK);
        T_EQ_INT(cs.offset, 0);
        T_CHECK(cs.size > 0);
    }
    /* not the kind at all, and like nothing: the old refusal */
    write_text(path, "\"just a string\"");
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CHATGPT, path, NULL, NULL), CAIRN_INVALID);
    T_CHECK(strstr(cairn_errmsg(db), "is not a ChatGPT export") != NULL);
    cairn_close(db);
}

static int find_text(void *arg, const struct cairn_message_info *m)
{
    const char **want = arg;
    if (m->content && strstr(m->content, want[0]))
        want[1] = "found";
    return 0;
}

/* --attachments after a plain import reads the export again and extends
 * the messages that had attachments. */
static void test_import_attachments(void)
{
    char path[PATH_MAX];
    struct cairn *db;
    struct cairn_import_stats st;
    struct cairn_import_opts o = CAIRN_IMPORT_OPTS_INIT;
    const char *want[2] = { "[attachment: recipe.txt]\n500 g of flour", NULL };
    path_in(path, sizeof path, "attach.json");
    write_text(path, cai_conv);
    T_EQ_INT(t_open(":memory:", 0, &db), CAIRN_OK);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_AI, path, NULL, NULL), CAIRN_OK);
    T_EQ_INT(cairn_messages(db, "c-1", 0, -1, find_text, want), CAIRN_OK);
    T_CHECK(want[1] == NULL);
    o.flags = CAIRN_IMPORT_ATTACHMENTS;
    memset(&st, 0, sizeof st);
    T_EQ_INT(cairn_import_file(db, CAIRN_IMPORT_CLAUDE_AI, path, &o, &st), CAIRN_OK);
    T_EQ_INT(st.files_unchanged, 0);
    T_EQ_INT(st.sessions_updated, 1);
    T_EQ_INT(cairn_messages(db, "c-1", 0, -1, find_text, want), CAIRN_OK);
    T_CHECK(want[1] != NULL);
    T_EQ_INT(count_messages(db), 2);
    cairn_close(db);
}

int main(void)
{
    setenv("TZ", "UTC", 1);
    if (!mkdtemp(tmpdir))
        return 1;
    T_RUN(test_migrate_v1);
    T_RUN(test_state_and_forget);
    T_RUN(test_project);
    T_RUN(test_import_incremental);
    T_RUN(test_import_zip);
    T_RUN(test_import_wrong_kind);
    T_RUN(test_import_attachments);
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return T_DONE();
}
