#!/bin/sh
# t0603-pg-read: the read commands, recall and `cairn mcp` with a PostgreSQL
# server as the store (--db postgres://..., CAIRN_DB), against a real
# PostgreSQL 15 (tests/tools/pg.sh). The sessions of a local store pushed with
# `cairn sync` read back the same: recall gives byte-identical text on SQLite
# and on the server for English, Chinese, identifier, date and --project
# questions; sessions, show, export are identical; a role sees only what
# row-level security lets it (another owner's private session never appears
# in any read command or MCP tool); write commands are refused clearly; the
# server's versions 1 and 2 read the same and migrate to 6; a
# wrong password and a down server are clear errors without the password.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
pg_start || t_skip_all "$PG_WHY"
pg_login_roles alice bob || bad "roles and schema"
ALICE=$(pg_url alice alice-pw) BOB=$(pg_url bob bob-pw)
A="$TMP/a.db" B="$TMP/b.db"

# 1. alice's store: synthetic history (English prose, code, identifiers,
# Chinese, times) and hand-made sessions the questions aim at
python3 "$ROOT/bench/gen_data.py" ingest "$TMP/gen.jsonl" --sessions 40 --messages 1200 --seed 7 \
    >/dev/null 2>&1 || bad "gen_data"
python3 - "$TMP/s.jsonl" <<'EOF'
import json, sys
S = [
 {"id": "deploy-1", "project": "team", "title": "deploy plan", "source": "claude-code",
  "started_at": "2024-03-04T09:00:00Z", "meta": {"branch": "main"},
  "messages": [
   {"id": "d1", "role": "user", "content": "How do we roll out frobnicate_v2 to the staging cluster?", "at": "2024-03-04T09:00:00Z"},
   {"id": "d2", "role": "assistant", "content": "Run deploy.sh --env=staging, then check FrobConfig.max_retries is 5.", "at": "2024-03-04T09:01:00Z"},
   {"role": "user", "content": "ok", "at": "2024-03-04T09:02:00Z"}]},
 {"id": "zh-1", "project": "team", "title": "数据库", "messages": [
   {"role": "user", "content": "我们上周讨论了数据库迁移的方案,北京的服务器要先升级。"},
   {"role": "assistant", "content": "好的,先在北京的机房做备份,然后迁移数据库。"}]},
 {"id": "fair-1", "project": "team", "title": "weekend", "started_at": "2024-12-05T10:00:00Z",
  "messages": [
   {"role": "user", "content": "Yesterday I took the kids to the lantern fair downtown.", "at": "2024-12-05T10:00:00Z"},
   {"role": "assistant", "content": "That sounds lovely, did they like the lanterns?", "at": "2024-12-05T10:01:00Z"}]},
 {"id": "chores-1", "project": "team", "title": "chores", "started_at": "2024-12-04T10:00:00Z",
  "messages": [{"role": "user", "content": "I cleaned the garage and fixed the bike.", "at": "2024-12-04T10:00:00Z"}]},
 {"id": "solo-1", "project": "solo", "messages": [
   {"role": "user", "speaker": "Carol", "content": "The kestrel key rotation happens every Tuesday.", "at": "2023-05-08T13:56:00Z"},
   {"role": "assistant", "speaker": "Dan", "content": "Noted: kestrel rotation on Tuesdays, staging first."}]},
]
with open(sys.argv[1], "w") as f:
    for s in S:
        f.write(json.dumps(s, ensure_ascii=False) + "\n")
EOF
"$CAIRN" --db "$A" add -q "$TMP/gen.jsonl" && "$CAIRN" --db "$A" add -q "$TMP/s.jsonl" || bad "add"
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "alice pushes"
pg_bob_sessions "$B" || bad "bob's sessions"

# 2. recall: byte for byte the same text on SQLite and on the server
n=0
while IFS= read -r q; do
    n=$((n + 1))
    set -- recall
    case "$q" in --project*) set -- recall --project "${q#--project }"; q="kestrel rotation";; esac
    "$CAIRN" --db "$A" "$@" "$q" > "$TMP/r$n.sqlite" 2>&1
    "$CAIRN" --db "$ALICE" "$@" "$q" > "$TMP/r$n.pg" 2>&1
    check "recall $n ($q) is the same on the server" cmp -s "$TMP/r$n.sqlite" "$TMP/r$n.pg"
    contains "recall $n answered from the history" "$(head -c 1 "$TMP/r$n.pg")" "["
