#!/bin/sh
# t0239-doctor-pages: `cairn doctor` says when a store is still in pages
# of 4 KB (made before new stores' 16 KB, issue 23, hook54), with the
# command that rewrites it, as a note that needs no attention: the same
# exit code and the same "needs attention" line as on a new store; after
# `cairn reindex --pages` the note is gone. Never skipped.
. "$(dirname "$0")/lib.sh"
S="$ROOT/examples/sample-history.jsonl"
export CAIRN_EMBED_MODEL=none
pagesize() { set -- $(od -An -tu1 -j16 -N2 "$1"); echo $(($1 * 256 + $2)); }
attention() { printf '%s\n' "$1" | grep -E '^(all good|needs attention)'; }

# a new store
"$CAIRN" add -q "$S"
eq "a new store's pages are 16 KB" "$(pagesize "$CAIRN_DB")" 16384
new=$("$CAIRN" doctor 2>&1); new_rc=$?
lacks "new store: no note on pages" "$new" "reindex --pages"
lacks "new store: no page size said" "$new" "pages of"

# the same history in a store as an older cairn made it, 4 KB pages
old_db="$TMP/old.db"
CAIRN_DB="$old_db" "$CAIRN" add -q "$S"
python3 - "$old_db" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1], isolation_level=None)
for s in ("PRAGMA journal_mode=DELETE", "PRAGMA page_size=4096", "VACUUM", "PRAGMA journal_mode=WAL"):
    c.execute(s).fetchall()
c.close()
PY
chmod 600 "$old_db"
eq "the older store's pages are 4 KB" "$(pagesize "$old_db")" 4096
old=$(CAIRN_DB="$old_db" "$CAIRN" doctor 2>&1); old_rc=$?
contains "4 KB store: a note" "$old" "note:     the store is in pages of 4 KB"
contains "4 KB store: the command" "$old" "run \`cairn reindex --pages\`"
eq "4 KB store: a note, not a fault (exit code)" "$old_rc" "$new_rc"
eq "4 KB store: nothing more needs attention" "$(attention "$old")" "$(attention "$new")"
eq "doctor wrote nothing: still 4 KB" "$(pagesize "$old_db")" 4096

CAIRN_DB="$old_db" "$CAIRN" reindex --pages 2>/dev/null
eq "reindex --pages: 16 KB" "$(pagesize "$old_db")" 16384
after=$(CAIRN_DB="$old_db" "$CAIRN" doctor 2>&1)
lacks "after reindex --pages: the note is gone" "$after" "reindex --pages"
t_done
