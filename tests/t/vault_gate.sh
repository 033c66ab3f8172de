# tests/t/vault_gate.sh: the opening and closing the vault gate tests
# (t0559, t0561, t0564, t0565, t0566) share, sourced after lib.sh: keyword-only
# recall, an empty $TMP/vault, and
#   vault_pages SEED   runs the Python on its standard input (a
#       here-document) with root (the vault folder), rng
#       (random.Random(SEED)), vault_words and its EVERYDAY (as everyday),
#       PAD (as pad) and filler_pages already there
#   vault_eval         puts the queries on its standard input (`cairn eval
#       vault` JSONL) to the hook's gate over $TMP/vault (a check); then
#       line ID is the cairn line of query ID
# (no here-document opener in these comments: tests/tools/deps_check.py
# would read the rest of the file as one)
export CAIRN_EMBED_MODEL=none
mkdir "$TMP/vault"

vault_pages() {
    { printf '%s\n' "import random, sys" \
        "sys.path.insert(0, sys.argv[2])" \
        "import vault_words" \
        "from vault_words import EVERYDAY as everyday, PAD as pad, filler_pages" \
        "root = sys.argv[1]" \
        "rng = random.Random($1)"
      cat; } > "$TMP/pages.py"
    python3 "$TMP/pages.py" "$TMP/vault" "$(dirname "$0")"
}

vault_eval() {
    cat > "$TMP/q.jsonl"
    check "eval vault" "$CAIRN" eval vault "$TMP/vault" "$TMP/q.jsonl" --out "$TMP/run.jsonl"
}

line() { grep "\"id\":\"$1\",\"method\":\"cairn\"" "$TMP/run.jsonl"; }
