#!/bin/sh
# t0205-hook-dense: `cairn hook prompt` with an embedding model (the tiny
# BERT in the repository): recall as the hook asks it is keyword-only
# unless CAIRN_INJECT_DENSE=1 (measured: docs/HYBRID.md), and every
# decision logs whether vectors took part; on a
# store big enough for the vector cache file, `cairn embed --backfill`
# writes STORE-vec (0600), hook processes use it, and `cairn forget`
# removes it at once.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL="$ROOT/tests/data/embed/tiny-bert"
LOG="$HOME/.cairn/inject.jsonl"
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null

# The hook input is a file written before the hook starts, as in t0204:
# the hook waits at most 3 s for stdin, and a python3 starting beside it
# in a pipe took longer than that under load (8 checks failed, 2026-12-01).
ask() {  # session prompt -> stdout of the hook
    python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1],"prompt":sys.argv[2],"cwd":"/tmp","hook_event_name":"UserPromptSubmit"}))' "$1" "$2" \
        > "$TMP/ask.json" && "$CAIRN" hook prompt < "$TMP/ask.json"
}
last_dense() { tail -1 "$LOG" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("dense", "-"))'; }

out=$(ask s1 "which climbing gym did I pick?")
contains "injects keyword-only by default" "$out" "LBC on Thursday"
eq "the default: no vectors" "$(last_dense)" off
export CAIRN_INJECT_DENSE=1
out=$(ask s2 "which climbing gym did I pick?")
contains "injects with the vectors" "$out" "LBC on Thursday"
eq "CAIRN_INJECT_DENSE=1: vectors" "$(last_dense)" on
CAIRN_INJECT_DENSE=0 ask s3 "which climbing gym did I pick?" >/dev/null
eq "CAIRN_INJECT_DENSE=0: keyword only" "$(last_dense)" off
check "a small store gets no cache file" [ ! -e "$CAIRN_DB-vec" ]

# 8,400 more messages: over the cache file's threshold (8,192 vectors), also
# after one session of 200 is forgotten
python3 -c '
import json
for s in range(42):
    print(json.dumps({"id": "bulk-%d" % s, "messages": [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": "note %d of batch %d about topic %d" % (i, s, (i * 7 + s) % 97)}
        for i in range(200)]}))' > "$TMP/bulk.jsonl"
"$CAIRN" add "$TMP/bulk.jsonl" >/dev/null
ask s4 "which climbing gym did I pick?" >/dev/null
eq "the hook used the vectors" "$(last_dense)" on
check "vectors written seconds ago: no cache file yet" [ ! -e "$CAIRN_DB-vec" ]
"$CAIRN" embed --backfill >/dev/null 2>&1
check "the backfill writes the cache file when done" [ -f "$CAIRN_DB-vec" ]
eq "cache file mode" "$(stat -c %a "$CAIRN_DB-vec")" 600
# and the sign sketches beside it, which the hook's two-stage scan reads
check "the backfill writes the sketch file" [ -f "$CAIRN_DB-vsk" ]
eq "sketch file mode" "$(stat -c %a "$CAIRN_DB-vsk")" 600
ino=$(stat -c %i "$CAIRN_DB-vec")
skino=$(stat -c %i "$CAIRN_DB-vsk")
out=$(CAIRN_RECALL_SKETCH=2000 ask s5 "which climbing gym did I pick?")
contains "a hook process using the file injects the same" "$out" "LBC on Thursday"
eq "it read the file, did not rewrite it" "$(stat -c %i "$CAIRN_DB-vec")" "$ino"
eq "it read the sketch file, did not rewrite it" "$(stat -c %i "$CAIRN_DB-vsk")" "$skino"
exact=$(CAIRN_RECALL_SKETCH=0 ask s5x "which climbing gym did I pick?")
all=$(CAIRN_RECALL_SKETCH=1000000 ask s5y "which climbing gym did I pick?")
eq "the two-stage scan with K = all injects what the exact scan does" "$all" "$exact"
# The question's encoder started before the store opens (cairn_prep, the
# default with the cache file there) or inside the recall: the same output
# and the same decision, for prompts that fire and one that does not.
for q in "which climbing gym did I pick?" "note 12 of batch 7 about topic 61" \
         "what colour is the sky on Mars at noon?"; do
    early=$(ask p1 "$q")
    d1=$(last_dense)
    late=$(CAIRN_INJECT_PREP=0 ask p2 "$q")
    eq "early encoder: the same output ($q)" "$early" "$late"
    eq "early encoder: vectors took part both times ($q)" "$d1 $(last_dense)" "on on"
done
check "the early encoder's prompt fires" [ -n "$(ask p3 "which climbing gym did I pick?")" ]
"$CAIRN" forget bulk-3 >/dev/null
check "forget removes the cache file" [ ! -e "$CAIRN_DB-vec" ]
check "forget removes the sketch file" [ ! -e "$CAIRN_DB-vsk" ]
out=$(ask s6 "which climbing gym did I pick?")
contains "still injects after forget" "$out" "LBC on Thursday"
"$CAIRN" embed --backfill >/dev/null 2>&1
check "a new file after the next backfill" [ -f "$CAIRN_DB-vec" ]
# one message, one vector: said in the singular
printf '%s\n' '{"id":"one","messages":[{"role":"user","content":"just one line"}]}' |
    CAIRN_DB="$TMP/one.db" CAIRN_EMBED_MODEL=none "$CAIRN" add - >/dev/null 2>&1
err=$(CAIRN_DB="$TMP/one.db" "$CAIRN" embed --backfill 2>&1 >/dev/null)
contains "backfill of one message: singular" "$err" "backfill: 1 message, 1 vector of"
t_done
