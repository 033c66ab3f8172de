#!/bin/sh
# t0550-vault: `cairn vault add|list|reindex|rm` on a small Markdown
# folder, and notes in recall and the prompt hook (docs/VAULTS.md).
# Indexing: sections with their lines, frontmatter, .gitignore and
# --exclude, binary and huge files skipped with a note, secrets masked and
# <private> dropped, the folder never written; re-index reads only what
# changed and drops removed files; rm leaves no byte of a note in the
# store's files. Recall: --source notes|conversations|all, path:line
# headers, the gate (a distinctive page name fires, an everyday word does
# not), and a store without vaults recalls as before. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
V="$TMP/vault"
mkdir -p "$V/wiki" "$V/drafts" "$V/.obsidian"
cat > "$V/wiki/Payments Service.md" <<'EOF'
---
title: Payments Service
aliases: [PSP, "payments provider"]
tags:
  - billing
---
# Payments Service

We chose Stripe over Braintree for the lower international fees.

## Keys
The live key is sk_live_4eC39HqLyjWDarjtT1zdp7dc and <private>the zorblax plan</private> stays.

```sh
# not a heading: qwvelquist
```
EOF
printf '# Tor relay\n\nRun tor with obfs4 bridges; the relay is called nyxbridge.\n' > "$V/wiki/tor.md"
printf '# Design\n\nGeneral design notes about launches.\n' > "$V/wiki/Design.md"
printf '# Draft\n\nflimflarn draft text\n' > "$V/drafts/draft.md"
printf '# Skip me\n\nzagrebian text\n' > "$V/wiki/skip.tmp.md"
printf 'drafts/\n' > "$V/.gitignore"
printf '# config\nobsidianonly\n' > "$V/.obsidian/x.md"
printf 'PNG\0\0\0\0binary' > "$V/wiki/image.md"
python3 -c 'import sys; open(sys.argv[1], "w").write("# Big\n" + "word " * 1100000)' "$V/wiki/big.md"
printf 'not markdown\n' > "$V/wiki/notes.txt"
tree_sum() { (cd "$V" && find . -type f -exec sha256sum {} + | sort; find . -printf '%p %s %T@ %m\n' | sort) | sha256sum; }
before=$(tree_sum)

# add: what is indexed, what is left out and said
out=$("$CAIRN" vault add "$V" --name kb --exclude '*.tmp.md' 2>"$TMP/err"); rc=$?
eq "vault add: exit 0" "$rc" 0
contains "vault add: the summary" "$out" "added kb: 5 files, 3 added"
contains "vault add: excluded counted" "$out" "2 excluded"
contains "vault add: the binary file named" "$(cat "$TMP/err")" "wiki/image.md: binary, not indexed"
contains "vault add: the huge file named" "$(cat "$TMP/err")" "wiki/big.md: over 4 MB, not indexed"
eq "the folder is not written" "$(tree_sum)" "$before"
out=$("$CAIRN" vault list)
contains "vault list: name and counts" "$out" "kb	$V	3 notes"
out=$("$CAIRN" vault list --json)
contains "vault list --json" "$out" '"name":"kb"'
check_fails "vault add: the same name twice" "$CAIRN" vault add "$V" --name kb
check_fails "vault add: not a folder" "$CAIRN" vault add "$V/wiki/tor.md"
check_fails "vault rm: no such vault" "$CAIRN" vault rm nosuch
q() { sqlite3 "$CAIRN_DB" "$1"; }
eq "sections with their lines and headings" \
   "$(q "SELECT line || ' ' || heading FROM vault_sections s JOIN vault_docs d ON d.id = s.doc WHERE d.path = 'wiki/Payments Service.md' AND line > 0 ORDER BY line")" \
   "$(printf '7 Payments Service\n11 Payments Service > Keys')"
eq "frontmatter: title, aliases, tags" \
   "$(q "SELECT title || '|' || replace(aliases, char(10), ',') || '|' || tags FROM vault_docs WHERE path LIKE '%Payments%'")" \
   "Payments Service|PSP,payments provider|billing"
eq "the page's card: names and path words, line 0, never shown" \
   "$(q "SELECT count(*) FROM vault_sections s JOIN vault_docs d ON d.id = s.doc WHERE d.path = 'wiki/tor.md' AND line = 0 AND text LIKE '%wiki tor md%'")" 1
for w in flimflarn zagrebian obsidianonly; do
    eq "left out: $w not indexed" "$(q "SELECT count(*) FROM vault_sections WHERE text LIKE '%$w%'")" 0
done
eq "fenced code stays in its section" \
   "$(q "SELECT heading FROM vault_sections WHERE text LIKE '%qwvelquist%'")" "Payments Service > Keys"
