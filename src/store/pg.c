/*
 * pg.c: a PostgreSQL server as a shared store (docs/POSTGRES.md):
 * connecting through libpq, the server schema and its migrations, row-level
 * security, and `cairn doctor --server`'s checks.
 *
 * Everything lives in the schema `cairn`. cairn.meta holds the schema
 * version and a random id of the server's store (the key of a local sync
 * cursor, so two URLs naming one server share one cursor and the URL, with
 * its password, is never stored). Each row carries its owner (the role that
 * wrote it: current_user, enforced) and its project; the policies decide
 * who sees what: a role reads and writes its own rows, and reads the rows
 * of a project its owner shared with it (cairn.shares, to a role or a
 * group role it is a member of) unless the session is private. Policies
 * are forced on the tables' owner too; a superuser bypasses them all, so
 * nobody should sync as one.
 *
 * Server version 1:
 *   meta        key/value: schema_version, server_id
 *   sessions    (owner, sid) the key: the local external id; sid_hash its
 *               sha256, hex, as the client computes it (what tombstones
 *               name; convert_to is not immutable, so no generated
 *               column); project, private, source, title, times, meta;
 *               tx the writing transaction (pull's cursor)
 *   messages    (owner, sid, mkey): mkey the message's external id, else
 *               "h:", its 64-bit content hash as the local store keys it,
 *               ":" and which repeat of that content in the session it
 *               is; position, role, speaker, content, created_at, chash
 *               (sha256 of content), ntok, tsv (a tsvector of cairn's own
 *               tokens with their positions, GIN-indexed: the full-text
 *               candidates of recall on the server, not yet built), seq and
 *               tx (pull's order)
 *   vectors     (owner, sid, mkey, model, piece): dim, scale, v as the local
 *               store keeps them (int8 or f32), and `emb vector` (pgvector)
 *               when the extension could be created
 *   tombstones  (owner, sid_hash): a forgotten session, with its project so
 *               those it was shared with forget it too
 *   shares      (owner, project, grantee): owner's project readable by the
 *               role grantee (or its members)
 * Server version 2: messages_seq (a message by its seq: the id a server
 * store reads it by), and the `shared` policies test the owner first.
 * Server version 3: sessions keep their messages' counts and first seq
 * (triggers), so a server store opens on one row a session; events, the
 * dates messages speak of, pushed with them.
 * Server version 4: pgvector's HNSW index a dimension.
 * Server version 5: memories (explicit memories and corrections, by their
 * global id, the newest version) and memory_tombstones.
 * Server version 6: postings, a message's lexemes with their positions one
 * row each (triggers on messages), so a search reads its own terms only.
 * Server version 7: sessions keep their messages' metadata packed (mpack,
 * triggers on messages), so a reader's map of messages is one statement.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pthread.h>

#include "store/pg.h"
#include "util/buf.h"
#include "util/dl.h"

struct pg_lib pg_lib;
static int pg_lib_ok;
static char pg_lib_err[400];
static pthread_once_t pg_lib_once = PTHREAD_ONCE_INIT;

static void pg_lib_init(void)
{
    static const char *const names[] = {
        "PQconnectdbParams", "PQstatus", "PQerrorMessage", "PQfinish", "PQexec", "PQexecParams",
        "PQresultStatus", "PQresultErrorMessage", "PQresultErrorField", "PQclear", "PQntuples",
        "PQgetvalue",
        "PQgetlength", "PQgetisnull", "PQcmdTuples", "PQuser", "PQhost", "PQdb", "PQpass",
        "PQsetNoticeProcessor",
    };
    enum { N = sizeof names / sizeof names[0] };
    _Static_assert(N * sizeof(void *) == sizeof(struct pg_lib), "pg_lib and names disagree");
    void *sym[N];
    if (!dl_load("libpq.so.5", "libpq5", names, sym, N, pg_lib_err, sizeof pg_lib_err))
        return;
    /* dlsym gives object pointers; POSIX guarantees they convert, and the
     * struct is N function pointers in the order of names */
    memcpy(&pg_lib, sym, sizeof pg_lib);
    pg_lib_ok = 1;
}

