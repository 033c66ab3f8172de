#!/bin/sh
# t0607-pg-memories: explicit memories and corrections through `cairn sync`
# (docs/POSTGRES.md, "Memories"). alice has two machines (stores A and A2),
# bob one (B); one real PostgreSQL 15. A memory and a correction made on A
# reach A2 with the same global ids, masked on the server; an edit on A2 wins
# on A; edits on both sides end on one version everywhere; a removal on A
# removes A2's copy (no byte left) and A2's stale edit does not bring it
# back; bob reads alice's shared memory but never her private one, through
# sync, SQL, the read commands or the MCP server (on his store and on the
# server store, which reads the memories the role sees); a push cut by a
# server error resumes and sends each memory once; rows no cairn wrote are
# left out; --project moves that scope only; two machines editing and
# syncing the same memories at once end on one version of each; a pull cut
# part way resumes and takes each memory once.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
pg_start || t_skip_all "$PG_WHY"
pg_login_roles alice bob >/dev/null || { bad "roles and schema"; t_done; exit 1; }
ALICE=$(pg_url alice alice-pw) BOB=$(pg_url bob bob-pw)
A="$TMP/a.db" A2="$TMP/a2.db" B="$TMP/b.db"
sa() { pg_sql alice alice-pw "$1"; }
sb() { pg_sql bob bob-pw "$1" 2>&1; }
q() { python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print("\n".join("|".join("" if v is None else str(v) for v in r) for r in c.execute(sys.argv[2])))' "$1" "$2"; }
# the local id of the memory whose text holds $2
mid() { q "$1" "SELECT id FROM memories WHERE text LIKE '%$2%'"; }

eq "the server has the memory tables (version 5)" \
    "$(sa "SELECT count(*) FROM pg_tables WHERE schemaname = 'cairn' AND tablename IN ('memories', 'memory_tombstones')")" 2

# 1. made on A, pulled on A2
"$CAIRN" --db "$A" remember --scope team "we deploy with make ship, never npm publish" >/dev/null
"$CAIRN" --db "$A" remember --type correction --severity p0 --scope team \
    --when-command "npm publish" "never run npm publish here" >/dev/null
"$CAIRN" --db "$A" remember "the staging key is AKIAIOSFODNN7EXAMPLE, ask ops" >/dev/null
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
check "A's sync: $out" test $? -eq 0
contains "A pushes its 3 memories" "$out" "pushed 3 memories"
eq "the server holds 3 of alice's" "$(sa "SELECT count(*) FROM cairn.memories")" 3
eq "no secret left the machine" "$(sa "SELECT count(*) FROM cairn.memories WHERE text LIKE '%AKIAIOSFODNN7EXAMPLE%'")" 0
eq "each row's gid_hash is the sha256 of its gid" \
    "$(sa "SELECT count(*) FROM cairn.memories WHERE gid_hash <> encode(sha256(convert_to(gid, 'UTF8')), 'hex')")" 0
eq "the server's gids are A's" "$(sa "SELECT string_agg(gid, ',' ORDER BY gid) FROM cairn.memories")" \
    "$(q "$A" "SELECT group_concat(gid, ',') FROM (SELECT gid FROM memory_sync ORDER BY gid)")"
out=$("$CAIRN" --db "$A2" sync --server "$ALICE" 2>&1)
check "A2's sync: $out" test $? -eq 0
contains "A2 pulls them" "$out" "pulled 3 memories"
out=$("$CAIRN" --db "$A2" memories list 2>&1)
contains "A2 lists the memory" "$out" "we deploy with make ship, never npm publish"
contains "in its scope" "$out" "team"
eq "A2 has A's gids" "$(q "$A2" "SELECT group_concat(gid, ',') FROM (SELECT gid FROM memory_sync ORDER BY gid)")" \
    "$(q "$A" "SELECT group_concat(gid, ',') FROM (SELECT gid FROM memory_sync ORDER BY gid)")"
eq "and A's versions" "$(q "$A2" "SELECT group_concat(vid, ',') FROM (SELECT vid FROM memory_sync ORDER BY gid)")" \
    "$(q "$A" "SELECT group_concat(vid, ',') FROM (SELECT vid FROM memory_sync ORDER BY gid)")"
eq "the correction's fields came along" \
    "$(q "$A2" "SELECT c.severity, c.commands FROM corrections c JOIN memories m ON m.id = c.memory WHERE m.type = 'correction'")" "0|npm publish"
out=$("$CAIRN" --db "$A2" recall --project team "deploy make ship npm publish" 2>&1)
contains "A2's recall shows the pulled memory" "$out" "we deploy with make ship, never npm publish"
contains "as a memory" "$out" "[memory #"
out=$(printf '%s' '{"tool_name":"Bash","tool_input":{"command":"npm publish --tag next"},"cwd":"/w/team"}' |
      CAIRN_DB="$A2" CAIRN_PROJECT=team "$CAIRN" hook pre-tool 2>&1)
contains "A2's pre-tool hook knows the correction" "$out" "never run npm publish here"
out=$("$CAIRN" --db "$A2" sync --server "$ALICE" 2>&1)
lacks "a re-run on A2 pushes no memory" "$out" "memor"
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
lacks "a re-run on A moves no memory" "$out" "memor"
eq "still 3 on the server" "$(sa "SELECT count(*) FROM cairn.memories")" 3

# 2. an edit on A2 wins on A
ID2=$(mid "$A2" "make ship")
"$CAIRN" --db "$A2" memories edit "$ID2" "we deploy with make ship-prod, never npm publish" >/dev/null
out=$("$CAIRN" --db "$A2" sync --server "$ALICE" 2>&1)
contains "A2 pushes its edit" "$out" "pushed 1 memory"
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
contains "A pulls it" "$out" "pulled 1 memory"
eq "A has A2's text" "$(q "$A" "SELECT text FROM memories WHERE id = $(mid "$A" "make ship")")" \
    "we deploy with make ship-prod, never npm publish"
eq "one memory for it on A (no duplicate)" "$(q "$A" "SELECT count(*) FROM memories WHERE text LIKE '%make ship%'")" 1
# edits on both sides before either hears: both end on one version
"$CAIRN" --db "$A" memories edit "$(mid "$A" "make ship")" "A says: make ship-a" >/dev/null
"$CAIRN" --db "$A2" memories edit "$ID2" "A2 says: make ship-b" >/dev/null
"$CAIRN" --db "$A2" memories edit "$ID2" "A2 says: make ship-c" >/dev/null
"$CAIRN" --db "$A" sync -q --server "$ALICE"
"$CAIRN" --db "$A2" sync -q --server "$ALICE"
"$CAIRN" --db "$A" sync -q --server "$ALICE"
ta=$(q "$A" "SELECT m.text, s.vid FROM memories m JOIN memory_sync s ON s.memory = m.id WHERE m.text LIKE '%make ship%'")
t2=$(q "$A2" "SELECT m.text, s.vid FROM memories m JOIN memory_sync s ON s.memory = m.id WHERE m.text LIKE '%make ship%'")
eq "concurrent edits: A and A2 end on the same version" "$ta" "$t2"
eq "and the server has it" "$(sa "SELECT text || '|' || vid FROM cairn.memories WHERE text LIKE '%make ship%'")" "$ta"

# 3. removed on A: gone from A2, and A2's stale edit does not bring it back
IDA=$(mid "$A" "staging key")
"$CAIRN" --db "$A" memories rm "$IDA" >/dev/null
"$CAIRN" --db "$A2" memories edit "$(mid "$A2" "staging key")" "the staging key rotates on Mondays" >/dev/null
out=$("$CAIRN" --db "$A" sync --server "$ALICE" 2>&1)
contains "A pushes the removal" "$out" "1 removal"
eq "the server has no row of it" "$(sa "SELECT count(*) FROM cairn.memories WHERE text LIKE '%staging key%'")" 0
out=$("$CAIRN" --db "$A2" sync --server "$ALICE" 2>&1)
check "A2's sync after the removal: $out" test $? -eq 0
contains "A2 removes its copy" "$out" "1 removal"
eq "A2's stale edit was refused by the server" "$(sa "SELECT count(*) FROM cairn.memories WHERE text LIKE '%staging key%'")" 0
eq "A2 has no such memory" "$(q "$A2" "SELECT count(*) FROM memories WHERE text LIKE '%staging key%'")" 0
check_fails "no byte of its text in A2's files" grep -rq "rotates on Mondays" "$TMP"/a2.db*
"$CAIRN" --db "$A" sync -q --server "$ALICE"
"$CAIRN" --db "$A2" sync -q --server "$ALICE"
eq "nor on A after more syncs" "$(q "$A" "SELECT count(*) FROM memories WHERE text LIKE '%staging key%'")" 0
eq "2 memories on each side" "$(q "$A" "SELECT count(*) FROM memories")/$(q "$A2" "SELECT count(*) FROM memories")" 2/2

# 4. who sees what: alice shares project team with bob; one of her team
# memories is pushed private
sa "INSERT INTO cairn.shares(project, grantee) VALUES ('team', 'bob')"
# a shared session too, so that recall has a record to read beside memories
printf '%s\n' '{"id": "team-1", "project": "team", "messages": [{"role": "user", "content": "how do we ship the release"}, {"role": "assistant", "content": "with the release checklist"}]}' > "$TMP/team.jsonl"
"$CAIRN" --db "$A" add -q "$TMP/team.jsonl"
check "alice pushes it, not private" "$CAIRN" --db "$A" sync --push -q --server "$ALICE"
"$CAIRN" --db "$A" remember --scope team "zanzibar kestrel private plan of alice" >/dev/null
check "alice pushes a private memory" "$CAIRN" --db "$A" sync --push --private -q --server "$ALICE"
eq "it is private on the server" "$(sa "SELECT count(*) FROM cairn.memories WHERE private AND text LIKE '%zanzibar%'")" 1
out=$("$CAIRN" --db "$B" sync --server "$BOB" 2>&1)
check "bob's sync: $out" test $? -eq 0
contains "bob pulls the 2 shared ones" "$out" "pulled 2 memories"
# what bob reads of alice's memories through every read path of a store:
# his local one (after the pull) and the server store (read at open)
bob_reads() {  # bob_reads DB WHERE
    out=$("$CAIRN" --db "$1" memories list --all 2>&1)
    contains "$2: memories list shows alice's shared memory" "$out" "make ship"
    contains "$2: and her shared correction" "$out" "never run npm publish here"
    lacks "$2: not her private one" "$out" "zanzibar"
    out=$("$CAIRN" --db "$1" recall "says make ship" 2>&1)
    contains "$2: recall shows the shared memory" "$out" "[memory #"
    out=$("$CAIRN" --db "$1" recall "kestrel private plan" 2>&1)
    check "$2: recall answers: $out" test $? -eq 0
    lacks "$2: recall has no private text" "$out" "zanzibar kestrel private"
    out=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}' \
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory","arguments":{"action":"list"}}}' \
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"recall","arguments":{"query":"kestrel private plan"}}}' |
        "$CAIRN" --db "$1" mcp 2>&1)
    contains "$2: the MCP memory tool lists the shared memory" "$out" "make ship"
    lacks "$2: MCP shows nothing private" "$out" "zanzibar"
}
bob_reads "$B" "bob's store"
bob_reads "$BOB" "bob's server store"
out=$("$CAIRN" --db "$ALICE" memories list 2>&1)
contains "alice's server store lists her private memory" "$out" "zanzibar kestrel private plan of alice"
check_fails "a server store refuses to remember" "$CAIRN" --db "$ALICE" remember "written on the server"
eq "as bob in SQL: alice's shared memories only" "$(sb "SELECT count(*) FROM cairn.memories")" 2
eq "no private row" "$(sb "SELECT count(*) FROM cairn.memories WHERE private")" 0
eq "bob's UPDATE reaches none of hers" "$(sb "UPDATE cairn.memories SET text = 'x' RETURNING 1" | grep -c 1)" 0
eq "bob's DELETE neither" "$(sb "DELETE FROM cairn.memories RETURNING 1" | grep -c 1)" 0
contains "bob cannot insert in her name" "$(sb "INSERT INTO cairn.memories(owner, gid, gid_hash, type, text, created_at, updated_at, rev, vid) VALUES ('alice', 'x', 'x', 'fact', 'forged', 0, 0, 0, 'x')")" "row-level security"
"$CAIRN" --db "$B" memories edit "$(mid "$B" "make ship")" "bob rewrites alice's memory" >/dev/null
"$CAIRN" --db "$B" sync -q --server "$BOB"
eq "bob's edit of her memory is not pushed as his" "$(sa "SELECT count(*) FROM cairn.memories WHERE text LIKE '%bob rewrites%'")/$(sb "SELECT count(*) FROM cairn.memories WHERE owner = 'bob'")" 0/0
eq "alice's rows are as before" "$(sa "SELECT count(*) FROM cairn.memories")" 3
# alice removes her shared correction: it leaves bob's store too
"$CAIRN" --db "$A" memories rm "$(mid "$A" "never run npm publish")" >/dev/null
"$CAIRN" --db "$A" sync -q --server "$ALICE"
out=$("$CAIRN" --db "$B" sync --server "$BOB" 2>&1)
contains "bob's pull removes alice's removed correction" "$out" "1 removal"
eq "bob's store has it no more" "$(q "$B" "SELECT count(*) FROM memories WHERE text LIKE '%never run npm publish%'")" 0

