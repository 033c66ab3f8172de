#!/bin/sh
# t0225-add-stream: `cairn add` reads its input as a stream: sessions that
# straddle the reader's 64 KiB window, broken lines (a giant one too),
# hand-formatted and pretty-printed sessions, and memory that does not grow
# with the input (issue 23: a 655 MB file was read whole).
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
G="$TMP/gen.py"
cat > "$G" <<'PY'
import json, sys
kind = sys.argv[1]
def s(i, text="hello", n=2):
    return {"id": "s%d" % i, "messages": [{"role": "user", "content": "%s %d" % (text, i)}] * n}
w = sys.stdout.write
if kind == "jsonl":        # 300 sessions, one of 200 KB in the middle
    for i in range(300):
        w(json.dumps(s(i, "x" * 200000 if i == 150 else "hello")) + "\n")
elif kind == "broken":     # line 5 cut short, line 9 a broken 300 KB line
    for i in range(12):
        t = json.dumps(s(i, "y" * 300000 if i == 8 else "hi"))
        w((t[:40] if i == 4 else t[:-2] if i == 8 else t) + "\n")
elif kind == "hand":       # one message a line, the session 150 KB long
    w('{"id":"h1","messages":[\n')
    w(",\n".join(json.dumps({"role": "user", "content": "z%d " % k + "z" * 30000}) for k in range(5)))
    w('\n]}\n' + json.dumps(s(99)) + "\n")
elif kind == "pretty":
    for i in range(3):
        w(json.dumps(s(i, "p" * 40000), indent=2) + "\n")
elif kind == "big":        # N MB of sessions of ~8 KB
    n = int(sys.argv[2]) * 128
    for i in range(n):
        w(json.dumps(s(i, "lorem ipsum dolor " * 220, 1)) + "\n")
PY

n_sessions() { "$CAIRN" stats --json | sed 's/.*"sessions":\([0-9]*\).*/\1/'; }

python3 "$G" jsonl | "$CAIRN" add - > "$TMP/o" 2> "$TMP/e"
eq "jsonl across the window: exit 0" "$?" 0
contains "jsonl: every session" "$(cat "$TMP/o")" "added 300 sessions"
eq "jsonl: the 200 KB message whole" "$("$CAIRN" show s150 --json | grep -o 'x*' | awk '{ if (length > m) m = length } END { print m }')" 200000

rm -f "$CAIRN_DB"
python3 "$G" broken > "$TMP/broken.jsonl"
"$CAIRN" add "$TMP/broken.jsonl" > "$TMP/o" 2> "$TMP/e"
eq "broken lines: exit 1" "$?" 1
contains "broken: line 5 named" "$(cat "$TMP/e")" "broken.jsonl:5:40: malformed JSON"
contains "broken: the giant line 9 named" "$(cat "$TMP/e")" "broken.jsonl:9:"
contains "broken: the other 10 land" "$(cat "$TMP/o")" "added 10 sessions"
eq "broken: two errors" "$(grep -c malformed "$TMP/e")" 2

rm -f "$CAIRN_DB"
python3 "$G" hand | "$CAIRN" add - > "$TMP/o" 2> "$TMP/e"
eq "hand-formatted 150 KB session: exit 0" "$?" 0
contains "hand-formatted: both sessions" "$(cat "$TMP/o")" "added 2 sessions (0 updated), 7 messages"

rm -f "$CAIRN_DB"
python3 "$G" pretty | "$CAIRN" add - > "$TMP/o" 2> "$TMP/e"
contains "pretty-printed across the window" "$(cat "$TMP/o")" "added 3 sessions"
eq "pretty: no error" "$(cat "$TMP/e")" ""

# Memory: adding 16 MB costs no more than adding 1 MB, give or take the
# store's page cache (the reader used to hold the whole input).
rss() {
    rm -f "$CAIRN_DB"
    python3 "$G" big "$1" > "$TMP/big.jsonl"
    python3 -c '
import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$CAIRN" add "$TMP/big.jsonl"
}
if t_sanitized; then
    # the peak RSS of a sanitizer build measures its quarantine, not the reader
    t_skip "peak memory: a sanitizer build (its quarantine holds freed memory)"
else
    small=$(rss 1)
    big=$(rss 16)
    eq "16 MB added" "$(n_sessions)" 2048
    growth=$(( (big - small) / 1024 ))
    echo "peak RSS: ${small} KB for 1 MB, ${big} KB for 16 MB" >&2
    check "peak memory grows ${growth} MB for 15 MB more input (< 6)" [ "$growth" -lt 6 ]
fi
t_done
