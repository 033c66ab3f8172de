#!/bin/sh
# bench_instr.sh: two builds' instructions for `cairn recall --method keyword`, counted by
# callgrind, question by question in turn. Counts do not depend on the machine's load, which
# on these shared 2-vCPU machines moves wall and CPU medians by more than the change being
# measured; they do not see cache misses or I/O waits (pair them with bench_builds.py).
#
# usage: bench_instr.sh OLD_CAIRN OLD_STORE NEW_CAIRN NEW_STORE QUESTIONS.txt N BUDGET
# Takes N questions spread evenly over QUESTIONS.txt. Each build reads its own copy of the
# store (a build may migrate it). Prints one line per build and their ratio.
set -eu
[ $# -eq 7 ] || { sed -n 2,10p "$0" >&2; exit 2; }
old=$1 dbo=$2 new=$3 dbn=$4 qf=$5 n=$6 budget=$7
command -v valgrind >/dev/null || { echo "bench_instr: needs valgrind" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
total=$(grep -c . "$qf")
step=$((total / n)); [ "$step" -ge 1 ] || step=1
count() {   # exe db question: instructions of one recall process
    CAIRN_EMBED_MODEL=none valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" \
        "$1" --db "$2" recall --method keyword "$3" --budget "$budget" 2>&1 >/dev/null |
        sed -n 's/.*Collected : //p'
}
io=0 in=0 i=0
while [ "$i" -lt "$n" ]; do
    q=$(grep . "$qf" | sed -n "$((i * step + 1))p")
    io=$((io + $(count "$old" "$dbo" "$q")))
    in=$((in + $(count "$new" "$dbn" "$q")))
    i=$((i + 1))
done
echo "bench instr.old budget=$budget questions=$n instructions=$io per_recall=$((io / n))"
echo "bench instr.new budget=$budget questions=$n instructions=$in per_recall=$((in / n))" \
     "ratio=$(awk -v a="$in" -v b="$io" 'BEGIN { printf "%.4f", a / b }')"
