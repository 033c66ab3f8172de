#!/bin/sh
# t0200-capture-import: `cairn import` of every kind from the fixtures in
# tests/data/capture: counts, sources, idempotence (a second run adds
# nothing), the summary, subagent files skipped, .zip exports, and, when
# ../shared is present, the same turns as the reference extractors.
. "$(dirname "$0")/lib.sh"
D="$ROOT/tests/data/capture"

out=$("$CAIRN" import claude-code "$D/cc-replay.jsonl")
contains "claude-code summary" "$out" "1 session (1 new, 0 updated, 0 refused), 9 messages added"
contains "skips are explained" "$out" "bookkeeping records"
contains "private spans counted" "$out" "1 <private> spans removed"
out=$("$CAIRN" import claude-code "$D/cc-replay.jsonl")
contains "second run reads nothing" "$out" "imported 0 files (1 unchanged"
out=$("$CAIRN" import claude-code --full "$D/cc-replay.jsonl")
contains "--full re-reads and adds nothing" "$out" "0 messages added, 9 already present"
out=$("$CAIRN" import claude-code "$D/cc-session.jsonl")
contains "bad lines counted" "$out" "2 malformed JSON"
out=$("$CAIRN" import claude-ai "$D/claude-ai.json")
contains "claude-ai" "$out" "2 sessions (2 new"
out=$("$CAIRN" import chatgpt "$D/chatgpt.json")
contains "chatgpt" "$out" "2 sessions (2 new"
out=$("$CAIRN" import codex "$D/codex-rollout.jsonl")
contains "codex" "$out" "1 session (1 new"
out=$("$CAIRN" import codex "$D/codex-legacy.jsonl")
contains "codex legacy" "$out" "1 session (1 new"
out=$("$CAIRN" sessions)
for src in claude-code claude-ai chatgpt codex; do contains "source $src" "$out" "$src"; done
"$CAIRN" export --format jsonl > "$TMP/all.jsonl"
# jsonl: the cairn add format round-trips
out=$(CAIRN_DB="$TMP/j.db" "$CAIRN" import jsonl "$TMP/all.jsonl")
contains "jsonl import" "$out" "8 sessions (8 new"
CAIRN_DB="$TMP/j.db" "$CAIRN" export --format jsonl > "$TMP/all2.jsonl"
check "jsonl import is the same store" cmp -s "$TMP/all.jsonl" "$TMP/all2.jsonl"
printf 'garbage\n{"id":"x","messages":[{"role":"robot","content":"?"}]}\n' >> "$TMP/all.jsonl"
out=$(CAIRN_DB="$TMP/j.db" "$CAIRN" import jsonl "$TMP/all.jsonl" 2>&1); rc=$?
eq "bad jsonl lines make the exit 1" "$rc" 1
contains "bad jsonl lines counted" "$out" "2 refused"

# a .zip export (made with python's zipfile: no zip tool needed)
mkdir -p "$TMP/z"
cp "$D/claude-ai.json" "$TMP/z/conversations.json"
python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED)
z.write(sys.argv[2], "conversations.json"); z.writestr("users.json", "[]"); z.close()' \
    "$TMP/export.zip" "$TMP/z/conversations.json"
out=$(CAIRN_DB="$TMP/z.db" "$CAIRN" import claude-ai "$TMP/export.zip")
contains "zip import" "$out" "2 sessions (2 new"
printf 'PK\003\004 broken' > "$TMP/bad.zip"
out=$(CAIRN_DB="$TMP/z.db" "$CAIRN" import chatgpt "$TMP/bad.zip" 2>&1); rc=$?
eq "broken zip fails" "$rc" 1
contains "broken zip says why" "$out" "zip"