static const char *const pg_migrations[] = {
    /* 0 -> 1 */
    "CREATE SCHEMA IF NOT EXISTS cairn;"
    "CREATE TABLE cairn.meta(key text PRIMARY KEY, value text NOT NULL);"
    "INSERT INTO cairn.meta VALUES ('server_id', gen_random_uuid()::text);"
    "CREATE TABLE cairn.sessions("
    "  owner name NOT NULL DEFAULT current_user,"
    "  sid text NOT NULL,"
    "  sid_hash text NOT NULL,"
    "  project text NOT NULL DEFAULT '',"
    "  private boolean NOT NULL DEFAULT false,"
    "  source text NOT NULL DEFAULT '',"
    "  title text NOT NULL DEFAULT '',"
    "  started_at bigint, ended_at bigint, meta text,"
    "  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),"
    "  PRIMARY KEY (owner, sid));"
    "CREATE INDEX sessions_hash ON cairn.sessions(owner, sid_hash);"
    "CREATE INDEX sessions_project ON cairn.sessions(owner, project);"
    "CREATE TABLE cairn.messages("
    "  owner name NOT NULL DEFAULT current_user,"
    "  sid text NOT NULL,"
    "  mkey text NOT NULL,"
    "  project text NOT NULL DEFAULT '',"
    "  position integer NOT NULL,"
    "  ext_id text,"
    "  role text NOT NULL CHECK (role IN ('user', 'assistant')),"
    "  speaker text,"
    "  content text NOT NULL,"
    "  created_at bigint,"
    "  chash text NOT NULL,"
    "  ntok integer NOT NULL DEFAULT 0,"
    "  tsv tsvector NOT NULL,"
    "  seq bigint GENERATED ALWAYS AS IDENTITY,"
    "  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),"
    "  PRIMARY KEY (owner, sid, mkey),"
    "  FOREIGN KEY (owner, sid) REFERENCES cairn.sessions(owner, sid) ON DELETE CASCADE);"
    "CREATE INDEX messages_tsv ON cairn.messages USING gin (tsv);"
    "CREATE INDEX messages_pull ON cairn.messages(tx, seq);"
    "CREATE TABLE cairn.vectors("
    "  owner name NOT NULL DEFAULT current_user,"
    "  sid text NOT NULL, mkey text NOT NULL,"
    "  model text NOT NULL, piece integer NOT NULL,"
    "  dim integer NOT NULL, scale real NOT NULL, v bytea NOT NULL,"
    "  PRIMARY KEY (owner, sid, mkey, model, piece),"
    "  FOREIGN KEY (owner, sid, mkey) REFERENCES cairn.messages(owner, sid, mkey)"
    "    ON DELETE CASCADE);"
    "CREATE TABLE cairn.tombstones("
    "  owner name NOT NULL DEFAULT current_user,"
    "  sid_hash text NOT NULL,"
    "  project text NOT NULL DEFAULT '',"
    "  at timestamptz NOT NULL DEFAULT now(),"
    "  seq bigint GENERATED ALWAYS AS IDENTITY,"
    "  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),"
    "  PRIMARY KEY (owner, sid_hash));"
    "CREATE INDEX tombstones_pull ON cairn.tombstones(tx, seq);"
    "CREATE TABLE cairn.shares("
    "  owner name NOT NULL DEFAULT current_user,"
    "  project text NOT NULL,"
    "  grantee name NOT NULL,"
    "  PRIMARY KEY (owner, project, grantee));"
    /* who sees what: one source of truth, sessions; messages and vectors
     * are visible when their session is (policies on a table apply inside
     * another table's policy too) */
    "CREATE FUNCTION cairn.shared_with_me(o name, p text) RETURNS boolean LANGUAGE sql STABLE AS"
    "  $$ SELECT EXISTS (SELECT 1 FROM cairn.shares s JOIN pg_roles r ON r.rolname = s.grantee"
    "     WHERE s.owner = o AND s.project = p AND pg_has_role(current_user, r.oid, 'MEMBER')) $$;"
    "ALTER TABLE cairn.sessions ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.sessions FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.sessions USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.sessions FOR SELECT"
    "  USING (NOT private AND cairn.shared_with_me(owner, project));"
    "ALTER TABLE cairn.messages ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.messages FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.messages USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.messages FOR SELECT USING (EXISTS (SELECT 1 FROM"
    "  cairn.sessions s WHERE s.owner = messages.owner AND s.sid = messages.sid));"
    "ALTER TABLE cairn.vectors ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.vectors FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.vectors USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.vectors FOR SELECT USING (EXISTS (SELECT 1 FROM"
    "  cairn.sessions s WHERE s.owner = vectors.owner AND s.sid = vectors.sid));"
    "ALTER TABLE cairn.tombstones ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.tombstones FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.tombstones USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.tombstones FOR SELECT"
    "  USING (cairn.shared_with_me(owner, project));"
    "ALTER TABLE cairn.shares ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.shares FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.shares USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY mine ON cairn.shares FOR SELECT USING (EXISTS (SELECT 1 FROM pg_roles r"
    "  WHERE r.rolname = grantee AND pg_has_role(current_user, r.oid, 'MEMBER')));"
    /* who may connect to the database is the server's business (CONNECT,
     * pg_hba.conf); rows are guarded by the policies above */
    "GRANT USAGE ON SCHEMA cairn TO PUBLIC;"
    "GRANT SELECT ON cairn.meta TO PUBLIC;"
    "GRANT SELECT, INSERT, UPDATE, DELETE ON cairn.sessions, cairn.messages, cairn.vectors,"
    "  cairn.tombstones, cairn.shares TO PUBLIC;"
    /* pgvector when the server has it and this role may create it: the
     * vectors also as `vector`, for dense search on the server later */
    "DO $$ BEGIN"
    "  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector') THEN"
    "    BEGIN CREATE EXTENSION IF NOT EXISTS vector;"
    "    EXCEPTION WHEN insufficient_privilege THEN NULL; END;"
    "  END IF;"
    "  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector') THEN"
    "    ALTER TABLE cairn.vectors ADD COLUMN emb vector;"
    "  END IF;"
    "END $$;",
    /* 1 -> 2: reading the server as the store (store/pg_read.c). A row's
     * own owner is checked first: the policies are OR'ed in the order
     * PostgreSQL likes, so `shared` itself starts with the cheap test and
     * its subquery runs for other owners' rows only (on 10,000 own messages
     * its filter went from 10,000 subqueries to none). Texts are read by seq. */
    "CREATE UNIQUE INDEX IF NOT EXISTS messages_seq ON cairn.messages(seq);"
    "DROP POLICY IF EXISTS shared ON cairn.sessions;"
    "CREATE POLICY shared ON cairn.sessions FOR SELECT USING (owner <> current_user"
    "  AND NOT private AND cairn.shared_with_me(owner, project));"
    "DROP POLICY IF EXISTS shared ON cairn.messages;"
    "CREATE POLICY shared ON cairn.messages FOR SELECT USING (owner <> current_user AND"
    "  EXISTS (SELECT 1 FROM cairn.sessions s WHERE s.owner = messages.owner AND"
    "  s.sid = messages.sid));"
    "DROP POLICY IF EXISTS shared ON cairn.vectors;"
    "CREATE POLICY shared ON cairn.vectors FOR SELECT USING (owner <> current_user AND"
    "  EXISTS (SELECT 1 FROM cairn.sessions s WHERE s.owner = vectors.owner AND"
    "  s.sid = vectors.sid));"
    /* Under row-level security PostgreSQL uses an index only for leakproof
     * operators, and tsvector's @@ is not marked so: every search would
     * test every row the role sees (370 ms on 10,000 messages, against a
     * few ms on the GIN index). It reveals nothing but its result; only a
     * superuser may say so, in this database: done when one migrates,
     * else docs/POSTGRES.md tells the administrator. */
    "DO $$ BEGIN"
    "  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN"
    "    ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) LEAKPROOF;"
    "  END IF;"
    "END $$;",
    /* 2 -> 3: a server store opens on one row a session, and knows the
     * dates messages speak of.
     * Each session keeps its messages' counts as session_stats does (turns,
     * index tokens, user turns, bytes) and its first message's seq (push
     * order, the local ids of a server store), kept by statement triggers
     * over the changed rows: the open read every visible message to count
     * them (4.5 s on 100,000 messages). The triggers run as the writing
     * role, on its own sessions (its messages are its own: `own`).
     * The backfill must see every row: the tables' owner is subject to
     * the forced policies, so they are lifted inside this transaction. */
    "ALTER TABLE cairn.sessions ADD COLUMN n_msgs bigint NOT NULL DEFAULT 0,"
    "  ADD COLUMN n_tok bigint NOT NULL DEFAULT 0, ADD COLUMN n_user bigint NOT NULL DEFAULT 0,"
    "  ADD COLUMN n_bytes bigint NOT NULL DEFAULT 0, ADD COLUMN first_seq bigint;"
    "ALTER TABLE cairn.sessions NO FORCE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.messages NO FORCE ROW LEVEL SECURITY;"
    "UPDATE cairn.sessions s SET n_msgs = d.n, n_tok = d.t, n_user = d.u, n_bytes = d.b,"
    "  first_seq = d.f FROM (SELECT owner, sid, count(*) n, sum(ntok) t, count(*) FILTER"
    "  (WHERE role = 'user') u, sum(octet_length(content)) b, min(seq) f FROM cairn.messages"
    "  GROUP BY owner, sid) d WHERE s.owner = d.owner AND s.sid = d.sid;"
    "ALTER TABLE cairn.sessions FORCE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.messages FORCE ROW LEVEL SECURITY;"
    "CREATE FUNCTION cairn.count_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  UPDATE cairn.sessions s SET n_msgs = s.n_msgs + d.n, n_tok = s.n_tok + d.t,"
    "    n_user = s.n_user + d.u, n_bytes = s.n_bytes + d.b, first_seq = least(s.first_seq, d.f)"
    "  FROM (SELECT owner, sid, count(*) n, sum(ntok) t, count(*) FILTER (WHERE role = 'user') u,"
    "    sum(octet_length(content)) b, min(seq) f FROM added GROUP BY owner, sid) d"
    "  WHERE s.owner = d.owner AND s.sid = d.sid;"
    "  RETURN NULL; END $$;"
    /* an update takes a new seq, a delete may take the first: the first
     * seq of those sessions is read again (their rows, on the key) */
    "CREATE FUNCTION cairn.count_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  UPDATE cairn.sessions s SET n_msgs = s.n_msgs - d.n, n_tok = s.n_tok - d.t,"
    "    n_user = s.n_user - d.u, n_bytes = s.n_bytes - d.b, first_seq = (SELECT min(m.seq)"
    "    FROM cairn.messages m WHERE m.owner = s.owner AND m.sid = s.sid)"
    "  FROM (SELECT owner, sid, count(*) n, sum(ntok) t, count(*) FILTER (WHERE role = 'user') u,"
    "    sum(octet_length(content)) b FROM removed GROUP BY owner, sid) d"
    "  WHERE s.owner = d.owner AND s.sid = d.sid;"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER count_insert AFTER INSERT ON cairn.messages REFERENCING NEW TABLE AS added"
    "  FOR EACH STATEMENT EXECUTE FUNCTION cairn.count_added();"
    /* an update is its old rows removed (first) and its new rows added */
    "CREATE TRIGGER count_update_1 AFTER UPDATE ON cairn.messages REFERENCING OLD TABLE AS"
    "  removed FOR EACH STATEMENT EXECUTE FUNCTION cairn.count_removed();"
    "CREATE TRIGGER count_update_2 AFTER UPDATE ON cairn.messages REFERENCING NEW TABLE AS"
    "  added FOR EACH STATEMENT EXECUTE FUNCTION cairn.count_added();"
    "CREATE TRIGGER count_delete AFTER DELETE ON cairn.messages REFERENCING OLD TABLE AS removed"
    "  FOR EACH STATEMENT EXECUTE FUNCTION cairn.count_removed();"
    /* The dates a message speaks of (local schema 15, message_events), as
     * the pushing store computed them: recall on a server store matches a
     * question's date against them as SQLite does. They follow their
     * message (deleted with it; replaced when its text is). int8 <, >
     * are leakproof: the time index serves under row-level security. */
    "CREATE TABLE cairn.events("
    "  owner name NOT NULL DEFAULT current_user,"
    "  sid text NOT NULL, mkey text NOT NULL,"
    "  t_from bigint NOT NULL, t_to bigint NOT NULL,"
    "  FOREIGN KEY (owner, sid, mkey) REFERENCES cairn.messages(owner, sid, mkey)"
    "    ON DELETE CASCADE);"
    "CREATE INDEX events_time ON cairn.events(t_from, t_to);"
    "CREATE INDEX events_msg ON cairn.events(owner, sid, mkey);"
    "ALTER TABLE cairn.events ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.events FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.events USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.events FOR SELECT USING (owner <> current_user AND"
    "  EXISTS (SELECT 1 FROM cairn.sessions s WHERE s.owner = events.owner AND"
    "  s.sid = events.sid));"
    "GRANT SELECT, INSERT, UPDATE, DELETE ON cairn.events TO PUBLIC;"
    /* recall's metadata of the pool's sessions' messages from the index
     * alone (as SQLite's messages_meta): 611 -> 130 ms for 1,000 sessions.
     * The speaker is not in it (a long one would not fit an index row):
     * the few messages that have one are read through the second. */
    "CREATE INDEX messages_meta ON cairn.messages(owner, sid, position)"
    "  INCLUDE (seq, role, created_at, ntok);"
    "CREATE INDEX messages_speaker ON cairn.messages(owner, sid) WHERE speaker IS NOT NULL;"
    /* a search reads the candidates' tsvectors whole; pglz compressed
     * them little (132 against 126 MB for 100,000) and unpacking them
     * cost more than reading them: 18,391 candidates 493 -> 151 ms, in a
     * narrow copy. New rows only; the old keep theirs until rewritten. */
    "ALTER TABLE cairn.messages ALTER COLUMN tsv SET STORAGE EXTERNAL;"
    /* the sessions shared with the role as one set, read once a
     * statement: shared_with_me ran once a row of every other owner's
     * session (5,000 calls, 238 -> 62 ms to list 500 sessions) */
    "DROP POLICY shared ON cairn.sessions;"
    "CREATE POLICY shared ON cairn.sessions FOR SELECT USING (owner <> current_user"
    "  AND NOT private AND (owner, project) IN (SELECT s.owner, s.project FROM cairn.shares s"
    "  JOIN pg_roles r ON r.rolname = s.grantee"
    "  WHERE pg_has_role(current_user, r.oid, 'MEMBER')));",
    /* 3 -> 4: dense search on the server (pgvector's HNSW, cosine). `emb`
     * has no fixed dimension (the models' differ) and HNSW needs one: an
     * index a dimension, on `emb::vector(d)` over the rows of that dim,
     * made by cairn.vector_index(d), which a push calls for the dims it
     * sends. It runs as the tables' owner (SECURITY DEFINER: only the
     * owner may index them) and takes an integer, nothing else. The dims
     * already there are indexed now (the policies lifted in this
     * transaction, as for version 3's counters). Without pgvector: none. */
    "DO $$ DECLARE ext name; d integer; dims integer[]; BEGIN"
    "  SELECT n.nspname INTO ext FROM pg_extension e JOIN pg_namespace n ON"
    "    n.oid = e.extnamespace WHERE e.extname = 'vector';"
    "  IF ext IS NULL OR NOT EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid ="
    "    'cairn.vectors'::regclass AND attname = 'emb' AND NOT attisdropped) THEN RETURN; END IF;"
    "  EXECUTE format($f$CREATE OR REPLACE FUNCTION cairn.vector_index(d integer) RETURNS void"
    "    LANGUAGE plpgsql SECURITY DEFINER SET search_path = pg_catalog, %I AS $b$ BEGIN"
    "    IF d BETWEEN 1 AND 2000 AND to_regclass('cairn.vectors_hnsw_' || d) IS NULL THEN"
    "      EXECUTE format('CREATE INDEX IF NOT EXISTS vectors_hnsw_%%s ON cairn.vectors USING"
    "        hnsw ((emb::vector(%%s)) vector_cosine_ops) WHERE dim = %%s', d, d, d);"
    "    END IF; END $b$ $f$, ext);"
    "  REVOKE ALL ON FUNCTION cairn.vector_index(integer) FROM PUBLIC;"
    "  GRANT EXECUTE ON FUNCTION cairn.vector_index(integer) TO PUBLIC;"
    "  ALTER TABLE cairn.vectors NO FORCE ROW LEVEL SECURITY;"
    /* the dims first: a loop over a query keeps the table open, and an
     * index cannot be made on a table in use */
    "  dims := array(SELECT DISTINCT dim FROM cairn.vectors);"
    "  FOREACH d IN ARRAY dims LOOP"
    "    PERFORM cairn.vector_index(d);"
    "  END LOOP;"
    "  ALTER TABLE cairn.vectors FORCE ROW LEVEL SECURITY;"
    "END $$;",
    /* 4 -> 5 (issue 21): explicit memories and corrections (store/pg_msync.c).
     * One row a memory by its global id, the newest version (updated_at,
     * rev, vid: compared as one row value, the same rule every machine
     * applies on pull); superseded_by names the replacing memory's gid;
     * severity to commands are a correction's fields (NULL: none). A
     * removed memory is a tombstone, the sha256 of its gid with its
     * project, as for sessions. Who sees what: as sessions, on the row
     * itself (owner, project, private). */
    "CREATE TABLE cairn.memories("
    "  owner name NOT NULL DEFAULT current_user,"
    "  gid text NOT NULL,"
    "  gid_hash text NOT NULL,"
    "  project text NOT NULL DEFAULT '',"
    "  private boolean NOT NULL DEFAULT false,"
    "  type text NOT NULL,"
    "  text text NOT NULL,"
    "  tags text NOT NULL DEFAULT '',"
    "  created_at bigint NOT NULL, updated_at bigint NOT NULL, expires_at bigint,"
    "  session text NOT NULL DEFAULT '', message text NOT NULL DEFAULT '',"
    "  superseded_by text,"
    "  rev bigint NOT NULL, vid text NOT NULL,"
    "  severity integer, keywords text, paths text, commands text,"
    "  seq bigint GENERATED ALWAYS AS IDENTITY,"
    "  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),"
    "  PRIMARY KEY (owner, gid));"
    "CREATE INDEX memories_pull ON cairn.memories(tx, seq);"
    "CREATE INDEX memories_hash ON cairn.memories(owner, gid_hash);"
    "CREATE TABLE cairn.memory_tombstones("
    "  owner name NOT NULL DEFAULT current_user,"
    "  gid_hash text NOT NULL,"
    "  project text NOT NULL DEFAULT '',"
    "  at timestamptz NOT NULL DEFAULT now(),"
    "  seq bigint GENERATED ALWAYS AS IDENTITY,"
    "  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),"
    "  PRIMARY KEY (owner, gid_hash));"
    "CREATE INDEX memory_tombstones_pull ON cairn.memory_tombstones(tx, seq);"
    "ALTER TABLE cairn.memories ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.memories FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.memories USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.memories FOR SELECT USING (owner <> current_user"
    "  AND NOT private AND (owner, project) IN (SELECT s.owner, s.project FROM cairn.shares s"
    "  JOIN pg_roles r ON r.rolname = s.grantee"
    "  WHERE pg_has_role(current_user, r.oid, 'MEMBER')));"
    "ALTER TABLE cairn.memory_tombstones ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.memory_tombstones FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.memory_tombstones USING (owner = current_user)"
    "  WITH CHECK (owner = current_user);"
    "CREATE POLICY shared ON cairn.memory_tombstones FOR SELECT USING (owner <> current_user"
    "  AND (owner, project) IN (SELECT s.owner, s.project FROM cairn.shares s"
    "  JOIN pg_roles r ON r.rolname = s.grantee"
    "  WHERE pg_has_role(current_user, r.oid, 'MEMBER')));"
    "GRANT SELECT, INSERT, UPDATE, DELETE ON cairn.memories, cairn.memory_tombstones TO PUBLIC;",
    /* 5 -> 6 (issue 21): postings, one row a (message, lexeme) with its
     * positions, as FTS5's doclists: a question reads the postings of its
     * own terms from the key's index, where it read each candidate's whole
     * tsvector out of TOAST (docs/POSTGRES.md, version 6). Kept from tsv
     * by statement triggers on messages (an insert adds, a delete removes,
     * an update does both, so a push, a rewrite and a forget's cascade keep
     * them), as the writing role on its own rows. A lexeme over 512 bytes
     * has none (an index row has a size limit): a question with one reads
     * the tsvectors. The backfill lifts the policies inside this
     * transaction, as version 3's counters. Who sees what: `own` on the
     * row; `shared` through the message, whose own policies apply. The
     * owner is the role's oid and the positions their text ("{3,17}", as
     * recall reads them): a name is 64 bytes and an array's header 24, on
     * some 77 rows a message (a 2,000-message copy's postings: 51 MB with
     * them). */
    "CREATE TABLE cairn.postings("
    "  lexeme text NOT NULL,"
    "  seq bigint NOT NULL,"
    "  owner oid NOT NULL,"
    "  pos text NOT NULL,"
    "  PRIMARY KEY (lexeme, seq) INCLUDE (owner, pos));"
    "ALTER TABLE cairn.postings NO FORCE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.messages NO FORCE ROW LEVEL SECURITY;"
    "INSERT INTO cairn.postings SELECT u.lexeme, m.seq, m.owner::text::regrole,"
    "  coalesce(u.positions, '{}')::text FROM cairn.messages m, unnest(m.tsv) u"
    "  WHERE octet_length(u.lexeme) <= 512;"
    "ALTER TABLE cairn.messages FORCE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.postings ENABLE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.postings FORCE ROW LEVEL SECURITY;"
    "CREATE POLICY own ON cairn.postings"
    "  USING (owner = (SELECT oid FROM pg_roles WHERE rolname = current_user))"
    "  WITH CHECK (owner = (SELECT oid FROM pg_roles WHERE rolname = current_user));"
    "CREATE POLICY shared ON cairn.postings FOR SELECT USING (owner <>"
    "  (SELECT oid FROM pg_roles WHERE rolname = current_user) AND"
    "  EXISTS (SELECT 1 FROM cairn.messages m WHERE m.seq = postings.seq));"
    "GRANT SELECT, INSERT, UPDATE, DELETE ON cairn.postings TO PUBLIC;"
    "CREATE FUNCTION cairn.postings_added() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  INSERT INTO cairn.postings SELECT u.lexeme, a.seq, a.owner::text::regrole,"
    "    coalesce(u.positions, '{}')::text FROM added a, unnest(a.tsv) u"
    "    WHERE octet_length(u.lexeme) <= 512;"
    "  RETURN NULL; END $$;"
    /* on the key: the old row's own lexemes, not a scan by seq */
    "CREATE FUNCTION cairn.postings_removed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  DELETE FROM cairn.postings p USING (SELECT r.seq, u.lexeme FROM removed r,"
    "    unnest(r.tsv) u WHERE octet_length(u.lexeme) <= 512) d"
    "    WHERE p.lexeme = d.lexeme AND p.seq = d.seq;"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER postings_insert AFTER INSERT ON cairn.messages REFERENCING NEW TABLE AS"
    "  added FOR EACH STATEMENT EXECUTE FUNCTION cairn.postings_added();"
    /* triggers fire in name order: the old rows' postings go first (an
     * update takes a new seq, but its lexemes may stay) */
    "CREATE TRIGGER postings_update_1 AFTER UPDATE ON cairn.messages REFERENCING OLD TABLE AS"
    "  removed FOR EACH STATEMENT EXECUTE FUNCTION cairn.postings_removed();"
    "CREATE TRIGGER postings_update_2 AFTER UPDATE ON cairn.messages REFERENCING NEW TABLE AS"
    "  added FOR EACH STATEMENT EXECUTE FUNCTION cairn.postings_added();"
    "CREATE TRIGGER postings_delete AFTER DELETE ON cairn.messages REFERENCING OLD TABLE AS"
    "  removed FOR EACH STATEMENT EXECUTE FUNCTION cairn.postings_removed();"
    /* a posting's message key and length from the index on seq alone:
     * version 2's messages_seq, widened (at 10,000 messages, the join of
     * 1,864 candidates 35 -> 26 ms) */
    "CREATE UNIQUE INDEX messages_seq_key ON cairn.messages(seq) INCLUDE (owner, sid, ntok);"
    "DROP INDEX cairn.messages_seq;",
    /* 6 -> 7 (issue 21): each session keeps the map of its messages
     * packed (store/pg_msgmap.c): a reader's whole map is one statement
     * over the sessions, read at its first question, where it was every
     * message's row (476 ms at 100,000) and a process read the postings
     * joined to messages and its pool's metadata instead (~230 ms). Per
     * message, in (position, seq) order: seq int8, position int4, ntok
     * int4, created_at int8 (0 when none), a flags byte (1 user, 2 has a
     * time, 4 has a speaker), then the speaker's length int4 and UTF-8
     * bytes when it has one: metadata only, no text. Kept by statement
     * triggers over the changed sessions, as the writing role on its own
     * rows; the backfill lifts the policies in this transaction, as
     * version 3's counters. */
    "CREATE FUNCTION cairn.mpack(o name, s text) RETURNS bytea LANGUAGE sql STABLE AS $$"
    "  SELECT coalesce(string_agg(int8send(seq) || int4send(position) || int4send(ntok) ||"
    "    int8send(coalesce(created_at, 0)) || set_byte('\\x00'::bytea, 0, (role = 'user')::int |"
    "    ((created_at IS NOT NULL)::int << 1) | ((speaker IS NOT NULL)::int << 2)) ||"
    "    CASE WHEN speaker IS NULL THEN ''::bytea ELSE int4send(octet_length(speaker)) ||"
    "    convert_to(speaker, 'UTF8') END, ''::bytea ORDER BY position, seq), ''::bytea)"
    "  FROM cairn.messages WHERE owner = o AND sid = s $$;"
    "ALTER TABLE cairn.sessions ADD COLUMN mpack bytea NOT NULL DEFAULT ''::bytea;"
    "ALTER TABLE cairn.sessions NO FORCE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.messages NO FORCE ROW LEVEL SECURITY;"
    "UPDATE cairn.sessions SET mpack = cairn.mpack(owner, sid);"
    "ALTER TABLE cairn.sessions FORCE ROW LEVEL SECURITY;"
    "ALTER TABLE cairn.messages FORCE ROW LEVEL SECURITY;"
    "CREATE FUNCTION cairn.mpack_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
    "  UPDATE cairn.sessions s SET mpack = cairn.mpack(s.owner, s.sid)"
    "  FROM (SELECT DISTINCT owner, sid FROM changed) d"
    "  WHERE s.owner = d.owner AND s.sid = d.sid;"
    "  RETURN NULL; END $$;"
    "CREATE TRIGGER mpack_insert AFTER INSERT ON cairn.messages REFERENCING NEW TABLE AS"
    "  changed FOR EACH STATEMENT EXECUTE FUNCTION cairn.mpack_changed();"
    "CREATE TRIGGER mpack_update AFTER UPDATE ON cairn.messages REFERENCING NEW TABLE AS"
    "  changed FOR EACH STATEMENT EXECUTE FUNCTION cairn.mpack_changed();"
    "CREATE TRIGGER mpack_delete AFTER DELETE ON cairn.messages REFERENCING OLD TABLE AS"
    "  changed FOR EACH STATEMENT EXECUTE FUNCTION cairn.mpack_changed();",
};
#define PG_N_MIGRATIONS ((int)(sizeof pg_migrations / sizeof pg_migrations[0]))
_Static_assert(PG_N_MIGRATIONS == PG_SCHEMA_VERSION,
               "PG_SCHEMA_VERSION is not the number of server migrations");

