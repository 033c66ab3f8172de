#!/bin/sh
# t0601-pg-rls: who sees what on the server (docs/POSTGRES.md, "Who sees
# what"). alice shares project "team" with bob and keeps one session of it
# private, and one of another project unshared. Through `cairn sync` bob
# gets the shared session only; he cannot forget, overwrite or read alice's
# rows; and as bob's role in plain SQL the same holds: no row of hers
# readable beyond the shared one, no UPDATE or DELETE reaches hers, no
# INSERT in her name. Each refusal is checked against what alice herself
# can do, so the checks can fail.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
pg_start || t_skip_all "$PG_WHY"

pg_sql cairn_admin "$PG_ADMIN_PW" "CREATE ROLE alice LOGIN PASSWORD 'alice-pw';
    CREATE ROLE bob LOGIN PASSWORD 'bob-pw'; CREATE ROLE carol LOGIN PASSWORD 'carol-pw';
    CREATE ROLE team; GRANT team TO carol;" >/dev/null
"$CAIRN" --db "$TMP/admin.db" sync --pull --server "$(pg_url cairn_admin "$PG_ADMIN_PW")" >/dev/null
ALICE=$(pg_url alice alice-pw) BOB=$(pg_url bob bob-pw) CAROL=$(pg_url carol carol-pw)
A="$TMP/alice.db" B="$TMP/bob.db" C="$TMP/carol.db"
sa() { pg_sql alice alice-pw "$1"; }
sb() { pg_sql bob bob-pw "$1" 2>&1; }

session() {  # session ID PROJECT WORD
    printf '{"id":"%s","project":"%s","messages":[{"role":"user","content":"%s question"},{"role":"assistant","content":"%s answer"}]}\n' "$1" "$2" "$3" "$3"
}
{ session shared team sharedword; session other solo otherword; } > "$TMP/open.jsonl"
session secret team secretword > "$TMP/private.jsonl"
"$CAIRN" --db "$A" add -q "$TMP/open.jsonl"
check "alice pushes her open sessions" "$CAIRN" --db "$A" sync --push -q --server "$ALICE"
"$CAIRN" --db "$A" add -q "$TMP/private.jsonl"
check "and the private one" "$CAIRN" --db "$A" sync --push --private -q --server "$ALICE"
eq "alice sees her 3 sessions" "$(sa "SELECT count(*) FROM cairn.sessions")" 3
eq "one of them private" "$(sa "SELECT sid FROM cairn.sessions WHERE private")" secret

# before sharing, bob reads nothing of alice's
eq "unshared: bob reads no session" "$(sb "SELECT count(*) FROM cairn.sessions")" 0
sa "INSERT INTO cairn.shares(project, grantee) VALUES ('team', 'bob'), ('team', 'team')"
eq "alice's share names her as owner" "$(sa "SELECT DISTINCT owner FROM cairn.shares")" alice

