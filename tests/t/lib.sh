# tests/t/lib.sh: helpers for black-box tests of the cairn binary (sourced).
# Each test prints "N passed, N failed, N skipped" at the end via t_done.
# What cannot run here is a SKIP with its reason (t_skip, t_skip_all),
# never a pass; a test binary that is not built is a failure (need_bin).
# See tests/README.md.
set -u
T_PASS=0 T_FAIL=0 T_SKIP=0
T_NAME=$(basename "$0" .sh)
CAIRN=${CAIRN_BIN:?CAIRN_BIN not set; run through tests/run.sh}
ROOT=${CAIRN_TEST_ROOT:?}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export CAIRN_DB="$TMP/memory.db" HOME="$TMP/home"
mkdir -p "$HOME"
# tests/mcp/mcp_client.py, for the tests that drive cairn mcp from python3
export PYTHONPATH="$ROOT/tests/mcp${PYTHONPATH:+:$PYTHONPATH}"

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
t_done() { echo "$T_PASS passed, $T_FAIL failed, $T_SKIP skipped"; [ "$T_FAIL" -eq 0 ]; }
# t_skip REASON: this part cannot run here; tests/run.sh lists the reason
t_skip() { T_SKIP=$((T_SKIP + 1)); echo "SKIP $T_NAME: $*"; }
# t_skip_all REASON: nothing (more) of this test can run: skip, end it
t_skip_all() { t_skip "$@"; t_done; exit; }
# t_sanitized: $CAIRN is a sanitizer build (ASan maps terabytes of shadow
# and keeps freed memory in a quarantine, 256 MB by default: address space
# limits and peak RSS figures mean something else there)
t_sanitized() { grep -q __asan_init "$CAIRN"; }
# need_bin PATH: a test program this test runs; not built is a failure
need_bin() { [ -x "$1" ] && return 0; bad "$1 not built (make all and the test programs first)"; t_done; exit 1; }

# npm_unpack DIR PKG@VERSION TARBALL SHA256: `npm pack` PKG into DIR and
# unpack it as DIR/package if its sha256 is SHA256 (nothing if already
# there). Fails quietly with no npm, offline, or on a wrong checksum.
npm_unpack() {
    [ -d "$1/package" ] && return 0
    command -v npm >/dev/null 2>&1 && mkdir -p "$1" || return 1
    (cd "$1" && timeout 300 npm pack --silent "$2" >/dev/null 2>&1) || true
    if [ -f "$1/$3" ] && [ "$(sha256sum "$1/$3" | cut -d' ' -f1)" = "$4" ]; then
        tar xzf "$1/$3" -C "$1" && rm -f "$1/$3"
    else
        rm -f "$1/$3"
        return 1
    fi
}
