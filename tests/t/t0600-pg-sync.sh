#!/bin/sh
# t0600-pg-sync: `cairn sync` against a real PostgreSQL 15 (tests/tools/pg.sh:
# initdb in $TMP, a Unix socket, stopped at the end). Push then pull into a
# new store gives the same sessions and messages byte for byte; a re-run moves
# nothing; what reaches the server is masked; two syncs of the same sessions
# at once leave no duplicate; forget propagates both ways and leaves no row;
# vectors travel with their model tag; a wrong password and an unreachable
# server are clear errors that never echo the password; and `cairn doctor
# --server` reports the server. Row-level security and faults: t0601, t0602.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
pg_start || t_skip_all "$PG_WHY"

pg_sql cairn_admin "$PG_ADMIN_PW" \
    "CREATE ROLE alice LOGIN PASSWORD 'alice-pw'; CREATE ROLE bob LOGIN PASSWORD 'bob-pw';" >/dev/null
ADMIN=$(pg_url cairn_admin "$PG_ADMIN_PW")
ALICE=$(pg_url alice alice-pw)
A="$TMP/a.db" B="$TMP/b.db"

# 0. doctor before any schema; the admin's first sync creates it, a plain
# role cannot
out=$("$CAIRN" doctor --server "$ALICE" 2>&1)
contains "doctor: the server answers" "$out" "server:   alice@"
contains "doctor: no schema yet" "$out" "no cairn schema there yet"
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
check_fails "a role without CREATE cannot make the schema" test $? -eq 0
contains "and says who may" "$out" "a role with CREATE on the database"
# the schema's folder made beforehand: the migration's CREATE SCHEMA IF NOT
# EXISTS then draws a NOTICE, which libpq would print to stderr
pg_sql cairn_admin "$PG_ADMIN_PW" "CREATE SCHEMA cairn" >/dev/null
out=$("$CAIRN" --db "$TMP/admin.db" sync --pull --server "$ADMIN" 2>"$TMP/admin.err")
check "the admin's sync creates the schema: $out" test $? -eq 0
eq "and prints nothing on stderr (no server notice)" "$(cat "$TMP/admin.err")" ""
eq "server schema version 7" "$(pg_sql alice alice-pw "SELECT value FROM cairn.meta WHERE key = 'schema_version'")" 7
out=$("$CAIRN" doctor --server "$ALICE" 2>&1)
contains "doctor: the schema" "$out" "cairn schema version 7"
contains "doctor: the clock" "$out" "clock skew"
if [ -f /usr/share/postgresql/15/extension/vector.control ]; then
    contains "doctor: pgvector" "$out" "pgvector 0.8"
    contains "doctor: vectors as vector" "$out" "vectors kept as \`vector\` too"
else
    t_skip "pgvector not installed (sh scripts/deps.sh with ../shared)"
fi

# 1. a store with what a round trip could lose: ids and none, repeated
# identical turns, speakers, times, meta, CJK, code, a secret, <private>,
# quotes and backslashes (the tsvector literal), a long message
python3 - "$TMP/s.jsonl" <<'EOF'
import json, sys
long = " ".join("word%d" % i for i in range(30000))
S = [
 {"id": "s1", "project": "team", "title": "first \"quoted\" \\ title", "source": "claude-code",
  "meta": {"branch": "main", "cwd": "/w"},
  "messages": [
   {"id": "m1", "role": "user", "content": "how do I configure the frobnicator? key AKIAIOSFODNN7EXAMPLE", "at": "2024-01-02T03:04:05Z"},
   {"role": "assistant", "content": "Set frob_level=3 in config.toml; it's a 'quote' and a \\ backslash"},
   {"role": "user", "content": "ok"}, {"role": "user", "content": "ok"},
   {"id": "m5", "role": "assistant", "content": "我们讨论了数据库迁移。 <private>my diary</private> done"}]},
 {"id": "s2", "project": "solo", "messages": [
   {"role": "user", "speaker": "Carol", "content": "plain chat between people", "at": "2023-05-08T13:56:00Z"},
   {"role": "assistant", "speaker": "Dan", "content": long}]},
 {"id": "s3", "messages": [{"role": "user", "content": "no project, no time"}]},
]
with open(sys.argv[1], "w") as f:
    for s in S:
        f.write(json.dumps(s, ensure_ascii=False) + "\n")
