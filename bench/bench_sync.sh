#!/bin/sh
# bench/bench_sync.sh: what `cairn sync` costs against a real PostgreSQL 15
# (tests/tools/pg.sh: a private cluster on a Unix socket in a temporary
# folder), with `cairn add` of the same sessions as the baseline measured in
# the same run. Prints
#   bench sync messages=M runs=R add_ms=.. push_ms=.. pull_ms=.. own_back_ms=.. noop_ms=..
#              push_vs_add=.. pull_vs_add=..
# (medians of R runs; each run pushes into an empty server schema and pulls
# into a new store). Called by bench/run.sh (BENCH_ONLY=sync) or alone:
#   sh bench/bench_sync.sh CAIRN INGEST.jsonl MESSAGES RUNS
# Skips (says why) where no PostgreSQL 15 is installed.
set -u
CAIRN=$1 IN=$2 M=$3 RUNS=$4
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/tools/pg.sh"
if ! pg_start; then
    echo "# sync: skipped: $PG_WHY"
    exit 0
fi
export CAIRN_EMBED_MODEL=none
ADMIN=$(pg_url cairn_admin "$PG_ADMIN_PW")
pg_sql cairn_admin "$PG_ADMIN_PW" "CREATE ROLE alice LOGIN PASSWORD 'alice-pw'" >/dev/null
ALICE=$(pg_url alice alice-pw)

ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

for r in $(seq "$RUNS"); do
    rm -f "$TMP"/a.db* "$TMP"/b.db*
    pg_sql cairn_admin "$PG_ADMIN_PW" "DROP SCHEMA IF EXISTS cairn CASCADE" >/dev/null 2>&1
    "$CAIRN" --db "$TMP/admin.db" sync --pull -q --server "$ADMIN" || exit 1
    rm -f "$TMP"/admin.db*
    t0=$(ms); "$CAIRN" --db "$TMP/a.db" add -q "$IN" || exit 1
    t1=$(ms); "$CAIRN" --db "$TMP/a.db" sync --push -q --server "$ALICE" || exit 1
    t2=$(ms); "$CAIRN" --db "$TMP/b.db" sync --pull -q --server "$ALICE" || exit 1
    # the pushing store's first full sync reads its own rows back (pull has
    # no way yet to leave out what this store sent); the next moves nothing
    t3=$(ms); "$CAIRN" --db "$TMP/a.db" sync -q --server "$ALICE" || exit 1
    t4=$(ms); "$CAIRN" --db "$TMP/a.db" sync -q --server "$ALICE" || exit 1
    t5=$(ms)
    echo "$((t1 - t0)) $((t2 - t1)) $((t3 - t2)) $((t4 - t3)) $((t5 - t4))" >> "$TMP/times"
done
n=$(pg_sql alice alice-pw "SELECT count(*) FROM cairn.messages")
[ "$n" = "$M" ] || { echo "# sync: the server holds $n messages, not $M" >&2; exit 1; }
add=$(cut -d' ' -f1 "$TMP/times" | median)
push=$(cut -d' ' -f2 "$TMP/times" | median)
pull=$(cut -d' ' -f3 "$TMP/times" | median)
back=$(cut -d' ' -f4 "$TMP/times" | median)
noop=$(cut -d' ' -f5 "$TMP/times" | median)
echo "bench sync messages=$M runs=$RUNS add_ms=$add push_ms=$push pull_ms=$pull own_back_ms=$back noop_ms=$noop" \
    "push_vs_add=$(awk -v a="$push" -v b="$add" 'BEGIN { printf "%.2f", a / b }')" \
    "pull_vs_add=$(awk -v a="$pull" -v b="$add" 'BEGIN { printf "%.2f", a / b }')"
echo "# sync: push $push ms, pull into a new store $pull ms, the pusher's next sync $back ms (its own rows read back), then $noop ms with nothing to move; $M messages (cairn add: $add ms)"
