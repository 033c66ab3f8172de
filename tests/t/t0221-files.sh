#!/bin/sh
# t0221-files: the files cairn touches beside the store. Symlinks planted
# at ~/.cairn/inject.jsonl, ~/.cairn/injected/<session> or a model
# download's .part file are never followed; a symlinked settings.json
# stays a link (the change goes to its target); another program's SQLite
# file is refused before anything in it changes (no switch to WAL); a
# store this user cannot write (0444 file, 0555 folder) can still be read
# by recall, sessions, show, export, stats and the prompt hook; a store
# that cannot grow (file size limit) stops `cairn add` at the first
# session with one message, the sessions before it stored whole.
. "$(dirname "$0")/lib.sh"
"$CAIRN" add "$ROOT/examples/sample-history.jsonl" >/dev/null

# ---- the prompt hook's files: never through a symlink ----
ask() {  # session prompt -> stdout of the hook
    python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1],"prompt":sys.argv[2],"cwd":"/tmp","hook_event_name":"UserPromptSubmit"}))' "$1" "$2" \
        > "$TMP/ask.json" && "$CAIRN" hook prompt < "$TMP/ask.json"
}
mkdir -p "$HOME/.cairn/injected"
echo "victim" > "$TMP/victim-log"
echo "victim" > "$TMP/victim-state"
ln -s "$TMP/victim-log" "$HOME/.cairn/inject.jsonl"
ln -s "$TMP/victim-state" "$HOME/.cairn/injected/s1"
out=$(ask s1 "which climbing gym did I pick?"); rc=$?
eq "hook exits 0 with symlinks in place" "$rc" 0
contains "the hook still injects" "$out" "LBC"
eq "inject.jsonl's link target untouched" "$(cat "$TMP/victim-log")" "victim"
eq "injected/<session>'s link target untouched" "$(cat "$TMP/victim-state")" "victim"
check "inject.jsonl is still the link" [ -L "$HOME/.cairn/inject.jsonl" ]
contains "the refusal is in cairn.log" "$(cat "$HOME/.cairn/cairn.log" 2>/dev/null)" "inject.jsonl"
rm -f "$HOME/.cairn/inject.jsonl" "$HOME/.cairn/injected/s1"
ask s1 "which climbing gym did I pick?" >/dev/null
contains "a regular inject.jsonl is written" "$(cat "$HOME/.cairn/inject.jsonl")" '"fired":true'

# ---- setup: a symlinked settings.json stays a link ----
mkdir -p "$TMP/dotfiles" "$HOME/.claude"
printf '{\n  "model": "opus"\n}\n' > "$TMP/dotfiles/settings.json"
ln -s "$TMP/dotfiles/settings.json" "$HOME/.claude/settings.json"
"$CAIRN" setup claude-code --no-import >"$TMP/setup.out" 2>&1; rc=$?
eq "setup exits 0" "$rc" 0
check "settings.json is still a symlink" [ -L "$HOME/.claude/settings.json" ]
contains "the hooks went to the link's target" "$(cat "$TMP/dotfiles/settings.json")" "hook stop"
contains "the target keeps its keys" "$(cat "$TMP/dotfiles/settings.json")" '"model": "opus"'
"$CAIRN" setup claude-code --remove >/dev/null 2>&1
check "still a symlink after --remove" [ -L "$HOME/.claude/settings.json" ]
lacks "--remove took them out of the target" "$(cat "$TMP/dotfiles/settings.json")" "hook stop"
ln -sf "$TMP/nowhere/settings.json" "$HOME/.claude/settings.json"
"$CAIRN" setup claude-code --no-import >"$TMP/setup.out" 2>&1 && bad "a dangling link accepted" || ok
check "the dangling link is left as it was" [ -L "$HOME/.claude/settings.json" ]

