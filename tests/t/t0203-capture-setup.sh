#!/bin/sh
# t0203-capture-setup: `cairn setup claude-code` merges its hooks into
# ~/.claude/settings.json without touching anything else (dry-run shows a
# diff and writes nothing, a second run changes nothing, --remove gives the
# original back, the old file is backed up), and `cairn doctor` reports the
# store, the hooks, the log and the transcripts at risk of deletion.
. "$(dirname "$0")/lib.sh"
D="$ROOT/tests/data/capture"
SET="$HOME/.claude/settings.json"
mkdir -p "$HOME/.claude"
cat > "$SET" <<'JSON'
{
  "model": "opus",
  "cleanupPeriodDays": 20,
  "permissions": {
    "allow": ["Bash(ls:*)"]
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          { "type": "command", "command": "/usr/bin/notify-send done" }
        ]
      }
    ],
    "UserPromptSubmit": [
      { "hooks": [ { "type": "command", "command": "other-tool prompt" } ] }
    ]
  },
  "unknownFutureKey": { "nested": [1, 2.5, true, null] }
}
JSON
chmod 640 "$SET"
cp "$SET" "$TMP/orig.json"
norm() { python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), sort_keys=True))' "$1"; }

out=$("$CAIRN" setup claude-code --dry-run)
contains "dry run shows a diff" "$out" "+"
contains "dry run shows the stop hook" "$out" "hook stop"
check "dry run writes nothing" cmp -s "$SET" "$TMP/orig.json"

out=$("$CAIRN" setup claude-code --no-import)
contains "setup adds the plugin's six hooks" "$out" "added 6 cairn hooks"
check "backup of the old file" cmp -s "$SET.cairn-bak" "$TMP/orig.json"
eq "mode kept" "$(stat -c %a "$SET")" 640
check "result is valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$SET"
s=$(cat "$SET")
contains "unknown keys kept" "$s" "unknownFutureKey"
contains "other Stop hook kept" "$s" "notify-send"
contains "other events kept" "$s" "other-tool prompt"
contains "SessionEnd added" "$s" "hook session-end"
contains "PreCompact added" "$s" "hook pre-compact"
contains "UserPromptSubmit added" "$s" "hook prompt"
contains "SessionStart added" "$s" "hook session-start"
contains "PreToolUse added" "$s" "hook pre-tool"
contains "absolute binary path" "$s" "$CAIRN' hook stop"
eq "float kept" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["unknownFutureKey"]["nested"][1])' "$SET")" 2.5

cp "$SET" "$TMP/after1.json"
out=$("$CAIRN" setup claude-code --no-import)
contains "second setup is a no-op" "$out" "already installed"
check "second setup leaves the file alone" cmp -s "$SET" "$TMP/after1.json"

# the installed command really runs as Claude Code would run it (sh -c)
cmd=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["hooks"]["Stop"][1]["hooks"][0]["command"])' "$SET")
printf '{"session_id":"replay-1","transcript_path":"%s","cwd":"/tmp"}' "$D/cc-replay.jsonl" | sh -c "$cmd"
eq "installed hook exits 0" "$?" 0
out=$("$CAIRN" sessions)
contains "installed hook saved the session" "$out" "replay-1"

out=$("$CAIRN" setup claude-code --remove)
contains "remove takes 6 out" "$out" "removed 6 cairn hooks"
eq "remove gives the original back" "$(norm "$SET")" "$(norm "$TMP/orig.json")"
out=$("$CAIRN" setup claude-code --remove)
contains "second remove is a no-op" "$out" "no cairn hooks"

# no settings file at all: created; removed again leaves an empty object
rm -rf "$HOME/.claude"
out=$("$CAIRN" setup claude-code --no-import)
contains "fresh settings" "$out" "added 6"
"$CAIRN" setup claude-code --remove >/dev/null
eq "fresh remove" "$(norm "$SET")" "{}"
# a settings file that is not JSON is refused, untouched
printf '{ broken' > "$SET"
out=$("$CAIRN" setup claude-code 2>&1); rc=$?
eq "broken settings refused" "$rc" 1
eq "broken settings untouched" "$(cat "$SET")" "{ broken"
check_fails "unknown client" "$CAIRN" setup vscode

# doctor: hooks missing, transcripts not imported and about to be deleted
printf '{"cleanupPeriodDays": 10}\n' > "$SET"
P="$HOME/.claude/projects/-p"
mkdir -p "$P"
cp "$D/cc-replay.jsonl" "$P/old.jsonl"
cp "$D/cc-session.jsonl" "$P/new.jsonl"
touch -d '8 days ago' "$P/old.jsonl"
rm -f "$CAIRN_DB"*
echo garbage | "$CAIRN" hook stop
"$CAIRN" import claude-code "$P/new.jsonl" >/dev/null
out=$("$CAIRN" doctor); rc=$?
eq "doctor exit 1 on problems" "$rc" 1
contains "doctor store" "$out" "schema version"
contains "doctor store mode" "$out" "mode 600"
contains "doctor hooks" "$out" "not installed"
contains "doctor log" "$out" "not a JSON object"
contains "doctor counts" "$out" "2 transcripts"
contains "doctor warns" "$out" "WARNING:  1 transcripts not imported will be deleted"
contains "doctor reads cleanupPeriodDays" "$out" "cleanupPeriodDays 10"
"$CAIRN" import claude-code >/dev/null
"$CAIRN" setup claude-code --no-import >/dev/null
rm -f "$HOME/.cairn/cairn.log"
out=$("$CAIRN" doctor); rc=$?
eq "doctor all good" "$rc" 0
contains "doctor hooks installed" "$out" "installed in"
t_done
