#!/bin/sh
# t0224-setup-plugin: `cairn setup claude-code` and `cairn doctor` beside the
# Claude Code plugin (issue 17). setup installs the plugin's six hooks,
# each once however often it runs, keeping the user's own, and adds what an
# older three-hook install lacks; with the plugin enabled it installs
# nothing (both would save every turn twice); doctor reads the plugin from
# plugins/installed_plugins.json (the shape Claude Code 2.1.332 writes),
# never advises a second install, warns about a double one, and names the
# lines that need attention when it exits 1. With no Claude Code history,
# setup says there is nothing to import and exits 0.
. "$(dirname "$0")/lib.sh"
C=$HOME/.claude
SET=$C/settings.json
mkdir -p "$C/plugins"
# ours EVENT: how many cairn handlers settings.json holds for EVENT
ours() {
    python3 - "$SET" "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(1 for g in d.get("hooks", {}).get(sys.argv[2], []) for h in g.get("hooks", [])
          if "cairn" in h.get("command", "") and " hook " in h.get("command", "")))
PY
}
# plugin SCOPE [ENABLED]: the cairn plugin recorded as Claude Code does
plugin() {
    python3 - "$C/plugins/installed_plugins.json" "$SET" "$@" <<'PY'
import json, os, sys
inst, settings, scope = sys.argv[1:4]
enabled = len(sys.argv) > 4 and sys.argv[4] == "on"
rec = {"scope": scope, "installPath": "/x/cache/cairn/cairn/0.1.0", "version": "0.1.0"}
if scope != "user":
    rec["projectPath"] = "/some/project"
json.dump({"version": 2, "plugins": {"cairn@cairn": [rec]}}, open(inst, "w"))
d = json.load(open(settings)) if os.path.exists(settings) else {}
d.setdefault("enabledPlugins", {})["cairn@cairn"] = enabled
json.dump(d, open(settings, "w"))
PY
}

# --- the six hooks, each once, the user's own kept
cat > "$SET" <<'JSON'
{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "other-tool prompt"}]}],
           "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo hi"}]}]}}
JSON
out=$("$CAIRN" setup claude-code --no-import); rc=$?
eq "setup exits 0" "$rc" 0
contains "setup adds six hooks" "$out" "added 6 cairn hooks"
"$CAIRN" setup claude-code --no-import >/dev/null
for ev in Stop UserPromptSubmit SessionStart SessionEnd PreCompact PreToolUse; do
    eq "after two runs: one cairn $ev hook" "$(ours $ev)" 1
done
s=$(cat "$SET")
contains "the user's prompt hook kept" "$s" "other-tool prompt"
contains "the user's start hook kept" "$s" "echo hi"
eq "SessionStart as the plugin matches it" "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print([g.get("matcher") for g in d["hooks"]["SessionStart"] if "cairn" in json.dumps(g)][0])' "$SET")" \
    "startup|resume|clear|compact"
eq "prompt hook timeout as the plugin's" "$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print([h["timeout"] for g in d["hooks"]["UserPromptSubmit"] for h in g["hooks"] if "cairn" in h["command"]][0])' "$SET")" 10
# the installed prompt and session-start hooks run as Claude Code runs them
for ev in UserPromptSubmit SessionStart; do
    cmd=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print([h["command"] for g in d["hooks"][sys.argv[2]] for h in g["hooks"] if "cairn" in h["command"]][0])' "$SET" $ev)
    printf '{"session_id":"s","prompt":"hello","cwd":"/tmp","source":"startup"}' | sh -c "$cmd" >/dev/null
    eq "installed $ev hook exits 0" "$?" 0
done

# the installed pre-tool hook runs as Claude Code runs it: exit 0, no decision with no correction
cmd=$(python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
print([h["command"] for g in d["hooks"]["PreToolUse"] for h in g["hooks"] if "cairn" in h["command"]][0])' "$SET")
out=$(printf '{"session_id":"s","cwd":"/tmp","tool_name":"Bash","tool_input":{"command":"ls"}}' | sh -c "$cmd"); rc=$?
eq "installed PreToolUse hook exits 0 with no decision" "$rc:$out" "0:"

# --- an install from before corrections (five hooks): doctor names the pre-tool hook
printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "%s hook stop"}]}],
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "%s hook prompt"}]}],
  "SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [{"type": "command", "command": "%s hook session-start"}]}],
  "SessionEnd": [{"hooks": [{"type": "command", "command": "%s hook session-end"}]}],
  "PreCompact": [{"hooks": [{"type": "command", "command": "%s hook pre-compact"}]}]}}\n' \
    "$CAIRN" "$CAIRN" "$CAIRN" "$CAIRN" "$CAIRN" > "$SET"
