#!/bin/sh
# t0609-pg-msgmap: a server handle reads its messages' metadata once
# (store/pg_msgmap.c, docs/POSTGRES.md "Reading the server") and again only
# when the server's data moved. Through one `cairn mcp` on a real
# PostgreSQL 15: two questions read the map once; a push that appends a
# message to a session the handle holds, extends a reply under its id (a
# new seq on the server) and forgets a session makes the next question read
# it again and see all three; the answers are SQLite's before the push
# (the first question read per question, the next ones from the map).
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
"$CAIRN" --db "$A" add -q "$TMP/gen.jsonl" && "$CAIRN" --db "$A" add -q "$TMP/s1.jsonl" || bad "add"
"$CAIRN" --db "$A" sync --push -q --server "$ALICE" || bad "alice pushes"
sqlite_ocelot=$("$CAIRN" --db "$A" recall "ocelot harbor" 2>&1)
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
loads() { awk -v m="$1" '/mark [0-9]/ { k++ } k == m && /^\[t0609\].*SELECT seq, owner, sid, position/ { n++ } END { print n + 0 }' "$log"; }
eq "two questions: the map is read once" "$(loads 0)" 1
eq "after a push: read again, once" "$(loads 1)" 1
eq "no change: not read again" "$(loads 2)" 0
stamps=$(grep -c '^\[t0609\].*string_agg(xmin' "$log")
test "$stamps" -ge 5 && ok || bad "each question checks the sessions' digest: $stamps"
t_done
