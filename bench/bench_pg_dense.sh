#!/bin/sh
# bench/bench_pg_dense.sh: hybrid recall on a server store, the exact scan
# (CAIRN_PG_DENSE=exact: every vector of the model read and scanned in the
# client) against pgvector's HNSW index (CAIRN_PG_DENSE=index), and both
# against SQLite, in the same run. One store: every folder of a `cairn eval
# sessions` set (DATA_DIR, e.g. ../shared/data/devmem-dev) and PAD synthetic
# messages (bench/gen_data.py) so the index holds more vectors than it walks
# per question; embedded with the model `cairn add` ships (use-lite-en
# unless CAIRN_EMBED_MODEL says), pushed to a private PostgreSQL 15
# (tests/tools/pg.sh). Every question of the set is asked of the three,
# one `cairn recall --json --budget 4000` process each, alternated. Prints
#   bench pg_dense vectors=V questions=Q index_same_as_exact=S exact_same_as_sqlite=E
#   bench pg_dense_ms sqlite_p50=.. exact_p50=.. index_p50=.. (and p95)
#   sh bench/bench_pg_dense.sh CAIRN DATA_DIR PAD
# Skips (says why) where no PostgreSQL 15 or no pgvector is installed.
set -u
CAIRN=$1 DATA=$2 PAD=$3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/tools/pg.sh"
pg_bench_start pg_dense
if [ ! -f /usr/share/postgresql/15/extension/vector.control ]; then
    echo "# pg_dense: skipped: pgvector not installed"
    exit 0
fi
export TZ=UTC CAIRN_EMBED_MODEL="${CAIRN_EMBED_MODEL:-use-lite-en}"
unset CAIRN_DB CAIRN_PG_DENSE
pg_login_roles alice || exit 1
ALICE=$(pg_url alice alice-pw)
A="$TMP/a.db"

ms() { echo $(( $(date +%s%N) / 1000000 )); }
pct() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print a[i] }'; }

cat "$DATA"/*/sessions.jsonl > "$TMP/in.jsonl"
python3 "$ROOT/bench/gen_data.py" ingest "$TMP/pad.jsonl" --sessions $((PAD / 20)) --messages "$PAD" \
    --seed 11 >/dev/null 2>&1 || exit 1
t0=$(ms)
"$CAIRN" --db "$A" add -q "$TMP/in.jsonl" && "$CAIRN" --db "$A" add -q "$TMP/pad.jsonl" || exit 1
t1=$(ms)
"$CAIRN" --db "$A" sync --push -q --batch 2000 --server "$ALICE" || exit 1
t2=$(ms)
pg_sql cairn_admin "$PG_ADMIN_PW" "VACUUM ANALYZE" >/dev/null
V=$(sqlite3 "$A" "SELECT count(*) FROM vectors")
echo "# pg_dense: $V vectors: add $((t1 - t0)) ms, push $((t2 - t1)) ms"
cat "$DATA"/*/questions.jsonl | python3 -c '
import json, sys
for line in sys.stdin:
    print(json.loads(line)["query"])' > "$TMP/q"
Q=$(wc -l < "$TMP/q")
same_ix=0 same_ex=0 n=0
while IFS= read -r q; do
    n=$((n + 1))
    t0=$(ms); "$CAIRN" --db "$A" recall --json --budget 4000 "$q" > "$TMP/l.out" 2>&1
    t1=$(ms); CAIRN_PG_DENSE=exact "$CAIRN" --db "$ALICE" recall --json --budget 4000 "$q" > "$TMP/x.out" 2>&1
    t2=$(ms); CAIRN_PG_DENSE=index "$CAIRN" --db "$ALICE" recall --json --budget 4000 "$q" > "$TMP/i.out" 2>&1
    t3=$(ms)
    echo $((t1 - t0)) >> "$TMP/t.sqlite"
    echo $((t2 - t1)) >> "$TMP/t.exact"
    echo $((t3 - t2)) >> "$TMP/t.index"
    if cmp -s "$TMP/x.out" "$TMP/i.out"; then same_ix=$((same_ix + 1)); else echo "# index differs: $n $q"; fi
    if cmp -s "$TMP/l.out" "$TMP/x.out"; then same_ex=$((same_ex + 1)); else echo "# exact differs from sqlite: $n $q"; fi
done < "$TMP/q" 3<&-
echo "bench pg_dense vectors=$V questions=$Q index_same_as_exact=$same_ix exact_same_as_sqlite=$same_ex"
echo "bench pg_dense_ms sqlite_p50=$(pct 50 < "$TMP/t.sqlite") exact_p50=$(pct 50 < "$TMP/t.exact")" \
     "index_p50=$(pct 50 < "$TMP/t.index") sqlite_p95=$(pct 95 < "$TMP/t.sqlite")" \
     "exact_p95=$(pct 95 < "$TMP/t.exact") index_p95=$(pct 95 < "$TMP/t.index")"
