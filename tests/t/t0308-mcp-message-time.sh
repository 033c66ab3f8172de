#!/bin/sh
# t0308-mcp-message-time: messages saved over MCP without `at` show a time
# in get_conversation, not "undated" (issue 17): the time of the message
# before them, else the session's start (given as started_at, else the
# time of the save). Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none TZ=UTC
out=$(python3 - "$CAIRN" <<'PY'
import sys
from mcp_client import Mcp
U = lambda c, **k: dict(role="user", content=c, **k)
with Mcp(sys.argv[1], name="t0308") as m:
    m.call("save_conversation", {"session_id": "s1", "started_at": "2026-03-02T09:12:00Z",
        "messages": [U("first, no time"), U("second, timed", at="2026-03-02T10:40:00Z"),
                     U("third, no time")]})
    m.call("save_conversation", {"session_id": "s2", "messages": [U("no times at all")]})
    for sid in ("s1", "s2"):
        print(m.call("get_conversation", {"session_id": sid})[1])
    print(m.call("get_conversation", {"session_id": "s1", "from": 2})[1])
PY
)
contains "an undated first message shows the session's start" "$out" "[#0 · 2026-03-02 09:12 · user]"
contains "a timed message shows its own time" "$out" "[#1 · 2026-03-02 10:40 · user]"
contains "an undated message shows the time of the one before" "$out" "[#2 · 2026-03-02 10:40 · user]"
contains "a window from an undated message shows the session's start" "$out" \
    "[#2 · 2026-03-02 09:12 · user]"
lacks "no message is undated" "$out" "undated"
t_done
