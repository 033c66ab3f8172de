#!/bin/sh
# tests/tools/tokcount-compare.sh: runs tokcount-compare.js (docs/TOKENS.md,
# "Measured ratios") with the reference tokenizers installed, pinned, into
# a cache folder by npm (never into the repo):
#   @anthropic-ai/tokenizer 0.0.4  the legacy Claude tokenizer
#   tiktoken 1.0.22                cl100k_base and o200k_base (WASM)
#
#   sh tests/tools/tokcount-compare.sh [tokcount-compare.js options]
#   e.g. --kinds fr,de,ja --cache /tmp/tok.json, --recall
# Run from the repository root after `make all build/tests/test_tokcount`.
# The translated manual pages it reads come from scripts/deps.sh.
#   CAIRN_TEST_CACHE  cache folder (default ~/.cache/cairn-test)
#   BUILD             build folder (default build)
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CAIRN_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-test}
DIR=$CACHE/tokcount
BUILD=${BUILD:-$ROOT/build}
CLAUDE=@anthropic-ai/tokenizer@0.0.4
TIKTOKEN=tiktoken@1.0.22

installed() {
    grep -q '"version": "0.0.4"' "$DIR/node_modules/@anthropic-ai/tokenizer/package.json" 2>/dev/null &&
    grep -q '"version": "1.0.22"' "$DIR/node_modules/tiktoken/package.json" 2>/dev/null
}
if ! installed; then
    command -v npm >/dev/null 2>&1 || { echo "tokcount-compare: npm is not installed (scripts/deps.sh)" >&2; exit 2; }
    mkdir -p "$DIR"
    [ -f "$DIR/package.json" ] || echo '{"name":"cairn-tokcount","private":true}' > "$DIR/package.json"
    (cd "$DIR" && timeout 600 npm install --no-audit --no-fund --fetch-retries=1 "$CLAUDE" "$TIKTOKEN") >&2
    installed || { echo "tokcount-compare: npm did not install $CLAUDE $TIKTOKEN" >&2; exit 2; }
fi
for b in "$BUILD/tests/test_tokcount" "$BUILD/cairn"; do
    [ -x "$b" ] || { echo "tokcount-compare: $b not built (make all $BUILD/tests/test_tokcount)" >&2; exit 2; }
done
NODE_PATH=$DIR/node_modules exec node "$ROOT/tests/tools/tokcount-compare.js" \
    --bin "$BUILD/tests/test_tokcount" --cairn "$BUILD/cairn" --data "$ROOT/../shared/data" "$@"
