#!/bin/sh
# t0605-pg-pull-cut: a pull cut short loses and duplicates nothing (issue
# 21's faults; docs/POSTGRES.md, "Pull": the cursor moves after each batch).
# A restrictive row policy the test adds slows each message row alice reads
# (5 ms), so a pull of 300 messages in batches of 20 is stopped part way:
# once by its connection being killed on the server, once by the pulling
# process being killed (SIGKILL, nothing to clean up). Each time the next
# pull completes, and the store then equals the source byte for byte.
# Then a writer that commits late: a pull must not pass over it.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
pg_start || t_skip_all "$PG_WHY"

adm() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
pg_login_roles alice || { bad "roles and schema"; t_done; exit 1; }
ALICE=$(pg_url alice alice-pw)

python3 - "$TMP/s.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(30):
        f.write(json.dumps({"id": "p%d" % s, "project": "cut", "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": "turn %d of session %d" % (i, s)}
            for i in range(10)]}) + "\n")
PY
"$CAIRN" --db "$TMP/a.db" add -q "$TMP/s.jsonl"
"$CAIRN" --db "$TMP/a.db" export --format jsonl > "$TMP/a.jsonl"
"$CAIRN" --db "$TMP/a.db" sync --push --batch 20 -q --server "$ALICE"
eq "300 messages on the server" "$(adm "SELECT count(*) FROM cairn.messages")" 300

adm "CREATE FUNCTION public.t_slow_row() RETURNS boolean LANGUAGE plpgsql VOLATILE AS
     \$\$ BEGIN PERFORM pg_sleep(0.005); RETURN true; END \$\$;
     CREATE POLICY t_slow ON cairn.messages AS RESTRICTIVE FOR SELECT TO alice
     USING (public.t_slow_row());" >/dev/null
local_n() {
    python3 -c 'import sqlite3,sys
try:
    c = sqlite3.connect("file:%s?mode=ro" % sys.argv[1], uri=True, timeout=5)
    print(c.execute("SELECT count(*) FROM messages").fetchone()[0])
except Exception:
    print(0)' "$1"
}
# wait_local DB N: until DB holds at least N messages (20 s at most)
wait_local() {
    k=0
    while [ "$(local_n "$1")" -lt "$2" ] && [ $k -lt 400 ]; do sleep 0.05; k=$((k + 1)); done
}

# 1. the server kills the pulling connection part way
"$CAIRN" --db "$TMP/b.db" sync --pull --batch 20 --server "$ALICE" >"$TMP/1.out" 2>"$TMP/1.err" &
pid=$!
wait_local "$TMP/b.db" 20
adm "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'alice'" >/dev/null
wait $pid
rc=$?
n1=$(local_n "$TMP/b.db")
if [ "$n1" -ge 300 ]; then
    t_skip "the pull ended before its connection was killed"
else
    check_fails "a killed connection fails the pull" test "$rc" -eq 0
    contains "with the server named" "$(cat "$TMP/1.err")" "server alice@"
    lacks "without the password" "$(cat "$TMP/1.err")" "alice-pw"
    check "part of it landed ($n1 of 300)" test "$n1" -ge 20
fi

# 2. the pulling process is killed part way (SIGKILL)
"$CAIRN" --db "$TMP/b.db" sync --pull --batch 20 --server "$ALICE" >/dev/null 2>&1 &
pid=$!
wait_local "$TMP/b.db" $((n1 + 20))
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
n2=$(local_n "$TMP/b.db")
check "more landed ($n1 then $n2)" test "$n2" -gt "$n1"
out=$("$CAIRN" --db "$TMP/b.db" doctor 2>&1)
lacks "the store opens cleanly after the kill" "$out" "ERROR"

# 3. the next pull completes: nothing lost, nothing twice
adm "DROP POLICY t_slow ON cairn.messages" >/dev/null
out=$("$CAIRN" --db "$TMP/b.db" sync --pull --server "$ALICE" 2>&1)
check "the next pull succeeds: $(printf %s "$out" | head -c 300)" test $? -eq 0
eq "300 messages here" "$(local_n "$TMP/b.db")" 300
"$CAIRN" --db "$TMP/b.db" export --format jsonl > "$TMP/b.jsonl"
check "equal to the source byte for byte" cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl"
out=$("$CAIRN" --db "$TMP/b.db" sync --pull --server "$ALICE" 2>&1)
contains "then nothing is left to pull" "$out" "pulled 0 messages"

# 4. a writer that commits late is not skipped: alice's push from one
# machine holds its transaction open (a trigger slows its rows), her push
# from another commits after it began and before it ends, and a pull in
# between reads only the second. A cursor moved to the newest transaction
# read would then pass over the first for good; the next pull must get it.
python3 - "$TMP/late.jsonl" "$TMP/quick.jsonl" <<'PY'
import json, sys
for path, name in ((sys.argv[1], "late"), (sys.argv[2], "quick")):
    with open(path, "w") as f:
        for s in range(5):
            f.write(json.dumps({"id": "%s%d" % (name, s), "project": "race", "messages": [
                {"role": "user" if i % 2 == 0 else "assistant",
                 "content": "%s turn %d of session %d" % (name, i, s)} for i in range(10)]}) + "\n")
PY
"$CAIRN" --db "$TMP/late.db" add -q "$TMP/late.jsonl"
"$CAIRN" --db "$TMP/quick.db" add -q "$TMP/quick.jsonl"
adm "CREATE FUNCTION public.t_late() RETURNS trigger LANGUAGE plpgsql AS
     \$\$ BEGIN IF NEW.sid LIKE 'late%' THEN PERFORM pg_sleep(0.08); END IF; RETURN NEW; END \$\$;
     CREATE TRIGGER t_late BEFORE INSERT ON cairn.messages FOR EACH ROW EXECUTE FUNCTION public.t_late();" >/dev/null
"$CAIRN" --db "$TMP/late.db" sync --push --batch 1000 -q --server "$ALICE" 2>"$TMP/late.err" &
pid=$!
# until the late push's transaction holds a row (it is then running)
k=0
while [ "$(adm "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid) WHERE a.usename = 'alice' AND l.locktype = 'transactionid'")" -eq 0 ] && [ $k -lt 200 ]; do
    sleep 0.05; k=$((k + 1))
done
"$CAIRN" --db "$TMP/quick.db" sync --push -q --server "$ALICE"
out=$("$CAIRN" --db "$TMP/c.db" sync --pull --server "$ALICE" 2>&1)
still=$(kill -0 $pid 2>/dev/null && echo running || echo done)
wait $pid
check "the late push succeeds: $(cat "$TMP/late.err")" test $? -eq 0
if [ "$still" != running ]; then
    t_skip "the late push ended before the pull (a slow machine)"
else
    contains "the pull in between reads the quick sessions only" "$out" "pulled 350 messages in 35 sessions"
fi
out=$("$CAIRN" --db "$TMP/c.db" sync --pull --server "$ALICE" 2>&1)
contains "the next pull gets the late sessions" "$out" "pulled 50 messages in 5 sessions"
eq "every message once" "$(local_n "$TMP/c.db")" 400
t_done
