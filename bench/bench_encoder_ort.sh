#!/bin/sh
# bench_encoder_ort.sh: cairn's encoder against ONNX Runtime on the same
# MiniLM-L12 shape (12 layers, hidden 384, 12 heads, FFN 1536, vocab
# 30522; random weights), batch 1 x 20 (a query) and 32 x 128 (ingest), at
# 1 and 2 threads, in one run, and prints cairn/ORT throughput ratios
# (> 1: cairn faster).
#
#   BUILD=/tmp/b sh bench/bench_encoder_ort.sh      (after make BUILD=/tmp/b all)
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

echo "# cairn $(sed -n 's/^#define CAIRN_VERSION "\(.*\)"/\1/p' "$ROOT/include/cairn.h"), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
"$BUILD/bench/bench_embed" | tee "$WORK/cairn.txt"
for t in 1 2; do
    node "$ROOT/bench/ort_bench.js" "$WORK/L12.onnx" "$ORT_DIR" "$t" | tee -a "$WORK/ort.txt"
done
echo "# ratio = cairn tokens/s / ORT tokens/s (query: ORT p50 / cairn p50)"
for t in 1 2; do
    for shape in "batch=1 seq=20" "batch=32 seq=128"; do
        c=$(grep "threads=$t $shape " "$WORK/cairn.txt" | sed 's/.*ms_p50=\([0-9.]*\).*/\1/' | head -1)
        o=$(grep "threads=$t $shape " "$WORK/ort.txt" | sed 's/.*ms_p50=\([0-9.]*\).*/\1/' | head -1)
        [ -n "$c" ] && [ -n "$o" ] &&
            echo "ratio threads=$t $shape cairn_ms=$c ort_ms=$o ratio=$(echo "$o $c" | awk '{printf "%.2f", $1/$2}')"
    done
done
