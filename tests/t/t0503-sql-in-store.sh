#!/bin/sh
# t0503-sql-in-store: src/store/ is the only code that speaks SQL (issue
# 14). No file of the library outside src/store/ prepares or runs a
# statement (sqlite3_prepare*, sqlite3_exec, store_prepare, store_exec*,
# blob handles), and recall/ does not touch SQLite at all: it reads
# through store/recall_read.h and ranks and packs in memory. Reads the
# source; runs nothing.
. "$(dirname "$0")/lib.sh"

# sql_outside SRC: one line "BAD: file: what" for each break of the rule
sql_outside() {
    find "$1" -name '*.[ch]' ! -path "$1/store/*" | sort | while read -r f; do
        rel=${f#"$1"/}
        # store_prepare/store_exec* are declared in internal.h: a
        # declaration is not a use
        grep -nE 'sqlite3_(prepare|exec|blob_open|blob_reopen)|store_(prepare|exec)[a-z_]*\(' "$f" |
            grep -vE '^[0-9]+:int store_(prepare|exec)' |
            sed "s|^\([0-9]*\):.*|BAD: $rel:\1 runs SQL outside src/store|"
        case "$rel" in
        recall/*)
            grep -nE '#include <sqlite3\.h>|sqlite3_' "$f" |
                sed "s|^\([0-9]*\):.*|BAD: $rel:\1 touches SQLite in recall|" ;;
        esac
    done
}

out=$(sql_outside "$ROOT/src")
eq "no SQL outside src/store" "$out" ""
n=$(grep -lE 'store_prepare\(|sqlite3_prepare' "$ROOT"/src/store/*.c | wc -l)
check "the store's statements were seen ($n files)" test "$n" -ge 5

# The check itself can fail: a statement in recall, a tokenizer that
# prepares one, the API running one.
cp -r "$ROOT/src" "$TMP/src"
printf 'static int x(struct cairn *h) { sqlite3_stmt *st; return store_prepare(h, "SELECT 1", &st); }\n' \
    >> "$TMP/src/recall/gate.c"
printf 'static int y(sqlite3 *db) { return sqlite3_exec(db, "SELECT 1", 0, 0, 0); }\n' \
    >> "$TMP/src/text/tokenize.c"
printf 'static int z(sqlite3 *db) { sqlite3_stmt *st; return sqlite3_prepare_v2(db, "", -1, &st, 0); }\n' \
    >> "$TMP/src/capture/import.c"
out=$(sql_outside "$TMP/src")
contains "a statement in recall is found" "$out" "recall/gate.c"
contains "SQLite in recall is found" "$out" "touches SQLite in recall"
contains "a statement in text is found" "$out" "text/tokenize.c"
contains "a statement in capture is found" "$out" "capture/import.c"
t_done
