#!/bin/sh
# t0556-vault-pack: one long section does not take the whole notes budget
# while another section passed (NOTE_PACK_EVEN, or NOTE_PACK_SPLIT; docs/VAULTS.md): the
# best section is cut to its share, so the second page is shown whole. The
# long page holds every word of the question, many times, so it ranks
# first; the short one holds two of three, enough to pass. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
V="$TMP/vault"
mkdir -p "$V"
python3 - "$V/long.md" <<'PY'
import sys
words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
body = []
for i in range(400):
    body.append(" ".join(words[(i + k) % 10] for k in range(6)))
    if i % 20 == 0:
        body.append("glorbnax quintar zeplik")
open(sys.argv[1], "w").write("# Long page\n\n" + "\n".join(body) + "\n")
PY
# about 150 tokens: it fits beside a cut of the long page, not beside all of it
python3 -c 'import sys; open(sys.argv[1], "w").write("# Short page\n\nThe glorbnax runs on quintar. " + "kilo lima mike november oscar papa " * 25 + "\n")' "$V/short.md"
check "vault add" "$CAIRN" vault add "$V" --name v
out=$("$CAIRN" recall "glorbnax quintar zeplik" --source notes --budget 600 --json)
contains "the long page ranks first" "$out" '"path":"long.md"'
contains "the short page is shown whole beside it" "$out" '"excerpt":false,"vault":"v","path":"short.md"'
tokens=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')
check "within the budget ($tokens tokens)" [ "$tokens" -le 600 ]
t_done
