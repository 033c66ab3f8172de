#!/bin/sh
# scripts/eval-cut.sh: measures recall's relative score cut
# (cairn_recall_opts.min_rel_score, `cairn eval --min-rel-score`) on the
# development sets: for each set and cut, the evidence found (all of a
# question's evidence packed, and evidence turns packed in total) and the
# tokens returned per evidence turn found. The MCP server's default cut
# (cli/mcp/tools.c, MCP_MIN_REL_SCORE) was chosen from its output
# (docs/MCP.md). Every cut of one set runs in this one command, the
# no-cut row (0) first, with the model eval.sh uses.
#   BUILD=build  DATA=../shared/data  CUTS="0 0.3 0.5 0.7"  BUDGETS=4000
#   SETS="locomo beam madial-zh madial-en devmem"
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
CAIRN="$BUILD/cairn"
DATA=${DATA:-"$ROOT/../shared/data"}
CUTS=${CUTS:-"0 0.3 0.5 0.7"}
BUDGETS=${BUDGETS:-4000}
SETS=${SETS:-"locomo beam madial-zh madial-en devmem"}
export TZ=UTC
unset CAIRN_DB CAIRN_REDACT CAIRN_EMBED_MAX_PIECES CAIRN_EMBED_SENTENCES CAIRN_REPLY_LANE CAIRN_RECALL_EXHAUSTIVE
export CAIRN_EMBED_MODEL=${CAIRN_EMBED_MODEL:-use-lite-en}
[ -x "$CAIRN" ] || { echo "eval-cut.sh: no $CAIRN; run make first" >&2; exit 1; }
command -v python3 >/dev/null 2>&1 || { echo "eval-cut.sh: needs python3" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

L="$DATA/locomo-dev/locomo10-dev.json"
B="$DATA/beam-100k-dev"
M="$DATA/madial-dev"
V="$DATA/devmem-dev"
args() {
    case $1 in
    locomo) echo "locomo $L" ;;
    beam) echo "beam $B/1 $B/2 $B/3 $B/4 $B/5 $B/6 $B/7 $B/8 $B/9 $B/10" ;;
    madial-zh) echo "madial $M/zh/MADial-Bench-zh-memory.json $M/zh/MADial-Bench-zh-dialogue-dev.json" ;;
    madial-en) echo "madial $M/en/MADial-Bench-en-memory.json $M/en/MADial-Bench-en-dialogue-dev.json" ;;
    devmem) echo "sessions $V/ac-project1 $V/auryn $V/django-crm $V/klima $V/research-agent $V/ros-agents $V/storm-es $V/web-crawler" ;;
    *) echo "eval-cut.sh: unknown set $1" >&2; exit 2 ;;
    esac
}
printf '%-10s %6s %6s %5s %8s %8s %8s %10s\n' set budget cut q all% ev_found tokens tok/ev
for s in $SETS; do
    for c in $CUTS; do
        # shellcheck disable=SC2046
        "$CAIRN" eval $(args "$s") --dev --budgets "$BUDGETS" --method cairn --lean --quiet \
            --min-rel-score "$c" --out "$tmp/$s-$c.jsonl" > /dev/null
        python3 - "$tmp/$s-$c.jsonl" "$s" "$c" <<'PY'
import json, sys
path, name, cut = sys.argv[1:4]
agg = {}
for line in open(path, encoding="utf-8"):
    q = json.loads(line)
    runs = q.get("runs", {}).get("cairn")
    if not runs:
        continue
    for b, r in runs.items():
        a = agg.setdefault(int(b), [0, 0, 0.0, 0])
        a[0] += 1
        a[1] += r["all"]
        # evidence turns found: the share found of the question's evidence
        a[2] += r["fraction"] * len(q.get("evidence") or [])
        a[3] += r["tokens"]
for b in sorted(agg):
    n, al, ev, tok = agg[b]
    print("%-10s %6d %6s %5d %7.1f%% %8.1f %8d %10.1f" % (name, b, cut, n, 100.0 * al / n, ev, tok,
                                                         tok / ev if ev else float("nan")))
PY
    done
done
