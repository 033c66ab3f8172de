#!/bin/sh
# bench/bench_rss.sh: peak RSS of cairn with multilingual-e5-small's 470 MB
# of weights mmapped (issue 7), against baselines measured in the same run.
#
#   make BUILD=/tmp/b all /tmp/b/bench/bench_rss && BUILD=/tmp/b sh bench/bench_rss.sh
#   BENCH_ONLY=rss make bench
#
# The real weights cannot be downloaded here, so bench_rss writes a folder of
# the exact published shape (every tensor, 470,641,600 bytes of random F32,
# a 250,002-piece Unigram tokenizer) into a temporary folder, then, ROUNDS
# times in turn, measures the peak RSS (wait4's ru_maxrss) of:
#   floor     cairn --version: the process with no model
#   query     cairn embed --model DIR --query TEXT (a 20-token query)
#   backfill  cairn embed --backfill on a store of MESSAGES synthetic messages
#             (bench/gen_data.py), a fresh copy each round
# and, in bench_rss's own process, the same query and the same messages in one
# batch, reporting how much of the mapping is resident: the word-embedding
# table (366 MiB, looked up by token id) apart from the encoder's weights
# (read whole on every pass). The query runs with the file hot in the page
# cache and cold (dropped first); the baseline is the same query in the same
# process after reading the file into malloc'ed memory, as a loader that copies
# the weights would. Prints `bench rss ...` lines (medians) and a summary.
#
# Environment: BUILD (default build), ROUNDS (3), MESSAGES (64),
# BENCH_KEEP=1 keeps the temporary folder. Needs ~0.5 GB free in $TMPDIR.
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
CAIRN=$BUILD/cairn
RSS=$BUILD/bench/bench_rss
ROUNDS=${ROUNDS:-3}
MESSAGES=${MESSAGES:-64}
QUERY="which climbing gym in Lisbon did I pick for Thursday evenings"

for b in "$CAIRN" "$RSS"; do
    [ -x "$b" ] || { echo "bench_rss: $b not built (make all $RSS)" >&2; exit 2; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/cairn-rss.XXXXXX")
cleanup() { [ "${BENCH_KEEP:-0}" = 1 ] && echo "# bench_rss: kept $TMP" || rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
M=$TMP/e5
W=$M/model.safetensors

bytes=$("$RSS" gen "$M" | sed -n 's/^model_bytes=//p')
printf '%s\n' "$QUERY" > "$TMP/query.txt"
python3 "$ROOT/bench/gen_data.py" ingest "$TMP/msgs.jsonl" --sessions 2 \
    --messages "$MESSAGES" >/dev/null
# the same messages, one a line, for the in-process batch
python3 -c 'import json, sys
for line in open(sys.argv[1]):
    for m in json.loads(line)["messages"]:
        print(" ".join(m["content"].split()))' "$TMP/msgs.jsonl" > "$TMP/passages.txt"
CAIRN_EMBED_MODEL=none "$CAIRN" --db "$TMP/store.db" add -q "$TMP/msgs.jsonl"

# one measurement: NAME FIELDS... appended to $TMP/NAME as key=value lines
record() {
    name=$1; shift
    echo "$*" >> "$TMP/$name.log"
}
inproc() {  # name cache bench_rss-embed-args...
    name=$1 cache=$2; shift 2
    "$RSS" cache "$cache" "$W" >/dev/null
    record "$name" "$("$RSS" embed "$@")"
}

r=0
while [ "$r" -lt "$ROUNDS" ]; do
    r=$((r + 1))
    "$RSS" cache hot "$W" >/dev/null
    record floor "maxrss_kb=$("$RSS" maxrss "$CAIRN" --version)"
    record query "maxrss_kb=$("$RSS" maxrss "$CAIRN" embed --model "$M" --query "$QUERY")"
    cp "$TMP/store.db" "$TMP/round.db"
    record backfill "maxrss_kb=$(CAIRN_EMBED_MODEL=$M "$RSS" maxrss "$CAIRN" --db "$TMP/round.db" \
        embed --backfill --quiet)"
    rm -f "$TMP/round.db"*
    inproc query_hot hot "$M" "$TMP/query.txt"
    inproc query_cold cold "$M" "$TMP/query.txt"
    inproc query_read hot --read "$M" "$TMP/query.txt"
    inproc batch_hot hot --passages "$M" "$TMP/passages.txt"
    inproc batch_cold cold --passages "$M" "$TMP/passages.txt"
done

# median of key over a case's rounds
med() {
    sed -n "s/.*\<$2=\([0-9]*\).*/\1/p" "$TMP/$1.log" | sort -n |
        awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

echo "# bench rss: model.safetensors $bytes bytes, $ROUNDS rounds, $MESSAGES messages, medians"
for c in floor query backfill; do
    echo "bench rss case=$c maxrss_mib=$(mib "$(med $c maxrss_kb)")"
done
for c in query_hot query_cold query_read batch_hot batch_cold; do
    echo "bench rss case=$c maxrss_mib=$(mib "$(med $c maxrss_kb)")" \
         "words_resident_kib=$(med $c words_resident_kb) rest_resident_mib=$(mib "$(med $c rest_resident_kb)")" \
         "tokens=$(med $c tokens) distinct_rows=$(med $c distinct_rows) rows_kib=$(med $c rows_kb)"
done
q=$(med query maxrss_kb) f=$(med floor maxrss_kb) rd=$(med query_read maxrss_kb)
qh=$(med query_hot maxrss_kb)
echo "# cairn embed query: $(mib "$q") MiB peak (cairn --version: $(mib "$f") MiB;" \
     "the weights file: $(mib $((bytes / 1024))) MiB)"
echo "# same process, weights read into memory first: $(mib "$rd") MiB against $(mib "$qh") MiB mmapped"
echo "# word table resident for a query: $(med query_hot words_resident_kb) KiB hot," \
     "$(med query_cold words_resident_kb) KiB cold, for $(med query_hot distinct_rows) rows" \
     "($(med query_hot rows_kb) KiB of row data) of a 366 MiB table"
echo "# batch of $MESSAGES messages: $(med batch_hot distinct_rows) rows," \
     "$(med batch_hot words_resident_kb) KiB of the table resident hot," \
     "$(med batch_cold words_resident_kb) KiB cold; cairn embed --backfill $(mib "$(med backfill maxrss_kb)") MiB peak"
