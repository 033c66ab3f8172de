#!/bin/sh
# t0237-recall-units: `cairn recall` by default (CAIRN_RECALL_UNITS on: the exact
# keyword recall ranked from the sessions' unit rows, a session's turns
# read when packing needs it; docs/ARCHITECTURE.md, "The exact recall over
# unit rows") answers as with CAIRN_RECALL_UNITS=0, byte for byte: a batch of questions
# (common and rare words, the assistant's replies, the first time, a date)
# at four budgets, with --explain, on a generated store, and one question
# asked again after a session grew and one lost a turn, and once more
# after an old session lost its replies. The variable goes
# through the CLI's one reader (cli/env.c) to the library's setting; the
# unit test test_recall_units checks that the rows' path is the one taken.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
python3 "$ROOT/bench/gen_data.py" ingest "$TMP/in.jsonl" --sessions 300 --messages 6000 --seed 5 \
    > /dev/null 2>&1
check "a generated store" "$CAIRN" add -q "$TMP/in.jsonl"
python3 - "$TMP/q.jsonl" <<'PY'
import json, sys
qs = ["what did we decide about the cache eviction policy", "how did we fix the flaky CI test",
      "the migration that failed on the staging database", "which flag makes the build reproducible",
      "the first time we talked about kubernetes", "socket timeout retry", "learning the guitar",
      "what did we decide in March 2023"]
with open(sys.argv[1], "w") as f:
    for i, q in enumerate(qs):
        f.write(json.dumps({"id": "q%d" % i, "query": q, "now": "2025-07-01T00:00:00Z",
                            "budgets": [300, 1000, 4000, 8000]}) + "\n")
PY
same() {
    CAIRN_RECALL_UNITS=0 "$CAIRN" recall --batch --json --explain < "$TMP/q.jsonl" > "$TMP/off" \
        2>/dev/null
    "$CAIRN" recall --batch --json --explain < "$TMP/q.jsonl" > "$TMP/on" 2>/dev/null
    check "$1: answers" test "$(wc -l < "$TMP/off")" -eq 32
    check "$1: some turns recalled" grep -q '"message"' "$TMP/off"
    check "$1: the same bytes as with CAIRN_RECALL_UNITS=0" cmp -s "$TMP/off" "$TMP/on"
}
same "a generated store"
# a session grows (its rows written again) and one loses a turn (its rows dropped)
python3 - "$TMP/in.jsonl" "$TMP/more.jsonl" <<'PY'
import json, sys
first = json.loads(open(sys.argv[1]).readline())
first["messages"].append({"role": "user", "content": "the cache eviction policy again"})
open(sys.argv[2], "w").write(json.dumps(first) + "\n")
PY
check "a session grown" "$CAIRN" add -q "$TMP/more.jsonl"
id=$(command -v sqlite3 > /dev/null &&
     sqlite3 "$CAIRN_DB" "SELECT max(id) FROM messages WHERE session = 7" 2>/dev/null)
if [ -n "$id" ]; then
    check "a session cut" sqlite3 "$CAIRN_DB" "DELETE FROM messages WHERE id = $id"
else
    t_skip "a session cut: no sqlite3 shell"
fi
same "after the changes"
# an old session (not the newest) left without a reply: the pool that
# holds it is known from its sizes before any unit row is read (gathered
# whole, as without the rows)
if command -v sqlite3 > /dev/null; then
    check "an old session without a reply" sqlite3 "$CAIRN_DB" \
        "DELETE FROM messages WHERE session = 20 AND role = 'assistant'"
    check "it has turns left, all a user's" test "$(sqlite3 "$CAIRN_DB" \
        "SELECT count(*) FROM session_stats WHERE session = 20 AND n > 0 AND nuser = n")" -eq 1
    same "with an old session without a reply"
else
    t_skip "an old session without a reply: no sqlite3 shell"
fi
t_done