# ---- another program's SQLite file: refused before WAL ----
if command -v sqlite3 >/dev/null 2>&1; then
    sqlite3 "$TMP/foreign.db" "CREATE TABLE notes(x); INSERT INTO notes VALUES ('mine');"
    before=$(sha256sum < "$TMP/foreign.db")
    out=$("$CAIRN" --db "$TMP/foreign.db" add "$ROOT/examples/sample-history.jsonl" 2>&1) &&
        bad "foreign file accepted" || ok
    contains "says it is another program's file" "$out" "not a cairn store"
    eq "journal mode unchanged" "$(sqlite3 "$TMP/foreign.db" 'PRAGMA journal_mode')" "delete"
    eq "not a byte changed" "$(sha256sum < "$TMP/foreign.db")" "$before"
    check "no -wal beside it" [ ! -e "$TMP/foreign.db-wal" ]
    # a foreign file that happens to set user_version is not migrated either
    sqlite3 "$TMP/foreign2.db" "CREATE TABLE notes(x); PRAGMA user_version=3;"
    "$CAIRN" --db "$TMP/foreign2.db" sessions >/dev/null 2>&1 && bad "foreign v3 accepted" || ok
    "$CAIRN" --db "$TMP/foreign2.db" add "$ROOT/examples/sample-history.jsonl" >/dev/null 2>&1 &&
        bad "foreign v3 written" || ok
    eq "no cairn table added" "$(sqlite3 "$TMP/foreign2.db" "SELECT group_concat(name) FROM sqlite_master WHERE type='table'")" "notes"
else
    echo "SKIP foreign file: no sqlite3 shell" >&2
fi

# ---- a read-only store ----
# As root every file is writable, so the commands run as nobody; as
# another user the modes alone make the store read-only.
as_user() { "$@"; }
ro_ok=1
if [ "$(id -u)" -eq 0 ]; then
    if command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
        as_user() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
    else
        ro_ok=0
        echo "SKIP read-only store: running as root without setpriv" >&2
    fi
fi
if [ "$ro_ok" -eq 1 ]; then
    RO="$TMP/ro"
    mkdir -p "$RO/store" "$RO/home"
    cp "$CAIRN" "$RO/cairn"
    "$RO/cairn" --db "$RO/store/memory.db" add "$ROOT/examples/sample-history.jsonl" >/dev/null
    chmod 755 "$TMP" "$RO" "$RO/cairn"
    chmod 777 "$RO/home"
    chmod 444 "$RO/store/memory.db"
    chmod 555 "$RO/store"
    rox() { as_user env HOME="$RO/home" CAIRN_DB="$RO/store/memory.db" "$RO/cairn" "$@"; }
    out=$(rox recall "which climbing gym did I pick?" 2>&1); rc=$?
    eq "recall exits 0" "$rc" 0
    contains "recall reads a read-only store" "$out" "LBC"
    out=$(rox sessions 2>&1)
    contains "sessions reads it" "$out" "demo/2026-03-02-lisbon"
    sid=$(rox sessions --json 2>/dev/null | head -1 | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["id"])')
    out=$(rox show "$sid" 2>&1); rc=$?
    eq "show exits 0" "$rc" 0
    out=$(rox export 2>&1)
    contains "export reads it" "$out" "LBC"
    out=$(rox stats 2>&1)
    contains "stats reads it" "$out" "sessions"
    python3 -c 'import json; print(json.dumps({"session_id":"ro1","prompt":"which climbing gym did I pick?","cwd":"/tmp","hook_event_name":"UserPromptSubmit"}))' > "$RO/ask.json"
    chmod 644 "$RO/ask.json"
    out=$(rox hook prompt < "$RO/ask.json")
    contains "the prompt hook injects from it" "$out" "LBC"
    lacks "the hook found the store" "$(cat "$RO/home/.cairn/inject.jsonl" 2>/dev/null)" "no store"
    out=$(rox add "$ROOT/examples/sample-history.jsonl" 2>&1) && bad "add to a read-only store" || ok
    check "nothing was created in the read-only folder" [ "$(ls "$RO/store")" = "memory.db" ]
    # a -wal that holds commits cannot be read around: refused, not read stale
    chmod 755 "$RO/store"; : > "$RO/store/memory.db-wal"; printf 'x' > "$RO/store/memory.db-wal"
    chmod 444 "$RO/store/memory.db-wal"; chmod 555 "$RO/store"
    out=$(rox sessions 2>&1) && bad "read around a WAL" || ok
    contains "says why" "$out" "memory.db-wal"
    chmod 755 "$RO/store"