/* msg with every occurrence of the connection's password replaced: libpq
 * does not echo it, but a server-side message quoting a URL might. */
static void copy_masked(char *out, size_t n, const char *msg, const char *pw)
{
    size_t k = 0, pl = pw ? strlen(pw) : 0;
    while (*msg && k + 1 < n) {
        if (pl >= 3 && !strncmp(msg, pw, pl)) {
            k += (size_t)snprintf(out + k, n - k, "***");
            if (k >= n)
                k = n - 1;
            msg += pl;
        } else if (*msg == '\n' && !msg[1]) {
            msg++;                               /* libpq's final newline */
        } else {
            out[k++] = *msg == '\n' ? ' ' : *msg;
            msg++;
        }
    }
    out[k] = 0;
}

int pg_fail(struct pgc *pc, PGresult *r, const char *what)
{
    char msg[400];
    const char *m = r ? PQresultErrorMessage(r) : "";
    if (!m || !*m)
        m = pc->c ? PQerrorMessage(pc->c) : "out of memory";
    copy_masked(msg, sizeof msg, m, pc->c ? PQpass(pc->c) : NULL);
    const char *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
    snprintf(pc->sqlstate, sizeof pc->sqlstate, "%s", state ? state : "");
    int gone = !pc->c || PQstatus(pc->c) != CONNECTION_OK;
    PQclear(r);
    return cairn__err(pc->h, gone ? CAIRN_IO : CAIRN_ERROR, "server %s: %s: %s", pc->who, what,
                      msg);
}

