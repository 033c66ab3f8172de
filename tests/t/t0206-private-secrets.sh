#!/bin/sh
# t0206-private-secrets: what no write path may store (issue 12, "Private and
# secret text"). Every write path (cairn add, MCP save_conversation, the
# Stop and SessionEnd hooks reading a transcript, cairn import claude-code
# and jsonl) gets the same messages holding every <private> tag variant
# (case, attributes, whitespace, nesting, self-closing, unclosed) and a
# session whose metadata holds tokens (a git remote with a token in meta,
# a key in the title, the project, the speaker, the MCP clientInfo). The
# store files (db, -wal) must hold none of the private words and none of
# the tokens, and the text around the tags must be kept. Then: `cairn
# redact` cleans a store written without masking (changes > 0, sessions
# too, no byte of the tokens left), and MCP's reply echoes the masked
# title.
. "$(dirname "$0")/lib.sh"

# A GitHub token in a git remote, and one in a title: shapes redact knows.
TOK_REMOTE=ghp_R3m0teT0kenAbCdEfGhIjKlMnOpQrStUv12
TOK_TITLE=ghp_T1tleT0kenAbCdEfGhIjKlMnOpQrStUv9876
TOK_OTHER=glpat-Pr0jectT0kenXyZ12345ab
# Private words: PRIVMK01..PRIVMK13 (13 markers, as in the issue's count);
# kept words KEEPWD01.. sit around the tags and must survive.
TEXT1='KEEPWD01 <private>PRIVMK01</private> KEEPWD02 <PRIVATE>PRIVMK02</PRIVATE> KEEPWD03 <private >PRIVMK03</private > KEEPWD04 <private reason=\"pw\">PRIVMK04</private> KEEPWD05 <private>PRIVMK05 <private>PRIVMK06</private> PRIVMK07</private> KEEPWD06'
TEXT2='KEEPWD07 <Private>PRIVMK08</Private> KEEPWD08 <private>\nPRIVMK09\n</private> KEEPWD09 <private/> KEEPWD10 <private\tclass=\"x\">PRIVMK10</private> KEEPWD11 <private>PRIVMK11</private   > KEEPWD12 </private> KEEPWD13 <private>PRIVMK12 <PRIVATE>PRIVMK13'
MARKS="PRIVMK01 PRIVMK02 PRIVMK03 PRIVMK04 PRIVMK05 PRIVMK06 PRIVMK07 PRIVMK08 PRIVMK09 PRIVMK10 PRIVMK11 PRIVMK12 PRIVMK13 $TOK_REMOTE $TOK_TITLE $TOK_OTHER"
KEEPS="KEEPWD01 KEEPWD02 KEEPWD03 KEEPWD04 KEEPWD05 KEEPWD06 KEEPWD07 KEEPWD08 KEEPWD09 KEEPWD10 KEEPWD11 KEEPWD12 KEEPWD13"

# no_marks NAME DB: no private word or token in any file of the store, and
# every kept word in its export.
no_marks() {
    name=$1 db=$2
    for m in $MARKS; do
        for f in "$db" "$db-wal"; do
            [ -f "$f" ] || continue
            if grep -aq "$m" "$f"; then bad "$name: $m is in $(basename "$f")"; else ok; fi
        done
    done
    out=$(CAIRN_DB="$db" "$CAIRN" export --format jsonl)
    for k in $KEEPS; do contains "$name: $k kept" "$out" "$k"; done
    lacks "$name: no tag left" "$out" "private>"
}

# A git repository whose origin URL holds a token: the hooks and importers
# put it in the session's meta (gitRemote).
REPO="$TMP/repo"
mkdir -p "$REPO/.git"
printf 'ref: refs/heads/main\n' > "$REPO/.git/HEAD"
printf '[remote "origin"]\n\turl = https://x-access-token:%s@github.com/acme/app.git\n' \
    "$TOK_REMOTE" > "$REPO/.git/config"

# 1. cairn add: private tags in text; tokens in title, project, speaker, meta
tr -d '\n' > "$TMP/add.jsonl" <<EOF
{"id": "add-1", "title": "deploy with $TOK_TITLE", "project": "p <private>PRIVMK01</private>$TOK_OTHER",
 "meta": {"gitRemote": "https://x-access-token:$TOK_REMOTE@github.com/acme/app.git", "n": [1, {"k": "$TOK_OTHER"}]},
 "messages": [{"role": "user", "speaker": "me $TOK_OTHER", "content": "$TEXT1"},
              {"role": "assistant", "content": "$TEXT2"}]}
