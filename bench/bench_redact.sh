#!/bin/sh
# bench/bench_redact.sh: secret masking throughput, this tree against an
# older one (default: main), in the same command.
#
#   sh bench/bench_redact.sh [OLD_REF] [PROCESS_RUNS] [ROUNDS]
#
# Builds bench/bench_redact.c twice with -O2: against this tree's
# src/mask/redact.c and against OLD_REF's (src/capture/redact.c before the
# masking moved below the store; with each tree's buffer and UTF-8 code), then runs the two processes in turn PROCESS_RUNS times
# (default 5), each timing ROUNDS maskings (default 5) of 16 MB made from
# this tree's tests/data/redact-clean.txt (so both mask the same bytes).
# Prints each build's median of the per-process medians, MB/s of wall and
# of CPU time, per input, the copy baseline measured in the same processes,
# and new/old of the CPU figure (the machine's load moves wall time).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OLD=${1:-main}
RUNS=${2:-5}
ROUNDS=${3:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
CFLAGS="-std=c11 -D_GNU_SOURCE -O2"
LIBS="$(pkg-config --libs libpcre2-8 libutf8proc) -lpthread -lm"
# the folder that holds redact.c in a tree: src/mask, or src/capture in
# trees from before the move
mask_dir() { if git cat-file -e "$1:src/mask/redact.c" 2>/dev/null; then echo mask; else echo capture; fi; }
OLD_MASK=$(mask_dir "$OLD")
FILES="src/$OLD_MASK/redact.c src/$OLD_MASK/redact.h src/util/buf.c src/util/buf.h
       src/util/utf8.c src/util/utf8.h include/cairn.h"

mkdir -p "$TMP/old"
git archive "$OLD" $FILES | tar -x -C "$TMP/old"
# bench_redact.c includes "mask/redact.h": an old tree gets that name too
if [ "$OLD_MASK" != mask ]; then
    mkdir -p "$TMP/old/src/mask"
    cp "$TMP/old/src/$OLD_MASK/redact.h" "$TMP/old/src/mask/redact.h"
fi
for t in old new; do
    dir=$ROOT m=mask
    [ "$t" = old ] && dir=$TMP/old m=$OLD_MASK
    # the clock (util/os.c) is this tree's in both builds: it is not
    # measured; nor is util/dl.c (libpcre2-8 by dlopen since hook53, linked
    # here too, so dlopen finds it loaded)
    $CC $CFLAGS -I"$dir/include" -I"$dir/src" -I"$ROOT/src" -I"$ROOT/bench" -o "$TMP/bench-$t" \
        bench/bench_redact.c "$dir/src/$m/redact.c" "$dir/src/util/buf.c" \
        "$dir/src/util/utf8.c" "$ROOT/src/util/os.c" "$ROOT/src/util/dl.c" $LIBS
done
i=0
while [ "$i" -lt "$RUNS" ]; do
    for t in old new; do
        "$TMP/bench-$t" tests/data/redact-clean.txt "$ROUNDS" | sed "s/^bench redact\./$t /"
    done
    i=$((i + 1))
done > "$TMP/out"
# the median over processes of each build's per-process medians
python3 - "$TMP/out" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    t, inp = line.split()[:2]
    v = dict(re.findall(r"(\w+)=([0-9.]+)", line))
    rows.setdefault((inp, t), []).append(v)
for inp in ("clean", "secrets"):
    med = {}
    for t in ("old", "new"):
        r = rows[(inp, t)]
        wall = statistics.median(float(x["p50_mbps"]) for x in r)
        med[t] = statistics.median(float(x["cpu_p50_mbps"]) for x in r)
        copy = statistics.median(float(x["copy_p50_mbps"]) for x in r)
        print("bench redact_builds.%s.%s runs=%d mb=%s masked=%s p50_mbps=%.1f "
              "cpu_p50_mbps=%.1f copy_p50_mbps=%.1f"
              % (inp, t, len(r), r[0]["mb"], r[0]["masked"], wall, med[t], copy))
    print("# %s: new/old (cpu) = %.2f" % (inp, med["new"] / med["old"]))
PY
