#!/bin/sh
# t0223-import-kind: `cairn import` of a file as the wrong kind (issue 17):
# refused with what the file looks like and the import that reads it,
# nothing recorded, so the right import then works; a file that gives no
# conversation exits 1 and is read again next time (never "unchanged");
# --attachments after a plain import keeps the attachments; a machine with
# no Claude Code or Codex history has nothing to import (exit 0). Small
# made-up files only.
. "$(dirname "$0")/lib.sh"
F=$TMP/files
mkdir -p "$F"

cat > "$F/gpt.json" <<'JSON'
[{"id": "g-1", "title": "Kettle", "create_time": 1760000000.0, "current_node": "a",
  "mapping": {
    "u": {"id": "u", "parent": null, "children": ["a"], "message": {"id": "u", "author": {"role": "user"},
          "create_time": 1760000000.0, "content": {"content_type": "text", "parts": ["how long to descale a kettle"]}}},
    "a": {"id": "a", "parent": "u", "children": [], "message": {"id": "a", "author": {"role": "assistant"},
          "create_time": 1760000010.0, "content": {"content_type": "text", "parts": ["twenty minutes in vinegar"]}}}}}]
JSON
cat > "$F/cai.json" <<'JSON'
[{"uuid": "c-1", "name": "Bread", "created_at": "2025-01-01T00:00:00Z",
  "chat_messages": [
    {"uuid": "cm1", "sender": "human", "text": "rye or spelt for the loaf", "created_at": "2025-01-01T00:00:00Z",
     "attachments": [{"file_name": "recipe.txt", "extracted_content": "500 g of flour, 10 g of salt"}]},
    {"uuid": "cm2", "sender": "assistant", "text": "spelt", "created_at": "2025-01-01T00:00:05Z"}]}]
JSON
cat > "$F/cc.jsonl" <<'JSON'
{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"cc-1","cwd":"/nowhere/p","timestamp":"2026-01-01T10:00:00Z","message":{"role":"user","content":"which port does the staging proxy use"}}
{"type":"assistant","uuid":"a1","parentUuid":"u1","sessionId":"cc-1","timestamp":"2026-01-01T10:00:05Z","message":{"id":"msg_1","role":"assistant","model":"m","content":[{"type":"text","text":"port 8443"}]}}
JSON

# wrong_then_right FILE WRONG RIGHT WHAT: refused as WRONG, saying WHAT and
# the right command; then RIGHT imports the one session
wrong_then_right() {
    out=$("$CAIRN" import "$2" "$1" 2>&1); rc=$?
    eq "$2 of a $3 file exits 1" "$rc" 1
    contains "$2 of a $3 file says what it is" "$out" "looks like $4"
    contains "$2 of a $3 file gives the command" "$out" "cairn import $3 $1"
    lacks "$2 of a $3 file: the path said once at the start" "$out" "import: $1: $1"
    out=$("$CAIRN" import "$3" "$1" 2>&1); rc=$?
    eq "then $3 exits 0" "$rc" 0
    contains "then $3 imports it (not 'unchanged')" "$out" "1 session (1 new"
}
wrong_then_right "$F/gpt.json" claude-ai chatgpt "a ChatGPT export, not a claude.ai export"
wrong_then_right "$F/cai.json" chatgpt claude-ai "a claude.ai export, not a ChatGPT export"
wrong_then_right "$F/cc.jsonl" chatgpt claude-code "a Claude Code transcript, not a ChatGPT export"

# a file of the kind with no conversation in it: exit 1, and read again
printf '[{"title": "no mapping in this one"}]\n' > "$F/none.json"
for run in 1 2; do
    out=$("$CAIRN" import chatgpt "$F/none.json" 2>&1); rc=$?
    eq "no conversation: exit 1 (run $run)" "$rc" 1
    contains "no conversation: said (run $run)" "$out" "nothing imported: no conversation found in it"
    contains "no conversation: read, not 'unchanged' (run $run)" "$out" "imported 1 file (0 unchanged"
done

# an unchanged file: said, with the option that reads it again
out=$("$CAIRN" import chatgpt "$F/gpt.json"); rc=$?
eq "unchanged exits 0" "$rc" 0
contains "unchanged: --full named" "$out" "nothing new: the file is unchanged since the last import (--full"
contains "--full is in the usage" "$("$CAIRN" import --help)" "--full"

# --attachments after a plain import: read again, the attachment kept
"$CAIRN" export --session c-1 > "$TMP/before.txt"
lacks "plain import leaves the attachment out" "$(cat "$TMP/before.txt")" "500 g of flour"
out=$("$CAIRN" import claude-ai --attachments "$F/cai.json" 2>&1); rc=$?
eq "--attachments after a plain import exits 0" "$rc" 0
contains "--attachments re-reads the export" "$out" "1 updated"
contains "--attachments: the attachment is stored" "$("$CAIRN" export --session c-1)" "[attachment: recipe.txt]"
contains "--attachments: its text too" "$("$CAIRN" export --session c-1)" "500 g of flour"

# a folder: a transcript with no prompt in it is normal there (counted);
# a folder where no file gives anything exits 1
P=$TMP/projects/-p
mkdir -p "$P"
cp "$F/cc.jsonl" "$P/real.jsonl"
printf '{"type":"summary","summary":"nothing yet","leafUuid":"x"}\n' > "$P/idle.jsonl"
out=$(CAIRN_DB="$TMP/dir.db" "$CAIRN" import claude-code "$TMP/projects" 2>&1); rc=$?
eq "folder with one empty transcript exits 0" "$rc" 0
contains "folder: the empty one counted" "$out" "1 with no conversation"
rm "$P/real.jsonl"
out=$(CAIRN_DB="$TMP/dir2.db" "$CAIRN" import claude-code "$TMP/projects" 2>&1); rc=$?
eq "folder with nothing in it exits 1" "$rc" 1
contains "folder with nothing: said" "$out" "nothing imported: no conversation found in the 1 files read"
# a folder of the wrong kind: each file refused, a few named, the rest counted
for i in 1 2 3 4 5 6 7; do cp "$F/cc.jsonl" "$P/s$i.jsonl"; done
out=$(CAIRN_DB="$TMP/dir3.db" "$CAIRN" import codex "$TMP/projects" 2>&1); rc=$?
eq "folder of the wrong kind exits 1" "$rc" 1
contains "folder of the wrong kind: what they are" "$out" "looks like a Claude Code transcript"
contains "folder of the wrong kind: the rest counted" "$out" "and 3 more files failed"

# no history on this machine: nothing to import yet, exit 0
export HOME="$TMP/fresh"
mkdir -p "$HOME"
out=$("$CAIRN" import claude-code 2>&1); rc=$?
eq "no ~/.claude/projects: exit 0" "$rc" 0
contains "no ~/.claude/projects: said" "$out" "nothing to import yet: $HOME/.claude/projects does not exist"
out=$("$CAIRN" import codex 2>&1); rc=$?
eq "no ~/.codex/sessions: exit 0" "$rc" 0
contains "no ~/.codex/sessions: said" "$out" "nothing to import yet"
out=$("$CAIRN" import claude-code "$TMP/fresh/nope" 2>&1); rc=$?
eq "a PATH that does not exist is still an error" "$rc" 1
t_done