EOF
DB1="$TMP/add.db"
check "cairn add" env CAIRN_DB="$DB1" "$CAIRN" add -q "$TMP/add.jsonl"
no_marks "add" "$DB1"
out=$(CAIRN_DB="$DB1" "$CAIRN" export --format jsonl)
contains "add: the remote is kept, its token masked" "$out" \
    'https://x-access-token:[REDACTED:url-password]@github.com/acme/app.git'
contains "add: title masked" "$out" '"title":"deploy with [REDACTED:github]"'
contains "add: nested meta masked" "$out" '{"k":"[REDACTED:gitlab]"}'
contains "add: speaker masked" "$out" '"speaker":"me [REDACTED:gitlab]"'
out=$(CAIRN_DB="$DB1" "$CAIRN" sessions --json)
contains "add: project masked" "$out" '[REDACTED:gitlab]'

# 2. MCP save_conversation: the same messages; a token in clientInfo and
# the title; the reply echoes the title as stored
DB2="$TMP/mcp.db"
out=$(CAIRN_DB="$DB2" python3 - "$CAIRN" "$TOK_TITLE" "$TOK_OTHER" "$TEXT1" "$TEXT2" <<'EOF'
import json, sys
from mcp_client import Mcp
cairn, tok_title, tok_other, t1, t2 = sys.argv[1:]
unesc = lambda s: json.loads('"' + s + '"')
with Mcp(cairn, client_name="client " + tok_other) as m:
    err, text = m.call("save_conversation", {
        "session_id": "mcp-1", "title": "deploy with " + tok_title,
        "messages": [{"role": "user", "content": unesc(t1)},
                     {"role": "assistant", "content": unesc(t2)}]})
    print("reply:", text)
EOF
)
contains "mcp: saved" "$out" "Saved to memory as session"
contains "mcp: the reply echoes the masked title" "$out" "deploy with [REDACTED:github]"
lacks "mcp: the reply has no raw token" "$out" "$TOK_TITLE"
no_marks "mcp" "$DB2"
out=$(CAIRN_DB="$DB2" "$CAIRN" export --format jsonl)
contains "mcp: clientInfo masked in meta" "$out" '"client":"client [REDACTED:gitlab]"'

# 3. hooks: Stop, then SessionEnd, on a transcript in the repository
T="$TMP/cc.jsonl"
rec() {  # type uuid parent second text
    printf '{"type":"%s","uuid":"%s","parentUuid":%s,"sessionId":"hook-1","cwd":"%s","timestamp":"2026-02-01T00:00:0%sZ","message":{"role":"%s","content":"%s"}}\n' \
        "$1" "$2" "$3" "$REPO" "$4" "$1" "$5"
}
rec user u1 null 1 "$TEXT1" > "$T"
hook() {  # event
    printf '{"session_id":"hook-1","transcript_path":"%s","cwd":"%s","hook_event_name":"%s","reason":"exit"}' \
        "$T" "$REPO" "$1"
}
DB3="$TMP/hook.db"
out=$(hook Stop | CAIRN_DB="$DB3" "$CAIRN" hook stop 2>&1)
eq "stop hook prints nothing" "$out" ""
rec assistant a1 '"u1"' 2 "$TEXT2" >> "$T"
out=$(hook SessionEnd | CAIRN_DB="$DB3" "$CAIRN" hook session-end 2>&1)
eq "session-end hook prints nothing" "$out" ""
eq "hooks: both messages stored" \
    "$(CAIRN_DB="$DB3" "$CAIRN" export --format jsonl | grep -o '"role"' | wc -l | tr -d ' ')" 2
no_marks "hook" "$DB3"
out=$(CAIRN_DB="$DB3" "$CAIRN" export --format jsonl)
contains "hook: gitRemote in meta, token masked" "$out" \
    'x-access-token:[REDACTED:url-password]@github.com'

