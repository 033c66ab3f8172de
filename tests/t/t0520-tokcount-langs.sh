#!/bin/sh
# t0520-tokcount-langs: the reference counts in tests/data/tokcount/langs.txt
# (made-up texts in French, German, Spanish, Portuguese, Polish, Russian,
# Japanese and Korean, which test_tokcount checks the budget counter
# against) are what the real tokenizers say: the legacy Claude tokenizer
# and tiktoken's cl100k and o200k, npm packages that
# tests/tools/tokcount-compare.sh installs, pinned, into a cache folder.
# Without npm or the registry the test is a SKIP with its reason.
#   CAIRN_TEST_CACHE  cache folder (default ~/.cache/cairn-test)
REAL_HOME=${HOME:-/tmp}
. "$(dirname "$0")/lib.sh"
command -v node >/dev/null 2>&1 || t_skip_all "node is not installed"
out=$(cd "$ROOT" && HOME=$REAL_HOME BUILD=$(dirname "$CAIRN") \
      sh tests/tools/tokcount-compare.sh --refs tests/data/tokcount/langs.txt 2>&1)
rc=$?
echo "$out" | tail -12
case $out in
    *"refs: "*) ;;
    *) t_skip_all "the tokenizers could not be installed or run (no npm, or offline)" ;;
esac
eq "recorded counts are the tokenizers' (rc)" "$rc" 0
contains "all texts recounted" "$out" "refs: 9 texts, 0 differ"
# and the check can fail: a wrong recorded count is found
sed '0,/^fr [0-9]* /s//fr 1 /' "$ROOT/tests/data/tokcount/langs.txt" > "$TMP/langs.txt"
out=$(cd "$ROOT" && HOME=$REAL_HOME BUILD=$(dirname "$CAIRN") \
      sh tests/tools/tokcount-compare.sh --refs "$TMP/langs.txt" 2>&1)
contains "a wrong count is found" "$out" "refs: 9 texts, 1 differ"
t_done
