#!/bin/sh
# bench/bench_pg_recall.sh: `cairn recall` with a PostgreSQL server as the
# store (--db postgres://...) against the same sessions in SQLite, measured in
# the same run, alternated question by question (tests/tools/pg.sh: a private
# PostgreSQL 15 on a Unix socket in a temporary folder). Prints
#   bench pg_recall messages=M runs=R questions=Q sqlite_p50_ms=.. pg_p50_ms=..
#             sqlite_p95_ms=.. pg_p95_ms=.. pg_vs_sqlite=..  (p50 ratio)
#             open_p50_ms=..  (`cairn --db postgres:// stats`: connect + load)
#   bench pg_recall_mcp ... sqlite_p50_ms=.. pg_p50_ms=.. pg_vs_sqlite=..
# Each time of the first line is a whole `cairn recall` process (start,
# connect, recall, print), as a user meets it; the second times the `recall`
# tool of one `cairn mcp` a store (an assistant's: the store, and the
# server's connection, opened once), the same questions alternated. The
# outputs are compared too: a question whose text differs between the two
# stores fails the bench.
#   sh bench/bench_pg_recall.sh CAIRN MESSAGES RUNS
# Skips (says why) where no PostgreSQL 15 is installed.
set -u
CAIRN=$1 M=$2 RUNS=$3
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/tools/pg.sh"
if ! pg_start; then
    echo "# pg_recall: skipped: $PG_WHY"
    exit 0
fi
export CAIRN_EMBED_MODEL=none
pg_login_roles alice || exit 1
ALICE=$(pg_url alice alice-pw)
A="$TMP/a.db"

ms() { echo $(( $(date +%s%N) / 1000000 )); }
pct() { sort -n | awk -v p="$1" '{ a[NR] = $1 } END { i = int(NR * p / 100 + 0.999); if (i < 1) i = 1; print a[i] }'; }

python3 "$ROOT/bench/gen_data.py" ingest "$TMP/in.jsonl" --sessions $((M / 20)) --messages "$M" \
    --seed 11 >/dev/null 2>&1 || exit 1
t0=$(ms)
"$CAIRN" --db "$A" add -q "$TMP/in.jsonl" || exit 1
t1=$(ms)
"$CAIRN" --db "$A" sync --push -q --batch 2000 --server "$ALICE" || exit 1
t2=$(ms)
echo "# pg_recall: $M messages: add $((t1 - t0)) ms, push $((t2 - t1)) ms"
pg_sql cairn_admin "$PG_ADMIN_PW" "VACUUM ANALYZE" >/dev/null

cat > "$TMP/q" <<'EOF'
how did we fix the connection timeout in the client
what was the plan for the database migration
request_address
config.toml max_retries
北京的服务器
what did we discuss last March
error in the parser when reading a large file
which test failed on the build server
EOF
Q=$(wc -l < "$TMP/q")
for r in $(seq "$RUNS"); do
    while IFS= read -r q; do
        t0=$(ms); "$CAIRN" --db "$A" recall "$q" > "$TMP/s.out" 2>&1
        t1=$(ms); "$CAIRN" --db "$ALICE" recall "$q" > "$TMP/p.out" 2>&1
        t2=$(ms)
        cmp -s "$TMP/s.out" "$TMP/p.out" || { echo "# pg_recall: \"$q\" differs" >&2; exit 1; }
        echo "$((t1 - t0))" >> "$TMP/t_sqlite"
        echo "$((t2 - t1))" >> "$TMP/t_pg"
    done < "$TMP/q"
    t0=$(ms); "$CAIRN" --db "$ALICE" stats > /dev/null || exit 1
    t1=$(ms)
    echo "$((t1 - t0))" >> "$TMP/t_open"
done
s50=$(pct 50 < "$TMP/t_sqlite") p50=$(pct 50 < "$TMP/t_pg")
s95=$(pct 95 < "$TMP/t_sqlite") p95=$(pct 95 < "$TMP/t_pg")
echo "bench pg_recall messages=$M runs=$RUNS questions=$Q sqlite_p50_ms=$s50 pg_p50_ms=$p50" \
    "sqlite_p95_ms=$s95 pg_p95_ms=$p95" \
    "pg_vs_sqlite=$(awk -v a="$p50" -v b="$s50" 'BEGIN { printf "%.2f", a / b }')" \
    "open_p50_ms=$(pct 50 < "$TMP/t_open")"
# the same questions through one `cairn mcp` a store (tests/mcp/mcp_client.py)
PYTHONPATH="$ROOT/tests/mcp" python3 - "$CAIRN" "$A" "$ALICE" "$TMP/q" "$RUNS" "$M" <<'EOF' || exit 1
import sys, time
from mcp_client import Mcp
cairn, db, url, qfile, runs, m = sys.argv[1:7]
qs = [l.rstrip("\n") for l in open(qfile, encoding="utf-8") if l.strip()]
def pct(v, p):
    v = sorted(v)
    return v[max(0, min(len(v) - 1, int(len(v) * p / 100 + 0.999) - 1))]
t = {"s": [], "p": []}
with Mcp(cairn, env={"CAIRN_DB": db}, name="bench") as s, \
        Mcp(cairn, env={"CAIRN_DB": url}, name="bench") as p:
    for c in (s, p):
        c.call("recall", {"query": qs[0]})          # the store opens on the first call
    for _ in range(int(runs)):
        for q in qs:
            out = {}
            for k, c in (("s", s), ("p", p)):
                t0 = time.monotonic()
                out[k] = c.call("recall", {"query": q})
                t[k].append((time.monotonic() - t0) * 1000)
            if out["s"] != out["p"]:
                sys.exit("# pg_recall_mcp: \"%s\" differs" % q)
s50, p50 = pct(t["s"], 50), pct(t["p"], 50)
print("bench pg_recall_mcp messages=%s runs=%s questions=%d sqlite_p50_ms=%.0f pg_p50_ms=%.0f "
      "sqlite_p95_ms=%.0f pg_p95_ms=%.0f pg_vs_sqlite=%.2f" % (m, runs, len(qs), s50, p50,
      pct(t["s"], 95), pct(t["p"], 95), p50 / s50))
EOF