int pg_retryable(const struct pgc *pc)
{
    return !strcmp(pc->sqlstate, "40P01") || !strcmp(pc->sqlstate, "40001");
}

void pg_array_elem(struct buf *b, const char *s, int first)
{
    buf_adds(b, first ? "\"" : ",\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            buf_addc(b, '\\');
        buf_addc(b, *s);
    }
    buf_addc(b, '"');
}

int pg_exec(struct pgc *pc, const char *sql, const char *what)
{
    PGresult *r = PQexec(pc->c, sql);
    ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
        return pg_fail(pc, r, what);
    PQclear(r);
    return CAIRN_OK;
}

/* One text value of a one-row query, or "" when it gave no row. */
static int pg_value(struct pgc *pc, const char *sql, char *out, size_t n)
{
    PGresult *r = PQexec(pc->c, sql);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_fail(pc, r, "read the schema");
    snprintf(out, n, "%s", PQntuples(r) ? PQgetvalue(r, 0, 0) : "");
    PQclear(r);
    return CAIRN_OK;
}

static int read_version(struct pgc *pc)
{
    char v[32];
    /* two statements: one naming cairn.meta fails to parse without it */
    int rc = pg_value(pc, "SELECT to_regclass('cairn.meta') IS NOT NULL", v, sizeof v);
    pc->schema = 0;
    if (rc || v[0] != 't')
        return rc;
    if (!(rc = pg_value(pc, "SELECT coalesce((SELECT value FROM cairn.meta WHERE key ="
                            " 'schema_version'), '0')", v, sizeof v)))
        pc->schema = atoi(v);
    return rc;
}

