#!/bin/sh
# bench_encoder_ort.sh: cairn's encoder against ONNX Runtime on the same
# MiniLM-L12 shape (12 layers, hidden 384, 12 heads, FFN 1536, vocab
# 30522; random weights), batch 1 x 20 (a query) and 32 x 128 (ingest), at
# 1 and 2 threads, in one run, and prints cairn/ORT throughput ratios
# (> 1: cairn faster).
#
#   BUILD=/tmp/b sh bench/bench_encoder_ort.sh      (after make BUILD=/tmp/b all)
#   ROUNDS=3 ...    cairn and ORT measured alternately 3 times (machines are
#                   noisy); each round's ratios, then their medians
#   LEVELS="avx2"   the SIMD levels cairn runs at (CAIRN_SIMD, see
#                   src/embed/kernels.h); default every level the CPU has
#                   of avx512 and avx2 (portable where it has neither), so
#                   an AVX-512 machine measures the AVX2 path too, and
#                   avxvnni (AVX2 with AVX-VNNI) where the CPU has that,
#                   for int8 only (its f32 kernels are avx2's)
#   INT8="0 1"      f32 (0) and the int8 linear layers (1, CAIRN_EMBED_INT8)
#
# The CPU's vector level is printed first. ORT picks its own kernels from
# the CPU (AVX-512 where there is some): on an AVX-512 machine the avx2
# rows are cairn's AVX2 path against ORT's AVX-512 one.
#
# OpenBLAS picks its kernels from the CPU unless OPENBLAS_CORETYPE is set
# (e.g. =Haswell, AVX2 only, at half the AVX-512 speed); the script prints
# the value and the core in use: run it with `env -u OPENBLAS_CORETYPE` to
# measure OpenBLAS's own choice. ORT picks its kernels itself.
#
# Needs: Debian python3-torch + python3-onnx (for the export), node + npm.
# onnxruntime-node@1.30.0 is installed into a scratch folder (ORT_DIR,
# default /tmp/cairn-ort) from whatever registry npm is configured for.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
ORT_DIR=${ORT_DIR:-/tmp/cairn-ort}
PY=${PYTHON:-/usr/bin/python3}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

make -C "$ROOT" BUILD="$BUILD" "$BUILD/bench/bench_embed" >/dev/null
if [ ! -d "$ORT_DIR/node_modules/onnxruntime-node" ]; then
    mkdir -p "$ORT_DIR"
    (cd "$ORT_DIR" && { [ -f package.json ] || npm init -y >/dev/null; } &&
     ONNXRUNTIME_NODE_INSTALL_CUDA=skip npm install --ignore-scripts onnxruntime-node@1.30.0 >/dev/null)
fi
"$PY" "$ROOT/bench/ort_export.py" "$WORK/L12.onnx" 2>"$WORK/export.log" || { cat "$WORK/export.log" >&2; exit 1; }

ROUNDS=${ROUNDS:-1}
probe=$(OPENBLAS_VERBOSE=2 "$BUILD/bench/bench_embed" --layers 1 --quick --only query --threads 1 2>&1)
core=$(printf '%s\n' "$probe" | sed -n 's/^Core: //p' | head -1)
cpu=$(printf '%s\n' "$probe" | sed -n 's/.* cpu_simd=\([a-z0-9]*\).*/\1/p' | head -1)
case "${cpu:-?}" in
    avx512) dflt="avx512 avx2" ;;
    avx2) dflt="avx2" ;;
    *) dflt="portable" ;;
esac
grep -qw avx_vnni /proc/cpuinfo 2>/dev/null && [ "$dflt" != portable ] && dflt="$dflt avxvnni"
LEVELS=${LEVELS:-$dflt}
INT8=${INT8:-0 1}
echo "# cairn $(sed -n 's/^#define CAIRN_VERSION "\(.*\)"/\1/p' "$ROOT/include/cairn.h"), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "# CPU vector level ${cpu:-?} ($(grep -m1 '^model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: //')); cairn levels run: $LEVELS"
echo "# OpenBLAS core ${core:-?} (OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset}), $ROUNDS round(s), int8 settings: $INT8"
shapes="batch=1.seq=20 batch=32.seq=128"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "# round $r"
    : >"$WORK/cairn.txt"
    for lv in $LEVELS; do
        for q in $INT8; do
            [ "$lv" = avxvnni ] && [ "$q" = 0 ] && continue
            CAIRN_SIMD=$lv CAIRN_EMBED_INT8=$q "$BUILD/bench/bench_embed" |
                sed "s/^bench=embed /bench=embed simd=$lv int8=$q /" | tee -a "$WORK/cairn.txt"
        done
    done
    : >"$WORK/ort.txt"
    for t in 1 2; do
        node "$ROOT/bench/ort_bench.js" "$WORK/L12.onnx" "$ORT_DIR" "$t" | tee -a "$WORK/ort.txt"
    done
    echo "# ratio = cairn tokens/s / ORT tokens/s (query: ORT p50 / cairn p50)"
    for lv in $LEVELS; do
      for q in $INT8; do
        for t in 1 2; do
            for sh in $shapes; do
                shape=$(echo "$sh" | tr . ' ')
                # " ms_p50=": the wall time, not cpu_ms_p50
                c=$(grep "simd=$lv int8=$q .*threads=$t $shape " "$WORK/cairn.txt" | sed 's/.* ms_p50=\([0-9.]*\).*/\1/' | head -1)
                u=$(grep "simd=$lv int8=$q .*threads=$t $shape " "$WORK/cairn.txt" | sed -n 's/.* cpu_ms_p50=\([0-9.]*\).*/\1/p' | head -1)
                o=$(grep "threads=$t $shape " "$WORK/ort.txt" | sed 's/.* ms_p50=\([0-9.]*\).*/\1/' | head -1)
                [ -n "$c" ] && [ -n "$o" ] &&
                    echo "ratio simd=$lv int8=$q threads=$t $shape cairn_ms=$c ort_ms=$o ratio=$(echo "$o $c" | awk '{printf "%.2f", $1/$2}') cairn_cpu_ms=${u:-?}" |
                    tee -a "$WORK/ratios.txt"
            done
        done
      done
    done
    r=$((r + 1))
done
if [ "$ROUNDS" -gt 1 ]; then
    echo "# medians over $ROUNDS rounds"
    for lv in $LEVELS; do
      for q in $INT8; do
        for t in 1 2; do
            for sh in $shapes; do
                shape=$(echo "$sh" | tr . ' ')
                grep "simd=$lv int8=$q threads=$t $shape " "$WORK/ratios.txt" |
                awk -v h="median simd=$lv int8=$q threads=$t $shape" '
                    { n = split($0, f, " "); for (i = 2; i <= n; i++) { split(f[i], kv, "=");
                      if (kv[1] == "cairn_ms") c[NR] = kv[2]; if (kv[1] == "ort_ms") o[NR] = kv[2];
                      if (kv[1] == "ratio") q[NR] = kv[2]; if (kv[1] == "cairn_cpu_ms") u[NR] = kv[2] } }
                    function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                        if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
                    END { if (NR) printf "%s cairn_ms=%s ort_ms=%s ratio=%.2f cairn_cpu_ms=%s\n", h, med(c, NR), med(o, NR), med(q, NR), med(u, NR) }'
            done
        done
      done
    done
fi
