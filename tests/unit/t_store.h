/*
 * t_store.h: helpers for unit tests that work on a store: one number from
 * a query, a chat of n short messages added as a session, a chat of
 * generated texts added as JSON, and the FTS
 * triggers of schema versions 1 to 6 and the tables of 8 (to make an older store).
 * Include after t.h and internal.h.
 */
#ifndef CAIRN_T_STORE_H
#define CAIRN_T_STORE_H

#include <stdint.h>
#include <string.h>

#include "util/buf.h"

/* What versions 1 to 6 kept messages_fts in step with (7 dropped them). */
#define FTS_TRIGGERS_V1_TO_6 \
    "CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN" \
    "  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);" \
    "END;" \
    "CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages BEGIN" \
    "  INSERT INTO messages_fts(messages_fts, rowid, content) VALUES('delete', old.id, old.content);" \
    "  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);" \
    "END;"

/* What version 9 added (stats' time indexes). */
#define SCHEMA_V9_DROP "DROP INDEX sessions_first; DROP INDEX sessions_last;"
/* What version 10 added (corrections). */
#define CORRECTION_TABLES_V10_DROP \
    "DROP TABLE correction_candidates; DROP TABLE corrections;"
/* What version 11 added (memory vectors). */
#define MEMORY_VECTORS_V11_DROP "DROP TABLE memory_vectors;"
/* What version 12 added (sync state, branch pg21: the one place tests name
 * that migration). */
#define SYNC_TABLES_V12_DROP \
    "DROP TABLE sync_foreign; DROP TABLE forgotten; DROP TABLE sync_state;"
/* What version 13 added (Markdown vaults). DROP TABLE of vault_fts would
 * load its tokenizer, which a raw connection lacks: the entry goes from the
 * schema and its shadow tables are dropped. */
#define VAULT_TABLES_V13_DROP \
    "PRAGMA writable_schema=ON; DELETE FROM sqlite_master WHERE name = 'vault_fts';" \
    "PRAGMA writable_schema=OFF; DROP TABLE vault_fts_data; DROP TABLE vault_fts_idx;" \
    "DROP TABLE vault_fts_docsize; DROP TABLE vault_fts_config;" \
    "DROP TABLE vault_sections; DROP TABLE vault_docs; DROP TABLE vaults;"
/* What version 14 added (the one-row totals and the triggers on
 * session_stats that keep it; gone already when a test dropped
 * session_stats first, to make a store older than version 6). */
#define STORE_TOTALS_V14_DROP \
    "DROP TRIGGER IF EXISTS store_totals_ai; DROP TRIGGER IF EXISTS store_totals_au;" \
    "DROP TRIGGER IF EXISTS store_totals_ad; DROP TABLE store_totals;"
/* What version 15 added (event dates, branch time16). */
#define MESSAGE_EVENTS_V15_DROP \
    "DROP TRIGGER message_events_au; DROP TRIGGER message_events_ad;" \
    "DROP TABLE message_events;"
#define EVENTS_FILL_V16_DROP "DROP TABLE events_fill;"
/* What version 17 added (message id runs, branch fast23). */
#define MSG_RUNS_V17_DROP \
    "DROP TRIGGER msg_runs_ad; DROP TABLE msg_runs;"
/* What version 18 added (note sections' vectors, branch vault19c). */
#define VAULT_VECTORS_V18_DROP \
    "DROP TRIGGER vault_vectors_title; DROP TRIGGER vault_vectors_au;" \
    "DROP TRIGGER vault_vectors_ad; DROP TABLE vault_vectors;"
/* What version 30 added (session units, branch units49), which every
 * store made older than it drops first. */
#define SESSION_UNITS_V30_DROP \
    "DROP TABLE session_units; DROP TRIGGER session_turns_ad; DROP TRIGGER session_turns_au;" \
    "CREATE TRIGGER session_turns_ad AFTER DELETE ON messages BEGIN" \
    "  DELETE FROM session_turns WHERE session = old.session;" \
    "END;" \
    "CREATE TRIGGER session_turns_au AFTER UPDATE OF session, position, role, speaker," \
    "  created_at, ntok ON messages WHEN old.session IS NOT new.session OR old.position IS NOT" \
    "  new.position OR old.role IS NOT new.role OR old.speaker IS NOT new.speaker OR" \
    "  old.created_at IS NOT new.created_at OR old.ntok IS NOT new.ntok BEGIN" \
    "  DELETE FROM session_turns WHERE session IN (old.session, new.session);" \
    "END;"