# 4. importers: claude-code (the same transcript) and jsonl
DB4="$TMP/import.db"
check "import claude-code" env CAIRN_DB="$DB4" "$CAIRN" import claude-code "$T"
no_marks "import claude-code" "$DB4"
DB5="$TMP/jsonl.db"
check "import jsonl" env CAIRN_DB="$DB5" "$CAIRN" import jsonl "$TMP/add.jsonl"
no_marks "import jsonl" "$DB5"

# no_token_left DB WHAT: none of the three tokens in the store's file or
# its WAL (the scrub must leave no recoverable byte, not just new rows).
no_token_left() {
    for m in $TOK_REMOTE $TOK_TITLE $TOK_OTHER; do
        for f in "$1" "$1-wal"; do
            [ -f "$f" ] || continue
            if grep -aq "$m" "$f"; then bad "redact left $m in $(basename "$f") ($2)"; else ok; fi
        done
    done
}

# 5. cairn redact on a store written without masking: metadata included
DB6="$TMP/old.db"
CAIRN_DB="$DB6" CAIRN_REDACT=0 "$CAIRN" add -q "$TMP/add.jsonl"
CAIRN_DB="$DB6" "$CAIRN" export --format jsonl > "$TMP/old.jsonl"
if grep -q "$TOK_REMOTE" "$TMP/old.jsonl"; then ok; else bad "CAIRN_REDACT=0 stored the token"; fi
out=$(CAIRN_DB="$DB6" "$CAIRN" redact --dry-run)
contains "redact --dry-run counts the session" "$out" "would change 1 of 2 messages, 1 of 1 sessions"
out=$(CAIRN_DB="$DB6" "$CAIRN" redact)
contains "redact changes the metadata of old data" "$out" "changed 1 of 2 messages, 1 of 1 sessions"
no_token_left "$DB6" messages
out=$(CAIRN_DB="$DB6" "$CAIRN" export --format jsonl)
contains "redact: the remote masked" "$out" 'x-access-token:[REDACTED:url-password]@'
out=$(CAIRN_DB="$DB6" "$CAIRN" redact)
contains "redact again changes nothing" "$out" "changed 0 of 2 messages, 0 of 1 sessions"
# re-adding the session after redact adds nothing (the hashes were updated)
out=$(CAIRN_DB="$DB6" "$CAIRN" add "$TMP/add.jsonl")
contains "re-add after redact adds nothing" "$out" "2 already present"

# 6. cairn redact reaches notes and memories written without masking: a
# vault page (title, heading, text) and a memory, no byte left, the note
# still found by its other words, its masked text in recall.
DB7="$TMP/notes.db"
mkdir -p "$TMP/vault"
printf -- '---\ntitle: Deploy %s\n---\n# Rotate %s\n\nZyxnotekeep the key is %s here.\n' \
    "$TOK_TITLE" "$TOK_OTHER" "$TOK_REMOTE" > "$TMP/vault/deploy.md"
CAIRN_DB="$DB7" CAIRN_REDACT=0 "$CAIRN" vault add "$TMP/vault" --name v > /dev/null 2>&1
CAIRN_DB="$DB7" CAIRN_REDACT=0 "$CAIRN" remember "the zyxmemkeep token is $TOK_OTHER" > /dev/null
if grep -aq "$TOK_REMOTE" "$DB7" "$DB7-wal" 2>/dev/null; then ok; else bad "CAIRN_REDACT=0 stored the note's token"; fi
out=$(CAIRN_DB="$DB7" "$CAIRN" redact --dry-run)
contains "redact --dry-run counts notes and memories" "$out" "would change 0 of 0 messages, 0 of 0 sessions"
contains "redact --dry-run: notes and memory rows" "$out" "3 of 3 note pages and sections, 1 of 1 memory rows"
out=$(CAIRN_DB="$DB7" "$CAIRN" redact)
contains "redact changes notes and memories" "$out" "3 of 3 note pages and sections, 1 of 1 memory rows"
no_token_left "$DB7" notes
out=$(CAIRN_DB="$DB7" "$CAIRN" recall --source notes "zyxnotekeep key" --budget 500)
contains "redact: the note is still found" "$out" "Zyxnotekeep the key is"
lacks "redact: the note's token is gone from recall" "$out" "$TOK_REMOTE"
out=$(CAIRN_DB="$DB7" "$CAIRN" redact)
contains "redact of notes again changes nothing" "$out" "0 of 3 note pages and sections, 0 of 1 memory rows"

t_done
