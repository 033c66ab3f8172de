#!/bin/sh
# tests/run.sh: runs every unit test program and every black-box test,
# adds up their "N passed, N failed" lines and ends with the total.
#   BUILD=build       where the binaries are
#   VALGRIND=1        run the unit tests under valgrind
#   T=pattern         only tests whose name contains pattern
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$(cd "$(dirname "$0")/.." && pwd)/$BUILD" ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CAIRN_TEST_ROOT="$ROOT" CAIRN_BIN="$BUILD/cairn" TZ=UTC
unset CAIRN_DB CAIRN_REDACT
# Tests do not depend on a model a user installed: keyword-only unless a
# test asks for one (test_hybrid, t0210 set CAIRN_EMBED_MODEL themselves).
export CAIRN_EMBED_MODEL=none
passed=0 failed=0 broken=""
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

run_one() {   # name, command...
    name=$1; shift
    case "$name" in *"${T:-}"*) ;; *) return ;; esac
    if "$@" >"$tmp/out" 2>"$tmp/err"; then rc=0; else rc=$?; fi
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -1)
    if [ -z "$line" ]; then
        echo "BROKEN $name (exit $rc, no result line)"; sed 's/^/    /' "$tmp/err" | tail -20
        failed=$((failed + 1)); broken="$broken $name"; return
    fi
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
    passed=$((passed + p)); failed=$((failed + f))
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
        echo "FAIL   $name: $line (exit $rc)"; sed 's/^/    /' "$tmp/err" | tail -30
        [ "$f" -eq 0 ] && failed=$((failed + 1))
        broken="$broken $name"
    else
        echo "ok     $name: $line"
    fi
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    if [ -n "${VALGRIND:-}" ]; then
        run_one "$(basename "$t")" valgrind -q --error-exitcode=99 --leak-check=full "$t"
    else
        run_one "$(basename "$t")" "$t"
    fi
done
for t in "$ROOT"/tests/t/t[0-9]*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t" .sh)" sh "$t"
done
[ -n "$broken" ] && echo "failing:$broken"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
