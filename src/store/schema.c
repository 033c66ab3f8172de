/*
 * schema.c: the store's schema and its migrations.
 *
 * PRAGMA user_version is the schema version. Each migration takes the
 * store from version N-1 to N inside the same transaction as the version
 * bump, so a crash leaves the store at N-1 or N, never between. A store
 * of a newer version than this build knows is refused rather than
 * guessed at. Migrations only add: they never drop user data.
 *
 * Version 1:
 *   sessions      one row per conversation; ext_id is the caller's id
 *   messages      verbatim turns; (session, position) orders them;
 *                 hash dedupes messages that come without an id;
 *                 ntok is the message's length in index tokens (BM25)
 *   messages_fts  FTS5 over messages.content with the "cairn" tokenizer,
 *                 external content kept in step by triggers (version 7:
 *                 by the code that writes messages)
 *
 * Version 2:
 *   capture_state how far capture has read each transcript/export file
 *                 (byte offset of the last complete line, size, inode,
 *                 mtime), keyed by path; `session` is the session's
 *                 external id so cairn_forget can drop the row with it
 *
 * Version 3:
 *   no insert trigger: ingest.c adds each new message to messages_fts in
 *   the same transaction (delete and update triggers stay)
 *
 * Version 4:
 *   vectors       dense vectors, one per piece of a message and model
 *                 (store/vectors.h): model id, message, piece index, the
 *                 message's session (so recall reads them in one scan),
 *                 dim, and v: int8[dim] with x ~ scale * v (or f32[dim]).
 *                 Triggers drop a message's vectors when it is deleted
 *                 (cairn_forget) or its text rewritten (cairn_redact_store)
 *
 * Version 5:
 *   vec_stamp     one row: a random 64-bit stamp that triggers on vectors
 *                 replace on every insert, update and delete, in the same
 *                 transaction, and the Unix time of that change; the
 *                 vector cache file beside the store (store/veccache.c) is
 *                 valid only for the stamp it was built at. Random rather
 *                 than a counter: two copies of a store that diverge never
 *                 reach the same stamp.
 *
 * Version 6:
 *   session_stats per session: its message count, index tokens, user turns
 *                 and bytes of text, so recall sums a scope's totals over
 *                 sessions, not over every message (65 ms on 100k
 *                 messages). ingest.c adds its new messages; triggers
 *                 follow deletes and rewrites; forget drops the row.
 *   messages_hit  an index (id, session, ntok): recall maps each FTS match
 *                 to its session and length without reading the table's
 *                 pages, which hold the text
 *   messages_meta an index (session, position, role, ntok, created_at,
 *                 speaker): recall loads its candidate sessions' turns
 *                 from it alone, for the same reason
 *
 * Version 7:
 *   no FTS triggers: the code that inserts, rewrites or deletes a message
 *   keeps messages_fts in step in the same transaction (store/fts.c), so
 *   one mechanism does it, as inserts have since version 3
 *
 * Version 8 (docs/MEMORIES.md, store/memory.c):
 *   memories       explicit memories: type, text, scope ('' global), tags
 *                  (comma-separated), times, expiry (NULL: never),
 *                  provenance, superseded_by (NULL: live). AUTOINCREMENT so
 *                  an id once shown to a user never names another memory
 *   memory_links   (src, dst, kind): supersedes, contradicts, related_to
 *   memory_history one row per change, holding what it replaced, so the
 *                  last change of a memory can be undone
 *
 * Version 9 (stats23):
 *   sessions_first, sessions_last  expression indexes: the store's first and
 *                  last times (`cairn stats`) are two index lookups
 * Version 10 (branch corr18; docs/MEMORIES.md "Corrections", store/correction.c):
 *   corrections    one row per memory of type correction that has more than
 *                  the memory: severity (0-2, p0 most severe), applies_when
 *                  (keywords, file globs, command patterns: each a list,
 *                  one item a line), the retrieved/heeded/recurred counters
 *                  and when it was last met. Evidence is the memory's own
 *                  session and message. A correction without a row is p1
 *                  with nothing to match and zero counts.
 *   correction_candidates  correction-shaped prompts the prompt hook
 *                  recognised, waiting for the user (`cairn memories
 *                  review`); recurs: the correction it repeats, if any
 *
 * Version 11 (branch mem18b; docs/MEMORIES.md, store/memory_vec.c):
 *   memory_vectors one f32 vector a memory (model, dim, the hash of the
 *                  text it was made from), for recall's dense match
 *
 * Version 12 (branch pg21; docs/POSTGRES.md, store/pg_sync.c):
 *   sync_state     per server (its id and the role) and scope (a project,
 *                  '' all): how far push has sent messages and forgets,
 *                  and the server transaction pull has read up to
 *   forgotten      one row per session cairn_forget removed: the sha256
 *                  of its id (never the id: forget leaves no byte of it),
 *                  so sync can push the forget as a tombstone and never
 *                  pulls the session back
 *   sync_foreign   sessions pulled from another owner (shared project), by
 *                  the same hash: push never sends them as this user's
 * Version 13 (branch vault19; docs/VAULTS.md, store/vault.c):
 *   vaults         folders of Markdown notes: name, root (absolute), settings
 *                  (the --exclude globs, one a line), when last indexed
 *   vault_docs     one row a file: path relative to the root, size, mtime
 *                  (ns), hash64 of its bytes, title, aliases, tags and wiki
 *                  links (one a line), its index tokens; skipped: why a
 *                  file was left out ('' when indexed: a binary or huge
 *                  file keeps a row without sections, so a re-index and
 *                  the staleness check see it unchanged); names: the
 *                  title and aliases as index tokens (a name a line, tokens
 *                  apart by spaces), which recall compares with the question
 *   vault_sections one row a heading's section: heading path, start line,
 *                  text (masked, <private> dropped), index tokens;
 *                  its piece's number in its section (part, v25);
 *                  vault_sections_hit (id, doc, line, ntok, part) is what
 *                  recall reads for a match, without the text
 *   vault_fts      FTS5 over vault_sections.text with the "cairn" tokenizer,
 *                  external content kept in step by store/vault.c as
 *                  messages_fts is by the code that writes messages
 *
 * Version 14 (branch hook23):
 *   store_totals   one row: the sums of session_stats (messages, index
 *                  tokens, user turns, bytes, rounds), kept by triggers on
 *                  session_stats, so recall's IDF and `cairn stats` read
 *                  one row, not one a session
 * Version 15 (branch time16; store/events.c, issue 16):
 *   message_events one row per date range a message names ("yesterday" in
 *                  a message of 5 Dec: 4 Dec), read against the message's
 *                  time (else its session's start): msg, session, [t_from,
 *                  t_to) in Unix seconds. Triggers drop a message's rows
 *                  when it is deleted or its text rewritten; the migration
 *                  fills them for the messages already stored (one scan of
 *                  at most 64 KB a message, in the migration's transaction)
 * Version 16 (branch lead20; store/events.c):
 *   events_fill    one row: `below`, the messages with a smaller id whose
 *                  dates were not read yet (the v15 migration reads the
 *                  newest EVENTS_FILL_MAX only); cairn_events_fill reads
 *                  them downwards in chunks and lowers it; 0: all read
 * Version 17 (branch fast23; issue 23):
 *   msg_runs       the messages' ids as runs of consecutive ids of one
 *                  session (first, last, session): a session's messages are
 *                  mostly written in one transaction, so 1,000,000 messages
 *                  of 50,000 sessions are ~50,000 runs. Recall maps FTS5's
 *                  matches (ascending row ids) to their sessions by one
 *                  ordered read of it instead of an index descent a match.
 *                  ingest.c adds its inserts (a run of ids at a time), a
 *                  trigger follows every delete (which splits its run), so
 *                  the runs always cover exactly the stored ids; ids and
 *                  session ids only
 * Version 18 (branch vault19c; store/vault.c, docs/VAULTS.md):
 *   vault_vectors  one int8 vector a note section (model, dim, the hash of
 *                  the text it was made from), written by `vault add` and
 *                  `vault reindex` when a model is installed, for recall's
 *                  dense match of notes; triggers drop a section's vector
 *                  when the section is deleted or its text, heading or
 *                  page title rewritten (a re-index, vault rm, redact)
 * Version 19 (branch fast23b; issue 23):
 *   msg_runs.lens  each run's messages' token counts (ntok) in id order,
 *                  comma-separated, or NULL when unknown (a delete that
 *                  cut the run): the pruned recall (the prompt hook) reads
 *                  its matches' lengths from the runs it merges; ingest.c
 *                  appends to it, a trigger recomputes it when a length
 *                  changes (an extended reply); counts only
 * Version 20 (branch mem21; issue 21, store/pg_msync.c):
 *   memory_sync    one row a memory: its global id (gid, 32 hex), the
 *                  version (rev, a change counter; vid, a random id of the
 *                  version), dirty (not pushed since its last change),
 *                  owner ('' this store's user, else whose pulled memory)
 *   memories_forgotten  the sha256 of a removed memory's gid: its tombstone
 *   sync_state     push_mtomb, pull_mtx: the memories' push and pull
 *                  cursors, as push_tomb and pull_tx are the sessions'
 * Version 21 (branch hook23c; issue 23):
 *   session_turns  one row a session: what recall reads of each of its
 *                  turns (id, position, role, time, ntok, speaker), packed
 *                  in position order (as text until 26; store/turns.c) with
 *                  their count n (a row whose text does not give n turns is not
 *                  used), so a kept
 *                  session's turns are one row, not one a message. ingest.c
 *                  appends its inserts (or packs the session again after an
 *                  extended reply); a trigger drops a session's row when one
 *                  of its messages is deleted or one of those fields
 *                  rewritten, and a session without a row is read from
 *                  messages_meta as before (store_turns_fill packs those
 *                  again after a store-wide rewrite)
 * Version 22, "term tiers" (branch tier23; issue 23, recall/tier.c):
 *   tier_terms     a common word (an index token in at least TIER_DF_MIN
 *                  messages when built): its id, the token, df (its
 *                  messages with id <= tier_state.upto when built)
 *   tier_post      (term, msg, sess, tf, ntok): every match of the word in
 *                  its TIER_SESS sessions with the best single-message BM25
 *                  of it; message ids, counts and lengths only
 *   tier_state     one row: upto, the newest message id the tiers saw (0:
 *                  none built). Triggers drop a message's rows when it is
 *                  deleted or rewritten, a word with none left, and on
 *                  forget the words kept with a df and no rows
 * Version 23, "tiers kept by the write paths" (branch tier24; issue 23):
 *   tier_state     + built: the messages the store held at the build (0:
 *                  none since 23); avg, k1, b: the average length and BM25
 *                  constants the build scored with (avg 0: ingest leaves
 *                  the tiers alone)
 *   tier_terms     + cut: the single-message score of the tier's last
 *                  session (NULL: a word kept with its df only); ingest
 *                  adds a new message's match when it scores at least
 *                  that or its session is in the tier, keeps df current
 *                  and moves upto
 * Version 26, "packed postings" (branch post26; issue 23, store/post.c):
 *   post_terms     a tiered word's token, its count of matches and the
 *                  last one's message id
 *   post_blocks    (term, lo, hi, n, data): up to POST_BLOCK of its matches
 *                  with ids in (lo, hi], varint-coded (store/post.h)
 *   post_state     one row: upto, the newest message id they cover (0:
 *                  none); ingest appends and moves it
 *   post_dirty     messages deleted or rewritten since the build (by
 *                  trigger): the reader walks them
 * Version 27, "binary packed turns" (branch exact28; issue 23):
 *   session_turns  turns: STORE_TURNS_MARK, then a head byte and varints a
 *                  turn (store/turns.c), not text; every row packed again
 *                  by the migration (store_turns_fill, in C)
 * Version 28, "stems packed" (branch hook29; issue 23, recall/tier.c): no
 *                  table changes; tier_state.built set to 0, so the tier
 *                  build (which now packs a stem a query of it would not
 *                  find, by a word that is it alone) is due again
 * Version 29, "vault totals" (branch vault31; issue 19, recall/notes.c):
 *   vault_totals   one row: the count of vault_sections, the sum of their
 *                  ntok and the count with part 0, kept by triggers on
 *                  vault_sections, so a recall over notes reads one row,
 *                  not one a section
 * Version 30, "session units" (branch units49; issue 23, store/units.h):
 *   session_units  one row a session: its units as recall builds them
 *                  (rule: STORE_UNITS_RULE) with each one's turns' count,
 *                  first id and position, head role, time and token count,
 *                  and round token count (store/turns.c), n the packed
 *                  turns' count it was made from; session_turns'
 *                  triggers on messages drop it with the packed turns,
 *                  and the writers of session_turns write it after theirs
 */
