#!/bin/sh
# t0501-deps: every program and Python module the tests and scripts use
# comes from a Debian package scripts/deps.sh installs (or the base system
# every Debian has): tests/tools/deps_check.py maps each to its package
# with dpkg. Looked up on the system PATH and with /usr/bin/python3, as a
# fresh machine has them: a python3 from pyenv or a tool in /usr/local
# hides a missing package here (python3-protobuf once: t0213 failed on a
# fresh Debian 12). scripts/clean-env.sh runs the whole suite where only
# deps.sh's packages are.
. "$(dirname "$0")/lib.sh"
command -v dpkg >/dev/null 2>&1 || t_skip_all "no dpkg: not a Debian system"
[ -x /usr/bin/python3 ] || { bad "/usr/bin/python3 missing: deps.sh installs python3"; t_done; exit 1; }
out=$(cd "$ROOT" && PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/bin/python3 tests/tools/deps_check.py "$ROOT" 2>&1)
printf '%s\n' "$out" | grep '^FAIL' >&2
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)
p=${line%% passed*}; f=${line#*passed, }; f=${f%% failed*}
check "deps_check ran" test -n "$line"
T_PASS=$((T_PASS + ${p:-0})); T_FAIL=$((T_FAIL + ${f:-0}))
# the check itself can fail: without python3-protobuf in the list it must
# name the module that needs it
mkdir -p "$TMP/repo/scripts"
cp -r "$ROOT/tests" "$TMP/repo/"
sed 's/ python3-protobuf//' "$ROOT/scripts/deps.sh" > "$TMP/repo/scripts/deps.sh"
out=$(cd "$TMP/repo" && PATH=/usr/sbin:/usr/bin:/sbin:/bin /usr/bin/python3 tests/tools/deps_check.py "$TMP/repo" 2>&1)
contains "a package left out of deps.sh is found" "$out" "loads google.protobuf"
t_done
