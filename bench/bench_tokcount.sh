#!/bin/sh
# bench/bench_tokcount.sh: the budget token counter's throughput, this
# tree against an older one (default: main), in the same command.
#
#   sh bench/bench_tokcount.sh [OLD_REF] [PROCESS_RUNS] [ROUNDS]
#
# Builds bench/bench_tokcount.c twice with -O2, against this tree's
# src/text/tokcount.c and OLD_REF's (each with its own UTF-8 decoder), then
# runs the two processes in turn PROCESS_RUNS times (default 5), each
# timing ROUNDS passes (default 5) over the same 32 MB of made-up
# multilingual messages. Prints each build's median of the per-process
# medians (MB/s of CPU time) for the count and the cut, and new/old.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OLD=${1:-main}
RUNS=${2:-5}
ROUNDS=${3:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
FILES="src/text/tokcount.c src/text/tokcount.h src/util/utf8.c src/util/utf8.h src/util/buf.c
       src/util/buf.h include/cairn.h"

mkdir -p "$TMP/old"
git archive "$OLD" $FILES | tar -x -C "$TMP/old"
for t in old new; do
    dir=$ROOT
    [ "$t" = old ] && dir=$TMP/old
    $CC -std=c11 -D_GNU_SOURCE -O2 -I"$dir/include" -I"$dir/src" -I"$ROOT/src" -I"$ROOT/bench" -o "$TMP/bench-$t" \
        bench/bench_tokcount.c "$dir/src/text/tokcount.c" "$dir/src/util/utf8.c" "$dir/src/util/buf.c"
done
i=0
while [ "$i" -lt "$RUNS" ]; do
    for t in old new; do
        "$TMP/bench-$t" "$ROUNDS" | sed "s/^bench tokcount /$t /"
    done
    i=$((i + 1))
done > "$TMP/out"
awk '
    { for (i = 2; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      n[$1]++; c[$1, n[$1]] = f["count_p50_mbps"]; p[$1, n[$1]] = f["prefix_p50_mbps"]
      tok[$1] = f["tokens"]; mb = f["mb"] }
    function med(a, t,   i, j, x, v) {
        for (i = 1; i <= n[t]; i++) v[i] = a[t, i]
        for (i = 2; i <= n[t]; i++) for (j = i; j > 1 && v[j] < v[j - 1]; j--) {
            x = v[j]; v[j] = v[j - 1]; v[j - 1] = x }
        return n[t] % 2 ? v[(n[t] + 1) / 2] : (v[n[t] / 2] + v[n[t] / 2 + 1]) / 2
    }
    END {
        for (t = 0; t < 2; t++) {
            b = t ? "new" : "old"; mc[b] = med(c, b); mp[b] = med(p, b)
            printf "bench tokcount_builds.%s runs=%d mb=%s tokens=%s count_p50_mbps=%.0f prefix_p50_mbps=%.0f\n",
                   b, n[b], mb, tok[b], mc[b], mp[b]
        }
        printf "# tokcount: new/old count %.2f, cut %.2f; tokens new/old %.3f\n",
               mc["new"] / mc["old"], mp["new"] / mp["old"], tok["new"] / tok["old"]
    }' "$TMP/out"
