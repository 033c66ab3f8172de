#!/bin/sh
# scripts/demo.sh: the README's first command. On a fresh Debian 12 it
# installs the build dependencies (apt-get, through sudo when not root),
# builds cairn, imports a small English and Chinese sample history into a
# demo store (build/demo.db, not your real ~/.cairn/memory.db) and shows
# what `cairn recall` returns for a few questions.
#   --no-deps   skip the package check (used by `make demo`)
set -e
cd "$(dirname "$0")/.."
[ "${1:-}" = "--no-deps" ] || sh scripts/deps.sh
make -j2 all >/dev/null
CAIRN=./build/cairn
DB=build/demo.db
rm -f "$DB" "$DB-wal" "$DB-shm"
export CAIRN_DB="$DB" TZ="${TZ:-UTC}"
NOW=2026-05-10T12:00:00

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
say cairn add examples/sample-history.jsonl
$CAIRN add examples/sample-history.jsonl
say cairn stats
$CAIRN stats
for q in "Where am I moving, and what is my rent budget?" \
         "which climbing gym did I pick, and with whom?" \
         "what did we fix in the tokenizer last month?" \
         "北京烤鸭订在哪里？" \
         "妈妈生日送什么礼物" \
         "why did the CI deploy fail?"; do
    say cairn recall "\"$q\"" --budget 300 --now $NOW
    $CAIRN recall "$q" --budget 300 --now $NOW
done
say 'cairn recall "what did I do last week?" --now 2026-04-30 --budget 200'
$CAIRN recall "what did I do last week?" --now 2026-04-30 --budget 200
printf '\nThe demo store is %s; your own store is ~/.cairn/memory.db (or $CAIRN_DB).\n' "$DB"
