#!/bin/sh
# t0002-concurrency: four processes adding to one store at once finish
# with no error and no lost message.
. "$(dirname "$0")/lib.sh"
for w in 1 2 3 4; do
    i=0
    : > "$TMP/w$w.jsonl"
    while [ $i -lt 150 ]; do
        printf '{"id":"w%s-s%s","messages":[{"role":"user","content":"writer %s session %s first"},{"role":"assistant","content":"reply %s %s"}]}\n' \
            $w $i $w $i $w $i >> "$TMP/w$w.jsonl"
        i=$((i + 1))
    done
done
pids=""
for w in 1 2 3 4; do
    "$CAIRN" add -q "$TMP/w$w.jsonl" 2>"$TMP/err$w" &
    pids="$pids $!"
done
rcs=0
for p in $pids; do wait $p || rcs=$((rcs + 1)); done
eq "all four writers exit 0" "$rcs" 0
for w in 1 2 3 4; do
    eq "writer $w printed no error" "$(cat "$TMP/err$w")" ""
done
out=$("$CAIRN" stats --json)
contains "every session stored" "$out" '"sessions":600'
contains "every message stored" "$out" '"messages":1200'
t_done