# 5. a push cut by a server error resumes: each memory once
pg_sql cairn_admin "$PG_ADMIN_PW" "CREATE FUNCTION cairn.t_poison() RETURNS trigger LANGUAGE plpgsql AS
    \$\$ BEGIN IF NEW.text LIKE '%poison%' THEN RAISE EXCEPTION 'poisoned'; END IF; RETURN NEW; END \$\$;
    CREATE TRIGGER t_poison BEFORE INSERT ON cairn.memories FOR EACH ROW EXECUTE FUNCTION cairn.t_poison();" >/dev/null
for i in 1 2 3 4 5; do "$CAIRN" --db "$A" remember "batch memory $i" >/dev/null; done
"$CAIRN" --db "$A" remember "batch memory poison" >/dev/null
for i in 7 8; do "$CAIRN" --db "$A" remember "batch memory $i" >/dev/null; done
out=$("$CAIRN" --db "$A" sync --push --batch 2 --server "$ALICE" 2>&1)
check_fails "the push fails on the poisoned batch" test $? -eq 0
contains "saying why" "$out" "poisoned"
n=$(sa "SELECT count(*) FROM cairn.memories WHERE text LIKE 'batch memory%'")
check "the batches before it landed ($n)" test "$n" -ge 2 -a "$n" -lt 8
pg_sql cairn_admin "$PG_ADMIN_PW" "DROP TRIGGER t_poison ON cairn.memories" >/dev/null
out=$("$CAIRN" --db "$A" sync --push --batch 2 --server "$ALICE" 2>&1)
check "the next push completes: $out" test $? -eq 0
eq "every memory once" "$(sa "SELECT count(*), count(DISTINCT gid) FROM cairn.memories WHERE text LIKE 'batch memory%'")" "8|8"
eq "their gid_hashes are their gids'" \
    "$(sa "SELECT count(*) FROM cairn.memories WHERE gid_hash <> encode(sha256(convert_to(gid, 'UTF8')), 'hex')")" 0