#include "internal.h"
#include "store/recall_read.h"
#include "store/units.h"
#include "util/buf.h"

/* A run's token counts, in id order, comma-separated ("12,5,300"): read
 * by store_term_matches, which takes them only when there is one a
 * message of the run (NULL, or a count missing, means look them up). */
#define RUN_LENS_SQL "(SELECT group_concat(ntok, ',') FROM (SELECT ntok FROM messages " \
    "INDEXED BY messages_hit WHERE id BETWEEN msg_runs.first AND msg_runs.last ORDER BY id))"

/* Schema 24 (session_sizes): each session's size as the pruning reads it
 * (its turns and its rounds, UNITS_SQL in recall_read.c), 128 sessions a
 * row, 16 hex digits a session at (session & 127) * 16; a slot of no
 * session is zeros. The row a session's slot is in, and its slot text: */
#define SIZES_BLK(S)   "(" S " >> 7)"
#define SIZES_SLOT(S, N, NUSER) "substr(sizes, 1, (" S " & 127) * 16) || " \
    "printf('%08x%08x', " N ", CASE WHEN " NUSER " = " N " THEN " N " ELSE " NUSER " END) || " \
    "substr(sizes, (" S " & 127) * 16 + 17)"
/* the row of S, if it has none yet (not INSERT OR IGNORE: in a trigger
 * the statement's own conflict clause wins, and ingest's upsert aborts) */
#define SIZES_ROW(S)   "INSERT INTO session_sizes SELECT " SIZES_BLK(S) ", hex(zeroblob(1024)) " \
    "WHERE NOT EXISTS (SELECT 1 FROM session_sizes WHERE blk = " SIZES_BLK(S) ")"
#define SIZES_ZERO(S)  "substr(sizes, 1, (" S " & 127) * 16) || '0000000000000000' || " \
    "substr(sizes, (" S " & 127) * 16 + 17)"

/* The head of session_turns' trigger on a rewrite of a field it packs
 * (schema 21; schema 30 made it drop the session's units too). */
#define SESSION_TURNS_AU_HEAD \
    "CREATE TRIGGER session_turns_au AFTER UPDATE OF session, position, role, speaker," \
    "  created_at, ntok ON messages WHEN old.session IS NOT new.session OR old.position IS NOT" \
    "  new.position OR old.role IS NOT new.role OR old.speaker IS NOT new.speaker OR" \
    "  old.created_at IS NOT new.created_at OR old.ntok IS NOT new.ntok BEGIN"

