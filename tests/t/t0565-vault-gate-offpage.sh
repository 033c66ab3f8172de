#!/bin/sh
# t0565-vault-gate-offpage: a section whose page's card (title, aliases,
# tags, path) holds none of the question's words needs
# NOTE_GATE_WEIGHT_OFFPAGE, not NOTE_GATE_WEIGHT, to pass the gate
# (docs/VAULTS.md, "The gate"). Two rare words and an everyday one fire on
# a page whose title holds the everyday word ("zorblax quindle harbor" and
# "# Harbor log"); the same share and weight on a page named by none of
# them ("wibbleton fennimore harbor" and "# Misc") do not; three rare words
# there (a weight past NOTE_GATE_WEIGHT_OFFPAGE) do. With the rule off
# (NOTE_GATE_WEIGHT_OFFPAGE 1.5) "offpage" fires. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
mkdir "$TMP/vault"
# 30 pages of filler and four everyday words each (harbor in about half
# of them: too common for the name rules, t0559 and t0561)
python3 - "$TMP/vault" "$(dirname "$0")" <<'PY'
import random, sys

rng = random.Random(7)
sys.path.insert(0, sys.argv[2])
import vault_words
from vault_words import filler_pages

def filler(n):
    return vault_words.filler(rng, n)

filler_pages(sys.argv[1], rng)
with open(f"{sys.argv[1]}/harbor-log.md", "w") as f:
    f.write(f"# Harbor log\n\n{filler(20)} zorblax {filler(10)} harbor {filler(10)} "
            f"quindle {filler(20)}\n")
with open(f"{sys.argv[1]}/misc.md", "w") as f:
    f.write(f"# Misc\n\n{filler(20)} wibbleton {filler(10)} harbor {filler(10)} "
            f"fennimore {filler(10)} gristle {filler(10)}\n")
PY
cat > "$TMP/q.jsonl" <<'Q'
{"id":"onpage","question":"zorblax quindle harbor","pages":["harbor-log.md"],"fire":true}
{"id":"offpage","question":"wibbleton fennimore harbor","fire":false}
{"id":"offpage3","question":"wibbleton fennimore gristle harbor","pages":["misc.md"],"fire":true}
Q
check "eval vault" "$CAIRN" eval vault "$TMP/vault" "$TMP/q.jsonl" --out "$TMP/run.jsonl"
line() { grep "\"id\":\"$1\",\"method\":\"cairn\"" "$TMP/run.jsonl"; }
contains "words of the question on a page named by one of them fire" "$(line onpage)" '"fired":true,"hit":true'
contains "the same weight on a page named by none of them does not" "$(line offpage)" '"fired":false'
contains "three rare words there do" "$(line offpage3)" '"fired":true,"hit":true'
t_done