/* Creates or upgrades the schema in one transaction, behind an advisory
 * lock so that two machines syncing a new server at once migrate it once. */
static int migrate(struct pgc *pc)
{
    int rc;
    char sql[128];
    if ((rc = read_version(pc)))
        return rc;
    if (pc->schema == PG_SCHEMA_VERSION)
        return CAIRN_OK;
    if (pc->schema > PG_SCHEMA_VERSION)
        return cairn__err(pc->h, CAIRN_VERSION_TOO_NEW, "server %s has cairn schema version %d; "
                          "this cairn knows up to %d: upgrade cairn", pc->who, pc->schema,
                          PG_SCHEMA_VERSION);
    if ((rc = pg_exec(pc, "BEGIN; SELECT pg_advisory_xact_lock(hashtext('cairn.schema'))",
                      "lock the schema")))
        return rc;
    if ((rc = read_version(pc)))
        goto fail;
    for (int v = pc->schema; v < PG_SCHEMA_VERSION; v++) {
        if ((rc = pg_exec(pc, pg_migrations[v], "create the cairn schema"))) {
            if (strstr(cairn_errmsg(pc->h), "permission denied"))
                cairn__err(pc->h, CAIRN_ERROR, "server %s: the cairn schema is at version %d and "
                           "%s may not create it: a role with CREATE on the database must run "
                           "`cairn sync --server ...` once",
                           pc->who, pc->schema, pc->user);
            goto fail;
        }
    }
    snprintf(sql, sizeof sql, "INSERT INTO cairn.meta VALUES ('schema_version', '%d') ON CONFLICT "
             "(key) DO UPDATE SET value = EXCLUDED.value", PG_SCHEMA_VERSION);
    if ((rc = pg_exec(pc, sql, "set the schema version")) ||
        (rc = pg_exec(pc, "COMMIT", "commit the schema")))
        goto fail;
    pc->schema = PG_SCHEMA_VERSION;
    return CAIRN_OK;
fail:
    PQclear(PQexec(pc->c, "ROLLBACK"));
    return rc;
}

