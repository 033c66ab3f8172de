#!/bin/sh
# t0400-claude-code-e2e: the real Claude Code (npm @anthropic-ai/claude-code
# 2.1.332, headless `claude -p`) with the cairn plugin installed from this
# repo's marketplace, against a loopback mock of the Messages API, inside a
# private network namespace: nothing leaves the machine. Checks that
#   - the plugin validates and installs (marketplace "cairn", plugin cairn@cairn);
#   - the SessionStart hook lists the planted earlier session;
#   - the UserPromptSubmit hook injects the planted fact, fenced, into the
#     request the mock receives, and leaves an unrelated session out;
#   - the bundled MCP server offers its tools, the mock's `recall` call gets
#     a readable tool_result holding the planted fact;
#   - the Stop hook saves the new turn (snapshot taken right after it ran),
#     without re-saving the injected memory.
# See tests/e2e/README.md. Claude Code is installed once into
# $CAIRN_TEST_CLAUDE_DIR (default ~/.cache/cairn-test/claude-code). Without
# npm or the registry, without `unshare -n` (root or user namespaces) or a
# runnable binary, the test is a SKIP with its reason (CI fails on it:
# tests/must-run).
REAL_HOME=${HOME:-/tmp}
. "$(dirname "$0")/lib.sh"

VERSION=2.1.332
PKG=@anthropic-ai/claude-code@$VERSION
CC_DIR=${CAIRN_TEST_CLAUDE_DIR:-$REAL_HOME/.cache/cairn-test/claude-code}
E2E=$ROOT/tests/e2e
TOOL=mcp__plugin_cairn_cairn__recall
FACT="the staging database password rotation day is Thursday and the on-call alias is kestrel-ops"
OTHER="the coffee machine on floor three is descaled every Monday"
TITLE="Staging database maintenance"
PROMPT="Which day does the staging database password rotation happen, and who is kestrel-ops?"
QUERY="staging database password rotation kestrel-ops"
FINAL="Per your memory: the staging rotation day is recorded above. Done."

skip() { t_skip_all "$@"; }
now_ms() { python3 -c 'import time; print(int(time.time() * 1000))'; }

command -v python3 >/dev/null 2>&1 || skip "python3 (the mock Messages API) is not installed"
. "$E2E/lib.sh"
e2e_netns
e2e_claude_code
echo "npm install of $PKG: $npm_s"
e2e_world
python3 - "$D/plant.jsonl" "$FACT" "$OTHER" <<'EOF'
import json, sys
out, fact, other = sys.argv[1:4]
def session(sid, title, day, user, reply):
    return {"id": sid, "source": "e2e", "project": "e2e", "title": title,
            "started_at": day + "T14:00:00",
            "messages": [{"id": "1", "role": "user", "content": user, "at": day + "T14:00:00"},
                         {"id": "2", "role": "assistant", "content": reply, "at": day + "T14:00:20"}]}
with open(out, "w") as f:
    f.write(json.dumps(session("e2e-earlier-1", "Staging database maintenance", "2026-10-05",
                               "Note for later: " + fact + ".",
                               "Noted: staging DB password rotation happens on Thursday, "
                               "and kestrel-ops is the on-call alias to page.")) + "\n")
    f.write(json.dumps(session("e2e-earlier-2", "Office chores", "2026-10-06",
                               "Reminder: " + other + ".", "Noted, Mondays.")) + "\n")
EOF

t0=$(now_ms)
E2E_UNSHARE=$UNSHARE E2E_DIR=$D E2E_PATH=$D/bin E2E_CAIRN=$CAIRN E2E_CLAUDE=$CL E2E_REPO=$ROOT \
E2E_PROMPT=$PROMPT E2E_QUERY=$QUERY E2E_PLANT=$D/plant.jsonl \
    timeout 170 sh "$E2E/isolated.sh" sh "$E2E/inner.sh" >"$D/inner.out" 2>&1
rc=$?
run_ms=$(( $(now_ms) - t0 ))
eq "isolated run exits 0" "$rc" 0
echo "e2e run (validate, install, claude -p) took ${run_ms} ms; claude -p $(cat "$D/claude-p.seconds" 2>/dev/null) s"

# --- the plugin validates and installs from the repo's marketplace
for s in validate-mkt validate-plugin mkt-add install list add claude; do
    eq "step $s exits 0" "$(cat "$D/rc.$s" 2>/dev/null)" 0
done
contains "marketplace validates" "$(cat "$D/validate-mkt.out" 2>/dev/null)" "Validation passed"
out=$(cat "$D/validate-plugin.out" 2>/dev/null)
contains "plugin validates" "$out" "Validation passed"
contains "validator sees the MCP server" "$out" 'mcpServers: cairn stdio cairn ["mcp"]'
for ev in Stop UserPromptSubmit SessionStart SessionEnd PreCompact PreToolUse; do
    contains "validator sees the $ev hook" "$out" "hooks: $ev"