fi

# ---- a store that cannot grow: one message, nothing partial ----
python3 - "$TMP/many.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(400):
        f.write(json.dumps({"id": "big-%d" % i, "messages": [
            {"role": "user", "content": ("filler%d " % i) * 300},
            {"role": "assistant", "content": "ok %d" % i}]}) + "\n")
PY
# the file size limit (512-byte blocks in sh) makes the store's writes fail
# with EFBIG, as a full disk does with ENOSPC; SIGXFSZ is ignored so the
# write returns the error instead of killing the process. 2 MB: room for a
# first group of sessions (cairn add commits up to 64 in a transaction)
sh -c 'ulimit -f 4096; trap "" XFSZ; exec "$0" --db "$1" add "$2"' "$CAIRN" "$TMP/full.db" \
    "$TMP/many.jsonl" >"$TMP/full.out" 2>"$TMP/full.err"; rc=$?
eq "add fails" "$rc" 1
eq "one error and one stop line, not one per session" "$(wc -l < "$TMP/full.err" | tr -d ' ')" 2
contains "says it stopped" "$(cat "$TMP/full.err")" "stopped"
n=$("$CAIRN" --db "$TMP/full.db" sessions --json | wc -l | tr -d ' ')
check "some sessions were stored before the limit" [ "$n" -gt 0 ]
check "and not all" [ "$n" -lt 400 ]
contains "the count printed is the count stored" "$(cat "$TMP/full.out")" "added $n sessions"
contains "the stop names the first line not stored" "$(cat "$TMP/full.err")" \
    "the sessions before line $((n + 1)) are stored"
if command -v sqlite3 >/dev/null 2>&1; then
    eq "the store is whole" "$(sqlite3 "$TMP/full.db" 'PRAGMA integrity_check')" "ok"
    eq "every stored session has both turns" \
        "$(sqlite3 "$TMP/full.db" 'SELECT count(*) FROM session_stats WHERE n != 2')" 0
fi

# ---- model downloads: never through a symlink ----
if command -v python3 >/dev/null 2>&1; then
    export CAIRN_MODEL_DIR="$TMP/models"
    rev=614241f622f53c4eeff9890bdc4f31cfecc418b3
    mkdir -p "$TMP/srv/intfloat/multilingual-e5-small/resolve/$rev"
    echo '{"not": "the real config"}' > "$TMP/srv/intfloat/multilingual-e5-small/resolve/$rev/config.json"
    mkdir -p "$CAIRN_MODEL_DIR/.multilingual-e5-small.partial"
    echo "victim" > "$TMP/victim-model"
    ln -s "$TMP/victim-model" "$CAIRN_MODEL_DIR/.multilingual-e5-small.partial/config.json.part"
    python3 "$ROOT/tests/tools/range_server.py" "$TMP/srv" "$TMP/port" &
    srv=$!
    i=0; while [ ! -f "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    out=$(CAIRN_HF_ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")" "$CAIRN" model pull multilingual-e5-small 2>&1) &&
        bad "pull through a symlink succeeded" || ok
    kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null
    eq "the link's target is untouched" "$(cat "$TMP/victim-model")" "victim"
    contains "says it cannot write the .part file" "$out" "config.json.part"
else
    echo "SKIP model download: no python3" >&2
fi
t_done
