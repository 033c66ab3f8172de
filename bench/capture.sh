#!/bin/sh
# bench/capture.sh: the capture benchmarks (bench/bench_capture.c): the
# Claude Code Stop hook's wall time per turn on a 5 MB transcript against
# /bin/true, and `cairn import claude-code` speed on ~1 GB of generated
# transcripts against reading them. Data is generated in a temporary
# folder and removed.
#   BUILD=/tmp/b sh bench/capture.sh        CAPTURE_MB=1024 CAPTURE_TURNS=40
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
"$BUILD/bench/bench_capture" "$BUILD/cairn" "$W/work" --mb "${CAPTURE_MB:-1024}" \
    --turns "${CAPTURE_TURNS:-40}"
