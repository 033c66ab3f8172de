#!/bin/sh
# t0567-vault-reader: a heading's words are its visible text (md_visible,
# docs/VAULTS.md): a title that is a heading holding a badge keeps the
# badge's alt text, not its URL, in the page's title, card and heading
# paths; a store read by an older reader (vault_docs.cut 512, before
# MD_READER 1) is stale and its next re-index reads the page again,
# whatever its bytes, and so is one read by MD_READER 1. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
V="$TMP/vault"
mkdir -p "$V"
cat > "$V/README.md" <<'MD'
# pkgconf [![test](https://github.com/pkgconf/pkgconf/actions/workflows/test.yml/badge.svg)](https://github.com/pkgconf/pkgconf/actions/workflows/test.yml)

pkgconf is a program which helps to configure compiler and linker flags.

## Building with [meson](https://mesonbuild.com)

Run meson setup build.
MD
check "vault add" "$CAIRN" vault add "$V" --name v
q() { sqlite3 "$CAIRN_DB" "$1"; }
eq "the title is the visible text" "$(q "SELECT title FROM vault_docs")" "pkgconf test"
eq "no URL in the heading paths" "$(q "SELECT count(*) FROM vault_sections WHERE heading LIKE '%github%' OR heading LIKE '%mesonbuild%'")" 0
eq "the heading path" "$(q "SELECT heading FROM vault_sections WHERE line = 5")" "pkgconf test > Building with meson"
eq "no URL word in the card" "$(q "SELECT count(*) FROM vault_sections WHERE line = 0 AND text LIKE '%workflows%'")" 0
eq "the document records the reader" "$(q "SELECT cut FROM vault_docs")" 200512
# a store read before MD_READER 1 (its title the heading as written) is
# stale; a re-index reads the page again though its bytes are the same
q "UPDATE vault_docs SET cut = 512, title = 'pkgconf [![test](https://github.com/x/actions/workflows/t.yml)](y)'"
contains "doctor: stale after a change of the reader" "$("$CAIRN" doctor 2>&1)" "vault v: 1 file changed"
contains "reindex reads it again" "$("$CAIRN" vault reindex v 2>/dev/null)" "0 added, 1 changed, 0 unchanged"
eq "the title without its URL" "$(q "SELECT title FROM vault_docs")" "pkgconf test"
contains "reindex: then nothing changed" "$("$CAIRN" vault reindex v 2>/dev/null)" "0 changed, 1 unchanged"
# and one read by MD_READER 1 (before branch vault33: a fence under a list
# item was no fence) is stale too
q "UPDATE vault_docs SET cut = 100512"
contains "reindex reads a reader-1 page again" "$("$CAIRN" vault reindex v 2>/dev/null)" "0 added, 1 changed, 0 unchanged"
eq "stamped with this reader" "$(q "SELECT cut FROM vault_docs")" 200512
t_done
