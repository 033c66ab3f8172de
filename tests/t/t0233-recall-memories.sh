#!/bin/sh
# t0233-recall-memories: `cairn recall` with explicit memories
# (docs/MEMORIES.md): a memory that matches comes first, marked with its id,
# type and date, inside the budget, in --json (memory, memory_type) and
# --explain; an unrelated question gets none; contradicting memories come
# together, each flagged; a superseded one never; a project's question sees
# its memories and the global ones, not another project's; the prompt hook
# injects a memory inside the fence, once. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null
NOW=--now=2026-05-10T12:00:00

before=$("$CAIRN" recall "climbing gym" $NOW --budget 300)
"$CAIRN" remember --type preference "the tax office closes at noon" >/dev/null
eq "an unrelated memory changes nothing" "$("$CAIRN" recall "climbing gym" $NOW --budget 300)" "$before"

"$CAIRN" remember --type preference "bouldering at the climbing gym on Tuesdays only" >/dev/null
out=$("$CAIRN" recall "climbing gym" $NOW --budget 300)
case "$out" in
"[memory #2 · preference · "*"] bouldering at the climbing gym on Tuesdays only

["*) ok ;;
*) bad "the memory comes first, then a blank line and the conversations: $out" ;;
esac
contains "the conversations are still there" "$out" "LBC"
json=$("$CAIRN" recall "climbing gym" $NOW --budget 300 --json --explain)
r=$(printf '%s' "$json" | python3 -c '
import json, sys
o = json.load(sys.stdin)
it = o["items"][0]
print(o["tokens"] <= o["budget"], it["memory"], it["memory_type"], it["role"], it["session"],
      it["message"], it["contradicts"], "memory rank 1" in it["why"],
      all("memory" not in i for i in o["items"][1:]))')
eq "--json marks the memory item" "$r" "True 2 preference memory  memory:2 False True True"
out=$("$CAIRN" recall "climbing gym" $NOW --budget 300 --explain)
contains "--explain names the memory" "$out" "memory #2 preference: memory rank 1"

# a contradiction: both, flagged, whatever the second one's own score
"$CAIRN" remember --contradicts 2 "I gave up the gym in April" >/dev/null
out=$("$CAIRN" recall "climbing gym" $NOW --budget 300)
contains "the first is flagged" "$out" "· contradicts #3] bouldering at the climbing gym"
contains "the second comes with it, flagged" "$out" "· contradicts #2] I gave up the gym in April"

# supersede: only the replacement
"$CAIRN" remember --replaces 3 "I climb again since May, at the climbing gym" >/dev/null
out=$("$CAIRN" recall "climbing gym" $NOW --budget 300)
lacks "a superseded memory is never recalled" "$out" "gave up the gym"
contains "its replacement is" "$out" "I climb again since May"

# scope: a project's memories reach its questions only
"$CAIRN" remember --scope garden "the climbing rose needs a gym of trellis" >/dev/null
lacks "another project's memory is not recalled" "$("$CAIRN" recall "climbing gym" $NOW --project demo)" "trellis"
contains "the project's own memory is" "$("$CAIRN" recall "climbing gym" $NOW --project garden)" "trellis"
contains "a global one too" "$("$CAIRN" recall "climbing gym" $NOW --project garden)" "Tuesdays only"

# the budget holds with memories
for b in 50 80 150; do
    t=$("$CAIRN" recall "climbing gym" $NOW --budget $b --json |
        python3 -c 'import json,sys; o=json.load(sys.stdin); print(o["tokens"] <= o["budget"])')
    eq "budget $b holds" "$t" True
done

# the prompt hook: the memory inside the fence, and not again in the session
hook() {
    printf '{"session_id":"hs1","prompt":"%s","cwd":"/tmp","hook_event_name":"UserPromptSubmit"}' "$1" |
        "$CAIRN" hook prompt 2>/dev/null
}
out=$(hook "which climbing gym do I go to on Tuesdays?")
contains "the hook injects the memory" "$out" "Tuesdays only"
r=$(printf '%s' "$out" | python3 -c '
import json, sys
c = json.load(sys.stdin)["hookSpecificOutput"]["additionalContext"]
a, b = c.index("<past-conversations>"), c.index("</past-conversations>")
m = c.index("[memory #2 ")
print(a < m < b)')
eq "inside the fence" "$r" True
out=$(hook "the climbing gym on Tuesdays, again?")
lacks "not twice in one session" "$out" "Tuesdays only"
t_done
