#!/bin/sh
# scripts/corrections-eval.sh [DATA]: the correction recogniser's precision
# and recall on its labelled prompts (docs/MEMORIES.md, "The recogniser").
# The labels (tests/data/corrections-labels.tsv) name prompts of
# ../shared/data by reference; the prompts are read from there at run time
# (scripts/corrections-prompts.py), never copied into the repository.
# Prints "SKIP corrections-eval: ..." and exits 0 when the data is absent.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${1:-$ROOT/../shared/data}
CAIRN=${CAIRN:-$ROOT/${BUILD:-build}/cairn}
if [ ! -d "$DATA/devmem-dev" ]; then
    echo "SKIP corrections-eval: no development data at $DATA (../shared/data)"
    exit 0
fi
[ -x "$CAIRN" ] || { echo "corrections-eval: $CAIRN not built (make all)" >&2; exit 1; }
python3 "$ROOT/scripts/corrections-prompts.py" "$DATA" |
python3 -c '
import json, math, subprocess, sys
labels = {}
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("#") or not line.strip():
        continue
    ref, lab = line.rstrip("\n").split("\t")
    labels[ref] = int(lab)
rows = [json.loads(l) for l in sys.stdin]
rows = [r for r in rows if r["ref"] in labels]
missing = len(labels) - len(rows)
out = subprocess.run([sys.argv[2], "memories", "recognise"], input="".join(
    json.dumps({"text": r["text"]}) + "\n" for r in rows), capture_output=True, text=True,
    check=True).stdout.split("\n")
def wilson(k, n):
    if n == 0:
        return (0.0, 1.0)
    z = 1.959963984540054
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, c - h), min(1.0, c + h))
tp = fp = fn = 0
for r, rule in zip(rows, out):
    fired, gold = rule != "-", labels[r["ref"]]
    tp += fired and gold
    fp += fired and not gold
    fn += (not fired) and gold
    if fired != bool(gold):
        print("  %s %s (%s)" % ("FP" if fired else "FN", r["ref"], rule))
def show(name, k, n):
    lo, hi = wilson(k, n)
    print("%-9s %d/%d = %s (95%% CI %.0f-%.0f%%)" % (name, k, n,
          "%.0f%%" % (100.0 * k / n) if n else "n/a", 100 * lo, 100 * hi))
print("labelled prompts: %d (%d positive)%s" % (len(rows), tp + fn,
      ", %d not found in the data" % missing if missing else ""))
show("precision", tp, tp + fp)
show("recall", tp, tp + fn)
' "$ROOT/tests/data/corrections-labels.tsv" "$CAIRN"
