#!/bin/sh
# t0216-recall-reply-cue: a question about what the assistant said or did
# ("how did we fix...") gets the replies that match best, even when thirty
# user turns match as well as the one that led to the fix and user-first
# packing would spend the budget on them (issue 15; pack.c's reply lane,
# query.c's cues). A made-up store.
. "$(dirname "$0")/lib.sh"
export TZ=UTC CAIRN_DB="$TMP/s.db"

python3 - > "$TMP/s.jsonl" <<'PY'
import json
for i in range(30):
    msgs = [{"id": "1", "role": "user",
             "content": "the login test is flaky again on run %d, the login test fails at random, "
                        "can you look at the flaky login test?" % i},
            {"id": "2", "role": "assistant",
             "content": "Looking at it now. I re-ran the suite %d times and read the logs of each run."
                        % (i + 2)}]
    if i == 17:
        msgs[1]["content"] = ("Fixed it: the test raced the session cookie. I added await "
                              "page.waitForCookie('sid') before the assertion, so it no longer reads "
                              "the page before the server answers.")
    print(json.dumps({"id": "s%d" % i, "source": "claude-code",
                      "started_at": "2026-03-%02dT10:00:00" % (i % 28 + 1), "messages": msgs}))
PY
"$CAIRN" add "$TMP/s.jsonl" >/dev/null 2>&1
eq "store added" $? 0
for b in 300 1000 4000; do
    out=$("$CAIRN" recall "How did we fix the flaky login test?" --budget $b)
    contains "the fix comes back at $b tokens" "$out" "page.waitForCookie('sid')"
done
out=$("$CAIRN" recall "What did you find was wrong with the flaky login test?" --budget 300)
contains "another phrasing of the same question" "$out" "raced the session cookie"
# a question about what the user said keeps user-first packing: its turns
# fill a small budget
out=$("$CAIRN" recall "Which run did I say the flaky login test failed on?" --budget 300 --json)
n=$(printf %s "$out" | grep -o '"role":"user"' | wc -l)
check "user turns first for a question about what the user said ($n)" [ "$n" -ge 3 ]
t_done
