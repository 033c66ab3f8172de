#!/bin/sh
# t0564-vault-gate-head: the gate's heading rule (docs/VAULTS.md, "The
# gate"; NOTE_GATE_HEAD). A section whose heading holds one of the
# question's rare words fires on half of the question though its weight is
# under NOTE_GATE_WEIGHT ("zorblax harbor lantern" and "## Zorblax setup");
# the same share with the rare word in the text and an everyday word in
# the heading ("quindle harbor lantern" and "## Harbor") does not, nor a
# rare word in the heading of a section that holds too little of the
# question. Without the rule "head" stays quiet. Never skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vault_gate.sh"
# 30 pages of filler and four everyday words each; then the pages the
# queries are about (no rare word in a page's name: the name rule is
# t0559's)
vault_pages 7 <<'PY'
def filler(n):
    return vault_words.filler(rng, n)

filler_pages(root, rng)
with open(f"{root}/guide.md", "w") as f:
    f.write(f"# Guide\n\n{filler(40)}\n\n## Zorblax setup\n\n"
            f"Start with harbor lantern and then {filler(40)}\n")
with open(f"{root}/notes.md", "w") as f:
    f.write(f"# Notes\n\n{filler(40)}\n\n## Harbor\n\n"
            f"The quindle is by the harbor lantern {filler(40)}\n\n"
            f"## Wibbleton\n\nwibbleton {filler(40)}\n")
PY
vault_eval <<'Q'
{"id":"head","question":"zorblax harbor lantern","pages":["guide.md"],"fire":true}
{"id":"nohead","question":"quindle harbor lantern","fire":false}
{"id":"thin","question":"wibbleton harbor lantern weather copper meadow","fire":false}
Q
contains "a rare word of a section's heading fires on it" "$(line head)" '"fired":true,"hit":true'
contains "a rare word of the text under an everyday heading does not" "$(line nohead)" '"fired":false'
contains "a rare heading word in a section holding too little does not" "$(line thin)" '"fired":false'
t_done
