#!/bin/sh
# t0202-capture-kill: an import killed with SIGKILL at random points (50
# trials) never leaves a partial session, and running it again completes
# it. The fixture is a folder of small transcripts (one session each, 9
# messages) made from tests/data/capture/cc-replay.jsonl.
. "$(dirname "$0")/lib.sh"
D="$ROOT/tests/data/capture"
N=${KILL_SESSIONS:-120}
TRIALS=${KILL_TRIALS:-50}
P="$TMP/projects/-p"
mkdir -p "$P"
i=1
while [ "$i" -le "$N" ]; do
    sed "s/replay-1/kill-$i/g" "$D/cc-replay.jsonl" > "$P/kill-$i.jsonl"
    i=$((i + 1))
done
# how long one full import takes, to spread the kills over it (ms)
t0=$(date +%s%N)
CAIRN_DB="$TMP/full.db" "$CAIRN" import claude-code -q "$TMP/projects"
t1=$(date +%s%N)
span=$(( (t1 - t0) / 1000000 ))
[ "$span" -ge 5 ] || span=5
CAIRN_DB="$TMP/full.db" "$CAIRN" export --format jsonl > "$TMP/full.jsonl"

# whole: every stored session has all its 9 messages
whole() {
    CAIRN_DB="$1" "$CAIRN" sessions --json > "$TMP/sess.json" 2>/dev/null || return 0
    ! grep -v '"messages":9}' "$TMP/sess.json" | grep -q .
}

t=1 partial=0 incomplete=0 killed_mid=0
while [ "$t" -le "$TRIALS" ]; do
    rm -f "$TMP/k.db" "$TMP/k.db-wal" "$TMP/k.db-shm"
    # half the trials start from a store that already has some sessions
    if [ $((t % 2)) -eq 0 ]; then
        CAIRN_DB="$TMP/k.db" "$CAIRN" import claude-code -q "$P/kill-1.jsonl"
    fi
    CAIRN_DB="$TMP/k.db" "$CAIRN" import claude-code -q "$TMP/projects" &
    pid=$!
    ms=$(awk -v s="$t" -v span="$span" 'BEGIN { srand(s * 7919); printf "%d", rand() * span }')
    sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
    # A kill that comes after the import ended tests nothing: on a loaded
    # machine the timing import can be slower than the later ones, so each
    # miss narrows the window the kills are spread over.
    if kill -9 "$pid" 2>/dev/null; then
        killed_mid=$((killed_mid + 1))
    else
        span=$(( span * 2 / 3 )); [ "$span" -ge 5 ] || span=5
    fi
    wait "$pid" 2>/dev/null
    whole "$TMP/k.db" || partial=$((partial + 1))
    CAIRN_DB="$TMP/k.db" "$CAIRN" import claude-code -q "$TMP/projects"
    CAIRN_DB="$TMP/k.db" "$CAIRN" export --format jsonl > "$TMP/k.jsonl"
    cmp -s "$TMP/k.jsonl" "$TMP/full.jsonl" || incomplete=$((incomplete + 1))
    t=$((t + 1))
done
eq "no partial session after SIGKILL" "$partial" 0
eq "a rerun completes the import" "$incomplete" 0
check "most kills landed mid-import ($killed_mid of $TRIALS)" [ "$killed_mid" -ge $((TRIALS / 2)) ]
t_done
