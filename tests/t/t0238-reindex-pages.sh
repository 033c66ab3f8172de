#!/bin/sh
# t0238-reindex-pages: a new store is made in pages of 16 KB, and `cairn
# reindex --pages` rewrites an older store (4 KB pages) to them (issue 23,
# hook54): the same answers (recall, the prompt hook, export) before and
# after, the page size read from the file's header; a second run changes
# nothing; another process holding the store open makes it fail with the
# store left as it was; forget after it leaves no byte of the session in
# the file; a bad flag is a usage error. Never skipped.
. "$(dirname "$0")/lib.sh"
S="$ROOT/examples/sample-history.jsonl"
export CAIRN_EMBED_MODEL=none CAIRN_REDACT=0
# pagesize FILE: the page size in a SQLite file's header (offset 16, two
# bytes big-endian; 1 means 65,536)
pagesize() { set -- $(od -An -tu1 -j16 -N2 "$1"); echo $(($1 * 256 + $2)); }
victim='{"id":"victim","title":"pagevictim","messages":[{"role":"user","content":"the word is zqxjvwkplorbat, remember flumbrixagond"},{"role":"assistant","content":"noted zqxjvwkplorbat"}]}'

"$CAIRN" add -q "$S"
printf '%s\n' "$victim" | "$CAIRN" add -q -
eq "a new store's pages are 16 KB" "$(pagesize "$CAIRN_DB")" 16384

# an older store: the same file in pages of 4 KB
python3 - "$CAIRN_DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for s in ("PRAGMA journal_mode=DELETE", "PRAGMA page_size=4096", "VACUUM", "PRAGMA journal_mode=WAL"):
    c.execute(s).fetchall()
c.close()
PY
eq "the older store's pages are 4 KB" "$(pagesize "$CAIRN_DB")" 4096
# the injected-once list off (no folder can be made under a file), so
# the second hook injects what the first did
: > "$TMP/file"
hook() {
    printf '{"session_id":"t0238-%s","prompt":"%s","cwd":"%s","hook_event_name":"UserPromptSubmit"}' \
        "$1" "$2" "$TMP" | CAIRN_INJECT_STATE="$TMP/file/injected" "$CAIRN" hook prompt
}
r1=$("$CAIRN" recall "lisbon apartment deposit" --budget 500 --json)
f1=$("$CAIRN" recall "lisbon apartment deposit" --budget 500 --json --fast)
h1=$(hook a "what did we decide about the apartment deposit in lisbon")
e1=$("$CAIRN" export)
s1=$("$CAIRN" stats | grep -v "^text")
contains "the recall finds the deposit" "$r1" "deposit"
contains "the hook injects it" "$h1" "two-month deposit"

# another process has the store open: refused, nothing changed
out=$(python3 - "$CAIRN" "$CAIRN_DB" <<'PY'
import sqlite3, subprocess, sys
c = sqlite3.connect(sys.argv[2])
c.execute("SELECT count(*) FROM sessions").fetchall()
p = subprocess.run([sys.argv[1], "reindex", "--pages"], capture_output=True, text=True)
print(p.returncode, p.stderr)
c.close()
PY
)
contains "held open: reindex --pages fails" "$out" "1 "
contains "held open: the error says so" "$out" "locked"
eq "held open: still 4 KB" "$(pagesize "$CAIRN_DB")" 4096
eq "held open: the recall as before" "$("$CAIRN" recall "lisbon apartment deposit" --budget 500 --json)" "$r1"

out=$("$CAIRN" reindex --pages 2>&1)
eq "reindex --pages: exit 0" "$?" 0
contains "reindex --pages says what it did" "$out" "were 4096 bytes"
eq "after reindex --pages: 16 KB" "$(pagesize "$CAIRN_DB")" 16384
eq "still WAL" "$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA journal_mode").fetchone()[0])' "$CAIRN_DB")" wal
eq "the same recall" "$("$CAIRN" recall "lisbon apartment deposit" --budget 500 --json)" "$r1"
eq "the same --fast recall" "$("$CAIRN" recall "lisbon apartment deposit" --budget 500 --json --fast)" "$f1"
eq "the same hook output" "$(hook b "what did we decide about the apartment deposit in lisbon")" "$h1"
eq "the same export" "$("$CAIRN" export)" "$e1"
eq "the same stats (but the file size)" "$("$CAIRN" stats | grep -v "^text")" "$s1"
out=$("$CAIRN" reindex --pages 2>&1)
contains "a second run changes nothing" "$out" "16 KB already"
eq "a second run: the same recall" "$("$CAIRN" recall "lisbon apartment deposit" --budget 500 --json)" "$r1"

# forget on the rewritten store: none of the victim's words in the file
for m in jvwkplorbat mbrixagond; do
    check "before forget: $m in the store" grep -s -q -a -F -- "$m" "$CAIRN_DB" "$CAIRN_DB-wal"
done
out=$("$CAIRN" forget victim)
contains "forget says so" "$out" "forgot victim"
for m in jvwkplorbat mbrixagond; do
    check_fails "after forget: $m in no file" grep -s -q -a -F -- "$m" "$CAIRN_DB" "$CAIRN_DB-wal"
done

out=$("$CAIRN" reindex --pages --tiers 2>&1)
eq "reindex --pages --tiers: usage error" "$?" 2
out=$("$CAIRN" reindex --pages --bogus 2>&1)
eq "reindex --pages --bogus: usage error" "$?" 2
t_done
