#!/bin/sh
# tests/e2e/isolated.sh CMD...: runs CMD in a private network namespace
# (`unshare -n`, loopback only) with a throw-away HOME and CLAUDE_CONFIG_DIR
# under $E2E_DIR, so Claude Code can reach nothing but the loopback mock.
# Adapted from ../shared/tools/claude-code-e2e/isolated.sh. E2E_PATH, when
# set, is put in front of PATH (the folder of the cairn binary under test).
# Every CLAUDE* / ANTHROPIC* variable of the caller is dropped first, so a run
# started from inside a Claude Code session behaves like one from CI.
# E2E_UNSHARE (default "unshare -n") may be "unshare -rn" for a user without
# root but with unprivileged user namespaces.
: "${E2E_DIR:?set E2E_DIR to a scratch folder}"
export E2E_DIR E2E_PATH="${E2E_PATH:-}"
exec ${E2E_UNSHARE:-unshare -n} sh -c '
    ip link set lo up 2>/dev/null || exit 97
    for v in $(env | sed -n "s/^\(CLAUDE[A-Za-z0-9_]*\|ANTHROPIC[A-Za-z0-9_]*\)=.*/\1/p"); do
        unset "$v"
    done
    export HOME="$E2E_DIR/home" CLAUDE_CONFIG_DIR="$E2E_DIR/home/.claude"
    export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 DISABLE_TELEMETRY=1
    [ -n "$E2E_PATH" ] && PATH="$E2E_PATH:$PATH"
    export PATH
    exec "$@"' sh "$@"