eq "none left to push on A" "$(q "$A" "SELECT count(*) FROM memory_sync WHERE dirty")" 0
# rows no cairn wrote (alice in SQL): a bad id, a bad type, an oversized text
A32=$(printf 'a%.0s' $(seq 32)) B32=$(printf 'b%.0s' $(seq 32))
sa "INSERT INTO cairn.memories(gid, gid_hash, type, text, created_at, updated_at, rev, vid) VALUES
    ('not-a-gid', 'x', 'fact', 'a bad id', 1, 1, 0, 'v'), ('$A32', 'y', 'bogus', 'a bad type', 1, 1, 0, 'v'),
    ('$B32', 'z', 'fact', repeat('x', 70000), 1, 1, 0, 'v')"
out=$("$CAIRN" --db "$A2" sync --pull --batch 3 --server "$ALICE" 2>&1)
check "a pull meeting rows that are no memory succeeds: $out" test $? -eq 0
contains "and says it left them out" "$out" "left out 3 server rows that are no valid memory"
contains "A2 pulls them in batches" "$out" "pulled 9 memories"
eq "none of the bad rows is in A2" "$(q "$A2" "SELECT count(*) FROM memories WHERE text LIKE 'a bad%' OR length(text) > 60000")" 0
eq "A2 has each once" "$(q "$A2" "SELECT count(*) FROM memories WHERE text LIKE 'batch memory%'")" 8

