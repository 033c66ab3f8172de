#!/bin/sh
# t0214-hf-tokenizers.sh: cairn's tokenizers against Hugging Face's own.
#
# The reference is HF's Rust tokenizers library as its official Node
# bindings (npm `tokenizers`, pinned, sha256 checked), fetched with
# `npm pack` into a cache folder. tests/tools/hf_tokenize.js encodes the
# texts of tests/data/embed/tok-texts.json plus a long text and random
# printable Unicode with every tokenizer.json cairn has a fixture for (and
# variants of each: other normalizer and pre-tokenizer options,
# truncation); test_embed_tokenizer must give the same ids. It also checks
# the ids of the other tokenizer goldens (tiny-bert's, sentencepiece's in
# t0213) against HF, and that src/embed/hf_unicode.h is what HF's
# character classes give today. Without npm, offline, or without node, the
# test is a SKIP; without python3-sentencepiece the two Unigram fixtures
# are left out (one SKIP).
#   CAIRN_HF_TOKENIZERS_DIR  use this unpacked package instead of fetching
#   CAIRN_TEST_CACHE         cache folder (default ~/.cache/cairn-test)
CACHE=${CAIRN_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-test}
. "$(dirname "$0")/lib.sh"
PKG=tokenizers@0.23.2
TGZ=tokenizers-0.23.2.tgz
SHA=d5196036d6e7ef5934659618ef8f911080bf95f6ba6a2e42c243196a0ea50bc4
BIN=$(dirname "$CAIRN")/tests/test_embed_tokenizer

dir=${CAIRN_HF_TOKENIZERS_DIR:-}
if [ -z "$dir" ]; then
    dir="$CACHE/hf-tokenizers/package"
    npm_unpack "$CACHE/hf-tokenizers" "$PKG" "$TGZ" "$SHA" || true
fi
need_bin "$BIN"
if [ ! -f "$dir/package.json" ] || ! command -v node >/dev/null 2>&1 ||
   ! node -e "require('$dir')" 2>/dev/null; then
    t_skip_all "HF tokenizers ($PKG) not available: no npm or node, or offline"
fi

# The character classes cairn's BERT normaliser takes from HF.
node "$ROOT/tests/tools/hf_unicode.js" "$dir" >"$TMP/hf_unicode.h"
check "hf_unicode.h is HF's classes" cmp -s "$TMP/hf_unicode.h" "$ROOT/src/embed/hf_unicode.h"

set -- tiny-bert="$ROOT/tests/data/embed/tiny-bert/tokenizer.json" \
       --bert "$ROOT/tests/data/embed/tiny-bert/golden.json"
n_fix=1
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sentencepiece' 2>/dev/null; then
        if "$p" "$ROOT/tests/tools/make_spm_unigram.py" "$TMP/spm"; then
            set -- "$@" nmt_nfkc="$TMP/spm/nmt_nfkc.tokenizer.json" \
                   nfkc_cf="$TMP/spm/nfkc_cf.tokenizer.json" --spm "$TMP/spm/golden.json"
            n_fix=3
        fi
        break
    fi
done
[ "$n_fix" = 3 ] || t_skip "python3-sentencepiece missing, or make_spm_unigram.py failed: Unigram fixtures left out"

ref=$(node "$ROOT/tests/tools/hf_tokenize.js" "$dir" "$ROOT/tests/data/embed/tok-texts.json" \
      "$TMP/hf" "$@" 2>&1)
check "HF reference made" [ -f "$TMP/hf/golden.json" ]
echo "$ref"
contains "tiny-bert golden is HF's" "$ref" "tiny-bert golden vs HF: tiny-bert 17/17 equal"
if [ "$n_fix" = 3 ]; then
    contains "spm golden is HF's (nmt_nfkc)" "$ref" "spm golden vs HF: nmt_nfkc 23/23 equal"
    contains "spm golden is HF's (nfkc_cf)" "$ref" "spm golden vs HF: nfkc_cf 23/23 equal"
fi

out=$(cd "$ROOT" && CAIRN_HF_DIR="$TMP/hf" "$BIN" 2>&1)
printf '%s\n' "$out" | grep -E 'mismatches|hf golden'
# each fixture comes with variants: tiny-bert 6 tokenizers, each Unigram 10
n=$(printf '%s\n' "$out" | grep -c ' cases, [0-9]* mismatches$')
eq "tokenizers compared" "$n" $((n_fix == 3 ? 6 + 2 * 10 : 6))
n=$(printf '%s\n' "$out" | grep -c ' cases, [1-9][0-9]* mismatches$')
eq "tokenizers differing from HF" "$n" 0
contains "no failures" "$out" " 0 failed"
t_done
