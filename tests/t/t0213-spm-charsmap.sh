#!/bin/sh
# t0213-spm-charsmap.sh: the Unigram tokenizer with SentencePiece's
# precompiled charsmap against sentencepiece itself.
#
# tests/tools/make_spm_unigram.py trains two tiny models (nmt_nfkc, as
# XLM-R / multilingual-e5 use, and nfkc_cf with byte fallback), writes
# their tokenizer.json as Hugging Face's converter lays out XLM-R's, and
# golden ids from sentencepiece for fullwidth, ligatures, circled digits,
# half-width kana, Hangul jamo, combining accents, odd spaces, zero-width
# characters, emoji sequences, CJK, code, controls, invalid UTF-8 and a long
# text. Where sentencepiece and HF differ the golden holds HF's ids; the
# script lists those cases and why, and t0214-hf-tokenizers.sh checks all
# of them against HF itself. test_embed_tokenizer compares every
# case exactly. Without python3-sentencepiece (scripts/deps.sh installs
# it) the test is a SKIP.
. "$(dirname "$0")/lib.sh"
BIN=$(dirname "$CAIRN")/tests/test_embed_tokenizer

py=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import sentencepiece' 2>/dev/null; then
        py=$p
        break
    fi
done
need_bin "$BIN"
[ -n "$py" ] || t_skip_all "python3-sentencepiece missing (scripts/deps.sh installs it)"
check "models and goldens made" "$py" "$ROOT/tests/tools/make_spm_unigram.py" "$TMP/spm"
out=$(cd "$ROOT" && CAIRN_SPM_DIR="$TMP/spm" "$BIN" 2>&1)
contains "every golden case equal" "$out" "spm golden: 46 cases, ids equal 46"
contains "no failures" "$out" " 0 failed"
# the HF-only cases are really there (and so really tested)
n=$(grep -c '"hf": "grapheme"' "$TMP/spm/golden.json")
eq "grapheme cases" "$n" 4
t_done
