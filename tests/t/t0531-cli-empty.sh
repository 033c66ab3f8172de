#!/bin/sh
# t0531-cli-empty: a command that finds nothing says so on stderr and exits
# with the code a script can rely on (README "Exit codes"): 0 ok, 1 failed
# (no such session, no store), 2 bad usage, 3 nothing found. Before this,
# `show S --from 5 --to 2`, `show S --from 100`, `recall <no match>` and
# `sessions --project <none>` printed nothing and exited 0, and `export
# --session <none>` printed its header on stdout before the error.
. "$(dirname "$0")/lib.sh"
# run NAME ARGS...: the command's stdout, stderr and exit code in $out, $err, $rc
run() { n=$1; shift; out=$("$CAIRN" "$@" 2>"$TMP/err"); rc=$?; err=$(cat "$TMP/err"); }

# no store yet (a fresh HOME): a failure, with what makes one
run nostore sessions
eq "sessions, no store: exit 1" "$rc" 1
eq "sessions, no store: no stdout" "$out" ""
contains "sessions, no store: says what creates it" "$err" "(cairn add or cairn import creates it)"

# an empty store: every search says the store is empty
"$CAIRN" add - </dev/null 2>/dev/null
run empty recall "anything at all"
eq "recall, empty store: exit 3" "$rc" 3
eq "recall, empty store: no stdout" "$out" ""
contains "recall, empty store: says so" "$err" "no session yet"
run empty sessions
eq "sessions, empty store: exit 3" "$rc" 3
contains "sessions, empty store: says so" "$err" "no session yet"
run empty export
eq "export, empty store: exit 3" "$rc" 3
eq "export, empty store: no stdout" "$out" ""

# five made-up sessions, more than a small budget holds
python3 - "$TMP/s.jsonl" <<'PY'
import json, sys
words = "harbour lantern copper meadow violet quarry ribbon saddle thimble walnut".split()
with open(sys.argv[1], "w") as f:
    for s in range(5):
        msgs = [{"role": "user" if i % 2 == 0 else "assistant",
                 "content": " ".join(words[(s + i + k) % 10] for k in range(40))}
                for i in range(4)]
        f.write(json.dumps({"id": "s%d" % (s + 1), "project": "alpha" if s < 3 else "beta",
                            "started_at": "2026-01-0%dT10:00:00" % (s + 1), "messages": msgs}) + "\n")
PY
"$CAIRN" add -q "$TMP/s.jsonl"

run show show s1 --from 5 --to 2
eq "show --from 5 --to 2: exit 2 (bad usage)" "$rc" 2
eq "show --from 5 --to 2: no stdout" "$out" ""
contains "show --from 5 --to 2: says why" "$err" "--from 5 is after --to 2"
run show show s1 --from 100
eq "show --from 100: exit 3" "$rc" 3
eq "show --from 100: no stdout" "$out" ""
contains "show --from 100: says what the session has" "$err" "has 4 messages (positions 0 to 3)"
run show show s1 --from -1
eq "show --from -1: exit 2" "$rc" 2
run show show s1 --from 3
eq "show --from 3 (the last): exit 0" "$rc" 0
contains "show --from 3: the last message" "$out" "[3] assistant"
run show show nope
eq "show of no such session: exit 1" "$rc" 1
eq "show of no such session: no stdout" "$out" ""

run recall recall nothing-matches-xyzzy --budget 100
eq "recall, no match: exit 3" "$rc" 3
eq "recall, no match: no stdout" "$out" ""
contains "recall, no match: says so" "$err" "nothing matches the question"
run recall recall nothing-matches-xyzzy --budget 100 --json
eq "recall --json, no match: exit 3" "$rc" 3
contains "recall --json, no match: still the JSON" "$out" '"items":[]'
run recall recall harbour --budget 100 --project nonexistent
eq "recall --project nonexistent: exit 3" "$rc" 3
contains "recall --project nonexistent: names it" "$err" 'no session in project "nonexistent"'
run recall recall harbour --budget 100
eq "recall with a match: exit 0" "$rc" 0
contains "recall with a match: the text" "$out" "harbour"
# a store that fits the budget is returned whole even when nothing
# matches: exit 0, with a note that nothing matched
run recall recall nothing-matches-xyzzy --budget 20000
eq "recall, no match, store fits: exit 0" "$rc" 0
contains "recall, no match, store fits: the store" "$out" "harbour"
contains "recall, no match, store fits: a note" "$err" "nothing matches the question"

run sessions sessions --project nonexistent
eq "sessions --project nonexistent: exit 3" "$rc" 3
eq "sessions --project nonexistent: no stdout" "$out" ""
contains "sessions --project nonexistent: names it" "$err" 'no session in project "nonexistent"'
run sessions sessions --project beta
eq "sessions --project beta: exit 0" "$rc" 0

for f in markdown jsonl; do
    run export export --session nope --format $f
    eq "export --session nope ($f): exit 1" "$rc" 1
    eq "export --session nope ($f): nothing on stdout" "$out" ""
    contains "export --session nope ($f): says why" "$err" 'no session "nope"'
done
run export export --project nonexistent
eq "export --project nonexistent: exit 3" "$rc" 3
eq "export --project nonexistent: no stdout" "$out" ""
run export export --session s2
eq "export --session s2: exit 0" "$rc" 0
contains "export --session s2: the session" "$out" "session: \`s2\`"
# no model installed (a fresh HOME): said once, not "no embedding model: no embedding model"
err=$(CAIRN_EMBED_MODEL= CAIRN_MODEL_DIR="$TMP/no-models" "$CAIRN" reindex 2>&1)
contains "reindex without a model: what to do" "$err" "no embedding model installed (run \`cairn model pull\`"
lacks "reindex without a model: said once" "$err" "no embedding model: no embedding model"
t_done
