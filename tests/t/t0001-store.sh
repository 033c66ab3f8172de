#!/bin/sh
# t0001-store: add, idempotence, append, read, export round trip, forget,
# permissions, and the errors bad input must get.
. "$(dirname "$0")/lib.sh"
S="$ROOT/examples/sample-history.jsonl"

out=$("$CAIRN" add "$S")
contains "first add" "$out" "added 7 sessions (0 updated), 19 messages"
out=$("$CAIRN" add "$S")
contains "re-add is a no-op" "$out" "added 0 sessions (0 updated), 0 messages; 19 already present"
eq "store file is 0600" "$(stat -c %a "$CAIRN_DB")" 600
# default location: ~/.cairn/memory.db in a 0700 folder
(unset CAIRN_DB; "$CAIRN" add "$S" >/dev/null)
eq "default folder is 0700" "$(stat -c %a "$HOME/.cairn")" 700
eq "default file is 0600" "$(stat -c %a "$HOME/.cairn/memory.db")" 600

# append to an existing session; messages without ids dedupe on content
printf '%s\n' '{"id":"s-noid","messages":[{"role":"user","content":"ok"},{"role":"assistant","content":"done"},{"role":"user","content":"ok"}]}' > "$TMP/a.json"
"$CAIRN" add "$TMP/a.json" >/dev/null
printf '%s\n' '{"id":"s-noid","messages":[{"role":"user","content":"ok"},{"role":"assistant","content":"done"},{"role":"user","content":"ok"},{"role":"user","content":"and one more"}]}' > "$TMP/b.json"
out=$("$CAIRN" add "$TMP/b.json")
contains "append adds only the new message" "$out" "added 0 sessions (1 updated), 1 message; 3 already present"
eq "repeated ok kept twice" "$("$CAIRN" show s-noid --json | grep -c '"content":"ok"')" 2

# a session without an id gets a stable one
printf '%s\n' '{"source":"x","messages":[{"role":"user","content":"no id here"}]}' > "$TMP/c.json"
"$CAIRN" add "$TMP/c.json" >/dev/null
out=$("$CAIRN" add "$TMP/c.json")
contains "id-less session re-add is a no-op" "$out" "added 0 sessions"

# reading
out=$("$CAIRN" sessions --project personal)
contains "sessions by project" "$out" "demo/2026-03-02-lisbon"
lacks "sessions by project filters" "$out" "demo/2026-04-07-cairn-bug"
out=$("$CAIRN" sessions --json --limit 2)
eq "sessions --limit" "$(printf '%s\n' "$out" | wc -l)" 2
out=$("$CAIRN" show demo/2026-03-02-lisbon --from 1 --to 1)
contains "show window" "$out" "two-month deposit"
lacks "show window ends" "$out" "bouldering gear"
out=$("$CAIRN" stats)
contains "stats" "$out" "messages       24"

# export jsonl round-trips into an identical store
"$CAIRN" export --format jsonl > "$TMP/e1.jsonl"
CAIRN_DB="$TMP/copy.db" "$CAIRN" add "$TMP/e1.jsonl" >/dev/null
CAIRN_DB="$TMP/copy.db" "$CAIRN" export --format jsonl > "$TMP/e2.jsonl"
check "export | add | export is identical" cmp -s "$TMP/e1.jsonl" "$TMP/e2.jsonl"
out=$("$CAIRN" export)
contains "markdown export" "$out" "## Moving to Lisbon"
contains "markdown has Chinese verbatim" "$out" "四季民福"

# forget removes the session and its index rows
check "recall finds LBC" sh -c "\"$CAIRN\" recall 'bouldering club Marvila' | grep -q LBC"
check "forget" "$CAIRN" forget demo/2026-03-20-climbing
check_fails "forgotten session is gone" "$CAIRN" show demo/2026-03-20-climbing
out=$("$CAIRN" recall "bouldering club Marvila")
lacks "forgotten text not recalled" "$out" "LBC"
check_fails "forget unknown session" "$CAIRN" forget no-such-session

