#!/bin/sh
# tests/e2e/gemini-inner.sh: the part of the Gemini CLI end-to-end test
# (t0401) that runs INSIDE the private network namespace (isolated.sh starts
# it). HOME is $E2E_DIR/home, whose ~/.gemini/settings.json (written by the
# test) adds `cairn mcp` as a user-level server, as docs/MCP.md says.
#
# Steps, each leaving its output in $E2E_DIR for the outer test to check:
#   add.out               `cairn add` of the planted earlier session
#   mcp-list-untrusted.out `gemini mcp list` in a folder that is not trusted
#   mcp-list.out           `gemini mcp list` in the trusted project folder
#   requests.jsonl         every request the mock Gemini API received
#   gemini-p.json          `gemini -p --output-format json`, gemini-p.err its stderr
#   rc.<step>              the exit code of each step
#
# Needs: E2E_DIR, E2E_GEMINI (the gemini launcher from npm), E2E_PROMPT,
# E2E_QUERY, E2E_PLANT, cairn on PATH.
: "${E2E_DIR:?}" "${E2E_GEMINI:?}" "${E2E_PROMPT:?}" "${E2E_QUERY:?}" "${E2E_PLANT:?}"
HERE=$(cd "$(dirname "$0")" && pwd)
PORT=${E2E_PORT:-48124}
cd "$E2E_DIR" || exit 1
# No key leaves the machine: the mock is the only server there is.
export GEMINI_API_KEY=mock-key GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$PORT
unset GOOGLE_API_KEY GOOGLE_CLOUD_PROJECT GOOGLE_GENAI_USE_VERTEXAI GEMINI_CLI_TRUST_WORKSPACE

. "$HERE/lib.sh"

step add cairn add "$E2E_PLANT"
(cd "$E2E_DIR/untrusted" && step mcp-list-untrusted timeout 60 "$E2E_GEMINI" mcp list)
(cd "$E2E_DIR/project" && step mcp-list timeout 60 "$E2E_GEMINI" mcp list)

start_mock "$PORT" "$HERE/mock_gemini.py" "$PORT" "$E2E_DIR/requests.jsonl" recall "$E2E_QUERY"

cd "$E2E_DIR/project" || exit 1
t0=$(date +%s)
timeout 120 "$E2E_GEMINI" -p "$E2E_PROMPT" --output-format json --yolo \
    > "$E2E_DIR/gemini-p.json" 2> "$E2E_DIR/gemini-p.err"
echo $? > "$E2E_DIR/rc.gemini"
echo $(( $(date +%s) - t0 )) > "$E2E_DIR/gemini-p.seconds"
kill "$MOCK" 2>/dev/null
wait "$MOCK" 2>/dev/null
exit 0
