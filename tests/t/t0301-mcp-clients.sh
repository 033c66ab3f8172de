#!/bin/sh
# t0301-mcp-clients: `cairn mcp` against the real MCP clients from npm:
# the TypeScript SDK v1 client (@modelcontextprotocol/sdk@1.32.2), the SDK
# v2 client (@modelcontextprotocol/client@2.4.0) in legacy, auto and pin
# negotiation, and the MCP Inspector CLI (@modelcontextprotocol/inspector@2.12.0)
# with --strict, in both eras.
#
# The Inspector declares node >= 22.19 and fails on Debian 12's node 18
# ("CustomEvent is not defined"), so it runs on a pinned Node.js from npm
# (the `node` package, $NODE_PKG), put first on PATH for it alone; the SDK
# clients run on the system's node, as a user's would.
#
# The packages are installed once into $CAIRN_TEST_NPM_DIR (default
# ~/.cache/cairn-test-npm). Without node/npm or the registry the test is a
# SKIP with its reason (the golden exchanges, t0300, still cover the
# protocol); in CI that fails (tests/must-run).
REAL_HOME=${HOME:-/tmp}
. "$(dirname "$0")/lib.sh"

SDK1=@modelcontextprotocol/sdk@1.32.2
SDK2=@modelcontextprotocol/client@2.4.0
INSPECTOR=@modelcontextprotocol/inspector@2.12.0
NODE_VERSION=22.23.3
NODE_PKG=node@$NODE_VERSION
NPM_DIR=${CAIRN_TEST_NPM_DIR:-$REAL_HOME/.cache/cairn-test-npm}

skip() { t_skip_all "$@"; }

command -v node >/dev/null 2>&1 || skip "node is not installed"
command -v npm >/dev/null 2>&1 || skip "npm is not installed"
case "$(node --version 2>/dev/null)" in
    v1[89].*|v[2-9][0-9].*) ;;
    *) skip "node $(node --version 2>/dev/null) is too old (need 18+)" ;;
esac

installed() {
    [ -f "$NPM_DIR/node_modules/@modelcontextprotocol/sdk/package.json" ] &&
    [ -f "$NPM_DIR/node_modules/@modelcontextprotocol/client/package.json" ] &&
    [ -x "$NPM_DIR/node_modules/.bin/mcp-inspector" ] &&
    grep -q '"version": "1.32.2"' "$NPM_DIR/node_modules/@modelcontextprotocol/sdk/package.json" &&
    grep -q '"version": "2.4.0"' "$NPM_DIR/node_modules/@modelcontextprotocol/client/package.json" &&
    grep -q '"version": "2.12.0"' "$NPM_DIR/node_modules/@modelcontextprotocol/inspector/package.json" &&
    [ "$("$NPM_DIR/node_modules/node/bin/node" --version 2>/dev/null)" = "v$NODE_VERSION" ]
}
if ! installed; then
    # A quick look at the registry first: offline, npm retries for minutes
    # (and `npm view` may answer from its cache).
    REGISTRY=$(HOME=$REAL_HOME npm config get registry 2>/dev/null)
    timeout 20 node -e '
        const u = new URL(process.argv[1] || "https://registry.npmjs.org/");
        const lib = u.protocol === "http:" ? require("http") : require("https");
        const r = lib.request(u, { method: "HEAD", timeout: 15000 }, (res) => process.exit(0));
        r.on("timeout", () => process.exit(1)); r.on("error", () => process.exit(1)); r.end();' \
        "$REGISTRY" >/dev/null 2>&1 || skip "the npm registry ($REGISTRY) is not reachable"
    mkdir -p "$NPM_DIR" || skip "cannot create $NPM_DIR"
    [ -f "$NPM_DIR/package.json" ] || echo '{"name":"cairn-test-npm","private":true}' > "$NPM_DIR/package.json"
    t0=$(date +%s)
    # npm's own cache lives in the real home, not the test's throw-away one.
    if ! (cd "$NPM_DIR" && HOME=$REAL_HOME timeout 600 npm install --no-audit --no-fund --fetch-retries=1 \
            "$SDK1" "$SDK2" "$INSPECTOR" "$NODE_PKG") >"$TMP/npm.log" 2>&1; then
        tail -5 "$TMP/npm.log" >&2
        skip "npm install of the MCP clients failed (offline or registry unavailable)"
    fi
    echo "npm install of the MCP clients took $(( $(date +%s) - t0 )) s"
    installed || skip "npm install did not give the expected versions"
