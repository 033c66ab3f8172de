#!/bin/sh
# t0227-reindex-tiers: `cairn reindex --tiers` builds the term tiers (issue
# 23, schema 22): a word in 1,000 messages or more gets its best sessions'
# matches, which the pruned recall (--fast, the prompt hook) reads; a
# small store gets none; CAIRN_RECALL_TIER=0 walks as before, and with
# every session in the tier both ways answer alike; a bad flag is a usage
# error. (tests/unit/test_tier.c checks the pools themselves.)
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
python3 - "$TMP/s.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(40):
        msgs = [{"role": "user" if k % 2 == 0 else "assistant",
                 "content": "fix " * (1 + (s + k) % 3) + "word%d other%d" % (k, s)}
                for k in range(30)]
        f.write(json.dumps({"id": "s%d" % s, "messages": msgs}) + "\n")
PY
"$CAIRN" add -q "$TMP/s.jsonl"
out=$("$CAIRN" reindex --tiers 2>&1)
eq "reindex --tiers: exit 0" "$?" 0
contains "reindex --tiers: fix is common (1,200 messages)" "$out" "1 common word, 1200 rows"
a=$(CAIRN_RECALL_PRUNE_MSGS=10 "$CAIRN" recall --fast "fix" --budget 300 --json)
b=$(CAIRN_RECALL_TIER=0 CAIRN_RECALL_PRUNE_MSGS=10 "$CAIRN" recall --fast "fix" --budget 300 --json)
eq "every session in the tier: the tier's answer is the walk's" "$a" "$b"
contains "the answer has items" "$a" '"session"'
out=$("$CAIRN" reindex --tiers --events 2>&1)
eq "reindex --tiers --events: usage error" "$?" 2
t_done