EOF
"$CAIRN" --db "$A" add -q "$TMP/s.jsonl"
# a vector of a model this test names, as the store keeps them (int8 + scale)
python3 -c '
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
m = c.execute("SELECT id, session FROM messages WHERE ext_id = ?", ("m1",)).fetchone()
c.execute("INSERT INTO vectors(model, msg, piece, session, dim, scale, v) VALUES (?,?,?,?,?,?,?)",
          ("test-model@1234", m[0], 0, m[1], 4, 0.5, bytes([1, 2, 253, 127])))
c.commit()' "$A"

out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
check "first sync: $out" test $? -eq 0
contains "it pushes every message" "$out" "pushed 8 messages (0 already there), 3 new sessions, 1 vector, 0 forgets"
eq "the server holds them" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages")" 8
eq "each with the role as owner" "$(pg_sql alice alice-pw "SELECT DISTINCT owner FROM cairn.messages")" alice

# masking happened before anything left: the secret and the private span
# are on no server row
eq "no secret on the server" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE content LIKE '%AKIAIOSFODNN7EXAMPLE%'")" 0
eq "the mask is there instead" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE content LIKE '%[REDACTED:%'")" 1
eq "no <private> text on the server" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE content LIKE '%diary%' OR content LIKE '%<private>%'")" 0
# the tsvector holds cairn's own tokens: a stem, a CJK bigram, an identifier
eq "tsvector: stems" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE tsv @@ 'configur'::tsquery")" 1
eq "tsvector: CJK bigrams" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE tsv @@ '迁移'::tsquery")" 1
eq "tsvector: identifiers whole" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE tsv @@ '''frob_level'''::tsquery")" 1
eq "content hashes are sha256 of the text" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE chash = encode(sha256(convert_to(content, 'UTF8')), 'hex')")" 8
eq "the vector went with its model tag" \
    "$(pg_sql alice alice-pw "SELECT model || ' ' || dim || ' ' || scale || ' ' || encode(v, 'hex') FROM cairn.vectors")" \
    "test-model@1234 4 0.5 0102fd7f"
if [ -f /usr/share/postgresql/15/extension/vector.control ]; then
    eq "and as pgvector's type" "$(pg_sql alice alice-pw "SELECT emb::text FROM cairn.vectors")" "[0.5,1,-1.5,63.5]"
fi

# 2. idempotent: a re-run moves nothing
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
contains "a re-run pushes nothing" "$out" "pushed 0 messages (0 already there), 0 new sessions"
contains "and pulls nothing new" "$out" "pulled 0 messages in 0 sessions"
eq "still 8 rows" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages")" 8

# 3. round trip: a new store pulls what the first pushed, byte for byte
out=$("$CAIRN" --db "$B" sync --pull --server "$ALICE" 2>&1)
contains "the pull adds them all" "$out" "pulled 8 messages in 3 sessions, 1 vector, 0 forgets"
"$CAIRN" --db "$A" export --format jsonl > "$TMP/a.jsonl"
"$CAIRN" --db "$B" export --format jsonl > "$TMP/b.jsonl"
check "exports are byte for byte equal" cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl"
q='SELECT s.ext_id, m.position, m.ext_id, m.role, m.speaker, hex(m.content), m.created_at, m.hash, m.ntok FROM messages m JOIN sessions s ON s.id = m.session ORDER BY s.ext_id, m.position'
# dump DB SQL: the rows' sha256 (a long message is not printed on a failure)
dump() { python3 -c 'import sqlite3,sys; [print(r) for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2])]' "$1" "$2" | sha256sum; }
eq "message rows equal (ids, positions, hashes, text)" "$(dump "$A" "$q")" "$(dump "$B" "$q")"
eq "8 of them, the repeated \"ok\" twice" \
    "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM messages").fetchone()[0])' "$B")" 8
