#!/bin/sh
# tests/fuzz/run.sh: builds every tests/fuzz/fuzz_*.c with clang's
# libFuzzer + ASan/UBSan against the library and CLI sources and runs each
# for FUZZ_SECONDS (default 60) from its seed corpus tests/fuzz/seeds/<name>/.
# FUZZ_TARGETS="fuzz_mcp fuzz_hook" runs only those. A crash, a leak or a
# sanitizer report leaves its input in build-fuzz/ (crash-*, leak-*) and
# fails the run; the other targets still run first.
#
# The sources are compiled once into build-fuzz/libcairn-fuzz.a (with
# -fsanitize=fuzzer-no-link, so they are instrumented for coverage) and
# each target links against it. Targets that need the test models find
# them under FUZZ_DATA, the absolute path of tests/data.
set -e
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=build-fuzz
command -v clang >/dev/null || { echo "fuzz: needs clang (apt-get install clang)" >&2; exit 1; }
mkdir -p "$OUT/obj"
PKG="sqlite3 libcjson libpcre2-8 libutf8proc openblas libzip libcurl libmicrohttpd zlib libpq"
COMMON="-std=c11 -D_GNU_SOURCE -g -O1 -fno-sanitize-recover=undefined -Iinclude -Isrc $(pkg-config --cflags $PKG)"
LIBS="$(pkg-config --libs $PKG) -lstemmer -lm -lpthread -ldl"
# The targets with the Makefile's warnings (WARN, less gcc's
# -Wno-format-truncation, which clang 14 does not know); `make test`
# builds them with gcc too (tests/fuzz/replay.c, t0513).
FWARN="-Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
    -Wmissing-prototypes -Wformat=2"

# The library and the CLI (its MCP server and hooks), without the CLI's main.
SRC=$(ls src/*.c src/*/*.c cli/*.c cli/*/*.c | grep -v '^cli/main\.c$')
objs=""
for s in $SRC; do
    o="$OUT/obj/$(echo "$s" | tr / _ | sed 's/\.c$/.o/')"
    if [ ! -f "$o" ] || [ "$s" -nt "$o" ] || [ -n "$(find src include cli -name '*.h' -newer "$o" | head -1)" ]; then
        clang $COMMON -fsanitize=fuzzer-no-link,address,undefined -c "$s" -o "$o"
    fi
    objs="$objs $o"
done
rm -f "$OUT/libcairn-fuzz.a"
ar rcs "$OUT/libcairn-fuzz.a" $objs

# Targets keep their temporary files (models, stores, hook state) in
# TMPDIR, in memory when it can be: a store's fsyncs on disk make the
# store-backed targets (mcp, hook) ten times slower.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    TMPDIR=/dev/shm/cairn-fuzz-$$
else
    TMPDIR="$PWD/$OUT/tmp"
fi
export TMPDIR
trap 'rm -rf "$TMPDIR"' EXIT
targets=${FUZZ_TARGETS:-$(ls tests/fuzz/fuzz_*.c | sed 's|.*/||; s|\.c$||')}
failed=""
for name in $targets; do
    rm -rf "$TMPDIR" && mkdir -p "$TMPDIR"
    if ! clang $COMMON $FWARN -fsanitize=fuzzer,address,undefined \
        -DFUZZ_DATA="\"$PWD/tests/data\"" \
        -o "$OUT/$name" "tests/fuzz/$name.c" "$OUT/libcairn-fuzz.a" $LIBS; then
        echo "fuzz: $name does not build" >&2
        failed="$failed $name"
        continue
    fi
    corpus="$OUT/corpus-$name"
    mkdir -p "$corpus"
    seeds="tests/fuzz/seeds/$name"
    [ -d "$seeds" ] || seeds=""
    echo "fuzzing $name for ${SECONDS_EACH}s"
    # The exit code is the fuzzer's, not tail's: a crash must fail the run.
    rc=0
    (cd "$OUT" && ./"$name" -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 "corpus-$name" ${seeds:+"../$seeds"} >"$name.log" 2>&1) || rc=$?
    tail -3 "$OUT/$name.log"
    if [ "$rc" -ne 0 ]; then
        echo "fuzz: $name FAILED (exit $rc); see $OUT/$name.log" >&2
        failed="$failed $name"
    fi
done
if [ -n "$failed" ]; then
    echo "fuzz: failed:$failed" >&2
    exit 1
fi
echo "fuzz: all targets ran clean"
