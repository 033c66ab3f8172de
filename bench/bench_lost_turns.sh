#!/bin/sh
# bench/bench_lost_turns.sh: how many SessionEnd hooks lose their session's last
# turn while a big `cairn add` holds the store's write lock (issue 12: 2 of
# 18 during a 50 MB add). Each hook is given a transcript none of whose
# turns are stored yet; after the add and every hook have ended, a session
# counts as saved when its last reply is in the store.
#   sh bench/bench_lost_turns.sh BINARY [MB] [HOOKS] [TURNS]  (defaults: 30, 18, 3000)
# TURNS is the turns of each added session: one session is one transaction,
# so it sets how long the add holds the lock at a time.
# Run it for main's binary and the branch's in one command to compare.
set -u
BIN=$1 MB=${2:-30} N=${3:-18} TURNS=${4:-3000}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CAIRN_DB="$TMP/m.db" HOME="$TMP/home" CAIRN_EMBED_MODEL=none
mkdir -p "$HOME"
python3 - "$TMP/big.jsonl" "$MB" "$TURNS" <<'PY'
import json, sys
path, mb, turns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
words = "reproducible build compiler archive timestamp gzip locale timezone debian".split()
with open(path, "w") as f:
    i = 0
    while f.tell() < mb << 20:
        msgs = [{"role": "user" if k % 2 == 0 else "assistant",
                 "content": " ".join(words[(i + k + j) % len(words)] + str(j % 97)
                                     for j in range(160))} for k in range(turns)]
        f.write(json.dumps({"id": "bulk-%d" % i, "messages": msgs}) + "\n")
        i += 1
PY
echo '{"id": "first", "messages": [{"role": "user", "content": "hello"}]}' | "$BIN" add - >/dev/null
t0=$(date +%s.%N)
"$BIN" add "$TMP/big.jsonl" >/dev/null 2>&1 &
addpid=$!
sleep 1
i=1
while [ "$i" -le "$N" ]; do
    sed "s/replay-1/replay-$i/g" "$ROOT/tests/data/capture/cc-replay.jsonl" > "$TMP/t$i.jsonl"
    printf '{"session_id":"replay-%d","transcript_path":"%s","cwd":"/tmp","hook_event_name":"SessionEnd"}' \
        "$i" "$TMP/t$i.jsonl" > "$TMP/in$i.json"
    "$BIN" hook session-end < "$TMP/in$i.json" &
    sleep 0.3
    i=$((i + 1))
done
running=$(kill -0 "$addpid" 2>/dev/null && echo yes || echo no)
wait
t1=$(date +%s.%N)
saved=0
i=1
while [ "$i" -le "$N" ]; do
    "$BIN" show "replay-$i" 2>/dev/null | grep -q dpkg-buildpackage && saved=$((saved + 1))
    i=$((i + 1))
done
locked=$(grep -c "locked" "$HOME/.cairn/cairn.log" 2>/dev/null || echo 0)
printf '%s: %s MB add (%.1f s; still running after the last hook: %s): %d hooks, %d found the store locked, %d last turns saved, %d lost\n' \
    "$BIN" "$MB" "$(echo "$t1 - $t0" | bc)" "$running" "$N" "$locked" "$saved" $((N - saved))