done
contains "validator sees the skill" "$out" "skills: cairn:cairn"
contains "installed" "$(cat "$D/install.out" 2>/dev/null)" "Successfully installed plugin: cairn@cairn"
out=$(cat "$D/list.out" 2>/dev/null)
contains "listed" "$out" "cairn@cairn"
contains "enabled" "$out" "enabled"

# --- claude -p finished cleanly with the mock's final answer
res=$(python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable: %s" % e); sys.exit(0)
print("is_error=%s denials=%d" % (d.get("is_error"), len(d.get("permission_denials") or [])))
print("result=%s" % d.get("result"))
print("session=%s" % d.get("session_id"))' "$D/claude-p.json")
contains "claude -p succeeded" "$res" "is_error=False denials=0"
contains "mock's final answer came back" "$res" "result=$FINAL"
SID=$(printf '%s\n' "$res" | sed -n 's/^session=//p')
check "a session id" test -n "$SID"

# --- what the model saw (every request body the mock logged)
facts=$(python3 "$E2E/check_requests.py" "$D/requests.jsonl" "$TOOL" "$FACT" "$TITLE" "$OTHER" 2>&1)
fact() { printf '%s\n' "$facts" | sed -n "s/^$1=//p"; }
eq "all six cairn tools offered" "$(fact tools)" "forget_session,get_conversation,list_sessions,memory,recall,save_conversation"
eq "SessionStart lists the planted session" "$(fact start_ctx)" yes
check "prompt hook context reached the mock" test "$(fact inject_requests)" -ge 1
eq "one fenced past-conversations block" "$(fact inject_fences)" 1
eq "(b) planted fact injected inside the fence" "$(fact inject_fact)" yes
eq "unrelated session not injected" "$(fact inject_other)" no
# the plugin's .mcp.json sets CAIRN_MCP_HOOKS=1: the hooks save the turns,
# so the server must not ask the model to save the conversation itself
eq "server instructions: hooks save the turns" "$(fact mcp_hooks_note)" yes
eq "server instructions: no save_conversation ask" "$(fact mcp_save_ask)" no
eq "(c) the mock called recall" "$(fact tool_use)" yes
eq "recall called with the query" "$(fact tool_input)" "{\"query\": \"$QUERY\"}"
eq "recall did not fail" "$(fact tool_result_error)" no
eq "(c) recall's tool_result holds the planted fact" "$(fact tool_result_fact)" yes
eq "recall's tool_result is readable text, not JSON" "$(fact tool_result_json)" no

# --- the hooks ran the cairn on PATH, and all exited 0
calls=$(cat "$D/cairn-calls.log" 2>/dev/null)
for c in "hook session-start" "hook prompt" "hook stop" "hook session-end" "mcp"; do
    contains "plugin ran cairn $c" "$calls" "$c"
done
dbg=$(cat "$D/claude-debug.log" 2>/dev/null)
contains "SessionStart hook ok" "$dbg" "SessionStart:startup [cairn hook session-start] (plugin cairn@cairn) finished with status 0"
contains "prompt hook ok" "$dbg" "UserPromptSubmit [cairn hook prompt] (plugin cairn@cairn) finished with status 0"
contains "Stop hook ok" "$dbg" "Stop [cairn hook stop] (plugin cairn@cairn) finished with status 0"
lacks "no hook errors" "$dbg" "hook error"
check "inject decision logged as fired" grep -qs "\"session\":\"$SID\".*\"fired\":true" "$D/home/.cairn/inject.jsonl"

# --- (a) the Stop hook saved the turn: snapshot right after it ran
snap=$(cat "$D/after-stop.txt" 2>/dev/null)
contains "(a) Stop hook saved the prompt" "$snap" "$PROMPT"
contains "(a) Stop hook saved the reply" "$snap" "$FINAL"
# and the store, after SessionEnd too: in project e2e, once, without the injection
out=$("$CAIRN" --db "$STORE" sessions --project e2e 2>&1)
contains "session in project e2e" "$out" "$SID"
out=$("$CAIRN" --db "$STORE" show "$SID" 2>&1)
contains "show has the prompt" "$out" "$PROMPT"
lacks "injected memory not saved as conversation" "$out" "past-conversations"
eq "prompt saved once" "$(printf '%s\n' "$out" | grep -c "kestrel-ops?")" 1

if [ "$T_FAIL" -ne 0 ]; then
    echo "--- inner.out"; tail -20 "$D/inner.out"
    echo "--- facts"; printf '%s\n' "$facts"
    echo "--- claude-p.err"; tail -20 "$D/claude-p.err" 2>/dev/null
fi >&2
t_done