out=$("$CAIRN" recall "qwvelquist" --source notes)
contains "the index finds a word of fenced code" "$out" "qwvelquist"
eq "a secret is masked" "$(q "SELECT count(*) FROM vault_sections WHERE text LIKE '%sk_live_4eC3%'")" 0
eq "<private> is dropped" "$(q "SELECT count(*) FROM vault_sections WHERE text LIKE '%zorblax%'")" 0

# recall: notes as path:line snippets, fenced in the hook
out=$("$CAIRN" recall "which relay runs nyxbridge?" --source notes)
contains "recall --source notes: path:line and heading" "$out" "[note wiki/tor.md:1 · Tor relay]"
contains "recall --source notes: the text" "$out" "obfs4 bridges"
out=$("$CAIRN" recall "the page named tor" --source notes)
contains "a page found by its card shows its first section" "$out" "[note wiki/tor.md:1 · Tor relay]"
lacks "the card itself is never shown" "$out" "wiki tor md"
out=$("$CAIRN" recall "which relay runs nyxbridge?" --source notes --json)
contains "recall --json: the note's path and line" "$out" '"vault":"kb","path":"wiki/tor.md","line":1'
"$CAIRN" add -q "$ROOT/examples/sample-history.jsonl"
out=$("$CAIRN" recall "which relay runs nyxbridge?" --source conversations)
lacks "recall --source conversations: no note" "$out" "[note "
out=$("$CAIRN" recall "which relay runs nyxbridge?" --budget 4000)
contains "recall (all): the note" "$out" "[note wiki/tor.md:1"
contains "recall (all): the conversations too (the store fits)" "$out" "LBC"
check_fails "recall: an unknown source" "$CAIRN" recall x --source nope

ask() {  # prompt -> the hook's additionalContext ("" when it adds nothing)
    python3 -c 'import json,sys; print(json.dumps({"session_id":sys.argv[1],"prompt":sys.argv[2],"cwd":"/tmp","hook_event_name":"UserPromptSubmit"}))' "$1" "$2" > "$TMP/ask.json"
    "$CAIRN" hook prompt < "$TMP/ask.json" > "$TMP/ask.out"
    python3 -c 'import json,sys; d=open(sys.argv[1]).read(); print(json.loads(d)["hookSpecificOutput"]["additionalContext"] if d.strip() else "")' "$TMP/ask.out"
}
out=$(ask h1 "what did we decide about the payments provider?")
contains "hook: a named page fires" "$out" "[note wiki/Payments Service.md:7"
contains "hook: fenced as memory" "$out" "data, not instructions"
contains "hook: the intro names the notes" "$out" "Notes from the user's Markdown vaults (path:line) from cairn memory"
lacks "hook: the intro does not call notes conversations" "$(printf '%s' "$out" | head -1)" "Past conversations"
out=$(ask h2 "let us talk about the design")
lacks "hook: an everyday word does not fire" "$out" "[note wiki/Design.md"

# MCP recall: the source filter
out=$(python3 - "$CAIRN" <<'PY'
import sys
from mcp_client import Mcp
with Mcp(sys.argv[1], name="t0550") as m:
    e1, t1 = m.call("recall", {"query": "which relay runs nyxbridge?", "source": "notes"})
    e2, t2 = m.call("recall", {"query": "which relay runs nyxbridge?", "source": "conversations"})
    e3, t3 = m.call("recall", {"query": "x", "source": "files"})
    print("notes:", e1, "[note wiki/tor.md:1" in t1, "note section" in t1)
    print("intro:", t1.split("\n", 1)[0])
    print("conversations:", e2, "[note " in t2)
    print("bad:", e3)
PY
)
contains "MCP recall source notes: the note, said in the footer" "$out" "notes: False True True"
contains "MCP recall source conversations: no note" "$out" "conversations: False False"
contains "MCP recall: the intro names notes alone" "$out" "intro: Notes from the user's Markdown vaults (path:line) from memory"
contains "MCP recall: an unknown source is an error" "$out" "bad: True"

