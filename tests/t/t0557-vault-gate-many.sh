#!/bin/sh
# t0557-vault-gate-many: the prompt hook's gate over notes lets a longer
# question through on a section that holds less than NOTE_GATE_SHARE of it
# when that part is several rare words (NOTE_GATE_SHARE_MANY and
# NOTE_GATE_WEIGHT_MANY, docs/VAULTS.md): three words found in one page
# only, beside eight that every other page holds, fire on that page; two
# such words beside six do not (the same share, the weight of 1.5 rare
# words). The three beside a word the vault lacks (share 0.37) fire too;
# beside two such words (0.33, under the share of 0.35) they do not.
# Without the rule none fires. Never skipped.
. "$(dirname "$0")/lib.sh"
export CAIRN_EMBED_MODEL=none
V="$TMP/vault"
mkdir -p "$V"
python3 - "$V" <<'PY'
import random, sys
random.seed(7)
common = "harbor lantern weather copper meadow river stone candle".split()
filler = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike".split()
for i in range(30):
    ws = [random.choice(filler) for _ in range(60)] + random.sample(common, 4)
    random.shuffle(ws)
    open(f"{sys.argv[1]}/page{i:02d}.md", "w").write(f"# Page {i}\n\n" + " ".join(ws) + "\n")
open(f"{sys.argv[1]}/target.md", "w").write(
    "# Target\n\nThe zorblax quindle fennimore sits here with "
    + " ".join(random.choice(filler) for _ in range(40)) + "\n")
PY
cat > "$TMP/q.jsonl" <<'Q'
{"id":"many","question":"zorblax quindle fennimore harbor lantern weather copper meadow river stone candle","pages":["target.md"],"fire":true}
{"id":"two","question":"zorblax quindle harbor lantern weather copper meadow river","fire":false}
{"id":"lacks1","question":"zorblax quindle fennimore harbor lantern weather copper meadow river stone candle tulip","pages":["target.md"],"fire":true}
{"id":"lacks2","question":"zorblax quindle fennimore harbor lantern weather copper meadow river stone candle tulip orchid","fire":false}
Q
check "eval vault" "$CAIRN" eval vault "$V" "$TMP/q.jsonl" --out "$TMP/run.jsonl"
many=$(grep '"id":"many","method":"cairn"' "$TMP/run.jsonl")
two=$(grep '"id":"two","method":"cairn"' "$TMP/run.jsonl")
contains "three rare words of eleven fire on their page" "$many" '"fired":true,"hit":true'
contains "two rare words of eight do not fire" "$two" '"fired":false'
lacks1=$(grep '"id":"lacks1","method":"cairn"' "$TMP/run.jsonl")
lacks2=$(grep '"id":"lacks2","method":"cairn"' "$TMP/run.jsonl")
contains "three rare words of twelve (share 0.37) fire on their page" "$lacks1" '"fired":true,"hit":true'
contains "three rare words of thirteen (share 0.33) do not fire" "$lacks2" '"fired":false'
t_done
