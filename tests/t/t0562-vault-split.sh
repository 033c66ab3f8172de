#!/bin/sh
# t0562-vault-split: a long section is cut into pieces at blank lines
# outside code (NOTE_SPLIT_TOK, text/markdown.c md_split; docs/VAULTS.md):
# a 2,000-token page without headings becomes pieces of at most the cut,
# each cited at its own first line, so a question whose words are in one
# paragraph of the page's middle is answered from there; a store indexed
# with another cut (as every store from before schema 25) is stale and its
# next re-index parses the file again; IDF counts a cut section once.
# Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
V="$TMP/vault"
mkdir -p "$V"
line=$(python3 - "$V" <<'PY'
import random, sys
random.seed(7)
fill = ("the memory of a long essay about notes and recall written as one page without any "
        "heading at all so that it reads like an article pasted from the web").split()
out, n = [], 1
for p in range(40):
    if p == 12:
        out.append("```\ncode line\n\n\nmore code\n```")
    words = [random.choice(fill) for _ in range(50)] + ["plonk"]
    if p == 25:
        words[10:10] = ["zorblat", "quexis", "frobnicate"]
        print(sum(s.count("\n") + 2 for s in out) + 1)
    out.append("\n".join(" ".join(words[i:i + 10]) for i in range(0, len(words), 10)))
open(f"{sys.argv[1]}/essay.md", "w").write("\n\n".join(out) + "\n")
open(f"{sys.argv[1]}/other.md", "w").write("A short page about zappo and quib.\n")
PY
)
check "vault add" "$CAIRN" vault add "$V" --name v
q() { sqlite3 "$CAIRN_DB" "$1"; }
n=$(q "SELECT count(*) FROM vault_sections s JOIN vault_docs d ON d.id = s.doc WHERE line > 0 AND path = 'essay.md'")
check "the page is cut into pieces ($n)" [ "$n" -ge 4 ]
eq "pieces keep their section's heading and are numbered in it" \
   "$(q "SELECT group_concat(part || ':' || heading, ',') FROM (SELECT part, heading FROM vault_sections s JOIN vault_docs d ON d.id = s.doc WHERE line > 0 AND path = 'essay.md' ORDER BY line)")" \
   "$(python3 -c "print(','.join('%d:' % i for i in range($n)))")"
max=$(q "SELECT max(ntok) FROM vault_sections WHERE line > 0")
check "no piece over the cut ($max)" [ "$max" -le 512 ]
eq "no piece starts inside the code block" \
   "$(q "SELECT count(*) FROM vault_sections WHERE text LIKE 'more code%' OR text LIKE '\`\`\`%'")" 0
eq "the documents record their cut" "$(q "SELECT group_concat(cut) FROM vault_docs")" 200512,200512
# IDF counts a cut section once: "plonk", in every piece of the essay, is as
# rare as "zappo" and "quib", in one page's one section, so that page holds
# two thirds of the question (counted by piece, "plonk" would weigh less
# and it more)
out=$("$CAIRN" recall "plonk zappo quib" --source notes --json --explain)
contains "a cut section counts once for IDF" "$(printf '%s' "$out" | python3 -c 'import json,sys; print([i["why"] for i in json.load(sys.stdin)["items"] if i["path"] == "other.md"])')" "holds 67% of the question"
out=$("$CAIRN" recall "zorblat quexis frobnicate" --source notes --json)
got=$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["items"][0]["line"])')
sec=$(q "SELECT line FROM vault_sections WHERE text LIKE '%zorblat%'")
check "the answer is the piece holding the words (line $got)" [ "$got" = "$sec" ] && [ "$got" -gt 1 ]
check "the piece starts at or before its paragraph (line $line)" [ "$got" -le "$line" ]
# a store cut otherwise (a schema-24 store: cut 0) is stale; a re-index cuts again
q "UPDATE vault_docs SET cut = 0"
contains "doctor: stale after a change of the cut" "$("$CAIRN" doctor 2>&1)" "vault v: 2 files changed"
contains "reindex parses them again" "$("$CAIRN" vault reindex v 2>/dev/null)" "0 added, 2 changed, 0 unchanged"
eq "the same pieces again" "$(q "SELECT count(*) FROM vault_sections s JOIN vault_docs d ON d.id = s.doc WHERE line > 0 AND path = 'essay.md'")" "$n"
contains "reindex: then nothing changed" "$("$CAIRN" vault reindex v 2>/dev/null)" "0 changed, 2 unchanged"
t_done
