#!/bin/sh
# t0228-tiers-auto: term tiers built without a manual step and kept by the
# write paths (issue 23, schema 23). `cairn add` builds them after its
# commit once the store holds TIER_AUTO_MSGS (10,000) messages and none
# were built, and again when the store has doubled since; between builds
# an add keeps them (upto follows the newest message, the common word's
# df counts the new ones), so the fast recall walks no tail and answers
# as a fresh build does; CAIRN_TIER_KEEP=0 neither builds nor keeps, and
# `cairn doctor` says when they are due (a store that grew by hooks).
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
# sessions a..b-1 of 25 messages, "fix" in every one (1 to 3 times)
gen() {
    python3 - "$1" "$2" "$3" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for s in range(int(sys.argv[2]), int(sys.argv[3])):
        msgs = [{"role": "user" if k % 2 == 0 else "assistant",
                 "content": "fix " * (1 + (s + k) % 3) + "word%d other%d" % (k % 7, s % 50)}
                for k in range(25)]
        f.write(json.dumps({"id": "s%d" % s, "messages": msgs}) + "\n")
PY
}
q() { python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute(sys.argv[2]).fetchone()[0])' "$CAIRN_DB" "$1"; }
export CAIRN_DB="$TMP/a.db"
gen "$TMP/1.jsonl" 0 360       # 9,000 messages
gen "$TMP/2.jsonl" 360 400     # 1,000 more: 10,000
gen "$TMP/3.jsonl" 400 440     # 1,000 more, kept
out=$("$CAIRN" add "$TMP/1.jsonl" 2>&1)
lacks "9,000 messages: no build" "$out" "term tiers"
eq "9,000 messages: none built" "$(q 'SELECT upto FROM tier_state')" 0
out=$("$CAIRN" add "$TMP/2.jsonl" 2>&1)
eq "add at 10,000: exit 0" "$?" 0
contains "add at 10,000: builds and says so" "$out" "building the term tiers"
contains "add at 10,000: what it built (fix, word, word0-6)" "$out" "8 common words"
eq "built: the messages then" "$(q 'SELECT built FROM tier_state')" 10000
eq "built: upto" "$(q 'SELECT upto FROM tier_state')" 10000
out=$("$CAIRN" add "$TMP/3.jsonl" 2>&1)
lacks "11,000 < 2 x 10,000: no build" "$out" "term tiers"
eq "kept: upto is the newest message" "$(q 'SELECT upto FROM tier_state')" 11000
eq "kept: fix's df counts the new messages" "$(q "SELECT df FROM tier_terms WHERE term = 'fix'")" 11000
eq "kept: every session in the tier (fewer than TIER_SESS)" "$(q 'SELECT count(DISTINCT sess) FROM tier_post')" 440
kept=$(CAIRN_RECALL_PRUNE_MSGS=10 "$CAIRN" recall --fast "fix" --budget 300 --json)
"$CAIRN" reindex --tiers --quiet
fresh=$(CAIRN_RECALL_PRUNE_MSGS=10 "$CAIRN" recall --fast "fix" --budget 300 --json)
walk=$(CAIRN_RECALL_TIER=0 CAIRN_RECALL_PRUNE_MSGS=10 "$CAIRN" recall --fast "fix" --budget 300 --json)
eq "kept tiers answer as a fresh build" "$kept" "$fresh"
eq "and as the walk" "$kept" "$walk"
contains "the answer has items" "$kept" '"session"'
# doubled since the build: built again
gen "$TMP/4.jsonl" 440 900
out=$("$CAIRN" add "$TMP/4.jsonl" 2>&1)
contains "doubled: built again" "$out" "building the term tiers"
eq "doubled: built at 22,500" "$(q 'SELECT built FROM tier_state')" 22500
# CAIRN_TIER_KEEP=0: no build, no keeping
export CAIRN_DB="$TMP/b.db"
cat "$TMP/1.jsonl" "$TMP/2.jsonl" > "$TMP/12.jsonl"
out=$(CAIRN_TIER_KEEP=0 "$CAIRN" add "$TMP/12.jsonl" 2>&1)
lacks "CAIRN_TIER_KEEP=0: no build" "$out" "term tiers"
eq "CAIRN_TIER_KEEP=0: none built" "$(q 'SELECT upto FROM tier_state')" 0
out=$("$CAIRN" doctor 2>&1)
contains "doctor: due, says how to build" "$out" "term tiers the prompt hook reads are due"
"$CAIRN" reindex --tiers --quiet
out=$("$CAIRN" doctor 2>&1)
lacks "doctor: built, nothing to say" "$out" "term tiers"
out=$(CAIRN_TIER_KEEP=0 "$CAIRN" add "$TMP/3.jsonl" 2>&1)
eq "CAIRN_TIER_KEEP=0: the add leaves upto" "$(q 'SELECT upto FROM tier_state')" 10000
eq "CAIRN_TIER_KEEP=0: and df" "$(q "SELECT df FROM tier_terms WHERE term = 'fix'")" 10000
# `cairn import` builds them too: a ChatGPT export of 400 conversations x 26
export CAIRN_DB="$TMP/c.db"
python3 - "$TMP/gpt.json" <<'PY'
import json, sys
convs = []
for c in range(400):
    mapping, prev = {}, None
    for k in range(26):
        nid = "c%d-%d" % (c, k)
        mapping[nid] = {"id": nid, "parent": prev, "children": ["c%d-%d" % (c, k + 1)] if k < 25 else [],
                        "message": {"id": nid, "author": {"role": "user" if k % 2 == 0 else "assistant"},
                                    "create_time": 1760000000.0 + c * 100 + k,
                                    "content": {"content_type": "text",
                                                "parts": ["fix " * (1 + k % 3) + "part%d topic%d" % (k % 5, c % 40)]}}}
        prev = nid
    convs.append({"id": "g-%d" % c, "title": "t%d" % c, "create_time": 1760000000.0 + c * 100,
                  "current_node": prev, "mapping": mapping})
json.dump(convs, open(sys.argv[1], "w"))
PY
out=$("$CAIRN" import chatgpt "$TMP/gpt.json" 2>&1)
eq "import: exit 0" "$?" 0
contains "import past 10,000: builds and says so" "$out" "import: 10400 messages: building the term tiers"
eq "import: built at 10,400" "$(q 'SELECT built FROM tier_state')" 10400
t_done