/* What version 29 added (vault totals, branch vault31), which every
 * store made older than it drops first. */
#define VAULT_TOTALS_V29_DROP SESSION_UNITS_V30_DROP \
    "DROP TRIGGER vault_totals_ai; DROP TRIGGER vault_totals_au;" \
    "DROP TRIGGER vault_totals_ad; DROP TABLE vault_totals;"
/* What version 26 added (packed postings, branch post26), which every
 * store made older than it drops first. */
#define POST_V26_DROP VAULT_TOTALS_V29_DROP \
    "DROP TRIGGER post_dirty_ad; DROP TRIGGER post_dirty_au; DROP TABLE post_dirty;" \
    "DROP TABLE post_blocks; DROP TABLE post_terms; DROP TABLE post_state;"
/* What version 25 added (sections cut in pieces, branch vault25): the
 * columns, and the index as version 13 made it (ALTER TABLE reads the
 * whole schema: a connection with the cairn tokenizer, or one whose schema
 * names no FTS5 trigger). Every store made older than it drops it first. */
#define VAULT_CUT_V25_DROP POST_V26_DROP \
    "DROP INDEX vault_sections_hit; ALTER TABLE vault_sections DROP COLUMN part;" \
    "CREATE INDEX vault_sections_hit ON vault_sections(id, doc, line, ntok);" \
    "ALTER TABLE vault_docs DROP COLUMN cut;"
/* What version 24 added (packed session sizes, branch hook24; its
 * triggers are gone already when a test dropped session_stats first),
 * which every store made older than it drops first. */
#define SESSION_SIZES_V24_DROP VAULT_CUT_V25_DROP \
    "DROP TRIGGER IF EXISTS session_sizes_ai; DROP TRIGGER IF EXISTS session_sizes_au;" \
    "DROP TRIGGER IF EXISTS session_sizes_ad; DROP TABLE session_sizes;"
/* What version 22 added ("term tiers", branch tier23), with what came
 * after it (SESSION_TURNS_V21_DROP starts with it). */
#define TIER_V22_DROP SESSION_SIZES_V24_DROP \
    "DROP TRIGGER tier_terms_forget; DROP TRIGGER tier_terms_gone; DROP TRIGGER tier_post_au; DROP TRIGGER tier_post_ad;" \
    "DROP TABLE tier_post; DROP TABLE tier_terms; DROP TABLE tier_state;"
/* What version 21 added (each session's packed turns, branch hook23c),
 * with what came after it. */
#define SESSION_TURNS_V21_DROP TIER_V22_DROP \
    "DROP TRIGGER session_turns_au; DROP TRIGGER session_turns_ad; DROP TABLE session_turns;"
/* What version 20 added (memory sync, branch mem21). sync_state's two
 * columns go with the table, made again as version 12 made it (a test
 * store has no row in it; ALTER TABLE DROP COLUMN would read the whole
 * schema, which the FTS triggers of versions 1 to 6 stop on a raw
 * connection). */
#define MEMORY_SYNC_V20_DROP SESSION_TURNS_V21_DROP \
    "DROP TRIGGER memory_sync_corr_au; DROP TRIGGER memory_sync_corr_ai;" \
    "DROP TRIGGER memory_sync_au; DROP TABLE memory_sync; DROP TABLE memories_forgotten;" \
    "DROP TABLE sync_state; CREATE TABLE sync_state(server TEXT NOT NULL," \
    "  scope TEXT NOT NULL DEFAULT '', push_msg INTEGER NOT NULL DEFAULT 0," \
    "  push_tomb INTEGER NOT NULL DEFAULT 0, pull_tx TEXT NOT NULL DEFAULT '0'," \
    "  updated_at INTEGER NOT NULL, PRIMARY KEY (server, scope));"
/* What version 19 added (runs' token counts, branch fast23b): its trigger
 * (enough below version 17, which drops the table)... */
#define MSG_RUNS_AU_V19_DROP "DROP TRIGGER msg_runs_au;"
/* ...and, for a version-18 store, the column, with version 17's trigger on
 * delete again (ALTER TABLE reads the whole schema: a connection with the
 * cairn tokenizer, or one whose schema names no FTS5 trigger). */
