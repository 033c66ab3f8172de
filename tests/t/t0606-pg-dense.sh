#!/bin/sh
# t0606-pg-dense: hybrid recall (BM25 + vectors) on a PostgreSQL server store
# (--db postgres://) against a real PostgreSQL 15 (tests/tools/pg.sh), with
# the tiny BERT in the repository as the model. A store whose messages have
# vectors, pushed by `cairn sync`, recalls byte for byte the same text on the
# server as on SQLite (the vectors of the question's model read from the
# server and scanned in the client exactly as SQLite's): questions that
# share words with the answer, and questions that share none (found by the
# vectors alone), whole and with --project; --explain says vectors took
# part on both; a store where some messages have no vector says so the same way;
# another owner's private vectors never reach the scan; the HNSW index path
# (CAIRN_PG_DENSE=index, pgvector) finds what the exact scan finds here.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL="$ROOT/tests/data/embed/tiny-bert"
pg_start || t_skip_all "$PG_WHY"
pg_login_roles alice bob || bad "roles and schema"
ALICE=$(pg_url alice alice-pw)
A="$TMP/a.db" B="$TMP/b.db"

# 1. alice's store: synthetic history and a few hand-made sessions, every
# message embedded at ingest
python3 "$ROOT/bench/gen_data.py" ingest "$TMP/gen.jsonl" --sessions 30 --messages 600 --seed 11 \
    >/dev/null 2>&1 || bad "gen_data"
python3 - "$TMP/s.jsonl" <<'EOF'
import json, sys
S = [
 {"id": "climb-1", "project": "life", "title": "climbing", "messages": [
   {"role": "user", "content": "Which bouldering gym should I join, LBC or the one downtown?"},
   {"role": "assistant", "content": "LBC on Thursday evenings has the beginner routes you wanted."}]},
 {"id": "deploy-1", "project": "team", "title": "deploy plan", "messages": [
   {"role": "user", "content": "How do we roll out frobnicate_v2 to the staging cluster?"},
   {"role": "assistant", "content": "Run deploy.sh --env=staging, then check FrobConfig.max_retries is 5."}]},
 {"id": "pets-1", "project": "life", "messages": [
   {"role": "user", "content": "My cat keeps knocking the plants off the windowsill."},
   {"role": "assistant", "content": "Try a shelf the kitten cannot reach, or citrus peels near the pots."}]},
]
with open(sys.argv[1], "w") as f:
    for s in S:
        f.write(json.dumps(s, ensure_ascii=False) + "\n")
EOF
"$CAIRN" --db "$A" add -q "$TMP/gen.jsonl" && "$CAIRN" --db "$A" add -q "$TMP/s.jsonl" || bad "add"
nv=$(sqlite3 "$A" "SELECT count(*) FROM vectors")
check "alice's messages have vectors ($nv)" [ "$nv" -gt 600 ]
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "alice pushes"
eq "the server holds them all" "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.vectors")" "$nv"

# 2. hybrid recall: the same text on both stores, and vectors on both (before
# bob shares a session with alice: her server store then holds one more,
# which moves BM25's totals and --explain's scores a little)
same() {  # name args... : recall on SQLite and on the server, byte for byte
    name=$1
    shift
    "$CAIRN" --db "$A" recall "$@" > "$TMP/l.out" 2>&1
    "$CAIRN" --db "$ALICE" recall "$@" > "$TMP/s.out" 2>&1
    if cmp -s "$TMP/l.out" "$TMP/s.out"; then ok; else
        bad "$name: not the same on the server: $(diff "$TMP/l.out" "$TMP/s.out" | head -8)"
    fi
}
n=0
while IFS= read -r q; do
    n=$((n + 1))
    same "recall $n ($q)" "$q"
    same "recall $n --json" --json "$q"
    same "recall $n --explain" --explain "$q"
    same "recall $n --project life" --project life "$q"
done <<'EOF'
which climbing gym did I pick
frobnicate_v2 staging rollout
feline pushing flowerpots over
the error in the parser function
EOF
j=$("$CAIRN" --db "$ALICE" recall --explain "which climbing gym did I pick" 2>&1)
contains "vectors took part on the server" "$j" "; keywords and vectors"
contains "and the answer is found" "$j" "LBC on Thursday"
lacks "(the keyword-only server store did not)" \
    "$(CAIRN_EMBED_MODEL=none "$CAIRN" --db "$ALICE" recall --explain "which climbing gym did I pick" 2>&1)" \
    "; keywords and vectors"

# 3. some messages without a vector (added keyword-only, then pushed): the
# same note on both, and the same text
printf '%s\n' '{"id": "late-1", "project": "life", "messages": [{"role": "user", "content": "the cat climbed the bookshelf again"}]}' \
    > "$TMP/late.jsonl"
CAIRN_EMBED_MODEL=none "$CAIRN" --db "$A" add -q "$TMP/late.jsonl" || bad "add late"
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "alice pushes again"
same "part of the store without vectors" --explain "feline pushing flowerpots over"
contains "(it says so)" "$(cat "$TMP/s.out")" "1 of $(sqlite3 "$A" "SELECT count(*) FROM messages") messages have no vector"

