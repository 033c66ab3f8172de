#!/bin/sh
# t0231-corrections: corrections from outside (docs/MEMORIES.md,
# "Corrections"): `cairn remember --type correction` with severity and
# applies_when, and its usage errors. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none

out=$("$CAIRN" remember --type correction --severity p0 --scope proj \
      --when-command "git push --force" --when-command "git push -f" "never force push here")
eq "remember a correction" "$out" "remembered 1"
"$CAIRN" remember --type correction --when-path "*.lock" "do not edit lock files by hand" >/dev/null
contains "corrections are memories" "$("$CAIRN" memories list --type correction)" "never force push here"
"$CAIRN" remember --severity p0 "a fact with a severity" >/dev/null 2>&1
eq "--severity without --type correction is a usage error" $? 2
"$CAIRN" remember --type correction --severity p3 "x" >/dev/null 2>&1
eq "a severity past p2 is a usage error" $? 2

t_done