done <<'EOF'
how do we roll out frobnicate to staging
FrobConfig.max_retries
frobnicate_v2 deploy.sh
北京的数据库迁移
what did we discuss in March 2024
kestrel rotation day
--project solo
the error in the parser function
EOF
# the dates messages speak of (local schema 15, server version 3):
# "yesterday" in a message of 5 Dec 2024 is 4 Dec, and a question naming
# that day meets it on both stores; without the server's dates it would not
q="what did we do on December 4, 2024"
"$CAIRN" --db "$A" recall "$q" > "$TMP/ev.sqlite" 2>&1
"$CAIRN" --db "$ALICE" recall "$q" > "$TMP/ev.pg" 2>&1
check "a question naming a date is the same on the server" cmp -s "$TMP/ev.sqlite" "$TMP/ev.pg"
contains "and meets the message that speaks of that day" "$(cat "$TMP/ev.pg")" "lantern fair"
eq "the server holds the pushed store's dates" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.events")" "$(sqlite3 "$A" "SELECT count(*) FROM message_events")"
contains "(the store has some)" "$(sqlite3 "$A" "SELECT count(*) > 0 FROM message_events")" 1
pg_sql alice alice-pw "DELETE FROM cairn.events" >/dev/null
lacks "(without the server's dates the question misses it)" \
    "$("$CAIRN" --db "$ALICE" recall "$q" 2>&1)" "lantern fair"
contains "an English answer" "$(cat "$TMP/r1.pg")" "deploy.sh --env=staging"
contains "a Chinese answer" "$(cat "$TMP/r4.pg")" "北京的机房"
# the same as CAIRN_DB, and with --json (ids, scores, times)
out=$(CAIRN_DB="$ALICE" "$CAIRN" recall --json "kestrel rotation" 2>&1)
eq "CAIRN_DB=postgres://, --json" "$out" "$("$CAIRN" --db "$A" recall --json "kestrel rotation" 2>&1)"

# 3. sessions, show, export, stats
for cmd in "sessions" "sessions --project team" "show deploy-1" "show zh-1" "export deploy-1" \
           "export --format md solo-1"; do
    # shellcheck disable=SC2086
    l=$("$CAIRN" --db "$A" $cmd 2>&1)
    # shellcheck disable=SC2086
    s=$("$CAIRN" --db "$ALICE" $cmd 2>&1)
    eq "$cmd is the same on the server" "$s" "$l"
done
st=$("$CAIRN" --db "$ALICE" stats 2>&1)
check "stats on the server: $st" test $? -eq 0
contains "stats counts the sessions" "$st" "$("$CAIRN" --db "$A" stats 2>&1 | grep -i '^sessions' | head -1)"
lacks "no password in stats" "$st" "alice-pw"
contains "stats names the server as the store" "$st" "alice@"
contains "and the server's schema version, not the local one" "$st" "(schema 7)"

# 4. who sees what: bob shares his project with alice; his private session
# stays his
pg_sql bob bob-pw "INSERT INTO cairn.shares(project, grantee) VALUES ('shared', 'alice')" >/dev/null
out=$("$CAIRN" --db "$ALICE" sessions 2>&1)
contains "alice lists bob's shared session" "$out" "bob-shared"
lacks "and not his private one" "$out" "bob-secret"
out=$("$CAIRN" --db "$ALICE" recall "zanzibar" 2>&1)
contains "alice recalls bob's shared session" "$out" "zanzibar shared notes"
lacks "never his private one" "$out" "private plan of bob"
out=$("$CAIRN" --db "$ALICE" show bob-secret 2>&1)
check_fails "show of bob's private session fails for alice" test $? -eq 0
lacks "and shows nothing of it" "$out" "private plan"
out=$("$CAIRN" --db "$BOB" recall "zanzibar kestrel" 2>&1)
contains "bob recalls his own private session" "$out" "private plan of bob"
lacks "bob never sees alice's sessions" "$("$CAIRN" --db "$BOB" sessions 2>&1)" "deploy-1"
python3 - "$CAIRN" "$ALICE" "$TMP/mcp" <<'EOF'
import sys
from mcp_client import Mcp
cairn, url, out_prefix = sys.argv[1:4]
calls = [("recall", {"query": "zanzibar kestrel"}),
         ("get_conversation", {"session_id": "bob-secret"}),
         ("get_conversation", {"session_id": "deploy-1"}),
         ("list_sessions", {}),
         ("memory", {"action": "remember", "text": "a fact", "type": "fact"}),
         ("forget_session", {"session_id": "deploy-1"})]
