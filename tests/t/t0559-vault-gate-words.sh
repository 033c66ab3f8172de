#!/bin/sh
# t0559-vault-gate-words: two rules of the prompt hook's gate over notes
# (docs/VAULTS.md, "The gate"). A page whose file name holds one of the
# question's rare words (NOTE_NAME_PART_DF) fires on a section holding half
# of the question though its weight is under NOTE_GATE_WEIGHT
# ("zorblax harbor lantern" and setup-zorblax.md); the same share on a
# rare word of the text, not of a name, does not. A number found in many
# sections (NOTE_GATE_NUM_DF) leaves the gate's share and weight: "12" in
# a dozen pages does not lift "quindle fennimore 12" over the gate's
# weight, while a rare number ("4711", in one page) still counts. Without
# the rules "part" stays quiet and "number" fires. Never skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vault_gate.sh"
# 30 pages of filler and four everyday words each, "12" in eleven of them,
# the rare words of "number" in one; then the two pages the queries are about
vault_pages 11 <<'PY'
def page(name, head, words):
    vault_words.write_page(root, name, head, words)

for i in range(30):
    words = [rng.choice(pad) for _ in range(60)] + rng.sample(everyday, 4)
    words += ["12"] * (i < 11) + ["quindle", "fennimore"] * (i < 1)
    rng.shuffle(words)
    page(f"page{i:02d}.md", f"Page {i}", words)
page("setup-zorblax.md", "Setup",
     "Start here: harbor lantern and then".split() + [rng.choice(pad) for _ in range(40)])
page("target.md", "Target",
     "The quindle fennimore list: 12 and 4711.".split() + [rng.choice(pad) for _ in range(40)])
PY
vault_eval <<'Q'
{"id":"part","question":"zorblax harbor lantern","pages":["setup-zorblax.md"],"fire":true}
{"id":"nopart","question":"quindle harbor lantern","fire":false}
{"id":"number","question":"quindle fennimore 12","fire":false}
{"id":"rarenumber","question":"quindle fennimore 4711","pages":["target.md"],"fire":true}
Q
contains "a rare word of the page's file name fires on it" "$(line part)" '"fired":true,"hit":true'
contains "a rare word of the text alone does not" "$(line nopart)" '"fired":false'
contains "a number of many sections does not lift the gate" "$(line number)" '"fired":false'
contains "a rare number still counts" "$(line rarenumber)" '"fired":true,"hit":true'
t_done
