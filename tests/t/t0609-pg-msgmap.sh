#!/bin/sh
# t0609-pg-msgmap: a server handle reads its messages' metadata once
# (store/pg_msgmap.c, docs/POSTGRES.md "Reading the server") and again only
# when the server's data moved. Through one `cairn mcp` on a real
# PostgreSQL 15: two questions read the map once; a push that appends a
# message to a session the handle holds, extends a reply under its id (a
# new seq on the server) and forgets a session makes the next question read
# it again and see all three; the answers are SQLite's before the push.
# Version 7: the map is each session's pack, kept by triggers (equal to
# its messages' after a push, a rewrite and a forget, and after a version
# 6 server's migration), read at a handle's first question in one
# statement; a malformed pack is a clear error; a version 6 server is read
# as before (the map from the second question). Short texts come with
# their metadata (no text statement), a long one is read on its own.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
pg_start || t_skip_all "$PG_WHY"
export CAIRN_EMBED_MODEL=none
admin() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
pg_login_roles alice || bad "roles and schema"
A="$TMP/a.db" ALICE=$(pg_url alice alice-pw)

python3 "$ROOT/bench/gen_data.py" ingest "$TMP/gen.jsonl" --sessions 10 --messages 200 --seed 7 \
    >/dev/null 2>&1 || bad "gen_data"
cat > "$TMP/s1.jsonl" <<'EOF'
{"id": "keep-1", "project": "team", "messages": [{"role": "user", "id": "k1", "content": "ocelot plans for the harbor"}, {"role": "assistant", "id": "k2", "content": "the ocelot reply begins"}]}
{"id": "gone-1", "project": "team", "messages": [{"role": "user", "content": "ocelot notes to forget soon"}]}
EOF
cat > "$TMP/s2.jsonl" <<'EOF'
{"id": "keep-1", "project": "team", "messages": [{"role": "user", "id": "k1", "content": "ocelot plans for the harbor"}, {"role": "assistant", "id": "k2", "content": "the ocelot reply begins and a marmot joins"}, {"role": "user", "id": "k3", "content": "ocelot and the lighthouse keeper"}]}
EOF
# a speaker (not ASCII), a message without a time, a text too long to come
# with its metadata
python3 - "$TMP/s3.jsonl" <<'EOF'
import json, sys
long = "okapi " + "the long okapi tale goes on " * 2600
s = {"id": "spk-1", "project": "team", "messages": [
    {"role": "user", "speaker": "Ærin the pilot", "content": "zebu cargo for the pilot",
     "created_at": "2024-05-01T10:00:00Z"},
    {"role": "assistant", "content": "zebu cargo is loaded"}]}
t = {"id": "long-1", "project": "team", "messages": [{"role": "user", "content": long}]}
with open(sys.argv[1], "w", encoding="utf-8") as f:
    for x in (s, t):
        f.write(json.dumps(x, ensure_ascii=False) + "\n")
EOF
"$CAIRN" --db "$A" add -q "$TMP/gen.jsonl" && "$CAIRN" --db "$A" add -q "$TMP/s1.jsonl" &&
    "$CAIRN" --db "$A" add -q "$TMP/s3.jsonl" || bad "add"
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "alice pushes"
sqlite_ocelot=$("$CAIRN" --db "$A" recall "ocelot harbor" 2>&1)
# every session's pack is its messages' (the superuser sees every row)
stale="SELECT count(*) FROM cairn.sessions WHERE mpack <> cairn.mpack(owner, sid)"
eq "version 7" "$(admin "SELECT value FROM cairn.meta WHERE key = 'schema_version'")" 7
eq "the triggers keep each session's pack" "$(admin "$stale")" 0
eq "a pack a message: 25 bytes, and a speaker's" \
   "$(admin "SELECT octet_length(mpack) FROM cairn.sessions WHERE sid = 'spk-1'")" \
   "$((2 * 25 + 4 + $(printf '%s' 'Ærin the pilot' | wc -c)))"
# every statement in the server's log, with the client's name
admin "ALTER SYSTEM SET log_min_duration_statement = 0" >/dev/null
admin "ALTER SYSTEM SET log_line_prefix = '[%a] '" >/dev/null
admin "SELECT pg_reload_conf()" >/dev/null

python3 - "$CAIRN" "$ALICE" "$A" "$TMP" <<'EOF' || bad "the mcp run"
import subprocess, sys
from mcp_client import Mcp
cairn, url, db, tmp = sys.argv[1:5]
def put(i, text):
    with open("%s/mcp-%d.txt" % (tmp, i), "w", encoding="utf-8") as f:
        f.write(text)
def log_mark(i):
    # a statement the log shows between the rounds
    subprocess.run(["psql", "-X", "-q", "-c", "SELECT 'mark %d'" % i,
                    "postgresql:///postgres?user=alice&password=alice-pw"], check=True,
                   capture_output=True, env=dict(__import__("os").environ, PGAPPNAME="mark"))
qs = ["ocelot harbor", "ocelot reply", "timeout parser", "harbor plans"]
with Mcp(cairn, env={"CAIRN_DB": url, "PGAPPNAME": "t0609"}, name="t0609") as m, \
        Mcp(cairn, env={"CAIRN_DB": db}, name="t0609") as s:
    # the first question reads per question, the next ones from the map:
    # each the same text as SQLite's
    same = [m.call("recall", {"query": q}) == s.call("recall", {"query": q}) for q in qs]
    put(7, " ".join("same" if x else "differs" for x in same))
    put(1, m.call("recall", {"query": qs[0]})[1])
    put(2, m.call("recall", {"query": qs[1]})[1])
    log_mark(1)
    subprocess.run([cairn, "--db", db, "add", "-q", tmp + "/s2.jsonl"], check=True)
    subprocess.run([cairn, "--db", db, "forget", "gone-1"], check=True, capture_output=True)
    subprocess.run([cairn, "--db", db, "sync", "--push", "-q", "--server", url], check=True)
    put(3, m.call("recall", {"query": "lighthouse keeper"})[1])
    put(4, m.call("recall", {"query": "marmot"})[1])
    put(5, m.call("recall", {"query": "ocelot notes forget"})[1])
    log_mark(2)
    put(6, m.call("recall", {"query": "ocelot lighthouse"})[1])