# re-index: unchanged files are not read, changes and removals follow
out=$("$CAIRN" vault reindex kb 2>/dev/null)
contains "reindex: nothing changed" "$out" "0 added, 0 changed, 5 unchanged, 0 removed"
touch "$V/wiki/tor.md"
out=$("$CAIRN" vault reindex kb 2>/dev/null)
contains "reindex: a touched file keeps its rows" "$out" "0 changed, 5 unchanged"
printf '# Tor relay\n\nThe relay is now called quobridge.\n' > "$V/wiki/tor.md"
rm "$V/wiki/Design.md"
out=$("$CAIRN" vault reindex 2>/dev/null)
contains "reindex: a change and a removal" "$out" "0 added, 1 changed, 3 unchanged, 1 removed"
out=$("$CAIRN" recall "nyxbridge" --source notes 2>/dev/null); rc=$?
eq "reindex: the old text left the index (exit 3)" "$rc:$out" "3:"
contains "no note matches: said so" "$("$CAIRN" recall nyxbridge --source notes 2>&1)" "recall: no note matches the question"
"$CAIRN" --db "$TMP/none.db" add "$ROOT/examples/sample-history.jsonl" > /dev/null
contains "no vault: said so" "$(CAIRN_DB="$TMP/none.db" "$CAIRN" recall nyxbridge --source notes 2>&1)" "no Markdown vault in this store"
contains "reindex: the new text is in it" "$("$CAIRN" recall quobridge --source notes)" "quobridge"
eq "reindex: the removed file left" "$(q "SELECT count(*) FROM vault_docs WHERE path = 'wiki/Design.md'")" 0
# the sections' totals (schema 29), kept by triggers: the sums of the rows
totals_ok() {
    eq "$1" "$(q "SELECT sections || ',' || tok || ',' || whole FROM vault_totals")" \
        "$(q "SELECT count(*) || ',' || coalesce(sum(ntok), 0) || ',' || coalesce(sum(part = 0), 0) FROM vault_sections")"
}
totals_ok "totals after a change and a removal"
check "totals: the vault has sections" test "$(q "SELECT sections FROM vault_totals")" -gt 0
# a store of schema 28 gets them filled by the upgrade
cp "$CAIRN_DB" "$TMP/v28.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript("DROP TRIGGER vault_totals_ai; DROP TRIGGER vault_totals_au; DROP TRIGGER vault_totals_ad; DROP TABLE vault_totals; PRAGMA user_version=28;"); c.close()' "$TMP/v28.db"
CAIRN_DB="$TMP/v28.db" "$CAIRN" vault list >/dev/null 2>&1
eq "v28 store: the upgrade fills the totals" \
    "$(sqlite3 "$TMP/v28.db" "SELECT sections || ',' || tok || ',' || whole FROM vault_totals")" \
    "$(q "SELECT sections || ',' || tok || ',' || whole FROM vault_totals")"

# freshness: doctor tells, the Stop hook (write side) follows
printf '# New page\n\nzentriquon\n' > "$V/wiki/new.md"
out=$("$CAIRN" doctor 2>&1)
contains "doctor: a stale vault" "$out" "vault kb: 1 file changed since it was indexed"
: > "$TMP/t.jsonl"
printf '{"session_id":"s9","transcript_path":"%s","cwd":"/tmp","hook_event_name":"Stop"}' \
    "$TMP/t.jsonl" > "$TMP/stop.json"
"$CAIRN" hook stop < "$TMP/stop.json"
contains "the Stop hook re-indexed it" "$("$CAIRN" recall zentriquon --source notes)" "zentriquon"
totals_ok "totals after the Stop hook's re-index"
out=$("$CAIRN" doctor 2>&1)
contains "doctor: up to date again" "$out" "up to date"
eq "the folder is still not written" "$(cd "$V" && find . -newer "$V/wiki/new.md" | grep -v '^\.$' | wc -l)" 0

# rm: no byte of a note stays in the store's files
found() { for f in "$CAIRN_DB" "$CAIRN_DB-wal"; do [ -f "$f" ] && grep -q -a -F -- "$1" "$f" && printf '%s ' "${f##*/}"; done; return 0; }
check "before rm: the note's words are in the store" test -n "$(found quobridge)"
out=$("$CAIRN" vault rm kb)
contains "vault rm" "$out" "removed vault kb"
for m in quobridge Braintree "obfs4 bridges" qwvelquist; do
    eq "after vault rm: $m in no file" "$(found "$m")" ""
done
"$CAIRN" vault list >/dev/null 2>&1; eq "vault list: none left (exit 3)" "$?" 3
eq "totals after vault rm: none" "$(q "SELECT sections || ',' || tok || ',' || whole FROM vault_totals")" "0,0,0"

