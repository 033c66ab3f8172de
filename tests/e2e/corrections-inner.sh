#!/bin/sh
# tests/e2e/corrections-inner.sh: the corrections end-to-end test (t0402)
# INSIDE the private network namespace (isolated.sh starts it): the cairn
# plugin installed from the repo, then two headless Claude Code sessions in
# the same project against the loopback mock.
#
#   session 1   the user corrects the assistant (E2E_CORRECTION); the prompt
#               hook keeps it as a candidate
#   review      `cairn memories review`, then `--accept` of that candidate
#   session 2   a task prompt; the mock model calls Bash with E2E_COMMAND;
#               the pre-tool hook must ask before it runs
#
# Outputs in $E2E_DIR: rc.<step>, <step>.out, requests-1.jsonl and
# requests-2.jsonl (every request body the mock got), claude-1.json and
# claude-2.json (`claude -p --output-format json`), debug-2.log.
: "${E2E_DIR:?}" "${E2E_CLAUDE:?}" "${E2E_REPO:?}" "${E2E_CORRECTION:?}" "${E2E_TASK:?}" "${E2E_COMMAND:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
CL=$E2E_CLAUDE
PORT=${E2E_PORT:-48124}
cd "$E2E_DIR" || exit 1

. "$HERE/lib.sh"

step mkt-add "$CL" plugin marketplace add "$E2E_REPO"
step install "$CL" plugin install cairn@cairn --scope user

# claude_p N PROMPT TOOL INPUT: one headless session against a fresh mock,
# whose model calls TOOL with INPUT once (a TOOL that is not offered: never)
claude_p() {
    start_mock "$PORT" "$HERE/mock_anthropic.py" "$PORT" "$E2E_DIR/requests-$1.jsonl" "$3" "-" "$4"
    (cd "$E2E_DIR/project" &&
     ANTHROPIC_BASE_URL=http://127.0.0.1:$PORT ANTHROPIC_API_KEY=sk-ant-test-dummy ENABLE_TOOL_SEARCH=false \
        timeout 120 "$CL" -p "$2" --output-format json --max-turns 4 --allowedTools Bash \
        --debug-file "$E2E_DIR/debug-$1.log" > "$E2E_DIR/claude-$1.json" 2> "$E2E_DIR/claude-$1.err")
    echo $? > "$E2E_DIR/rc.claude-$1"
    kill "$MOCK" 2>/dev/null
    wait "$MOCK" 2>/dev/null
}

claude_p 1 "$E2E_CORRECTION" no_such_tool '{}'
step review cairn memories review
id=$(awk 'NR == 1 {print $1}' "$E2E_DIR/review.out")
step accept cairn memories review --accept "${id:-0}"
claude_p 2 "$E2E_TASK" Bash "{\"command\": \"$E2E_COMMAND\"}"
step stats cairn memories stats
exit 0