EOF
eq "after a push, a rewrite and a forget: the packs still the messages'" "$(admin "$stale")" 0
out() { cat "$TMP/mcp-$1.txt"; }
eq "before the push: the server's answers are SQLite's" "$(out 7)" "same same same same"
contains "before the push: the harbor" "$(out 1)" "ocelot plans for the harbor"
eq "the same text as SQLite's recall" "$(out 1 | grep -c ocelot)" "$(printf '%s\n' "$sqlite_ocelot" | grep -c ocelot)"
contains "before the push: the reply as it was" "$(out 2)" "the ocelot reply begins"
lacks "before the push: no marmot yet" "$(out 2)" "marmot"
contains "after the push: the appended message" "$(out 3)" "ocelot and the lighthouse keeper"
contains "after the push: the extended reply (a new seq)" "$(out 4)" "a marmot joins"
lacks "after the push: the forgotten session is gone" "$(out 5)" "notes to forget"
contains "and the handle still answers" "$(out 6)" "lighthouse keeper"

# the map's reads in the log: once for the two questions before the push,
# once again after it, not again for the question after that
log="$PG_DIR/server.log"
loads() { awk -v m="$1" '/mark [0-9]/ { k++ } k == m && /^\[t0609\].*execute.*SELECT st.v, s.owner, s.sid, s.mpack/ { n++ } END { print n + 0 }' "$log"; }
eq "questions: the map is read once, at the first" "$(loads 0)" 1
eq "after a push: read again, once" "$(loads 1)" 1
eq "no change: not read again" "$(loads 2)" 0
stamps=$(grep -c '^\[t0609\].*statement: SELECT count(\*)::text.*string_agg(xmin' "$log")
test "$stamps" -ge 5 && ok || bad "each question checks the sessions' digest: $stamps"
eq "one digest a question (the pool's metadata reuses the search's)" \
   "$(awk '/mark 2/ { k = 1 } k && /^\[t0609\].*SELECT count\(\*\)::text/ { n++ } END { print n + 0 }' "$log")" 1

# a process: short texts come with their metadata, a long one alone; the
# speaker and the message without a time as SQLite has them
for q in zebu okapi; do
    eq "a process, \"$q\": SQLite's answer" "$(PGAPPNAME=t0609$q "$CAIRN" --db "$ALICE" recall "$q" 2>&1)" \
       "$("$CAIRN" --db "$A" recall "$q" 2>&1)"
done
contains "the speaker" "$("$CAIRN" --db "$ALICE" recall "zebu cargo pilot" 2>&1)" "Ærin the pilot"
eq "short texts: no text statement" "$(grep -c '^\[t0609zebu\].*execute.*left(content' "$log")" 0
eq "the long text: its own" "$(grep -c '^\[t0609okapi\].*execute.*left(content' "$log")" 1

# a version 6 server is read as before: the map from the second question
admin "UPDATE cairn.meta SET value = '6' WHERE key = 'schema_version'" >/dev/null
eq "read as version 6: SQLite's answer" "$(PGAPPNAME=t0609v6 "$CAIRN" --db "$ALICE" recall "zebu cargo pilot" 2>&1)" \
   "$("$CAIRN" --db "$A" recall "zebu cargo pilot" 2>&1)"
eq "read as version 6: no pack read" "$(grep -c '^\[t0609v6\].*s.mpack' "$log")" 0
admin "UPDATE cairn.meta SET value = '7' WHERE key = 'schema_version'" >/dev/null

# a malformed pack: a clear error, not a crash nor a wrong answer
admin "UPDATE cairn.sessions SET mpack = '\x0102'::bytea WHERE sid = 'spk-1'" >/dev/null
out=$("$CAIRN" --db "$ALICE" recall "zebu cargo pilot" 2>&1); rc=$?
test "$rc" -ne 0 && ok || bad "a malformed pack fails the recall"
contains "and says so" "$out" "malformed map of messages (session spk-1)"

# a version 6 server migrated: the packs filled from the rows there
admin "DROP TRIGGER mpack_insert ON cairn.messages; DROP TRIGGER mpack_update ON cairn.messages;
       DROP TRIGGER mpack_delete ON cairn.messages; DROP FUNCTION cairn.mpack_changed();
       ALTER TABLE cairn.sessions DROP COLUMN mpack; DROP FUNCTION cairn.mpack(name, text);
       UPDATE cairn.meta SET value = '6' WHERE key = 'schema_version'" >/dev/null
eq "the admin's sync migrates it to version 7" "$(pg_migrate)" 7
eq "migrated: the packs filled" "$(admin "$stale")" 0
eq "migrated: the triggers" "$(admin "SELECT count(*) FROM pg_trigger WHERE tgname LIKE 'mpack_%'")" 3
eq "migrated: SQLite's answer" "$("$CAIRN" --db "$ALICE" recall "zebu cargo pilot" 2>&1)" \
   "$("$CAIRN" --db "$A" recall "zebu cargo pilot" 2>&1)"
t_done