contains "doctor: an install without the pre-tool hook is partial" "$("$CAIRN" doctor)" "missing: PreToolUse"

# --- an install from before (three hooks): setup adds the other three
printf '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "%s hook stop"}]}],
  "SessionEnd": [{"hooks": [{"type": "command", "command": "%s hook session-end"}]}],
  "PreCompact": [{"hooks": [{"type": "command", "command": "%s hook pre-compact"}]}]}}\n' \
    "$CAIRN" "$CAIRN" "$CAIRN" > "$SET"
out=$("$CAIRN" doctor); rc=$?
contains "doctor: an old install is partly installed" "$out" "partly installed"
contains "doctor: names what is missing" "$out" "missing: UserPromptSubmit, SessionStart"
out=$("$CAIRN" setup claude-code --no-import)
contains "setup adds the three missing" "$out" "added 3 cairn hooks"
for ev in Stop UserPromptSubmit SessionStart SessionEnd PreCompact PreToolUse; do
    eq "upgraded: one cairn $ev hook" "$(ours $ev)" 1
done

# --- doctor with the plugin
"$CAIRN" setup claude-code --remove >/dev/null
rm -f "$SET"
plugin user on
mkdir -p "$C/projects"
"$CAIRN" add - >/dev/null <<'JSON'
{"id": "s1", "messages": [{"role": "user", "content": "hello"}]}
JSON
out=$("$CAIRN" doctor); rc=$?
contains "doctor sees the plugin" "$out" "hooks:    from the plugin cairn@cairn"
lacks "doctor does not advise setup to a plugin user" "$out" "cairn setup claude-code"
eq "doctor with the plugin: all good" "$rc" 0
contains "doctor with the plugin: says so" "$out" "all good"

# setup with the plugin enabled: refused, nothing written
out=$("$CAIRN" setup claude-code --no-import 2>&1); rc=$?
eq "setup beside the enabled plugin exits 1" "$rc" 1
contains "setup says why" "$out" "the cairn plugin (cairn@cairn) is installed and enabled"
eq "setup wrote no hook" "$(ours Stop)" 0

# both installed (settings hooks from before the plugin): doctor warns
python3 - "$SET" "$CAIRN" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["hooks"] = {"Stop": [{"hooks": [{"type": "command", "command": sys.argv[2] + " hook stop"}]}]}
json.dump(d, open(sys.argv[1], "w"))
PY
out=$("$CAIRN" doctor); rc=$?
eq "doctor: a double install exits 1" "$rc" 1
contains "doctor: a double install is named" "$out" "hooks installed twice"
contains "doctor: keeps the plugin, removes the rest" "$out" "cairn setup claude-code --remove"
lacks "doctor never advises installing more" "$out" "run \`cairn setup claude-code\`"
contains "doctor names the line" "$out" "needs attention: hooks"

# the plugin disabled: doctor says to enable it, not to add the settings hooks
rm -f "$SET"
plugin user off
out=$("$CAIRN" doctor); rc=$?
eq "disabled plugin: exit 1" "$rc" 1
contains "disabled plugin: said" "$out" "claude plugin enable cairn@cairn"
lacks "disabled plugin: no second install advised" "$out" "cairn setup claude-code"

# the plugin for one project, the settings hooks too: twice there
plugin project on
"$CAIRN" setup claude-code --no-import >/dev/null
out=$("$CAIRN" doctor); rc=$?
eq "project plugin and settings hooks: exit 1" "$rc" 1
contains "project plugin and settings hooks: said" "$out" "also installed for 1 project"
rm -f "$C/plugins/installed_plugins.json"

# every line that needs attention is named: no store, no hooks
rm -f "$CAIRN_DB"* "$SET"
out=$("$CAIRN" doctor); rc=$?
eq "doctor: problems exit 1" "$rc" 1
contains "doctor: the lines named" "$out" "needs attention: store, hooks"

# --- no Claude Code history: nothing to import, exit 0
rm -rf "$C/projects"
out=$("$CAIRN" setup claude-code 2>&1 </dev/null); rc=$?
eq "setup with no history exits 0" "$rc" 0
contains "setup with no history: nothing to import" "$out" "nothing to import"
lacks "setup with no history: no import advised" "$out" "run \`cairn import claude-code\`"
out=$("$CAIRN" setup claude-code --import 2>&1); rc=$?
eq "setup --import with no history exits 0" "$rc" 0
contains "setup --import with no history: said" "$out" "nothing to import yet"
lacks "setup --import with no history: no error" "$out" "cannot read"
t_done
