#!/bin/sh
# t0402-claude-code-corrections-e2e: corrections end to end with the real
# Claude Code (2.1.332, headless `claude -p`) and the cairn plugin from this
# repo, against a loopback mock of the Messages API in a private network
# namespace, as t0400 (tests/e2e/README.md). Two sessions in one project:
#   1. the user corrects the assistant ("no, never run git push --force
#      here"): the prompt hook keeps a candidate, not a correction;
#   then `cairn memories review --accept` makes it a correction;
#   2. the SessionStart hook puts the "watch for" line in the request the
#      mock receives, and when the mock model calls Bash with
#      `git push --force ...`, the pre-tool hook asks (its output in Claude
#      Code's debug log) and the command does not run (its marker file is
#      never made); the correction counts one retrieved and one heeded.
# SKIPs as t0400 does (no python3, unshare, npm, registry or binary).
REAL_HOME=${HOME:-/tmp}
. "$(dirname "$0")/lib.sh"

VERSION=2.1.332
CC_DIR=${CAIRN_TEST_CLAUDE_DIR:-$REAL_HOME/.cache/cairn-test/claude-code}
E2E=$ROOT/tests/e2e
CORRECTION="no, never run git push --force here"
TASK="Please publish my branch to the remote."

skip() { t_skip_all "$@"; }
command -v python3 >/dev/null 2>&1 || skip "python3 (the mock Messages API) is not installed"
. "$E2E/lib.sh"
e2e_netns
e2e_claude_code
e2e_world
MARK=$D/pushed
COMMAND="git push --force origin main; touch $MARK"

E2E_UNSHARE=$UNSHARE E2E_DIR=$D E2E_PATH=$D/bin E2E_CAIRN=$CAIRN E2E_CLAUDE=$CL E2E_REPO=$ROOT \
E2E_CORRECTION=$CORRECTION E2E_TASK=$TASK E2E_COMMAND=$COMMAND \
    timeout 300 sh "$E2E/isolated.sh" sh "$E2E/corrections-inner.sh" >"$D/inner.out" 2>&1
eq "isolated run exits 0" "$?" 0
for s in mkt-add install claude-1 review accept claude-2; do
    eq "step $s exits 0" "$(cat "$D/rc.$s" 2>/dev/null)" 0
done

# --- session 1: a candidate, not a correction, until accepted
contains "session 1: the prompt hook kept a candidate" "$(cat "$D/review.out" 2>/dev/null)" "$CORRECTION"
contains "... naming the command" "$(cat "$D/review.out" 2>/dev/null)" "[command: git push --force]"
contains "review --accept made it a correction" "$(cat "$D/accept.out" 2>/dev/null)" "as correction"

# --- session 2: the watch-for line reached the model
watch=$(python3 - "$D/requests-2.jsonl" "$CORRECTION" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    body = json.loads(line).get("body") or {}
    if "watch for [p1]: " + sys.argv[2] in json.dumps(body, ensure_ascii=False):
        n += 1
print("yes" if n else "no")
PY
)
eq "session 2: the watch-for line is in a request the mock received" "$watch" yes
called=$(python3 - "$D/requests-2.jsonl" <<'PY'
import json, sys
bash = results = 0
for line in open(sys.argv[1], encoding="utf-8"):
    for m in (json.loads(line).get("body") or {}).get("messages") or []:
        for b in m.get("content") if isinstance(m.get("content"), list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                results += 1
print("tool_results=%d" % results)
PY
)
echo "session 2: $called"

# --- the pre-tool hook asked, and the command did not run
dbg=$(cat "$D/debug-2.log" 2>/dev/null)
contains "the pre-tool hook ran" "$dbg" "PreToolUse:Bash [cairn hook pre-tool]"
contains "... and asked, with the correction as its reason" "$dbg" '"permissionDecision":"ask"'
check "the force push did not run" [ ! -e "$MARK" ]
stats=$(cat "$D/stats.out" 2>/dev/null)
contains "the correction counts one retrieved and one heeded" "$stats" "p1          1      1        0"
calls=$(cat "$D/cairn-calls.log" 2>/dev/null)
contains "the plugin ran cairn hook pre-tool" "$calls" "hook pre-tool"

if [ "$T_FAIL" -ne 0 ]; then
    echo "--- inner.out"; tail -20 "$D/inner.out"
    echo "--- review/accept/stats"; cat "$D/review.out" "$D/accept.out" "$D/stats.out" 2>/dev/null
    echo "--- claude-2.json"; head -c 1500 "$D/claude-2.json" 2>/dev/null; echo
    echo "--- debug-2.log (hooks)"; grep -i "pretooluse\|pre-tool\|permission" "$D/debug-2.log" 2>/dev/null | head -30
fi >&2
t_done
