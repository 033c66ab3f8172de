#!/bin/sh
# t0230-memories: `cairn remember` and `cairn memories` (docs/MEMORIES.md)
# from outside: add with type, scope, tags, supersede and a link; list by
# scope and type (superseded ones only with --all); edit, show with its
# history, undo; rm wipes the text from the store's files; export and
# import round trip; a bad import names its line and adds nothing; usage
# errors exit 2, an empty listing 3. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none

out=$("$CAIRN" remember --type preference --scope garden --tag style --tag ui "water the basil at dawn")
eq "remember prints the id" "$out" "remembered 1"
"$CAIRN" remember "the shed key is under qqshedmarker stone" >/dev/null
out=$("$CAIRN" remember --scope garden --replaces 1 water the basil at dusk)
eq "unquoted words are one text" "$out" "remembered 3"
"$CAIRN" remember --type decision --contradicts 3 "never water at dusk" >/dev/null

out=$("$CAIRN" memories list)
contains "the replacement is listed" "$out" "water the basil at dusk"
lacks "the superseded memory is not listed alone" "$out" "at dawn"
contains "a contradiction shows on both" "$out" "contradicted_by:4"
contains "the tags of a superseded memory stay with it" "$("$CAIRN" memories list --all)" "[style,ui]"
eq "list --scope garden: garden's and the global ones" "$("$CAIRN" memories list --scope garden | wc -l)" 3
eq "list --type decision" "$("$CAIRN" memories list --type decision | wc -l)" 1
contains "list --json" "$("$CAIRN" memories list --json --type decision)" '"type":"decision"'
"$CAIRN" memories list --type procedure >/dev/null 2>&1
eq "an empty listing exits 3" $? 3

out=$("$CAIRN" memories edit 3 water the basil at noon)
eq "edit says so" "$out" "edited 3"
out=$("$CAIRN" memories show 3)
contains "show has the new text" "$out" "at noon"
contains "show has the old text in its history" "$out" "update: water the basil at dusk"
"$CAIRN" memories undo 3 >/dev/null
contains "undo puts the old text back" "$("$CAIRN" memories show 3)" "at dusk"
check_fails "undo with nothing left to undo fails" "$CAIRN" memories undo 2
"$CAIRN" memories undo 1 >/dev/null
contains "undo of a supersede makes it live again" "$("$CAIRN" memories list)" "at dawn"

# secrets are masked, <private> text never stored
"$CAIRN" remember "deploy with token ghp_Zq7XwVb3Lr9TnPk2Hs8Dy4Fm6Jc1Gu5Ae0Qo <private>pin 90210</private>done" >/dev/null
out=$("$CAIRN" memories list --json)
lacks "the token is masked" "$out" "ghp_Zq7X"
lacks "private text is not stored" "$out" "90210"

# rm: no byte left in the store or its WAL
check "before rm the marker is in the store" grep -qsaF qqshedmarker "$CAIRN_DB" "$CAIRN_DB-wal"
eq "rm says so" "$("$CAIRN" memories rm 2)" "removed 2"
check_fails "after rm the marker is in no file" grep -qsaF qqshedmarker "$CAIRN_DB" "$CAIRN_DB-wal"
check_fails "rm of a missing memory fails" "$CAIRN" memories rm 2

# export, import into a new store
"$CAIRN" memories export > "$TMP/m.jsonl"
eq "export: one line a memory" "$(wc -l < "$TMP/m.jsonl")" 4
out=$("$CAIRN" --db "$TMP/b.db" memories import "$TMP/m.jsonl")
eq "import counts" "$out" "imported 4 memories"
# the same memories and links; the ids are the new store's
eq "the same listing after the round trip" \
   "$("$CAIRN" --db "$TMP/b.db" memories list --all | cut -c7- | sed 's/:[0-9]*)/)/')" \
   "$("$CAIRN" memories list --all | cut -c7- | sed 's/:[0-9]*)/)/')"
printf '{"text":"fine"}\n{"text":"broken"\n' > "$TMP/bad.jsonl"
err=$("$CAIRN" --db "$TMP/c.db" memories import "$TMP/bad.jsonl" 2>&1)
eq "a bad import exits 1" $? 1
contains "a bad import names its line" "$err" "line 2"
"$CAIRN" --db "$TMP/c.db" memories list >/dev/null 2>&1
eq "a bad import adds nothing" $? 3

# usage errors
for args in "remember" "remember --ttl 7x note" "remember --replaces abc note" "memories bogus" \
            "memories show" "memories edit 1" "memories import"; do
    # shellcheck disable=SC2086
    "$CAIRN" $args >/dev/null 2>&1
    eq "cairn $args exits 2" $? 2
done
check_fails "an unknown type fails" "$CAIRN" remember --type rumour "x"
check_fails "replacing a missing memory fails" "$CAIRN" remember --replaces 99 "x"
check_fails "a link to a missing memory fails, and adds nothing" "$CAIRN" remember --related 99 "qqorphan"
lacks "nothing of the failed remember is listed" "$("$CAIRN" memories list --all)" "qqorphan"
t_done