# a ~/.claude/projects tree: subagent files skipped and counted
P="$HOME/.claude/projects/-home-u-replay"
mkdir -p "$P/replay-1/subagents"
cp "$D/cc-replay.jsonl" "$P/replay-1.jsonl"
cp "$D/cc-session.jsonl" "$P/sess-1.jsonl"
cp "$D/cc-replay.jsonl" "$P/replay-1/subagents/agent-a1.jsonl"
out=$(CAIRN_DB="$TMP/d.db" "$CAIRN" import claude-code)
contains "default folder" "$out" "imported 2 files"
contains "subagents skipped" "$out" "1 subagent files skipped"
lacks "no progress bar off a terminal" "$out" "[###"
out=$(CAIRN_DB="$TMP/d.db" "$CAIRN" import claude-code 2>&1)
contains "directory re-run" "$out" "0 messages added"
check_fails "unknown kind" "$CAIRN" import nope x
# an empty folder: nothing to sort (qsort was given NULL; `make check`'s
# UBSan stopped there: nonnull)
mkdir -p "$TMP/empty-projects"
out=$(CAIRN_DB="$TMP/e.db" "$CAIRN" import claude-code "$TMP/empty-projects" 2>&1)
check "empty folder imports nothing, exit 0" [ $? -eq 0 ]
contains "empty folder" "$out" "imported 0 files"
check_fails "missing file" "$CAIRN" import chatgpt "$TMP/none.json"

# the real samples give the reference extractors' turns
S="$ROOT/../shared/data/transcripts"
if [ -d "$S" ] && command -v python3 >/dev/null; then
    cmp_turns() {  # label reference.jsonl export.jsonl
        python3 - "$2" "$3" <<'PY' && ok || bad "$1: turns differ from the reference"
import json, sys
ref = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
got = []
for l in open(sys.argv[2]):
    if l.strip():
        for m in json.loads(l)["messages"]:
            got.append(("user" if m["role"] == "user" else "assistant", m["content"].strip()))
want = [("user" if r["role"] in ("human", "user") else "assistant", r["text"].strip()) for r in ref]
if got != want:
    for i, (a, b) in enumerate(zip(got, want)):
        if a != b:
            print("first difference at", i, repr(a)[:200], repr(b)[:200], file=sys.stderr)
            break
    print(len(got), "turns vs", len(want), file=sys.stderr)
    sys.exit(1)
PY
    }
    for f in "$S"/claude-code-samples/*.jsonl; do
        case "$f" in *.turns.jsonl) continue ;; esac
        rm -f "$TMP/s.db"*
        CAIRN_DB="$TMP/s.db" "$CAIRN" import claude-code "$f" >/dev/null
        CAIRN_DB="$TMP/s.db" "$CAIRN" export --format jsonl > "$TMP/s.jsonl"
        python3 "$S/claude-code-samples/extract_turns.py" "$f" > "$TMP/ref.jsonl"
        cmp_turns "$(basename "$f")" "$TMP/ref.jsonl" "$TMP/s.jsonl"
    done
    for k in claude-ai chatgpt; do
        f="$S/export-samples/$k-conversations.sample.json"
        rm -f "$TMP/s.db"*
        CAIRN_DB="$TMP/s.db" "$CAIRN" import $k "$f" >/dev/null
        # export orders sessions by id; the reference by conversation: sort both
        CAIRN_DB="$TMP/s.db" "$CAIRN" export --format jsonl > "$TMP/s.jsonl"
        python3 - "$S/export-samples/$k.linearized.jsonl" "$TMP/s.jsonl" <<'PY' && ok || bad "$k: turns differ from linearize.py"
import json, sys
ref = {}
for l in open(sys.argv[1]):
    if l.strip():
        r = json.loads(l)
        ref.setdefault(r["conv"], []).append(("user" if r["role"] in ("human", "user") else "assistant", r["text"].strip()))
got = {}
for l in open(sys.argv[2]):
    if l.strip():
        s = json.loads(l)
        got[s["id"]] = [(m["role"], m["content"].strip()) for m in s["messages"]]
if set(ref) != set(got):
    print("conversations", sorted(ref), sorted(got), file=sys.stderr); sys.exit(1)
for c in ref:
    if ref[c] != got[c]:
        print("conversation", c, ref[c][:3], got[c][:3], file=sys.stderr); sys.exit(1)
PY
    done
else
    t_skip "../shared/data/transcripts or python3 missing: real samples not compared with the reference extractors"
fi
t_done