with Mcp(cairn, env={"CAIRN_DB": url}, name="t0603") as m:
    for i, (name, args) in enumerate(calls):
        err, text = m.call(name, args)
        with open("%s-%d.txt" % (out_prefix, i + 1), "w", encoding="utf-8") as f:
            f.write(("ERROR " if err else "") + text)
EOF
contains "mcp recall reads the server" "$(cat "$TMP/mcp-1.txt")" "zanzibar shared notes"
lacks "mcp recall: no private session of bob" "$(cat "$TMP/mcp-1.txt")" "private plan"
lacks "mcp get_conversation: bob's private session is not there" "$(cat "$TMP/mcp-2.txt")" "private plan"
contains "mcp get_conversation reads alice's session" "$(cat "$TMP/mcp-3.txt")" "FrobConfig.max_retries"
contains "mcp list_sessions: alice's 45 and bob's shared one" "$(cat "$TMP/mcp-4.txt")" "46 in memory in all"
lacks "mcp list_sessions: no private session of bob" "$(cat "$TMP/mcp-4.txt")" "bob-secret"
contains "mcp memory remember is refused on a server store" "$(cat "$TMP/mcp-5.txt")" "not supported on a server store"
contains "mcp forget_session is refused on a server store" "$(cat "$TMP/mcp-6.txt")" "not supported on a server store"

# 5. writes are refused, clearly, and change nothing
before=$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages")
for cmd in "add -q $TMP/s.jsonl" "forget deploy-1" "remember a-fact" "redact"; do
    # shellcheck disable=SC2086
    out=$("$CAIRN" --db "$ALICE" $cmd 2>&1)
    rc=$?
    check "$cmd on the server store fails: $out" test "$rc" -ne 0
    contains "$cmd: says why" "$out" "not supported on a server store"
done
eq "nothing changed on the server" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages")" "$before"
check "the session is still there" sh -c "'$CAIRN' --db '$ALICE' show deploy-1 >/dev/null"

# 6. the server's versions (store/pg.c). 2: messages by seq, policies that
# test the owner first, `@@` leakproof so that GIN serves searches under
# row-level security. 3: sessions keep their counts (triggers), the dates
# messages speak of, the metadata index. A version 2 and a version 1 server
# (as they left them) read the same, and the next sync of a role that may
# migrates them.
admin() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
eq "version 6: messages by seq, with their key (version 2's messages_seq)" \
    "$(admin "SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_seq_key'")" 1
eq "version 2: @@ is leakproof" "$(admin "SELECT proleakproof FROM pg_proc WHERE proname = 'ts_match_vq'")" t
plan=$(pg_sql alice alice-pw "EXPLAIN SELECT seq FROM cairn.messages WHERE tsv @@ 'kestrel'::tsquery")
contains "version 2: a search under row-level security uses the GIN index" "$plan" "messages_tsv"
plan=$(pg_sql alice alice-pw "SET enable_seqscan = off; EXPLAIN SELECT seq, position, ntok FROM cairn.messages
                              WHERE owner = 'alice' AND sid = 'deploy-1'")
contains "version 3: a session's messages' metadata from the index alone" "$plan" "Index Only Scan using messages_meta"
counts="SELECT string_agg(sid || ':' || n_msgs || ',' || n_tok || ',' || n_user || ',' || n_bytes || ','
        || first_seq, ' ' ORDER BY owner, sid) FROM cairn.sessions"
aggs="SELECT string_agg(s.sid || ':' || c.n || ',' || c.t || ',' || c.u || ',' || c.b || ',' || c.f, ' '
      ORDER BY s.owner, s.sid) FROM cairn.sessions s CROSS JOIN LATERAL (SELECT count(*) n,
      coalesce(sum(ntok), 0) t, count(*) FILTER (WHERE role = 'user') u,
      coalesce(sum(octet_length(content)), 0) b, min(seq) f FROM cairn.messages m
      WHERE m.owner = s.owner AND m.sid = s.sid) c"
