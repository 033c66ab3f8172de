#!/bin/sh
# t0608-pg-postings: the server's postings (version 6, docs/POSTGRES.md):
# one row a (message, lexeme) with its positions, kept from each message's
# tsvector by triggers, read by recall instead of the candidates' whole
# tsvectors. Checked against a real PostgreSQL 15: after a push, a rewrite
# and a forget the postings are exactly the tsvectors' lexemes; recall reads
# them from the index alone and gives the same text as SQLite and as the
# tsvector path (the same server read as version 5); row-level security
# keeps another owner's private postings out of reach (read and write); a
# version 5 server is migrated and its postings filled from the rows there.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
pg_start || t_skip_all "$PG_WHY"
export CAIRN_EMBED_MODEL=none
admin() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
pg_login_roles alice bob || bad "roles and schema"
A="$TMP/a.db" ALICE=$(pg_url alice alice-pw)

# the postings the messages' tsvectors imply, against those there: 0 0
# when they agree (each way), with the number of rows
same="SELECT (SELECT count(*) FROM (SELECT lexeme, seq, owner, pos FROM cairn.postings EXCEPT
      SELECT u.lexeme, m.seq, m.owner::text::regrole::oid, coalesce(u.positions, '{}')::text
      FROM cairn.messages m, unnest(m.tsv) u) d) || ' ' || (SELECT count(*) FROM (SELECT u.lexeme,
      m.seq, m.owner::text::regrole::oid, coalesce(u.positions, '{}')::text FROM cairn.messages m,
      unnest(m.tsv) u EXCEPT SELECT lexeme, seq, owner, pos FROM cairn.postings) d)"
rows="SELECT count(*) FROM cairn.postings"

python3 "$ROOT/bench/gen_data.py" ingest "$TMP/gen.jsonl" --sessions 20 --messages 400 --seed 5 \
    >/dev/null 2>&1 || bad "gen_data"
printf '%s\n' \
    '{"id": "ids-1", "project": "team", "messages": [{"id": "i1", "role": "user", "content": "FrobConfig.max_retries and request_address in /inventory/templates/inventory/x.html"}, {"role": "assistant", "content": "set max_retries to 5 in config.toml; request_address stays"}]}' \
    '{"id": "zh-1", "project": "team", "messages": [{"role": "user", "content": "北京的服务器要先升级,然后迁移数据库。"}]}' \
    '{"id": "gone-1", "project": "team", "messages": [{"role": "user", "content": "quetzal migration notes for the parser"}]}' \
    > "$TMP/s.jsonl"
"$CAIRN" --db "$A" add -q "$TMP/gen.jsonl" && "$CAIRN" --db "$A" add -q "$TMP/s.jsonl" || bad "add"
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "alice pushes"
pg_bob_sessions "$TMP/b.db" || bad "bob's sessions"
pg_sql bob bob-pw "INSERT INTO cairn.shares(project, grantee) VALUES ('shared', 'alice')" >/dev/null

# 1. filled on push, exactly the tsvectors' lexemes
eq "version 7" "$(admin "SELECT value FROM cairn.meta WHERE key = 'schema_version'")" 7
eq "after the pushes the postings are the tsvectors'" "$(admin "$same")" "0 0"
n0=$(admin "$rows")
check "(there are postings: $n0)" test "$n0" -gt 1000

# 2. recall: the same text as SQLite, from the postings' index alone
cat > "$TMP/q" <<'EOF'
how did we fix the connection timeout in the client
request_address
config.toml max_retries
FrobConfig.max_retries
北京的服务器
inventory templates
quetzal parser
error in the parser when reading a large file
EOF
n=0
while IFS= read -r q; do
    n=$((n + 1))
    "$CAIRN" --db "$A" recall "$q" > "$TMP/r$n.sqlite" 2>&1
    "$CAIRN" --db "$ALICE" recall "$q" > "$TMP/r$n.pg" 2>&1
    check "recall \"$q\": the server's text is SQLite's" cmp -s "$TMP/r$n.sqlite" "$TMP/r$n.pg"
