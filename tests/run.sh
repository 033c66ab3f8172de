#!/bin/sh
# tests/run.sh: runs every unit test program and every black-box test,
# adds up their "N passed, N failed[, N skipped]" lines and ends with the
# total "N passed, N failed, N skipped", after the list of what skipped and
# why (each test's "SKIP name: reason" lines; see tests/README.md).
#   BUILD=build       where the binaries are
#   VALGRIND=1        run the unit tests under valgrind
#   T=pattern         only tests whose name contains pattern
#   CI=true or CAIRN_CI=1: a test named in tests/must-run that skips fails
# A test that prints no result line, or one that checked nothing and
# skipped nothing, or a unit test that is not built, is a failure.
BUILD=${BUILD:-build}
case "$BUILD" in /*) ;; *) BUILD="$(cd "$(dirname "$0")/.." && pwd)/$BUILD" ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
export CAIRN_TEST_ROOT="$ROOT" CAIRN_BIN="$BUILD/cairn" TZ=UTC
unset CAIRN_DB CAIRN_REDACT
# Tests do not depend on a model a user installed: keyword-only unless a
# test asks for one (test_hybrid, t0210 set CAIRN_EMBED_MODEL themselves).
export CAIRN_EMBED_MODEL=none
passed=0 failed=0 skipped=0 broken=""
STRICT=""
[ "${CI:-}" = true ] || [ "${CAIRN_CI:-}" = 1 ] && STRICT=1
cd "$ROOT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/skips"

must_run() { grep -qx "$1" "$ROOT/tests/must-run" 2>/dev/null; }
fail() {   # name, what, [stderr file]
    echo "FAIL   $1: $2"
    [ -n "${3:-}" ] && sed 's/^/    /' "$3" | tail -30
    failed=$((failed + 1)); broken="$broken $1"
}

run_one() {   # name, command...
    name=$1; shift
    case "$name" in *"${T:-}"*) ;; *) return ;; esac
    if "$@" >"$tmp/out" 2>"$tmp/err"; then rc=0; else rc=$?; fi
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$tmp/out" | tail -1)
    if [ -z "$line" ]; then
        fail "$name" "exit $rc, no result line" "$tmp/err"; return
    fi
    p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
    s=0
    case "$line" in *" skipped"*) s=${line#*failed, }; s=${s%% skipped*} ;; esac
    # each "SKIP <what>: reason" line, listed under the test's own name
    grep -E '^SKIP' "$tmp/out" | sed -E "s/^SKIP[^:]*: ?/SKIP $name: /" > "$tmp/skip1"
    n=$(wc -l < "$tmp/skip1")
    [ "$n" -gt "$s" ] && s=$n
    [ "$s" -gt 0 ] && [ "$n" -eq 0 ] && echo "SKIP $name: (no reason given)" > "$tmp/skip1"
    cat "$tmp/skip1" >> "$tmp/skips"
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    if [ "$f" -ne 0 ] || [ "$rc" -ne 0 ]; then
        [ "$f" -eq 0 ] && failed=$((failed + 1))
        echo "FAIL   $name: $line (exit $rc)"; sed 's/^/    /' "$tmp/err" | tail -30
        broken="$broken $name"
    elif [ "$p" -eq 0 ] && [ "$s" -eq 0 ]; then
        fail "$name" "checked nothing and skipped nothing" "$tmp/err"
    elif [ "$s" -gt 0 ] && [ -n "$STRICT" ] && must_run "$name"; then
        fail "$name" "$line: skipped, but tests/must-run says it must run in CI"
        sed 's/^/    /' "$tmp/skip1"
    elif [ "$p" -eq 0 ]; then
        echo "SKIP   $name: $(sed -n '1s/^SKIP [^:]*: //p' "$tmp/skip1")"
    else
        echo "ok     $name: $line"
    fi
}

for src in "$ROOT"/tests/unit/test_*.c; do
    [ -f "$src" ] || continue
    t="$BUILD/tests/$(basename "$src" .c)"
    if [ ! -x "$t" ]; then
        case "$(basename "$t")" in *"${T:-}"*) fail "$(basename "$t")" "$t not built" ;; esac
    elif [ -n "${VALGRIND:-}" ]; then
        run_one "$(basename "$t")" valgrind -q --error-exitcode=99 --leak-check=full "$t"
    else
        run_one "$(basename "$t")" "$t"
    fi
done
for t in "$ROOT"/tests/t/t[0-9]*.sh; do
    [ -f "$t" ] || continue
    run_one "$(basename "$t" .sh)" sh "$t"
done
if [ -s "$tmp/skips" ]; then
    echo "skipped:"
    sed 's/^/  /' "$tmp/skips"
fi
[ -n "$broken" ] && echo "failing:$broken"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
