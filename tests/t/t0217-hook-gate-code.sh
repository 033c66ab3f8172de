#!/bin/sh
# t0217-hook-gate-code: the prompt hook on a coding history. A question
# about an earlier fix that names the error ("how did we fix the
# ECONNRESET error last week?") fires and injects the assistant reply that
# holds the fix; the gate once refused it, the error's name being a single
# rare term ("only common words are shared"). A question with only the
# history's common words (error, fix, tests) still does not fire.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null 2>&1 || t_skip_all "no python3"
python3 "$ROOT/tests/tools/coding_store.py" | "$CAIRN" add - >/dev/null

ask() {  # session prompt -> stdout of the hook (input from a file: see t0204)
    python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1],"prompt":sys.argv[2],"cwd":"/tmp","hook_event_name":"UserPromptSubmit"}))' "$1" "$2" \
        > "$TMP/ask.json" && "$CAIRN" hook prompt < "$TMP/ask.json"
}
ctx() { python3 -c 'import json,sys; d=sys.stdin.read(); print(json.loads(d)["hookSpecificOutput"]["additionalContext"] if d.strip() else "")'; }
why() { tail -1 "$HOME/.cairn/inject.jsonl" | python3 -c 'import json,sys; print(json.load(sys.stdin)["why"])'; }

out=$(ask a "how did we fix the ECONNRESET error last week?" | ctx)
contains "the fix question fires and injects the reply with the fix" "$out" "create the agent with keepAlive: false"
eq "why it fired" "$(why)" "strong match on distinctive words"
out=$(ask b "what did we do about ECONNRESET?" | ctx)
contains "the error's name alone is enough" "$out" "keepAlive: false"
out=$(ask c "what did we change about keepAlive last week?" | ctx)
contains "a camelCase name counts as code too" "$out" "keepAlive: false"
eq "common words only: nothing" "$(ask d 'how did we fix the error in the tests last week?')" ""
eq "why not" "$(why)" "weak match: only common words are shared"
eq "a common word in capitals stays common (a low IDF, doubled)" "$(ask e 'how did we fix the ERROR in the TESTS?')" ""
t_done
