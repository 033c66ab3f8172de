#!/bin/sh
# t0212-blas-fallback.sh: OpenBLAS is loaded at run time, and without it
# (CAIRN_BLAS=none, or the library missing) the encoder runs on scalar
# loops: `cairn embed` must print the same vector both ways, for the tiny
# BERT in the repository and, when t0210 has cached it, for USE-lite.
# Also: cairn is not linked against libcurl, OpenBLAS or libzip (they are
# dlopen'ed on first use, so that hooks start fast), and stemming works
# however libstemmer is linked (the Makefile's CLI_STATIC).
CACHE=${CAIRN_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-test}
. "$(dirname "$0")/lib.sh"

# max |a_i - b_i| over two JSON arrays of numbers; "len" if lengths differ.
maxdiff() {
    printf '%s\n%s\n' "$1" "$2" | tr -d '[]' | awk -F, '
        NR == 1 { n = NF; for (i = 1; i <= NF; i++) a[i] = $i }
        NR == 2 { if (NF != n || n < 2) { print "len"; exit }
                  m = 0; for (i = 1; i <= NF; i++) { d = a[i] - $i; if (d < 0) d = -d; if (d > m) m = d }
                  print (m < 1e-5 ? "same" : "diff " m) }'
}

same_both_ways() {   # description, model dir
    v1=$("$CAIRN" embed --model "$2" "The cat rested on the carpet, 42 times." 2>"$TMP/e1")
    v2=$(CAIRN_BLAS=none "$CAIRN" embed --model "$2" "The cat rested on the carpet, 42 times." 2>"$TMP/e2")
    check "$1: embed with OpenBLAS" [ -n "$v1" ]
    check "$1: embed on the scalar fallback" [ -n "$v2" ]
    eq "$1: same vector both ways" "$(maxdiff "$v1" "$v2")" same
}

same_both_ways tiny-bert "$ROOT/tests/data/embed/tiny-bert"
use="$CACHE/use-lite-en/package/dist"
if [ -f "$use/model.json" ]; then
    same_both_ways use-lite "$use"
else
    t_skip "USE-lite not cached (t0210 fetches it): only tiny-bert compared"
fi

if command -v ldd >/dev/null 2>&1; then
    libs=$(ldd "$CAIRN" 2>&1)
    lacks "cairn not linked to libcurl" "$libs" "libcurl"
    lacks "cairn not linked to OpenBLAS" "$libs" "libopenblas"
    lacks "cairn not linked to libzip" "$libs" "libzip"
    lacks "cairn not linked to zlib (a download unpacks by dlopen)" "$libs" "libz.so"
    lacks "cairn not linked to libpcre2-8 (masking loads it by dlopen)" "$libs" "libpcre2-8"
    # stemming still works from the archive: "moves" finds "moving"
    db="$TMP/stem.db"
    CAIRN_EMBED_MODEL=none "$CAIRN" --db "$db" add -q "$ROOT/examples/sample-history.jsonl"
    contains "a stemmed word recalls its other forms" \
        "$(CAIRN_EMBED_MODEL=none "$CAIRN" --db "$db" recall moves --budget 100 2>&1)" \
        "moving to Lisbon"
else
    t_skip "no ldd: the binary's links not checked"
fi
t_done
