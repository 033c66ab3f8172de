#!/bin/sh
# t0555-vault-dev: scripts/vault-dev.sh builds the development vault of
# issue 19 (docs/VAULTS-EVAL.md) from this repository's docs, ../shared and
# Debian's documentation, the same twice, within 100-300 files; and the
# graded queries (bench/vault/dev-queries.jsonl) are valid: unique ids, at
# least 60 that must fire and 30 that must not, every page they name in
# the built vault. The checker is shown to catch each kind of fault, so
# a passing check means something.
. "$(dirname "$0")/lib.sh"
SHARED=${CAIRN_SHARED:-$ROOT/../shared}
Q=$ROOT/bench/vault/dev-queries.jsonl
[ -d "$SHARED/docs" ] && [ -d "$SHARED/seeds" ] ||
    t_skip_all "../shared (docs, seeds) missing: the dev vault copies from it"
command -v python3 >/dev/null 2>&1 || t_skip_all "no python3 to check the queries (scripts/deps.sh installs it)"
export CAIRN_SHARED="$SHARED"

V=$TMP/vault
out=$(sh "$ROOT/scripts/vault-dev.sh" "$V" 2>&1)
check "vault-dev.sh builds the vault" [ $? -eq 0 ]
contains "it prints the file count and bytes" "$out" " files, "
n=$(find "$V" -type f | wc -l)
check "100 to 300 files ($n)" [ "$n" -ge 100 -a "$n" -le 300 ]
contains "the count it prints is the files there" "$out" ": $n files,"
for s in cairn shared-docs seeds debian; do
    check "source $s is in the vault" [ -n "$(find "$V/$s" -name '*.md' -type f 2>/dev/null | head -1)" ]
done
check "every file is Markdown" [ -z "$(find "$V" -type f ! -name '*.md')" ]
check "no file is still compressed" [ -z "$(find "$V" -type f -exec sh -c 'gzip -t "$1" 2>/dev/null' _ {} \; -print)" ]
check "no empty file" [ -z "$(find "$V" -type f -empty)" ]
check "stable paths: cairn/ARCHITECTURE.md" [ -s "$V/cairn/ARCHITECTURE.md" ]
check "stable paths: shared-docs/protocols.md" [ -s "$V/shared-docs/protocols.md" ]
check "stable paths: seeds/001-claude-recall-readme.md" [ -s "$V/seeds/001-claude-recall-readme.md" ]
check "stable paths: a .md.gz decompressed" [ -s "$V/debian/libcjson-dev/README.md" ]
check "a second build is the same" sh "$ROOT/scripts/vault-dev.sh" "$TMP/again" >/dev/null
check "  byte for byte" diff -r "$V" "$TMP/again"
check_fails "a non-empty folder is refused" sh "$ROOT/scripts/vault-dev.sh" "$V" 2>/dev/null
err=$(CAIRN_SHARED="$TMP/none" sh "$ROOT/scripts/vault-dev.sh" "$TMP/v3" 2>&1)
contains "a missing source is named" "$err" "$TMP/none/docs is missing"

out=$(sh "$ROOT/scripts/vault-dev.sh" --check "$Q" "$V" 2>&1)
check "the dev queries pass the check: $out" [ $? -eq 0 ]
contains "the check counts them" "$out" "0 problems"

# each fault the check must catch, one at a time, on a copy of the queries,
# failing for that fault's reason
bad_q() { # DESCRIPTION SED-SCRIPT|awk:AWK-SCRIPT MESSAGE
    case $2 in
        awk:*) awk "${2#awk:}" "$Q" > "$TMP/q.jsonl" ;;
        *) sed "$2" "$Q" > "$TMP/q.jsonl" ;;
    esac
    check_fails "--check catches $1" sh "$ROOT/scripts/vault-dev.sh" --check "$TMP/q.jsonl" "$V" \
        >/dev/null 2>"$TMP/err"
    contains "  and says so" "$(cat "$TMP/err")" "$3"
}
bad_q "a page not in the vault" '1s|"pages":\["[^"]*"|"pages":["cairn/NOPE.md"|' "'cairn/NOPE.md' is not in the vault"
bad_q "a repeated id" '2s|"id":"q002"|"id":"q001"|' "id q001 repeated"
bad_q "a line that is not JSON" '3s|}$||' "line 3: not JSON"
bad_q "a page outside the vault" '4s|"pages":\["[^"]*"|"pages":["../README.md"|' "'../README.md' is not in the vault"
bad_q "fire that is not a boolean" '5s|"fire":true|"fire":"yes"|' "line 5: fire is neither true nor false"
bad_q "too few that must fire" 'awk:/"fire":true/ && ++n > 59 {next} 1' "only 59 fire:true"
bad_q "too few that must not fire" 'awk:/"fire":false/ && ++n > 29 {next} 1' "only 29 fire:false"
t_done
