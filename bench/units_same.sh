#!/bin/sh
# units_same.sh STORE [CAIRN] [DIR]: does the exact recall over unit rows
# (CAIRN_RECALL_UNITS=1, docs/ARCHITECTURE.md "The exact recall over unit
# rows") answer as the recall that loads every turn?
#
# `cairn recall --batch --json --explain` of 23 questions (common and rare
# words, the assistant's replies, a date, the first time, a birthday) x
# budgets 1000 and 8000, "now" fixed, exact and --fast, with the variable
# 0 and 1 (1: the default), the outputs compared byte for byte (the store is only read).
# Prints one line a mode; exit 0: the same, 1: a difference.
set -e
STORE=$1 CAIRN=${2:-build/cairn} D=${3:-/tmp/units_same}
[ -f "$STORE" ] && [ -x "$CAIRN" ] || { echo "usage: units_same.sh STORE [CAIRN] [DIR]" >&2; exit 2; }
mkdir -p "$D"
python3 - "$D/q.jsonl" <<'PY'
import json, sys
qs = ["what did we decide about the cache eviction policy", "how did we fix the flaky CI test",
      "the postgres migration that failed on the staging database",
      "why does the docker build take so long", "which python version do we use",
      "explain rust lifetimes again", "the typescript array bug", "what was the deadline last week",
      "when is my birthday", "yaml config error in the deploy job",
      "the first time we talked about kubernetes", "what did we decide in March 2023",
      "numpy performance tips", "the museum trip", "how do I bisect a regression",
      "socket timeout retry", "which json endpoint returns the users",
      "what is our squash merge policy", "gradient checkpointing in jupyter", "learning the guitar",
      "how did we fix the websocket reconnect bug", "which flag makes the build reproducible",
      "why was the retry loop removed"]
with open(sys.argv[1], "w") as f:
    for i, q in enumerate(qs):
        f.write(json.dumps({"id": "q%d" % i, "query": q, "now": "2025-07-01T00:00:00Z",
                            "budgets": [1000, 8000]}) + "\n")
PY
rc=0
for mode in exact fast; do
    flag=; [ $mode = fast ] && flag=--fast
    CAIRN_DB=$STORE CAIRN_EMBED_MODEL=none CAIRN_RECALL_UNITS=0 "$CAIRN" recall --batch --json \
        --explain $flag < "$D/q.jsonl" > "$D/off.$mode" 2>/dev/null
    CAIRN_DB=$STORE CAIRN_EMBED_MODEL=none CAIRN_RECALL_UNITS=1 "$CAIRN" recall --batch --json \
        --explain $flag < "$D/q.jsonl" > "$D/on.$mode" 2>/dev/null
    if cmp -s "$D/off.$mode" "$D/on.$mode"; then
        echo "$mode: the same, $(wc -l < "$D/on.$mode") answers"
    else
        echo "$mode: DIFFERENT ($D/off.$mode $D/on.$mode)"
        rc=1
    fi
done
exit $rc