eq "version 3: the sessions' counters are their messages'" "$(admin "$counts")" "$(admin "$aggs")"
"$CAIRN" --db "$ALICE" recall "kestrel rotation day" > "$TMP/v0.pg" 2>&1
"$CAIRN" --db "$ALICE" sessions > "$TMP/s0.pg" 2>&1
admin "SET client_min_messages = warning; DROP TABLE cairn.postings; DROP FUNCTION cairn.postings_added(), cairn.postings_removed() CASCADE;
       CREATE UNIQUE INDEX messages_seq ON cairn.messages(seq); DROP INDEX cairn.messages_seq_key;
       DROP FUNCTION cairn.mpack_changed() CASCADE; DROP FUNCTION cairn.mpack(name, text); ALTER TABLE cairn.sessions DROP COLUMN mpack;
       DROP TABLE cairn.memories; DROP TABLE cairn.memory_tombstones;
       DROP TRIGGER count_insert ON cairn.messages; DROP TRIGGER count_update_1 ON cairn.messages;
       DROP TRIGGER count_update_2 ON cairn.messages; DROP TRIGGER count_delete ON cairn.messages;
       DROP FUNCTION cairn.count_added(); DROP FUNCTION cairn.count_removed();
       DROP FUNCTION IF EXISTS cairn.vector_index(integer);
       ALTER TABLE cairn.sessions DROP COLUMN n_msgs, DROP COLUMN n_tok, DROP COLUMN n_user,
         DROP COLUMN n_bytes, DROP COLUMN first_seq;
       DROP TABLE cairn.events; DROP INDEX cairn.messages_meta; DROP INDEX cairn.messages_speaker;
       DROP POLICY shared ON cairn.sessions; CREATE POLICY shared ON cairn.sessions FOR SELECT
         USING (owner <> current_user AND NOT private AND cairn.shared_with_me(owner, project));
       UPDATE cairn.meta SET value = '2' WHERE key = 'schema_version'" >/dev/null
"$CAIRN" --db "$ALICE" recall "kestrel rotation day" > "$TMP/v2.pg" 2>&1
check "a version 2 server reads the same" cmp -s "$TMP/v0.pg" "$TMP/v2.pg"
"$CAIRN" --db "$ALICE" sessions > "$TMP/s2.pg" 2>&1
check "and lists the same sessions (counted from the messages)" cmp -s "$TMP/s0.pg" "$TMP/s2.pg"
admin "DROP INDEX cairn.messages_seq; ALTER FUNCTION pg_catalog.ts_match_vq(tsvector, tsquery) NOT LEAKPROOF;
       DROP POLICY shared ON cairn.messages; CREATE POLICY shared ON cairn.messages FOR SELECT USING (EXISTS
       (SELECT 1 FROM cairn.sessions s WHERE s.owner = messages.owner AND s.sid = messages.sid));
       UPDATE cairn.meta SET value = '1' WHERE key = 'schema_version'" >/dev/null
"$CAIRN" --db "$ALICE" recall "kestrel rotation day" > "$TMP/v1.pg" 2>&1
check "a version 1 server reads the same" cmp -s "$TMP/v0.pg" "$TMP/v1.pg"
"$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$(pg_url cairn_admin "$PG_ADMIN_PW")" ||
    bad "the admin's sync migrates"
eq "migrated to version 7" "$(admin "SELECT value FROM cairn.meta WHERE key = 'schema_version'")" 7
eq "migrated: messages by seq" "$(admin "SELECT count(*) FROM pg_indexes WHERE indexname = 'messages_seq_key'")" 1
eq "migrated: @@ is leakproof" "$(admin "SELECT proleakproof FROM pg_proc WHERE proname = 'ts_match_vq'")" t
contains "migrated: the messages' shared policy tests the owner first" \
    "$(admin "SELECT qual FROM pg_policies WHERE tablename = 'messages' AND policyname = 'shared'")" "<> CURRENT_USER"
eq "migrated: the counters filled from the messages" "$(admin "$counts")" "$(admin "$aggs")"
eq "migrated: the counting triggers and the dates' table" \
    "$(admin "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'count_%'") $(admin "SELECT to_regclass('cairn.events') IS NOT NULL")" "4 t"
"$CAIRN" --db "$ALICE" recall "kestrel rotation day" > "$TMP/v3.pg" 2>&1
check "and reads the same after" cmp -s "$TMP/v0.pg" "$TMP/v3.pg"
"$CAIRN" --db "$ALICE" sessions > "$TMP/s3.pg" 2>&1
check "and lists the same sessions" cmp -s "$TMP/s0.pg" "$TMP/s3.pg"
contains "(an answer)" "$(cat "$TMP/v0.pg")" "kestrel"

# 7. a wrong password, a down server: clear errors, no password
out=$("$CAIRN" --db "$(pg_url alice wrong-pw-123)" sessions 2>&1)
check_fails "a wrong password fails" test $? -eq 0
contains "and says the server" "$out" "alice@"
lacks "without the password" "$out" "wrong-pw-123"
pg_stop
out=$("$CAIRN" --db "$ALICE" recall "kestrel" 2>&1)
check_fails "a down server fails" test $? -eq 0
contains "and says it cannot connect" "$out" "cannot connect"
lacks "without the password" "$out" "alice-pw"

t_done
