#!/bin/sh
# bench/bench_sync_memories.sh: what explicit memories add to `cairn sync`
# (store/pg_msync.c) against a real PostgreSQL 15 (tests/tools/pg.sh: a
# private cluster on a Unix socket in a temporary folder). Each run, on an
# empty server schema, alternates two stores of the same history: one
# without memories (the baseline) and one with N memories (a tenth of them
# corrections), and times for each: the push, the pull into a new store,
# and a sync with nothing to move. CPU (user + system of the cairn process,
# /usr/bin/time) and wall time, medians of the runs. Prints
#   bench sync_memories memories=N runs=R push_ms=BASE/WITH pull_ms=.. noop_ms=..
#         push_cpu_ms=.. pull_cpu_ms=.. noop_cpu_ms=..
#   sh bench/bench_sync_memories.sh CAIRN INGEST.jsonl N RUNS
# Skips (says why) where no PostgreSQL 15 is installed.
set -u
CAIRN=$1 IN=$2 N=$3 RUNS=$4
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/tools/pg.sh"
pg_bench_start sync_memories
export CAIRN_EMBED_MODEL=none
ADMIN=$(pg_url cairn_admin "$PG_ADMIN_PW")
pg_sql cairn_admin "$PG_ADMIN_PW" "CREATE ROLE alice LOGIN PASSWORD 'alice-pw'" >/dev/null
ALICE=$(pg_url alice alice-pw)

median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# t LABEL CMD...: runs CMD, appends "LABEL wall_ms cpu_ms" to $TMP/times
t() {
    label=$1; shift
    /usr/bin/time -f "%e %U %S" -o "$TMP/time" "$@" || exit 1
    awk -v l="$label" '{ printf "%s %d %d\n", l, $1 * 1000, ($2 + $3) * 1000 }' "$TMP/time" >> "$TMP/times"
}

python3 - "$TMP/mem.jsonl" "$N" <<'EOF'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        m = {"id": i + 1, "type": "fact", "scope": "proj%d" % (i % 7),
             "text": "memory %d: we deploy service %d with make ship-%d, never npm publish" % (i, i, i),
             "created": "2026-11-%02dT10:00:00Z" % (1 + i % 28)}
        if i % 10 == 0:
            m.update(type="correction", severity="p%d" % (i % 3),
                     applies_when={"commands": ["npm publish --tag %d" % i]})
        f.write(json.dumps(m) + "\n")
EOF
"$CAIRN" --db "$TMP/base.db" add -q "$IN" || exit 1
cp "$TMP/base.db" "$TMP/mem.db"
"$CAIRN" --db "$TMP/mem.db" memories import "$TMP/mem.jsonl" >/dev/null || exit 1

for r in $(seq "$RUNS"); do
    for kind in base mem; do
        pg_sql cairn_admin "$PG_ADMIN_PW" "DROP SCHEMA IF EXISTS cairn CASCADE" >/dev/null 2>&1
        "$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$ADMIN" || exit 1
        rm -f "$TMP"/admin.db* "$TMP"/w.db* "$TMP"/new.db*
        cp "$TMP/$kind.db" "$TMP/w.db"
        t "$kind.push" "$CAIRN" --db "$TMP/w.db" sync --push -q --server "$ALICE"
        t "$kind.pull" "$CAIRN" --db "$TMP/new.db" sync --pull -q --server "$ALICE"
        "$CAIRN" --db "$TMP/w.db" sync -q --server "$ALICE" || exit 1   # reads its own back
        t "$kind.noop" "$CAIRN" --db "$TMP/w.db" sync -q --server "$ALICE"
    done
    n=$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.memories")
    [ "$n" = "$N" ] || { echo "# sync_memories: the server holds $n memories, not $N" >&2; exit 1; }
    n=$("$CAIRN" --db "$TMP/new.db" memories list --all | wc -l)
    [ "$n" = "$N" ] || { echo "# sync_memories: the pull gave $n memories, not $N" >&2; exit 1; }
done
col() { awk -v l="$1" -v c="$2" '$1 == l { print $c }' "$TMP/times" | median; }
line="bench sync_memories memories=$N runs=$RUNS"
for step in push pull noop; do
    line="$line ${step}_ms=$(col base.$step 2)/$(col mem.$step 2)"
done
for step in push pull noop; do
    line="$line ${step}_cpu_ms=$(col base.$step 3)/$(col mem.$step 3)"
done
echo "$line"
echo "# sync_memories: each pair is without/with $N memories, the same history, alternated in one run"