static const char *const migrations[] = {
    /* 0 -> 1 */
    "CREATE TABLE sessions("
    "  id INTEGER PRIMARY KEY,"
    "  ext_id TEXT NOT NULL UNIQUE,"
    "  source TEXT NOT NULL DEFAULT '',"
    "  project TEXT NOT NULL DEFAULT '',"
    "  title TEXT NOT NULL DEFAULT '',"
    "  started_at INTEGER,"
    "  ended_at INTEGER,"
    "  meta TEXT,"
    "  stored_at INTEGER NOT NULL);"
    "CREATE INDEX sessions_project ON sessions(project, started_at);"
    "CREATE INDEX sessions_started ON sessions(started_at);"
    "CREATE TABLE messages("
    "  id INTEGER PRIMARY KEY,"
    "  session INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
    "  position INTEGER NOT NULL,"
    "  ext_id TEXT,"
    "  role TEXT NOT NULL CHECK (role IN ('user','assistant')),"
    "  speaker TEXT,"
    "  content TEXT NOT NULL,"
    "  created_at INTEGER,"
    "  hash INTEGER NOT NULL,"
    "  ntok INTEGER NOT NULL DEFAULT 0,"
    "  UNIQUE(session, position));"
    "CREATE UNIQUE INDEX messages_ext ON messages(session, ext_id) WHERE ext_id IS NOT NULL;"
    "CREATE INDEX messages_hash ON messages(session, hash);"
    "CREATE INDEX messages_time ON messages(created_at);"
    "CREATE VIRTUAL TABLE messages_fts USING fts5(content, content='messages',"
    "  content_rowid='id', tokenize='cairn');"
    "CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN"
    "  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
    "END;"
    "CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN"
    "  INSERT INTO messages_fts(messages_fts, rowid, content)"
    " VALUES('delete', old.id, old.content);"
    "END;"
    "CREATE TRIGGER messages_au AFTER UPDATE OF content ON messages BEGIN"
    "  INSERT INTO messages_fts(messages_fts, rowid, content)"
    " VALUES('delete', old.id, old.content);"
    "  INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);"
    "END;",
    /* 1 -> 2 */
    "CREATE TABLE capture_state("
    "  path TEXT PRIMARY KEY,"
    "  session TEXT,"
    "  read_offset INTEGER NOT NULL DEFAULT 0,"
    "  size INTEGER NOT NULL DEFAULT 0,"
    "  inode INTEGER,"
    "  dev INTEGER,"
    "  mtime INTEGER,"
    "  updated_at INTEGER NOT NULL);"
    "CREATE INDEX capture_state_session ON capture_state(session);",
    /* 2 -> 3: the write path indexes new messages itself. With an
     * AFTER INSERT trigger SQLite opens a statement journal for every
     * message insert, and FTS5 flushes its pending terms to disk at each
     * one: 43% of `cairn add`'s time on 100k messages (bench/). */
    "DROP TRIGGER IF EXISTS messages_ai;",
    /* 3 -> 4: dense vectors (store/vectors.c, docs/HYBRID.md). */
    "CREATE TABLE vectors("
    "  model TEXT NOT NULL,"
    "  msg INTEGER NOT NULL,"
    "  piece INTEGER NOT NULL,"
    "  session INTEGER NOT NULL,"
    "  dim INTEGER NOT NULL,"
    "  scale REAL NOT NULL,"
    "  v BLOB NOT NULL,"
    "  PRIMARY KEY (model, msg, piece)) WITHOUT ROWID;"
    "CREATE INDEX vectors_msg ON vectors(msg);"
    "CREATE TRIGGER vectors_ad AFTER DELETE ON messages BEGIN"
    "  DELETE FROM vectors WHERE msg = old.id;"
    "END;"
    "CREATE TRIGGER vectors_au AFTER UPDATE OF content ON messages BEGIN"
    "  DELETE FROM vectors WHERE msg = old.id;"
    "END;",
    /* 4 -> 5: the vector cache's validity stamp (docs/HYBRID.md). A
     * trigger per row costs about 1.3 us of CPU per vector written
     * (192,804 inserts in one statement: 0.27-0.33 s of user CPU without,
     * 0.53-0.55 s with), nothing beside the encoder's milliseconds per
     * message; it catches every path that changes vectors, the triggers
     * on messages and the sqlite3 shell included. */
    "CREATE TABLE vec_stamp(id INTEGER PRIMARY KEY CHECK (id = 1), stamp INTEGER NOT NULL,"
    "  changed_at INTEGER NOT NULL);"
    "INSERT INTO vec_stamp VALUES (1, random(), 0);"
    "CREATE TRIGGER vec_stamp_ai AFTER INSERT ON vectors BEGIN"
    "  UPDATE vec_stamp SET stamp = random(), changed_at = CAST(strftime('%s') AS INTEGER)"
    "  WHERE id = 1;"
    "END;"
    "CREATE TRIGGER vec_stamp_ad AFTER DELETE ON vectors BEGIN"
    "  UPDATE vec_stamp SET stamp = random(), changed_at = CAST(strftime('%s') AS INTEGER)"
    "  WHERE id = 1;"
    "END;"
    "CREATE TRIGGER vec_stamp_au AFTER UPDATE ON vectors BEGIN"
    "  UPDATE vec_stamp SET stamp = random(), changed_at = CAST(strftime('%s') AS INTEGER)"
    "  WHERE id = 1;"
    "END;",
    /* 5 -> 6: per-session totals and the match lookup index (gather.c). */
    "CREATE TABLE session_stats(session INTEGER PRIMARY KEY REFERENCES sessions(id)"
    "  ON DELETE CASCADE, n INTEGER NOT NULL, ntok INTEGER NOT NULL,"
    "  nuser INTEGER NOT NULL, bytes INTEGER NOT NULL);"
    "INSERT INTO session_stats SELECT session, count(*), sum(ntok), sum(role = 'user'),"
    "  sum(length(CAST(content AS BLOB))) FROM messages GROUP BY session;"
    "CREATE TRIGGER session_stats_ad AFTER DELETE ON messages BEGIN"
    "  UPDATE session_stats SET n = n - 1, ntok = ntok - old.ntok,"
    "  nuser = nuser - (old.role = 'user'), bytes = bytes - length(CAST(old.content AS BLOB))"
    "  WHERE session = old.session;"
    "END;"
    "CREATE TRIGGER session_stats_au AFTER UPDATE OF content, ntok ON messages BEGIN"
    "  UPDATE session_stats SET ntok = ntok - old.ntok + new.ntok,"
    "  bytes = bytes - length(CAST(old.content AS BLOB)) + length(CAST(new.content AS BLOB))"
    "  WHERE session = new.session;"
    "END;"
    "CREATE INDEX messages_hit ON messages(id, session, ntok);"
    "CREATE INDEX messages_meta ON messages(session, position, role, ntok, created_at, speaker);",
    /* 6 -> 7: messages_fts follows deletes and rewrites explicitly too. */
    "DROP TRIGGER IF EXISTS messages_ad;"
    "DROP TRIGGER IF EXISTS messages_au;",
    /* 7 -> 8: explicit memories (store/memory.c). */
    "CREATE TABLE memories("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  type TEXT NOT NULL CHECK (type IN ('fact','preference','decision','procedure',"
    "    'correction')),"
    "  text TEXT NOT NULL,"
    "  scope TEXT NOT NULL DEFAULT '',"
    "  tags TEXT NOT NULL DEFAULT '',"
    "  created_at INTEGER NOT NULL,"
    "  updated_at INTEGER NOT NULL,"
    "  expires_at INTEGER,"
    "  session TEXT NOT NULL DEFAULT '',"
    "  message TEXT NOT NULL DEFAULT '',"
    "  superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL);"
    "CREATE INDEX memories_scope ON memories(scope, updated_at);"
    "CREATE INDEX memories_expires ON memories(expires_at) WHERE expires_at IS NOT NULL;"
    "CREATE INDEX memories_superseded ON memories(superseded_by) WHERE superseded_by IS NOT NULL;"
    "CREATE TABLE memory_links("
    "  src INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,"
    "  dst INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,"
    "  kind TEXT NOT NULL CHECK (kind IN ('supersedes','contradicts','related_to')),"
    "  PRIMARY KEY (src, dst, kind)) WITHOUT ROWID;"
    "CREATE INDEX memory_links_dst ON memory_links(dst);"
    "CREATE TABLE memory_history("
    "  id INTEGER PRIMARY KEY,"
    "  memory INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,"
    "  op TEXT NOT NULL CHECK (op IN ('update','supersede','link')),"
    "  at INTEGER NOT NULL,"
    "  text TEXT NOT NULL,"
    "  updated_at INTEGER NOT NULL,"
    "  superseded_by INTEGER,"
    "  link_dst INTEGER,"
    "  link_kind TEXT);"
    "CREATE INDEX memory_history_memory ON memory_history(memory, id);",
    /* 8 -> 9 (stats23): the store's first and last times for `cairn stats`
     * from two index lookups instead of a scan of every session (14 ms of
     * its 19 on 50,000 sessions). */
    "CREATE INDEX sessions_first ON sessions(coalesce(started_at, ended_at));"
    "CREATE INDEX sessions_last ON sessions(coalesce(ended_at, started_at));",
    /* 9 -> 10 (branch corr18): corrections and their candidates
     * (store/correction.c, docs/MEMORIES.md "Corrections"). */
    "CREATE TABLE corrections("
    "  memory INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,"
    "  severity INTEGER NOT NULL DEFAULT 1 CHECK (severity BETWEEN 0 AND 2),"
    "  keywords TEXT NOT NULL DEFAULT '',"
    "  paths TEXT NOT NULL DEFAULT '',"
    "  commands TEXT NOT NULL DEFAULT '',"
    "  retrieved INTEGER NOT NULL DEFAULT 0,"
    "  heeded INTEGER NOT NULL DEFAULT 0,"
    "  recurred INTEGER NOT NULL DEFAULT 0,"
    "  last_seen INTEGER);"
    "CREATE TABLE correction_candidates("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  text TEXT NOT NULL,"
    "  scope TEXT NOT NULL DEFAULT '',"
    "  session TEXT NOT NULL DEFAULT '',"
    "  message TEXT NOT NULL DEFAULT '',"
    "  rule TEXT NOT NULL DEFAULT '',"
    "  commands TEXT NOT NULL DEFAULT '',"
    "  created_at INTEGER NOT NULL,"
    "  recurs INTEGER REFERENCES memories(id) ON DELETE SET NULL);",
    /* 10 -> 11 (branch mem18b): one vector a memory, of the model that made it
     * and of the text it was made from (hash64 of the text: a vector whose
     * hash is not the text's, after an undo or an import, is not used and
     * `cairn embed --backfill` makes it again). store/memory_vec.c. */
    "CREATE TABLE memory_vectors("
    "  memory INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,"
    "  model TEXT NOT NULL,"
    "  dim INTEGER NOT NULL,"
    "  text_hash INTEGER NOT NULL,"
    "  vec BLOB NOT NULL);",
    /* 11 -> 12 (branch pg21): what `cairn sync` keeps locally
     * (store/pg_sync.c, docs/POSTGRES.md). */
    "CREATE TABLE sync_state("
    "  server TEXT NOT NULL,"
    "  scope TEXT NOT NULL DEFAULT '',"
    "  push_msg INTEGER NOT NULL DEFAULT 0,"
    "  push_tomb INTEGER NOT NULL DEFAULT 0,"
    "  pull_tx TEXT NOT NULL DEFAULT '0',"
    "  updated_at INTEGER NOT NULL,"
    "  PRIMARY KEY (server, scope));"
    "CREATE TABLE forgotten("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  sid_hash TEXT NOT NULL UNIQUE,"
    "  at INTEGER NOT NULL);"
    "CREATE TABLE sync_foreign("
    "  sid_hash TEXT PRIMARY KEY,"
    "  owner TEXT NOT NULL);",
    /* 12 -> 13 (branch vault19): Markdown vaults (store/vault.c,
     * docs/VAULTS.md). No cascades: a section leaves vault_fts first. */
    "CREATE TABLE vaults("
    "  id INTEGER PRIMARY KEY,"
    "  name TEXT NOT NULL UNIQUE,"
    "  root TEXT NOT NULL,"
    "  settings TEXT NOT NULL DEFAULT '',"
    "  added_at INTEGER NOT NULL,"
    "  indexed_at INTEGER);"
    "CREATE TABLE vault_docs("
    "  id INTEGER PRIMARY KEY,"
    "  vault INTEGER NOT NULL REFERENCES vaults(id),"
    "  path TEXT NOT NULL,"
    "  size INTEGER NOT NULL,"
    "  mtime INTEGER NOT NULL,"
    "  hash INTEGER NOT NULL,"
    "  title TEXT NOT NULL DEFAULT '',"
    "  aliases TEXT NOT NULL DEFAULT '',"
    "  tags TEXT NOT NULL DEFAULT '',"
    "  links TEXT NOT NULL DEFAULT '',"
    "  ntok INTEGER NOT NULL DEFAULT 0,"
    "  skipped TEXT NOT NULL DEFAULT '',"
    "  names TEXT NOT NULL DEFAULT '',"
    "  UNIQUE(vault, path));"
    /* the names recall compares with every question, without the rows */
    "CREATE INDEX vault_docs_names ON vault_docs(id, names) WHERE skipped = '';"
    "CREATE TABLE vault_sections("
    "  id INTEGER PRIMARY KEY,"
    "  doc INTEGER NOT NULL REFERENCES vault_docs(id),"
    "  line INTEGER NOT NULL,"
    "  ntok INTEGER NOT NULL,"
    "  heading TEXT NOT NULL DEFAULT '',"
    "  text TEXT NOT NULL);"
    "CREATE INDEX vault_sections_doc ON vault_sections(doc, id, ntok);"
    /* recall maps each match to its page, line and length from this alone,
     * without the table's pages, which hold the text (messages_hit, v6) */
    "CREATE INDEX vault_sections_hit ON vault_sections(id, doc, line, ntok);"
    "CREATE VIRTUAL TABLE vault_fts USING fts5(text, content='vault_sections',"
    "  content_rowid='id', tokenize='cairn');",
    /* 13 -> 14 (branch hook23): the store's totals in one row, so a recall
     * (IDF, average lengths) and `cairn stats` read one row instead of
     * summing 50,000 (~100 ms of the prompt hook on a million messages).
     * Triggers on session_stats keep it, so every path that changes a
     * session's totals (ingest's upsert, the message triggers, forget's
     * delete, the cascade) changes it in the same statement. units: a
     * session's rounds as recall counts them (user turns; every turn
     * between people: rank.c's unit IDF). */
    "CREATE TABLE store_totals(id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  n INTEGER NOT NULL, ntok INTEGER NOT NULL, nuser INTEGER NOT NULL,"
    "  bytes INTEGER NOT NULL, units INTEGER NOT NULL);"
    "INSERT INTO store_totals SELECT 1, coalesce(sum(n), 0), coalesce(sum(ntok), 0),"
    "  coalesce(sum(nuser), 0), coalesce(sum(bytes), 0),"
    "  coalesce(sum(CASE WHEN nuser = n THEN n ELSE nuser END), 0) FROM session_stats;"
    "CREATE TRIGGER store_totals_ai AFTER INSERT ON session_stats BEGIN"
    "  UPDATE store_totals SET n = n + new.n, ntok = ntok + new.ntok, nuser = nuser + new.nuser,"
    "  bytes = bytes + new.bytes,"
    "  units = units + CASE WHEN new.nuser = new.n THEN new.n ELSE new.nuser END;"
    "END;"
    "CREATE TRIGGER store_totals_au AFTER UPDATE ON session_stats BEGIN"
    "  UPDATE store_totals SET n = n - old.n + new.n, ntok = ntok - old.ntok + new.ntok,"
    "  nuser = nuser - old.nuser + new.nuser, bytes = bytes - old.bytes + new.bytes,"
    "  units = units - CASE WHEN old.nuser = old.n THEN old.n ELSE old.nuser END"
    "  + CASE WHEN new.nuser = new.n THEN new.n ELSE new.nuser END;"
    "END;"
    "CREATE TRIGGER store_totals_ad AFTER DELETE ON session_stats BEGIN"
    "  UPDATE store_totals SET n = n - old.n, ntok = ntok - old.ntok, nuser = nuser - old.nuser,"
    "  bytes = bytes - old.bytes,"
    "  units = units - CASE WHEN old.nuser = old.n THEN old.n ELSE old.nuser END;"
    "END;",
    /* 14 -> 15 (branch time16): the dates messages speak of (store/events.c);
     * store_migrate fills them for the messages already stored. */
    "CREATE TABLE message_events("
    "  msg INTEGER NOT NULL,"
    "  session INTEGER NOT NULL,"
    "  t_from INTEGER NOT NULL,"
    "  t_to INTEGER NOT NULL);"
    /* recall: the events that meet a range, with their sessions, from
     * the index alone */
    "CREATE INDEX message_events_time ON message_events(t_from, t_to, session, msg);"
    "CREATE INDEX message_events_msg ON message_events(msg);"
    "CREATE TRIGGER message_events_ad AFTER DELETE ON messages BEGIN"
    "  DELETE FROM message_events WHERE msg = old.id;"
    "END;"
    "CREATE TRIGGER message_events_au AFTER UPDATE OF content ON messages BEGIN"
    "  DELETE FROM message_events WHERE msg = old.id;"
    "END;",
    /* 15 -> 16 (branch lead20): where the reading of older messages' dates
     * stands. Counted from today's newest message, not from the one the
     * v15 migration saw: messages added since then were read at write
     * time, and one read twice gets the same rows (the fill drops a
     * message's rows before reading it), so the guess can only err on
     * the safe side. */
    "CREATE TABLE events_fill(id INTEGER PRIMARY KEY CHECK (id = 1), below INTEGER NOT NULL);"
    "INSERT INTO events_fill VALUES (1, max(0, coalesce((SELECT max(id) FROM messages), 0) - "
    EVENTS_FILL_MAX_SQL " + 1));",
    /* 16 -> 17 (branch fast23): runs of consecutive message ids of one
     * session (recall_read.c maps FTS matches with them). The fill groups
     * each session's ids by id minus their rank in it: equal exactly along
     * a run of consecutive ids (1,000,000 messages: ~1 s of CPU). The run
     * of an id is the one with the greatest first <= id; a run never holds
     * an id that is not stored, so an insert extends the run ending just
     * before it (same session) or starts one (ingest.c, the one code that
     * inserts messages, once a run of inserts: no insert trigger, see
     * there), and a delete cuts its run in up to two (a trigger). */
    "CREATE TABLE msg_runs(first INTEGER PRIMARY KEY, last INTEGER NOT NULL,"
    "  session INTEGER NOT NULL);"
    "INSERT INTO msg_runs SELECT min(id), max(id), session FROM (SELECT id, session,"
    "  id - row_number() OVER (PARTITION BY session ORDER BY id) AS g"
    "  FROM messages INDEXED BY messages_hit) GROUP BY session, g;"
    "CREATE TRIGGER msg_runs_ad AFTER DELETE ON messages BEGIN"
    "  INSERT INTO msg_runs SELECT old.id + 1, last, session FROM msg_runs WHERE first ="
    "    (SELECT max(first) FROM msg_runs WHERE first <= old.id) AND last > old.id;"
    "  DELETE FROM msg_runs WHERE first = old.id;"
    "  UPDATE msg_runs SET last = old.id - 1 WHERE first ="
    "    (SELECT max(first) FROM msg_runs WHERE first < old.id) AND last >= old.id;"
    "END;",
    /* 17 -> 18 (branch vault19c): dense vectors of note sections
     * (store/vault.c, docs/VAULTS.md). A section deleted or rewritten (a
     * re-index, vault rm, redact) takes its vector with it: the vector was
     * made from the old text. */
    "CREATE TABLE vault_vectors("
    "  section INTEGER PRIMARY KEY,"
    "  model TEXT NOT NULL,"
    "  dim INTEGER NOT NULL,"
    "  text_hash INTEGER NOT NULL,"
    "  vec BLOB NOT NULL);"
    "CREATE TRIGGER vault_vectors_ad AFTER DELETE ON vault_sections BEGIN"
    "  DELETE FROM vault_vectors WHERE section = old.id;"
    "END;"
    "CREATE TRIGGER vault_vectors_au AFTER UPDATE OF text, heading ON vault_sections BEGIN"
    "  DELETE FROM vault_vectors WHERE section = old.id;"
    "END;"
    /* the page's title is in each of its sections' embedded text */
    "CREATE TRIGGER vault_vectors_title AFTER UPDATE OF title ON vault_docs BEGIN"
    "  DELETE FROM vault_vectors WHERE section IN"
    "  (SELECT id FROM vault_sections WHERE doc = old.id);"
    "END;",
    /* 18 -> 19 (branch fast23b, issue 23): each run's token counts, so
     * the pruned path (the prompt hook) gets its matches' lengths from the
     * runs it already merges instead of a messages_hit descent a match.
     * The fill reads each run's ids in order (an ordered subquery over the
     * index, ~50,000 runs at 1,000,000 messages); a delete leaves the runs
     * it cuts without counts (recall looks those matches up), a rewritten
     * length recomputes its run's (ingest.c's extended replies). The
     * trigger on delete is made again: its insert names the columns. */
    "ALTER TABLE msg_runs ADD COLUMN lens TEXT;"
    "UPDATE msg_runs SET lens = " RUN_LENS_SQL ";"
    "DROP TRIGGER msg_runs_ad;"
    "CREATE TRIGGER msg_runs_ad AFTER DELETE ON messages BEGIN"
    "  INSERT INTO msg_runs(first, last, session) SELECT old.id + 1, last, session FROM msg_runs"
    "    WHERE first = (SELECT max(first) FROM msg_runs WHERE first <= old.id) AND last > old.id;"
    "  DELETE FROM msg_runs WHERE first = old.id;"
    "  UPDATE msg_runs SET last = old.id - 1, lens = NULL WHERE first ="
    "    (SELECT max(first) FROM msg_runs WHERE first < old.id) AND last >= old.id;"
    "END;"
    "CREATE TRIGGER msg_runs_au AFTER UPDATE OF ntok ON messages"
    "  WHEN old.ntok IS NOT new.ntok BEGIN"
    "  UPDATE msg_runs SET lens = " RUN_LENS_SQL " WHERE first ="
    "    (SELECT max(first) FROM msg_runs WHERE first <= new.id) AND last >= new.id;"
    "END;",
    /* 19 -> 20 (branch mem21, issue 21): memories and corrections travel
     * through `cairn sync` (store/pg_msync.c, docs/POSTGRES.md). Each
     * memory gets a global id (new ones: 16 bytes of getrandom in
     * memory_insert; existing ones here: SQLite's randomblob, a ChaCha20
     * stream the OS seeds) and a version: rev counts its changes, vid (a
     * random id of the version) breaks ties, dirty says push has not sent
     * it. A change of what is synced bumps them (the triggers); a pull
     * writes its version after its own change, over the bump. */
    "CREATE TABLE memory_sync("
    "  memory INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,"
    "  gid TEXT NOT NULL UNIQUE,"
    "  vid TEXT NOT NULL,"
    "  rev INTEGER NOT NULL DEFAULT 0,"
    "  dirty INTEGER NOT NULL DEFAULT 1,"
    "  owner TEXT NOT NULL DEFAULT '');"
    "CREATE INDEX memory_sync_dirty ON memory_sync(memory) WHERE dirty;"
    "INSERT INTO memory_sync(memory, gid, vid) SELECT id, lower(hex(randomblob(16))),"
    "  lower(hex(randomblob(16))) FROM memories;"
    "CREATE TRIGGER memory_sync_au AFTER UPDATE OF type, text, scope, tags, expires_at,"
    "  superseded_by, updated_at ON memories BEGIN"
    "  UPDATE memory_sync SET rev = rev + 1, vid = lower(hex(randomblob(16))), dirty = 1"
    "    WHERE memory = new.id;"
    "END;"
    "CREATE TRIGGER memory_sync_corr_ai AFTER INSERT ON corrections BEGIN"
    "  UPDATE memory_sync SET rev = rev + 1, vid = lower(hex(randomblob(16))), dirty = 1"
    "    WHERE memory = new.memory;"
    "END;"
    "CREATE TRIGGER memory_sync_corr_au AFTER UPDATE OF severity, keywords, paths, commands"
    "  ON corrections BEGIN"
    "  UPDATE memory_sync SET rev = rev + 1, vid = lower(hex(randomblob(16))), dirty = 1"
    "    WHERE memory = new.memory;"
    "END;"
    /* a removed memory's sha256 of its gid (never the gid), pushed as a
     * tombstone; and how far push and pull got, beside the sessions' */
    "CREATE TABLE memories_forgotten("
    "  id INTEGER PRIMARY KEY AUTOINCREMENT,"
    "  gid_hash TEXT NOT NULL UNIQUE,"
    "  at INTEGER NOT NULL);"
    "ALTER TABLE sync_state ADD COLUMN push_mtomb INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE sync_state ADD COLUMN pull_mtx TEXT NOT NULL DEFAULT '0';",
    /* 20 -> 21 (branch hook23c, issue 23): each session's turns packed in
     * one row (recall_read.c reads a kept session's turns from it, not a
     * row of messages_meta a turn). Filled from the messages in one
     * ordered scan of messages_meta. A delete or a rewrite of a field it
     * packs drops the session's row (forget removes whole sessions; a
     * rewrite's writer packs again: ingest.c, store_turns_fill); a session
     * without one is read as before, so the answer never depends on it. */
    "CREATE TABLE session_turns(session INTEGER PRIMARY KEY, n INTEGER NOT NULL,"
    "  turns TEXT NOT NULL);"            /* filled in C since 27 (below) */
    "CREATE TRIGGER session_turns_ad AFTER DELETE ON messages BEGIN"
    "  DELETE FROM session_turns WHERE session = old.session;"
    "END;"
    SESSION_TURNS_AU_HEAD
    "  DELETE FROM session_turns WHERE session IN (old.session, new.session);"
    "END;",
    /* 21 -> 22, "term tiers" (branch tier23, issue 23; recall/tier.c,
     * store/tier.c): a common word's best sessions, for the pruned recall
     * (the prompt hook). Empty until `cairn reindex --tiers` builds them
     * (a walk of every common word: minutes on a million messages, too
     * long for a migration a hook may run). Messages added later are in
     * the tail (id > upto) the hook walks itself; a delete or a rewrite
     * drops the message's rows (the triggers), and a word whose rows are
     * all gone loses its tier (it is walked whole again). */
    "CREATE TABLE tier_state(id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL);"
    "INSERT INTO tier_state VALUES (1, 0);"
    "CREATE TABLE tier_terms(id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE,"
    "  df INTEGER NOT NULL);"
    "CREATE TABLE tier_post(term INTEGER NOT NULL, msg INTEGER NOT NULL,"
    "  sess INTEGER NOT NULL, tf INTEGER NOT NULL, ntok INTEGER NOT NULL,"
    "  PRIMARY KEY (term, msg)) WITHOUT ROWID;"
    "CREATE INDEX tier_post_msg ON tier_post(msg);"
    "CREATE TRIGGER tier_post_ad AFTER DELETE ON messages BEGIN"
    "  DELETE FROM tier_post WHERE msg = old.id;"
    "END;"
    "CREATE TRIGGER tier_post_au AFTER UPDATE OF content, ntok ON messages BEGIN"
    "  DELETE FROM tier_post WHERE msg = old.id;"
    "END;"
    "CREATE TRIGGER tier_terms_gone AFTER DELETE ON tier_post"
    "  WHEN NOT EXISTS (SELECT 1 FROM tier_post WHERE term = old.term) BEGIN"
    "  DELETE FROM tier_terms WHERE id = old.term;"
    "END;"
    /* the words kept with a df and no rows (a stem a query cannot spell)
     * go with any forget: no word of a forgotten session stays behind */
    "CREATE TRIGGER tier_terms_forget AFTER DELETE ON sessions BEGIN"
    "  DELETE FROM tier_terms WHERE NOT EXISTS (SELECT 1 FROM tier_post"
    "    WHERE term = tier_terms.id);"
    "END;",
    /* 22 -> 23, "tiers kept by the write paths" (branch tier24, issue 23;
     * store/tier.c, "Keeping"): what an insert needs to decide alone
     * whether a new message enters a word's tier. The build writes the
     * BM25 constants and the average length it scored with (avg 0: not
     * kept, as a tier built before 23 is until it is rebuilt), and each
     * tiered word's cut, the score of its tier's last session; and how
     * many messages the store held then (built), which says when the
     * tiers are due again (cairn_tier_due). */
    "ALTER TABLE tier_state ADD COLUMN built INTEGER NOT NULL DEFAULT 0;"
    "ALTER TABLE tier_state ADD COLUMN avg REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE tier_state ADD COLUMN k1 REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE tier_state ADD COLUMN b REAL NOT NULL DEFAULT 0;"
    "ALTER TABLE tier_terms ADD COLUMN cut REAL;",
    /* 23 -> 24, "packed session sizes" (branch hook24, issue 23): the
     * pruning's sizes of the sessions with a match (recall_read.c,
     * store_sessions_size) from one row a 128 sessions instead of a row
     * of session_stats a session (60 M of the hook's ~440 M instructions
     * on a million messages). Kept by triggers on session_stats, as
     * store_totals is, so every path that changes a session's totals
     * changes its slot in the same statement; a row that does not read as
     * 128 slots of 16 hex digits (a count past 2^32) is not used: the
     * sizes are read from session_stats as before. */
    "CREATE TABLE session_sizes(blk INTEGER PRIMARY KEY, sizes TEXT NOT NULL);"
    "INSERT INTO session_sizes SELECT b, group_concat(v, '') FROM ("
    "  WITH RECURSIVE slot(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM slot WHERE i < 127)"
    "  SELECT b.b AS b, coalesce(printf('%08x%08x', st.n, CASE WHEN st.nuser = st.n THEN st.n"
    "    ELSE st.nuser END), '0000000000000000') AS v"
    "  FROM (SELECT DISTINCT " SIZES_BLK("session") " AS b FROM session_stats) b"
    "  CROSS JOIN slot LEFT JOIN session_stats st ON st.session = b.b * 128 + slot.i"
    "  ORDER BY b.b, slot.i) GROUP BY b;"
    "CREATE TRIGGER session_sizes_ai AFTER INSERT ON session_stats BEGIN"
    "  " SIZES_ROW("new.session") ";"
    "  UPDATE session_sizes SET sizes = " SIZES_SLOT("new.session", "new.n", "new.nuser")
    "    WHERE blk = " SIZES_BLK("new.session") ";"
    "END;"
    "CREATE TRIGGER session_sizes_au AFTER UPDATE OF session, n, nuser ON session_stats BEGIN"
    "  UPDATE session_sizes SET sizes = " SIZES_ZERO("old.session")
    "    WHERE blk = " SIZES_BLK("old.session") " AND old.session IS NOT new.session;"
    "  " SIZES_ROW("new.session") ";"
    "  UPDATE session_sizes SET sizes = " SIZES_SLOT("new.session", "new.n", "new.nuser")
    "    WHERE blk = " SIZES_BLK("new.session") ";"
    "END;"
    "CREATE TRIGGER session_sizes_ad AFTER DELETE ON session_stats BEGIN"
    "  UPDATE session_sizes SET sizes = " SIZES_ZERO("old.session")
    "    WHERE blk = " SIZES_BLK("old.session") ";"
    "END;",
    /* 24 -> 25, "sections cut" (branch vault25, issue 19): the
     * NOTE_SPLIT_TOK a document's sections were cut with (text/markdown.h,
     * md_split). A document written before has 0: every vault is stale
     * until its next re-index, which parses each file again and cuts its
     * long sections (vault/vault.c), as it will after any change to the
     * constant. */
    "ALTER TABLE vault_docs ADD COLUMN cut INTEGER NOT NULL DEFAULT 0;"
    /* a piece's number in its section (0: a whole section or its first
     * piece): recall counts a word's sections, not its pieces, for IDF
     * (recall/notes.c), and reads it with the match, from the index */
    "ALTER TABLE vault_sections ADD COLUMN part INTEGER NOT NULL DEFAULT 0;"
    "DROP INDEX vault_sections_hit;"
    "CREATE INDEX vault_sections_hit ON vault_sections(id, doc, line, ntok, part);",
    /* 25 -> 26, "packed postings" (branch post26, issue 23; store/post.c):
     * every match of a common word up to post_state.upto, as the FTS5
     * walk gives it, POST_BLOCK matches a blob, so recall decodes a row
     * where it stepped ~500 FTS5 rows and runs. Empty until the tiers are
     * built again (`cairn reindex --tiers`, or the next automatic build).
     * A message deleted or rewritten while some are kept goes in
     * post_dirty (the reader drops its matches from the blocks and walks
     * it); a plain INSERT, not OR IGNORE: an outer statement's conflict
     * clause would decide that one. */
    "CREATE TABLE post_state(id INTEGER PRIMARY KEY CHECK (id = 1), upto INTEGER NOT NULL);"
    "INSERT INTO post_state VALUES (1, 0);"
    "CREATE TABLE post_terms(term TEXT PRIMARY KEY, n INTEGER NOT NULL, hi INTEGER NOT NULL)"
    "  WITHOUT ROWID;"
    "CREATE TABLE post_blocks(term TEXT NOT NULL, lo INTEGER NOT NULL, hi INTEGER NOT NULL,"
    "  n INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (term, lo)) WITHOUT ROWID;"
    "CREATE TABLE post_dirty(msg INTEGER PRIMARY KEY);"
    "CREATE TRIGGER post_dirty_ad AFTER DELETE ON messages"
    "  WHEN (SELECT upto FROM post_state) > 0 BEGIN"
    "  INSERT INTO post_dirty SELECT old.id WHERE NOT EXISTS"
    "    (SELECT 1 FROM post_dirty WHERE msg = old.id);"
    "END;"
    "CREATE TRIGGER post_dirty_au AFTER UPDATE OF content, ntok, session ON messages"
    "  WHEN (SELECT upto FROM post_state) > 0 BEGIN"
    "  INSERT INTO post_dirty SELECT old.id WHERE NOT EXISTS"
    "    (SELECT 1 FROM post_dirty WHERE msg = old.id);"
    "END;",
    /* 26 -> 27, "binary packed turns" (branch exact28, issue 23;
     * store/turns.c): session_turns' rows as varints, not text (reading
     * the text was ~250 M instructions of a million-message exact recall).
     * The rows are dropped here and every session packed again in C
     * (store_turns_fill, after the SQL steps, as 21 -> 22 filled them). */
    "DELETE FROM session_turns;",
    /* 27 -> 28, "stems packed" (branch hook29, issue 23; recall/tier.c):
     * the tier build packs the postings of a common stem that a query of
     * it would not find ("databas") under a word that is it alone
     * ("database"), which the reader then decodes instead of walking. No
     * table changes: a store built before holds none, so its build is due
     * again (cairn_tier_due: none built), at the next `cairn add` or
     * import, as schema 23's was; until then it is walked as before. */
    "UPDATE tier_state SET built = 0;",
    /* 28 -> 29, "vault totals" (branch vault31, issue 19; recall/notes.c):
     * the count of note sections, their index tokens and the sections
     * that are not a later piece of a cut one, in one row kept by
     * triggers on vault_sections, as store_totals is on session_stats:
     * every prompt with a vault read them by a scan of every section
     * (5,744 on a vault of 1,000 notes: 4.8 M instructions, 13% of a
     * hook that fires). */
    "CREATE TABLE vault_totals(id INTEGER PRIMARY KEY CHECK (id = 1),"
    "  sections INTEGER NOT NULL, tok INTEGER NOT NULL, whole INTEGER NOT NULL);"
    "INSERT INTO vault_totals SELECT 1, count(*), coalesce(sum(ntok), 0),"
    "  coalesce(sum(part = 0), 0) FROM vault_sections;"
    "CREATE TRIGGER vault_totals_ai AFTER INSERT ON vault_sections BEGIN"
    "  UPDATE vault_totals SET sections = sections + 1, tok = tok + new.ntok,"
    "  whole = whole + (new.part = 0);"
    "END;"
    "CREATE TRIGGER vault_totals_au AFTER UPDATE OF ntok, part ON vault_sections BEGIN"
    "  UPDATE vault_totals SET tok = tok - old.ntok + new.ntok,"
    "  whole = whole - (old.part = 0) + (new.part = 0);"
    "END;"
    "CREATE TRIGGER vault_totals_ad AFTER DELETE ON vault_sections BEGIN"
    "  UPDATE vault_totals SET sections = sections - 1, tok = tok - old.ntok,"
    "  whole = whole - (old.part = 0);"
    "END;",
    /* 29 -> 30, "session units" (branch units49, issue 23; store/units.h):
     * each session's units (what recall ranks) with what the keyword
     * ranking reads of them, beside its packed turns, so an exact recall
     * of a big pool need not load every turn to build them. Derived data:
     * the triggers that drop a session's packed turns when one of its
     * messages is deleted or rewritten drop its units too, every writer
     * of session_turns writes them after its own row (ingest.c,
     * store_turns_fill), and a row is read only with the reader's rule and
     * the packed turns' count. No trigger on session_turns itself: a
     * statement that fires one opens a statement savepoint, at which FTS5
     * flushes its pending terms, and ingest writes session_turns once a
     * session (+31% of `cairn add`'s instructions, measured). Filled in C
     * after the SQL steps (store_units_fill). IF NOT EXISTS: a store made
     * older by hand (the tests) may keep the table; its rows go. */
    "CREATE TABLE IF NOT EXISTS session_units(session INTEGER PRIMARY KEY,"
    "  n INTEGER NOT NULL, rule INTEGER NOT NULL, units BLOB NOT NULL);"
    "DELETE FROM session_units;"
    "DROP TRIGGER session_turns_ad;"
    "DROP TRIGGER session_turns_au;"
    "CREATE TRIGGER session_turns_ad AFTER DELETE ON messages BEGIN"
    "  DELETE FROM session_turns WHERE session = old.session;"
    "  DELETE FROM session_units WHERE session = old.session;"
    "END;"
    SESSION_TURNS_AU_HEAD
    "  DELETE FROM session_turns WHERE session IN (old.session, new.session);"
    "  DELETE FROM session_units WHERE session IN (old.session, new.session);"
    "END;",
};

#define N_MIGRATIONS ((int)(sizeof migrations / sizeof migrations[0]))
/* A new migration bumps CAIRN_SCHEMA_VERSION too (internal.h, docs/FORMAT.md). */
_Static_assert(EVENTS_FILL_MAX == 30000, "EVENTS_FILL_MAX_SQL follows EVENTS_FILL_MAX");
_Static_assert(N_MIGRATIONS == CAIRN_SCHEMA_VERSION,
               "CAIRN_SCHEMA_VERSION is not the number of migrations");

static int pragma_int(struct cairn *h, const char *sql, int *out)
{
    sqlite3_stmt *st;
    int rc = store_prepare(h, sql, &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *out = sqlite3_column_int(st, 0);
        src = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return src == SQLITE_OK || src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, sql);
}

static int too_new(struct cairn *h, int version)
{
    return cairn__err(h, CAIRN_VERSION_TOO_NEW,
                      "%s has schema version %d; this cairn knows up to %d: upgrade cairn",
                      h->path, version, N_MIGRATIONS);
}

static int foreign(struct cairn *h)
{
    return cairn__err(h, CAIRN_CORRUPT, "%s is a SQLite file of some other program, "
                      "not a cairn store", h->path);
}

/*
 * Refuses a SQLite file that is not ours before anything writes to it: a
 * file with tables and without cairn's application id (set by the first
 * migration, on every store since the first version) belongs to another
 * program. cairn_open calls this before it switches a file to WAL, which
 * changes the file's header, and the migration calls it again inside the
 * write lock. Only reads: an empty new file passes.
 */
int store_check_foreign(struct cairn *h)
{
    int foreign_file = 0;
    /* one statement, so one read transaction: as two, a process that
     * creates the store could commit between them (no id, then tables) */
    int rc = pragma_int(h, "SELECT (SELECT count(*) FROM sqlite_master) > 0 AND "
                           "application_id != " CAIRN_APP_ID_SQL " FROM pragma_application_id",
                        &foreign_file);
    return rc ? rc : foreign_file ? foreign(h) : CAIRN_OK;
}

/*
 * A read-only handle on a store of an older schema (the prompt hook after
 * cairn was upgraded): the store is migrated through a short writable
 * handle, exactly as the next writer would, and then read. Reading the old
 * schema instead would make every reader handle every older version, and
 * the hook would inject nothing until some writer ran. A file that cannot
 * be written keeps the old error. Version 0 is no store yet: an empty file
 * a writer is creating, or another program's file; a reader leaves both.
 * The writable handle is opened by the caller (cairn_open), so that the
 * store does not open handles itself.
 */
static int check_for_reader(struct cairn *h, int version)
{
    int ntables = 0, rc;
    if ((rc = store_check_foreign(h)))
        return rc;
    if (version == 0) {
        if ((rc = pragma_int(h, "SELECT count(*) FROM sqlite_master", &ntables)))
            return rc;
        if (ntables > 0)
            return foreign(h);
        return cairn__err(h, CAIRN_NOTFOUND, "no store at %s yet (the file is empty)", h->path);
    }
    return CAIRN_OK;
}

int store_check_upgraded(struct cairn *h)
{
    int version = 0, rc;
    if ((rc = pragma_int(h, "PRAGMA user_version", &version)))
        return rc;
    return version == N_MIGRATIONS ? CAIRN_OK
           : cairn__err(h, CAIRN_ERROR, "%s: schema version %d after the upgrade, not %d",
                        h->path, version, N_MIGRATIONS);
}

/* One session's packed row, n turns in b. */
static int turns_put(struct cairn *h, sqlite3_stmt *ins, int64_t sess, int64_t n,
                     const struct buf *b)
{
    if (b->err)
        return cairn__err(h, CAIRN_NOMEM, "out of memory");
    sqlite3_reset(ins);
    sqlite3_bind_int64(ins, 1, sess);
    sqlite3_bind_int64(ins, 2, n);
    sqlite3_bind_blob(ins, 3, b->p, (int)b->n, SQLITE_STATIC);
    int src = sqlite3_step(ins);
    return src == SQLITE_DONE ? CAIRN_OK : cairn__sqlerr(h, src, "pack turns");
}

int store_turns_fill(struct cairn *h, int64_t sess)
{
    sqlite3_stmt *st = NULL, *ins = NULL;
    struct buf b = BUF_INIT;
    struct turns_cur prev = { NULL, NULL, 0, 0, 0 };
    int64_t cur = 0, n = 0;
    int rc, src, any = 0;
    /* one ordered scan of messages_meta (it holds every field packed) */
    if ((rc = store_prepare(h, sess >= 0
                            ? "SELECT session, id, position, role = 'user', created_at, ntok, "
                              "speaker FROM messages INDEXED BY messages_meta WHERE session = ?1 "
                              "ORDER BY position"
                            : "SELECT session, id, position, role = 'user', created_at, ntok, "
                              "speaker FROM messages INDEXED BY messages_meta WHERE session NOT "
                              "IN (SELECT session FROM session_turns) ORDER BY session, position",
                            &st)) ||
        (rc = store_prepare(h, "INSERT OR REPLACE INTO session_turns(session, n, turns) "
                            "VALUES (?1, ?2, ?3)", &ins)))
        goto out;
    if (sess >= 0)
        sqlite3_bind_int64(st, 1, sess);
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t s = sqlite3_column_int64(st, 0);
        if (!any || s != cur) {
            if (any && (rc = turns_put(h, ins, cur, n, &b)))
                goto out;
            any = 1;
            cur = s;
            n = 0;
            prev = (struct turns_cur){ NULL, NULL, 0, 0, 0 };
            buf_reset(&b);
            buf_addc(&b, (char)STORE_TURNS_MARK);
        }
        int has_sp = sqlite3_column_type(st, 6) != SQLITE_NULL;
        const char *sp = has_sp ? (const char *)sqlite3_column_text(st, 6) : NULL;
        if (has_sp && !sp) {
            rc = cairn__err(h, CAIRN_NOMEM, "out of memory");
            goto out;
        }
        store_turn_write(&b, &prev, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
                         sqlite3_column_int(st, 3),
                         sqlite3_column_type(st, 4) == SQLITE_NULL ? CAIRN_NO_TIME
                         : sqlite3_column_int64(st, 4), sqlite3_column_int(st, 5), sp,
                         sp ? (size_t)sqlite3_column_bytes(st, 6) : 0);
        n++;
    }
    if (src != SQLITE_DONE) {
        rc = cairn__sqlerr(h, src, "pack turns");
        goto out;
    }
    if (any)
        rc = turns_put(h, ins, cur, n, &b);
    /* the units of what was packed (the rows' triggers dropped theirs;
     * a migration runs every SQL step first, so the table is there) */
    if (!rc && any)
        rc = store_units_fill(h, sess);
out:
    sqlite3_finalize(st);
    sqlite3_finalize(ins);
    buf_release(&b);
    return rc;
}

int store_migrate(struct cairn *h, int *old)
{
    int version = 0, rc;
    char sql[64];

    *old = 0;
    rc = pragma_int(h, "PRAGMA user_version", &version);
    if (rc)
        return rc;
    if (version == N_MIGRATIONS)
        return CAIRN_OK;                        /* the common case: nothing to do */
    if (version > N_MIGRATIONS)
        return too_new(h, version);
    if (h->readonly) {
        if ((rc = check_for_reader(h, version)))
            return rc;
        *old = version;
        return CAIRN_OK;
    }
    rc = store_begin(h);
    if (rc)
        return rc;
    /* Re-read inside the write lock: another process may have migrated
     * (or created the store) while this one waited for it. */
    if ((rc = pragma_int(h, "PRAGMA user_version", &version)) ||
        (rc = store_check_foreign(h)))
        goto fail;
    if (version == N_MIGRATIONS) {
        store_rollback(h);                      /* nothing written */
        return CAIRN_OK;
    }
    if (version > N_MIGRATIONS) {
        rc = too_new(h, version);
        goto fail;
    }
    for (int v = version; v < N_MIGRATIONS; v++) {
        int src = sqlite3_exec(h->db, migrations[v], NULL, NULL, NULL);
        if (src != SQLITE_OK) {
            rc = cairn__sqlerr(h, src, "migration");
            goto fail;
        }
    }
    /* 14 -> 15 derives rows from the stored text, which SQL cannot */
    if (version > 0 && version < 15 && (rc = store_events_fill(h)))
        goto fail;
    /* 26 -> 27 (and 20 -> 21): the packed turns are written in C */
    if (version > 0 && version < 27 && (rc = store_turns_fill(h, -1)))
        goto fail;
    /* 29 -> 30: every session's units from its packed turns */
    if (version > 0 && version < 30 && (rc = store_units_fill(h, -1)))
        goto fail;
    snprintf(sql, sizeof sql, "PRAGMA user_version=%d", N_MIGRATIONS);
    if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = cairn__sqlerr(h, SQLITE_ERROR, "set version");
        goto fail;
    }
    snprintf(sql, sizeof sql, "PRAGMA application_id=%d", CAIRN_APP_ID);
    if (sqlite3_exec(h->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        rc = cairn__sqlerr(h, SQLITE_ERROR, "set application id");
        goto fail;
    }
    return store_commit(h);
fail:
    store_rollback(h);
    return rc;
}