# 6. --project: that scope's memories only, both ways
"$CAIRN" --db "$A" remember --scope proj2 "scoped note of proj2" >/dev/null
"$CAIRN" --db "$A" remember "a global note not for proj2" >/dev/null
check "a push of one project" "$CAIRN" --db "$A" sync --push --project proj2 -q --server "$ALICE"
eq "its memory went, the global one did not" \
    "$(sa "SELECT count(*) FILTER (WHERE text LIKE 'scoped note%'), count(*) FILTER (WHERE text LIKE 'a global note%') FROM cairn.memories")" "1|0"
"$CAIRN" --db "$A" sync -q --server "$ALICE"
check "a pull of one project" "$CAIRN" --db "$TMP/p.db" sync --pull --project proj2 -q --server "$ALICE"
eq "brings that project's memories only" "$(q "$TMP/p.db" "SELECT group_concat(text) FROM memories")" "scoped note of proj2"

# 7. two machines syncing the same memories at once: each edits all of them,
# then both sync together, three times; nothing fails or doubles, and after
# a quiet round both hold the same version of every memory
python3 -c 'import json
for i in range(120): print(json.dumps({"id": i + 1, "type": "fact", "text": "shared fact %d" % i}))' > "$TMP/many.jsonl"
"$CAIRN" --db "$A" memories import "$TMP/many.jsonl" >/dev/null
"$CAIRN" --db "$A" sync -q --server "$ALICE"
"$CAIRN" --db "$A2" sync -q --server "$ALICE"
edit_all() {  # edit_all DB WORD: every "shared fact" memory edited
    for id in $(q "$1" "SELECT id FROM memories WHERE text LIKE 'shared fact%'"); do
        "$CAIRN" --db "$1" memories edit "$id" "shared fact $id edited on $2" >/dev/null || return 1
    done
}
for round in 1 2 3; do
    edit_all "$A" a"$round" & edit_all "$A2" b"$round"; wait
    "$CAIRN" --db "$A" sync --batch 40 -q --server "$ALICE" 2>"$TMP/ca.err" & pa=$!
    "$CAIRN" --db "$A2" sync --batch 40 -q --server "$ALICE" 2>"$TMP/cb.err"; rb=$?
    wait $pa; ra=$?
    eq "round $round: both syncs at once succeed ($(cat "$TMP/ca.err" "$TMP/cb.err"))" "$ra/$rb" 0/0