#define MSG_RUNS_LENS_V19_DROP MEMORY_SYNC_V20_DROP MSG_RUNS_AU_V19_DROP \
    "DROP TRIGGER msg_runs_ad; ALTER TABLE msg_runs DROP COLUMN lens;" \
    "CREATE TRIGGER msg_runs_ad AFTER DELETE ON messages BEGIN" \
    "  INSERT INTO msg_runs SELECT old.id + 1, last, session FROM msg_runs WHERE first =" \
    "    (SELECT max(first) FROM msg_runs WHERE first <= old.id) AND last > old.id;" \
    "  DELETE FROM msg_runs WHERE first = old.id;" \
    "  UPDATE msg_runs SET last = old.id - 1 WHERE first =" \
    "    (SELECT max(first) FROM msg_runs WHERE first < old.id) AND last >= old.id;" \
    "END;"
/* Everything after version 16: a version-16 store has none of it. */
#define AFTER_V16_DROP MEMORY_SYNC_V20_DROP MSG_RUNS_AU_V19_DROP VAULT_VECTORS_V18_DROP MSG_RUNS_V17_DROP
/* Everything after version 8: a version-8 store has none of it. */
#define AFTER_V8_DROP AFTER_V16_DROP EVENTS_FILL_V16_DROP MESSAGE_EVENTS_V15_DROP STORE_TOTALS_V14_DROP VAULT_TABLES_V13_DROP SYNC_TABLES_V12_DROP MEMORY_VECTORS_V11_DROP CORRECTION_TABLES_V10_DROP SCHEMA_V9_DROP

/* What versions 8 and later added (the memory tables, then the above):
 * a version-7 store has none of it. */
#define MEMORY_TABLES_V8_DROP AFTER_V8_DROP \
    "DROP TABLE memory_history; DROP TABLE memory_links; DROP TABLE memories;" \
    "DELETE FROM sqlite_sequence;"

/* One number from a query on a connection of the test's own (-1: none). */
static inline int64_t count_raw(sqlite3 *db, const char *sql)
{
    sqlite3_stmt *st;
    int64_t v = -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

static inline int64_t count(struct cairn *h, const char *sql)
{
    sqlite3_stmt *st;
    int64_t n = -1;
    if (sqlite3_prepare_v2(h->db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

static inline void add_chat(struct cairn *h, const char *id, int n)
{
    struct cairn_message m[16];
    char text[16][64];
    for (int i = 0; i < n; i++) {
        snprintf(text[i], sizeof text[i], "message %d of %s", i, id);
        memset(&m[i], 0, sizeof m[i]);
        m[i].role = i % 2 ? "assistant" : "user";
        m[i].content = text[i];
        m[i].at = CAIRN_NO_TIME;
    }
    struct cairn_session s = { 0 };
    s.id = id;
    s.started_at = s.ended_at = CAIRN_NO_TIME;
    s.messages = m;
    s.n_messages = (size_t)n;
    T_EQ_INT(cairn_add_session(h, &s, NULL), CAIRN_OK);
}

/* Session "<pre><s>": messages k0 to k0 + n - 1 (ids "<pre><s>-<k>", a
 * user's when k is even, else an assistant's), each text written by
 * fill(b, s, k) (JSON string content), added as cairn_add_json takes a
 * chat: what the tests of the write paths (test_tier, test_post) add. */
static inline int add_json_session(struct cairn *db, const char *pre, int s, int k0, int n,
                                   void (*fill)(struct buf *b, int s, int k))
{
    struct buf b = BUF_INIT;
    buf_printf(&b, "{\"id\":\"%s%d\",\"messages\":[", pre, s);
    for (int k = k0; k < k0 + n; k++) {
        buf_printf(&b, "%s{\"id\":\"%s%d-%d\",\"role\":\"%s\",\"content\":\"",
                   k > k0 ? "," : "", pre, s, k, k % 2 ? "assistant" : "user");
        fill(&b, s, k);
        buf_adds(&b, "\"}");
    }
    buf_adds(&b, "]}");
    int rc = b.err ? CAIRN_NOMEM : cairn_add_json(db, b.p, b.n, NULL);
    buf_release(&b);
    return rc;
}

#endif