qv='SELECT model, piece, dim, scale, hex(v) FROM vectors ORDER BY model, piece'
eq "the vector came back with its tag" "$(dump "$B" "$qv")" "$(dump "$A" "$qv")"
out=$("$CAIRN" --db "$B" sync --server "$ALICE" 2>&1)
contains "the second machine's re-run moves nothing new" "$out" "pushed 0 messages"
eq "no duplicate from the second machine" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages")" 8
out=$("$CAIRN" --db "$B" recall "frobnicator configure" --budget 500 2>&1)
contains "the pulled store recalls" "$out" "frob_level"

# 4. two machines pushing the same sessions at once: one row each
python3 - "$TMP/many.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(40):
        f.write(json.dumps({"id": "c%d" % s, "project": "conc", "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": "turn %d of session %d" % (i, s)}
            for i in range(10)]}) + "\n")
EOF
# the third adds them in the opposite order: its batches lock the rows the
# others lock, in reverse (a deadlock PostgreSQL breaks; the batch retries)
for n in 1 2; do "$CAIRN" --db "$TMP/c$n.db" add -q "$TMP/many.jsonl"; done
tac "$TMP/many.jsonl" | "$CAIRN" --db "$TMP/c3.db" add -q -
for n in 1 2 3; do
    ("$CAIRN" --db "$TMP/c$n.db" sync --push --batch 7 --server "$ALICE" >"$TMP/c$n.out" 2>&1; echo $? >"$TMP/c$n.rc") &
done
wait
for n in 1 2 3; do eq "concurrent sync $n succeeded: $(cat "$TMP/c$n.out")" "$(cat "$TMP/c$n.rc")" 0; done
eq "400 messages once each" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE project = 'conc'")" 400
eq "40 sessions once each" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.sessions WHERE project = 'conc'")" 40
# total SED: the sum over the three outputs of the number SED prints
total() {
    t=0
    for n in 1 2 3; do k=$(sed -n "$1" "$TMP/c$n.out"); t=$((t + ${k:-0})); done
    echo "$t"
}
eq "the three pushes added 400 between them" "$(total 's/^pushed \([0-9]*\) message.*/\1/p')" 400
eq "and made 40 new sessions between them" "$(total 's/^pushed .* \([0-9]*\) new session.*/\1/p')" 40

# a batch goes as multi-row statements (250 messages each): one batch of
# 400 known messages and one new session of 300, over a statement's edge,
# counts each message once, as pushed or as already there
python3 - "$TMP/big.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    f.write(json.dumps({"id": "big", "project": "conc", "messages": [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "ok" if i % 50 == 0 else "big turn %d" % i}
        for i in range(300)]}) + "\n")
EOF
"$CAIRN" --db "$TMP/d.db" add -q "$TMP/many.jsonl"
"$CAIRN" --db "$TMP/d.db" add -q "$TMP/big.jsonl"
out=$("$CAIRN" --db "$TMP/d.db" sync --push --batch 1000 --server "$ALICE" 2>&1)
contains "one batch over two statements: $out" "$out" "pushed 300 messages (400 already there), 1 new session,"
eq "the 300 are there once each, repeats of \"ok\" apart" \
    "$(pg_sql alice alice-pw "SELECT count(DISTINCT mkey) || ' ' || max(position) FROM cairn.messages WHERE sid = 'big'")" "300 299"