# 4. row-level security: bob's private session's vectors never reach
# alice's scan; his shared one does
pg_bob_sessions "$B" || bad "bob's sessions"
pg_sql bob bob-pw "INSERT INTO cairn.shares(project, grantee) VALUES ('shared', 'alice')" >/dev/null
eq "alice sees the vectors of bob's shared session only" \
    "$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.vectors")" "$((nv + 1))"
out=$("$CAIRN" --db "$ALICE" recall "zanzibar kestrel plan" 2>&1)
contains "the shared session is recalled" "$out" "zanzibar shared notes"
lacks "the private one is not" "$out" "private plan"
out=$("$CAIRN" --db "$ALICE" recall --explain "an island falcon scheme" 2>&1)
lacks "not by its vector either" "$out" "private plan"

# 5. pgvector's HNSW index (server version 4, CAIRN_PG_DENSE=index): made by
# the push for the model's dimension (the tiny BERT's 64), used by the
# search, and here (a few hundred vectors: the index walks them all) it
# finds what the exact scan finds; without the index the same setting
# scans exactly. A version 3 server with vectors gets its index when
# migrated. Without pgvector: skipped.
if [ ! -f /usr/share/postgresql/15/extension/vector.control ]; then
    t_skip "pgvector not installed (sh scripts/deps.sh with ../shared)"
    t_done
    exit
fi
admin() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
eq "the push made the dim's HNSW index" \
    "$(admin "SELECT indexdef LIKE '%USING hnsw%vector_cosine_ops%WHERE (dim = 64)' FROM pg_indexes WHERE indexname = 'vectors_hnsw_64'")" t
plan=$(pg_sql alice alice-pw "SET hnsw.iterative_scan = relaxed_order; EXPLAIN SELECT mkey FROM cairn.vectors
    WHERE model = 'x' AND dim = 64 ORDER BY emb::vector(64) <=> ('[' || repeat('0.1,', 63) || '0.1]')::vector(64) LIMIT 400")
contains "a search as alice uses it under row-level security" "$plan" "Index Scan using vectors_hnsw_64"
for q in "which climbing gym did I pick" "feline pushing flowerpots over" "zanzibar kestrel plan"; do
    "$CAIRN" --db "$ALICE" recall --explain "$q" > "$TMP/x.out" 2>&1
    CAIRN_PG_DENSE=index "$CAIRN" --db "$ALICE" recall --explain "$q" > "$TMP/i.out" 2>&1
    check "index: the same as the exact scan ($q)" cmp -s "$TMP/x.out" "$TMP/i.out"
    "$CAIRN" --db "$ALICE" recall --explain --project life "$q" > "$TMP/x.out" 2>&1
    CAIRN_PG_DENSE=index "$CAIRN" --db "$ALICE" recall --explain --project life "$q" > "$TMP/i.out" 2>&1
    check "index, --project: the same ($q)" cmp -s "$TMP/x.out" "$TMP/i.out"
done
contains "(with vectors)" "$(cat "$TMP/i.out")" "; keywords, vectors for part of the store"
lacks "index: bob's private session is not found" \
    "$(CAIRN_PG_DENSE=index "$CAIRN" --db "$ALICE" recall "an island falcon scheme" 2>&1)" "private plan"
admin "SET client_min_messages = warning; DROP TABLE cairn.postings; DROP FUNCTION cairn.postings_added(), cairn.postings_removed() CASCADE;
       DROP FUNCTION cairn.mpack_changed() CASCADE; DROP FUNCTION cairn.mpack(name, text); ALTER TABLE cairn.sessions DROP COLUMN mpack;
       CREATE UNIQUE INDEX messages_seq ON cairn.messages(seq); DROP INDEX cairn.messages_seq_key;
       DROP TABLE cairn.memories; DROP TABLE cairn.memory_tombstones; DROP INDEX cairn.vectors_hnsw_64; DROP FUNCTION cairn.vector_index(integer);
       UPDATE cairn.meta SET value = '3' WHERE key = 'schema_version'" >/dev/null
q="feline pushing flowerpots over"
"$CAIRN" --db "$ALICE" recall --explain "$q" > "$TMP/x.out" 2>&1
CAIRN_PG_DENSE=index "$CAIRN" --db "$ALICE" recall --explain "$q" > "$TMP/i.out" 2>&1
check "no index (a version 3 server): index falls back to the exact scan" cmp -s "$TMP/x.out" "$TMP/i.out"
"$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$(pg_url cairn_admin "$PG_ADMIN_PW")" ||
    bad "the admin's sync migrates"
eq "migrated to version 7" "$(admin "SELECT value FROM cairn.meta WHERE key = 'schema_version'")" 7
eq "migrated: the vectors' dim indexed" "$(admin "SELECT count(*) FROM pg_indexes WHERE indexname = 'vectors_hnsw_64'")" 1
CAIRN_PG_DENSE=index "$CAIRN" --db "$ALICE" recall --explain "$q" > "$TMP/i.out" 2>&1
check "and searched by it, the same" cmp -s "$TMP/x.out" "$TMP/i.out"

t_done