/* libpq prints the server's notices (NOTICE: ... already exists) to
 * stderr by default; the library never prints. */
static void no_notice(void *arg, const char *message)
{
    (void)arg, (void)message;
}

int pg_open(struct cairn *h, const char *server, int migrate_it, struct pgc *pc)
{
    /* keywords are read in order and a later one wins: the defaults first,
     * then the caller's URL or conninfo (expand_dbname) over them */
    const char *const keys[] = { "connect_timeout", "fallback_application_name", "dbname", NULL };
    const char *const vals[] = { "10", "cairn", server && *server ? server : NULL, NULL };
    int rc;
    char id[64];
    PGresult *r;

    memset(pc, 0, sizeof *pc);
    pc->h = h;
    pthread_once(&pg_lib_once, pg_lib_init);
    if (!pg_lib_ok)
        return cairn__err(h, CAIRN_ERROR, "%s", pg_lib_err);
    snprintf(pc->who, sizeof pc->who, "(not connected)");
    pc->c = PQconnectdbParams(keys, vals, 1);
    if (pc->c) {
        snprintf(pc->user, sizeof pc->user, "%s", PQuser(pc->c) ? PQuser(pc->c) : "");
        const char *host = PQhost(pc->c);
        snprintf(pc->who, sizeof pc->who, "%s@%s/%s", pc->user, host && *host ? host : "local",
                 PQdb(pc->c) ? PQdb(pc->c) : "");
    }
    if (!pc->c || PQstatus(pc->c) != CONNECTION_OK) {
        rc = pg_fail(pc, NULL, "cannot connect");
        pg_close(pc);
        return rc;
    }
    PQsetNoticeProcessor(pc->c, no_notice, NULL);
    /* Two round trips before the first question, where there were seven
     * (each ~1-2 ms on a loaded machine: a `cairn recall` process pays
     * them all). Times and text as cairn writes them, whatever the role's
     * defaults; no JIT: a search over many candidates is costed high
     * enough for it, and compiling took 75 ms of a 100 ms-scale statement.
     * The last statement's row is PQexec's result. */
    r = PQexec(pc->c, "SET client_encoding = 'UTF8'; SET TIME ZONE 'UTC'; SET jit = off;"
                      " SELECT to_regclass('cairn.meta') IS NOT NULL, coalesce((SELECT extversion"
                      " FROM pg_extension WHERE extname = 'vector'), '')");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        rc = pg_fail(pc, r, "set up");
        goto fail;
    }
    int has_meta = PQgetvalue(r, 0, 0)[0] == 't';
    snprintf(pc->pgvector, sizeof pc->pgvector, "%s", PQgetvalue(r, 0, 1));
    PQclear(r);
    if (migrate_it && (rc = migrate(pc)))
        goto fail;
    if (!migrate_it && !has_meta)
        return CAIRN_OK;             /* no store: schema 0 */
    /* the version, the store's id, pgvector's column and version 4's
     * HNSW indexes (one a dim, store/pg.c: a push asks for its dims'),
     * in one statement; the catalog itself: information_schema's view
     * cost 90 ms a connection */
    r = PQexec(pc->c, "SELECT coalesce((SELECT value FROM cairn.meta WHERE key ="
                      " 'schema_version'), '0'), coalesce((SELECT value FROM cairn.meta WHERE key ="
                      " 'server_id'), ''), EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid ="
                      " to_regclass('cairn.vectors') AND attname = 'emb' AND NOT attisdropped),"
                      " to_regprocedure('cairn.vector_index(integer)') IS NOT NULL");
    if (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1) {
        rc = pg_fail(pc, r, "read the schema");
        goto fail;
    }
    if (!migrate_it)
        pc->schema = atoi(PQgetvalue(r, 0, 0));
    snprintf(id, sizeof id, "%s", PQgetvalue(r, 0, 1));
    pc->has_emb = PQgetvalue(r, 0, 2)[0] == 't';
    /* pgvector installed after the migration: no indexes */
    pc->has_vindex = pc->has_emb && pc->schema >= 4 && PQgetvalue(r, 0, 3)[0] == 't';
    PQclear(r);
    if (pc->schema == 0)
        return CAIRN_OK;
    snprintf(pc->key, sizeof pc->key, "%s/%s", id, pc->user);
    return CAIRN_OK;