# 1. through cairn sync
out=$("$CAIRN" --db "$B" sync --server "$BOB" 2>&1)
contains "bob pulls the shared session only" "$out" "pulled 2 messages in 1 session"
check "bob has the shared session" "$CAIRN" --db "$B" show shared
check_fails "not the private one" "$CAIRN" --db "$B" show secret
check_fails "not the unshared project" "$CAIRN" --db "$B" show other
out=$("$CAIRN" --db "$B" recall "secretword" 2>&1)
lacks "recall in bob's store finds no private text" "$out" "secretword answer"
# carol reads it through the group role she is a member of
out=$("$CAIRN" --db "$C" sync --pull --server "$CAROL" 2>&1)
contains "a member of a granted group reads it" "$out" "pulled 2 messages in 1 session"
# bob's re-push does not copy alice's session under his name
out=$("$CAIRN" --db "$B" sync --server "$BOB" 2>&1)
eq "bob's push sent no copy of alice's session" "$(sa "SELECT count(*) FROM cairn.sessions WHERE sid = 'shared'")" 1
eq "the server has no row of bob's" "$(sb "SELECT count(*) FROM cairn.messages WHERE owner = 'bob'")" 0
# bob forgets it: gone from his store, a tombstone of his, alice's rows stay
check "bob forgets the shared session locally" "$CAIRN" --db "$B" forget shared
out=$("$CAIRN" --db "$B" sync --server "$BOB" 2>&1)
contains "bob pushes his forget" "$out" "1 forget"
eq "alice's session is still on the server" "$(sa "SELECT count(*) FROM cairn.messages WHERE sid = 'shared'")" 2
check "alice's next sync keeps it" "$CAIRN" --db "$A" sync -q --server "$ALICE"
check "alice still has it" "$CAIRN" --db "$A" show shared
out=$("$CAIRN" --db "$B" sync --server "$BOB" 2>&1)
check_fails "bob does not pull it back" "$CAIRN" --db "$B" show shared
# bob pushes a session under the id of alice's private one: it is his, hers
# stays as it was
printf '{"id":"secret","project":"team","messages":[{"role":"user","content":"bob overwrites"}]}\n' |
    "$CAIRN" --db "$B" add -q -
check "bob's push of the same id succeeds" "$CAIRN" --db "$B" sync -q --server "$BOB"
eq "alice's private session is unchanged" \
    "$(sa "SELECT string_agg(content, '|' ORDER BY position) FROM cairn.messages WHERE owner = 'alice' AND sid = 'secret'")" \
    "secretword question|secretword answer"
eq "bob's lies beside it" "$(sb "SELECT count(*) FROM cairn.messages WHERE owner = 'bob' AND sid = 'secret'")" 1

# 2. as bob's role in SQL
eq "SQL: bob reads alice's shared rows only" \
    "$(sb "SELECT string_agg(DISTINCT sid, ',') FROM cairn.messages WHERE owner = 'alice'")" shared
eq "SQL: no private row" "$(sb "SELECT count(*) FROM cairn.messages WHERE owner = 'alice' AND sid = 'secret'")" 0
eq "SQL: no private session row" "$(sb "SELECT count(*) FROM cairn.sessions WHERE owner = 'alice' AND private")" 0
eq "SQL: no vector or tombstone of hers outside the share" \
    "$(sb "SELECT count(*) FROM cairn.tombstones WHERE owner = 'alice'")" 0
out=$(sb "UPDATE cairn.messages SET content = 'pwned' WHERE owner = 'alice'")
eq "SQL: bob's UPDATE reaches none of alice's rows" "$out" ""
out=$(sb "DELETE FROM cairn.messages WHERE owner = 'alice'")
out=$(sb "DELETE FROM cairn.sessions WHERE owner = 'alice'")
eq "alice's rows are all there" "$(sa "SELECT count(*) FROM cairn.messages WHERE owner = 'alice' AND content <> 'pwned'")" 6
out=$(sb "INSERT INTO cairn.sessions(owner, sid, sid_hash, project) VALUES ('alice', 'forged', 'x', 'team')")
contains "SQL: an INSERT in alice's name is refused" "$out" "row-level security"
out=$(sb "INSERT INTO cairn.tombstones(owner, sid_hash) VALUES ('alice', encode(sha256('secret'::bytea), 'hex'))")
contains "SQL: a tombstone in alice's name is refused" "$out" "row-level security"
out=$(sb "INSERT INTO cairn.shares(owner, project, grantee) VALUES ('alice', 'solo', 'bob')")
contains "SQL: bob cannot share alice's project with himself" "$out" "row-level security"
out=$(sb "UPDATE cairn.sessions SET private = false WHERE owner = 'alice'")
eq "SQL: nor make her private session public" "$(sa "SELECT sid FROM cairn.sessions WHERE private")" secret
# the same statements as alice do reach her rows: the refusals above are RLS
eq "alice can update her own" "$(sa "UPDATE cairn.sessions SET title = 't' WHERE sid = 'other' RETURNING sid")" other
t_done
