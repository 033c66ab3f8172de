#!/bin/sh
# t0513-fuzz-seeds: every fuzz target (tests/fuzz/fuzz_*.c) is built by
# `make test` with the project's compiler and warnings and a plain main
# (tests/fuzz/replay.c; libFuzzer's own build is `make fuzz`, clang only),
# and here replays its seed corpus, tests/fuzz/seeds/<name>/ (a target
# without seeds gets one empty input): the target's own checks (abort)
# must hold on every seed. A target not built is a failure, so a
# target that stops compiling cannot go unseen.
. "$(dirname "$0")/lib.sh"
FUZZ=$(dirname "$CAIRN")/fuzz
n=0
for src in "$ROOT"/tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    bin="$FUZZ/$name"
    need_bin "$bin"
    seeds="$ROOT/tests/fuzz/seeds/$name"
    [ -d "$seeds" ] || seeds=""
    mkdir -p "$TMP/$name"
    # the targets keep their stores and files under TMPDIR
    if out=$(cd "$TMP/$name" && TMPDIR="$TMP/$name" "$bin" ${seeds:+"$seeds"} 2>"$TMP/$name.err"); then
        contains "$name replays" "$out" "replayed "
    else
        bad "$name on its seeds: $(tail -5 "$TMP/$name.err")"
    fi
    n=$((n + 1))
done
# the glob found the targets (a broken path would check nothing)
check "more than 30 targets" [ "$n" -gt 30 ]
t_done
