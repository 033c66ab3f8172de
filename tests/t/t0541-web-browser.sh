#!/bin/sh
# t0541-web-browser: `cairn web` as a person uses it, in Debian's Chromium
# (/usr/bin/chromium, $CHROMIUM) driven by playwright-core from npm
# (pinned, installed once into $CAIRN_TEST_WEB_DIR, default
# ~/.cache/cairn-test-web): every page shows its content, keys and the
# Chinese UI work, a 400-turn session pages and a 1 MB message is cut then
# shown whole, forget removes a session from every page and from recall, a
# stored <script> never runs, a huge query is refused with a message
# (tests/web/browser.js). Screenshots are kept in
# $CAIRN_TEST_OUT/t0541-web-browser (default build/test-out/...).
# Without chromium, node or the npm registry it is a SKIP with the reason.
REAL_HOME=${HOME:-/tmp}
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/web/lib.sh"

PKG=playwright-core@1.49.1
PW_DIR=${CAIRN_TEST_WEB_DIR:-$REAL_HOME/.cache/cairn-test-web}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
OUT=${CAIRN_TEST_OUT:-$ROOT/build/test-out}/t0541-web-browser
export PW_DIR CHROMIUM

[ -x "$CHROMIUM" ] || t_skip_all "no $CHROMIUM (apt-get install chromium; scripts/deps.sh)"
command -v node >/dev/null 2>&1 || t_skip_all "node is not installed"
installed() {
    grep -q '"version": "1.49.1"' "$PW_DIR/node_modules/playwright-core/package.json" 2>/dev/null
}
if ! installed; then
    command -v npm >/dev/null 2>&1 || t_skip_all "npm is not installed"
    mkdir -p "$PW_DIR" || t_skip_all "cannot create $PW_DIR"
    [ -f "$PW_DIR/package.json" ] || echo '{"name":"cairn-test-web","private":true}' > "$PW_DIR/package.json"
    # npm's own cache lives in the real home, not the test's throw-away one.
    (cd "$PW_DIR" && HOME=$REAL_HOME timeout 300 npm install --no-audit --no-fund --fetch-retries=1 \
        "$PKG") > "$TMP/npm.log" 2>&1 || t_skip_all "npm install $PKG failed (offline?): $(tail -1 "$TMP/npm.log")"
    installed || t_skip_all "npm did not install $PKG"
fi

web_fixture
web_start a
pid=$web_pid url=$web_url
[ -n "$url" ] || { bad "cairn web printed no address: $(cat "$TMP/a.err")"; t_done; exit 1; }

rm -rf "$OUT" && mkdir -p "$OUT"
HOME="$TMP/home" timeout 300 node "$ROOT/tests/web/browser.js" "$url" "$OUT" > "$TMP/browser.out" 2>&1
web_counts "$TMP/browser.out"
n=$(ls "$OUT"/*.png 2>/dev/null | wc -l)
check "screenshots kept in $OUT ($n)" test "$n" -ge 12
kill $pid 2>/dev/null
wait $pid 2>/dev/null
t_done