done < "$TMP/q"
contains "(an answer)" "$(cat "$TMP/r5.pg")" "北京"
admin "VACUUM ANALYZE cairn.postings" >/dev/null
plan=$(pg_sql alice alice-pw "SET enable_seqscan = off; SET enable_bitmapscan = off; EXPLAIN SELECT seq, pos FROM cairn.postings
                              WHERE lexeme = ANY ('{quetzal,parser}'::text[])")
contains "a search reads the postings' index alone, under row-level security" "$plan" \
    "Index Only Scan using postings_pkey"
# the same server read as version 5 (the tsvectors): the same text
admin "UPDATE cairn.meta SET value = '5' WHERE key = 'schema_version'" >/dev/null
n=0
while IFS= read -r q; do
    n=$((n + 1))
    "$CAIRN" --db "$ALICE" recall "$q" > "$TMP/r$n.v5" 2>&1
    check "recall \"$q\": postings and tsvectors give the same text" cmp -s "$TMP/r$n.v5" "$TMP/r$n.pg"
done < "$TMP/q"
admin "UPDATE cairn.meta SET value = '7' WHERE key = 'schema_version'" >/dev/null

# 3. who sees what: bob's private session's postings never reach alice;
# his shared one's do; no write in another's name
secret=$(admin "SELECT string_agg(seq::text, ',') FROM cairn.messages WHERE sid = 'bob-secret'")
shared=$(admin "SELECT string_agg(seq::text, ',') FROM cairn.messages WHERE sid = 'bob-shared'")
eq "the private session has postings" "$(admin "SELECT count(*) > 0 FROM cairn.postings WHERE seq IN ($secret)")" t
eq "alice reads none of them" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.postings WHERE seq IN ($secret)")" 0
eq "alice reads the shared one's" "$(pg_sql alice alice-pw "SELECT count(*) > 0 FROM cairn.postings WHERE seq IN ($shared)")" t
eq "bob reads none of alice's (nothing shared with him)" \
    "$(pg_sql bob bob-pw "SELECT count(*) FROM cairn.postings WHERE owner = 'alice'::regrole")" 0
out=$(pg_sql bob bob-pw "INSERT INTO cairn.postings VALUES ('zzz', 1, 'alice'::regrole, '{1}')" 2>&1)
contains "bob cannot insert in alice's name" "$out" "row-level security"
hers="SELECT count(*) || md5(string_agg(lexeme || seq || pos, ',' ORDER BY lexeme, seq)) FROM cairn.postings
      WHERE owner = 'alice'::regrole"
h0=$(admin "$hers")
upd="WITH u AS (UPDATE cairn.postings SET pos = pos WHERE owner = 'alice'::regrole RETURNING 1)
     SELECT count(*) FROM u"
eq "bob's update of alice's postings reaches none" "$(pg_sql bob bob-pw "$upd")" 0
check "(alice's own reaches hers)" test "$(pg_sql alice alice-pw "$upd")" -gt 0
pg_sql bob bob-pw "DELETE FROM cairn.postings WHERE owner = 'alice'::regrole" >/dev/null
eq "bob's delete of them: none goes" "$(admin "$hers")" "$h0"
out=$(pg_sql alice alice-pw "INSERT INTO cairn.postings VALUES ('zzz', 1, 'alice'::regrole, '{1}')" 2>&1)
lacks "(alice may insert her own: the refusal above is the policy's)" "$out" "row-level security"
admin "DELETE FROM cairn.postings WHERE lexeme = 'zzz'" >/dev/null

# 4. a rewrite (the push's update takes a new seq) and a forget keep them
pg_sql alice alice-pw "UPDATE cairn.messages SET content = 'kittiwake', tsv = 'kittiwak:1',
                       seq = DEFAULT WHERE sid = 'ids-1' AND mkey = 'i1'" >/dev/null || bad "rewrite"
eq "a rewritten message's postings are its new lexemes'" "$(admin "$same")" "0 0"
eq "(the new lexeme)" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.postings WHERE lexeme = 'kittiwak'")" 1
gone=$(admin "SELECT string_agg(seq::text, ',') FROM cairn.messages WHERE sid = 'gone-1'")
"$CAIRN" --db "$A" forget gone-1 >/dev/null 2>&1 || bad "forget"
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "the forget pushed"
eq "the forgotten session has no message left" "$(admin "SELECT count(*) FROM cairn.messages WHERE sid = 'gone-1'")" 0
eq "and no posting" "$(admin "SELECT count(*) FROM cairn.postings WHERE seq IN ($gone)")" 0
eq "the rest are the tsvectors'" "$(admin "$same")" "0 0"
out=$("$CAIRN" --db "$ALICE" recall "quetzal" 2>&1)
lacks "recall no longer finds it" "$out" "quetzal migration"

# 5. a version 5 server: read through the tsvectors the same; the next
# sync of a role that may migrates it and fills the postings from its rows
"$CAIRN" --db "$ALICE" recall "config.toml max_retries" > "$TMP/m0.pg" 2>&1
admin "SET client_min_messages = warning; DROP TABLE cairn.postings;
       DROP FUNCTION cairn.postings_added(), cairn.postings_removed() CASCADE;
       DROP FUNCTION cairn.mpack_changed() CASCADE; DROP FUNCTION cairn.mpack(name, text); ALTER TABLE cairn.sessions DROP COLUMN mpack;
       CREATE UNIQUE INDEX messages_seq ON cairn.messages(seq); DROP INDEX cairn.messages_seq_key;
       UPDATE cairn.meta SET value = '5' WHERE key = 'schema_version'" >/dev/null
"$CAIRN" --db "$ALICE" recall "config.toml max_retries" > "$TMP/m5.pg" 2>&1
check "a version 5 server reads the same" cmp -s "$TMP/m0.pg" "$TMP/m5.pg"
eq "the admin's sync migrates it to version 7" "$(pg_migrate)" 7
eq "migrated: the postings filled from the rows there" "$(admin "$same")" "0 0"
check "(every owner's)" test "$(admin "SELECT count(DISTINCT owner) FROM cairn.postings")" -eq 2
eq "migrated: messages by seq, with their key" \
    "$(admin "SELECT count(*) FROM pg_indexes WHERE indexname IN ('messages_seq_key', 'messages_seq')")" 1
admin "VACUUM cairn.messages" >/dev/null
plan=$(pg_sql alice alice-pw "SET enable_seqscan = off; SET enable_bitmapscan = off;
       EXPLAIN SELECT owner, sid, ntok FROM cairn.messages WHERE seq = ANY ('{1,2}'::bigint[])")
contains "(read from that index alone)" "$plan" "Index Only Scan using messages_seq_key"
eq "migrated: the triggers" "$(admin "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'postings_%'")" 4
"$CAIRN" --db "$ALICE" recall "config.toml max_retries" > "$TMP/m6.pg" 2>&1
check "and reads the same after" cmp -s "$TMP/m0.pg" "$TMP/m6.pg"
eq "alice still reads none of bob's private postings" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.postings WHERE seq IN ($secret)")" 0

t_done
