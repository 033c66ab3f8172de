# tests/e2e/lib.sh: what the end-to-end tests (t0400 Claude Code, t0401
# Gemini CLI) share. Sourced; every function is small and says what it
# leaves behind.

# Outside the namespace -------------------------------------------------

# e2e_netns: sets UNSHARE to a command that gives a private network
# namespace with loopback up (`unshare -n` as root, else `unshare -rn` with
# unprivileged user namespaces), or skips the test. Cheap, so it comes
# before any download.
e2e_netns() {
    command -v unshare >/dev/null 2>&1 || t_skip_all "unshare (util-linux) is not installed"
    command -v ip >/dev/null 2>&1 || t_skip_all "ip (iproute2) is not installed: cannot bring loopback up"
    UNSHARE="unshare -n"
    $UNSHARE sh -c 'ip link set lo up' >/dev/null 2>&1 && return 0
    UNSHARE="unshare -rn"
    $UNSHARE sh -c 'ip link set lo up' >/dev/null 2>&1 ||
        t_skip_all "unshare -n failed (needs root or unprivileged user namespaces)"
}

# e2e_npm_install DIR PKG...: installs the packages into DIR unless the
# caller's `installed` says they are there and run; skips the test when it
# cannot.
# npm's cache stays in the real home ($REAL_HOME). Sets npm_s to the time it
# took ("cached" when nothing was installed).
e2e_npm_install() {
    npm_s="cached"
    installed && return 0
    npm_dir=$1
    shift
    command -v npm >/dev/null 2>&1 || t_skip_all "npm is not installed"
    # A quick look at the registry first: offline, npm retries for minutes.
    HOME=$REAL_HOME timeout 30 npm view --fetch-retries=0 --fetch-timeout=15000 "$1" version \
        >/dev/null 2>&1 || t_skip_all "the npm registry is not reachable (offline?)"
    mkdir -p "$npm_dir" || t_skip_all "cannot create $npm_dir"
    [ -f "$npm_dir/package.json" ] ||
        echo '{"name":"cairn-test-e2e","private":true}' > "$npm_dir/package.json"
    t0=$(date +%s)
    if ! (cd "$npm_dir" && HOME=$REAL_HOME timeout 900 npm install --no-audit --no-fund \
            --fetch-retries=1 "$@") >"$TMP/npm.log" 2>&1; then
        tail -5 "$TMP/npm.log" >&2
        t_skip_all "npm install $* failed (offline or registry unavailable)"
    fi
    npm_s="$(( $(date +%s) - t0 )) s"
    installed || t_skip_all "what npm installed from $* does not run"
}

# Inside the namespace (inner scripts) ----------------------------------

# step NAME COMMAND...: runs it, output to $E2E_DIR/NAME.out, exit code to
# $E2E_DIR/rc.NAME
step() {
    n=$1; shift
    "$@" > "$E2E_DIR/$n.out" 2>&1
    echo $? > "$E2E_DIR/rc.$n"
}

# start_mock PORT SCRIPT ARGS...: starts the mock API (stderr to
# $E2E_DIR/mock.err), kills it when the script exits, and waits up to 5 s
# for it to listen rather than sleeping a fixed time. Sets MOCK to its pid.
start_mock() {
    port=$1; shift
    python3 "$@" 2> "$E2E_DIR/mock.err" &
    MOCK=$!
    trap 'kill "$MOCK" 2>/dev/null' EXIT
    trap 'exit 1' INT TERM
    i=0
    while [ $i -lt 50 ]; do
        python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 0.2)' "$port" \
            2>/dev/null && break
        sleep 0.1; i=$((i + 1))
    done
}

# e2e_claude_code: Claude Code $VERSION (npm) into $CC_DIR, or a SKIP; its
# native binary in $CL. npm's script policy may block the package's
# postinstall (which copies the native binary): the binary is run straight
# from the optional platform package, and checked offline, in a netns, to
# run and be the pinned version. Needs e2e_netns first (UNSHARE).
e2e_claude_code() {
    case "$(uname -s)-$(uname -m)" in
        Linux-x86_64)  arch=linux-x64 ;;
        Linux-aarch64) arch=linux-arm64 ;;
        *) t_skip_all "no Claude Code native package for $(uname -s) $(uname -m)" ;;
    esac
    CL=$CC_DIR/node_modules/@anthropic-ai/claude-code-$arch/claude
    installed() {
        [ -x "$CL" ] || return 1
        v=$(mkdir -p "$TMP/vhome" && HOME=$TMP/vhome CLAUDE_CONFIG_DIR=$TMP/vhome/.claude \
            timeout 30 $UNSHARE "$CL" --version 2>/dev/null)
        [ "${v%% *}" = "$VERSION" ]
    }
    e2e_npm_install "$CC_DIR" "@anthropic-ai/claude-code@$VERSION"
}

# e2e_world: the scratch world $D: HOME (with ~/.claude and ~/.cairn), a
# project folder named "e2e" for cairn, and `cairn` on PATH (the logging
# shim in front of the binary under test). No CAIRN_DB: hooks and MCP
# server must agree on the default store, $STORE, as a real install would.
e2e_world() {
    D=$TMP/e2e
    mkdir -p "$D/home" "$D/project" "$D/bin"
    printf 'e2e\n' > "$D/project/.cairn-project"
    cp "$E2E/cairn-shim.sh" "$D/bin/cairn"
    chmod +x "$D/bin/cairn"
    unset CAIRN_DB CAIRN_PROJECT CAIRN_INJECT CAIRN_CAPTURE CAIRN_INJECT_BUDGET CAIRN_SESSION_ID
    unset CAIRN_MCP_HOOKS CAIRN_EXCLUDE_PROJECTS CAIRN_RECOGNISE CAIRN_PRETOOL CAIRN_PRETOOL_RISKY
    STORE=$D/home/.cairn/memory.db
}