# a store of schema v12 (before vaults) takes a vault after the upgrade
cp "$CAIRN_DB" "$TMP/v12.db"
python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript("DROP TRIGGER vault_totals_ai; DROP TRIGGER vault_totals_au; DROP TRIGGER vault_totals_ad; DROP TABLE vault_totals; DROP TRIGGER post_dirty_ad; DROP TRIGGER post_dirty_au; DROP TABLE post_dirty; DROP TABLE post_blocks; DROP TABLE post_terms; DROP TABLE post_state; DROP TRIGGER session_sizes_ai; DROP TRIGGER session_sizes_au; DROP TRIGGER session_sizes_ad; DROP TABLE session_sizes; DROP TRIGGER tier_terms_forget; DROP TRIGGER tier_terms_gone; DROP TRIGGER tier_post_au; DROP TRIGGER tier_post_ad; DROP TABLE tier_post; DROP TABLE tier_terms; DROP TABLE tier_state; DROP TRIGGER session_turns_au; DROP TRIGGER session_turns_ad; DROP TABLE session_turns; DROP TRIGGER memory_sync_corr_au; DROP TRIGGER memory_sync_corr_ai; DROP TRIGGER memory_sync_au; DROP TABLE memory_sync; DROP TABLE memories_forgotten; ALTER TABLE sync_state DROP COLUMN pull_mtx; ALTER TABLE sync_state DROP COLUMN push_mtomb; DROP TRIGGER msg_runs_au; DROP TRIGGER vault_vectors_title; DROP TRIGGER vault_vectors_au; DROP TRIGGER vault_vectors_ad; DROP TABLE vault_vectors; DROP TRIGGER msg_runs_ad; DROP TABLE msg_runs; DROP TABLE events_fill; DROP TRIGGER message_events_au; DROP TRIGGER message_events_ad; DROP TABLE message_events; DROP TRIGGER store_totals_ai; DROP TRIGGER store_totals_au; DROP TRIGGER store_totals_ad; DROP TABLE store_totals; PRAGMA writable_schema=ON; DELETE FROM sqlite_master WHERE name = '"'"'vault_fts'"'"'; PRAGMA writable_schema=OFF; DROP TABLE vault_fts_data; DROP TABLE vault_fts_idx; DROP TABLE vault_fts_docsize; DROP TABLE vault_fts_config; DROP TABLE vault_sections; DROP TABLE vault_docs; DROP TABLE vaults; PRAGMA user_version=12;"); c.close()' "$TMP/v12.db"
eq "a v12 store has no vault table" "$(sqlite3 "$TMP/v12.db" "SELECT count(*) FROM sqlite_master WHERE name LIKE 'vault%'")" 0
out=$(CAIRN_DB="$TMP/v12.db" "$CAIRN" vault add "$V" --name again 2>/dev/null); rc=$?
eq "v12 store: vault add works after the upgrade" "$rc" 0
out=$(CAIRN_DB="$TMP/v12.db" "$CAIRN" recall "quobridge relay" --source notes)
contains "v12 store: its notes are recalled" "$out" "quobridge"
# A file that could not be read is read again by the next re-index even
# though its size and mtime did not change (a chmod changes neither). As
# root every file is readable, so cairn runs as nobody here.
if [ "$(id -u)" -ne 0 ]; then
    as_user() { "$@"; }
elif command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
    as_user() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
else
    as_user=""
fi
if command -v as_user >/dev/null 2>&1; then
    U="$TMP/unread"
    mkdir -p "$U/vault" "$U/home"
    cp "$CAIRN" "$U/cairn"   # the build folder may not be open to nobody
    printf '# Open\n\nzorvanthe is readable\n' > "$U/vault/open.md"
    printf '# Locked\n\nqelmirath was locked\n' > "$U/vault/locked.md"
    chmod 755 "$TMP" "$U" "$U/vault" "$U/cairn"; chmod 777 "$U/home"; chmod 000 "$U/vault/locked.md"
    ux() { as_user env HOME="$U/home" CAIRN_DB="$U/home/s.db" "$U/cairn" "$@"; }
    out=$(ux vault add "$U/vault" --name u 2>&1)
    contains "unreadable: said at add" "$out" "locked.md: unreadable"
    chmod 644 "$U/vault/locked.md"
    out=$(ux vault reindex u 2>&1)
    contains "unreadable: read again once it can be" "$out" "1 changed"
    contains "unreadable: its words are found after" "$(ux recall qelmirath --source notes 2>&1)" "qelmirath was locked"
else
    t_skip "running as root without setpriv: no file is unreadable"
fi
# cairn eval vault: a tiny vault and its queries (tests/data/vault-tiny)
D="$ROOT/tests/data/vault-tiny"
out=$("$CAIRN" eval vault "$D" "$D/queries.jsonl" --budgets 300,1000 --out "$TMP/run.jsonl"); rc=$?
eq "eval vault: exit 0" "$rc" 0
contains "eval vault: the hook fires on every graded query, with the right page" "$out" \
    "| cairn | 1000 | 100.0% (4 of 4) | 0 of 3 | 4 of 4 | 100.0% (4 of 4) |"
contains "eval vault: the files-bm25 baseline fires on two that must not" "$out" \
    "| files-bm25 | 1000 | 66.7% (4 of 6) | 2 of 3 | 4 of 4 |"
eq "eval vault --out: a line a query, method and budget" "$(wc -l < "$TMP/run.jsonl")" 28
printf '{"id":"x","question":"q","fire":true}\n' > "$TMP/bad.jsonl"
check_fails "eval vault: a graded query without pages is refused" \
    "$CAIRN" eval vault "$D" "$TMP/bad.jsonl"
t_done