# 5. forget propagates: A forgets s1, the server drops every row of it and
# keeps a tombstone (the id's hash), B forgets it at its next sync and never
# pulls or pushes it back
out=$("$CAIRN" --db "$A" forget s1)
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
contains "the forget is pushed" "$out" "1 forget"
eq "no message of s1 left" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE sid = 's1'")" 0
eq "no session row" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.sessions WHERE sid = 's1'")" 0
eq "no vector" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.vectors")" 0
eq "no text of it anywhere" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE content LIKE '%frobnicator%'")" 0
eq "a tombstone names its hash" "$(pg_sql alice alice-pw "SELECT sid_hash FROM cairn.tombstones")" \
    "$(printf s1 | sha256sum | cut -d' ' -f1)"
out=$("$CAIRN" --db "$B" sync --server "$ALICE" 2>&1)
contains "B pulls the forget" "$out" "1 forget"
check_fails "B no longer has s1" "$CAIRN" --db "$B" show s1
eq "B's push did not bring it back" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE sid = 's1'")" 0
for f in "$B" "$B-wal"; do
    [ -f "$f" ] && check_fails "no text of s1 in ${f##*/}" grep -q -a -F frobnicator "$f"
done
out=$("$CAIRN" --db "$B" sync --server "$ALICE" 2>&1)
contains "a re-run forgets nothing more" "$out" "0 forgets"
# a machine that had s1 and never heard of the forget cannot push it back
"$CAIRN" --db "$TMP/late.db" add -q "$TMP/s.jsonl"
out=$("$CAIRN" --db "$TMP/late.db" sync --server "$ALICE" 2>&1)
eq "a late machine cannot resurrect s1" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages WHERE sid = 's1'")" 0
check_fails "and forgets its own copy" "$CAIRN" --db "$TMP/late.db" show s1

# 6. errors: a wrong password, no server; neither echoes the password
out=$("$CAIRN" --db "$A" sync --server "$(pg_url alice Wr0ngPassw0rd)" 2>&1)
check_fails "a wrong password fails" test $? -eq 0
contains "and says so" "$out" "password authentication failed for user \"alice\""
lacks "without the password" "$out" "Wr0ngPassw0rd"
out=$("$CAIRN" --db "$A" sync --server "postgres://alice:S3cretPw@/postgres?host=$TMP/nowhere" 2>&1)
check_fails "no server fails" test $? -eq 0
contains "and says it cannot connect" "$out" "cannot connect"
lacks "without the password" "$out" "S3cretPw"
# the server as the store itself (the read commands: t0603): no file named
# after the URL; sync needs a local store to sync
out=$(cd "$TMP" && CAIRN_DB="$ALICE" "$CAIRN" sessions 2>&1)
check "CAIRN_DB=postgres://... reads the server: $out" test $? -eq 0
check_fails "no file named after the URL" test -e "$TMP/postgres:"
out=$(CAIRN_DB="$ALICE" "$CAIRN" sync --server "$ALICE" 2>&1)
check_fails "sync of a server store fails" test $? -eq 0
contains "and says why" "$out" "needs a local store"
out=$(CAIRN_SERVER="$ALICE" "$CAIRN" --db "$A" sync --pull 2>&1)
check "CAIRN_SERVER names the server: $out" test $? -eq 0
# 7. rewritten after it was pushed: a reply extended under its id and a
# message `cairn redact` masks (no id: its key is its content hash) carry
# their new text to the server at the next sync, and nothing of the old
cat > "$TMP/rw1.jsonl" <<'EOF'
{"id": "rw", "project": "rw", "messages": [{"role": "user", "id": "rw-1", "content": "a question"}, {"role": "assistant", "id": "rw-2", "content": "the answer begins"}, {"role": "user", "content": "my key is AKIAIOSFODNN7EXAMPLE, thanks"}]}
EOF
sed 's/the answer begins/the answer begins and goes on/' "$TMP/rw1.jsonl" > "$TMP/rw2.jsonl"
# written without masking (an old store), so that redact has work
CAIRN_REDACT=0 "$CAIRN" --db "$TMP/rw.db" add -q "$TMP/rw1.jsonl"
out=$("$CAIRN" --db "$TMP/rw.db" sync --push --server "$ALICE" 2>&1)
contains "the session is pushed" "$out" "pushed 3 messages (0 already there), 1 new session,"
rwsql() { pg_sql alice alice-pw "SELECT $1 FROM cairn.messages WHERE sid = 'rw'"; }
eq "the unmasked secret went with it (what the store held)" \
    "$(rwsql "count(*) FILTER (WHERE content LIKE '%AKIAIOSFODNN7EXAMPLE%')")" 1
