#!/bin/sh
# t0215-recall-agent-steps: an agent's long run of replies after one prompt
# (Claude Code writes a message per step) is ranked step by step, so a
# small budget shows the step that holds the question's word rather than
# the prompt that started the run (issue 15). A made-up session, then the
# real Claude Code session of ../shared/data (one prompt, 107 replies,
# "propagator" in 7 of them) when it is there.
. "$(dirname "$0")/lib.sh"
export TZ=UTC CAIRN_DB="$TMP/s.db"

# one prompt, twelve replies; only the ninth names the word
python3 - > "$TMP/agent.jsonl" <<'PY'
import json
msgs = [{"id": "0", "role": "user", "content": "continue the implementation of the tracing setup"}]
for i in range(1, 13):
    text = "Step %d: reading the next module and running the tests again, all green so far." % i
    if i == 9:
        text = "The exporter needs a quokkafier registered before the tracer starts; adding it now."
    msgs.append({"id": str(i), "role": "assistant", "content": text})
print(json.dumps({"id": "agent", "source": "claude-code", "started_at": "2026-02-12T14:11:00",
                  "messages": msgs}))
PY
"$CAIRN" add "$TMP/agent.jsonl" >/dev/null 2>&1
eq "session added" $? 0
out=$("$CAIRN" recall quokkafier --budget 120 --json)
contains "the matching step comes back at 120 tokens" "$out" '"message":"9"'
out=$("$CAIRN" recall quokkafier --budget 120)
contains "its text is in the packed text" "$out" "needs a quokkafier registered"

S="$ROOT/../shared/data/transcripts/claude-code/marot-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
if [ -f "$S" ]; then
    export CAIRN_DB="$TMP/real.db"
    "$CAIRN" import claude-code "$S" >/dev/null 2>&1
    eq "real session imported" $? 0
    for b in 300 1000; do
        out=$("$CAIRN" recall propagator --budget $b)
        contains "real session: recall propagator --budget $b shows a step holding it" "$out" \
            "propagator"
    done
else
    t_skip "../shared/data transcripts missing: the real Claude Code session not checked"
fi
t_done
