#!/bin/sh
# t0540-web: `cairn web` black-box (docs/WEB.md): the guard (token, Host,
# Origin, no CORS), the caps (query, URL, body, connections), every JSON
# endpoint on hostile and Chinese content, a 400-turn session and a 1 MB
# message, memories edited and deleted, and a forgotten session absent
# from every endpoint and from recall. Driven by tests/web/web_api.py
# over real HTTP on the loopback; needs only python3.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/web/lib.sh"

web_fixture
web_start a --port 0
pid=$web_pid url=$web_url
case "$url" in
    http://127.0.0.1:*/????????????????????????????????/) ok ;;
    *) bad "cairn web printed no address: $url $(cat "$TMP/a.err")" ;;
esac
if [ -n "$url" ]; then
    python3 "$ROOT/tests/web/web_api.py" "$url" "$CAIRN_DB" "$CAIRN" > "$TMP/api.out" 2>&1
    web_counts "$TMP/api.out"
fi

# Two servers at once get two tokens; a busy port is said.
web_start b
pid2=$web_pid
t1=$(echo "$url" | cut -d/ -f4)
t2=$(echo "$web_url" | cut -d/ -f4)
check "each run has its own token ($t1, $t2)" test -n "$t2" -a "$t1" != "$t2"
port=$(echo "$url" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
"$CAIRN" web --port "$port" > /dev/null 2> "$TMP/busy.err" &
pid3=$!
i=0
while kill -0 $pid3 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $pid3 2>/dev/null; then bad "a second server on a busy port started"; kill $pid3; else ok; fi
contains "a busy port is said" "$(cat "$TMP/busy.err")" "cannot listen"
"$CAIRN" web --port 70000 2> "$TMP/usage.err"
eq "a bad port is a usage error" "$?" 2

kill $pid $pid2 2>/dev/null
wait $pid 2>/dev/null
eq "SIGTERM stops it cleanly" "$?" 0
t_done
