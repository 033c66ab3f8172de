#!/bin/sh
# t0565-vault-gate-offpage: a section whose page's card (title, aliases,
# tags, path) holds none of the question's words of at least
# NOTE_GATE_CARD_W in the gate's units needs NOTE_GATE_WEIGHT_OFFPAGE, not
# NOTE_GATE_WEIGHT, to pass the gate (docs/VAULTS.md, "The gate"). One rare
# word and three commoner ones fire on a page whose title holds "quarry"
# (in 14 of 60 pages); the same share and weight on a page named by none of
# them do not, nor on a page whose title holds only "harbor", a word of
# half the pages; two rare words on a page named by none (a weight past
# NOTE_GATE_WEIGHT_OFFPAGE) do. Without the rule "offpage" and "common"
# fire; with every card word counting, "common" fires. Never skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vault_gate.sh"
# 60 pages of filler and four everyday words each (harbor and lantern in
# about half of them), "quarry" in 11: too common for the name rules
# (t0559, t0561), rare enough to say what a page is about
vault_pages 7 <<'PY'
def page(name, title, words):
    vault_words.spaced_page(root, rng, name, title, words)

vault_words.filler_pages(root, rng, 60, {"quarry": 11})
page("quarry-log.md", "Quarry log", ["zorblax", "quarry", "harbor", "lantern"])
page("misc.md", "Misc", ["wibbleton", "quarry", "harbor", "lantern"])
page("other.md", "Other", ["gristle", "tolliver", "quarry", "harbor", "lantern"])
page("harbor-notes.md", "Harbor notes", ["fennimore", "quarry", "harbor", "lantern"])
PY
vault_eval <<'Q'
{"id":"onpage","question":"zorblax quarry harbor lantern","pages":["quarry-log.md"],"fire":true}
{"id":"offpage","question":"wibbleton quarry harbor lantern","fire":false}
{"id":"common","question":"fennimore quarry harbor lantern","fire":false}
{"id":"offpage2","question":"gristle tolliver quarry harbor lantern","pages":["other.md"],"fire":true}
Q
contains "words of the question on a page named by one of them fire" "$(line onpage)" '"fired":true,"hit":true'
contains "the same weight on a page named by none of them does not" "$(line offpage)" '"fired":false'
contains "nor on a page named by an everyday word of them" "$(line common)" '"fired":false'
contains "two rare words on a page named by none do" "$(line offpage2)" '"fired":true,"hit":true'
t_done
