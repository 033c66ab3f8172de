#!/bin/sh
# t0218-recall-first-last: a question about the first or the last time
# ("what was the very first websocket error we hit?", "what did we last
# decide...") gets the earliest (latest) of the turns about its topic,
# where the words alone tie them all and the most recent would come first
# (issue 15/16; query.c's query_ordinal, rank.c's order_boost). A made-up
# store of twelve days that each hit a websocket error.
. "$(dirname "$0")/lib.sh"
export TZ=UTC CAIRN_DB="$TMP/s.db"

python3 - > "$TMP/s.jsonl" <<'PY'
import json
for i in range(12):
    # the first and the last day say it once, the others three times: the
    # words alone put both ends last
    said = "the websocket error again" if i in (0, 11) else \
        "the websocket error again, the websocket error, that websocket error"
    msgs = [{"id": "1", "role": "user",
             "content": "%s: error code WSCODE%d, can you look?" % (said, 4100 + i)},
            {"id": "2", "role": "assistant", "content": "Looking at the logs now."}]
    print(json.dumps({"id": "s%d" % i, "source": "claude-code",
                      "started_at": "2026-03-%02dT10:00:00" % (i + 1), "messages": msgs}))
PY
"$CAIRN" add "$TMP/s.jsonl" >/dev/null 2>&1
eq "store added" $? 0
# the code of the unit ranked first (--explain: "sN #1 user: rank 1, ...")
top() {
    s=$("$CAIRN" recall "$1" --budget 1000 --now 2026-03-20 --explain 2>&1 |
        sed -n 's/^s\([0-9]*\) #1 user: rank 1,.*/\1/p' | head -1)
    [ -n "$s" ] && echo "WSCODE$((4100 + s))"
}
eq "the very first error comes first" "$(top 'What was the very first websocket error we hit?')" WSCODE4100
eq "the first time, another phrasing" "$(top 'When did the websocket error happen the first time?')" WSCODE4100
eq "the last time comes first" "$(top 'When was the last time we had the websocket error?')" WSCODE4111
eq "the most recent one" "$(top 'What was the most recent websocket error?')" WSCODE4111
# no cue: the words put both ends last, so the checks above fail without it
for q in 'Which websocket error did we hit?' 'Is the websocket error a first-class error?' \
         'At last, what was the websocket error?'; do
    t=$(top "$q")
    if [ -n "$t" ] && [ "$t" != WSCODE4100 ] && [ "$t" != WSCODE4111 ]; then
        ok
    else
        bad "no cue, yet an end first or nothing: $q ($t)"
    fi
done
t_done