fi
cp "$ROOT/tests/mcp/sdk-client.mjs" "$ROOT/tests/mcp/sdk2-client.mjs" "$NPM_DIR/" ||
    skip "cannot copy the client scripts into $NPM_DIR"

# Some seed data so recall has something besides what the clients save.
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null

# count PREFIX OUTPUT: adds the client's own "N passed, N failed" to ours
count() {
    line=$(printf '%s\n' "$2" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
    if [ -z "$line" ]; then
        bad "$1: no result line: $(printf %s "$2" | tail -5)"
        return
    fi
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
    T_PASS=$((T_PASS + p)); T_FAIL=$((T_FAIL + f))
    [ "$f" -eq 0 ] || printf '%s\n' "$2" | grep FAIL | sed "s/^/$1: /" >&2
}

out=$(cd "$NPM_DIR" && timeout 120 node sdk-client.mjs "$CAIRN" 2>&1)
count "sdk v1" "$out"
for mode in legacy auto pin; do
    out=$(cd "$NPM_DIR" && timeout 120 node sdk2-client.mjs "$mode" "$CAIRN" 2>&1)
    count "sdk v2 $mode" "$out"
done

# Inspector CLI: portable schemas (--strict exits 6 on errors and reports
# every issue on stderr), tools/call in both eras, isError and unknown tool.
I="$NPM_DIR/node_modules/.bin/mcp-inspector"
IPATH="$NPM_DIR/node_modules/node/bin:$PATH"     # its `#!/usr/bin/env node` finds the pinned node
for era in legacy modern; do
    out=$(cd "$TMP" && PATH=$IPATH timeout 60 "$I" --cli "$CAIRN" --db "$CAIRN_DB" mcp --method tools/list --strict \
            --protocol-era $era --format json -q 2>"$TMP/strict.err")
    rc=$?
    eq "inspector --strict tools/list ($era) exit" "$rc" 0
    contains "inspector tools/list ($era)" "$out" '"name":"forget_session"'
    eq "inspector --strict ($era) reports no issue" "$(cat "$TMP/strict.err")" ""
    out=$(cd "$TMP" && PATH=$IPATH timeout 60 "$I" --cli "$CAIRN" --db "$CAIRN_DB" mcp --method tools/call --tool-name recall \
            --tool-arg "query=bouldering club in Marvila" --protocol-era $era --format json -q 2>&1)
    eq "inspector tools/call recall ($era) exit" "$?" 0
    contains "inspector recall text ($era)" "$out" "Lisbon Bouldering Club"
done
out=$(cd "$TMP" && PATH=$IPATH timeout 60 "$I" --cli "$CAIRN" --db "$CAIRN_DB" mcp --method tools/call --tool-name save_conversation \
        --tool-args-json '{"messages":[{"role":"user","content":"inspector saved this"}],"session_id":"insp-1"}' -q 2>&1)
eq "inspector save_conversation exit" "$?" 0
contains "inspector save_conversation" "$out" '1 new message'
(cd "$TMP" && PATH=$IPATH timeout 60 "$I" --cli "$CAIRN" --db "$CAIRN_DB" mcp --method tools/call --tool-name recall \
    --tool-args-json '{"budget_tokens":3}' -q >/dev/null 2>&1)
eq "inspector: bad arguments -> isError (exit 5)" "$?" 5
(cd "$TMP" && PATH=$IPATH timeout 60 "$I" --cli "$CAIRN" --db "$CAIRN_DB" mcp --method tools/call --tool-name nope -q >/dev/null 2>&1)
eq "inspector: unknown tool (exit 5)" "$?" 5
out=$(cd "$TMP" && PATH=$IPATH timeout 60 "$I" --cli "$CAIRN" --db "$CAIRN_DB" mcp --method initialize --format json -q 2>&1)
contains "inspector initialize: serverInfo" "$out" '"name":"cairn"'

t_done