CAIRN_REDACT=0 "$CAIRN" --db "$TMP/rw.db" add -q "$TMP/rw2.jsonl"
out=$("$CAIRN" --db "$TMP/rw.db" redact)
contains "redact masks the secret" "$out" "changed 1 of 3 messages"
out=$("$CAIRN" --db "$TMP/rw.db" sync --push --server "$ALICE" 2>&1)
contains "the next push carries both rewrites: $out" "$out" "pushed 2 messages (0 already there), 0 new sessions,"
eq "the extended reply's new text is on the server" \
    "$(rwsql "string_agg(content || ' ' || (tsv @@ 'goe'::tsquery)::text || ' ' || (chash = encode(sha256(convert_to(content, 'UTF8')), 'hex'))::text, '') FILTER (WHERE mkey = 'rw-2')")" \
    "the answer begins and goes on true true"
eq "no byte of the secret on the server" \
    "$(rwsql "count(*) FILTER (WHERE content LIKE '%AKIAIOSFODNN7EXAMPLE%')")" 0
eq "the masked text is there instead, in its place, once" \
    "$(rwsql "count(*) FILTER (WHERE content LIKE '%[REDACTED:%' AND position = 2) || ' ' || count(*)")" "1 3"
out=$("$CAIRN" --db "$TMP/rw.db" sync --push --server "$ALICE" 2>&1)
contains "a re-run pushes nothing" "$out" "pushed 0 messages (0 already there)"
out=$("$CAIRN" --db "$TMP/rw2.db" sync --pull --project rw --server "$ALICE" 2>&1)
"$CAIRN" --db "$TMP/rw.db" export --format jsonl > "$TMP/rw-a.jsonl"
"$CAIRN" --db "$TMP/rw2.db" export --format jsonl > "$TMP/rw-b.jsonl"
check "a new store pulls the rewritten session as the writer holds it" cmp -s "$TMP/rw-a.jsonl" "$TMP/rw-b.jsonl"

# 8. the sessions' counters (server version 3, kept by triggers) after all
# of the above: new rows, rows pushed twice at once, rewrites under an id
# and under a new key, forgets; the superuser sees every owner's rows
eq "every session's counters are its messages'" "$(pg_sql cairn_admin "$PG_ADMIN_PW" "SELECT
    count(*) || ' ' || count(*) FILTER (WHERE (n_msgs, n_tok, n_user, n_bytes, first_seq) IS DISTINCT
    FROM (c.n, c.t, c.u, c.b, c.f)) FROM cairn.sessions s CROSS JOIN LATERAL (SELECT count(*) n,
    coalesce(sum(ntok), 0) t, count(*) FILTER (WHERE role = 'user') u,
    coalesce(sum(octet_length(content)), 0) b, min(seq) f FROM cairn.messages m
    WHERE m.owner = s.owner AND m.sid = s.sid) c")" "$(pg_sql cairn_admin \
    "$PG_ADMIN_PW" "SELECT count(*) || ' 0' FROM cairn.sessions")"
contains "(the rewritten session is counted: 3 messages)" \
    "$(pg_sql alice alice-pw "SELECT n_msgs || ' ' || n_user FROM cairn.sessions WHERE sid = 'rw'")" "3 2"
t_done