done
"$CAIRN" --db "$A" sync -q --server "$ALICE" 2>/dev/null
"$CAIRN" --db "$A2" sync -q --server "$ALICE" 2>/dev/null
"$CAIRN" --db "$A" sync -q --server "$ALICE" 2>/dev/null
eq "one server row a memory" "$(sa "SELECT count(*), count(DISTINCT gid) FROM cairn.memories WHERE text LIKE 'shared fact%'")" "120|120"
va=$(q "$A" "SELECT group_concat(s.gid || ':' || s.vid || ':' || m.text, ',') FROM (SELECT * FROM memory_sync ORDER BY gid) s JOIN memories m ON m.id = s.memory WHERE m.text LIKE 'shared fact%'")
v2=$(q "$A2" "SELECT group_concat(s.gid || ':' || s.vid || ':' || m.text, ',') FROM (SELECT * FROM memory_sync ORDER BY gid) s JOIN memories m ON m.id = s.memory WHERE m.text LIKE 'shared fact%'")
eq "A and A2 hold the same version of each of the 120" "$(printf %s "$va" | md5sum)" "$(printf %s "$v2" | md5sum)"
eq "A2 has 120 of them" "$(q "$A2" "SELECT count(*) FROM memories WHERE text LIKE 'shared fact%'")" 120

# 8. a pull cut part way (the local store refuses one memory's insert: a
# trigger the test adds) keeps the batches before it; the next pull takes
# the rest, each memory once
for i in 1 2 3 4 5 6 7 8 9 10; do "$CAIRN" --db "$A" remember --scope cutp "cut $i of ten" >/dev/null; done
"$CAIRN" --db "$A" sync --push --batch 3 -q --server "$ALICE"
C="$TMP/c.db"
"$CAIRN" --db "$C" sync --pull --project none -q --server "$ALICE"   # makes the store
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript("CREATE TRIGGER t_cut BEFORE INSERT ON memories WHEN new.text = '"'"'cut 8 of ten'"'"' BEGIN SELECT RAISE(ABORT, '"'"'cut here'"'"'); END;"); c.close()' "$C"
out=$("$CAIRN" --db "$C" sync --pull --project cutp --batch 3 --server "$ALICE" 2>&1)
check_fails "the cut pull fails" test $? -eq 0
contains "saying why" "$out" "cut here"
n=$(q "$C" "SELECT count(*) FROM memories WHERE text LIKE 'cut %'")
check "the batches before the cut stayed ($n of 10)" test "$n" -gt 0 -a "$n" -lt 10
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute("DROP TRIGGER t_cut"); c.commit(); c.close()' "$C"
out=$("$CAIRN" --db "$C" sync --pull --project cutp --batch 3 --server "$ALICE" 2>&1)
check "the next pull completes: $out" test $? -eq 0
contains "taking only the rest" "$out" "pulled $((10 - n)) memor"
eq "each memory once" "$(q "$C" "SELECT count(*), count(DISTINCT text) FROM memories WHERE text LIKE 'cut %'")" "10|10"

t_done