fail:
    pg_close(pc);
    return rc;
}

void pg_close(struct pgc *pc)
{
    if (pc->c)
        PQfinish(pc->c);
    pc->c = NULL;
}

int cairn_server_check(struct cairn *h, const char *server, struct cairn_server_info *info)
{
    struct pgc pc;
    char v[64];
    int rc;
    memset(info, 0, sizeof *info);
    info->schema_known = PG_SCHEMA_VERSION;
    if ((rc = pg_open(h, server, 0, &pc)))
        return rc;
    snprintf(info->who, sizeof info->who, "%s", pc.who);
    snprintf(info->pgvector, sizeof info->pgvector, "%s", pc.pgvector);
    info->schema = pc.schema;
    info->emb = pc.has_emb;
    /* the skew: the server's clock against the middle of the round trip */
    struct timespec a, b;
    clock_gettime(CLOCK_REALTIME, &a);
    rc = pg_value(&pc, "SELECT extract(epoch FROM clock_timestamp())::text", v, sizeof v);
    clock_gettime(CLOCK_REALTIME, &b);
    if (!rc) {
        double mid = ((double)a.tv_sec + (double)b.tv_sec) / 2 +
                     ((double)a.tv_nsec + (double)b.tv_nsec) / 2e9;
        info->clock_skew_s = atof(v) - mid;
    }
    if (!rc)
        rc = pg_value(&pc, "SELECT current_setting('server_version')", info->server_version,
                      sizeof info->server_version);
    pg_close(&pc);
    return rc;
}
