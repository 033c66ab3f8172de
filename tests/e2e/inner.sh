#!/bin/sh
# tests/e2e/inner.sh: the part of the Claude Code end-to-end test that runs
# INSIDE the private network namespace (tests/e2e/isolated.sh starts it).
# Adapted from ../shared/tools/claude-code-e2e/e2e-inner.sh.
#
# Steps, each leaving its output in $E2E_DIR for the outer test to check:
#   validate.out   `claude plugin validate` of the marketplace and the plugin
#   install.out    `claude plugin marketplace add` + `plugin install cairn@cairn`
#   list.out       `claude plugin list`
#   add.out        `cairn add` of the planted earlier session
#   requests.jsonl every request body the mock Messages API received
#   claude-p.json  `claude -p --output-format json`, claude-p.err its stderr
#   rc.<step>      the exit code of each step
#
# Needs: E2E_DIR (scratch, HOME lives in it), E2E_CLAUDE (the native claude
# binary), E2E_REPO (the repo root: marketplace), E2E_PROMPT, E2E_QUERY,
# E2E_PLANT (the JSONL of the planted session), cairn on PATH.
: "${E2E_DIR:?}" "${E2E_CLAUDE:?}" "${E2E_REPO:?}" "${E2E_PROMPT:?}" "${E2E_QUERY:?}" "${E2E_PLANT:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
CL=$E2E_CLAUDE
PORT=${E2E_PORT:-48123}
TOOL=mcp__plugin_cairn_cairn__recall
cd "$E2E_DIR" || exit 1

. "$HERE/lib.sh"

step validate-mkt "$CL" plugin validate "$E2E_REPO"
step validate-plugin "$CL" plugin validate "$E2E_REPO/plugin"
step mkt-add "$CL" plugin marketplace add "$E2E_REPO"
step install "$CL" plugin install cairn@cairn --scope user
step list "$CL" plugin list

# The earlier session, saved the way any client would (not through Claude).
step add cairn add "$E2E_PLANT"

start_mock "$PORT" "$HERE/mock_anthropic.py" "$PORT" "$E2E_DIR/requests.jsonl" "$TOOL" "$E2E_QUERY"

cd "$E2E_DIR/project" || exit 1
t0=$(date +%s)
ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=sk-ant-test-dummy ENABLE_TOOL_SEARCH=false \
    timeout 120 "$CL" -p "$E2E_PROMPT" --output-format json --max-turns 4 --allowedTools "$TOOL" --debug-file "$E2E_DIR/claude-debug.log" \
    > "$E2E_DIR/claude-p.json" 2> "$E2E_DIR/claude-p.err"
echo $? > "$E2E_DIR/rc.claude"
echo $(( $(date +%s) - t0 )) > "$E2E_DIR/claude-p.seconds"
kill "$MOCK" 2>/dev/null
wait "$MOCK" 2>/dev/null
exit 0
