#!/bin/sh
# t0602-pg-faults: a sync cut short loses and duplicates nothing. A trigger
# the test installs slows each insert on the server (10 ms), so a push of
# 300 messages in batches of 20 is stopped part way: once by the server
# going down (pg_ctl stop -m immediate, a crash), once by its connection
# being killed (pg_terminate_backend). Each time the sync fails with a
# clear error, the server holds whole batches only (one transaction each),
# and the next sync completes: 300 messages once each, and a new store that
# pulls them equals the source byte for byte.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/tools/pg.sh"
export CAIRN_EMBED_MODEL=none
pg_start || t_skip_all "$PG_WHY"

adm() { pg_sql cairn_admin "$PG_ADMIN_PW" "$1"; }
adm "CREATE ROLE alice LOGIN PASSWORD 'alice-pw'" >/dev/null
"$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$(pg_url cairn_admin "$PG_ADMIN_PW")"
ALICE=$(pg_url alice alice-pw)
slow() {
    adm "CREATE OR REPLACE FUNCTION public.t_slow() RETURNS trigger LANGUAGE plpgsql AS
         \$\$ BEGIN PERFORM pg_sleep(0.01); RETURN NEW; END \$\$;
         CREATE TRIGGER t_slow BEFORE INSERT ON cairn.messages FOR EACH ROW EXECUTE FUNCTION public.t_slow();" >/dev/null
}
count() { adm "SELECT count(*) FROM cairn.messages"; }
# wait_rows N: until the server holds at least N messages (10 s at most)
wait_rows() {
    k=0
    while [ "$(count)" -lt "$1" ] && [ $k -lt 200 ]; do sleep 0.05; k=$((k + 1)); done
}

python3 - "$TMP/s.jsonl" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(30):
        f.write(json.dumps({"id": "f%d" % s, "project": "faults", "messages": [
            {"role": "user" if i % 2 == 0 else "assistant", "content": "turn %d of session %d" % (i, s)}
            for i in range(10)]}) + "\n")
EOF
"$CAIRN" --db "$TMP/a.db" add -q "$TMP/s.jsonl"
"$CAIRN" --db "$TMP/a.db" export --format jsonl > "$TMP/a.jsonl"

# 1. the server stops mid-push
slow
"$CAIRN" --db "$TMP/a.db" sync --push --batch 20 --server "$ALICE" >"$TMP/1.out" 2>"$TMP/1.err" &
pid=$!
wait_rows 40
pg_stop
wait $pid
rc=$?
check_fails "the sync cut off by the server's crash fails" test "$rc" -eq 0
err=$(cat "$TMP/1.err")
contains "with the server named" "$err" "server alice@"
lacks "without the password" "$err" "alice-pw"
check "the server comes back" pg_restart
n1=$(count)
check "part of it landed ($n1 of 300)" test "$n1" -ge 40 -a "$n1" -lt 300
eq "whole batches only" "$((n1 % 20))" 0

# 2. the connection is killed mid-push
"$CAIRN" --db "$TMP/a.db" sync --push --batch 20 --server "$ALICE" >"$TMP/2.out" 2>"$TMP/2.err" &
pid=$!
wait_rows $((n1 + 40))
adm "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'alice'" >/dev/null
wait $pid
rc=$?
n2=$(count)
if [ "$n2" -ge 300 ]; then
    t_skip "the push ended before its connection was killed"
else
    check_fails "a killed connection fails the sync" test "$rc" -eq 0
    contains "with the server named" "$(cat "$TMP/2.err")" "server alice@"
    eq "whole batches only" "$((n2 % 20))" 0
fi
check "more landed ($n1 then $n2)" test "$n2" -gt "$n1"

# 3. the next sync completes: nothing lost, nothing twice
adm "DROP TRIGGER t_slow ON cairn.messages" >/dev/null
out=$("$CAIRN" --db "$TMP/a.db" sync --push --server "$ALICE" 2>&1)
check "the next sync succeeds: $out" test $? -eq 0
eq "300 messages on the server" "$(count)" 300
eq "each once" "$(adm "SELECT count(DISTINCT (sid, mkey)) FROM cairn.messages")" 300
sent=$(printf '%s\n' "$out" | sed -n 's/^pushed \([0-9]*\) message.*(\([0-9]*\) already there).*/\1 \2/p')
eq "it sent what was missing" "${sent% *}" "$((300 - n2))"
check "and at most one batch again (${sent#* })" test "${sent#* }" -le 20
out=$("$CAIRN" --db "$TMP/a.db" sync --push --server "$ALICE" 2>&1)
contains "then nothing is left to push" "$out" "pushed 0 messages (0 already there), 0 new sessions"
out=$("$CAIRN" --db "$TMP/b.db" sync --pull --server "$ALICE" 2>&1)
contains "a new store pulls all 300" "$out" "pulled 300 messages in 30 sessions"
"$CAIRN" --db "$TMP/b.db" export --format jsonl > "$TMP/b.jsonl"
check "equal to the source byte for byte" cmp -s "$TMP/a.jsonl" "$TMP/b.jsonl"

# 4. a pull from a server that is down is a clear error, and the next pull
# after it is back adds nothing twice
pg_stop
out=$("$CAIRN" --db "$TMP/b.db" sync --pull --server "$ALICE" 2>&1)
check_fails "a pull from a stopped server fails" test $? -eq 0
contains "and says it cannot connect" "$out" "cannot connect"
check "the server comes back" pg_restart
out=$("$CAIRN" --db "$TMP/b.db" sync --pull --server "$ALICE" 2>&1)
contains "the next pull adds nothing twice" "$out" "pulled 0 messages"
t_done
