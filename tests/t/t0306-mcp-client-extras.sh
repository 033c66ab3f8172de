#!/bin/sh
# t0306-mcp-client-extras: arguments a tool's schema does not name are
# ignored, as Gemini CLI sends `wait_for_previous` with every call (issue
# 17); a named argument of the wrong type is still an error. Every tool is
# called with the extra, top level and inside a message. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
out=$(python3 - "$CAIRN" <<'PY'
import sys
from mcp_client import Mcp
W = {"wait_for_previous": True}
with Mcp(sys.argv[1], name="t0306", client_name="gemini-cli-mcp-client") as m:
    calls = [
        ("save_conversation", dict(W, session_id="g1", title="Gemini extras",
          messages=[{"role": "user", "content": "the quokka password is tangerine", "x": 1}])),
        ("recall", dict(W, query="quokka password")),
        ("list_sessions", dict(W)),
        ("get_conversation", dict(W, session_id="g1")),
        ("forget_session", dict(W, session_id="g1")),
    ]
    for name, args in calls:
        err, text = m.call(name, args)
        print("%s %s %s" % (name, "ERR" if err else "OK", text.replace("\n", " ")[:600]))
    err, text = m.call("recall", {"query": "x", "budget_tokens": "lots", "wait_for_previous": True})
    print("badtype %s %s" % ("ERR" if err else "OK", text[:120]))
PY
)
for t in save_conversation recall list_sessions get_conversation forget_session; do
    contains "$t with wait_for_previous succeeds" "$out" "$t OK"
done
contains "recall finds what was saved" "$(echo "$out" | grep '^recall')" "tangerine"
contains "a named argument of the wrong type is still an error" "$(echo "$out" | grep "^badtype ERR")" \
    "\"budget_tokens\" must be an integer, not a string"
t_done
