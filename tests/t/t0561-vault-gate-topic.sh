#!/bin/sh
# t0561-vault-gate-topic: the gate's rule for a word of a page's name
# (docs/VAULTS.md, "The gate") takes a word of more than NOTE_NAME_PART_DF
# sections too when at least NOTE_NAME_PART_CONC of those sections are in
# the pages whose names hold it: the topic of a family of pages
# ("widgetron" in the widgetron-*.md pages: 24 of its 27 sections, cards
# and title sections included). The same share on a word that pages not
# named by it hold ("gizmo": 4 of its 20 sections in gizmo-notes.md) does
# not fire. Without the rule "topic" stays quiet. Never skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/vault_gate.sh"
vault_pages 7 <<'PY'
def page(name, title, sections):
    vault_words.write_page(root, name, title, *sections)

def filler(n=40):
    return [rng.choice(pad) for _ in range(n)] + rng.sample(everyday, 3)

# 30 pages of filler; "widgetron" in 3 of them, "gizmo" in 16
for i in range(30):
    secs = [filler(), filler()]
    secs[0] += ["widgetron"] * (i < 3) + ["gizmo"] * (3 <= i < 19)
    page(f"page{i:02d}.md", f"Page {i}", secs)
# the widgetron family: 4 pages named by it, 4 sections each holding it
for name in ("install", "usage", "faq", "tuning"):
    secs = [filler() + ["widgetron"] for _ in range(4)]
    if name == "tuning":
        secs[2] = "Widgetron tuning: the harbor setting.".split() + [rng.choice(pad) for _ in range(20)]
    page(f"widgetron-{name}.md", f"Widgetron {name}", secs)
# one page named by gizmo, 3 sections holding it
secs = [filler() + ["gizmo"] for _ in range(3)]
secs[1] = "Gizmo tuning: the harbor setting.".split() + [rng.choice(pad) for _ in range(20)]
page("gizmo-notes.md", "Notes", secs)
PY
vault_eval <<'Q'
{"id":"topic","question":"widgetron harbor setting","pages":["widgetron-tuning.md"],"fire":true}
{"id":"spread","question":"gizmo harbor setting","fire":false}
Q
contains "the topic word of a family of pages fires on one of them" "$(line topic)" '"fired":true,"hit":true'
contains "a word as common, spread over other pages, does not" "$(line spread)" '"fired":false'
t_done
