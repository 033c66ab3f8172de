# tests/t/lib.sh: helpers for black-box tests of the cairn binary (sourced).
# Each test prints "N passed, N failed" at the end via t_done.
set -u
T_PASS=0 T_FAIL=0
CAIRN=${CAIRN_BIN:?CAIRN_BIN not set; run through tests/run.sh}
ROOT=${CAIRN_TEST_ROOT:?}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CAIRN_DB="$TMP/memory.db" HOME="$TMP/home"
mkdir -p "$HOME"

ok()   { T_PASS=$((T_PASS + 1)); }
bad()  { T_FAIL=$((T_FAIL + 1)); echo "FAIL: $*" >&2; }
# check DESCRIPTION COMMAND...: passes if the command succeeds
check() { d=$1; shift; if "$@"; then ok; else bad "$d"; fi; }
# check_fails DESCRIPTION COMMAND...: passes if the command fails
check_fails() { d=$1; shift; if "$@"; then bad "$d (should have failed)"; else ok; fi; }
# contains DESCRIPTION HAYSTACK NEEDLE
contains() { case "$2" in *"$3"*) ok ;; *) bad "$1: '$3' not in output: $(printf %s "$2" | head -c 400)" ;; esac; }
lacks()    { case "$2" in *"$3"*) bad "$1: '$3' should not be in output" ;; *) ok ;; esac; }
eq() { if [ "$2" = "$3" ]; then ok; else bad "$1: '$2' != '$3'"; fi; }
t_done() { echo "$T_PASS passed, $T_FAIL failed"; [ "$T_FAIL" -eq 0 ]; }
