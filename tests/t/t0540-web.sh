#!/bin/sh
# t0540-web: `cairn web` black-box (docs/WEB.md): the guard (token, Host,
# Origin, no CORS), the caps (query, URL, body, connections), every JSON
# endpoint on hostile and Chinese content, a 400-turn session and a 1 MB
# message, memories edited and deleted, and a forgotten session absent
# from every endpoint and from recall. Driven by tests/web/web_api.py
# over real HTTP on the loopback; needs only python3.
. "$(dirname "$0")/lib.sh"

python3 "$ROOT/tests/web/web_fixture.py" "$TMP/in.jsonl"
"$CAIRN" add -q "$TMP/in.jsonl" || bad "add the fixture"
"$CAIRN" remember "prefers <b>tabs</b>" > /dev/null || bad "remember"
# The prompt hook's log: one decision that fired, one with a hostile reason.
export CAIRN_INJECT_LOG="$TMP/inject.jsonl"
printf '%s\n' '{"at":"2024-03-02T10:00:00Z","session":"cc-1","prompt_chars":40,"fired":false,"why":"<script>window.__pwned=4</script>","ms":3.1}' \
    'not json' \
    '{"at":"2024-03-03T10:00:00Z","session":"cc-1","prompt_chars":52,"fired":true,"why":"strong match","match":0.9,"match_weight":2.1,"items":2,"tokens":120,"dense":"off","ms":4.2}' \
    > "$CAIRN_INJECT_LOG"

"$CAIRN" web --port 0 > "$TMP/url" 2> "$TMP/web.err" &
pid=$!
i=0
while [ ! -s "$TMP/url" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
url=$(head -1 "$TMP/url")
case "$url" in
    http://127.0.0.1:*/????????????????????????????????/) ok ;;
    *) bad "cairn web printed no address: $url $(cat "$TMP/web.err")" ;;
esac
if [ -n "$url" ]; then
    python3 "$ROOT/tests/web/web_api.py" "$url" "$CAIRN_DB" "$CAIRN" > "$TMP/api.out" 2>&1
    sed -n 's/^FAIL: //p' "$TMP/api.out" | while read -r line; do echo "FAIL: $line" >&2; done
    p=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' "$TMP/api.out")
    f=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' "$TMP/api.out")
    [ -n "$p" ] || { bad "web_api.py ended without its counts: $(tail -5 "$TMP/api.out")"; p=0; f=0; }
    T_PASS=$((T_PASS + p)); T_FAIL=$((T_FAIL + f))
fi

# Two servers at once get two tokens; a busy port is said.
"$CAIRN" web --port 0 > "$TMP/url2" 2>/dev/null &
pid2=$!
i=0
while [ ! -s "$TMP/url2" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
url2=$(head -1 "$TMP/url2")
t1=$(echo "$url" | cut -d/ -f4)
t2=$(echo "$url2" | cut -d/ -f4)
check "each run has its own token ($t1, $t2)" test -n "$t2" -a "$t1" != "$t2"
port=$(echo "$url" | sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|')
"$CAIRN" web --port "$port" > /dev/null 2> "$TMP/busy.err" &
pid3=$!
sleep 0.5
if kill -0 $pid3 2>/dev/null; then bad "a second server on a busy port started"; kill $pid3; else ok; fi
contains "a busy port is said" "$(cat "$TMP/busy.err")" "cannot listen"
"$CAIRN" web --port 70000 2> "$TMP/usage.err"
eq "a bad port is a usage error" "$?" 2

kill $pid $pid2 2>/dev/null
wait $pid 2>/dev/null
eq "Ctrl-C (SIGTERM) stops it cleanly" "$?" 0
t_done
