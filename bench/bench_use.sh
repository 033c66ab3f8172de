#!/bin/sh
# bench/bench_use.sh: USE-lite encoding throughput (bench_use) of several
# builds, run alternately round by round at 1 and 2 threads, then each
# build's median texts/s and its ratio to the first build.
#
#   sh bench/bench_use.sh old=/tmp/old/bench_use new=build/bench/bench_use
#
# A build older than bench_use.c gets one by compiling this file against
# its libcairn.a (docs/EMBED.md, "USE-lite"). Environment:
#   ROUNDS   alternating rounds (default 3)
#   TEXTS    NUL-separated messages (default: bench_use's generated ones);
#            from a store: python3 -c 'import sqlite3,sys; sys.stdout.buffer.write(b"".join(
#            (r[0] or "").encode()+b"\0" for r in sqlite3.connect(sys.argv[1]).execute(
#            "select content from messages order by id")))' STORE > texts.bin
#   MODEL    the model folder (default: bench_use's)
set -eu
[ $# -ge 1 ] || { echo "usage: bench_use.sh name=bench_use-binary ..." >&2; exit 2; }
ROUNDS=${ROUNDS:-3}
OUT=$(mktemp)
trap 'rm -f "$OUT"' EXIT
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for t in 1 2; do
        for nb in "$@"; do
            line=$("${nb#*=}" --rounds 1 --threads "$t" ${TEXTS:+--texts "$TEXTS"} \
                   ${MODEL:+--model "$MODEL"})
            case $line in "#"*) echo "$line"; exit 0 ;; esac
            echo "build=${nb%%=*} round=$r $line" | tee -a "$OUT"
        done
    done
    r=$((r + 1))
done
# medians per build and thread count, and the ratio to the first build
awk -v first="${1%%=*}" '
    { for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      k = f["build"] " " f["threads"]; n[k]++; v[k, n[k]] = f["texts_per_s"]; b[f["build"]] = 1
      th[f["threads"]] = 1 }
    END {
      for (k in n) {                          # insertion sort, then the median
        for (i = 2; i <= n[k]; i++) for (j = i; j > 1 && v[k, j] < v[k, j - 1]; j--) {
            x = v[k, j]; v[k, j] = v[k, j - 1]; v[k, j - 1] = x }
        med[k] = n[k] % 2 ? v[k, (n[k] + 1) / 2] : (v[k, n[k] / 2] + v[k, n[k] / 2 + 1]) / 2
      }
      for (t in th) for (bb in b)
        printf "bench=use_median build=%s threads=%s texts_per_s=%.1f vs_%s=%.2f\n",
               bb, t, med[bb " " t], first, med[bb " " t] / med[first " " t]
    }' "$OUT" | sort
