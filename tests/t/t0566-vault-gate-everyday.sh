#!/bin/sh
# t0566-vault-gate-everyday: an everyday word of the question (common.c:
# "workflow", "session") names no page by the card
# (NOTE_GATE_CARD_EVERYDAY), and counts NOTE_GATE_EVERYDAY_W of its
# weight in what a section holds for the gate (docs/VAULTS.md, "The
# gate"). "workflow" and "quarry" each stand in 11 of 60 filler pages, so
# they weigh the same; only the second is on the everyday list (as are
# "session" and "template", beside "gravel" and "fennel"). A rare
# word and three commoner ones fire on a page whose title holds "quarry",
# not on a page whose title holds "workflow" (with everyday words counting
# as card words, it fires); a rare word and three of 11 pages on a page
# named by none fire with "quarry", "gravel", "fennel", not with
# "workflow", "session", "template" (with every word whole, it fires).
# Never skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vault_gate.sh"
vault_pages 7 <<'PY'
def page(name, title, words):
    vault_words.spaced_page(root, rng, name, title, words)

vault_words.filler_pages(root, rng, 60, {w: 11 for w in ("quarry", "gravel", "fennel",
                                                   "workflow", "session", "template")})
page("quarry-log.md", "Quarry log", ["zorblax", "quarry", "harbor", "lantern"])
page("workflow-log.md", "Workflow log", ["blimwort", "workflow", "harbor", "lantern"])
page("other.md", "Other", ["gristle", "quarry", "gravel", "fennel", "harbor"])
page("misc.md", "Misc", ["snaggle", "workflow", "session", "template", "harbor"])
PY
vault_eval <<'Q'
{"id":"rare","question":"zorblax quarry harbor lantern","pages":["quarry-log.md"],"fire":true}
{"id":"everyday","question":"blimwort workflow harbor lantern","fire":false}
{"id":"rare2","question":"gristle quarry gravel fennel harbor","pages":["other.md"],"fire":true}
{"id":"everyday2","question":"snaggle workflow session template harbor","fire":false}
Q
contains "a title's rare word names the page" "$(line rare)" '"fired":true,"hit":true'
contains "a title's everyday word does not" "$(line everyday)" '"fired":false'
contains "a rare word off the page counts whole" "$(line rare2)" '"fired":true,"hit":true'
contains "an everyday word off the page counts less" "$(line everyday2)" '"fired":false'
t_done
