#!/bin/sh
# t0563-vault-pack-even: more pages shown in shorter excerpts (branch
# vault26, docs/VAULTS.md). Five long pages that all pass share the notes'
# budget evenly (NOTE_PACK_EVEN): each is shown, as an excerpt; with the
# fixed cap of a third (NOTE_PACK_EVEN 0) the fourth and fifth are left
# out. A page's second section does not keep a next page out
# (NOTE_PER_DOC 1): the sixth page is shown, where two sections of the
# first filled the six items. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none

# Five pages of about 400 tokens, each holding the question's three words
# (more often the earlier the page, so they rank in order), then filler.
V="$TMP/even"
mkdir -p "$V"
python3 - "$V" <<'PY'
import sys
filler = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
for p in range(5):
    body = []
    for i in range(60):
        body.append(" ".join(filler[(i + k) % 10] for k in range(6)))
        if i % (4 + p) == 0:
            body.append("glorbnax quintar zeplik")
    open("%s/page%d.md" % (sys.argv[1], p + 1), "w").write(
        "# Page %d\n\n" % (p + 1) + "\n".join(body) + "\n")
PY
check "vault add (five pages)" "$CAIRN" vault add "$V" --name even
out=$("$CAIRN" recall "glorbnax quintar zeplik" --source notes --budget 600 --json)
for p in 1 2 3 4 5; do
    contains "page $p of 5 is shown" "$out" "\"path\":\"page$p.md\""
done
tokens=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens"])')
check "within the budget ($tokens tokens)" [ "$tokens" -le 600 ]
check "vault rm" "$CAIRN" vault rm even

# Six short pages; the first has two sections, both ranking above every
# other page's.
W="$TMP/perdoc"
mkdir -p "$W"
python3 - "$W" <<'PY'
import sys
w = "glorbnax quintar zeplik"
open("%s/first.md" % sys.argv[1], "w").write(
    "# First\n\n" + (w + " ") * 6 + "\n\n## Again\n\n" + (w + " ") * 6 + "\n")
for p in range(2, 7):
    open("%s/page%d.md" % (sys.argv[1], p), "w").write(
        "# Page %d\n\n" % p + (w + " ") * (7 - p) + "kilo lima mike " * (2 * p) + "\n")
PY
check "vault add (six pages)" "$CAIRN" vault add "$W" --name perdoc
out=$("$CAIRN" recall "glorbnax quintar zeplik" --source notes --budget 2000 --json)
contains "the first page is shown" "$out" '"path":"first.md"'
contains "the sixth page is shown" "$out" '"path":"page6.md"'
n=$(printf '%s' "$out" | python3 -c 'import json,sys; print(sum(i.get("path") == "first.md" for i in json.load(sys.stdin)["items"]))')
check "one section of the first page ($n)" [ "$n" -eq 1 ]
t_done
