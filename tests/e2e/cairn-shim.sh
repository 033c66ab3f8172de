#!/bin/sh
# tests/e2e/cairn-shim.sh: installed as `cairn` on the PATH Claude Code sees,
# in front of the binary under test ($E2E_CAIRN). It logs every call (so the
# test sees that the plugin's hooks and MCP server ran this binary) and, after
# the real `cairn hook stop` has run, snapshots that session from the store:
# the proof that the Stop hook itself saved the turn, before SessionEnd (which
# saves too) runs. Everything else is exec'd unchanged.
: "${E2E_CAIRN:?}" "${E2E_DIR:?}"
echo "$*" >> "$E2E_DIR/cairn-calls.log"
if [ "$#" -eq 2 ] && [ "$1" = hook ] && [ "$2" = stop ]; then
    in=$(mktemp "$E2E_DIR/stop-in.XXXXXX") || exec "$E2E_CAIRN" "$@"
    cat > "$in"
    "$E2E_CAIRN" hook stop < "$in"
    rc=$?
    sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("session_id",""))' "$in" 2>/dev/null)
    [ -n "$sid" ] && "$E2E_CAIRN" show "$sid" >> "$E2E_DIR/after-stop.txt" 2>&1
    exit $rc
fi
exec "$E2E_CAIRN" "$@"
