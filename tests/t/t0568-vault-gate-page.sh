#!/bin/sh
# t0568-vault-gate-page: a page whose sections hold nearly all of the
# question between them (NOTE_GATE_PAGE_SHARE) on about two rare words
# (NOTE_GATE_PAGE_WEIGHT, the gate's units) lets its section holding half
# of the question through the gate, though that section alone weighs too
# little (docs/VAULTS.md, "The gate"). Five words of 11 pages each: three
# in one section and two in the next of a page fire on it; of six others
# (three of 11 pages, three of 13), three and two do not (the page holds
# 0.84 of the question, though more than 2.0 in weight), nor a
# question whose page holds all of it on everyday words (too little
# weight). Without the rule "page" stays quiet; at a page share of 0.8
# "short" fires, at a page weight of 1.0 "everyday". Never skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vault_gate.sh"
vault_pages 8 <<'PY'
filler_pages(root, rng, 60)
# each word in 11 or 13 filler pages, the next word in the next ones: no
# filler page holds more than two words of a question
at = 0
for words, n in (("quarry gravel fennel bramble thistle", 11), ("cobble sorrel tansy", 11),
                 ("yarrow nettle burdock", 13)):
    for w in words.split():
        for k in range(n):
            with open(f"{root}/page{at % 60:02d}.md", "a") as f:
                f.write(f"\n{pad[k % len(pad)]} {w}\n")
            at += 1
def sec(*ws):
    return [x for w in ws for x in (vault_words.filler(rng, 6), w)]
vault_words.write_page(root, "ledger.md", "Ledger",
                       sec("quarry", "gravel", "fennel"), sec("bramble", "thistle"))
vault_words.write_page(root, "journal.md", "Journal",
                       sec("cobble", "sorrel", "tansy"), sec("yarrow", "nettle"))
vault_words.write_page(root, "diary.md", "Diary",
                       sec("quarry", "harbor", "lantern"), sec("meadow", "river"))
PY
vault_eval <<'Q'
{"id":"page","question":"quarry gravel fennel bramble thistle","pages":["ledger.md"],"fire":true}
{"id":"short","question":"cobble sorrel tansy yarrow nettle burdock","fire":false}
{"id":"everyday","question":"quarry harbor lantern meadow river","fire":false}
Q
contains "a page holding the question across its sections fires" "$(line page)" '"fired":true,"hit":true'
contains "a page holding too little of it does not" "$(line short)" '"fired":false'
contains "nor one holding it on everyday words" "$(line everyday)" '"fired":false'
t_done
