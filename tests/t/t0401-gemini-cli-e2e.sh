#!/bin/sh
# t0401-gemini-cli-e2e: the real Gemini CLI (npm @google/gemini-cli 0.61.0,
# headless `gemini -p`) with `cairn mcp` as a user-level server in
# ~/.gemini/settings.json, against a loopback mock of the Gemini API, inside
# a private network namespace: nothing leaves the machine. Checks that
#   - in a folder that is not trusted the server is shown Disabled, and in a
#     trusted one Connected (docs/MCP.md says so);
#   - the five cairn tools are offered, and Gemini CLI adds its own
#     `wait_for_previous` to recall's schema;
#   - the mock's recall call, with wait_for_previous filled in as a model
#     does, reaches the server and comes back with the planted fact, not an
#     "unknown argument" error (issue 17);
#   - `gemini -p` ends with the mock's final answer.
# Gemini CLI is installed once into $CAIRN_TEST_GEMINI_DIR (default
# ~/.cache/cairn-test/gemini-cli), with a pinned Node.js 22 it runs on.
# Without node, npm or the registry, or without `unshare -n`, the test is a
# SKIP with its reason (a failure in CI: tests/must-run).
REAL_HOME=${HOME:-/tmp}
. "$(dirname "$0")/lib.sh"

VERSION=0.61.0
PKG=@google/gemini-cli@$VERSION
GM_DIR=${CAIRN_TEST_GEMINI_DIR:-$REAL_HOME/.cache/cairn-test/gemini-cli}
GM=$GM_DIR/node_modules/.bin/gemini
E2E=$ROOT/tests/e2e
FACT="the staging database password rotation day is Thursday and the on-call alias is kestrel-ops"
PROMPT="Which day does the staging database password rotation happen, and who is kestrel-ops?"
QUERY="staging database password rotation kestrel-ops"
FINAL="Per your memory: the staging rotation day is recorded above. Done."

skip() { t_skip_all "$@"; }
command -v python3 >/dev/null 2>&1 || skip "python3 (the mock Gemini API) is not installed"
command -v node >/dev/null 2>&1 || skip "node is not installed (npm needs it)"
. "$E2E/lib.sh"
e2e_netns

# Gemini CLI needs node >= 20 and Debian 12 has 18: a pinned Node.js from
# npm (the `node` package, as t0301 does for the Inspector) runs it, first
# on PATH wherever gemini runs.
NODE_VERSION=22.23.3
NODE_BIN=$GM_DIR/node_modules/node/bin
PATH=$NODE_BIN:$PATH
# the launcher runs and is the pinned version (checked offline, in a netns)
installed() {
    [ -x "$GM" ] && [ "$("$NODE_BIN/node" --version 2>/dev/null)" = "v$NODE_VERSION" ] || return 1
    v=$(mkdir -p "$TMP/vhome" && HOME=$TMP/vhome timeout 60 $UNSHARE "$GM" --version 2>/dev/null)
    [ "$v" = "$VERSION" ]
}
e2e_npm_install "$GM_DIR" "$PKG" "node@$NODE_VERSION"
echo "npm install of $PKG: $npm_s"

# The scratch world: HOME under $D with the user-level settings a user
# would write (docs/MCP.md) and the project folder trusted, as the trust
# dialog would leave it; `cairn` on PATH is the logging shim in front of
# the binary under test; the default store ~/.cairn/memory.db.
D=$TMP/e2e
mkdir -p "$D/home/.gemini" "$D/project" "$D/untrusted" "$D/bin"
cp "$E2E/cairn-shim.sh" "$D/bin/cairn"
chmod +x "$D/bin/cairn"
unset CAIRN_DB CAIRN_PROJECT CAIRN_SESSION_ID CAIRN_MCP_HOOKS CAIRN_EXCLUDE_PROJECTS
export CAIRN_EMBED_MODEL=none
cat > "$D/home/.gemini/settings.json" <<JSON
{
  "mcpServers": { "cairn": { "command": "cairn", "args": ["mcp"], "timeout": 30000 } },
  "security": { "auth": { "selectedType": "gemini-api-key" } },
  "privacy": { "usageStatisticsEnabled": false },
  "telemetry": { "enabled": false }
}
JSON
printf '{"%s": "TRUST_FOLDER"}\n' "$D/project" > "$D/home/.gemini/trustedFolders.json"
python3 - "$D/plant.jsonl" "$FACT" <<'PY'
import json, sys
out, fact = sys.argv[1:3]
with open(out, "w") as f:
    f.write(json.dumps({"id": "gm-earlier-1", "source": "e2e", "title": "Staging database maintenance",
        "started_at": "2026-10-05T14:00:00",
        "messages": [{"role": "user", "content": "Note for later: " + fact + ".",
                      "at": "2026-10-05T14:00:00"},
                     {"role": "assistant", "content": "Noted.", "at": "2026-10-05T14:00:20"}]}) + "\n")
PY

E2E_UNSHARE=$UNSHARE E2E_DIR=$D E2E_PATH=$D/bin:$NODE_BIN E2E_CAIRN=$CAIRN E2E_GEMINI=$GM \
E2E_PROMPT=$PROMPT E2E_QUERY=$QUERY E2E_PLANT=$D/plant.jsonl \
    timeout 300 sh "$E2E/isolated.sh" sh "$E2E/gemini-inner.sh" >"$D/inner.out" 2>&1
eq "isolated run exits 0" "$?" 0
echo "gemini -p took $(cat "$D/gemini-p.seconds" 2>/dev/null) s"

for s in add mcp-list-untrusted mcp-list gemini; do
    eq "step $s exits 0" "$(cat "$D/rc.$s" 2>/dev/null)" 0
done
out=$(cat "$D/mcp-list-untrusted.out" 2>/dev/null)
contains "untrusted folder: user-level server disabled" "$out" "cairn: cairn mcp (stdio) - Disabled"
contains "trusted folder: server connected" "$(cat "$D/mcp-list.out" 2>/dev/null)" \
    "cairn: cairn mcp (stdio) - Connected"

res=$(python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print("unreadable: %s" % e); sys.exit(0)
print("response=%s" % d.get("response"))
print("error=%s" % d.get("error"))' "$D/gemini-p.json")
contains "mock's final answer came back" "$res" "response=$FINAL"
contains "no error" "$res" "error=None"

facts=$(python3 "$E2E/check_gemini_requests.py" "$D/requests.jsonl" "$FACT" 2>&1)
fact() { printf '%s\n' "$facts" | sed -n "s/^$1=//p"; }
eq "all six cairn tools offered" "$(fact tools)" \
    "mcp_cairn_forget_session,mcp_cairn_get_conversation,mcp_cairn_list_sessions,mcp_cairn_memory,mcp_cairn_recall,mcp_cairn_save_conversation"
eq "Gemini CLI adds wait_for_previous to the schema" "$(fact wait_declared)" yes
eq "recall called with wait_for_previous" "$(fact call_args)" \
    "{\"query\": \"$QUERY\", \"wait_for_previous\": false}"
eq "recall did not fail" "$(fact response_error)" no
eq "recall's response holds the planted fact" "$(fact response_fact)" yes
contains "the server Gemini CLI ran is the cairn on PATH" "$(cat "$D/cairn-calls.log" 2>/dev/null)" "mcp"

if [ "$T_FAIL" -ne 0 ]; then
    echo "--- inner.out"; tail -20 "$D/inner.out"
    echo "--- facts"; printf '%s\n' "$facts"
    echo "--- gemini-p.err"; tail -20 "$D/gemini-p.err" 2>/dev/null
fi >&2
t_done
