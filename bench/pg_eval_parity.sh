#!/bin/sh
# bench/pg_eval_parity.sh: `cairn eval`'s questions on both backends. For each
# folder of a `cairn eval sessions` set (sessions.jsonl + questions.jsonl,
# e.g. ../shared/data/devmem-dev) the sessions go into a SQLite store (with
# the model `cairn add` ships, so every message has its vector), are pushed
# with `cairn sync` to a private PostgreSQL 15 (tests/tools/pg.sh) as a role
# of their own (one store a folder, as `cairn eval` keeps them), and every
# question is asked of both stores with what `cairn eval` gives recall: its
# `now`, the budgets 1000, 2000, 4000 and 8000 (`cairn recall --batch`, the
# same library call). The answers (one a question and budget) are compared
# byte for byte: the items, their ids and excerpts are what eval scores, so
# identical answers mean identical eval results. Prints one line a folder
# and a total, counting answers (questions x 4 budgets):
#   pg_eval_parity MODE folder=F questions=Q answers=A same=S differ=D
#   pg_eval_parity MODE total folders=N questions=Q answers=A same=S differ=D
# where MODE is CAIRN_PG_DENSE's (exact: every vector scanned in the client;
# index: pgvector's HNSW on the server), and the differing questions' ids
# (with `diff` of their answers into OUT/, when OUT is given).
#   sh bench/pg_eval_parity.sh CAIRN DATA_DIR [MODES] [OUT]
#   MODES: "exact index" (default; index is skipped without pgvector)
# CAIRN_EMBED_MODEL names the model (default use-lite-en, as `make eval`).
# Skips (says why) where no PostgreSQL 15 is installed.
set -u
CAIRN=$1 DATA=$2 MODES=${3:-exact index} OUT=${4:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/tools/pg.sh"
pg_bench_start pg_eval_parity
export TZ=UTC CAIRN_EMBED_MODEL="${CAIRN_EMBED_MODEL:-use-lite-en}"
unset CAIRN_DB CAIRN_PG_DENSE
[ -n "$OUT" ] && mkdir -p "$OUT"

# one role a folder: r1, r2, ... (each sees its own sessions only)
i=0 roles=""
for d in "$DATA"/*/; do
    [ -f "$d/sessions.jsonl" ] && [ -f "$d/questions.jsonl" ] || continue
    i=$((i + 1))
    roles="$roles r$i"
done
# shellcheck disable=SC2086 # one argument a role
pg_login_roles $roles || exit 1

i=0
for d in "$DATA"/*/; do
    [ -f "$d/sessions.jsonl" ] && [ -f "$d/questions.jsonl" ] || continue
    i=$((i + 1))
    db="$TMP/r$i.db"
    "$CAIRN" --db "$db" add -q "$d/sessions.jsonl" || exit 1
    "$CAIRN" --db "$db" sync --push -q --server "$(pg_url "r$i" "r$i-pw")" || exit 1
    # the questions as `cairn eval` asks them: its id, text, now, budgets
    python3 -c '
import json, sys
for line in open(sys.argv[1]):
    q = json.loads(line)
    print(json.dumps({"id": q["id"], "query": q["query"], "now": q.get("now"),
                      "budgets": [1000, 2000, 4000, 8000]}))' "$d/questions.jsonl" > "$TMP/q$i.jsonl"
    "$CAIRN" --db "$db" recall --batch < "$TMP/q$i.jsonl" > "$TMP/l$i.jsonl" 2>&1
done
n=$i

for mode in $MODES; do
    if [ "$mode" = index ] && [ ! -f /usr/share/postgresql/15/extension/vector.control ]; then
        echo "# pg_eval_parity index: skipped: pgvector not installed"
        continue
    fi
    tq=0 ta=0 ts=0 td=0
    i=0
    for d in "$DATA"/*/; do
        [ -f "$d/sessions.jsonl" ] && [ -f "$d/questions.jsonl" ] || continue
        i=$((i + 1))
        CAIRN_PG_DENSE=$mode "$CAIRN" --db "$(pg_url "r$i" "r$i-pw")" recall --batch \
            < "$TMP/q$i.jsonl" > "$TMP/s$i.jsonl" 2>&1
        q=$(wc -l < "$TMP/q$i.jsonl") a=$(wc -l < "$TMP/l$i.jsonl")
        # one answer line a question and budget, in order: line by line
        same=$(paste -d '\n' "$TMP/l$i.jsonl" "$TMP/s$i.jsonl" | awk 'NR % 2 { a = $0; next } a == $0 { s++ } END { print s + 0 }')
        [ "$(wc -l < "$TMP/s$i.jsonl")" -eq "$a" ] || same=0
        name=$(basename "$d")
        echo "pg_eval_parity $mode folder=$name questions=$q answers=$a same=$same differ=$((a - same))"
        if [ "$same" -ne "$a" ]; then
            paste -d '\n' "$TMP/l$i.jsonl" "$TMP/s$i.jsonl" |
                awk 'NR % 2 { a = $0; next } a != $0 { match(a, /"budget":[0-9]+/)
                    print "  differs: " substr(a, 8, index(a, "\",") - 8) " " substr(a, RSTART, RLENGTH) }'
            [ -n "$OUT" ] && diff "$TMP/l$i.jsonl" "$TMP/s$i.jsonl" > "$OUT/$mode-$name.diff"
        fi
        tq=$((tq + q)) ta=$((ta + a)) ts=$((ts + same)) td=$((td + a - same))
    done
    echo "pg_eval_parity $mode total folders=$n questions=$tq answers=$ta same=$ts differ=$td"
done
