#!/bin/sh
# tests/fuzz/run.sh: builds every tests/fuzz/fuzz_*.c with clang's
# libFuzzer + ASan/UBSan against the library sources and runs each for
# FUZZ_SECONDS (default 60) from its seed corpus tests/fuzz/seeds/<name>/.
# A crash leaves its input in build-fuzz/ and fails the run.
set -e
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=build-fuzz
mkdir -p "$OUT"
PKG="sqlite3 libcjson libpcre2-8 libutf8proc openblas libzip libcurl zlib"
CFLAGS="-std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc $(pkg-config --cflags $PKG)"
LIBS="$(pkg-config --libs $PKG) -lstemmer -lm -lpthread"
SRC=$(ls src/*.c src/*/*.c)
for f in tests/fuzz/fuzz_*.c; do
    name=$(basename "$f" .c)
    clang $CFLAGS -o "$OUT/$name" "$f" $SRC $LIBS
    corpus="$OUT/corpus-$name"
    mkdir -p "$corpus"
    seeds="tests/fuzz/seeds/$name"
    [ -d "$seeds" ] || seeds=""
    echo "fuzzing $name for ${SECONDS_EACH}s"
    (cd "$OUT" && ./"$name" -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 \
        "corpus-$name" ${seeds:+"../$seeds"} 2>&1 | tail -3)
done