# errors: clear message, non-zero exit, nothing half-written
printf '{"id":"bad1","messages":[{"role":"user","content":"x"}\n' > "$TMP/bad.json"
err=$("$CAIRN" add "$TMP/bad.json" 2>&1 >/dev/null); rc=$?
eq "malformed JSON exits 1" "$rc" 1
contains "malformed JSON has line and column" "$err" "bad.json:1:"
printf '%s\n%s\n%s\n' '{"id":"good1","messages":[{"role":"user","content":"fine"}]}' \
    '{"id":"bad2","messages":[{"role":"user","content":' \
    '{"id":"good2","messages":[{"role":"user","content":"fine too"}]}' > "$TMP/mixed.jsonl"
err=$("$CAIRN" add "$TMP/mixed.jsonl" 2>&1 >/dev/null)
contains "bad line reported with its line" "$err" "mixed.jsonl:2:"
check "good lines around a bad one land" "$CAIRN" show good2
check_fails "bad session not stored" "$CAIRN" show bad2
printf '%s\n' '{"id":"role1","messages":[{"role":"user","content":"a"},{"role":"system","content":"b"}]}' > "$TMP/role.json"
err=$("$CAIRN" add "$TMP/role.json" 2>&1 >/dev/null)
contains "unknown role" "$err" 'role must be "user" or "assistant", not "system"'
check_fails "nothing of a bad session is stored" "$CAIRN" show role1
err=$("$CAIRN" add "$TMP/missing.json" 2>&1 >/dev/null)
contains "missing file" "$err" "cannot open"
printf '%s\n' '{"id":"d1","started_at":"yesterday","messages":[]}' > "$TMP/date.json"
err=$("$CAIRN" add "$TMP/date.json" 2>&1 >/dev/null)
contains "bad date" "$err" "not an ISO 8601 date"
printf 'this is not a database at all, just text that is long enough to be a header of a db file......................................................' > "$TMP/garbage.db"
err=$(CAIRN_DB="$TMP/garbage.db" "$CAIRN" stats 2>&1); rc=$?
contains "corrupt store" "$err" "not a database"
eq "corrupt store exit" "$rc" 1
sqlite3 "$TMP/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES (1);" 2>/dev/null || \
    python3 -c "import sqlite3; c=sqlite3.connect('$TMP/other.db'); c.execute('create table t(x)'); c.commit()"
err=$(CAIRN_DB="$TMP/other.db" "$CAIRN" add "$S" 2>&1); rc=$?
contains "foreign SQLite file refused" "$err" "not a cairn store"
err=$(CAIRN_DB="$TMP/nope.db" "$CAIRN" sessions 2>&1); rc=$?
contains "reading a missing store" "$err" "no store at"
printf '{"id":"u","messages":[{"role":"user","content":"caf\351 na\357ve \377"}]}\n' > "$TMP/latin1.json"
"$CAIRN" add "$TMP/latin1.json" >/dev/null 2>&1; rc=$?
check "invalid UTF-8 inside JSON: refused or repaired, no crash (exit $rc)" test "$rc" -le 1
if [ "$rc" -eq 0 ]; then
    check "repaired text is valid UTF-8" sh -c "\"$CAIRN\" show u --json | python3 -c 'import sys; sys.stdin.buffer.read().decode(\"utf-8\")'"
fi

# times with and without zones
printf '%s\n' '{"id":"tz","started_at":"2024-01-02T03:04:05+02:00","messages":[{"role":"user","content":"zoned","at":"2024-01-02T01:04:05Z"},{"role":"user","content":"date only","at":"2024-01-02"}]}' > "$TMP/tz.json"
"$CAIRN" add "$TMP/tz.json" >/dev/null
out=$("$CAIRN" show tz --json)
contains "zone converted" "$out" '"at":"2024-01-02T01:04:05Z"'
contains "date-only is midnight local" "$out" '"at":"2024-01-02T00:00:00Z"'
t_done
